"""Benchmarks of mvlearn_ext.moo: the tables and figures of the multi-objective guide.

1. Overhead of the validated Pareto tools over moocore called directly (and
   pymoo, itself on moocore, where it is installed) for hypervolume, HV contributions,
   non-dominated filtering and Pareto ranking of n = 10,000 points in 3-D:
   a linear front (points on the simplex, all non-dominated) and uniform
   random points. Calls are interleaved, medians of repeats, ratios against
   moocore measured in the same run.
2. MOPO front recovery: the values reached by projected dual descent on the
   closed-form policies against an exact primal convex solve, for four
   preference structures and 11 thresholds each.
3. ControlG against round-robin and uniform mixing in the block simulator:
   mean final log-hypervolume over 10 seeds.
4. ParetoPO against fixed weights in the tool-use bandit: each method over
   the accuracy weights w in {0.1, ..., 0.9} (weights (w, 1 - w), every
   other setting at the simulator's defaults), 10 seeds; the hypervolume of
   the attained points against (0, 0) beside the exact front's.
5. The multi-hop tool bandit (:func:`mvlearn_ext.rl.simulate_hop_bandit`),
   whose front is non-convex and whose raw rewards are on very different,
   drifting scales: fixed weights on the raw and on the once-normalised
   rewards, ParetoPO's stage 1 alone (both variants), stage 2 alone and full
   ParetoPO over the same w grid, 10 seeds. Score: the hypervolume of a
   seed's 9 final (accuracy, 1 - E calls / 12) points against (0, 0),
   divided by the exact front's.

Run: ``python benchmarks/bench_moo.py [--quick] [--json PATH] [--jobs N]``.
Writes ``benchmarks/results/moo.json`` and the figures
``docs/img/moo_mopo_front.png`` and ``docs/img/moo_hop_bandit.png``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from concurrent.futures import ProcessPoolExecutor

import moocore
import numpy as np

from mvlearn_ext import moo
from mvlearn_ext.moo import controlg, mopo
from mvlearn_ext.rl import (
    hop_bandit_front,
    sweep_hop_bandit,
    sweep_tool_bandit,
)

WEIGHT_GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
TOOL_SEEDS = tuple(range(100, 110))
#: (name, simulate_tool_bandit method, extra arguments)
TOOL_METHODS = (
    ("fixed", "fixed", {}),
    ("paretopo", "paretopo", {}),
)
HOP_SEEDS = tuple(range(200, 210))
#: (name, simulate_hop_bandit method, extra arguments)
HOP_METHODS = (
    ("fixed", "fixed", {}),
    ("fixed_norm", "fixed_norm", {}),
    ("stage1", "stage1", {}),
    ("stage1_hvc", "stage1", {"stage1": "hvc_gradient"}),
    ("stage2", "stage2", {}),
    ("paretopo", "paretopo", {}),
)


def _mse(v):
    v = np.asarray(v, dtype=np.float64)
    return {"mean": float(v.mean()), "se": float(v.std(ddof=1) / np.sqrt(v.size))}


def _tool_method(task):
    name, method, extra, seeds = task
    t = time.perf_counter()
    r = sweep_tool_bandit(method, WEIGHT_GRID, random_states=seeds, **extra)
    return {
        "method": method,
        "extra": extra,
        "hv": _mse(r["hv"]),
        "hv_per_seed": r["hv"].tolist(),
        "accuracy_by_w": r["accuracy"].mean(0).tolist(),
        "efficiency_by_w": r["efficiency"].mean(0).tolist(),
        "seconds": time.perf_counter() - t,
        "front_hv": float(r["oracle_hv"]),
    }


def _hop_method(task):
    name, method, extra, seeds = task
    t = time.perf_counter()
    r = sweep_hop_bandit(method, WEIGHT_GRID, random_states=seeds, **extra)
    h = r["hv_ratio"]
    return {
        "method": method,
        "extra": extra,
        "hv_ratio_per_seed": h.tolist(),
        "hv_ratio": {
            "mean": float(h.mean()),
            "sd": float(h.std(ddof=1)) if h.size > 1 else 0.0,
            "min": float(h.min()),
            "max": float(h.max()),
        },
        "accuracy_by_w": r["accuracy"].mean(0).tolist(),
        "mean_calls_by_w": ((1 - r["efficiency"]) * 12).mean(0).tolist(),
        "seconds": time.perf_counter() - t,
    }


def _map(fn, tasks, jobs):
    """``fn`` over ``tasks`` in ``jobs`` processes; every task is seeded, so ``jobs`` changes
    nothing but the time."""
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as ex:
            return list(ex.map(fn, tasks))
    return [fn(t) for t in tasks]


def bench_tool_bandit(quick, jobs=1):
    """Question 4: the front over the w sweep, each method beside the exact front."""
    seeds = TOOL_SEEDS[:3] if quick else TOOL_SEEDS
    tasks = [(n, m, e, seeds) for n, m, e in TOOL_METHODS]
    res = dict(zip([t[0] for t in tasks], _map(_tool_method, tasks, jobs), strict=True))
    front_hv = {v.pop("front_hv") for v in res.values()}.pop()
    for name, v in res.items():
        print(
            f"tool bandit {name:9s} front HV {v['hv']['mean']:.4f} +- {v['hv']['se']:.4f} "
            f"(exact front {front_hv:.4f}, ratio {v['hv']['mean'] / front_hv:.3f})"
        )
    return {
        "seeds": list(seeds),
        "weight_grid": list(WEIGHT_GRID),
        "front_hv": front_hv,
        "methods": res,
    }


def bench_hop_bandit(quick, jobs=1):
    """Question 5: the multi-hop bandit."""
    seeds = HOP_SEEDS[:3] if quick else HOP_SEEDS
    front = hop_bandit_front()
    tasks = [(n, m, e, seeds) for n, m, e in HOP_METHODS]
    res = dict(zip([t[0] for t in tasks], _map(_hop_method, tasks, jobs), strict=True))
    for name, v in res.items():
        print(
            f"hop bandit {name:11s} front HV / exact {v['hv_ratio']['mean']:.3f} "
            f"(sd {v['hv_ratio']['sd']:.3f}, {v['hv_ratio']['min']:.3f}-"
            f"{v['hv_ratio']['max']:.3f}); accuracy / calls by w: "
            + " ".join(
                f"{a:.2f}/{c:.1f}"
                for a, c in zip(v["accuracy_by_w"], v["mean_calls_by_w"], strict=True)
            )
        )
    return {
        "seeds": list(seeds),
        "weight_grid": list(WEIGHT_GRID),
        "front_hv": front["hv"],
        "methods": res,
    }


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
        P = mopo.make_preferences(structure, n_arms=6, n_objectives=2, random_state=0)
        tau = 0.1
        free = mopo.preference_values(P, mopo.mopo_policy(P, [0.0], tau=tau))
        best = (P[1] @ np.full(6, 1 / 6)).max()
        errs, viol, n_pts = [], [], 0
        for b in np.linspace(free[1], best, 6 if quick else 12)[:-1]:
            res = mopo.solve_mopo(P, [b], tau=tau)
            exact = mopo.exact_constrained_policy(P, [b], tau=tau)
            if exact is None:
                continue
            n_pts += 1
            ev = mopo.preference_values(P, exact)
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
            controlg.simulate_block_training(
                pol, n_blocks=60, rates=rates, antagonism=A, random_state=s, noise=0.1
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
    return {"controlg": cg}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer seeds and repeats (a smoke run)")
    ap.add_argument("--json", default="benchmarks/results/moo.json")
    ap.add_argument("--jobs", type=int, default=1, help="processes for the bandit sweeps")
    args = ap.parse_args(argv)
    res = {
        "machine": platform.platform(),
        "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "moocore": getattr(moocore, "__version__", "?"),
        "pareto": bench_pareto(10_000, 10 if args.quick else 40),
        "mopo": bench_mopo(args.quick),
        "controlg": bench_sims(args.quick)["controlg"],
        "tool_bandit": bench_tool_bandit(args.quick, args.jobs),
        "hop_bandit": bench_hop_bandit(args.quick, args.jobs),
    }
    with open(args.json, "w") as fh:
        json.dump(res, fh, indent=1)
    if args.quick:
        return
    try:
        plot_mopo_front()
        plot_hop_front(res["hop_bandit"]["methods"])
    except ImportError:  # matplotlib is optional
        pass


def plot_hop_front(rep, out="docs/img/moo_hop_bandit.png"):
    """Exact front of the multi-hop bandit, its convex hull and the methods' mean points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    f = hop_bandit_front()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    calls = (1 - f["efficiency"]) * 12
    ax.plot(calls, f["accuracy"], "-", color="0.3", label="exact front (every policy)")
    ax.plot(
        (1 - f["hull_efficiency"]) * 12, f["hull_accuracy"], "--", color="0.6", label="convex hull"
    )
    un = ~f["supported"]
    ax.plot(calls[un], f["accuracy"][un], ".", ms=1, color="tab:red", label="unsupported")
    for name, marker in (("fixed_norm", "o"), ("stage2", "s"), ("paretopo", "^"), ("fixed", "x")):
        m = rep[name]
        ax.plot(m["mean_calls_by_w"], m["accuracy_by_w"], marker, ms=5, mfc="none", label=name)
    ax.set_xlabel("expected tool calls (of 12)")
    ax.set_ylabel("accuracy")
    ax.set_title("multi-hop bandit: final points over w = 0.1..0.9 (seed means)", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def plot_mopo_front(out="docs/img/moo_mopo_front.png"):
    """Exact KL-regularised front (primal convex solve) and MOPO's recovered points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(12, 3))
    for ax, structure in zip(
        axes, ("bradley_terry", "thurstone", "cyclic", "conflicting"), strict=True
    ):
        P = mopo.make_preferences(structure, n_arms=6, n_objectives=2, random_state=0)
        free = mopo.preference_values(P, mopo.mopo_policy(P, [0.0], tau=0.1))
        best = (P[1] @ np.full(6, 1 / 6)).max()
        grid = np.linspace(free[1], best, 40)[:-1]
        ex = [
            mopo.preference_values(P, mopo.exact_constrained_policy(P, [b], tau=0.1)) for b in grid
        ]
        ax.plot(
            [e[1] for e in ex], [e[0] for e in ex], "-", color="0.6", label="exact (convex solve)"
        )
        pts = [mopo.solve_mopo(P, [b], tau=0.1).values for b in grid[::4]]
        ax.plot([p[1] for p in pts], [p[0] for p in pts], "o", ms=4, label="MOPO dual descent")
        ax.set_title(structure, fontsize=9)
        ax.set_xlabel("P_2 (constrained)")
    axes[0].set_ylabel("P_1 (primary)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
