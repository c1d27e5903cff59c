"""CIMLN's missing-view protocol, masking rule and context statistic (NumPy)."""

import subprocess
import sys

import numpy as np
import pytest

from mvlearn_ext.incomplete import (
    context_statistic,
    counterfactual_mask,
    counterfactual_view_probs,
    make_unbalanced_mask,
    mask_from_nan,
    mask_views,
    mean_impute,
    view_miss_probabilities,
)


def test_no_torch_import():
    code = "import sys, mvlearn_ext.incomplete; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_miss_table_is_the_codes_not_a_grid():
    np.testing.assert_array_equal(view_miss_probabilities(4), [0, 0.25, 0.75, 1])
    np.testing.assert_array_equal(view_miss_probabilities(6), [0, 0.2, 0.4, 0.6, 0.8, 1])
    with pytest.raises(ValueError, match="n_views"):
        view_miss_probabilities(7)


@pytest.mark.parametrize("n_views", [2, 3, 4, 5, 6])
def test_unbalanced_mask_protocol(n_views):
    n = 4000
    m = make_unbalanced_mask(n, n_views, missing_rate=0.5, random_state=0)
    assert m.shape == (n, n_views) and m.dtype == bool
    assert m.any(axis=1).all()  # every row keeps a view
    assert (~m.all(axis=1)).sum() == n // 2  # exactly floor(eta n) incomplete rows
    assert m[:, 0].all()  # mu = 0 view never missing
    assert not m[~m.all(axis=1), -1].any()  # mu = 1 view always missing when incomplete
    miss = 1 - m.mean(axis=0)
    assert (np.diff(miss) >= -0.01).all()  # non-decreasing in v (empirical, large n)


def test_two_views_guaranteed_counts_exact():
    m = make_unbalanced_mask(1001, 2, missing_rate=0.5, random_state=3)
    inc = ~m.all(axis=1)
    assert inc.sum() == 500
    assert m[inc, 0].all() and not m[inc, 1].any()


def test_mask_is_seeded():
    a = make_unbalanced_mask(300, 5, random_state=7)
    b = make_unbalanced_mask(300, 5, random_state=7)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, make_unbalanced_mask(300, 5, random_state=8))


def test_counterfactual_probs_target_low_missing_rate_views():
    m = make_unbalanced_mask(5000, 6, random_state=0)
    p = counterfactual_view_probs(m, 0.3)
    obs = m.mean(axis=0)
    # more often observed -> more often masked, exactly proportional before clipping
    assert (np.diff(p) < 0).all() and (np.diff(obs) < 0).all()
    np.testing.assert_allclose(p / p[0], obs / obs[0])
    assert p.mean() == pytest.approx(0.3)
    np.testing.assert_array_equal(counterfactual_view_probs(m, 0.3, mode="uniform"), 0.3)
    # empirical masking frequency follows beta_v among observed entries
    cf = counterfactual_mask(m, p, keep_one=False, random_state=0)
    freq = ((m & ~cf).sum(0)) / m.sum(0)
    np.testing.assert_allclose(freq, p, atol=0.03)


def test_counterfactual_mask_subset_and_guard():
    m = make_unbalanced_mask(2000, 4, random_state=1)
    cf = counterfactual_mask(m, np.full(4, 0.9), random_state=0)
    assert not (cf & ~m).any()
    assert cf.any(axis=1).all()
    cf0 = counterfactual_mask(m, np.zeros(4), random_state=0)
    np.testing.assert_array_equal(cf0, m)
    nog = counterfactual_mask(m, np.full(4, 0.9), keep_one=False, random_state=0)
    assert not nog.any(axis=1).all()  # the code's behaviour: rows can lose every view


def test_context_statistic_hand_example():
    H = np.array([[[1.0, 2.0], [3.0, 0.0], [9.0, 9.0]], [[3.0, 0.0], [1.0, 4.0], [9.0, 9.0]]])
    complete = np.array([True, True, False])
    hbar = np.array([[2.0, 1.0], [2.0, 2.0]])
    expected = np.stack([(hbar * H[v, :2]).mean(0) for v in range(2)])
    np.testing.assert_allclose(context_statistic(H, complete), expected)
    np.testing.assert_allclose(expected, [[4.0, 1.0], [4.0, 4.0]])
    with pytest.raises(ValueError, match="complete sample"):
        context_statistic(H, np.zeros(3, dtype=bool))


def test_nan_roundtrip_and_mean_impute():
    rng = np.random.default_rng(0)
    Xs = [rng.normal(size=(50, 3)), rng.normal(size=(50, 2))]
    m = make_unbalanced_mask(50, 2, random_state=0)
    Xn = mask_views(Xs, m)
    np.testing.assert_array_equal(mask_from_nan(Xn), m)
    Xi = mean_impute(Xs, m)
    np.testing.assert_allclose(Xi[1][~m[:, 1]], np.broadcast_to(Xs[1][m[:, 1]].mean(0), (25, 2)))
    bad = [Xn[0].copy(), Xn[1]]
    bad[0][0, 0] = np.nan
    bad[0][0, 1:] = 1.0
    with pytest.raises(ValueError, match="partly NaN"):
        mask_from_nan(bad)
    with pytest.raises(ValueError, match="no observed view"):
        mean_impute(Xs, np.zeros((50, 2), dtype=bool))


