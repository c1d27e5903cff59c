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


def _hvc(y, A, r):
    """HVC(y; A) = HV(A ∪ {y}) - HV(A), straight from the definition."""
    A = np.asarray(A, dtype=float).reshape(-1, len(y))
    return hypervolume(np.vstack([A, y]), r, maximise=True) - hypervolume(A, r, maximise=True)


@pytest.mark.parametrize("K", [2, 3, 4])
def test_hvc_gradient_matches_finite_differences(K):
    from mvlearn_ext.moo import filter_dominated, hvc_gradient

    rng = np.random.default_rng(10 + K)
    r = np.zeros(K)
    h = 1e-6
    checked = 0
    for _ in range(6):
        # archive on a curved front, so that points near it are mostly non-dominated
        P = rng.random((8, K))
        A = filter_dominated(P / np.linalg.norm(P, axis=1, keepdims=True), maximise=True)
        y = rng.random(K)
        y = y / np.linalg.norm(y) * rng.uniform(0.9, 1.1)
        g = hvc_gradient(y, A, r)
        fd = np.array(
            [(_hvc(y + h * e, A, r) - _hvc(y - h * e, A, r)) / (2 * h) for e in np.eye(K)]
        )
        np.testing.assert_allclose(g, fd, atol=1e-6)
        checked += _hvc(y, A, r) > 0
    assert checked >= 3  # most draws have a positive contribution (a non-trivial gradient)
    # a point strictly dominated by the archive: contribution 0 nearby, gradient 0
    assert np.all(hvc_gradient(0.5 * A[0], A, r) == 0.0)


def test_hvc_gradient_exact_cases():
    from mvlearn_ext.moo import hvc_gradient

    # empty archive: HVC = prod (y - r), gradient = products of the other coordinates
    np.testing.assert_allclose(hvc_gradient([0.5, 0.4, 0.2], [], [0, 0, 0]), [0.08, 0.1, 0.2])
    # 2-D closed form (y2 - a2, y1 - a1) with the neighbours' bounds
    np.testing.assert_allclose(
        hvc_gradient([0.6, 0.6], [[0.8, 0.3], [0.2, 0.9], [0.1, 0.1]], [0, 0]), [0.3, 0.4]
    )
    # the 2-D closed form agrees with the general face measure of a 3-D lift
    rng = np.random.default_rng(3)
    A = rng.random((6, 2))
    y = rng.random(2)
    g2 = hvc_gradient(y, A, [0, 0])
    g3 = hvc_gradient(np.append(y, 1.0), np.column_stack([A, np.ones(6)]), [0, 0, 0])
    np.testing.assert_allclose(g3[:2], g2, atol=1e-12)
    # outside the reference box in one coordinate: contribution 0 nearby, gradient 0
    np.testing.assert_array_equal(hvc_gradient([0.5, -0.1], [], [0, 0]), [0.0, 0.0])
    # at a tie with an archive coordinate the right derivative is returned
    y, A = np.array([0.5, 0.5]), np.array([[0.5, 0.8]])
    g = hvc_gradient(y, A, [0, 0])
    fwd = (_hvc(y + [1e-7, 0], A, [0, 0]) - _hvc(y, A, [0, 0])) / 1e-7
    assert g[0] == pytest.approx(fwd, abs=1e-6) and g[0] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="point"):
        hvc_gradient([0.5], [], [0])
    with pytest.raises(ValueError, match="archive"):
        hvc_gradient([0.5, 0.5], np.zeros((2, 3)), [0, 0])
    with pytest.raises(ValueError, match="ref"):
        hvc_gradient([0.5, 0.5], [], [0, 0, 0])


def test_hvc_gradient_weights_update_rule():
    from mvlearn_ext.moo import HVCGradientWeights, hvc_gradient
    from mvlearn_ext.moo._paretopo import _project_simplex_floor

    hw = HVCGradientWeights([0.6, 1.4], margin=0.2, ema=0.9, floor=0.05)
    np.testing.assert_allclose(hw.weights_, [0.3, 0.7])  # the user's weights, normalised
    # first point: ref = y0 - margin, empty archive, gradient (margin, margin) -> (0.5, 0.5)
    hw.update([0.7, 0.6])
    np.testing.assert_allclose(hw.ref_, [0.5, 0.4])
    np.testing.assert_allclose(hw.weights_, [0.32, 0.68])
    # a dominated step point: gradient 0, weights kept
    hw.update([0.65, 0.55])
    assert hw.n_kept_ == 1
    np.testing.assert_allclose(hw.weights_, [0.32, 0.68])
    # a new non-dominated point: EMA step towards the normalised HVC gradient
    y = np.array([0.8, 0.5])
    g = hvc_gradient(y, [[0.7, 0.6]], [0.5, 0.4])
    np.testing.assert_allclose(g, [0.1, 0.1])
    hw.update(y)
    np.testing.assert_allclose(hw.weights_, 0.9 * np.array([0.32, 0.68]) + 0.1 * 0.5)
    # the floor: with ema = 0 the direction (0.1, 1) / 1.1 is lifted to the floor 0.2
    hw = HVCGradientWeights([0.5, 0.5], ema=0.0, floor=0.2, ref=[0.0, 0.0])
    hw.archive_.add([2.0, 0.9])
    np.testing.assert_allclose(hw.gradient([1.0, 1.0]), [0.1, 1.0])
    np.testing.assert_allclose(hw.update([1.0, 1.0]).weights_, [0.2, 0.8])
    # the projection is the nearest feasible point
    rng = np.random.default_rng(4)
    for _ in range(20):
        v = rng.normal(size=3)
        p = _project_simplex_floor(v, 0.1)
        assert p.sum() == pytest.approx(1.0) and p.min() >= 0.1 - 1e-12
        Q = 0.1 + 0.7 * rng.dirichlet(np.ones(3), size=200)
        assert np.linalg.norm(v - p) <= np.linalg.norm(v - Q, axis=1).min() + 1e-12
    with pytest.raises(ValueError, match="floor"):
        HVCGradientWeights([0.5, 0.5], floor=0.5)
    with pytest.raises(ValueError, match="ema"):
        HVCGradientWeights([0.5, 0.5], ema=1.5)
    with pytest.raises(ValueError, match="weights"):
        HVCGradientWeights([-0.5, 0.5])
    with pytest.raises(ValueError, match="y"):
        HVCGradientWeights([0.5, 0.5]).update([0.5, 0.5, 0.5])


def test_tool_bandit_hvc_gradient_variant():
    kw = dict(n_steps=40, stage1_steps=20, weights=(0.3, 0.7), seed=2)
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
    from mvlearn_ext.moo._paretopo import sweep_tool_bandit

    sw = sweep_tool_bandit("stage1", [0.3], seeds=(2,), stage1="hvc_gradient", n_steps=40)
    assert sw["point_hv"][0, 0] == pytest.approx(sw["accuracy"][0, 0] * sw["efficiency"][0, 0])
