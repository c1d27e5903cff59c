"""The sample streams: families, moments, strict sub-Gaussianity, counter-based identity."""

import numpy as np
import pytest
from scipy import stats

from mvlearn_ext.bandits import ArmSampler

N = 200_000


def draws(distribution, shape=None, seed=0):
    arms = ArmSampler(
        sigma=[1.0, 3.0],
        mean=[0.0, 2.0],
        distribution=distribution,
        shape=shape,
        random_state=seed,
    )
    return arms.block(0, 0, N), arms.block(1, 1, N)


@pytest.mark.parametrize(
    "distribution, shape, skew, exkurt",
    [
        ("gaussian", None, 0.0, 0.0),
        ("rademacher", None, 0.0, -2.0),
        ("uniform", None, 0.0, -1.2),
        ("three_point", 0.5, 0.0, 1 / 0.5 - 3),
        ("bernoulli", 0.2, 0.6 / 0.4, 1 / 0.16 - 6),
        ("gamma", 1.0, 2.0, 6.0),
        ("gamma", 0.5, 2 / np.sqrt(0.5), 12.0),
    ],
)
def test_families_are_standardised_with_the_right_shape(distribution, shape, skew, exkurt):
    z, x = draws(distribution, shape)
    se = 1 / np.sqrt(N)
    assert abs(z.mean()) < 5 * se
    assert abs(z.var() - 1) < 5 * np.sqrt((exkurt + 2) / N) + 25 / N
    assert abs((x.mean() - 2.0) / 3.0) < 5 * se and abs(x.std() / 3.0 - 1) < 0.02
    assert stats.skew(z) == pytest.approx(skew, abs=0.05 + 0.05 * abs(skew))
    assert stats.kurtosis(z) == pytest.approx(exkurt, abs=0.1 + 0.1 * abs(exkurt))


def test_gaussian_and_uniform_pass_ks_tests():
    z, _ = draws("gaussian")
    assert stats.kstest(z, "norm").pvalue > 1e-3
    u, _ = draws("uniform")
    assert stats.kstest(u, stats.uniform(-np.sqrt(3), 2 * np.sqrt(3)).cdf).pvalue > 1e-3
    g, _ = draws("gamma", 2.5)
    assert stats.kstest(g * np.sqrt(2.5) + 2.5, stats.gamma(2.5).cdf).pvalue > 1e-3


def test_three_point_is_strictly_subgaussian_exactly_on_its_range():
    """E exp(l X) <= exp(l^2 Var X / 2) for w in [1/3, 1], and fails below 1/3."""
    lam = np.linspace(-12, 12, 2001)

    def excess(w):  # X = +-1/sqrt(w) w.p. w/2, 0 otherwise; Var X = 1
        mgf = 1 - w + w * np.cosh(lam / np.sqrt(w))
        return np.max(np.log(mgf) - lam**2 / 2)

    for w in np.linspace(1 / 3, 1, 30):
        assert excess(w) <= 1e-12
    assert excess(0.3) > 0


def test_streams_are_counter_based():
    arms = ArmSampler(sigma=[1.0, 2.0, 0.5], random_state=42)
    block = arms.block(3, 1, 50)
    assert [arms.sample(3, 1, j) for j in (49, 0, 17)] == [block[49], block[0], block[17]]
    assert not np.array_equal(block, arms.block(3, 2, 50))
    assert not np.array_equal(block, arms.block(4, 1, 50))
    assert not np.array_equal(
        block, ArmSampler(sigma=[1.0, 2.0, 0.5], random_state=43).block(3, 1, 50)
    )
    # A group's stream follows its key, not its position.
    moved = ArmSampler(sigma=[2.0, 1.0, 0.5], random_state=42, group_keys=[1, 0, 2])
    np.testing.assert_array_equal(moved.block(3, 0, 50), block)
    # Streams of different groups/replications are uncorrelated.
    a, b = arms.block(0, 0, N), arms.block(0, 1, N)
    assert abs(np.corrcoef(a, b)[0, 1]) < 5 / np.sqrt(N)
    assert abs(np.corrcoef(a[:-1], a[1:])[0, 1]) < 5 / np.sqrt(N)


def test_huge_sizes_are_refused_before_allocation():
    from mvlearn_ext.bandits import GreedyPlugIn, simulate

    with pytest.raises(ValueError, match="budget=1000000000000 needs an array of"):
        simulate(GreedyPlugIn(p=2), sigma=[1.0, 2.0], budget=10**12, n_replications=2)
    with pytest.raises(ValueError, match="n_replications=1000000000000 needs an array of"):
        simulate(GreedyPlugIn(p=2), sigma=[1.0, 2.0], budget=100, n_replications=10**12)
    with pytest.raises(ValueError, match="budget=1000000000000 needs an array of"):
        GreedyPlugIn(p=2).reset(n_groups=2, budget=10**12)
