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

Adding a demo section
---------------------
A section is a :class:`DemoSection`: a name (for ``--section``), a title,
the score columns to show with a one-line explanation of each (``legend``),
the optional dependencies it needs (``requires``, import names from
:data:`mvlearn_ext.utils._optional.OPTIONAL_DEPENDENCIES`; the section is
skipped with one line naming the extra when one is missing), and a callable
``run(ctx) -> list[DemoRow]``, given directly or as a
``"package.module:function"`` string that is imported only when the section
runs (so that the demo of one family never slows down or breaks the import
of another). Append it to :data:`DEMO_SECTIONS` with
:func:`register_demo_section`. :func:`evaluate_over_seeds` runs a
``fit_predict(seed) -> labels`` callable over ``ctx.seeds`` (after an
optional untimed warm-up), times it and scores it with
:func:`mvlearn_ext.metrics.clustering_report`.
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
import warnings
from collections.abc import Callable, Mapping, Sequence

import mvlearn_ext

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

CLUSTERING_COLUMNS = ("ACC", "NMI", "ARI")
FIT_TIME = "fit time (s)"
DEFAULT_SEEDS = 3
QUICK_SEEDS = 2
#: The sections ``demo`` runs without ``--all`` or ``--section``.
DEFAULT_SECTIONS = ("clustering",)

CLUSTERING_LEGEND = {
    "ACC": "clustering accuracy: share of samples whose cluster is matched to their class by "
    "the best one-to-one matching (1 = perfect; 0.1 = chance with 10 balanced classes)",
    "NMI": "normalised mutual information of clusters and classes, arithmetic normalisation "
    "(0 = independent, 1 = the same partition)",
    "ARI": "adjusted Rand index: agreement on every pair of samples (same cluster or not), "
    "corrected for chance (0 = chance, 1 = the same partition)",
}


def _optional():
    """:mod:`mvlearn_ext.utils._optional`, imported on use.

    Importing :mod:`mvlearn_ext.utils` loads the compiled core; ``info`` and
    ``--help`` must work (and report it) when the core is broken.
    """
    from mvlearn_ext.utils import _optional

    return _optional


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

    ``n_threads`` is the ``--threads`` option resolved to a positive count
    (``-1``: every CPU, ``-2``: all but one, ...). The demo already caps
    the BLAS and OpenMP thread pools (threadpoolctl) and Numba's threads at
    it; a section passes it on to kernels with their own threads
    (``n_jobs=`` / ``n_threads=`` of the estimators).
    """

    seeds: tuple[int, ...]
    quick: bool = False
    views: list[str] | None = None
    verbose: bool = False
    n_threads: int = 1
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
    """A block of the demo table (see the module docstring).

    ``legend`` maps each column (and optionally ``"fit time (s)"``) to its
    one-line explanation, printed under the table; ``requires`` names the
    optional dependencies (import names) without which the section is
    skipped.
    """

    name: str
    title: str
    run: Callable[[DemoContext], list[DemoRow]] | str
    columns: tuple[str, ...] = CLUSTERING_COLUMNS
    legend: Mapping[str, str] | None = None
    requires: tuple[str, ...] = ()

    def resolve(self):
        if callable(self.run):
            return self.run
        module_name, _, attr = self.run.partition(":")
        return getattr(importlib.import_module(module_name), attr)

    def missing(self):
        """The import names of ``requires`` that cannot be found (nothing is imported)."""
        optional = _optional()
        unknown = [name for name in self.requires if optional.optional_dependency(name) is None]
        if unknown:
            raise ValueError(
                f"section {self.name!r} requires {unknown[0]!r}, which is not an optional "
                "dependency of mvlearn_ext (see mvlearn_ext.utils._optional)"
            )
        return [name for name in self.requires if not optional.is_available(name)]

    def explanations(self):
        """``[(column, explanation)]`` for every column and the fit time."""
        legend = {c: CLUSTERING_LEGEND[c] for c in self.columns if c in CLUSTERING_LEGEND}
        legend.update(self.legend or {})
        legend.setdefault(FIT_TIME, "wall-clock seconds of one fit, mean ± std over seeds")
        return [(c, legend.get(c, "(not explained)")) for c in (*self.columns, FIT_TIME)]


DEMO_SECTIONS: list[DemoSection] = []


def register_demo_section(section):
    """Append ``section`` to :data:`DEMO_SECTIONS`; names must be unique."""
    if not isinstance(section, DemoSection):
        raise TypeError(f"section must be a DemoSection, got {type(section).__name__}")
    if any(existing.name == section.name for existing in DEMO_SECTIONS):
        raise ValueError(f"a demo section named {section.name!r} is already registered")
    DEMO_SECTIONS.append(section)
    return section


def evaluate_over_seeds(ctx, method, fit_predict, y, *, note="", warmup=None):
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
    warmup : callable, optional
        Called once, untimed, before the timed runs (a fit on a small
        subset compiles the Numba kernels, so the first seed's time does
        not include compilation).

    Returns
    -------
    row : DemoRow
    """
    from mvlearn_ext.metrics import clustering_report

    if warmup is not None:
        warmup()
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


