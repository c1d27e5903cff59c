"""The model-merging section of ``python -m mvlearn_ext demo`` (NumPy only, seconds).

Three small ReLU MLP bodies fine-tuned from one base on disjoint digit
subsets ({0-3}, {4-6}, {7-9} of scikit-learn's bundled ``load_digits``) are
merged without data; each task is scored with its own head on the merged
body. Columns: ``accuracy`` (mean over the three tasks) and ``kept`` (the
fraction of each expert's weight-matrix updates the merge keeps). The fit
time column is the merge time. Same lambda = 0.4 for every method.
"""

from __future__ import annotations

import time

import numpy as np

COLUMNS = ("accuracy", "kept")


def _methods(merging, base, experts, layers, sa_density, seed):
    """``{method: (merge(), fraction kept)}`` at lambda = 0.4."""

    return {
        "task arithmetic": (lambda: merging.task_arithmetic(base, experts, scaling=0.4), 1.0),
        "TIES": (
            lambda: merging.ties(base, experts, density=0.1, scaling=0.4, prune_keys=layers),
            0.1,
        ),
        "DARE": (
            lambda: merging.dare(
                base, experts, density=0.1, scaling=0.4, prune_keys=layers, random_state=seed
            ),
            0.1,
        ),
        "SA-Merging (reconstruction)": (
            lambda: merging.sa_merge(base, experts, p=0.2, n_rounds=10, scaling=0.4),
            sa_density,
        ),
        "magnitude top-k": (
            lambda: merging.magnitude_merge(
                base, experts, density=sa_density, scaling=0.4, prune_keys=layers
            ),
            sa_density,
        ),
        "random mask": (
            lambda: merging.random_mask_merge(
                base,
                experts,
                density=sa_density,
                scaling=0.4,
                prune_keys=layers,
                random_state=seed,
            ),
            sa_density,
        ),
    }


def run(ctx):
    """One row per merging method, over ``ctx.seeds``."""
    from threadpoolctl import threadpool_limits

    from mvlearn_ext import merging
    from mvlearn_ext._demo.registry import DemoRow
    from mvlearn_ext.datasets import make_digit_experts

    width = 32 if ctx.quick else 64
    rows = {}

    def add(method, seed_scores, seconds, note=""):
        row = rows.setdefault(method, DemoRow(method=method, scores={}, fit_times=[], note=note))
        for key, value in seed_scores.items():
            row.scores.setdefault(key, []).append(value)
        row.fit_times.append(seconds)

    for seed in ctx.seeds:
        problem = make_digit_experts(width=width, random_state=seed)
        base, experts = problem.base, problem.experts
        layers = [k for k in base if k.endswith("weight")]
        size = base[layers[0]].size
        sa_density = (merging.sa_keep_counts(size, 0.2, 10)[-1] + 0.5) / size
        add("individual experts", {"accuracy": problem.expert_accuracy, "kept": 1.0}, 0.0)
        methods = _methods(merging, base, experts, layers, sa_density, seed)
        with threadpool_limits(limits=1):
            for method, (merge, kept) in methods.items():
                start = time.perf_counter()
                body = merge()
                seconds = time.perf_counter() - start
                add(method, {"accuracy": problem.accuracy(body), "kept": float(kept)}, seconds)
    out = list(rows.values())
    for row in out:
        ctx.progress(f"{row.method}: accuracy {np.mean(row.scores['accuracy']):.3f}")
    out[-1].note = (
        "Data-free merging of three digit experts (body 64-64-64; 32 with --quick), "
        "lambda = 0.4; SA-Merging is a reconstruction from a summary of the paper."
    )
    return out
