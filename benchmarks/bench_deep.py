"""Deep-method demos against their baselines, over seeds (CPU, about a minute).

Question: on Handwritten (6 views, 2000 samples) with CIMLN's unbalanced
missing-view protocol (eta = 0.5), does CIMLN cluster better than mean
imputation followed by k-means or by LMVSC, and than LMVSC on the complete
cases only? And does VisualScore's Gaussian reward beat the binary reward
(toy GRPO scorer)? Writes benchmarks/results/deep.json.
"""

import json
import pathlib
import time

import numpy as np


def cimln_rows(seeds):
    import torch
    from sklearn.cluster import KMeans

    from mvlearn_ext.cluster import LMVSC
    from mvlearn_ext.datasets import load_handwritten
    from mvlearn_ext.deep.incomplete import CIMLN
    from mvlearn_ext.incomplete import make_unbalanced_mask, mask_views, mean_impute
    from mvlearn_ext.metrics import clustering_report

    torch.set_num_threads(1)
    Xs, y = load_handwritten()
    out = {}

    def add(name, seed, labels, yy, t):
        rep = clustering_report(yy, labels)
        out.setdefault(name, []).append(
            {"seed": seed, "ACC": rep["ACC"], "NMI": rep["NMI"], "s": t}
        )

    for seed in seeds:
        m = make_unbalanced_mask(2000, 6, random_state=seed)
        kw = dict(hidden=(128,), embed_dim=32, batch_size=256, pretrain_epochs=15, epochs=10)
        for name, extra in (
            ("CIMLN", {}),
            ("CIMLN no causal", {"causal_weight": 0.0}),
            ("CIMLN no meta-gen", {"use_meta": False}),
        ):
            t = time.perf_counter()
            lab = CIMLN(n_clusters=10, random_state=seed, n_init=5, **kw, **extra).fit_predict(
                mask_views(Xs, m)
            )
            add(name, seed, lab, y, time.perf_counter() - t)
        Xi = mean_impute(Xs, m)
        Z = np.hstack([(X - X.mean(0)) / (X.std(0) + 1e-12) for X in Xi])
        t = time.perf_counter()
        add(
            "mean imputation + k-means",
            seed,
            KMeans(10, n_init=10, random_state=seed).fit_predict(Z),
            y,
            time.perf_counter() - t,
        )
        t = time.perf_counter()
        add(
            "mean imputation + LMVSC",
            seed,
            LMVSC(n_clusters=10, random_state=seed).fit_predict(Xi),
            y,
            time.perf_counter() - t,
        )
        cc = m.all(1)
        t = time.perf_counter()
        add(
            "LMVSC complete cases only (scored on them)",
            seed,
            LMVSC(n_clusters=10, random_state=seed).fit_predict([X[cc] for X in Xs]),
            y[cc],
            time.perf_counter() - t,
        )
    return out


def main():
    seeds = (0, 1, 2)
    res = {"cimln_handwritten_eta0.5": cimln_rows(seeds)}
    from mvlearn_ext.rl._toy import TASKS, evaluate_scorer, make_quality_tasks, train_scorer

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
                    **{k: ev[k][0] for k in TASKS},
                    "zero_adv": st["zero_advantage_share"],
                }
            )
    res["visualscore_toy_srcc"] = vs
    path = pathlib.Path(__file__).parent / "results" / "deep.json"
    path.write_text(json.dumps(res, indent=1))
    for block in res.values():
        for name, rows in block.items():
            keys = [k for k in rows[0] if k != "seed"]
            print(name, {k: round(float(np.mean([r[k] for r in rows])), 3) for k in keys})


if __name__ == "__main__":
    main()
