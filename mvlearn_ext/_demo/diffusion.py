"""The ``diffusion`` demo section: two-stage distillation against the labelled-only generalist.

The polynomial-Gaussian oracle of :func:`mvlearn_ext.diffusion.two_stage_polynomial`
on the two 2-D toy tasks (32 pairs and 2000 unpaired conditions per task; NumPy,
seconds). Scores on held-out conditions
(:func:`mvlearn_ext.diffusion.evaluate_toy_sampler`): the conditional-mean error
and the energy distance of the joint ``(c, x)`` samples to fresh samples of the
true law.
"""

from __future__ import annotations

import time

COLUMNS = ("mean err", "energy")


def oracle_models(data, seed):
    """``(label, sample(k, C, seed), mean(k, C), fit seconds)`` of the NumPy oracle."""
    from mvlearn_ext.diffusion import fit_polynomial_gaussian, stack_pairs, two_stage_polynomial

    t0 = time.perf_counter()
    C, X, T = stack_pairs(data.pairs)
    base = fit_polynomial_gaussian(C, X, degree=12, tasks=T, domain=(-1.5, 1.5))
    t1 = time.perf_counter()
    g, specs = two_stage_polynomial(data.pairs, data.unpaired, random_state=seed)
    t2 = time.perf_counter()
    return [
        (
            "labelled-only generalist (degree 12)",
            lambda k, C, s: base.sample(C, k, random_state=s),
            lambda k, C: base.mean(C, k),
            t1 - t0,
        ),
        (
            "specialists (degree 5, one per task)",
            lambda k, C, s: specs[k].sample(C, random_state=s),
            lambda k, C: specs[k].mean(C),
            t2 - t1,
        ),
        (
            "two-stage generalist (degree 12)",
            lambda k, C, s: g.sample(C, k, random_state=s),
            lambda k, C: g.mean(C, k),
            t2 - t1,
        ),
    ]


def run(ctx):
    """Rows of the NumPy oracle table, over ``ctx.seeds``."""
    from mvlearn_ext._demo.registry import DemoRow
    from mvlearn_ext.diffusion import evaluate_toy_sampler, make_toy_tasks

    res = {}
    for seed in ctx.seeds:
        data = make_toy_tasks(random_state=seed)
        for label, sample, mean, elapsed in oracle_models(data, seed):
            err, ed = evaluate_toy_sampler(data, sample, mean, random_state=seed)
            scores, times = res.setdefault(label, ({c: [] for c in COLUMNS}, []))
            scores["mean err"].append(err)
            scores["energy"].append(ed)
            times.append(elapsed)
        ctx.progress(f"diffusion seed {seed} done")
    rows = [DemoRow(method=lab, scores=sc, fit_times=t) for lab, (sc, t) in res.items()]
    rows[0].note = (
        "NumPy oracle: polynomial-Gaussian models; 2 toy tasks, 32 pairs + 2000 unpaired c "
        "per task; reconstruction from the abstract"
    )
    return rows
