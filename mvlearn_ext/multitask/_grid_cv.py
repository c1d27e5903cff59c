"""The ``...CV`` variants of the multi-task baselines: ``reg_lambda`` by K-fold CV within tasks."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from mvlearn_ext.multitask._armul import (
    ARMULRegressor,
    ClusteredARMULRegressor,
    LowRankARMULRegressor,
)
from mvlearn_ext.multitask._base import CV
from mvlearn_ext.multitask._baselines import (
    IndependentTaskRegressor,
    MeanRegularizedRegressor,
)
from mvlearn_ext.multitask._cv import MultiTaskCVMixin, check_grid, select_global, select_per_task

__all__ = [
    "ARMULRegressorCV",
    "ClusteredARMULRegressorCV",
    "IndependentTaskRegressorCV",
    "LowRankARMULRegressorCV",
    "MeanRegularizedRegressorCV",
]


class _GridCV(MultiTaskCVMixin, BaseEstimator):
    """K-fold CV within tasks of a baseline's ``reg_lambda`` (see the subclasses)."""

    _estimator_class = None
    _default_grid = ()
    _per_task = False

    def _estimator(self, value):
        own = set(self._estimator_class._get_param_names()) - {"reg_lambda"}
        params = {k: v for k, v in self.get_params().items() if k in own}
        return self._estimator_class(reg_lambda=value, **params)

    def _candidates(self):
        return check_grid(self.reg_lambdas, self._default_grid, "reg_lambdas")

    def _cv_path(self, moments, grid):
        return self._estimator(float(grid[0]))._path(moments, grid)

    def _refit(self, grid, scores, moments):
        if self._per_task:
            best, per_task = select_per_task(scores)
            self.reg_lambda_ = grid[best]
            self.cv_results_ = {"reg_lambda": grid, "mean_test_mse": per_task.T}
            return self._estimator(0.0)._path_per_task(moments, self.reg_lambda_)
        best, mean, std = select_global(scores)
        self.reg_lambda_ = float(grid[best])
        self.cv_results_ = {"reg_lambda": grid, "mean_test_mse": mean, "std_test_mse": std}
        final = self._estimator(self.reg_lambda_)
        coef = final._solve(moments)
        # the fitted attributes of the solve (centre, fusion, iterations, ...)
        for name, value in vars(final).items():
            if name.endswith("_") and not name.startswith("_"):
                setattr(self, name, value)
        self._coef_attributes = final._coef_attributes
        self._penalty_attributes = final._penalty_attributes
        return coef


_CV_CONSTRAINTS = {
    "reg_lambdas": ["array-like", None],
    "cv": CV,
    "random_state": ["random_state"],
}


def _cv_constraints(estimator_class):
    """The CV parameters', then the estimator's own but ``reg_lambda`` (the grid replaces it)."""
    own = estimator_class._parameter_constraints
    skip = {"reg_lambda", *_CV_CONSTRAINTS}
    return {**_CV_CONSTRAINTS, **{k: v for k, v in own.items() if k not in skip}}


