"""Benchmark: HAGMVC by row blocks on views stored in zarr, against the in-memory fit.

Question
--------
Does HAGMVC, given dask arrays, fit views that do not fit in memory, with bounded memory and a time linear in n? Data: Gaussian
blobs, 3 views x 64 features, 10 clusters, cluster_std 4, float32, generated block by
block into a zarr store on disk (deleted afterwards). For each n:

* ``dask``: ``HAGMVC(n_clusters=10, random_state=0).fit`` on ``da.from_zarr`` views
  (row chunks of 65536) on a ``LocalCluster`` of 2 worker processes x 1 thread;
  fit time, peak resident memory (VmHWM) of the client process (which also runs the
  scheduler) and of each worker, ACC on the generated labels;
* ``in memory`` (only where the views fit in memory): the same views loaded as NumPy
  arrays, ``HAGMVC(n_clusters=10, random_state=0).fit`` (the in-memory algorithm),
  in its own process, for the time ratio.

Every configuration runs in its own process so that its peak memory can be read
(clear_refs 5 resets VmHWM just before the fit). The machine is shared: the load
average before and after each run is recorded, and times should be read as ratios
between runs of the same invocation.

``--method hagmvc drmc smvsc`` runs those estimators (any of hagmvc, drmc, lmvsc,
smvsc, fpmvscag, eomscca; defaults and ``random_state=0``, except the settings in
``SETTINGS``) through the same two paths. SMVSC runs with ``n_anchors=20`` (2k, in the
authors' grid {k, 2k, 3k}): with its default m = k, the authors' start on the first 10
samples, which hold 7 of the 10 blobs, leaves an anchor empty for good (a fixed point
of their algorithm; the fit warns and merges two blobs). FPMVSCAG has m = k by
definition and keeps that start: its rows show the warning's outcome (ACC about 0.9).

Run: ``python benchmarks/bench_clustering_dask.py [--method hagmvc] [--sizes 1000000 10000000]
[--in-memory-max 1000000] [--store /tmp/...] [--json PATH] [--plot PATH]``
(``--replot JSON`` redoes the table and the figure from a results file).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
from _common import run_header

N_VIEWS, N_FEATURES, N_CLUSTERS, CLUSTER_STD, CHUNK = 3, 64, 10, 4.0, 65_536
#: Estimator settings other than the defaults (see the module docstring).
SETTINGS = {"smvsc": {"n_anchors": 2 * N_CLUSTERS}}


def generate(store, n, seed=0):
    """Write the views (``view0..2``) and labels ``y`` of n samples into a zarr store."""
    import zarr

    root = zarr.open_group(store, mode="w")
    centres = _centres(seed)
    views = [
        root.create_array(
            f"view{v}", shape=(n, N_FEATURES), chunks=(CHUNK, N_FEATURES), dtype="float32"
        )
        for v in range(N_VIEWS)
    ]
    y = root.create_array("y", shape=(n,), chunks=(CHUNK,), dtype="int16")
    for b, start in enumerate(range(0, n, CHUNK)):
        stop = min(start + CHUNK, n)
        block, labels = _block(centres, seed, b, stop - start)
        y[start:stop] = labels
        for v in range(N_VIEWS):
            views[v][start:stop] = block[v]
    return store


def _centres(seed):
    return np.random.default_rng(seed).uniform(-10.0, 10.0, size=(N_VIEWS, N_CLUSTERS, N_FEATURES))


def _block(centres, seed, b, size):
    """Views and labels of block ``b`` (``size`` rows) of the data of :func:`generate`."""
    block_rng = np.random.default_rng([seed, b])
    labels = block_rng.integers(N_CLUSTERS, size=size)
    views = [
        centres[v][labels].astype(np.float32)
        + CLUSTER_STD * block_rng.standard_normal((size, N_FEATURES), dtype=np.float32)
        for v in range(N_VIEWS)
    ]
    return views, labels


def views_in_memory(n, seed=0):
    """``(Xs, y)``: the data :func:`generate` writes for ``n <= CHUNK`` samples, as arrays."""
    if n > CHUNK:
        raise ValueError(f"n must be at most {CHUNK} (one block), got {n}")
    return _block(_centres(seed), seed, 0, n)


_CHILD = r"""
import json, sys, time
import numpy as np
import zarr

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024

