"""Aggregation QPs on the simplex: min-norm (MGDA) and the DREAM server QP.

Both are instances of

    lambda* = argmin_{lambda in simplex} 1/2 lambda^T Q lambda + c^T lambda,

with a tiny number of tasks ``S``, solved *exactly*: accelerated projected
gradient (with the compiled simplex projection of
:func:`mvlearn_ext.utils.project_simplex`, Condat's algorithm in C++) identifies the support, a KKT
linear solve on the support polishes it to machine precision and the KKT
conditions certify it; if they fail (degenerate problems), every support is
tried for ``S <= 12``.
"""

from __future__ import annotations

import itertools

import numpy as np

from mvlearn_ext.moo._simplex import project_simplex_1d
from mvlearn_ext.utils._validation import check_real

__all__ = [
    "dream_direction",
    "dream_weights",
    "min_norm_direction",
    "min_norm_weights",
    "solve_simplex_qp",
]


def _check_G(G, name="G"):
    try:
        G = np.asarray(G, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array") from exc
    if G.ndim != 2 or G.shape[0] < 1 or G.shape[1] < 1:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n_tasks, n_params) with n_tasks >= 1, "
            f"got shape {G.shape}"
        )
    if not np.isfinite(G).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return G


def _kkt_ok(Q, c, lam, tol):
    g = Q @ lam + c
    support = lam > 0
    nu = g[support].min() if support.any() else g.min()
    scale = max(1.0, np.abs(Q).max(), np.abs(c).max() if c.size else 0.0)
    # stationarity on the support, dual feasibility off it
    return (
        lam.min() >= 0
        and abs(lam.sum() - 1) <= 1e-12
        and np.all(np.abs(g[support] - nu) <= tol * scale)
        and np.all(g[~support] >= nu - tol * scale)
    )


def _solve_on_support(Q, c, support):
    idx = np.flatnonzero(support)
    k = idx.size
    A = np.zeros((k + 1, k + 1))
    A[:k, :k] = Q[np.ix_(idx, idx)]
    A[:k, k] = 1.0
    A[k, :k] = 1.0
    b = np.concatenate([-c[idx], [1.0]])
    sol = np.linalg.lstsq(A, b, rcond=None)[0]
    lam = np.zeros(Q.shape[0])
    lam[idx] = sol[:k]
    return lam


def _objective(Q, c, lam):
    return 0.5 * lam @ Q @ lam + c @ lam


def solve_simplex_qp(Q, c=None, *, tol=1e-10, max_iter=10_000):
    """Exact minimiser of ``1/2 x^T Q x + c^T x`` over the probability simplex.

    Parameters
    ----------
    Q : array-like of shape (S, S)
        Symmetric positive semi-definite.
    c : array-like of shape (S,), optional
        Linear term (default 0).
    tol : float, default=1e-10
        Relative tolerance of the KKT certificate.
    max_iter : int, default=10000
        Iterations of accelerated projected gradient before polishing.

    Returns
    -------
    x : ndarray of shape (S,)
        Non-negative, sums to one. When the minimiser is not unique (a
        singular ``Q``), one minimiser.

    Examples
    --------
    >>> from mvlearn_ext.moo import solve_simplex_qp
    >>> solve_simplex_qp([[1.0, 0.0], [0.0, 3.0]])
    array([0.75, 0.25])
    """
    Q = np.asarray(Q, dtype=np.float64)
    if Q.ndim != 2 or Q.shape[0] != Q.shape[1] or Q.shape[0] < 1:
        raise ValueError(f"Q must be a square (S, S) matrix, got shape {Q.shape}")
    if not np.isfinite(Q).all():
        raise ValueError("Q contains NaN or infinity")
    S = Q.shape[0]
    Q = 0.5 * (Q + Q.T)
    c = np.zeros(S) if c is None else np.asarray(c, dtype=np.float64).reshape(-1)
    if c.shape != (S,):
        raise ValueError(f"c must have shape ({S},), got {c.shape}")
    if not np.isfinite(c).all():
        raise ValueError("c contains NaN or infinity")
    if S == 1:
        return np.ones(1)
    L = float(np.linalg.eigvalsh(Q)[-1])
    if L <= 0:  # Q == 0: linear programme, a vertex
        x = np.zeros(S)
        x[int(np.argmin(c))] = 1.0
        return x
    step = 1.0 / L
    x = np.full(S, 1.0 / S)
    y = x.copy()
    t = 1.0
    best = None
    check_every = 20
    for it in range(1, max_iter + 1):
        x_new = project_simplex_1d(y - step * (Q @ y + c))
        t_new = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        y = x_new + ((t - 1) / t_new) * (x_new - x)
        x, t = x_new, t_new
        if it % check_every == 0:
            support = x > 1e-12 * max(1.0, x.max())
            cand = _solve_on_support(Q, c, support)
            if cand.min() >= -1e-14:
                cand = np.clip(cand, 0.0, None)
                cand /= cand.sum()
                if _kkt_ok(Q, c, cand, tol):
                    return cand
            if check_every < 640:
                check_every *= 2
    # not certified: enumerate supports when small, else best iterate
    best = x
    if S <= 12:
        best_val = _objective(Q, c, x)
        for k in range(1, S + 1):
            for supp in itertools.combinations(range(S), k):
                mask = np.zeros(S, dtype=bool)
                mask[list(supp)] = True
                cand = _solve_on_support(Q, c, mask)
                if cand.min() < -1e-12 or abs(cand.sum() - 1) > 1e-9:
                    continue
                cand = np.clip(cand, 0, None)
                cand /= cand.sum()
                val = _objective(Q, c, cand)
                if val < best_val - 1e-15 * max(1.0, abs(best_val)):
                    best, best_val = cand, val
    return best


