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
  (3 seeds).

Every baseline runs in the same process on the same data and seeds; ratios
are reported. Writes benchmarks/results/diffusion_grape.json.
Usage: ``python benchmarks/bench_diffusion_grape.py [--quick] [--no-torch]``.
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


def diffusion(seeds, build):
    from mvlearn_ext.diffusion import make_toy_tasks
    from mvlearn_ext.diffusion._demo import _scores

    out = {}
    for seed in seeds:
        data = make_toy_tasks(random_state=seed)
        for label, sample, mean, elapsed in build(data, seed):
            err, ed = _scores(data, sample, mean, random_state=seed)
            out.setdefault(label, []).append(
                {"seed": seed, "mean_err": err, "energy": ed, "s": elapsed}
            )
        print(
            f"diffusion seed {seed}: "
            + ", ".join(f"{k} {v[-1]['mean_err']:.4f}" for k, v in out.items())
        )
    labels = list(out)
    base, spec, two = labels[:3]
    summary = {k: _summary(v, ("mean_err", "energy", "s")) for k, v in out.items()}

    def ratio(a, b, key):
        return float(np.mean([x[key] / y[key] for x, y in zip(out[a], out[b], strict=True)]))

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
    return {"per_seed": out, "summary": summary, "ratios": ratios}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args()
    from mvlearn_ext.diffusion._demo import oracle_models, torch_models

    start = time.perf_counter()
    res = {"grape_toy": grape(range(3 if args.quick else 5), 60 if args.quick else 150)}
    res["diffusion_oracle"] = diffusion(range(3 if args.quick else 10), oracle_models)
    if not args.no_torch:
        import torch

        torch.set_num_threads(1)
        spec_iter, gen_iter = (1500, 2000) if args.quick else (4000, 6000)

        def build(data, seed):
            return torch_models(data, seed, spec_iter=spec_iter, gen_iter=gen_iter)

        res["diffusion_torch"] = diffusion(range(1 if args.quick else 3), build)
        res["diffusion_torch"]["config"] = {
            "specialist": f"2x32, {spec_iter} Adam steps",
            "generalist": f"3x128, {gen_iter} Adam steps",
            "T": 50,
            "sampler": "DDPM, sigma_t^2 = beta_t",
            "n_draws_per_condition": 16,
        }
    res["quick"] = args.quick
    res["elapsed_s"] = time.perf_counter() - start
    path = pathlib.Path(__file__).parent / "results" / "diffusion_grape.json"
    path.write_text(json.dumps(res, indent=1))
    for name, block in res.items():
        if isinstance(block, dict) and "ratios" in block:
            print(name, json.dumps(block["ratios"], indent=1))
    print(f"total {res['elapsed_s']:.0f} s -> {path}")


if __name__ == "__main__":
    main()
