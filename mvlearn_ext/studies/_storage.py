"""The results file: JSON lines, a header then one line per finished replication.

Format (version 1)::

    {"mvlearn_ext.studies": 1, "seeding": ..., "root_seed": ..., "n_replications": ...,
     "replicate": "module.qualname", "settings": [{...}, ...]}
    {"setting": "<16 hex digits of the setting key>", "replication": 0, "records": [{...}]}
    ...

Only the process that runs the study writes; each line is written with one
``write`` call on an unbuffered append-mode file and flushed as its
replication finishes. An interrupted write leaves at most one incomplete last
line, which is dropped (and truncated away) when the file is read to resume.
"""

from __future__ import annotations

import json
import os

__all__ = ["FORMAT_VERSION", "read_results_file", "ResultsWriter"]

FORMAT_VERSION = 1
_MAGIC = "mvlearn_ext.studies"


def _dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), allow_nan=True)


def make_header(*, seeding, root_seed, n_replications, replicate_name, settings) -> dict:
    return {
        _MAGIC: FORMAT_VERSION,
        "seeding": seeding,
        "root_seed": list(root_seed) if isinstance(root_seed, tuple) else root_seed,
        "n_replications": n_replications,
        "replicate": replicate_name,
        "settings": settings,
    }


def read_results_file(path, *, repair: bool = False):
    """Read a results file: ``(header or None, {(key_hex, r): records})``.

    A last line without its newline (an interrupted write) is ignored, and
    with ``repair=True`` truncated away so that appends start on a new line.
    Any other line that does not parse raises ``ValueError`` naming the line.
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None, {}
    end = data.rfind(b"\n") + 1
    if end < len(data) and repair:
        with open(path, "r+b") as f:
            f.truncate(end)
    lines = data[:end].splitlines()
    if not lines:
        return None, {}
    try:
        header = json.loads(lines[0])
    except ValueError as exc:
        raise ValueError(f"{os.fspath(path)!r} is not a studies results file (line 1)") from exc
    if not isinstance(header, dict) or _MAGIC not in header:
        raise ValueError(
            f"{os.fspath(path)!r} is not a studies results file: its first line has no "
            f"{_MAGIC!r} header"
        )
    if header[_MAGIC] != FORMAT_VERSION:
        raise ValueError(
            f"{os.fspath(path)!r} has results-file format {header[_MAGIC]!r}; "
            f"this version reads format {FORMAT_VERSION}"
        )
    done = {}
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            pair = (entry["setting"], int(entry["replication"]))
            records = entry["records"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(
                f"{os.fspath(path)!r}, line {lineno}, is not a replication record: {line[:80]!r}"
            ) from exc
        done.setdefault(pair, records)  # a duplicate (two runs at once) is identical
    return header, done


class ResultsWriter:
    """Appends one line per replication; every line is flushed at once."""

    def __init__(self, path, *, fsync: bool = False):
        self.path = path
        self.fsync = fsync
        self._file = open(path, "ab", buffering=0)

    def write_line(self, text: str) -> None:
        data = (text + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            n = self._file.write(view)
            view = view[n:]
        if self.fsync:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def write_new_file(path, header: dict, lines=()) -> None:
    """Write ``header`` and ``lines`` to ``path`` atomically (temp file + replace)."""
    folder = os.path.dirname(os.fspath(path))
    if folder:
        os.makedirs(folder, exist_ok=True)
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(_dumps(header) + "\n")
        for line in lines:
            f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
