"""Benchmark of the anchor-graph multi-view clustering family.

Questions
---------
1. On Handwritten (6 views, n = 2000, 10 classes), how do HAGMVC and DRMC
   (reconstructions) compare with their baselines LMVSC, SMVSC, FPMVS-CAG, with
   mvlearn's dense MultiviewSpectralClustering and MultiviewCoRegSpectralClustering,
   and with scikit-learn's KMeans and SpectralClustering on the concatenated
   standardised views? ACC, NMI (arithmetic and max normalisation), ARI,
   purity and fit time, mean +- std over seeds of the whole pipeline (never a
   max over runs), all in the same run, with defaults (no tuning per data set).
2. Do fit time and peak memory grow linearly in n? make_multiview_blobs with
   3 views x 64 features, n = 10^4, 10^5, 10^6; each fit in its own process so
   its peak resident memory can be read.
3. (``--timing [N]``, alone) How long do DRMC's and HAGMVC's Handwritten fits take beside the best
   concatenation baseline (ConcatSpectral, z-scored, 10-NN)? ``N`` fits each (default
   7), interleaved, one BLAS thread (``--threads``); medians and their ratio.

mvlearn (0.5.0) no longer installs with pip because of its matplotlib pin;
install it with ``pip install --no-deps mvlearn matplotlib seaborn``. Its
dense O(n^3) methods take minutes per fit, so they run ``--mvlearn-seeds``
seeds (default 2), which the table states.

Run: ``python benchmarks/bench_clustering.py [--seeds 10] [--scaling] [--json PATH] [--plot PATH]``;
``python benchmarks/bench_clustering.py --timing [7] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from mvlearn_ext.datasets import load_handwritten
from mvlearn_ext.metrics import clustering_report


def zscore_views(Xs):
    """z-score each feature of each view (scikit-learn's ``StandardScaler``)."""
    return [StandardScaler().fit_transform(np.asarray(X, dtype=np.float64)) for X in Xs]


def standardise_views(Xs):
    """z-score each feature, then scale each view to unit total variance."""
    return [Z / np.sqrt(Z.shape[1]) for Z in zscore_views(Xs)]


def _ours(name):
    import mvlearn_ext.cluster as cluster

    return getattr(cluster, name, None)


def methods(n_clusters):
    """(name, preprocessing note, factory(seed) -> callable(Xs) -> labels, seeds key)."""
    from sklearn.cluster import KMeans, SpectralClustering

    out = []
    for cls_name in ("HAGMVC", "DRMC", "LMVSC", "SMVSC", "FPMVSCAG"):
        cls = _ours(cls_name)
        if cls is None:
            continue
        out.append(
            (
                cls_name,
                "raw views (the estimator's own documented preprocessing)",
                lambda seed, cls=cls: (
                    lambda Xs: cls(n_clusters=n_clusters, random_state=seed).fit_predict(Xs)
                ),
                "seeds",
            )
        )

    def km(seed):
        return lambda Xs: KMeans(n_clusters, n_init=10, random_state=seed).fit_predict(
            np.hstack(standardise_views(Xs))
        )

    def sc(seed):
        def run(Xs):
            model = SpectralClustering(
                n_clusters,
                affinity="nearest_neighbors",
                n_neighbors=10,
                n_init=10,
                random_state=seed,
            )
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Graph is not fully connected")
                return model.fit_predict(np.hstack(standardise_views(Xs)))

        return run

    out.append(
        (
            "sklearn KMeans (concatenated)",
            "z-score, each view scaled to unit variance",
            km,
            "seeds",
        )
    )
    out.append(("sklearn SpectralClustering 10-NN (concatenated)", "same", sc, "seeds"))
    try:
        from mvlearn.cluster import MultiviewCoRegSpectralClustering, MultiviewSpectralClustering
    except ImportError:
        return out
    for name, cls in (
        ("mvlearn MultiviewSpectralClustering", MultiviewSpectralClustering),
        ("mvlearn MultiviewCoRegSpectralClustering", MultiviewCoRegSpectralClustering),
    ):
        out.append(
            (
                name,
                "z-score per feature",
                lambda seed, cls=cls: (
                    lambda Xs: cls(n_clusters=n_clusters, random_state=seed).fit_predict(
                        zscore_views(Xs)
                    )
                ),
                "mvlearn_seeds",
            )
        )
    return out


def bench_handwritten(seeds, mvlearn_seeds, only=None):
    """One row per method fitted over its seeds; a method given 0 seeds is left out."""
    for arg, value in (("seeds", seeds), ("mvlearn_seeds", mvlearn_seeds)):
        if value < 0:
            raise ValueError(f"{arg} must be >= 0, got {value}")
    Xs, y = load_handwritten()
    n_clusters = int(np.unique(y).size)
    rows = []
    for name, prep, factory, key in methods(n_clusters):
        if only and not any(o.lower() in name.lower() for o in only):
            continue
        use = seeds if key == "seeds" else mvlearn_seeds
        if use == 0:
            print(f"  {name}: skipped (0 {key.replace('_', '-')})", file=sys.stderr, flush=True)
            continue
        scores, times = [], []
        for seed in range(use):
            fit = factory(seed)
            t0 = time.perf_counter()
            labels = fit(Xs)
            times.append(time.perf_counter() - t0)
            scores.append(clustering_report(y, labels))
        row = dict(method=name, preprocessing=prep, n_seeds=use, time_s=times)
        for metric in scores[0]:
            row[metric] = [float(s[metric]) for s in scores]
        rows.append(row)
        print(
            f"  {name}: ACC {np.mean(row['ACC']):.3f} NMI {np.mean(row['NMI']):.3f} "
            f"time {np.median(times):.2f} s ({use} seeds)",
            file=sys.stderr,
            flush=True,
        )
    return rows


def bench_timing(n_fits=7, makers=None):
    """Wall and CPU time of ``n_fits`` Handwritten fits of DRMC and HAGMVC beside ConcatSpectral.

    ``makers`` (name -> ``make(seed)`` returning an estimator with ``fit(Xs)``, the
    peer last) replaces the three estimators below, with the same protocol.

    ``DRMC(n_clusters=10, random_state=s)``, ``HAGMVC(n_clusters=10, random_state=s)``
    and the best concatenation baseline of the
    suite, ``ConcatSpectral(n_clusters=10, scaling="zscore", n_neighbors=10,
    random_state=s)``, for seeds ``s = 0 .. n_fits - 1``, interleaved (DRMC, HAGMVC,
    then the baseline, for each seed) so that both see the same machine load; one untimed fit
    of each first (imports, Numba compilation). Medians and their ratio.
    """
    from mvlearn_ext.cluster import DRMC, HAGMVC, ConcatSpectral

    Xs, y = load_handwritten()
    k = int(np.unique(y).size)
    makers = makers or {
        "DRMC": lambda s: DRMC(n_clusters=k, random_state=s),
        "HAGMVC": lambda s: HAGMVC(n_clusters=k, random_state=s),
        "ConcatSpectral (z-score, 10-NN)": lambda s: ConcatSpectral(
            n_clusters=k, scaling="zscore", n_neighbors=10, random_state=s
        ),
    }
    for make in makers.values():
        make(0).fit(Xs)
    wall = {name: [] for name in makers}
    cpu = {name: [] for name in makers}
    load_before = open("/proc/loadavg").read().split()[:3]
    for seed in range(n_fits):
        for name, make in makers.items():
            est = make(seed)
            t0, c0 = time.perf_counter(), time.process_time()
            est.fit(Xs)
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    load_after = open("/proc/loadavg").read().split()[:3]
    rows = [
        dict(method=name, wall_s=wall[name], cpu_s=cpu[name],
             median_wall_s=float(np.median(wall[name])),
             median_cpu_s=float(np.median(cpu[name])))
        for name in makers
    ]  # fmt: skip
    return dict(n_fits=n_fits, rows=rows, load_before=load_before, load_after=load_after)


def timing_markdown(timing):
    base = timing["rows"][-1]
    lines = [
        f"Handwritten, {timing['n_fits']} fits each (seeds 0-{timing['n_fits'] - 1}, "
        f"interleaved), load average {timing['load_before'][0]} before, "
        f"{timing['load_after'][0]} after.",
        "",
        "| method | median wall (s) | median CPU (s) | wall vs ConcatSpectral |",
        "|---|---|---|---|",
    ]
    for r in timing["rows"]:
        lines.append(
            f"| {r['method']} | {r['median_wall_s']:.3f} | {r['median_cpu_s']:.3f} | "
            f"{r['median_wall_s'] / base['median_wall_s']:.2f}x |"
        )
    return "\n".join(lines)


# ru_maxrss is inherited across fork/exec on Linux, so the child reads its own
# VmHWM from /proc after resetting it (clear_refs 5) just before the fit.
_SCALING_CHILD = """
import sys, time, json
import numpy as np
from mvlearn_ext.datasets import make_multiview_blobs
from mvlearn_ext.metrics import clustering_accuracy
import mvlearn_ext.cluster as cluster

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024

name, n = sys.argv[1], int(sys.argv[2])
Xs, y = make_multiview_blobs(n, n_views=3, n_features=64, n_clusters=10, cluster_std=4.0,
                             random_state=0)
est = getattr(cluster, name)(n_clusters=10, random_state=0)
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
base = status("VmRSS")
t0 = time.perf_counter(); labels = est.fit_predict(Xs); t = time.perf_counter() - t0
peak = status("VmHWM")
print(json.dumps(dict(method=name, n=n, time_s=t, peak_rss_mb=peak, rss_before_fit_mb=base,
                      data_mb=sum(X.nbytes for X in Xs) / 2**20,
                      ACC=float(clustering_accuracy(y, labels)))))
"""


def bench_scaling(names, sizes, timeout=900):
    rows = []
    for name in names:
        if _ours(name) is None:
            continue
        for n in sizes:
            try:
                out = subprocess.run(
                    [sys.executable, "-c", _SCALING_CHILD, name, str(n)],
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                )
            except subprocess.TimeoutExpired:
                rows.append(dict(method=name, n=n, error=f"no result within {timeout} s"))
                break
            if out.returncode != 0:
                lines = out.stderr.strip().splitlines() or [f"exit status {out.returncode}"]
                rows.append(dict(method=name, n=n, error=lines[-1]))
            else:
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"  scaling {rows[-1]}", file=sys.stderr, flush=True)
    return rows


