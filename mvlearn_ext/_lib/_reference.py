"""Plain NumPy references of the compiled kernels.

They define what the kernels compute: the tests compare the C++ core with
them. They favour clarity over speed, but stay vectorised (no Python loop
over samples).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def project_simplex_sort(X, scale=1.0):
    """Row-wise projection onto {z >= 0, sum z = scale} by sorting.

    The classical sort-based method (Held, Wolfe & Crowder 1974; Duchi et
    al. 2008): with u sorted descending, rho = max{j : u_j - (cumsum_j -
    s)/j > 0} and tau = (cumsum_rho - s)/rho; the projection is max(x - tau, 0).
    Each row is first shifted by its maximum (the projection commutes with
    shifts), so that rounding errors scale with s, not with the magnitude of
    the row; entries whose shift overflows to -inf are never in the support.
    """
    X = np.asarray(X, dtype=np.float64)
    m = X.shape[1]
    if X.shape[0] == 0 or m == 0:
        return X.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        X = X - X.max(axis=1, keepdims=True)
        u = -np.sort(-X, axis=1)
        css = np.cumsum(u, axis=1) - scale
        j = np.arange(1, m + 1)
        cond = u - css / j > 0
    rho = m - np.argmax(cond[:, ::-1], axis=1)  # last True (always >= 1)
    tau = css[np.arange(X.shape[0]), rho - 1] / rho
    return np.maximum(X - tau[:, None], 0.0)


def _wide_sq_distances(X, anchors):
    """Squared distances of every pair as ``(s, e)`` with value ``s * 4**e``, ``s`` in [1, 4).

    Each difference is scaled by the power of two of the pair's largest one
    (an exact scaling), so that no square overflows or underflows whatever
    the magnitude of the finite input; ``s = 0`` (with the smallest ``e``)
    for coinciding points. ``(e, s)`` sorts like the distances.
    """
    X = np.asarray(X, dtype=np.float64)
    A = np.asarray(anchors, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        diff = X[:, None, :] - A[None, :, :]
    halve = ~np.isfinite(diff).all(axis=2)
    if halve.any():  # differences beyond the largest float: take those of the halves
        diff = np.where(halve[..., None], X[:, None, :] / 2 - A[None, :, :] / 2, diff)
    big = np.abs(diff).max(axis=2)
    e = np.frexp(big)[1] - 1  # big in [2**e, 2**(e + 1))
    s = (np.ldexp(diff, -e[..., None]) ** 2).sum(axis=2)
    zero = big == 0
    s[zero] = 0.0
    t = np.where(zero, 0, (np.frexp(np.where(zero, 1.0, s))[1] - 1) // 2)
    s = np.ldexp(s, -2 * t)
    e = np.where(zero, np.iinfo(np.int32).min // 4, e + t + halve)
    return s, e


def _nearest_wide(X, anchors, n_neighbors):
    """``(s, e, indices)`` of the nearest anchors, sorted by (distance, anchor index)."""
    s, e = _wide_sq_distances(X, anchors)
    m = s.shape[1]
    index = np.broadcast_to(np.arange(m), s.shape)
    order = np.lexsort((index, s, e), axis=1)[:, :n_neighbors]
    return (
        np.take_along_axis(s, order, axis=1),
        np.take_along_axis(e, order, axis=1),
        order,
    )


def kneighbors_anchors_dense(X, anchors, n_neighbors):
    """(distances, indices) of the nearest anchors, from the full distance matrix.

    Sorted by (distance, anchor index), as the compiled kernel promises;
    Euclidean distances, finite for any finite input whose distances are.
    """
    s, e, order = _nearest_wide(X, anchors, n_neighbors)
    with np.errstate(over="ignore"):
        return np.ldexp(np.sqrt(s), e), order


def parameter_free_weights(sorted_sq_dist, k):
    """Weights of Nie et al. from the k+1 smallest sorted squared distances."""
    d = np.asarray(sorted_sq_dist, dtype=np.float64)
    last = d[:, k : k + 1]
    num = last - d[:, :k]
    den = num.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0 / k)
    return w


def anchor_graph_dense(X, anchors, n_neighbors):
    """The parameter-free kNN anchor graph, densely, as a CSR matrix."""
    m = np.asarray(anchors).shape[0]
    k = min(n_neighbors, m - 1)
    n = np.asarray(X).shape[0]
    if k == 0:
        _, ind = kneighbors_anchors_dense(X, anchors, 1)
        return sp.csr_matrix((np.ones(n), (np.arange(n), ind[:, 0])), shape=(n, m))
    s, e, ind = _nearest_wide(X, anchors, k + 1)
    # The weights do not change under a common scale of a row's distances:
    # take them relative to the (k+1)-th, so that none overflows.
    d = np.ldexp(s, 2 * np.maximum(e - e[:, k : k + 1], -2000))
    w = parameter_free_weights(d, k)
    rows = np.repeat(np.arange(n), k)
    return sp.csr_matrix((w.ravel(), (rows, ind[:, :k].ravel())), shape=(n, m))


# ---------------------------------------------------------------------------
# Sparse multi-output GP algebra (csrc/src/gp.cpp): the NumPy/SciPy route.


def kron_dense_mv(A, B, X):
    """``(A kron B) vec(X)`` with the Kronecker product formed (column-major vec)."""
    A, B, X = (np.asarray(v, dtype=np.float64) for v in (A, B, X))
    y = np.kron(A, B) @ X.ravel(order="F")
    return y.reshape(B.shape[0], A.shape[0], order="F")


def kron_solve_factored(A, B, X):
    """``B^{-1} X A^{-1}`` by the Cholesky factors of SPD ``A`` and ``B`` (SciPy)."""
    from scipy.linalg import cho_factor, cho_solve

    T = cho_solve(cho_factor(B, lower=True), X)
    return cho_solve(cho_factor(A, lower=True), T.T).T


def rbf_psi_stats(mu, S, Z, lengthscales, psi2=True):
    """Closed-form ARD-RBF Psi-statistics (unit variance), vectorised.

    ``psi1[p, m] = prod_q (1 + S_pq / l_q^2)^{-1/2}
    exp(-1/2 sum_q (mu_pq - z_mq)^2 / (l_q^2 + S_pq))`` and
    ``psi2[p, m, m'] = prod_q (1 + 2 S_pq / l_q^2)^{-1/2}
    exp(-sum_q (z_mq - z_m'q)^2 / (4 l_q^2) - sum_q (mu_pq - zbar_q)^2 / (l_q^2 + 2 S_pq))``
    with ``zbar = (z_m + z_m') / 2``.
    """
    lam = np.asarray(lengthscales, dtype=np.float64) ** 2
    mu, S, Z = (np.asarray(v, dtype=np.float64) for v in (mu, S, Z))
    d = mu[:, None, :] - Z[None, :, :]
    c = lam + S[:, None, :]
    pre1 = np.prod(np.sqrt(lam / (lam + S)), axis=1)
    psi1 = pre1[:, None] * np.exp(-0.5 * np.sum(d**2 / c, axis=-1))
    if not psi2:
        return psi1, None
    dz = Z[:, None, :] - Z[None, :, :]
    zbar = 0.5 * (Z[:, None, :] + Z[None, :, :])
    db = mu[:, None, None, :] - zbar[None]
    c2 = (lam + 2.0 * S)[:, None, None, :]
    pre2 = np.prod(np.sqrt(lam / (lam + 2.0 * S)), axis=1)
    ex = np.sum(dz**2 / (4.0 * lam), axis=-1)[None] + np.sum(db**2 / c2, axis=-1)
    return psi1, pre2[:, None, None] * np.exp(-ex)


def rbf_psi_stats_vjp(mu, S, Z, lengthscales, psi1bar=None, psi2bar=None):
    """``(mubar, Sbar, Zbar, lengthscalesbar)`` of :func:`rbf_psi_stats`, vectorised."""
    ls = np.asarray(lengthscales, dtype=np.float64)
    lam = ls**2
    mu, S, Z = (np.asarray(v, dtype=np.float64) for v in (mu, S, Z))
    psi1, psi2 = rbf_psi_stats(mu, S, Z, ls, psi2=psi2bar is not None)
    mubar, Sbar = np.zeros_like(mu), np.zeros_like(S)
    Zbar, lambar = np.zeros_like(Z), np.zeros_like(lam)
    if psi1bar is not None:
        w = psi1bar * psi1
        c = lam + S[:, None, :]
        r = (mu[:, None, :] - Z[None]) / c
        mubar -= np.einsum("pm,pmq->pq", w, r)
        Zbar += np.einsum("pm,pmq->mq", w, r)
        Sbar += np.einsum("pm,pmq->pq", w, -0.5 / c + 0.5 * r**2)
        lambar += np.einsum("pm,pmq->q", w, -0.5 / c + 0.5 / lam + 0.5 * r**2)
    if psi2bar is not None:
        w = psi2bar * psi2
        c2 = (lam + 2.0 * S)[:, None, None, :]
        r = (mu[:, None, None, :] - 0.5 * (Z[:, None, :] + Z[None, :, :])[None]) / c2
        t = (Z[:, None, :] - Z[None, :, :]) / (2.0 * lam)
        mubar -= 2.0 * np.einsum("pij,pijq->pq", w, r)
        Sbar += np.einsum("pij,pijq->pq", w, -1.0 / c2 + 2.0 * r**2)
        Zbar += np.einsum("pij,pijq->iq", w, r - t[None])
        Zbar += np.einsum("pij,pijq->jq", w, r + t[None])
        lambar += np.einsum("pij,pijq->q", w, -0.5 / c2 + 0.5 / lam + t[None] ** 2 + r**2)
    return mubar, Sbar, Zbar, lambar * 2.0 * ls


def masked_output_stats(Yt, G, W):
    """Per-output statistics over the non-NaN entries of ``Yt`` (P, N), by BLAS products.

    Returns ``(D, E, C, count, ysq)``: ``D[p] = sum_n o_pn g_n g_n^T``,
    ``E[p] = sum_n o_pn y_pn g_n``, ``C[p] = sum_n o_pn w_n``, with the
    observation mask ``o``. Dense in the mask: O(N P K^2) flops.
    """
    Yt, G, W = (np.asarray(v, dtype=np.float64) for v in (Yt, G, W))
    O = (~np.isnan(Yt)).astype(np.float64)
    Y0 = np.where(O > 0, Yt, 0.0)
    N, K = G.shape
    GG = (G[:, :, None] * G[:, None, :]).reshape(N, K * K)
    D = (O @ GG).reshape(-1, K, K)
    return D, Y0 @ G, O @ W, O.sum(axis=1), np.einsum("pn,pn->p", Y0, Y0)


def masked_output_stats_vjp(Yt, G, J, Dbar=None, Ebar=None, Cbar=None):
    """``(Gbar, Wbar)`` of :func:`masked_output_stats`, by BLAS products."""
    Yt, G = np.asarray(Yt, dtype=np.float64), np.asarray(G, dtype=np.float64)
    O = (~np.isnan(Yt)).astype(np.float64)
    N, K = G.shape
    Gbar = np.zeros((N, K))
    if Dbar is not None:
        Ds = (Dbar + np.swapaxes(Dbar, 1, 2)).reshape(-1, K * K)
        T = (O.T @ Ds).reshape(N, K, K)
        Gbar += np.einsum("nkl,nl->nk", T, G)
    if Ebar is not None:
        Gbar += np.where(O > 0, Yt, 0.0).T @ Ebar
    Wbar = O.T @ Cbar if Cbar is not None else np.zeros((N, J))
    return Gbar, Wbar


def kron_mv(A, B, X):
    """``(A kron B) vec(X)`` as ``B X A^T`` by two matrix products (the factored route)."""
    A, B, X = (np.asarray(v, dtype=np.float64) for v in (A, B, X))
    return B @ X @ A.T


def kron_mv_vjp(A, B, X, Ybar):
    """``(Xbar, Abar, Bbar)`` of :func:`kron_mv` for the cotangent ``Ybar``."""
    A, B, X, Ybar = (np.asarray(v, dtype=np.float64) for v in (A, B, X, Ybar))
    U = Ybar @ A
    return B.T @ U, Ybar.T @ (B @ X), U @ X.T


def kron_solve_vjp(A, B, Z, Zbar):
    """``(Xbar, Abar, Bbar)`` of ``Z = B^{-1} X A^{-1}`` (general perturbations of A, B)."""
    Z, Zbar = np.asarray(Z, dtype=np.float64), np.asarray(Zbar, dtype=np.float64)
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    Xbar = kron_solve_factored(A, B, Zbar)
    return Xbar, -Z.T @ B @ Xbar, -Xbar @ A @ Z.T


def kron_logdet(A, B, return_grad=False):
    """``log|A kron B| = b log|A| + a log|B|`` by NumPy's Cholesky; with the gradient
    ``(b A^{-1}, a B^{-1})`` if ``return_grad``."""
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    a, b = A.shape[0], B.shape[0]
    La, Lb = np.linalg.cholesky(A), np.linalg.cholesky(B)
    ld = 2.0 * (b * np.log(np.diag(La)).sum() + a * np.log(np.diag(Lb)).sum())
    if not return_grad:
        return ld
    return ld, b * np.linalg.inv(A), a * np.linalg.inv(B)


def kron_gaussian_kl(mean, S_A, S_B, K_A=None, K_B=None):
    """KL( N(vec mean, S_A kron S_B) || N(0, K_A kron K_B) ) without a Kronecker product.

    ``mean`` is (b, a); ``S_A``, ``K_A`` are (a, a); ``S_B``, ``K_B`` are
    (b, b). With ``K_A = K_B = None`` the prior is ``N(0, I)`` (the whitened KL).
    """
    mean = np.asarray(mean, dtype=np.float64)
    b, a = mean.shape
    ld_S = kron_logdet(S_A, S_B)
    if K_A is None and K_B is None:
        return 0.5 * (np.trace(S_A) * np.trace(S_B) + np.sum(mean**2) - a * b - ld_S)
    ld_K = kron_logdet(K_A, K_B)
    tr = np.trace(np.linalg.solve(K_A, S_A)) * np.trace(np.linalg.solve(K_B, S_B))
    quad = float(np.sum(mean * kron_solve_factored(K_A, K_B, mean)))
    return 0.5 * (tr + quad - a * b + ld_K - ld_S)


def pattern_sum(indptr, indices, V):
    """``out[r] = sum of the rows V[indices[indptr[r]:indptr[r + 1]]]``, by a SciPy CSR product."""
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    V = np.asarray(V, dtype=np.float64)
    ones = np.ones(indices.size)
    pattern = sp.csr_matrix((ones, indices, indptr), shape=(indptr.size - 1, V.shape[0]))
    return np.asarray(pattern @ V)
