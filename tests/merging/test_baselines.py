"""Oracles for task vectors, task arithmetic, TIES, DARE and the pruning controls."""

import itertools
import warnings

import numpy as np
import pytest

from mvlearn_ext.merging import (
    apply_task_vector,
    dare,
    dare_ties,
    magnitude_merge,
    random_mask_merge,
    task_arithmetic,
    task_vectors,
    ties,
)


def _random_model(rng, dtype=np.float64):
    return {
        "layer.weight": rng.normal(size=(5, 4)).astype(dtype),
        "layer.bias": rng.normal(size=5).astype(dtype),
        "out.weight": rng.normal(size=(3, 5)).astype(dtype),
    }


def _experts(base, rng, n=3, scale=0.3):
    return [
        {k: v + scale * rng.normal(size=v.shape).astype(v.dtype) for k, v in base.items()}
        for _ in range(n)
    ]


ALL_METHODS = {
    "task_arithmetic": lambda b, e, **kw: task_arithmetic(b, e, **kw),
    "ties": lambda b, e, **kw: ties(b, e, density=0.5, **kw),
    "ties_global": lambda b, e, **kw: ties(b, e, density=0.5, granularity="global", **kw),
    "dare": lambda b, e, **kw: dare(b, e, density=0.5, random_state=0, **kw),
    "dare_ties": lambda b, e, **kw: dare_ties(b, e, density=0.5, random_state=0, **kw),
    "magnitude": lambda b, e, **kw: magnitude_merge(b, e, density=0.5, **kw),
    "random": lambda b, e, **kw: random_mask_merge(b, e, density=0.5, random_state=0, **kw),
}


# ---------------------------------------------------------------------------
# Task vectors


def test_task_vectors_and_apply_roundtrip():
    rng = np.random.default_rng(0)
    base = _random_model(rng)
    experts = _experts(base, rng)
    taus = task_vectors(base, experts)
    for tau, expert in zip(taus, experts, strict=True):
        back = apply_task_vector(base, tau)
        for k in base:
            np.testing.assert_allclose(back[k], expert[k], rtol=0, atol=1e-12)
    half = apply_task_vector(base, taus[0], scaling=0.5)
    np.testing.assert_allclose(
        half["out.weight"], base["out.weight"] + 0.5 * taus[0]["out.weight"]
    )


@pytest.mark.parametrize("name", sorted(ALL_METHODS))
def test_zero_task_vectors_return_the_base(name):
    rng = np.random.default_rng(1)
    base = _random_model(rng)
    experts = [{k: v.copy() for k, v in base.items()} for _ in range(3)]
    merged = ALL_METHODS[name](base, experts)
    for k in base:
        np.testing.assert_array_equal(merged[k], base[k])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(ALL_METHODS))
def test_output_keeps_keys_shapes_dtypes_and_copies_counters(name, dtype):
    rng = np.random.default_rng(2)
    base = _random_model(rng, dtype)
    base["bn.num_batches_tracked"] = np.array(7, dtype=np.int64)
    experts = _experts({k: v for k, v in base.items() if v.dtype.kind == "f"}, rng)
    for e in experts:
        e["bn.num_batches_tracked"] = np.array(9, dtype=np.int64)
    merged = ALL_METHODS[name](base, experts)
    assert list(merged) == list(base)
    for k in base:
        assert merged[k].shape == base[k].shape and merged[k].dtype == base[k].dtype
    assert merged["bn.num_batches_tracked"] == 7


# ---------------------------------------------------------------------------
# Task arithmetic


def test_task_arithmetic_closed_form_and_single_expert():
    rng = np.random.default_rng(3)
    base = _random_model(rng)
    experts = _experts(base, rng)
    w = np.array([0.5, 2.0, -1.0])
    merged = task_arithmetic(base, experts, scaling=0.7, weights=w)
    for k in base:
        expected = base[k] + 0.7 * sum(
            wi * (e[k] - base[k]) for wi, e in zip(w, experts, strict=True)
        )
        np.testing.assert_allclose(merged[k], expected, atol=1e-12)
    one = task_arithmetic(base, experts[:1])
    for k in base:
        np.testing.assert_allclose(one[k], experts[0][k], atol=1e-12)


