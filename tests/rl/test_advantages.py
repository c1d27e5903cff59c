"""Group-relative advantages, std filter and entropy masks (NumPy, no torch)."""

import math
import subprocess
import sys

import numpy as np
import pytest

from mvlearn_ext.rl import entropy_mask, group_advantages, multi_reward_advantages, std_filter


def test_no_torch_import():
    code = "import sys, mvlearn_ext.rl; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("seed", range(3))
def test_zero_sum_and_unit_std_per_group(seed):
    rng = np.random.default_rng(seed)
    R = rng.normal(size=(5, 8)) * rng.uniform(0.5, 3, size=(5, 1))
    A = group_advantages(R)
    np.testing.assert_allclose(A.sum(axis=1), 0.0, atol=1e-12)
    std = R.std(axis=1, ddof=1)
    np.testing.assert_allclose(A.std(axis=1, ddof=1), std / (std + 1e-4), rtol=1e-12)


def test_matches_trl_formula_flat_layout():
    rng = np.random.default_rng(0)
    r = rng.normal(size=12)
    g = r.reshape(3, 4)
    expected = (g - g.mean(1, keepdims=True)) / (g.std(1, ddof=1, keepdims=True) + 1e-4)
    A = group_advantages(r, group_size=4)
    assert A.shape == (12,)
    np.testing.assert_allclose(A, expected.reshape(-1))


def test_openrlhf_eps_and_batch_none_scaling():
    R = np.array([[0.0, 1.0, 2.0], [5.0, 5.0, 8.0]])
    A = group_advantages(R, eps=1e-9)
    np.testing.assert_allclose(A[0], [-1.0, 0.0, 1.0], atol=1e-8)
    Ab = group_advantages(R, scale_rewards="batch")
    np.testing.assert_allclose(Ab, (R - R.mean(1, keepdims=True)) / (R.std(ddof=1) + 1e-4))
    An = group_advantages(R, scale_rewards="none")
    np.testing.assert_allclose(An, R - R.mean(1, keepdims=True))