class IndependentTaskRegressorCV(_GridCV):
    """:class:`IndependentTaskRegressor` with ``reg_lambda`` chosen by CV for every task.

    Parameters
    ----------
    reg_lambdas : array-like of float or None, default=None
        The grid (``None``: 0 and 25 values from 1e-6 to 1e2).
    cv : int, cross-validation generator or iterable, default=5
        An int: that many folds, each task's rows dealt to every fold
        (:class:`WithinTaskKFold`); a splitter: its ``split(X, y, groups)``
        with the task positions as groups; an iterable: ``(train,
        validation)`` row indices. The score of a value is the validation
        MSE averaged over tasks, then over splits.
    random_state : int, RandomState instance or None, default=None
        Seeds the fold assignment when ``cv`` is an int.
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
    reg_lambda_ : ndarray of shape (n_tasks,)
        The selected value of every task.
    cv_results_ : dict of ndarray
        ``reg_lambda`` and ``mean_test_mse`` (and ``std_test_mse`` over splits).
    coef_, intercept_, tasks_, n_tasks_, task_n_samples_, n_features_in_
        As in :class:`IndependentTaskRegressor`, for the model refitted on all rows.

    See Also
    --------
    IndependentTaskRegressor : The baseline with a fixed ``reg_lambda``.
    ARMULRegressorCV : Tasks pulled to a shared centre, ``reg_lambda`` chosen by CV.

    Examples
    --------
    >>> from mvlearn_ext.multitask import IndependentTaskRegressorCV
    >>> from mvlearn_ext.datasets import make_contaminated_tasks
    >>> data = make_contaminated_tasks(n_tasks=10, n_samples=40, n_features=5, random_state=0)
    >>> model = IndependentTaskRegressorCV(reg_lambdas=[0.1, 1.0], cv=3, random_state=0)
    >>> model = model.fit(data.X, data.y, tasks=data.tasks)
    >>> model.reg_lambda_.shape, model.coef_.shape
    ((10,), (10, 5))
    """

    _estimator_class = IndependentTaskRegressor
    _default_grid = (0.0, *np.geomspace(1e-6, 1e2, 25))
    _per_task = True
    _parameter_constraints: dict = _cv_constraints(IndependentTaskRegressor)

    def __init__(
        self,
        reg_lambdas=None,
        *,
        cv=5,
        random_state=None,
        fit_intercept=True,
        rcond=None,
        n_jobs=None,
    ):
        self.reg_lambdas = reg_lambdas
        self.cv = cv
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.rcond = rcond
        self.n_jobs = n_jobs


class MeanRegularizedRegressorCV(_GridCV):
    """:class:`MeanRegularizedRegressor` with ``reg_lambda`` chosen by CV within tasks.

    Parameters
    ----------
    reg_lambdas : array-like of float or None, default=None
        The grid (``None``: 0, 25 values from 1e-6 to 1e2, and inf).
    cv : int, cross-validation generator or iterable, default=5
        An int: that many folds, each task's rows dealt to every fold
        (:class:`WithinTaskKFold`); a splitter: its ``split(X, y, groups)``
        with the task positions as groups; an iterable: ``(train,
        validation)`` row indices. The score of a value is the validation
        MSE averaged over tasks, then over splits.
    random_state : int, RandomState instance or None, default=None
        Seeds the fold assignment when ``cv`` is an int.
    task_weight : {"uniform", "n_samples"}, default="uniform"
        Task weights ``w_j`` of the objective (1, or ``n_j``), as in
        :class:`MeanRegularizedRegressor`.
    fit_intercept : bool, default=True
        An unpenalised intercept per task.
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
        Rank rule of the least-squares solutions (see
        :class:`RobustMultiTaskRegressor`).
    n_jobs : int or None, default=None
        Threads of the per-task passes, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``: every
        CPU). The result does not depend on it.

    Attributes
    ----------
    reg_lambda_ : float
        The selected value.
    cv_results_ : dict of ndarray
        ``reg_lambda`` and ``mean_test_mse`` (and ``std_test_mse`` over splits).
    coef_, intercept_, tasks_, n_tasks_, task_n_samples_, n_features_in_
        As in :class:`MeanRegularizedRegressor`, for the model refitted on all rows.

    See Also
    --------
    MeanRegularizedRegressor : The model with a fixed ``reg_lambda``.
    ARMULRegressorCV : The robust penalty, ``reg_lambda`` chosen by CV.

    Examples
    --------
    >>> from mvlearn_ext.multitask import MeanRegularizedRegressorCV
    >>> from mvlearn_ext.datasets import make_contaminated_tasks
    >>> data = make_contaminated_tasks(n_tasks=10, n_samples=40, n_features=5, random_state=0)
    >>> model = MeanRegularizedRegressorCV(reg_lambdas=[0.1, 1.0], cv=3, random_state=0)
    >>> model = model.fit(data.X, data.y, tasks=data.tasks)
    >>> model.reg_lambda_ in (0.1, 1.0), model.coef_.shape
    (True, (10, 5))
    """

    _estimator_class = MeanRegularizedRegressor
    _default_grid = (0.0, *np.geomspace(1e-6, 1e2, 25), np.inf)
    _parameter_constraints: dict = _cv_constraints(MeanRegularizedRegressor)

    def __init__(
        self,
        reg_lambdas=None,
        *,
        cv=5,
        random_state=None,
        task_weight="uniform",
        fit_intercept=True,
        scaling="global",
        rcond=None,
        n_jobs=None,
    ):
        self.reg_lambdas = reg_lambdas
        self.cv = cv
        self.random_state = random_state
        self.task_weight = task_weight
        self.fit_intercept = fit_intercept
        self.scaling = scaling
        self.rcond = rcond
        self.n_jobs = n_jobs