def test_mean_impute_ignores_unobserved_rows_but_refuses_nan_in_observed_ones():
    mask = np.array([[True, True], [True, False], [False, True]])
    X0 = np.array([[1.0], [3.0], [np.nan]])  # row 2 unobserved in view 0
    Xi = mean_impute([X0, np.ones((3, 1))], mask)
    np.testing.assert_array_equal(Xi[0].ravel(), [1.0, 3.0, 2.0])
    with pytest.raises(ValueError, match="view 1 of Xs .*contains NaN"):
        mean_impute([X0, np.array([[np.nan], [0.0], [1.0]])], mask)
    with pytest.raises(ValueError, match="mask has shape"):
        mean_impute([X0, np.ones((3, 1))], mask[:2])


def test_mask_functions_validate_their_arrays():
    mask = np.array([[True, True], [True, False], [False, True]])
    Xs = [np.ones((3, 1)), np.ones((3, 2))]
    with pytest.raises(ValueError, match="view 0 of Xs .*contains NaN"):
        mask_views([np.array([[1.0], [np.nan], [1.0]]), Xs[1]], mask)
    with pytest.raises(ValueError, match="view 0 of Xs contains infinity"):
        mask_from_nan([np.array([[1.0], [np.inf], [1.0]]), Xs[1]])
    with pytest.raises(TypeError, match="mask"):
        mask_views(Xs, mask.astype(str))
    with pytest.raises(ValueError, match="view_probs contains NaN"):
        counterfactual_mask(mask, [0.5, np.nan])
    with pytest.raises(ValueError, match="H holds values too large"):
        context_statistic(np.full((2, 3, 4), 1e300), [True, True, False])


def test_mask_views_accepts_nan_in_unobserved_rows_like_mean_impute():
    mask = np.array([[True, True], [True, False], [False, True]])
    Xs = [np.array([[1.0], [3.0], [9.0]]), np.ones((3, 2))]
    once = mask_views(Xs, mask)
    twice = mask_views(once, mask)  # masking masked views changes nothing
    for a, b in zip(once, twice, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(mask_from_nan(twice), mask)
    np.testing.assert_array_equal(mean_impute(once, mask)[0].ravel(), [1.0, 3.0, 2.0])


@pytest.mark.parametrize("scale", [1e-300, 1e200, 1e300])
def test_mean_impute_fills_the_observed_mean_in_any_units(scale):
    mask = np.array([[True, True], [True, False], [False, True]])
    X0 = np.array([[1.0, -2.0], [3.0, 0.5], [np.nan, np.nan]])
    Xi = mean_impute([scale * X0, np.ones((3, 1))], mask)
    np.testing.assert_allclose(Xi[0][2], scale * np.array([2.0, -0.75]), rtol=1e-14)
    top = mean_impute([np.array([[1.7e308], [1.7e308], [0.0]]), np.ones((3, 1))], mask)
    assert top[0][2, 0] == 1.7e308


@pytest.mark.parametrize("mask", [None, [[True, False], [True]], object()])
def test_masks_of_the_wrong_type_are_refused_by_name(mask):
    with pytest.raises(TypeError, match="mask must be an array of booleans"):
        mean_impute([np.ones((2, 1)), np.ones((2, 1))], mask)


def test_generators_are_accepted_as_random_state():
    from mvlearn_ext.incomplete import make_rate_mask, make_unbalanced_views

    mask = np.array([[True, True], [True, False], [False, True]])
    a = counterfactual_mask(mask, [0.5, 0.5], random_state=np.random.default_rng(0))
    b = counterfactual_mask(mask, [0.5, 0.5], random_state=np.random.default_rng(0))
    np.testing.assert_array_equal(a, b)
    m = make_unbalanced_mask(20, 3, random_state=np.random.default_rng(1))
    np.testing.assert_array_equal(
        m, make_unbalanced_mask(20, 3, random_state=np.random.default_rng(1))
    )
    assert make_rate_mask(10, [0.5, 0.5], random_state=np.random.default_rng(2)).shape == (10, 2)
    Xs, _, _ = make_unbalanced_views(20, random_state=np.random.default_rng(3))
    assert len(Xs) == 3
    with pytest.raises(TypeError, match="random_state"):
        make_unbalanced_mask(20, 3, random_state="seed")
    with pytest.raises(TypeError, match="random_state"):
        counterfactual_mask(mask, [0.5, 0.5], random_state=True)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: make_unbalanced_mask(True, 3), "n_samples"),
        (lambda: make_unbalanced_mask(10, 3, missing_rate=True), "missing_rate"),
        (lambda: counterfactual_view_probs(np.ones((2, 2), bool), True), "beta"),
    ],
)
def test_booleans_are_not_counts_or_rates(call, match):
    with pytest.raises(ValueError, match=match):
        call()
