"""SMVSC (Sun et al., ACM MM 2021) and FPMVS-CAG (Wang et al., IEEE TIP 2022)."""

from __future__ import annotations

import sys
import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from mvlearn_ext.base import MultiViewClusterMixin
from mvlearn_ext.cluster._common import (
    anchor_spectral_embedding,
    generalized_power_iteration,
    simplex_qp,
    squared_view_weights,
)
from mvlearn_ext.cluster._preprocessing import apply_view_scaling, fit_view_scaling
from mvlearn_ext.utils import project_simplex

__all__ = ["FPMVSCAG", "SMVSC"]

#: Settings of the inner solvers (exact to rounding on the problems met here).
_QP_MAX_ITER = 300
_QP_TOL = 1e-9
_GPI_MAX_ITER = 30


# --------------------------------------------------------------------------- driver


def _is_multiple_of_identity(M, rtol=1e-10):
    """Whether the square ``M`` equals ``c I`` to rounding; returns ``(flag, c)``."""
    c = float(np.trace(M)) / M.shape[0]
    off = M - c * np.eye(M.shape[0])
    return bool(np.abs(off).max() <= rtol * max(abs(c), 1e-300)), c


class _State:
    """The blocks of the SMVSC model and the per-view statistics they need.

    ``views`` are ``(n, d_v)`` (samples as rows); ``W[v]`` is ``(d_v, d)``,
    ``A`` is ``(d, m)``, ``Z`` is ``(m, n)``, ``alpha`` is ``(V,)``.
    """

    def __init__(self, views, W, A, Z, alpha, lam):
        self.views = views
        self.norms2 = [float(np.sum(X * X)) for X in views]
        self.W, self.A, self.Z, self.alpha, self.lam = W, A, Z, alpha, lam
        self.refresh_graph()

    def refresh_graph(self):
        """Recompute the products with ``Z``: ``Z Z^T`` and ``X_v^T Z^T``."""
        self.ZZt = self.Z @ self.Z.T
        self.XZt = [(self.Z @ X).T for X in self.views]  # d_v x m

    def view_losses(self):
        """``||X_v - W_v A Z||^2`` for every view, without forming the residual."""
        AZZtAt = self.A @ self.ZZt @ self.A.T
        losses = []
        for W, XZt, norm2 in zip(self.W, self.XZt, self.norms2, strict=True):
            cross = float(np.sum(W * (XZt @ self.A.T)))
            quad = float(np.sum((W.T @ W) * AZZtAt))
            losses.append(max(norm2 - 2.0 * cross + quad, 0.0))
        return np.asarray(losses)

    def objective(self, losses=None):
        """``sum_v alpha_v^2 ||X_v - W_v A Z||^2 + lambda ||Z||^2``."""
        losses = self.view_losses() if losses is None else losses
        return float(np.sum(self.alpha**2 * losses) + self.lam * np.trace(self.ZZt))

    # -- block updates, each the exact minimiser or a monotone GPI step ------------------

    def update_W(self):
        AZZtAt = self.A @ self.ZZt @ self.A.T
        self.W = [
            generalized_power_iteration(XZt @ self.A.T, W, P=AZZtAt, max_iter=_GPI_MAX_ITER)
            for W, XZt in zip(self.W, self.XZt, strict=True)
        ]

    def update_A(self):
        a2 = self.alpha**2
        C = sum(w * (W.T @ XZt) for w, W, XZt in zip(a2, self.W, self.XZt, strict=True))
        Q = sum(w * (W.T @ W) for w, W in zip(a2, self.W, strict=True))
        identity, c = _is_multiple_of_identity(Q)
        if identity:
            self.A = generalized_power_iteration(C / c, self.A, P=self.ZZt, max_iter=_GPI_MAX_ITER)
        else:
            self.A = generalized_power_iteration(
                C, self.A, Q=Q, P=self.ZZt, max_iter=_GPI_MAX_ITER
            )

    def update_Z(self, n_threads):
        H, B = z_problem(self.views, self.W, self.A, self.alpha, self.lam)
        self.Z = solve_z(H, B, Z0=self.Z, n_threads=n_threads)
        self.refresh_graph()

    def update_alpha(self):
        losses = self.view_losses()
        self.alpha = squared_view_weights(losses)
        return losses