class ARMULRegressorCV(_GridCV):
    """:class:`ARMULRegressor` with ``reg_lambda`` chosen by CV within tasks.

    Parameters
    ----------
    reg_lambdas : array-like of float or None, default=None
        The grid (``None``: 0, 21 values from 1e-4 to 10, and inf).
    cv : int, cross-validation generator or iterable, default=5
        An int: that many folds, each task's rows dealt to every fold
        (:class:`WithinTaskKFold`); a splitter: its ``split(X, y, groups)``
        with the task positions as groups; an iterable: ``(train,
        validation)`` row indices. The score of a value is the validation
        MSE averaged over tasks, then over splits.
    random_state : int, RandomState instance or None, default=None
        Seeds the fold assignment when ``cv`` is an int.
    task_weight : {"uniform", "n_samples"}, default="n_samples"
        Task weights ``w_j`` of the objective (1, or ``n_j``), as in
        :class:`ARMULRegressor`.
    fit_intercept : bool, default=True
        An unpenalised intercept per task.
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
        Rank rule of the least-squares solutions (see
        :class:`RobustMultiTaskRegressor`).
    n_jobs : int or None, default=None
        Threads of the per-task passes, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``: every
        CPU). The result does not depend on it.

    Attributes
    ----------
    reg_lambda_ : float
        The selected value.
    cv_results_ : dict of ndarray
        ``reg_lambda`` and ``mean_test_mse`` (and ``std_test_mse`` over splits).
    coef_, intercept_, tasks_, n_tasks_, task_n_samples_, n_features_in_
        As in :class:`ARMULRegressor`, for the model refitted on all rows.

    See Also
    --------
    ARMULRegressor : The model with a fixed ``reg_lambda``.
    WithinTaskKFold : The default folds, split within every task.
    RobustMultiTaskRegressorCV : The robust model with ``reg_lambda`` and ridge chosen by CV.

    Examples
    --------
    >>> from mvlearn_ext.multitask import ARMULRegressorCV
    >>> from mvlearn_ext.datasets import make_contaminated_tasks
    >>> data = make_contaminated_tasks(n_tasks=10, n_samples=40, n_features=5, random_state=0)
    >>> model = ARMULRegressorCV(reg_lambdas=[0.5, 2.0], cv=3, fit_intercept=False, random_state=0)
    >>> model = model.fit(data.X, data.y, tasks=data.tasks)
    >>> model.reg_lambda_ in (0.5, 2.0), model.coef_.shape
    (True, (10, 5))
    """

    _estimator_class = ARMULRegressor
    _default_grid = (0.0, *np.geomspace(1e-4, 10.0, 21), np.inf)
    _parameter_constraints: dict = _cv_constraints(ARMULRegressor)

    def __init__(
        self,
        reg_lambdas=None,
        *,
        cv=5,
        random_state=None,
        task_weight="n_samples",
        fit_intercept=True,
        scaling="global",
        max_iter=1000,
        tol=1e-10,
        rcond=None,
        n_jobs=None,
    ):
        self.reg_lambdas = reg_lambdas
        self.cv = cv
        self.random_state = random_state
        self.task_weight = task_weight
        self.fit_intercept = fit_intercept
        self.scaling = scaling
        self.max_iter = max_iter
        self.tol = tol
        self.rcond = rcond
        self.n_jobs = n_jobs


