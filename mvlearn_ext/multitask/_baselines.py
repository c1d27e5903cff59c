"""Closed-form baselines of robust multi-task regression, and their shared pieces.

* :class:`IndependentTaskRegressor` - one least-squares (or ridge) fit per task.
* :class:`PooledRegressor` - one fit for all tasks (data pooling).
* :class:`MeanRegularizedRegressor` - the naive squared Euclidean penalty
  ``lambda/2 ||theta_j - beta||^2`` (mean-regularised MTL, Evgeniou & Pontil,
  2004; ARMUL's ``penalty='ridge'``), in closed form.

The ARMUL baselines are in :mod:`._armul`, the ``...CV`` variants in :mod:`._grid_cv`.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, _fit_context

from mvlearn_ext.multitask._base import (
    COMMON_CONSTRAINTS,
    REG_LAMBDA,
    SCALING,
    TASK_WEIGHT,
    MultiTaskLinearMixin,
    one_fit,
)
from mvlearn_ext.multitask._kernels import irls_center

__all__ = [
    "IndependentTaskRegressor",
    "MeanRegularizedRegressor",
    "PooledRegressor",
]


def ridge_units(value, scale):
    """A ridge strength on the coefficients of ``X`` in the units of ``X / scale``.

    ``value/2 ||theta||^2`` is ``value / scale^2 / 2 ||scale theta||^2``;
    divided twice so that ``scale^2`` cannot underflow (an overflow to
    ``inf`` is the ridge's own limit, coefficients 0).
    """
    with np.errstate(over="ignore"):
        return float(value) / scale / scale


def _pooled(moments, w, ridge=0.0):
    """``(sum_j w_j (Sigma_j + ridge I))^+ sum_j w_j b_j`` (0 for an infinite ridge)."""
    if np.isinf(ridge):
        return np.zeros(moments.d)
    if ridge == 0.0:
        lam = np.full(moments.m, np.inf)
        beta, _, _, _, _ = irls_center(
            moments.Sigma,
            moments.b,
            moments.b,
            lam,
            w,
            np.zeros(moments.d),
            1,
            0.0,
            moments.rcond,
        )
        return beta
    # normalised weights: the ridge enters as itself, and a large one cannot overflow
    w = w / w.sum()
    M = np.tensordot(w, moments.Sigma, axes=1) + ridge * np.eye(moments.d)
    return np.linalg.solve(M, w @ moments.b)


def _ridge_coef(moments, lam):
    """Per-task ridge ``(Sigma_j + lam_j I)^{-1} b_j``; ``lam_j = 0``: minimum norm."""
    lam = np.broadcast_to(np.asarray(lam, dtype=float), (moments.m,))
    e, V = moments.evals, moments.evecs
    bt = np.einsum("jkl,jk->jl", V, moments.b)
    den = e + lam[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(den > 0, 1.0 / den, 0.0)
    # Null directions of Sigma_j carry no b_j (b_j lies in the range).
    scale = np.where(e > 0, scale, 0.0)
    return np.einsum("jkl,jl->jk", V, bt * scale)


def _fill_null(moments, coef, beta):
    """``coef_j + (I - P_j) beta_j``: null directions of ``Sigma_j`` from ``beta``.

    ``beta`` is one centre of shape ``(d,)`` or one per task, ``(m, d)``.
    """
    V = moments.evecs
    null = moments.evals <= 0
    beta = np.broadcast_to(beta, (moments.m, moments.d))
    bt = np.einsum("jkl,jk->jl", V, beta) * null
    return coef + np.einsum("jkl,jl->jk", V, bt)


def _least_squares_fits(moments, center):
    """Per-task minimum-norm least squares, null directions of ``Sigma_j`` from ``center``."""
    return _fill_null(moments, _ridge_coef(moments, 0.0), center)


def _normalised_weights(moments, task_weight):
    """The task weights ``w_j`` scaled to sum to one."""
    w = moments.task_weights(task_weight)
    return w / w.sum()


class _Common:
    _parameter_constraints: dict = {**COMMON_CONSTRAINTS}

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, tasks=None, sample_weight=None):
        """Fit one linear model per task.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows of all tasks, stacked.
        y : array-like of shape (n_samples,)
        tasks : array-like of shape (n_samples,), default=None
            The task label of every row (``None``: one task).
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        return self._fit(X, y, tasks, sample_weight)

    def _solve(self, moments):
        return self._path(moments, [self.reg_lambda])[0]

    def _path(self, moments, grid):
        # one independent solve per value (estimators with a warm-started path override
        # this); a value whose solves stop at max_iter is reported once
        out = []
        for value in grid:
            with one_fit():
                out.append(self._solve_one(moments, float(value)))
        return out


class IndependentTaskRegressor(_Common, MultiTaskLinearMixin, BaseEstimator):
    """Independent task learning: least squares (or ridge) on every task alone.

    ``theta_j = (Sigma_j + reg_lambda I)^{-1} b_j``, the minimiser of
    ``1/(2 n_j) ||y_j - X_j theta||^2 + reg_lambda/2 ||theta||^2``; at
    ``reg_lambda = 0`` the minimum-norm least-squares solution (exact for
    ``n_j < d``).

    Parameters
    ----------
    reg_lambda : float, default=0.0
        Ridge strength (0: least squares).
    fit_intercept : bool, default=True
        An unpenalised intercept per task.
    rcond : float or None, default=None
        Rank rule of the least-squares solutions (see
        :class:`RobustMultiTaskRegressor`).
    n_jobs : int or None, default=None
        Threads of the per-task passes, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``: every
        CPU). The result does not depend on it.

    Attributes
    ----------
    coef_ : ndarray of shape (n_tasks, n_features)
    intercept_ : ndarray of shape (n_tasks,)
    tasks_ : ndarray of shape (n_tasks,)
    n_tasks_ : int
    task_n_samples_ : ndarray of shape (n_tasks,)
    n_features_in_ : int

    See Also
    --------
    IndependentTaskRegressorCV : The same baseline with ``reg_lambda`` chosen by CV for every task.
    PooledRegressor : One coefficient vector for all tasks, the other extreme.
    ARMULRegressor : Tasks pulled to a shared centre, robust to outlier tasks.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.multitask import IndependentTaskRegressor
    >>> X = np.arange(12.0).reshape(6, 2) ** 1.5
    >>> y = X @ [1.0, -1.0]
    >>> model = IndependentTaskRegressor(fit_intercept=False).fit(X, y, tasks=[0, 0, 0, 1, 1, 1])
    >>> np.round(model.coef_, 6).tolist()
    [[1.0, -1.0], [1.0, -1.0]]
    """

    _parameter_constraints: dict = {"reg_lambda": REG_LAMBDA, **COMMON_CONSTRAINTS}

    def __init__(self, reg_lambda=0.0, *, fit_intercept=True, rcond=None, n_jobs=None):
        self.reg_lambda = reg_lambda
        self.fit_intercept = fit_intercept
        self.rcond = rcond
        self.n_jobs = n_jobs

    def _path(self, moments, grid):
        return [_ridge_coef(moments, ridge_units(lam, moments.penalty_scale)) for lam in grid]

    def _path_per_task(self, moments, lams):
        """The fit with a ridge strength per task (``lams`` of shape (n_tasks,))."""
        return _ridge_coef(moments, [ridge_units(lam, moments.penalty_scale) for lam in lams])


class PooledRegressor(_Common, MultiTaskLinearMixin, BaseEstimator):
    """Data pooling: one coefficient vector for all tasks.

    ``beta = (sum_j w_j (Sigma_j + reg_lambda I))^+ sum_j w_j b_j``; with
    ``task_weight="n_samples"`` and ``reg_lambda=0`` this is least squares on
    the stacked rows (with per-task intercepts under ``fit_intercept``).

    Parameters
    ----------
    reg_lambda : float, default=0.0
        Ridge strength (``inf``: all coefficients 0).
    task_weight : {"uniform", "n_samples"}, default="n_samples"
    fit_intercept : bool, default=True
        An unpenalised intercept per task.
    rcond : float or None, default=None
    n_jobs : int or None, default=None
        Threads of the per-task passes, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``: every
        CPU). The result does not depend on it.

    Attributes
    ----------
    coef_ : ndarray of shape (n_tasks, n_features)
        The pooled vector, repeated for every task.
    center_ : ndarray of shape (n_features,)
    intercept_, tasks_, n_tasks_, task_n_samples_, n_features_in_
        As in :class:`IndependentTaskRegressor`.

    See Also
    --------
    IndependentTaskRegressor : Every task fitted alone, the other extreme.
    ARMULRegressor : Tasks pulled to a shared centre, in between.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.multitask import PooledRegressor
    >>> X = np.arange(12.0).reshape(6, 2) ** 1.5
    >>> y = X @ [1.0, -1.0]
    >>> model = PooledRegressor(fit_intercept=False).fit(X, y, tasks=[0, 0, 0, 1, 1, 1])
    >>> np.round(model.coef_, 6).tolist()
    [[1.0, -1.0], [1.0, -1.0]]
    """

    _parameter_constraints: dict = {
        "reg_lambda": REG_LAMBDA,
        "task_weight": TASK_WEIGHT,
        **COMMON_CONSTRAINTS,
    }

    _coef_attributes = ("center_",)

    def __init__(
        self,
        reg_lambda=0.0,
        *,
        task_weight="n_samples",
        fit_intercept=True,
        rcond=None,
        n_jobs=None,
    ):
        self.reg_lambda = reg_lambda
        self.task_weight = task_weight
        self.fit_intercept = fit_intercept
        self.rcond = rcond
        self.n_jobs = n_jobs

    def _path(self, moments, grid):
        w = moments.task_weights(self.task_weight)
        out = []
        for lam in grid:
            beta = _pooled(moments, w, ridge_units(lam, moments.penalty_scale))
            self.center_ = beta
            out.append(np.tile(beta, (moments.m, 1)))
        return out


class MeanRegularizedRegressor(_Common, MultiTaskLinearMixin, BaseEstimator):
    """The naive (squared, Euclidean) penalty towards a shared mean.

    Minimises ``sum_j w_j [ 1/(2 n_j) ||y_j - X_j theta_j||^2 + reg_lambda/2
    ||theta_j - beta||^2 ]`` over ``theta_j`` and ``beta`` (mean-regularised
    multi-task learning, Evgeniou & Pontil, 2004; ARMUL's ``penalty='ridge'``).
    Closed form: ``theta_j = (Sigma_j + lambda I)^{-1} (b_j + lambda beta)``
    and ``beta`` solves ``sum_j w_j Sigma_j (Sigma_j + lambda I)^{-1} beta =
    sum_j w_j (Sigma_j + lambda I)^{-1} b_j``. Not robust: one far task moves
    ``beta`` without bound. ``reg_lambda = 0`` gives independent least
    squares, ``inf`` the pooled fit.

    Parameters
    ----------
    reg_lambda : float, default=1.0
    task_weight : {"uniform", "n_samples"}, default="uniform"
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
    rcond : float or None, default=None
    n_jobs : int or None, default=None
        Threads of the per-task passes, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``: every
        CPU). The result does not depend on it.

    Attributes
    ----------
    coef_, intercept_, center_, tasks_, n_tasks_, task_n_samples_, n_features_in_
        As in :class:`PooledRegressor`.

    See Also
    --------
    MeanRegularizedRegressorCV : The same model with ``reg_lambda`` chosen by cross-validation.
    ARMULRegressor : The robust (norm, not squared) penalty, which lets outlier tasks go.

    Examples
    --------
    >>> from mvlearn_ext.multitask import MeanRegularizedRegressor
    >>> from mvlearn_ext.datasets import make_contaminated_tasks
    >>> data = make_contaminated_tasks(n_tasks=10, n_samples=40, n_features=5, random_state=0)
    >>> model = MeanRegularizedRegressor(reg_lambda=1.0).fit(data.X, data.y, tasks=data.tasks)
    >>> model.coef_.shape
    (10, 5)
    """

    _parameter_constraints: dict = {
        "reg_lambda": REG_LAMBDA,
        "task_weight": TASK_WEIGHT,
        "scaling": SCALING,
        **COMMON_CONSTRAINTS,
    }

    _coef_attributes = ("center_",)

    def __init__(
        self,
        reg_lambda=1.0,
        *,
        task_weight="uniform",
        fit_intercept=True,
        scaling="global",
        rcond=None,
        n_jobs=None,
    ):
        self.reg_lambda = reg_lambda
        self.task_weight = task_weight
        self.fit_intercept = fit_intercept
        self.scaling = scaling
        self.rcond = rcond
        self.n_jobs = n_jobs

    def _path(self, moments, grid):
        w = moments.task_weights(self.task_weight)
        e, V = moments.evals, moments.evecs
        bt = np.einsum("jkl,jk->jl", V, moments.b)
        out = []
        for lam in grid:
            lam = ridge_units(lam, moments.penalty_scale)
            if lam == 0.0 or np.isinf(lam):
                beta = _pooled(moments, w)
                self.center_ = beta
                if np.isinf(lam):
                    out.append(np.tile(beta, (moments.m, 1)))
                else:
                    out.append(_least_squares_fits(moments, beta))
                continue
            inv = 1.0 / (e + lam)
            VT = np.swapaxes(V, 1, 2)
            M = np.tensordot(w, np.matmul(V * (e * inv)[:, None, :], VT), axes=1)
            rhs = w @ np.einsum("jkl,jl->jk", V, bt * inv)
            beta = np.linalg.lstsq(M, rhs, rcond=None)[0]
            btb = np.einsum("jkl,k->jl", V, beta)
            # lam / (e + lam) <= 1: no overflow for a huge finite lam
            coef = np.einsum("jkl,jl->jk", V, bt * inv + btb * (lam * inv))
            self.center_ = beta
            out.append(coef)
        return out
