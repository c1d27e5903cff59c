"""EOMSC-CA: efficient one-pass multi-view subspace clustering (Liu et al., AAAI 2022)."""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from mvlearn_ext.cluster._base import BaseClusterer, check_anchors_cover_clusters, draw_seeds
from mvlearn_ext.cluster._smvsc import (
    _normalize_rows,
    anchor_step,
    code_view_weights,
    initial_graph,
    iteration_done,
    mapstd_statistics,
    residual_losses,
    start_model,
    store_anchor_model,
)
from mvlearn_ext.utils._threads import single_threaded_pools
from mvlearn_ext.utils._warnings import warn

__all__ = ["EOMSCCA"]

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


def store_eomsc_model(est, m, d, W, A, *, graph, U, alpha, history, n_iter, inner, lam, n_found):
    """Set EOMSC-CA's fitted attributes on ``est`` (both paths; not the labels)."""
    store_anchor_model(est, m, d, W, A)
    est.anchor_graph_ = graph
    est.embedding_ = U
    est.view_weights_ = alpha
    est.objective_ = np.asarray(history)
    est.n_iter_ = int(n_iter)
    est.n_inner_iter_ = np.asarray(inner, dtype=np.intp)
    est.graph_reg_ = float(lam)
    est.n_graph_components_ = n_found


