"""Numba kernels of the side-information rule: the log-linear variance model per group."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import prange

from mvlearn_ext.bandits._kernels import (
    MODE_CHOOSE,
    MODE_OBSERVE,
    MODE_RUN,
    Welford,
    _n_steps,
    _replication_source,
    _source_draw,
    _store_replication,
    _warm_start,
    _welford,
    cholesky_inplace,
)
from mvlearn_ext.utils._kernels import cholesky_solve
from mvlearn_ext.utils._numba import jit

__all__ = [
    "side_advance",
    "side_fit",
    "side_simulate_kernel",
    "side_work",
    "SideConfig",
    "SideWork",
]


class SideConfig(NamedTuple):
    """The side-information greedy rule and its log-linear model (read-only)."""

    n0: int  # warm start: samples per group before the greedy rule
    tab: np.ndarray  # (budget + 1,): count_table(q, budget)
    Z: np.ndarray  # (K, m): design rows (1, z_k) or z_k
    coef_known: np.ndarray  # (m,): the known coefficients when ``known``
    known: bool
    tau2_fixed: float  # tau^2 (< 0: estimate it; inf: no pooling)
    btab: np.ndarray  # (budget + 1,): bias b(nu) of log s^2 by count
    vtab: np.ndarray  # (budget + 1,): variance psi'(nu / 2) of log s^2 by count


class SideWork(NamedTuple):
    """Outputs and workspace of :func:`side_fit`."""

    out: np.ndarray  # (K,): the plug-in variances
    coef: np.ndarray  # (m,): the fitted coefficients (NaN if not fitted)
    ws: np.ndarray  # (4, K): l, v, weights, log s^2
    use: np.ndarray  # bool (K,): groups with a usable variance
    G: np.ndarray  # (m, m): normal equations
    L: np.ndarray  # (m, m): their Cholesky factor
    col: np.ndarray  # (m,): right-hand side, then a solve's column


@jit
def side_work(K, m):
    """A zeroed :class:`SideWork` for ``K`` groups and ``m`` coefficients."""
    return SideWork(
        np.zeros(K),
        np.zeros(m),
        np.zeros((4, K)),
        np.zeros(K, dtype=np.bool_),
        np.zeros((m, m)),
        np.zeros((m, m)),
        np.zeros(m),
    )


# ---------------------------------------------------------------------------
# Side information per group (mvlearn_ext.bandits._side_info)


@jit
def side_fit(n, m2, cfg, work):
    """Plug-in variances of the log-linear side-information model into ``work.out``.

    ``n``, ``m2``: the groups' counts and sums of squared deviations; ``cfg``
    a :class:`SideConfig`. ``cfg.tau2_fixed < 0`` estimates ``tau^2``
    (DerSimonian--Laird), ``inf`` is no pooling. ``work.coef`` receives the
    coefficients (NaN if not fitted). Returns ``tau^2`` (``inf`` when the
    model is not used). Written as one function, calling only the Cholesky
    routines with arrays, because it runs once per step and the reference
    counting of array arguments in Numba calls costs as much as the work.
    """
    _, _, Z, coef_known, known, tau2_fixed, btab, vtab = cfg
    out, coef, ws, use, G, L, col = work
    K, m = Z.shape
    lk = ws[0]
    vk = ws[1]
    ak = ws[2]
    ls = ws[3]
    n_use = 0
    for k in range(K):
        if n[k] >= 2 and m2[k] > 0.0:
            use[k] = True
            n_use += 1
            ls[k] = np.log(m2[k] / (n[k] - 1.0))
            lk[k] = ls[k] - btab[n[k]]
            vk[k] = vtab[n[k]]
        else:
            use[k] = False
    m_fit = 0 if known else m
    if known:
        for i in range(m):
            coef[i] = coef_known[i]
    tau2 = tau2_fixed
    ok = not np.isinf(tau2)
    estimate = ok and tau2 < 0.0
    df = n_use - m_fit
    if estimate and df <= 0:
        ok = False
    if ok and n_use < m_fit:
        ok = False
    # Stage 0: fixed-effect fit and the moment estimate of tau^2; stage 1: final fit.
    stage = 0 if estimate else 1
    while ok and stage < 2:
        for k in range(K):
            if not use[k]:
                ak[k] = 0.0
            elif stage == 0:
                ak[k] = 1.0 / vk[k]
            else:
                ak[k] = 1.0 / (vk[k] + tau2)
        if not known:
            # Normal equations G coef = Z^T A l, Cholesky G = L L^T, two triangular solves.
            for i in range(m):
                col[i] = 0.0
                for j in range(m):
                    G[i, j] = 0.0
            for k in range(K):
                if use[k]:
                    for i in range(m):
                        col[i] += ak[k] * Z[k, i] * lk[k]
                        for j in range(i + 1):
                            G[i, j] += ak[k] * Z[k, i] * Z[k, j]
            if not cholesky_inplace(G, L):
                ok = False
                break
            cholesky_solve(L, L.shape[0], col, coef)
        if stage == 0:
            Q = 0.0
            sa = 0.0
            tr = 0.0
            for k in range(K):
                if not use[k]:
                    continue
                pred = 0.0
                for i in range(m):
                    pred += Z[k, i] * coef[i]
                r = lk[k] - pred
                Q += ak[k] * r * r
                sa += ak[k]
                if not known:
                    # a_k^2 z_k^T G^-1 z_k = a_k^2 |L^-1 z_k|^2 (forward substitution).
                    h = 0.0
                    for i in range(m):
                        acc = Z[k, i]
                        for t in range(i):
                            acc -= L[i, t] * col[t]
                        col[i] = acc / L[i, i]
                        h += col[i] * col[i]
                    tr += ak[k] * ak[k] * h
            c = sa - tr
            if c <= 0.0:
                ok = False
                break
            tau2 = max(0.0, (Q - df) / c)
        stage += 1
    if not ok:
        if not known:
            for i in range(m):
                coef[i] = np.nan
        for k in range(K):
            out[k] = m2[k] / (n[k] - 1.0) if n[k] >= 2 else 0.0
        return np.inf
    for k in range(K):
        pred = 0.0
        for i in range(m):
            pred += Z[k, i] * coef[i]
        if use[k]:
            w = tau2 / (tau2 + vk[k])
            out[k] = np.exp(w * ls[k] + (1.0 - w) * pred)
        else:
            out[k] = np.exp(pred)
    return tau2


@jit
def side_advance(mode, cfg, state, k_in, x_in, source, work):
    """One step (or the rest of a run) of the side-information greedy rule.

    Same modes as :func:`advance` on the :class:`Welford` ``state``
    (``state.steps = [t, warm_done]``): the least-sampled group while
    ``n_min < cfg.n0`` (ties to the lowest index; once the warm start is
    over it stays over), then ``argmax_k out_k * cfg.tab[n_k]`` with ``out``
    the plug-in variances of :func:`side_fit` computed from the current
    state. ``MODE_RUN`` draws from the :class:`Source` ``source``.
    """
    state_i, n, mean, m2 = state
    n0, tab = cfg[0], cfg[1]
    K = n.shape[0]
    budget = tab.shape[0] - 1
    k = k_in
    for _ in range(_n_steps(mode, budget, state_i[0])):
        if mode != MODE_OBSERVE:
            k = -1
            if state_i[1] == 0:
                k = _warm_start(n, n0, state_i, 1)
            if k < 0:
                side_fit(n, m2, cfg, work)
                out = work[0]
                k = 0
                best = out[0] * tab[n[0]]
                for j in range(1, K):
                    s = out[j] * tab[n[j]]
                    if s > best:
                        best = s
                        k = j
            if mode == MODE_CHOOSE:
                return k
            x = _source_draw(source, k, n[k])
        else:
            x = x_in
        _welford(n, mean, m2, k, x)
        state_i[0] += 1
    return k


@jit(parallel=True)
def side_simulate_kernel(cfg, streams, p, out):
    """``out.counts.shape[0]`` replications of the side-information rule (``prange``).

    As :func:`simulate_kernel`, with the rule's :class:`SideConfig` ``cfg``.
    """
    R = out[0].shape[0]
    K, m = cfg[2].shape
    sigma = streams[3]
    sigma2 = sigma * sigma
    for r in prange(R):
        state = Welford(
            np.zeros(2, dtype=np.int64), np.zeros(K, dtype=np.int64), np.zeros(K), np.zeros(K)
        )
        source = _replication_source(streams, r)
        side_advance(MODE_RUN, cfg, state, 0, 0.0, source, side_work(K, m))
        _store_replication(out, r, state.n, state.mean, sigma2, p)
