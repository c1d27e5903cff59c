"""The clustering section of ``python -m mvlearn_ext demo``."""

from __future__ import annotations

import numpy as np


def _methods():
    from mvlearn_ext import cluster

    names = ["HAGMVC", "DRMC", "LMVSC", "SMVSC"]
    notes = {
        "HAGMVC": "reconstruction of HAG-MVC (ICML 2026) from its abstract",
        "DRMC": "reconstruction of DRMC (ICML 2026) from its abstract",
        "LMVSC": "baseline, Kang et al. AAAI 2020",
        "SMVSC": "baseline, Sun et al. ACM MM 2021 (alpha^2 fix)",
    }
    return [(n, getattr(cluster, n), notes[n]) for n in names if hasattr(cluster, n)]


def run_section(ctx):
    """Anchor-graph methods with their defaults, on the raw Handwritten views."""
    from mvlearn_ext._cli import evaluate_over_seeds

    Xs, y, _ = ctx.handwritten()
    n_clusters = int(np.unique(y).shape[0])
    rows = []
    for name, cls, note in _methods():
        params = {"n_clusters": n_clusters}
        if "n_jobs" in cls().get_params():
            params["n_jobs"] = ctx.n_threads

        def fit_predict(seed, cls=cls, params=params):
            return cls(**params, random_state=seed).fit_predict(Xs)

        rows.append(evaluate_over_seeds(ctx, name, fit_predict, y, note=f"{name}: {note}"))
    return rows
