"""``find_stack_level``: warnings name the user's line, however deep the package's call."""

import sys
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mvlearn_ext.multitask import (
    ARMULRegressor,
    ClusteredARMULRegressor,
    LowRankARMULRegressor,
    RobustMultiTaskRegressor,
)
from mvlearn_ext.utils._warnings import find_stack_level, warn


def _problem(sizes=(9, 15, 40, 12, 25), d=6):
    """Linear tasks around a common centre (as in ``tests/multitask``)."""
    rng = np.random.default_rng(0)
    centre = rng.normal(size=d)
    Xs = [rng.normal(size=(n, d)) for n in sizes]
    ys = [X @ (centre + 0.2 * rng.normal(size=d)) + 0.3 * rng.normal(size=len(X)) for X in Xs]
    return np.vstack(Xs), np.concatenate(ys), np.repeat(np.arange(len(sizes)), sizes)


def test_a_call_from_outside_the_package_is_level_one():
    assert find_stack_level() == 1

    def nested():
        return find_stack_level()

    assert nested() == 1  # the test's own frames are the user's


def test_warn_names_this_line():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        warn("here", RuntimeWarning)
    assert [(w.filename, w.lineno, w.category) for w in record] == [
        (__file__, line, RuntimeWarning)
    ]


@pytest.mark.parametrize(
    "make",
    [
        lambda: RobustMultiTaskRegressor(max_iter=1, tol=1e-13),
        lambda: ARMULRegressor(max_iter=1),
        lambda: ClusteredARMULRegressor(max_iter=1),
        lambda: LowRankARMULRegressor(max_iter=1),
    ],
)
def test_multitask_convergence_warnings_point_at_the_caller(make):
    X, y, tasks = _problem()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        make().fit(X, y, tasks=tasks)
    ours = [w for w in record if issubclass(w.category, ConvergenceWarning)]
    assert ours
    assert {w.filename for w in ours} == {__file__}
