"""Plain NumPy references of the compiled kernels.

They define what the kernels compute: the tests compare the C++ core with
them, and the benchmarks time them as the vectorised-NumPy peer. They favour
clarity over speed, but stay vectorised (no Python loop over samples).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def project_simplex_sort(X, scale=1.0):
    """Row-wise projection onto {z >= 0, sum z = scale} by sorting.

    The classical sort-based method (Held, Wolfe & Crowder 1974; Duchi et
    al. 2008): with u sorted descending, rho = max{j : u_j - (cumsum_j -
    s)/j > 0} and tau = (cumsum_rho - s)/rho; the projection is max(x - tau, 0).
    """
    X = np.asarray(X, dtype=np.float64)
    m = X.shape[1]
    u = -np.sort(-X, axis=1)
    css = np.cumsum(u, axis=1) - scale
    j = np.arange(1, m + 1)
    cond = u - css / j > 0
    rho = m - np.argmax(cond[:, ::-1], axis=1)  # last True (always >= 1)
    tau = css[np.arange(X.shape[0]), rho - 1] / rho
    return np.maximum(X - tau[:, None], 0.0)


def kneighbors_anchors_dense(X, anchors, n_neighbors):
    """(sq_dist, indices) of the nearest anchors, from the full distance matrix.

    Sorted by (distance, anchor index), as the compiled kernel promises.
    """
    X = np.asarray(X, dtype=np.float64)
    A = np.asarray(anchors, dtype=np.float64)
    D = ((X[:, None, :] - A[None, :, :]) ** 2).sum(axis=2)
    order = np.argsort(D, axis=1, kind="stable")[:, :n_neighbors]
    return np.take_along_axis(D, order, axis=1), order


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
    d, ind = kneighbors_anchors_dense(X, anchors, k + 1)
    w = parameter_free_weights(d, k)
    rows = np.repeat(np.arange(n), k)
    return sp.csr_matrix((w.ravel(), (rows, ind[:, :k].ravel())), shape=(n, m))


def anchor_graph_chunked(X, anchors, n_neighbors, chunk_size=4096):
    """Fast vectorised NumPy anchor graph: BLAS distances by chunks of rows.

    The peer that a user would write: ||x||^2 - 2 x.a + ||a||^2 with a matrix
    product per chunk, argpartition for the k+1 nearest, then the weights.
    Memory is O(chunk_size * n_anchors).
    """
    X = np.asarray(X, dtype=np.float64)
    A = np.asarray(anchors, dtype=np.float64)
    n, m = X.shape[0], A.shape[0]
    k = min(n_neighbors, m - 1)
    a2 = np.einsum("ij,ij->i", A, A)
    data = np.empty((n, k))
    cols = np.empty((n, k), dtype=np.int64)
    for start in range(0, n, chunk_size):
        xb = X[start : start + chunk_size]
        D = np.einsum("ij,ij->i", xb, xb)[:, None] - 2.0 * (xb @ A.T) + a2[None, :]
        np.maximum(D, 0.0, out=D)
        part = np.argpartition(D, k, axis=1)[:, : k + 1]
        dp = np.take_along_axis(D, part, axis=1)
        order = np.argsort(dp, axis=1)
        part = np.take_along_axis(part, order, axis=1)
        dp = np.take_along_axis(dp, order, axis=1)
        data[start : start + chunk_size] = parameter_free_weights(dp, k)
        cols[start : start + chunk_size] = part[:, :k]
    indptr = np.arange(0, n * k + 1, k)
    return sp.csr_matrix((data.ravel(), cols.ravel(), indptr), shape=(n, m))
