"""The ARMUL baselines of robust multi-task regression, each solved to tolerance.

* :class:`ARMULRegressor` - the Euclidean-norm penalty of ARMUL (Duan & Wang,
  2023), vanilla variant; solved exactly through its profile objective.
* :class:`ClusteredARMULRegressor`, :class:`LowRankARMULRegressor` - its
  clustered and low-rank variants (tasks pulled to the nearest of a few
  prototypes, or to centres in a shared low-dimensional subspace).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval

from mvlearn_ext.multitask._base import (
    COMMON_CONSTRAINTS,
    ITER_CONSTRAINTS,
    REG_LAMBDA,
    SCALING,
    TASK_WEIGHT,
    MultiTaskLinearMixin,
    report_stop,
)
from mvlearn_ext.multitask._baselines import (
    _Common,
    _least_squares_fits,
    _normalised_weights,
    _pooled,
)
from mvlearn_ext.multitask._kernels import armul_prox, armul_prox_tasks

__all__ = ["ARMULRegressor", "ClusteredARMULRegressor", "LowRankARMULRegressor"]


def norm_units(value, scale):
    """A norm-penalty level on the coefficients of ``X`` in the units of ``X / scale``.

    ``C ||theta||`` is ``C / scale ||scale theta||`` (an overflow to ``inf``
    is the penalty's own limit, every task fused).
    """
    with np.errstate(over="ignore"):
        return float(value) / scale


def _lbfgs(fun, x0, max_iter, tol, who):
    """L-BFGS-B to a gradient tolerance relative to the start; reports a stop at ``max_iter``.

    The stop goes to :func:`~mvlearn_ext.multitask._base.report_stop`: a
    ``ConvergenceWarning``, or one entry of the count a ``...CV`` fit reports.
    """
    g0 = np.max(np.abs(fun(x0)[1]))
    res = minimize(
        fun,
        x0,
        jac=True,
        method="L-BFGS-B",
        options=dict(maxiter=max_iter, gtol=tol * max(g0, 1e-300), ftol=0.0),
    )
    if res.nit >= max_iter:
        report_stop(f"{who} L-BFGS did not converge in max_iter={max_iter}")
    return res


class _Subset:
    """The moments of a subset of tasks (what the ARMUL solvers read)."""

    def __init__(self, moments, idx):
        self.Sigma = np.ascontiguousarray(moments.Sigma[idx])
        self.b = np.ascontiguousarray(moments.b[idx])
        self.evals = np.ascontiguousarray(moments.evals[idx])
        self.evecs = np.ascontiguousarray(moments.evecs[idx])
        self.n = moments.n[idx]
        self.rcond = moments.rcond
        self.scale = moments.scale
        self.penalty_scale = moments.penalty_scale
        self.m, self.d = self.b.shape


class ARMULRegressor(_Common, MultiTaskLinearMixin, BaseEstimator):
    """ARMUL, vanilla: per-task fits pulled to a centre by a Euclidean norm penalty.

    Minimises ``sum_j w_j [ 1/(2 n_j) ||y_j - X_j theta_j||^2 + lambda_j
    ||theta_j - gamma||_2 ]`` with ``lambda_j = reg_lambda sqrt(d / n_j)``
    (Duan & Wang, 2023). Solved to tolerance, not by the authors'
    fixed-step proximal gradient: given ``gamma`` each task's problem has an
    exact solution (``theta_j = gamma`` iff ``||b_j - Sigma_j gamma||_2 <=
    lambda_j``, otherwise a one-dimensional secular equation), and the
    profile objective in ``gamma`` is convex with a Lipschitz gradient,
    minimised by L-BFGS. At ``reg_lambda`` at least the fusion threshold the
    fit is the pooled one, exactly. Unlike :class:`RobustMultiTaskRegressor`
    the penalty is not invariant under general linear transforms of the
    features: with ``scaling="zscore"`` under a rescaling of each feature,
    otherwise (``"global"``, ``None``) under rotations.

    Parameters
    ----------
    reg_lambda : float, default=0.1
        ``C`` in ``lambda_j = C sqrt(d / n_j)``.
    task_weight : {"uniform", "n_samples"}, default="n_samples"
        ARMUL's ``w_j = n_j / N`` (the normalisation does not change the fit).
    fit_intercept : bool, default=True
    scaling : {"global", "zscore"} or None, default="global"
        The units of the penalty. ``"global"``: ``X`` is divided by one number,
        the root mean square of its features' standard deviations over all
        rows (weighted by ``sample_weight``; root mean squares without
        ``fit_intercept``), and the coefficients are mapped back: the fit does
        not depend on the unit of ``X`` and the penalty still sees the
        features' relative scales, which carry information when the features
        share a unit. ``"zscore"``: every feature divided by its own standard
        deviation (glmnet's ``standardize=TRUE``), for features in different
        units. ``None``: the penalty on the coefficients of ``X`` as given.
    max_iter : int, default=1000
        L-BFGS iterations for ``gamma``.
    tol : float, default=1e-10
        L-BFGS gradient tolerance (relative to the gradient at the start).
    rcond : float or None, default=None
    n_jobs : int or None, default=None
        Threads of the per-task passes, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``: every
        CPU). The result does not depend on it.

    Attributes
    ----------
    coef_, intercept_, tasks_, n_tasks_, task_n_samples_, n_features_in_
        As in :class:`IndependentTaskRegressor`.
    center_ : ndarray of shape (n_features,)
        ``gamma``.
    fused_ : ndarray of bool of shape (n_tasks,)
    fusion_threshold_ : float
        The smallest ``reg_lambda`` with every task fused.
    n_iter_ : int
        L-BFGS iterations run (1 where the fit is in closed form:
        ``reg_lambda`` 0 or at least the fusion threshold).

    See Also
    --------
    ARMULRegressorCV : The same model with ``reg_lambda`` chosen by cross-validation.
    ClusteredARMULRegressor : Tasks pulled to one of several prototypes.
    LowRankARMULRegressor : Tasks pulled to centres in a shared subspace.
    MeanRegularizedRegressor : The squared (non-robust) penalty towards a shared mean.
    RobustMultiTaskRegressor : The same penalty with a learned ridge metric.
    IndependentTaskRegressor : Every task fitted alone, the baseline.

    References
    ----------
    Y. Duan and K. Wang, "Adaptive and robust multi-task learning", Ann.
    Statist. 51(5), 2023 (arXiv:2202.05250).

    Examples
    --------
    >>> from mvlearn_ext.multitask import ARMULRegressor
    >>> from mvlearn_ext.datasets import make_contaminated_tasks
    >>> data = make_contaminated_tasks(n_tasks=10, n_samples=40, n_features=5, random_state=0)
    >>> model = ARMULRegressor(reg_lambda=2.0, fit_intercept=False)
    >>> model = model.fit(data.X, data.y, tasks=data.tasks)
    >>> model.coef_.shape, model.center_.shape
    ((10, 5), (5,))
    >>> bool(model.fused_[~data.outliers].mean() > model.fused_[data.outliers].mean())
    True
    """

    _parameter_constraints: dict = {
        "reg_lambda": REG_LAMBDA,
        "task_weight": TASK_WEIGHT,
        "scaling": SCALING,
        **COMMON_CONSTRAINTS,
        **ITER_CONSTRAINTS,
    }

    _coef_attributes = ("center_",)
    _penalty_attributes = ("fusion_threshold_",)

    def __init__(
        self,
        reg_lambda=0.1,
        *,
        task_weight="n_samples",
        fit_intercept=True,
        scaling="global",
        max_iter=1000,
        tol=1e-10,
        rcond=None,
        n_jobs=None,
    ):
        self.reg_lambda = reg_lambda
        self.task_weight = task_weight
        self.fit_intercept = fit_intercept
        self.scaling = scaling
        self.max_iter = max_iter
        self.tol = tol
        self.rcond = rcond
        self.n_jobs = n_jobs

    def _path(self, moments, grid):
        w = _normalised_weights(moments, self.task_weight)
        gamma_dp = _pooled(moments, w)
        g = moments.b - np.einsum("jkl,l->jk", moments.Sigma, gamma_dp)
        cstar = float(np.max(np.linalg.norm(g, axis=1) * np.sqrt(moments.n / moments.d)))
        self.fusion_threshold_ = cstar
        out = [None] * len(grid)
        gamma = gamma_dp
        for pos in np.argsort(np.asarray(grid, dtype=float), kind="stable"):
            C = norm_units(grid[pos], moments.penalty_scale)
            if C == 0.0:
                coef = _least_squares_fits(moments, gamma_dp)
                fused, n_iter, center = np.zeros(moments.m, bool), 1, gamma_dp
            elif C >= cstar:
                coef = np.tile(gamma_dp, (moments.m, 1))
                fused, n_iter, center = np.ones(moments.m, bool), 1, gamma_dp
            else:
                lam = C * np.sqrt(moments.d / moments.n)
                gamma, n_iter = self._minimise(moments, lam, w, gamma)
                U, _, _ = armul_prox(
                    moments.Sigma, moments.b, moments.evals, moments.evecs, gamma, lam, w
                )
                coef = gamma + U
                fused = ~np.any(U != 0.0, axis=1)
                center = gamma
            self.center_, self.fused_, self.n_iter_ = center, fused, n_iter
            out[pos] = coef
        return out

    def _minimise(self, moments, lam, w, gamma0, who="ARMUL's"):
        args = (moments.Sigma, moments.b, moments.evals, moments.evecs)
        # Precondition by the pooled second moment: gamma = P z with
        # P = S^{-1/2}, S = sum_j w_j Sigma_j, so that the quadratic part of the
        # profile is well conditioned even when the Sigma_j have eigenvalues
        # spread over many orders of magnitude (alpha = 2 in the paper's design).
        e, V = np.linalg.eigh(np.tensordot(w, moments.Sigma, axes=1))
        e = np.maximum(e, max(e[-1], 1e-300) * 1e-12)
        P = (V / np.sqrt(e)) @ V.T
        Pinv = (V * np.sqrt(e)) @ V.T

        def fun(z):
            _, value, grad = armul_prox(*args, np.ascontiguousarray(P @ z), lam, w)
            return value, P @ grad

        res = _lbfgs(fun, Pinv @ gamma0, self.max_iter, self.tol, who)
        return P @ res.x, int(res.nit)


class ClusteredARMULRegressor(_Common, MultiTaskLinearMixin, BaseEstimator):
    """ARMUL, clustered: each task pulled to the nearest of ``n_clusters`` prototypes.

    Minimises ``sum_j w_j [ 1/(2 n_j) ||y_j - X_j theta_j||^2 + lambda_j
    min_k ||theta_j - beta_k||_2 ]`` with ``lambda_j = reg_lambda sqrt(d / n_j)``
    (Duan & Wang, 2023). The problem is not convex. Warm start as in ARMUL:
    k-means on the per-task least-squares fits. Then blocks, each solved
    exactly, so the objective never increases: every prototype minimises the
    (convex) ARMUL profile of its tasks (L-BFGS, as in :class:`ARMULRegressor`),
    then every task moves to the prototype of smallest task objective; until
    no task moves.

    Parameters
    ----------
    n_clusters : int, default=3
        Number of prototypes; at most the number of tasks.
    reg_lambda : float, default=0.1
    task_weight : {"uniform", "n_samples"}, default="n_samples"
    fit_intercept : bool, default=True
    scaling : {"global", "zscore"} or None, default="global"
        The units of the penalty. ``"global"``: ``X`` is divided by one number,
        the root mean square of its features' standard deviations over all
        rows (weighted by ``sample_weight``; root mean squares without
        ``fit_intercept``), and the coefficients are mapped back: the fit does
        not depend on the unit of ``X`` and the penalty still sees the
        features' relative scales, which carry information when the features
        share a unit. ``"zscore"``: every feature divided by its own standard
        deviation (glmnet's ``standardize=TRUE``), for features in different
        units. ``None``: the penalty on the coefficients of ``X`` as given.
    max_iter : int, default=1000
        L-BFGS iterations per prototype update.
    max_outer : int, default=50
        Most alternations of prototype updates and reassignments; a fit whose
        tasks still change clusters after them warns (``ConvergenceWarning``).
    tol : float, default=1e-10
    n_init : int, default=10
        Restarts of the warm-start k-means.
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means warm start.
    rcond : float or None, default=None
    n_jobs : int or None, default=None
        Threads of the per-task passes, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``: every
        CPU). The result does not depend on it.

    Attributes
    ----------
    coef_, intercept_, tasks_, n_tasks_, task_n_samples_, n_features_in_
        As in :class:`ARMULRegressor`.
    prototypes_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_tasks,)
        The prototype of every task.
    objective_ : ndarray
        The objective (up to a constant) after every alternation;
        non-increasing.
    n_iter_ : int
        Alternations run.

    See Also
    --------
    ClusteredARMULRegressorCV : The same model with ``reg_lambda`` chosen by cross-validation.
    ARMULRegressor : One shared centre.
    LowRankARMULRegressor : Centres in a shared subspace.

    References
    ----------
    Y. Duan and K. Wang, "Adaptive and robust multi-task learning", Ann.
    Statist. 51(5), 2023 (arXiv:2202.05250).

    Examples
    --------
    >>> from mvlearn_ext.multitask import ClusteredARMULRegressor
    >>> from mvlearn_ext.datasets import make_contaminated_tasks
    >>> data = make_contaminated_tasks(n_tasks=10, n_samples=40, n_features=5, random_state=0)
    >>> model = ClusteredARMULRegressor(n_clusters=2, reg_lambda=2.0, random_state=0)
    >>> model = model.fit(data.X, data.y, tasks=data.tasks)
    >>> model.prototypes_.shape, model.labels_.shape
    ((2, 5), (10,))
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "reg_lambda": REG_LAMBDA,
        "task_weight": TASK_WEIGHT,
        "scaling": SCALING,
        "max_outer": [Interval(Integral, 1, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        **COMMON_CONSTRAINTS,
        **ITER_CONSTRAINTS,
    }

    def __init__(
        self,
        n_clusters=3,
        *,
        reg_lambda=0.1,
        task_weight="n_samples",
        fit_intercept=True,
        scaling="global",
        max_iter=1000,
        max_outer=50,
        tol=1e-10,
        n_init=10,
        random_state=None,
        rcond=None,
        n_jobs=None,
    ):
        self.n_clusters = n_clusters
        self.reg_lambda = reg_lambda
        self.task_weight = task_weight
        self.fit_intercept = fit_intercept
        self.scaling = scaling
        self.max_iter = max_iter
        self.max_outer = max_outer
        self.tol = tol
        self.n_init = n_init
        self.random_state = random_state
        self.rcond = rcond
        self.n_jobs = n_jobs

    _coef_attributes = ("prototypes_",)

    def _solve_one(self, moments, C):
        from sklearn.cluster import KMeans

        if self.n_clusters > moments.m:
            raise ValueError(
                f"n_clusters={self.n_clusters} exceeds the number of tasks ({moments.m}): "
                "every prototype needs at least one task"
            )
        C = norm_units(C, moments.penalty_scale)
        w = _normalised_weights(moments, self.task_weight)
        K = self.n_clusters
        ols = _least_squares_fits(moments, _pooled(moments, w))
        km = KMeans(K, n_init=self.n_init, random_state=self.random_state).fit(ols)
        labels = km.labels_.astype(np.int64)
        protos = km.cluster_centers_.copy()
        lam = np.full(moments.m, C) * np.sqrt(moments.d / moments.n)
        helper = ARMULRegressor(max_iter=self.max_iter, tol=self.tol)
        history = []
        n_outer, settled = 0, False
        while n_outer < self.max_outer:
            n_outer += 1
            for k in range(K):
                idx = np.flatnonzero(labels == k)
                if idx.size == 0:
                    continue
                sub = _Subset(moments, idx)
                dp = _pooled(sub, w[idx])
                g = sub.b - np.einsum("jkl,l->jk", sub.Sigma, dp)
                if C == 0.0 or np.all(np.linalg.norm(g, axis=1) <= lam[idx]):
                    # every task of the cluster fused (exactly): the cluster's pooled fit
                    protos[k] = dp
                else:
                    protos[k], _ = helper._minimise(
                        sub, lam[idx], w[idx], protos[k], "clustered ARMUL's"
                    )
            values = np.empty((K, moments.m))
            for k in range(K):
                values[k] = self._task_values(moments, protos[k], lam, w)
            history.append(float(values[labels, np.arange(moments.m)].sum()))
            new = np.argmin(values, axis=0)
            # move only on a strict decrease, so the alternation cannot cycle
            keep = (
                values[labels, np.arange(moments.m)] <= values[new, np.arange(moments.m)] + 1e-13
            )
            new = np.where(keep, labels, new)
            if np.array_equal(new, labels):
                settled = True
                break
            labels = new
        if not settled:
            report_stop(
                "clustered ARMUL's tasks still changed clusters after "
                f"max_outer={self.max_outer} alternations",
                "max_outer",
            )
        U = np.zeros((moments.m, moments.d))
        for k in range(K):
            idx = np.flatnonzero(labels == k)
            if idx.size:
                sub = _Subset(moments, idx)
                U[idx] = armul_prox(
                    sub.Sigma, sub.b, sub.evals, sub.evecs, protos[k], lam[idx], w[idx]
                )[0]
        self.prototypes_, self.labels_ = protos, labels
        self.objective_, self.n_iter_ = np.array(history), n_outer
        return protos[labels] + U

    @staticmethod
    def _task_values(moments, gamma, lam, w):
        """Each task's objective (up to its constant) with centre ``gamma``."""
        Gamma = np.tile(gamma, (moments.m, 1))
        return armul_prox_tasks(
            moments.Sigma, moments.b, moments.evals, moments.evecs, Gamma, lam, w
        )[1]


class LowRankARMULRegressor(_Common, MultiTaskLinearMixin, BaseEstimator):
    """ARMUL, low-rank: each task pulled to its own centre in a shared subspace.

    Minimises ``sum_j w_j [ 1/(2 n_j) ||y_j - X_j theta_j||^2 + lambda_j
    ||theta_j - B z_j||_2 ]`` over the task fits ``theta_j``, a basis ``B``
    of shape ``(n_features, rank)`` and loadings ``z_j`` of length ``rank``,
    with ``lambda_j = reg_lambda sqrt(d / n_j)`` (Duan & Wang, 2023). Warm
    start as in ARMUL: the truncated SVD of the per-task least-squares fits,
    its singular values split evenly between ``B`` and the loadings. Given
    the centres ``gamma_j = B z_j`` each task's problem is solved exactly (as
    in :class:`ARMULRegressor`), which leaves a smooth profile objective in
    ``(B, Z)``; it is minimised jointly by L-BFGS to the gradient tolerance
    ``tol``, not by the authors' fixed-step alternating gradient descent.
    The problem is not convex (the factorisation is bilinear): the fit is a
    stationary point reached from the SVD warm start, never worse than that
    start. ``rank >= min(n_tasks, n_features)`` leaves the centres free, so
    every task gets its own least-squares fit; at a large ``reg_lambda``
    every task is fused (``theta_j = B z_j``): reduced-rank multi-task
    regression.

    Parameters
    ----------
    rank : int, default=3
        Dimension of the shared subspace (clipped to ``min(n_tasks,
        n_features)``).
    reg_lambda : float, default=0.1
        ``C`` in ``lambda_j = C sqrt(d / n_j)``.
    task_weight : {"uniform", "n_samples"}, default="n_samples"
    fit_intercept : bool, default=True
    scaling : {"global", "zscore"} or None, default="global"
        The units of the penalty. ``"global"``: ``X`` is divided by one number,
        the root mean square of its features' standard deviations over all
        rows (weighted by ``sample_weight``; root mean squares without
        ``fit_intercept``), and the coefficients are mapped back: the fit does
        not depend on the unit of ``X`` and the penalty still sees the
        features' relative scales, which carry information when the features
        share a unit. ``"zscore"``: every feature divided by its own standard
        deviation (glmnet's ``standardize=TRUE``), for features in different
        units. ``None``: the penalty on the coefficients of ``X`` as given.
    max_iter : int, default=1000
        L-BFGS iterations.
    tol : float, default=1e-10
        L-BFGS gradient tolerance (relative to the gradient at the start).
    rcond : float or None, default=None
    n_jobs : int or None, default=None
        Threads of the per-task passes, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``: every
        CPU). The result does not depend on it.

    Attributes
    ----------
    coef_, intercept_, tasks_, n_tasks_, task_n_samples_, n_features_in_
        As in :class:`ARMULRegressor`.
    components_ : ndarray of shape (rank, n_features)
        ``B`` transposed (its scale is not identified: ``B A`` and
        ``A^{-1} z_j`` give the same centres).
    loadings_ : ndarray of shape (n_tasks, rank)
        The ``z_j`` as rows.
    centers_ : ndarray of shape (n_tasks, n_features)
        The task centres ``B z_j``.
    fused_ : ndarray of bool of shape (n_tasks,)
        Tasks with ``theta_j = B z_j``.
    objective_ : float
        The objective at the fit (up to a constant).
    n_iter_ : int
        L-BFGS iterations run (1 where the fit is in closed form:
        ``reg_lambda`` 0, or ``rank`` at least ``min(n_tasks, n_features)``).

    See Also
    --------
    LowRankARMULRegressorCV : The same model with ``reg_lambda`` chosen by cross-validation.
    ARMULRegressor : One shared centre.
    ClusteredARMULRegressor : Tasks pulled to one of several prototypes.

    References
    ----------
    Y. Duan and K. Wang, "Adaptive and robust multi-task learning", Ann.
    Statist. 51(5), 2023 (arXiv:2202.05250).

    Examples
    --------
    >>> from mvlearn_ext.multitask import LowRankARMULRegressor
    >>> from mvlearn_ext.datasets import make_contaminated_tasks
    >>> data = make_contaminated_tasks(n_tasks=10, n_samples=40, n_features=5, random_state=0)
    >>> model = LowRankARMULRegressor(rank=2, reg_lambda=2.0).fit(data.X, data.y, tasks=data.tasks)
    >>> model.components_.shape, model.loadings_.shape
    ((2, 5), (10, 2))
    """

    _parameter_constraints: dict = {
        "rank": [Interval(Integral, 1, None, closed="left")],
        "reg_lambda": REG_LAMBDA,
        "task_weight": TASK_WEIGHT,
        "scaling": SCALING,
        **COMMON_CONSTRAINTS,
        **ITER_CONSTRAINTS,
    }

    def __init__(
        self,
        rank=3,
        *,
        reg_lambda=0.1,
        task_weight="n_samples",
        fit_intercept=True,
        scaling="global",
        max_iter=1000,
        tol=1e-10,
        rcond=None,
        n_jobs=None,
    ):
        self.rank = rank
        self.reg_lambda = reg_lambda
        self.task_weight = task_weight
        self.fit_intercept = fit_intercept
        self.scaling = scaling
        self.max_iter = max_iter
        self.tol = tol
        self.rcond = rcond
        self.n_jobs = n_jobs

    _coef_attributes = ("components_", "centers_")

    def _solve_one(self, moments, C):
        C = norm_units(C, moments.penalty_scale)
        m, d = moments.m, moments.d
        w = _normalised_weights(moments, self.task_weight)
        K = min(self.rank, m, d)
        ols = _least_squares_fits(moments, _pooled(moments, w))
        Uo, so, Vto = np.linalg.svd(ols, full_matrices=False)
        root = np.sqrt(so[:K])
        Z0, B0 = Uo[:, :K] * root, Vto[:K].T * root
        lam = (C * np.sqrt(d / moments.n)) if np.isfinite(C) else np.full(m, np.inf)
        args = (moments.Sigma, moments.b, moments.evals, moments.evecs)
        if C == 0.0 or K == min(m, d):
            # Either the objective does not depend on the centres (C = 0), or
            # the centres can reach every task's own fit (full rank, where the
            # SVD reproduces the fits exactly): per-task least squares.
            coef = _least_squares_fits(moments, Z0 @ B0.T)
            self._store(B0, Z0, coef, np.full(m, K == min(m, d)))
            # Every task sits at its own least-squares fit (u = 0 with the
            # centres at the fits, or no penalty): the objective, up to the
            # same constant as the iterative route, is the profile at them.
            _, vals, _ = armul_prox_tasks(
                *args, np.ascontiguousarray(coef), np.full(m, np.finfo(float).max), w
            )
            self.objective_, self.n_iter_ = float(vals.sum()), 1
            return coef
        lam_eff = np.where(np.isfinite(lam), lam, np.finfo(float).max)

        def fun(x):
            B = x[: d * K].reshape(d, K)
            Z = x[d * K :].reshape(m, K)
            _, vals, G = armul_prox_tasks(*args, np.ascontiguousarray(Z @ B.T), lam_eff, w)
            return float(vals.sum()), np.concatenate([(G.T @ Z).ravel(), (G @ B).ravel()])

        x0 = np.concatenate([B0.ravel(), Z0.ravel()])
        res = _lbfgs(fun, x0, self.max_iter, self.tol, "low-rank ARMUL's")
        B = res.x[: d * K].reshape(d, K)
        Z = res.x[d * K :].reshape(m, K)
        centers = Z @ B.T
        U, vals, _ = armul_prox_tasks(*args, np.ascontiguousarray(centers), lam_eff, w)
        coef = centers + U
        self._store(B, Z, coef, ~np.any(U != 0.0, axis=1))
        self.objective_, self.n_iter_ = float(vals.sum()), int(res.nit)
        return coef

    def _store(self, B, Z, coef, fused):
        self.components_, self.loadings_ = B.T.copy(), Z
        self.centers_, self.fused_ = Z @ B.T, fused
