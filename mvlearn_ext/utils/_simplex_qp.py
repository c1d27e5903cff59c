"""The simplex QP of the package, solved once for every caller.

    Z = argmin over columns z_i of the probability simplex of 1/2 z_i^T H z_i - b_i^T z_i,

for a symmetric positive semidefinite ``H`` (m x m) shared by every column
``b_i`` of ``B`` (m x n). The anchor-graph clusterers solve one QP per
sample (thousands of columns, tens to hundreds of anchors); the
multi-objective weights (MGDA, DREAM) solve one column with a handful of
tasks and a Gram matrix that is often singular. Both go through
:func:`simplex_qp`:

* ``method="active_set"`` (exact): a primal active-set method per column
  in a Numba kernel; a column it cannot finish (a singular face, too many
  steps) goes to the first-order method from its iterate, and is then
  polished by the KKT system of its support and certified by the KKT
  conditions (with every face tried when ``m <= 12`` and that fails).
* ``method="fista"`` (first order): accelerated projected gradient on all
  the columns at once, warm-startable, stopped by ``tol`` / ``max_iter``.

Each column is solved on its own by the same arithmetic, so the result does
not depend on the other columns, on blocks of columns or on the thread count.
"""

from __future__ import annotations

import itertools

import numpy as np
from numba import prange

from mvlearn_ext._lib import effective_n_jobs
from mvlearn_ext._lib._kernels import project_simplex
from mvlearn_ext.utils._kernels import cholesky_solve
from mvlearn_ext.utils._numba import jit, numba_threads
from mvlearn_ext.utils._threads import with_single_threaded_pools

__all__ = ["simplex_qp"]


# --------------------------------------------------------------------------- Numba kernels


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
# problems (a few thousand rows of tens of entries).
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


# --------------------------------------------------------------------------- first-order method

#: Columns per block of the first-order method (memory only: the columns are independent).
_FISTA_BLOCK = 16_384


def _fista_rows(Hs, Bt, Z, step, max_iter, tol, threads):
    """FISTA with restart on the rows of ``Z`` (one QP per row); see :func:`simplex_qp`."""
    n = Z.shape[0]
    out = Z
    active = np.arange(n)
    Z = Z.copy()
    Y = Z.copy()
    t = np.ones(n)
    converged = np.zeros(n, dtype=bool)
    n_iter = 0
    with numba_threads(threads):
        while active.size and n_iter < max_iter:
            n_iter += 1
            # Projected gradient step from Y: Pi(Y - (Y H - B^T) / L), projected in place.
            buffer = Y @ Hs
            buffer -= Bt
            buffer *= -step
            buffer += Y
            project_simplex(buffer, axis=1, out=buffer, n_threads=threads)
            # Convergence test, restart, momentum; Z <- the step, Y <- its extrapolation.
            fista_momentum(Y, Z, buffer, t, tol, converged)
            if converged.any():
                # Each row stops on its own criterion, so that its solution does
                # not depend on the other rows solved with it.
                out[active[converged]] = Z[converged]
                keep = ~converged
                active, Z, Y, t, Bt = active[keep], Z[keep], Y[keep], t[keep], Bt[keep]
                converged = converged[keep]
    out[active] = Z
    return out, n_iter


def _fista(H, B, Z0, max_iter, tol, threads):
    """``(Z, n_iter)`` of the first-order method (see :func:`simplex_qp`)."""
    m, n = B.shape
    L = float(np.linalg.eigvalsh((H + H.T) / 2)[-1]) if m > 1 else float(H[0, 0])
    scale = max(float(np.abs(H).max()), 1e-300)
    if L <= 1e-14 * scale or L <= 0.0:
        Z = np.zeros((m, n))
        Z[np.argmax(B, axis=0), np.arange(n)] = 1.0
        return Z, 0
    # Work on the transposes (one QP per row, C-contiguous), so that the
    # projections and the removal of converged columns touch contiguous memory.
    Bt = np.ascontiguousarray(B.T)
    if Z0 is None:
        Z = project_simplex(Bt / L, axis=1, n_threads=threads)
    else:
        Z = project_simplex(
            np.array(np.asarray(Z0, dtype=np.float64).T, order="C"), axis=1, n_threads=threads
        )
    step = 1.0 / L
    Hs = np.ascontiguousarray((H + H.T) / 2)
    # Columns are independent (each stops on its own criterion), so they are
    # solved by blocks: the same result, with temporaries of one block only.
    n_iter = 0
    for start in range(0, n, _FISTA_BLOCK):
        block = slice(start, start + _FISTA_BLOCK)
        Z[block], block_iter = _fista_rows(Hs, Bt[block], Z[block], step, max_iter, tol, threads)
        n_iter = max(n_iter, block_iter)
    return np.ascontiguousarray(Z.T), n_iter