def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return status("VmRSS")

mode, store, verbose, method = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
settings = json.loads(sys.argv[5])
import warnings
caught = []
warnings.showwarning = lambda message, category, *args, **kw: caught.append(
    f"{category.__name__}: {message}")
import mvlearn_ext.cluster as cluster
from mvlearn_ext.metrics import clustering_accuracy

root = zarr.open_group(store, mode="r")
y = root["y"][:]
n = y.shape[0]
name = {c.lower(): c for c in cluster.__all__}[method.lower()]
est = getattr(cluster, name)(n_clusters=10, random_state=0, verbose=verbose, **settings)
out = dict(method=method, mode=mode, n=n, settings=settings,
           load_before=open("/proc/loadavg").read().split()[:3])
if mode == "memory":
    Xs = [root[f"view{v}"][:] for v in range(3)]
    base = reset_peak()
    t0 = time.perf_counter(); labels = est.fit(Xs).labels_; t = time.perf_counter() - t0
    out.update(time_s=t, client_peak_rss_mb=status("VmHWM"), client_rss_before_mb=base)
else:
    import dask.array as da
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      host="127.0.0.1", dashboard_address=None) as cluster, Client(cluster) as client:
        Xs = [da.from_zarr(root[f"view{v}"]) for v in range(3)]
        client.run(reset_peak)
        base = reset_peak()
        t0 = time.perf_counter(); est.fit(Xs); t = time.perf_counter() - t0
        labels = est.labels_.compute()
        workers = client.run(status, "VmHWM")
        out.update(time_s=t, client_peak_rss_mb=status("VmHWM"), client_rss_before_mb=base,
                   worker_peak_rss_mb=sorted(workers.values()))
out.update(ACC=float(clustering_accuracy(y, labels)), warnings=caught[:3],
           load_after=open("/proc/loadavg").read().split()[:3])