class EOMSCCA(BaseClusterer):
    """Efficient one-pass multi-view subspace clustering with consensus anchors.

    FPMVS-CAG's anchor model (see :class:`FPMVSCAG`) with a connectivity
    constraint on the anchor graph, so that the labels are read off the
    graph's connected components, with no k-means (Liu et al., 2022). With
    ``Z`` (m x n) the graph between the samples and ``m`` anchors in a
    ``d``-dimensional latent space:

        ``min sum_v alpha_v^2 ||X_v - W_v A Z||_F^2``
        subject to ``W_v^T W_v = I``, ``A^T A = I``, ``Z >= 0``, ``alpha``
        on the simplex and ``rank(L_S) = n + m - k``

    where ``L_S`` is the normalised Laplacian of the bipartite graph
    ``S = [[0, Z^T], [Z, 0]]``: exactly ``k`` connected components. The
    rank constraint is relaxed to the Ky Fan term ``2 lambda tr(F^T L_S F)``
    with an adaptive ``lambda``.

    This is the algorithm of the authors' code (Tracesource/EOMSC-CA at
    commit 08670c1, the last with an open ``algo_qp.m``), step for step:

    * every feature z-scored with its sample standard deviation
      (``mapstd``), ``Z`` started on the first ``m`` samples
      (``init="first"``; order-dependent), ``W_v = I_{d_v x d}`` at first;
    * ``W_v`` and ``A`` by Procrustes, as in FPMVS-CAG;
    * the graph step by :func:`connected_bipartite_graph`, from ``B =
      sum_v alpha_v^2 X_v^T W_v A`` (here ``alpha_v^2`` *is* in the linear
      term) and restarted every iteration from the starting graph with
      ``lambda = 0.1``: each sample row and each anchor column is projected
      on the simplex, on the support ``B > 0``, and the two are averaged, so
      the columns of ``Z`` do not sum to exactly 1;
    * ``alpha_v`` proportional to ``1 / ||X_v - W_v A Z||_F`` (unsquared);
    * the recorded objective is ``sum_v alpha_v^2 ||R_v||^2 + 0.1 (tr U^T U
      + tr V^T V - tr U^T S_n V)`` (the code's fixed weight 0.1); the
      iterations stop once its relative change is below ``tol`` or after
      ``max_iter`` (the code allows a 51st).

    If the graph does not end with exactly ``n_clusters`` components (the
    ``lambda`` search stopped at ``inner_max_iter``), the authors' code
    returns the components as they are; here a :class:`ConvergenceWarning`
    is raised and the labels come from k-means on the row-normalised
    embedding ``U`` instead, so that there are ``n_clusters`` labels.
    Cost per iteration O(n m (sum_v d_v + d + inner passes * (c + log n)))
    plus O(m^3) per pass; memory O(n (m + d_v)).

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters ``k``: the number of components sought.
    n_anchors : int or None, default=None
        Number of anchors ``m >= k``; ``None`` means ``n_clusters``. The
        authors' grid is ``{1, 2, 3, 5, 7} k``. Capped at ``n_samples``.
    n_components : int or None, default=None
        Latent dimension ``d``; ``None`` means ``n_clusters``. The authors'
        grid is ``{1, 2, 3, 5, 7} k``; on Handwritten their best cell (chosen
        on the labels, as in their protocol) is ``m = k``, ``d = 3k``.
    reg_init : float, default=0.1
        Starting ``lambda`` of the adaptive Ky Fan weight (the code's 0.1).
    init : {"first", "kmeans"}, default="first"
        Starting graph: the first ``m`` samples as anchors (the authors'
        code; order-dependent), or each sample on its cluster among ``m``
        k-means clusters of the joined views (seeded by ``random_state``).
    standardize : bool, default=True
        Centre every feature and divide it by its sample standard deviation
        (``ddof=1``), as the authors' code does (``mapstd``).
    max_iter : int, default=50
        Maximum outer iterations.
    inner_max_iter : int, default=50
        Maximum passes of the ``lambda`` search in each graph step.
    tol : float, default=1e-4
        Relative change of the objective below which the iterations stop.
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means of ``init="kmeans"`` and of the fallback labels;
        with ``init="first"`` the fit is deterministic.
    verbose : int, default=0
        Print the objective at every iteration to standard error (and a
        progress bar over the row blocks on the block path).
    block_size : int or None, default=None
        Read the views by row blocks (``mvlearn_ext.cluster._anchor_blocks``):
        on its own for views given as dask arrays (their row chunks are the
        blocks), zarr arrays or NumPy memmaps (cut every ``block_size`` rows,
        65536 if None), and for NumPy views when ``block_size`` is an int.
        Only ``init="first"``. The graph step runs by blocks as well: each
        anchor's column projection gets its threshold from the blocks' largest
        values (exactly the in-memory threshold), and the components come from
        which anchors share a sample, so the graph is never held; the calling
        process keeps ``n x (n_clusters + 1)`` floats of the spectral state. On
        a ``dask.distributed`` cluster that state, the linear term ``B`` (``n x
        n_anchors``) and the last graph rows stay on the workers instead; with
        the local dask scheduler ``B`` is kept in this process for an outer
        iteration; on NumPy views with
        ``block_size``, every pass of the ``lambda`` search recomputes it from the
        views. With the same
        blocks the labels are the same in memory, on disk and on a
        ``dask.distributed`` cluster; ``anchor_graph_`` is then None, and for dask
        views ``labels_`` is a dask array.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The connected component of each training sample.
    anchor_graph_ : ndarray of shape (n_anchors_, n_samples) or None
        ``Z``, nonnegative (None on the block path).
    embedding_ : ndarray of shape (n_samples, n_clusters)
        The sample half ``U`` of the final spectral embedding.
    consensus_anchors_ : ndarray of shape (n_components_, n_anchors_)
        ``A``.
    projections_ : list of ndarray of shape (n_features_v, n_components_)
        ``W_v``.
    anchors_ : list of ndarray of shape (n_anchors_, n_features_v)
        The anchors in each view's standardised feature space, ``(W_v A)^T``.
    view_weights_ : ndarray of shape (n_views,)
        ``alpha``.
    objective_ : ndarray of shape (n_iter_,)
        The recorded objective after each outer iteration (not monotone).
    n_iter_ : int
        Outer iterations run.
    n_inner_iter_ : ndarray of shape (n_iter_,)
        Passes of the ``lambda`` search in each outer iteration.
    graph_reg_ : float
        The final ``lambda``.
    n_graph_components_ : int
        Connected components of the final graph that hold samples
        (``n_clusters`` unless the warning above was raised).
    n_anchors_, n_components_ : int
        The ``m`` and ``d`` used.
    view_means_, view_scales_ : list of ndarray or None
        Standardisation statistics of each view.
    n_views_ : int
        Number of views seen at ``fit``.
    n_features_per_view_ : tuple of int
        Number of features of each view seen at ``fit``.

    See Also
    --------
    FPMVSCAG : The model without the connectivity constraint; k-means labels.
    SMVSC : The same family with ``lambda ||Z||^2`` and free ``m``, ``d``.

    Notes
    -----
    On Handwritten (the six views of
    :func:`~mvlearn_ext.datasets.load_handwritten`, unshuffled) with
    ``n_clusters=10``, ``n_anchors=10`` and ``n_components=30`` the labels
    are those of the authors' code run under GNU Octave (ACC 0.760, NMI
    0.821, adjusted Rand index 1 between the two labelings), and so are the
    view weights and the objective history to rounding.

    References
    ----------
    S. Liu, S. Wang, P. Zhang, K. Xu, X. Liu, C. Zhang and F. Gao,
    "Efficient one-pass multi-view subspace clustering with consensus
    anchors", in Proc. AAAI Conference on Artificial Intelligence 36(7),
    2022, pp. 7576-7584, doi:10.1609/aaai.v36i7.20723.

    Examples
    --------
    >>> from mvlearn_ext.cluster import EOMSCCA
    >>> from mvlearn_ext.datasets import make_multiview_blobs
    >>> from mvlearn_ext.metrics import clustering_accuracy
    >>> Xs, y = make_multiview_blobs(120, n_views=2, n_features=[4, 3], random_state=0)
    >>> model = EOMSCCA(n_clusters=3).fit(Xs)
    >>> model.anchor_graph_.shape, model.n_graph_components_
    ((3, 120), 3)
    >>> float(clustering_accuracy(y, model.labels_))
    1.0
    """

    _min_views = 2

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_anchors": [Interval(Integral, 1, None, closed="left"), None],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "reg_init": [Interval(Real, 0, None, closed="neither")],
        "init": [StrOptions({"first", "kmeans"})],
        "standardize": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "inner_max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "block_size": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        n_anchors=None,
        n_components=None,
        reg_init=0.1,
        init="first",
        standardize=True,
        max_iter=50,
        inner_max_iter=50,
        tol=1e-4,
        random_state=None,
        verbose=0,
        block_size=None,
    ):
        self.n_clusters = n_clusters
        self.n_anchors = n_anchors
        self.n_components = n_components
        self.reg_init = reg_init
        self.init = init
        self.standardize = standardize
        self.max_iter = max_iter
        self.inner_max_iter = inner_max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose
        self.block_size = block_size

    def _fit_blocks(self, Xs):
        from mvlearn_ext.cluster._anchor_blocks import fit_eomscca_blocks

        return fit_eomscca_blocks(self, Xs)

    def _model_size(self, n_samples):
        """``(n_anchors, n_components)`` for ``n_samples``; raises if anchors < clusters."""
        k = self.n_clusters
        m = min(k if self.n_anchors is None else self.n_anchors, n_samples)
        check_anchors_cover_clusters(m, k, self.n_anchors)
        return m, k if self.n_components is None else self.n_components

    def _fit_views(self, Xs):
        k = self.n_clusters
        m, d = self._model_size(Xs[0].shape[0])
        _, (init_seed, kmeans_seed) = draw_seeds(self.random_state, 2)
        self._fit_view_scaling(Xs, mapstd_statistics)
        views = self._scale_views(Xs)
        with single_threaded_pools():
            Z0 = initial_graph(views, m, self.init, init_seed)
            result = eomsc_fit(
                views,
                Z0=Z0,
                n_clusters=k,
                n_components=d,
                reg_init=self.reg_init,
                max_iter=self.max_iter,
                inner_max_iter=self.inner_max_iter,
                tol=self.tol,
                log=self._log,
            )
            labels, n_found = component_labels(self, result["labels"], result["U"], kmeans_seed)

        store_eomsc_model(
            self, m, d, result["W"], result["A"], graph=result["Z"], U=result["U"],
            alpha=result["alpha"], history=result["history"], n_iter=result["n_iter"],
            inner=result["inner"], lam=result["lambda"], n_found=n_found,
        )  # fmt: skip
        self.labels_ = labels
        return self
