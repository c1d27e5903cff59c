"""ParetoPO's numeric core (reconstruction): stage 1's weights, stage 2's advantages."""

import itertools

import numpy as np
import pytest

from mvlearn_ext.moo import HVMetaReward, hypervolume, pareto_rank_advantages
from mvlearn_ext.rl import group_advantages


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


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(R=[[1.0, np.nan], [0.0, 1.0]]), ValueError, "R contains NaN"),
        (dict(R=[["1", "0"], ["0", "1"]]), TypeError, "R must be a numeric array"),
        (dict(R=[[1e300, 0.0], [0.0, 1e300]]), ValueError, "R holds values too large"),
        (dict(R=[[1.0, 0.0], [0.0, 1.0]], scalar=[0.5, np.inf]), ValueError, "scalar contains"),
        (dict(R=[[1.0, 0.0], [0.0, 1.0]], scalar=[0.5, 1j]), ValueError, "scalar holds complex"),
        (dict(R=[[1.0, 0.0], [0.0, 1.0]], center="yes"), TypeError, "center must be a bool"),
        (dict(R=[[1.0, 0.0], [0.0, 1.0]], eps=-1.0), ValueError, "eps must be >= 0"),
        (dict(R=[[1.0, 0.0], [0.0, 1.0]], eps=np.nan), ValueError, "eps must be finite"),
    ],
)
def test_pareto_rank_advantages_refuses_unusable_arrays(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        pareto_rank_advantages(**kwargs)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(weights=["a", "b"]), TypeError, "weights must be a numeric array"),
        (dict(weights=[[0.5, 0.5]]), ValueError, "weights must be 1-D"),
        (dict(weights=[0.5, -0.5]), ValueError, "weights must hold one non-negative weight"),
        (dict(weights=[0.5, np.nan]), ValueError, "weights contains NaN"),
        (dict(weights=[0.5, 0.5], ref=[0.0, 0.0, 0.0]), ValueError, "ref must have one entry"),
        (dict(weights=[0.5, 0.5], ref="zero"), TypeError, "ref must be a numeric array"),
    ],
)
def test_meta_reward_refuses_unusable_settings(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        HVMetaReward(**kwargs)


@pytest.mark.parametrize("method", ["meta_rewards", "scalarise", "update"])
@pytest.mark.parametrize(
    "R, exc, match",
    [
        ([["0.8", "0.2"], ["0.2", "0.8"]], TypeError, "R must be a numeric array"),
        ([[0.8, 0.2j], [0.2, 0.8]], ValueError, "R holds complex"),
        ([[0.8, np.inf], [0.2, 0.8]], ValueError, "R contains infinity"),
        ([[1e300, 0.2], [0.2, 0.8]], ValueError, "R holds values too large"),
        ([0.8, 0.2], ValueError, "R must be 2-D"),
        ([[0.8, 0.2, 0.1]], ValueError, r"R must have shape \(n, 2\)"),
    ],
)
def test_meta_reward_refuses_unusable_rewards(method, R, exc, match):
    meta = HVMetaReward([0.5, 0.5])
    meta.update([[0.5, 0.5]])
    with pytest.raises(exc, match=match):
        getattr(meta, method)(R)


@pytest.mark.parametrize("mode", ["paretopo", "lu2025"])
def test_meta_reward_of_an_empty_batch(mode):
    meta = HVMetaReward([0.5, 0.5], mode=mode)
    meta.update([[0.5, 0.5]])
    assert meta.meta_rewards(np.empty((0, 2))).shape == (0,)
    assert meta.scalarise(np.empty((0, 2))).shape == (0,)
    with pytest.raises(ValueError, match="R has no rows"):
        meta.update(np.empty((0, 2)))
    assert np.isfinite(meta.ema_)


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
    A1 = group_advantages(m.scalarise(R).reshape(4, 8))
    A0 = group_advantages((R @ [0.5, 0.5]).reshape(4, 8))
    np.testing.assert_allclose(A1, A0, atol=1e-3)
    ema = m.ema_
    m.update(R)
    assert m.ema_ == pytest.approx(0.9 * ema)  # decays geometrically towards 0.5 meta-reward


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
    with pytest.raises(TypeError, match="archive must be a numeric array"):
        hvc_gradient([0.5, 0.5], [["0.8", "0.3"]], [0, 0])
    with pytest.raises(ValueError, match="point holds complex"):
        hvc_gradient([0.5, 0.5j], [], [0, 0])


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