class LowRankARMULRegressorCV(_GridCV):
    """:class:`LowRankARMULRegressor` with ``reg_lambda`` chosen by CV within tasks.

    Parameters
    ----------
    reg_lambdas : array-like of float or None, default=None
        The grid (``None``: 0, 21 values from 1e-4 to 10, and inf).
    cv : int, cross-validation generator or iterable, default=5
        An int: that many folds, each task's rows dealt to every fold
        (:class:`WithinTaskKFold`); a splitter: its ``split(X, y, groups)``
        with the task positions as groups; an iterable: ``(train,
        validation)`` row indices. The score of a value is the validation
        MSE averaged over tasks, then over splits.
    random_state : int, RandomState instance or None, default=None
        Seeds the fold assignment when ``cv`` is an int.
    rank : int, default=3
        Dimension of the shared subspace (clipped to ``min(n_tasks,
        n_features)``).
    task_weight : {"uniform", "n_samples"}, default="n_samples"
        Task weights ``w_j`` of the objective (1, or ``n_j``), as in
        :class:`LowRankARMULRegressor`.
    fit_intercept : bool, default=True
        An unpenalised intercept per task.
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
        Rank rule of the least-squares solutions (see
        :class:`RobustMultiTaskRegressor`).
    n_jobs : int or None, default=None
        Threads of the per-task passes, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``: every
        CPU). The result does not depend on it.

    Attributes
    ----------
    reg_lambda_ : float
        The selected value.
    cv_results_ : dict of ndarray
        ``reg_lambda`` and ``mean_test_mse`` (and ``std_test_mse`` over splits).
    coef_, intercept_, tasks_, n_tasks_, task_n_samples_, n_features_in_
        As in :class:`LowRankARMULRegressor`, for the model refitted on all rows.

    See Also
    --------
    LowRankARMULRegressor : The model with a fixed ``reg_lambda``.
    ARMULRegressorCV : One shared centre, ``reg_lambda`` chosen by CV.

    Examples
    --------
    >>> from mvlearn_ext.multitask import LowRankARMULRegressorCV
    >>> from mvlearn_ext.datasets import make_contaminated_tasks
    >>> data = make_contaminated_tasks(n_tasks=10, n_samples=40, n_features=5, random_state=0)
    >>> model = LowRankARMULRegressorCV(reg_lambdas=[0.5, 2.0], cv=3, rank=2, random_state=0)
    >>> model = model.fit(data.X, data.y, tasks=data.tasks)
    >>> model.reg_lambda_ in (0.5, 2.0), model.components_.shape
    (True, (2, 5))
    """

    _estimator_class = LowRankARMULRegressor
    _default_grid = ARMULRegressorCV._default_grid
    _parameter_constraints: dict = _cv_constraints(LowRankARMULRegressor)

    def __init__(
        self,
        reg_lambdas=None,
        *,
        cv=5,
        random_state=None,
        rank=3,
        task_weight="n_samples",
        fit_intercept=True,
        scaling="global",
        max_iter=1000,
        tol=1e-10,
        rcond=None,
        n_jobs=None,
    ):
        self.reg_lambdas = reg_lambdas
        self.cv = cv
        self.random_state = random_state
        self.rank = rank
        self.task_weight = task_weight
        self.fit_intercept = fit_intercept
        self.scaling = scaling
        self.max_iter = max_iter
        self.tol = tol
        self.rcond = rcond
        self.n_jobs = n_jobs


