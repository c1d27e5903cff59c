"""LMVSC: large-scale multi-view subspace clustering (Kang et al., AAAI 2020)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from mvlearn_ext.cluster._base import (
    EmbeddingClusterer,
    draw_seeds,
    labels_by_blocks,
    labels_like_input,
    open_blocks,
    open_fitted_blocks,
)
from mvlearn_ext.cluster._blockwise import RowBlocks
from mvlearn_ext.cluster._common import MINIBATCH_THRESHOLD
from mvlearn_ext.cluster._lmvsc_solver import fit_lmvsc, lmvsc_embedding, lmvsc_label_task
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT

__all__ = ["LMVSC"]

#: Rows of the random sample on which the block path fits the final k-means.
_KMEANS_SAMPLE = 100_000


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
        capped at ``n_samples``, the effective value is ``n_anchors_``. The
        views' anchors together, ``n_views * m``, must number at least
        ``n_clusters``.
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
        Rows per block of the out-of-core path, which never holds more than
        one block of samples (views in memory are one block of the same
        algorithm, with every row). It runs for views given as dask arrays
        (their row chunks are the blocks; every view must have the same row
        chunks), zarr arrays or NumPy memmaps (cut every ``block_size`` rows,
        65536 if None), and on NumPy views when ``block_size`` is an int. It
        fits the anchors on at most 50000 random rows and the final k-means on
        at most 100000 (see the user guide); with
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

    def _fit_views(self, Xs):
        # Views in memory are one block: the driver keeps every row's graph and embedding.
        return self._fit_rows(RowBlocks(Xs, Xs[0].shape[0]), Xs, in_memory=True)

    def _fit_blocks(self, Xs):
        return self._fit_rows(open_blocks(self, Xs, min_views=2, name="LMVSC"), Xs)

    def _fit_rows(self, blocks, Xs, *, in_memory=False):
        _, (anchor_seed, kmeans_seed) = draw_seeds(self.random_state, 2)
        fitted = fit_lmvsc(
            blocks, self.n_clusters, n_anchors=self.n_anchors, reg_lambda=self.reg_lambda,
            scaling=self.scaling, n_init=self.n_init, max_iter=self.max_iter, tol=self.tol,
            anchor_seed=anchor_seed, kmeans_seed=kmeans_seed, n_threads=self._n_threads,
            keep_graphs=in_memory, anchor_sample=None if in_memory else self._anchor_sample,
            kmeans_sample=None if in_memory else _KMEANS_SAMPLE, log=self._log,
            progress=bool(self.verbose) and not in_memory,
        )  # fmt: skip
        n_views = len(fitted.anchors)
        self.view_means_, self.view_scales_ = fitted.view_means, fitted.view_scales
        self.n_anchors_ = fitted.anchors[0].shape[0]
        self.anchors_ = fitted.anchors
        self.anchor_graph_ = fitted.graphs
        self.embedding_ = fitted.embedding
        self.singular_values_ = fitted.singular_values
        self._projection = fitted.projection
        self.view_weights_ = np.full(n_views, 1.0 / n_views)
        self.objective_ = fitted.objective
        self.n_iter_ = fitted.n_iter
        self.kmeans_ = fitted.kmeans
        self.labels_ = fitted.labels if in_memory else labels_like_input(fitted.labels, Xs, blocks)
        return self

    def _model(self, n_threads):
        return dict(
            view_means=self.view_means_, view_scales=self.view_scales_, anchors=self.anchors_,
            projection=self._projection, reg_lambda=self.reg_lambda, max_iter=self.max_iter,
            tol=self.tol, n_threads=n_threads,
        )  # fmt: skip

    def _transform_views(self, Xs):
        """Code new samples on the fitted anchors and map them to the embedding."""
        return lmvsc_embedding(RowBlocks(Xs, Xs[0].shape[0]), **self._model(self._n_threads))

    def _predict_blocks(self, Xs):
        blocks = open_fitted_blocks(self, Xs)
        n_threads = 1 if blocks.uses_dask else self._n_threads
        task, params = lmvsc_label_task(kmeans=self.kmeans_, **self._model(n_threads))
        return labels_by_blocks(self, Xs, blocks, task, params, "LMVSC")

    def _predict_views(self, Xs):
        F = self._transform_views(Xs)
        return self.kmeans_.predict(F).astype(np.intp, copy=False)
