"""The command line of mvlearn_ext (``python -m mvlearn_ext`` / ``mvlearn-ext``).

Commands
--------
``info``
    Versions, the compiled core's build, CPUs, the Numba configuration and
    every optional dependency (its version or "not installed", and the
    extras that bring it).
``demo``
    The main job: multi-view clustering of the embedded Handwritten data (no
    network), the multi-view methods beside the concatenation baselines, in
    a table of scores, mean ± standard deviation over seeds. ``--all`` adds
    one small problem per family; ``--section NAME`` runs one section;
    ``demo --help`` lists them.

The demo's sections and their registry live one floor below, in
:mod:`mvlearn_ext._demo` (the registry in ``_demo.registry``, the built-in
sections in ``_demo.sections``, each family's section in
``_demo.<family>``); this module parses the arguments and prints.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import json
import os
import platform
import sys
import time
from collections.abc import Sequence

import mvlearn_ext
from mvlearn_ext._demo.registry import (  # noqa: F401  (re-exported for section authors)
    DEMO_SECTIONS,
    FIT_TIME,
    DemoContext,
    DemoRow,
    DemoSection,
    evaluate_over_seeds,
    optional_module,
    register_demo_section,
)
from mvlearn_ext._demo.sections import DEFAULT_SECTIONS

__all__ = [
    "DEMO_SECTIONS",
    "DEFAULT_SECTIONS",
    "DemoContext",
    "DemoRow",
    "DemoSection",
    "evaluate_over_seeds",
    "main",
    "register_demo_section",
]

DEFAULT_SEEDS = 3
QUICK_SEEDS = 2


# ---------------------------------------------------------------------------
# Running sections


@dataclasses.dataclass
class _Result:
    section: DemoSection
    rows: list[DemoRow]
    error: str | None = None
    skipped: str | None = None
    seconds: float = 0.0
    not_run: list[str] = dataclasses.field(default_factory=list)
    data: str | None = None


def _missing_optional(exc):
    """The optional dependency whose absence raised ``exc`` (or a cause of it), or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        name = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
        if name and optional_module().optional_dependency(name) is not None:
            return name.partition(".")[0]
        exc = exc.__cause__ or exc.__context__
    return None


def _skip_reason(modules):
    hint = optional_module().install_hint
    return "; ".join(f"needs {m}, not installed: {hint(m)}" for m in modules)


def _not_run_lines(not_run):
    hint = optional_module().install_hint
    return [f"{method} not run: needs {module}; {hint(module)}" for method, module in not_run]


def _run_section(section, ctx, stderr):
    start = time.perf_counter()
    ctx.not_run.clear()
    data = None
    try:
        missing = section.missing()
        if missing:
            return _Result(section, [], skipped=_skip_reason(missing))
        if section.handwritten:
            data = ctx.handwritten_description()
        rows = list(section.resolve()(ctx))
    except Exception as exc:  # keep the other sections' results
        module = _missing_optional(exc)
        if module is not None:
            return _Result(section, [], skipped=_skip_reason([module]))
        stderr.write(f"mvlearn_ext demo: section {section.name!r} failed: {exc}\n")
        return _Result(section, [], error=f"{type(exc).__name__}: {exc}", data=data)
    return _Result(
        section,
        rows,
        seconds=time.perf_counter() - start,
        not_run=_not_run_lines(ctx.not_run),
        data=data,
    )


@contextlib.contextmanager
def _thread_limits(n_threads):
    """Cap the BLAS/OpenMP pools and Numba's threads at ``n_threads``, then restore them."""
    import numba
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    previous = numba.get_num_threads()
    numba.set_num_threads(max(1, min(n_threads, numba.config.NUMBA_NUM_THREADS)))
    try:
        with threadpool_limits(limits=n_threads):
            yield
    finally:
        numba.set_num_threads(previous)


# ---------------------------------------------------------------------------
# Output


def _mean_std(values):
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, None
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, var**0.5


