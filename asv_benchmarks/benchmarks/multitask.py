"""Robust multi-task regression and its baselines: fit time on contaminated tasks."""

from mvlearn_ext.datasets import make_contaminated_tasks
from mvlearn_ext.multitask import (
    IndependentTaskRegressor,
    PooledRegressor,
    RobustMultiTaskRegressor,
)

MAKERS = {
    "RobustMultiTaskRegressor": RobustMultiTaskRegressor,
    "IndependentTaskRegressor": IndependentTaskRegressor,
    "PooledRegressor": PooledRegressor,
}


class ContaminatedTasksFit:
    params = list(MAKERS)
    param_names = ["estimator"]

    def setup(self, name):
        self.data = make_contaminated_tasks(random_state=0)
        self._fit(name)

    def _fit(self, name):
        return MAKERS[name]().fit(self.data.X, self.data.y, tasks=self.data.tasks)

    def time_fit(self, name):
        self._fit(name)
