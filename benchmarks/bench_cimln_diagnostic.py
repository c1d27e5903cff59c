"""What CIMLN's counterfactual masking can and cannot do on the unbalanced test bed.

A diagnostic over seeds 0-9. Two parts, both on
``make_unbalanced_views`` (1500 samples, 5 clusters, observation rates
0.95 / 0.6 / 0.3, the test bed of ``bench_deep.py --cimln unbalanced_views``):

``ceiling``
    The generator is a known Gaussian mixture, so the posterior
    ``p(y | observed views)`` is exact: the label and nuisance directions are
    recovered by replaying the generator's random stream (and checked by
    rebuilding the views bit for bit). The Bayes accuracy ``mean_i max_k
    p(y_i = k | x_i)`` bounds the expected ACC of *any* clustering of the
    same data (a clustering read through its best label matching is a
    classifier; up to the small optimism of choosing the matching on the
    same samples), whatever loss trained it. Reported overall and separately
    for the samples that observe the label-rich view 2 and those that lack it.

``probe``
    CIMLN (the benchmark's small configuration) with its causal loss at
    ``causal_weight`` 0, 0.1, 1 and 10 (``temperature=1``): ACC overall and per group (one label matching for all samples), NMI with
    ``y`` and with the nuisance ``z``, and how much of ``y`` and of ``z`` a
    linear read-out recovers from the learned embedding (5-fold
    cross-validated multinomial logistic regression on ``embedding_``, on
    the samples without view 2). Mean imputation + k-means is the peer.

Usage: ``python benchmarks/bench_cimln_diagnostic.py [ceiling|probe|plot]``;
writes ``benchmarks/results/cimln_diagnostic_<part>.json`` (after every seed)
and ``plot`` draws ``docs/img/cimln_diagnostic.png`` from the two files (the
panels: ACC by group against the Bayes ceiling, NMI of the clusters with
``y`` and ``z``, the linear read-outs).
"""

import json
import pathlib
import time

import numpy as np

RESULTS = pathlib.Path(__file__).parent / "results"
SEEDS = tuple(range(10))
N, K = 1500, 5
#: The defaults of ``make_unbalanced_views`` (replayed by :func:`generator_parameters`).
LABEL_SEP = (0.5, 1.5, 4.0)
NUISANCE_SEP = (4.0, 1.0, 0.0)
P = 10
SMALL = dict(
    hidden_layer_sizes=(64,),
    embed_dim=16,
    batch_size=256,
    n_epochs_pretrain=15,
    n_epochs=10,
    n_init=5,
)
VARIANTS = {
    "no causal loss (default)": {"causal_weight": 0.0},
    "causal loss, weight 0.1 (paper)": {"causal_weight": 0.1},
    "causal loss, weight 1": {"causal_weight": 1.0},
    "causal loss, weight 10": {"causal_weight": 10.0},
}
#: short labels of the plot's x axis
SHORT = {
    "no causal loss (default)": "none",
    "causal loss, weight 0.1 (paper)": "0.1",
    "causal loss, weight 1": "1",
    "causal loss, weight 10": "10",
    "mean imputation + k-means (peer)": "mean imp.\n+ k-means",
}


def generator_parameters(seed):
    """``(Xs, y, mask, z, label_dirs, nuisance_dirs)`` of ``make_unbalanced_views(N, seed)``.

    The directions are recovered by replaying the generator's random stream;
    the views are rebuilt from them and compared with the generator's output.
    """
    from mvlearn_ext.incomplete import make_unbalanced_views

    Xs, y, mask, z = make_unbalanced_views(N, random_state=seed, return_nuisance=True)
    rng = np.random.RandomState(seed)
    y2 = rng.randint(0, K, size=N)
    z2 = rng.randint(0, K, size=N)
    a, b = [], []
    for v in range(3):
        dirs = rng.normal(size=(2, K, P))
        dirs /= np.linalg.norm(dirs, axis=2, keepdims=True)
        X = LABEL_SEP[v] * dirs[0][y2] + NUISANCE_SEP[v] * dirs[1][z2] + rng.normal(size=(N, P))
        if not np.array_equal(X, Xs[v]):
            raise RuntimeError("the replay of make_unbalanced_views does not match its output")
        a.append(dirs[0])
        b.append(dirs[1])
    if not (np.array_equal(y, y2) and np.array_equal(z, z2)):
        raise RuntimeError("the replay of make_unbalanced_views does not match its output")
    return Xs, y, mask, z, a, b


