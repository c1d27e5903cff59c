"""The federated section of ``python -m mvlearn_ext demo`` (synthetic, seconds)."""

from __future__ import annotations

import time

import numpy as np


def clustered_agents(r, *, B=10, n=100, p=3, seed=0):
    """``B`` agents' ridge data ``(Xs, ys, thetas)``: two groups whose true coefficients
    ``1 + r c_g`` differ by ``r`` along unit directions ``c_g``; noise 0.5."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(2, p))
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    Xs, ys, th = [], [], []
    for b in range(B):
        t = np.ones(p) + r * centers[b % 2]
        X = rng.normal(size=(n, p))
        Xs.append(X)
        ys.append(X @ t + 0.5 * rng.normal(size=n))
        th.append(t)
    return Xs, ys, np.array(th)


def run(ctx):
    """Mean excess risk of personalised ridge: KME-MTA vs local and FedAvg, two regimes."""
    from mvlearn_ext._demo.registry import DemoRow
    from mvlearn_ext.federated import KMEPersonalizedRidge

    rows = []
    for method in ("unbiased", "local", "global"):
        scores = {"excess_r0": [], "excess_r5": []}
        times = []
        for seed in ctx.seeds:
            t = time.perf_counter()
            for r, key in ((0.0, "excess_r0"), (5.0, "excess_r5")):
                Xs, ys, th = clustered_agents(r, seed=seed)
                m = KMEPersonalizedRidge(weights=method, random_state=seed).fit(Xs, ys)
                scores[key].append(
                    float(np.mean(np.sum((m.coef_ - th) ** 2, 1) + m.intercept_**2))
                )
            times.append(time.perf_counter() - t)
        name = {"unbiased": "KME-MTA", "local": "local ridge", "global": "FedAvg (pooled)"}[method]
        note = (
            "KME-MTA: kernel-mean-embedding multi-task averaging, reconstruction of Fermanian, "
            "Le Bars & Bellet (arXiv 2603.02233); FedAvg: one ridge fit on all agents pooled"
            if method == "unbiased"
            else ""
        )
        rows.append(DemoRow(method=name, scores=scores, fit_times=times, note=note))
    return rows
