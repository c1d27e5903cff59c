"""The ``diffusion`` demo sections: two-stage distillation against the labelled-only generalist.

``run`` (NumPy, seconds): the polynomial-Gaussian oracle of
:func:`mvlearn_ext.diffusion.two_stage_polynomial` on the two 2-D toy tasks (32 pairs
and 2000 unpaired conditions per task). ``run_torch`` (torch, about half a
minute per model and seed): tiny epsilon-networks of
:mod:`mvlearn_ext.deep.diffusion` (specialists 2 x 32 MLPs, closed-form
polynomial-Gaussian models or Gaussian-posterior DSM diffusion models;
generalists 3 x 128, ``T = 50``). Scores on held-out
conditions: the conditional-mean error and the energy distance of the joint
``(c, x)`` samples to fresh samples of the true law.
"""

from __future__ import annotations

import time

import numpy as np

COLUMNS = ("mean err", "energy")


def _scores(data, sample, mean=None, *, n_draws=16, random_state=0):
    """Conditional-mean error and energy distance, averaged over the tasks.

    ``mean(k, C)`` gives the exact model mean when known (else the mean of
    ``n_draws`` samples per condition is used).
    """
    from mvlearn_ext.diffusion import conditional_mean_error, energy_distance

    errs, eds = [], []
    for k in range(len(data.names)):
        C = data.test[k]
        Cr = np.repeat(C, n_draws, axis=0)
        X = sample(k, Cr, random_state + k)
        if mean is None:
            errs.append(conditional_mean_error(X.reshape(len(C), n_draws, -1), data.mean(k, C)))
        else:
            errs.append(float(((mean(k, C) - data.mean(k, C)) ** 2).sum(1).mean()))
        # at most 1000 rows, spread over all held-out conditions (rows are grouped
        # by condition, so the first 1000 rows would cover only a quarter of them)
        sub = slice(0, None, -(-len(Cr) // 1000))
        truth = data.sample(k, Cr[sub], random_state=random_state + 100 + k)
        eds.append(energy_distance(np.hstack([Cr[sub], X[sub]]), np.hstack([Cr[sub], truth])))
    return float(np.mean(errs)), float(np.mean(eds))


def _pooled(data):
    C = np.vstack([C for C, _ in data.pairs])
    X = np.vstack([X for _, X in data.pairs])
    T = np.concatenate([np.full(len(C), k) for k, (C, _) in enumerate(data.pairs)])
    return C, X, T


def oracle_models(data, seed):
    """``(label, sample(k, C, seed), mean(k, C), fit seconds)`` of the NumPy oracle."""
    from mvlearn_ext.diffusion import fit_polynomial_gaussian, two_stage_polynomial

    t0 = time.perf_counter()
    C, X, T = _pooled(data)
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


def torch_models(
    data,
    seed,
    *,
    max_iter_specialist=6000,
    max_iter_generalist=3000,
    mix_weight=0.5,
    max_iter_dsm=1500,
    learning_rate_schedule="cosine",
    specialists=("diffusion", "polynomial", "gaussian_dsm"),
):
    """The same for the epsilon-networks (needs torch); means by Monte Carlo.

    Rows: the labelled-only generalist; for each specialist class in
    ``specialists`` (``"diffusion"``: 2 x 32 MLPs with ``max_iter_specialist`` Adam
    steps; ``"polynomial"``: closed-form degree-5 polynomial-Gaussian
    models, sampled directly; ``"gaussian_dsm"``: the degree-5
    Gaussian-posterior diffusion models fitted by DSM with ``max_iter_dsm``
    steps), the specialists and the two-stage generalists distilled from
    them without and with the real pairs mixed in (share ``mix_weight``;
    the specialists are fitted once and reused). Every generalist, the
    labelled-only one included, is 3 x 128 with ``max_iter_generalist`` Adam steps
    and the step-size schedule ``learning_rate_schedule``.
    """
    from mvlearn_ext.deep.diffusion import ConditionalDiffusion, TwoStageDiffusion

    C, X, T = _pooled(data)
    t0 = time.perf_counter()
    base = ConditionalDiffusion(
        hidden_layer_sizes=(128, 128, 128),
        n_tasks=len(data.names),
        max_iter=max_iter_generalist,
        learning_rate_schedule=learning_rate_schedule,
        random_state=seed,
    ).fit(C, X, T)
    rows = [
        (
            "labelled-only generalist (3x128)",
            lambda k, C, s: base.sample(C, k, random_state=s),
            None,
            time.perf_counter() - t0,
        )
    ]
    names = {
        "diffusion": ("2x32", dict(max_iter_specialist=max_iter_specialist)),
        "polynomial": ("polynomial, degree 5", dict(specialist="polynomial")),
        "gaussian_dsm": (
            "Gaussian DSM, degree 5",
            dict(specialist="gaussian_dsm", max_iter_specialist=max_iter_dsm),
        ),
    }
    for spec in specialists:
        name, kw = names[spec]
        fitted = None
        for mu in (0.0, mix_weight):
            t0 = time.perf_counter()
            two = TwoStageDiffusion(
                max_iter_generalist=max_iter_generalist,
                mix_weight=mu,
                learning_rate_schedule=learning_rate_schedule,
                random_state=seed,
                **kw,
            ).fit(data.pairs, data.unpaired, specialists=fitted)
            elapsed = time.perf_counter() - t0
            if fitted is None:
                fitted = two.specialists_
                rows.append(
                    (
                        f"specialists ({name}, one per task)",
                        lambda k, C, s, two=two: two.specialists_[k].sample(C, random_state=s),
                        None,
                        elapsed,
                    )
                )
            rows.append(
                (
                    f"two-stage generalist (3x128), {name} specialists, mix_weight={mu:g}",
                    lambda k, C, s, two=two: two.sample(C, k, random_state=s),
                    None,
                    elapsed,
                )
            )
    return rows


def _table(ctx, build, note):
    from mvlearn_ext._demo.registry import DemoRow
    from mvlearn_ext.diffusion import make_toy_tasks

    res = {}
    for seed in ctx.seeds:
        data = make_toy_tasks(random_state=seed)
        for label, sample, mean, elapsed in build(data, seed):
            err, ed = _scores(data, sample, mean, random_state=seed)
            scores, times = res.setdefault(label, ({c: [] for c in COLUMNS}, []))
            scores["mean err"].append(err)
            scores["energy"].append(ed)
            times.append(elapsed)
        ctx.progress(f"diffusion seed {seed} done")
    rows = [DemoRow(method=lab, scores=sc, fit_times=t) for lab, (sc, t) in res.items()]
    rows[0].note = note
    return rows


def run(ctx):
    """Rows of the NumPy oracle table, over ``ctx.seeds``."""
    return _table(
        ctx,
        oracle_models,
        "NumPy oracle: polynomial-Gaussian models; 2 toy tasks, 32 pairs + 2000 unpaired c "
        "per task; reconstruction from the abstract",
    )


def run_torch(ctx):
    """Rows of the epsilon-network table (needs torch), over ``ctx.seeds``."""
    import torch

    torch.set_num_threads(ctx.n_threads or 1)
    max_iter_specialist, max_iter_generalist = (1000, 1000) if ctx.quick else (6000, 3000)

    def build(data, seed):
        return torch_models(
            data,
            seed,
            max_iter_specialist=max_iter_specialist,
            max_iter_generalist=max_iter_generalist,
        )

    return _table(
        ctx,
        build,
        f"DDPM T=50, {max_iter_specialist}/{max_iter_generalist} Adam steps "
        "(2x32 specialists/generalists, cosine step decay); "
        "2 toy tasks, 32 pairs + 2000 unpaired c per task; "
        "reconstruction from the abstract",
    )
