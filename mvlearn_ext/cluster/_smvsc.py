"""SMVSC (Sun et al., ACM MM 2021) and FPMVS-CAG (Wang et al., IEEE TIP 2022).

Two solvers share the model ``sum_v alpha_v^2 ||X_v - W_v A Z||_F^2 +
lambda ||Z||_F^2``:

* ``variant="code"`` (the default) is the algorithm of the authors' public
  MATLAB code, step for step: features z-scored with the sample standard
  deviation (``mapstd``), ``Z`` started on the first ``m`` samples, the Z
  step in closed form without ``alpha_v^2`` in its linear term, each
  code's view-weight formula and stopping rule. On Handwritten it gives the
  authors' graphs to rounding (see ``tests/cluster/test_smvsc.py``).
* ``variant="paper"`` minimises the stated objective monotonically
  (``alpha_v^2`` in both terms of the Z step, an exact simplex QP when the
  closed form does not apply, GPI steps for narrow views).
"""

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
    set_projected_anchor_fit,
)
from mvlearn_ext.cluster._blockwise import RowBlocks
from mvlearn_ext.cluster._smvsc_solver import (
    fit_smvsc,
    smvsc_embedding,
    smvsc_label_task,
    warn_degenerate_graph,
)
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT, single_threaded_pools

__all__ = ["FPMVSCAG", "SMVSC"]

#: Rows of the random sample on which the block path fits the final k-means.
_KMEANS_SAMPLE = 100_000