class ClusteredARMULRegressorCV(_GridCV):
    """:class:`ClusteredARMULRegressor` with ``reg_lambda`` chosen by CV within tasks.

    Parameters
    ----------
    reg_lambdas : array-like of float or None, default=None
        The grid (``None``: 0, 21 values from 1e-4 to 10, and inf).
    cv : int, cross-validation generator or iterable, default=5
        An int: that many folds, each task's rows dealt to every fold
        (:class:`WithinTaskKFold`); a splitter: its ``split(X, y, groups)``
        with the task positions as groups; an iterable: ``(train,
        validation)`` row indices. The score of a value is the validation
        MSE averaged over tasks, then over splits.
    random_state : int, RandomState instance or None, default=None
        Seeds the fold assignment when ``cv`` is an int, and the k-means warm start.
    n_clusters : int, default=3
        Number of prototypes; at most the number of tasks.
    task_weight : {"uniform", "n_samples"}, default="n_samples"
        Task weights ``w_j`` of the objective (1, or ``n_j``), as in
        :class:`ClusteredARMULRegressor`.
    fit_intercept : bool, default=True
        An unpenalised intercept per task.
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
        Most alternations of prototype updates and reassignments (a fit whose
        tasks still change clusters after them counts in the one
        ``ConvergenceWarning`` of the fit).
    tol : float, default=1e-10
        L-BFGS gradient tolerance (relative to the gradient at the start).
    n_init : int, default=10
        Restarts of the warm-start k-means.
    rcond : float or None, default=None
        Rank rule of the least-squares solutions (see
        :class:`RobustMultiTaskRegressor`).
    n_jobs : int or None, default=None
        Threads of the per-task passes, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``: every
        CPU). The result does not depend on it.

    Attributes
    ----------
    reg_lambda_ : float
        The selected value.
    cv_results_ : dict of ndarray
        ``reg_lambda`` and ``mean_test_mse`` (and ``std_test_mse`` over splits).
    coef_, intercept_, tasks_, n_tasks_, task_n_samples_, n_features_in_
        As in :class:`ClusteredARMULRegressor`, for the model refitted on all rows.

    See Also
    --------
    ClusteredARMULRegressor : The model with a fixed ``reg_lambda``.
    ARMULRegressorCV : One shared centre, ``reg_lambda`` chosen by CV.

    Examples
    --------
    >>> from mvlearn_ext.multitask import ClusteredARMULRegressorCV
    >>> from mvlearn_ext.datasets import make_contaminated_tasks
    >>> data = make_contaminated_tasks(n_tasks=10, n_samples=40, n_features=5, random_state=0)
    >>> model = ClusteredARMULRegressorCV(
    ...     reg_lambdas=[0.5, 2.0], cv=3, n_clusters=2, random_state=0
    ... )
    >>> model = model.fit(data.X, data.y, tasks=data.tasks)
    >>> model.reg_lambda_ in (0.5, 2.0), model.labels_.shape
    (True, (10,))
    """

    _estimator_class = ClusteredARMULRegressor
    _default_grid = ARMULRegressorCV._default_grid
    _parameter_constraints: dict = _cv_constraints(ClusteredARMULRegressor)

    def __init__(
        self,
        reg_lambdas=None,
        *,
        cv=5,
        random_state=None,
        n_clusters=3,
        task_weight="n_samples",
        fit_intercept=True,
        scaling="global",
        max_iter=1000,
        max_outer=50,
        tol=1e-10,
        n_init=10,
        rcond=None,
        n_jobs=None,
    ):
        self.reg_lambdas = reg_lambdas
        self.cv = cv
        self.random_state = random_state
        self.n_clusters = n_clusters
        self.task_weight = task_weight
        self.fit_intercept = fit_intercept
        self.scaling = scaling
        self.max_iter = max_iter
        self.max_outer = max_outer
        self.tol = tol
        self.n_init = n_init
        self.rcond = rcond
        self.n_jobs = n_jobs
