"""PhenoBrain and RTE against their baselines, over seeds (CPU, a few minutes on 2 cores).

Questions:

1. PhenoBrain (reconstruction): on synthetic connectomes where the label is
   a 2-hop route chosen by the phenotype, does injecting the phenotype into
   the routing kernel and the attention prior beat late fusion? Test AUC
   against logistic regression and an MLP on vec(A) + p, the same network
   with p at its head only, and without p. Criterion: PhenoBrain AUC >=
   late-fusion (logistic regression) AUC + 0.05.
2. RTE: on parameter extrapolation (quadratic, Sin-Trend, exp; train theta
   in [0.5, 1.5], targets in [1.9, 2.3], 5 context points), length
   extrapolation (compositions of depth 4-5 from a library of depth 1-3) and
   compositional extrapolation (held-out pairs of primitives), is RTE's
   query MSE below that of a model trained to predict directly? Criterion
   (quadratic): RTE MSE < 0.5 x inductive MSE.

Every method runs on the same seeded data in the same run; ratios are
reported against the baseline. Writes benchmarks/results/brain_rte.json. The
harnesses (data, splits, baselines) are the demo's, at the study's scale.

3. PhenoBrain mechanism ablation (``--ablation``): the full model, its
   routing kernel and attention prior without FiLM, the same network with
   the phenotype at the head only, without phenotype, and the scikit-learn
   late-fusion baselines, on the two-route regime (embed_dim 32) and on the
   many-route regime (``make_routed_connectomes``: a one-hot phenotype picks
   one of 8 routes, embed_dim 8, the limited width); seeds 0..N-1. The
   ablations are ``PhenoBrainClassifier``'s ``phenotype_path`` and ``film``.

4. The many-route regime at a learnable size (``--many-routes N_SUBJECTS``,
   2,400 in the user guide; with 800 subjects every method stays near
   chance): full PhenoBrain, the phenotype at the head, no FiLM, logistic
   late fusion, seeds 0..N-1.

Usage: ``python benchmarks/bench_brain_rte.py [--seeds 3] [--skip-brain] [--skip-rte]``,
``python benchmarks/bench_brain_rte.py --ablation --seeds 10`` or
``python benchmarks/bench_brain_rte.py --many-routes 2400 --seeds 10``; every mode takes
``--results-dir DIR`` to write its JSON elsewhere than benchmarks/results.
"""

import argparse
import json
import pathlib
import time

import numpy as np

from mvlearn_ext._demo.brain import phenobrain_scores
from mvlearn_ext._demo.extrapolate import discrete_scores, parameter_scores

# -- PhenoBrain ----------------------------------------------------------------------------

#: method label -> PhenoBrainClassifier keyword arguments
NETWORKS = {
    "PhenoBrain (reconstruction)": {},
    "same network, late fusion": {"phenotype_path": "head"},
    "same network, no phenotype": {"phenotype_path": "none"},
    "PhenoBrain, early stopping": {"early_stopping": True},
    "same network, late fusion, early stopping": {
        "phenotype_path": "head",
        "early_stopping": True,
    },
    "same network, no phenotype, early stopping": {
        "phenotype_path": "none",
        "early_stopping": True,
    },
    "PhenoBrain, routing and prior only (no FiLM), early stopping": {
        "film": False,
        "early_stopping": True,
    },
}

#: the networks of the mechanism ablation (each part of PhenoBrain left out in turn)
ABLATION = (
    "PhenoBrain, early stopping",
    "PhenoBrain, routing and prior only (no FiLM), early stopping",
    "same network, late fusion, early stopping",
    "same network, no phenotype, early stopping",
)


def phenobrain_benchmark(seed, *, networks=tuple(NETWORKS), **kwargs):
    """The demo's harness (``{method: (auc, seconds)}``) with the networks named by key of
    :data:`NETWORKS`; ``kwargs`` go to it (regime, subjects, epochs, patience, baselines)."""
    return phenobrain_scores(seed, networks={name: NETWORKS[name] for name in networks}, **kwargs)


# -- RTE ---------------------------------------------------------------------------------


def parameter_benchmark(family="quadratic", seed=0, **kwargs):
    """The demo's harness at the study's scale: ``{method: {"out", "in", "s"}}``."""
    return parameter_scores(seed, family=family, **kwargs)


