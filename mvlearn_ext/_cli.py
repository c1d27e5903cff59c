"""The command line of mvlearn_ext (``python -m mvlearn_ext`` / ``mvlearn-ext``).

Commands
--------
``info``
    Versions, the compiled core's build, CPUs and the Numba configuration.
``demo``
    Runs the registered demo sections on the embedded Handwritten data (no
    network) and prints a table of scores, mean ± standard deviation over
    seeds.

Adding a demo section
---------------------
A section is a :class:`DemoSection`: a name (for ``--section``), a title,
the score columns to show, and a callable ``run(ctx) -> list[DemoRow]``,
given directly or as a ``"package.module:function"`` string that is imported
only when the section runs (so that the demo of one family never slows down
or breaks the import of another). Append it to :data:`DEMO_SECTIONS` with
:func:`register_demo_section`. :func:`evaluate_over_seeds` runs a
``fit_predict(seed) -> labels`` callable over ``ctx.seeds``, times it and
scores it with :func:`mvlearn_ext.metrics.clustering_report`.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import sys
import time
import warnings
from collections.abc import Callable, Sequence

import mvlearn_ext

__all__ = [
    "DEMO_SECTIONS",
    "DemoContext",
    "DemoRow",
    "DemoSection",
    "evaluate_over_seeds",
    "main",
    "register_demo_section",
]

CLUSTERING_COLUMNS = ("ACC", "NMI", "ARI", "purity")
DEFAULT_SEEDS = 5
QUICK_SEEDS = 2


# ---------------------------------------------------------------------------
# Demo registry


@dataclasses.dataclass
class DemoRow:
    """One line of a demo table: a method's per-seed scores and fit times."""

    method: str
    scores: dict[str, list[float]]
    fit_times: list[float]
    note: str = ""


@dataclasses.dataclass
class DemoContext:
    """What a section receives: the seeds, the options and the data.

    ``n_threads`` is the ``--threads`` option (``None``: every CPU). The demo
    already caps BLAS and OpenMP thread pools at it (with threadpoolctl); a
    section passes it on to kernels with their own threads (``n_threads=``
    of the compiled core, ``numba.set_num_threads``).
    """

    seeds: tuple[int, ...]
    quick: bool = False
    views: list[str] | None = None
    verbose: bool = False
    n_threads: int | None = 1
    progress: Callable[[str], None] = dataclasses.field(default=lambda message: None, repr=False)
    _cache: dict = dataclasses.field(default_factory=dict, repr=False)

    def handwritten(self):
        """``(Xs, y, view_names)`` of the selected Handwritten views, loaded once."""
        if "handwritten" not in self._cache:
            from mvlearn_ext.datasets import load_handwritten

            data = load_handwritten(views=self.views, return_Xs_y=False)
            self._cache["handwritten"] = (data.views, data.target, data.view_names)
        return self._cache["handwritten"]


@dataclasses.dataclass(frozen=True)
class DemoSection:
    """A block of the demo table (see the module docstring)."""

    name: str
    title: str
    run: Callable[[DemoContext], list[DemoRow]] | str
    columns: tuple[str, ...] = CLUSTERING_COLUMNS

    def resolve(self):
        if callable(self.run):
            return self.run
        module_name, _, attr = self.run.partition(":")
        return getattr(importlib.import_module(module_name), attr)


DEMO_SECTIONS: list[DemoSection] = []


def register_demo_section(section):
    """Append ``section`` to :data:`DEMO_SECTIONS`; names must be unique."""
    if not isinstance(section, DemoSection):
        raise TypeError(f"section must be a DemoSection, got {type(section).__name__}")
    if any(existing.name == section.name for existing in DEMO_SECTIONS):
        raise ValueError(f"a demo section named {section.name!r} is already registered")
    DEMO_SECTIONS.append(section)
    return section


