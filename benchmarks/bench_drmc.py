"""DRMC (reconstruction) on the multi-view clustering suite: ablations and baselines.

Questions
---------
1. Does DRMC beat the concatenation baselines (k-means and 10-NN spectral
   clustering, each on the z-scored and on the per-view balanced
   concatenation) on the development sets, on average and set by set?
2. Does the discrete feedback act: on how many fits does it change labels, and
   what is the ACC before (``initial_labels_``, the partition of the starting
   weights) and after it, on the same fit?
3. Ablations: feedback off (``max_iter=0``, the partition of the fixed
   ``sqrt(d_v)`` starting weights) and equal weights (``view_weights="uniform"``,
   the balanced concatenation).
4. ``--timing``: the fit time of DRMC with defaults on Handwritten against
   its peer ``ConcatSpectral`` (z-scored, 10-NN), fits alternated in the same
   run, medians and their ratio (timings on a shared machine are noisy; the
   ratio is the figure to compare).

Every method runs with its defaults on every set and seed (no tuning per set);
mean +- std over seeds of ACC, median fit time, all in the same run. The
held-out split (``--split eval``: scikit-learn's digits and breast cancer) is
for reporting only; DRMC's defaults were chosen on the dev split.

Run: ``python benchmarks/bench_drmc.py [--split dev|eval] [--seeds 10] [--json PATH]``
or ``python benchmarks/bench_drmc.py --timing [--repeats 11]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from mvlearn_ext.cluster import DRMC, ConcatKMeans, ConcatSpectral
from mvlearn_ext.datasets import load_handwritten, load_mvc_suite
from mvlearn_ext.metrics import clustering_accuracy


def methods():
    """(name, factory(k, seed) -> estimator, is_drmc, context of the fit)."""
    plain = contextlib.nullcontext
    rows = [
        ("DRMC", lambda k, s: DRMC(n_clusters=k, random_state=s), True),
        ("DRMC feedback off (max_iter=0)", lambda k, s: DRMC(k, max_iter=0, random_state=s), True),
        (
            "DRMC equal weights (uniform)",
            lambda k, s: DRMC(k, view_weights="uniform", random_state=s),
            True,
        ),
        ("k-means, z-scored", lambda k, s: ConcatKMeans(k, random_state=s), False),
        (
            "k-means, balanced",
            lambda k, s: ConcatKMeans(k, scaling="balanced", random_state=s),
            False,
        ),
        ("10-NN spectral, z-scored", lambda k, s: ConcatSpectral(k, random_state=s), False),
        (
            "10-NN spectral, balanced",
            lambda k, s: ConcatSpectral(k, scaling="balanced", random_state=s),
            False,
        ),
    ]
    return [(name, factory, is_drmc, plain) for name, factory, is_drmc in rows]


def run(split, seeds, datasets=None):
    """Every method on the ``split`` data sets (or those named in ``datasets``)."""
    suite = load_mvc_suite(split)
    results = {}
    for name, data in suite.items():
        if datasets is not None and name not in datasets:
            continue
        k = data.n_clusters
        row = {}
        for method, factory, is_drmc, context in methods():
            accs, times, before, changed, iters = [], [], [], [], []
            for seed in seeds:
                model = factory(k, seed)
                with warnings.catch_warnings(), context():
                    warnings.simplefilter("ignore", FutureWarning)
                    start = time.perf_counter()
                    model.fit(data.Xs)
                    times.append(time.perf_counter() - start)
                accs.append(clustering_accuracy(data.y, model.labels_))
                if is_drmc:
                    before.append(clustering_accuracy(data.y, model.initial_labels_))
                    changed.append(model.n_labels_changed_)
                    iters.append(model.n_iter_)
            entry = {"acc": accs, "time": times}
            if is_drmc:
                entry.update(
                    acc_before=before,
                    labels_changed=changed,
                    n_iter=iters,
                    weights=np.round(model.view_weights_, 3).tolist(),
                )
            row[method] = entry
            print(
                f"{name:24s} {method:32s} ACC {np.mean(accs):.3f} +- {np.std(accs):.3f}"
                f"  time {np.median(times):.3f} s",
                flush=True,
            )
        results[name] = row
    return results


def report(results):
    names = list(results)
    meths = list(next(iter(results.values())))
    lines = ["| set | " + " | ".join(meths) + " |", "|---" * (len(meths) + 1) + "|"]
    for name in names:
        cells = [
            f"{np.mean(results[name][m]['acc']):.3f} ± {np.std(results[name][m]['acc']):.3f}"
            for m in meths
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    means = [np.mean([np.mean(results[n][m]["acc"]) for n in names]) for m in meths]
    lines.append("| **mean** | " + " | ".join(f"**{v:.3f}**" for v in means) + " |")
    print("\n".join(lines))
    baselines = [m for m in meths if not m.startswith("DRMC")]
    print("\nDRMC minus the best baseline, per set:")
    for n in names:
        best = max(np.mean(results[n][m]["acc"]) for m in baselines)
        print(f"  {n}: {np.mean(results[n]['DRMC']['acc']) - best:+.3f}")
    fits = changed = 0
    gains = []
    for n in names:
        d = results[n]["DRMC"]
        fits += len(d["acc"])
        changed += sum(c > 0 for c in d["labels_changed"])
        gains.append(np.mean(d["acc"]) - np.mean(d["acc_before"]))
        print(
            f"  feedback on {n}: {sum(c > 0 for c in d['labels_changed'])}/{len(d['acc'])} fits "
            f"changed, mean labels changed {np.mean(d['labels_changed']):.1f}, ACC "
            f"{np.mean(d['acc_before']):.3f} -> {np.mean(d['acc']):.3f}, rounds "
            f"{np.mean(d['n_iter']):.1f}, weights {d['weights']}"
        )
    print(f"feedback changed labels on {changed}/{fits} fits; mean ACC gain {np.mean(gains):+.4f}")
    times = {m: np.median([np.median(results[n][m]["time"]) for n in names]) for m in meths}
    print("median fit time over sets:", {m: round(t, 3) for m, t in times.items()})


def timing(repeats):
    """Median fit times on Handwritten: DRMC (defaults) and ConcatSpectral (z-scored, 10-NN)."""
    Xs, _ = load_handwritten()
    peers = {
        "DRMC": lambda s: DRMC(n_clusters=10, random_state=s),
        "concat-spectral-z": lambda s: ConcatSpectral(10, random_state=s),
    }
    times = {name: [] for name in peers}
    cpu = {name: [] for name in peers}
    for seed in range(repeats):
        for name, factory in peers.items():  # alternated, so that both see the same load
            model = factory(seed)
            start, start_cpu = time.perf_counter(), time.process_time()
            model.fit(Xs)
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    med = {name: float(np.median(t)) for name, t in times.items()}
    med_cpu = {name: float(np.median(t)) for name, t in cpu.items()}
    ratio = med["DRMC"] / med["concat-spectral-z"]
    for name, t in times.items():
        print(
            f"{name:20s} wall median {med[name]:.3f} s (min {min(t):.3f}, max {max(t):.3f}), "
            f"CPU median {med_cpu[name]:.3f} s"
        )
    print(f"DRMC / concat-spectral-z: {ratio:.2f} wall (medians of {repeats} fits each)")
    # One BLAS thread, so on a loaded machine the process's CPU time is the
    # better estimate of the wall time on a quiet one.
    print(f"DRMC / concat-spectral-z: {med_cpu['DRMC'] / med_cpu['concat-spectral-z']:.2f} CPU")
    return {
        "wall_s": times,
        "cpu_s": cpu,
        "median_wall_s": med,
        "median_cpu_s": med_cpu,
        "ratio_wall": ratio,
        "repeats": repeats,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "eval"), default="dev")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--json", default=None)
    parser.add_argument("--timing", action="store_true", help="Handwritten fit time only")
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args(argv)
    with threadpool_limits(limits=1):
        results = timing(args.repeats) if args.timing else run(args.split, list(range(args.seeds)))
    if not args.timing:
        report(results)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1, default=float)


if __name__ == "__main__":
    main()