def z_problem(views, W, A, alpha, lam):
    """The Hessian ``H`` (m x m) and linear terms ``B`` (m x n) of the Z step.

    The Z step minimises ``sum_v alpha_v^2 ||X_v - W_v A Z||^2 + lambda ||Z||^2``
    column by column: ``1/2 z^T H z - b_i^T z`` with
    ``H = sum_v alpha_v^2 (W_v A)^T (W_v A) + lambda I`` and
    ``b_i = sum_v alpha_v^2 (W_v A)^T x_i`` (``alpha_v^2`` in both terms).
    """
    a2 = alpha**2
    WA = [Wv @ A for Wv in W]
    H = sum(w * (P.T @ P) for w, P in zip(a2, WA, strict=True))
    H = H + lam * np.eye(A.shape[1])
    B = sum(w * (X @ P) for w, X, P in zip(a2, views, WA, strict=True)).T
    return H, np.ascontiguousarray(B)


def solve_z(H, B, *, Z0=None, n_threads=None):
    """The exact Z step: closed form when ``H = c I``, accelerated QP otherwise."""
    identity, c = _is_multiple_of_identity(H)
    if identity and c > 0:
        return project_simplex(B / c, axis=0, n_threads=n_threads)
    Z, _ = simplex_qp(H, B, Z0=Z0, max_iter=_QP_MAX_ITER, tol=_QP_TOL, n_threads=n_threads)
    return Z


def _initial_graph(views, m, seed):
    """One-hot graph of the samples on ``m`` k-means clusters of the joined views."""
    n = views[0].shape[0]
    labels = KMeans(n_clusters=m, n_init=1, random_state=seed).fit_predict(np.hstack(views))
    Z = np.zeros((m, n))
    Z[labels, np.arange(n)] = 1.0
    return Z


def _semi_orthogonal(p, q):
    """The ``(p, q)`` matrix with ones on the diagonal: orthonormal columns or rows."""
    return np.eye(p, q)


def smvsc_fit(
    views, *, n_anchors, n_components, lam, max_iter, tol, seed, n_threads, log, callback=None
):
    """Alternating minimisation of the SMVSC objective (driver; valid input assumed).

    Returns the final :class:`_State`, the objective after every outer
    iteration, and the number of iterations. ``callback(iteration, block,
    objective)`` is called after every block update when given (tests use it
    to check that each block decreases the objective).
    """
    d, m = n_components, n_anchors
    n_views = len(views)
    Z0 = _initial_graph(views, m, seed)
    W0 = [_semi_orthogonal(X.shape[1], d) for X in views]
    state = _State(views, W0, _semi_orthogonal(d, m), Z0, np.full(n_views, 1.0 / n_views), lam)
    history = []
    start = time.perf_counter()
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        for block, update in (
            ("W", state.update_W),
            ("A", state.update_A),
            ("Z", lambda: state.update_Z(n_threads)),
            ("alpha", state.update_alpha),
        ):
            update()
            if callback is not None:
                callback(n_iter, block, state.objective())
        history.append(state.objective())
        log(
            f"iteration {n_iter}: objective {history[-1]:.8g} "
            f"({time.perf_counter() - start:.2f} s)"
        )
        if len(history) > 1:
            change = abs(history[-2] - history[-1]) / max(abs(history[-2]), 1e-300)
            if change < tol:
                break
    # A last Z step with the final view weights: the graph is then the one
    # that ``predict`` computes for the training samples.
    state.update_Z(n_threads)
    if callback is not None:
        callback(n_iter, "Z", state.objective())
    history.append(state.objective())
    return state, history, n_iter


