"""Online interface vs simulate (exact), vs a plain-Python reference, invariances, errors."""

import pickle

import numpy as np
import pytest

from mvlearn_ext.bandits import (
    BAS,
    CHAS,
    ArmSampler,
    GAFSMax,
    GreedyPlugIn,
    OracleAllocation,
    TwoStagePlugIn,
    UniformAllocation,
    VarianceUCB,
    allocation_exponent,
    round_allocation,
    simulate,
)
from mvlearn_ext.bandits._reference import reference_run

SIGMA = np.sqrt([0.25, 1.0, 2.0, 4.0])
MEAN = np.array([1.0, -2.0, 0.5, 3.0])


def all_policies(p):
    return [
        UniformAllocation(p=p),
        OracleAllocation(p=p),
        TwoStagePlugIn(p=p),
        TwoStagePlugIn(p=p, warm_start="sqrt"),
        GreedyPlugIn(p=p),
        GreedyPlugIn(p=p, warm_start=2),
        GreedyPlugIn(p=p, warm_start="linear"),
        GAFSMax(p=p),
        CHAS(p=p),
        BAS(p=p),
        VarianceUCB(p=p),
    ]


def run_online(policy, arms, replication, budget, sigma=SIGMA):
    if isinstance(policy, OracleAllocation):
        policy = OracleAllocation(p=policy.p, sigma=sigma)
    policy.reset(len(sigma), budget)
    path = []
    for _ in range(budget):
        k = policy.next_group()
        path.append(k)
        policy.update(k, arms.sample(replication, k, policy.counts_[k]))
    return policy, path


@pytest.mark.parametrize("p", [1, 2, np.inf])
def test_online_and_simulate_agree_exactly(p):
    budget, reps = 160, 3
    for distribution in ("gaussian", "bernoulli"):
        arms = ArmSampler(sigma=SIGMA, mean=MEAN, distribution=distribution, random_state=11)
        for policy in all_policies(p):
            res = simulate(
                policy,
                sigma=SIGMA,
                mean=MEAN,
                budget=budget,
                n_replications=reps,
                distribution=distribution,
                random_state=11,
            )
            for r in range(reps):
                online, _ = run_online(policy, arms, r, budget)
                np.testing.assert_array_equal(online.counts_, res.counts[r], err_msg=repr(policy))
                np.testing.assert_array_equal(
                    online.means_, res.estimates[r], err_msg=repr(policy)
                )


def test_online_and_simulate_agree_for_a_user_sampler():
    def sampler(group, size, rng):
        return rng.standard_t(5, size=size) * (group + 1)

    budget = 120
    arms = ArmSampler(sigma=SIGMA, distribution=sampler, random_state=3, budget=budget)
    res = simulate(
        GreedyPlugIn(p=2),
        sigma=SIGMA,
        budget=budget,
        n_replications=4,
        distribution=sampler,
        random_state=3,
    )
    for r in range(4):
        online, _ = run_online(GreedyPlugIn(p=2), arms, r, budget)
        np.testing.assert_array_equal(online.counts_, res.counts[r])
        np.testing.assert_array_equal(online.means_, res.estimates[r])


def _rule_name(policy):
    return {
        UniformAllocation: "uniform",
        OracleAllocation: "oracle",
        TwoStagePlugIn: "two_stage",
        GreedyPlugIn: "greedy",
        GAFSMax: "gafs_max",
        CHAS: "ch_as",
        BAS: "b_as",
        VarianceUCB: "variance_ucb",
    }[type(policy)]


