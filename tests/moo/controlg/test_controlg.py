"""ControlG scheduler (reconstruction): planner oracles and scheduler contracts."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from mvlearn_ext.moo.controlg import (
    ControlGScheduler,
    PIDController,
    antagonism_matrix,
    plan_budgets,
    plan_targets,
    replay_schedule,
    simulate_block_training,
)


def slsqp_plan(d, A, eps, kappa, b_min):
    K = len(d)
    M = np.diag(d) - kappa * (A * d[None, :])
    res = minimize(
        lambda b: -np.log(np.maximum(eps + M @ b, 1e-300)).sum(),
        np.full(K, 1 / K),
        jac=lambda b: -M.T @ (1 / (eps + M @ b)),
        bounds=[(b_min, 1)] * K,
        constraints=[{"type": "eq", "fun": lambda b: b.sum() - 1}],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    return res.x


@pytest.mark.parametrize("seed", range(4))
def test_waterfilling_matches_numerical_solution(seed):
    rng = np.random.default_rng(seed)
    d = rng.uniform(0.1, 2, 5)
    for eps, b_min in [(0.1, 0.0), (0.5, 0.05), (2.0, 0.1)]:
        b = plan_budgets(d, eps=eps, b_min=b_min)
        assert b.min() >= b_min - 1e-12 and b.sum() == pytest.approx(1)
        ref = slsqp_plan(d, np.zeros((5, 5)), eps, 0.0, b_min)
        np.testing.assert_allclose(b, ref, atol=1e-5)


def test_waterfilling_properties():
    np.testing.assert_allclose(plan_budgets([0.7] * 4), 0.25)
    d = np.array([0.2, 0.5, 1.0, 1.5])
    b = plan_budgets(d, eps=0.3)
    assert np.all(np.diff(b) >= 0)  # monotone in difficulty
    b2 = plan_budgets(d * [1, 1, 1, 2], eps=0.3)
    assert b2[3] >= b[3]
    np.testing.assert_allclose(plan_budgets(d, eps=1e-12), 0.25, atol=1e-9)  # eps -> 0: uniform


@pytest.mark.parametrize("seed", range(3))
def test_antagonism_planner_matches_numerical_solution(seed):
    rng = np.random.default_rng(seed)
    d = rng.uniform(0.5, 1.5, 4)
    A = rng.uniform(0, 0.3, (4, 4))
    A = (A + A.T) / 2
    np.fill_diagonal(A, 0)
    b = plan_budgets(d, A, eps=0.5, kappa=1.0, b_min=0.02)
    ref = slsqp_plan(d, A, 0.5, 1.0, 0.02)
    M = np.diag(d) - A * d[None, :]
    f = lambda x: np.log(0.5 + M @ x).sum()  # noqa: E731
    assert f(b) >= f(ref) - 1e-8


def test_antagonism_does_not_increase_pair_budget():
    d = np.ones(4)
    base = plan_budgets(d, np.zeros((4, 4)), eps=0.5)
    A = np.zeros((4, 4))
    A[0, 1] = A[1, 0] = 0.4
    b = plan_budgets(d, A, eps=0.5, kappa=1.0)
    assert b[0] + b[1] < base[0] + base[1] - 1e-6


def test_planner_infeasible_raises():
    A = np.ones((2, 2)) - np.eye(2)
    with pytest.raises(ValueError, match="no budget keeps"):
        plan_budgets([1.0, 1.0], A, eps=0.0, kappa=5.0)
    with pytest.raises(ValueError, match="difficulty must be > 0"):
        plan_budgets([1.0, 0.0])


def test_plan_targets_waterfilling():
    f, r, c = np.array([1.0, 2.0, 1.5]), np.zeros(3), np.array([1.0, 2.0, 0.5])
    t = plan_targets(f, r, c, budget=2.0)
    delta = t - f
    assert delta.min() >= -1e-12 and c @ delta == pytest.approx(2.0, rel=1e-9)
    res = minimize(
        lambda x: -np.log(f + x - r).sum(),
        np.full(3, 0.1),
        bounds=[(0, None)] * 3,
        constraints=[{"type": "ineq", "fun": lambda x: 2.0 - c @ x}],
        method="SLSQP",
        options={"ftol": 1e-14},
    )
    np.testing.assert_allclose(delta, res.x, atol=1e-5)


def test_antagonism_matrix():
    G = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    A = antagonism_matrix(G)
    np.testing.assert_allclose(A, [[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    A2 = antagonism_matrix(G, previous=np.zeros((3, 3)), smoothing=0.5)
    np.testing.assert_allclose(A2, 0.5 * A)


@pytest.mark.parametrize("b", [(0.5, 0.3, 0.2), (0.1, 0.15, 0.75), (0.05, 0.05, 0.45, 0.45)])
def test_shares_track_targets(b):
    b = np.asarray(b)
    s = ControlGScheduler(n_objectives=len(b), targets=b)
    K = len(b)
    for t in range(1, 401):
        s.next_objective()
        assert np.abs(s.counts_ / t - b).max() <= K / t


def test_no_objective_starves():
    b = np.array([0.1, 0.15, 0.75])
    s = ControlGScheduler(n_objectives=3, targets=b)
    seq = np.array([s.next_objective() for _ in range(600)])
    window = math.ceil(2 / b.min())
    for k in range(3):
        gaps = np.diff(np.flatnonzero(seq == k))
        assert gaps.max() <= window
    # a counter-example: ceil(1/b_min) + 1 is too short
    gaps0 = np.diff(np.concatenate([[-1], np.flatnonzero(seq == 0)]))
    assert gaps0.max() - 1 >= math.ceil(1 / b.min()) + 1 - 1


def test_pid_responds_to_target_change():
    for ki in (0.0, 0.2):
        s = ControlGScheduler(
            n_objectives=2, targets=[0.8, 0.2], kp=1.0, ki=ki, integral_limit=3.0
        )
        for _ in range(100):
            s.next_objective()
        s.set_targets([0.3, 0.7])
        before = s.counts_.copy()
        for _ in range(300):
            s.next_objective()
        window = (s.counts_ - before) / 300
        # cumulative shares converge to the new targets: the window over-serves objective 1
        assert window[1] > 0.7
        assert abs(s.shares_[1] - 0.7) <= 2 / 400 + 1e-12


def test_pid_first_order_plant_closed_form():
    # y_{t+1} = a y_t + g u_t, P control u = kp (r - y): y_ss = kp g r / (1 - a + kp g)
    a, g, kp, r = 0.8, 0.5, 0.6, 1.0
    pid = PIDController(kp=kp)
    y = 0.0
    for _ in range(400):
        y = a * y + g * pid.step([r - y])[0]
    assert y == pytest.approx(kp * g * r / (1 - a + kp * g), rel=1e-10)
    # PI removes the steady-state error
    pid = PIDController(kp=kp, ki=0.1)
    y = 0.0
    for _ in range(2000):
        y = a * y + g * pid.step([r - y])[0]
    assert y == pytest.approx(r, abs=1e-8)


def test_record_replays_and_is_deterministic():
    rates = np.array([0.05, 0.02, 0.1])
    A = np.zeros((3, 3))
    A[0, 1] = A[1, 0] = 0.02
    r1 = simulate_block_training(
        "controlg", n_blocks=50, rates=rates, antagonism=A, random_state=3, noise=0.1
    )
    r2 = simulate_block_training(
        "controlg", n_blocks=50, rates=rates, antagonism=A, random_state=3, noise=0.1
    )
    np.testing.assert_array_equal(r1["choices"], r2["choices"])
    rec = r1["scheduler"].record_json()
    assert replay_schedule(rec) == r1["choices"].tolist()


def test_simulator_controlg_beats_round_robin():
    rates = np.array([0.05, 0.02, 0.1])
    A = np.zeros((3, 3))
    A[0, 1] = A[1, 0] = 0.015
    for seed in range(3):
        res = {
            p: simulate_block_training(
                p, n_blocks=60, rates=rates, antagonism=A, random_state=seed, noise=0.1
            )
            for p in ("controlg", "round_robin", "uniform_mix")
        }
        assert res["controlg"]["log_hv"] > res["round_robin"]["log_hv"]
        assert res["controlg"]["log_hv"] > res["uniform_mix"]["log_hv"]
        assert np.bincount(res["controlg"]["choices"], minlength=3).min() > 0


def test_scheduler_errors():
    with pytest.raises(ValueError, match="n_objectives"):
        ControlGScheduler(n_objectives=0)
    s = ControlGScheduler(n_objectives=2)
    with pytest.raises(ValueError, match="targets must be on the simplex"):
        s.set_targets([0.9, 0.9])
    with pytest.raises(ValueError, match="losses must have 2"):
        s.observe([1.0])
    with pytest.raises(ValueError, match="losses contains NaN"):
        s.observe([1.0, np.nan])
