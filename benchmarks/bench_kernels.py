"""Benchmark of the foundation kernels against their peers, in one run.

Questions
---------
1. How much faster is the compiled simplex projection (Condat's algorithm in
   C++) than the vectorised NumPy sort-based projection and a Numba
   sort-based projection, on a 1,000,000 x 64 float64 matrix, on one thread?
   (Target: at least 3x faster than NumPy.) How does it scale with threads?
2. How does the compiled kNN anchor graph (tiles + bounded heaps) compare
   with a chunked BLAS NumPy version and a Numba version, on one thread and
   with threads, and what peak memory does it need when a dense n x m
   distance matrix would not fit comfortably?

Every figure is the median of several repeats, reported as a ratio against
the peer measured in the same run. BLAS threads (NumPy peer) and Numba
threads are pinned to the thread count of each row. The NumPy and Numba
peers are written in this script, as a user would write them.

Run: ``python benchmarks/bench_kernels.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numba
import numpy as np
import scipy.sparse as sp
from numba import prange
from threadpoolctl import threadpool_info, threadpool_limits

import mvlearn_ext
from mvlearn_ext.utils import anchor_graph, effective_n_jobs, project_simplex


def numpy_project_simplex(X, scale=1.0):
    """Row-wise projection onto {z >= 0, sum z = scale} by sorting, in vectorised NumPy.

    The classical sort-based method (Held, Wolfe & Crowder 1974; Duchi et al.
    2008), each row first shifted by its maximum so that rounding errors scale
    with ``scale``, not with the magnitude of the row.
    """
    X = np.asarray(X, dtype=np.float64)
    m = X.shape[1]
    X = X - X.max(axis=1, keepdims=True)
    u = -np.sort(-X, axis=1)
    css = np.cumsum(u, axis=1) - scale
    rho = m - np.argmax((u - css / np.arange(1, m + 1) > 0)[:, ::-1], axis=1)
    tau = css[np.arange(X.shape[0]), rho - 1] / rho
    return np.maximum(X - tau[:, None], 0.0)


def numpy_anchor_graph(X, anchors, n_neighbors, chunk_size=4096):
    """Parameter-free kNN anchor graph with BLAS distances by chunks of rows.

    ``||x||^2 - 2 x.a + ||a||^2`` with a matrix product per chunk,
    ``argpartition`` for the k+1 nearest, then the weights of Nie et al.
    (2016). Memory is O(chunk_size * n_anchors); exact only for moderate
    magnitudes (the squares overflow beyond about 1e154 and cancel for points
    far from the origin).
    """
    n, m = X.shape[0], anchors.shape[0]
    k = min(n_neighbors, m - 1)
    a2 = np.einsum("ij,ij->i", anchors, anchors)
    data = np.empty((n, k))
    cols = np.empty((n, k), dtype=np.int64)
    for start in range(0, n, chunk_size):
        xb = X[start : start + chunk_size]
        D = np.einsum("ij,ij->i", xb, xb)[:, None] - 2.0 * (xb @ anchors.T) + a2[None, :]
        np.maximum(D, 0.0, out=D)
        part = np.argpartition(D, k, axis=1)[:, : k + 1]
        dp = np.take_along_axis(D, part, axis=1)
        order = np.argsort(dp, axis=1)
        part = np.take_along_axis(part, order, axis=1)
        dp = np.take_along_axis(dp, order, axis=1)
        gap = dp[:, k : k + 1] - dp[:, :k]
        den = gap.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            data[start : start + chunk_size] = np.where(den > 0, gap / den, 1.0 / k)
        cols[start : start + chunk_size] = part[:, :k]
    indptr = np.arange(0, n * k + 1, k)
    return sp.csr_matrix((data.ravel(), cols.ravel(), indptr), shape=(n, m))


@numba.njit(parallel=True)
def numba_project_simplex(X, s, out):
    """Sort-based projection of every row of ``X`` into ``out``, in parallel over rows."""
    m = X.shape[1]
    for i in prange(X.shape[0]):
        ymax = X[i].max()
        u = np.sort(X[i])[::-1] - ymax
        css = 0.0
        tau = 0.0
        for j in range(m):
            css += u[j]
            t = (css - s) / (j + 1)
            if u[j] - t > 0.0:
                tau = t
        for j in range(m):
            z = (X[i, j] - ymax) - tau
            out[i, j] = z if z > 0.0 else 0.0


@numba.njit(parallel=True)
def numba_anchor_graph(X, A, k, weights, cols):
    """Parameter-free kNN anchor weights into ``weights`` and ``cols``, one sample per iteration.

    Squared distances by direct differences, the k+1 smallest kept by a stable
    insertion into a sorted buffer (ties to the lower anchor index); columns
    sorted by anchor index. Requires 1 <= k <= m - 1.
    """
    n, d = X.shape
    m = A.shape[0]
    for i in prange(n):
        bd = np.empty(k + 1)
        bi = np.empty(k + 1, dtype=np.int64)
        size = 0
        for j in range(m):
            acc = 0.0
            for f in range(d):
                diff = X[i, f] - A[j, f]
                acc += diff * diff
            if size < k + 1 or acc < bd[size - 1]:
                pos = size if size < k + 1 else k
                while pos > 0 and bd[pos - 1] > acc:
                    if pos < k + 1:
                        bd[pos] = bd[pos - 1]
                        bi[pos] = bi[pos - 1]
                    pos -= 1
                bd[pos] = acc
                bi[pos] = j
                if size < k + 1:
                    size += 1
        den = 0.0
        for j in range(k):
            den += bd[k] - bd[j]
        order = np.argsort(bi[:k])
        for jj in range(k):
            j = order[jj]
            cols[i, jj] = bi[j]
            weights[i, jj] = (bd[k] - bd[j]) / den if den > 0.0 else 1.0 / k


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def bench_simplex(n, m, repeats, threads, dtype=np.float64):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, m)).astype(dtype)
    out = np.empty_like(X)
    numba_project_simplex(X[:8].astype(np.float64), 1.0, np.empty((8, m)))  # compile
    Xd = X.astype(np.float64)
    outd = np.empty_like(Xd)
    rows = []
    for t in threads:
        with threadpool_limits(t):
            numba.set_num_threads(t)
            t_cpp = median_time(lambda t=t: project_simplex(X, out=out, n_jobs=t), repeats)
            t_nb = median_time(lambda: numba_project_simplex(Xd, 1.0, outd), repeats)
            t_np = median_time(lambda: numpy_project_simplex(X), max(1, repeats // 2))
        rows.append(dict(threads=t, cpp_s=t_cpp, numba_s=t_nb, numpy_s=t_np))
    base = rows[0]["cpp_s"]
    for r in rows:
        r["numpy_over_cpp"] = r["numpy_s"] / r["cpp_s"]
        r["numba_over_cpp"] = r["numba_s"] / r["cpp_s"]
        r["cpp_speedup_vs_1_thread"] = base / r["cpp_s"]
    return rows


def bench_anchor_graph(n, m, d, k, repeats, threads):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, d))
    A = rng.normal(size=(m, d))
    w, c = np.empty((n, k)), np.empty((n, k), dtype=np.int64)
    numba_anchor_graph(X[:8], A, k, w[:8], c[:8])  # compile
    rows = []
    for t in threads:
        with threadpool_limits(t):
            numba.set_num_threads(t)
            t_cpp = median_time(lambda t=t: anchor_graph(X, A, n_neighbors=k, n_jobs=t), repeats)
            t_np = median_time(lambda: numpy_anchor_graph(X, A, k), repeats)
            t_nb = median_time(lambda: numba_anchor_graph(X, A, k, w, c), repeats)
        rows.append(dict(threads=t, cpp_s=t_cpp, numpy_blas_s=t_np, numba_s=t_nb))
    base = rows[0]["cpp_s"]
    for r in rows:
        r["numpy_over_cpp"] = r["numpy_blas_s"] / r["cpp_s"]
        r["numba_over_cpp"] = r["numba_s"] / r["cpp_s"]
        r["cpp_speedup_vs_1_thread"] = base / r["cpp_s"]
    return rows


_MEMORY_CHILD = """
import sys, numpy as np
from mvlearn_ext.utils import anchor_graph

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

