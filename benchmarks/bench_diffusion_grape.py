"""GRAPE end to end and two-stage diffusion distillation, each against its baseline, over seeds.

Questions (2 cores, a few minutes):

* GRAPE (toy): does a softmax query rewriter trained by GRPO with GRAPE's
  rank reward raise held-out Recall@1 and Recall@10 of a frozen toy
  retriever above the original (shifted) queries, and how does the
  similarity-reward ablation compare (R@1, inflation, hub use)?
* Diffusion with few pairs (reconstruction from the abstract): on the two
  2-D toy tasks with 32 pairs and 2000 unpaired conditions per task, does
  the two-stage generalist (specialists distilled with pseudo-samples) have
  a lower held-out conditional-mean error than the generalist trained on the
  pairs alone, and is it within 1.5x of the specialists? Measured for the
  NumPy polynomial-Gaussian oracle (10 seeds) and the torch epsilon-networks
  with three specialist classes (2x32 MLP diffusion models, closed-form
  polynomial-Gaussian models, Gaussian-posterior DSM diffusion models) on 8
  seeds 2000-2007 (paired sign test and paired-difference confidence
  intervals against the labelled-only generalist; ratios to each class's
  specialists).

Every baseline runs in the same process on the same data and seeds; ratios
are reported. Writes benchmarks/results/diffusion_grape.json.
Usage: ``python benchmarks/bench_diffusion_grape.py [--quick] [--no-torch] [--no-grape]
[--workers N] [--results-dir DIR]`` (``--no-grape`` keeps the GRAPE block of the results
file).
"""

import argparse
import json
import pathlib
import time

import numpy as np


def _summary(rows, keys):
    return {
        k: {
            "mean": float(np.mean([r[k] for r in rows])),
            "std": float(np.std([r[k] for r in rows])),
        }
        for k in keys
    }


def grape(seeds, n_steps):
    from mvlearn_ext.rl import evaluate_rewriter, make_shifted_retrieval, train_rewriter

    out = {"original queries": [], "rank reward": [], "similarity reward": []}
    for seed in seeds:
        data = make_shifted_retrieval(random_state=seed)
        out["original queries"].append({"seed": seed, **evaluate_rewriter(data), "s": 0.0})
        for name, reward in (("rank reward", "rank"), ("similarity reward", "similarity")):
            t = time.perf_counter()
            pol, _ = train_rewriter(data, reward=reward, n_steps=n_steps, random_state=seed)
            out[name].append(
                {"seed": seed, **evaluate_rewriter(data, pol), "s": time.perf_counter() - t}
            )
        print(
            f"grape seed {seed}: "
            + ", ".join(f"{k} R@10 {v[-1]['R@10']:.3f}" for k, v in out.items())
        )
    keys = ("R@1", "R@10", "inflation", "hub_rate", "s")
    summary = {k: _summary(v, keys) for k, v in out.items()}
    ratio = {}
    for metric in ("R@1", "R@10"):
        for name in ("rank reward", "similarity reward"):
            r = [
                a[metric] / b[metric]
                for a, b in zip(out[name], out["original queries"], strict=True)
            ]
            ratio[f"{name} / original, {metric}"] = float(np.mean(r))
        r = [
            a[metric] / b[metric]
            for a, b in zip(out["rank reward"], out["similarity reward"], strict=True)
        ]
        ratio[f"rank / similarity, {metric}"] = float(np.mean(r))
    return {"per_seed": out, "summary": summary, "ratios": ratio}