@pytest.mark.parametrize("name", ["task_arithmetic", "ties", "ties_global", "magnitude"])
def test_identical_experts_return_that_expert_up_to_scaling(name):
    rng = np.random.default_rng(4)
    base = _random_model(rng)
    expert = _experts(base, rng, n=1)[0]
    merged = ALL_METHODS[name](base, [expert] * 3, scaling=1.0)
    tau = {k: expert[k] - base[k] for k in base}
    if name == "task_arithmetic":
        expected = {k: base[k] + 3 * tau[k] for k in base}
    elif name == "magnitude":
        trimmed = magnitude_merge(base, [expert], density=0.5)
        expected = {k: base[k] + 3 * (trimmed[k] - base[k]) for k in base}
    else:  # mean merge of identical experts = the (trimmed) expert itself
        expected = ALL_METHODS[name](base, [expert])
    for k in base:
        np.testing.assert_allclose(merged[k], expected[k], atol=1e-12)
    # TIES at full density with the mean rule returns the expert exactly
    full = ties(base, [expert] * 3, density=1.0)
    for k in base:
        np.testing.assert_allclose(full[k], expert[k], atol=1e-12)


@pytest.mark.parametrize("name", ["task_arithmetic", "ties", "ties_global", "magnitude"])
def test_permutation_invariance_over_task_order(name):
    rng = np.random.default_rng(5)
    base = _random_model(rng)
    experts = _experts(base, rng, n=3)
    w = np.array([1.0, 2.0, 0.5])
    ref = ALL_METHODS[name](base, experts, weights=w)
    for perm in itertools.permutations(range(3)):
        out = ALL_METHODS[name](base, [experts[i] for i in perm], weights=w[list(perm)])
        for k in base:
            np.testing.assert_allclose(out[k], ref[k], atol=1e-12)


# ---------------------------------------------------------------------------
# TIES, hand-computed 3-task toy

TOY_BASE = {"w": np.zeros(6)}
TOY_TAUS = [
    np.array([3.0, -1.0, 0.5, 2.0, 0.0, -4.0]),
    np.array([1.0, 2.0, -0.2, -3.0, 0.1, 1.0]),
    np.array([-2.0, 1.5, 0.3, 1.0, -0.1, 3.0]),
]
TOY = [{"w": t} for t in TOY_TAUS]


def test_ties_per_tensor_mean_by_hand():
    # density 0.5 keeps floor(3) = 3 largest |tau| per task:
    # t0: [3, ., ., 2, ., -4]; t1: [., 2, ., -3, ., .] plus 1.0 at 0 or 5 (first: index 0)
    # t2: [-2, 1.5, ., ., ., 3]
    t0 = np.array([3.0, 0, 0, 2.0, 0, -4.0])
    t1 = np.array([1.0, 2.0, 0, -3.0, 0, 0])
    t2 = np.array([-2.0, 1.5, 0, 0, 0, 3.0])
    # elect: sums [2, 3.5, 0, -1, 0, -1] -> signs [+, +, + (zero), -, + (zero), -]
    # mean over agreeing nonzero entries:
    expected = np.array([(3 + 1) / 2, (2 + 1.5) / 2, 0.0, -3.0, 0.0, -4.0])
    out = ties(TOY_BASE, TOY, density=0.5)
    np.testing.assert_allclose(out["w"], expected)
    # sum and max rules
    np.testing.assert_allclose(
        ties(TOY_BASE, TOY, density=0.5, merge_func="sum")["w"], [4.0, 3.5, 0, -3, 0, -4]
    )
    np.testing.assert_allclose(
        ties(TOY_BASE, TOY, density=0.5, merge_func="max")["w"], [3.0, 2.0, 0, -3, 0, -4]
    )
    del t0, t1, t2


def test_ties_weights_normalise_the_mean():
    w = np.array([1.0, 3.0, 1.0])
    out = ties(TOY_BASE, TOY, density=1.0, weights=w)
    # signs of sum_n w_n tau_n: [3+3-2, -1+6+1.5, .5-.6+.3, 2-9+1, .3-.1, -4+3+3] all determined
    wsum = sum(wi * t for wi, t in zip(w, TOY_TAUS, strict=True))
    gamma = np.sign(wsum)
    expected = np.zeros(6)
    for j in range(6):
        agree = [
            n for n in range(3) if TOY_TAUS[n][j] != 0 and np.sign(TOY_TAUS[n][j]) == gamma[j]
        ]
        expected[j] = sum(w[n] * TOY_TAUS[n][j] for n in agree) / sum(w[n] for n in agree)
    np.testing.assert_allclose(out["w"], expected)


