"""The simulation study of Kim (ICML 2026), with every baseline solved to tolerance.

Question: on the paper's synthetic design (``n = 100`` rows per task, ``m = 30``
tasks, ``d = 30`` features, outlier tasks at ``10 u_j``, covariate scales
``k^-alpha``), how does the population prediction MSE of the robust multi-task
estimator compare with ARMUL, independent least squares and ridge, data
pooling and the naive squared penalty, when every method is solved exactly
and every knob is chosen by 5-fold CV within tasks over a grid wide enough to
contain the optimum? The paper's sweeps each vary one factor from the base
point ``delta = 0.3, epsilon = 0.1, alpha = 1``:

* ``delta`` in {0.2, 0.4, 0.8, 1.6, 3.2};
* ``epsilon`` in {0.05, 0.1, 0.2, 0.3, 0.4};
* ``alpha`` in {0, 0.5, 1, 1.5, 2};
* balancedness ``B`` in {5, 10, 15, 20} (``m = 50``, ``epsilon = delta = 0.5``,
  dense centre, two-group spiked covariances).

Output: ``benchmarks/results/multitask_study.jsonl`` (one record per
replication and method, resumable), ``multitask_study.json`` (mean and
standard error of the MSE over replications, per setting and method) and
``docs/img/multitask_study.png``. Run ``python benchmarks/study_multitask.py
--replications 30 --n-jobs 2``; ``--quick`` runs 3 replications.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from mvlearn_ext.datasets._multitask import make_contaminated_tasks
from mvlearn_ext.multitask import (
    ARMULRegressorCV,
    IndependentTaskRegressor,
    IndependentTaskRegressorCV,
    MeanRegularizedRegressorCV,
    PooledRegressor,
    RobustMultiTaskRegressorCV,
)
from mvlearn_ext.studies import Study, summarize

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
BASE = {"delta": 0.3, "epsilon": 0.1, "alpha": 1.0, "balancedness": 0.0, "n_tasks": 30}
SWEEPS = {
    "delta": [0.2, 0.4, 0.8, 1.6, 3.2],
    "epsilon": [0.05, 0.1, 0.2, 0.3, 0.4],
    "alpha": [0.0, 0.5, 1.0, 1.5, 2.0],
    "balancedness": [5.0, 10.0, 15.0, 20.0],
}
METHODS = {
    "robust (ours, CV)": lambda seed: RobustMultiTaskRegressorCV(
        fit_intercept=False, random_state=seed
    ),
    "ARMUL (CV)": lambda seed: ARMULRegressorCV(fit_intercept=False, random_state=seed),
    "ITL OLS": lambda seed: IndependentTaskRegressor(fit_intercept=False),
    "ITL ridge (per-task CV)": lambda seed: IndependentTaskRegressorCV(
        fit_intercept=False, random_state=seed
    ),
    "DP (pooled OLS)": lambda seed: PooledRegressor(fit_intercept=False),
    "mean-regularised (CV)": lambda seed: MeanRegularizedRegressorCV(
        fit_intercept=False, random_state=seed
    ),
}


def settings():
    """One dict per sweep point (the base point appears once in each sweep)."""
    out = []
    for sweep, values in SWEEPS.items():
        for value in values:
            s = dict(BASE, sweep=sweep)
            s[sweep] = value
            if sweep == "balancedness":
                s.update(n_tasks=50, epsilon=0.5, delta=0.5)
            out.append(s)
    return out


def replicate(setting, rng):
    """One draw of the design; every method fitted on it; population MSE per task."""
    seed = int(rng.integers(2**31 - 1))
    B = setting["balancedness"]
    data = make_contaminated_tasks(
        n_tasks=setting["n_tasks"],
        n_samples=100,
        n_features=30,
        delta=setting["delta"],
        epsilon=setting["epsilon"],
        alpha=setting["alpha"],
        center="dense" if B else "axis",
        balancedness=B if B else None,
        random_state=seed,
    )
    records = []
    for name, make in METHODS.items():
        model = make(seed)
        start = time.perf_counter()
        model.fit(data.X, data.y, tasks=data.tasks)
        elapsed = time.perf_counter() - start
        err = np.sum((model.coef_ - data.coef) ** 2 * data.second_moment, axis=1)
        q = getattr(model, "reg_lambda_", np.nan)
        records.append(
            {
                "method": name,
                "mse": float(err.mean()),
                "mse_related": float(err[~data.outliers].mean()),
                "mse_outlier": float(err[data.outliers].mean()) if data.outliers.any() else None,
                "selected": float(np.median(q)),
                "fit_seconds": elapsed,
            }
        )
    return records


def _figure(table, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(17, 4.2))
    for ax, sweep in zip(axes, SWEEPS, strict=True):
        sub = table[table["sweep"] == sweep]
        for method in METHODS:
            rows = sub[sub["method"] == method].sort_values(sweep)
            ax.errorbar(
                rows[sweep],
                rows["mean"],
                yerr=rows["se"],
                marker="o",
                ms=3,
                capsize=2,
                label=method,
            )
        ax.set_xlabel({"balancedness": "balancedness B"}.get(sweep, sweep))
        ax.set_yscale("log")
        if sweep == "delta":
            ax.set_xscale("log", base=2)
        ax.set_title(f"{sweep} sweep")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("population prediction MSE (all tasks)")
    axes[-1].legend(fontsize=7)
    fig.suptitle("Kim (2026) design, all methods solved exactly, knobs by 5-fold CV within tasks")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replications", type=int, default=30)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sweeps", nargs="*", default=list(SWEEPS))
    args = parser.parse_args(argv)
    reps = 3 if args.quick else args.replications
    chosen = [s for s in settings() if s["sweep"] in args.sweeps]
    path = RESULTS / ("multitask_study_quick.jsonl" if args.quick else "multitask_study.jsonl")
    study = Study(replicate, chosen, n_replications=reps, root_seed=2026, path=str(path))
    start = time.perf_counter()
    frame = study.run(n_jobs=args.n_jobs, backend="loky", progress=True)
    wall = time.perf_counter() - start
    table = summarize(frame, by=["sweep", *SWEEPS, "method"], value="mse")
    table = table.sort_values(["sweep", "method"]).reset_index(drop=True)
    related = summarize(frame, by=["sweep", *SWEEPS, "method"], value="mse_related")
    selected = summarize(frame, by=["sweep", *SWEEPS, "method"], value="selected")
    out = {
        "question": __doc__.split("\n\n")[1],
        "replications": reps,
        "wall_seconds_this_run": wall,
        "rows": [
            {
                **{
                    k: (None if isinstance(v, float) and np.isnan(v) else v)
                    for k, v in row.items()
                },
                "mse_related_mean": float(rel["mean"]),
                "mse_related_se": float(rel["se"]),
                "selected_mean": float(sel["mean"]),
            }
            for (_, row), (_, rel), (_, sel) in zip(
                table.iterrows(), related.iterrows(), selected.iterrows(), strict=True
            )
        ],
    }
    name = "multitask_study_quick.json" if args.quick else "multitask_study.json"
    (RESULTS / name).write_text(json.dumps(out, indent=1, default=float))
    if not args.quick:
        _figure(table, ROOT / "docs" / "img" / "multitask_study.png")
    print(table.to_string())


if __name__ == "__main__":
    main()
