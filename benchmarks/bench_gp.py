"""Benchmark: LVMOGP on many outputs vs independent GPs, and C++ vs NumPy algebra.

Question: on smooth fields observed at a 2-D grid of output locations with
20% of the entries missing, how does LVMOGPRegressor (one GP over (input,
output-latent) pairs, Kronecker bound) compare with independent GPs
(scikit-learn GaussianProcessRegressor, one per output, fitted on a subset of
outputs) in held-out RMSE / NLPD and fit time per output, how does its peak
memory grow with the number of outputs, and how much faster is the compiled
route of the bound (C++ kernels) than the NumPy/SciPy route of the same
algebra (BLAS products over the dense mask)? Everything is timed in the
same run; medians of repeats.

Usage: python benchmarks/bench_gp.py [--outputs 1000 4000] [--inputs 200]
Writes benchmarks/results/gp.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import tracemalloc

import numpy as np
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from threadpoolctl import threadpool_limits

from mvlearn_ext.gaussian_process import LVMOGPRegressor
from mvlearn_ext.gaussian_process import _bound as bd


def smooth_field(n_inputs, n_outputs, seed, ls_x=0.2, ls_s=0.5, noise=0.1, n_features=300):
    """A GP draw (random Fourier features of the product RBF kernel) over
    inputs x in [0, 1] and output locations on a 2-D grid in [0, 1]^2."""
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(0, 1, n_inputs))[:, None]
    g = int(np.ceil(np.sqrt(n_outputs)))
    grid = np.stack(np.meshgrid(np.linspace(0, 1, g), np.linspace(0, 1, g)), -1).reshape(-1, 2)
    s = grid[:n_outputs]
    w = rng.standard_normal((n_features, 1)) / ls_x
    v = rng.standard_normal((n_features, 2)) / ls_s
    b = rng.uniform(0, 2 * np.pi, n_features)
    a = rng.standard_normal(n_features) * np.sqrt(2.0 / n_features)
    F = np.zeros((n_inputs, n_outputs))
    for j in range(n_features):  # O(N P) memory
        F += a[j] * np.cos((X @ w[j])[:, None] + (s @ v[j])[None, :] + b[j])
    Y = F + noise * rng.standard_normal(F.shape)
    missing = rng.random(Y.shape) < 0.2
    Ytr = Y.copy()
    Ytr[missing] = np.nan
    return X, Ytr, Y, missing


def scores(mean, std, Y, missing):
    r = (mean - Y)[missing]
    s = std[missing]
    rmse = float(np.sqrt(np.mean(r**2)))
    nlpd = float(np.mean(0.5 * np.log(2 * np.pi * s**2) + 0.5 * r**2 / s**2))
    return rmse, nlpd


def run_lvmogp(X, Ytr, Y, missing, max_iter):
    tracemalloc.start()
    t0 = time.perf_counter()
    model = LVMOGPRegressor(
        n_inducing=15, n_inducing_latent=8, max_iter=max_iter, random_state=0
    ).fit(X, Ytr)
    fit_time = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    mean, std = model.predict(X, return_std=True)
    rmse, nlpd = scores(mean, std, Y, missing)
    return model, {"fit_s": fit_time, "peak_mib": peak / 2**20, "rmse": rmse, "nlpd": nlpd}


def run_independent(X, Ytr, Y, missing, n_sub, seed=0):
    cols = np.random.default_rng(seed).choice(Ytr.shape[1], n_sub, replace=False)
    t0 = time.perf_counter()
    means, stds = np.zeros((X.shape[0], n_sub)), np.ones((X.shape[0], n_sub))
    for k, j in enumerate(cols):
        o = ~np.isnan(Ytr[:, j])
        kern = ConstantKernel() * RBF(0.2) + WhiteKernel(0.01)
        gp = GaussianProcessRegressor(kern, normalize_y=True).fit(X[o], Ytr[o, j])
        means[:, k], stds[:, k] = gp.predict(X, return_std=True)
    per_output = (time.perf_counter() - t0) / n_sub
    rmse, nlpd = scores(means, stds, Y[:, cols], missing[:, cols])
    return cols, {"fit_s_per_output": per_output, "rmse": rmse, "nlpd": nlpd}


def time_bound(model, X, Ytr, repeats=5):
    """Median seconds of one bound + gradient evaluation, C++ vs NumPy route."""
    Ys = (Ytr - model.y_mean_) / model.y_std_
    data = bd.Data(X, Ys.T)
    out = {}
    with threadpool_limits(limits=1, user_api="blas"):
        for backend in ("cpp", "numpy"):
            ts = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                bd.elbo_and_grad(model._theta, model._packer, data, backend=backend, n_threads=1)
                ts.append(time.perf_counter() - t0)
            out[backend] = float(np.median(ts))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outputs", type=int, nargs="+", default=[1000, 4000])
    ap.add_argument("--inputs", type=int, default=200)
    ap.add_argument("--max-iter", type=int, default=150)
    ap.add_argument("--independent", type=int, default=40, help="outputs for the peer")
    args = ap.parse_args()
    rows = []
    for P in args.outputs:
        X, Ytr, Y, missing = smooth_field(args.inputs, P, seed=0)
        model, lv = run_lvmogp(X, Ytr, Y, missing, args.max_iter)
        cols, ind = run_independent(X, Ytr, Y, missing, args.independent)
        mean, std = model.predict(X, return_std=True)
        lv_sub = scores(mean[:, cols], std[:, cols], Y[:, cols], missing[:, cols])
        bound = time_bound(model, X, Ytr)
        row = {
            "n_inputs": args.inputs,
            "n_outputs": P,
            "n_observed": int((~np.isnan(Ytr)).sum()),
            "lvmogp": lv,
            "lvmogp_on_peer_subset": {"rmse": lv_sub[0], "nlpd": lv_sub[1]},
            "independent_gp": ind,
            "independent_gp_fit_s_all_outputs_extrapolated": ind["fit_s_per_output"] * P,
            "bound_eval_s": bound,
            "cpp_speedup_vs_numpy": bound["numpy"] / bound["cpp"],
        }
        rows.append(row)
        print(json.dumps(row, indent=1), flush=True)
    if len(rows) > 1:
        growth = rows[-1]["lvmogp"]["peak_mib"] / rows[0]["lvmogp"]["peak_mib"]
        print(
            f"peak memory growth {rows[0]['n_outputs']} -> {rows[-1]['n_outputs']}: {growth:.2f}x"
        )
    out = os.path.join(os.path.dirname(__file__), "results", "gp.json")
    with open(out, "w") as f:
        json.dump({"max_iter": args.max_iter, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