def evaluate_over_seeds(ctx, method, fit_predict, y, *, note=""):
    """Run ``fit_predict(seed)`` for every seed, time it, score its labels.

    Parameters
    ----------
    ctx : DemoContext
    method : str
        The row label.
    fit_predict : callable
        ``fit_predict(seed) -> labels`` of shape (n_samples,).
    y : array-like of shape (n_samples,)
        The true classes.
    note : str, default=""
        Shown under the table.

    Returns
    -------
    row : DemoRow
    """
    from mvlearn_ext.metrics import clustering_report

    scores, times = {}, []
    for seed in ctx.seeds:
        start = time.perf_counter()
        labels = fit_predict(seed)
        times.append(time.perf_counter() - start)
        for key, value in clustering_report(y, labels).items():
            scores.setdefault(key, []).append(value)
    row = DemoRow(method=method, scores=scores, fit_times=times, note=note)
    acc = sum(scores["ACC"]) / len(scores["ACC"])
    ctx.progress(f"{method}: ACC {acc:.3f} over {len(times)} seed(s), {sum(times):.2f} s")
    return row


# ---------------------------------------------------------------------------
# Built-in section: scikit-learn baselines on Handwritten


def _standardise_views(Xs):
    """z-score every feature, then scale each view to unit total variance.

    Dividing view ``v`` by ``sqrt(n_features_v)`` gives every view the same
    weight in the concatenation, whatever its number of features (otherwise
    the 240 pixel features would outweigh the 6 morphological ones 40 to 1).
    """
    from mvlearn_ext.cluster._preprocessing import apply_view_scaling, fit_view_scaling

    return apply_view_scaling(Xs, *fit_view_scaling(Xs, unit_view_variance=True))


def _baselines_section(ctx):
    import numpy as np
    from sklearn.cluster import KMeans, SpectralClustering

    Xs, y, names = ctx.handwritten()
    n_clusters = int(np.unique(y).shape[0])
    n_init = 10
    Zs = _standardise_views(Xs)
    Z = np.hstack(Zs)
    rows = []

    def kmeans_on(data):
        return lambda seed: KMeans(n_clusters, n_init=n_init, random_state=seed).fit_predict(data)

    rows.append(evaluate_over_seeds(ctx, "k-means, concatenated views", kmeans_on(Z), y))

    def spectral(seed):
        model = SpectralClustering(
            n_clusters,
            affinity="nearest_neighbors",
            n_neighbors=10,
            assign_labels="kmeans",
            n_init=n_init,
            random_state=seed,
        )
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Graph is not fully connected")
            return model.fit_predict(Z)

    rows.append(
        evaluate_over_seeds(ctx, "spectral clustering (10-NN graph), concatenated", spectral, y)
    )

    quiet = dataclasses.replace(ctx, progress=lambda message: None)  # one line for all views
    per_view = [
        evaluate_over_seeds(quiet, name, kmeans_on(Zv), y)
        for name, Zv in zip(names, Zs, strict=True)
    ]
    best = max(range(len(names)), key=lambda v: float(np.mean(per_view[v].scores["ACC"])))
    others = ", ".join(
        f"{name} {np.mean(row.scores['ACC']):.3f}"
        for name, row in zip(names, per_view, strict=True)
    )
    best_row = per_view[best]
    best_row.method = f"k-means, best single view ({names[best]})"
    best_row.note = f"ACC of k-means on each view: {others}; the best is chosen with the labels."
    ctx.progress(
        f"{best_row.method}: ACC {np.mean(best_row.scores['ACC']):.3f} "
        f"(k-means on each of {len(names)} views)"
    )
    rows.append(best_row)
    return rows


