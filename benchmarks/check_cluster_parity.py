"""Fingerprints of every clusterer's fitted outputs, to check that a refactor changes no result.

For each clusterer of :mod:`mvlearn_ext.cluster`, each input (two generated sets and
Handwritten) and each seed, the script fits the estimator and records the SHA-256 of
its labels, embedding, view weights, graphs, objective history and ``n_iter_``, and of
``predict`` and ``transform`` on the training views where the estimator has them. The
block path (``block_size``) is fingerprinted too on the generated sets. Run it once
per checkout and compare the two files: a refactor that changes nothing numerical
gives the same file, byte for byte.

Run: ``PYTHONPATH=<checkout> python benchmarks/check_cluster_parity.py --json OUT``;
``python benchmarks/check_cluster_parity.py --compare A.json B.json`` lists the keys
that differ (exit status 1 if any).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import warnings

import numpy as np
import scipy.sparse as sp

import mvlearn_ext
from mvlearn_ext.cluster import (
    DRMC,
    EOMSCCA,
    FPMVSCAG,
    HAGMVC,
    LMVSC,
    SMVSC,
    ConcatKMeans,
    ConcatSpectral,
)
from mvlearn_ext.datasets import load_handwritten, make_multiview_blobs

#: Fitted attributes fingerprinted when the estimator has them.
ATTRIBUTES = (
    "labels_",
    "embedding_",
    "view_weights_",
    "view_weights_history_",
    "view_agreement_",
    "n_iter_",
    "objective_",
    "anchor_graph_",
    "graphs_",
    "composite_graph_",
    "anchors_",
    "consensus_anchors_",
    "projections_",
    "rotation_",
    "anchor_memberships_",
    "initial_labels_",
    "cluster_centers_",
    "inertia_",
    "affinity_matrix_",
    "singular_values_",
    "view_means_",
    "view_scales_",
    "n_anchors_",
    "graph_reg_",
    "n_inner_iter_",
)


def _digest(value, h):
    if value is None:
        h.update(b"None")
    elif sp.issparse(value):
        value = value.tocsr()
        for part in (value.indptr, value.indices, value.data):
            _digest(np.asarray(part), h)
        h.update(str(value.shape).encode())
    elif isinstance(value, (list, tuple)):
        h.update(f"seq{len(value)}".encode())
        for item in value:
            _digest(item, h)
    elif isinstance(value, np.ndarray) or np.isscalar(value):
        array = np.ascontiguousarray(np.asarray(value))
        h.update(f"{array.dtype.str}{array.shape}".encode())
        h.update(array.tobytes())
    else:
        h.update(repr(value).encode())


def fingerprint(value):
    """SHA-256 of an array, a sparse matrix, a scalar or a (nested) list of them."""
    h = hashlib.sha256()
    _digest(np.asarray(value) if hasattr(value, "__dask_graph__") else value, h)
    return h.hexdigest()


def datasets():
    blobs, _ = make_multiview_blobs(
        300, n_views=3, n_features=[5, 3, 4], n_clusters=3, cluster_std=1.5, random_state=0
    )
    noisy, _ = make_multiview_blobs(
        400, n_views=3, n_features=[6, 4, 8], n_clusters=4, noise=0.5, random_state=1
    )
    handwritten, _ = load_handwritten()
    return {"blobs": (blobs, 3), "noisy": (noisy, 4), "handwritten": (handwritten, 10)}


def estimators(k, seed):
    return {
        "ConcatKMeans": ConcatKMeans(k, random_state=seed),
        "ConcatSpectral": ConcatSpectral(k, random_state=seed),
        "LMVSC": LMVSC(k, n_anchors=30, random_state=seed),
        "SMVSC": SMVSC(k, random_state=seed),
        "SMVSC-paper": SMVSC(k, variant="paper", max_iter=10, random_state=seed),
        "FPMVSCAG": FPMVSCAG(k, random_state=seed),
        "EOMSCCA": EOMSCCA(k, random_state=seed),
        "HAGMVC": HAGMVC(k, random_state=seed),
        "DRMC": DRMC(k, random_state=seed),
        "DRMC-aligned": DRMC(k, align_anchors=True, random_state=seed),
    }


def record(model, Xs, prefix, out):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(Xs)
        for name in ATTRIBUTES:
            if hasattr(model, name):
                out[f"{prefix}/{name}"] = fingerprint(getattr(model, name))
        for method in ("predict", "transform"):
            if hasattr(model, method):
                out[f"{prefix}/{method}()"] = fingerprint(getattr(model, method)(Xs))


def run(seeds):
    out = {}
    for data_name, (Xs, k) in datasets().items():
        for seed in seeds:
            for name, model in estimators(k, seed).items():
                if data_name == "handwritten" and name in ("SMVSC-paper", "ConcatSpectral"):
                    continue
                record(model, Xs, f"{data_name}/{seed}/{name}", out)
                print(f"{data_name}/{seed}/{name}", file=sys.stderr, flush=True)
                blocks = "block_size" in model.get_params() and name != "HAGMVC-squared"
                if data_name != "handwritten" and blocks:
                    model.set_params(block_size=128)
                    record(model, Xs, f"{data_name}/{seed}/{name}/blocks", out)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="where to write the fingerprints")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = parser.parse_args(argv)
    if args.compare:
        a, b = (json.load(open(path)) for path in args.compare)
        differ = sorted(key for key in a.keys() | b.keys() if a.get(key) != b.get(key))
        print(f"{len(a)} and {len(b)} fingerprints, {len(differ)} differ")
        for key in differ:
            print("  ", key)
        return 1 if differ else 0
    out = run(args.seeds)
    print(f"{len(out)} fingerprints from {mvlearn_ext.__file__}", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=0, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
