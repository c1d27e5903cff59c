"""Numba versions of the simplex and anchor-graph kernels, and small shared Numba blocks.

The compiled C++ core is the production path; these are the Numba peers the
benchmarks time against it, and :func:`project_simplex_row` is the building
block for Numba kernels that need a simplex projection inside their own loops
(per-sample QP solvers of the anchor-graph baselines). :func:`cholesky_solve`
is the triangular solve pair of the families' small dense systems.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from mvlearn_ext.utils._numba import jit


@jit
def project_simplex_row(y, s, out):
    """Project the 1-D array ``y`` onto {z >= 0, sum z = s} into ``out``.

    Sort-based (O(m log m)); ``out`` may be ``y``. Works on ``y - max(y)``
    (the projection commutes with shifts) so that rounding errors scale with
    ``s``, not with the magnitude of ``y``.
    """
    m = y.shape[0]
    ymax = y.max()
    u = np.sort(y)[::-1] - ymax
    css = 0.0
    tau = 0.0
    for j in range(m):
        css += u[j]
        t = (css - s) / (j + 1)
        if u[j] - t > 0.0:
            tau = t
    for j in range(m):
        z = (y[j] - ymax) - tau
        out[j] = z if z > 0.0 else 0.0


@jit
def cholesky_solve(L, s, rhs, out):
    """``out[:s] = (L L^T)^{-1} rhs[:s]`` for the lower factor ``L[:s, :s]``.

    Forward then back substitution; ``out`` may be ``rhs``.
    """
    for a in range(s):
        acc = rhs[a]
        for e in range(a):
            acc -= L[a, e] * out[e]
        out[a] = acc / L[a, a]
    for a in range(s - 1, -1, -1):
        acc = out[a]
        for e in range(a + 1, s):
            acc -= L[e, a] * out[e]
        out[a] = acc / L[a, a]


@jit(parallel=True)
def project_simplex_rows(X, s, out):
    """Row-wise :func:`project_simplex_row`, in parallel over rows."""
    for i in prange(X.shape[0]):
        project_simplex_row(X[i], s, out[i])


@jit
def _wide_sq_dist(x, a):
    """``||x - a||^2`` as ``(s, e)`` with value ``s * 4**e``, ``s`` in [1, 4) (0 for x == a).

    Each difference is scaled by the power of two of the largest one (an
    exact scaling), so no square overflows or underflows for finite input.
    """
    d = x.shape[0]
    big = 0.0
    halve = False
    for f in range(d):
        diff = x[f] - a[f]
        if not np.isfinite(diff):
            halve = True
        big = max(big, abs(diff))
    if halve:
        big = 0.0
        for f in range(d):
            big = max(big, abs(0.5 * x[f] - 0.5 * a[f]))
    if big == 0.0:
        return 0.0, -(1 << 20)
    e0 = math.frexp(big)[1] - 1
    s = 0.0
    for f in range(d):
        diff = 0.5 * x[f] - 0.5 * a[f] if halve else x[f] - a[f]
        v = math.ldexp(diff, -e0)
        s += v * v
    t = (math.frexp(s)[1] - 1) // 2
    return math.ldexp(s, -2 * t), e0 + t + (1 if halve else 0)


@jit
def _wide_less(s1, e1, j1, s2, e2, j2):
    return e1 < e2 or (e1 == e2 and (s1 < s2 or (s1 == s2 and j1 < j2)))


@jit
def _wide_nearest(x, A, kk, ws, we, wi):
    """The kk nearest anchors of ``x`` by wide keys, sorted by (distance, index)."""
    size = 0
    for j in range(A.shape[0]):
        s, e = _wide_sq_dist(x, A[j])
        if size < kk or _wide_less(s, e, j, ws[size - 1], we[size - 1], wi[size - 1]):
            pos = size if size < kk else kk - 1
            while pos > 0 and _wide_less(s, e, j, ws[pos - 1], we[pos - 1], wi[pos - 1]):
                ws[pos], we[pos], wi[pos] = ws[pos - 1], we[pos - 1], wi[pos - 1]
                pos -= 1
            ws[pos], we[pos], wi[pos] = s, e, j
            if size < kk:
                size += 1


@jit(parallel=True)
def anchor_graph_rows(X, A, k, weights, cols):
    """Parameter-free kNN anchor weights, one sample per iteration.

    Exact squared distances by direct differences, then the k+1 smallest by a
    stable insertion into a sorted buffer (ties to the lower anchor index).
    A sample whose squared distances overflow or underflow is searched again
    with power-of-two scaled differences, as in the compiled kernel.
    Requires 1 <= k <= m - 1.
    """
    n, d = X.shape
    m = A.shape[0]
    tiny = np.finfo(np.float64).tiny / np.finfo(np.float64).eps
    huge = np.finfo(np.float64).max * np.finfo(np.float64).eps
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
        if not (bd[k] <= huge and bd[1] >= tiny):
            ws = np.empty(k + 1)
            we = np.empty(k + 1, dtype=np.int64)
            _wide_nearest(X[i], A, k + 1, ws, we, bi)
            for j in range(k + 1):
                bd[j] = 0.0 if ws[j] == 0.0 else math.ldexp(ws[j], 2 * max(we[j] - we[k], -2000))
        last = bd[k]
        den = 0.0
        for j in range(k):
            den += last - bd[j]
        order = np.argsort(bi[:k])
        for jj in range(k):
            j = order[jj]
            cols[i, jj] = bi[j]
            weights[i, jj] = (last - bd[j]) / den if den > 0.0 else 1.0 / k