def _cell(values, digits=3):
    mean, std = _mean_std(values)
    if std is None:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def _table(section, rows):
    header = ["method", *section.columns, FIT_TIME]
    body = [
        [row.method, *(_cell(row.scores[c]) for c in section.columns), _cell(row.fit_times, 2)]
        for row in rows
    ]
    return header, body


def _section_text(result):
    section = result.section
    if result.skipped is not None:
        return [f"[{section.name}] skipped: {result.skipped}"]
    out = [f"[{section.name}] {section.title}"]
    if result.data is not None:
        out.append(f"  {result.data}")
    if result.error is not None:
        out.append(f"  failed: {result.error}")
        return out
    header, body = _table(section, result.rows)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def fmt(cells):
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    out.append(fmt(header))
    out.append("  ".join("-" * w for w in widths))
    out.extend(fmt(cells) for cells in body)
    out.extend(f"  {line}" for line in result.not_run)
    explanations = section.explanations()
    width = max(len(column) for column, _ in explanations)
    out.extend(f"  {column.ljust(width)}  {text}" for column, text in explanations)
    out.extend(f"  note: {row.note}" for row in result.rows if row.note)
    out.append(f"  ({result.seconds:.1f} s for the section)")
    return out


def _render_markdown(header_lines, results):
    out = [f"{line}  " if line else "" for line in header_lines]
    for result in results:
        section = result.section
        if result.skipped is not None:
            out += ["", f"`{section.name}` skipped: {result.skipped}"]
            continue
        out += ["", f"**{section.title}** (`{section.name}`)", ""]
        if result.data is not None:
            out += [result.data, ""]
        if result.error is not None:
            out.append(f"failed: {result.error}")
            continue
        header, body = _table(section, result.rows)
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
        out.extend("| " + " | ".join(cells) + " |" for cells in body)
        out.append("")
        out.extend(f"- {line}" for line in result.not_run)
        out.extend(f"- {column}: {text}" for column, text in section.explanations())
        out.extend(f"- {row.note}" for row in result.rows if row.note)
    return "\n".join(out) + "\n"


def _render_json(meta, results):
    payload = dict(meta)
    payload["sections"] = [
        {
            "name": result.section.name,
            "title": result.section.title,
            "error": result.error,
            "skipped": result.skipped,
            "seconds": result.seconds,
            "data": result.data,
            "not_run": result.not_run,
            "legend": dict(result.section.explanations()),
            "rows": [
                {
                    "method": row.method,
                    "scores": row.scores,
                    "fit_times": row.fit_times,
                    "note": row.note,
                }
                for row in result.rows
            ],
        }
        for result in results
    ]
    return json.dumps(payload, indent=2) + "\n"


# ---------------------------------------------------------------------------
# Commands


def _available_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count()


def collect_info():
    """The facts ``info`` prints, as a dict (JSON-serialisable).

    ``optional`` maps every optional dependency to its installed version
    (or ``"not installed"``) and the extras that bring it; nothing optional
    is imported.
    """
    info = {
        "mvlearn_ext": mvlearn_ext.__version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
    }
    for module in ("numpy", "scipy", "sklearn", "numba", "joblib"):
        try:
            info[module] = importlib.import_module(module).__version__
        except ImportError as exc:
            info[module] = f"not importable ({exc})"
    try:
        from mvlearn_ext._lib import core_info

        info["compiled_core"] = core_info()
    except Exception as exc:  # ImportError, or a broken build
        info["compiled_core"] = f"not available ({type(exc).__name__}: {exc})"
    info["cpus_available"] = _available_cpus()
    info["cpus_total"] = os.cpu_count()
    try:
        import numba

        info["numba_threads"] = numba.get_num_threads()
    except Exception as exc:  # pragma: no cover - numba is a dependency
        info["numba_threads"] = f"unknown ({exc})"
    try:
        from mvlearn_ext.utils._numba import NUMBA_CACHE, NUMBA_PARALLEL

        info["numba_cache"] = NUMBA_CACHE
        info["numba_parallel"] = NUMBA_PARALLEL
    except Exception as exc:  # e.g. a malformed MVLEARN_EXT_NUMBA_* variable
        info["numba_cache"] = info["numba_parallel"] = f"unknown ({exc})"
    # Optional dependencies: looked up, never imported (torch takes seconds).
    try:
        optional = optional_module()
        info["optional"] = {
            name: {
                "version": optional.installed_version(name) or "not installed",
                "extras": list(dep.extras),
                "for": dep.purpose,
            }
            for name, dep in optional.OPTIONAL_DEPENDENCIES.items()
        }
    except Exception as exc:  # mvlearn_ext.utils needs the compiled core
        info["optional"] = f"unknown ({type(exc).__name__}: {exc})"
    return info


