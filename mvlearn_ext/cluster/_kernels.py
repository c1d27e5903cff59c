"""Numba kernels of the anchor-graph clusterers.

Each kernel takes plain contiguous arrays, assumes valid input and calls
nothing above it; the NumPy drivers of :mod:`mvlearn_ext.cluster._common`
validate and call them.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from mvlearn_ext.utils._kernels import cholesky_solve
from mvlearn_ext.utils._numba import jit

__all__ = [
    "PARALLEL_ACTIVE_SET_WORK",
    "PARALLEL_FISTA_WORK",
    "fista_momentum",
    "indicator_sweeps",
    "simplex_active_set",
]


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


#: Rows per workspace of :func:`simplex_active_set` (the unit of its threads).
_ACTIVE_SET_CHUNK = 64


@jit
def _cholesky_of_subset(H, S, s, L, first):
    """Lower Cholesky factor of ``H[S[:s], S[:s]]`` into ``L[:s, :s]``; False if not PD.

    Rows before ``first`` and the columns before ``first`` of every row are taken as
    already computed (they do not depend on the indices from ``first`` on).
    """
    for a in range(first, s):
        for c in range(first, a + 1):
            acc = H[S[a], S[c]]
            for e in range(c):
                acc -= L[a, e] * L[c, e]
            if a == c:
                if not acc > 0.0:
                    return False
                L[a, a] = np.sqrt(acc)
            else:
                L[a, c] = acc / L[c, c]
    return True


@jit
def _active_set_row(H, b, z, kkt_tol, pivot_tol, max_steps, S, in_S, L, rhs, u, w, p, lam):
    """Primal active-set solve of ``min 1/2 z^T H z - b^T z`` over the simplex, one row.

    Writes the solution into ``z`` (length m) and returns ``(steps, converged)``.
    ``converged`` is False when ``max_steps`` ran out or a working set's Hessian was
    not numerically positive definite (``pivot_tol``); ``z`` is then still a point of
    the simplex (the last iterate), never worse than the best vertex.
    """
    m = b.shape[0]
    # Start at the best vertex (ties to the lowest index).
    best = 0
    best_value = 0.5 * H[0, 0] - b[0]
    for j in range(1, m):
        value = 0.5 * H[j, j] - b[j]
        if value < best_value:
            best = j
            best_value = value
    for j in range(m):
        z[j] = 0.0
        in_S[j] = False
    z[best] = 1.0
    S[0] = best
    in_S[best] = True
    s = 1
    if not H[best, best] > 0.0:
        return 0, False
    L[0, 0] = np.sqrt(H[best, best])
    steps = 0
    while steps < max_steps:
        steps += 1
        # Minimiser of the QP on the face {z_j = 0 for j not in S, 1^T z = 1}:
        # z_S = u - mu w with u = H_SS^{-1} b_S, w = H_SS^{-1} 1, 1^T z_S = 1.
        for a in range(s):
            rhs[a] = b[S[a]]
        cholesky_solve(L, s, rhs, u)
        for a in range(s):
            rhs[a] = 1.0
        cholesky_solve(L, s, rhs, w)
        sum_u = 0.0
        sum_w = 0.0
        for a in range(s):
            sum_u += u[a]
            sum_w += w[a]
        mu = (sum_u - 1.0) / sum_w
        for a in range(s):
            p[a] = u[a] - mu * w[a]
        if s == 1:
            p[0] = 1.0  # a vertex, without the rounding of the solve
        # Longest feasible step from z towards p (the first entry to hit zero blocks).
        t = 1.0
        blocking = -1
        for a in range(s):
            if p[a] < 0.0:
                za = z[S[a]]
                ta = za / (za - p[a])
                if ta < t:
                    t = ta
                    blocking = a
        if blocking < 0:
            for a in range(s):
                z[S[a]] = p[a]
            # Multipliers of the inactive bounds: lambda_j = (H z - b)_j + mu >= 0
            # (accumulated over the rows of H in S, which are contiguous).
            for j in range(m):
                lam[j] = mu - b[j]
            for a in range(s):
                row = S[a]
                pa = p[a]
                for j in range(m):
                    lam[j] += H[row, j] * pa
            entering = -1
            lowest = -kkt_tol
            for j in range(m):
                if not in_S[j] and lam[j] < lowest:
                    lowest = lam[j]
                    entering = j
            if entering < 0:
                return steps, True
            # Append the entering index to the Cholesky factor of H_SS.
            for a in range(s):
                acc = H[S[a], entering]
                for e in range(a):
                    acc -= L[a, e] * L[s, e]
                L[s, a] = acc / L[a, a]
            pivot = H[entering, entering]
            for e in range(s):
                pivot -= L[s, e] * L[s, e]
            if not pivot > pivot_tol * H[entering, entering]:
                return steps, False
            L[s, s] = np.sqrt(pivot)
            S[s] = entering
            in_S[entering] = True
            s += 1
        else:
            # Partial step; the blocking entry (and any other at zero) leaves the set.
            for a in range(s):
                j = S[a]
                z[j] += t * (p[a] - z[j])
            z[S[blocking]] = 0.0
            kept = 0
            first = -1
            for a in range(s):
                j = S[a]
                if z[j] > 0.0:
                    if first >= 0:
                        # Columns before ``first`` of the row stay valid; move them up.
                        for e in range(first):
                            L[kept, e] = L[a, e]
                    S[kept] = j
                    kept += 1
                else:
                    z[j] = 0.0
                    in_S[j] = False
                    if first < 0:
                        first = kept
            s = kept
            if not _cholesky_of_subset(H, S, s, L, first):
                return steps, False
    return steps, False


def _simplex_active_set(H, Bt, Z, steps, converged, kkt_tol, pivot_tol, max_steps):
    """Row-wise :func:`_active_set_row` over ``Bt`` (n x m), results into ``Z`` (n x m)."""
    n, m = Bt.shape
    h_max = 0.0
    for j in range(m):
        for k in range(m):
            h_max = max(h_max, abs(H[j, k]))
    # Workspaces per chunk of rows (not per row: L is m x m).
    n_chunks = (n + _ACTIVE_SET_CHUNK - 1) // _ACTIVE_SET_CHUNK
    for c in prange(n_chunks):
        S = np.empty(m, dtype=np.int64)
        in_S = np.empty(m, dtype=np.bool_)
        L = np.empty((m, m))
        work = np.empty((5, m))
        for i in range(c * _ACTIVE_SET_CHUNK, min(n, (c + 1) * _ACTIVE_SET_CHUNK)):
            # A tolerance relative to the scale of the gradient on the simplex.
            scale = h_max
            for j in range(m):
                scale = max(scale, abs(Bt[i, j]))
            steps[i], converged[i] = _active_set_row(
                H, Bt[i], Z[i], kkt_tol * scale, pivot_tol, max_steps,
                S, in_S, L, work[0], work[1], work[2], work[3], work[4],
            )  # fmt: skip


_simplex_active_set_serial = jit(_simplex_active_set)
_simplex_active_set_parallel = jit(parallel=True)(_simplex_active_set)

#: Rows x anchors from which :func:`simplex_active_set` runs the threaded build.
PARALLEL_ACTIVE_SET_WORK = 1 << 16


def simplex_active_set(H, Bt, Z, steps, converged, kkt_tol, pivot_tol, max_steps):
    """Dispatch to the serial or the threaded build of :func:`_simplex_active_set`.

    Every row is solved on its own by the same arithmetic, so both builds and
    every thread count give the same bits. ``H`` (m x m) symmetric, ``Bt`` and
    ``Z`` (n x m) float64 C-contiguous, ``steps`` (n,) int64, ``converged`` (n,)
    bool; ``kkt_tol`` is relative to ``max(|b_i|_inf, |H|_max)`` of each row.
    """
    parallel = Bt.shape[0] * Bt.shape[1] >= PARALLEL_ACTIVE_SET_WORK
    kernel = _simplex_active_set_parallel if parallel else _simplex_active_set_serial
    kernel(H, Bt, Z, steps, converged, kkt_tol, pivot_tol, max_steps)
