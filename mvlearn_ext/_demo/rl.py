"""The ``grpo`` section of ``python -m mvlearn_ext demo``: VisualScore's rewards on a toy.

A tiny two-token softmax scorer is trained by NumPy GRPO on the toy
multi-task quality problem of :func:`mvlearn_ext.rl.make_quality_tasks`; held-out SRCC per
task for the Gaussian reward against the binary reward (the baseline), with
and without VisualScore's std filter and entropy gating.
"""

from __future__ import annotations

import time

COLUMNS = ("SRCC technical", "SRCC aesthetics", "SRCC alignment", "zero-adv share")


def run(ctx):
    """Rows of the demo table (one per reward/filter setting), over ``ctx.seeds``."""
    from mvlearn_ext._demo.registry import DemoRow
    from mvlearn_ext.rl import QUALITY_TASKS, evaluate_scorer, make_quality_tasks, train_scorer

    settings = [
        ("Gaussian reward + filters", "gaussian", True),
        ("Gaussian reward", "gaussian", False),
        ("binary reward (|e| < 0.25)", "binary", False),
    ]
    n_steps = 80 if ctx.quick else 150
    rows = []
    for label, reward, filters in settings:
        scores = {c: [] for c in COLUMNS}
        times = []
        for seed in ctx.seeds:
            phi, task, q = make_quality_tasks(1200, random_state=seed)
            start = time.perf_counter()
            pol, stats = train_scorer(
                phi[:800],
                task[:800],
                q[:800],
                reward=reward,
                filters=filters,
                n_steps=n_steps,
                random_state=seed,
            )
            times.append(time.perf_counter() - start)
            ev = evaluate_scorer(pol, phi[800:], task[800:], q[800:])
            for name, col in zip(QUALITY_TASKS, COLUMNS, strict=False):
                scores[col].append(ev[name][0])
            scores["zero-adv share"].append(stats["zero_advantage_share"])
        rows.append(DemoRow(method=label, scores=scores, fit_times=times, note=""))
        ctx.progress(f"{label}: {sum(times):.2f} s")
    rows[0].note = (
        "toy digits image quality assessment (synthetic qualities), NumPy GRPO with groups "
        "of 16; VisualScore rewards "
        "(authors' code) on a package-designed toy"
    )
    return rows
