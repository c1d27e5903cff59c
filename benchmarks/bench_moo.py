"""Benchmarks of mvlearn_ext.moo.

Questions
---------
1. How much overhead does the validated layer (``mvlearn_ext.moo``) add over
   moocore called directly, and how does pymoo (0.6.2, itself on moocore)
   compare, for hypervolume, HV contributions, non-dominated filtering and
   Pareto ranking at n = 10,000 points in 3-D? (Target: < 10 % overhead.)
   Data: a linear front (points on the simplex, all non-dominated) and
   uniform random points. Calls are interleaved, medians of repeats, ratios
   reported against moocore measured in the same run.
2. MOPO front recovery: does projected dual descent on the closed-form
   policies land on the exact constrained optimum (primal convex solve) for
   every threshold, for four preference structures?
3. ControlG vs round-robin vs uniform mixing in the block simulator, and
   ParetoPO vs fixed scalarisation in the tool bandit (final metrics).

Run: ``python benchmarks/bench_moo.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import moocore
import numpy as np

from mvlearn_ext import moo
from mvlearn_ext.moo._paretopo import simulate_tool_bandit


def _median_times(fns, repeats):
    times = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():  # interleaved
            t = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t)
    return {k: float(np.median(v)) for k, v in times.items()}


def bench_pareto(n, repeats):
    try:
        from pymoo.indicators.hv import HV
        from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting
    except ImportError:  # pragma: no cover
        HV = NonDominatedSorting = None
    rng = np.random.default_rng(0)
    front = rng.random((n, 3))
    front /= front.sum(1, keepdims=True)
    data = {"linear_front": front, "uniform": rng.random((n, 3))}
    ref = np.full(3, 1.1)
    rows = []
    for dname, P in data.items():
        cases = {
            "hypervolume": {
                "ours": lambda P=P: moo.hypervolume(P, ref),
                "moocore": lambda P=P: moocore.hypervolume(P, ref=ref),
            },
            "hv_contributions": {
                "ours": lambda P=P: moo.hv_contributions(P, ref),
                "moocore": lambda P=P: moocore.hv_contributions(P, ref=ref),
            },
            "is_nondominated": {
                "ours": lambda P=P: moo.is_nondominated(P),
                "moocore": lambda P=P: moocore.is_nondominated(P),
            },
            "pareto_rank": {
                "ours": lambda P=P: moo.pareto_rank(P),
                "moocore": lambda P=P: moocore.pareto_rank(P),
            },
        }
        if HV is not None:
            ind = HV(ref_point=ref)
            cases["hypervolume"]["pymoo"] = lambda P=P, ind=ind: ind(P)
            nds = NonDominatedSorting()
            cases["pareto_rank"]["pymoo"] = lambda P=P, nds=nds: nds.do(P)
        for op, fns in cases.items():
            t = _median_times(fns, repeats)
            row = {"data": dname, "op": op, "n": n, "d": 3, "median_s": t}
            row["ratio_vs_moocore"] = {k: v / t["moocore"] for k, v in t.items()}
            rows.append(row)
            print(
                f"{dname:13s} {op:17s} "
                + "  ".join(
                    f"{k} {v * 1e3:.3f} ms ({v / t['moocore']:.3f}x)" for k, v in t.items()
                )
            )
    return rows


def bench_mopo(quick):
    out = []
    for structure in ("bradley_terry", "thurstone", "cyclic", "conflicting"):
        P = moo.make_preferences(structure, n_arms=6, n_objectives=2, seed=0)
        tau = 0.1
        free = moo.preference_values(P, moo.mopo_policy(P, [0.0], tau=tau))
        best = (P[1] @ np.full(6, 1 / 6)).max()
        errs, viol, n_pts = [], [], 0
        for b in np.linspace(free[1], best, 6 if quick else 12)[:-1]:
            res = moo.solve_mopo(P, [b], tau=tau)
            exact = moo.exact_constrained_policy(P, [b], tau=tau)
            if exact is None:
                continue
            n_pts += 1
            ev = moo.preference_values(P, exact)
            errs.append(float(np.abs(res.values - ev).max()))
            viol.append(float(max(0.0, b - res.values[1])))
        out.append(
            {
                "structure": structure,
                "n_thresholds": n_pts,
                "max_value_error": max(errs),
                "max_violation": max(viol),
            }
        )
        print(
            f"MOPO {structure:14s} thresholds {n_pts}  max |P_k - P_k*| {max(errs):.2e}  max violation {max(viol):.2e}"
        )
    return out


def bench_sims(quick):
    seeds = range(3 if quick else 10)
    rates = np.array([0.05, 0.02, 0.1])
    A = np.zeros((3, 3))
    A[0, 1] = A[1, 0] = 0.015
    cg = {}
    for pol in ("controlg", "round_robin", "uniform_mix"):
        v = [
            moo.simulate_block_training(
                pol, n_blocks=60, rates=rates, antagonism=A, seed=s, noise=0.1
            )["log_hv"]
            for s in seeds
        ]
        cg[pol] = {
            "mean_log_hv": float(np.mean(v)),
            "se": float(np.std(v, ddof=1) / np.sqrt(len(v))),
        }
        print(
            f"ControlG sim {pol:12s} final log-HV {cg[pol]['mean_log_hv']:.3f} ± {cg[pol]['se']:.3f}"
        )
    tb = {}
    for m in ("fixed", "stage1", "lu2025", "paretopo"):
        r = [simulate_tool_bandit(m, seed=s) for s in seeds]
        tb[m] = {k: float(np.mean([x[k] for x in r])) for k in ("accuracy", "mean_calls", "hv")}
        print(
            f"tool bandit {m:9s} acc {tb[m]['accuracy']:.3f} calls {tb[m]['mean_calls']:.3f} HV {tb[m]['hv']:.3f}"
        )
    return {"controlg": cg, "tool_bandit": tb}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default="benchmarks/results/moo.json")
    args = ap.parse_args(argv)
    res = {
        "machine": platform.platform(),
        "moocore": moocore.__version__ if hasattr(moocore, "__version__") else "?",
        "pareto": bench_pareto(10_000, 10 if args.quick else 40),
        "mopo": bench_mopo(args.quick),
        "simulators": bench_sims(args.quick),
    }
    with open(args.json, "w") as fh:
        json.dump(res, fh, indent=1)
    try:
        plot_mopo_front()
    except ImportError:  # matplotlib is optional
        pass


def plot_mopo_front(out="docs/img/moo_mopo_front.png"):
    """Exact KL-regularised front (primal convex solve) and MOPO's recovered points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(12, 3))
    for ax, structure in zip(
        axes, ("bradley_terry", "thurstone", "cyclic", "conflicting"), strict=True
    ):
        P = moo.make_preferences(structure, n_arms=6, n_objectives=2, seed=0)
        free = moo.preference_values(P, moo.mopo_policy(P, [0.0], tau=0.1))
        best = (P[1] @ np.full(6, 1 / 6)).max()
        grid = np.linspace(free[1], best, 40)[:-1]
        ex = [
            moo.preference_values(P, moo.exact_constrained_policy(P, [b], tau=0.1)) for b in grid
        ]
        ax.plot(
            [e[1] for e in ex], [e[0] for e in ex], "-", color="0.6", label="exact (convex solve)"
        )
        pts = [moo.solve_mopo(P, [b], tau=0.1).values for b in grid[::4]]
        ax.plot([p[1] for p in pts], [p[0] for p in pts], "o", ms=4, label="MOPO dual descent")
        ax.set_title(structure, fontsize=9)
        ax.set_xlabel("P_2 (constrained)")
    axes[0].set_ylabel("P_1 (primary)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