@pytest.mark.parametrize("p", [2, np.inf])
def test_kernels_match_the_plain_python_reference(p):
    """Every selection rule, re-implemented in plain Python, picks the same counts."""
    budget = 200
    arms = ArmSampler(sigma=SIGMA, mean=MEAN, distribution="gaussian", random_state=5)
    for policy in all_policies(p):
        res = simulate(
            policy, sigma=SIGMA, mean=MEAN, budget=budget, n_replications=3, random_state=5
        )
        _, pp, _, _ = policy._compile(4, budget, SIGMA)
        for r in range(3):
            samples = np.stack([arms.block(r, k, budget) for k in range(4)])
            counts, means = reference_run(
                _rule_name(policy),
                samples,
                p=float(p),
                n0=int(pp[1]),
                sigma=SIGMA,
                bonus=pp[2],
                log_term=pp[3],
            )
            np.testing.assert_array_equal(counts, res.counts[r], err_msg=repr(policy))
            np.testing.assert_allclose(means, res.estimates[r], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("p", [1, np.inf])
def test_allocations_sum_to_the_budget_and_fixed_rules_are_exact(p):
    for budget in (37, 256):
        for policy in all_policies(p):
            if budget < 4 * 19 and isinstance(policy, (TwoStagePlugIn, GreedyPlugIn)):
                continue
            res = simulate(policy, sigma=SIGMA, budget=budget, n_replications=5, random_state=0)
            assert np.all(res.counts.sum(axis=1) == budget)
            assert np.all(res.counts >= 1)
    res = simulate(UniformAllocation(p=p), sigma=SIGMA, budget=37, n_replications=2)
    np.testing.assert_array_equal(res.counts[0], [10, 9, 9, 9])
    res = simulate(OracleAllocation(p=p), sigma=SIGMA, budget=256, n_replications=2)
    np.testing.assert_array_equal(
        res.counts[0], round_allocation(SIGMA ** allocation_exponent(p), 256, floor=1)
    )


def test_two_stage_follows_the_plug_in_allocation_of_its_warm_start():
    budget, n0 = 400, 25
    arms = ArmSampler(sigma=SIGMA, random_state=2)
    res = simulate(
        TwoStagePlugIn(p=2, warm_start=n0),
        sigma=SIGMA,
        budget=budget,
        n_replications=3,
        random_state=2,
    )
    for r in range(3):
        var = np.array([np.var(arms.block(r, k, n0), ddof=1) for k in range(4)])
        expected = round_allocation(var ** (allocation_exponent(2) / 2), budget, floor=n0)
        np.testing.assert_array_equal(res.counts[r], expected)


INVARIANT = [OracleAllocation, UniformAllocation, TwoStagePlugIn, GreedyPlugIn, GAFSMax]


@pytest.mark.parametrize("cls", INVARIANT)
@pytest.mark.parametrize("p", [2, np.inf])
def test_invariances(cls, p):
    """Permutation permutes; mean shifts and a common scale leave the allocation unchanged."""
    budget, reps = 300, 40
    policy = cls(p=p)
    base = simulate(policy, sigma=SIGMA, budget=budget, n_replications=reps, random_state=7)
    perm = np.array([3, 1, 0, 2])
    permuted = simulate(
        policy,
        sigma=SIGMA[perm],
        budget=budget,
        n_replications=reps,
        random_state=7,
        group_keys=perm,
    )
    np.testing.assert_array_equal(permuted.counts, base.counts[:, perm])
    shifted = simulate(
        policy, sigma=SIGMA, mean=MEAN * 100, budget=budget, n_replications=reps, random_state=7
    )
    # Shifting changes the data at rounding level only: allow no more than one flip.
    assert np.sum(np.any(shifted.counts != base.counts, axis=1)) <= 1
    # Scaling by a power of two is exact in floating point.
    scaled = simulate(
        policy, sigma=4.0 * SIGMA, budget=budget, n_replications=reps, random_state=7
    )
    np.testing.assert_array_equal(scaled.counts, base.counts)


def test_confidence_bonus_rules_are_not_scale_free():
    """CH-AS' bonus assumes [0, 1] rewards: scaling changes its allocation (documented)."""
    base = simulate(CHAS(), sigma=SIGMA / 8, budget=300, n_replications=20, random_state=1)
    scaled = simulate(CHAS(), sigma=SIGMA * 8, budget=300, n_replications=20, random_state=1)
    assert not np.array_equal(base.counts, scaled.counts)


def test_batches_threads_and_seeds():
    policy = GreedyPlugIn(p=2)
    full = simulate(policy, sigma=SIGMA, budget=200, n_replications=10, random_state=4)
    tail = simulate(
        policy, sigma=SIGMA, budget=200, n_replications=4, random_state=4, replication_offset=6
    )
    np.testing.assert_array_equal(full.counts[6:], tail.counts)
    one = simulate(policy, sigma=SIGMA, budget=200, n_replications=10, random_state=4, n_jobs=1)
    np.testing.assert_array_equal(full.counts, one.counts)
    np.testing.assert_array_equal(full.estimates, one.estimates)
    other = simulate(policy, sigma=SIGMA, budget=200, n_replications=10, random_state=5)
    assert not np.array_equal(full.estimates, other.estimates)


def test_state_save_restore_and_pickle():
    budget = 150
    arms = ArmSampler(sigma=SIGMA, random_state=9)
    for policy in (GreedyPlugIn(p=2), TwoStagePlugIn(p=np.inf, warm_start=10), GAFSMax(), CHAS()):
        reference, path = run_online(policy, arms, 0, budget)
        expected = reference.counts_
        policy.reset(4, budget)
        for t in range(budget):
            if t == 70:
                state = policy.get_state()
                policy = pickle.loads(pickle.dumps(policy))
                fresh = type(policy)(**{k: v for k, v in policy._params().items()})
                fresh.set_state(state)
                policy = fresh
            k = policy.next_group()
            assert k == path[t]
            policy.update(k, arms.sample(0, k, policy.counts_[k]))
        np.testing.assert_array_equal(policy.counts_, expected)
        assert policy.n_samples_ == budget


def test_rademacher_variance_oracle():
    """X = mu + sigma r: the 1/n sample variance is exactly sigma^2 (1 - rbar^2)."""
    arms = ArmSampler(
        sigma=[2.0, 0.5], mean=[1.0, -1.0], distribution="rademacher", random_state=0
    )
    policy = UniformAllocation().reset(2, 400)
    for _ in range(400):
        k = policy.next_group()
        policy.update(k, arms.sample(0, k, policy.counts_[k]))
    for k, (s, m) in enumerate(((2.0, 1.0), (0.5, -1.0))):
        r = (arms.block(0, k, 200) - m) / s
        assert set(np.unique(r)) == {-1.0, 1.0}
        n = 200
        biased = policy.variances_[k] * (n - 1) / n
        assert biased == pytest.approx(s**2 * (1 - r.mean() ** 2), rel=1e-12)


def test_zero_variance_observations_are_documented_behaviour():
    """A group whose observations are constant gets score 0: greedy stops after the warm start."""
    policy = GreedyPlugIn(p=2, warm_start=3).reset(2, 50)
    rng = np.random.default_rng(0)
    for _ in range(50):
        k = policy.next_group()
        policy.update(k, 5.0 if k == 0 else rng.normal())
    assert policy.counts_[0] == 3 and policy.variances_[0] == 0.0


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: GreedyPlugIn(warm_start=10).reset(4, 30),
            ValueError,
            "smaller than the warm start",
        ),
        (lambda: GreedyPlugIn().reset(1, 30), ValueError, "at least 2 groups"),
        (lambda: GreedyPlugIn(warm_start=1).reset(2, 30), ValueError, "at least 2 samples"),
        (lambda: GreedyPlugIn(warm_start="cube").reset(2, 30), ValueError, "warm_start"),
        (lambda: GreedyPlugIn(p=0).reset(2, 30), ValueError, "p must be >= 1"),
        (lambda: GreedyPlugIn().reset(2, 30).update(0, np.nan), ValueError, "must be finite"),
        (lambda: GreedyPlugIn().reset(2, 30).update(2, 1.0), ValueError, "out of range"),
        (lambda: GreedyPlugIn().next_group(), RuntimeError, "reset"),
        (lambda: OracleAllocation().reset(2, 30), ValueError, "needs sigma"),
        (lambda: CHAS(delta=2.0).reset(2, 30), ValueError, "delta"),
        (
            lambda: simulate(GreedyPlugIn(), sigma=[1.0], budget=100),
            ValueError,
            "at least 2 groups",
        ),
        (lambda: simulate(GreedyPlugIn(), sigma=[1.0, 0.0], budget=100), ValueError, "positive"),
        (
            lambda: simulate(GreedyPlugIn(), sigma=[1.0, 2.0], budget=100, distribution="cauchy"),
            ValueError,
            "distribution",
        ),
        (
            lambda: simulate(
                GreedyPlugIn(), sigma=[1.0, 2.0], budget=100, distribution="bernoulli", shape=1.5
            ),
            ValueError,
            "success probability",
        ),
        (
            lambda: simulate(
                GreedyPlugIn(), sigma=[1.0, 2.0], budget=100, distribution="three_point", shape=0.2
            ),
            ValueError,
            "strictly sub-Gaussian",
        ),
        (
            lambda: simulate(
                GreedyPlugIn(),
                sigma=[1.0, 2.0],
                budget=100,
                distribution=lambda g, n, rng: np.zeros(3),
            ),
            ValueError,
            "returned shape",
        ),
        (lambda: simulate("greedy", sigma=[1.0, 2.0], budget=100), TypeError, "policy"),
    ],
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_budget_spent():
    policy = UniformAllocation().reset(2, 2)
    policy.update(policy.next_group(), 1.0).update(policy.next_group(), 2.0)
    with pytest.raises(RuntimeError, match="spent"):
        policy.next_group()
