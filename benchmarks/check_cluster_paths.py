"""Fingerprints of the clusterer paths that ``check_cluster_parity.py`` does not see.

``check_cluster_parity.py`` silences warnings and runs quietly. This script records, for
the anchor clusterers in memory and by row blocks, what a refactor of their shared steps
could still change: the verbose log (elapsed times and progress-bar rates blanked), every
warning (message, category, and the file and line it points at), the fitted attributes
and ``predict``, on inputs that reach the rare branches: EOMSC-CA's k-means fallback
(a graph with the wrong number of components) and the SMVSC/FPMVS-CAG warning for an
anchor left empty. Run it once per checkout and compare the two files; a warning's line
moves when the lines above the statement it points at move.

Run: ``PYTHONPATH=<checkout> python benchmarks/check_cluster_paths.py --json OUT``;
``python benchmarks/check_cluster_paths.py --compare A.json B.json`` lists the entries
that differ (exit status 1 if any), as ``check_cluster_parity.py --compare`` does.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import check_cluster_parity  # noqa: E402
from bench_clustering_dask import views_in_memory  # noqa: E402
from check_cluster_parity import ATTRIBUTES, fingerprint  # noqa: E402

from mvlearn_ext.cluster import EOMSCCA, FPMVSCAG, HAGMVC, LMVSC, SMVSC  # noqa: E402
from mvlearn_ext.datasets import make_multiview_blobs  # noqa: E402

_TIMES = re.compile(r"\d+\.\d+ ?s\b|\d+\.\d+(s/it|it/s|block/s|s/block)|\d\d:\d\d")


def record(model, Xs):
    log = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(log):
        warnings.simplefilter("always")
        model.fit(Xs)
        labels = model.predict(Xs) if hasattr(model, "predict") else None
    return {
        "attributes": {a: fingerprint(getattr(model, a)) for a in ATTRIBUTES if hasattr(model, a)},
        "predict": None if labels is None else fingerprint(labels),
        "log": _TIMES.sub("T", log.getvalue()).splitlines(),
        "warnings": [
            [str(w.message), w.category.__name__, os.path.basename(w.filename), w.lineno]
            for w in caught
        ],
    }


def run():
    blobs, _ = make_multiview_blobs(
        300, n_views=3, n_features=[5, 3, 4], n_clusters=3, cluster_std=1.5, random_state=0
    )
    noisy, _ = make_multiview_blobs(
        400, n_views=3, n_features=[6, 4, 8], n_clusters=4, noise=0.5, random_state=1
    )
    cases = {
        "SMVSC": (SMVSC(3, random_state=0), blobs),
        "SMVSC-paper": (SMVSC(3, variant="paper", max_iter=6, random_state=0), blobs),
        "FPMVSCAG": (FPMVSCAG(3, random_state=1), blobs),
        "EOMSCCA": (EOMSCCA(3, random_state=0), blobs),
        "EOMSCCA-fallback": (
            EOMSCCA(4, n_anchors=12, inner_max_iter=1, random_state=0),
            noisy,
        ),
        "EOMSCCA-fallback-2": (
            EOMSCCA(4, n_anchors=20, inner_max_iter=2, max_iter=3, random_state=2),
            noisy,
        ),
        "HAGMVC": (HAGMVC(4, random_state=0), noisy),
        "LMVSC": (LMVSC(4, n_anchors=20, random_state=0), noisy),
    }
    out = {}
    for block_size in (None, 128):
        for name, (model, Xs) in cases.items():
            model = model.set_params(verbose=1, block_size=block_size)
            out[f"{name}/{block_size}"] = record(model, Xs)
    views, _ = views_in_memory(1000)
    for make in (FPMVSCAG, SMVSC):
        for block_size in (None, 300):
            model = make(n_clusters=10, n_init=2, random_state=0, block_size=block_size)
            out[f"empty-anchor/{make.__name__}/{block_size}"] = record(model, views)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="where to write the fingerprints")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = parser.parse_args(argv)
    if args.compare:
        return check_cluster_parity.main(["--compare", *args.compare])
    out = run()
    counts = {key: len(value["warnings"]) for key, value in out.items()}
    print(f"warnings per case: {counts}", file=sys.stderr)
    if args.json:
        flat = {
            f"{key}/{part}": value for key, parts in out.items() for part, value in parts.items()
        }
        with open(args.json, "w") as f:
            json.dump(flat, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
