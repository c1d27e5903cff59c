"""Multi-hop tool bandit: exact front, non-convexity, simulator."""

import numpy as np
import pytest

from mvlearn_ext.moo import hypervolume, is_nondominated
from mvlearn_ext.rl import (
    hop_bandit_front,
    hop_success,
    hull_gap,
    simulate_hop_bandit,
    sweep_hop_bandit,
)
from mvlearn_ext.rl._hop_bandit import _policy


def test_hop_success_closed_form():
    # 3 facts, each call finds one with probability 1/2: P(Bin(n, 1/2) >= 3) by hand
    p = hop_success(np.arange(6), hops=3, retrieve=0.5, guess=0.2)
    by_hand = np.array([0, 0, 0, 1 / 8, 5 / 16, 1 / 2])
    np.testing.assert_allclose(p, 0.2 + 0.8 * by_hand)
    with pytest.raises(ValueError, match="n_calls"):
        hop_success([-1])
    with pytest.raises(ValueError, match="retrieve"):
        hop_success([1], retrieve=1.5)


def _curve(mu):
    pi = _policy(mu, 12, 1.0)
    p = hop_success(np.arange(13))
    return pi @ p, 1 - pi @ np.arange(13) / 12


def test_hop_front_is_the_whole_curve_and_its_hv():
    f = hop_bandit_front(n_grid=4001)
    a, e = f["accuracy"], f["efficiency"]
    # both coordinates monotone along the sweep: no policy dominates another
    assert np.all(np.diff(e) > 0) and np.all(np.diff(a) <= 1e-15)
    idx = np.linspace(0, a.size - 1, 300).astype(int)
    assert is_nondominated(np.column_stack([a, e])[idx], maximise=True).all()
    # limits: a point mass on 0 calls and on max_calls
    assert (a[-1], e[-1]) == pytest.approx((0.1, 1.0), abs=1e-4)
    assert (a[0], e[0]) == pytest.approx((hop_success(12), 0.0), abs=1e-4)
    limits = np.array([[0.1, 1.0], [hop_success(12), 0.0]])
    beyond = hypervolume(np.vstack([np.column_stack([a, e]), limits]), [0, 0], maximise=True)
    assert beyond - f["hv_points"] < 1e-5
    # trapezoids minus the staircase of the swept points: half the sum of de * |da|
    miss = np.sum(np.diff(e) * np.abs(np.diff(a))) / 2
    assert f["hv_points"] == pytest.approx(f["hv"] - miss, abs=1e-12)
    assert hypervolume(np.column_stack([a, e]), [0, 0], maximise=True) == f["hv_points"]
    # the sweep converges: a 5x finer grid moves the HV by < 1e-5
    assert hop_bandit_front(n_grid=20001)["hv"] == pytest.approx(f["hv"], abs=1e-5)
    # a policy on any other arm distribution is not in the family: the full simplex
    # (a mixture of 0 and 7 calls) reaches points above the curve, the family does not
    mix = 0.65 * np.array([0.1, 1.0]) + 0.35 * np.array([hop_success(7), 5 / 12])
    assert np.interp(mix[1], e, a) < mix[0] - 0.1


def test_hop_front_is_non_convex():
    f = hop_bandit_front(n_grid=4001)
    # a known unsupported point: mu = 3 (about 3 calls, accuracy ~0.24)
    a3, e3 = _curve(3.0)
    a3, e3 = a3[0], e3[0]
    # Pareto-optimal: no policy of the family dominates it
    assert not np.any(
        (f["accuracy"] >= a3)
        & (f["efficiency"] >= e3)
        & (np.abs(f["mu"] - 3) > 1e-9)
        & ((f["accuracy"] > a3) | (f["efficiency"] > e3))
    )
    # certificate of non-support: it lies strictly below the chord between two attainable
    # points that bracket its efficiency, so for every w >= 0 (w != 0) one of them scores more
    (aa, ea), (ab, eb) = (
        [np.ravel(v)[0] for v in _curve(-8.0)],
        [np.ravel(v)[0] for v in _curve(8.0)],
    )
    lam = (e3 - eb) / (ea - eb)
    chord = lam * aa + (1 - lam) * ab
    assert chord - a3 > 0.1
    for w in np.linspace(0, 1, 1001):
        assert w * a3 + (1 - w) * e3 < max(w * aa + (1 - w) * ea, w * ab + (1 - w) * eb)
    # the front's own bookkeeping agrees
    assert hull_gap(f, a3, e3) > 0.1
    k = np.argmin(np.abs(f["mu"] - 3.0))
    assert not f["supported"][k]
    # the maximisers of w . (accuracy, efficiency) over the sweep are all supported points
    W = np.linspace(0, 1, 501)
    S = W[:, None] * f["accuracy"][None] + (1 - W[:, None]) * f["efficiency"][None]
    assert f["supported"][np.argmax(S, axis=1)].all()
    assert 0.7 < f["supported_hv"] / f["hv"] < 0.8


