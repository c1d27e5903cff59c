"""Benchmark of data-free model merging (mvlearn_ext.merging).

Questions
---------
1. Three small ReLU MLPs (64-64-64 bodies) are fine-tuned from one base
   (pre-trained on digit parity) on the disjoint digit subsets {0-3}, {4-6},
   {7-9} of scikit-learn's bundled ``load_digits`` (linear probe, then body
   and head). Merging only the bodies, without data, and scoring each task
   with its own head: how does SA-Merging (p = 0.2, T = 10, about 10.7% of
   each weight tensor kept) compare with dense task arithmetic, TIES and
   DARE at 10% density, and with magnitude top-k and random masks at SA's
   density, and with the individual experts (upper reference)? The same
   lambda for every method (0.4 and 1.0).
   Harder variant: 5 tasks of 2 classes with 32-unit bodies.
   Mean +- standard error over seeds, all methods in the same run.
2. Merge time: the median time of each merge on the same models, as a ratio
   to task arithmetic's.

3. Long-tailed digits (imbalance 20, n_max = 100, balanced test split): balanced
   accuracy overall and on many (> 40 training samples) / medium / few (< 12)
   classes of AES (reconstruction; 4 heads, entropy-aware PCGrad, label-free
   fusion) against cross-entropy, logit-adjusted CE, Balanced Softmax and
   post-hoc logit adjustment, all with the same two-stage budget
   (``--part longtail``, results in merging_longtail.json).
4. A synthetic multi-task "instruction" problem (6 tasks sharing 8 rank-1
   abilities on a 64 x 64 base layer; tasks recognisable from their token
   means): mean task MSE and cross-task gradient interference of one LoRA
   (rank 24), LoRA-MoE with random init, PiSSA-MoE without regrouping and
   BADIT (6 experts x rank 4), same steps (``--part badit``, results in
   merging_badit.json).

The merging baselines are checked in the same run against mergekit's own
task arithmetic and TIES (``mergekit.merge_methods.api``, when mergekit is
installed): the largest difference of the merged tensors and the merge time as
a ratio to mergekit's. The other peers are the baselines implemented here with
their documented conventions, in the same run.

Run: ``python benchmarks/bench_merging.py [--part merging|longtail|badit|all] [--seeds 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from _common import run_header
from threadpoolctl import threadpool_limits

from mvlearn_ext.datasets import make_digit_experts

CONFIGS = {
    "3 tasks, width 64": {"tasks": ((0, 1, 2, 3), (4, 5, 6), (7, 8, 9)), "width": 64},
    "5 tasks, width 32": {"tasks": ((0, 1), (2, 3), (4, 5), (6, 7), (8, 9)), "width": 32},
}
SCALINGS = (0.4, 1.0)


def merge_methods(problem, *, scaling=0.4, p=0.2, n_rounds=10, density=0.1, random_state=0):
    """``{method: merged body}`` for every merging method, at one ``scaling`` (lambda)."""
    from mvlearn_ext import merging

    base, experts = problem.base, problem.experts
    weights = [k for k in base if k.endswith("weight")]
    size = base[weights[0]].size
    sa_density = (merging.sa_keep_counts(size, p, n_rounds)[-1] + 0.5) / size
    return {
        "task arithmetic (dense)": merging.task_arithmetic(base, experts, scaling=scaling),
        f"TIES ({density:.0%})": merging.ties(
            base, experts, density=density, scaling=scaling, prune_keys=weights
        ),
        f"DARE ({density:.0%})": merging.dare(
            base,
            experts,
            density=density,
            scaling=scaling,
            prune_keys=weights,
            random_state=random_state,
        ),
        f"SA-Merging ({sa_density:.1%})": merging.sa_merge(
            base, experts, p=p, n_rounds=n_rounds, scaling=scaling
        ),
        f"magnitude top-k ({sa_density:.1%})": merging.magnitude_merge(
            base, experts, density=sa_density, scaling=scaling, prune_keys=weights
        ),
        f"random mask ({sa_density:.1%})": merging.random_mask_merge(
            base,
            experts,
            density=sa_density,
            scaling=scaling,
            prune_keys=weights,
            random_state=random_state,
        ),
    }


def _median_time(fn, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _time_merges(problem):
    from mvlearn_ext import merging

    b, e = problem.base, problem.experts
    w = [k for k in b if k.endswith("weight")]
    return {
        "task arithmetic": _median_time(lambda: merging.task_arithmetic(b, e)),
        "TIES": _median_time(lambda: merging.ties(b, e, density=0.1, prune_keys=w)),
        "DARE": _median_time(
            lambda: merging.dare(b, e, density=0.1, prune_keys=w, random_state=0)
        ),
        "SA-Merging": _median_time(lambda: merging.sa_merge(b, e)),
    }


def _mergekit_peer(problem):
    """Our task arithmetic and TIES against mergekit's on the same bodies (None without it)."""
    try:
        import torch
        from mergekit.merge_methods.api import merge_state_dicts
    except ImportError:
        return None
    from mvlearn_ext import merging

    b, e = problem.base, problem.experts
    models = {"base": {k: torch.from_numpy(v) for k, v in b.items()}}
    models |= {f"e{n}": {k: torch.from_numpy(v) for k, v in x.items()} for n, x in enumerate(e)}
    dtype = getattr(torch, str(next(iter(b.values())).dtype))
    cases = {
        "task arithmetic": (
            lambda: merging.task_arithmetic(b, e, scaling=0.4),
            "task_arithmetic",
            {"weight": 1.0, "lambda": 0.4},
        ),
        "TIES": (
            lambda: merging.ties(b, e, density=0.1, scaling=0.4),
            "ties",
            {"weight": 1.0, "density": 0.1, "lambda": 0.4},
        ),
    }
    out = {}
    with torch.no_grad():
        for name, (ours, method, params) in cases.items():

            def peer(method=method, params=params):
                return merge_state_dicts(
                    models, method, parameters=params, base="base", dtype=dtype
                )

            diff = max(float(np.max(np.abs(ours()[k] - peer()[k].numpy()))) for k in b)
            t_ours, t_peer = _median_time(ours, 21), _median_time(peer, 21)
            out[name] = {
                "max_abs_difference": diff,
                "ours_s": t_ours,
                "mergekit_s": t_peer,
                "time_ratio_ours_vs_mergekit": t_ours / t_peer,
            }
    return out


