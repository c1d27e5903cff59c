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
3. ControlG vs round-robin vs uniform mixing in the block simulator.
4. ParetoPO vs static scalarisation in the tool bandit: do they trace a
   better accuracy/efficiency trade-off? One (accuracy, efficiency) point per
   method says only where on the trade-off it lands, so every method is run
   over the same grid of accuracy weights w in {0.1, ..., 0.9} (weights
   (w, 1 - w); every other setting at the simulator's defaults), on seeds
   100-109. Reported per seed and paired: the hypervolume of the attained
   points against (0, 0), the exact front's hypervolume
   (``tool_bandit_front``) and each point's accuracy gap to the exact front
   at its efficiency. The single point at w = 0.5 is kept for stage 1 and
   the Lu et al. (2025) baseline. ParetoPO's tie-break weight beta is swept
   over its whole range {0, 0.25, 0.5, 0.75, 1} at w = 0.5. Results go to
   ``results/moo_paretopo.json`` (and the ``tool_bandit`` entry of
   ``results/moo.json``).
5. ParetoPO's ``stage1="hvc_gradient"`` variant (weights from the HVC
   gradient of each step's mean reward vector against an archive of past
   step points; its defaults margin 0.1, EMA 0.9, floor 0.05), as stage 1
   alone ("hvc_stage1", all 300 steps) and as full ParetoPO
   ("paretopo_hvc", 100 steps then rank advantages), over the same w grid
   and seeds as question 4, in the same run. Scores: (a) per initial w, the
   single-point HV ``accuracy * (1 - calls / 4)`` against (0, 0) (the exact
   front's reference), paired with fixed weights at the same w and seed
   (ratio, wins), the share of pairs with accuracy at least fixed's and
   fewer mean calls, and the largest single-point HV on the exact front as
   the ceiling; (b) the front-over-the-sweep HV of question 4. (a) rewards
   landing near the front's maximum-product point whatever w asked for, so
   it favours HV-seeking methods by construction; (b) rewards following w.
   Sensitivity of the variant on seeds 0-4: margin in {0.05, 0.1, 0.3} x
   EMA in {0.9, 0.99} at w in {0.1, 0.5, 0.9}.

6. ParetoPO where static scalarisation is weak: the multi-hop tool bandit
   (:func:`mvlearn_ext.rl.simulate_hop_bandit`). Its attainable set is the
   curve of a one-parameter unimodal call-count policy, its front is
   non-convex (an S-shaped success curve in the number of calls: 3 facts
   needed, each call retrieves one with probability 0.5, a guess is right
   with probability 0.1; at most 12 calls), and the training rewards are
   raw, on very different and drifting scales (success in {0, 1}; calls
   saved priced at 5 per call, rising 4x over the 300 steps). Methods (the
   simulator's defaults; learning rate 0.2, 300 steps): fixed weights on the
   raw rewards, fixed weights on rewards normalised once at the start,
   ParetoPO stage 1 alone (the per-trajectory HV meta-reward, and the
   ``hvc_gradient`` weights), stage 2 alone (Pareto-rank advantages from
   the first step), full ParetoPO (both stage-1 variants, 100 stage-1
   steps) and the Lu et al. (2025) meta-reward, each over the
   accuracy-weight grid {0.1, ..., 0.9}. Score: the hypervolume of a seed's
   9 final (accuracy, 1 - E calls / 12) points against (0, 0), divided by
   the exact front's (dense sweep); per method the mean, standard
   deviation, range, the share of seeds where it is the best method (ties
   shared), paired shares against each fixed-weight baseline, and how many
   final points are unsupported (accuracy more than 0.01 below the front's
   convex hull: out of reach of any fixed weights). Two blocks of seeds,
   0-4 and 200-209, reported apart; on the second, the stages also run on
   rewards normalised at the start (beside ``fixed_norm``), since every
   method that scalarises the raw rewards collapses to 0 calls.

Run: ``python benchmarks/bench_moo.py [--quick] [--json PATH] [--paretopo-only]
[--hop-only] [--jobs N]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import moocore
import numpy as np

from mvlearn_ext import moo
from mvlearn_ext.moo import controlg, mopo
from mvlearn_ext.rl import (
    hop_bandit_front,
    hull_gap,
    simulate_tool_bandit,
    sweep_hop_bandit,
    sweep_tool_bandit,
    tool_bandit_front,
)

WEIGHT_GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
HELD_OUT_SEEDS = tuple(range(100, 110))
BETA_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)  # ParetoPO's own knob, its whole range [0, 1]
DEV_SEEDS = tuple(range(5))
#: the sweep's methods: (name, simulate_tool_bandit method, extra arguments)
SWEEP_METHODS = (
    ("fixed", "fixed", {}),
    ("paretopo", "paretopo", {}),
    ("hvc_stage1", "stage1", {"stage1": "hvc_gradient"}),
    ("paretopo_hvc", "paretopo", {"stage1": "hvc_gradient"}),
)


HOP_DEV_SEEDS = tuple(range(5))
HOP_REPORT_SEEDS = tuple(range(200, 210))
#: (name, simulate_hop_bandit method, extra arguments)
HOP_METHODS = (
    ("fixed", "fixed", {}),
    ("fixed_norm", "fixed_norm", {}),
    ("stage1", "stage1", {}),
    ("stage1_hvc", "stage1", {"stage1": "hvc_gradient"}),
    ("stage2", "stage2", {}),
    ("paretopo", "paretopo", {}),
    ("paretopo_hvc", "paretopo", {"stage1": "hvc_gradient"}),
    ("lu2025", "lu2025", {}),
)


#: diagnostic arms: every method scalarising the raw rewards collapses to 0 calls, so the same
#: stages also run on rewards normalised at the start
HOP_DIAG_METHODS = (
    ("fixed_norm", "fixed_norm", {}),
    ("stage1_norm", "stage1", {"normalise": True}),
    ("stage2_norm", "stage2", {"normalise": True}),
    ("paretopo_norm", "paretopo", {"normalise": True}),
)


def _hop_block(seeds, methods=HOP_METHODS):
    """``methods`` over WEIGHT_GRID on ``seeds``: front-HV ratios, wins, unsupported points."""
    front = hop_bandit_front()
    raw, out = {}, {"seeds": list(seeds), "methods": {}}
    for name, method, extra in methods:
        t = time.perf_counter()
        raw[name] = sweep_hop_bandit(method, WEIGHT_GRID, random_states=seeds, **extra)
        raw[name]["seconds"] = time.perf_counter() - t
    H = np.array([raw[m]["hv_ratio"] for m, _, _ in methods])  # (methods, seeds)
    best = H >= H.max(axis=0, keepdims=True) - 1e-12
    share = best / best.sum(axis=0, keepdims=True)  # ties shared
    for i, (name, method, extra) in enumerate(methods):
        r = raw[name]
        gap = hull_gap(front, r["accuracy"], r["efficiency"])
        out["methods"][name] = {
            "method": method,
            "extra": extra,
            "hv_ratio_per_seed": r["hv_ratio"].tolist(),
            "hv_ratio": {
                "mean": float(H[i].mean()),
                "sd": float(H[i].std(ddof=1)) if H.shape[1] > 1 else 0.0,
                "min": float(H[i].min()),
                "max": float(H[i].max()),
            },
            "best_share": float(share[i].mean()),
            "best_or_tied": int(best[i].sum()),
            "beats_fixed": int(np.sum(H[i] > raw["fixed"]["hv_ratio"] + 1e-12))
            if "fixed" in raw
            else None,
            "beats_fixed_norm": int(np.sum(H[i] > raw["fixed_norm"]["hv_ratio"] + 1e-12)),
            "unsupported_points": int(np.sum(gap > 0.01)),
            "n_points": int(gap.size),
            "accuracy_by_w": r["accuracy"].mean(0).tolist(),
            "mean_calls_by_w": ((1 - r["efficiency"]) * 12).mean(0).tolist(),
            "mu_by_w": r["mu"].mean(0).tolist(),
            "seconds": r["seconds"],
        }
        v = out["methods"][name]
        print(
            f"hop bandit {name:12s} front HV / exact {v['hv_ratio']['mean']:.3f} "
            f"(sd {v['hv_ratio']['sd']:.3f}, {v['hv_ratio']['min']:.3f}-"
            f"{v['hv_ratio']['max']:.3f}), best on {v['best_share']:.2f} of seeds, > fixed on "
            f"{v['beats_fixed']}/{len(seeds)}, > fixed_norm on {v['beats_fixed_norm']}/"
            f"{len(seeds)}, unsupported points {v['unsupported_points']}/{v['n_points']}"
        )
        print(
            "   accuracy / calls by w: "
            + " ".join(
                f"{a:.2f}/{c:.1f}"
                for a, c in zip(v["accuracy_by_w"], v["mean_calls_by_w"], strict=True)
            )
        )
    return out


def _hop_task(task):
    return _hop_block(*task)


def bench_hop_bandit(quick, jobs=1):
    """Question 6: the multi-hop bandit, the two blocks of seeds apart.

    The three blocks (seeds 0-4, seeds 200-209, and the normalised stages on
    seeds 200-209) run in ``jobs`` processes; each block is seeded, so the
    results do not depend on ``jobs``.
    """
    from concurrent.futures import ProcessPoolExecutor

    front = hop_bandit_front()
    out = {
        "weight_grid": list(WEIGHT_GRID),
        "front_hv": front["hv"],
        "supported_hv_ratio": front["supported_hv"] / front["hv"],
        "supported_share_of_sweep": float(front["supported"].mean()),
    }
    print(
        f"hop bandit exact front HV {front['hv']:.4f}; supported points only "
        f"{out['supported_hv_ratio']:.3f} of it (global maximisers of weighted sums)"
    )
    report = HOP_REPORT_SEEDS[:3] if quick else HOP_REPORT_SEEDS
    tasks = {
        "dev": (HOP_DEV_SEEDS[:2] if quick else HOP_DEV_SEEDS, HOP_METHODS),
        "report": (report, HOP_METHODS),
        "report_normalised_diagnostic": (report, HOP_DIAG_METHODS),
    }
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as ex:
            res = dict(zip(tasks, ex.map(_hop_task, tasks.values()), strict=True))
    else:
        res = {k: _hop_task(v) for k, v in tasks.items()}
    for k, v in res.items():  # printed again, in order, after the interleaved progress
        print(f"-- {k} (seeds {v['seeds'][0]}-{v['seeds'][-1]})")
        for name, m in v["methods"].items():
            print(
                f"   {name:13s} {m['hv_ratio']['mean']:.3f} (sd {m['hv_ratio']['sd']:.3f}) "
                f"best {m['best_share']:.2f} > fixed_norm {m['beats_fixed_norm']} "
                f"unsupported {m['unsupported_points']}/{m['n_points']}"
            )
    out.update(res)
    return out


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


def _mse(v):
    v = np.asarray(v, dtype=np.float64)
    return {"mean": float(v.mean()), "se": float(v.std(ddof=1) / np.sqrt(v.size))}


def bench_tool_bandit(quick):
    seeds = HELD_OUT_SEEDS[:3] if quick else HELD_OUT_SEEDS
    out = {"seeds": list(seeds), "weight_grid": list(WEIGHT_GRID), "sweep": {}, "point": {}}
    raw = {}
    for m, method, extra in SWEEP_METHODS:
        t = time.perf_counter()
        r = sweep_tool_bandit(method, WEIGHT_GRID, random_states=seeds, **extra)
        raw[m] = r
        out["oracle_hv"] = r["oracle_hv"]
        out["sweep"][m] = {
            "method": method,
            "extra": extra,
            "point_hv_by_w": r["point_hv"].mean(0).tolist(),
            "final_weights_by_w": r["final_weights"].mean(0).tolist(),
            "frac_weights_kept_by_w": r["frac_weights_kept"].mean(0).tolist(),
            "hv_per_seed": r["hv"].tolist(),
            "hv": _mse(r["hv"]),
            "accuracy_by_w": r["accuracy"].mean(0).tolist(),
            "efficiency_by_w": r["efficiency"].mean(0).tolist(),
            "front_gap_by_w": r["front_gap"].mean(0).tolist(),
            "front_gap_per_seed": r["front_gap"].mean(1).tolist(),
            "front_gap": _mse(r["front_gap"].mean(1)),
            "front_gap_max": float(r["front_gap"].max()),
            "accuracy_range": [float(r["accuracy"].min()), float(r["accuracy"].max())],
            "seconds": time.perf_counter() - t,
        }
        print(
            f"tool bandit sweep {m:9s} front HV {r['hv'].mean():.4f} ± "
            f"{out['sweep'][m]['hv']['se']:.4f} (oracle {r['oracle_hv']:.4f}), "
            f"mean front gap {r['front_gap'].mean():.4f}"
        )
    out["single_point"] = _single_point_scores(raw, seeds)
    out["sweep_paired_over_fixed"] = {
        m: {
            "hv_ratio": _mse(raw[m]["hv"] / raw["fixed"]["hv"]),
            "wins": int(np.sum(raw[m]["hv"] > raw["fixed"]["hv"])),
        }
        for m in raw
        if m != "fixed"
    }
    for m, v in out["sweep_paired_over_fixed"].items():
        print(
            f"tool bandit paired front-HV ratio {m} / fixed {v['hv_ratio']['mean']:.3f} ± "
            f"{v['hv_ratio']['se']:.3f} (higher on {v['wins']}/{len(seeds)} seeds)"
        )
    hf = np.array(out["sweep"]["fixed"]["hv_per_seed"])
    hp = np.array(out["sweep"]["paretopo"]["hv_per_seed"])
    gf = np.array(out["sweep"]["fixed"]["front_gap_per_seed"])
    gp = np.array(out["sweep"]["paretopo"]["front_gap_per_seed"])
    out["paired"] = {
        "hv_ratio_paretopo_over_fixed": _mse(hp / hf),
        "paretopo_wins": int(np.sum(hp > hf)),
        "front_gap_diff_paretopo_minus_fixed": _mse(gp - gf),
        "paretopo_closer_to_front": int(np.sum(gp < gf)),
        "n_seeds": len(seeds),
    }
    print(
        f"tool bandit paired front-HV ratio ParetoPO / fixed {np.mean(hp / hf):.3f} "
        f"(ParetoPO higher on {np.sum(hp > hf)}/{len(seeds)} seeds); mean front gap "
        f"ParetoPO - fixed {np.mean(gp - gf):+.4f} (ParetoPO closer on "
        f"{np.sum(gp < gf)}/{len(seeds)} seeds)"
    )
    # ParetoPO's other knob: the tie-break weight beta (at w = 0.5), a sensitivity check
    runs = [
        [simulate_tool_bandit("paretopo", beta=b, random_state=s) for b in BETA_GRID]
        for s in seeds
    ]
    pts = np.array([[[r["accuracy"], r["efficiency"]] for r in row] for row in runs])
    hb = np.array([moo.hypervolume(p, [0.0, 0.0], maximise=True) for p in pts])
    out["beta_sweep"] = {
        "beta_grid": list(BETA_GRID),
        "hv_per_seed": hb.tolist(),
        "hv": _mse(hb),
        "accuracy_by_beta": pts[:, :, 0].mean(0).tolist(),
        "efficiency_by_beta": pts[:, :, 1].mean(0).tolist(),
        "hv_ratio_over_fixed_w_sweep": _mse(hb / hf),
    }
    print(
        f"tool bandit ParetoPO beta sweep front HV {hb.mean():.4f}, "
        f"ratio to fixed's w-sweep {np.mean(hb / hf):.3f}"
    )
    point_methods = (
        ("fixed", "fixed", {}),
        ("stage1", "stage1", {}),
        ("lu2025", "lu2025", {}),
        ("paretopo", "paretopo", {}),
        ("hvc_stage1", "stage1", {"stage1": "hvc_gradient"}),
        ("paretopo_hvc", "paretopo", {"stage1": "hvc_gradient"}),
    )
    for m, method, extra in point_methods:
        r = [simulate_tool_bandit(method, random_state=s, **extra) for s in seeds]
        keys = ("accuracy", "mean_calls", "hv", "front_gap")
        out["point"][m] = {k: float(np.mean([x[k] for x in r])) for k in keys}
        p = out["point"][m]
        print(
            f"tool bandit w=0.5 {m:9s} acc {p['accuracy']:.3f} calls {p['mean_calls']:.3f} "
            f"HV {p['hv']:.3f} front gap {p['front_gap']:.4f}"
        )
    if not quick:
        out["hvc_dev_sensitivity"] = _hvc_dev_sensitivity()
    return out


def _max_point_hv(front, n=20001):
    """Largest ``accuracy * efficiency`` of one attainable point (on the exact front)."""
    a, e = front["accuracy"], front["efficiency"]
    t = np.linspace(0.0, 1.0, n)[:, None]
    seg_a = (1 - t) * a[:-1] + t * a[1:]
    seg_e = (1 - t) * e[:-1] + t * e[1:]
    k = np.argmax(seg_a * seg_e)
    return {
        "hv": float((seg_a * seg_e).flat[k]),
        "accuracy": float(seg_a.flat[k]),
        "mean_calls": float((1 - seg_e.flat[k]) * 4),
    }


def _single_point_scores(raw, seeds):
    """Scoring (a): single-point HV per initial w, paired with fixed weights."""
    fx = raw["fixed"]
    calls = {m: (1.0 - r["efficiency"]) * 4 for m, r in raw.items()}
    res = {"max_point_hv_on_front": _max_point_hv(tool_bandit_front()), "by_method": {}}
    for m, r in raw.items():
        if m == "fixed":
            continue
        ratio = r["point_hv"] / fx["point_hv"]  # (n_seeds, n_weights)
        accept = (r["accuracy"] >= fx["accuracy"]) & (calls[m] < calls["fixed"])
        res["by_method"][m] = {
            "point_hv_ratio_by_w": [_mse(ratio[:, j]) for j in range(ratio.shape[1])],
            "point_hv_wins_by_w": np.sum(ratio > 1, axis=0).tolist(),
            "acceptance_by_w": accept.sum(0).tolist(),
            "point_hv_ratio_all": _mse(ratio.mean(1)),
            "point_hv_wins_all": int(np.sum(ratio > 1)),
            "acceptance_all": int(accept.sum()),
            "n_pairs": int(ratio.size),
        }
        v = res["by_method"][m]
        print(
            f"tool bandit single-point HV {m} / fixed: "
            + " ".join(
                f"w={w}:{x['mean']:.3f}"
                for w, x in zip(WEIGHT_GRID, v["point_hv_ratio_by_w"], strict=True)
            )
            + f" | higher on {v['point_hv_wins_all']}/{v['n_pairs']} pairs, "
            f"acceptance (acc >= fixed, fewer calls) on {v['acceptance_all']}/{v['n_pairs']}"
        )
    return res


def _hvc_dev_sensitivity():
    """hvc_gradient stage 1 over margin x EMA on seeds 0-4."""
    grid_w = (0.1, 0.5, 0.9)
    rows = []
    for margin in (0.05, 0.1, 0.3):
        for ema in (0.9, 0.99):
            r = sweep_tool_bandit(
                "stage1",
                grid_w,
                random_states=DEV_SEEDS,
                stage1="hvc_gradient",
                ref_margin=margin,
                weight_ema=ema,
            )
            rows.append(
                {
                    "margin": margin,
                    "ema": ema,
                    "point_hv_by_w": r["point_hv"].mean(0).tolist(),
                    "accuracy_by_w": r["accuracy"].mean(0).tolist(),
                    "mean_calls_by_w": ((1 - r["efficiency"]) * 4).mean(0).tolist(),
                    "front_hv": _mse(r["hv"]),
                }
            )
            print(
                f"hvc dev margin {margin} ema {ema}: point HV by w "
                f"{np.round(r['point_hv'].mean(0), 3).tolist()} front HV {r['hv'].mean():.3f}"
            )
    return {"seeds": list(DEV_SEEDS), "weight_grid": list(grid_w), "rows": rows}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default="benchmarks/results/moo.json")
    ap.add_argument("--paretopo-only", action="store_true")
    ap.add_argument("--hop-only", action="store_true")
    ap.add_argument("--jobs", type=int, default=1, help="processes for question 6")
    args = ap.parse_args(argv)
    tb_path = args.json.replace("moo.json", "moo_paretopo.json")
    if tb_path == args.json:
        tb_path = args.json + ".paretopo.json"
    if args.hop_only:  # question 6 only, merged into the ParetoPO results
        try:
            with open(tb_path) as fh:
                tb = json.load(fh)
        except FileNotFoundError:
            tb = {}
        tb["hop_bandit"] = bench_hop_bandit(args.quick, args.jobs)
        tb["hop_bandit"]["machine"] = platform.platform()
        with open(tb_path, "w") as fh:
            json.dump(tb, fh, indent=1)
        if not args.quick:
            try:
                plot_hop_front(tb_path)
            except ImportError:  # matplotlib is optional
                pass
        return
    tb = bench_tool_bandit(args.quick)
    tb["machine"] = platform.platform()
    tb["hop_bandit"] = bench_hop_bandit(args.quick, args.jobs)
    with open(tb_path, "w") as fh:
        json.dump(tb, fh, indent=1)
    if args.paretopo_only:  # refresh only the tool-bandit entry of the main results
        try:
            with open(args.json) as fh:
                res = json.load(fh)
        except FileNotFoundError:
            return
        res.setdefault("simulators", {})["tool_bandit"] = tb["point"]
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=1)
        return
    res = {
        "machine": platform.platform(),
        "moocore": moocore.__version__ if hasattr(moocore, "__version__") else "?",
        "pareto": bench_pareto(10_000, 10 if args.quick else 40),
        "mopo": bench_mopo(args.quick),
        "simulators": bench_sims(args.quick),
    }
    res["simulators"]["tool_bandit"] = tb["point"]
    with open(args.json, "w") as fh:
        json.dump(res, fh, indent=1)
    try:
        plot_mopo_front()
    except ImportError:  # matplotlib is optional
        pass


def plot_hop_front(
    results="benchmarks/results/moo_paretopo.json", out="docs/img/moo_hop_bandit.png"
):
    """Exact front of the multi-hop bandit, its convex hull and the methods' mean points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(results) as fh:
        rep = json.load(fh)["hop_bandit"]["report"]["methods"]
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