def test_hop_simulator_seeded_and_validated():
    a = simulate_hop_bandit("paretopo", n_steps=30, stage1_steps=10, random_state=3)
    b = simulate_hop_bandit("paretopo", n_steps=30, stage1_steps=10, random_state=3)
    assert a["mu"] == b["mu"] and 0 < a["accuracy"] < 1
    assert a["efficiency"] == pytest.approx(1 - a["mean_calls"] / 12)
    assert np.all(a["weights_path"] == [0.5, 0.5])
    with pytest.raises(ValueError, match="method"):
        simulate_hop_bandit("mgda")
    with pytest.raises(ValueError, match="weights"):
        simulate_hop_bandit("fixed", weights=(1, -1))
    with pytest.raises(ValueError, match="drift"):
        simulate_hop_bandit("fixed", drift=0.0)
    with pytest.raises(TypeError, match="random_state"):
        sweep_hop_bandit("fixed", [0.5], random_state=1)
    # integer arguments go through utils' one integer check
    with pytest.raises(TypeError, match="n_steps must be an int, got float"):
        simulate_hop_bandit("fixed", n_steps=2.5)
    with pytest.raises(TypeError, match="hops must be an int, got bool"):
        hop_success([1], hops=True)
    with pytest.raises(ValueError, match="group_size must be >= 2, got 1"):
        simulate_hop_bandit("fixed", group_size=1)


def test_hop_lu2025_meta_reward_is_inert_under_group_standardisation():
    # one multiplier per batch scales every group's rewards alike; GRPO's standardisation
    # cancels it up to eps, so the run follows fixed weights on the raw rewards draw for draw
    for w in (0.3, 0.9):
        f = simulate_hop_bandit("fixed", weights=(w, 1 - w), n_steps=60, random_state=1)
        lu = simulate_hop_bandit("lu2025", weights=(w, 1 - w), n_steps=60, random_state=1)
        assert lu["mu"] == pytest.approx(f["mu"], abs=1e-3)


def test_hop_raw_scales_collapse_fixed_weights():
    # calls saved are priced at 5..20 per call against 1 for a success: even w = 0.9 on
    # accuracy leaves efficiency dominating, and fixed weights drive the policy to 0 calls
    s = sweep_hop_bandit("fixed", [0.1, 0.9], random_states=(0,), n_steps=150)
    assert np.all(s["efficiency"] > 0.99)
    assert s["hv_ratio"][0] == pytest.approx(0.1 / s["front_hv"], rel=0.02)


def test_stage2_ranks_the_cheapest_failure_with_the_best_success():
    # (success, calls saved): the cheapest rollout is non-dominated whether it succeeds or
    # not, so Pareto ranks reward few calls whatever the weights (w only breaks ties)
    from mvlearn_ext.moo import pareto_rank_advantages

    R = np.array([[0.0, 9.0], [1.0, 7.0], [1.0, 6.0], [0.0, 5.0]])
    for w in ([0.9, 0.1], [0.999, 0.001]):
        A = pareto_rank_advantages(R, R @ np.array(w), beta=0.5)
        assert A[0] > A[2] > A[3] and A[1] > A[2]


def test_hop_stage2_collapses_to_zero_calls_where_fixed_weights_do_not():
    # fixed seed, accuracy weight 0.9: rank advantages (alone, or after stage 1, with raw or
    # normalised rewards) drive the policy to 0 calls; fixed weights on normalised rewards
    # keep the calls that the accuracy needs
    kw = dict(weights=(0.9, 0.1), n_steps=100, stage1_steps=30, random_state=0)
    assert simulate_hop_bandit("stage2", **kw)["mean_calls"] < 0.5
    assert simulate_hop_bandit("stage2", normalise=True, **kw)["mean_calls"] < 0.5
    assert simulate_hop_bandit("paretopo", **kw)["mean_calls"] < 0.5
    assert simulate_hop_bandit("fixed_norm", **kw)["mean_calls"] > 5.0


def test_batched_rank_advantages_match_the_per_group_function():
    from mvlearn_ext.moo import pareto_rank_advantages
    from mvlearn_ext.rl._hop_bandit import _rank_advantages_batch

    rng = np.random.default_rng(4)
    # binary x few levels: many ties and duplicates, as in the bandit
    R = np.stack([rng.integers(0, 2, (50, 8)), rng.integers(0, 4, (50, 8)) * 7.5], axis=2)
    R = R.astype(float)
    R[0] = R[0, 0]  # one group of identical rollouts
    S = R @ [0.3, 0.7]
    for beta in (0.0, 0.5, 1.0):
        want = np.stack([pareto_rank_advantages(R[b], S[b], beta=beta) for b in range(50)])
        np.testing.assert_allclose(_rank_advantages_batch(R, S, beta), want, atol=1e-12)
    R3 = rng.random((20, 6, 3))
    want = np.stack([pareto_rank_advantages(r, r.sum(1), beta=0.5) for r in R3])
    np.testing.assert_allclose(_rank_advantages_batch(R3, R3.sum(2), 0.5), want, atol=1e-12)