# --------------------------------------------------------------------------- estimators


class SMVSC(MultiViewClusterMixin, BaseEstimator):
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
    per iteration O(n (d sum_v d_v + m sum_v d_v + m^2)); memory
    O(n (m + k) + m sum_v d_v) besides the data: no n x n matrix, and no
    residual ``X_v - W_v A Z`` is formed (the losses are expanded).

    Every block update is exact or a majorise-minimise step, so
    ``objective_`` never increases. This fixes the pitfalls of the
    reference code (Jeaninezpp/SMVSC), on purpose:

    * the Z step uses ``alpha_v^2`` in both its quadratic and its linear
      term (the paper's model; the public code leaves it out of the linear
      term, so that it does not minimise the stated objective);
    * ``m > d`` (the default grid has ``d = k`` and ``m`` up to ``3k``)
      makes ``A^T A = I`` infeasible. Decision: ``A`` is then constrained
      to orthonormal *rows* (``A A^T = I``, the set the Procrustes step of
      the code lands in), the A step minimises the objective on that set
      by the generalised power iteration (a monotone GPI step, since the
      quadratic term ``tr(A^T Q A Z Z^T)`` is no longer constant), and the
      Z step is the exact simplex QP with Hessian
      ``sum_v alpha_v^2 A^T W_v^T W_v A + lambda I`` solved by accelerated
      projected gradient; the closed form ``Pi(b_i / c)`` of the paper is
      used exactly when that Hessian is ``c I`` (``m <= d`` and every
      ``d_v >= d``). A view narrower than ``d`` (``d_v < d``, such as the
      6 morphological features of Handwritten with ``d = 10``) is handled
      the same way: its ``W_v`` has orthonormal rows and its W step is a
      GPI step;
    * initialisation: the reference code starts from ``W_v = 0``,
      ``A = 0`` and ``Z = [I_m, 0]`` (the first ``m`` samples as anchors,
      so its result depends on the order of the samples). Here ``Z``
      starts as the one-hot graph of ``m`` k-means clusters of the joined
      (standardised) views, ``W_v`` and ``A`` as the identity-like
      semi-orthogonal matrices, ``alpha`` uniform;
    * stopping: relative decrease of the objective below ``tol`` or
      ``max_iter`` iterations (the reference code also forces at least 10
      iterations; that rule is not kept). After the loop, one more exact Z
      step with the final ``alpha`` makes ``anchor_graph_`` the graph that
      :meth:`predict` computes for the training samples.

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
    reg_lambda : float, default=1.0
        ``lambda``, the weight of ``||Z||_F^2`` (the demo's value); 0 gives
        FPMVS-CAG's model (see :class:`FPMVSCAG`). Not named ``lambda_``:
        a trailing underscore marks fitted attributes in scikit-learn, and
        ``check_is_fitted`` would take any instance for fitted.
    n_singular_vectors : int or None, default=None
        Left singular vectors of ``Z^T`` kept for the final k-means
        (capped at ``m``). ``None`` keeps all ``m``, as the reference code
        does; after row normalisation, the directions of tiny singular
        values then weigh as much as the leading ones, which can split
        clean clusters when ``m > k`` (``n_clusters`` is the usual
        alternative).
    standardize : bool, default=True
        Centre and scale every feature to unit variance, as the reference
        code does (``mapstd``), with the training statistics reused by
        :meth:`predict`.
    n_init : int, default=10
        Restarts of the final k-means on the embedding.
    max_iter : int, default=50
        Maximum outer iterations.
    tol : float, default=1e-3
        Relative decrease of the objective below which the iterations stop.
    random_state : int, RandomState instance or None, default=None
        Seeds the initial and the final k-means; converted once per ``fit``.
    n_jobs : int or None, default=None
        Threads of the compiled simplex projection (``None``: every CPU).
    verbose : int, default=0
        Print the objective at every iteration to standard error.

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
        ``alpha``.
    objective_ : ndarray of shape (n_iter_ + 1,)
        The objective after each outer iteration, then after the final Z
        step; non-increasing.
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

    Notes
    -----
    :meth:`predict` codes each new sample on the learned anchors by the Z
    step with the fitted ``W_v``, ``A`` and ``alpha``, maps its code ``z``
    to the embedding by the out-of-sample extension of the singular vectors
    (``z^T V Sigma^{-1}``, exact on the training samples), normalises the
    row and assigns the nearest k-means centre.

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
    >>> from mvlearn_ext.cluster._smvsc import SMVSC
    >>> from mvlearn_ext.datasets import make_multiview_blobs
    >>> from mvlearn_ext.metrics import clustering_accuracy
    >>> Xs, y = make_multiview_blobs(120, n_views=2, n_features=[4, 3], random_state=0)
    >>> model = SMVSC(n_clusters=3, n_anchors=6, random_state=0).fit(Xs)
    >>> model.anchor_graph_.shape, model.consensus_anchors_.shape
    ((6, 120), (3, 6))
    >>> float(clustering_accuracy(y, model.labels_))
    1.0
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_anchors": [Interval(Integral, 1, None, closed="left"), None],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "reg_lambda": [Interval(Real, 0, None, closed="left")],
        "n_singular_vectors": [Interval(Integral, 1, None, closed="left"), None],
        "standardize": ["boolean"],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        n_anchors=None,
        n_components=None,
        reg_lambda=1.0,
        n_singular_vectors=None,
        standardize=True,
        n_init=10,
        max_iter=50,
        tol=1e-3,
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.n_clusters = n_clusters
        self.n_anchors = n_anchors
        self.n_components = n_components
        self.reg_lambda = reg_lambda
        self.n_singular_vectors = n_singular_vectors
        self.standardize = standardize
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _embedding_size(self, m):
        """Left singular vectors kept for the final k-means."""
        return m if self.n_singular_vectors is None else min(self.n_singular_vectors, m)

    def _model_settings(self):
        """``(n_anchors, n_components, lambda)`` before capping at ``n_samples``."""
        k = self.n_clusters
        m = k if self.n_anchors is None else self.n_anchors
        d = k if self.n_components is None else self.n_components
        return m, d, float(self.reg_lambda)

    def _log(self, message):
        if self.verbose:
            print(f"[{type(self).__name__}] {message}", file=sys.stderr, flush=True)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, Xs, y=None):
        """Learn the anchors, the graph and the view weights, then cluster.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            At least two views (see :func:`mvlearn_ext.utils.validate_views`),
            with at least ``n_clusters`` samples.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : SMVSC
            The fitted estimator.
        """
        Xs = self._validate_fit_views(Xs, min_views=2, n_clusters=self.n_clusters)
        rng = check_random_state(self.random_state)
        init_seed, kmeans_seed = (int(s) for s in rng.randint(np.iinfo(np.int32).max, size=2))
        n_samples = Xs[0].shape[0]
        self.view_means_, self.view_scales_ = (
            fit_view_scaling(Xs) if self.standardize else (None, None)
        )
        views = apply_view_scaling(Xs, self.view_means_, self.view_scales_)
        m, d, lam = self._model_settings()
        m = min(m, n_samples)
        state, history, n_iter = smvsc_fit(
            views,
            n_anchors=m,
            n_components=d,
            lam=lam,
            max_iter=self.max_iter,
            tol=self.tol,
            seed=init_seed,
            n_threads=self.n_jobs,
            log=self._log,
        )
        F, sigma, P = anchor_spectral_embedding(
            state.Z, self._embedding_size(m), normalize=False, return_projection=True
        )
        F = _normalize_rows(F)
        self.kmeans_ = KMeans(
            n_clusters=self.n_clusters, n_init=self.n_init, random_state=kmeans_seed
        ).fit(F)

        self.n_anchors_, self.n_components_ = m, d
        self.projections_ = state.W
        self.consensus_anchors_ = state.A
        self.anchors_ = [(W @ state.A).T for W in state.W]
        self.anchor_graph_ = state.Z
        self.embedding_ = F
        self.singular_values_ = sigma
        self._projection = P
        self.view_weights_ = state.alpha
        self.objective_ = np.asarray(history)
        self.n_iter_ = int(n_iter)
        self.labels_ = self.kmeans_.labels_.astype(np.intp, copy=False)
        return self

    def _embed(self, Xs):
        Xs = self._validate_predict_views(Xs)
        views = apply_view_scaling(Xs, self.view_means_, self.view_scales_)
        lam = self._model_settings()[2]
        H, B = z_problem(
            views, self.projections_, self.consensus_anchors_, self.view_weights_, lam
        )
        Z = solve_z(H, B, n_threads=self.n_jobs)
        return _normalize_rows(Z.T @ self._projection)

    def transform(self, Xs):
        """Embed samples through the learned anchors.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            Views with the number and widths of the training views.

        Returns
        -------
        F : ndarray of shape (n_samples, n_singular_vectors)
            The row-normalised out-of-sample embedding (``embedding_`` on
            the training views, to the QP tolerance).
        """
        return self._embed(Xs)

    def predict(self, Xs):
        """Assign new samples to clusters through the learned anchors.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            Views with the number and widths of the training views.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            The cluster of each sample (see the Notes of the class).
        """
        F = self._embed(Xs)
        return self.kmeans_.predict(F).astype(np.intp, copy=False)


