"""Robust multi-task regression against its baselines on Kim's (2026) simulation design.

Question: on the paper's synthetic design (30 tasks of ``n = 100`` rows and
``d = 30`` features, outlier tasks at ``10 u_j``, covariate scales
``k^-alpha``) and on three designs beyond it (fewer rows than features with
per-task covariate scales; task sizes from 10 to 200; features in units up to
``10^4`` apart), how does the population prediction error of
:class:`~mvlearn_ext.multitask.RobustMultiTaskRegressorCV` (its default, and the
paper's estimator ``ridges=(0,)`` as the ablation of the ridge term) compare
with ARMUL, independent ridge and least squares, pooling and the squared
penalty, every knob chosen by 5-fold cross-validation within tasks?

The paper's sweeps vary one factor from ``delta = 0.3, epsilon = 0.1,
alpha = 1``: ``delta`` in {0.2, 0.4, 0.8, 1.6, 3.2}; ``epsilon`` in {0.05, 0.1,
0.2, 0.3, 0.4}; ``alpha`` in {0, 0.5, 1, 1.5, 2}; balancedness ``B`` in {5, 10,
15, 20} (50 tasks, ``epsilon = delta = 0.5``, two covariance groups).

Output: ``benchmarks/results/multitask_study.jsonl`` (one record per replication
and method; a rerun resumes it), ``multitask_study.json`` (mean and standard
error per setting and method on all, related and outlier tasks) and a Markdown
table of errors relative to independent ridge on standard output. Run::

    python benchmarks/study_multitask.py --n-jobs 2            # 30 replications
    python benchmarks/study_multitask.py --replications 3 --points delta=0.8
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from mvlearn_ext.datasets import make_contaminated_tasks
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
ROOT_SEED = 2026
BASE = {"delta": 0.3, "epsilon": 0.1, "alpha": 1.0, "balancedness": 0.0, "n_tasks": 30}
SWEEPS = {
    "delta": [0.2, 0.4, 0.8, 1.6, 3.2],
    "epsilon": [0.05, 0.1, 0.2, 0.3, 0.4],
    "alpha": [0.0, 0.5, 1.0, 1.5, 2.0],
    "balancedness": [5.0, 10.0, 15.0, 20.0],
}
#: Designs beyond the paper (``design`` names the generator): ``small-n``,
#: 20 rows for 30 features and log-normal covariate scales per task; ``mixed-n``,
#: the same with task sizes cycling over 10, 20, 50, 200; ``units``, the paper's
#: design with feature ``k`` in units ``10^{u_k}``, ``u_k ~ U(-2, 2)``, not
#: standardised (the coefficients are divided accordingly, so the metric is unchanged).
EXTRA = [
    dict(BASE, sweep="small-n", design="hetero", n_samples=20, scale_sd=1.0),
    dict(BASE, sweep="small-n", design="hetero", n_samples=20, scale_sd=1.0, epsilon=0.2),
    dict(BASE, sweep="mixed-n", design="hetero", n_samples=[10, 20, 50, 200], scale_sd=1.0),
    dict(BASE, sweep="units", design="units", alpha=0.0, units=2.0),
    dict(BASE, sweep="units", design="units", alpha=1.0, units=2.0),
]
#: The peer every other method is compared with.
REFERENCE = "independent ridge (CV)"
METHODS = {
    "robust, default": lambda seed: RobustMultiTaskRegressorCV(
        fit_intercept=False, random_state=seed
    ),
    "robust, paper (ridges=(0,))": lambda seed: RobustMultiTaskRegressorCV(
        fit_intercept=False, random_state=seed, ridges=(0.0,)
    ),
    # ARMUL's penalty on the standardised features, and on the coefficients
    # of X as given (its default, scaling="global", divides X by one number:
    # here the same problem as scaling=None up to the grid of reg_lambda).
    "ARMUL (CV), zscore": lambda seed: ARMULRegressorCV(
        fit_intercept=False, random_state=seed, scaling="zscore"
    ),
    "ARMUL (CV), scaling=None": lambda seed: ARMULRegressorCV(
        fit_intercept=False, random_state=seed, scaling=None
    ),
    REFERENCE: lambda seed: IndependentTaskRegressorCV(fit_intercept=False, random_state=seed),
    "independent least squares": lambda seed: IndependentTaskRegressor(fit_intercept=False),
    "pooled least squares": lambda seed: PooledRegressor(fit_intercept=False),
    "squared penalty (CV), zscore": lambda seed: MeanRegularizedRegressorCV(
        fit_intercept=False, random_state=seed, scaling="zscore"
    ),
}


def settings():
    """One dict per sweep point, then the designs beyond the paper."""
    out = []
    for sweep, values in SWEEPS.items():
        for value in values:
            s = dict(BASE, sweep=sweep)
            s[sweep] = value
            if sweep == "balancedness":
                s.update(n_tasks=50, epsilon=0.5, delta=0.5)
            out.append(s)
    return out + [dict(s) for s in EXTRA]


def _hetero(setting, seed):
    """Kim's design with per-task covariate scales and task sizes."""
    gen = np.random.default_rng(seed)
    m, d = setting["n_tasks"], 30
    sizes = np.resize(np.asarray(setting["n_samples"], dtype=np.int64), m)
    centre = np.zeros(d)
    centre[0] = 2.0
    outliers = np.zeros(m, dtype=bool)
    n_out = int(np.floor(setting["epsilon"] * m + 1e-9))
    outliers[gen.choice(m, size=n_out, replace=False)] = True
    U = gen.standard_normal((m, d))  # uniform directions on the upper hemisphere
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    U[U[:, 0] < 0] *= -1.0
    coef = np.where(outliers[:, None], 10.0 * U, centre + setting["delta"] * U)
    scales = np.exp(setting["scale_sd"] * gen.standard_normal((m, d)))
    Xs, ys = [], []
    for j in range(m):
        g = gen.standard_normal((sizes[j], d))
        Xs.append(g / np.linalg.norm(g, axis=1, keepdims=True) * scales[j])
        ys.append(Xs[j] @ coef[j] + gen.standard_normal(sizes[j]))
    return Bunch(
        X=np.vstack(Xs),
        y=np.concatenate(ys),
        tasks=np.repeat(np.arange(m), sizes),
        coef=coef,
        outliers=outliers,
        second_moment=scales**2 / d,
    )


