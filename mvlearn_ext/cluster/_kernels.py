"""Numba kernels of the anchor-graph clusterers.

Each kernel takes plain contiguous arrays, assumes valid input and calls
nothing above it; the NumPy drivers of :mod:`mvlearn_ext.cluster._common`
validate and call them.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from mvlearn_ext.utils._numba import jit

__all__ = ["PARALLEL_FISTA_WORK", "fista_momentum", "indicator_sweeps"]


@jit
def _cluster_term(s, count, scaled):
    """Contribution ``s / sqrt(count)`` (scaled) or ``s`` of one cluster."""
    if count <= 0:
        return 0.0
    if scaled:
        return s / np.sqrt(count)
    return s


@jit
def indicator_sweeps(G, labels, scaled, max_sweeps):
    """Coordinate ascent of ``tr(Y_hat^T G)`` over indicators, in place on ``labels``.

    ``G`` is ``(n, k)``; ``labels`` an int64 array of ``n`` labels in
    ``[0, k)`` with no empty cluster. With ``scaled``, the objective is
    ``sum_j s_j / sqrt(n_j)`` with ``s_j`` the sum of ``G[i, j]`` over the
    samples of cluster ``j`` and ``n_j`` its size (the scaled indicator
    ``Y (Y^T Y)^{-1/2}``); otherwise ``sum_j s_j``. Samples are visited in
    order; each moves to the cluster of largest strict gain, and a sample
    that is alone in its cluster never moves, so no cluster empties and
    the objective never decreases. Sweeps stop when none moves, or after
    ``max_sweeps``. Returns the number of moves of the last sweep.
    """
    n, k = G.shape
    sums = np.zeros(k)
    counts = np.zeros(k, dtype=np.int64)
    for i in range(n):
        sums[labels[i]] += G[i, labels[i]]
        counts[labels[i]] += 1
    moved = 0
    for _ in range(max_sweeps):
        moved = 0
        for i in range(n):
            a = labels[i]
            if counts[a] <= 1:
                continue
            old_a = _cluster_term(sums[a], counts[a], scaled)
            new_a = _cluster_term(sums[a] - G[i, a], counts[a] - 1, scaled)
            loss = old_a - new_a
            best = a
            best_gain = 0.0
            for b in range(k):
                if b == a:
                    continue
                gain = (
                    _cluster_term(sums[b] + G[i, b], counts[b] + 1, scaled)
                    - _cluster_term(sums[b], counts[b], scaled)
                    - loss
                )
                # A move needs a gain above rounding level, so sweeps cannot cycle.
                if gain > best_gain + 1e-12 * (1.0 + abs(old_a)):
                    best_gain = gain
                    best = b
            if best != a:
                sums[a] -= G[i, a]
                counts[a] -= 1
                sums[best] += G[i, best]
                counts[best] += 1
                labels[i] = best
                moved += 1
        # Recompute the sums exactly, so that rounding does not accumulate.
        sums[:] = 0.0
        for i in range(n):
            sums[labels[i]] += G[i, labels[i]]
        if moved == 0:
            break
    return moved


def _fista_momentum(Y, Z, Z_new, t, tol, converged):
    """The bookkeeping of one FISTA step with gradient restart, row by row, in place.

    ``Z_new`` holds the projected gradient steps taken from ``Y``. For every
    row: ``converged`` is whether the step ``Y - Z_new`` is at most ``tol``
    in max-norm; if the step goes uphill (``<Y - Z_new, Z_new - Z> > 0``,
    O'Donoghue & Candès, 2015) the momentum restarts (``t = 1``), otherwise
    ``t <- (1 + sqrt(1 + 4 t^2)) / 2``; then ``Y <- Z_new + (t_old - 1) /
    t_new (Z_new - Z)`` and ``Z <- Z_new``. All arrays are ``(n, m)`` float64
    except ``t`` (n,) float64 and ``converged`` (n,) bool.
    """
    n, m = Y.shape
    for i in prange(n):
        largest = 0.0
        inner = 0.0
        for j in range(m):
            step = Y[i, j] - Z_new[i, j]
            if abs(step) > largest:
                largest = abs(step)
            inner += step * (Z_new[i, j] - Z[i, j])
        converged[i] = largest <= tol
        if inner > 0.0:
            beta = 0.0
            t[i] = 1.0
        else:
            t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t[i] * t[i]))
            beta = (t[i] - 1.0) / t_new
            t[i] = t_new
        for j in range(m):
            z = Z_new[i, j]
            Y[i, j] = z + beta * (z - Z[i, j])
            Z[i, j] = z


# Serial and threaded builds of the same row-wise kernel (each row is
# independent, so both give the same bits). The threaded one pays a fork-join
# per call, once per FISTA iteration, which costs more than it saves on small
# problems: with 2 threads LMVSC on Handwritten (2000 samples, 50 anchors) was
# 1.5-3.4x slower than with 1.
_fista_momentum_serial = jit(_fista_momentum)
_fista_momentum_parallel = jit(parallel=True)(_fista_momentum)

#: Rows x anchors from which :func:`fista_momentum` runs the threaded build.
PARALLEL_FISTA_WORK = 1 << 18


def fista_momentum(Y, Z, Z_new, t, tol, converged):
    """Dispatch to the serial or the threaded build of :func:`_fista_momentum`.

    The threaded build runs on Numba's current thread count (set it with
    :func:`mvlearn_ext.utils._numba.numba_threads`); the two builds give the
    same result.
    """
    parallel = Y.shape[0] * Y.shape[1] >= PARALLEL_FISTA_WORK
    kernel = _fista_momentum_parallel if parallel else _fista_momentum_serial
    kernel(Y, Z, Z_new, t, tol, converged)