#: The built-in sections, in the order of the table: (name, title, run, columns).
_BUILTIN_SECTIONS = (
    (
        "clustering",
        "anchor-graph multi-view clustering (defaults, raw views)",
        "mvlearn_ext.cluster._demo:run_section",
        CLUSTERING_COLUMNS,
    ),
    (
        "baselines",
        "scikit-learn baselines (each view z-scored and scaled to unit total variance, "
        "then concatenated)",
        _baselines_section,
        CLUSTERING_COLUMNS,
    ),
    (
        "multitask",
        "robust multi-task regression (20 tasks, 20% outlier tasks, d=10, isotropic)",
        "mvlearn_ext.multitask._demo:run",
        ("MSE", "MSE related"),
    ),
    (
        "bandits",
        "multi-group mean estimation: regret-curve summary (K=4 Gaussian, R_inf, T=256..4096)",
        "mvlearn_ext.bandits._demo:run",
        ("slope", "regret@4096 (1e-4)"),
    ),
    (
        "moo_toolbandit",
        "ParetoPO (reconstruction) vs static scalarisation, tool-use bandit",
        "mvlearn_ext.moo._demo:run_tool_bandit",
        ("accuracy", "mean_calls", "HV", "front_gap"),
    ),
    (
        "moo_controlg",
        "ControlG (reconstruction) block scheduling simulator",
        "mvlearn_ext.moo._demo:run_controlg",
        ("log_HV", "min_share"),
    ),
    (
        "federated",
        "personalised FL by KME multi-task averaging (reconstruction), excess risk",
        "mvlearn_ext.federated._demo:run",
        ("excess_r0", "excess_r5"),
    ),
    (
        "merging",
        "data-free model merging of three digit experts (NumPy, lambda = 0.4)",
        "mvlearn_ext.merging._demo:run",
        ("accuracy", "kept"),
    ),
    (
        "gaussian_process",
        "multi-output GPs (LVMOGP, 100 outputs, 20% of entries missing)",
        "mvlearn_ext.gaussian_process._demo:run",
        ("RMSE", "NLPD"),
    ),
    (
        "grpo",
        "VisualScore rewards: toy GRPO quality scorer (held-out SRCC)",
        "mvlearn_ext.rl._demo:run",
        ("SRCC technical", "SRCC aesthetics", "SRCC alignment", "zero-adv share"),
    ),
    (
        "grape",
        "GRAPE (reconstruction): GRPO query rewriter vs original queries, toy retriever",
        "mvlearn_ext.rl._grape_demo:run",
        ("R@1", "R@10", "inflation", "hub rate"),
    ),
    (
        "diffusion",
        "two-stage diffusion distillation (reconstruction), NumPy polynomial-Gaussian oracle",
        "mvlearn_ext.diffusion._demo:run",
        ("mean err", "energy"),
    ),
    (
        "phenobrain",
        "PhenoBrain (reconstruction) vs late fusion, phenotype-routed synthetic connectomes",
        "mvlearn_ext.brain._demo:run",
        ("AUC",),
    ),
    (
        "rte_parameter",
        "RTE parameter extrapolation, quadratic family (query MSE)",
        "mvlearn_ext.extrapolate._demo:run_parameter",
        ("MSE out-of-support", "MSE in-support"),
    ),
    (
        "rte_discrete",
        "RTE length and compositional extrapolation, compositions of 4 primitives (query MSE)",
        "mvlearn_ext.extrapolate._demo:run_discrete",
        ("MSE length 4", "MSE length 5", "MSE held-out pairs"),
    ),
)

for _name, _title, _run, _columns in _BUILTIN_SECTIONS:
    register_demo_section(DemoSection(name=_name, title=_title, run=_run, columns=_columns))


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
    header = ["method", *section.columns, "fit time (s)"]
    body = [
        [row.method, *(_cell(row.scores[c]) for c in section.columns), _cell(row.fit_times, 2)]
        for row in rows
    ]
    return header, body


def _render_text(header_lines, results):
    out = list(header_lines)
    for section, rows, error in results:
        out.append("")
        out.append(f"[{section.name}] {section.title}")
        if error is not None:
            out.append(f"  failed: {error}")
            continue
        header, body = _table(section, rows)
        widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

        def fmt(cells, widths=widths):
            return "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(cells, widths, strict=True))
            )

        out.append(fmt(header))
        out.append("  ".join("-" * w for w in widths))
        out.extend(fmt(cells) for cells in body)
        out.extend(f"  note: {row.note}" for row in rows if row.note)
    return "\n".join(out) + "\n"