def discrete_benchmark(seed=0, *, n_test=30, hidden_layer_sizes=(64, 64), max_iter=300, **kwargs):
    """The demo's harness at the study's scale: ``{method: {"len4", "len5", "comp", "s"}}``."""
    return discrete_scores(
        seed, n_test=n_test, hidden_layer_sizes=hidden_layer_sizes, max_iter=max_iter, **kwargs
    )


# -- runs --------------------------------------------------------------------------------


def brain_rows(seeds):
    import torch

    torch.set_num_threads(1)
    out = {}
    for seed in seeds:
        res = phenobrain_benchmark(seed, n_jobs=1)
        for name, (auc, seconds) in res.items():
            out.setdefault(name, []).append({"seed": seed, "AUC": auc, "s": seconds})
        print(f"phenobrain seed {seed}: " + ", ".join(f"{k}: {v[0]:.3f}" for k, v in res.items()))
    return out


def brain_ablation_rows(seeds, regimes=(("two_routes", 32), ("many_routes", 8)), n_subjects=None):
    """Mechanism ablation on both regimes (early stopping for every network)."""
    import torch

    torch.set_num_threads(1)
    out = {}
    for regime, embed_dim in regimes:
        block = out.setdefault(f"{regime}, embed_dim {embed_dim}", {})
        for seed in seeds:
            res = phenobrain_benchmark(
                seed,
                regime=regime,
                embed_dim=embed_dim,
                networks=ABLATION,
                n_jobs=1,
                n_subjects=n_subjects,
            )
            for name, (auc, seconds) in res.items():
                block.setdefault(name, []).append({"seed": seed, "AUC": auc, "s": seconds})
            print(
                f"ablation {regime} seed {seed}: "
                + ", ".join(f"{k}: {v[0]:.3f}" for k, v in res.items()),
                flush=True,
            )
    summary = {}
    for regime, block in out.items():
        ref = np.array([r["AUC"] for r in block["PhenoBrain, early stopping"]])
        summary[regime] = {
            name: {
                "mean": float(np.mean([r["AUC"] for r in rows])),
                "std": float(np.std([r["AUC"] for r in rows], ddof=1)),
                "PhenoBrain_minus_this_mean": float(
                    np.mean(ref - np.array([r["AUC"] for r in rows]))
                ),
                "seeds_PhenoBrain_higher": int(np.sum(ref > np.array([r["AUC"] for r in rows]))),
            }
            for name, rows in block.items()
        }
    return {"rows": out, "summary": summary}


#: Training of the many-route runs, the same for every network: early stopping (20% of the
#: training split held out), at most 100 epochs, patience 15, batch 64.
MANY_ROUTES_TRAINING = dict(regime="many_routes", embed_dim=8, n_epochs=100, n_iter_no_change=15)
MANY_ROUTES_NETWORKS = (
    "PhenoBrain, early stopping",
    "same network, late fusion, early stopping",
    "PhenoBrain, routing and prior only (no FiLM), early stopping",
)
LOGISTIC = "logistic regression, vec(A) + p (late fusion)"


def many_routes_report(n_subjects, seeds, path):
    """The many-route networks and logistic late fusion at ``n_subjects``; JSON after every seed."""
    import torch

    torch.set_num_threads(1)
    start = time.perf_counter()
    rows = {}
    res = {"n_subjects": n_subjects, "training": MANY_ROUTES_TRAINING}
    for seed in seeds:
        out = phenobrain_benchmark(
            seed,
            n_subjects=n_subjects,
            networks=MANY_ROUTES_NETWORKS,
            baselines=(LOGISTIC,),
            n_jobs=1,
            **MANY_ROUTES_TRAINING,
        )
        for name, (auc, seconds) in out.items():
            rows.setdefault(name, []).append({"seed": seed, "AUC": auc, "s": seconds})
        print(
            f"many-route n={n_subjects} seed {seed}: "
            + ", ".join(f"{k}: {v[0]:.3f}" for k, v in out.items()),
            flush=True,
        )
        res["seeds"] = [r["seed"] for r in rows[MANY_ROUTES_NETWORKS[0]]]
        res["rows"] = rows
        res["summary"] = _many_routes_summary(rows)
        res["elapsed_s"] = time.perf_counter() - start
        path.write_text(json.dumps(res, indent=1))
    return res