print(json.dumps(out))
"""


def run_child(mode, store, timeout, log=None, method="hagmvc"):
    """One fit in its own process; with ``log``, verbose progress goes to that file."""
    settings = json.dumps(SETTINGS.get(method, {}))
    command = [sys.executable, "-c", _CHILD, mode, store, "1" if log else "0", method, settings]
    try:
        if log:
            with open(log, "a") as err:
                out = subprocess.run(
                    command, stdout=subprocess.PIPE, stderr=err, text=True, timeout=timeout
                )
            out.stderr = open(log).read()
        else:
            out = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(mode=mode, error=f"no result within {timeout} s")
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines() or [f"exit status {out.returncode}"]
        return dict(mode=mode, error=lines[-1])
    return json.loads(out.stdout.strip().splitlines()[-1])


def markdown(rows):
    lines = [
        "| n | path | fit time (s) | time vs in memory | client peak RSS (MB) | "
        "worker peak RSS (MB) | ACC | load avg (1 min) before / after |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def key(r):
        return r["n"], r.get("method", "hagmvc")

    memory = {key(r): r["time_s"] for r in rows if r.get("mode") == "memory" and "time_s" in r}
    for r in rows:
        if "error" in r:
            lines.append(f"| {r.get('n', '?')} | {r['mode']} | {r['error']} | | | | | |")
            continue
        ratio = f"{r['time_s'] / memory[key(r)]:.2f}" if key(r) in memory else ""
        workers = ", ".join(f"{w:.0f}" for w in r.get("worker_peak_rss_mb", [])) or "-"
        settings = "".join(f" {k}={v}" for k, v in r.get("settings", {}).items())
        lines.append(
            f"| {r['n']:.0e} | {r.get('method', 'hagmvc')}{settings}, "
            f"{'dask, 2 workers, zarr' if r['mode'] == 'dask' else 'in memory'} "
            f"| {r['time_s']:.1f} | {ratio} | {r['client_peak_rss_mb']:.0f} | {workers} | "
            f"{r['ACC']:.4f} | {r['load_before'][0]} / {r['load_after'][0]} |"
        )
    return "\n".join(lines)


def read_trace(path):
    """``(seconds, total MB, max single process MB)`` from a log of ``ps`` samples.

    The log holds a ``date +%s`` line followed by ``pid rss_mb`` lines (client and
    worker processes) for every sample.
    """
    times, totals, largest, current = [], [], [], None
    for line in open(path):
        parts = line.split()
        if len(parts) == 1:
            if current is not None:
                times.append(current[0])
                totals.append(sum(current[1]))
                largest.append(max(current[1], default=0.0))
            current = (int(parts[0]), [])
        elif len(parts) == 2 and current is not None:
            current[1].append(float(parts[1]))
    t0 = times[0] if times else 0
    return np.asarray(times) - t0, np.asarray(totals), np.asarray(largest)


def plot(rows, path, trace=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3 if trace else 2, figsize=(15 if trace else 10, 3.8))
    methods = list(dict.fromkeys(r.get("method", "hagmvc") for r in rows))
    colours = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
    for colour, method in zip(colours, methods, strict=False):
        for mode, marker, where in (("dask", "o-", "dask + zarr"), ("memory", "s--", "memory")):
            pts = sorted(
                (
                    r
                    for r in rows
                    if r.get("mode") == mode
                    and r.get("method", "hagmvc") == method
                    and "time_s" in r
                ),
                key=lambda r: r["n"],
            )
            if not pts:
                continue
            ns = [r["n"] for r in pts]
            label = f"{method.upper()}, {where}"
            axes[0].loglog(ns, [r["time_s"] for r in pts], marker, color=colour, label=label)
            peak = [r["client_peak_rss_mb"] + sum(r.get("worker_peak_rss_mb", [])) for r in pts]
            axes[1].loglog(ns, [p / 1024 for p in peak], marker, color=colour, label=label)
    axes[0].set(xlabel="n samples", ylabel="fit time (s)", title="fit time")
    axes[1].axhline(6, color="grey", lw=0.8, ls=":")
    axes[1].set(xlabel="n samples", ylabel="peak RSS, client + workers (GB)", title="memory")
    if trace:
        t, total, largest = read_trace(trace)
        axes[2].plot(t / 60, total / 1024, label="client + 2 workers")
        axes[2].plot(t / 60, largest / 1024, label="largest process")
        axes[2].axhline(6, color="grey", lw=0.8, ls=":")
        axes[2].set(
            xlabel="minutes into the run", ylabel="resident memory (GB)",
            title="n = 10^7, dask, sampled every 10 s",
        )  # fmt: skip
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    p.add_argument(
        "--method", nargs="+", default=["hagmvc"],
        choices=["hagmvc", "drmc", "lmvsc", "smvsc", "fpmvscag", "eomscca"],
    )  # fmt: skip
    p.add_argument("--in-memory-max", type=int, default=1_000_000)
    p.add_argument("--store", default="/tmp/mvlearn_ext_bench_dask")
    p.add_argument("--timeout", type=int, default=2400)
    p.add_argument("--json", default=None)
    p.add_argument("--plot", default=None)
    p.add_argument("--trace", default=None, help="a log of ps samples to plot (see read_trace)")
    p.add_argument("--log", default=None, help="verbose progress of the fits to this file")
    p.add_argument("--reuse-store", action="store_true", help="use a store left by an earlier run")
    p.add_argument(
        "--replot", metavar="JSON", help="only redo the table and figure from a results file"
    )
    args = p.parse_args()
    if args.replot:
        with open(args.replot) as f:
            rows = json.load(f)["rows"]
        print(markdown(rows))
        if args.plot:
            plot(rows, args.plot, args.trace)
        return
    config = run_header("benchmarks/bench_clustering_dask.py", None)
    rows = []
    for n in args.sizes:
        store = f"{args.store}_{n}.zarr"
        try:
            t0 = time.perf_counter()
            if not (args.reuse_store and os.path.exists(store)):
                generate(store, n)
            print(f"generated n={n} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            modes = ["memory", "dask"] if n <= args.in_memory_max else ["dask"]
            for method, mode in ((method, mode) for method in args.method for mode in modes):
                row = run_child(mode, store, args.timeout, args.log, method)
                row.setdefault("n", n)
                row.setdefault("method", method)
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
                if args.json:  # after every run: a long run that is stopped keeps its rows
                    with open(args.json, "w") as f:
                        json.dump(dict(config=config, rows=rows), f, indent=1)
        finally:
            shutil.rmtree(store, ignore_errors=True)
    table = markdown(rows)
    print(table)
    if args.json:
        os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(dict(config=config, rows=rows, table=table), f, indent=1)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
