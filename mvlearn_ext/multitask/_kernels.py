"""Numba kernels of the multi-task regressors.

Every kernel takes plain contiguous arrays, assumes valid input and calls
nothing above it; the drivers of :mod:`mvlearn_ext.multitask._solvers`
call them. Rows are sorted by task: task ``j`` owns the rows
``starts[j]:starts[j + 1]``. The data pass (:func:`task_moments`) reads
``X`` in its own dtype (float32 or float64) and accumulates in float64;
everything after it works on ``d x d`` float64 matrices.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from mvlearn_ext.utils._numba import jit

__all__ = [
    "PARALLEL_WORK",
    "armul_prox",
    "armul_prox_tasks",
    "irls_center",
    "recover_coef",
    "task_eigh",
    "task_moments",
]


def _task_moments(X, y, sw, starts, fit_intercept):
    """Weighted per-task means, second moments and cross moments.

    Returns ``(Sigma, b, xbar, ybar, wsum)`` with ``Sigma[j]`` the
    ``d x d`` matrix ``sum_i s_i (x_i - xbar)(x_i - xbar)^T / W_j``,
    ``b[j] = sum_i s_i (x_i - xbar)(y_i - ybar) / W_j``, ``W_j`` the sum of
    the task's weights, and ``xbar``/``ybar`` the weighted means (zero
    without ``fit_intercept``). Centring is done in a first pass, so that
    the second moments do not suffer from cancellation.
    """
    m = starts.shape[0] - 1
    d = X.shape[1]
    Sigma = np.zeros((m, d, d))
    b = np.zeros((m, d))
    xbar = np.zeros((m, d))
    ybar = np.zeros(m)
    wsum = np.zeros(m)
    for j in prange(m):
        lo = starts[j]
        hi = starts[j + 1]
        W = 0.0
        for i in range(lo, hi):
            W += sw[i]
        wsum[j] = W
        xm = np.zeros(d)
        ym = 0.0
        if fit_intercept:
            for i in range(lo, hi):
                s = sw[i]
                ym += s * y[i]
                for k in range(d):
                    xm[k] += s * X[i, k]
            ym /= W
            for k in range(d):
                xm[k] /= W
        S = np.zeros((d, d))
        bj = np.zeros(d)
        xc = np.empty(d)
        for i in range(lo, hi):
            s = sw[i]
            for k in range(d):
                xc[k] = X[i, k] - xm[k]
            yc = s * (y[i] - ym)
            for k in range(d):
                v = s * xc[k]
                bj[k] += xc[k] * yc
                for l in range(k, d):
                    S[k, l] += v * xc[l]
        for k in range(d):
            b[j, k] = bj[k] / W
            xbar[j, k] = xm[k]
            for l in range(k, d):
                Sigma[j, k, l] = S[k, l] / W
                Sigma[j, l, k] = S[k, l] / W
        ybar[j] = ym
    return Sigma, b, xbar, ybar, wsum


def _task_eigh(Sigma, b, rcond):
    """Eigen-decompose every ``Sigma[j]``, and the pseudo-inverse solutions.

    Eigenvalues at most ``rcond * max(eigenvalue)`` count as zero (the
    rank rule of ``numpy.linalg.lstsq``). Returns ``(evals, evecs, rank,
    theta, c0)``: ``evals[j]`` ascending with the null ones set to exactly
    zero, ``evecs[j]`` the eigenvectors as columns, ``theta[j] =
    Sigma_j^+ b_j`` (the minimum-norm OLS solution) and ``c0[j] =
    b_j^T Sigma_j^+ b_j`` (its fit, ``||theta_j||^2_{Sigma_j}``).
    """
    m, d, _ = Sigma.shape
    evals = np.zeros((m, d))
    evecs = np.zeros((m, d, d))
    rank = np.zeros(m, dtype=np.int64)
    theta = np.zeros((m, d))
    c0 = np.zeros(m)
    for j in prange(m):
        w, V = np.linalg.eigh(Sigma[j])
        top = w[d - 1]
        cut = rcond * top if top > 0.0 else 0.0
        r = 0
        fit = 0.0
        for k in range(d):
            if w[k] > cut and w[k] > 0.0:
                r += 1
                proj = 0.0
                for l in range(d):
                    proj += V[l, k] * b[j, l]
                coef = proj / w[k]
                fit += proj * coef
                for l in range(d):
                    theta[j, l] += coef * V[l, k]
                evals[j, k] = w[k]
            else:
                evals[j, k] = 0.0
            for l in range(d):
                evecs[j, l, k] = V[l, k]
        rank[j] = r
        c0[j] = fit
    return evals, evecs, rank, theta, c0


# Serial and threaded builds of the two per-task passes: the threaded one pays a
# synchronisation cost per call that dominates small problems (and a loaded machine).
task_moments_serial = jit(_task_moments)
task_moments_parallel = jit(parallel=True)(_task_moments)
task_eigh_serial = jit(_task_eigh)
task_eigh_parallel = jit(parallel=True)(_task_eigh)

#: Work (rows x d^2 or tasks x d^3) above which the threaded builds are used.
PARALLEL_WORK = 5e7


def task_moments(X, y, sw, starts, fit_intercept):
    """Dispatch to the serial or threaded build of the moments pass."""
    work = X.shape[0] * X.shape[1] ** 2
    kernel = task_moments_parallel if work >= PARALLEL_WORK else task_moments_serial
    return kernel(X, y, sw, starts, fit_intercept)


def task_eigh(Sigma, b, rcond):
    """Dispatch to the serial or threaded build of the eigen pass."""
    work = Sigma.shape[0] * Sigma.shape[1] ** 3
    kernel = task_eigh_parallel if work >= PARALLEL_WORK else task_eigh_serial
    return kernel(Sigma, b, rcond)


@jit
def _sym_solve(M, v, rcond):
    """Minimum-norm solution of ``M x = v`` for symmetric PSD ``M`` (by eigh)."""
    d = M.shape[0]
    w, V = np.linalg.eigh(M)
    top = w[d - 1]
    cut = rcond * top if top > 0.0 else 0.0
    x = np.zeros(d)
    for k in range(d):
        if w[k] > cut and w[k] > 0.0:
            proj = 0.0
            for l in range(d):
                proj += V[l, k] * v[l]
            proj /= w[k]
            for l in range(d):
                x[l] += proj * V[l, k]
    return x


@jit
def _distances(Sigma, theta, beta, r):
    """``r[j] = ||theta_j - beta||_{Sigma_j}`` for every task."""
    m, d, _ = Sigma.shape
    for j in prange(m):
        diff = np.empty(d)
        for k in range(d):
            diff[k] = theta[j, k] - beta[k]
        acc = 0.0
        for k in range(d):
            row = 0.0
            for l in range(d):
                row += Sigma[j, k, l] * diff[l]
            acc += diff[k] * row
        r[j] = np.sqrt(acc) if acc > 0.0 else 0.0


@jit
def _huber_objective(r, lam, w):
    total = 0.0
    for j in range(r.shape[0]):
        if r[j] <= lam[j]:
            total += w[j] * 0.5 * r[j] * r[j]
        else:
            total += w[j] * (lam[j] * r[j] - 0.5 * lam[j] * lam[j])
    return total


@jit
def irls_center(Sigma, b, theta, lam, w, beta0, max_iter, tol, rcond):
    """The reweighting (majorise-minimise) iteration for the centre ``beta``.

    Minimises ``sum_j w_j H_{lam_j}(||theta_j - beta||_{Sigma_j})`` (the
    profile objective; ``H`` is Huber's function) by
    ``omega_j = min(1, lam_j / r_j)`` and
    ``beta <- (sum_j w_j omega_j Sigma_j)^+ sum_j w_j omega_j b_j``.
    ``lam`` may hold ``inf`` (every ``omega_j = 1``: the pooled fit). Stops
    when the change of ``beta`` is at most ``tol * (1 + ||beta||_S)``, both
    measured in the norm of ``S = sum_j w_j Sigma_j / sum_j w_j`` (the
    change of the pooled root-mean-square prediction, so that the rule is
    invariant under invertible maps of the features), or after ``max_iter``
    iterations. Returns ``(beta, r, objective, n_iter, converged)``.
    """
    m, d, _ = Sigma.shape
    beta = beta0.copy()
    r = np.zeros(m)
    omega = np.ones(m)
    converged = False
    S = np.zeros((d, d))
    wsum = 0.0
    for j in range(m):
        wsum += w[j]
    for j in range(m):
        c = w[j] / wsum if wsum > 0.0 else 0.0
        for k in range(d):
            for l in range(d):
                S[k, l] += c * Sigma[j, k, l]
    n_iter = 0
    for it in range(max_iter):
        n_iter = it + 1
        _distances(Sigma, theta, beta, r)
        for j in range(m):
            if r[j] > lam[j]:
                omega[j] = lam[j] / r[j]
            else:
                omega[j] = 1.0
        M = np.zeros((d, d))
        v = np.zeros(d)
        for j in range(m):
            c = w[j] * omega[j]
            if c == 0.0:
                continue
            for k in range(d):
                v[k] += c * b[j, k]
                for l in range(k, d):
                    M[k, l] += c * Sigma[j, k, l]
        for k in range(d):
            for l in range(k + 1, d):
                M[l, k] = M[k, l]
        new = _sym_solve(M, v, rcond)
        change = 0.0
        scale = 0.0
        for k in range(d):
            for l in range(d):
                change += (new[k] - beta[k]) * S[k, l] * (new[l] - beta[l])
                scale += new[k] * S[k, l] * new[l]
        change = np.sqrt(max(change, 0.0))
        scale = np.sqrt(max(scale, 0.0))
        beta = new
        if change <= tol * (1.0 + scale):
            converged = True
            break
    _distances(Sigma, theta, beta, r)
    return beta, r, _huber_objective(r, lam, w), n_iter, converged


@jit
def recover_coef(theta, evecs, rank, beta, shrink):
    """The canonical per-task solutions ``beta + c_j P_j (theta_j - beta)``.

    ``P_j`` is the orthogonal projector onto the range of ``Sigma_j`` (the
    eigenvectors ``evecs[j][:, d - rank[j]:]``), so that the directions a
    task's data do not explore are filled from ``beta``.
    """
    m, d = theta.shape
    coef = np.zeros((m, d))
    for j in prange(m):
        c = shrink[j]
        # P_j beta, from the eigenvectors of the nonzero eigenvalues (the last rank[j]).
        pb = np.zeros(d)
        for k in range(d - rank[j], d):
            proj = 0.0
            for l in range(d):
                proj += evecs[j, l, k] * beta[l]
            for l in range(d):
                pb[l] += proj * evecs[j, l, k]
        for l in range(d):
            coef[j, l] = beta[l] + c * (theta[j, l] - pb[l])
    return coef


@jit
def _secular_t(gt2, e, lam):
    """The root ``t > 0`` of ``sum_k gt2_k t^2 / (e_k + t)^2 = lam^2``.

    The left side increases from 0 to ``sum_k gt2_k > lam^2``; safeguarded
    Newton on ``t`` with a bisection bracket.
    """
    d = e.shape[0]
    lo = 0.0
    hi = 1.0
    # Grow the upper end of the bracket.
    for _ in range(200):
        s = 0.0
        for k in range(d):
            q = hi / (e[k] + hi)
            s += gt2[k] * q * q
        if s >= lam * lam:
            break
        lo = hi
        hi *= 2.0
    t = 0.5 * (lo + hi)
    for _ in range(200):
        s = 0.0
        ds = 0.0
        for k in range(d):
            den = e[k] + t
            q = t / den
            s += gt2[k] * q * q
            ds += gt2[k] * 2.0 * q * e[k] / (den * den)
        f = s - lam * lam
        if f > 0.0:
            hi = t
        else:
            lo = t
        if abs(f) <= 1e-15 * lam * lam or hi - lo <= 1e-15 * hi:
            break
        step = t - f / ds if ds > 0.0 else 0.5 * (lo + hi)
        if step <= lo or step >= hi:
            step = 0.5 * (lo + hi)
        t = step
    return t


@jit
def armul_prox_tasks(Sigma, b, evals, evecs, Gamma, lam, w):
    """Exact per-task ARMUL solutions given a centre ``Gamma[j]`` per task.

    Task ``j`` solves ``min_u 1/2 u^T Sigma_j u - u^T g_j + lam_j ||u||_2``
    with ``g_j = b_j - Sigma_j gamma`` and ``theta_j = gamma + u``:
    ``u = 0`` iff ``||g_j|| <= lam_j``, otherwise
    ``u = (Sigma_j + t I)^{-1} g_j`` with ``t = lam_j / ||u||`` the root of
    the secular equation. Returns ``(U, value, grad)``: the ``u_j`` as rows,
    the profile objective ``sum_j w_j [1/2 ||theta_j - theta_hat_j||^2_{Sigma_j} +
    lam_j ||u_j||]`` (up to a constant)
    and its gradient in ``gamma``, ``sum_j w_j (Sigma_j theta_j - b_j)``.
    """
    m, d, _ = Sigma.shape
    U = np.zeros((m, d))
    vals = np.zeros(m)
    grads = np.zeros((m, d))
    for j in prange(m):
        g = np.empty(d)
        gn = 0.0
        for k in range(d):
            acc = b[j, k]
            for l in range(d):
                acc -= Sigma[j, k, l] * Gamma[j, l]
            g[k] = acc
            gn += acc * acc
        gn = np.sqrt(gn)
        # 1/2 gamma^T Sigma gamma - gamma^T b: the part of 1/2 ||theta_hat - gamma||^2_Sigma
        # that depends on gamma (Sigma gamma = b - g).
        base = 0.0
        for k in range(d):
            base += Gamma[j, k] * (0.5 * (b[j, k] - g[k]) - b[j, k])
        vals[j] = w[j] * base
        if gn > lam[j]:
            gt = np.zeros(d)
            gt2 = np.zeros(d)
            for k in range(d):
                acc = 0.0
                for l in range(d):
                    acc += evecs[j, l, k] * g[l]
                gt[k] = acc
                gt2[k] = acc * acc
            t = _secular_t(gt2, evals[j], lam[j])
            for k in range(d):
                coef = gt[k] / (evals[j, k] + t)
                for l in range(d):
                    U[j, l] += coef * evecs[j, l, k]
            quad = 0.0
            lin = 0.0
            nrm = 0.0
            for k in range(d):
                coef = gt[k] / (evals[j, k] + t)
                quad += evals[j, k] * coef * coef
                lin += coef * gt[k]
                nrm += coef * coef
            vals[j] += w[j] * (0.5 * quad - lin + lam[j] * np.sqrt(nrm))
        # grad_j = Sigma_j (gamma + u) - b_j = Sigma_j u - g_j
        for k in range(d):
            acc = -g[k]
            for l in range(d):
                acc += Sigma[j, k, l] * U[j, l]
            grads[j, k] = w[j] * acc
    return U, vals, grads


@jit
def armul_prox(Sigma, b, evals, evecs, gamma, lam, w):
    """:func:`armul_prox_tasks` with one centre ``gamma`` for every task.

    Returns ``(U, value, grad)``: the ``u_j`` as rows, the profile objective
    (the sum of the task terms) and its gradient in ``gamma``.
    """
    m, d, _ = Sigma.shape
    Gamma = np.empty((m, d))
    for j in range(m):
        Gamma[j] = gamma
    U, vals, grads = armul_prox_tasks(Sigma, b, evals, evecs, Gamma, lam, w)
    value = 0.0
    grad = np.zeros(d)
    for j in range(m):
        value += vals[j]
        for k in range(d):
            grad[k] += grads[j, k]
    return U, value, grad
