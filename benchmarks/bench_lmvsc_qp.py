"""Benchmark: the LMVSC graph QPs, FISTA against the exact active-set method.

Question
--------
How much faster is :func:`mvlearn_ext.cluster._common.simplex_qp_active_set` (the
solver LMVSC uses since issue 19) than the accelerated projected gradient
:func:`~mvlearn_ext.cluster._common.simplex_qp` (LMVSC's solver before, ``max_iter=500,
tol=1e-6``, its defaults), and does it reach the same optimum? Data: Gaussian blobs
(10 centres uniform in [-10, 10]^64, noise 4, as in ``bench_clustering_dask.py``),
standardised; anchors: MiniBatchKMeans centres (m = 50, as LMVSC); the QPs
``min ||x - A^T z||^2 + alpha ||z||^2`` over the simplex for every sample, for the
authors' grid of ``alpha``. Both solvers on one thread, in the same process,
alternating (``--repeats``), so that the ratio is taken under the same load.

Reported per ``alpha``: median seconds of each solver, their ratio, the largest KKT
residual of each (spread of the gradient over the support, relative to the column's
scale, plus infeasibility), the largest objective gap (active set minus FISTA; it
must be <= 0 up to rounding), the mean number of anchors per sample, and the number
of samples handed to the FISTA fallback.

Run: ``python benchmarks/bench_lmvsc_qp.py [--n 20000] [--repeats 3] [--json PATH]``
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np


def kkt_residual(H, B, Z):
    """Per column: spread of ``H z - b`` over the support / scale, plus infeasibility."""
    G = H @ Z - B
    on = Z > 0
    high = np.where(on, G, -np.inf).max(axis=0)
    low = np.where(on, G, np.inf).min(axis=0)
    scale = np.maximum(np.abs(B).max(axis=0), np.abs(H).max())
    infeasible = np.abs(Z.sum(axis=0) - 1) + np.maximum(-Z.min(axis=0), 0)
    return (high - low) / scale + infeasible


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=20_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--alphas", type=float, nargs="+", default=[0.01, 1.0, 100.0])
    p.add_argument("--json", default=None)
    args = p.parse_args()

    from mvlearn_ext.cluster._common import kmeans_anchors, simplex_qp, simplex_qp_active_set
    from mvlearn_ext.utils._threads import single_threaded_pools

    rng = np.random.default_rng(0)
    centres = rng.uniform(-10.0, 10.0, size=(10, 64))
    X = centres[rng.integers(10, size=args.n)] + 4.0 * rng.standard_normal((args.n, 64))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    rows = []
    with single_threaded_pools():
        A = kmeans_anchors(X, 50, random_state=0, n_init=10, minibatch=True)
        simplex_qp_active_set(np.eye(2) + 1.0, np.ones((2, 3)), n_threads=1)  # compile
        for alpha in args.alphas:
            H = A @ A.T + alpha * np.eye(50)
            B = A @ X.T
            times = {"fista": [], "active_set": []}
            for _ in range(args.repeats):
                t = time.perf_counter()
                Z_f, it_f = simplex_qp(H, B, max_iter=500, tol=1e-6, n_threads=1)
                times["fista"].append(time.perf_counter() - t)
                t = time.perf_counter()
                Z_a, it_a, fallback = simplex_qp_active_set(
                    H, B, max_iter=500, tol=1e-6, n_threads=1
                )
                times["active_set"].append(time.perf_counter() - t)

            def values(Z, H=H, B=B):
                return 0.5 * np.einsum("ij,ij->j", H @ Z, Z) - np.einsum("ij,ij->j", B, Z)

            row = dict(
                alpha=alpha,
                n=args.n,
                fista_s=float(np.median(times["fista"])),
                active_set_s=float(np.median(times["active_set"])),
                fista_iter=int(it_f),
                active_set_steps=int(it_a),
                fallback=int(fallback),
                kkt_fista=float(kkt_residual(H, B, Z_f).max()),
                kkt_active_set=float(kkt_residual(H, B, Z_a).max()),
                objective_gap_max=float((values(Z_a) - values(Z_f)).max()),
                objective_gap_min=float((values(Z_a) - values(Z_f)).min()),
                anchors_per_sample=float((Z_a > 0).sum(axis=0).mean()),
                load=open("/proc/loadavg").read().split()[:3],
            )
            row["speedup"] = row["fista_s"] / row["active_set_s"]
            rows.append(row)
            print(json.dumps(row), flush=True)
    print("| alpha | FISTA s | active set s | speedup | KKT FISTA | KKT active set | "
          "objective gap (min, max) | anchors/sample | fallback |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['alpha']:g} | {r['fista_s']:.2f} | {r['active_set_s']:.3f} | "
            f"{r['speedup']:.1f}x | {r['kkt_fista']:.1e} | {r['kkt_active_set']:.1e} | "
            f"({r['objective_gap_min']:.1e}, {r['objective_gap_max']:.1e}) | "
            f"{r['anchors_per_sample']:.1f} | {r['fallback']} |"
        )
    if args.json:
        os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(dict(rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