def oracle_models(data, seed):
    """``(label, sample(k, C, seed), mean(k, C), fit seconds)`` of the NumPy oracle's models."""
    from mvlearn_ext.diffusion import fit_polynomial_gaussian, stack_pairs, two_stage_polynomial

    start = time.perf_counter()
    C, X, T = stack_pairs(data.pairs)
    base = fit_polynomial_gaussian(C, X, degree=12, tasks=T, domain=(-1.5, 1.5))
    base_s = time.perf_counter() - start
    start = time.perf_counter()
    two, specs = two_stage_polynomial(data.pairs, data.unpaired, random_state=seed)
    two_s = time.perf_counter() - start

    def exact(model, with_task=True):
        """``sample`` and ``mean`` of a generalist (``with_task``) or of one model per task."""
        if with_task:
            return (
                lambda k, C, s: model.sample(C, k, random_state=s),
                lambda k, C: model.mean(C, k),
            )
        return (
            lambda k, C, s: model[k].sample(C, random_state=s),
            lambda k, C: model[k].mean(C),
        )

    return [
        ("labelled-only generalist (degree 12)", *exact(base), base_s),
        ("specialists (degree 5, one per task)", *exact(specs, with_task=False), two_s),
        ("two-stage generalist (degree 12)", *exact(two), two_s),
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
    from mvlearn_ext.diffusion import stack_pairs

    C, X, T = stack_pairs(data.pairs)
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


def _diffusion_seed(seed, build):
    from mvlearn_ext.diffusion import evaluate_toy_sampler, make_toy_tasks

    data = make_toy_tasks(random_state=seed)
    rows = {}
    for label, sample, mean, elapsed in build(data, seed):
        err, ed = evaluate_toy_sampler(data, sample, mean, random_state=seed)
        rows[label] = {"seed": seed, "mean_err": err, "energy": ed, "s": elapsed}
    print(f"diffusion seed {seed}: " + ", ".join(f"{v['mean_err']:.4f}" for v in rows.values()))
    return rows


def _torch_seed(args):
    seed, kw = args
    import torch

    torch.set_num_threads(1)

    def build(data, s):
        return torch_models(data, s, **kw)

    return _diffusion_seed(seed, build)


def paired_stats(a, b):
    """Paired comparison of errors ``a`` (method) and ``b`` (baseline) over seeds.

    Exact two-sided sign test on the signs of ``a - b``, a 95% t-interval of
    the mean difference, and the geometric mean of ``a / b`` with a 95%
    t-interval (on the log ratios).
    """
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d, lr = a - b, np.log(a / b)
    n = len(d)
    q = stats.t.ppf(0.975, n - 1) if n > 1 else np.nan
    wins = int((d < 0).sum())
    losses = int((d > 0).sum())
    p = stats.binomtest(wins, wins + losses).pvalue if wins + losses else 1.0
    se_d = d.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
    se_l = lr.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
    return {
        "n_seeds": n,
        "wins": wins,
        "losses": losses,
        "sign_test_p": float(p),
        "mean_diff": float(d.mean()),
        "mean_diff_ci95": [float(d.mean() - q * se_d), float(d.mean() + q * se_d)],
        "geo_mean_ratio": float(np.exp(lr.mean())),
        "geo_mean_ratio_ci95": [
            float(np.exp(lr.mean() - q * se_l)),
            float(np.exp(lr.mean() + q * se_l)),
        ],
    }


def diffusion(seeds, build=None, *, per_seed=None):
    if per_seed is None:
        per_seed = [_diffusion_seed(seed, build) for seed in seeds]
    out = {}
    for rows in per_seed:
        for label, row in rows.items():
            out.setdefault(label, []).append(row)
    labels = list(out)
    base, spec, two = labels[:3]
    summary = {k: _summary(v, ("mean_err", "energy", "s")) for k, v in out.items()}

    def ratio(a, b, key):
        return float(np.mean([x[key] / y[key] for x, y in zip(out[a], out[b], strict=True)]))

    def mean_ratio(a, b, key):
        return float(np.mean([x[key] for x in out[a]]) / np.mean([y[key] for y in out[b]]))

    ratios = {
        "two-stage / labelled-only, mean_err (per-seed mean)": ratio(two, base, "mean_err"),
        "two-stage / specialists, mean_err (per-seed mean)": ratio(two, spec, "mean_err"),
        "two-stage / labelled-only, energy (per-seed mean)": ratio(two, base, "energy"),
        "two-stage beats labelled-only (seeds)": int(
            sum(x["mean_err"] < y["mean_err"] for x, y in zip(out[two], out[base], strict=True))
        ),
        "specialists / labelled-only, mean_err (per-seed mean)": ratio(spec, base, "mean_err"),
    }
    for extra in labels[3:]:
        ratios[f"{extra} / labelled-only, mean_err (per-seed mean)"] = ratio(
            extra, base, "mean_err"
        )
        ratios[f"{extra} beats labelled-only (seeds)"] = int(
            sum(x["mean_err"] < y["mean_err"] for x, y in zip(out[extra], out[base], strict=True))
        )
    # each two-stage row against the specialists it was distilled from
    current = None
    for label in labels[1:]:
        if label.startswith("specialists"):
            current = label
        elif label.startswith("two-stage") and current is not None:
            for key in ("mean_err", "energy"):
                ratios[f"{label} / its specialists, {key} (ratio of seed means)"] = mean_ratio(
                    label, current, key
                )
    tests = {
        f"{label} vs {base}, {key}": paired_stats(
            [r[key] for r in out[label]], [r[key] for r in out[base]]
        )
        for label in labels[1:]
        for key in ("mean_err", "energy")
    }
    return {"per_seed": out, "summary": summary, "ratios": ratios, "paired_tests": tests}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--no-grape", action="store_true")
    parser.add_argument("--workers", type=int, default=2, help="processes for the torch seeds")
    parser.add_argument(
        "--results-dir",
        type=pathlib.Path,
        default=pathlib.Path(__file__).parent / "results",
        help="where diffusion_grape.json goes",
    )
    args = parser.parse_args()
    start = time.perf_counter()
    path = args.results_dir / "diffusion_grape.json"
    if args.no_grape and path.exists():  # keep the GRAPE block of the last full run
        res = {"grape_toy": json.loads(path.read_text())["grape_toy"]}
    else:
        res = {"grape_toy": grape(range(3 if args.quick else 5), 60 if args.quick else 150)}
    res["diffusion_oracle"] = diffusion(range(3 if args.quick else 10), oracle_models)
    if not args.no_torch:
        from multiprocessing import get_context

        kw = dict(
            max_iter_specialist=6000, max_iter_generalist=3000, max_iter_dsm=1500, mix_weight=0.5
        )
        if args.quick:
            kw.update(max_iter_specialist=500, max_iter_generalist=800, max_iter_dsm=300)
        seeds = list(range(2000, 2001 if args.quick else 2008))
        t0 = time.perf_counter()
        per_seed = []
        partial = pathlib.Path("/tmp/diffusion_torch_partial.json")
        with get_context("spawn").Pool(min(args.workers, len(seeds))) as pool:
            for rows in pool.imap(_torch_seed, [(s, kw) for s in seeds]):
                per_seed.append(rows)  # kept as they come, in case the run is cut short
                partial.write_text(json.dumps(per_seed, indent=1))
        res["diffusion_torch"] = diffusion(seeds, per_seed=per_seed)
        res["diffusion_torch"]["config"] = {
            "seeds": seeds,
            "specialists": (
                f"2x32 MLP diffusion, {kw['max_iter_specialist']} Adam steps (cosine); polynomial-Gaussian "
                f"degree 5 (closed form, direct sampling); Gaussian-posterior DSM diffusion, "
                f"degree 5, {kw['max_iter_dsm']} Adam steps (learning rate 2e-2, cosine)"
            ),
            "generalist": (
                f"3x128, {kw['max_iter_generalist']} Adam steps, learning rate 2e-3 with cosine decay "
                "(labelled-only and two-stage alike)"
            ),
            "mix_weight": [0.0, kw["mix_weight"]],
            "n_per_condition": 1,
            "T": 50,
            "sampler": "DDPM, sigma_t^2 = beta_t",
            "n_draws_per_condition": 16,
            "workers": args.workers,
            "wall_s": time.perf_counter() - t0,
        }
    res["quick"] = args.quick
    res["elapsed_s"] = time.perf_counter() - start
    path.write_text(json.dumps(res, indent=1))
    for name, block in res.items():
        if isinstance(block, dict) and "ratios" in block:
            print(name, json.dumps(block["ratios"], indent=1))
    print(f"total {res['elapsed_s']:.0f} s -> {path}")


if __name__ == "__main__":
    main()
