"""Allocations at extreme scales, regret curves on degenerate inputs, and state checks."""

from contextlib import nullcontext

import numpy as np
import pytest

from mvlearn_ext.bandits import (
    BAS,
    CHAS,
    ContextualGreedyPlugIn,
    GAFSMax,
    GreedyPlugIn,
    OracleAllocation,
    TwoStagePlugIn,
    UniformAllocation,
    VarianceUCB,
    regret_curve,
    simulate,
)

SIGMA = np.array([1.0, 2.0, 3.0])

SCALE_FREE = [GreedyPlugIn, TwoStagePlugIn, GAFSMax, UniformAllocation, OracleAllocation]


@pytest.mark.parametrize("make", SCALE_FREE)
@pytest.mark.parametrize("factor", [1e-170, 1e-300, 1e-150, 1e150])
def test_scale_free_counts_do_not_depend_on_scale(make, factor):
    ref = simulate(make(), sigma=SIGMA, budget=300, n_replications=20)
    with (
        np.errstate(under="ignore"),
        pytest.warns(RuntimeWarning) if factor < 1e-160 else nullcontext(),
    ):
        res = simulate(make(), sigma=SIGMA * factor, budget=300, n_replications=20)
    np.testing.assert_array_equal(res.counts, ref.counts)
    np.testing.assert_allclose(res.estimates / factor, ref.estimates, rtol=1e-12)


def test_greedy_regret_scales_with_sigma_squared_in_range():
    ref = simulate(GreedyPlugIn(), sigma=SIGMA, budget=300, n_replications=50)
    for factor in (1e-150, 1e150):
        res = simulate(GreedyPlugIn(), sigma=SIGMA * factor, budget=300, n_replications=50)
        np.testing.assert_allclose(
            np.array(res.mean_regret()) / factor**2, ref.mean_regret(), rtol=1e-10
        )
        np.testing.assert_allclose(res.true_loss()[0] / factor**2, ref.true_loss()[0], rtol=1e-10)


def test_tiny_scale_warns_that_the_regret_underflows():
    with pytest.warns(RuntimeWarning, match="sigma: R_p"):
        simulate(GreedyPlugIn(), sigma=SIGMA * 1e-170, budget=300, n_replications=5)


def test_oracle_with_tiny_given_sigma():
    ref = simulate(OracleAllocation(sigma=SIGMA), sigma=SIGMA, budget=300, n_replications=2)
    res = simulate(
        OracleAllocation(sigma=SIGMA * 1e-300), sigma=SIGMA, budget=300, n_replications=2
    )
    np.testing.assert_array_equal(res.counts, ref.counts)


@pytest.mark.parametrize("make", [CHAS, BAS, VarianceUCB])
def test_unit_dependent_policies_refuse_underflow(make):
    with pytest.raises(ValueError, match="sigma: its smallest value"):
        simulate(make(), sigma=SIGMA * 1e-170, budget=300, n_replications=2)
    res = simulate(make(), sigma=SIGMA * 1e-150, budget=300, n_replications=2)
    assert (res.counts.sum(axis=1) == 300).all()


def test_regret_curve_one_replication():
    curve = regret_curve(GreedyPlugIn(p=2), sigma=[0.5, 2.0], budgets=[64, 128], n_replications=1)
    assert np.isnan(curve["se"]).all()
    assert curve["fit"] is not None and curve["fit"].n == 2


@pytest.mark.parametrize("budgets", [[64], [64, 64]])
def test_regret_curve_one_distinct_budget_gives_no_fit(budgets):
    curve = regret_curve(GreedyPlugIn(p=2), sigma=[0.5, 2.0], budgets=budgets, n_replications=5)
    assert curve["fit"] is None
    assert len(curve["mean"]) == len(budgets)


def _run(policy, n_groups, budget, steps=10):
    policy.reset(n_groups=n_groups, budget=budget)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        k = policy.next_group()
        policy.update(k, rng.normal())
    return policy


def test_set_state_refuses_other_number_of_groups():
    state = _run(GreedyPlugIn(p=1), 3, 50).get_state()
    policy = GreedyPlugIn(p=1).reset(n_groups=4, budget=50)
    with pytest.raises(ValueError, match="n_groups=3"):
        policy.set_state(state)
    assert policy.n_groups_ == 4


def test_set_state_refuses_other_budget():
    state = _run(GreedyPlugIn(p=1), 3, 50).get_state()
    with pytest.raises(ValueError, match="budget=50"):
        GreedyPlugIn(p=1).reset(n_groups=3, budget=60).set_state(state)


def test_set_state_refuses_other_class_and_config():
    state = _run(GreedyPlugIn(p=1), 3, 50).get_state()
    with pytest.raises(ValueError, match="GreedyPlugIn policy, not a TwoStagePlugIn"):
        TwoStagePlugIn(p=1).set_state(state)
    with pytest.raises(ValueError, match="p=1"):
        GreedyPlugIn(p=2).set_state(state)
    with pytest.raises(ValueError, match="warm_start"):
        GreedyPlugIn(p=1, warm_start="linear").set_state(state)


def test_set_state_same_configuration_round_trip():
    policy = _run(GreedyPlugIn(p="inf"), 3, 50)
    fresh = GreedyPlugIn(p=np.inf).set_state(policy.get_state())
    np.testing.assert_array_equal(fresh.counts_, policy.counts_)
    assert fresh.next_group() == policy.next_group()


def test_contextual_set_state_refuses_other_configuration():
    policy = ContextualGreedyPlugIn(p=2, warm_start=6).reset(2, 40, 2)
    state = policy.get_state()
    with pytest.raises(ValueError, match="warm_start"):
        ContextualGreedyPlugIn(p=2, warm_start=5).set_state(state)
    with pytest.raises(ValueError, match="n_features=2"):
        ContextualGreedyPlugIn(p=2, warm_start=6).reset(2, 40, 3).set_state(state)