def _many_routes_summary(rows):
    ref = np.array([r["AUC"] for r in rows[MANY_ROUTES_NETWORKS[0]]])
    return {
        name: {
            "mean": float(np.mean([r["AUC"] for r in v])),
            "std": float(np.std([r["AUC"] for r in v], ddof=1)) if len(v) > 1 else 0.0,
            "PhenoBrain_minus_this_mean": float(np.mean(ref - [r["AUC"] for r in v])),
            "seeds_PhenoBrain_higher": int(np.sum(ref > np.array([r["AUC"] for r in v]))),
        }
        for name, v in rows.items()
    }


def merge_many_routes(results):
    """Join the per-seed-subset report files into ``phenobrain_many_routes_report.json``."""
    chunks = sorted(results.glob("phenobrain_many_routes_report_seeds*.json"))
    res, rows, elapsed = None, {}, 0.0
    for chunk in chunks:
        part = json.loads(chunk.read_text())
        res = res or part
        elapsed += part["elapsed_s"]
        for name, block in part["rows"].items():
            rows.setdefault(name, []).extend(block)
    for block in rows.values():
        block.sort(key=lambda r: r["seed"])
    res.update(rows=rows, seeds=[r["seed"] for r in rows[MANY_ROUTES_NETWORKS[0]]])
    res.update(summary=_many_routes_summary(rows), elapsed_s=elapsed)
    res["note"] = f"seeds run in {len(chunks)} processes; elapsed_s is their sum"
    (results / "phenobrain_many_routes_report.json").write_text(json.dumps(res, indent=1))
    for chunk in chunks:
        chunk.unlink()
    return res


def rte_parameter_rows(seeds):
    out = {}
    for family in ("quadratic", "sin_trend", "exp"):
        fam = out.setdefault(family, {})
        for seed in seeds:
            res = parameter_benchmark(family, seed)
            for name, r in res.items():
                fam.setdefault(name, []).append({"seed": seed, **r})
            print(
                f"rte {family} seed {seed}: "
                + ", ".join(f"{k}: {v['out']:.4f}" for k, v in res.items())
            )
    return out


def rte_discrete_rows(seeds):
    out = {}
    for seed in seeds:
        res = discrete_benchmark(seed)
        for name, r in res.items():
            out.setdefault(name, []).append({"seed": seed, **r})
        print(
            f"rte discrete seed {seed}: "
            + ", ".join(f"{k}: {v['len5']:.4f}" for k, v in res.items())
        )
    return out


def _mean(rows, key):
    return float(np.mean([r[key] for r in rows]))


