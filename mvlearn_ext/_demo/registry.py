"""The demo's registry: sections, their rows and the seed loop.

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

This module is a leaf: it imports nothing of mvlearn_ext at import time, so
that the sections (``mvlearn_ext._demo.<family>``) and the command line
(:mod:`mvlearn_ext._cli`) can both stand on it. No domain package imports
it: the demo is the floor above the families, the command line the top one.
"""

from __future__ import annotations

import dataclasses
import importlib
import time
from collections.abc import Callable, Mapping

__all__ = [
    "CLUSTERING_COLUMNS",
    "CLUSTERING_LEGEND",
    "DEMO_SECTIONS",
    "FIT_TIME",
    "DemoContext",
    "DemoRow",
    "DemoSection",
    "evaluate_over_seeds",
    "register_demo_section",
]

CLUSTERING_COLUMNS = ("ACC", "NMI", "ARI")
FIT_TIME = "fit time (s)"

CLUSTERING_LEGEND = {
    "ACC": "clustering accuracy: share of samples whose cluster is matched to their class by "
    "the best one-to-one matching (1 = perfect; 0.1 = chance with 10 balanced classes)",
    "NMI": "normalised mutual information of clusters and classes, arithmetic normalisation "
    "(0 = independent, 1 = the same partition)",
    "ARI": "adjusted Rand index: agreement on every pair of samples (same cluster or not), "
    "corrected for chance (0 = chance, 1 = the same partition)",
}


def optional_module():
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
    not_run: list[tuple[str, str]] = dataclasses.field(default_factory=list, repr=False)

    def skip_method(self, method, module):
        """Record that ``method`` did not run because the optional ``module`` is missing.

        The demo prints one line for it under the section's table, naming the
        extra to install, so that a missing row is never silent.
        """
        self.not_run.append((method, module))

    def handwritten(self):
        """``(Xs, y, view_names)`` of the selected Handwritten views, loaded once."""
        if "handwritten" not in self._cache:
            from mvlearn_ext.datasets import load_handwritten

            data = load_handwritten(views=self.views, return_Xs_y=False)
            self._cache["handwritten"] = (data.views, data.target, data.view_names)
            self._cache["view_descriptions"] = list(data.view_descriptions)
        return self._cache["handwritten"]

    def handwritten_description(self):
        """One line on the Handwritten data, every view code explained."""
        Xs, y, names = self.handwritten()
        views = "; ".join(
            f"{name} = {descr} ({X.shape[1]})"
            for name, descr, X in zip(names, self._cache["view_descriptions"], Xs, strict=True)
        )
        return (
            f"data: Handwritten digits (UCI Multiple Features), {len(y)} samples, "
            f"{len(set(y.tolist()))} classes; views (code = features, count): {views}"
        )


@dataclasses.dataclass(frozen=True)
class DemoSection:
    """A block of the demo table (see the module docstring).

    ``legend`` maps each column (and optionally ``"fit time (s)"``) to its
    one-line explanation, printed under the table; ``requires`` names the
    optional dependencies (import names) without which the section is
    skipped; ``handwritten`` says whether the section runs on the embedded
    Handwritten data (its views are then described under its title).
    """

    name: str
    title: str
    run: Callable[[DemoContext], list[DemoRow]] | str
    columns: tuple[str, ...] = CLUSTERING_COLUMNS
    legend: Mapping[str, str] | None = None
    requires: tuple[str, ...] = ()
    handwritten: bool = False

    def resolve(self):
        if callable(self.run):
            return self.run
        module_name, _, attr = self.run.partition(":")
        return getattr(importlib.import_module(module_name), attr)

    def missing(self):
        """The import names of ``requires`` that cannot be found (nothing is imported)."""
        optional = optional_module()
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
