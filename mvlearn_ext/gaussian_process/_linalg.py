"""Kronecker and Psi-statistic algebra of sparse multi-output GPs.

Thin validated wrappers over the compiled core (``mvlearn_ext._lib._core``,
sources in ``csrc/src/gp.cpp``) with, for each operation, its
vector-Jacobian product (VJP), so that the LVMOGP bound has exact gradients.
Every function takes ``backend="cpp"`` (the compiled kernels) or
``backend="numpy"`` (the vectorised NumPy/SciPy route of the same algebra,
:mod:`mvlearn_ext._lib._reference`): the tests compare the two, the
benchmark times them against each other.

Conventions: ``vec`` is column-major, so ``(A kron B) vec(X) = vec(B X A^T)``;
an LVMOGP inducing matrix ``U`` is ``M_X x M_H`` with
``cov(vec U) = K_H kron K_X``.
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext._lib import _core, effective_n_threads
from mvlearn_ext._lib import _reference as ref

__all__ = [
    "kron_gaussian_kl",
    "kron_logdet",
    "kron_mv",
    "kron_mv_vjp",
    "kron_solve",
    "kron_solve_vjp",
    "masked_output_stats",
    "masked_output_stats_vjp",
    "pattern_sum",
    "rbf_psi_stats",
    "rbf_psi_stats_vjp",
]

_BACKENDS = ("cpp", "numpy")


def _f64(a, name, ndim=None):
    a = np.ascontiguousarray(a, dtype=np.float64)
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {a.shape}")
    return a


def _check_backend(backend):
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")


def _finite(a, name):
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinity")


def _empty(shape):
    return np.empty(shape, dtype=np.float64)


# --------------------------------------------------------------- Kronecker


def kron_mv(A, B, X, *, backend="cpp", n_threads=1):
    """``(A kron B) vec(X)`` as the matrix ``B X A^T`` (never forms the Kronecker product).

    Parameters
    ----------
    A : array-like of shape (a, a_c)
    B : array-like of shape (b, b_c)
    X : array-like of shape (b_c, a_c)

    Returns
    -------
    Y : ndarray of shape (b, a)
        ``vec(Y) = (A kron B) vec(X)``, column-major ``vec``.
    """
    _check_backend(backend)
    A, B, X = _f64(A, "A", 2), _f64(B, "B", 2), _f64(X, "X", 2)
    if X.shape != (B.shape[1], A.shape[1]):
        raise ValueError(f"X must have shape {(B.shape[1], A.shape[1])}, got {X.shape}")
    if backend == "numpy":
        return B @ X @ A.T
    return _core.gp_kron_mv(A, B, X, effective_n_threads(n_threads))


def kron_mv_vjp(A, B, X, Ybar, *, backend="cpp", n_threads=1):
    """VJP of :func:`kron_mv`: ``(Xbar, Abar, Bbar)`` for the cotangent ``Ybar`` (b, a)."""
    _check_backend(backend)
    A, B, X, Ybar = (_f64(v, n, 2) for v, n in ((A, "A"), (B, "B"), (X, "X"), (Ybar, "Ybar")))
    if X.shape != (B.shape[1], A.shape[1]):
        raise ValueError(f"X must have shape {(B.shape[1], A.shape[1])}, got {X.shape}")
    if Ybar.shape != (B.shape[0], A.shape[0]):
        raise ValueError(f"Ybar must have shape {(B.shape[0], A.shape[0])}, got {Ybar.shape}")
    if backend == "numpy":
        U = Ybar @ A
        return B.T @ U, Ybar.T @ (B @ X), U @ X.T
    return _core.gp_kron_mv_vjp(A, B, X, Ybar, effective_n_threads(n_threads))


def _check_spd_pair(A, B):
    A, B = _f64(A, "A", 2), _f64(B, "B", 2)
    for M, n in ((A, "A"), (B, "B")):
        if M.shape[0] != M.shape[1]:
            raise ValueError(f"{n} must be square, got shape {M.shape}")
        _finite(M, n)
    return A, B


def kron_solve(A, B, X, *, backend="cpp"):
    """Solve ``(A kron B) vec(Z) = vec(X)`` for SPD ``A`` (a, a) and ``B`` (b, b).

    Returns ``Z = B^{-1} X A^{-1}`` of shape (b, a), by the Cholesky factors of
    the two factors (O(a^3 + b^3 + ab(a + b)) instead of O(a^3 b^3)).
    """
    _check_backend(backend)
    A, B = _check_spd_pair(A, B)
    X = _f64(X, "X", 2)
    if X.shape != (B.shape[0], A.shape[0]):
        raise ValueError(f"X must have shape {(B.shape[0], A.shape[0])}, got {X.shape}")
    if backend == "numpy":
        return ref.kron_solve_factored(A, B, X)
    ok, Z = _core.gp_kron_solve(A, B, X)
    if not ok:
        raise np.linalg.LinAlgError("A or B is not positive definite")
    return Z


def kron_solve_vjp(A, B, Z, Zbar, *, backend="cpp"):
    """VJP of :func:`kron_solve`: ``(Xbar, Abar, Bbar)`` given its output ``Z`` and ``Zbar``.

    ``Abar`` and ``Bbar`` are the gradients for a general (not symmetrised)
    perturbation of the factors.
    """
    _check_backend(backend)
    A, B = _check_spd_pair(A, B)
    Z, Zbar = _f64(Z, "Z", 2), _f64(Zbar, "Zbar", 2)
    if Z.shape != (B.shape[0], A.shape[0]) or Zbar.shape != Z.shape:
        raise ValueError("Z and Zbar must have shape (B.shape[0], A.shape[0])")
    if backend == "numpy":
        Xbar = ref.kron_solve_factored(A, B, Zbar)
        return Xbar, -Z.T @ B @ Xbar, -Xbar @ A @ Z.T
    ok, Xbar, Abar, Bbar = _core.gp_kron_solve_vjp(A, B, Z, Zbar)
    if not ok:
        raise np.linalg.LinAlgError("A or B is not positive definite")
    return Xbar, Abar, Bbar


def kron_logdet(A, B, *, return_grad=False, backend="cpp"):
    """``log|A kron B| = b log|A| + a log|B|`` for SPD ``A`` (a, a), ``B`` (b, b).

    With ``return_grad=True`` also returns ``(dA, dB) = (b A^{-1}, a B^{-1})``,
    the gradient (the VJP for a unit cotangent).
    """
    _check_backend(backend)
    A, B = _check_spd_pair(A, B)
    a, b = A.shape[0], B.shape[0]
    if backend == "numpy":
        La, Lb = np.linalg.cholesky(A), np.linalg.cholesky(B)
        ld = 2.0 * (b * np.log(np.diag(La)).sum() + a * np.log(np.diag(Lb)).sum())
        if not return_grad:
            return ld
        return ld, b * np.linalg.inv(A), a * np.linalg.inv(B)
    ok, ld, Ainv, Binv = _core.gp_kron_logdet(A, B)
    if not ok:
        raise np.linalg.LinAlgError("A or B is not positive definite")
    if not return_grad:
        return ld
    return ld, b * Ainv, a * Binv


def kron_gaussian_kl(mean, S_A, S_B, K_A=None, K_B=None, *, backend="cpp"):
    """KL( N(vec mean, S_A kron S_B) || N(0, K_A kron K_B) ) without forming a Kronecker product.

    ``mean`` is (b, a); ``S_A``, ``K_A`` are (a, a); ``S_B``, ``K_B`` are (b, b).
    With ``K_A = K_B = None`` the prior is ``N(0, I)`` (the whitened KL).
    """
    mean = _f64(mean, "mean", 2)
    b, a = mean.shape
    S_A, S_B = _check_spd_pair(S_A, S_B)
    if S_A.shape[0] != a or S_B.shape[0] != b:
        raise ValueError("S_A must be (a, a) and S_B (b, b) for mean of shape (b, a)")
    ld_S = kron_logdet(S_A, S_B, backend=backend)
    if K_A is None and K_B is None:
        return 0.5 * (np.trace(S_A) * np.trace(S_B) + np.sum(mean**2) - a * b - ld_S)
    if K_A is None or K_B is None:
        raise ValueError("give both K_A and K_B, or neither (whitened prior)")
    K_A, K_B = _check_spd_pair(K_A, K_B)
    ld_K = kron_logdet(K_A, K_B, backend=backend)
    tr = np.trace(np.linalg.solve(K_A, S_A)) * np.trace(np.linalg.solve(K_B, S_B))
    quad = float(np.sum(mean * kron_solve(K_A, K_B, mean, backend=backend)))
    return 0.5 * (tr + quad - a * b + ld_K - ld_S)


# ---------------------------------------------------------- Psi-statistics


def _psi_args(mu, S, Z, lengthscales):
    mu, S, Z = _f64(mu, "mu", 2), _f64(S, "S", 2), _f64(Z, "Z", 2)
    ls = _f64(lengthscales, "lengthscales", 1)
    if S.shape != mu.shape:
        raise ValueError(f"S must have the shape of mu {mu.shape}, got {S.shape}")
    if Z.shape[1] != mu.shape[1] or ls.shape[0] != mu.shape[1]:
        raise ValueError("Z and lengthscales must have mu.shape[1] columns/entries")
    if np.any(S < 0):
        raise ValueError("S (variances) must be >= 0")
    if np.any(ls <= 0):
        raise ValueError("lengthscales must be > 0")
    return mu, S, Z, ls


def rbf_psi_stats(mu, S, Z, lengthscales, *, psi2=True, backend="cpp", n_threads=1):
    """Psi-statistics of the unit-variance ARD-RBF kernel under ``q(h_p) = N(mu_p, diag S_p)``.

    Parameters
    ----------
    mu, S : array-like of shape (P, D)
        Means and variances of the ``P`` latent vectors.
    Z : array-like of shape (M, D)
        Inducing inputs.
    lengthscales : array-like of shape (D,)
    psi2 : bool, default=True
        Also compute the per-output second statistic.

    Returns
    -------
    psi1 : ndarray of shape (P, M)
        ``E k(h_p, z_m)``.
    psi2 : ndarray of shape (P, M, M)
        ``E k(z_m, h_p) k(h_p, z_m')`` (only if ``psi2``). Sum over ``p`` for
        the classical ``Psi_2``.
    """
    _check_backend(backend)
    mu, S, Z, ls = _psi_args(mu, S, Z, lengthscales)
    if backend == "numpy":
        p1, p2 = ref.rbf_psi_stats(mu, S, Z, ls, psi2=psi2)
        return (p1, p2) if psi2 else p1
    p1, p2 = _core.gp_rbf_psi_stats(mu, S, Z, ls, bool(psi2), effective_n_threads(n_threads))
    return (p1, p2) if psi2 else p1


def rbf_psi_stats_vjp(
    mu, S, Z, lengthscales, psi1bar=None, psi2bar=None, *, backend="cpp", n_threads=1
):
    """VJP of :func:`rbf_psi_stats`: ``(mubar, Sbar, Zbar, lengthscalesbar)``."""
    _check_backend(backend)
    mu, S, Z, ls = _psi_args(mu, S, Z, lengthscales)
    P, M = mu.shape[0], Z.shape[0]
    g1 = _empty((0, M)) if psi1bar is None else _f64(psi1bar, "psi1bar", 2)
    g2 = _empty((0, M, M)) if psi2bar is None else _f64(psi2bar, "psi2bar", 3)
    if psi1bar is not None and g1.shape != (P, M):
        raise ValueError(f"psi1bar must have shape {(P, M)}, got {g1.shape}")
    if psi2bar is not None and g2.shape != (P, M, M):
        raise ValueError(f"psi2bar must have shape {(P, M, M)}, got {g2.shape}")
    if backend == "numpy":
        return ref.rbf_psi_stats_vjp(
            mu, S, Z, ls, None if psi1bar is None else g1, None if psi2bar is None else g2
        )
    return _core.gp_rbf_psi_stats_vjp(mu, S, Z, ls, g1, g2, effective_n_threads(n_threads))


# ------------------------------------------------ masked output statistics


def masked_output_stats(Yt, G, W, *, backend="cpp", n_threads=1):
    """Per-output sufficient statistics of the LVMOGP bound over observed entries.

    Parameters
    ----------
    Yt : array-like of shape (P, N)
        Transposed targets; NaN marks a missing entry.
    G : array-like of shape (N, K)
    W : array-like of shape (N, J)

    Returns
    -------
    D : ndarray (P, K, K)
        ``sum_{n observed} g_n g_n^T`` per output.
    E : ndarray (P, K)
        ``sum_{n observed} y_np g_n``.
    C : ndarray (P, J)
        ``sum_{n observed} w_n``.
    count, ysq : ndarray (P,)
        Number of observed entries and ``sum y_np^2`` per output.

    Cost O(n_observed * K^2), memory O(P K^2): linear in the observed entries.
    """
    _check_backend(backend)
    Yt, G, W = _f64(Yt, "Yt", 2), _f64(G, "G", 2), _f64(W, "W", 2)
    if G.shape[0] != Yt.shape[1] or W.shape[0] != Yt.shape[1]:
        raise ValueError("G and W must have Yt.shape[1] rows")
    if backend == "numpy":
        if np.isinf(Yt).any():
            raise ValueError("Yt contains infinity (NaN marks a missing entry)")
        return ref.masked_output_stats(Yt, G, W)
    ok, D, E, C, cnt, ysq = _core.gp_masked_output_stats(Yt, G, W, effective_n_threads(n_threads))
    if not ok:
        raise ValueError("Yt contains infinity (NaN marks a missing entry)")
    return D, E, C, cnt, ysq


def masked_output_stats_vjp(
    Yt, G, J, Dbar=None, Ebar=None, Cbar=None, *, backend="cpp", n_threads=1
):
    """VJP of :func:`masked_output_stats` with respect to ``(G, W)``: ``(Gbar, Wbar)``.

    ``J`` is the number of columns of ``W``; cotangents left as ``None`` are zero.
    """
    _check_backend(backend)
    Yt, G = _f64(Yt, "Yt", 2), _f64(G, "G", 2)
    P, K = Yt.shape[0], G.shape[1]
    if G.shape[0] != Yt.shape[1]:
        raise ValueError("G must have Yt.shape[1] rows")
    d = _empty((0, K, K)) if Dbar is None else _f64(Dbar, "Dbar", 3)
    e = _empty((0, K)) if Ebar is None else _f64(Ebar, "Ebar", 2)
    c = _empty((0, J)) if Cbar is None else _f64(Cbar, "Cbar", 2)
    for arr, given, shape, name in (
        (d, Dbar, (P, K, K), "Dbar"),
        (e, Ebar, (P, K), "Ebar"),
        (c, Cbar, (P, J), "Cbar"),
    ):
        if given is not None and arr.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    if backend == "numpy":
        return ref.masked_output_stats_vjp(
            Yt,
            G,
            J,
            None if Dbar is None else d,
            None if Ebar is None else e,
            None if Cbar is None else c,
        )
    return _core.gp_masked_output_stats_vjp(Yt, G, int(J), d, e, c, effective_n_threads(n_threads))


# ------------------------------------------------------ sparse pattern sums


def pattern_sum(indptr, indices, V, *, backend="cpp", n_threads=1):
    """Row sums of ``V`` over a sparse pattern: ``out[r] = sum_{c in row r} V[c]``.

    The product of the 0/1 matrix with CSR pattern ``(indptr, indices)``
    and ``V``, without its values: the per-input (or per-output) sums of
    the LVMOGP bound over the missing or observed entries.

    Parameters
    ----------
    indptr : array-like of int, shape (n_rows + 1,)
        Non-decreasing, from 0 to ``len(indices)``.
    indices : array-like of int, shape (nnz,)
        Row ``r`` holds ``indices[indptr[r]:indptr[r + 1]]``, each in
        ``[0, V.shape[0])``.
    V : array-like of shape (n_cols, K)

    Returns
    -------
    out : ndarray of shape (n_rows, K)

    Cost O(nnz K), parallel over rows (no write conflicts).
    """
    _check_backend(backend)
    V = _f64(V, "V", 2)
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    indices = np.ascontiguousarray(indices, dtype=np.int64)
    if backend == "cpp":  # the binding checks the pattern (same messages)
        return _core.gp_pattern_sum(indptr, indices, V, effective_n_threads(n_threads))
    if indptr.ndim != 1 or indptr.size < 1:
        raise ValueError("indptr must be 1-D and non-empty")
    if indices.ndim != 1 or indptr[0] != 0 or indptr[-1] != indices.size:
        raise ValueError("indptr must run from 0 to len(indices)")
    if np.any(np.diff(indptr) < 0):
        raise ValueError("indptr must be non-decreasing")
    if indices.size and (indices.min() < 0 or indices.max() >= V.shape[0]):
        raise ValueError("indices must lie in [0, V.shape[0])")
    from scipy.sparse import csr_matrix

    n_rows = indptr.size - 1
    ones = np.ones(indices.size)
    return np.asarray(csr_matrix((ones, indices, indptr), shape=(n_rows, V.shape[0])) @ V)
