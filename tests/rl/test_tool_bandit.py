"""The tool-use bandit: exact front, seeding, and the ParetoPO variants on it."""

import itertools

import numpy as np
import pytest

from mvlearn_ext.moo import hypervolume
from mvlearn_ext.rl import (
    OptimalCallsTracker,
    simulate_tool_bandit,
    sweep_tool_bandit,
    tool_bandit_front,
    tool_efficiency_reward,
)


def test_tool_reward_and_tracker():
    np.testing.assert_allclose(tool_efficiency_reward([2, 2], 2), 1.0)
    tr = OptimalCallsTracker()
    assert tr.update([1, 2], [False, False]) == 0.0 and not tr.has_success_
    history = []
    rng = np.random.default_rng(1)
    for _ in range(50):
        n = rng.integers(0, 6, 8)
        history.append(tr.update(n, rng.random(8) < 0.3))
    history = [h for h in history]
    first = next(i for i, h in enumerate(history) if tr.has_success_)
    assert np.all(np.diff(history[first:]) <= 0)


def test_tool_bandit_runs_and_is_seeded():
    a = simulate_tool_bandit("paretopo", n_steps=40, stage1_steps=20, random_state=0)
    b = simulate_tool_bandit("paretopo", n_steps=40, stage1_steps=20, random_state=0)
    assert a["accuracy"] == b["accuracy"]
    assert 0 < a["accuracy"] < 1 and 0 <= a["mean_calls"] <= 4
    np.testing.assert_allclose(a["policy"].sum(1), 1.0)


def test_tool_bandit_front_is_exact():
    from mvlearn_ext.moo import is_nondominated

    # one difficulty: 1 - kappa exp(-n/2) is concave in n, every n is a vertex (closed form)
    f = tool_bandit_front(difficulties=[0.7], max_calls=3)
    n = np.arange(3, -1, -1)
    np.testing.assert_allclose(f["accuracy"], 1 - 0.7 * np.exp(-n / 2))
    np.testing.assert_allclose(f["efficiency"], 1 - n / 3)
    a, e = f["accuracy"], f["efficiency"]
    assert f["hv"] == pytest.approx(np.sum(np.diff(e) * (a[1:] + a[:-1]) / 2))
    # three difficulties: brute force over all 5**3 deterministic policies
    kap = np.array([0.2, 0.5, 0.9])
    f = tool_bandit_front(difficulties=kap, max_calls=4)
    C = np.array(list(itertools.product(range(5), repeat=3)))
    acc = (1 - kap * np.exp(-C / 2)).mean(1)
    eff = 1 - C.mean(1) / 4
    P = np.column_stack([acc, eff])
    nd = P[is_nondominated(P, maximise=True)]
    # every non-dominated deterministic policy lies on or below the front, vertices are attained
    gaps = np.interp(nd[:, 1], f["efficiency"], f["accuracy"]) - nd[:, 0]
    assert gaps.min() > -1e-12
    V = np.column_stack([f["accuracy"], f["efficiency"]])
    assert all(np.isclose(P, v).all(1).any() for v in V)
    # HV: at least that of the deterministic points, and mixtures (dense segments) reach it
    assert f["hv"] >= hypervolume(P, [0, 0], maximise=True)
    t = np.linspace(0, 1, 400)[:, None]
    seg = np.vstack([(1 - t) * V[i] + t * V[i + 1] for i in range(len(V) - 1)])
    # sampled segments miss 399 triangles each: exactly sum(de * |da|) / (2 * 399)
    miss = np.sum(np.diff(V[:, 1]) * np.abs(np.diff(V[:, 0]))) / (2 * 399)
    assert hypervolume(seg, [0, 0], maximise=True) == pytest.approx(f["hv"] - miss, abs=1e-12)
    # random stochastic policies are never above the front
    rng = np.random.default_rng(5)
    pi = rng.dirichlet(np.ones(5) * 0.3, size=(200, 3))
    p = 1 - kap[:, None] * np.exp(-np.arange(5) / 2)
    a = (pi * p).sum(2).mean(1)
    e = 1 - (pi * np.arange(5)).sum(2).mean(1) / 4
    assert np.all(np.interp(e, f["efficiency"], f["accuracy"]) - a > -1e-12)
    with pytest.raises(ValueError, match="difficulties"):
        tool_bandit_front(difficulties=[1.5])
    with pytest.raises(TypeError, match="max_calls"):
        tool_bandit_front(max_calls=2.5)


