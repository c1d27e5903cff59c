"""Shared numerical building blocks of the anchor-graph clusterers.

These are the private drivers that LMVSC, SMVSC, FPMVS-CAG, DRMC and HAG-MVC
call: each assumes valid input (the estimators validate once, at their
entry) and returns NumPy arrays in float64. Loop-heavy parts run in the Numba
kernels of :mod:`mvlearn_ext.cluster._kernels`; the simplex QP of the
anchor graphs is :func:`mvlearn_ext.utils._simplex_qp.simplex_qp`.

Threads: every numerical helper here runs the BLAS and OpenMP pools on one
thread (:func:`mvlearn_ext.utils._threads.with_single_threaded_pools`), so
that its results do not depend on any thread count.

Orientation: an anchor graph ``Z`` has shape ``(n_anchors, n_samples)``
(``m x n``), every column on the probability simplex. The
:func:`mvlearn_ext.utils.anchor_graph` kernel returns the transpose (CSR of
shape ``(n_samples, n_anchors)``): pass ``anchor_graph(X, A).T``.

Functions
---------
procrustes
    Polar factor ``U V^T`` of a matrix (orthogonal Procrustes).
generalized_power_iteration
    Minimise ``tr(W^T Q W P) - 2 tr(W^T C)`` over orthonormal ``W`` (GPI).
squared_view_weights
    Simplex weights minimising ``sum_v alpha_v^2 loss_v``.
gram_eigenpairs
    Top eigenpairs of a Gram matrix ``Z Z^T``: the spectral embedding of ``Z^T``
    through an m x m problem.
regularised_projection_from_gram
    The degree-regularised embedding of ``Z^T (Delta + tau I)^{-1} Z`` (HAG-MVC, DRMC),
    from the Gram matrix ``Z Z^T`` and the anchor degrees.
spectral_rotation
    Rotate an embedding onto a (scaled) cluster indicator.
kmeans_anchors
    Anchors by k-means.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg
import scipy.sparse.linalg
from sklearn.cluster import KMeans, MiniBatchKMeans
from sklearn.utils import check_random_state

from mvlearn_ext.cluster._kernels import indicator_sweeps
from mvlearn_ext.cluster._preprocessing import distinct_samples
from mvlearn_ext.utils._threads import with_single_threaded_pools

__all__ = [
    "MINIBATCH_THRESHOLD",
    "generalized_power_iteration",
    "gram_eigenpairs",
    "kmeans_anchors",
    "procrustes",
    "regularised_projection_from_gram",
    "spectral_rotation",
    "squared_view_weights",
]

#: Above this many samples :func:`kmeans_anchors` uses MiniBatchKMeans.
MINIBATCH_THRESHOLD = 50_000
#: Degree regularisation of :func:`regularised_projection_from_gram`: ``tau`` is this
#: fraction of the mean degree of the live anchors. It damps anchors used by a few
#: samples only while barely changing anchors of typical degree; a tenth sits between
#: too little damping and flattening the graph.
DEGREE_REG = 0.1
#: :func:`gram_eigenpairs` uses Lanczos iterations (ARPACK) from this many rows on, when
#: at most a fifth of the eigenpairs are wanted: each step costs ``O(m^2)`` against the
#: ``O(m^3)`` reduction of the dense solver (4 ms against 20 ms for 10 of 750 on one
#: core), and below it the dense solver is as fast.
LANCZOS_MIN_ROWS = 200


# --------------------------------------------------------------------------- orthogonal factors


@with_single_threaded_pools
def procrustes(M):
    """The orthogonal polar factor of ``M``: ``argmax_W tr(W^T M)`` over orthonormal ``W``.

    With the thin SVD ``M = U S V^T``, returns ``U V^T`` (Schönemann, 1966):
    a ``(p, q)`` matrix with orthonormal columns if ``p >= q`` and
    orthonormal rows otherwise, which maximises ``tr(W^T M)`` over that set.
    When ``M`` is rank deficient the maximiser is not unique and this is the
    one the SVD gives.

    Parameters
    ----------
    M : ndarray of shape (p, q)

    Returns
    -------
    W : ndarray of shape (p, q)

    References
    ----------
    P. H. Schönemann, "A generalized solution of the orthogonal Procrustes
    problem", Psychometrika 31(1), 1966.
    """
    M = np.asarray(M, dtype=np.float64)
    U, _, Vt = scipy.linalg.svd(M, full_matrices=False, lapack_driver="gesdd", check_finite=False)
    return U @ Vt


@with_single_threaded_pools
def generalized_power_iteration(C, W0, *, Q=None, P=None, max_iter=20, tol=1e-10):
    """Minimise ``tr(W^T Q W P) - 2 tr(W^T C)`` over orthonormal ``W`` by GPI.

    ``W`` is ``(p, q)`` with orthonormal columns if ``p >= q`` and rows
    otherwise; ``Q`` (p x p) and ``P`` (q x q) are symmetric PSD (``None``
    means the identity). When the quadratic term is constant on that set
    (``Q = I`` with orthonormal columns, ``P = I`` with orthonormal rows, or
    both identities) the minimiser is :func:`procrustes` of ``C`` and is
    returned at once. Otherwise each step is the generalised power iteration
    of Nie, Zhang & Li (2017), ``W <- polar(L W - Q W P + C)`` with
    ``L = lambda_max(Q) lambda_max(P)``, a majorise-minimise step that never
    increases the objective, started from ``W0``.

    Parameters
    ----------
    C : ndarray of shape (p, q)
    W0 : ndarray of shape (p, q)
        Feasible starting point (used only by the iterative case).
    Q, P : ndarray or None
    max_iter : int, default=20
    tol : float, default=1e-10
        Stop when the objective decreases by less than ``tol`` times its
        magnitude.

    Returns
    -------
    W : ndarray of shape (p, q)

    References
    ----------
    F. Nie, R. Zhang and X. Li, "A generalized power iteration method for
    solving quadratic problem on the Stiefel manifold", Science China
    Information Sciences 60, 2017.
    """
    p, q = C.shape
    if (Q is None and p >= q) or (P is None and p <= q):
        return procrustes(C)
    Qm = np.eye(p) if Q is None else Q
    Pm = np.eye(q) if P is None else P
    lq = 1.0 if Q is None else float(max(np.linalg.eigvalsh(Qm)[-1], 0.0))
    lp = 1.0 if P is None else float(max(np.linalg.eigvalsh(Pm)[-1], 0.0))
    L = lq * lp

    def objective(W):
        return float(np.sum((Qm @ W @ Pm) * W) - 2.0 * np.sum(W * C))

    W = W0
    value = objective(W)
    for _ in range(max_iter):
        W_new = procrustes(L * W - Qm @ W @ Pm + C)
        new_value = objective(W_new)
        if new_value > value:  # rounding only: the step is monotone in exact arithmetic
            break
        W, decrease, value = W_new, value - new_value, new_value
        if decrease <= tol * max(abs(value), 1.0):
            break
    return W


# --------------------------------------------------------------------------- view weights


def squared_view_weights(losses):
    """Simplex weights that minimise ``sum_v alpha_v^2 loss_v``.

    By the Cauchy-Schwarz inequality the minimiser over the probability
    simplex is ``alpha_v = (1 / loss_v) / sum_u (1 / loss_u)``. If some
    losses are zero the minimum is 0, reached by putting all the weight on
    the zero-loss views; they share it equally.

    Parameters
    ----------
    losses : array-like of shape (n_views,)
        Nonnegative, finite losses.

    Returns
    -------
    alpha : ndarray of shape (n_views,)
        Nonnegative weights summing to 1.

    Raises
    ------
    ValueError
        If ``losses`` is empty, not 1-D, negative, NaN or infinite.
    """
    losses = np.asarray(losses, dtype=np.float64)
    if losses.ndim != 1 or losses.size == 0:
        raise ValueError(f"losses must be a non-empty 1-D array, got shape {losses.shape}")
    if not np.all(np.isfinite(losses)):
        raise ValueError("losses must be finite")
    if np.any(losses < 0):
        raise ValueError(f"losses must be nonnegative, got min {losses.min()!r}")
    zero = losses == 0
    if zero.any():
        return zero / zero.sum()
    # Scale by the smallest loss first: 1/loss would overflow for tiny losses.
    inverse = losses.min() / losses
    return inverse / inverse.sum()


# --------------------------------------------------------------------------- spectral embedding


@with_single_threaded_pools
def gram_eigenpairs(M, n_components):
    """``(sigma, V, inverse)``: the top ``n_components`` eigenpairs of a Gram matrix ``M``.

    ``M`` (``m x m``, ``Z Z^T`` of some ``Z``) is symmetrised, ``V`` holds its top
    eigenvectors in decreasing order of eigenvalue, ``sigma`` the square roots of
    the eigenvalues (the singular values of ``Z``; negative rounding clipped to 0)
    and ``inverse`` ``1 / sigma`` where ``sigma`` exceeds ``m`` eps of the largest,
    0 elsewhere. ``Z^T V inverse`` are then the top left singular vectors of
    ``Z^T`` (the LMVSC/SMVSC embedding), found without forming an n x n matrix;
    ``Z Z^T`` can be summed over row blocks.
    """
    M = (M + M.T) / 2
    eigenvalues, V = _top_eigenpairs(M, n_components)
    order = np.argsort(eigenvalues)[::-1]
    sigma = np.sqrt(np.clip(eigenvalues[order], 0.0, None))
    V = V[:, order]
    positive = sigma > max(sigma[0], 1e-300) * M.shape[0] * np.finfo(np.float64).eps
    inverse = np.zeros_like(sigma)
    inverse[positive] = 1.0 / sigma[positive]
    return sigma, V, inverse


def _top_eigenpairs(M, n_components):
    """The ``n_components`` largest eigenvalues of the symmetric ``M`` and their eigenvectors.

    Lanczos iterations (ARPACK, converged to machine precision from a fixed start
    vector, so the result is deterministic) for large ``M`` and few eigenpairs
    (:data:`LANCZOS_MIN_ROWS`), the dense solver otherwise or if they do not converge.
    The order of the pairs is unspecified; each eigenvector's sign is arbitrary.
    """
    m = M.shape[0]
    if m >= LANCZOS_MIN_ROWS and 5 * n_components <= m:
        start = np.random.RandomState(0).uniform(-1.0, 1.0, m)
        try:
            return scipy.sparse.linalg.eigsh(M, k=n_components, which="LA", v0=start)
        except scipy.sparse.linalg.ArpackError:  # includes ArpackNoConvergence
            pass
    return scipy.linalg.eigh(M, subset_by_index=(m - n_components, m - 1))


def _degree_scale(degree, n_samples, reg):
    """``(Delta + tau I)^{-1/2}`` on the live anchors, 0 elsewhere; ``tau = reg n / m_live``."""
    live = degree > 0
    tau = reg * n_samples / max(int(live.sum()), 1)
    scale = np.zeros_like(degree, dtype=np.float64)
    scale[live] = 1.0 / np.sqrt(degree[live] + tau)
    return scale


def regularised_projection_from_gram(gram, degree, n_samples, n_components, *, reg=DEGREE_REG):
    """``P`` with ``F = Z^T P`` the top eigenvectors of ``Z^T (Delta + tau I)^{-1} Z``.

    ``Z`` (m x n, columns on the simplex) is an anchor graph and ``Delta`` its
    anchor degrees ``Z 1``. Without regularisation (``reg=0``, Liu, He & Chang,
    2010) a sample that is the main neighbour of an anchor of tiny degree has
    ``S_ii`` near 1: it forms an almost isolated component whose eigenvector
    displaces a cluster's. Adding ``tau = reg * n / m_live`` to every live anchor
    degree (``m_live`` the anchors of nonzero degree), as regularised spectral
    clustering adds it to the node degrees (Amini, Chen, Bickel & Levina, 2013;
    Qin & Rohe, 2013), damps such anchors (the share of ``S_ii`` from an anchor
    used by sample ``i`` alone falls from ``z_ij`` to ``z_ij^2 / (z_ij + tau)``)
    while barely changing anchors of typical degree ``n / m``. Anchors of zero
    degree get weight 0, never a division.

    Only ``Z Z^T`` and ``Delta`` are needed, so both can be summed over row
    blocks: with ``D = (Delta + tau I)^{-1/2}``, ``D Z Z^T D = V Sigma^2 V^T`` and
    ``P = D V Sigma^{-1}``. ``z^T P`` embeds a new graph column ``z``.

    Parameters
    ----------
    gram : ndarray of shape (n_anchors, n_anchors)
        ``Z Z^T``.
    degree : ndarray of shape (n_anchors,)
        ``Z 1``.
    n_samples : int
        The number of columns of ``Z``.
    n_components : int
        Number of eigenvectors, at most ``n_anchors``.
    reg : float, default=DEGREE_REG
        ``tau`` as a fraction of the mean live anchor degree ``n / m_live``.

    Returns
    -------
    P : ndarray of shape (n_anchors, n_components)
        By decreasing eigenvalue; a column beyond the rank of ``Z`` is zero.

    References
    ----------
    W. Liu, J. He and S.-F. Chang, "Large graph construction for scalable
    semi-supervised learning", in Proc. ICML, 2010.

    A. A. Amini, A. Chen, P. J. Bickel and E. Levina, "Pseudo-likelihood methods
    for community detection in large sparse networks", Ann. Statist. 41(4), 2013.

    T. Qin and K. Rohe, "Regularized spectral clustering under the degree-corrected
    stochastic blockmodel", in Proc. NeurIPS, 2013.
    """
    scale = _degree_scale(degree, n_samples, reg)
    _, V, inverse = gram_eigenpairs(gram * scale[:, None] * scale[None, :], n_components)
    return scale[:, None] * (V * inverse)


# --------------------------------------------------------------------------- spectral rotation


def _greedy_rotation(F, rng):
    """Initial rotation from mutually near-orthogonal rows of ``F`` (Yu & Shi, 2003)."""
    n, k = F.shape
    norms = np.linalg.norm(F, axis=1)
    rows = F / np.where(norms > 0, norms, 1.0)[:, None]
    R = np.zeros((k, k))
    R[:, 0] = rows[rng.randint(n)]
    c = np.zeros(n)
    for j in range(1, k):
        c += np.abs(rows @ R[:, j - 1])
        R[:, j] = rows[np.argmin(c)]
    return procrustes(R)


def _rotation_objective(F_norm2, G, labels, k, scaled):
    """``||F R - Y_hat||^2`` from ``G = F R`` and the labels."""
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    sums = np.bincount(labels, weights=G[np.arange(len(labels)), labels], minlength=k)
    if scaled:
        nonempty = counts > 0
        cross = float(np.sum(sums[nonempty] / np.sqrt(counts[nonempty])))
        return F_norm2 + float(nonempty.sum()) - 2.0 * cross
    return F_norm2 + len(labels) - 2.0 * float(sums.sum())


def _fill_empty_clusters(G, labels, k, scaled):
    """Give every empty cluster the sample farthest from its own indicator row."""
    counts = np.bincount(labels, minlength=k)
    for j in np.flatnonzero(counts == 0):
        counts = np.bincount(labels, minlength=k)
        own = counts[labels]
        target = 1.0 / np.sqrt(own) if scaled else np.ones(len(labels))
        rows = np.arange(len(labels))
        residual = np.einsum("ij,ij->i", G, G) - 2.0 * G[rows, labels] * target + target**2
        residual[own <= 1] = -np.inf  # never empty another cluster
        i = int(np.argmax(residual))
        labels[i] = j
    return labels


@with_single_threaded_pools
def spectral_rotation(
    F, *, scaled=True, max_iter=100, tol=1e-10, random_state=None, return_objective=False
):
    """Rotate an embedding onto a cluster indicator: ``min ||F R - Y_hat||^2``.

    Solves ``min_{Y, R} ||F R - Y_hat||_F^2`` over cluster indicators
    ``Y`` (n x k, every cluster non-empty) and orthogonal ``R`` (k x k),
    with ``Y_hat = Y (Y^T Y)^{-1/2}`` if ``scaled`` and ``Y_hat = Y``
    otherwise (spectral rotation, Huang, Nie & Huang, 2013; Yu & Shi, 2003
    without row normalisation). The two blocks alternate:

    * ``R = procrustes(F^T Y_hat)``, the exact minimiser in ``R``;
    * ``Y``: exact coordinate ascent on ``tr(Y_hat^T F R)`` sample by
      sample (Numba kernel), each sample moving to the cluster of largest
      gain, a sample alone in its cluster staying; unscaled, this is the
      row-wise argmax of ``F R`` except that no cluster is emptied.

    The objective is therefore non-increasing. Initialisation: ``R`` from
    mutually near-orthogonal rows of ``F`` (first row drawn with
    ``random_state``, as in Yu & Shi), then ``Y`` = argmax of ``F R``;
    a cluster left empty there is re-seeded with the farthest sample (the
    one whose row of ``F R`` is farthest from its indicator row, taken
    from a cluster of two or more). Stops when the labels no longer change
    or the relative decrease is below ``tol``.

    Parameters
    ----------
    F : ndarray of shape (n_samples, n_clusters)
        The continuous embedding, ``n_samples >= n_clusters``.
    scaled : bool, default=True
    max_iter : int, default=100
    tol : float, default=1e-10
    random_state : int, RandomState instance or None
    return_objective : bool, default=False
        Also return the objective history.

    Returns
    -------
    labels : ndarray of int64, shape (n_samples,)
    R : ndarray of shape (n_clusters, n_clusters)
        The final rotation.
    objective : list of float
        ``||F R - Y_hat||^2`` after each alternation (non-increasing); only
        with ``return_objective=True``.

    References
    ----------
    J. Huang, F. Nie and H. Huang, "Spectral rotation versus k-means in
    spectral clustering", in Proc. AAAI, 2013.

    S. X. Yu and J. Shi, "Multiclass spectral clustering", in Proc. ICCV,
    2003.
    """
    F = np.asarray(F, dtype=np.float64)
    n, k = F.shape
    if n < k:
        raise ValueError(f"F has {n} rows but {k} columns; need n_samples >= n_clusters")
    rng = check_random_state(random_state)
    R = _greedy_rotation(F, rng)
    G = F @ R
    labels = np.argmax(G, axis=1).astype(np.int64)
    labels = _fill_empty_clusters(G, labels, k, scaled)
    F_norm2 = float(np.sum(F * F))
    history = []
    for _ in range(max_iter):
        counts = np.bincount(labels, minlength=k).astype(np.float64)
        weights = 1.0 / np.sqrt(counts) if scaled else np.ones(k)
        # F^T Y_hat without forming Y_hat.
        FtY = np.zeros((k, k))
        np.add.at(FtY.T, labels, F)
        FtY *= weights[None, :]
        R = procrustes(FtY)
        G = np.ascontiguousarray(F @ R)
        previous = labels.copy()
        indicator_sweeps(G, labels, scaled, 50)
        history.append(_rotation_objective(F_norm2, G, labels, k, scaled))
        if np.array_equal(previous, labels):
            break
        if len(history) > 1 and history[-2] - history[-1] <= tol * max(abs(history[-1]), 1.0):
            break
    if return_objective:
        return labels, R, history
    return labels, R


# --------------------------------------------------------------------------- anchors


@with_single_threaded_pools
def kmeans_anchors(X, n_anchors, *, random_state, n_init=1, max_iter=100, minibatch=None):
    """Anchors as k-means centres of the rows of ``X``.

    scikit-learn's :class:`~sklearn.cluster.KMeans` (Lloyd, k-means++
    seeding) for up to :data:`MINIBATCH_THRESHOLD` samples, and
    :class:`~sklearn.cluster.MiniBatchKMeans` (batches of 4096) above, so
    that the cost stays linear in ``n`` with a small constant.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    n_anchors : int
        At most ``n_samples``.
    random_state : int or RandomState instance
    n_init : int, default=1
    max_iter : int, default=100
    minibatch : bool or None, default=None
        Force MiniBatchKMeans (True) or KMeans (False); None chooses by the
        number of samples, as above (a block path whose rows are a sample of
        a larger data set passes the choice of the full data set).

    Returns
    -------
    anchors : ndarray of shape (n_anchors, n_features)
        With fewer than ``n_anchors`` distinct rows, those rows, repeated in
        turn: the centres of the zero-cost clustering, without k-means.
    """
    X = np.asarray(X)
    if not isinstance(n_anchors, numbers.Integral) or not 1 <= n_anchors <= X.shape[0]:
        raise ValueError(f"n_anchors={n_anchors!r} must be an int in [1, {X.shape[0]}]")
    distinct = distinct_samples([X], n_anchors)
    if distinct.shape[0] < n_anchors:
        return distinct[np.arange(n_anchors) % distinct.shape[0]]
    if minibatch is None:
        minibatch = X.shape[0] > MINIBATCH_THRESHOLD
    if minibatch:
        model = MiniBatchKMeans(
            n_clusters=n_anchors,
            n_init=n_init,
            max_iter=max_iter,
            batch_size=4096,
            random_state=random_state,
        )
    else:
        model = KMeans(
            n_clusters=n_anchors, n_init=n_init, max_iter=max_iter, random_state=random_state
        )
    return np.asarray(model.fit(X).cluster_centers_, dtype=np.float64)