_MSE_BY_POPULATION = "population prediction error E[(x^T (b_hat - b))^2] of a task's coefficients"

#: The built-in sections, in the order of ``--all``.
_BUILTIN_SECTIONS = (
    DemoSection(
        name="clustering",
        title="multi-view clustering of Handwritten (defaults, raw views) beside the "
        "concatenation baselines",
        run="mvlearn_ext.cluster._demo:run_section",
        legend={
            FIT_TIME: "wall-clock seconds of one fit_predict, mean ± std over seeds, after one "
            "untimed warm-up fit per method on 200 samples (Numba compilation not counted)",
        },
    ),
    DemoSection(
        name="baselines",
        title="scikit-learn baselines (each view z-scored and scaled to unit total variance, "
        "then concatenated; and the best single view)",
        run=_baselines_section,
        columns=(*CLUSTERING_COLUMNS, "purity"),
        legend={"purity": "share of samples in the majority class of their cluster"},
    ),
    DemoSection(
        name="multitask",
        title="robust multi-task regression (20 tasks, 20% outlier tasks, d=10, isotropic)",
        run="mvlearn_ext.multitask._demo:run",
        columns=("MSE", "MSE related"),
        legend={
            "MSE": f"{_MSE_BY_POPULATION}, averaged over all 20 tasks (lower is better)",
            "MSE related": "the same, averaged over the 16 related tasks only (the outlier "
            "tasks left out)",
            FIT_TIME: "seconds of one fit on all 20 tasks, mean ± std over seeds, after an "
            "untimed warm-up fit on a small draw (Numba compilation not counted)",
        },
    ),
    DemoSection(
        name="bandits",
        title="multi-group mean estimation: regret-curve summary (K=4 Gaussian groups, "
        "worst-group objective R_inf, T=256..4096)",
        run="mvlearn_ext.bandits._demo:run",
        columns=("slope", "regret@4096 (1e-4)"),
        legend={
            "slope": "log-log slope of the mean proxy regret against the budget T (more "
            "negative learns faster; theory -1.5 for the fast rules, -1 for uniform)",
            "regret@4096 (1e-4)": "mean proxy regret R_inf(n_T) - R_inf(n*) at T = 4096, in "
            "units of 1e-4; R_inf = max over groups of sigma_k^2 / n_k",
            FIT_TIME: "seconds of the whole curve (3 budgets x 500 replications; 200 with "
            "--quick), after an untimed warm-up at T = 32, 64 (Numba compilation not counted)",
        },
    ),
    DemoSection(
        name="moo_toolbandit",
        title="ParetoPO (reconstruction) vs static scalarisation, tool-use bandit",
        run="mvlearn_ext.moo._demo:run_tool_bandit",
        columns=("accuracy", "mean_calls", "HV", "front_gap"),
        legend={
            "accuracy": "probability that the final policy solves a prompt (exact, over the "
            "three difficulties)",
            "mean_calls": "expected tool calls per prompt (out of at most 4; fewer is cheaper)",
            "HV": "hypervolume of (accuracy, 1 - mean_calls / 4) against (0, 0) (higher is "
            "better)",
            "front_gap": "accuracy of the exact Pareto front at the same efficiency minus the "
            "policy's (0 = on the front; lower is better)",
            FIT_TIME: "seconds of one training run (150 GRPO steps)",
        },
        requires=("moocore",),
    ),
    DemoSection(
        name="moo_hopbandit",
        title="ParetoPO (reconstruction) vs static scalarisation where scalarisation is weak: "
        "multi-hop bandit (non-convex front, drifting reward scales)",
        run="mvlearn_ext.moo._demo:run_hop_bandit",
        columns=("front_HV", "calls_w0.9"),
        legend={
            "front_HV": "hypervolume of the final (accuracy, 1 - calls / 12) points at accuracy "
            "weights 0.1, 0.5, 0.9, over the exact front's (1 = the whole front; its points "
            "that maximise some weighted sum hold 0.763)",
            "calls_w0.9": "expected tool calls of the final policy at accuracy weight 0.9 "
            "(0 calls: accuracy 0.1, a guess; 3 facts must be retrieved to answer)",
            FIT_TIME: "seconds of the three training runs (150 GRPO steps each)",
        },
        requires=("moocore",),
    ),
    DemoSection(
        name="moo_controlg",
        title="ControlG (reconstruction) block scheduling simulator (3 objectives, 60 blocks)",
        run="mvlearn_ext.moo._demo:run_controlg",
        columns=("log_HV", "min_share"),
        legend={
            "log_HV": "sum over the objectives of log(L_k(0) - L_k(T)): log-hypervolume of the "
            "final losses against the start (higher is better)",
            "min_share": "share of the blocks given to the least-trained objective (1/3 = "
            "balanced; uniform_mix trains all three in every block)",
            FIT_TIME: "seconds of one simulation",
        },
    ),
    DemoSection(
        name="federated",
        title="personalised FL by KME multi-task averaging (reconstruction), excess risk",
        run="mvlearn_ext.federated._demo:run",
        columns=("excess_r0", "excess_r5"),
        legend={
            "excess_r0": "squared error of the personalised coefficients and intercept, mean "
            "over 10 agents, when all agents share one truth (lower is better)",
            "excess_r5": "the same when the agents' truths form two groups 5 apart "
            "(heterogeneous agents)",
            FIT_TIME: "seconds of both fits (r = 0 and r = 5)",
        },
    ),
    DemoSection(
        name="merging",
        title="data-free model merging of three digit experts (NumPy, lambda = 0.4)",
        run="mvlearn_ext.merging._demo:run",
        columns=("accuracy", "kept"),
        legend={
            "accuracy": "test accuracy of the merged body, each task with its own head, mean "
            "over the three tasks",
            "kept": "fraction of each expert's weight-matrix updates the merge keeps (1 = all)",
            FIT_TIME: "seconds of the merge (0 for the individual experts)",
        },
    ),
    DemoSection(
        name="gaussian_process",
        title="multi-output GPs (LVMOGP, 100 outputs, 20% of entries missing)",
        run="mvlearn_ext.gaussian_process._demo:run",
        columns=("RMSE", "NLPD"),
        legend={
            "RMSE": "root-mean-squared error of the predictive mean on the missing entries",
            "NLPD": "negative log predictive density of the missing entries under the Gaussian "
            "predictive (lower is better)",
            FIT_TIME: "seconds of one fit of all 100 outputs (independent GPs: 20 fitted, the "
            "time scaled to 100)",
        },
    ),
    DemoSection(
        name="grpo",
        title="VisualScore rewards: toy GRPO quality scorer (held-out SRCC)",
        run="mvlearn_ext.rl._demo:run",
        columns=("SRCC technical", "SRCC aesthetics", "SRCC alignment", "zero-adv share"),
        legend={
            "SRCC technical": "Spearman rank correlation of the predicted and true quality on "
            "held-out items of the technical task (1 = perfect ranking)",
            "SRCC aesthetics": "the same on the aesthetics task",
            "SRCC alignment": "the same on the alignment task",
            "zero-adv share": "share of the training groups whose rewards were all equal (zero "
            "advantage: no learning signal)",
            FIT_TIME: "seconds of one training run",
        },
    ),
    DemoSection(
        name="grape",
        title="GRAPE (reconstruction): GRPO query rewriter vs original queries, toy retriever",
        run="mvlearn_ext.rl._grape_demo:run",
        columns=("R@1", "R@10", "inflation", "hub rate"),
        legend={
            "R@1": "share of held-out queries whose target the retriever ranks first",
            "R@10": "share whose target is in the retriever's top 10",
            "inflation": "mean retrieval score of the non-target items (a reward open to "
            "gaming raises it)",
            "hub rate": "share of rewrites that append a hub token (a token that raises every "
            "item's score)",
            FIT_TIME: "seconds of one training run (0 without rewriting)",
        },
    ),
    DemoSection(
        name="diffusion",
        title="two-stage diffusion distillation (reconstruction), NumPy polynomial-Gaussian "
        "oracle",
        run="mvlearn_ext.diffusion._demo:run",
        columns=("mean err", "energy"),
        legend={
            "mean err": "squared error of the model's conditional mean against the true one, "
            "mean over held-out conditions and the two tasks",
            "energy": "energy distance of model samples of (c, x) to fresh samples of the true "
            "law (0 = the same law)",
            FIT_TIME: "seconds to fit the models of one seed",
        },
    ),
    DemoSection(
        name="phenobrain",
        title="PhenoBrain (reconstruction) vs late fusion, phenotype-routed synthetic connectomes",
        run="mvlearn_ext.brain._demo:run",
        columns=("AUC",),
        legend={
            "AUC": "area under the ROC curve on the 30% test split (0.5 = chance, 1 = perfect)",
            FIT_TIME: "seconds of one fit",
        },
    ),
    DemoSection(
        name="rte_parameter",
        title="RTE parameter extrapolation, quadratic family (query MSE)",
        run="mvlearn_ext.extrapolate._demo:run_parameter",
        columns=("MSE out-of-support", "MSE in-support"),
        legend={
            "MSE out-of-support": "query mean-squared error on target tasks whose parameters "
            "lie outside the library's range ([1.9, 2.3]^2 against [0.5, 1.5]^2)",
            "MSE in-support": "the same on target tasks inside the library's range",
            FIT_TIME: "seconds of one fit",
        },
    ),
    DemoSection(
        name="rte_discrete",
        title="RTE length and compositional extrapolation, compositions of 4 primitives "
        "(query MSE)",
        run="mvlearn_ext.extrapolate._demo:run_discrete",
        columns=("MSE length 4", "MSE length 5", "MSE held-out pairs"),
        legend={
            "MSE length 4": "query mean-squared error on compositions of length 4 (the "
            "library has lengths 1 to 3)",
            "MSE length 5": "the same on compositions of length 5",
            "MSE held-out pairs": "the same on compositions with pairs of primitives never "
            "seen together",
            FIT_TIME: "seconds of one fit",
        },
    ),
)

