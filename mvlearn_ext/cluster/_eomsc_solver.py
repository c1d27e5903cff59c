"""The steps of EOMSC-CA, shared by its in-memory and block paths."""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from mvlearn_ext.cluster._smvsc_solver import (
    _normalize_rows,
    anchor_step,
    code_view_weights,
    iteration_done,
    residual_losses,
    start_model,
)
from mvlearn_ext.utils._warnings import warn

#: Eigenvalues of the normalised bipartite graph within this of 1 count as 1
#: (the tolerance of the authors' component test).
_UNIT_EIGENVALUE_TOL = 1e-7
#: The fixed weight of the authors' recorded graph term.
_GRAPH_TERM_WEIGHT = 0.1


def project_simplex_masked(V, mask):
    """Project every row of ``V`` onto the simplex restricted to ``mask``.

    Row ``i`` solves ``min ||x - v_i||^2`` over ``x >= 0``, ``sum x = 1``
    and ``x_j = 0`` wherever ``mask[i, j]`` is False (the sort-based rule:
    ``x = max(v - tau, 0)`` on the support). A row with an empty support is
    returned as zeros. Vectorised over rows; each row is computed the same
    way whatever the others, so the result does not depend on threads.
    """
    n, m = V.shape
    masked = np.where(mask, V, -np.inf)
    u = -np.sort(-masked, axis=1)
    with np.errstate(invalid="ignore"):
        t = (np.cumsum(u, axis=1) - 1.0) / np.arange(1, m + 1)
        active = (u - t) > 0.0  # False past the support (-inf - -inf is NaN)
    has_support = active[:, 0]
    last = m - 1 - np.argmax(active[:, ::-1], axis=1)
    tau = t[np.arange(n), last]
    with np.errstate(invalid="ignore"):
        out = np.maximum(masked - tau[:, None], 0.0)
    out[~has_support] = 0.0
    return out


def _inverse_sqrt_degrees(degrees):
    """``1/sqrt(d)`` and a flag of the positive degrees (0 where ``d = 0``)."""
    positive = degrees > 0
    inverse = np.zeros_like(degrees)
    inverse[positive] = 1.0 / np.sqrt(degrees[positive])
    return inverse, positive


def lambda_step(eigenvalues, c, m, lam):
    """``(lambda, settled)``: one step of the ``lambda`` search (in memory and by blocks).

    ``lambda`` doubles while the top ``c`` eigenvalues sum below ``c`` (fewer
    than ``c`` components) and halves while the top ``c + 1`` sum to ``c + 1``
    (more, possible only when ``m > c``); otherwise the search has settled.
    """
    if np.sum(eigenvalues[:c]) < c - _UNIT_EIGENVALUE_TOL:
        return lam * 2.0, False
    if m > c and np.sum(eigenvalues[: c + 1]) > c + 1 - _UNIT_EIGENVALUE_TOL:
        return lam / 2.0, False
    return lam, True


def _top_eigenpairs(S1, c):
    """Top ``c`` eigenpairs of ``S1^T S1`` (m x m), decreasing, and all eigenvalues."""
    return top_eigenpairs_of_gram(S1.T @ S1, c)


def top_eigenpairs_of_gram(S2, c):
    """Top ``c`` eigenpairs of the Gram matrix ``S2 = S1^T S1``, and all eigenvalues."""
    S2 = np.maximum(S2, S2.T)  # symmetrised as in the authors' ``eig1``
    eigenvalues, vectors = np.linalg.eigh(S2)
    order = np.argsort(-eigenvalues, kind="stable")
    eigenvalues, vectors = eigenvalues[order], vectors[:, order]
    return vectors[:, :c], eigenvalues[:c], eigenvalues


