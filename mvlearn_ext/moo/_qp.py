"""Aggregation QPs on the simplex: the min-norm direction (MGDA) and its solver.

The min-norm weights (and the DREAM server QP of :mod:`mvlearn_ext.federated`)
are instances of

    lambda* = argmin_{lambda in simplex} 1/2 lambda^T Q lambda + c^T lambda,

with a small number of tasks ``S``, solved exactly by the package's simplex QP
(:func:`mvlearn_ext.utils._simplex_qp.simplex_qp`: an active-set method, with a
KKT certificate where ``Q`` is singular).
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext.utils._simplex_qp import simplex_qp
from mvlearn_ext.utils._validation import (
    check_count,
    check_real,
    real_array,
    unit_scaled,
)

__all__ = [
    "min_norm_direction",
    "min_norm_weights",
    "solve_simplex_qp",
]


def _check_G(G, name="G"):
    G = real_array(G, name)
    if G.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n_tasks, n_params) with n_tasks >= 1, "
            f"got shape {G.shape}"
        )
    return G


def solve_simplex_qp(Q, c=None, *, tol=1e-10, max_iter=10_000):
    """Exact minimiser of ``1/2 x^T Q x + c^T x`` over the probability simplex.

    A primal active-set method gives the minimiser up to rounding, certified by
    the KKT conditions. Where ``Q`` is singular on a face the method meets,
    accelerated projected gradient (bounded by ``tol`` and ``max_iter``)
    finds the support, and the KKT system on that support gives the exact
    minimiser nearest to it, again certified by the KKT conditions (with every
    face tried for ``S <= 12`` if that fails).

    Parameters
    ----------
    Q : array-like of shape (S, S)
        Symmetric positive semi-definite.
    c : array-like of shape (S,), optional
        Linear term (default 0).
    tol : float, default=1e-10
        Stopping tolerance (max-norm of the projected-gradient step, ``>= 0``)
        of the accelerated projected gradient that runs where ``Q`` is singular.
    max_iter : int, default=10000
        Most iterations of that accelerated projected gradient, ``>= 1``.

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
    Q = real_array(Q, "Q")
    if Q.ndim != 2 or Q.shape[0] != Q.shape[1]:
        raise ValueError(f"Q must be a square (S, S) matrix, got shape {Q.shape}")
    S = Q.shape[0]
    c = np.zeros(S) if c is None else real_array(c, "c").reshape(-1)
    if c.shape != (S,):
        raise ValueError(f"c must have shape ({S},), got {c.shape}")
    tol = check_real(tol, "tol", low=0.0)
    max_iter = check_count(max_iter, "max_iter", 1)
    x, _ = simplex_qp(Q, -c[:, None], max_iter=max_iter, tol=tol)
    return x[:, 0]


def min_norm_weights(G):
    """MGDA weights: ``argmin_{lambda in simplex} ||lambda^T G||^2``.

    Désidéri (2012); Sener & Koltun (NeurIPS 2018). For two tasks the weight
    on ``g1`` is ``clip(g2.(g2 - g1) / ||g1 - g2||^2, 0, 1)``. The weights do
    not depend on a common scale of the rows: ``G`` is rescaled by a power of
    two before the Gram matrix is formed.

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
    # The weights do not depend on a common scale of the gradients; unit-scaled, the
    # Gram matrix of tiny gradients (1e-160 and below) does not underflow to zero.
    G = unit_scaled(_check_G(G))
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
