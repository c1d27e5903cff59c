"""DRMC: discretely-refined multi-view clustering with aligned anchors (a reconstruction).

Only the abstract of the ICML 2026 paper (poster 66036) is public. Every
block, the order of the updates and the defaults are this package's
reconstruction of the abstract's ingredients, not the paper's algorithm (see
the class docstring). Layout: :class:`DRMC` (this module) validates the
parameters and stores the fitted pieces; ``_drmc_solver.fit_drmc`` is the one
driver, over row blocks (the views in memory are one block): it runs the feedback
loop between the partition and the view weights; its passes over the blocks are in
``_drmc_blocks``; the view scaling, the kNN anchor graphs and the anchors are in
``_drmc_graphs``. The anchor spectral embedding, the spectral rotation and the
k-means anchors come from ``_common``.
"""

from __future__ import annotations

from numbers import Integral

from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from mvlearn_ext.cluster._base import (
    InductiveClusterer,
    labels_by_blocks,
    labels_like_input,
    open_blocks,
    open_fitted_blocks,
)
from mvlearn_ext.cluster._blockwise import RowBlocks
from mvlearn_ext.cluster._drmc_blocks import _predict_task
from mvlearn_ext.cluster._drmc_graphs import (
    _N_NEIGHBORS,
    _N_NEIGHBORS_SAMPLES,
    _SUBSAMPLE,
    _predict_rows,
)
from mvlearn_ext.cluster._drmc_solver import _scaled_indicator, fit_drmc
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT

__all__ = ["DRMC"]

#: Default number of anchors (``n_anchors=None``): one per this many samples, at most
#: ``_MAX_ANCHORS_PER_CLUSTER`` per cluster (chosen on the development suite: 400
#: anchors on Handwritten, 0.976 against 0.973 with ``ceil(sqrt(2 n k))``).
_SAMPLES_PER_ANCHOR = 5
_MAX_ANCHORS_PER_CLUSTER = 40


# --------------------------------------------------------------------------- estimator


