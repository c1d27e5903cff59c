"""MOPO: every argument checked and named."""

import pytest

from mvlearn_ext.moo.mopo import (
    exact_constrained_policy,
    ipo_regression_loss,
    make_preferences,
    mopo_policy,
    preference_values,
    solve_mopo,
)

P = make_preferences("conflicting", n_arms=4, n_objectives=2, random_state=0)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"max_iter": 0}, ValueError, "max_iter must be >= 1"),
        ({"max_iter": 2.5}, TypeError, "max_iter must be an int"),
        ({"max_iter": "5"}, TypeError, "max_iter must be an int"),
        ({"tol": "a"}, TypeError, "tol must be a real number"),
        ({"tol": -1.0}, ValueError, "tol must be >= 0"),
    ],
)
def test_solve_mopo_checks_its_iteration_settings(kwargs, error, match):
    with pytest.raises(error, match=match):
        solve_mopo(P, [0.55], tau=0.1, **kwargs)


def test_solve_mopo_one_iteration():
    assert solve_mopo(P, [0.55], tau=0.1, max_iter=1).n_iter == 1


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: solve_mopo(P, ["a"], tau=0.1), "thresholds"),
        (lambda: exact_constrained_policy(P, ["x"], tau=0.1), "thresholds"),
        (lambda: solve_mopo([["a", "b"], ["c", "d"]], [0.5], tau=0.1), "prefs"),
        (lambda: solve_mopo([[0.5, 0.5], [0.5]], [0.5], tau=0.1), "prefs"),
        (lambda: solve_mopo(P, [0.55], tau=0.1, mu="abcd"), "mu"),
        (lambda: mopo_policy(P, ["a"], tau=0.1), "lam"),
        (lambda: preference_values(P, "abcd"), "pi"),
        (lambda: ipo_regression_loss([0.25] * 4, P, ["a"], tau=0.1), "lam"),
    ],
)
def test_non_numeric_arguments_are_named(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize("pi", [[1.0, 0.0, 0.0, 0.5], [0.5, 0.5], [-0.5, 0.5, 0.5, 0.5]])
def test_preference_values_refuses_what_is_not_a_policy(pi):
    with pytest.raises(ValueError, match="pi must be a probability vector of length 4"):
        preference_values(P, pi)


def test_ipo_loss_needs_a_policy_with_full_support():
    with pytest.raises(ValueError, match="pi must be a probability vector of length 4 with full"):
        ipo_regression_loss([0.5, 0.5, 0.0, 0.0], P, [0.5], tau=0.1)
    with pytest.raises(ValueError, match="lam must be 1 finite non-negative"):
        ipo_regression_loss([0.25] * 4, P, [0.5, 0.5], tau=0.1)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n_arms": 1}, ValueError, "n_arms must be >= 2"),
        ({"n_arms": 2.5}, TypeError, "n_arms must be an int"),
        ({"n_objectives": 0}, ValueError, "n_objectives must be >= 1"),
    ],
)
def test_make_preferences_checks_its_sizes(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_preferences("conflicting", **kwargs)