def _render_markdown(header_lines, results):
    out = [f"{line}  " if line else "" for line in header_lines]
    for section, rows, error in results:
        out += ["", f"**{section.title}** (`{section.name}`)", ""]
        if error is not None:
            out.append(f"failed: {error}")
            continue
        header, body = _table(section, rows)
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
        out.extend("| " + " | ".join(cells) + " |" for cells in body)
        notes = [row.note for row in rows if row.note]
        if notes:
            out.append("")
            out.extend(f"- {note}" for note in notes)
    return "\n".join(out) + "\n"


def _render_json(meta, results):
    payload = dict(meta)
    payload["sections"] = [
        {
            "name": section.name,
            "title": section.title,
            "error": error,
            "rows": [
                {
                    "method": row.method,
                    "scores": row.scores,
                    "fit_times": row.fit_times,
                    "note": row.note,
                }
                for row in rows
            ],
        }
        for section, rows, error in results
    ]
    return json.dumps(payload, indent=2) + "\n"


# ---------------------------------------------------------------------------
# Commands


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _available_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count()


def collect_info():
    """The facts ``info`` prints, as a dict (JSON-serialisable)."""
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
    for module, dist in (("torch", "torch"), ("pandas", "pandas"), ("matplotlib", "matplotlib")):
        found = importlib.util.find_spec(module) is not None
        info[module] = (_version(dist) or "installed") if found else "not installed"
    return info


def _cmd_info(args, stdout, stderr):
    info = collect_info()
    if args.json:
        stdout.write(json.dumps(info, indent=2) + "\n")
        return 0
    width = max(len(key) for key in info)
    for key, value in info.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        stdout.write(f"{key.ljust(width)}  {value}\n")
    return 0


def _parse_views(tokens):
    if tokens is None:
        return None
    return [int(t) if t.isdigit() else t for t in tokens]


def _cmd_demo(args, stdout, stderr):
    from mvlearn_ext.datasets._handwritten import resolve_view_names

    try:
        views = resolve_view_names(_parse_views(args.views), argname="--views")
    except (TypeError, ValueError) as exc:
        stderr.write(f"mvlearn_ext demo: error: {exc}\n")
        return 2
    sections = DEMO_SECTIONS
    if args.section:
        known = {s.name: s for s in DEMO_SECTIONS}
        unknown = [name for name in args.section if name not in known]
        if unknown:
            stderr.write(
                f"mvlearn_ext demo: error: unknown --section {unknown[0]!r}; "
                f"available: {', '.join(known)}\n"
            )
            return 2
        sections = [known[name] for name in dict.fromkeys(args.section)]
    n_seeds = (
        args.seeds if args.seeds is not None else (QUICK_SEEDS if args.quick else DEFAULT_SEEDS)
    )

    def progress(message):
        if args.verbose:
            stderr.write(f"[demo] {message}\n")
            stderr.flush()

    n_threads = None if args.threads == -1 else args.threads
    ctx = DemoContext(
        seeds=tuple(range(n_seeds)),
        quick=args.quick,
        views=views,
        verbose=args.verbose,
        n_threads=n_threads,
        progress=progress,
    )
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    start = time.perf_counter()
    results, failed = [], False
    with threadpool_limits(limits=n_threads):
        for section in sections:
            progress(f"section {section.name!r}")
            try:
                rows = list(section.resolve()(ctx))
                results.append((section, rows, None))
            except Exception as exc:  # keep the other sections' results
                failed = True
                results.append((section, [], f"{type(exc).__name__}: {exc}"))
                stderr.write(f"mvlearn_ext demo: section {section.name!r} failed: {exc}\n")
    elapsed = time.perf_counter() - start

    try:
        Xs, y, names = ctx.handwritten()
        data_lines = [
            f"mvlearn_ext {mvlearn_ext.__version__} demo: Handwritten (UCI Multiple Features), "
            f"{len(y)} samples, {len(set(y.tolist()))} classes",
            "views: " + ", ".join(f"{n} ({X.shape[1]})" for n, X in zip(names, Xs, strict=True)),
        ]
    except Exception as exc:  # a broken installation: still print what ran
        failed, names = True, views
        data_lines = [f"mvlearn_ext {mvlearn_ext.__version__} demo: data unavailable ({exc})"]
    seeds_text = ", ".join(map(str, ctx.seeds))
    if n_seeds > 1:
        spread = f"mean ± standard deviation over seeds {seeds_text}"
    else:
        spread = f"one seed ({seeds_text})"
    header_lines = [
        *data_lines,
        f"scores: {spread}"
        f"{' (quick)' if args.quick else ''}; threads: {args.threads if n_threads else 'all'}; "
        f"total {elapsed:.1f} s",
    ]
    if args.format == "json":
        meta = {
            "version": mvlearn_ext.__version__,
            "data": "handwritten",
            "views": names,
            "seeds": list(ctx.seeds),
            "quick": args.quick,
            "threads": n_threads,
            "elapsed_s": elapsed,
        }
        stdout.write(_render_json(meta, results))
    elif args.format == "markdown":
        stdout.write(_render_markdown(header_lines, results))
    else:
        stdout.write(_render_text(header_lines, results))
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
    if text.strip() == "-1":
        return -1
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer or -1, got {text!r}"
        ) from None


