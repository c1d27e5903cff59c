"""The steps of EOMSC-CA that its driver (:mod:`._eomsc_blocks`) composes."""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from mvlearn_ext.cluster._smvsc_solver import (
    _normalize_rows,
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


def top_eigenpairs_of_gram(S2, c):
    """Top ``c`` eigenpairs of the Gram matrix ``S2 = S1^T S1``, and all eigenvalues."""
    S2 = np.maximum(S2, S2.T)  # symmetrised as in the authors' ``eig1``
    eigenvalues, vectors = np.linalg.eigh(S2)
    order = np.argsort(-eigenvalues, kind="stable")
    eigenvalues, vectors = eigenvalues[order], vectors[:, order]
    return vectors[:, :c], eigenvalues[:c], eigenvalues


def _progress(labels, lam, n_inner):
    """The graph step's part of an iteration's log line."""
    return f", {labels.max() + 1} components, lambda {lam:.4g} after {n_inner} passes"


def component_labels(labels, U, n_clusters, max_iter_inner, kmeans_seed):
    """``(labels, n_found)``: the graph's components, or k-means when they are not ``k``.

    When the graph has ``n_found != n_clusters`` connected components, warn and
    label by k-means on the row-normalised embedding ``U``.
    """
    k = n_clusters
    n_found = int(labels.max()) + 1
    if n_found != k:
        warn(
            f"EOMSCCA: the graph has {n_found} connected components instead of "
            f"n_clusters={k} after max_iter_inner={max_iter_inner} passes of "
            "the lambda search; labels_ come from k-means on the embedding",
            ConvergenceWarning,
        )
        F = _normalize_rows(np.nan_to_num(U))
        labels = KMeans(n_clusters=k, n_init=10, random_state=kmeans_seed).fit_predict(F)
    return np.asarray(labels, dtype=np.intp), n_found
