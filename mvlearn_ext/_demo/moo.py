"""The multi-objective sections of ``python -m mvlearn_ext demo`` (synthetic, seconds)."""

from __future__ import annotations

import time

import numpy as np


def _row(method, per_seed, times, note=""):
    from mvlearn_ext._demo.registry import DemoRow

    keys = per_seed[0].keys()
    return DemoRow(
        method=method,
        scores={k: [r[k] for r in per_seed] for k in keys},
        fit_times=times,
        note=note,
    )


def _over_seeds(ctx, run, score):
    """``score(run(seed))`` for every seed of ``ctx``, and the times of ``run``."""
    res, times = [], []
    for seed in ctx.seeds:
        t = time.perf_counter()
        r = run(seed)
        times.append(time.perf_counter() - t)
        res.append(score(r))
    return res, times


def _rows_of_runs(ctx, runs, simulate, score, summary):
    """One row per ``(name, method, extra, note)`` of ``runs``, over the seeds of ``ctx``.

    ``simulate(method, seed, extra)`` is timed and ``score``-d per seed;
    ``summary(scores)`` is the progress line after the method's name.
    """
    rows = []
    for name, method, extra, note in runs:
        res, times = _over_seeds(
            ctx, lambda seed, method=method, extra=extra: simulate(method, seed, extra), score
        )
        rows.append(_row(name, res, times, note=f"{name}: {note}"))
        ctx.progress(f"{name}: {summary(res)}")
    return rows


def run_tool_bandit(ctx):
    """ParetoPO (reconstruction) vs static scalarisation on the tool-use bandit.

    One point per method at weights (0.5, 0.5): ``front_gap`` (accuracy
    missing to the exact front at the same efficiency) measures the quality
    of the trade-off, the other columns only where on it a method lands.
    ``paretopo_hvc`` is ParetoPO with the ``stage1="hvc_gradient"`` variant.
    """
    from mvlearn_ext.moo import simulate_tool_bandit

    hvc = {"stage1": "hvc_gradient"}
    runs = (
        ("fixed", "fixed", {}, "GRPO on fixed weights (0.5, 0.5)"),
        ("stage1", "stage1", {}, "ParetoPO stage 1 only (HV-guided meta-reward; reconstruction)"),
        ("lu2025", "lu2025", {}, "meta-reward baseline of Lu et al. 2025"),
        (
            "paretopo",
            "paretopo",
            {},
            "ParetoPO stage 1 then Pareto-rank advantages (reconstruction of ICML 2026)",
        ),
        (
            "paretopo_hvc",
            "paretopo",
            hvc,
            "ParetoPO with stage1='hvc_gradient' (weights from the HVC gradient; reconstruction)",
        ),
    )
    return _rows_of_runs(
        ctx,
        runs,
        lambda method, seed, extra: simulate_tool_bandit(
            method, n_steps=150, stage1_steps=50, seed=seed, **extra
        ),
        lambda r: {
            "accuracy": r["accuracy"],
            "mean_calls": r["mean_calls"],
            "HV": r["hv"],
            "front_gap": r["front_gap"],
        },
        lambda res: f"accuracy {np.mean([r['accuracy'] for r in res]):.3f}",
    )


def run_hop_bandit(ctx):
    """ParetoPO (reconstruction) where static scalarisation is weak: the multi-hop bandit.

    Non-convex front (S-shaped success in the number of calls, a unimodal
    one-parameter policy) and raw rewards on drifting scales. Each method is
    run at accuracy weights 0.1, 0.5 and 0.9 (150 GRPO steps); ``front_HV``
    is the hypervolume of the three final points relative to the exact
    front's, ``calls_w0.9`` the final policy's expected calls at weight 0.9.
    """
    from mvlearn_ext.moo._hop_bandit import sweep_hop_bandit

    runs = (
        ("fixed", "fixed", {}, "GRPO on fixed weights, raw rewards"),
        (
            "fixed_norm",
            "fixed_norm",
            {},
            "GRPO on fixed weights, rewards scaled once at the start",
        ),
        ("stage1", "stage1", {}, "ParetoPO stage 1 only (HV meta-reward; reconstruction)"),
        ("stage2", "stage2", {}, "ParetoPO stage 2 only (Pareto-rank advantages; reconstruction)"),
        (
            "paretopo",
            "paretopo",
            {},
            "ParetoPO, both stages; collapses to 0 calls like stage 2 (see the moo guide)",
        ),
    )
    return _rows_of_runs(
        ctx,
        runs,
        lambda method, seed, extra: sweep_hop_bandit(
            method, (0.1, 0.5, 0.9), seeds=(seed,), n_steps=150, stage1_steps=50, **extra
        ),
        lambda r: {
            "front_HV": float(r["hv_ratio"][0]),
            "calls_w0.9": float((1 - r["efficiency"][0, 2]) * 12),
        },
        lambda res: f"front HV {np.mean([r['front_HV'] for r in res]):.3f} of exact",
    )


def _controlg_scores(r):
    ch = r["choices"]
    share = np.bincount(ch[ch >= 0], minlength=3).min() / len(ch) if (ch >= 0).any() else 1 / 3
    return {"log_HV": r["log_hv"], "min_share": float(share)}


def run_controlg(ctx):
    """ControlG (reconstruction) vs round-robin and uniform mixing in the block simulator."""
    from mvlearn_ext.moo import simulate_block_training

    rates = np.array([0.05, 0.02, 0.1])
    A = np.zeros((3, 3))
    A[0, 1] = A[1, 0] = 0.015
    rows = []
    for policy in ("controlg", "round_robin", "uniform_mix"):
        res, times = _over_seeds(
            ctx,
            lambda seed, policy=policy: simulate_block_training(
                policy, n_blocks=60, rates=rates, antagonism=A, seed=seed, noise=0.1
            ),
            _controlg_scores,
        )
        rows.append(
            _row(
                policy,
                res,
                times,
                note=""
                if policy != "controlg"
                else "controlg: reconstruction of arXiv 2602.05036",
            )
        )
    return rows
