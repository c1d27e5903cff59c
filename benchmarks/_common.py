"""What the clustering benchmark scripts share: the ``--variant`` rows and the run header."""

from __future__ import annotations

import ast
import platform
import shlex
import sys
from datetime import datetime, timezone

import mvlearn_ext


def _parse_value(text):
    """A Python literal, or the bare string when ``text`` is not one."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_variant(spec):
    """``[NAME=]BASE:key=value[,key=value...]`` -> ``(name, base, params)``.

    Values are Python literals (strings may be bare) and may hold commas inside
    brackets (tuples, lists). Without ``NAME=`` the row is named
    ``BASE[key=value,...]``. A malformed ``spec`` ends the run with a message.
    """
    head, sep, body = spec.partition(":")
    if not sep:
        raise SystemExit(f"--variant {spec!r}: expected [NAME=]METHOD:key=value[,key=value]")
    name, eq, base = head.partition("=")
    if not eq:
        name, base = None, head
    params = {}
    # split on commas that start a new key=value (values may hold commas, e.g. tuples)
    items, depth, current = [], 0, ""
    for ch in body:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += ch
    if current:
        items.append(current)
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise SystemExit(f"--variant {spec!r}: {item!r} is not key=value")
        params[key.strip()] = _parse_value(value.strip())
    if name is None:
        name = f"{base}[{','.join(f'{k}={v}' for k, v in params.items())}]"
    return name.strip(), base.strip(), params


def run_header(script, argv):
    """The first keys of a run's ``config``: the command, the date, the versions.

    ``script`` is the path of the script from the repository root, ``argv`` its
    arguments (None: ``sys.argv[1:]``).
    """
    return dict(
        command=f"python {script} " + shlex.join(argv if argv is not None else sys.argv[1:]),
        date=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        version=mvlearn_ext.__version__,
        python=platform.python_version(),
    )
