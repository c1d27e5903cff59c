"""The clustering section of ``python -m mvlearn_ext demo`` (the default section).

Every multi-view method of :mod:`mvlearn_ext.cluster` with its defaults,
beside the concatenation baselines a user would otherwise pick, on the
embedded Handwritten data (raw views; each method does its own scaling).
The rows come from one list, :data:`METHODS`: to add a method, append a
``(name, factory, note)`` triple; a name that starts with ``"concat "`` marks a
concatenation baseline. A concatenation baseline that beats a multi-view method
stays in the table, and every other row's note says by how much ACC it leads or
trails the best concatenation baseline of the same run.
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext import cluster

__all__ = ["METHODS", "run_section"]


def _threaded(cls, **params):
    """A factory ``(n_clusters, seed, n_threads) -> cls(...)``, passing ``n_jobs`` if accepted."""

    def make(n_clusters, seed, n_threads):
        kwargs = dict(params, n_clusters=n_clusters, random_state=seed)
        if "n_jobs" in cls().get_params():
            kwargs["n_jobs"] = n_threads
        return cls(**kwargs)

    return make


#: The rows of the section, in order: ``(name, factory, note)``, where
#: ``factory(n_clusters, seed, n_threads)`` returns an unfitted estimator with
#: ``fit_predict(Xs)``. Defaults throughout: nothing is tuned on these data.
METHODS = [
    ("HAGMVC", _threaded(cluster.HAGMVC), "multi-view; reconstruction of HAG-MVC (ICML 2026)"),
    ("DRMC", _threaded(cluster.DRMC), "multi-view; reconstruction of DRMC (ICML 2026)"),
    ("LMVSC", _threaded(cluster.LMVSC), "multi-view anchor baseline, Kang et al. AAAI 2020"),
    ("SMVSC", _threaded(cluster.SMVSC), "multi-view anchor baseline, Sun et al. ACM MM 2021"),
    (
        "FPMVSCAG",
        _threaded(cluster.FPMVSCAG),
        "multi-view anchor baseline, Wang et al. IEEE TIP 2022",
    ),
    ("EOMSCCA", _threaded(cluster.EOMSCCA), "multi-view anchor baseline, Liu et al. AAAI 2022"),
    (
        "concat k-means, z-scored",
        _threaded(cluster.ConcatKMeans, scaling="zscore"),
        "concatenation baseline: k-means on the views side by side, every feature z-scored",
    ),
    (
        "concat k-means, balanced",
        _threaded(cluster.ConcatKMeans, scaling="balanced"),
        "concatenation baseline: k-means on the z-scored views, each view scaled to the same "
        "total variance",
    ),
    (
        "concat spectral, z-scored",
        _threaded(cluster.ConcatSpectral, scaling="zscore"),
        "concatenation baseline: 10-NN spectral clustering of the views side by side, z-scored",
    ),
    (
        "concat spectral, balanced",
        _threaded(cluster.ConcatSpectral, scaling="balanced"),
        "concatenation baseline: 10-NN spectral clustering, each view scaled to the same "
        "total variance",
    ),
]

#: Names that start with this mark the concatenation baselines.
CONCAT_PREFIX = "concat "

#: Rows of the untimed warm-up fit (every 10th sample: 200 of the 2000, all classes).
WARMUP_STRIDE = 10


def run_section(ctx):
    """Every method of :data:`METHODS`, each warmed up once, then timed over ``ctx.seeds``."""
    from mvlearn_ext._demo.registry import evaluate_over_seeds

    Xs, y, _ = ctx.handwritten()
    n_clusters = int(np.unique(y).shape[0])
    small = [X[::WARMUP_STRIDE] for X in Xs]
    rows = []
    for name, factory, note in METHODS:

        def fit_predict(seed, factory=factory, data=Xs):
            return factory(n_clusters, seed, ctx.n_threads).fit_predict(data)

        rows.append(
            evaluate_over_seeds(
                ctx,
                name,
                fit_predict,
                y,
                note=f"{name}: {note}",
                warmup=lambda fp=fit_predict: fp(0, data=small),
            )
        )
    return _against_best_concatenation(rows)


def _against_best_concatenation(rows):
    """Add to each method's note its mean ACC minus the best concatenation baseline's.

    The comparison is with this run's table (same seeds and data), so a loss is
    printed as plainly as a win.
    """

    def acc(row):
        return float(np.mean(row.scores["ACC"]))

    concat = [row for row in rows if row.method.startswith(CONCAT_PREFIX)]
    others = [row for row in rows if not row.method.startswith(CONCAT_PREFIX)]
    if not concat or not others:
        return rows
    best = max(concat, key=acc)
    for row in others:
        gap = acc(row) - acc(best)
        verdict = "ahead of" if gap > 0 else ("level with" if gap == 0 else "behind")
        row.note += f"; ACC {gap:+.4f}, {verdict} the best concatenation baseline here"
    best.note += (
        f"; the best concatenation baseline here (ACC {acc(best):.3f}). Which concatenation"
        " is best depends on the data; the clustering guide compares the methods on 11 data"
        " sets"
    )
    return rows
