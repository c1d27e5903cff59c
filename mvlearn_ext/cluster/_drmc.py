"""DRMC: discretely-refined multi-view clustering with aligned anchors (a reconstruction).

Only the abstract of the ICML 2026 paper (poster 66036) is public. Every
block, the order of the updates and the defaults are this package's
reconstruction of the abstract's ingredients, not the paper's algorithm (see
the class docstring). Layout: :class:`DRMC` (this module) validates and stores;
``_drmc_solver._drmc`` (the driver) assumes valid, standardised views and runs the
feedback loop; the view scaling, the kNN anchor graphs and the anchors are in
``_drmc_graphs``; the block path is ``_drmc_blocks``. The anchor spectral embedding,
the spectral rotation and the k-means anchors come from ``_common``.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from mvlearn_ext.cluster._base import InductiveClusterer
from mvlearn_ext.cluster._drmc_blocks import fit_drmc_blocks, predict_drmc_blocks
from mvlearn_ext.cluster._drmc_graphs import (
    _N_NEIGHBORS,
    _SUBSAMPLE,
    _feature_factors,
    _prior_weights,
    _scaled_joint,
)
from mvlearn_ext.cluster._drmc_solver import (
    _drmc,
    _match_labels,
    _memberships,
    _predict_rows,
    _scaled_indicator,
    _view_redundancy,
)
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT

__all__ = ["DRMC"]

#: Default number of anchors (``n_anchors=None``): ``ceil(sqrt(2 n k))``, at most
#: this many per cluster, at most ``n``.
_MAX_ANCHORS_PER_CLUSTER = 20
_ANCHOR_FACTOR = 2.0
#: Floor, relative to the largest, of the prior weights in the stored scaling.
_PRIOR_FLOOR = 0.01


# --------------------------------------------------------------------------- estimator


class DRMC(InductiveClusterer):
    r"""Discretely refined multi-view clustering with aligned anchors.

    A reconstruction of DRMC ("Discretely-Refined Multi-view Clustering via
    Aligned Anchor Learning", ICML 2026) from the paper's abstract. The
    weighted views share one set of anchors; each sample is linked to its 5
    nearest anchors (Nie, Wang & Huang, 2014) in a consensus graph :math:`Z`,
    whose spectral embedding :math:`F` is turned into discrete labels by
    spectral rotation (Huang, Nie & Huang, 2013), without k-means:

    .. math::

        \min_{R^\top R = I,\; Y} \big\lVert F R - Y (Y^\top Y)^{-1/2} \big\rVert_F^2 .

    The partition is then fed back: every view is reweighted by the
    chance-corrected agreement of its own anchor graph with the partition
    (copies of a view share its weight, a noise view drops to about 0), the
    consensus graph is rebuilt, and the loop repeats until no label changes.
    Where the abstract is silent the choices and defaults are this package's,
    so results may differ from the paper's; the
    :ref:`clustering user guide <clustering-maths>` derives them.

    Parameters
    ----------
    n_clusters : int, default=8
        The number of clusters ``k``.
    n_anchors : int or None, default=None
        The number of anchors ``m``, at least ``n_clusters``; capped at the
        number of samples. ``None`` uses ``ceil(sqrt(2 n k))``, at most
        ``20 k``: it grows with ``n`` so that large sets get finer anchors,
        slower than ``n`` so that small sets keep several samples per anchor.
    view_weights : {"agreement", "uniform"}, default="agreement"
        ``"agreement"``: learned by the discrete feedback (above), from the
        starting weights ``∝ sqrt(d_v)`` (``max_iter=0`` keeps those).
        ``"uniform"``: fixed and equal (the per-view balanced concatenation,
        no feedback).
    small_sample_graph : bool, default=True
        With ``n_anchors=None``: when the rule above gives fewer than ``2 * 5 * k``
        anchors (two per cluster for each of a sample's 5 anchor neighbours),
        every sample is an anchor (the graph is a kNN graph of the samples). With
        fewer anchors a cluster holds too few of them for a sample's neighbours
        to stay inside it, and at that size (a few hundred samples at most)
        anchors save nothing. ``False``: always the rule above.
    align_anchors : bool, default=False
        ``True``: learn per-view k-means anchors and align them across views
        by the Hungarian method on their kNN-graph overlaps (FMVACC-style,
        Wang et al., 2022). ``False``: the view blocks of k-means centres of
        the jointly scaled views, aligned by construction.
    scaling : {"zscore"} or None, default="zscore"
        ``"zscore"``: z-score every feature with the training statistics
        (reused by :meth:`predict`). ``None``: the features enter as given (the
        view weights and the ``1/d_v`` factors still apply).
    max_iter : int, default=20
        Maximum number of feedback rounds (0: the partition of the prior
        weights).
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means anchors and the rotations. Converted once per
        ``fit``; every view's k-means gets the same seed.
    n_jobs : int or None, default=None
        Threads of the compiled kNN kernel used by ``align_anchors=True``:
        ``None`` is 1 (or the ``n_jobs`` of an enclosing
        ``joblib.parallel_config``), ``-1`` every CPU, a positive count is
        capped at the CPUs available. The labels do not depend on it.
    verbose : int, default=0
        Print the weights and label changes of every round to stderr (and,
        on the block path, a progress bar over the row blocks of every pass).
    block_size : int or None, default=None
        The block algorithm: a
        map-reduce over row blocks that never holds more than one block of
        samples (beyond the subsamples below). It runs on dask arrays
        (labels come back as a dask array chunked like the rows; every view
        must have the same row chunks), zarr arrays or NumPy memmaps (cut
        every ``block_size`` rows, 65536 if None), and on NumPy views when
        ``block_size`` is an int. Up to 100000 samples it is the in-memory
        algorithm, statistic for statistic (only the rounding of the
        block sums differs); above, the spectral rotation runs on 100000
        random rows (plus the rows of the view scores) and every sample
        gets the cluster of largest linearised rotation gain (see the
        user guide). With the same blocks and seed it gives the same labels
        in memory, on disk and on a ``dask.distributed`` cluster.
        ``anchor_graph_``, ``embedding_`` and ``indicator_`` are None on
        the block path.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The cluster of each training sample, from the final rotation.
    initial_labels_ : ndarray of shape (n_samples,)
        The partition before any feedback (the starting weights).
    n_labels_changed_ : int
        Number of samples whose label differs between ``initial_labels_``
        and ``labels_`` (after matching the clusters by the Hungarian method).
    anchors_ : list of ndarray of shape (n_anchors_, n_features_v)
        The anchors of every view in the units of the input; row ``j`` of
        every view is the same anchor.
    anchor_graph_ : scipy.sparse.csr_matrix of shape (n_anchors_, n_samples)
        The final consensus graph ``Z``; every column sums to 1.
    embedding_ : ndarray of shape (n_samples, n_clusters)
        The spectral embedding ``F`` (orthonormal columns).
    indicator_ : ndarray of shape (n_samples, n_clusters)
        The scaled indicator ``Y (Y^T Y)^{-1/2}`` of ``labels_``.
    rotation_ : ndarray of shape (n_clusters, n_clusters)
        The orthogonal ``R`` aligning ``embedding_`` with ``indicator_``.
    anchor_memberships_ : ndarray of shape (n_anchors_, n_clusters)
        Fraction of each anchor's mass in ``anchor_graph_`` in each cluster
        (zero rows for anchors of zero degree); used by :meth:`predict`.
    view_weights_ : ndarray of shape (n_views,)
        The weights ``w`` of the final graph (sum to 1).
    view_agreement_ : ndarray of shape (n_views,) or None
        The agreement of every view's graph with the last partition it was
        computed for (``None`` without feedback).
    view_weights_history_ : list of ndarray
        The weights of every graph built, starting weights first.
    n_iter_ : int
        Number of feedback rounds run.
    n_anchors_ : int
        Number of anchors used.
    reference_view_ : int or None
        The view the anchor sets were aligned to (``align_anchors=True``).
    view_means_, view_scales_ : list of ndarray of shape (n_features_v,) or None
        The z-scoring of every view (``None`` if ``scaling=None``).
    n_views_ : int
        Number of views seen at ``fit``.
    n_features_per_view_ : tuple of int
        Number of features of each view seen at ``fit``.

    See Also
    --------
    mvlearn_ext.cluster.ConcatKMeans : The concatenation baseline.

    Notes
    -----
    Cost: one k-means on the joint views for the anchors, then per graph
    built O(n m sum_v d_v) for the distances (blocks of rows, BLAS) plus
    O(n m k) for the embedding and rotation; the per-view graphs are built
    once. Above 20,000 samples the anchor k-means and the view scores use
    20,000 random rows (the redundancy scores 1000). Memory
    O(n (sum_v d_v + V)) beyond the views. Linear in ``n``.

    :meth:`predict` links new samples to their 5 nearest anchors under the
    learned weights and takes the cluster of largest
    ``z^T anchor_memberships_``.

    Duplicating a view adds a copy with the same graph and agreement; the
    redundancy divides the copies' weights, so together they weigh about
    what the view weighed alone (exactly only if the redundancy estimate is
    exact). The partition is then unchanged on the generated data of the
    tests; this is not a guarantee.

    To confirm against the paper when it appears: the form of the feedback
    (here through view weights only), the agreement measure, the
    initialisation and the stopping rule.

    References
    ----------
    "Discretely-Refined Multi-view Clustering via Aligned Anchor Learning",
    ICML 2026, poster 66036 (abstract only).

    W. Liu, J. He and S.-F. Chang, "Large graph construction for scalable
    semi-supervised learning", in Proc. ICML, 2010.

    J. Huang, F. Nie and H. Huang, "Spectral rotation versus K-means in
    spectral clustering", in Proc. AAAI, 2013.

    F. Nie, X. Wang and H. Huang, "Clustering and projected clustering with
    adaptive neighbors", in Proc. KDD, 2014.

    S. Wang, X. Liu, S. Liu, J. Jin, W. Tu, X. Zhu and E. Zhu, "Align then
    fusion: generalized large-scale multi-view clustering with
    anchor matching correspondences", in Proc. NeurIPS, 2022.

    Examples
    --------
    >>> from mvlearn_ext.cluster import DRMC
    >>> from mvlearn_ext.datasets import make_multiview_blobs
    >>> from mvlearn_ext.metrics import clustering_accuracy
    >>> Xs, y = make_multiview_blobs(300, n_views=3, n_clusters=3, random_state=0)
    >>> model = DRMC(n_clusters=3, random_state=0).fit(Xs)
    >>> float(clustering_accuracy(y, model.labels_))
    1.0
    >>> model.anchor_graph_.shape, model.embedding_.shape, len(model.anchors_)
    ((43, 300), (300, 3), 3)
    """

    _single_threaded = True
    #: Above this many samples the anchor k-means and the view scores run on that
    #: many random rows, so that their cost stops growing with ``n``.
    _subsample = _SUBSAMPLE
    #: Above this many samples the block path's spectral rotation runs on that many
    #: random rows and every sample is then labelled by the linearised rotation gain.
    _rotation_sample = 100_000
    #: Exponent of the agreement in the learned weights: a larger one concentrates the
    #: weight on the best-agreeing views, at the risk of dropping a view with a few
    #: informative features.
    _weight_power = 1.0

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_anchors": [Interval(Integral, 1, None, closed="left"), None],
        "view_weights": [StrOptions({"agreement", "uniform"})],
        "small_sample_graph": ["boolean"],
        "align_anchors": ["boolean"],
        "scaling": [StrOptions({"zscore"}), None],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS_CONSTRAINT,
        "verbose": ["verbose"],
        "block_size": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        n_anchors=None,
        view_weights="agreement",
        small_sample_graph=True,
        align_anchors=False,
        scaling="zscore",
        max_iter=20,
        random_state=None,
        n_jobs=None,
        verbose=0,
        block_size=None,
    ):
        self.n_clusters = n_clusters
        self.n_anchors = n_anchors
        self.view_weights = view_weights
        self.small_sample_graph = small_sample_graph
        self.align_anchors = align_anchors
        self.scaling = scaling
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.block_size = block_size

    def _n_anchors(self, n_samples):
        k = self.n_clusters
        if self.n_anchors is None:
            m = min(
                _MAX_ANCHORS_PER_CLUSTER * k, int(np.ceil(np.sqrt(_ANCHOR_FACTOR * n_samples * k)))
            )
            m = max(m, k)
            if self.small_sample_graph and m < 2 * _N_NEIGHBORS * k:
                m = n_samples
        else:
            m = self.n_anchors
        if m < k:
            raise ValueError(
                f"n_anchors={m} is smaller than n_clusters={k}; the embedding "
                "needs at least as many anchors as clusters"
            )
        return min(m, n_samples)

    def _scaled_views(self, Xs, factors):
        """z-scored views times ``factors``, as column blocks of one array."""
        return _scaled_joint(Xs, self.view_means_, self.view_scales_, factors)

    def _fit_blocks(self, Xs):
        return fit_drmc_blocks(self, Xs)

    def _predict_blocks(self, Xs):
        return predict_drmc_blocks(self, Xs)

    def _fit_views(self, Xs):
        n_samples = Xs[0].shape[0]
        n_anchors = self._n_anchors(n_samples)
        self._fit_view_scaling(Xs)
        rng = check_random_state(self.random_state)
        widths = [X.shape[1] for X in Xs]
        prior, prior_seed, factors = self._starting_weights(widths, rng)
        redundancy = np.ones(len(Xs))
        if self._learns(len(Xs)):
            redundancy = _view_redundancy(Xs, prior_seed)
        X_joint, views = self._scaled_views(Xs, factors)
        result = _drmc(
            views,
            X_joint,
            self.n_clusters,
            n_anchors=n_anchors,
            view_weights=self.view_weights,
            weight_power=self._weight_power,
            align_anchors=self.align_anchors,
            max_iter=self.max_iter,
            random_state=rng,
            prior=prior,
            redundancy=np.asarray(redundancy, dtype=np.float64),
            store_factors=factors,
            n_threads=self._n_threads,
            verbose=self.verbose,
            subsample=self._subsample,
        )
        del X_joint, views
        graph = result["graph"]
        labels = result["labels"]
        k = self.n_clusters
        mass = np.asarray(graph @ _scaled_indicator(labels, k, False))
        degree = np.asarray(graph.sum(axis=1)).ravel()
        self._store(result, factors, n_anchors, _memberships(mass, degree))
        self.anchor_graph_ = graph
        self.embedding_ = result["F"]
        self.labels_ = labels.astype(np.intp)
        self.initial_labels_ = result["initial_labels"].astype(np.intp)
        self.n_labels_changed_ = _match_labels(self.initial_labels_, self.labels_, k)[2]
        self.indicator_ = _scaled_indicator(labels, k, True)
        return self

    def _learns(self, n_views):
        """Whether the view weights are learned by the feedback."""
        return n_views > 1 and self.view_weights == "agreement" and self.max_iter > 0

    def _starting_weights(self, widths, rng):
        """``(prior, prior_seed, factors)``: the starting weights, the seed of the
        redundancy scores and the per-view factors the stored views carry."""
        prior = _prior_weights(widths)
        # Drawn whatever the number of views, so that the later seeds do not depend on it.
        prior_seed = int(rng.randint(np.iinfo(np.int32).max))
        # The stored views carry the prior (floored, so that no view is lost
        # before the feedback has seen it); the graphs reweight from there.
        floored = np.maximum(prior, _PRIOR_FLOOR * prior.max())
        factors = _feature_factors(widths, floored / floored.sum())
        return prior, prior_seed, factors

    def _store(self, result, factors, n_anchors, memberships):
        """Set the fitted attributes both paths share from a driver's result."""
        self.n_anchors_ = n_anchors
        self._anchors_scaled = result["anchors"]
        self._ratios = result["ratios"]
        self._factors = factors
        self.anchors_ = []
        for v, A in enumerate(result["anchors"]):
            A = A / factors[v]
            if self.view_means_ is not None:
                A = A * self.view_scales_[v] + self.view_means_[v]
            self.anchors_.append(A)
        self.rotation_ = result["R"]
        self.view_weights_ = result["weights"]
        self.view_agreement_ = result["scores"]
        self.view_weights_history_ = result["weight_history"]
        self.n_iter_ = int(result["n_iter"])
        self.reference_view_ = result["reference"]
        self.anchor_memberships_ = memberships

    def _predict_views(self, Xs):
        return _predict_rows(
            Xs, self.view_means_, self.view_scales_, self._factors, self._anchors_scaled,
            self._ratios, self.anchor_memberships_,
        )  # fmt: skip
