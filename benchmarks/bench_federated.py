"""Benchmarks of mvlearn_ext.federated.

Questions
---------
1. Personalised FL by KME multi-task averaging (reconstruction) against
   local ridge, FedAvg (pooled ridge) and Ditto (closed form, reg_lambda = 1),
   on clustered agents (2 clusters of regression vectors at distance r):
   mean excess risk ``||theta_hat_b - theta_b||^2`` (x ~ N(0, I), so this is
   the excess squared-error risk up to the intercept), over seeds. And the
   communication/accuracy trade-off over the RFF dimension D.
2. DREAM (control variates + QP) against FMGDA and FedAvg with linear
   scalarisation on the heterogeneous quadratic test bed: distance of the
   final iterate to the exact Pareto point x(lambda) of its final weights,
   and Pareto stationarity, as heterogeneity grows (K = 10 local steps).

Run: ``python benchmarks/bench_federated.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from mvlearn_ext._demo.federated import clustered_agents
from mvlearn_ext.federated import (
    KMEPersonalizedRidge,
    QuadraticFMOL,
    agent_ridge_statistics,
    ditto_ridge,
    run_dream,
    weighted_ridge,
)


def pfl(seeds, rs, Ds):
    rows = []
    for r in rs:
        acc = {}
        for seed in seeds:
            Xs, ys, th = clustered_agents(r, seed=seed)
            B = len(Xs)

            def err(coef, th=th):
                return float(np.mean(np.sum((coef[:, 1:] - th) ** 2, 1) + coef[:, 0] ** 2))

            st = [agent_ridge_statistics(X, y) for X, y in zip(Xs, ys, strict=True)]
            S, s = np.stack([a[0] for a in st]), np.stack([a[1] for a in st])
            local = weighted_ridge(S, s, np.eye(B))
            glob = weighted_ridge(S, s, np.full((B, B), 1 / B))
            res = {
                "local": err(local),
                "fedavg": err(glob),
                "ditto": err(ditto_ridge(S, s, glob[0], reg_lambda=1.0)),
            }
            for nu in (0.0, 0.3):
                m = KMEPersonalizedRidge(nu=nu, random_state=seed).fit(Xs, ys)
                res[f"kme_mta_nu{nu}"] = err(np.column_stack([m.intercept_, m.coef_]))
            for k, v in res.items():
                acc.setdefault(k, []).append(v)
        row = {
            "r": r,
            **{
                k: {"mean": float(np.mean(v)), "se": float(np.std(v, ddof=1) / np.sqrt(len(v)))}
                for k, v in acc.items()
            },
        }
        rows.append(row)
        print(
            f"r={r:5.1f} " + "  ".join(f"{k} {v['mean']:.4f}" for k, v in row.items() if k != "r")
        )
    drows = []
    for D in Ds:
        v = []
        for seed in seeds:
            Xs, ys, th = clustered_agents(2.0, seed=seed)
            m = KMEPersonalizedRidge(n_components=D, random_state=seed).fit(Xs, ys)
            v.append(float(np.mean(np.sum((m.coef_ - th) ** 2, 1) + m.intercept_**2)))
        drows.append({"D": D, "floats_per_agent": D + 1, "mean_excess": float(np.mean(v))})
        print(f"D={D:5d} excess {np.mean(v):.4f}")
    return rows, drows


def dream(seeds, hs):
    rows = []
    algos = {
        "dream": {},
        "dream_momentum0.5": {"momentum": 0.5},
        "fmgda": {"control_variates": False},
        "fedavg_scalarised": {"control_variates": False, "aggregation": "fixed"},
    }
    for h in hs:
        acc = {}
        for seed in seeds:
            prob = QuadraticFMOL(n_clients=8, n_tasks=3, dim=5, heterogeneity=h, random_state=seed)
            for name, kw in algos.items():
                r = run_dream(
                    prob,
                    n_rounds=300,
                    local_steps=10,
                    learning_rate_local=0.02,
                    learning_rate=0.1,
                    **kw,
                )
                dist = np.linalg.norm(r.x - prob.pareto_point(np.array(r.weights[-1])))
                acc.setdefault(name, []).append((float(dist), float(r.stationarity[-1])))
        row = {"heterogeneity": h}
        for k, v in acc.items():
            v = np.array(v)
            row[k] = {
                "dist_to_pareto_point": float(v[:, 0].mean()),
                "stationarity": float(v[:, 1].mean()),
            }
        rows.append(row)
        print(
            f"h={h:3.1f} "
            + "  ".join(
                f"{k} {row[k]['dist_to_pareto_point']:.4f}/{row[k]['stationarity']:.4f}"
                for k in algos
            )
        )
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default="benchmarks/results/federated.json")
    args = ap.parse_args(argv)
    seeds = range(3 if args.quick else 10)
    rows, drows = pfl(seeds, [0.0, 0.5, 1.0, 2.0, 5.0, 10.0], [16, 64, 256, 1024])
    res = {
        "personalised_fl": rows,
        "rff_dimension": drows,
        "dream": dream(range(3 if args.quick else 5), [0.0, 1.0, 2.0]),
    }
    with open(args.json, "w") as fh:
        json.dump(res, fh, indent=1)
    try:
        plot(args.json)
    except ImportError:  # matplotlib is optional
        pass


def plot(path_json="benchmarks/results/federated.json", out="docs/img/federated_excess_risk.png"):
    """Mean excess risk vs cluster distance r (log scale), from the JSON."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(path_json) as fh:
        res = json.load(fh)
    rows = res["personalised_fl"]
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for k in ("local", "fedavg", "ditto", "kme_mta_nu0.0", "kme_mta_nu0.3"):
        ax.errorbar(
            [r["r"] for r in rows],
            [r[k]["mean"] for r in rows],
            yerr=[r[k]["se"] for r in rows],
            label=k,
            marker="o",
            ms=3,
        )
    ax.set_yscale("log")
    ax.set_xlabel("distance between the two clusters r")
    ax.set_ylabel("mean excess risk")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


if __name__ == "__main__":
    main()