def markdown(results):
    lines = []
    hw = results["handwritten"]
    lines.append(
        "| method | seeds | ACC | NMI (arith) | NMI (max) | ARI | purity | fit time (s, median) |"
    )
    lines.append("|---|---|---|---|---|---|---|---|")

    def ms(v):
        return f"{np.mean(v):.3f} ± {np.std(v):.3f}"

    for r in hw:
        lines.append(
            f"| {r['method']} | {r['n_seeds']} | {ms(r['ACC'])} | {ms(r['NMI'])} | {ms(r['NMI_max'])} | "
            f"{ms(r['ARI'])} | {ms(r['purity'])} | {np.median(r['time_s']):.3f} |"
        )
    ref = {r["method"]: np.median(r["time_s"]) for r in hw}
    peer = ref.get("mvlearn MultiviewSpectralClustering")
    if peer:
        lines.append("")
        for r in hw:
            lines.append(
                f"* {r['method']}: mvlearn MultiviewSpectralClustering time / this time = "
                f"{peer / np.median(r['time_s']):.0f}x"
            )
    if results.get("scaling"):
        lines.append("")
        lines.append(
            "| method | n | fit time (s) | ratio to previous n | peak RSS (MB) | data (MB) | ACC |"
        )
        lines.append("|---|---|---|---|---|---|---|")
        prev = {}
        for r in results["scaling"]:
            if "error" in r:
                lines.append(f"| {r['method']} | {r['n']} | failed: {r['error']} | | | | |")
                continue
            ratio = f"{r['time_s'] / prev[r['method']]:.1f}" if r["method"] in prev else ""
            prev[r["method"]] = r["time_s"]
            lines.append(
                f"| {r['method']} | {r['n']:,} | {r['time_s']:.2f} | {ratio} | "
                f"{r['peak_rss_mb']:.0f} | {r['data_mb']:.0f} | {r['ACC']:.3f} |"
            )
    return "\n".join(lines)


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hw = results["handwritten"]
    fig, axes = plt.subplots(1, 2 if results.get("scaling") else 1, figsize=(11, 4), squeeze=False)
    ax = axes[0, 0]
    for r in hw:
        ax.errorbar(
            np.median(r["time_s"]),
            np.mean(r["ACC"]),
            yerr=np.std(r["ACC"]),
            fmt="o",
            label=r["method"],
        )
    ax.set_xscale("log")
    ax.set_xlabel("fit time on Handwritten (s, log)")
    ax.set_ylabel("ACC (mean ± std over seeds)")
    ax.legend(fontsize=7)
    if results.get("scaling"):
        ax = axes[0, 1]
        for name in sorted({r["method"] for r in results["scaling"]}):
            pts = [r for r in results["scaling"] if r["method"] == name and "error" not in r]
            ax.loglog([r["n"] for r in pts], [r["time_s"] for r in pts], "o-", label=name)
        ax.set_xlabel("n (3 views x 64 features)")
        ax.set_ylabel("fit time (s)")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--mvlearn-seeds", type=int, default=2)
    p.add_argument("--only", nargs="*", help="substrings of method names to run")
    p.add_argument("--scaling", action="store_true")
    p.add_argument(
        "--timing",
        type=int,
        nargs="?",
        const=7,
        default=None,
        metavar="N_FITS",
        help="only time N_FITS (default 7) Handwritten fits of DRMC beside ConcatSpectral",
    )
    p.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    p.add_argument(
        "--threads", type=int, default=1, help="BLAS/OpenMP threads of every method (default 1)"
    )
    p.add_argument("--json", default=None)
    p.add_argument("--plot", default=None)
    args = p.parse_args(argv)
    results = {}
    if args.timing:
        with threadpool_limits(args.threads):
            results["timing"] = bench_timing(args.timing)
        print(timing_markdown(results["timing"]))
        if args.json:
            os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
        return
    with threadpool_limits(args.threads):
        results["handwritten"] = bench_handwritten(args.seeds, args.mvlearn_seeds, args.only)
    if args.scaling:
        results["scaling"] = bench_scaling(["HAGMVC", "DRMC"], args.sizes)
    print(markdown(results))
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.plot:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