def build_parser():
    """The :class:`argparse.ArgumentParser` of the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m mvlearn_ext",
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
        help="versions, compiled core, CPUs and Numba settings",
        description="Print versions, the compiled core's build, CPUs and Numba settings.",
    )
    info.add_argument("--json", action="store_true", help="print JSON instead of text")

    demo = commands.add_parser(
        "demo",
        help="run every family's demo section (embedded or generated data)",
        description=(
            "Run the registered demo sections and print one table: first the multi-view "
            "clustering methods on the embedded Handwritten digits (UCI Multiple Features, "
            "six views, 2000 samples; no network needed) with ACC, NMI, ARI and purity, then "
            "one small problem per family (multi-task regression, bandits, multi-objective, "
            "federated, merging, GPs, GRPO rewards, GRAPE, diffusion distillation, PhenoBrain, "
            "RTE) with its own scores; mean ± standard deviation over seeds, with fit times. "
            "--section runs one section."
        ),
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
        help="threads for the BLAS and OpenMP pools and the kernels, -1 for every CPU "
        "(default 1: on 2000 samples, starting threads costs more than it saves, and "
        "timings are steadier)",
    )
    demo.add_argument(
        "--section",
        action="append",
        metavar="NAME",
        help="run only this section (repeatable); sections: "
        + ", ".join(s.name for s in DEMO_SECTIONS),
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
    return parser


_COMMANDS = {"info": _cmd_info, "demo": _cmd_demo}


def main(argv: Sequence[str] | None = None, *, stdout=None, stderr=None) -> int:
    """Run the command line; return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments, without the program name; ``sys.argv[1:]`` by default.
    stdout, stderr : text streams, optional
        Where to write; ``sys.stdout`` and ``sys.stderr`` by default.

    Returns
    -------
    status : int
        0 on success, 1 when a demo section failed, 2 on a usage error.

    Examples
    --------
    >>> from mvlearn_ext.__main__ import main
    >>> main(["--version"])  # doctest: +ELLIPSIS
    mvlearn_ext ...
    0
    """
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    parser = build_parser()
    try:
        # argparse writes help and usage errors to sys.stdout / sys.stderr itself.
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as exc:  # --help, --version, or a usage error
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if args.command is None:
        parser.print_help(stdout)
        return 0
    return _COMMANDS[args.command](args, stdout, stderr)
