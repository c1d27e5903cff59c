"""EOMSC-CA: efficient one-pass multi-view subspace clustering (Liu et al., AAAI 2022).

The estimator; its driver (in-memory views are one row block) is in
:mod:`._eomsc_blocks`, its steps in :mod:`._eomsc_solver`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from mvlearn_ext.cluster._base import (
    BaseClusterer,
    check_anchors_cover_clusters,
    draw_seeds,
    labels_like_input,
    open_blocks,
    set_projected_anchor_fit,
)
from mvlearn_ext.cluster._blockwise import RowBlocks
from mvlearn_ext.cluster._eomsc_blocks import COLUMN_CANDIDATES, fit_eomscca

__all__ = ["EOMSCCA"]


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

    This is the algorithm of the authors' code (Tracesource/EOMSC-CA, the
    version with an open ``algo_qp.m``), step for step:

    * every feature z-scored with its sample standard deviation
      (``mapstd``), ``Z`` started on the first ``m`` samples
      (``init="first"``; order-dependent), ``W_v = I_{d_v x d}`` at first;
    * ``W_v`` and ``A`` by Procrustes, as in FPMVS-CAG;
    * the graph step (the code's ``coclustering_bipartite_fast1``), from ``B =
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
    ``lambda`` search stopped at ``max_iter_inner``), the authors' code
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
    reg_init : float in (0, 1e6], default=0.1
        Starting ``lambda`` of the adaptive Ky Fan weight (the code's 0.1).
        Bounded because the search halves ``lambda`` once per pass, so from a
        much larger start it cannot settle within ``max_iter_inner`` passes
        (and beyond about 1e16 the graph step loses all precision).
    init : {"first", "kmeans"}, default="first"
        Starting graph: the first ``m`` samples as anchors (the authors'
        code; order-dependent), or each sample on its cluster among ``m``
        k-means clusters of the joined views (seeded by ``random_state``).
    scaling : {"zscore"} or None, default="zscore"
        ``"zscore"``: centre every feature and divide it by its sample standard deviation
        (``ddof=1``), as the authors' code does (``mapstd``).
    max_iter : int, default=50
        Maximum outer iterations.
    max_iter_inner : int, default=50
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
        Rows per block of the out-of-core path (views in memory are one block
        of the same algorithm). It runs for views given as dask arrays (their
        row chunks are the blocks), zarr arrays or NumPy memmaps (cut every
        ``block_size`` rows, 65536 if None), and for NumPy views when
        ``block_size`` is an int. Only ``init="first"``. The graph step runs
        by blocks as well: each anchor's column projection gets its threshold
        from the blocks' largest values (exactly the in-memory threshold), and
        the components come from which anchors share a sample, so the graph is
        never held; the calling process keeps ``n x (n_clusters + 1)`` floats
        of the spectral state. On a ``dask.distributed`` cluster that state,
        the linear term ``B`` (``n x n_anchors``) and the last graph rows stay
        on the workers instead; with the local dask scheduler ``B`` is kept in
        this process for an outer iteration; on NumPy views with
        ``block_size``, every pass of the ``lambda`` search recomputes it from
        the views. With the same blocks the labels are the same in memory, on
        disk and on a ``dask.distributed`` cluster; ``anchor_graph_`` is then
        None, and for dask views ``labels_`` is a dask array.

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

    #: Largest values per anchor column each block sends for the column thresholds of
    #: the block path (a new pass asks for more where they do not settle a threshold);
    #: the result does not depend on it.
    _column_candidates = COLUMN_CANDIDATES

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_anchors": [Interval(Integral, 1, None, closed="left"), None],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "reg_init": [Interval(Real, 0, 1e6, closed="right")],
        "init": [StrOptions({"first", "kmeans"})],
        "scaling": [StrOptions({"zscore"}), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_iter_inner": [Interval(Integral, 1, None, closed="left")],
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
        scaling="zscore",
        max_iter=50,
        max_iter_inner=50,
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
        self.scaling = scaling
        self.max_iter = max_iter
        self.max_iter_inner = max_iter_inner
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose
        self.block_size = block_size

    def _model_size(self, n_samples):
        """``(n_anchors, n_components)`` for ``n_samples``; raises if anchors < clusters."""
        k = self.n_clusters
        m = min(k if self.n_anchors is None else self.n_anchors, n_samples)
        check_anchors_cover_clusters(m, k, self.n_anchors)
        return m, k if self.n_components is None else self.n_components

    def _fit_views(self, Xs):
        # Views in memory are one block: the driver keeps B and the graph between passes.
        return self._fit_rows(RowBlocks(Xs, Xs[0].shape[0]), Xs, in_memory=True)

    def _fit_blocks(self, Xs):
        if self.init != "first":
            raise ValueError(
                f"init={self.init!r} is not available on the block path of EOMSCCA: it runs "
                "a k-means of all samples at once; use init='first' (the authors' start)"
            )
        return self._fit_rows(open_blocks(self, Xs, min_views=2, name="EOMSCCA"), Xs)

    def _fit_rows(self, blocks, Xs, *, in_memory=False):
        m, d = self._model_size(blocks.n_samples)
        _, (init_seed, kmeans_seed) = draw_seeds(self.random_state, 2)
        fitted = fit_eomscca(
            blocks, self.n_clusters, n_anchors=m, n_components=d, reg_init=self.reg_init,
            init=self.init, scaling=self.scaling, max_iter=self.max_iter,
            max_iter_inner=self.max_iter_inner, tol=self.tol, init_seed=init_seed,
            kmeans_seed=kmeans_seed, keep_graph=in_memory,
            column_candidates=self._column_candidates, log=self._log,
            progress=bool(self.verbose) and not in_memory,
        )  # fmt: skip
        set_projected_anchor_fit(self, fitted, m, d)
        self.n_inner_iter_ = np.asarray(fitted.inner, dtype=np.intp)
        self.graph_reg_ = fitted.reg
        self.n_graph_components_ = fitted.n_found
        self.labels_ = fitted.labels if in_memory else labels_like_input(fitted.labels, Xs, blocks)
        return self
