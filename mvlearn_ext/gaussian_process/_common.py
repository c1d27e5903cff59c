"""What the NumPy LVMOGP and the torch half of the family share.

:class:`~mvlearn_ext.gaussian_process.LVMOGPRegressor` and the estimators of
:mod:`mvlearn_ext.deep.gaussian_process` check their targets, place inducing
points and initialise the output latents with the functions of this module.
The package publishes them in :mod:`mvlearn_ext.gaussian_process` for the
torch half (not part of the user API: they are not in ``__all__``).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import eigsh
from sklearn.cluster import KMeans
from sklearn.neighbors import kneighbors_graph
from sklearn.utils.extmath import randomized_svd

from mvlearn_ext.utils._validation import as_real_array, check_magnitude


def check_targets(Y, n_samples):
    """Y as a float (n_samples, n_outputs) array with NaN for missing entries.

    Returns ``(Y2, y_1d)``: the 2-D targets and whether ``Y`` was 1-D.
    Raises a ``TypeError`` for what is not numeric (strings of digits
    included) and a ``ValueError`` for complex values, infinity, values too
    large to square, a shape that does not fit, or an output with no
    observed entry.
    """
    if Y is None:
        raise ValueError("LVMOGPRegressor requires y to be passed, but the target y is None")
    if hasattr(Y, "toarray"):
        raise TypeError("Y must be a dense array; got a sparse matrix")
    # strings (of digits too) and complex values are refused, not parsed or truncated
    Y = as_real_array(Y, "Y")
    if Y.ndim not in (1, 2):
        raise ValueError(f"Y must be 1-D or 2-D, got {Y.ndim}-D")
    if Y.shape[0] != n_samples:
        raise ValueError(
            f"X and Y have inconsistent numbers of samples: {n_samples} and {Y.shape[0]}"
        )
    if np.isinf(Y).any():
        raise ValueError("Y contains infinity; mark missing entries with NaN")
    check_magnitude(Y, "Y", allow_nan=True)
    Y2 = Y.reshape(n_samples, -1)
    if Y2.shape[1] == 0:
        raise ValueError("Y has no outputs (0 columns)")
    empty = np.flatnonzero(np.isnan(Y2).all(axis=0))
    if empty.size:
        raise ValueError(
            f"Y has {empty.size} output column(s) with no observed entry (all NaN), "
            f"e.g. column {int(empty[0])}; drop them or observe at least one entry"
        )
    return Y2, Y.ndim == 1


def _spectral_embedding(F, k, n_neighbors, seed):
    """Laplacian eigenmaps of the symmetrised kNN graph of the rows of ``F``.

    The top non-trivial eigenvectors of ``D^{-1/2} A D^{-1/2}`` (Lanczos on
    the largest eigenvalues: no shift-invert factorisation), mapped back by
    ``D^{-1/2}``. O(P log P) memory and time for P rows.
    """
    A = kneighbors_graph(F, n_neighbors, include_self=False)
    A = ((A + A.T) > 0).astype(np.float64)
    d = np.asarray(A.sum(axis=1)).ravel()
    dinv = 1.0 / np.sqrt(np.maximum(d, 1e-12))
    An = A.multiply(dinv[:, None]).multiply(dinv[None, :]).tocsr()
    v0 = np.random.default_rng(seed).standard_normal(A.shape[0])
    w, V = eigsh(An, k=k + 1, which="LA", v0=v0, tol=1e-6)
    order = np.argsort(w)[::-1]
    return V[:, order[1 : k + 1]] * dinv[:, None]


def kmeans_or_distinct(A, m, seed):
    """``m`` k-means centres of the rows of ``A``, or its distinct rows if
    there are at most ``m`` (inducing points that never coincide)."""
    uniq = np.unique(A, axis=0)
    if uniq.shape[0] <= m:
        return uniq
    return KMeans(m, n_init=1, random_state=seed).fit(A).cluster_centers_


def initial_latents(F, n_latent, *, init, noise, rng, seed):
    """Initial means of the output latents of an LVMOGP, shape (P, n_latent).

    The outputs' principal-component scores (``init="pca"``) or the spectral
    embedding of the kNN graph of the outputs in the space of their top
    principal components (``init="spectral"``, when ``P > n_latent + 2``),
    scaled to unit variance per dimension, plus ``noise`` times a standard
    normal draw of ``rng``. Columns beyond the rank of ``F`` stay zero (plus
    the noise).

    Parameters
    ----------
    F : ndarray of shape (P, N)
        One row per output: its (standardised) targets, with 0 at the
        missing entries.
    n_latent : int
        Latent dimension.
    init : {"pca", "spectral"}
    noise : float
        Scale of the added Gaussian noise, which breaks ties between
        identical outputs (1e-3 for the L-BFGS fit of ``LVMOGPRegressor``,
        1e-2 for the Adam fits of ``TLVMOGPRegressor`` and
        ``GSLVMOGPRegressor``).
    rng : numpy.random.Generator
        Draws the noise.
    seed : int
        Seeds the randomized SVD and the spectral embedding.
    """
    P = F.shape[0]
    k = min(n_latent, min(F.shape))
    mu = np.zeros((P, n_latent))
    n_pc = min(20, min(F.shape))
    U, s, _ = randomized_svd(F, max(k, n_pc), random_state=seed)
    if init == "spectral" and P > n_latent + 2:
        mu[:, :k] = _spectral_embedding(U * s, k, int(np.clip(P // 50, 5, P - 1)), seed)
    else:
        mu[:, :k] = (U * s)[:, :k]
    sd = mu.std(axis=0)
    mu[:, sd > 0] /= sd[sd > 0]
    return mu + noise * rng.standard_normal(mu.shape)
