"""ControlG: settings checked at construction, observe() leaves no half-updated state."""

import numpy as np
import pytest

from mvlearn_ext.moo.controlg import ControlGScheduler, PIDController


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"eps": "a"}, TypeError, "eps must be a real number"),
        ({"eps": -1.0}, ValueError, "eps must be >= 0"),
        ({"kappa": "a"}, TypeError, "kappa must be a real number"),
        ({"kappa": -0.5}, ValueError, "kappa must be >= 0"),
        ({"antagonism_smoothing": 2.0}, ValueError, "antagonism_smoothing must be <= 1"),
        ({"kp": "a"}, TypeError, "kp must be a real number"),
        ({"ki": np.nan}, ValueError, "ki must be finite"),
        ({"kd": None}, TypeError, "kd must be a real number"),
        ({"integral_limit": -1.0}, ValueError, "integral_limit must be >= 0"),
    ],
)
def test_scheduler_checks_settings_at_construction(kwargs, error, match):
    with pytest.raises(error, match=match):
        ControlGScheduler(n_objectives=2, **kwargs)


def test_pid_checks_gains_and_keeps_an_infinite_limit():
    with pytest.raises(TypeError, match="kp must be a real number"):
        PIDController(kp="a")
    np.testing.assert_allclose(PIDController(ki=1.0).step([1e9, -1e9]), [2e9, -2e9])


def test_observe_with_wrong_gradients_keeps_the_scheduler_usable():
    sched = ControlGScheduler(n_objectives=2)
    with pytest.raises(ValueError, match=r"grads must have shape \(2, n_params\)"):
        sched.observe([1.0, 1.0], grads=[[1.0], [1.0], [2.0]])
    assert sched.initial_losses_ is None
    np.testing.assert_array_equal(sched.antagonism_, np.zeros((2, 2)))
    sched.observe([1.0, 2.0], grads=[[1.0, 0.0], [-1.0, 0.0]])
    np.testing.assert_allclose(sched.initial_losses_, [1.0, 2.0])
    assert sched.antagonism_[0, 1] > 0
    assert sched.next_objective() in (0, 1)


def test_observe_that_fails_in_the_planner_changes_nothing():
    sched = ControlGScheduler(n_objectives=2, eps=0.0, kappa=5.0, antagonism_smoothing=0.0)
    sched.observe([1.0, 1.0])
    state = (sched.targets_.copy(), sched.difficulty_.copy(), sched.antagonism_.copy())
    with pytest.raises(ValueError):
        sched.observe([1.0, 1.0], grads=[[1.0, 0.0], [-1.0, 0.0]])  # infeasible plan
    np.testing.assert_array_equal(sched.targets_, state[0])
    np.testing.assert_array_equal(sched.difficulty_, state[1])
    np.testing.assert_array_equal(sched.antagonism_, state[2])