def connected_bipartite_graph(B, G0, n_clusters, scale, *, reg_init, max_iter):
    """The authors' connectivity-constrained graph step (``coclustering_bipartite_fast1``).

    Finds a nonnegative ``S`` (n x m) close to ``B / scale`` whose bipartite
    graph ``[[0, S], [S^T, 0]]`` has ``n_clusters`` connected components,
    through the Ky Fan relaxation with an adaptive weight ``lambda``:

    * the embedding ``F = [U; V] / sqrt(2)`` holds the top ``c`` singular
      vectors of ``D_1^{-1/2} S D_2^{-1/2}``, first from the one-hot graph
      ``G0`` (n x m);
    * each sample row and each anchor column of ``S`` is projected onto
      the simplex, ``Pi((b - lambda/2 d) / scale)`` with ``d_ij`` the squared
      distance between the degree-normalised rows ``u_i / sqrt(D_1,ii)`` and
      ``v_j / sqrt(D_2,jj)``, on the support ``b > 0``; ``S`` is the mean of
      the two. A node of zero degree has an undefined normalised row; the
      code's distances are then 0 (its NaN is clipped by ``max(d, 0)``), and
      so they are here;
    * ``lambda`` (from ``reg_init``) doubles while the top ``c`` eigenvalues
      of ``S_n^T S_n`` sum below ``c`` (fewer than ``c`` components) and
      halves while the top ``c + 1`` sum to ``c + 1`` (more); the loop stops
      when neither holds, or after ``max_iter`` passes.

    Returns ``(labels, S, U, graph_term, n_iter, lam)``: the connected
    component of every sample (numbered in order of first sample), the
    graph, the sample half ``U`` of the embedding, the code's recorded graph
    term ``0.1 (tr U^T U + tr V^T V - tr U^T S_n V)`` and the final
    ``lambda``.
    """
    n, m = B.shape
    c = n_clusters
    half = np.sqrt(2.0) / 2.0
    # The one-hot start: D_1^{-1/2} G0 D_2^{-1/2} has orthonormal columns, so
    # its Gram matrix is I and the first c unit vectors are its eigenvectors.
    d1, d2 = G0.sum(axis=1), G0.sum(axis=0)
    inv1, pos1 = _inverse_sqrt_degrees(d1)
    inv2, pos2 = _inverse_sqrt_degrees(d2)
    S1 = inv1[:, None] * G0 * inv2[None, :]
    V = np.eye(m, c)
    U = S1 @ V
    U, V = half * U, half * V
    lam = float(reg_init)
    support = B > 0
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        U1, V1 = inv1[:, None] * U, inv2[:, None] * V
        dist = (
            np.sum(U1 * U1, axis=1)[:, None] + np.sum(V1 * V1, axis=1)[None, :] - 2.0 * U1 @ V1.T
        )
        dist = np.maximum(dist, 0.0)
        dist[~pos1] = 0.0
        dist[:, ~pos2] = 0.0
        target = (B - 0.5 * lam * dist) / scale
        S_rows = project_simplex_masked(target, support)
        S_cols = project_simplex_masked(target.T, support.T)
        S = 0.5 * (S_rows + S_cols.T)
        inv1, pos1 = _inverse_sqrt_degrees(S.sum(axis=1))
        inv2, pos2 = _inverse_sqrt_degrees(S.sum(axis=0))
        S1 = inv1[:, None] * S * inv2[None, :]
        V, top, eigenvalues = _top_eigenpairs(S1, c)
        with np.errstate(divide="ignore", invalid="ignore"):
            U = (S1 @ V) / np.sqrt(top)[None, :]
        U, V = half * U, half * V
        # The code saves U and V for a revert here, after overwriting them,
        # so its "revert" keeps the new ones: nothing to restore.
        lam, settled = lambda_step(eigenvalues, c, m, lam)
        if settled:
            break
    graph_term = _GRAPH_TERM_WEIGHT * float(np.sum(U * U) + np.sum(V * V) - np.trace(U.T @ S1 @ V))
    adjacency = sp.bmat([[None, sp.csr_matrix(S)], [sp.csr_matrix(S.T), None]], format="csr")
    _, components = connected_components(adjacency, directed=False)
    _, labels = np.unique(components[:n], return_inverse=True)
    return labels.astype(np.intp), S, U, graph_term, n_iter, lam


def eomsc_fit(
    views,
    *,
    Z0,
    n_clusters,
    n_components,
    reg_init,
    max_iter,
    inner_max_iter,
    tol,
    log,
    callback=None,
):
    """The alternating scheme of the authors' EOMSC-CA code (driver; valid input assumed).

    Per iteration: ``W_v`` (polar factor of ``X_v Z^T A^T``; ``I_{d_v x d}``
    in the first), ``A`` (polar factor of ``sum_v alpha_v^2 W_v^T X_v
    Z^T``), then the graph by :func:`connected_bipartite_graph` on
    ``B = sum_v alpha_v^2 X_v^T W_v A`` (``alpha_v^2`` in the linear term)
    and ``sum_v alpha_v^2``, restarted from ``Z0`` every time; then
    ``alpha_v ~ 1/||X_v - W_v A Z||_F`` and the recorded objective
    ``sum_v alpha_v^2 ||R_v||^2 + graph term``. Stops from the second
    iteration on when the relative change is below ``tol``.
    """
    d = n_components
    G0 = np.ascontiguousarray(Z0.T)
    Z = Z0
    W, A, alpha = start_model([X.shape[1] for X in views], d)
    history, inner = [], []
    start = time.perf_counter()
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        XZt = [(Z @ X).T for X in views]  # d_v x m
        W, A = anchor_step(XZt, W, A, alpha)
        a2 = alpha**2
        B = sum(w * (X @ (Wv @ A)) for w, X, Wv in zip(a2, views, W, strict=True))
        labels, S, U, graph_term, n_inner, lam = connected_bipartite_graph(
            B, G0, n_clusters, float(np.sum(a2)), reg_init=reg_init, max_iter=inner_max_iter
        )
        Z = np.ascontiguousarray(S.T)
        losses = residual_losses(views, W, A, Z)
        alpha = code_view_weights(losses, 1)
        history.append(float(np.sum(alpha**2 * losses)) + graph_term)
        inner.append(n_inner)
        if callback is not None:
            callback(n_iter, W, A, Z, alpha)
        detail = _progress(labels, lam, n_inner)
        if iteration_done(log, n_iter, history, start, tol, detail=detail):
            break
    return {
        "W": W,
        "A": A,
        "Z": Z,
        "U": U,
        "alpha": alpha,
        "labels": labels,
        "lambda": lam,
        "history": history,
        "inner": inner,
        "n_iter": n_iter,
    }


def _progress(labels, lam, n_inner):
    """The graph step's part of an iteration's log line."""
    return f", {labels.max() + 1} components, lambda {lam:.4g} after {n_inner} passes"


def component_labels(est, labels, U, kmeans_seed):
    """``(labels, n_found)``: the graph's components, or k-means when they are not ``k``.

    When the graph has ``n_found != n_clusters`` connected components, warn and
    label by k-means on the row-normalised embedding ``U`` (both paths).
    """
    k = est.n_clusters
    n_found = int(labels.max()) + 1
    if n_found != k:
        warn(
            f"EOMSCCA: the graph has {n_found} connected components instead of "
            f"n_clusters={k} after inner_max_iter={est.inner_max_iter} passes of "
            "the lambda search; labels_ come from k-means on the embedding",
            ConvergenceWarning,
        )
        F = _normalize_rows(np.nan_to_num(U))
        labels = KMeans(n_clusters=k, n_init=10, random_state=kmeans_seed).fit_predict(F)
    return np.asarray(labels, dtype=np.intp), n_found