def _draw(setting, rng):
    seed = int(rng.integers(2**31 - 1))
    design = setting.get("design", "paper")
    if design == "hetero":
        return seed, _hetero(setting, seed)
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
    if design == "units":
        unit = 10.0 ** np.random.default_rng(seed + 1).uniform(
            -setting["units"], setting["units"], size=30
        )
        data.X = data.X * unit
        data.coef = data.coef / unit
        data.second_moment = data.second_moment * unit**2
    return seed, data


def replicate(setting, rng):
    """One draw of the design, every method fitted on it: population MSE per task."""
    seed, data = _draw(setting, rng)
    records = []
    for name, make in METHODS.items():
        model = make(seed)
        start = time.perf_counter()
        model.fit(data.X, data.y, tasks=data.tasks)
        elapsed = time.perf_counter() - start
        err = np.sum((model.coef_ - data.coef) ** 2 * data.second_moment, axis=1)
        out = data.outliers
        records.append(
            {
                "method": name,
                "mse": float(err.mean()),
                "mse_related": float(err[~out].mean()),
                "mse_outlier": float(err[out].mean()) if out.any() else None,
                "fit_seconds": elapsed,
            }
        )
    return records


def label(setting):
    sweep = setting["sweep"]
    if sweep in SWEEPS:
        symbol = {"delta": "δ", "epsilon": "ε", "alpha": "α", "balancedness": "B"}[sweep]
        return f"{symbol} = {setting[sweep]:g}"
    if sweep == "units":
        return f"units, α = {setting['alpha']:g}"
    return f"{sweep}, ε = {setting['epsilon']:g}"


def ratio_table(frame):
    """Markdown: mean error of each method over that of independent ridge, per setting."""
    methods = list(METHODS)
    lines = [
        "| setting | " + " | ".join(methods) + " |",
        "|---" * (len(methods) + 1) + "|",
    ]
    for _, group in frame.groupby("setting_id", sort=True):
        means = group.groupby("method")["mse"].mean()
        cells = [f"{means[m] / means[REFERENCE]:.2f}" for m in methods]
        lines.append(f"| {label(group.iloc[0])} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replications", type=int, default=30)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--points", nargs="*", default=None, help="sweep=value ...")
    args = parser.parse_args(argv)
    chosen = settings()
    if args.points:
        wanted = {tuple(p.split("=")) for p in args.points}
        chosen = [
            s
            for s in chosen
            if s["sweep"] in SWEEPS and (s["sweep"], f"{s[s['sweep']]:g}") in wanted
        ]
        if not chosen:
            raise SystemExit(f"--points: no sweep point among {args.points}")
    stem = "multitask_study" if not args.points else "multitask_study_points"
    study = Study(
        replicate,
        chosen,
        n_replications=args.replications,
        root_seed=ROOT_SEED,
        path=str(RESULTS / f"{stem}.jsonl"),
    )
    start = time.perf_counter()
    frame = study.run(n_jobs=args.n_jobs, progress=True)
    wall = time.perf_counter() - start
    frame["label"] = [label(chosen[i]) for i in frame["setting_id"]]
    rows = []
    for part in ("mse", "mse_related", "mse_outlier"):
        table = summarize(frame, by=["setting_id", "label", "method"], value=part)
        rows += [dict(r, part=part) for r in table.to_dict(orient="records")]
    out = {
        "question": __doc__.split("\n\n")[1],
        "root_seed": ROOT_SEED,
        "replications": args.replications,
        "wall_seconds": wall,
        "settings": chosen,
        "rows": rows,
    }
    (RESULTS / f"{stem}.json").write_text(json.dumps(out, indent=1, default=float))
    print(ratio_table(frame))


if __name__ == "__main__":
    main()
