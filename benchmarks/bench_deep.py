"""Deep-method demos against their baselines, over seeds (CPU, about a minute).

Without options: does VisualScore's Gaussian reward beat the binary reward
(toy GRPO scorer, 3 seeds)? Writes benchmarks/results/deep.json.

``--cimln PART`` runs one part of the CIMLN comparison instead, seeds 0-9:
CIMLN (the paper's configuration ``causal_weight=0.1``, no causal loss, no
meta-generation) against mean imputation + k-means / HAGMVC / LMVSC and
complete-case HAGMVC / LMVSC on the unbalanced-observation test bed
``make_unbalanced_views`` (rates 0.95 / 0.6 / 0.3, label in the poorly
observed view, a nuisance clustering in the well observed one), and CIMLN's
default architecture against mean imputation + HAGMVC on Handwritten. Each
part rewrites its JSON after every seed. PART is one of ``unbalanced_views``,
``unbalanced_views_baselines`` (its non-CIMLN rows only, to rerun them when
a clusterer's default changes), ``handwritten_default_config``
(``CIMLN(causal_weight=0.1)`` with the estimator's defaults otherwise),
``handwritten_default_nocausal`` (``CIMLN()``) or ``handwritten_hagmvc``
(mean imputation + HAGMVC, the anchor baseline); it writes
benchmarks/results/cimln_PART.json. ``--results-dir DIR`` writes the files to DIR
instead.
"""

import json
import pathlib
import time

import numpy as np

#: CIMLN variants of the ablation (keyword arguments on top of the small configuration)
_PAPER = {"causal_weight": 0.1}
CIMLN_VARIANTS = {
    "CIMLN": _PAPER,
    "CIMLN no causal": {**_PAPER, "causal_weight": 0.0},
    "CIMLN no meta-gen": {**_PAPER, "missing_view_fill": "mean"},
}


def cimln_unbalanced_rows(seeds, on_seed=None, variants=CIMLN_VARIANTS):
    """The unbalanced-observation test bed (``make_unbalanced_views``, rates 0.95 / 0.6 / 0.3).

    ``variants`` (name -> CIMLN parameters) are the CIMLN rows; ``{}`` runs the
    baselines only (the part ``unbalanced_views_baselines``).
    """
    import torch
    from sklearn.cluster import KMeans
    from sklearn.metrics import normalized_mutual_info_score

    from mvlearn_ext.cluster import HAGMVC, LMVSC
    from mvlearn_ext.incomplete import CIMLN, make_unbalanced_views, mask_views, mean_impute
    from mvlearn_ext.metrics import clustering_accuracy

    torch.set_num_threads(1)
    out = {}
    k = 5

    def add(name, seed, labels, y, z, t):
        out.setdefault(name, []).append(
            {
                "seed": seed,
                "ACC": clustering_accuracy(y, labels),
                "NMI": normalized_mutual_info_score(y, labels),
                "NMI_nuisance": normalized_mutual_info_score(z, labels),
                "s": t,
            }
        )

    def std(X):
        return (X - X.mean(0)) / (X.std(0) + 1e-12)

    for seed in seeds:
        Xs, y, m, z = make_unbalanced_views(1500, random_state=seed, return_nuisance=True)
        kw = dict(
            hidden_layer_sizes=(64,),
            embed_dim=16,
            batch_size=256,
            n_epochs_pretrain=15,
            n_epochs=10,
            n_init=5,
        )
        for name, extra in variants.items():
            t = time.perf_counter()
            lab = CIMLN(n_clusters=k, random_state=seed, **kw, **extra).fit_predict(
                mask_views(Xs, m)
            )
            add(name, seed, lab, y, z, time.perf_counter() - t)
        Xi = mean_impute(Xs, m)
        t = time.perf_counter()
        lab = KMeans(k, n_init=10, random_state=seed).fit_predict(np.hstack([std(X) for X in Xi]))
        add("mean imputation + k-means", seed, lab, y, z, time.perf_counter() - t)
        for cls in (HAGMVC, LMVSC):
            t = time.perf_counter()
            lab = cls(n_clusters=k, random_state=seed).fit_predict(Xi)
            add(f"mean imputation + {cls.__name__}", seed, lab, y, z, time.perf_counter() - t)
            cc = m.all(1)
            t = time.perf_counter()
            lab = cls(n_clusters=k, random_state=seed).fit_predict([X[cc] for X in Xs])
            add(
                f"{cls.__name__} complete cases only (scored on them)",
                seed,
                lab,
                y[cc],
                z[cc],
                time.perf_counter() - t,
            )
        t = time.perf_counter()
        lab = KMeans(k, n_init=10, random_state=seed).fit_predict(
            np.hstack([std(Xi[1]), std(Xi[2])])
        )
        add(
            "reference: mean imputation + k-means on views 1-2 (oracle drops view 0)",
            seed,
            lab,
            y,
            z,
            time.perf_counter() - t,
        )
        print(
            f"cimln unbalanced seed {seed}: "
            + ", ".join(f"{name} {rows[-1]['ACC']:.3f}" for name, rows in out.items()),
            flush=True,
        )
        if on_seed is not None:
            on_seed(out)
    return out