# --------------------------------------------------------------------------- KKT certificate

#: Multiplier tolerance of the active-set method, relative to ``max(|b|_inf, |H|_max)``.
_ACTIVE_SET_KKT_TOL = 1e-11
#: Smallest pivot of a working set's Cholesky factor, relative to the entering diagonal.
_ACTIVE_SET_PIVOT_TOL = 1e-10
#: KKT tolerance of a polished column, relative to ``max(|b|_inf, |H|_max)``: the
#: least-squares solve of a singular face system is accurate to a few ulps of its
#: scale times its condition, looser than the active-set factor's.
_CERTIFICATE_TOL = 1e-10
#: Entries of a first-order iterate below this fraction of its largest entry are
#: taken as off its support.
_SUPPORT_TOL = 1e-12
#: Largest ``m`` for which a column that fails its certificate tries every face.
_ENUMERATE_MAX = 12


def _kkt_certified(H, b, z, tol):
    """Whether ``z`` (on the simplex) satisfies the KKT conditions of its QP to ``tol``.

    With ``g = H z - b``: ``g`` is equal on the support of ``z`` (to its least
    value there, ``nu``) and at least ``nu`` off it, relative to the column's
    scale ``max(|b|_inf, |H|_max)``.
    """
    g = H @ z - b
    support = z > 0.0
    nu = g[support].min()
    scale = max(float(np.abs(b).max()), float(np.abs(H).max()), np.finfo(float).tiny)
    slack = tol * scale
    return bool(np.all(g[support] - nu <= slack) and np.all(g[~support] >= nu - slack))


def _face_minimiser(H, b, support, start=None):
    """A minimiser of the QP on the face of ``support``, or None if off the simplex.

    Solves the face's KKT system ``H_SS z_S + mu 1 = b_S``, ``1^T z_S = 1`` by
    least squares, which is exact when ``H_SS`` is singular and the system
    consistent (a face of minimisers); from ``start``, the correction of least
    norm, so that the minimiser nearest a first-order iterate is kept.
    """
    idx = np.flatnonzero(support)
    k = idx.size
    A = np.zeros((k + 1, k + 1))
    A[:k, :k] = H[np.ix_(idx, idx)]
    A[:k, k] = 1.0
    A[k, :k] = 1.0
    rhs = np.append(b[idx], 1.0)
    x0 = np.zeros(k + 1)
    if start is not None:
        x0[:k] = start[idx]
        x0[k] = np.mean(b[idx] - H[idx] @ start)
    x = x0 + np.linalg.lstsq(A, rhs - A @ x0, rcond=None)[0]
    if x[:k].min() < -1e-12 or not x[:k].sum() > 0.0:
        return None
    z = np.zeros(H.shape[0])
    z[idx] = np.clip(x[:k], 0.0, None)
    return z / z.sum()


def _qp_value(H, b, z):
    return 0.5 * z @ H @ z - b @ z


def _polish(H, b, z):
    """``z`` replaced by a certified minimiser where one is found (see :func:`simplex_qp`)."""
    polished = _face_minimiser(H, b, z > _SUPPORT_TOL * z.max(), start=z)
    if polished is not None and _kkt_certified(H, b, polished, _CERTIFICATE_TOL):
        return polished
    m = H.shape[0]
    if m > _ENUMERATE_MAX:
        return z
    best, best_value = z, _qp_value(H, b, z)
    for size in range(1, m + 1):
        for face in itertools.combinations(range(m), size):
            support = np.zeros(m, dtype=bool)
            support[list(face)] = True
            candidate = _face_minimiser(H, b, support)
            if candidate is None:
                continue
            value = _qp_value(H, b, candidate)
            if value < best_value - 1e-15 * max(1.0, abs(best_value)):
                best, best_value = candidate, value
    return best


# --------------------------------------------------------------------------- the solver


