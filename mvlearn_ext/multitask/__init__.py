"""Robust multi-task linear regression and its baselines.

* :class:`RobustMultiTaskRegressor` / :class:`RobustMultiTaskRegressorCV`:
  tasks shrunk towards a shared centre in each task's own covariance
  geometry (Kim, ICML 2026), solved exactly. The CV variant's default adds a
  Euclidean ridge term chosen by CV (not from the paper; ``ridges=(0,)`` is
  the paper's estimator).
* :class:`ARMULRegressor`, :class:`ClusteredARMULRegressor`, :class:`LowRankARMULRegressor`,
  :class:`IndependentTaskRegressor`, :class:`PooledRegressor`,
  :class:`MeanRegularizedRegressor` (and their ``...CV`` variants):
  the baselines, each solved to tolerance.

All estimators take the rows of every task stacked in ``X, y`` with a task
label per row: ``fit(X, y, tasks=...)``, ``predict(X, tasks=...)``
(``tasks`` is routed as metadata through ``Pipeline`` and ``GridSearchCV``
when scikit-learn's metadata routing is enabled), or lists of per-task
arrays via ``fit_tasks(Xs, ys)``.
"""

from mvlearn_ext.multitask._armul import (
    ARMULRegressor,
    ClusteredARMULRegressor,
    LowRankARMULRegressor,
)
from mvlearn_ext.multitask._base import WithinTaskKFold, stack_tasks
from mvlearn_ext.multitask._baselines import (
    IndependentTaskRegressor,
    MeanRegularizedRegressor,
    PooledRegressor,
)
from mvlearn_ext.multitask._grid_cv import (
    ARMULRegressorCV,
    ClusteredARMULRegressorCV,
    IndependentTaskRegressorCV,
    LowRankARMULRegressorCV,
    MeanRegularizedRegressorCV,
)
from mvlearn_ext.multitask._robust import (
    DEFAULT_REG_LAMBDAS,
    DEFAULT_RIDGES,
    RobustMultiTaskRegressor,
    RobustMultiTaskRegressorCV,
    robust_multitask_regression,
)

__all__ = [
    "ARMULRegressor",
    "ARMULRegressorCV",
    "ClusteredARMULRegressor",
    "ClusteredARMULRegressorCV",
    "DEFAULT_REG_LAMBDAS",
    "DEFAULT_RIDGES",
    "IndependentTaskRegressor",
    "IndependentTaskRegressorCV",
    "LowRankARMULRegressor",
    "LowRankARMULRegressorCV",
    "MeanRegularizedRegressor",
    "MeanRegularizedRegressorCV",
    "PooledRegressor",
    "RobustMultiTaskRegressor",
    "RobustMultiTaskRegressorCV",
    "WithinTaskKFold",
    "robust_multitask_regression",
    "stack_tasks",
]