def exact_posteriors(Xs, mask, a, b):
    """``p(y | observed views)`` and ``p(z | observed views)``, each of shape (N, K)."""
    from scipy.special import logsumexp

    # log p(x_obs | y = k, z = l), summed over the observed views
    ll = np.zeros((N, K, K))
    for v in range(3):
        mean = LABEL_SEP[v] * a[v][:, None, :] + NUISANCE_SEP[v] * b[v][None, :, :]  # (K, K, P)
        sq = ((Xs[v][:, None, None, :] - mean[None]) ** 2).sum(-1)
        ll += np.where(mask[:, v][:, None, None], -0.5 * sq, 0.0)
    joint = ll - logsumexp(ll, axis=(1, 2), keepdims=True)
    return np.exp(logsumexp(joint, axis=2)), np.exp(logsumexp(joint, axis=1))


def groups(mask):
    return {
        "all": np.ones(len(mask), bool),
        "view 2 observed": mask[:, 2],
        "view 2 missing": ~mask[:, 2],
    }


def ceiling_rows(seeds=SEEDS, on_seed=None):
    out = {}
    for seed in seeds:
        Xs, y, mask, z, a, b = generator_parameters(seed)
        py, pz = exact_posteriors(Xs, mask, a, b)
        row = {"seed": seed}
        for g, sel in groups(mask).items():
            row[f"Bayes ACC y, {g}"] = float(py[sel].max(1).mean())
            row[f"Bayes ACC z, {g}"] = float(pz[sel].max(1).mean())
            row[f"share, {g}"] = float(sel.mean())
        row["share with one observed view"] = float((mask.sum(1) == 1).mean())
        out.setdefault("exact Bayes classifier", []).append(row)
        print(
            f"ceiling seed {seed}: "
            + ", ".join(f"{k} {v:.3f}" for k, v in row.items() if k != "seed"),
            flush=True,
        )
        if on_seed is not None:
            on_seed(out)
    return out


def _matched_hits(y, labels):
    """Per-sample hit (bool) under the best one-to-one matching of clusters to classes."""
    from scipy.optimize import linear_sum_assignment

    table = np.zeros((labels.max() + 1, y.max() + 1))
    np.add.at(table, (labels, y), 1)
    r, c = linear_sum_assignment(-table)
    mapping = dict(zip(r, c, strict=True))
    return np.array([mapping.get(lab, -1) for lab in labels]) == y


def _probe(E, t, seed):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    return float(cross_val_score(model, E, t, cv=cv).mean())


def _score(seed, y, z, mask, labels, E, t):
    """ACC by group (one matching), NMI with ``y`` and ``z``, linear read-outs of ``E``."""
    from sklearn.metrics import normalized_mutual_info_score as nmi

    hits = _matched_hits(y, labels)
    miss2 = ~mask[:, 2]
    row = {"seed": seed, "s": t}
    for g, sel in groups(mask).items():
        row[f"ACC, {g}"] = float(hits[sel].mean())
    row["NMI y"] = float(nmi(y, labels))
    row["NMI z"] = float(nmi(z, labels))
    row["probe y, view 2 missing"] = _probe(E[miss2], y[miss2], seed)
    row["probe z, view 2 missing"] = _probe(E[miss2], z[miss2], seed)
    return row


def probe_rows(seeds=SEEDS, on_seed=None):
    import torch
    from sklearn.cluster import KMeans

    from mvlearn_ext.incomplete import CIMLN, mask_views, mean_impute

    torch.set_num_threads(1)
    out = {}
    for seed in seeds:
        Xs, y, mask, z, _, _ = generator_parameters(seed)
        for name, extra in VARIANTS.items():
            t = time.perf_counter()
            model = CIMLN(n_clusters=K, random_state=seed, **SMALL, **extra).fit(
                mask_views(Xs, mask)
            )
            t = time.perf_counter() - t
            row = _score(seed, y, z, mask, model.labels_, model.embedding_, t)
            last = model.loss_curve_[-1]
            row.update({"final causal loss": last["causal"], "final rec loss": last["rec"]})
            out.setdefault(name, []).append(row)
        Xi = mean_impute(Xs, mask)
        Zi = np.hstack([(X - X.mean(0)) / (X.std(0) + 1e-12) for X in Xi])
        t = time.perf_counter()
        lab = KMeans(K, n_init=10, random_state=seed).fit_predict(Zi)
        row = _score(seed, y, z, mask, lab, Zi, time.perf_counter() - t)
        out.setdefault("mean imputation + k-means (peer)", []).append(row)
        print(
            f"probe seed {seed}: "
            + "; ".join(
                f"{k}: ACC {v[-1]['ACC, all']:.3f} py {v[-1]['probe y, view 2 missing']:.3f} "
                f"pz {v[-1]['probe z, view 2 missing']:.3f}"
                for k, v in out.items()
            ),
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
                float(np.std([r[key] for r in rows], ddof=1)),
            ]
            for key in rows[0]
            if key != "seed"
        }
        for name, rows in block.items()
        if len(rows) > 1
    }