@with_single_threaded_pools
def simplex_qp(H, B, *, method="active_set", Z0=None, max_iter=200, tol=1e-8, n_jobs=None):
    """Solve ``min_z 1/2 z^T H z - b_i^T z`` over the simplex for every column ``b_i``.

    ``method="active_set"`` solves each column exactly by a primal active-set
    method (Nocedal & Wright, 2006, Algorithm 16.3, specialised to the
    simplex): a column starts at its best vertex; each step minimises the QP
    on the face of the current working set ``S`` (``H_SS z_S + mu 1 = b_S``,
    ``1^T z_S = 1``, through a Cholesky factor of ``H_SS`` that grows by one
    row when an index enters), then either moves there, or stops at the first
    entry that reaches zero and drops it. It ends when the multipliers ``(H z
    - b)_j + mu`` of the indices outside ``S`` are nonnegative (to ``1e-11``
    times the column's scale ``max(|b_i|_inf, |H|_max)``): the KKT conditions,
    so the result is the optimum up to rounding, not to an iteration
    tolerance. A step costs ``O(m |S|)`` plus ``O(|S|^2)``, so sparse
    solutions cost a few ``m x |S|`` products. A column whose working-set
    Hessian is not numerically positive definite (a singular ``H``), or that
    needs more than ``4 m + 20`` steps, is finished by the first-order method
    from its iterate (``max_iter``, ``tol``) and then replaced by the
    least-squares solution of the KKT system on its support nearest to it,
    where that solution passes the KKT conditions (to ``1e-10`` of the
    column's scale); where it does not and ``m <= 12``, every face is tried
    and the best point kept. When the minimiser is not unique (a singular
    ``H``), the result is one minimiser.

    ``method="fista"`` runs accelerated projected gradient (FISTA, Beck &
    Teboulle, 2009) with the gradient restart of O'Donoghue & Candès (2015)
    on all the columns at once, step ``1 / lambda_max(H)``, with the
    column-wise Euclidean projection onto the simplex (Condat, 2016), until
    the projected-gradient step of a column is below ``tol`` (max-norm) or
    after ``max_iter``. It suits many columns with dense solutions and a warm
    start ``Z0`` close to the answer (a step of an alternating scheme), since
    one ``m x m`` by ``m x n`` product per iteration serves every column,
    whereas an active-set step serves one. When ``H = c I`` its default start
    ``Pi(B / lambda_max(H))`` is the closed-form solution.

    With either method, ``H = 0`` puts every column's mass on its largest
    entry of ``b_i`` (a vertex, ties to the lowest index).

    Parameters
    ----------
    H : ndarray of shape (m, m)
        Symmetric positive semidefinite (only its symmetric part is used).
    B : ndarray of shape (m, n)
        One linear term per column.
    method : {"active_set", "fista"}, default="active_set"
        Exact active-set method, or first-order method (see above).
    Z0 : ndarray of shape (m, n), optional
        Starting point of ``"fista"`` (projected onto the simplex first),
        e.g. the previous solution of an alternating scheme.
    max_iter : int, default=200
        Most iterations of the first-order method of a column.
    tol : float, default=1e-8
        A column of the first-order method stops once its projected-gradient
        step ``Pi(y - (H y - b) / L) - y`` is below ``tol`` in max-norm (it
        then takes that last step).
    n_jobs : int, optional
        Threads of the Numba kernels and of the simplex projection (resolved
        by :func:`mvlearn_ext.utils.effective_n_jobs`). The result does not
        depend on it: every column is solved on its own, and BLAS runs on one
        thread inside.

    Returns
    -------
    Z : ndarray of shape (m, n)
        Columns on the probability simplex.
    n_iter : int
        The most active-set steps of a column, or first-order iterations
        where a column ran the first-order method, if more (0 when
        ``H = 0`` with ``"fista"``).

    References
    ----------
    J. Nocedal and S. J. Wright, "Numerical Optimization", 2nd ed.,
    Springer, 2006, Section 16.5 (active-set methods for convex QP).

    A. Beck and M. Teboulle, "A fast iterative shrinkage-thresholding
    algorithm for linear inverse problems", SIAM J. Imaging Sciences 2(1),
    2009.

    B. O'Donoghue and E. Candès, "Adaptive restart for accelerated gradient
    schemes", Foundations of Computational Mathematics 15, 2015.

    L. Condat, "Fast projection onto the simplex and the l1 ball",
    Mathematical Programming 158, 2016.
    """
    H = np.asarray(H, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    threads = effective_n_jobs(n_jobs)
    m, n = B.shape
    if n == 0:
        return np.empty((m, 0)), 0
    if method == "fista":
        return _fista(H, B, Z0, max_iter, tol, threads)
    if method != "active_set":
        raise ValueError(f"method must be 'active_set' or 'fista', got {method!r}")
    Hs = np.ascontiguousarray((H + H.T) / 2)
    Bt = np.ascontiguousarray(B.T)
    Zt = np.zeros((n, m))
    steps = np.zeros(n, dtype=np.int64)
    converged = np.zeros(n, dtype=bool)
    with numba_threads(threads):
        simplex_active_set(
            Hs, Bt, Zt, steps, converged, _ACTIVE_SET_KKT_TOL, _ACTIVE_SET_PIVOT_TOL, 4 * m + 20
        )
    n_iter = int(steps.max())
    rest = np.flatnonzero(~converged)
    if rest.size:
        Z_rest, fista_iter = _fista(Hs, Bt[rest].T, Zt[rest].T, max_iter, tol, threads)
        for a, i in enumerate(rest):
            Zt[i] = _polish(Hs, Bt[i], Z_rest[:, a])
        n_iter = max(n_iter, fista_iter)
    return np.ascontiguousarray(Zt.T), n_iter