class SMVSC(EmbeddingClusterer):
    """Scalable multi-view subspace clustering with unified anchors (SMVSC).

    One anchor graph ``Z`` (m x n) is learned from all views at once, on
    ``m`` anchors ``A`` shared in a ``d``-dimensional latent space and
    mapped to each view by an orthonormal ``W_v`` (Sun et al., 2021):

        ``min sum_v alpha_v^2 ||X_v - W_v A Z||_F^2 + lambda ||Z||_F^2``

    subject to ``W_v^T W_v = I``, ``A^T A = I``, ``Z >= 0``,
    ``Z^T 1 = 1`` and ``alpha`` on the simplex (samples as columns of
    ``X_v``, ``d_v x n``). The blocks are updated in turn (``W_v``, ``A``,
    ``Z``, ``alpha``); then the ``m`` left singular vectors of ``Z^T`` are
    row-normalised and clustered by k-means, as in the authors' code. Cost
    per iteration O(n m sum_v d_v + n m log m); memory O(n (m + d_v))
    besides the data: no n x n matrix is formed.

    **variant="code"** (default) runs the algorithm of the authors' public
    code (Jeaninezpp/SMVSC, ``algo_qp.m``), step for step:

    * every feature is z-scored with its sample standard deviation
      (``mapstd``; ``scaling="zscore"``);
    * ``Z`` starts as ``[I_m, 0]``: the first ``m`` samples are the
      anchors (``init="first"``), so the result depends on the order of
      the samples; ``W_v`` starts as ``I_{d_v x d}``;
    * ``W_v`` and ``A`` are polar factors (Procrustes) of
      ``X_v Z^T A^T`` and ``sum_v alpha_v^2 W_v^T X_v Z^T``;
    * the Z step is ``z_i = Pi(sum_v (W_v A)^T x_i / (sum_v alpha_v^2 +
      lambda))``: the QP that the code hands to ``quadprog``, with the
      Hessian ``2 (sum_v alpha_v^2 + lambda) I`` and a linear term
      **without** ``alpha_v^2``. It is not the Z step of the stated
      objective: the linear term lacks the weights, and the Hessian is a
      multiple of ``I`` only if every ``W_v A`` has orthonormal columns,
      which fails when ``m > d`` (``A`` then has orthonormal rows) or for a
      view narrower than ``d`` (such as Handwritten's 6 morphological
      features with ``d = 10``; its ``W_v`` has orthonormal rows);
    * ``alpha_v`` proportional to ``1 / ||X_v - W_v A Z||_F^2``;
    * the objective is recorded after the ``alpha`` step; the iterations
      stop after iteration 10 or later once its relative change is below
      ``tol``, or after ``max_iter`` iterations (the code allows a 51st).

    Leaving ``alpha_v^2`` out of the linear term is what keeps the
    6-feature view, whose weight is the largest, from dominating the graph:
    with the weights in both terms, the authors' code drops on Handwritten
    from ACC 0.823 to 0.548 (FPMVS-CAG). The objective is not monotone.

    **variant="paper"** minimises the stated objective, every block update
    being exact or a majorise-minimise step, so that ``objective_`` never
    increases: ``alpha_v^2`` in both terms of the Z step, solved exactly
    (closed form when the Hessian ``sum_v alpha_v^2 A^T W_v^T W_v A +
    lambda I`` is ``c I``, accelerated projected gradient otherwise);
    ``A`` and, for narrow views, ``W_v`` by generalised power iterations on
    the set of matrices with orthonormal rows when ``m > d`` or ``d_v <
    d``; ``alpha_v`` proportional to ``1 / ||R_v||^2``; stop at a relative
    decrease below ``tol``; a last Z step with the final weights.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters ``k``.
    n_anchors : int or None, default=None
        Number of anchors ``m``; ``None`` means ``n_clusters`` (the
        authors' grid is ``{k, 2k, 3k}``). Capped at ``n_samples``.
    n_components : int or None, default=None
        Dimension ``d`` of the latent anchor space; ``None`` means
        ``n_clusters`` (the authors' setting).
    reg_lambda : float in [0, 1e6], default=1.0
        ``lambda``, the weight of ``||Z||_F^2`` (the demo's value); 0 gives
        FPMVS-CAG's model (see :class:`FPMVSCAG`). Not named ``lambda_``:
        a trailing underscore marks fitted attributes in scikit-learn, and
        ``check_is_fitted`` would take any instance for fitted. Bounded
        because far above the scaled views' squared norms the penalty leaves
        every sample's weights equal up to rounding (with ``scaling=None`` it
        is in the squared units of the data).
    variant : {"code", "paper"}, default="code"
        The authors' algorithm or the monotone solver of the stated
        objective (see above).
    init : {"first", "kmeans"}, default="first"
        Starting graph: the first ``m`` samples as anchors (the authors'
        codes; order-dependent), or each sample on its cluster among ``m``
        k-means clusters of the joined views (seeded by ``random_state``;
        equivariant to permutations of the samples).
    n_singular_vectors : int or None, default=None
        Left singular vectors of ``Z^T`` kept for the final k-means
        (capped at ``m``). ``None`` keeps all ``m``, as the reference code
        does; after row normalisation, the directions of tiny singular
        values then weigh as much as the leading ones, which can split
        clean clusters when ``m > k`` (``n_clusters`` is the usual
        alternative).
    scaling : {"zscore"} or None, default="zscore"
        ``"zscore"``: centre every feature and divide it by its sample standard deviation
        (``ddof=1``), as the authors' code does (``mapstd``), with the
        training statistics reused by :meth:`predict`.
    n_init : int, default=10
        Restarts of the final k-means on the embedding (the authors'
        evaluation script instead reports the best of 50 single runs).
    max_iter : int, default=50
        Maximum outer iterations.
    tol : float, default=1e-3
        Relative change of the objective below which the iterations stop.
    random_state : int, RandomState instance or None, default=None
        Seeds the final k-means (and the initial one with
        ``init="kmeans"``); converted once per ``fit``.
    n_jobs : int or None, default=None
        Threads of the compiled simplex projection: ``None`` is 1 (or the
        ``n_jobs`` of an enclosing ``joblib.parallel_config``), ``-1`` every
        CPU, a positive count is capped at the CPUs available. The result does
        not depend on it: BLAS and OpenMP run on one thread inside :meth:`fit`
        and :meth:`predict`.
    verbose : int, default=0
        Print the objective at every iteration to standard error (and a
        progress bar over the row blocks on the block path).
    block_size : int or None, default=None
        Rows per block of the out-of-core path: one pass over row blocks per
        iteration, never more than one block of samples in memory (views in
        memory are one block of the same algorithm, with every row). It runs
        for views given as dask arrays (their row chunks are the blocks; every
        view must have the same row chunks), zarr arrays or NumPy memmaps (cut
        every ``block_size`` rows, 65536 if None), and on NumPy views when
        ``block_size`` is an int. Only ``init="first"``; ``variant="paper"``
        keeps the ``n x m`` graph in this process (its QPs are warm-started
        from it). The final k-means is fitted on at most 100000 random rows
        (see the user guide). With the same blocks and seed it gives the same
        labels in memory, on disk and on a ``dask.distributed`` cluster.
        ``anchor_graph_`` and ``embedding_`` are then None; for dask views,
        ``labels_`` and :meth:`predict` return dask arrays.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The cluster of each training sample.
    anchors_ : list of ndarray of shape (n_anchors_, n_features_v)
        The anchors in each view's (standardised) feature space, the rows
        of ``(W_v A)^T``.
    consensus_anchors_ : ndarray of shape (n_components_, n_anchors_)
        ``A``, the shared latent anchors.
    projections_ : list of ndarray of shape (n_features_v, n_components_)
        ``W_v``.
    anchor_graph_ : ndarray of shape (n_anchors_, n_samples)
        ``Z``; every column is on the simplex.
    embedding_ : ndarray of shape (n_samples, n_singular_vectors)
        The row-normalised left singular vectors of ``Z^T`` (all
        ``n_anchors_`` by default).
    singular_values_ : ndarray of shape (n_singular_vectors,)
        The corresponding singular values of ``Z``.
    view_weights_ : ndarray of shape (n_views,)
        ``alpha`` after the last iteration.
    objective_ : ndarray
        The objective after each outer iteration (``n_iter_`` values); the
        paper variant appends the value after its final Z step and is
        non-increasing.
    n_iter_ : int
        Outer iterations run.
    n_anchors_, n_components_ : int
        The ``m`` and ``d`` used.
    kmeans_ : sklearn.cluster.KMeans
        The k-means fitted on ``embedding_``.
    view_means_, view_scales_ : list of ndarray or None
        Standardisation statistics of each view.
    n_views_ : int
        Number of views seen at ``fit``.
    n_features_per_view_ : tuple of int
        Number of features of each view seen at ``fit``.

    See Also
    --------
    FPMVSCAG : The parameter-free special case ``lambda = 0``, ``m = d = k``.
    LMVSC : One graph per view on per-view k-means anchors.
    EOMSCCA : FPMVS-CAG's model with a connectivity constraint; labels from
        the graph.

    Notes
    -----
    On Handwritten (the six views in the order of
    :func:`~mvlearn_ext.datasets.load_handwritten`, unshuffled) with
    ``n_clusters=10`` and the defaults, the learned graph equals the one of
    the authors' code run under GNU Octave to rounding (objective history
    to 1e-13 relative, principal angles between the embeddings below 1e-5
    degrees). ``labels_`` then score ACC 0.8205, NMI 0.789 for every seed;
    the authors' evaluation of their embedding gives 0.821 / 0.789 (best of
    50 single k-means runs) and ACC 0.810 +- 0.027 (k-means with 10
    random-start restarts, over seeds). When some anchors end unused (there
    with ``m = 2k`` and ``3k``), ``Z`` is rank deficient and the authors'
    embedding also holds an arbitrary basis of the null space of ``Z^T``
    (whatever LAPACK returns); ours sets those directions to zero.

    **An anchor left empty.** With ``init="first"`` the start is the first
    ``m`` samples; if they miss some clusters, an anchor can lose all its
    samples in a Z step, and then gets no pull back from the data (its column
    of ``X_v Z^T`` is zero). When the fitted graph separates fewer than
    ``n_clusters`` groups, ``fit`` emits a ``ConvergenceWarning`` that names
    the empty anchors and the advice (more anchors, ``init="kmeans"``, or
    shuffled samples), and ``labels_`` then merge clusters, as the authors'
    code would: on 10 blobs whose first 10 samples hold 7 of them, ``m = k``
    ends so (one anchor empty, two blobs merged) while ``m = 2k`` and ``3k``
    separate every blob.

    :meth:`predict` codes each new sample on the learned anchors by the Z
    step of the variant with the fitted ``W_v``, ``A`` and the weights of
    the last Z step, maps its code ``z`` to the embedding by the
    out-of-sample extension of the singular vectors (``z^T V Sigma^{-1}``,
    exact on the training samples), normalises the row and assigns the
    nearest k-means centre.

    References
    ----------
    M. Sun, P. Zhang, S. Wang, S. Zhou, W. Tu, X. Liu, E. Zhu and C. Wang,
    "Scalable multi-view subspace clustering with unified anchors", in
    Proc. ACM International Conference on Multimedia, 2021, pp. 3528-3536.

    F. Nie, R. Zhang and X. Li, "A generalized power iteration method for
    solving quadratic problem on the Stiefel manifold", Science China
    Information Sciences 60, 2017.

    Examples
    --------
    >>> from mvlearn_ext.cluster import SMVSC
    >>> from mvlearn_ext.datasets import make_multiview_blobs
    >>> from mvlearn_ext.metrics import clustering_accuracy
    >>> Xs, y = make_multiview_blobs(120, n_views=2, n_features=[4, 3], random_state=0)
    >>> model = SMVSC(n_clusters=3, n_anchors=6, random_state=0).fit(Xs)
    >>> model.anchor_graph_.shape, model.consensus_anchors_.shape
    ((6, 120), (3, 6))
    >>> float(clustering_accuracy(y, model.labels_))
    1.0
    """

    _min_views = 2

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_anchors": [Interval(Integral, 1, None, closed="left"), None],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "reg_lambda": [Interval(Real, 0, 1e6, closed="both")],
        "variant": [StrOptions({"code", "paper"})],
        "init": [StrOptions({"first", "kmeans"})],
        "n_singular_vectors": [Interval(Integral, 1, None, closed="left"), None],
        "scaling": [StrOptions({"zscore"}), None],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS_CONSTRAINT,
        "verbose": ["verbose"],
        "block_size": [Interval(Integral, 1, None, closed="left"), None],
    }

    #: The authors' code: ``alpha_v ~ ||R_v||^-2`` and at least 10 iterations.
    _code_weight_power = 2
    _code_min_iter = 10

    def __init__(
        self,
        n_clusters=8,
        *,
        n_anchors=None,
        n_components=None,
        reg_lambda=1.0,
        variant="code",
        init="first",
        n_singular_vectors=None,
        scaling="zscore",
        n_init=10,
        max_iter=50,
        tol=1e-3,
        random_state=None,
        n_jobs=None,
        verbose=0,
        block_size=None,
    ):
        self.n_clusters = n_clusters
        self.n_anchors = n_anchors
        self.n_components = n_components
        self.reg_lambda = reg_lambda
        self.variant = variant
        self.init = init
        self.n_singular_vectors = n_singular_vectors
        self.scaling = scaling
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.block_size = block_size

    def _embedding_size(self, m):
        """Left singular vectors kept for the final k-means."""
        return m if self.n_singular_vectors is None else min(self.n_singular_vectors, m)

    def _model_settings(self):
        """``(n_anchors, n_components, lambda)`` before capping at ``n_samples``."""
        k = self.n_clusters
        m = k if self.n_anchors is None else self.n_anchors
        d = k if self.n_components is None else self.n_components
        return m, d, float(self.reg_lambda)

    def _fit_views(self, Xs):
        # Views in memory are one block: the driver keeps the graph and the embedding.
        return self._fit_rows(RowBlocks(Xs, Xs[0].shape[0]), Xs, in_memory=True)

    def _fit_blocks(self, Xs):
        name = type(self).__name__
        if self.init != "first":
            raise ValueError(
                f"init={self.init!r} is not available on the block path of {name}: it runs "
                "a k-means of all samples at once; use init='first' (the authors' start)"
            )
        return self._fit_rows(open_blocks(self, Xs, min_views=2, name=name), Xs)

    def _warn_degenerate(self, n_distinct, anchor_mass):
        warn_degenerate_graph(
            type(self).__name__, self.n_clusters, self.init, n_distinct, anchor_mass,
            free_anchors="n_anchors" in self.get_params(),
        )  # fmt: skip

    def _fit_rows(self, blocks, Xs, *, in_memory=False):
        _, (init_seed, kmeans_seed) = draw_seeds(self.random_state, 2)
        m, d, lam = self._model_settings()
        m = min(m, blocks.n_samples)
        fitted = fit_smvsc(
            blocks, self.n_clusters, variant=self.variant, init=self.init, n_anchors=m,
            n_components=d, reg_lambda=lam, n_embedding=self._embedding_size(m),
            scaling=self.scaling, n_init=self.n_init, max_iter=self.max_iter, tol=self.tol,
            weight_power=self._code_weight_power, min_iter=self._code_min_iter,
            init_seed=init_seed, kmeans_seed=kmeans_seed, n_threads=self._n_threads,
            keep_graph=in_memory, kmeans_sample=None if in_memory else _KMEANS_SAMPLE,
            warn_degenerate=self._warn_degenerate, log=self._log,
            progress=bool(self.verbose) and not in_memory, name=type(self).__name__,
        )  # fmt: skip
        set_projected_anchor_fit(self, fitted, m, d)
        self.singular_values_ = fitted.singular_values
        self._projection = fitted.projection
        self._z_step_weights = fitted.z_alpha
        self.kmeans_ = fitted.kmeans
        self.labels_ = fitted.labels if in_memory else labels_like_input(fitted.labels, Xs, blocks)
        return self

    def _model(self, n_threads):
        """The fitted model as the parameters of the driver's block tasks."""
        lam = self._model_settings()[2]
        alpha = self._z_step_weights
        return dict(
            means=self.view_means_, scales=self.view_scales_, variant=self.variant, lam=lam,
            W=self.projections_, A=self.consensus_anchors_, alpha=alpha,
            scale=float(np.sum(alpha**2)) + lam, n_threads=n_threads,
            projection=self._projection,
        )  # fmt: skip

    def _transform_views(self, Xs):
        return smvsc_embedding(RowBlocks(Xs, Xs[0].shape[0]), self._model(self._n_threads))

    def _predict_views(self, Xs):
        F = self._transform_views(Xs)
        with single_threaded_pools():
            return self.kmeans_.predict(F).astype(np.intp, copy=False)

    def _predict_blocks(self, Xs):
        blocks = open_fitted_blocks(self, Xs)
        params = dict(self._model(1 if blocks.uses_dask else self._n_threads), kmeans=self.kmeans_)
        return labels_by_blocks(self, Xs, blocks, smvsc_label_task, params, type(self).__name__)