def run(part, seeds=SEEDS):
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    path = RESULTS / f"cimln_diagnostic_{part}.json"
    start = time.perf_counter()

    def write(rows):
        done = sorted({r["seed"] for v in rows.values() for r in v})
        res = {"seeds": done, "rows": rows, "summary": _summary(rows)}
        res["elapsed_s"] = time.perf_counter() - start
        path.write_text(json.dumps(res, indent=1))
        return res

    rows = {"ceiling": ceiling_rows, "probe": probe_rows}[part](seeds, on_seed=write)
    print(json.dumps(write(rows)["summary"], indent=1))


def plot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ceil = json.loads((RESULTS / "cimln_diagnostic_ceiling.json").read_text())["summary"]
    probe = json.loads((RESULTS / "cimln_diagnostic_probe.json").read_text())["summary"]
    bayes = ceil["exact Bayes classifier"]
    names = list(probe)
    short = [SHORT.get(name, name) for name in names]
    fig, (ax1, ax3, ax2) = plt.subplots(1, 3, figsize=(16, 4.2))
    gs = ["all", "view 2 observed", "view 2 missing"]
    width = 0.8 / (len(names) + 1)
    x = np.arange(len(gs))
    ax1.bar(
        x, [bayes[f"Bayes ACC y, {g}"][0] for g in gs], width, label="Bayes ceiling", color="k"
    )
    for i, name in enumerate(names):
        ax1.bar(
            x + (i + 1) * width,
            [probe[name][f"ACC, {g}"][0] for g in gs],
            width,
            yerr=[probe[name][f"ACC, {g}"][1] for g in gs],
            label=short[i],
        )
    ax1.axhline(1 / K, color="grey", ls=":", lw=1)
    ax1.set_xticks(x + 0.4, gs)
    ax1.set_ylabel("ACC (mean over seeds 0-9)")
    ax1.set_title("label ACC by group; causal weight in legend")
    ax1.legend(fontsize=7, ncol=2)
    xi = np.arange(len(names))
    for key, marker in (("probe y, view 2 missing", "o"), ("probe z, view 2 missing", "s")):
        ax2.errorbar(
            xi,
            [probe[n][key][0] for n in names],
            yerr=[probe[n][key][1] for n in names],
            marker=marker,
            ls="",
            capsize=3,
            label=key.replace("probe ", "linear read-out of ").replace(", view 2 missing", ""),
        )
    ax2.axhline(
        bayes["Bayes ACC y, view 2 missing"][0], color="C0", ls="--", lw=1, label="Bayes, y"
    )
    ax2.axhline(
        bayes["Bayes ACC z, view 2 missing"][0], color="C1", ls="--", lw=1, label="Bayes, z"
    )
    ax2.set_xticks(xi, short, fontsize=8)
    for key, marker in (("NMI y", "o"), ("NMI z", "s")):
        ax3.errorbar(
            xi,
            [probe[n][key][0] for n in names],
            yerr=[probe[n][key][1] for n in names],
            marker=marker,
            ls="",
            capsize=3,
            label=f"{key} of the clusters",
        )
    ax3.set_xticks(xi, short, fontsize=8)
    ax3.set_ylabel("NMI (mean over seeds 0-9)")
    ax3.set_title("what the clusters follow: label y or nuisance z")
    ax3.legend(fontsize=7)
    ax2.set_ylabel("5-fold accuracy (samples without view 2)")
    ax2.set_title("what the embedding holds, by causal loss")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    out = pathlib.Path(__file__).parents[1] / "docs" / "img" / "cimln_diagnostic.png"
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", nargs="?", default="ceiling", choices=["ceiling", "probe", "plot"])
    part = parser.parse_args().part
    if part == "plot":
        plot()
    else:
        run(part)
