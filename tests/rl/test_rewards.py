"""GRAPE rank rewards, score inflation, and VisualScore's Gaussian reward."""

import warnings

import numpy as np
import pytest

from mvlearn_ext.rl import (
    accuracy_reward,
    format_reward,
    gaussian_reward,
    group_advantages,
    inflation_score,
    make_score_inflation_case,
    parse_answer,
    rank_reward,
    recall_at_k,
    retrieval_rank,
    retrieval_scores,
    similarity_reward,
)


def _brute_rank(s, t):
    # sort by (-score, target last among ties)
    order = sorted(range(len(s)), key=lambda j: (-s[j], j == t))
    # ties count against the target: target is placed after all equal scores
    return order.index(t) + 1


@pytest.mark.parametrize("seed", range(4))
def test_rank_equals_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    S = rng.integers(0, 4, size=(30, 7)).astype(float)  # many ties
    t = rng.integers(0, 7, size=30)
    ranks = retrieval_rank(S, t)
    assert ranks.tolist() == [_brute_rank(S[i], t[i]) for i in range(30)]


def test_rank_reward_range_and_top1():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(50, 20))
    t = rng.integers(0, 20, size=50)
    r = rank_reward(S, t)
    assert r.min() >= 0 and r.max() <= 1
    lit = rank_reward(S, t, kind="literal")
    assert lit.min() >= 0 and lit.max() <= 19
    np.testing.assert_allclose(lit / 19, r)
    top = S.argmax(axis=1)
    np.testing.assert_array_equal(rank_reward(S, top), 1.0)
    np.testing.assert_array_equal(rank_reward(S, top, kind="reciprocal"), 1.0)
    hit = rank_reward(S, t, kind="hit", k=10)
    np.testing.assert_array_equal(hit, retrieval_rank(S, t) <= 10)


def test_literal_and_normalised_give_same_advantages_with_constant_format():
    rng = np.random.default_rng(1)
    S = rng.normal(size=(8, 50))
    t = np.zeros(8, dtype=int)
    fmt = np.ones(8)
    R1 = rank_reward(S, t) + 0.5 * fmt
    R2 = rank_reward(S, t, kind="literal") + 0.5 * fmt
    A1 = group_advantages(R1[None])
    A2 = group_advantages(R2[None])
    std1 = R1.std(ddof=1)
    np.testing.assert_allclose(A1, A2, atol=10 * 1e-4 / std1)


def test_score_inflation_case():
    case = make_score_inflation_case()
    Q = np.stack([case["query"], case["inflated_query"]])
    S = retrieval_scores(Q, case["items"])
    t = [case["target"]] * 2
    sim = similarity_reward(S, t)
    rr = rank_reward(S, t)
    iota = inflation_score(S)
    assert sim[1] > sim[0]  # the naive reward rises
    assert rr[1] < rr[0]  # the rank of the target falls
    assert iota[1] > iota[0]  # every score is inflated
    assert retrieval_rank(S, t).tolist() == [1, 3]
    assert inflation_score(S, t)[1] > inflation_score(S, t)[0]
    # q is orthogonal to the collection mean, q' is the normalised step toward it
    assert abs(case["query"] @ case["collection_mean"]) < 1e-12
    step = case["query"] + 1.25 * case["collection_mean"]
    np.testing.assert_allclose(case["inflated_query"], step / np.linalg.norm(step))


def test_format_reward_and_parser():
    texts = [
        "<think>looks sharp</think><answer>3.75</answer>",
        " <think>a</think>\n<answer> 2 </answer> ",
        "<answer>3</answer>",
        "<think>x</think><answer>three</answer>",
        "<think>x<answer>4</answer>",
        None,
    ]
    np.testing.assert_array_equal(format_reward(texts), [1, 1, 0, 1, 0, 0])
    np.testing.assert_array_equal(format_reward(texts, value=0.5), [0.5, 0.5, 0, 0.5, 0, 0])
    parsed = parse_answer(texts)
    assert parsed[:2].tolist() == [3.75, 2.0]
    assert np.isnan(parsed[2:]).all()
    ra = gaussian_reward(parsed, np.full(6, 3.0))
    assert (ra[2:] == 0).all()
    with pytest.raises(TypeError, match="list of strings"):
        format_reward("<think></think><answer>1</answer>")


def test_gaussian_reward_shape():
    sigma = 0.8
    e = np.linspace(-3, 3, 61)
    r = gaussian_reward(3.0 + e, np.full_like(e, 3.0), sigma=sigma)
    assert r[30] == 1.0
    np.testing.assert_allclose(gaussian_reward([3.8, 2.2], [3.0, 3.0]), np.exp(-0.5))
    np.testing.assert_allclose(r, r[::-1])  # symmetric
    assert (np.diff(r[30:]) < 0).all()  # decreasing in |e|
    wide = gaussian_reward(3.0 + e, np.full_like(e, 3.0), sigma=1.5 * sigma)
    assert (wide >= r).all()
    with pytest.raises(ValueError, match="sigma"):
        gaussian_reward([1.0], [1.0], sigma=0.0)


