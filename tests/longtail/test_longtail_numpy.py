"""NumPy parts of AES (mvlearn_ext.longtail): splits, losses, combiners, label-free fusion."""

import inspect
import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import get_tags
from sklearn.utils._param_validation import InvalidParameterError

from mvlearn_ext.longtail import (
    ConflictArbitratedFusion,
    ars_class_weights,
    ars_static_terms,
    balanced_softmax_loss,
    class_groups,
    combine_gradients,
    entropy_task_weights,
    gradient_entropy,
    group_accuracy,
    logit_adjusted_loss,
    long_tail_counts,
    make_long_tail_indices,
    pcgrad_project,
    softmax_cross_entropy,
)


def test_long_tail_counts_follow_the_profile():
    counts = long_tail_counts(100, 10, 20)
    expected = np.floor(100 * 20.0 ** (-np.arange(10) / 9) + 1e-9).astype(int)
    np.testing.assert_array_equal(counts, expected)
    assert counts[0] == 100 and counts[-1] == 5
    assert np.all(np.diff(counts) <= 0)
    with pytest.raises(ValueError, match="imbalance_ratio"):
        long_tail_counts(10, 3, 0.5)


def test_long_tail_indices_have_the_quotas():
    rng = np.random.default_rng(0)
    y = rng.permutation(np.repeat(np.arange(5), 40))
    idx = make_long_tail_indices(y, 10, n_max=30, random_state=0)
    np.testing.assert_array_equal(np.bincount(y[idx]), long_tail_counts(30, 5, 10))
    assert np.array_equal(idx, make_long_tail_indices(y, 10, n_max=30, random_state=0))
    with pytest.raises(ValueError, match="fewer than its quota"):
        make_long_tail_indices(y, 10, n_max=50)


def test_group_accuracy_by_hand():
    counts = np.array([200, 50, 5])
    assert class_groups(counts).tolist() == ["many", "medium", "few"]
    y_true = np.array([0, 0, 1, 1, 2, 2])
    y_pred = np.array([0, 1, 1, 1, 0, 2])
    out = group_accuracy(y_true, y_pred, counts)
    assert out == {
        "overall": pytest.approx((0.5 + 1 + 0.5) / 3),
        "many": 0.5,
        "medium": 1.0,
        "few": 0.5,
    }
    with pytest.raises(ValueError, match="train_counts contains NaN"):
        group_accuracy(y_true, y_pred, [200.0, np.nan, 5.0])
    with pytest.raises(TypeError, match="y_pred"):
        group_accuracy(y_true, y_pred.astype(str), counts)


# ---------------------------------------------------------------------------
# Losses


def _fd_grad(fn, z, h=1e-6):
    g = np.zeros_like(z)
    for idx in np.ndindex(*z.shape):
        zp, zm = z.copy(), z.copy()
        zp[idx] += h
        zm[idx] -= h
        g[idx] = (fn(zp) - fn(zm)) / (2 * h)
    return g


def test_la_and_balanced_softmax_closed_forms_and_gradients():
    rng = np.random.default_rng(1)
    z, y = rng.normal(size=(6, 4)), rng.integers(0, 4, 6)
    counts = np.array([50, 20, 5, 1])
    np.testing.assert_allclose(
        logit_adjusted_loss(z, y, [3, 3, 3, 3]), softmax_cross_entropy(z, y)
    )
    np.testing.assert_allclose(
        balanced_softmax_loss(z, y, counts), softmax_cross_entropy(z + np.log(counts), y)
    )
    np.testing.assert_allclose(
        logit_adjusted_loss(z, y, counts, tau=0.5),
        softmax_cross_entropy(z + 0.5 * np.log(counts / counts.sum()), y),
    )
    _, g = logit_adjusted_loss(z, y, counts, tau=2.0, return_grad=True)
    np.testing.assert_allclose(
        g, _fd_grad(lambda q: logit_adjusted_loss(q, y, counts, tau=2.0), z), atol=1e-7
    )
    _, g = balanced_softmax_loss(z, y, counts, return_grad=True)
    np.testing.assert_allclose(
        g, _fd_grad(lambda q: balanced_softmax_loss(q, y, counts), z), atol=1e-7
    )
    with pytest.raises(ValueError, match="class_counts"):
        balanced_softmax_loss(z, y, [1, 2])
    with pytest.raises(ValueError, match="y must be <= 3"):
        softmax_cross_entropy(z, np.full(6, 9))
    with pytest.raises(TypeError, match="logits"):
        softmax_cross_entropy(z.astype(str), y)
    with pytest.raises(ValueError, match="class_counts contains NaN"):
        logit_adjusted_loss(z, y, [1.0, np.nan, 1.0, 1.0])


