"""HAG-MVC: hierarchical anchor graphs for multi-view clustering (a reconstruction).

Only the abstract of the paper (ICML 2026, poster 65073) is public. What it fixes
(a multi-level pyramid of anchors, anchors and graphs refined together from fine to
coarse, every anchor kept in the original feature space of its view) is implemented
here; everything else is a reconstruction, described in the docstring of
:class:`HAGMVC`.

Layers: :class:`HAGMVC` validates and stores; the driver, over row blocks for every
input, is in :mod:`._hagmvc_blocks`, the block updates it runs in :mod:`._hagmvc_pyramid`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from mvlearn_ext.cluster._base import (
    InductiveClusterer,
    labels_by_blocks,
    labels_like_input,
    open_blocks,
    open_fitted_blocks,
)
from mvlearn_ext.cluster._blockwise import RowBlocks
from mvlearn_ext.cluster._hagmvc_blocks import fit_hagmvc, label_block, label_params
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT

__all__ = ["HAGMVC"]


class HAGMVC(InductiveClusterer):
    r"""Hierarchical anchor graph multi-view clustering.

    A reconstruction of HAG-MVC ("Hierarchical Anchor Graph Learning for
    Multi-View Clustering", ICML 2026) from the paper's abstract: the samples
    are coded by a pyramid of anchors, from fine to coarse, that stay in each
    view's own feature space (``anchors_`` can be inspected in the units of
    the data), and the anchors and the graphs that link each level to the one
    below are refined together. Level ``l`` reconstructs the level below with
    locality-weighted anchors,

    .. math::

        J = \sum_{l=1}^{L} \Big[ \sum_v \omega_v \sum_{i,j} Z^{(l)}_{ji}
            \lVert a^{(l-1)}_{v,i} - a^{(l)}_{v,j} \rVert^2
            + \sum_i \lambda^{(l)}_i \lVert z^{(l)}_i \rVert^2 \Big],

    over graph columns :math:`z^{(l)}_i` in the probability simplex
    :math:`\Delta`, minimised block by block (every graph column is one
    projection onto :math:`\Delta`, every anchor a weighted mean of data
    points). The
    view weights :math:`\omega_v` are label-free and fixed before the pyramid
    is built: a pure-noise view gets a weight near 0 whatever its width. The
    labels are the k-means clusters of the spectral embedding of the graph
    that links the samples to the coarsest anchors. Where the abstract is
    silent (objective, updates, view weights, labelling) the choices are this
    package's, so results may differ from the paper's; the
    :ref:`clustering user guide <clustering-maths>` derives them.

    Parameters
    ----------
    n_clusters : int, default=8
        The number of clusters.
    n_anchors : int, sequence of int or None, default=None
        The pyramid. ``None``: ``m_1 = max(min(n // 4, 50 k), min(n // 2, 75 k,
        1_500_000 // n))`` for ``n`` samples and ``k = n_clusters`` (at least
        ``k``): up to half the samples and 75 anchors per cluster while the
        sample-anchor distances stay within 1.5 million pairs, otherwise a quarter
        of the samples and 50 per cluster (for ``k = 10``: 750 anchors at
        ``n = 2000``, 500 from ``n = 3000`` on); many anchors of small degree
        sharpen the graph, at a cost linear in ``n m_1``. An int:
        ``m_1`` (capped at ``n_samples``); in both cases the next levels have
        ``m_l = max(n_clusters, round(ratio * m_{l-1}))`` anchors, and a level
        that would not be smaller than the one below is dropped. A sequence gives
        the sizes of all levels, fine to coarse (strictly decreasing, the last at
        least ``n_clusters``); ``ratio`` and ``n_levels`` are then ignored.
    ratio : float in (0, 1), default=0.5
        Size ratio ``m_{l+1} / m_l`` of consecutive levels.
    n_levels : int, default=1
        Number of levels ``L`` (fewer when the sizes reach ``n_clusters``).
        Coarser levels summarise the finer ones; with one level the labels come
        from the finest graph, which is the most accurate on typical data.
    n_neighbors : int, default=10
        Number of level-1 anchors each sample is linked to (the adaptive-neighbour
        rule sets ``lambda_i`` so that the graph has this many nonzeros per
        sample for ``reg_lambda=1``). Level ``l`` uses ``n_neighbors * m_l / m_1``,
        rounded, at least 1. Also the neighbours of the view-weight scores. Fewer
        neighbours make the sparse graph depend on which rows the k-means++
        seeding draws as anchors (a cluster can split around a few anchors); 10
        is the neighbourhood of the usual 10-NN spectral clustering.
    reg_lambda : float in (0, 1e6], default=1.0
        Multiplier of the adaptive regularisation ``lambda_i^(l)``; larger values
        spread each sample's weight over more anchors. Bounded because far above
        1e6 every sample weighs all anchors equally up to rounding, and the graph
        no longer carries the data.
    max_iter : int, default=2
        Maximum number of fine-to-coarse sweeps (0 keeps the initial pyramid).
        A sweep re-codes each level and then moves its anchors, so the labels
        see the moved anchors from the second sweep on. Each anchor move pulls
        the anchors towards the local means of the points they code (a
        mean-shift-like contraction); on Gaussian clusters many sweeps merge
        anchors of overlapping clusters, so the default stops after one move.
    tol : float, default=1e-4
        Stop when a sweep changes ``J`` by less than ``tol * J``.
    random_state : int, RandomState instance or None, default=None
        Seeds the random row subsets (of the view-weight scores, the anchor
        seeding and the final k-means, drawn before the first pass over the
        rows), the k-means++ initialisation of the anchors, the view-weight
        scores and the final k-means.
    view_weights : {"factor", "auto", "uniform"} or array-like, default="factor"
        The view weights, fixed during the fit. ``"factor"``: label-free weights
        (see the user guide) in which, with three or more views, a one-factor fit of the
        views' pairwise agreements (agreement of two views about the product of
        their qualities) tells a view that agrees with every other from a weak
        view that agrees with it alone. ``"auto"``: the same scores without that
        fit (each view scored by its best agreement with another view).
        ``"uniform"``: ``1 / n_views`` each (every view at total variance 1). An
        array of ``n_views`` nonnegative numbers: those weights, normalised to
        sum 1.
    small_sample_graph : bool, default=True
        With ``n_anchors=None``: when the anchor rule gives fewer than
        ``2 * n_neighbors * n_clusters`` anchors, every sample is an anchor, so
        the first level is a graph over the samples. With fewer anchors a
        cluster holds too few of them for a sample's ``n_neighbors`` anchors to
        stay inside it, and at that size (a few hundred samples or fewer)
        anchors save nothing. ``False``: always the anchor rule. Whenever the
        labelled graph has one anchor per sample, the degree regularisation
        ``tau`` of its spectral embedding is the graph's mean degree, the value
        of regularised spectral clustering on a graph over samples (Qin & Rohe,
        2013), rather than the tenth of the mean anchor degree that damps anchors
        standing for many samples each.
    n_jobs : int or None, default=None
        Threads of the row-wise steps (the sample-anchor graphs and the Gram
        matrix of the seeding, by fixed tiles of rows) and of the view scores
        (a view per thread): ``None`` is 1 (or the ``n_jobs`` of an enclosing
        ``joblib.parallel_config``), ``-1`` every CPU, a positive count is
        capped at the CPUs available. On dask arrays the blocks run in
        parallel instead. The labels do not depend on it.
    verbose : int, default=0
        Print the objective after each sweep to stderr.
    block_size : int or None, default=None
        Rows per block. Every fit is a map-reduce over row blocks whose passes
        hold one block of samples at a time: dask arrays by their row chunks
        (every view must have the same row chunks), zarr arrays, NumPy memmaps
        and NumPy views cut every ``block_size`` rows (65536 if None). With the
        same blocks and seed the labels are the same in memory, on disk and on a
        ``dask.distributed`` cluster; other blocks change only the rounding of
        the block sums. Out-of-core views (dask, zarr, memmap) and NumPy views
        with an int ``block_size`` keep nothing per sample: the attributes that
        hold one row per sample (``graphs_[0]``, ``composite_graph_``,
        ``embedding_``) are None, and for dask views ``labels_`` and
        :meth:`predict` return dask arrays.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The cluster of each training sample.
    anchors_ : list of list of ndarray
        ``anchors_[l][v]`` of shape ``(n_anchors_[l], n_features_v)``: the anchors
        of level ``l`` (0 is the finest) in view ``v``, in the original units of
        the view. Each is a convex combination of training samples.
    graphs_ : list of scipy.sparse.csr_matrix
        ``graphs_[l]`` of shape ``(n_anchors_[l], n_anchors_[l-1])`` (``n_samples``
        columns for ``l = 0``): the weights linking each point of the level below
        (a column) to the anchors of level ``l``; every column sums to 1.
    composite_graph_ : scipy.sparse.csr_matrix of shape (n_anchors_[-1], n_samples)
        ``G = graphs_[L-1] @ ... @ graphs_[0]``; every column sums to 1.
    view_weights_ : ndarray of shape (n_levels, n_views)
        The view weights ``omega`` of every level (rows sum to 1).
    view_weight_scores_ : ViewWeights or None
        With ``view_weights="factor"`` or ``"auto"``, the result of ``fit_view_weights``
        (weights, structure and agreement scores, per view); else None.
    n_anchors_ : tuple of int
        The pyramid sizes actually used, fine to coarse.
    embedding_ : ndarray of shape (n_samples, n_clusters)
        The spectral embedding of ``composite_graph_`` (before row normalisation).
    objective_ : ndarray of shape (n_iter_ + 1,)
        ``J`` after initialisation and after every sweep.
    n_iter_ : int
        Number of sweeps run.
    view_means_ : list of ndarray of shape (n_features_v,)
    view_scales_ : list of ndarray of shape (n_features_v,)
        The standardisation: feature ``f`` of view ``v`` is mapped to
        ``(x_f - mean_f) / scale_f`` with ``scale_f = std_f * sqrt(d_v)``.
    n_views_ : int
        Number of views seen at ``fit``.
    n_features_per_view_ : tuple of int
        Number of features of each view seen at ``fit``.

    See Also
    --------
    mvlearn_ext.cluster.ConcatKMeans : The concatenation baseline.

    Notes
    -----
    *Preprocessing.* Every feature is centred and divided by its standard
    deviation times ``sqrt(d_v)``, so that each view enters with total variance
    1 whatever its width; the statistics are those of the training views and are
    reused by :meth:`predict`. ``anchors_`` are reported back in the original
    units.

    *Why a locality-weighted term and convex anchors.* The
    plain reconstruction ``||A^(l-1) - A^(l) Z^(l)||^2`` with simplex columns is
    archetypal analysis: it pushes anchors towards the boundary of the data, where
    coarse levels collapse. The locality term keeps each
    anchor at the centre of the points it codes, makes the graph step a single
    simplex projection and the anchor step a closed-form weighted mean, and keeps
    every anchor inside the data's convex hull, which is what makes the anchors
    inspectable as data-like points. The view weights are label-free and fixed:
    weights learned from each view's own residual (``alpha_v ∝ 1 / M_v``) favour
    the views that are easiest to reconstruct, a narrow or pure-noise view
    included, and feed back through the graph.

    *Cost.* Per sweep ``O(n m_1 sum_v d_v)`` for the level-1 distances plus lower
    order terms; memory ``O(n (m_1 + k) + m_1 sum_v d_v)``. No ``n x n`` matrix is
    formed.

    *predict.* A new sample is standardised, coded on the level-1 anchors by the
    same rule (its own adaptive ``lambda``), passed up the pyramid through the
    fitted graphs, embedded with the fitted spectral projection and given the
    label of the nearest k-means centre. On the training views it reproduces
    ``labels_`` up to the samples whose adaptive ``lambda`` changed during the
    sweeps.

    References
    ----------
    Hierarchical Anchor Graph Learning for Multi-View Clustering (HAG-MVC), ICML
    2026, poster 65073 (abstract only; https://icml.cc/virtual/2026/poster/65073).

    F. Nie, X. Wang and H. Huang, "Clustering and projected clustering with
    adaptive neighbors", in Proc. KDD, 2014.

    W. Liu, J. He and S.-F. Chang, "Large graph construction for scalable
    semi-supervised learning", in Proc. ICML, 2010.

    T. Qin and K. Rohe, "Regularized spectral clustering under the
    degree-corrected stochastic blockmodel", in Advances in Neural Information
    Processing Systems 26, 2013.

    Examples
    --------
    >>> from mvlearn_ext.datasets import make_multiview_blobs
    >>> from mvlearn_ext.metrics import clustering_accuracy
    >>> from mvlearn_ext.cluster import HAGMVC
    >>> Xs, y = make_multiview_blobs(300, n_views=2, n_clusters=3, random_state=0)
    >>> model = HAGMVC(n_clusters=3, n_levels=2, random_state=0).fit(Xs)
    >>> model.n_anchors_
    (150, 75)
    >>> [A.shape for A in model.anchors_[1]]
    [(75, 10), (75, 10)]
    >>> float(clustering_accuracy(y, model.labels_))
    1.0
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_anchors": [Interval(Integral, 1, None, closed="left"), "array-like", None],
        "ratio": [Interval(Real, 0, 1, closed="neither")],
        "n_levels": [Interval(Integral, 1, None, closed="left")],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "reg_lambda": [Interval(Real, 0, 1e6, closed="right")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS_CONSTRAINT,
        "view_weights": [StrOptions({"factor", "auto", "uniform"}), "array-like"],
        "small_sample_graph": ["boolean"],
        "verbose": ["verbose"],
        "block_size": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        n_anchors=None,
        ratio=0.5,
        n_levels=1,
        n_neighbors=10,
        reg_lambda=1.0,
        max_iter=2,
        tol=1e-4,
        random_state=None,
        view_weights="factor",
        small_sample_graph=True,
        n_jobs=None,
        verbose=0,
        block_size=None,
    ):
        self.n_clusters = n_clusters
        self.n_anchors = n_anchors
        self.ratio = ratio
        self.n_levels = n_levels
        self.n_neighbors = n_neighbors
        self.reg_lambda = reg_lambda
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.view_weights = view_weights
        self.small_sample_graph = small_sample_graph
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.block_size = block_size

    def _fit_blocks(self, Xs):
        blocks = open_blocks(self, Xs)
        fitted = self._fit_driver(blocks, keep_graph=False)
        fitted["labels"] = labels_like_input(fitted["labels"], Xs, blocks)
        return self._store(**fitted)

    def _fit_views(self, Xs):
        return self._store(**self._fit_driver(RowBlocks(Xs), keep_graph=True))

    def _fit_driver(self, blocks, *, keep_graph):
        return fit_hagmvc(
            blocks, n_clusters=self.n_clusters, n_anchors=self.n_anchors, ratio=self.ratio,
            n_levels=self.n_levels, n_neighbors=self.n_neighbors, reg_lambda=self.reg_lambda,
            max_iter=self.max_iter, tol=self.tol, view_weights=self.view_weights,
            small_sample_graph=self.small_sample_graph, random_state=self.random_state,
            n_threads=1 if blocks.uses_dask else self._n_threads, verbose=self.verbose,
            keep_graph=keep_graph,
        )  # fmt: skip

    def _store(
        self, *, means, scales, scores, sizes, slices, anchors, graphs, feature_weights,
        lambda_, neighbors, fixed, history, n_iter, embedding, composite, projection, kmeans,
        labels,
    ):  # fmt: skip
        """Set the fitted attributes from the pieces returned by the driver.

        ``graphs`` are the level graphs in row orientation (``None`` for the finest
        level when the graph of every sample is not kept).
        """
        self.view_means_, self.view_scales_ = means, scales
        self.view_weight_scores_ = scores
        # What labelling new samples needs, in the driver's standardised units.
        self._anchors_std = anchors
        self._upper_graphs = graphs[1:]
        self._feature_weights = feature_weights
        self._lambda_scale = lambda_
        self._neighbors = neighbors
        self.n_anchors_ = tuple(int(size) for size in sizes)
        self.anchors_ = [
            [
                A[:, block] * scale + mean
                for block, mean, scale in zip(slices, means, scales, strict=True)
            ]
            for A in anchors
        ]
        self.graphs_ = [None if Z is None else sp.csr_matrix(Z.T) for Z in graphs]
        self.composite_graph_ = composite
        self.view_weights_ = np.tile(fixed, (len(sizes), 1))
        self.objective_ = history
        self.n_iter_ = int(n_iter)
        self.embedding_ = embedding
        self.spectral_projection_ = projection
        self.kmeans_ = kmeans
        self.labels_ = labels
        return self

    def _label_params(self, blocks):
        """The shared argument of the labelling task, from the fitted model."""
        return label_params(
            means=self.view_means_, scales=self.view_scales_, anchors=self._anchors_std[0],
            feature_weights=self._feature_weights, n_neighbors=self._neighbors[0],
            reg_lambda=self._lambda_scale, upper=self._upper_graphs,
            projection=self.spectral_projection_, kmeans=self.kmeans_,
            n_threads=1 if blocks.uses_dask else self._n_threads,
        )  # fmt: skip

    def _predict_blocks(self, Xs):
        blocks = open_fitted_blocks(self, Xs)
        return labels_by_blocks(
            self, Xs, blocks, label_block, self._label_params(blocks), "HAGMVC"
        )

    def _predict_views(self, Xs):
        blocks = RowBlocks(Xs)
        params = self._label_params(blocks)
        return np.concatenate(list(blocks.map(label_block, params)))