def run(seeds):
    results = {}
    for name, cfg in CONFIGS.items():
        acc = {}
        timing = {}
        for seed in seeds:
            problem = make_digit_experts(random_state=seed, **cfg)
            acc.setdefault("individual experts", []).append(problem.expert_accuracy)
            acc.setdefault("base model", []).append(problem.accuracy(problem.base))
            with threadpool_limits(limits=1):
                for scaling in SCALINGS:
                    for method, body in merge_methods(
                        problem, scaling=scaling, random_state=seed
                    ).items():
                        acc.setdefault(f"{method}, lambda={scaling}", []).append(
                            problem.accuracy(body)
                        )
                if seed == seeds[0]:
                    timing = _time_merges(problem)
                    peer = _mergekit_peer(problem)
        summary = {
            m: {
                "mean": float(np.mean(v)),
                "se": float(np.std(v, ddof=1) / np.sqrt(len(v))) if len(v) > 1 else None,
                "per_seed": [float(x) for x in v],
            }
            for m, v in acc.items()
        }
        ref = timing["task arithmetic"]
        results[name] = {
            "accuracy": summary,
            "merge_time_s": timing,
            "merge_time_ratio_vs_task_arithmetic": {k: v / ref for k, v in timing.items()},
            "mergekit": peer,
        }
    return results


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 4.5), squeeze=False)
    for ax, (name, res) in zip(axes[0], results.items(), strict=True):
        acc = res["accuracy"]
        methods = [m for m in acc if "lambda=0.4" in m]
        labels = [m.replace(", lambda=0.4", "") for m in methods]
        means = [acc[m]["mean"] for m in methods]
        errs = [acc[m]["se"] or 0.0 for m in methods]
        ax.barh(labels, means, xerr=errs, color="tab:blue", alpha=0.8)
        for ref, style in (("individual experts", "--"), ("base model", ":")):
            ax.axvline(acc[ref]["mean"], color="k", linestyle=style, label=ref)
        low = min(means + [acc["base model"]["mean"]]) - 0.03
        ax.set_xlim(max(low, 0.0), 1.0)
        ax.set_title(f"{name} (lambda = 0.4)")
        ax.set_xlabel("mean task accuracy (own head, merged body)")
        ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# ---------------------------------------------------------------------------
# Long-tailed digits (AES)


