"""The ``...CV`` variants of the multi-task baselines: ``reg_lambda`` by K-fold CV within tasks."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval

from mvlearn_ext.multitask._armul import (
    ARMULRegressor,
    ClusteredARMULRegressor,
    LowRankARMULRegressor,
)
from mvlearn_ext.multitask._base import (
    MultiTaskLinearMixin,
    TaskMoments,
    _sorted_problem,
    single_threaded_blas,
)
from mvlearn_ext.multitask._baselines import (
    IndependentTaskRegressor,
    MeanRegularizedRegressor,
    _ridge_coef,
)
from mvlearn_ext.multitask._cv import cross_validate_path, select_global, select_per_task

__all__ = [
    "ARMULRegressorCV",
    "ClusteredARMULRegressorCV",
    "IndependentTaskRegressorCV",
    "LowRankARMULRegressorCV",
    "MeanRegularizedRegressorCV",
]


class _GridCV(MultiTaskLinearMixin, BaseEstimator):
    """K-fold CV within tasks of a baseline's ``reg_lambda`` (see the subclasses)."""

    _estimator_class = None
    _default_grid = ()
    _per_task = False

    def _estimator(self, value):
        own = set(self._estimator_class._get_param_names()) - {"reg_lambda"}
        params = {k: v for k, v in self.get_params().items() if k in own}
        return self._estimator_class(reg_lambda=value, **params)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, tasks=None, sample_weight=None):
        """Choose ``reg_lambda`` by cross-validation within tasks, then refit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        tasks : array-like of shape (n_samples,), default=None
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        grid = self._default_grid if self.reg_lambdas is None else self.reg_lambdas
        grid = np.asarray(grid, dtype=float).reshape(-1)
        if grid.size == 0 or np.any(np.isnan(grid)) or np.any(grid < 0):
            raise ValueError("reg_lambdas must be a non-empty grid of values >= 0")
        X, y, labels, index, sw = self._validate_fit(X, y, tasks, sample_weight)
        m = labels.shape[0]
        Xs, ys, sws, starts, order = _sorted_problem(X, y, index, sw, m)
        base = self._estimator(float(grid[0]))
        scores = cross_validate_path(
            base._path,
            grid,
            Xs,
            ys,
            index[order],
            sws,
            m,
            n_splits=self.cv,
            random_state=self.random_state,
            fit_intercept=self.fit_intercept,
            rcond=self.rcond,
        )
        with single_threaded_blas():
            return self._refit(grid, scores, Xs, ys, sws, starts, labels, X.dtype)

    def _refit(self, grid, scores, Xs, ys, sws, starts, labels, dtype):
        moments = TaskMoments(Xs, ys, sws, starts, self.fit_intercept, self.rcond)
        if self._per_task:
            best, per_task = select_per_task(scores)
            self.reg_lambda_ = grid[best]
            self.cv_results_ = {"reg_lambda": grid, "mean_test_mse": per_task.T}
            coef = _ridge_coef(moments, self.reg_lambda_)
        else:
            best, mean, std = select_global(scores)
            self.reg_lambda_ = float(grid[best])
            self.cv_results_ = {"reg_lambda": grid, "mean_test_mse": mean, "std_test_mse": std}
            final = self._estimator(self.reg_lambda_)
            coef = final._solve(moments)
            # the fitted attributes of the solve (centre, fusion, iterations, ...)
            for name, value in vars(final).items():
                if name.endswith("_") and not name.startswith("_"):
                    setattr(self, name, value)
        return self._finish(coef, moments, labels, dtype)


_CV_CONSTRAINTS = {
    "reg_lambdas": ["array-like", None],
    "cv": [Interval(Integral, 2, None, closed="left")],
    "random_state": ["random_state"],
}


def _cv_constraints(estimator_class):
    """The CV parameters', then the estimator's own but ``reg_lambda`` (the grid replaces it)."""
    own = estimator_class._parameter_constraints
    skip = {"reg_lambda", *_CV_CONSTRAINTS}
    return {**_CV_CONSTRAINTS, **{k: v for k, v in own.items() if k not in skip}}


_ARMUL_GRID = "0, 21 values from 1e-4 to 10, and inf"

_CV_DOC = """:class:`{name}` with ``reg_lambda`` chosen by K-fold CV within tasks{how}.

    Parameters
    ----------
    reg_lambdas : array-like of float or None, default=None
        The grid (``None``: {grid}).
    cv : int, default=5
    random_state : int, RandomState instance or None, default=None
        Seeds the fold assignment.
    Other parameters as in :class:`{name}`.

    Attributes
    ----------
    reg_lambda_ : {kind}
        The selected value{sel}.
    cv_results_ : dict of ndarray
    coef_, intercept_, tasks_, n_tasks_, task_n_samples_, n_features_in_
        As in :class:`{name}`.
    """


def _cv_doc(name, *, grid=_ARMUL_GRID, how="", kind="float", sel=""):
    """The docstring of the CV variant of the estimator ``name``."""
    return _CV_DOC.format(name=name, how=how, grid=grid, kind=kind, sel=sel)


class IndependentTaskRegressorCV(_GridCV):
    _estimator_class = IndependentTaskRegressor
    _default_grid = (0.0, *np.geomspace(1e-6, 1e2, 25))
    _per_task = True
    _parameter_constraints: dict = _cv_constraints(IndependentTaskRegressor)

    def __init__(
        self, reg_lambdas=None, *, cv=5, random_state=None, fit_intercept=True, rcond=None
    ):
        self.reg_lambdas = reg_lambdas
        self.cv = cv
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.rcond = rcond


class MeanRegularizedRegressorCV(_GridCV):
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
        rcond=None,
    ):
        self.reg_lambdas = reg_lambdas
        self.cv = cv
        self.random_state = random_state
        self.task_weight = task_weight
        self.fit_intercept = fit_intercept
        self.rcond = rcond


class ARMULRegressorCV(_GridCV):
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
        max_iter=1000,
        tol=1e-10,
        rcond=None,
    ):
        self.reg_lambdas = reg_lambdas
        self.cv = cv
        self.random_state = random_state
        self.task_weight = task_weight
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.rcond = rcond


IndependentTaskRegressorCV.__doc__ = _cv_doc(
    "IndependentTaskRegressor",
    grid="0 and 25 values from 1e-6 to 1e2",
    how=", separately for every task",
    kind="ndarray of shape (n_tasks,)",
    sel=" of every task",
)
MeanRegularizedRegressorCV.__doc__ = _cv_doc(
    "MeanRegularizedRegressor", grid="0, 25 values from 1e-6 to 1e2, and inf"
)
ARMULRegressorCV.__doc__ = _cv_doc("ARMULRegressor")


class LowRankARMULRegressorCV(_GridCV):
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
        max_iter=1000,
        tol=1e-10,
        rcond=None,
    ):
        self.reg_lambdas = reg_lambdas
        self.cv = cv
        self.random_state = random_state
        self.rank = rank
        self.task_weight = task_weight
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.rcond = rcond


LowRankARMULRegressorCV.__doc__ = _cv_doc("LowRankARMULRegressor")


class ClusteredARMULRegressorCV(_GridCV):
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
        max_iter=1000,
        max_outer=50,
        tol=1e-10,
        n_init=10,
        rcond=None,
    ):
        self.reg_lambdas = reg_lambdas
        self.cv = cv
        self.random_state = random_state
        self.n_clusters = n_clusters
        self.task_weight = task_weight
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.max_outer = max_outer
        self.tol = tol
        self.n_init = n_init
        self.rcond = rcond


ClusteredARMULRegressorCV.__doc__ = _cv_doc(
    "ClusteredARMULRegressor",
    how=" (``random_state`` seeds the folds and the k-means warm start)",
)