def test_ties_all_signs_agree_full_density_is_mean_and_sum_is_task_arithmetic():
    rng = np.random.default_rng(6)
    base = {"a": rng.normal(size=(4, 3)), "b": rng.normal(size=7)}
    mags = [{k: np.abs(rng.normal(size=v.shape)) + 0.1 for k, v in base.items()} for _ in range(3)]
    signs = {k: np.sign(rng.normal(size=v.shape)) for k, v in base.items()}
    experts = [{k: base[k] + signs[k] * m[k] for k in base} for m in mags]
    mean = ties(base, experts, density=1.0)
    summ = ties(base, experts, density=1.0, merge_func="sum")
    ta = task_arithmetic(base, experts)
    for k in base:
        np.testing.assert_allclose(mean[k], base[k] + signs[k] * sum(m[k] for m in mags) / 3)
        np.testing.assert_allclose(summ[k], ta[k])


def test_ties_global_vs_tensor_granularity_by_hand():
    base = {"a": np.zeros(2), "b": np.zeros(2)}
    expert = {"a": np.array([10.0, 9.0]), "b": np.array([0.5, 0.1])}
    per_tensor = ties(base, [expert], density=0.5)
    glob = ties(base, [expert], density=0.5, granularity="global")
    np.testing.assert_allclose(per_tensor["a"], [10.0, 0.0])
    np.testing.assert_allclose(per_tensor["b"], [0.5, 0.0])
    np.testing.assert_allclose(glob["a"], [10.0, 9.0])  # top-2 of 4, both in "a"
    np.testing.assert_allclose(glob["b"], [0.0, 0.0])


def test_ties_zero_sign_rules():
    base = {"w": np.zeros(4)}
    # coordinate 0 sums to 0; coordinates 1-3 sum negative -> majority is "-"
    experts = [{"w": np.array([1.0, -2.0, -2.0, -2.0])}, {"w": np.array([-1.0, 1.0, 1.0, 1.0])}]
    pos = ties(base, experts, density=1.0, merge_func="sum")
    maj = ties(base, experts, density=1.0, merge_func="sum", sign_rule="majority")
    np.testing.assert_allclose(pos["w"], [1.0, -2.0, -2.0, -2.0])
    np.testing.assert_allclose(maj["w"], [-1.0, -2.0, -2.0, -2.0])


# ---------------------------------------------------------------------------
# DARE


def test_dare_is_seeded_and_full_density_is_task_arithmetic():
    rng = np.random.default_rng(7)
    base = _random_model(rng)
    experts = _experts(base, rng)
    a = dare(base, experts, density=0.3, random_state=42)
    b = dare(base, experts, density=0.3, random_state=42)
    c = dare(base, experts, density=0.3, random_state=43)
    assert all(np.array_equal(a[k], b[k]) for k in base)
    assert not all(np.array_equal(a[k], c[k]) for k in base)
    ta = task_arithmetic(base, experts)
    for rescale in ("inverse_p", "l1"):
        full = dare(base, experts, density=1.0, rescale=rescale, random_state=0)
        for k in base:
            np.testing.assert_allclose(full[k], ta[k], atol=1e-12)


def test_dare_inverse_p_survivors_are_scaled_exactly():
    base = {"w": np.zeros(1000)}
    tau = np.linspace(0.1, 2.0, 1000)
    out = dare(base, [{"w": tau}], density=0.25, random_state=3)["w"]
    kept = out != 0
    np.testing.assert_allclose(out[kept], tau[kept] / 0.25)
    assert 0.2 < kept.mean() < 0.3  # Binomial(1000, 0.25): sd 0.014


def test_dare_l1_rescale_preserves_the_l1_norm():
    rng = np.random.default_rng(8)
    base = {"w": np.zeros((20, 10)), "v": np.zeros(30)}
    expert = {"w": rng.normal(size=(20, 10)), "v": rng.normal(size=30)}
    out = dare(base, [expert], density=0.3, rescale="l1", random_state=1)
    for k in base:
        np.testing.assert_allclose(np.abs(out[k]).sum(), np.abs(expert[k]).sum())
        kept = out[k] != 0
        ratio = out[k][kept] / expert[k][kept]
        np.testing.assert_allclose(ratio, ratio[0])  # one factor per tensor