class FPMVSCAG(SMVSC):
    """Fast parameter-free multi-view subspace clustering (FPMVS-CAG).

    The SMVSC model without the regulariser and with as many anchors and
    latent dimensions as clusters, ``lambda = 0`` and ``m = d = k`` (Wang
    et al., 2022). ``A`` is then a ``k x k`` orthogonal matrix.

    **variant="code"** (default) runs the algorithm of the authors' code
    (the open ``algo_qp.m`` of Qinghai-Zheng/FPMVS-CAG; the official
    wangsiwei2010/FPMVS-CAG ships its solver as P-code only): everything as
    in :class:`SMVSC`'s code variant, except that ``alpha_v`` is
    proportional to ``1 / ||X_v - W_v A Z||_F`` (the unsquared norm, which
    does not minimise the squared-weight objective) and that exactly 20
    iterations run (``max_iter=20``, ``tol=0``; the code's tolerance rule
    is commented out). The Z step has no ``alpha_v^2`` in its linear term;
    with it, the authors' code drops on Handwritten from ACC 0.823 to 0.548,
    because the 6-feature view gets the largest weight (0.46) and then
    dominates the graph. **variant="paper"** is :class:`SMVSC`'s monotone
    solver with ``lambda = 0``.

    On Handwritten (unshuffled, six views) with ``n_clusters=10`` and the
    defaults, the graph equals the authors' (principal angles between the
    embeddings below 1e-5 degrees) and every k-means run gives ACC 0.8235,
    NMI 0.7931, as the authors' code does.

    With ``m = k`` fixed, the authors' start on the first ``k`` samples can
    leave an anchor empty when those samples miss some clusters; ``fit`` then
    warns and the labels merge clusters (see "An anchor left empty" in
    :class:`SMVSC`).

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters ``k``, also the number of anchors and the latent
        dimension (each capped at ``n_samples``).
    variant : {"code", "paper"}, default="code"
        The authors' algorithm or the monotone solver (see :class:`SMVSC`).
    init : {"first", "kmeans"}, default="first"
        Starting graph (see :class:`SMVSC`).
    scaling : {"zscore"} or None, default="zscore"
        ``"zscore"``: centre every feature and divide it by its sample standard deviation.
    n_init : int, default=10
        Restarts of the final k-means.
    max_iter : int, default=20
        Maximum outer iterations (the authors' code runs exactly 20).
    tol : float, default=0.0
        Relative change of the objective below which the iterations stop
        (0: run ``max_iter`` iterations, as the code does).
    random_state : int, RandomState instance or None, default=None
        Seeds the final k-means (and the initial one with ``init="kmeans"``).
    n_jobs : int or None, default=None
        Threads of the compiled simplex projection (as in :class:`SMVSC`); the
        result does not depend on it.
    verbose : int, default=0
        Print the objective at every iteration to standard error (and a
        progress bar over the row blocks on the block path).
    block_size : int or None, default=None
        The block algorithm for views larger than memory (dask, zarr, memmaps,
        or NumPy views with an int ``block_size``), as in :class:`SMVSC`.

    Attributes
    ----------
    labels_, anchors_, consensus_anchors_, projections_, anchor_graph_, \
embedding_, singular_values_, view_weights_, objective_, n_iter_, n_anchors_, \
n_components_, kmeans_, view_means_, view_scales_, n_views_, n_features_per_view_
        As in :class:`SMVSC`.

    See Also
    --------
    SMVSC : The model with ``lambda``, ``m`` and ``d`` free.
    EOMSCCA : This model with a connectivity constraint on the graph.

    References
    ----------
    S. Wang, X. Liu, X. Zhu, P. Zhang, Y. Zhang, F. Gao and E. Zhu, "Fast
    parameter-free multi-view subspace clustering with consensus anchor
    guidance", IEEE Transactions on Image Processing 31, 2022.

    Examples
    --------
    >>> from mvlearn_ext.cluster import FPMVSCAG
    >>> from mvlearn_ext.datasets import make_multiview_blobs
    >>> from mvlearn_ext.metrics import clustering_accuracy
    >>> Xs, y = make_multiview_blobs(120, n_views=2, n_features=[4, 3], random_state=0)
    >>> model = FPMVSCAG(n_clusters=3, random_state=0).fit(Xs)
    >>> model.anchor_graph_.shape
    (3, 120)
    >>> float(clustering_accuracy(y, model.labels_))
    1.0
    """

    _parameter_constraints: dict = {
        key: value
        for key, value in SMVSC._parameter_constraints.items()
        if key not in ("n_anchors", "n_components", "reg_lambda", "n_singular_vectors")
    }

    #: The authors' code: ``alpha_v ~ ||R_v||^-1``; the iteration count is fixed.
    _code_weight_power = 1
    _code_min_iter = 1

    def __init__(
        self,
        n_clusters=8,
        *,
        variant="code",
        init="first",
        scaling="zscore",
        n_init=10,
        max_iter=20,
        tol=0.0,
        random_state=None,
        n_jobs=None,
        verbose=0,
        block_size=None,
    ):
        self.n_clusters = n_clusters
        self.variant = variant
        self.init = init
        self.scaling = scaling
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.block_size = block_size

    def _model_settings(self):
        return self.n_clusters, self.n_clusters, 0.0

    def _embedding_size(self, m):
        return m