for _section in _BUILTIN_SECTIONS:
    register_demo_section(_section)


# ---------------------------------------------------------------------------
# Running sections


@dataclasses.dataclass
class _Result:
    section: DemoSection
    rows: list[DemoRow]
    error: str | None = None
    skipped: str | None = None
    seconds: float = 0.0


def _missing_optional(exc):
    """The optional dependency whose absence raised ``exc`` (or a cause of it), or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        name = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
        if name and _optional().optional_dependency(name) is not None:
            return name.partition(".")[0]
        exc = exc.__cause__ or exc.__context__
    return None


def _skip_reason(modules):
    hint = _optional().install_hint
    return "; ".join(f"needs {m}, not installed: {hint(m)}" for m in modules)


def _run_section(section, ctx, stderr):
    start = time.perf_counter()
    try:
        missing = section.missing()
        if missing:
            return _Result(section, [], skipped=_skip_reason(missing))
        rows = list(section.resolve()(ctx))
    except Exception as exc:  # keep the other sections' results
        module = _missing_optional(exc)
        if module is not None:
            return _Result(section, [], skipped=_skip_reason([module]))
        stderr.write(f"mvlearn_ext demo: section {section.name!r} failed: {exc}\n")
        return _Result(section, [], error=f"{type(exc).__name__}: {exc}")
    return _Result(section, rows, seconds=time.perf_counter() - start)


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
        if result.error is not None:
            out.append(f"failed: {result.error}")
            continue
        header, body = _table(section, result.rows)
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
        out.extend("| " + " | ".join(cells) + " |" for cells in body)
        out.append("")
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
        optional = _optional()
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


def _select_sections(args, stderr):
    """The sections to run, or None after a usage error."""
    known = {s.name: s for s in DEMO_SECTIONS}
    if args.all:
        return list(DEMO_SECTIONS)
    names = args.section or [name for name in DEFAULT_SECTIONS if name in known]
    unknown = [name for name in names if name not in known]
    if unknown:
        stderr.write(
            f"mvlearn_ext demo: error: unknown --section {unknown[0]!r}; "
            f"available: {', '.join(known)}\n"
        )
        return None
    return [known[name] for name in dict.fromkeys(names)]


def _cmd_demo(args, stdout, stderr):
    from mvlearn_ext.datasets._handwritten import resolve_view_names

    try:
        views = resolve_view_names(_parse_views(args.views), argname="--views")
    except (TypeError, ValueError) as exc:
        stderr.write(f"mvlearn_ext demo: error: {exc}\n")
        return 2
    sections = _select_sections(args, stderr)
    if sections is None:
        return 2
    try:
        from mvlearn_ext._lib import effective_n_threads

        n_threads = effective_n_threads(args.threads)
    except (ImportError, TypeError, ValueError) as exc:
        stderr.write(f"mvlearn_ext demo: error: --threads {args.threads}: {exc}\n")
        return 2
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
    try:
        Xs, y, names = ctx.handwritten()
        data_lines = [
            f"mvlearn_ext {mvlearn_ext.__version__} demo on Handwritten (UCI Multiple Features): "
            f"{len(y)} samples, {len(set(y.tolist()))} classes",
            "views: " + ", ".join(f"{n} ({X.shape[1]})" for n, X in zip(names, Xs, strict=True)),
        ]
    except Exception as exc:  # a broken installation: still run the other sections
        failed, names = True, views
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
            f" (of {len(DEMO_SECTIONS)}: --all runs every one, "
            "--section NAME one, demo --help lists them)"
            if len(sections) < len(DEMO_SECTIONS)
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
            "data": "handwritten",
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


def _sections_epilog():
    try:
        optional = _optional()
    except Exception:  # the compiled core is broken: list the sections without their needs
        return "sections: " + ", ".join(s.name for s in DEMO_SECTIONS)
    width = max(len(s.name) for s in DEMO_SECTIONS)
    lines = [f"sections (default: {', '.join(DEFAULT_SECTIONS)}; --all runs every one):"]
    for section in DEMO_SECTIONS:
        needs = "".join(
            f" [needs {m}, extra {getattr(optional.optional_dependency(m), 'extra', '?')}"
            + ("" if optional.is_available(m) else f", not installed: {optional.install_hint(m)}")
            + "]"
            for m in section.requires
        )
        lines.append(f"  {section.name.ljust(width)}  {section.title}{needs}")
    return "\n".join(lines)


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
        help="versions, compiled core, CPUs, Numba settings and optional dependencies",
        description="Print versions, the compiled core's build, CPUs, Numba settings and every "
        "optional dependency (installed version or 'not installed', and its extras).",
    )
    info.add_argument("--json", action="store_true", help="print JSON instead of text")

    demo = commands.add_parser(
        "demo",
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
        epilog=_sections_epilog(),
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