def test_dare_inverse_p_is_unbiased_by_seeded_monte_carlo():
    tau = np.array([1.0, -2.0, 0.5, 3.0])
    base = {"w": np.zeros(4)}
    n_rep, density = 4000, 0.2
    draws = np.stack(
        [dare(base, [{"w": tau}], density=density, random_state=s)["w"] for s in range(n_rep)]
    )
    mean = draws.mean(axis=0)
    se = tau * np.sqrt((1 - density) / density) / np.sqrt(n_rep)  # sd of tau*Bern/d
    assert np.all(np.abs(mean - tau) < 4 * np.abs(se))


def test_dare_ties_full_density_is_ties_without_trim():
    ref = ties(TOY_BASE, TOY, density=1.0)
    out = dare_ties(TOY_BASE, TOY, density=1.0, random_state=0)
    np.testing.assert_allclose(out["w"], ref["w"])


def test_prune_keys_leaves_other_keys_to_task_arithmetic():
    rng = np.random.default_rng(9)
    base = _random_model(rng)
    experts = _experts(base, rng)
    ta = task_arithmetic(base, experts)
    out = ties(base, experts, density=0.2, prune_keys=["out.weight"])
    for k in ("layer.weight", "layer.bias"):
        np.testing.assert_allclose(out[k], ta[k])
    assert not np.allclose(out["out.weight"], ta["out.weight"])


# ---------------------------------------------------------------------------
# Magnitude and random controls


def test_magnitude_and_random_keep_counts():
    rng = np.random.default_rng(10)
    base = {"w": np.zeros((10, 10))}
    expert = {"w": rng.normal(size=(10, 10))}
    mag = magnitude_merge(base, [expert], density=0.23)["w"]
    assert np.count_nonzero(mag) == 23
    threshold = np.sort(np.abs(expert["w"]).ravel())[-23]
    assert np.all(np.abs(mag[mag != 0]) >= threshold)
    rnd = random_mask_merge(base, [expert], density=0.23, random_state=0)["w"]
    assert np.count_nonzero(rnd) == 23
    np.testing.assert_array_equal(rnd[rnd != 0], expert["w"][rnd != 0])


# ---------------------------------------------------------------------------
# Validation


def test_mismatched_keys_shapes_and_dtypes_are_named():
    base = {"a": np.zeros(3), "b": np.zeros((2, 2))}
    with pytest.raises(ValueError, match=r"experts\[1\].*missing keys \['b'\]"):
        task_arithmetic(base, [dict(base), {"a": np.zeros(3)}])
    with pytest.raises(ValueError, match=r"extra keys \['c'\]"):
        ties(base, [{**base, "c": np.zeros(1)}])
    with pytest.raises(ValueError, match=r"experts\[0\]\['b'\] has shape \(4,\)"):
        dare(base, [{"a": np.zeros(3), "b": np.zeros(4)}])
    with pytest.raises(TypeError, match=r"experts\[0\]\['a'\] has dtype float32"):
        task_arithmetic(base, [{"a": np.zeros(3, np.float32), "b": np.zeros((2, 2))}])
    with pytest.raises(ValueError, match=r"NaN or inf"):
        task_arithmetic(base, [{"a": np.array([0, np.nan, 0]), "b": np.zeros((2, 2))}])


def test_bad_arguments():
    base = {"a": np.zeros(3)}
    with pytest.raises(ValueError, match="experts is empty"):
        task_arithmetic(base, [])
    with pytest.raises(TypeError, match="experts must be a list"):
        task_arithmetic(base, base)
    with pytest.raises(TypeError, match="base must be a mapping"):
        task_arithmetic([1, 2], [base])
    with pytest.raises(ValueError, match="density"):
        ties(base, [base], density=0.0)
    with pytest.raises(ValueError, match="density"):
        dare(base, [base], density=1.5)
    with pytest.raises(ValueError, match="granularity"):
        ties(base, [base], granularity="layer")
    with pytest.raises(ValueError, match="merge_func"):
        ties(base, [base], merge_func="median")
    with pytest.raises(ValueError, match="rescale"):
        dare(base, [base], rescale="none")
    with pytest.raises(ValueError, match="weights"):
        task_arithmetic(base, [base], weights=[1.0, 2.0])
    with pytest.raises(TypeError, match="random_state"):
        dare(base, [base], random_state="seed")
    with pytest.raises(TypeError, match="must be numeric"):
        task_arithmetic({"a": np.array(["x"])}, [{"a": np.array(["x"])}])