def _two_task(a, b, reg_rho, w1):
    """Closed form for S = 2 (spec §12.3): weight on the first column."""
    diff = a - b
    denom = diff @ diff + 2 * reg_rho
    if denom <= 0:
        return 0.5 if reg_rho == 0 else w1
    alpha = (b @ (b - a) + 2 * reg_rho * w1) / denom
    return float(np.clip(alpha, 0.0, 1.0))


def dream_weights(G, *, correction=None, reg_rho=0.0, anchor=None, method="auto"):
    """Task weights of the DREAM server QP (reconstruction).

    Solves ``lambda* = argmin_{lambda in simplex} 1/2 lambda^T C^T G G^T C
    lambda + reg_rho/2 ||lambda - w||^2`` for task directions ``G`` (one
    row per task), a task-correction matrix ``C`` and anchor weights ``w``;
    the server direction is ``d = (C lambda*)^T G``.

    Reconstruction: DREAM (Zhou, Ou & Shi, ICML 2026) is known from its
    abstract only ("a regularised QP parameterised by a task correction
    matrix" covering scalarisation, prioritisation and gradient
    manipulation); this QP is the spec's reconstruction. Special cases:
    ``C = I, reg_rho = 0`` is MGDA (:func:`min_norm_weights`);
    ``reg_rho -> inf`` gives ``lambda = w`` (linear scalarisation with weights
    ``C w``); ``C = diag(priorities)`` prioritises; ``C = diag(1/||g_s||)`` is
    MGDA on normalised directions.

    Parameters
    ----------
    G : array-like of shape (n_tasks, n_params)
        Task directions (gradients or pseudo-gradients), one per row.
    correction : array-like of shape (n_tasks, n_tasks), optional
        ``C``; identity by default.
    reg_rho : float, default=0.0
        ``rho >= 0``; with ``rho > 0`` the solution is unique and Lipschitz
        in ``G``.
    anchor : array-like of shape (n_tasks,), optional
        ``w`` on the simplex; uniform by default.
    method : {"auto", "closed_form", "qp"}, default="auto"
        ``"auto"`` uses the closed form for two tasks and :func:`solve_simplex_qp`
        otherwise.

    Returns
    -------
    weights : ndarray of shape (n_tasks,)

    Examples
    --------
    >>> from mvlearn_ext.moo import dream_weights
    >>> dream_weights([[1.0, 0.0], [0.0, 2.0]])  # MGDA: 0.8 g1 + 0.2 g2
    array([0.8, 0.2])
    >>> dream_weights([[1.0, 0.0], [0.0, 2.0]], reg_rho=1e9).round(6)
    array([0.5, 0.5])
    """
    G = _check_G(G)
    S = G.shape[0]
    if correction is None:
        C = np.eye(S)
    else:
        C = np.asarray(correction, dtype=np.float64)
        if C.shape != (S, S):
            raise ValueError(f"correction must have shape ({S}, {S}), got {C.shape}")
        if not np.isfinite(C).all():
            raise ValueError("correction contains NaN or infinity")
    reg_rho = check_real(reg_rho, "reg_rho", low=0.0)
    if anchor is None:
        w = np.full(S, 1.0 / S)
    else:
        w = np.asarray(anchor, dtype=np.float64).reshape(-1)
        if w.shape != (S,):
            raise ValueError(f"anchor must have shape ({S},), got {w.shape}")
        if not np.isfinite(w).all() or w.min() < 0 or abs(w.sum() - 1) > 1e-9:
            raise ValueError("anchor must be on the probability simplex (>= 0, sums to 1)")
    if method not in ("auto", "closed_form", "qp"):
        raise ValueError(f"method must be 'auto', 'closed_form' or 'qp', got {method!r}")
    if method == "closed_form" and S != 2:
        raise ValueError(f"method='closed_form' needs exactly 2 tasks, got {S}")
    M = C.T @ G  # rows: the corrected task directions (columns of G_t C)
    if S == 1:
        return np.ones(1)
    if method == "closed_form" or (method == "auto" and S == 2):
        alpha = _two_task(M[0], M[1], reg_rho, w[0])
        return np.array([alpha, 1.0 - alpha])
    Q = M @ M.T + reg_rho * np.eye(S)
    return solve_simplex_qp(Q, -reg_rho * w)


def dream_direction(G, *, correction=None, reg_rho=0.0, anchor=None):
    """``(weights, d)`` with ``d = (C weights)^T G`` (see :func:`dream_weights`)."""
    G = _check_G(G)
    lam = dream_weights(G, correction=correction, reg_rho=reg_rho, anchor=anchor)
    C = np.eye(G.shape[0]) if correction is None else np.asarray(correction, dtype=np.float64)
    return lam, (C @ lam) @ G


def min_norm_weights(G):
    """MGDA weights: ``argmin_{lambda in simplex} ||lambda^T G||^2``.

    Désidéri (2012); Sener & Koltun (NeurIPS 2018). For two tasks the weight
    on ``g1`` is ``clip(g2.(g2 - g1) / ||g1 - g2||^2, 0, 1)``.

    Parameters
    ----------
    G : array-like of shape (n_tasks, n_params)

    Returns
    -------
    weights : ndarray of shape (n_tasks,)

    Examples
    --------
    >>> from mvlearn_ext.moo import min_norm_weights
    >>> min_norm_weights([[1.0, 0.0], [0.0, 1.0]])
    array([0.5, 0.5])
    """
    return dream_weights(G)


def min_norm_direction(G):
    """``(weights, d)``: the MGDA weights and the min-norm element ``d``."""
    G = _check_G(G)
    lam = min_norm_weights(G)
    return lam, lam @ G
