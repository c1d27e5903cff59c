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


def test_tool_bandit_front_is_exact():
    from mvlearn_ext.moo import is_nondominated
    from mvlearn_ext.moo._paretopo import tool_bandit_front

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


def test_stage1_is_inert_once_archive_holds_ideal_point():
    # a rollout that succeeds with N_opt calls has reward (1, 1): the archive's HV is then 1,
    # every later gain is 0, the meta-reward is one constant per batch, and GRPO's
    # standardisation cancels it: stage 1 gives the fixed-weight advantages.
    m = HVMetaReward([0.5, 0.5])
    m.update([[1.0, 1.0], [0.0, 0.7]])
    rng = np.random.default_rng(6)
    R = np.column_stack([rng.random(32) < 0.5, np.exp(-0.3 * rng.integers(0, 5, 32))])
    assert np.all(m.archive_.gain(R) == 0.0)
    r = m.meta_rewards(R)
    assert np.ptp(r) == 0.0 and 0.5 <= r[0] < 2.0
    A1 = grpo_advantages(m.scalarise(R).reshape(4, 8))
    A0 = grpo_advantages((R @ [0.5, 0.5]).reshape(4, 8))
    np.testing.assert_allclose(A1, A0, atol=1e-3)
    ema = m.ema_
    m.update(R)
    assert m.ema_ == pytest.approx(0.9 * ema)  # decays geometrically towards 0.5 meta-reward


def test_tool_bandit_front_gap_and_sweep():
    from mvlearn_ext.moo._paretopo import sweep_tool_bandit, tool_bandit_front

    r = simulate_tool_bandit("fixed", n_steps=30, seed=1)
    assert r["front_gap"] >= -1e-12
    assert r["efficiency"] == pytest.approx(1 - r["mean_calls"] / 4)
    assert r["hv"] == pytest.approx(r["accuracy"] * r["efficiency"])
    s = sweep_tool_bandit("fixed", [0.2, 0.8], seeds=(1, 2), n_steps=30)
    assert s["accuracy"].shape == (2, 2) and s["hv"].shape == (2,)
    assert (
        s["accuracy"][0, 0]
        == simulate_tool_bandit("fixed", weights=(0.2, 0.8), n_steps=30, seed=1)["accuracy"]
    )
    for i in range(2):
        P = np.column_stack([s["accuracy"][i], s["efficiency"][i]])
        assert s["hv"][i] == pytest.approx(hypervolume(P, [0, 0], maximise=True))
    assert np.all(s["hv"] <= s["oracle_hv"] + 1e-12)
    assert s["oracle_hv"] == tool_bandit_front()["hv"]
    with pytest.raises(ValueError, match="accuracy_weights"):
        sweep_tool_bandit("fixed", [1.2])
    with pytest.raises(TypeError, match="weights"):
        sweep_tool_bandit("fixed", [0.5], weights=(1, 0))