def _cmd_info(args, stdout, stderr):
    info = collect_info()
    if args.json:
        stdout.write(json.dumps(info, indent=2) + "\n")
        return 0
    optional = info.pop("optional")
    if isinstance(optional, str):  # could not be looked up
        info["optional"], optional = optional, {}
    width = max(len(key) for key in (*info, *optional))
    for key, value in info.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        stdout.write(f"{key.ljust(width)}  {value}\n")
    if not optional:
        return 0
    stdout.write("optional dependencies (version or 'not installed'; the extras that bring it):\n")
    version_width = max(len(entry["version"]) for entry in optional.values())
    for name, entry in optional.items():
        extras = ", ".join(f"[{extra}]" for extra in entry["extras"])
        stdout.write(
            f"{name.ljust(width)}  {entry['version'].ljust(version_width)}  {extras}; "
            f"{entry['for']}\n"
        )
    return 0


def _parse_views(tokens):
    if tokens is None:
        return None
    return [int(t) if t.isdigit() else t for t in tokens]


def _usage_error(args, stderr, message):
    """Print the demo's usage and ``message`` as argparse does; return the status 2."""
    parser = getattr(args, "command_parser", None)
    if parser is not None:
        parser.print_usage(stderr)
    stderr.write(f"mvlearn_ext demo: error: {message}\n")
    return 2


def _select_sections(args, stderr):
    """The sections to run, or None after a usage error."""
    known = {s.name: s for s in args.catalogue}
    if args.all:
        return list(args.catalogue)
    names = args.section or [name for name in args.default_sections if name in known]
    unknown = [name for name in names if name not in known]
    if unknown:
        _usage_error(
            args, stderr, f"unknown --section {unknown[0]!r}; available: {', '.join(known)}"
        )
        return None
    return [known[name] for name in dict.fromkeys(names)]


