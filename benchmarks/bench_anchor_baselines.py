"""SMVSC, FPMVS-CAG and EOMSC-CA against the authors' code on Handwritten.

Questions
---------
1. With the authors' settings, do our ports reach the figures of the authors'
   MATLAB code run under GNU Octave (``shared/reference/mvc_octave``)? Two
   protocols, side by side:

   * ours: ACC / NMI of ``labels_`` (k-means with ``n_init=10`` restarts on
     the embedding), mean +- std over 10 seeds (``random_state`` 0-9);
   * the authors' evaluation script (``myNMIACCwithmean.m``): 50 single
     k-means runs (random initial centres, 100 iterations) on the
     row-normalised embedding, the best ACC and the best NMI of the 50
     (each maximised separately), mean +- std over 10 seeds of the 50 runs.

   EOMSC-CA's labels are the graph's components (no k-means): one figure.
2. Fit time of one fit (BLAS pinned to one thread inside ``fit``), with
   ConcatKMeans (k-means on the joined z-scored views) as the peer timed in
   the same run.

Handwritten is loaded unshuffled (rows ordered by digit, as the CSVs the
reference run used); the authors' codes start from the first m samples.

Run: ``python benchmarks/bench_anchor_baselines.py [--seeds 10] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from mvlearn_ext.cluster import EOMSCCA, FPMVSCAG, SMVSC, ConcatKMeans
from mvlearn_ext.datasets import load_handwritten
from mvlearn_ext.metrics import clustering_accuracy, normalized_mutual_info

#: The authors' figures (shared/reference/mvc_octave/summary.md): ACC, NMI of
#: the best of 50 k-means runs, and ACC with 10-restart k-means over seeds.
AUTHORS = {
    "FPMVSCAG m=d=k": "best of 50: 0.8235 / 0.7931; 10 restarts: 0.8235 +- 0",
    "SMVSC m=d=k": "best of 50: 0.821 / 0.789; 10 restarts: 0.810 +- 0.027",
    "SMVSC m=2k": "best of 50: 0.696 / 0.727; 10 restarts: 0.642 +- 0.035",
    "SMVSC m=3k": "best of 50: 0.658 / 0.686; 10 restarts: 0.607 +- 0.042",
    "EOMSCCA m=k, d=3k": "components: 0.760 / 0.821",
    "EOMSCCA m=d=k": "components: 0.524 / 0.638",
    "EOMSCCA m=d=2k": "components: 0.7405 / 0.8147",
    "FPMVSCAG paper variant": (
        "(ablation: the authors' code with only alpha^2 added to the Z step) "
        "best of 50: 0.608 / 0.671"
    ),
}


def configurations(k):
    return [
        ("FPMVSCAG m=d=k", lambda s: FPMVSCAG(n_clusters=k, random_state=s)),
        ("SMVSC m=d=k", lambda s: SMVSC(n_clusters=k, random_state=s)),
        ("SMVSC m=2k", lambda s: SMVSC(n_clusters=k, n_anchors=2 * k, random_state=s)),
        ("SMVSC m=3k", lambda s: SMVSC(n_clusters=k, n_anchors=3 * k, random_state=s)),
        (
            "FPMVSCAG paper variant",
            lambda s: FPMVSCAG(n_clusters=k, variant="paper", random_state=s),
        ),
        ("EOMSCCA m=k, d=3k", lambda s: EOMSCCA(n_clusters=k, n_components=3 * k)),
        ("EOMSCCA m=d=k", lambda s: EOMSCCA(n_clusters=k)),
        ("EOMSCCA m=d=2k", lambda s: EOMSCCA(n_clusters=k, n_anchors=2 * k, n_components=2 * k)),
    ]


def best_of_50(F, y, k, seed):
    """The authors' protocol: the best ACC and best NMI of 50 single k-means runs."""
    rng = np.random.RandomState(seed)
    accs, nmis = [], []
    for _ in range(50):
        labels = KMeans(
            n_clusters=k, init="random", n_init=1, max_iter=100, random_state=rng
        ).fit_predict(F)
        accs.append(clustering_accuracy(y, labels))
        nmis.append(normalized_mutual_info(y, labels))
    return max(accs), max(nmis)


def fmt(values):
    values = np.asarray(values)
    return f"{values.mean():.3f} +- {values.std():.3f}"


def run(Xs, y, k, seeds, names=None, verbose=False):
    """One row per configuration (all, or those in ``names``): scores over ``seeds``.

    ``seeds`` must start at 0: the seed-0 fit gives the timed fit, ``n_iter`` and the
    embedding scored by the best-of-50 protocol (for every seed of that protocol).
    """
    rows = []
    for name, factory in configurations(k):
        if names is not None and name not in names:
            continue
        start = time.perf_counter()
        model = factory(0).fit(Xs)
        elapsed = time.perf_counter() - start
        row = {"method": name, "fit_s": elapsed, "n_iter": int(model.n_iter_)}
        if isinstance(model, EOMSCCA):
            row["ours_acc"] = [clustering_accuracy(y, model.labels_)]
            row["ours_nmi"] = [normalized_mutual_info(y, model.labels_)]
        else:
            fits = [model] + [factory(s).fit(Xs) for s in seeds if s != 0]
            row["ours_acc"] = [clustering_accuracy(y, f.labels_) for f in fits]
            row["ours_nmi"] = [normalized_mutual_info(y, f.labels_) for f in fits]
            with threadpool_limits(limits=1):
                best = [best_of_50(model.embedding_, y, k, s) for s in seeds]
            row["max50_acc"] = [b[0] for b in best]
            row["max50_nmi"] = [b[1] for b in best]
        rows.append(row)
        if verbose:
            print(name, {key: value for key, value in row.items() if key != "method"}, flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    # Single random-start k-means runs on the (partly one-hot) embeddings can
    # pick duplicate points as centres; scikit-learn then warns once per run.
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    Xs, y = load_handwritten()
    k = 10
    seeds = range(args.seeds)
    with threadpool_limits(limits=1):
        start = time.perf_counter()
        ConcatKMeans(n_clusters=k, random_state=0).fit(Xs)
        peer = time.perf_counter() - start
    rows = run(Xs, y, k, seeds, verbose=True)
    print(f"\nPeer: ConcatKMeans fit {peer:.2f} s (same run)\n")
    print(
        "| method (Handwritten, k = 10) | ours: labels_, mean +- std over seeds (ACC / NMI) "
        "| ours: best of 50 k-means (ACC / NMI) | authors' code | fit s | x ConcatKMeans |"
    )
    print("|---|---|---|---|---|---|")
    for row in rows:
        ours = f"{fmt(row['ours_acc'])} / {fmt(row['ours_nmi'])}"
        if "max50_acc" in row:
            max50 = f"{fmt(row['max50_acc'])} / {fmt(row['max50_nmi'])}"
        else:
            ours = f"{row['ours_acc'][0]:.4f} / {row['ours_nmi'][0]:.4f} (deterministic)"
            max50 = "n/a (labels from the graph)"
        print(
            f"| {row['method']} | {ours} | {max50} | {AUTHORS[row['method']]} "
            f"| {row['fit_s']:.2f} | {row['fit_s'] / peer:.2f} |"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"peer_concat_kmeans_s": peer, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
