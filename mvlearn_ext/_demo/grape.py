"""The ``grape`` section of ``python -m mvlearn_ext demo``: GRAPE's rank reward end to end.

A softmax query rewriter is trained by NumPy GRPO against the frozen toy
retriever of :func:`mvlearn_ext.rl.make_shifted_retrieval`; held-out Recall@1 and
Recall@10 of the original queries (the baseline), of the rank-reward policy
and of the similarity-reward policy (the ablation open to score inflation),
with the mean negative score (inflation) and the share of rewrites that
append a hub token.
"""

from __future__ import annotations

import time

COLUMNS = ("R@1", "R@10", "inflation", "hub rate")


def run(ctx):
    """Rows of the demo table, over ``ctx.seeds``."""
    from mvlearn_ext._demo.registry import DemoRow
    from mvlearn_ext.rl import evaluate_rewriter, make_shifted_retrieval, train_rewriter

    n_steps = 60 if ctx.quick else 150
    settings = [
        ("original queries (no rewriting)", None),
        ("GRPO, rank reward + format", "rank"),
        ("GRPO, similarity reward + format", "similarity"),
    ]
    results = {label: ({c: [] for c in COLUMNS}, []) for label, _ in settings}
    for seed in ctx.seeds:
        data = make_shifted_retrieval(random_state=seed)
        for label, reward in settings:
            start = time.perf_counter()
            policy = None
            if reward is not None:
                policy, _ = train_rewriter(data, reward=reward, n_steps=n_steps, random_state=seed)
            elapsed = time.perf_counter() - start
            ev = evaluate_rewriter(data, policy)
            scores, times = results[label]
            for col, key in zip(COLUMNS, ("R@1", "R@10", "inflation", "hub_rate"), strict=True):
                scores[col].append(ev[key])
            times.append(elapsed)
        ctx.progress(f"grape seed {seed} done")
    rows = [
        DemoRow(method=label, scores=results[label][0], fit_times=results[label][1])
        for label, _ in settings
    ]
    rows[0].note = (
        "toy shifted retrieval (400 items, aliases nearly orthogonal to native tokens), "
        "NumPy GRPO with groups of 8 rewrites; GRAPE reward structure from its reviews, toy and "
        "policy are designs"
    )
    return rows
