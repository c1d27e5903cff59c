"""Robust multi-task regression with a matrix-weighted penalty (Kim, ICML 2026)."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from mvlearn_ext.multitask._base import (
    COMMON_CONSTRAINTS,
    CV,
    ITER_CONSTRAINTS,
    REG_LAMBDA,
    TASK_WEIGHT,
    MultiTaskLinearMixin,
    report_stop,
)
from mvlearn_ext.multitask._cv import MultiTaskCVMixin, check_grid, select_global
from mvlearn_ext.multitask._kernels import irls_center, recover_coef

__all__ = [
    "DEFAULT_REG_LAMBDAS",
    "DEFAULT_RIDGES",
    "RobustMultiTaskRegressor",
    "RobustMultiTaskRegressorCV",
    "robust_multitask_path",
    "robust_multitask_regression",
]

#: The default grid of ``q``: the reference grid {0.1, 0.4, 0.7, 1, 2, 4, 8, 12, 16}
#: widened at both ends, with 0 (independent OLS) and inf (exact pooled fit).
DEFAULT_REG_LAMBDAS = (
    0.0,
    0.01,
    0.03,
    0.1,
    0.2,
    0.4,
    0.7,
    1.0,
    1.5,
    2.0,
    3.0,
    4.0,
    6.0,
    8.0,
    12.0,
    16.0,
    24.0,
    32.0,
    64.0,
    np.inf,
)


#: The default grid of the ridge term's ``rho`` in :class:`RobustMultiTaskRegressorCV`
#: (with ``ridge_metric="identity"``). It contains 0, the paper's estimator; the
#: positive values (not from the paper) let CV fall back to a plain ridge when
#: tasks are few or small.
DEFAULT_RIDGES = (0.0, 0.03, 0.1, 0.3, 1.0, 3.0)


LAMBDA_SCALE = [StrOptions({"n_features", "rank"})]


def _task_dims(moments, lambda_scale):
    """``d_j`` in ``lambda_j = q sqrt(d_j / n_j)``: ``d``, or ``rank(Sigma_j)`` (at least 1)."""
    if lambda_scale == "rank":
        return np.maximum(np.asarray(moments.rank, dtype=float), 1.0)
    return np.full(moments.m, float(moments.d))


def _lambdas(moments, q, dims):
    """``lambda_j = q sqrt(d_j / n_j)`` (``inf`` stays ``inf``)."""
    if np.isinf(q):
        return np.full(moments.m, np.inf)
    return q * np.sqrt(dims / moments.n)


RIDGE_METRIC = [StrOptions({"second_moment", "identity"})]


def _ridge_moments(moments, ridge, w, metric):
    """The moments of the ridge-augmented problem: ``Sigma_j + ridge M``, ``b_j`` unchanged.

    ``M`` is the task-weighted mean second moment ``S`` (``"second_moment"``)
    or ``tr(S) / d I`` (``"identity"``). The estimator on these moments is
    the paper's estimator on every task's rows augmented with ``d`` rows
    ``sqrt(n_j ridge) M^{1/2}`` whose responses are 0.
    """
    import copy

    S = np.tensordot(w / w.sum(), moments.Sigma, axes=1)
    if metric == "identity":
        S = np.trace(S) / moments.d * np.eye(moments.d)
    out = copy.copy(moments)
    out.Sigma = moments.Sigma + ridge * S[None]
    out._eig = None
    return out


def _pooled_center(moments, w):
    """The task-weighted pooled fit ``(sum w_j Sigma_j)^+ sum w_j b_j`` (DP)."""
    lam = np.full(moments.m, np.inf)
    beta, r, _, _, _ = irls_center(
        moments.Sigma, moments.b, moments.theta, lam, w, np.zeros(moments.d), 1, 0.0, moments.rcond
    )
    return beta, r


def robust_multitask_path(
    moments,
    qs,
    *,
    task_weight="uniform",
    lambda_scale="n_features",
    ridge=0.0,
    ridge_metric="second_moment",
    max_iter=1000,
    tol=1e-10,
):
    """Solve the estimator for every ``q`` in ``qs`` on precomputed moments.

    The driver (valid input assumed): the pooled fit ``beta_DP`` first, then
    the reweighting iteration for ``beta`` at every ``q`` in ascending order,
    warm-started from the previous ``q``, then the closed-form per-task
    solutions. With ``ridge > 0`` all of it runs on the ridge-augmented
    moments (:func:`_ridge_moments`); ``d_j`` of ``lambda_scale="rank"``
    stays the rank of the data's own ``Sigma_j``. Returns a list of dicts
    (``coef``, ``center``, ``shrinkage``, ``distance``, ``objective``,
    ``n_iter``, ``converged``) in the order of ``qs``, and the fusion
    threshold ``q*``.
    """
    w = moments.task_weights(task_weight)
    dims = _task_dims(moments, lambda_scale)
    if ridge > 0:
        moments = _ridge_moments(moments, ridge, w, ridge_metric)
    beta_dp, r_dp = _pooled_center(moments, w)
    qstar = float(np.max(r_dp * np.sqrt(moments.n / dims)))
    out = [None] * len(qs)
    beta = beta_dp
    for pos in np.argsort(np.asarray(qs, dtype=float), kind="stable"):
        q = float(qs[pos])
        lam = _lambdas(moments, q, dims)
        if q == 0.0:
            # beta is not identified at lambda = 0: every task is its own OLS fit,
            # and the pooled fit fills the directions a task does not explore.
            center, r, n_iter, converged = beta_dp, r_dp.copy(), 1, True
            shrink = np.ones(moments.m)
            objective = 0.0
        elif q >= qstar:
            # Exact fusion (necessary and sufficient): every task at beta_DP.
            center, r, n_iter, converged = beta_dp, r_dp.copy(), 1, True
            shrink = np.zeros(moments.m)
            objective = float(np.sum(w * 0.5 * r**2))
        else:
            center, r, objective, n_iter, converged = irls_center(
                moments.Sigma, moments.b, moments.theta, lam, w, beta, max_iter, tol, moments.rcond
            )
            with np.errstate(divide="ignore", invalid="ignore"):
                shrink = np.where(r > lam, 1.0 - lam / r, 0.0)
            beta = center
        coef = recover_coef(moments.theta, moments.evecs, moments.rank, center, shrink)
        out[pos] = dict(
            coef=coef,
            center=center,
            shrinkage=shrink,
            distance=r,
            objective=float(objective),
            n_iter=int(n_iter),
            converged=bool(converged),
        )
    return out, qstar


def _stop_message(max_iter, q, ridge):
    """What :func:`~mvlearn_ext.multitask._base.report_stop` says of a fit that stopped."""
    at = f"reg_lambda={q:g}" + (f", ridge={ridge:g}" if ridge else "")
    return f"the reweighting iteration did not converge in max_iter={max_iter} iterations at {at}"


def _balancedness(moments, w):
    """``max_j lambda_max(S^{+/2} Sigma_j S^{+/2})``, ``S`` the weighted mean moment."""
    S = np.tensordot(w / w.sum(), moments.Sigma, axes=1)
    e, V = np.linalg.eigh(S)
    keep = e > moments.rcond * max(e[-1], 0.0)
    if not np.any(keep):
        # no feature varies in any task: every task has the same (zero) second
        # moment, the perfectly balanced case
        return 1.0
    R = V[:, keep] / np.sqrt(e[keep])
    M = np.matmul(np.matmul(R.T, moments.Sigma), R)
    return float(np.max(np.linalg.eigvalsh(M)[:, -1]))


class RobustMultiTaskRegressor(MultiTaskLinearMixin, BaseEstimator):
    """Multi-task linear regression shrunk towards a centre in each task's own geometry.

    Minimises, over per-task coefficients ``theta_j`` and a centre ``beta``,

        ``sum_j w_j [ 1/(2 n_j) ||y_j - X_j theta_j||^2
        + lambda_j ||theta_j - beta||_{Sigma_j} ]``

    with ``Sigma_j = X_j^T X_j / n_j`` the task's empirical second moment,
    ``||u||_Sigma = sqrt(u^T Sigma u)`` and ``lambda_j = reg_lambda *
    sqrt(d / n_j)`` (Kim, 2026; ``lambda_scale="rank"`` puts
    ``rank(Sigma_j)`` in place of ``d``). Tasks close to the centre are fused with
    it (``theta_j = beta`` exactly); far ones (outlier tasks) move at most
    ``lambda_j`` away from their own least-squares fit, in root-mean-square
    in-sample prediction. No lower bound on the eigenvalues of ``Sigma_j``
    is needed: tasks with ``n_j < d`` and rank-deficient designs are handled
    exactly, through the range of ``Sigma_j``.

    Solver (exact, not a generic optimiser on the non-smooth objective):
    given ``beta`` every ``theta_j`` has the closed form
    ``beta + c_j P_j (theta_hat_j - beta)``, with
    ``c_j = max(0, 1 - lambda_j / r_j)``, ``r_j = ||theta_hat_j -
    beta||_{Sigma_j}``, ``theta_hat_j`` the task's least-squares fit and
    ``P_j`` the orthogonal projector onto the range of ``Sigma_j`` (the
    directions a task's data do not explore are filled from ``beta``). The
    centre minimises the profile objective ``sum_j w_j
    H_{lambda_j}(r_j(beta))`` (Huber's function), solved by the reweighting
    (majorise-minimise) iteration ``omega_j = min(1, lambda_j / r_j)``,
    ``beta <- (sum_j w_j omega_j Sigma_j)^+ sum_j w_j omega_j b_j`` with
    ``b_j = X_j^T y_j / n_j``; it decreases the objective monotonically.
    When ``reg_lambda`` reaches the fusion threshold ``q*``
    (``fusion_threshold_``) the fit is the pooled one, exactly; at
    ``reg_lambda = 0`` it is per-task least squares.

    The solver follows from the squared-loss structure of the paper's
    objective; the paper's reference code instead
    runs L-BFGS-B on a smoothed objective, which stalls where tasks fuse.

    Parameters
    ----------
    reg_lambda : float, default=1.0
        The penalty level ``q`` (``lambda_j = q sqrt(d_j / n_j)``, ``d_j``
        set by ``lambda_scale``); 0 gives
        independent least squares, ``inf`` (or any value at least
        ``fusion_threshold_``) the pooled fit.
    task_weight : {"uniform", "n_samples"}, default="uniform"
        Task weights ``w_j``: 1 (the paper's synthetic experiments), or the
        effective ``n_j`` (its HAR script). Decides which pooled fit exact
        fusion reaches: the task-balanced one, or pooled least squares.
    lambda_scale : {"n_features", "rank"}, default="n_features"
        ``d_j`` in ``lambda_j = reg_lambda sqrt(d_j / n_j)``: the number of
        features ``d`` (the paper), or ``rank(Sigma_j)`` (at least 1; the
        rank rule of ``rcond``). The two agree when every ``Sigma_j`` has
        full rank (``n_j >= d``, or ``n_j > d`` with an intercept). With
        ``n_j < d``, ``sqrt(d / n_j)`` changes between the CV folds and the
        refit while ``sqrt(rank / n_j)`` stays near 1, so the CV choice of
        ``reg_lambda`` carries over to the refit. Not from the paper.
    ridge : float, default=0.0
        ``rho`` of an optional ridge term: every task's loss gets ``rho/2
        theta_j^T M theta_j`` (``M`` set by ``ridge_metric``), and the
        penalty is measured in ``Sigma_j + rho M``. This is the paper's
        estimator on each task's rows augmented with ``d`` rows ``sqrt(n_j
        rho) M^{1/2}`` with responses 0, so the solver, the closed forms and
        the fusion threshold carry over: ``reg_lambda = 0`` gives ridge per
        task, ``inf`` a pooled ridge fit. 0 (default) is the paper's estimator.
        Not from the paper. :class:`RobustMultiTaskRegressorCV` chooses it
        with ``reg_lambda`` (by default over :data:`DEFAULT_RIDGES`).
    ridge_metric : {"identity", "second_moment"}, default="identity"
        ``M`` of the ridge term (see ``ridge``; no effect when it is 0):
        ``tr(S) / d`` times the identity, with ``S`` the task-weighted mean
        second moment of the features (a plain ridge, as in ridge ITL;
        invariant under rotations and a common rescaling of the features,
        not under a general invertible map), or ``S`` itself (the estimator
        stays invariant under any common invertible map of the features,
        but shrinks little in directions where every task's data are
        weak, which is where a ridge helps).
    fit_intercept : bool, default=True
        Fit an unpenalised intercept per task (the rows of each task are
        centred with their weighted means; the penalty acts on the slopes).
    max_iter : int, default=1000
        Maximum reweighting iterations for ``beta``.
    tol : float, default=1e-10
        Stop when the change of ``beta`` is at most ``tol * (1 +
        ||beta||_S)``, both in the norm of the task-weighted mean second
        moment ``S`` (the pooled root-mean-square prediction; the rule is
        invariant under invertible maps of the features).
    rcond : float or None, default=None
        Eigenvalues of ``Sigma_j`` at most ``rcond`` times the largest count
        as zero (the rank rule; ``None``: machine epsilon times
        ``max(n_j, d)``). Singular ``Sigma_j`` are handled through their
        range, with no added regularisation.
    verbose : int, default=0
        Print the progress of ``fit`` to standard error.
    n_jobs : int or None, default=None
        Threads of the per-task passes, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``: every
        CPU). The result does not depend on it.

    Attributes
    ----------
    coef_ : ndarray of shape (n_tasks, n_features)
        ``theta_j`` of every task (rows in the order of ``tasks_``).
    intercept_ : ndarray of shape (n_tasks,)
        Per-task intercepts (zeros without ``fit_intercept``).
    center_ : ndarray of shape (n_features,)
        The centre ``beta``. At ``reg_lambda = 0`` it is not identified and
        is reported as the pooled fit.
    shrinkage_ : ndarray of shape (n_tasks,)
        ``c_j`` in ``[0, 1)``: 0 means the task is fused with the centre,
        values near 1 that it was left (almost) alone.
    outlier_scores_ : ndarray of shape (n_tasks,)
        ``r_j sqrt(n_j / d_j)``: the task's distance from the centre in units
        of ``reg_lambda``; the task is fused iff its score is at most
        ``reg_lambda``.
    fused_ : ndarray of bool of shape (n_tasks,)
        ``shrinkage_ == 0``.
    fusion_threshold_ : float
        ``q* = max_j ||theta_hat_j - beta_DP||_{Sigma_j} sqrt(n_j / d_j)``:
        every ``reg_lambda >= q*`` gives the pooled fit ``beta_DP``.
    balancedness_ : float
        ``max_j lambda_max(S^{+/2} Sigma_j S^{+/2})`` with ``S`` the
        task-weighted mean second moment, on its range (large values: the
        estimator falls back towards independent fits); 1 when no feature
        varies.
    objective_ : float
        The profile objective ``sum_j w_j H_{lambda_j}(r_j)`` at the solution.
    n_iter_ : int
        Reweighting iterations run (1 where the fit is in closed form:
        ``reg_lambda`` 0 or at least ``fusion_threshold_``).
    tasks_ : ndarray of shape (n_tasks,)
        The sorted task labels seen in ``fit``.
    n_tasks_ : int
    task_n_samples_ : ndarray of shape (n_tasks,)
        The effective ``n_j`` of every task (the sum of its sample weights).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string feature names.

    See Also
    --------
    RobustMultiTaskRegressorCV : ``reg_lambda`` chosen by cross-validation.
    ARMULRegressor : The Euclidean-norm penalty (Duan & Wang, 2023).

    Notes
    -----
    Affine invariance (``ridge=0``, the default here, or
    ``ridge_metric="second_moment"``): replacing ``X`` by ``X A`` for an
    invertible ``A`` leaves all predictions unchanged when every ``Sigma_j``
    is full rank. With ``ridge > 0`` and ``ridge_metric="identity"`` only
    ``A = c Q`` (``Q`` orthogonal, ``c > 0``) does; features in different
    units change the fit.
    For tasks with ``n_j < d`` the in-sample predictions are invariant, but
    out-of-sample predictions of a non-fused rank-deficient task are
    invariant only for orthogonal ``A`` (the projector ``P_j`` is the
    Euclidean one). Both ``lambda_scale`` options and both task weightings
    keep the invariance (``rank(Sigma_j)`` does not change), as long as the
    map leaves the eigenvalues of ``Sigma_j`` above the rank rule ``rcond``
    (features in units 1e-2 to 1e2 apart are fine; 1e-3 to 1e3 with
    anisotropic covariates already pushes some below it).

    With sample weights, ``n_j`` is the sum of the task's weights (so that
    integer weights are equivalent to repeated rows), and the loss is the
    weighted mean squared error of the task.

    References
    ----------
    S.-J. Kim, "Multi-task linear regression without eigenvalue lower
    bounds: adaptivity, robustness and safety", ICML 2026
    (arXiv:2605.17126).

    Examples
    --------
    >>> from mvlearn_ext.multitask import RobustMultiTaskRegressor
    >>> from mvlearn_ext.datasets import make_contaminated_tasks
    >>> data = make_contaminated_tasks(n_tasks=10, n_samples=40, n_features=5, random_state=0)
    >>> model = RobustMultiTaskRegressor(reg_lambda=2.0, fit_intercept=False)
    >>> model = model.fit(data.X, data.y, tasks=data.tasks)
    >>> model.coef_.shape, model.center_.shape
    ((10, 5), (5,))
    >>> bool(model.fused_[~data.outliers].mean() > model.fused_[data.outliers].mean())
    True
    """

    _parameter_constraints: dict = {
        "reg_lambda": REG_LAMBDA,
        "task_weight": TASK_WEIGHT,
        "lambda_scale": LAMBDA_SCALE,
        "ridge": [Interval(Real, 0, None, closed="left")],
        "ridge_metric": RIDGE_METRIC,
        **COMMON_CONSTRAINTS,
        **ITER_CONSTRAINTS,
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        reg_lambda=1.0,
        *,
        task_weight="uniform",
        lambda_scale="n_features",
        ridge=0.0,
        ridge_metric="identity",
        fit_intercept=True,
        max_iter=1000,
        tol=1e-10,
        rcond=None,
        verbose=0,
        n_jobs=None,
    ):
        self.reg_lambda = reg_lambda
        self.task_weight = task_weight
        self.lambda_scale = lambda_scale
        self.ridge = ridge
        self.ridge_metric = ridge_metric
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.rcond = rcond
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _path(self, moments, qs):
        if not np.isfinite(self.ridge):
            raise ValueError(f"ridge must be a finite value >= 0, got {self.ridge!r}")
        results, qstar = robust_multitask_path(
            moments,
            qs,
            task_weight=self.task_weight,
            lambda_scale=self.lambda_scale,
            ridge=float(self.ridge),
            ridge_metric=self.ridge_metric,
            max_iter=self.max_iter,
            tol=self.tol,
        )
        return results, qstar

    _coef_attributes = ("center_",)

    def _store(self, result, qstar, moments, q):
        w = moments.task_weights(self.task_weight)
        self.center_ = result["center"].copy()
        self.shrinkage_ = result["shrinkage"]
        dims = _task_dims(moments, self.lambda_scale)
        self.outlier_scores_ = result["distance"] * np.sqrt(moments.n / dims)
        self.fused_ = result["shrinkage"] == 0.0
        self.fusion_threshold_ = qstar
        self.balancedness_ = _balancedness(moments, w)
        self.objective_ = result["objective"]
        self.n_iter_ = result["n_iter"]
        if not result["converged"]:
            report_stop(_stop_message(self.max_iter, q, self.ridge))
        self._log(
            f"q={q:g}: {int(self.fused_.sum())}/{moments.m} tasks fused, "
            f"q*={qstar:.4g}, {self.n_iter_} iterations"
        )

    def _solve(self, moments):
        (result,), qstar = self._path(moments, [float(self.reg_lambda)])
        self._store(result, qstar, moments, self.reg_lambda)
        return result["coef"]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, tasks=None, sample_weight=None):
        """Fit every task's coefficients and the shared centre.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows of all tasks, stacked (float32 or float64).
        y : array-like of shape (n_samples,)
        tasks : array-like of shape (n_samples,), default=None
            The task label of every row (any sortable labels). ``None``: one
            task. Every task needs at least 2 rows.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative per-row weights.

        Returns
        -------
        self : RobustMultiTaskRegressor
        """
        return self._fit(X, y, tasks, sample_weight)


class RobustMultiTaskRegressorCV(MultiTaskCVMixin, BaseEstimator):
    """:class:`RobustMultiTaskRegressor` with ``reg_lambda`` and ``ridge`` chosen by CV.

    **The default is not the paper's estimator.** By default the pair
    ``(ridge, reg_lambda)`` is chosen over :data:`DEFAULT_RIDGES` x
    :data:`DEFAULT_REG_LAMBDAS` with a Euclidean ridge term
    (``ridge_metric="identity"``); the ridge grid contains 0, where the fit is
    the paper's estimator. This default is not from the paper: the ridge
    term guards against the high variance of per-task fits with few rows per
    feature, where the paper's estimator can lose to independent ridge (the
    user guide compares the two). It gives up the
    paper's affine invariance: predictions are invariant under a rotation
    and a common rescaling of the features, not
    under features in different units (standardise them, or use the paper's
    estimator). **The paper's estimator (Kim, 2026) is**
    ``RobustMultiTaskRegressorCV(ridges=(0,))``, invariant under any common
    invertible map of the features.

    Each task's rows are shuffled and dealt to ``cv`` folds, so every task
    is in every training fold. For every fold the per-task moments are
    computed once and the whole grid is solved on them (ascending, warm
    started). The score of a grid value is the validation MSE averaged over
    tasks, then over folds (Kim, 2026); the model is refitted on all rows
    with the best value.

    Parameters
    ----------
    reg_lambdas : array-like of float or None, default=None
        The grid of ``q``. ``None``: :data:`DEFAULT_REG_LAMBDAS`, the
        reference grid {0.1, 0.4, 0.7, 1, 2, 4, 8, 12, 16} widened with
        0 (independent least squares), 0.01, 0.03, intermediate values,
        24, 32, 64 and ``inf`` (the pooled fit).
    cv : int, cross-validation generator or iterable, default=5
        An int: that many folds, each task's rows dealt to every fold
        (:class:`WithinTaskKFold`); a splitter: its ``split(X, y, groups)``
        with the task positions as groups; an iterable: ``(train,
        validation)`` row indices.
    random_state : int, RandomState instance or None, default=None
        Seeds the fold assignment when ``cv`` is an int.
    ridges : array-like of float or None, default=None
        The grid of the ridge term's ``rho`` (see
        :class:`RobustMultiTaskRegressor`'s ``ridge``), chosen jointly with
        ``q`` by the same CV. ``None``: :data:`DEFAULT_RIDGES`,
        ``(0, 0.03, 0.1, 0.3, 1, 3)``. ``(0,)``: the paper's estimator.
    task_weight : {"uniform", "n_samples"}, default="uniform"
        Task weights ``w_j``: 1 (the paper's synthetic experiments), or the
        effective ``n_j`` (its HAR script). Decides which pooled fit exact
        fusion reaches: the task-balanced one, or pooled least squares.
    lambda_scale : {"n_features", "rank"}, default="n_features"
        ``d_j`` in ``lambda_j = reg_lambda sqrt(d_j / n_j)``: the number of
        features ``d`` (the paper), or ``rank(Sigma_j)`` (at least 1; the
        rank rule of ``rcond``). The two agree when every ``Sigma_j`` has
        full rank (``n_j >= d``, or ``n_j > d`` with an intercept). With
        ``n_j < d``, ``sqrt(d / n_j)`` changes between the CV folds and the
        refit while ``sqrt(rank / n_j)`` stays near 1, so the CV choice of
        ``reg_lambda`` carries over to the refit. Not from the paper.
    ridge_metric : {"identity", "second_moment"}, default="identity"
        ``M`` of the ridge term (see ``ridge``; no effect when it is 0):
        ``tr(S) / d`` times the identity, with ``S`` the task-weighted mean
        second moment of the features (a plain ridge, as in ridge ITL;
        invariant under rotations and a common rescaling of the features,
        not under a general invertible map), or ``S`` itself (the estimator
        stays invariant under any common invertible map of the features,
        but shrinks little in directions where every task's data are
        weak, which is where a ridge helps).
    fit_intercept : bool, default=True
        Fit an unpenalised intercept per task (the rows of each task are
        centred with their weighted means; the penalty acts on the slopes).
    max_iter : int, default=1000
        Maximum reweighting iterations for ``beta``.
    tol : float, default=1e-10
        Stop when the change of ``beta`` is at most ``tol * (1 +
        ||beta||_S)``, both in the norm of the task-weighted mean second
        moment ``S`` (the pooled root-mean-square prediction; the rule is
        invariant under invertible maps of the features).
    rcond : float or None, default=None
        Eigenvalues of ``Sigma_j`` at most ``rcond`` times the largest count
        as zero (the rank rule; ``None``: machine epsilon times
        ``max(n_j, d)``). Singular ``Sigma_j`` are handled through their
        range, with no added regularisation.
    verbose : int, default=0
        Print the progress of ``fit`` to standard error.
    n_jobs : int or None, default=None
        Threads of the per-task passes, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``: every
        CPU). The result does not depend on it.

    Attributes
    ----------
    reg_lambda_ : float
        The selected ``q``.
    ridge_ : float
        The selected ``rho``.
    cv_results_ : dict of ndarray
        ``reg_lambda``, ``ridge``, ``mean_test_mse`` and ``std_test_mse``
        (over folds) for every pair of grid values: ``ridges`` outer,
        ``reg_lambdas`` inner.
    coef_, intercept_, center_, shrinkage_, outlier_scores_, fused_
        As in :class:`RobustMultiTaskRegressor`, for the refitted model.
    fusion_threshold_, balancedness_, objective_, n_iter_
        As in :class:`RobustMultiTaskRegressor`, for the refitted model.
    tasks_, n_tasks_, task_n_samples_, n_features_in_
        As in :class:`RobustMultiTaskRegressor`, for the refitted model.

    See Also
    --------
    RobustMultiTaskRegressor : The model with fixed ``reg_lambda`` and ``ridge``.
    ARMULRegressorCV : The Euclidean-penalty model, ``reg_lambda`` chosen by CV.
    WithinTaskKFold : The default folds, split within every task.

    Examples
    --------
    >>> from mvlearn_ext.multitask import RobustMultiTaskRegressorCV
    >>> from mvlearn_ext.datasets import make_contaminated_tasks
    >>> data = make_contaminated_tasks(n_tasks=10, n_samples=40, n_features=5, random_state=0)
    >>> model = RobustMultiTaskRegressorCV(fit_intercept=False, random_state=0)
    >>> model = model.fit(data.X, data.y, tasks=data.tasks)
    >>> bool(model.reg_lambda_ in model.cv_results_["reg_lambda"])
    True
    """

    _parameter_constraints: dict = {
        "reg_lambdas": ["array-like", None],
        "cv": CV,
        "random_state": ["random_state"],
        "ridges": ["array-like", None],
        "task_weight": TASK_WEIGHT,
        "lambda_scale": LAMBDA_SCALE,
        "ridge_metric": RIDGE_METRIC,
        **COMMON_CONSTRAINTS,
        **ITER_CONSTRAINTS,
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        reg_lambdas=None,
        *,
        cv=5,
        random_state=None,
        ridges=None,
        task_weight="uniform",
        lambda_scale="n_features",
        ridge_metric="identity",
        fit_intercept=True,
        max_iter=1000,
        tol=1e-10,
        rcond=None,
        verbose=0,
        n_jobs=None,
    ):
        self.reg_lambdas = reg_lambdas
        self.cv = cv
        self.random_state = random_state
        self.ridges = ridges
        self.task_weight = task_weight
        self.lambda_scale = lambda_scale
        self.ridge_metric = ridge_metric
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.rcond = rcond
        self.n_jobs = n_jobs
        self.verbose = verbose

    _coef_attributes = ("center_",)

    def _candidates(self):
        self._qs = check_grid(self.reg_lambdas, DEFAULT_REG_LAMBDAS, "reg_lambdas")
        self._ridges = check_grid(self.ridges, DEFAULT_RIDGES, "ridges", allow_inf=False)
        return [(float(r), float(q)) for r in self._ridges for q in self._qs]

    def _estimator(self, q, ridge=0.0):
        return RobustMultiTaskRegressor(
            reg_lambda=q,
            task_weight=self.task_weight,
            lambda_scale=self.lambda_scale,
            ridge=ridge,
            ridge_metric=self.ridge_metric,
            fit_intercept=self.fit_intercept,
            max_iter=self.max_iter,
            tol=self.tol,
            rcond=self.rcond,
        )

    def _cv_path(self, moments, pairs):
        # one path over q (ascending, warm started) per value of the ridge; every fit
        # that stopped at max_iter is reported (the CV fit warns once, with the count)
        out = []
        for r in self._ridges:
            results, _ = self._estimator(1.0, float(r))._path(moments, self._qs)
            for q, res in zip(self._qs, results, strict=True):
                if not res["converged"]:
                    report_stop(_stop_message(self.max_iter, q, r))
                out.append(res["coef"])
        return out

    def _refit(self, pairs, scores, moments):
        best, mean, std = select_global(scores)
        self.cv_results_ = {
            "reg_lambda": np.tile(self._qs, self._ridges.size),
            "ridge": np.repeat(self._ridges, self._qs.size),
            "mean_test_mse": mean,
            "std_test_mse": std,
        }
        self.ridge_, self.reg_lambda_ = pairs[best]
        self._log(
            f"selected reg_lambda={self.reg_lambda_:g}, ridge={self.ridge_:g} "
            f"(CV MSE {mean[best]:.4g})"
        )
        final = self._estimator(self.reg_lambda_, self.ridge_)
        coef = final._solve(moments)
        for name in (
            "center_",
            "shrinkage_",
            "outlier_scores_",
            "fused_",
            "fusion_threshold_",
            "balancedness_",
            "objective_",
            "n_iter_",
        ):
            setattr(self, name, getattr(final, name))
        return coef


def robust_multitask_regression(X, y, tasks=None, *, reg_lambda=1.0, sample_weight=None, **params):
    """Function twin of :class:`RobustMultiTaskRegressor`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    tasks : array-like of shape (n_samples,), default=None
    reg_lambda : float, default=1.0
    sample_weight : array-like of shape (n_samples,), default=None
    **params
        Other parameters of :class:`RobustMultiTaskRegressor`.

    Returns
    -------
    coef : ndarray of shape (n_tasks, n_features)
    intercept : ndarray of shape (n_tasks,)
    center : ndarray of shape (n_features,)

    See Also
    --------
    RobustMultiTaskRegressor : The estimator this function fits.
    ARMULRegressor : The Euclidean-penalty model.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.multitask import robust_multitask_regression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> y = X @ [1.0, 2.0, 0.0] + 0.1 * rng.normal(size=60)
    >>> coef, intercept, center = robust_multitask_regression(
    ...     X, y, np.repeat([0, 1, 2], 20), reg_lambda=np.inf
    ... )
    >>> np.round(center, 1).tolist()
    [1.0, 2.0, 0.0]
    """
    model = RobustMultiTaskRegressor(reg_lambda=reg_lambda, **params)
    model.fit(X, y, tasks=tasks, sample_weight=sample_weight)
    return model.coef_, model.intercept_, model.center_