def run_longtail(seeds):
    import torch
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    from mvlearn_ext.longtail import AESClassifier, group_accuracy, make_long_tail_indices

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    records, times = {}, {}
    for seed in seeds:
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.4, stratify=y, random_state=seed)
        idx = make_long_tail_indices(ytr, 20, n_max=100, random_state=seed)
        Xl, yl = Xtr[idx], ytr[idx]
        counts = np.bincount(yl)

        def score(name, pred, counts=counts, yte=yte):
            rec = group_accuracy(yte, pred, counts, many_threshold=40, few_threshold=12)
            for key, value in rec.items():
                records.setdefault(name, {}).setdefault(key, []).append(value)

        configs = {
            "cross-entropy": ("ce",),
            "logit-adjusted CE": ("logit_adjusted",),
            "Balanced Softmax": ("balanced_softmax",),
            "AES (4 heads)": ("ce", "balanced_softmax", "logit_adjusted", "ars"),
        }
        for name, heads in configs.items():
            start = time.perf_counter()
            clf = AESClassifier(heads=heads, random_state=seed, n_jobs=1).fit(Xl, yl)
            times.setdefault(name, []).append(time.perf_counter() - start)
            score(name, clf.predict(Xte))
            if name == "cross-entropy":
                z = clf.decision_function_heads(Xte)[0]
                prior = np.log(clf.class_counts_ / clf.class_counts_.sum())
                score("CE + post-hoc logit adjustment", clf.classes_[(z - prior).argmax(axis=1)])
            if name.startswith("AES"):
                for k, head in enumerate(heads):
                    score(f"AES head: {head}", clf.predict_head(Xte, k))
                probs = torch.softmax(torch.as_tensor(clf.decision_function_heads(Xte)), dim=2)
                score("AES head averaging", clf.classes_[probs.mean(dim=0).argmax(dim=1).numpy()])
                score("AES soft fusion", clf.classes_[clf.soft_fusion_proba(Xte).argmax(axis=1)])
        start = time.perf_counter()
        clf = AESClassifier(combine="entropy_weighted", random_state=seed, n_jobs=1).fit(Xl, yl)
        times.setdefault("AES, code-faithful combiner (no projection)", []).append(
            time.perf_counter() - start
        )
        score("AES, code-faithful combiner (no projection)", clf.predict(Xte))
    summary = {
        name: {
            key: {"mean": float(np.mean(v)), "se": float(np.std(v, ddof=1) / np.sqrt(len(v)))}
            for key, v in rec.items()
        }
        for name, rec in records.items()
    }
    ref = float(np.median(times["cross-entropy"]))
    return {
        "accuracy": summary,
        "fit_time_s": {k: float(np.median(v)) for k, v in times.items()},
        "fit_time_ratio_vs_cross_entropy": {
            k: float(np.median(v)) / ref for k, v in times.items()
        },
    }


# ---------------------------------------------------------------------------
# BADIT on a synthetic multi-task problem


def _badit_tasks(seed, d=64, n_tasks=6, n_abilities=8, per_task=3):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(d, d)) / np.sqrt(d)
    U = np.linalg.qr(rng.normal(size=(d, n_abilities)))[0]
    V = np.linalg.qr(rng.normal(size=(d, n_abilities)))[0]
    Ws, mus = [], []
    for _ in range(n_tasks):
        c = np.zeros(n_abilities)
        support = rng.choice(n_abilities, per_task, replace=False)
        c[support] = 2 * rng.normal(size=per_task)
        Ws.append(W + (U * c) @ V.T)
        mus.append(6 * rng.normal(size=d) / np.sqrt(d))
    return W, np.array(Ws), np.array(mus)


def _badit_batch(torch, gen, Ws, mus, t, n=16, tokens=8):
    x = torch.randn(n, tokens, mus.shape[1], generator=gen, dtype=torch.float64)
    x = x + torch.as_tensor(mus[t])
    return x, x @ torch.as_tensor(Ws[t]).T


