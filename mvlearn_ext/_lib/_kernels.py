"""Private, unchecked entry points of the compiled core, for the package's drivers.

This is the one route from Python into ``mvlearn_ext._lib._core``: every
driver (the hot loops of the clusterers, the QPs of ``moo``, the LVMOGP
bound) and the validating public functions of :mod:`mvlearn_ext._lib`
(re-exported by :mod:`mvlearn_ext.utils`) call these functions; no other
module imports ``_core``.

They do not validate: the caller passes NumPy arrays of the dtype and layout
each function names, built by itself or validated once at an estimator's
entry. The bindings still check what memory safety needs (dimensions,
matching shapes, exact dtype, contiguity where a kernel needs it) and raise
``ValueError``/``TypeError`` on a break, so a driver bug is an error, never
a wrong read. ``n_threads`` follows the package's thread rule
(:func:`~mvlearn_ext._lib.effective_n_jobs`: ``None``/``-1`` every CPU,
negative all but ``|n| - 1``), a scalar check that costs nothing.

The NumPy references of every kernel are in :mod:`mvlearn_ext._lib._reference`;
the tests compare the two directly.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from mvlearn_ext._lib import _core
from mvlearn_ext._lib._threads import effective_n_jobs

__all__ = [
    "anchor_graph",
    "kneighbors_anchors",
    "kron_logdet",
    "kron_mv",
    "kron_mv_vjp",
    "kron_solve",
    "kron_solve_vjp",
    "masked_output_stats",
    "masked_output_stats_vjp",
    "pattern_sum",
    "project_simplex",
    "rbf_psi_stats",
    "rbf_psi_stats_vjp",
]


# ------------------------------------------------------------------ simplex


def project_simplex(X, scale=1.0, *, axis=1, out=None, n_threads=1):
    """Project every row (``axis=1``) or column (``axis=0``) of ``X`` onto the scaled simplex.

    ``X``: a float32 or float64 ndarray with finite entries, any strides;
    ``out``: ``None`` or an ndarray of the shape and dtype of ``X`` that is
    ``X`` itself or does not overlap it; ``scale > 0``. The checked version
    is :func:`mvlearn_ext.utils.project_simplex`. A non-finite entry, which
    the kernel finds in its pass over the data, is a ``ValueError``.
    """
    if out is None:
        out = np.empty_like(
            X, order="C" if X.flags.c_contiguous or not X.flags.f_contiguous else "F"
        )
    if X.size == 0:
        return out
    src, dst = (X, out) if axis == 1 else (X.T, out.T)
    if not _core.project_simplex(src, dst, scale, effective_n_jobs(n_threads)):
        raise ValueError("X contains NaN or infinity")
    return out


# ------------------------------------------------------------ anchor graph


def _same_float_dtype(X, anchors):
    """float32 only when both arrays are float32 (no copy when they already match)."""
    dtype = np.float32 if X.dtype == anchors.dtype == np.float32 else np.float64
    return X.astype(dtype, copy=False), anchors.astype(dtype, copy=False)


def kneighbors_anchors(X, anchors, n_neighbors, *, n_threads=1):
    """``(distances, indices)`` of the ``n_neighbors`` nearest anchors of every row of ``X``.

    ``X`` (n, d) and ``anchors`` (m, d): float ndarrays, any strides;
    ``1 <= n_neighbors <= m``. The checked version is
    :func:`mvlearn_ext.utils.kneighbors_anchors`.
    """
    X, anchors = _same_float_dtype(X, anchors)
    ok, dist, ind = _core.knn_anchors(X, anchors, n_neighbors, effective_n_jobs(n_threads))
    if not ok:
        raise ValueError("X or anchors contain NaN or infinity")
    return dist, ind


def anchor_graph(X, anchors, n_neighbors, *, n_threads=1):
    """The parameter-free kNN anchor graph as CSR of shape (n, m).

    ``X`` (n, d) and ``anchors`` (m, d): float ndarrays, any strides;
    ``0 <= n_neighbors <= m - 1`` (not clipped here). The checked version,
    which clips ``n_neighbors``, is :func:`mvlearn_ext.utils.anchor_graph`.
    """
    X, anchors = _same_float_dtype(X, anchors)
    ok, weights, cols = _core.knn_anchor_graph(
        X, anchors, n_neighbors, effective_n_jobs(n_threads)
    )
    if not ok:
        raise ValueError("X or anchors contain NaN or infinity")
    n, width = weights.shape
    indptr = np.arange(0, n * width + 1, width, dtype=np.int64)
    return sp.csr_matrix((weights.ravel(), cols.ravel(), indptr), shape=(n, anchors.shape[0]))


# --------------------------------------------- sparse multi-output GP algebra
# Every array is float64 and C-contiguous (the kernels read raw row-major
# memory; the bindings refuse another layout). Conventions: ``vec`` is
# column-major, so ``(A kron B) vec(X) = vec(B X A^T)``.


def _empty(shape):
    return np.empty(shape, dtype=np.float64)


def kron_mv(A, B, X, *, n_threads=1):
    """``(A kron B) vec(X)`` as the matrix ``B X A^T`` of shape (b, a), without the product.

    ``A`` (a, a_c), ``B`` (b, b_c), ``X`` (b_c, a_c).
    """
    return _core.gp_kron_mv(A, B, X, effective_n_jobs(n_threads))


def kron_mv_vjp(A, B, X, Ybar, *, n_threads=1):
    """VJP of :func:`kron_mv`: ``(Xbar, Abar, Bbar)`` for the cotangent ``Ybar`` (b, a)."""
    return _core.gp_kron_mv_vjp(A, B, X, Ybar, effective_n_jobs(n_threads))


def kron_solve(A, B, X):
    """``Z = B^{-1} X A^{-1}``, the solution of ``(A kron B) vec(Z) = vec(X)``, SPD ``A``, ``B``.

    By the Cholesky factors of the two factors: O(a^3 + b^3 + ab(a + b))
    instead of O(a^3 b^3). ``LinAlgError`` if ``A`` or ``B`` is not
    positive definite.
    """
    ok, Z = _core.gp_kron_solve(A, B, X)
    if not ok:
        raise np.linalg.LinAlgError("A or B is not positive definite")
    return Z


def kron_solve_vjp(A, B, Z, Zbar):
    """VJP of :func:`kron_solve`: ``(Xbar, Abar, Bbar)`` given its output ``Z`` and ``Zbar``.

    ``Abar`` and ``Bbar`` are the gradients for a general (not symmetrised)
    perturbation of the factors.
    """
    ok, Xbar, Abar, Bbar = _core.gp_kron_solve_vjp(A, B, Z, Zbar)
    if not ok:
        raise np.linalg.LinAlgError("A or B is not positive definite")
    return Xbar, Abar, Bbar


def kron_logdet(A, B, *, return_grad=False):
    """``log|A kron B| = b log|A| + a log|B|`` for SPD ``A`` (a, a), ``B`` (b, b).

    With ``return_grad=True`` also ``(dA, dB) = (b A^{-1}, a B^{-1})``, the
    gradient (the VJP for a unit cotangent).
    """
    ok, ld, Ainv, Binv = _core.gp_kron_logdet(A, B)
    if not ok:
        raise np.linalg.LinAlgError("A or B is not positive definite")
    if not return_grad:
        return ld
    return ld, B.shape[0] * Ainv, A.shape[0] * Binv


def rbf_psi_stats(mu, S, Z, lengthscales, *, psi2=True, n_threads=1):
    """Psi-statistics of the unit-variance ARD-RBF kernel under ``q(h_p) = N(mu_p, diag S_p)``.

    ``mu``, ``S`` (P, D) with ``S >= 0``; ``Z`` (M, D); ``lengthscales``
    (D,) ``> 0``. Returns ``psi1`` (P, M), ``E k(h_p, z_m)``, and, if
    ``psi2``, ``(psi1, psi2)`` with ``psi2`` (P, M, M),
    ``E k(z_m, h_p) k(h_p, z_m')`` (sum over ``p`` for the classical ``Psi_2``).
    """
    p1, p2 = _core.gp_rbf_psi_stats(
        mu, S, Z, lengthscales, bool(psi2), effective_n_jobs(n_threads)
    )
    return (p1, p2) if psi2 else p1


def rbf_psi_stats_vjp(mu, S, Z, lengthscales, psi1bar=None, psi2bar=None, *, n_threads=1):
    """VJP of :func:`rbf_psi_stats`: ``(mubar, Sbar, Zbar, lengthscalesbar)``.

    A cotangent left as ``None`` is zero.
    """
    M = Z.shape[0]
    g1 = _empty((0, M)) if psi1bar is None else psi1bar
    g2 = _empty((0, M, M)) if psi2bar is None else psi2bar
    return _core.gp_rbf_psi_stats_vjp(mu, S, Z, lengthscales, g1, g2, effective_n_jobs(n_threads))


def masked_output_stats(Yt, G, W, *, n_threads=1):
    """Per-output sufficient statistics of the LVMOGP bound over the observed entries.

    ``Yt`` (P, N): transposed targets, NaN marks a missing entry; ``G``
    (N, K); ``W`` (N, J). Returns ``(D, E, C, count, ysq)``:
    ``D[p] = sum_{n observed} g_n g_n^T`` (P, K, K), ``E[p] = sum y_np g_n``
    (P, K), ``C[p] = sum w_n`` (P, J), the number of observed entries and
    ``sum y_np^2`` per output (P,). Cost O(n_observed K^2), memory O(P K^2).
    An infinity in ``Yt`` is a ``ValueError``.
    """
    ok, D, E, C, cnt, ysq = _core.gp_masked_output_stats(Yt, G, W, effective_n_jobs(n_threads))
    if not ok:
        raise ValueError("Yt contains infinity (NaN marks a missing entry)")
    return D, E, C, cnt, ysq


def masked_output_stats_vjp(Yt, G, J, Dbar=None, Ebar=None, Cbar=None, *, n_threads=1):
    """VJP of :func:`masked_output_stats` with respect to ``(G, W)``: ``(Gbar, Wbar)``.

    ``J`` is the number of columns of ``W``; a cotangent left as ``None`` is zero.
    """
    K = G.shape[1]
    d = _empty((0, K, K)) if Dbar is None else Dbar
    e = _empty((0, K)) if Ebar is None else Ebar
    c = _empty((0, J)) if Cbar is None else Cbar
    return _core.gp_masked_output_stats_vjp(Yt, G, J, d, e, c, effective_n_jobs(n_threads))


def pattern_sum(indptr, indices, V, *, n_threads=1):
    """Row sums of ``V`` over a sparse pattern: ``out[r] = sum_{c in row r} V[c]``.

    The product of the 0/1 matrix with CSR pattern ``(indptr, indices)``
    (int64, C-contiguous) and ``V`` (n_cols, K), without its values: the
    per-input (or per-output) sums of the LVMOGP bound over the missing or
    observed entries. The binding checks the pattern (monotone ``indptr``
    from 0 to ``len(indices)``, every index in ``[0, n_cols)``): it indexes
    memory with it. Cost O(nnz K), parallel over rows.
    """
    return _core.gp_pattern_sum(indptr, indices, V, effective_n_jobs(n_threads))
