"""HAG-MVC: hierarchical anchor graphs for multi-view clustering (a reconstruction).

Only the abstract of the paper (ICML 2026, poster 65073) is public. What it fixes
(a multi-level pyramid of anchors, anchors and graphs refined together from fine to
coarse, every anchor kept in the original feature space of its view) is implemented
here; everything else is a reconstruction, described in the docstring of
:class:`HAGMVC`.

Layers: :class:`HAGMVC` validates; the driver and block updates are in
:mod:`._hagmvc_pyramid`, the block path in :mod:`._hagmvc_blocks`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from mvlearn_ext.cluster._base import InductiveClusterer
from mvlearn_ext.cluster._common import regularised_anchor_embedding
from mvlearn_ext.cluster._hagmvc_blocks import fit_hagmvc_blocks, predict_hagmvc_blocks
from mvlearn_ext.cluster._hagmvc_pyramid import (
    _FINAL_N_INIT,
    _composite,
    _feature_weights,
    _fit_pyramid,
    _graph_step,
    _level_neighbors,
    _normalise_rows,
    _pyramid_sizes,
    _standardise,
)
from mvlearn_ext.cluster._preprocessing import fit_view_scaling
from mvlearn_ext.cluster._view_weights import fit_view_weights
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
        \qquad z^{(l)}_i \in \Delta,

    minimised block by block (every graph column is one projection onto the
    simplex :math:`\Delta`, every anchor a weighted mean of data points). The
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
    reg_lambda : float, default=1.0
        Multiplier of the adaptive regularisation ``lambda_i^(l)``; larger values
        spread each sample's weight over more anchors.
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
        Seeds the k-means++ initialisation of the anchors, the view-weight
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
        anchors save nothing. ``False``: always the anchor rule.
    n_jobs : int or None, default=None
        Threads of the simplex projections: ``None`` is 1 (or the ``n_jobs`` of
        an enclosing ``joblib.parallel_config``), ``-1`` every CPU, a positive
        count is capped at the CPUs available. The labels do not depend on it.
    verbose : int, default=0
        Print the objective after each sweep to stderr.
    block_size : int or None, default=None
        The block algorithm: a map-reduce
        over row blocks that never holds more than one block of samples. It runs
        on its own for views given as dask arrays (their row chunks are the
        blocks; every view must have the same row chunks), zarr arrays or NumPy
        memmaps (cut every ``block_size`` rows, 65536 if None), and on NumPy views
        when ``block_size`` is an int. It differs from the in-memory algorithm in
        its random subsets and in fitting the final k-means on a subsample of at
        most 100000 rows (see the user guide); with the same blocks and seed it
        gives the same labels in memory, on disk and on a ``dask.distributed``
        cluster. The attributes that hold one row per sample (``graphs_[0]``,
        ``composite_graph_``, ``embedding_``) are None. For dask views,
        ``labels_`` and :meth:`predict` return dask arrays.

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
        "reg_lambda": [Interval(Real, 0, None, closed="neither")],
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
        return self._store(**fit_hagmvc_blocks(self, Xs))

    def _predict_blocks(self, Xs):
        return predict_hagmvc_blocks(self, Xs)

    def _fit_views(self, Xs):
        rng = check_random_state(self.random_state)
        n_samples = Xs[0].shape[0]
        k = self.n_clusters
        sizes = _pyramid_sizes(
            n_samples, k, self.n_anchors, self.ratio, self.n_levels, self._sample_graph_below()
        )
        neighbors = _level_neighbors(self.n_neighbors, sizes)

        means, scales = fit_view_scaling(Xs, unit_view_variance=True)
        X = _standardise(Xs, means, scales)
        bounds = np.cumsum([0] + [X_v.shape[1] for X_v in Xs])
        slices = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        fixed, scores = self._fixed_weights(Xs, rng)
        lambda_ = float(self.reg_lambda)
        fitted = _fit_pyramid(
            X, slices, sizes, neighbors, lambda_, self.max_iter, self.tol, rng,
            self._n_threads, self.verbose, fixed_weights=fixed,
        )  # fmt: skip

        # Labels from the composite graph: normalised bipartite spectral embedding.
        composite_rows = _composite(fitted["graphs"])  # (n, m_L)
        degree = np.asarray(composite_rows.sum(axis=0)).ravel()
        n_components = min(k, int(np.count_nonzero(degree > 0)))
        F, projection = regularised_anchor_embedding(
            sp.csr_matrix(composite_rows.T), n_components, return_projection=True
        )
        kmeans = KMeans(n_clusters=k, n_init=_FINAL_N_INIT, random_state=rng).fit(
            _normalise_rows(F)
        )
        return self._store(
            means=means, scales=scales, scores=scores, sizes=sizes, slices=slices,
            anchors=fitted["anchors"], graphs=fitted["graphs"], weights=fitted["weights"],
            normalisers=fitted["scales"], lambda_=lambda_, neighbors=neighbors, fixed=fixed,
            history=fitted["history"], n_iter=fitted["n_iter"], embedding=F,
            composite=sp.csr_matrix(composite_rows.T), projection=projection, kmeans=kmeans,
            labels=kmeans.labels_.astype(np.intp),
        )  # fmt: skip

    def _store(
        self, *, means, scales, scores, sizes, slices, anchors, graphs, weights, normalisers,
        lambda_, neighbors, fixed, history, n_iter, embedding, composite, projection, kmeans,
        labels,
    ):  # fmt: skip
        """Set the fitted attributes from the pieces of either path's fit.

        ``graphs`` are the level graphs in row orientation (``None`` for the finest
        level of the block path, whose graph is never held).
        """
        self.view_means_, self.view_scales_ = means, scales
        self.view_weight_scores_ = scores
        self._slices = slices
        self._anchors_std = anchors
        self._graphs_rows = graphs
        self._lambda_scale = lambda_
        self._neighbors = neighbors
        self._view_scale0 = normalisers[0]
        self._alpha0 = weights[0]
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

    def _sample_graph_below(self):
        """Anchor counts below which ``n_anchors=None`` uses every sample (0: never)."""
        return 2 * self.n_neighbors * self.n_clusters if self.small_sample_graph else 0

    def _fixed_weights(self, Xs, rng):
        """``(weights, scores)``: the view weights and, when learned, their diagnostics."""
        n_views = len(Xs)
        option = self.view_weights
        if isinstance(option, str):
            if option == "uniform":
                return np.full(n_views, 1.0 / n_views), None
            scores = fit_view_weights(
                Xs,
                self.n_clusters,
                n_neighbors=self.n_neighbors,
                rule="factor" if option == "factor" else "reliability",
                random_state=rng,
            )
            return scores.weights_, scores
        weights = np.asarray(option, dtype=np.float64)
        if weights.shape != (n_views,):
            raise ValueError(
                f"view_weights has shape {weights.shape}; give one weight per view "
                f"({n_views} views)"
            )
        if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
            raise ValueError(
                "view_weights must be finite, nonnegative and not all zero, got "
                f"{weights.tolist()}"
            )
        return weights / weights.sum(), None

    def _code(self, Xs):
        """Composite-graph rows (n_new, m_L) of new (validated) views, through the pyramid."""
        X = _standardise(Xs, self.view_means_, self.view_scales_)
        w = _feature_weights(self._alpha0, self._view_scale0, self._slices, X.shape[1])
        _, G = _graph_step(
            X, self._anchors_std[0], w, self._neighbors[0], self._lambda_scale, self._n_threads
        )
        for Z in self._graphs_rows[1:]:
            G = G @ Z
        return G

    def _predict_views(self, Xs):
        G = self._code(Xs)
        F = np.asarray(G @ self.spectral_projection_)
        return self.kmeans_.predict(_normalise_rows(F)).astype(np.intp)
