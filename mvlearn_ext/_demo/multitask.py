"""The multi-task section of ``python -m mvlearn_ext demo``.

A small contaminated setting of Kim (2026): 20 tasks of 40 rows in 10
dimensions, isotropic covariates, 20% outlier tasks; the score is the
population prediction MSE averaged over all tasks (lower is better).
"""

from __future__ import annotations

import time

import numpy as np

COLUMNS = ("MSE", "MSE related")


def _methods():
    from mvlearn_ext import multitask as mt

    return [
        (
            "RobustMultiTaskRegressorCV",
            lambda seed: mt.RobustMultiTaskRegressorCV(fit_intercept=False, random_state=seed),
            "default: Kim (ICML 2026) with a Euclidean ridge term, (rho, q) by 5-fold CV "
            "within tasks (the ridge, not from the paper, shrinks tasks with few rows per "
            "feature)",
        ),
        (
            "RobustMultiTaskRegressorCV(ridges=(0,))",
            lambda seed: mt.RobustMultiTaskRegressorCV(
                fit_intercept=False, random_state=seed, ridges=(0.0,)
            ),
            "the paper's estimator (Kim, ICML 2026), exact solver, q by 5-fold CV within tasks",
        ),
        (
            "ARMULRegressorCV",
            lambda seed: mt.ARMULRegressorCV(fit_intercept=False, random_state=seed),
            "baseline, Duan & Wang 2023 (vanilla), solved to tolerance",
        ),
        (
            "IndependentTaskRegressor",
            lambda seed: mt.IndependentTaskRegressor(fit_intercept=False),
            "baseline: least squares per task",
        ),
        (
            "IndependentTaskRegressorCV",
            lambda seed: mt.IndependentTaskRegressorCV(fit_intercept=False, random_state=seed),
            "baseline: ridge per task, strength by per-task CV",
        ),
        (
            "PooledRegressor",
            lambda seed: mt.PooledRegressor(fit_intercept=False),
            "baseline: one least-squares fit for all tasks",
        ),
        (
            "MeanRegularizedRegressorCV",
            lambda seed: mt.MeanRegularizedRegressorCV(fit_intercept=False, random_state=seed),
            "baseline: squared Euclidean penalty to a mean (Evgeniou & Pontil 2004)",
        ),
    ]


def run(ctx):
    """Every method on the same draws, one draw per seed."""
    from mvlearn_ext._demo.registry import DemoRow
    from mvlearn_ext.datasets import make_contaminated_tasks

    draws = {
        seed: make_contaminated_tasks(
            n_tasks=20,
            n_samples=40,
            n_features=10,
            delta=0.3,
            epsilon=0.2,
            alpha=0.0,
            random_state=seed,
        )
        for seed in ctx.seeds
    }
    # An untimed warm-up fit of every method on a small draw compiles the Numba
    # kernels, so that the first seed's time does not include compilation.
    small = make_contaminated_tasks(
        n_tasks=6, n_samples=20, n_features=10, delta=0.3, epsilon=0.2, alpha=0.0, random_state=0
    )
    methods = _methods()
    for _, make, _ in methods:
        make(0).fit(small.X, small.y, tasks=small.tasks)
    rows = []
    for name, make, note in methods:
        scores = {c: [] for c in COLUMNS}
        times = []
        for seed, data in draws.items():
            model = make(seed)
            start = time.perf_counter()
            model.fit(data.X, data.y, tasks=data.tasks)
            times.append(time.perf_counter() - start)
            err = np.sum((model.coef_ - data.coef) ** 2 * data.second_moment, axis=1)
            scores["MSE"].append(float(err.mean()))
            scores["MSE related"].append(float(err[~data.outliers].mean()))
        rows.append(DemoRow(method=name, scores=scores, fit_times=times, note=f"{name}: {note}"))
        ctx.progress(f"{name}: MSE {np.mean(scores['MSE']):.4f} over {len(times)} seed(s)")
    return rows
