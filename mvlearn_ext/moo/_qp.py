"""Aggregation QPs on the simplex: the min-norm direction (MGDA) and its solver.

The min-norm weights (and the DREAM server QP of :mod:`mvlearn_ext.federated`)
are instances of

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

__all__ = [
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

    See Also
    --------
    min_norm_weights : The min-norm problem it solves for MGDA.
    mvlearn_ext.utils.project_simplex : The Euclidean projection onto the simplex.

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

    See Also
    --------
    min_norm_direction : The weights and the common direction.
    solve_simplex_qp : The QP solver it uses.

    Examples
    --------
    >>> from mvlearn_ext.moo import min_norm_weights
    >>> min_norm_weights([[1.0, 0.0], [0.0, 1.0]])
    array([0.5, 0.5])
    """
    G = _check_G(G)
    S = G.shape[0]
    if S == 1:
        return np.ones(1)
    if S == 2:
        diff = G[0] - G[1]
        denom = diff @ diff
        if denom <= 0:  # equal directions: every weight gives the same d
            return np.array([0.5, 0.5])
        alpha = float(np.clip(G[1] @ (G[1] - G[0]) / denom, 0.0, 1.0))
        return np.array([alpha, 1.0 - alpha])
    return solve_simplex_qp(G @ G.T)


def min_norm_direction(G):
    """``(weights, d)``: the MGDA weights and the min-norm element ``d``.

    Parameters
    ----------
    G : array-like of shape (n_tasks, n_params)
        Task gradients, one per row.

    Returns
    -------
    weights : ndarray of shape (n_tasks,)
        The weights of :func:`min_norm_weights`.
    d : ndarray of shape (n_params,)
        ``weights @ G``, the min-norm element of the convex hull of the rows.

    See Also
    --------
    min_norm_weights : The weights alone.
    solve_simplex_qp : The QP solver it uses.

    Examples
    --------
    >>> from mvlearn_ext.moo import min_norm_direction
    >>> weights, d = min_norm_direction([[1.0, 0.0], [0.0, 2.0]])
    >>> weights.round(6).tolist(), d.round(6).tolist()
    ([0.8, 0.2], [0.8, 0.4])
    """
    G = _check_G(G)
    lam = min_norm_weights(G)
    return lam, lam @ G