class DRMC(InductiveClusterer):
    r"""Discretely refined multi-view clustering with aligned anchors.

    A reconstruction of DRMC ("Discretely-Refined Multi-view Clustering via
    Aligned Anchor Learning", ICML 2026) from the paper's abstract. The
    weighted views share one set of anchors; each sample is linked to its
    ``n_neighbors`` nearest anchors (Nie, Wang & Huang, 2014) in a consensus graph :math:`Z`,
    whose spectral embedding :math:`F` is turned into discrete labels by
    spectral rotation (Huang, Nie & Huang, 2013), without k-means:

    .. math::

        \min_{R^\top R = I,\; Y} \big\lVert F R - Y (Y^\top Y)^{-1/2} \big\rVert_F^2 .

    The partition is then fed back: every view is reweighted by the
    chance-corrected agreement of its own anchor graph with the partition
    (copies of a view share its weight, a noise view drops to about 0), the
    consensus graph is rebuilt, and the loop repeats until no label changes.
    The weight step maximises the partition's weighted agreement with the
    views; a round whose partition lowers that maximum is undone and ends the
    loop: the partition returned never agrees less with the views than the
    initial one.
    Where the abstract is silent the choices and defaults are this package's,
    so results may differ from the paper's; the
    :ref:`clustering user guide <clustering-maths>` derives them.

    Parameters
    ----------
    n_clusters : int, default=8
        The number of clusters ``k``.
    n_anchors : int or None, default=None
        The number of anchors ``m``, at least ``n_clusters``; capped at the
        number of samples. ``None`` uses one anchor per 5 samples,
        ``ceil(n / 5)``, at most ``40 k``: a sample is linked to 5 anchors, so
        an anchor gathers about 25 links, and the cap bounds the cost on large
        sets.
    view_weights : {"factor", "agreement", "uniform"}, default="factor"
        ``"factor"``: learned by the discrete feedback (see the user guide), from
        HAGMVC's label-free ``"factor"`` weights when there are three views or
        more (scored on at most 1000 random rows, 10 neighbours: a one-factor
        fit of the views' pairwise agreements tells a view that agrees with
        every other from a weak view that agrees with it alone; with two views
        the fit is not identified and the start is ``∝ sqrt(d_v)``);
        ``max_iter=0`` keeps the starting weights, as HAGMVC does.
        ``"agreement"``: learned by the same feedback from ``∝ sqrt(d_v)``; it
        misses an informative view among weak ones that the factor start finds,
        and is slightly better where every view is informative (digit sets).
        ``"uniform"``: fixed and equal (the per-view balanced concatenation, no
        feedback).
    n_neighbors : int or None, default=None
        Number of anchors each sample is linked to in every graph (at most
        ``n_anchors - 1``). ``None``: 5, or 10 when every sample is an anchor
        (``n_anchors >= n_samples``, or the small-sample graph below): the graph
        is then a kNN graph of the samples, for which 10 is the neighbourhood
        of the usual 10-NN spectral clustering, and 5 neighbours split small
        clusters.
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
        weights). The loop also ends when no label changes, when the weights
        settle, or when a round lowers the views' agreement (that round is
        undone).
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means anchors and the rotations. Converted once per
        ``fit``; every view's k-means gets the same seed.
    n_jobs : int or None, default=None
        Threads of the anchor graphs (by fixed tiles of rows), of the view
        scores (a view per thread) and of the compiled kNN kernel used by
        ``align_anchors=True``: ``None`` is 1 (or the ``n_jobs`` of an
        enclosing ``joblib.parallel_config``), ``-1`` every CPU, a positive
        count is capped at the CPUs available. On dask arrays the blocks run
        in parallel instead. The labels do not depend on it.
    verbose : int, default=0
        Print the weights and label changes of every round to stderr, with a
        progress bar over the row blocks of every pass (one block in memory).
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
        The weights ``w`` of the graph of ``labels_`` (sum to 1).
    view_agreement_ : ndarray of shape (n_views,) or None
        The agreement of every view's graph with the last partition it was
        computed for (``None`` without feedback).
    view_weights_history_ : list of ndarray
        The weights of every graph built, starting weights first (an undone
        round's included).
    n_iter_ : int
        Number of feedback rounds run (an undone round included).
    n_anchors_ : int
        Number of anchors used.
    n_neighbors_ : int
        Number of anchors each sample is linked to.
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

    :meth:`predict` links new samples to their ``n_neighbors_`` nearest anchors
    under the learned weights and takes the cluster of largest
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
    ((60, 300), (300, 3), 3)
    """

    _single_threaded = True
    #: Above this many samples the anchor k-means and the view scores run on that
    #: many random rows, so that their cost stops growing with ``n``.
    _subsample = _SUBSAMPLE
    #: Above this many samples the block path's spectral rotation runs on that many
    #: random rows and every sample is then labelled by the linearised rotation gain.
    _rotation_sample = 100_000

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_anchors": [Interval(Integral, 1, None, closed="left"), None],
        "view_weights": [StrOptions({"agreement", "factor", "uniform"})],
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
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
        view_weights="factor",
        n_neighbors=None,
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
        self.n_neighbors = n_neighbors
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
            m = min(_MAX_ANCHORS_PER_CLUSTER * k, -(-n_samples // _SAMPLES_PER_ANCHOR))
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

    def _fit_blocks(self, Xs):
        blocks = open_blocks(self, Xs)
        self._fit_driver(blocks, self._rotation_sample)
        self.labels_ = labels_like_input(self.labels_, Xs, blocks)
        # The block path keeps no n-sized fitted attribute.
        self.anchor_graph_ = self.embedding_ = self.indicator_ = None
        return self

    def _fit_views(self, Xs):
        # The views in memory are one block of the same driver, every row rotated.
        return self._fit_driver(RowBlocks(Xs, block_size=Xs[0].shape[0]), None)

    def _fit_driver(self, blocks, rotation_sample):
        """Run :func:`fit_drmc` on ``blocks`` and set the fitted attributes."""
        n_anchors = self._n_anchors(blocks.n_samples)
        n_neighbors = self.n_neighbors
        if n_neighbors is None:
            n_neighbors = _N_NEIGHBORS_SAMPLES if n_anchors == blocks.n_samples else _N_NEIGHBORS
        n_neighbors = max(1, min(n_neighbors, n_anchors - 1))
        fitted = fit_drmc(
            blocks,
            self.n_clusters,
            n_anchors=n_anchors,
            n_neighbors=n_neighbors,
            view_weights=self.view_weights,
            align_anchors=self.align_anchors,
            scaling=self.scaling,
            max_iter=self.max_iter,
            random_state=check_random_state(self.random_state),
            n_threads=self._n_threads,
            verbose=self.verbose,
            subsample=self._subsample,
            rotation_sample=rotation_sample,
        )
        k = self.n_clusters
        self.view_means_, self.view_scales_ = fitted["means"], fitted["scales"]
        self.n_anchors_ = n_anchors
        self.n_neighbors_ = n_neighbors
        self._factors = factors = fitted["factors"]
        self._anchors_scaled = fitted["anchors"]
        self._ratios = fitted["ratios"]
        self.anchors_ = []
        for v, A in enumerate(fitted["anchors"]):
            A = A / factors[v]
            if self.view_means_ is not None:
                A = A * self.view_scales_[v] + self.view_means_[v]
            self.anchors_.append(A)
        self.rotation_ = fitted["R"]
        self.view_weights_ = fitted["weights"]
        self.view_agreement_ = fitted["scores"]
        self.view_weights_history_ = fitted["weight_history"]
        self.n_iter_ = int(fitted["n_iter"])
        self.reference_view_ = fitted["reference"]
        self.anchor_memberships_ = fitted["memberships"]
        self.labels_ = fitted["labels"]
        self.initial_labels_ = fitted["initial_labels"]
        self.n_labels_changed_ = fitted["n_labels_changed"]
        self.anchor_graph_ = fitted.get("graph")
        self.embedding_ = fitted.get("F")
        self.indicator_ = None if "F" not in fitted else _scaled_indicator(self.labels_, k, True)
        return self

    def _predict_blocks(self, Xs):
        blocks = open_fitted_blocks(self, Xs)
        params = dict(
            means=self.view_means_, scales=self.view_scales_, factors=self._factors,
            anchors=self._anchors_scaled, ratios=self._ratios,
            memberships=self.anchor_memberships_, n_neighbors=self.n_neighbors_,
        )  # fmt: skip
        return labels_by_blocks(self, Xs, blocks, _predict_task, params, "DRMC")

    def _predict_views(self, Xs):
        return _predict_rows(
            Xs, self.view_means_, self.view_scales_, self._factors, self._anchors_scaled,
            self._ratios, self.anchor_memberships_, self.n_neighbors_,
        )  # fmt: skip