def test_precision_shielding_is_monotone_and_bounded():
    counts = np.array([500, 200, 80, 30, 10])
    static = ars_static_terms(counts)
    rng = np.random.default_rng(2)
    recall = rng.uniform(size=5)
    for c in range(5):
        lo = rng.uniform(size=5)
        hi = lo.copy()
        hi[c] = min(lo[c] + 0.4, 1.0)
        for normalize in (False, True):
            w_lo = ars_class_weights(
                static["cb_weights"], static["rarity"], recall, lo, normalize=normalize
            )
            w_hi = ars_class_weights(
                static["cb_weights"], static["rarity"], recall, hi, normalize=normalize
            )
            assert w_hi[c] < w_lo[c]
        raw = ars_class_weights(
            static["cb_weights"], static["rarity"], recall, lo, normalize=False
        )
        assert np.all(raw < static["cb_weights"] * 2 * 3)
    uniform = ars_class_weights(static["cb_weights"], static["rarity"], recall, lo, anneal=0.0)
    np.testing.assert_allclose(uniform, 1.0)
    assert np.all(static["rarity"] < 1) and static["rarity"][0] == 0


# ---------------------------------------------------------------------------
# Gradient combination


def test_pcgrad_hand_computed_and_removes_conflict_exactly():
    out = pcgrad_project([[1.0, 0.0], [-1.0, 1.0]], random_state=0)
    np.testing.assert_allclose(out, [[0.5, 0.5], [0.0, 1.0]])
    rng = np.random.default_rng(3)
    for _ in range(50):
        g = rng.normal(size=(2, 6))
        p = pcgrad_project(g, random_state=0)
        if g[0] @ g[1] < 0:
            np.testing.assert_allclose(p[0] @ g[1], 0.0, atol=1e-12)
            np.testing.assert_allclose(p[1] @ g[0], 0.0, atol=1e-12)
        else:
            np.testing.assert_array_equal(p, g)
        assert p[0] @ g[1] >= -1e-12 and p[1] @ g[0] >= -1e-12


def test_combiner_contracts():
    rng = np.random.default_rng(4)
    g = rng.normal(size=(3, 8))
    g[0, :2] = 0
    g[1, :2] = 0  # coordinates 0-1 touched only by task 2
    for mode in ("entropy_weighted", "pcgrad_entropy"):
        combined, omega = combine_gradients(g, mode=mode, random_state=0)
        assert omega.sum() == pytest.approx(1.0)
    combined, _ = combine_gradients(g, mode="entropy_weighted")
    np.testing.assert_allclose(combined[:2], g[2, :2])
    same = np.tile(g[2], (3, 1))
    for mode in ("entropy_weighted", "pcgrad_entropy", "pcgrad"):
        out, _ = combine_gradients(same, mode=mode, random_state=0)
        np.testing.assert_allclose(out, g[2])
    proj = pcgrad_project(g, random_state=7)
    summed, _ = combine_gradients(g, mode="pcgrad", reduction="sum", random_state=7)
    np.testing.assert_allclose(summed, proj.sum(axis=0))
    with pytest.raises(ValueError, match="mode"):
        combine_gradients(g, mode="mgda")


@pytest.mark.parametrize(
    "func", [pcgrad_project, gradient_entropy, entropy_task_weights, combine_gradients]
)
def test_gradient_functions_refuse_unusable_grads(func):
    g = np.array([[1.0, 0.0], [-1.0, 1.0]])
    with pytest.raises(ValueError, match="grads contains infinity"):
        func(np.where(g == 0, np.inf, g))
    with pytest.raises(ValueError, match="grads holds complex"):
        func(g + 1j)
    with pytest.raises(ValueError, match="grads holds values too large"):
        func(g * 1e300)