def _cmd_demo(args, stdout, stderr):
    from mvlearn_ext.datasets import handwritten_view_names

    try:
        views = handwritten_view_names(_parse_views(args.views))
    except (TypeError, ValueError) as exc:
        # the message names load_handwritten's `views`, which the command line spells --views
        return _usage_error(args, stderr, f"--{exc}")
    sections = _select_sections(args, stderr)
    if sections is None:
        return 2
    try:
        from mvlearn_ext._lib import effective_n_jobs

        n_threads = effective_n_jobs(args.threads)
    except (ImportError, TypeError, ValueError) as exc:
        return _usage_error(args, stderr, f"--threads {args.threads}: {exc}")
    n_seeds = (
        args.seeds if args.seeds is not None else (QUICK_SEEDS if args.quick else DEFAULT_SEEDS)
    )

    def progress(message):
        if args.verbose:
            stderr.write(f"[demo] {message}\n")
            stderr.flush()

    ctx = DemoContext(
        seeds=tuple(range(n_seeds)),
        quick=args.quick,
        views=views,
        verbose=args.verbose,
        n_threads=n_threads,
        progress=progress,
    )
    failed = False
    data_lines = [f"mvlearn_ext {mvlearn_ext.__version__} demo"]
    names = views
    if any(section.handwritten for section in sections):
        try:
            names = ctx.handwritten()[2]
        except Exception as exc:  # a broken installation: still run the other sections
            failed = True
            data_lines = [f"mvlearn_ext {mvlearn_ext.__version__} demo: data unavailable ({exc})"]
    seeds_text = ", ".join(map(str, ctx.seeds))
    spread = (
        f"mean ± standard deviation over seeds {seeds_text}"
        if n_seeds > 1
        else f"one seed ({seeds_text})"
    )
    header_lines = [
        *data_lines,
        f"scores: {spread}{' (quick)' if args.quick else ''}; threads: {n_threads}",
        f"sections: {', '.join(s.name for s in sections)}"
        + (
            f" (of {len(args.catalogue)}: --all runs every one, "
            "--section NAME one, demo --help lists them)"
            if len(sections) < len(args.catalogue)
            else ""
        ),
    ]
    text = args.format == "text"
    if text:  # the header first, then each section as it finishes
        stdout.write("\n".join(header_lines) + "\n")
        stdout.flush()

    start = time.perf_counter()
    results = []
    with _thread_limits(n_threads):
        for section in sections:
            progress(f"section {section.name!r}")
            result = _run_section(section, ctx, stderr)
            failed |= result.error is not None
            results.append(result)
            if text:
                stdout.write("\n" + "\n".join(_section_text(result)) + "\n")
                stdout.flush()
    elapsed = time.perf_counter() - start

    if text:
        stdout.write(f"\ntotal {elapsed:.1f} s\n")
    elif args.format == "json":
        meta = {
            "version": mvlearn_ext.__version__,
            "data": "handwritten" if any(s.handwritten for s in sections) else None,
            "views": names,
            "seeds": list(ctx.seeds),
            "quick": args.quick,
            "threads": n_threads,
            "elapsed_s": elapsed,
        }
        stdout.write(_render_json(meta, results))
    else:
        stdout.write(_render_markdown([*header_lines, f"total {elapsed:.1f} s"], results))
    return 1 if failed else 0


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _thread_count(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value == 0:
        raise argparse.ArgumentTypeError(
            f"expected a non-zero integer (-1: every CPU, -2: all but one), got {text!r}"
        )
    return value


def _sections_epilog(catalogue, default_sections):
    try:
        optional = optional_module()
    except Exception:  # the compiled core is broken: list the sections without their needs
        return "sections: " + ", ".join(s.name for s in catalogue)
    width = max(len(s.name) for s in catalogue)
    lines = [f"sections (default: {', '.join(default_sections)}; --all runs every one):"]
    for section in catalogue:
        needs = "".join(
            f" [needs {m}, extra {getattr(optional.optional_dependency(m), 'extra', '?')}"
            + ("" if optional.is_available(m) else f", not installed: {optional.install_hint(m)}")
            + "]"
            for m in section.requires
        )
        lines.append(f"  {section.name.ljust(width)}  {section.title}{needs}")
    return "\n".join(lines)


def build_parser(sections=None, default_sections=None):
    """The :class:`argparse.ArgumentParser` of the command line.

    ``sections`` and ``default_sections`` are the demo's catalogue and the
    sections it runs without ``--section``/``--all`` (the package's by default).
    """
    catalogue = list(DEMO_SECTIONS if sections is None else sections)
    defaults = tuple(DEFAULT_SECTIONS if default_sections is None else default_sections)
    parser = argparse.ArgumentParser(
        prog="python -m mvlearn_ext",
        # No prefix abbreviations: "--thread" is an error, not "--threads".
        allow_abbrev=False,
        description=(
            "mvlearn_ext: multi-view, multi-task and multi-objective learning. "
            "Run a command with --help for its options."
        ),
    )
    parser.add_argument(
        "--version", action="version", version=f"mvlearn_ext {mvlearn_ext.__version__}"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    info = commands.add_parser(
        "info",
        allow_abbrev=False,
        help="versions, compiled core, CPUs, Numba settings and optional dependencies",
        description="Print versions, the compiled core's build, CPUs, Numba settings and every "
        "optional dependency (installed version or 'not installed', and its extras).",
    )
    info.add_argument("--json", action="store_true", help="print JSON instead of text")
    info.set_defaults(command_parser=info)

    demo = commands.add_parser(
        "demo",
        allow_abbrev=False,
        help="multi-view clustering of the embedded Handwritten data (the main job)",
        description=(
            "Cluster the embedded Handwritten digits (UCI Multiple Features, six views, 2000 "
            "samples; no network needed) with every multi-view method of mvlearn_ext.cluster "
            "beside the concatenation baselines, and print ACC, NMI, ARI and fit time, mean ± "
            f"standard deviation over {DEFAULT_SEEDS} seeds (well under a minute on 2 cores). "
            "--all adds one small problem per family (a few minutes); --section NAME runs "
            "one section. A section whose optional dependency is missing is skipped with one "
            "line naming the extra to install."
        ),
        epilog=_sections_epilog(catalogue, defaults),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument(
        "--views",
        nargs="+",
        metavar="VIEW",
        help="views to use, by name (fou fac kar pix zer mor, or fourier, profile, "
        "karhunen_loeve, pixel, zernike, morphological) or index 0-5; default: all six",
    )
    demo.add_argument(
        "--seeds",
        type=_positive_int,
        metavar="N",
        help=f"number of seeds, 0 to N-1 (default {DEFAULT_SEEDS}, or {QUICK_SEEDS} with --quick)",
    )
    demo.add_argument(
        "--quick",
        action="store_true",
        help=f"a smoke test: {QUICK_SEEDS} seeds instead of {DEFAULT_SEEDS} unless --seeds "
        "is given; sections may also shrink their work",
    )
    demo.add_argument(
        "--threads",
        type=_thread_count,
        default=1,
        metavar="N",
        help="threads for the BLAS and OpenMP pools, Numba and the kernels; -1 for every "
        "CPU, -2 for all but one (joblib's convention) (default 1: on 2000 samples, "
        "starting threads costs more than it saves, and timings are steadier)",
    )
    choice = demo.add_mutually_exclusive_group()
    choice.add_argument(
        "--all",
        action="store_true",
        help="run every section (listed below), not only clustering",
    )
    choice.add_argument(
        "--section",
        action="append",
        metavar="NAME",
        help="run only this section (repeatable; listed below)",
    )
    demo.add_argument(
        "--format",
        choices=("text", "markdown", "json"),
        default="text",
        help="output format (default text)",
    )
    demo.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="report progress on stderr, one line per method",
    )
    demo.set_defaults(command_parser=demo)
    return parser


_COMMANDS = {"info": _cmd_info, "demo": _cmd_demo}


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout=None,
    stderr=None,
    sections=None,
    default_sections=None,
) -> int:
    """Run the command line; return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments, without the program name; ``sys.argv[1:]`` by default.
    stdout, stderr : text streams, optional
        Where to write; ``sys.stdout`` and ``sys.stderr`` by default.
    sections : sequence of DemoSection, optional
        The demo's sections; the package's own by default. A program that
        embeds the command line (or a test) passes its own.
    default_sections : sequence of str, optional
        The sections ``demo`` runs without ``--section`` or ``--all``.

    Returns
    -------
    status : int
        0 on success (skipped sections included), 1 when a demo section
        failed, 2 on a usage error.

    Examples
    --------
    >>> from mvlearn_ext.__main__ import main
    >>> main(["--version"])  # doctest: +ELLIPSIS
    mvlearn_ext ...
    0
    """
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    parser = build_parser(sections, default_sections)
    try:
        # argparse writes help and usage errors to sys.stdout / sys.stderr itself.
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            args, extra = parser.parse_known_args(None if argv is None else list(argv))
            if extra:  # reported with the usage of the command they were given to
                getattr(args, "command_parser", parser).error(
                    f"unrecognized arguments: {' '.join(extra)}"
                )
    except SystemExit as exc:  # --help, --version, or a usage error
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if args.command is None:
        parser.print_help(stdout)
        return 0
    args.catalogue = list(DEMO_SECTIONS if sections is None else sections)
    args.default_sections = tuple(
        DEFAULT_SECTIONS if default_sections is None else default_sections
    )
    return _COMMANDS[args.command](args, stdout, stderr)