n, m, d, k = map(int, sys.argv[1:5])
rng = np.random.default_rng(2)
X = rng.normal(size=(n, d)); A = rng.normal(size=(m, d))
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset the peak-RSS counter (VmHWM) to the current RSS
before = status("VmRSS")
Z = anchor_graph(X, A, n_neighbors=k)
after = status("VmHWM")
print(before, after, X.nbytes, Z.data.nbytes + Z.indices.nbytes + Z.indptr.nbytes)
"""


def bench_memory(n, m, d, k):
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_CHILD, str(n), str(m), str(d), str(k)],
        capture_output=True,
        text=True,
        check=True,
    )
    before, after, x_bytes, z_bytes = map(int, out.stdout.split())
    return dict(
        n=n,
        m=m,
        d=d,
        k=k,
        rss_before_call_mb=before / 2**20,
        peak_rss_during_call_mb=after / 2**20,
        extra_peak_mb=(after - before) / 2**20,
        output_mb=z_bytes / 2**20,
        dense_distance_matrix_mb=n * m * 8 / 2**20,
    )


def _core_info():
    """The compiled core's build, as ``python -m mvlearn_ext info --json`` reports it."""
    out = subprocess.run(
        [sys.executable, "-m", "mvlearn_ext", "info", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout).get("compiled_core")


def environment():
    blas = [
        f"{i.get('internal_api')} {i.get('version')}"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    ]
    return dict(
        mvlearn_ext=mvlearn_ext.__version__,
        python=platform.python_version(),
        numpy=np.__version__,
        numba=numba.__version__,
        blas=blas,
        cpu=platform.processor() or platform.machine(),
        cpus=effective_n_jobs(-1),
        core=_core_info(),
    )


def markdown(results):
    lines = []
    s = results["simplex"]
    lines.append(f"Simplex projection, {s['n']} x {s['m']} float64 (median of {s['repeats']}):\n")
    lines.append(
        "| threads | C++ (s) | Numba sort (s) | NumPy sort (s) | NumPy / C++ | Numba / C++ | C++ speed-up vs 1 thread |"
    )
    lines.append("|---|---|---|---|---|---|---|")
    for r in s["rows"]:
        lines.append(
            f"| {r['threads']} | {r['cpp_s']:.3f} | {r['numba_s']:.3f} | {r['numpy_s']:.3f} | "
            f"{r['numpy_over_cpp']:.1f}x | {r['numba_over_cpp']:.1f}x | {r['cpp_speedup_vs_1_thread']:.2f}x |"
        )
    s32 = results["simplex_float32"]
    lines.append(
        f"\nfloat32 ({s32['n']} x {s32['m']}): NumPy / C++ = {s32['rows'][0]['numpy_over_cpp']:.1f}x on 1 thread.\n"
    )
    a = results["anchor_graph"]
    lines.append(
        f"kNN anchor graph, n={a['n']}, m={a['m']}, d={a['d']}, k={a['k']} float64 (median of {a['repeats']}):\n"
    )
    lines.append(
        "| threads | C++ (s) | NumPy+BLAS chunked (s) | Numba (s) | NumPy / C++ | Numba / C++ | C++ speed-up vs 1 thread |"
    )
    lines.append("|---|---|---|---|---|---|---|")
    for r in a["rows"]:
        lines.append(
            f"| {r['threads']} | {r['cpp_s']:.3f} | {r['numpy_blas_s']:.3f} | {r['numba_s']:.3f} | "
            f"{r['numpy_over_cpp']:.1f}x | {r['numba_over_cpp']:.1f}x | {r['cpp_speedup_vs_1_thread']:.2f}x |"
        )
    if "memory" in results:
        mem = results["memory"]
        lines.append(
            f"\nPeak memory, anchor graph n={mem['n']}, m={mem['m']}, d={mem['d']}, k={mem['k']}: "
            f"the call raised the process's resident memory by at most {mem['extra_peak_mb']:.0f} MB "
            f"(output {mem['output_mb']:.0f} MB), where a dense distance matrix alone would take "
            f"{mem['dense_distance_matrix_mb']:.0f} MB."
        )
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes, to check the script runs")
    p.add_argument("--json", default=None, help="write the raw results here")
    args = p.parse_args(argv)
    cpus = effective_n_jobs(-1)
    threads = sorted({1, 2, cpus} & set(range(1, cpus + 1)))
    if args.quick:
        sn, sm, srep = 20_000, 64, 3
        an, am, ad, ak, arep = 5_000, 200, 32, 5, 3
        mem = None
    else:
        sn, sm, srep = 1_000_000, 64, 5
        an, am, ad, ak, arep = 100_000, 1_000, 64, 5, 3
        mem = (1_000_000, 1_000, 16, 5)
    results = dict(environment=environment())
    results["simplex"] = dict(n=sn, m=sm, repeats=srep, rows=bench_simplex(sn, sm, srep, threads))
    results["simplex_float32"] = dict(
        n=sn, m=sm, repeats=srep, rows=bench_simplex(sn, sm, srep, [1], dtype=np.float32)
    )
    results["anchor_graph"] = dict(
        n=an,
        m=am,
        d=ad,
        k=ak,
        repeats=arep,
        rows=bench_anchor_graph(an, am, ad, ak, arep, threads),
    )
    if mem:
        results["memory"] = bench_memory(*mem)
    print(json.dumps(results["environment"], indent=1))
    print(markdown(results))
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