def test_gradient_entropy_limits_and_weights():
    d = 16
    assert gradient_entropy(np.ones((1, d)))[0] == pytest.approx(np.log(d))
    assert gradient_entropy(np.eye(1, d))[0] == 0.0
    w = entropy_task_weights(np.vstack([np.ones(d), np.eye(1, d)[0]]))
    assert w.sum() == pytest.approx(1.0) and w[0] > w[1]


# ---------------------------------------------------------------------------
# Label-free fusion


def _val(rng, n_heads=3, n=60, c=4):
    return rng.normal(size=(n_heads, n, c)), rng.integers(0, c, n)


def test_fusion_never_takes_labels_at_inference():
    for name in ("predict", "predict_proba"):
        params = list(inspect.signature(getattr(ConflictArbitratedFusion, name)).parameters)
        assert params == ["self", "head_logits"]
    rng = np.random.default_rng(5)
    val, y_val = _val(rng)
    fusion = ConflictArbitratedFusion([40, 20, 8, 3], tail_threshold=10).fit(val, y_val)
    test = rng.normal(size=(3, 50, 4))
    y_test = rng.integers(0, 4, 50)
    pred = fusion.predict(test)
    # scoring with shuffled labels never changes the predictions
    for seed in range(3):
        shuffled = np.random.default_rng(seed).permutation(y_test)
        group_accuracy(
            shuffled, fusion.predict(test), [40, 20, 8, 3], many_threshold=30, few_threshold=10
        )
        np.testing.assert_array_equal(fusion.predict(test), pred)


def test_fusion_agreeing_heads_give_their_common_argmax_and_weights_are_normalised():
    rng = np.random.default_rng(6)
    val, y_val = _val(rng)
    fusion = ConflictArbitratedFusion([40, 20, 8, 3], tail_threshold=10).fit(val, y_val)
    np.testing.assert_allclose(fusion.weights_.sum(axis=0), 1.0)
    base = rng.normal(size=(50, 4))
    agreeing = np.stack([base, 2 * base + 0.1, base - 1.0])  # same argmax per sample
    np.testing.assert_array_equal(fusion.predict(agreeing), base.argmax(axis=1))
    proba = fusion.predict_proba(agreeing)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_fusion_prefers_the_head_that_is_right_on_validation():
    rng = np.random.default_rng(7)
    n, c = 200, 4
    y_val = rng.integers(0, c, n)
    good = np.eye(c)[y_val] * 5 + rng.normal(size=(n, c))
    bad = rng.normal(size=(n, c))
    fusion = ConflictArbitratedFusion([50, 50, 50, 50], tail_threshold=1).fit(
        np.stack([good, bad]), y_val
    )
    assert np.all(fusion.weights_[0] > fusion.weights_[1])
    with pytest.raises(ValueError, match="heads"):
        fusion.predict(rng.normal(size=(3, 5, c)))
    with pytest.raises(NotFittedError, match="not fitted"):
        ConflictArbitratedFusion([1, 2]).predict(np.zeros((1, 2, 2)))


def test_fusion_refuses_unusable_arrays_by_name():
    rng = np.random.default_rng(0)
    z, y = rng.normal(size=(2, 12, 3)), rng.integers(0, 3, 12)
    fusion = ConflictArbitratedFusion([20, 10, 5], tail_threshold=8)
    bad_nan = z.copy()
    bad_nan[0, 1, 2] = np.nan
    for bad_z, exc, match in [
        (z.astype(str), TypeError, "head_logits must be a numeric array"),
        (z + 1j, ValueError, "head_logits holds complex"),
        (bad_nan, ValueError, "head_logits contains NaN"),
        (z[:0], ValueError, "head_logits is empty"),
        (z[0], ValueError, "head_logits must be 3-D"),
    ]:
        with pytest.raises(exc, match=match):
            fusion.fit(bad_z, y)
    for bad_y, exc, match in [
        (y.astype(str), TypeError, "y must be"),
        (y + 1j, ValueError, "y holds complex"),
        (np.where(np.arange(12) == 3, np.nan, y), ValueError, "y contains NaN"),
        (np.where(np.arange(12) == 3, 3, y), ValueError, "y must be <= 2"),
        (y[:, None], ValueError, r"y must have shape \(12,\)"),
    ]:
        with pytest.raises(exc, match=match):
            fusion.fit(z, bad_y)
    fusion.fit(z, y)
    for bad_z, exc, match in [
        (z.astype(str), TypeError, "head_logits must be a numeric array"),
        (z + 1j, ValueError, "head_logits holds complex"),
    ]:
        with pytest.raises(exc, match=match):
            fusion.predict(bad_z)
    # labels given as whole floats are the same labels
    np.testing.assert_array_equal(
        ConflictArbitratedFusion([20, 10, 5], tail_threshold=8).fit(z, y.astype(float)).weights_,
        ConflictArbitratedFusion([20, 10, 5], tail_threshold=8).fit(z, y).weights_,
    )


