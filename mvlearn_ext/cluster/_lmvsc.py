"""LMVSC: large-scale multi-view subspace clustering (Kang et al., AAAI 2020)."""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.cluster import KMeans
from sklearn.utils._param_validation import Interval, StrOptions

from mvlearn_ext.cluster._base import EmbeddingClusterer, draw_seeds
from mvlearn_ext.cluster._common import (
    MINIBATCH_THRESHOLD,
    anchor_spectral_embedding,
    kmeans_anchors,
)
from mvlearn_ext.cluster._lmvsc_blocks import (
    _ANCHOR_MAX_ITER,
    _view_graph,
    fit_lmvsc_blocks,
    predict_lmvsc_blocks,
)
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT

__all__ = ["LMVSC"]


class LMVSC(EmbeddingClusterer):
    """Large-scale multi-view subspace clustering (LMVSC), linear in the samples.

    Each view ``v`` gets ``m`` anchors ``A_v`` by k-means, and a graph
    between samples and anchors by the simplex-constrained self-expression

        ``min_{Z_v} ||X_v - A_v Z_v||_F^2 + reg_lambda ||Z_v||_F^2``
        subject to ``Z_v >= 0``, ``1^T Z_v = 1^T``

    (samples as columns, ``Z_v`` of shape ``(m, n)``). The graphs are
    stacked, ``Z_bar = [Z_1; ...; Z_V] / sqrt(V)``; the embedding is the
    top ``n_clusters`` left singular vectors of ``Z_bar^T`` (no degree or
    row normalisation, as in the authors' code), clustered by k-means
    (Kang et al., 2020). Cost O(n V m d_v) for the QPs' linear terms plus
    O(m s) per active-set step of a sample that uses s anchors, plus
    O(n V^2 m^2) for the embedding, and memory O(n V m): no n x n matrix is
    formed.

    Differences from the reference MATLAB code (sckangz/LMVSC), each on
    purpose:

    * the per-sample QPs (Hessian ``2 (A_v^T A_v + reg_lambda I)``, not a
      multiple of the identity) are solved exactly (to rounding, by their
      KKT conditions) by a primal active-set method that starts at the best
      anchor and adds or drops one anchor per step
      (a primal active-set method), instead
      of one interior-point ``quadprog`` call per sample; the rare sample
      whose working set is numerically singular (``reg_lambda`` near 0 with
      fewer features than anchors) is finished by accelerated projected
      gradient (FISTA with restart) to the tolerance ``tol``, then by the
      exact minimiser on its support where the KKT conditions certify it;
    * features are standardised per view by default (``scaling``), so
      that a view's units do not set its weight; the reference code feeds the
      data as given;
    * the random state of a fit is converted once; every view's anchor
      k-means gets the same integer seed, so that permuting the views
      permutes the graphs and leaves the labels unchanged.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters ``k``.
    n_anchors : int, default=50
        Anchors per view ``m`` (the authors' grid is ``{k, 50, 100}``);
        capped at ``n_samples``, the effective value is ``n_anchors_``.
    reg_lambda : float in [0, 1e6], default=1.0
        Weight of the ``||Z_v||^2`` term (the authors' grid is
        ``{0.01, 1, 100}``); larger values spread each sample over more
        anchors. Bounded because far above the scaled views' squared norms the
        penalty leaves every sample's weights equal up to rounding (with
        ``scaling=None`` it is in the squared units of the data).
    scaling : {"zscore"} or None, default="zscore"
        ``"zscore"``: centre and scale every feature to unit variance (statistics of the
        training views, reused by :meth:`predict`; constant features are
        only centred).
    n_init : int, default=10
        Restarts of both k-means: the anchors of every view, and the final
        clustering of the embedding (the reference code uses 10 for both).
    max_iter : int, default=500
        Maximum accelerated-gradient iterations of a graph QP handed to the
        FISTA fallback (see above; the active-set method has no iteration
        tolerance).
    tol : float, default=1e-6
        Stopping tolerance of the FISTA fallback: the largest entry of the
        projected gradient step.
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means runs; converted once per ``fit``.
    n_jobs : int or None, default=None
        Threads of the compiled simplex projection and of the Numba QP kernel:
        ``None`` is 1 (or the ``n_jobs`` of an enclosing
        ``joblib.parallel_config``), ``-1`` every CPU, ``-k`` all but ``k - 1``,
        a positive count is capped at the CPUs available. The labels do not
        depend on it. BLAS and OpenMP (the k-means) run on one
        thread inside ``fit``, ``transform`` and ``predict``.
    verbose : int, default=0
        Print the progress of ``fit`` to standard error (and a progress bar over
        the row blocks on the block path).
    block_size : int or None, default=None
        The block algorithm: a map-reduce
        over row blocks that never holds more than one block of samples. It runs
        on its own for views given as dask arrays (their row chunks are the
        blocks; every view must have the same row chunks), zarr arrays or NumPy
        memmaps (cut every ``block_size`` rows, 65536 if None), and on NumPy views
        when ``block_size`` is an int. It fits the anchors on at most 50000 random
        rows and the final k-means on at most 100000 (see the user guide); with
        the same blocks and seed it gives the same labels in memory, on disk and
        on a ``dask.distributed`` cluster. ``anchor_graph_`` and ``embedding_``
        (a row per sample) are then None; for dask views, ``labels_`` and
        :meth:`predict` return dask arrays.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The cluster of each training sample.
    anchors_ : list of ndarray of shape (n_anchors_, n_features_v)
        The anchors of each view (in the standardised space if
        ``scaling``).
    anchor_graph_ : list of ndarray of shape (n_anchors_, n_samples)
        The graph ``Z_v`` of each view; every column is on the simplex.
    embedding_ : ndarray of shape (n_samples, n_clusters)
        The spectral embedding the final k-means clusters.
    singular_values_ : ndarray of shape (n_clusters,)
        The top singular values of ``Z_bar``.
    view_weights_ : ndarray of shape (n_views,)
        ``1 / n_views`` for every view: LMVSC weighs the views equally (each
        graph enters ``Z_bar`` with the factor ``1 / sqrt(V)``).
    objective_ : ndarray of shape (n_views,)
        The final value of each view's graph objective (LMVSC has no outer
        iterations, so there is no history across iterations).
    n_iter_ : int
        The largest number of QP steps of a sample over the views (active-set
        steps, or FISTA iterations of a sample handed to the fallback).
    n_anchors_ : int
        The number of anchors per view actually used.
    kmeans_ : sklearn.cluster.KMeans
        The k-means fitted on ``embedding_``.
    view_means_, view_scales_ : list of ndarray or None
        Standardisation statistics of each view (``None`` without
        ``scaling``).
    n_views_ : int
        Number of views seen at ``fit``.
    n_features_per_view_ : tuple of int
        Number of features of each view seen at ``fit``.

    See Also
    --------
    SMVSC : One graph learned jointly from all views on shared anchors.

    Notes
    -----
    :meth:`predict` extends the fit to new samples through the anchors:
    each new sample is coded on every view's anchors by the same QP, the
    stacked codes are mapped to the embedding by the out-of-sample
    extension of the singular vectors, ``u = z_bar^T V Sigma^{-1}`` (exact
    for the training samples), and the fitted k-means assigns the nearest
    centre.

    References
    ----------
    Z. Kang, W. Zhou, Z. Zhao, J. Shao, M. Han and Z. Xu, "Large-scale
    multi-view subspace clustering in linear time", in Proc. AAAI
    Conference on Artificial Intelligence 34(4), 2020 (arXiv:1911.09290).

    Examples
    --------
    >>> from mvlearn_ext.cluster import LMVSC
    >>> from mvlearn_ext.datasets import make_multiview_blobs
    >>> from mvlearn_ext.metrics import clustering_accuracy
    >>> Xs, y = make_multiview_blobs(120, n_views=2, n_features=[4, 3], random_state=0)
    >>> model = LMVSC(n_clusters=3, n_anchors=20, random_state=0).fit(Xs)
    >>> model.anchor_graph_[0].shape, model.embedding_.shape
    ((20, 120), (120, 3))
    >>> float(clustering_accuracy(y, model.labels_))
    1.0
    """

    _min_views = 2

    #: Rows on which the block path fits the anchors of each view: above this many
    #: samples, MiniBatchKMeans on that many random rows (the in-memory threshold).
    _anchor_sample = MINIBATCH_THRESHOLD

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_anchors": [Interval(Integral, 1, None, closed="left")],
        "reg_lambda": [Interval(Real, 0, 1e6, closed="both")],
        "scaling": [StrOptions({"zscore"}), None],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS_CONSTRAINT,
        "verbose": ["verbose"],
        "block_size": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        n_anchors=50,
        reg_lambda=1.0,
        scaling="zscore",
        n_init=10,
        max_iter=500,
        tol=1e-6,
        random_state=None,
        n_jobs=None,
        verbose=0,
        block_size=None,
    ):
        self.n_clusters = n_clusters
        self.n_anchors = n_anchors
        self.reg_lambda = reg_lambda
        self.scaling = scaling
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.block_size = block_size

    def _fit_blocks(self, Xs):
        return fit_lmvsc_blocks(self, Xs)

    def _predict_blocks(self, Xs):
        return predict_lmvsc_blocks(self, Xs)

    def _store_model(self, *, anchors, graphs, embedding, sigma, projection, objective, n_iter):
        """Set the fitted model (both paths; not ``kmeans_`` and the labels).

        The view weights are uniform, ``1 / V``.
        """
        n_views = len(anchors)
        self.anchors_ = anchors
        self.anchor_graph_ = graphs
        self.embedding_ = embedding
        self.singular_values_ = sigma
        self._projection = projection
        self.view_weights_ = np.full(n_views, 1.0 / n_views)
        self.objective_ = np.asarray(objective)
        self.n_iter_ = int(n_iter)

    def _fit_views(self, Xs):
        n_threads = self._n_threads
        _, (anchor_seed, kmeans_seed) = draw_seeds(self.random_state, 2)
        n_samples, n_views = Xs[0].shape[0], len(Xs)
        self._fit_view_scaling(Xs)
        views = self._scale_views(Xs)
        m = min(self.n_anchors, n_samples)
        self.n_anchors_ = m

        start = time.perf_counter()
        anchors, graphs, objectives, iterations = [], [], [], []
        for v, X in enumerate(views):
            A = kmeans_anchors(
                X, m, random_state=anchor_seed, n_init=self.n_init, max_iter=_ANCHOR_MAX_ITER
            )
            Z, n_iter, objective = _view_graph(
                X, A, self.reg_lambda, max_iter=self.max_iter, tol=self.tol, n_threads=n_threads
            )
            anchors.append(A)
            graphs.append(Z)
            objectives.append(objective)
            iterations.append(n_iter)
            self._log(
                f"view {v}: {m} anchors, graph objective {objective:.6g} after {n_iter} QP "
                f"iterations ({time.perf_counter() - start:.2f} s)"
            )
        Z_bar = np.vstack(graphs) / np.sqrt(n_views)
        F, sigma, P = anchor_spectral_embedding(
            Z_bar, self.n_clusters, normalize=False, return_projection=True
        )
        self.kmeans_ = KMeans(
            n_clusters=self.n_clusters, n_init=self.n_init, random_state=kmeans_seed
        ).fit(F)
        self._log(f"embedding and k-means done ({time.perf_counter() - start:.2f} s)")

        self._store_model(
            anchors=anchors, graphs=graphs, embedding=F, sigma=sigma, projection=P,
            objective=objectives, n_iter=max(iterations),
        )  # fmt: skip
        self.labels_ = self.kmeans_.labels_.astype(np.intp, copy=False)
        return self

    def _transform_views(self, Xs):
        """Code new samples on the fitted anchors and map them to the embedding."""
        views = self._scale_views(Xs)
        graphs = [
            _view_graph(
                X,
                A,
                self.reg_lambda,
                max_iter=self.max_iter,
                tol=self.tol,
                n_threads=self._n_threads,
            )[0]
            for X, A in zip(views, self.anchors_, strict=True)
        ]
        Z_bar = np.vstack(graphs) / np.sqrt(len(graphs))
        return Z_bar.T @ self._projection

    def _predict_views(self, Xs):
        F = self._transform_views(Xs)
        return self.kmeans_.predict(F).astype(np.intp, copy=False)