def cimln_anchor_rows(seeds, on_seed=None):
    """Mean imputation + HAGMVC on Handwritten (eta = 0.5), the anchor baseline.

    The same masks as the other Handwritten parts; complete-case HAGMVC for reference.
    """
    from mvlearn_ext.cluster import HAGMVC
    from mvlearn_ext.datasets import load_handwritten
    from mvlearn_ext.incomplete import make_unbalanced_mask, mean_impute
    from mvlearn_ext.metrics import clustering_report

    Xs, y = load_handwritten()
    out = {}
    for seed in seeds:
        m = make_unbalanced_mask(2000, 6, random_state=seed)
        cc = m.all(1)
        for name, views, yy in (
            ("mean imputation + HAGMVC", mean_impute(Xs, m), y),
            ("HAGMVC complete cases only (scored on them)", [X[cc] for X in Xs], y[cc]),
        ):
            t = time.perf_counter()
            lab = HAGMVC(n_clusters=10, random_state=seed).fit_predict(views)
            rep = clustering_report(yy, lab)
            out.setdefault(name, []).append(
                {"seed": seed, "ACC": rep["ACC"], "NMI": rep["NMI"], "s": time.perf_counter() - t}
            )
        print(f"cimln anchor seed {seed}: " + str({k: v[-1]["ACC"] for k, v in out.items()}))
        if on_seed is not None:
            on_seed(out)
    return out


def cimln_default_rows(seeds, on_seed=None, variants=None):
    """The default configuration on Handwritten (eta = 0.5), with and without the causal loss.

    ``variants`` maps row names to keyword arguments on top of the estimator's
    defaults (default: the paper's causal loss, ``causal_weight=0.1``).
    """
    import torch

    from mvlearn_ext.datasets import load_handwritten
    from mvlearn_ext.incomplete import CIMLN, make_unbalanced_mask, mask_views
    from mvlearn_ext.metrics import clustering_report

    torch.set_num_threads(1)
    Xs, y = load_handwritten()
    out = {}
    if variants is None:
        variants = {"CIMLN(causal_weight=0.1)": _PAPER}
    for seed in seeds:
        m = make_unbalanced_mask(2000, 6, random_state=seed)
        for name, extra in variants.items():
            t = time.perf_counter()
            lab = CIMLN(n_clusters=10, random_state=seed, **extra).fit_predict(mask_views(Xs, m))
            rep = clustering_report(y, lab)
            out.setdefault(name, []).append(
                {"seed": seed, "ACC": rep["ACC"], "NMI": rep["NMI"], "s": time.perf_counter() - t}
            )
        print(
            f"cimln default seed {seed}: " + str({k: v[-1]["ACC"] for k, v in out.items()}),
            flush=True,
        )
        if on_seed is not None:
            on_seed(out)
    return out


def _summary(block):
    return {
        name: {
            key: [
                float(np.mean([r[key] for r in rows])),
                float(np.std([r[key] for r in rows], ddof=1)) if len(rows) > 1 else 0.0,
            ]
            for key in rows[0]
            if key != "seed"
        }
        for name, rows in block.items()
    }


#: ``--cimln PART`` -> ``rows(seeds, on_seed=None)``
CIMLN_PARTS = {
    "unbalanced_views": cimln_unbalanced_rows,
    "unbalanced_views_baselines": lambda seeds, on_seed=None: cimln_unbalanced_rows(
        seeds, on_seed, variants={}
    ),
    "handwritten_default_config": cimln_default_rows,
    "handwritten_hagmvc": cimln_anchor_rows,
    "handwritten_default_nocausal": lambda seeds, on_seed=None: cimln_default_rows(
        seeds,
        on_seed,
        variants={"CIMLN()": {}},
    ),
}