def test_accuracy_reward_kinds():
    p, s = np.array([1.0, 2.0, np.nan]), np.array([1.5, 2.0, 1.0])
    np.testing.assert_allclose(accuracy_reward(p, s, kind="mae"), [-0.5, 0.0, 0.0])
    np.testing.assert_allclose(accuracy_reward(p, s, kind="mse"), [-0.25, 0.0, 0.0])
    np.testing.assert_allclose(accuracy_reward(p, s, kind="bounded"), [0.875, 1.0, 0.0])
    np.testing.assert_allclose(accuracy_reward(p, s, kind="binary"), [0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="kind"):
        accuracy_reward(p, s, kind="huber")


def test_reward_errors():
    with pytest.raises(ValueError, match="targets"):
        retrieval_rank([[0.1, 0.2]], [2])
    with pytest.raises(ValueError, match="targets must hold whole numbers"):
        retrieval_rank([[0.1, 0.2]], [0.5])
    with pytest.raises(ValueError, match="dimensions"):
        retrieval_scores(np.ones((1, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="zero row"):
        retrieval_scores(np.zeros((1, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="kind"):
        rank_reward([[0.1, 0.2]], [0], kind="ndcg")
    with pytest.raises(ValueError, match="scores contains NaN"):
        rank_reward([[0.1, np.nan]], [0])
    with pytest.raises(TypeError, match="scores must be a numeric array"):
        retrieval_rank([["0.1", "0.2"]], [0])
    with pytest.raises(ValueError, match="queries holds values too large"):
        retrieval_scores(np.full((1, 2), 1e300), np.ones((2, 2)))
    with pytest.raises(ValueError, match="predictions contains infinity"):
        gaussian_reward([np.inf], [1.0])
    with pytest.raises(ValueError, match="targets contains NaN"):
        accuracy_reward([1.0], [np.nan], kind="mae")
    with pytest.raises(ValueError, match="predictions holds values too large"):
        accuracy_reward([1e300], [1.0], kind="mse")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(kind="bounded", max_error=0), ValueError, "max_error must be > 0"),
        (dict(kind="bounded", max_error=-1.0), ValueError, "max_error must be > 0"),
        (dict(kind="bounded", max_error=np.inf), ValueError, "max_error must be finite"),
        (dict(kind="bounded", max_error="4"), TypeError, "max_error must be a real number"),
        (dict(kind="binary", tol=-1.0), ValueError, "tol must be > 0"),
        (dict(kind="binary", tol=0.0), ValueError, "tol must be > 0"),
        (dict(kind="binary", tol=np.nan), ValueError, "tol must be finite"),
        # checked whatever the kind
        (dict(kind="mae", max_error=0), ValueError, "max_error must be > 0"),
        (dict(kind="gaussian", tol=-1.0), ValueError, "tol must be > 0"),
    ],
)
def test_accuracy_reward_refuses_bad_max_error_and_tol_by_name(kwargs, error, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(error, match=match):
            accuracy_reward([3.0], [3.0], **kwargs)


def test_accuracy_reward_bounded_and_binary_limits():
    np.testing.assert_allclose(
        accuracy_reward([3.0, 3.5, 9.0], [3.0] * 3, kind="bounded", max_error=1.0), [1, 0.5, 0]
    )
    np.testing.assert_array_equal(
        accuracy_reward([3.0, 3.1], [3.0, 3.0], kind="binary", tol=1e-12), [1.0, 0.0]
    )
    # Errors beyond float64: the limits for the bounded kinds, quietly; "mae" refuses.
    far = ([1.5e308, 3.0], [-1.5e308, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(accuracy_reward(*far, kind="bounded"), [0.0, 1.0])
        np.testing.assert_array_equal(accuracy_reward(*far, kind="binary"), [0.0, 1.0])
    with pytest.raises(ValueError, match="differ by more than float64 holds"):
        accuracy_reward(*far, kind="mae")


@pytest.mark.parametrize("kind", ["normalized", "literal", "reciprocal", "hit"])
@pytest.mark.parametrize("k, error", [(0, ValueError), (-3, ValueError), (1.5, TypeError)])
def test_rank_reward_refuses_k_below_one_like_recall_at_k(kind, k, error):
    with pytest.raises(error, match="k must"):
        rank_reward([[0.9, 0.1]], [0], kind=kind, k=k)
    with pytest.raises(error, match="k must"):
        recall_at_k([[0.9, 0.1]], [0], k=k)


def test_rank_reward_hit_at_one_is_recall_at_one():
    S, t = [[0.9, 0.1, 0.5], [0.2, 0.3, 0.1]], [0, 0]
    assert rank_reward(S, t, kind="hit", k=1).mean() == recall_at_k(S, t, k=1)


@pytest.mark.parametrize(
    "p, s, sigma",
    [
        ([1e200], [0.0], 0.8),
        ([1e308], [-1e308], 0.8),
        ([1.0], [0.0], 1e-200),
        ([-1e160], [0.0], 1),
    ],
)
def test_gaussian_reward_of_huge_errors_is_zero_without_overflow(p, s, sigma):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = gaussian_reward(p, s, sigma=sigma)
        assert accuracy_reward(p, s, kind="gaussian", sigma=sigma).tolist() == r.tolist()
    assert r.tolist() == [0.0]


def test_gaussian_reward_exact_near_the_overflow_limit():
    # (e / sigma)^2 / 2 = 700: representable, exp(-700) is a normal float
    e = np.sqrt(1400.0) * 1e150
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = gaussian_reward([e], [0.0], sigma=1e150)
    np.testing.assert_allclose(r, [np.exp(-700.0)], rtol=1e-12)