def test_tool_bandit_front_gap_and_sweep():
    r = simulate_tool_bandit("fixed", n_steps=30, random_state=1)
    assert r["front_gap"] >= -1e-12
    assert r["efficiency"] == pytest.approx(1 - r["mean_calls"] / 4)
    assert r["hv"] == pytest.approx(r["accuracy"] * r["efficiency"])
    s = sweep_tool_bandit("fixed", [0.2, 0.8], random_states=(1, 2), n_steps=30)
    assert s["accuracy"].shape == (2, 2) and s["hv"].shape == (2,)
    r = simulate_tool_bandit("fixed", weights=(0.2, 0.8), n_steps=30, random_state=1)
    assert s["accuracy"][0, 0] == r["accuracy"]
    for i in range(2):
        P = np.column_stack([s["accuracy"][i], s["efficiency"][i]])
        assert s["hv"][i] == pytest.approx(hypervolume(P, [0, 0], maximise=True))
    assert np.all(s["hv"] <= s["oracle_hv"] + 1e-12)
    assert s["oracle_hv"] == tool_bandit_front()["hv"]
    with pytest.raises(ValueError, match="accuracy_weights"):
        sweep_tool_bandit("fixed", [1.2])
    with pytest.raises(TypeError, match="weights"):
        sweep_tool_bandit("fixed", [0.5], weights=(1, 0))


def test_tool_bandit_hvc_gradient_variant():
    kw = dict(n_steps=40, stage1_steps=20, weights=(0.3, 0.7), random_state=2)
    a = simulate_tool_bandit("paretopo", stage1="hvc_gradient", **kw)
    b = simulate_tool_bandit("paretopo", stage1="hvc_gradient", **kw)
    assert a["accuracy"] == b["accuracy"]
    W = a["weights_path"]
    np.testing.assert_allclose(W[0], [0.3, 0.7])  # starts at the user's weights
    np.testing.assert_allclose(W.sum(1), 1.0)
    assert W[1:].min() >= 0.05 - 1e-12
    assert np.ptp(W[:20], axis=0).max() > 0  # stage 1 moves them
    np.testing.assert_array_equal(W[20:], np.broadcast_to(W[20], W[20:].shape))  # stage 2: held
    # limit case: with EMA factor 1 the weights never move, and stage 1 is GRPO on fixed
    # weights, draw for draw
    s = simulate_tool_bandit("stage1", stage1="hvc_gradient", weight_ema=1.0, **kw)
    f = simulate_tool_bandit("fixed", **kw)
    # (up to the round-off of the floor projection)
    assert s["accuracy"] == pytest.approx(f["accuracy"], rel=1e-12)
    assert s["mean_calls"] == pytest.approx(f["mean_calls"], rel=1e-12)
    np.testing.assert_array_equal(f["weights_path"], np.broadcast_to([0.3, 0.7], (40, 2)))
    with pytest.raises(ValueError, match="stage1"):
        simulate_tool_bandit("fixed", stage1="hvc_gradient", n_steps=2)
    with pytest.raises(ValueError, match="stage1"):
        simulate_tool_bandit("stage1", stage1="gradient", n_steps=2)
    sw = sweep_tool_bandit("stage1", [0.3], random_states=(2,), stage1="hvc_gradient", n_steps=40)
    assert sw["point_hv"][0, 0] == pytest.approx(sw["accuracy"][0, 0] * sw["efficiency"][0, 0])