def test_longtail_never_imports_torch():
    code = "import mvlearn_ext.longtail, sys; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def _fusion_data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(2, 30, 4)), rng.integers(0, 4, 30)


@pytest.mark.parametrize(
    "params, name",
    [
        (dict(temperature=0), "temperature"),
        (dict(temperature=-1.0), "temperature"),
        (dict(temperature=np.inf), "temperature"),
        (dict(temperature="1"), "temperature"),
        (dict(tail_threshold="a"), "tail_threshold"),
        (dict(tail_threshold=-1), "tail_threshold"),
        (dict(tail_threshold=np.nan), "tail_threshold"),
    ],
)
def test_fusion_refuses_invalid_parameters_by_name(params, name):
    z, y = _fusion_data()
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
        ConflictArbitratedFusion([100, 50, 10, 5], **params).fit(z, y)


@pytest.mark.parametrize(
    "counts, error, match",
    [
        ("abcd", InvalidParameterError, "'train_counts' parameter"),
        (["a", "b", "c", "d"], TypeError, "train_counts must be a numeric array"),
        ([100, 50, np.nan, 5], ValueError, "train_counts contains NaN"),
        ([[100, 50, 10, 5]], ValueError, "train_counts must be 1-D"),
        ([100], ValueError, "train_counts must hold one count per class"),
        ([100, 50, 0, 5], ValueError, "train_counts must be positive"),
    ],
)
def test_fusion_refuses_invalid_train_counts_by_name(counts, error, match):
    z, y = _fusion_data()
    with pytest.raises(error, match=match):
        ConflictArbitratedFusion(counts).fit(z, y)


def test_fusion_is_a_scikit_learn_estimator():
    counts = np.array([100, 50, 10, 5])
    fusion = ConflictArbitratedFusion(counts, tail_threshold=12, temperature=0.5)
    assert isinstance(fusion, BaseEstimator)
    # stored as given, not converted
    assert fusion.get_params()["train_counts"] is counts
    assert fusion.get_params() == {
        "train_counts": counts,
        "tail_threshold": 12,
        "temperature": 0.5,
    }
    # invalid values are stored too: validation happens in fit
    assert ConflictArbitratedFusion(counts, temperature=-1).temperature == -1
    z, y = _fusion_data()
    fitted = fusion.fit(z, y)
    copy = clone(fitted)
    assert copy.get_params()["tail_threshold"] == 12
    assert not hasattr(copy, "weights_")
    np.testing.assert_array_equal(copy.fit(z, y).predict(z), fitted.predict(z))
    assert fusion.set_params(temperature=2.0).temperature == 2.0
    tags = get_tags(fusion).input_tags
    assert not tags.two_d_array and tags.three_d_array


def test_fusion_tiny_temperature_predicts_without_warnings():
    z, y = _fusion_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tiny = ConflictArbitratedFusion([100, 50, 10, 5], temperature=1e-320).fit(z, y)
        pred = tiny.predict(z)
    # the limit of a vanishing temperature: every confidence is 1
    small = ConflictArbitratedFusion([100, 50, 10, 5], temperature=1e-6).fit(z, y)
    np.testing.assert_array_equal(pred, small.predict(z))


def test_fusion_default_train_counts_are_the_counts_of_y():
    z, y = _fusion_data()
    counts = np.bincount(y, minlength=4)
    default = ConflictArbitratedFusion(tail_threshold=8).fit(z, y)
    explicit = ConflictArbitratedFusion(counts, tail_threshold=8).fit(z, y)
    np.testing.assert_array_equal(default.weights_, explicit.weights_)
    np.testing.assert_array_equal(default.tail_, counts < 8)
    with pytest.raises(ValueError, match="y has no sample of class 3"):
        ConflictArbitratedFusion().fit(z, np.where(y == 3, 0, y))
