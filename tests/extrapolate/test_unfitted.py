"""Every extrapolation estimator refuses to predict before fit, and without its task."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import check_estimators_unfitted

from mvlearn_ext.extrapolate import (
    CompositionalTaskExtrapolator,
    InductiveCompositionRegressor,
    InductiveTaskRegressor,
    RelationalTaskExtrapolator,
)

ESTIMATORS = [
    CompositionalTaskExtrapolator,
    InductiveCompositionRegressor,
    InductiveTaskRegressor,
    RelationalTaskExtrapolator,
]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_predict_before_fit_raises_not_fitted(cls):
    check_estimators_unfitted(cls.__name__, cls())
    with pytest.raises(NotFittedError):
        cls().predict(np.zeros(3))


def test_predict_without_the_task_is_refused():
    rng = np.random.default_rng(0)
    xs = [np.linspace(0.0, 1.0, 8) for _ in range(4)]
    ys = [a * x**2 + b for a, b, x in zip(rng.normal(size=4), rng.normal(size=4), xs, strict=True)]
    kw = dict(hidden_layer_sizes=(4,), max_iter=5, random_state=0)
    for model in (RelationalTaskExtrapolator(**kw), InductiveTaskRegressor(**kw)):
        model.fit(xs, ys)
        with pytest.raises(ValueError, match="context_x and context_y required"):
            model.predict(xs[0])
        with pytest.raises(ValueError, match="context_y required"):
            model.predict(xs[0], xs[0])