def _badit_run(method, seed, steps=300, epoch_len=50, learning_rate=5e-3):
    import torch

    from mvlearn_ext.adapters import LoRAMoELinear

    W, Ws, mus = _badit_tasks(seed)
    n_tasks = len(Ws)
    base = torch.nn.Linear(W.shape[1], W.shape[0], bias=False).double()
    with torch.no_grad():
        base.weight.copy_(torch.as_tensor(W))
    if method == "single LoRA (rank 24)":
        layer = LoRAMoELinear(base, n_experts=1, rank=24, init="random", random_state=seed)
    elif method == "LoRA-MoE, random init":
        layer = LoRAMoELinear(base, n_experts=6, rank=4, init="random", random_state=seed)
    else:
        layer = LoRAMoELinear(base, n_experts=6, rank=4, init="pissa_moe")
    regroup = method.startswith("BADIT")
    params = [p for p in layer.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=learning_rate)
    gen = torch.Generator().manual_seed(seed)
    n_epochs = steps // epoch_len
    start = time.perf_counter()
    for step in range(steps):
        opt.zero_grad()
        batches = [_badit_batch(torch, gen, Ws, mus, t) for t in range(n_tasks)]
        loss = sum(((layer(x) - y) ** 2).mean() for x, y in batches) / n_tasks
        loss.backward()
        if regroup:
            layer.accumulate_unit_gradients()
        opt.step()
        if regroup and (step + 1) % epoch_len == 0:
            if (step + 1) // epoch_len <= n_epochs / 2:
                layer.regroup(optimizer=opt, permute_gate=True, random_state=seed)
            else:  # after E/2: no more regrouping
                regroup = False
    seconds = time.perf_counter() - start
    test = torch.Generator().manual_seed(10_000 + seed)
    with torch.no_grad():
        mse = np.mean(
            [
                ((layer(x) - y) ** 2).mean().item()
                for x, y in (_badit_batch(torch, test, Ws, mus, t, n=64) for t in range(n_tasks))
            ]
        )
    grads = []
    for t in range(n_tasks):
        x, y = _badit_batch(torch, test, Ws, mus, t, n=64)
        gs = torch.autograd.grad(((layer(x) - y) ** 2).mean(), params)
        grads.append(torch.cat([g.reshape(-1) for g in gs]))
    G = torch.stack(grads)
    G = G / G.norm(dim=1, keepdim=True)
    cos = (G @ G.T).numpy()[np.triu_indices(n_tasks, 1)]
    return {
        "mse": float(mse),
        "interference": float(np.maximum(0, -cos).mean()),
        "seconds": seconds,
    }


def run_badit(seeds):
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    methods = (
        "single LoRA (rank 24)",
        "LoRA-MoE, random init",
        "PiSSA-MoE, no regroup",
        "BADIT (PiSSA-MoE + regroup)",
    )
    try:
        rec = {m: [_badit_run(m, seed) for seed in seeds] for m in methods}
    finally:
        torch.set_num_threads(previous)
    out = {}
    for m, runs in rec.items():
        out[m] = {
            key: {
                "mean": float(np.mean([r[key] for r in runs])),
                "se": float(np.std([r[key] for r in runs], ddof=1) / np.sqrt(len(runs))),
            }
            for key in ("mse", "interference", "seconds")
        }
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("merging", "longtail", "badit", "all"), default="all")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--json", default=os.path.join("benchmarks", "results", "merging.json"))
    parser.add_argument("--plot", default=os.path.join("docs", "img", "merging_digits.png"))
    args = parser.parse_args()
    header = run_header("benchmarks/bench_merging.py", None)
    seeds = list(range(args.seeds))
    if args.part in ("longtail", "all"):
        res = run_longtail(seeds[:3])
        with open(os.path.join("benchmarks", "results", "merging_longtail.json"), "w") as f:
            json.dump({"config": header, "seeds": len(seeds[:3]), "results": res}, f, indent=2)
        for name, rec in res["accuracy"].items():
            cells = "  ".join(f"{k} {v['mean']:.3f}+-{v['se']:.3f}" for k, v in rec.items())
            print(f"{name:45s} {cells}")
        print({k: round(v, 2) for k, v in res["fit_time_ratio_vs_cross_entropy"].items()})
    if args.part in ("badit", "all"):
        res = run_badit(seeds[:3])
        with open(os.path.join("benchmarks", "results", "merging_badit.json"), "w") as f:
            json.dump({"config": header, "seeds": len(seeds[:3]), "results": res}, f, indent=2)
        for name, rec in res.items():
            cells = "  ".join(f"{k} {v['mean']:.4f}+-{v['se']:.4f}" for k, v in rec.items())
            print(f"{name:35s} {cells}")
    if args.part not in ("merging", "all"):
        return
    results = run(seeds)
    with open(args.json, "w") as f:
        json.dump({"config": header, "seeds": args.seeds, "results": results}, f, indent=2)
    for name, res in results.items():
        print(f"\n== {name} ==")
        for method, s in res["accuracy"].items():
            se = f" +- {s['se']:.4f}" if s["se"] is not None else ""
            print(f"{method:45s} {s['mean']:.4f}{se}")
        for method, r in res["merge_time_ratio_vs_task_arithmetic"].items():
            print(f"time {method:20s} {res['merge_time_s'][method] * 1e3:8.2f} ms  x{r:.1f}")
        for method, r in (res["mergekit"] or {}).items():
            print(
                f"vs mergekit {method:15s} ours/mergekit x{r['time_ratio_ours_vs_mergekit']:.2f}"
                f"  max |diff| {r['max_abs_difference']:.1e}"
            )
    if args.plot:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