RESULTS = pathlib.Path(__file__).parent / "results"


def main_cimln(part, n_seeds=10, seeds=None, results=RESULTS):
    """One part of the CIMLN study; writes benchmarks/results/cimln_<part>.json.

    ``seeds`` (a subset, to spread a part over processes) writes
    ``cimln_<part>_seeds<first>-<last>.json`` instead; :func:`merge_cimln`
    joins those files.
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    path = results / f"cimln_{part}.json"
    if seeds is None:
        seeds = list(range(n_seeds))
    else:
        path = results / f"cimln_{part}_seeds{seeds[0]}-{seeds[-1]}.json"
    start = time.perf_counter()
    run = CIMLN_PARTS[part]

    def write(rows):
        done = sorted({r["seed"] for v in rows.values() for r in v})
        res = {"seeds": done, "rows": rows}
        res["summary"] = _summary(rows)
        res["elapsed_s"] = time.perf_counter() - start
        path.write_text(json.dumps(res, indent=1))
        return res

    res = write(run(seeds, on_seed=write))
    print(json.dumps(res["summary"], indent=1))


def merge_cimln(part, results=RESULTS):
    """Join the per-seed-subset files of ``part`` into ``cimln_<part>.json`` (and remove them)."""
    chunks = sorted(results.glob(f"cimln_{part}_seeds*.json"))
    rows, elapsed = {}, 0.0
    for chunk in chunks:
        res = json.loads(chunk.read_text())
        elapsed += res["elapsed_s"]
        for name, block in res["rows"].items():
            rows.setdefault(name, []).extend(block)
    for block in rows.values():
        block.sort(key=lambda r: r["seed"])
    done = sorted({r["seed"] for v in rows.values() for r in v})
    res = {"seeds": done, "rows": rows, "summary": _summary(rows)}
    res["elapsed_s"] = elapsed
    res["note"] = f"seeds run in {len(chunks)} processes; elapsed_s is their sum"
    (results / f"cimln_{part}.json").write_text(json.dumps(res, indent=1))
    for chunk in chunks:
        chunk.unlink()
    print(json.dumps(res["summary"], indent=1))


def main():
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cimln", choices=sorted(CIMLN_PARTS), help="run one CIMLN part")
    parser.add_argument(
        "--seed-list",
        help="comma-separated seeds of a CIMLN part (one process of several), e.g. 0,1,2",
    )
    parser.add_argument("--cimln-merge", metavar="PART", help="join the per-seed-list files")
    parser.add_argument(
        "--results-dir", type=pathlib.Path, default=RESULTS, help="where the JSON files go"
    )
    args = parser.parse_args()
    if args.cimln_merge:
        merge_cimln(args.cimln_merge, args.results_dir)
        return
    if args.cimln:
        seeds = None
        if args.seed_list:
            seeds = [int(s) for s in args.seed_list.split(",")]
        main_cimln(args.cimln, seeds=seeds, results=args.results_dir)
        return
    seeds = (0, 1, 2)
    res = {}
    from mvlearn_ext.rl import QUALITY_TASKS, evaluate_scorer, make_quality_tasks, train_scorer

    vs = {}
    for reward, filters in (
        ("gaussian", True),
        ("gaussian", False),
        ("binary", True),
        ("binary", False),
        ("mae", False),
    ):
        for seed in seeds:
            phi, task, q = make_quality_tasks(1600, random_state=seed)
            pol, st = train_scorer(
                phi[:1000],
                task[:1000],
                q[:1000],
                reward=reward,
                filters=filters,
                random_state=seed,
            )
            ev = evaluate_scorer(pol, phi[1000:], task[1000:], q[1000:])
            vs.setdefault(f"{reward} filters={filters}", []).append(
                {
                    "seed": seed,
                    **{k: ev[k][0] for k in QUALITY_TASKS},
                    "zero_adv": st["zero_advantage_share"],
                }
            )
    res["visualscore_toy_srcc"] = vs
    path = args.results_dir / "deep.json"
    path.write_text(json.dumps(res, indent=1))
    for block in res.values():
        for name, rows in block.items():
            keys = [k for k in rows[0] if k != "seed"]
            print(name, {k: round(float(np.mean([r[k] for r in rows])), 3) for k in keys})


if __name__ == "__main__":
    main()