@pytest.mark.parametrize("name", ["ties", "dare", "dare_ties", "magnitude", "random"])
def test_prune_keys_must_name_floating_parameters(name):
    base = {"w": np.zeros((2, 2)), "step": np.array(3)}
    merge = ALL_METHODS[name]
    with pytest.raises(TypeError, match="prune_keys must be a list of parameter names"):
        merge(base, [base], prune_keys="w")
    with pytest.raises(ValueError, match=r"prune_keys names .* floating parameters.*\['step'\]"):
        merge(base, [base], prune_keys=["w", "step"])


def test_weights_and_task_vector_must_be_real():
    base = {"a": np.zeros(3)}
    with pytest.raises(TypeError, match="weights must be a numeric array"):
        task_arithmetic(base, [base, base], weights=["1", "2"])
    with pytest.raises(ValueError, match="weights contains NaN"):
        ties(base, [base, base], weights=[1.0, np.nan])
    with pytest.raises(TypeError, match=r"task_vector\['a'\] must be a numeric array"):
        apply_task_vector(base, {"a": np.array(["1", "2", "3"])})
    with pytest.raises(ValueError, match=r"task_vector\['a'\] holds complex"):
        apply_task_vector(base, {"a": np.ones(3) + 1j})


# ---------------------------------------------------------------------------
# Integer entries and overflow


@pytest.mark.parametrize("name", sorted(ALL_METHODS))
def test_only_integer_entries_is_refused_not_returned_unmerged(name):
    base = {"w": [0, 0], "step": np.array(3)}
    experts = [{"w": [1, 2], "step": np.array(5)}, {"w": [3, 4], "step": np.array(5)}]
    with pytest.raises(ValueError, match=r"base has no floating-point entry to merge"):
        ALL_METHODS[name](base, experts)


def test_task_vectors_of_only_integer_entries_is_refused():
    with pytest.raises(ValueError, match=r"no floating-point entry.*Cast base and experts"):
        task_vectors({"w": [0, 0]}, [{"w": [1, 2]}])


def test_integer_entries_beside_floats_are_copied_and_have_no_task_vector():
    base = {"w": np.zeros(2), "idx": np.array([1, 2]), "mask": np.array([True, False])}
    expert = {"w": np.ones(2), "idx": np.array([5, 6]), "mask": np.array([False, True])}
    assert list(task_vectors(base, [expert])[0]) == ["w"]
    merged = task_arithmetic(base, [expert])
    np.testing.assert_array_equal(merged["idx"], [1, 2])
    np.testing.assert_array_equal(merged["mask"], [True, False])
    np.testing.assert_array_equal(merged["w"], [1.0, 1.0])


@pytest.mark.parametrize("name", sorted(ALL_METHODS))
def test_float16_overflow_names_the_key_without_returning_inf(name):
    base = {"ok": np.zeros(4, np.float16), "big": np.full(4, 60000.0, np.float16)}
    experts = [{"ok": np.ones(4, np.float16), "big": np.full(4, 65000.0, np.float16)}] * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy RuntimeWarning either
        with pytest.raises(ValueError, match=r"'big' overflows float16"):
            ALL_METHODS[name](base, experts, scaling=4.0)


def test_float16_merge_within_range_is_finite_and_apply_task_vector_overflow():
    base = {"w": np.full(2, 60000.0, np.float16)}
    merged = task_arithmetic(base, [{"w": np.full(2, 65000.0, np.float16)}], scaling=0.5)
    assert merged["w"].dtype == np.float16 and np.all(np.isfinite(merged["w"]))
    with pytest.raises(ValueError, match=r"'w' overflows float16"):
        apply_task_vector(base, {"w": np.full(2, 1e5)})
