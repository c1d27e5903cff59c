"""HAG-MVC level / co-evolution / weighting ablation on the multi-view clustering suite.

For every set of the chosen split it runs the concatenation baselines
(``ConcatKMeans`` and ``ConcatSpectral``, each on z-scored and on per-view balanced
concatenations) and HAGMVC configurations that differ from the defaults in one
or two switches: number of levels (1, 2, 3), co-evolution sweeps (0: the initial
pyramid; 2: the default, one anchor move; 5), the view weighting ("auto" or
"uniform") and the neighbours per sample (8, the default, or 5). Mean ACC over seeds
(and std) per set; fit time is the median.

Run: ``python benchmarks/bench_hagmvc_ablation.py [--split dev|eval] [--seeds 3]
[--configs NAME ...] [--sets NAME ...] [--no-baselines] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np

from mvlearn_ext.cluster import HAGMVC, ConcatKMeans, ConcatSpectral
from mvlearn_ext.datasets import load_mvc_dataset, mvc_suite_names
from mvlearn_ext.metrics import clustering_accuracy

BASELINES = {
    "kmeans-zscore": lambda k, s: ConcatKMeans(k, scaling="zscore", random_state=s),
    "kmeans-balanced": lambda k, s: ConcatKMeans(k, scaling="balanced", random_state=s),
    "spectral-zscore": lambda k, s: ConcatSpectral(k, scaling="zscore", random_state=s),
    "spectral-balanced": lambda k, s: ConcatSpectral(k, scaling="balanced", random_state=s),
}

CONFIGS = {
    "default (L1, 2 sweeps, auto, 8 neighbours)": {},
    "L1, 2 sweeps, 5 neighbours": dict(n_neighbors=5),
    "L1, 0 sweeps": dict(max_iter=0),
    "L2, 0 sweeps": dict(n_levels=2, max_iter=0),
    "L2, 2 sweeps": dict(n_levels=2),
    "L2, 5 sweeps": dict(n_levels=2, max_iter=5),
    "L3, 2 sweeps": dict(n_levels=3),
    "default, uniform weights": dict(view_weights="uniform"),
}


def run(split, seeds, configs, baselines=True, sets=None):
    rows = []
    for name in mvc_suite_names(split):
        if sets and name not in sets:
            continue
        Xs, y = load_mvc_dataset(name, return_Xs_y=True)
        k = int(np.unique(y).size)
        methods = dict(BASELINES) if baselines else {}
        for label, kwargs in configs.items():
            methods["HAGMVC " + label] = lambda k, s, kw=kwargs: HAGMVC(k, random_state=s, **kw)
        for method, factory in methods.items():
            accs, times = [], []
            for seed in range(seeds):
                model = factory(k, seed)
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    labels = model.fit_predict(Xs)
                times.append(time.perf_counter() - t0)
                accs.append(float(clustering_accuracy(y, labels)))
            row = dict(set=name, method=method, ACC=accs, time_s=times)
            rows.append(row)
            print(
                f"{name:22s} {method:40s} ACC {np.mean(accs):.3f} ± {np.std(accs):.3f} "
                f"time {np.median(times):.2f} s",
                file=sys.stderr,
                flush=True,
            )
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--split", default="dev", choices=["dev", "eval"])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--configs", nargs="*", help="substrings of configuration names")
    p.add_argument("--no-baselines", action="store_true")
    p.add_argument("--sets", nargs="*", help="names of the sets to run (default: the split)")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    configs = {
        k: v for k, v in CONFIGS.items() if not args.configs or any(c in k for c in args.configs)
    }
    rows = run(args.split, args.seeds, configs, not args.no_baselines, args.sets)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