def test_all_equal_group_gives_zero():
    A = group_advantages([[3.0, 3.0, 3.0], [1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(A[0], 0.0)
    assert np.abs(A[1]).max() > 0.5


def test_nan_rewards_are_left_out():
    R = np.array([[1.0, np.nan, 3.0, 5.0]])
    A = group_advantages(R)
    assert A[0, 1] == 0.0
    finite = np.array([1.0, 3.0, 5.0])
    np.testing.assert_allclose(A[0, [0, 2, 3]], (finite - 3.0) / (2.0 + 1e-4))
    allnan = group_advantages([[np.nan, np.nan]])
    np.testing.assert_array_equal(allnan, 0.0)


def test_constant_group_is_exactly_zero():
    # 0.1 * 3 / 3 != 0.1 in floating point: round-off must not become an advantage
    np.testing.assert_array_equal(group_advantages([[0.1, 0.1, 0.1]]), 0.0)
    np.testing.assert_array_equal(group_advantages([[0.1, np.nan, 0.1]], eps=0.0), 0.0)


def test_affine_invariance_up_to_eps():
    rng = np.random.default_rng(1)
    R = rng.uniform(0, 1, size=(4, 8))
    A1 = group_advantages(R)
    A2 = group_advantages(7.0 * R + 3.0)
    # relative error of order eps / std
    np.testing.assert_allclose(A1, A2, rtol=1e-3)


def test_multi_reward_sum_then_normalize_equals_weighted_total():
    rng = np.random.default_rng(2)
    R = rng.normal(size=(3, 4, 2))
    w = np.array([1.0, 0.5])
    A = multi_reward_advantages(R, weights=w)
    np.testing.assert_allclose(A, group_advantages(R @ w))
    flat = multi_reward_advantages(R.reshape(12, 2), weights=w, group_size=4)
    np.testing.assert_allclose(flat, A.reshape(-1))


def test_multi_reward_normalize_then_sum_batch_normalised():
    rng = np.random.default_rng(3)
    R = rng.normal(size=(3, 5, 2)) * [1.0, 100.0]
    A = multi_reward_advantages(R, aggregation="normalize_then_sum")
    assert abs(A.mean()) < 1e-12
    assert A.std(ddof=1) == pytest.approx(1.0, rel=1e-3)
    # the scale of a reward does not let it dominate (GDPO's point)
    R2 = R * [1.0, 0.01]
    np.testing.assert_allclose(
        multi_reward_advantages(R2, aggregation="normalize_then_sum"), A, rtol=1e-3, atol=1e-3
    )


def test_multi_reward_nan_is_a_declined_reward():
    """A NaN reward adds nothing to the weighted sum; an all-NaN completion is unscorable."""
    R = np.array([[1.0, np.nan], [0.0, 2.0], [np.nan, np.nan], [3.0, 1.0]])
    w = np.array([1.0, 0.5])
    A = multi_reward_advantages(R, weights=w, group_size=4)
    total = np.array([1.0, 1.0, 3.5])
    expected = (total - total.mean()) / (total.std(ddof=1) + 1e-4)
    np.testing.assert_allclose(A[[0, 1, 3]], expected)
    assert A[2] == 0.0


def test_multi_reward_normalize_then_sum_closed_form():
    rng = np.random.default_rng(4)
    R = rng.normal(size=(2, 4, 2))
    R[0, 1, 1] = np.nan  # declined by the second reward function only
    w = np.array([2.0, -0.5])
    mean = np.nanmean(R, axis=1, keepdims=True)
    std = np.nanstd(R, axis=1, ddof=1, keepdims=True)
    total = np.nansum((R - mean) / (std + 1e-4) * w, axis=2)
    expected = (total - total.mean()) / (total.std(ddof=1) + 1e-4)
    for scale in ("group", "batch", "none"):  # TRL ignores scale_rewards here
        A = multi_reward_advantages(
            R, weights=w, aggregation="normalize_then_sum", scale_rewards=scale
        )
        np.testing.assert_allclose(A, expected)


def test_multi_reward_bad_input():
    R = np.ones((2, 4, 2))
    with pytest.raises(ValueError, match="aggregation must be"):
        multi_reward_advantages(R, aggregation="sum")
    with pytest.raises(ValueError, match="weights contains NaN"):
        multi_reward_advantages(R, weights=[1.0, np.nan])
    with pytest.raises(ValueError, match="weights must be 2 finite"):
        multi_reward_advantages(R, weights=[1.0])
    with pytest.raises(ValueError, match="scale_rewards must be"):
        multi_reward_advantages(R, scale_rewards="token")
    with pytest.raises(ValueError, match="eps must be"):
        multi_reward_advantages(R, eps=-1.0)


def test_std_filter_drops_exactly_degenerate_groups():
    R = np.array([[0.5, 0.5, 0.5, 0.5], [0.5, 0.5005, 0.5, 0.5], [0.0, 1.0, 0.0, 1.0]])
    stds = R.std(axis=1, ddof=1)
    keep = std_filter(R, threshold=1e-3)
    np.testing.assert_array_equal(keep, stds > 1e-3)
    assert keep.tolist() == [False, False, True]
    assert std_filter(R, threshold=-1).all()
    assert std_filter(R.reshape(-1), group_size=4).tolist() == keep.tolist()


def test_entropy_mask_sequence_counts_and_subset():
    rng = np.random.default_rng(0)
    H = rng.uniform(size=(6, 20))
    valid = np.ones((6, 20), dtype=bool)
    lengths = [20, 17, 10, 5, 1, 13]
    for i, n in enumerate(lengths):
        valid[i, n:] = False
    H[~valid] = 99.0  # padding with a huge entropy must never be kept
    m = entropy_mask(H, valid, rho=0.2)
    assert not (m & ~valid).any()
    for i, n in enumerate(lengths):
        assert m[i].sum() == math.ceil(0.2 * n)
        kept = H[i, m[i]]
        assert kept.min() >= H[i, valid[i] & ~m[i]].max(initial=-1)
    np.testing.assert_array_equal(entropy_mask(H, valid, rho=1.0), valid)
    np.testing.assert_array_equal(entropy_mask(H, valid, rho=1.0, scope="batch"), valid)


def test_entropy_mask_ties_keep_at_least_k():
    H = np.array([[0.5, 0.5, 0.5, 0.1]])
    assert entropy_mask(H, rho=0.25).sum() == 3


def test_entropy_mask_sequence_and_batch_differ():
    # sequence 0 is all low-entropy, sequence 1 all high: the batch quantile keeps only
    # sequence 1, the per-sequence rule keeps the top token of each
    H = np.array([[0.1, 0.2, 0.3, 0.4], [1.1, 1.2, 1.3, 1.4]])
    seq = entropy_mask(H, rho=0.25, scope="sequence")
    bat = entropy_mask(H, rho=0.25, scope="batch")
    assert seq.sum(1).tolist() == [1, 1]
    assert bat[0].sum() == 0 and bat[1].sum() == 2
    np.testing.assert_array_equal(bat, H >= np.quantile(H, 0.75))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rewards": [[1.0, 2.0]], "group_size": 3}, "group_size"),
        ({"rewards": [1.0, 2.0, 3.0]}, "group_size"),
        ({"rewards": [1.0, 2.0, 3.0], "group_size": 2}, "multiple"),
        ({"rewards": [[1.0, np.inf]]}, "rewards contains infinity"),
        ({"rewards": [[1.0, 2.0]], "scale_rewards": "x"}, "scale_rewards"),
        ({"rewards": [[1.0, 2.0]], "eps": -1.0}, "eps"),
        ({"rewards": [[1.0, 2.0]], "eps": np.inf}, "eps"),
    ],
)
def test_group_advantages_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        group_advantages(**kwargs)


def test_rewards_are_validated_by_name():
    with pytest.raises(TypeError, match="rewards must be a numeric array"):
        group_advantages([["1", "0"]])
    with pytest.raises(ValueError, match="rewards holds complex values"):
        std_filter(np.ones((1, 2)) + 1j)
    with pytest.raises(ValueError, match="rewards holds values too large"):
        group_advantages([[1e300, 0.0]])
    with pytest.raises(ValueError, match="weights contains infinity"):
        multi_reward_advantages(np.ones((1, 2, 2)), weights=[1.0, np.inf])
    # None in a list of rewards is a missing reward, as NaN is (TRL)
    np.testing.assert_array_equal(
        group_advantages([[1.0, None, 0.0]]), group_advantages([[1.0, np.nan, 0.0]])
    )


def test_entropy_mask_errors():
    with pytest.raises(ValueError, match="rho"):
        entropy_mask([[0.1, 0.2]], rho=0.0)
    with pytest.raises(ValueError, match="action_mask"):
        entropy_mask([[0.1, 0.2]], [[True]])
    with pytest.raises(ValueError, match="scope"):
        entropy_mask([[0.1, 0.2]], scope="global")
    with pytest.raises(ValueError, match="entropies contains infinity"):
        entropy_mask([[0.1, np.inf]])
    with pytest.raises(ValueError, match="NaN at valid tokens"):
        entropy_mask([[0.1, np.nan]])
    # NaN at padding is ignored
    assert entropy_mask([[0.1, np.nan]], [[True, False]], rho=1.0).tolist() == [[True, False]]
