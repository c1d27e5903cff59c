"""ParetoPO numeric core (reconstruction): GRPO primitive, stage 1, stage 2."""

import itertools

import numpy as np
import pytest

from mvlearn_ext.moo import (
    HVMetaReward,
    OptimalCallsTracker,
    grpo_advantages,
    hypervolume,
    pareto_rank_advantages,
    tool_efficiency_reward,
)
from mvlearn_ext.moo._paretopo import simulate_tool_bandit


def test_grpo_advantages_semantics():
    rng = np.random.default_rng(0)
    R = rng.random((4, 8))
    A = grpo_advantages(R)
    ref = (R - R.mean(1, keepdims=True)) / (R.std(1, ddof=1, keepdims=True) + 1e-4)
    np.testing.assert_allclose(A, ref)
    np.testing.assert_array_equal(grpo_advantages(np.ones((2, 5))), 0.0)
    R[0, 3] = np.nan
    A = grpo_advantages(R)
    assert A[0, 3] == 0.0
    v = np.delete(R[0], 3)
    np.testing.assert_allclose(np.delete(A[0], 3), (v - v.mean()) / (v.std(ddof=1) + 1e-4))
    np.testing.assert_allclose(grpo_advantages(R, scale="none")[1], R[1] - R[1].mean())
    with pytest.raises(ValueError, match="scale"):
        grpo_advantages(R, scale="token")


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


def test_meta_reward_gain_properties():
    m = HVMetaReward([0.5, 0.5])
    m.update([[0.5, 0.5]])
    r = m.meta_rewards([[0.4, 0.4], [0.9, 0.6], [0.2, 0.9]])
    assert np.all((r >= 0.5) & (r < 2.0))
    gains = m.archive_.gain(np.array([[0.4, 0.4], [0.9, 0.6], [0.2, 0.9]]))
    assert gains[0] == 0.0 and gains[1] > 0 and gains[2] > 0
    before = hypervolume([[0.5, 0.5]], [0, 0], maximise=True)
    after = hypervolume([[0.5, 0.5], [0.9, 0.6]], [0, 0], maximise=True)
    assert gains[1] == pytest.approx(after - before)
    lu = HVMetaReward([0.5, 0.5], mode="lu2025")
    lu.update([[0.2, 0.2]])
    lu.update([[0.1, 0.1]])  # dominated: not archived
    assert len(lu.archive_) == 1


@pytest.mark.parametrize("mode", ["paretopo", "rank_score", "dominance_count"])
def test_better_rank_gets_higher_advantage(mode):
    rng = np.random.default_rng(2)
    from mvlearn_ext.moo import pareto_rank

    for _ in range(30):
        R = rng.integers(0, 4, size=(8, 2)).astype(float)
        A = pareto_rank_advantages(R, R.mean(1), beta=0.9, mode=mode)
        ranks = pareto_rank(R, maximise=True)
        if mode != "dominance_count":
            for i, j in itertools.permutations(range(8), 2):
                if ranks[i] < ranks[j]:
                    assert A[i] > A[j]
        # a rollout dominating all others gets the unique maximum
        R2 = np.vstack([R, R.max(0) + 1])
        A2 = pareto_rank_advantages(R2, R2.mean(1), mode=mode)
        assert np.argmax(A2) == 8 and np.sum(A2 == A2.max()) == 1


def test_stage2_invariances_and_ties():
    rng = np.random.default_rng(3)
    R = rng.random((8, 2))
    s = R @ [0.5, 0.5]
    A = pareto_rank_advantages(R, s, center=False)
    perm = rng.permutation(8)
    np.testing.assert_allclose(pareto_rank_advantages(R[perm], s[perm], center=False), A[perm])
    # ranks are scale-free: A_base survives increasing transforms (tie-break uses s, held fixed)
    np.testing.assert_allclose(pareto_rank_advantages(np.exp(3 * R), s, center=False), A)
    centred = pareto_rank_advantages(R, s)
    assert np.all(np.argsort(centred) == np.argsort(A))
    # one front: ties broken by the scalar reward only
    x = np.linspace(0, 1, 5)
    F = np.column_stack([x, 1 - x])
    A = pareto_rank_advantages(F, [0.1, 0.5, 0.2, 0.9, 0.3], center=False)
    assert np.all(np.argsort(A) == np.argsort([0.1, 0.5, 0.2, 0.9, 0.3]))
    assert pareto_rank_advantages(F, np.ones(5), mode="paretopo").tolist() == [0.0] * 5


def test_tool_bandit_runs_and_is_seeded():
    a = simulate_tool_bandit("paretopo", n_steps=40, stage1_steps=20, seed=0)
    b = simulate_tool_bandit("paretopo", n_steps=40, stage1_steps=20, seed=0)
    assert a["accuracy"] == b["accuracy"]
    assert 0 < a["accuracy"] < 1 and 0 <= a["mean_calls"] <= 4
    np.testing.assert_allclose(a["policy"].sum(1), 1.0)