def _normalize_rows(F):
    norms = np.linalg.norm(F, axis=1, keepdims=True)
    return F / np.where(norms > 0, norms, 1.0)


class FPMVSCAG(SMVSC):
    """Fast parameter-free multi-view subspace clustering (FPMVS-CAG).

    The SMVSC model without the regulariser and with as many anchors and
    latent dimensions as clusters, ``lambda = 0`` and ``m = d = k`` (Wang
    et al., 2022, as in the authors' demo; their solver ships only in
    obfuscated form). ``A`` is then a ``k x k`` orthogonal matrix and the Z
    step is the exact simplex projection ``Pi(b_i / sum_v alpha_v^2)``
    whenever every view has at least ``k`` features. Everything else,
    including the fixes to the reference code, is that of :class:`SMVSC`.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters ``k``, also the number of anchors and the latent
        dimension (each capped at ``n_samples``).
    standardize : bool, default=True
        Centre and scale every feature to unit variance.
    n_init : int, default=10
        Restarts of the final k-means.
    max_iter : int, default=50
        Maximum outer iterations.
    tol : float, default=1e-3
        Relative decrease of the objective below which the iterations stop.
    random_state : int, RandomState instance or None, default=None
        Seeds the initial and the final k-means.
    n_jobs : int or None, default=None
        Threads of the compiled simplex projection.
    verbose : int, default=0
        Print the objective at every iteration to standard error.

    Attributes
    ----------
    labels_, anchors_, consensus_anchors_, projections_, anchor_graph_, \
embedding_, singular_values_, view_weights_, objective_, n_iter_, n_anchors_, \
n_components_, kmeans_, view_means_, view_scales_, n_views_, n_features_per_view_
        As in :class:`SMVSC`.

    References
    ----------
    S. Wang, X. Liu, X. Zhu, P. Zhang, Y. Zhang, F. Gao and E. Zhu, "Fast
    parameter-free multi-view subspace clustering with consensus anchor
    guidance", IEEE Transactions on Image Processing 31, 2022.

    Examples
    --------
    >>> from mvlearn_ext.cluster._smvsc import FPMVSCAG
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

    def __init__(
        self,
        n_clusters=8,
        *,
        standardize=True,
        n_init=10,
        max_iter=50,
        tol=1e-3,
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.n_clusters = n_clusters
        self.standardize = standardize
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _model_settings(self):
        return self.n_clusters, self.n_clusters, 0.0

    def _embedding_size(self, m):
        return m
