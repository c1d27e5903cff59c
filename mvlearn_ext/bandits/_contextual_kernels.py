"""Numba kernels of the contextual groups: linear models on random contexts."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import prange

from mvlearn_ext.bandits._kernels import (
    _GAMMA,
    _ONE,
    _mix64,
    _normal,
    cholesky_inplace,
    rp_value,
    stream_key,
)
from mvlearn_ext.utils._kernels import cholesky_solve
from mvlearn_ext.utils._numba import jit

__all__ = [
    "ctx_choose",
    "ctx_draw",
    "ctx_observe",
    "ctx_simulate_kernel",
    "ctx_stats",
    "ctx_work",
    "CtxRule",
    "CtxStats",
    "CtxTruth",
    "CtxWork",
]


class CtxStats(NamedTuple):
    """The contextual groups' sufficient statistics (updated in place)."""

    n: np.ndarray  # int64 (K,): samples per group
    G: np.ndarray  # (K, d, d): sum of x x^T
    b: np.ndarray  # (K, d): sum of x y
    yy: np.ndarray  # (K,): sum of y^2
    score: np.ndarray  # (K,): plug-in scores


class CtxWork(NamedTuple):
    """Workspace of the contextual kernels."""

    L: np.ndarray  # (d, d): Cholesky factor
    work: np.ndarray  # (d,): a solve's output
    col: np.ndarray  # (d,): a column of G^-1
    e: np.ndarray  # (d,): a unit vector


@jit
def ctx_stats(K, d):
    """Zeroed :class:`CtxStats` for ``K`` groups in dimension ``d``."""
    return CtxStats(
        np.zeros(K, dtype=np.int64),
        np.zeros((K, d, d)),
        np.zeros((K, d)),
        np.zeros(K),
        np.zeros(K),
    )


@jit
def ctx_work(d):
    """A zeroed :class:`CtxWork` in dimension ``d``."""
    return CtxWork(np.zeros((d, d)), np.zeros(d), np.zeros(d), np.zeros(d))


# ---------------------------------------------------------------------------
# Contextual groups (mvlearn_ext.bandits._contextual)


class CtxRule(NamedTuple):
    """The contextual greedy plug-in rule (read-only)."""

    q: float  # allocation exponent
    n0: int  # warm start: samples per group before the greedy rule
    A: np.ndarray  # (d, d): the loss's weight matrix


class CtxTruth(NamedTuple):
    """The simulated groups: contexts ``x ~ N(m_k, Lc_k Lc_k^T)``, ``y = x^T beta_k + eps``."""

    m: np.ndarray  # (K, d): context means
    Lc: np.ndarray  # (K, d, d): Cholesky factors of the context covariances
    beta: np.ndarray  # (K, d): coefficients
    sigma: np.ndarray  # (K,): noise standard deviations


@jit
def _ctx_score(q, A, n_k, G, b, yy, work):
    """Plug-in ``c_k^(q/2) / n_k`` with ``c_k = s2 n tr(A G^-1)``; 0 if ``G`` is singular."""
    L, sol, col, e = work
    d = G.shape[0]
    if n_k <= d or not cholesky_inplace(G, L):
        return 0.0
    cholesky_solve(L, L.shape[0], b, sol)
    rss = yy
    for i in range(d):
        rss -= b[i] * sol[i]
    s2 = max(rss, 0.0) / (n_k - d)
    tr = 0.0
    for j in range(d):  # column j of G^-1
        for i in range(d):
            e[i] = 0.0
        e[j] = 1.0
        cholesky_solve(L, L.shape[0], e, col)
        for i in range(d):
            tr += A[j, i] * col[i]
    c = s2 * n_k * tr
    if q == 2.0:
        return c / n_k
    return c ** (0.5 * q) / n_k


@jit
def ctx_observe(rule, k, x, y, stats, work):
    """Add ``(x, y)`` to group ``k``'s sufficient statistics and rescore it."""
    n, G, b, yy, score = stats
    d = x.shape[0]
    n[k] += 1
    for i in range(d):
        b[k, i] += x[i] * y
        for j in range(d):
            G[k, i, j] += x[i] * x[j]
    yy[k] += y * y
    q, _, A = rule
    score[k] = _ctx_score(q, A, n[k], G[k], b[k], yy[k], work)


@jit
def ctx_choose(n0, n, score):
    """The least-sampled group while ``n_min < n0``, then the largest score."""
    kmin = 0
    for k in range(1, n.shape[0]):
        if n[k] < n[kmin]:
            kmin = k
    if n[kmin] < n0:
        return kmin
    best = 0
    for k in range(1, n.shape[0]):
        if score[k] > score[best]:
            best = k
    return best


@jit
def ctx_draw(key, j, m, Lc, beta, sigma_k, x):
    """Context ``x = m + Lc z`` and response ``y = x^T beta + sigma_k eps`` of sample ``j``."""
    d = m.shape[0]
    sub = _mix64(key + (np.uint64(j) + _ONE) * _GAMMA)
    z = np.empty(d)
    c = 0
    for i in range(d):
        z[i], c = _normal(sub, c)
    y = 0.0
    for i in range(d):
        s = m[i]
        for t in range(d):
            s += Lc[i, t] * z[t]
        x[i] = s
        y += s * beta[i]
    eps, c = _normal(sub, c)
    return y + sigma_k * eps


@jit(parallel=True)
def ctx_simulate_kernel(rule, budget, truth, seed, rep_offset, c_true, p, out_counts, out_beta,
                        out_rp):  # fmt: skip
    """``out_counts.shape[0]`` replications of the contextual rule (``prange``)."""
    R = out_counts.shape[0]
    m, Lc, beta, sigma = truth
    n0 = rule[1]
    K, d = m.shape
    for r in prange(R):
        stats = ctx_stats(K, d)
        work = ctx_work(d)
        n, G, b = stats.n, stats.G, stats.b
        L, sol = work.L, work.work
        x = np.zeros(d)
        keys = np.empty(K, dtype=np.uint64)
        for k in range(K):
            keys[k] = stream_key(seed, rep_offset + r, k)
        for _ in range(budget):
            k = ctx_choose(n0, n, stats.score)
            y = ctx_draw(keys[k], n[k], m[k], Lc[k], beta[k], sigma[k], x)
            ctx_observe(rule, k, x, y, stats, work)
        for k in range(K):
            out_counts[r, k] = n[k]
            if cholesky_inplace(G[k], L):
                cholesky_solve(L, L.shape[0], b[k], sol)
                for i in range(d):
                    out_beta[r, k, i] = sol[i]
            else:
                for i in range(d):
                    out_beta[r, k, i] = np.nan
        out_rp[r] = rp_value(c_true, n, p)