def summarise(res):
    summary = {}
    if "phenobrain" in res:
        b = res["phenobrain"]
        auc = {k: _mean(v, "AUC") for k, v in b.items()}
        lr = auc["logistic regression, vec(A) + p (late fusion)"]
        pb = auc.get("PhenoBrain (reconstruction)")
        summary["phenobrain_mean_auc"] = auc
        summary["phenobrain_auc_minus_logreg"] = {k: v - lr for k, v in auc.items()}
        if pb is not None:
            summary["phenobrain_minus_logreg_auc"] = pb - lr
            summary["phenobrain_acceptance_met"] = bool(pb >= lr + 0.05)
            summary["phenobrain_minus_best_late_fusion_auc"] = pb - max(
                v for k, v in auc.items() if "late fusion" in k
            )
    if "rte_parameter" in res:
        ratios = {}
        for family, methods in res["rte_parameter"].items():
            ind_out, ind_in = _mean(methods["inductive"], "out"), _mean(methods["inductive"], "in")
            ratios[family] = {
                name: {
                    "mse_out": _mean(rows, "out"),
                    "mse_in": _mean(rows, "in"),
                    "ratio_out_vs_inductive": _mean(rows, "out") / ind_out,
                    "ratio_in_vs_inductive": _mean(rows, "in") / ind_in,
                }
                for name, rows in methods.items()
            }
        summary["rte_parameter"] = ratios
        q = ratios["quadratic"]["RTE"]["ratio_out_vs_inductive"]
        summary["rte_quadratic_acceptance_met"] = bool(q < 0.5)
    if "rte_discrete" in res:
        d = res["rte_discrete"]
        base = d["direct MLP (true code)"]
        summary["rte_discrete"] = {
            name: {
                key: {
                    "mse": _mean(rows, key),
                    "ratio_vs_direct": _mean(rows, key) / _mean(base, key),
                }
                for key in ("len4", "len5", "comp")
            }
            for name, rows in d.items()
        }
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--skip-brain", action="store_true")
    parser.add_argument("--skip-rte", action="store_true")
    parser.add_argument(
        "--ablation",
        action="store_true",
        help="only the PhenoBrain mechanism ablation on both regimes (seeds 0..N-1); "
        "writes benchmarks/results/phenobrain_ablation.json",
    )
    parser.add_argument(
        "--many-routes-subjects",
        type=int,
        default=None,
        help="with --ablation: only the many-route regime, with this many subjects "
        "(writes phenobrain_ablation_many_routes_N.json)",
    )
    parser.add_argument(
        "--many-routes",
        type=int,
        default=None,
        metavar="N_SUBJECTS",
        help="only the many-route networks at this size, seeds 0..N-1 "
        "(writes phenobrain_many_routes_report.json)",
    )
    parser.add_argument(
        "--seed-list",
        default=None,
        help="with --many-routes: these seeds only (e.g. 0,1,2; one process of "
        "several), written to phenobrain_many_routes_report_seeds<first>-<last>.json",
    )
    parser.add_argument(
        "--many-routes-merge",
        action="store_true",
        help="join the --seed-list files into phenobrain_many_routes_report.json",
    )
    parser.add_argument(
        "--results-dir",
        type=pathlib.Path,
        default=pathlib.Path(__file__).parent / "results",
        help="where the JSON files are written (default: benchmarks/results)",
    )
    args = parser.parse_args()
    results = args.results_dir
    if args.many_routes_merge:
        print(json.dumps(merge_many_routes(results)["summary"], indent=1))
        return
    if args.many_routes is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1)
        n = args.many_routes
        seeds, path = range(args.seeds), results / "phenobrain_many_routes_report.json"
        if args.seed_list is not None:
            seeds = [int(s) for s in args.seed_list.split(",")]
            path = results / f"phenobrain_many_routes_report_seeds{seeds[0]}-{seeds[-1]}.json"
        res = many_routes_report(n, seeds, path)
        print(json.dumps(res["summary"], indent=1))
        return
    if args.ablation:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1)
        start = time.perf_counter()
        n = args.many_routes_subjects
        kw = {} if n is None else {"regimes": (("many_routes", 8),), "n_subjects": n}
        res = {"seeds": list(range(args.seeds)), **brain_ablation_rows(range(args.seeds), **kw)}
        res["elapsed_s"] = time.perf_counter() - start
        name = "phenobrain_ablation" + ("" if n is None else f"_many_routes_{n}")
        path = results / f"{name}.json"
        path.write_text(json.dumps(res, indent=1))
        print(json.dumps(res["summary"], indent=1))
        return
    seeds = list(range(args.seeds))
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)  # tiny models: one BLAS thread is several times faster here
    start = time.perf_counter()
    res = {"seeds": seeds}
    timings = {}
    if not args.skip_brain:
        t = time.perf_counter()
        res["phenobrain"] = brain_rows(seeds)
        timings["phenobrain"] = time.perf_counter() - t
    if not args.skip_rte:
        t = time.perf_counter()
        res["rte_parameter"] = rte_parameter_rows(seeds)
        timings["rte_parameter"] = time.perf_counter() - t
        t = time.perf_counter()
        res["rte_discrete"] = rte_discrete_rows(seeds)
        timings["rte_discrete"] = time.perf_counter() - t
    res["summary"] = summarise(res)
    res["elapsed_s"] = {**timings, "total": time.perf_counter() - start}
    path = results / "brain_rte.json"
    path.write_text(json.dumps(res, indent=1))
    print(json.dumps(res["summary"], indent=1))
    print(f"wrote {path} ({res['elapsed_s']['total']:.0f} s)")


if __name__ == "__main__":
    main()
