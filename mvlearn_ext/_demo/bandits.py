"""The bandits section of ``python -m mvlearn_ext demo``: one regret curve summary.

K = 4 Gaussian groups with variances (0.25, 1, 2, 4) (a heteroscedastic
instance), objective R_inf, horizons T = 256, 1024, 4096, a few hundred
replications per seed. Columns: the fitted log-log slope of the mean proxy
regret (theory -1.5 for the fast rules, -1 for uniform) and the regret at
T = 4096 in units of 1e-4.
"""

from __future__ import annotations

import time

import numpy as np

COLUMNS = ("slope", "regret@4096 (1e-4)")


def _policies():
    from mvlearn_ext.bandits import CHAS, GAFSMax, GreedyPlugIn, TwoStagePlugIn, UniformAllocation

    return [
        (
            "greedy plug-in, n0=sqrt(T)",
            GreedyPlugIn(p=np.inf),
            "reconstruction of the adaptive exploration-free rule "
            "(Wei, Zhong & Li, arXiv 2510.10374); n0 = samples of every group before the "
            "plug-in rule takes over, T = budget, K = number of groups",
        ),
        (
            "two-stage, n0=T/(4K)",
            TwoStagePlugIn(p=np.inf),
            "reconstruction of the non-adaptive rule (same paper)",
        ),
        ("GAFS-MAX", GAFSMax(), "Antos, Grover & Szepesvari 2010"),
        ("CH-AS", CHAS(), "Carpentier et al. ALT 2011"),
        ("uniform", UniformAllocation(p=np.inf), "baseline"),
    ]


def run(ctx):
    """Regret-curve summary of five policies, one simulate() batch per seed and horizon."""
    from mvlearn_ext._demo.registry import DemoRow
    from mvlearn_ext.bandits import regret_curve

    sigma = np.sqrt([0.25, 1.0, 2.0, 4.0])
    budgets = [256, 1024, 4096]
    n_rep = 200 if ctx.quick else 500
    rows = []
    for name, policy, note in _policies():
        # An untimed warm-up on a short horizon compiles the Numba kernels, so that
        # the first seed's time does not include compilation.
        regret_curve(
            policy,
            sigma=sigma,
            budgets=[32, 64],
            n_replications=2,
            random_state=0,
            n_jobs=ctx.n_threads,
        )
        scores = {c: [] for c in COLUMNS}
        times = []
        for seed in ctx.seeds:
            start = time.perf_counter()
            curve = regret_curve(
                policy,
                sigma=sigma,
                budgets=budgets,
                n_replications=n_rep,
                random_state=int(seed),
                n_jobs=ctx.n_threads,
            )
            times.append(time.perf_counter() - start)
            scores["slope"].append(curve["fit"].slope if curve["fit"] else float("nan"))
            scores["regret@4096 (1e-4)"].append(curve["mean"][-1] * 1e4)
        ctx.progress(f"{name}: slope {np.mean(scores['slope']):.2f}, {sum(times):.2f} s")
        rows.append(DemoRow(method=name, scores=scores, fit_times=times, note=f"{name}: {note}"))
    return rows
