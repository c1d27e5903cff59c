"""Oracles for SA-Merging: the closed-form SynFlow gradient, saliency pruning, LoRA ranks."""

import itertools

import numpy as np
import pytest

from mvlearn_ext.merging import (
    lora_factor_grads,
    magnitude_merge,
    sa_keep_counts,
    sa_merge,
    sa_merge_lora,
    synflow_grad_mlp,
    synflow_score_mlp,
    task_arithmetic,
)
from mvlearn_ext.merging._saliency import _synflow_grads


def _stack(rng, sizes=(4, 6, 5, 3)):
    return [rng.normal(size=(sizes[i + 1], sizes[i])) for i in range(len(sizes) - 1)]


def _mlp_state(rng, sizes=(4, 6, 5, 3)):
    state = {}
    for i, w in enumerate(_stack(rng, sizes)):
        state[f"l{i}.weight"] = w
        state[f"l{i}.bias"] = rng.normal(size=w.shape[0])
    return state


def _experts(base, rng, n=3, scale=0.3):
    return [{k: v + scale * rng.normal(size=v.shape) for k, v in base.items()} for _ in range(n)]


# ---------------------------------------------------------------------------
# Closed-form gradient


def test_closed_form_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    weights = [np.abs(w) for w in _stack(rng)]  # derivative w.r.t. |W|: perturb positive weights
    grads = synflow_grad_mlp(weights)
    h = 1e-6
    for layer, w in enumerate(weights):
        fd = np.zeros_like(w)
        for idx in np.ndindex(*w.shape):
            plus = [x.copy() for x in weights]
            minus = [x.copy() for x in weights]
            plus[layer][idx] += h
            minus[layer][idx] -= h
            fd[idx] = (synflow_score_mlp(plus) - synflow_score_mlp(minus)) / (2 * h)
        np.testing.assert_allclose(grads[layer], fd, rtol=1e-7, atol=1e-8)


def test_gradient_is_nonnegative_ignores_signs_and_normalize_only_rescales():
    rng = np.random.default_rng(1)
    weights = _stack(rng)
    exact = synflow_grad_mlp(weights)
    assert all(np.all(g >= 0) for g in exact)
    flipped = [w * np.sign(rng.normal(size=w.shape)) for w in weights]
    for a, b in zip(exact, synflow_grad_mlp(flipped), strict=True):
        np.testing.assert_allclose(a, b)
    for a, b in zip(exact, synflow_grad_mlp(weights, normalize=True), strict=True):
        ratio = a / b
        np.testing.assert_allclose(ratio, ratio.flat[0])
        assert b.max() == pytest.approx(1.0)


def test_deep_stack_does_not_overflow_when_normalised():
    rng = np.random.default_rng(2)
    weights = [np.abs(rng.normal(size=(30, 30))) * 50 for _ in range(120)]
    grads = synflow_grad_mlp(weights, normalize=True)
    assert all(np.all(np.isfinite(g)) and g.max() == pytest.approx(1.0) for g in grads)


def test_layer_scale_moves_gradients_as_stated():
    """Scaling layer m by c leaves G^m unchanged and multiplies every other G^l by c."""
    rng = np.random.default_rng(3)
    weights = _stack(rng)
    ref = synflow_grad_mlp(weights)
    for m in range(len(weights)):
        scaled = [w * (2.5 if i == m else 1.0) for i, w in enumerate(weights)]
        for i, (a, b) in enumerate(zip(ref, synflow_grad_mlp(scaled), strict=True)):
            np.testing.assert_allclose(b, a * (1.0 if i == m else 2.5))


def test_dead_unit_has_zero_gradient_on_its_incoming_weights():
    rng = np.random.default_rng(4)
    weights = _stack(rng)
    weights[1][:, 2] = 0.0  # unit 2 of the first hidden layer has no outgoing path
    grads = synflow_grad_mlp(weights)
    np.testing.assert_array_equal(grads[0][2], 0.0)
    assert np.all(np.delete(grads[0], 2, axis=0) > 0)


def test_chain_validation():
    with pytest.raises(ValueError, match="chain"):
        synflow_grad_mlp([np.ones((3, 2)), np.ones((2, 4))])
    with pytest.raises(ValueError, match="2-D"):
        synflow_grad_mlp([np.ones(3)])
    base = {"a.weight": np.ones((3, 2)), "b.weight": np.ones((2, 4))}
    with pytest.raises(ValueError, match="layers="):
        sa_merge(base, [base])


# ---------------------------------------------------------------------------
# Saliency pruning


def test_dead_path_updates_are_pruned_first_whatever_their_magnitude():
    rng = np.random.default_rng(5)
    base = {
        "l0.weight": np.abs(rng.normal(size=(6, 4))) + 0.1,
        "l1.weight": np.abs(rng.normal(size=(3, 6))) + 0.1,
    }
    expert = {k: v + 0.05 * np.abs(rng.normal(size=v.shape)) for k, v in base.items()}
    expert["l1.weight"][:, 2] = 0.0  # unit 2 dead in theta_0 + tau
    expert["l0.weight"][2] += 100.0  # huge updates behind the dead unit
    _, masks = sa_merge(base, [expert], p=0.2, n_rounds=1, return_masks=True)
    assert not masks[0]["l0.weight"][2].any()  # 24 -> 19 kept, 20 live positive scores
    assert masks[0]["l0.weight"].sum() == 19
    mag = magnitude_merge(base, [expert], density=19 / 24, prune_keys=["l0.weight"])
    assert np.all(mag["l0.weight"][2] != base["l0.weight"][2])  # magnitude keeps them


def test_updates_opposing_the_consensus_are_pruned_first():
    rng = np.random.default_rng(6)
    base = {"w": np.abs(rng.normal(size=(4, 5))) + 0.5}  # one layer: G = 1 > 0 everywhere
    tau0 = np.abs(rng.normal(size=(4, 5))) * 0.1 + 0.01
    tau1 = np.abs(rng.normal(size=(4, 5))) * 0.1 + 0.01
    tau0[1, 3] = -5.0  # largest update of expert 0, opposite to the consensus
    tau1[1, 3] = 9.0
    experts = [{"w": base["w"] + tau0}, {"w": base["w"] + tau1}]
    _, masks = sa_merge(base, experts, p=0.05, n_rounds=1, return_masks=True)  # 20 -> 19
    assert masks[0]["w"].sum() == 19 and not masks[0]["w"][1, 3]
    assert masks[1]["w"][1, 3]


def test_retention_follows_the_iterated_counts_and_masks_are_nested():
    rng = np.random.default_rng(7)
    base = _mlp_state(rng)
    experts = _experts(base, rng)
    prev = None
    for n_rounds in range(0, 6):
        _, masks = sa_merge(base, experts, p=0.3, n_rounds=n_rounds, return_masks=True)
        for m in masks:
            for mk in m.values():
                assert mk.sum() == sa_keep_counts(mk.size, 0.3, n_rounds)[-1]
        if prev is not None:
            for m_new, m_old in zip(masks, prev, strict=True):
                for k in m_new:
                    assert np.all(m_new[k] <= m_old[k])
        prev = masks
    counts = sa_keep_counts(1000, 0.2, 10)
    assert counts[-1] == pytest.approx(1000 * 0.8**10, abs=5)


def test_one_expert_one_layer_reduces_to_magnitude_pruning():
    rng = np.random.default_rng(8)
    base = {"w": rng.normal(size=(7, 9)), "b": rng.normal(size=7)}
    expert = {k: v + rng.normal(size=v.shape) for k, v in base.items()}
    k_final = sa_keep_counts(63, 0.2, 4)[-1]
    sa = sa_merge(base, [expert], p=0.2, n_rounds=4, layers=["w"])
    mag = magnitude_merge(base, [expert], density=k_final / 63, prune_keys=["w"])
    for k in base:
        np.testing.assert_allclose(sa[k], mag[k])
    # the literal ("weight") reading ranks by sign(theta_0 + tau) * tau
    _, masks = sa_merge(
        base, [expert], p=0.5, n_rounds=1, layers=["w"], saliency_sign="weight", return_masks=True
    )
    tau = expert["w"] - base["w"]
    score = np.sign(expert["w"]) * tau
    keep = np.argsort(-score.ravel(), kind="stable")[: sa_keep_counts(63, 0.5, 1)[-1]]
    expected = np.zeros(63, dtype=bool)
    expected[keep] = True
    np.testing.assert_array_equal(masks[0]["w"].ravel(), expected)


def test_no_pruning_is_task_arithmetic_and_zero_vectors_give_the_base():
    rng = np.random.default_rng(9)
    base = _mlp_state(rng)
    experts = _experts(base, rng)
    for p, n_rounds in ((0.0, 10), (0.5, 0)):
        sa = sa_merge(base, experts, p=p, n_rounds=n_rounds, scaling=0.4)
        ta = task_arithmetic(base, experts, scaling=0.4)
        for k in base:
            np.testing.assert_allclose(sa[k], ta[k], atol=1e-12)
    same = sa_merge(base, [dict(base), dict(base)])
    for k in base:
        np.testing.assert_array_equal(same[k], base[k])


def test_identical_experts_and_permutation_invariance():
    rng = np.random.default_rng(10)
    base = _mlp_state(rng)
    experts = _experts(base, rng)
    one = sa_merge(base, experts[:1])
    three = sa_merge(base, [experts[0]] * 3, scaling=1 / 3)
    for k in base:
        np.testing.assert_allclose(three[k], one[k], atol=1e-12)
    ref = sa_merge(base, experts)
    for perm in itertools.permutations(range(3)):
        out = sa_merge(base, [experts[i] for i in perm])
        for k in base:
            np.testing.assert_allclose(out[k], ref[k], atol=1e-12)


def test_biases_are_merged_by_task_arithmetic():
    rng = np.random.default_rng(11)
    base = _mlp_state(rng)
    experts = _experts(base, rng)
    sa = sa_merge(base, experts, scaling=0.5)
    ta = task_arithmetic(base, experts, scaling=0.5)
    for k in base:
        if k.endswith("bias"):
            np.testing.assert_allclose(sa[k], ta[k])


def test_scale_inside_the_connectivity_score_leaves_masks_unchanged():
    rng = np.random.default_rng(12)
    base = _mlp_state(rng)
    experts = _experts(base, rng)
    layers = [k for k in base if k.endswith("weight")]

    def scaled_grad_fn(state):
        ws = [np.abs(state[k]) * (7.0 if k == "l1.weight" else 1.0) for k in layers]
        exact = synflow_grad_mlp(ws)
        return dict(zip(layers, exact, strict=True))

    _, ref = sa_merge(base, experts, return_masks=True)
    _, alt = sa_merge(base, experts, grad_fn=scaled_grad_fn, return_masks=True)
    for a, b in zip(ref, alt, strict=True):
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])


def test_sa_merge_argument_errors():
    base = {"w": np.ones((2, 2))}
    with pytest.raises(ValueError, match="p must lie"):
        sa_merge(base, [base], p=1.0)
    with pytest.raises(ValueError, match="n_rounds"):
        sa_merge(base, [base], n_rounds=-1)
    with pytest.raises(ValueError, match="saliency_sign"):
        sa_merge(base, [base], saliency_sign="abs")
    with pytest.raises(ValueError, match="layers names"):
        sa_merge(base, [base], layers=["v"])
    with pytest.raises(TypeError, match="layers must be a list of parameter names"):
        sa_merge(base, [base], layers="w")
    with pytest.raises(TypeError, match="grad_fn"):
        sa_merge(base, [base], grad_fn=3)


# ---------------------------------------------------------------------------
# LoRA (rank-wise) variant


def test_lora_factor_gradients_match_dense_finite_differences():
    rng = np.random.default_rng(13)
    w0 = _stack(rng, (4, 6, 3))
    B, A, s = rng.normal(size=(6, 2)), rng.normal(size=(2, 4)), 0.7

    def score(Bm, Am):
        return synflow_score_mlp([w0[0] + s * Bm @ Am, w0[1]])

    w_full = w0[0] + s * B @ A
    grad_w = synflow_grad_mlp([w_full, w0[1]])[0] * np.sign(w_full)
    gB, gA = lora_factor_grads(grad_w, B, A, lora_scaling=s)
    h = 1e-6
    for X, g, is_b in ((B, gB, True), (A, gA, False)):
        fd = np.zeros_like(X)
        for idx in np.ndindex(*X.shape):
            plus, minus = X.copy(), X.copy()
            plus[idx] += h
            minus[idx] -= h
            args_p = (plus, A) if is_b else (B, plus)
            args_m = (minus, A) if is_b else (B, minus)
            fd[idx] = (score(*args_p) - score(*args_m)) / (2 * h)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def _lora_setup(rng, n_experts=3, r=6):
    base = {"l0.weight": rng.normal(size=(8, 5)), "l1.weight": rng.normal(size=(4, 8))}
    adapters = [
        {
            k: (0.3 * rng.normal(size=(v.shape[0], r)), 0.3 * rng.normal(size=(r, v.shape[1])))
            for k, v in base.items()
        }
        for _ in range(n_experts)
    ]
    return base, adapters


def test_lora_rank_masks_keep_the_rank_structure():
    rng = np.random.default_rng(14)
    base, adapters = _lora_setup(rng)
    merged, masks = sa_merge_lora(
        base, adapters, lora_scaling=0.5, p=0.3, n_rounds=2, return_masks=True
    )
    expected_ranks = sa_keep_counts(6, 0.3, 2)[-1]
    total = {k: np.zeros_like(v) for k, v in base.items()}
    for ad, m in zip(adapters, masks, strict=True):
        for k, (B, A) in ad.items():
            assert m[k].sum() == expected_ranks
            delta = 0.5 * (B * m[k]) @ A
            assert np.linalg.matrix_rank(delta) <= m[k].sum()
            total[k] += delta
    for k in base:
        np.testing.assert_allclose(merged[k], base[k] + total[k])


def test_lora_without_pruning_is_dense_task_arithmetic_and_permutation_invariant():
    rng = np.random.default_rng(15)
    base, adapters = _lora_setup(rng)
    merged = sa_merge_lora(base, adapters, lora_scaling=2.0, p=0.0, scaling=0.3)
    for k in base:
        expected = base[k] + 0.3 * sum(2.0 * B @ A for B, A in (ad[k] for ad in adapters))
        np.testing.assert_allclose(merged[k], expected)
    ref = sa_merge_lora(base, adapters, p=0.4, n_rounds=2)
    out = sa_merge_lora(base, adapters[::-1], p=0.4, n_rounds=2)
    for k in base:
        np.testing.assert_allclose(out[k], ref[k])


def test_lora_rank_saliency_matches_a_dense_computation():
    """One round keeps the ranks with the largest |gamma_k eta_k| computed densely."""
    rng = np.random.default_rng(16)
    base, adapters = _lora_setup(rng, n_experts=2, r=5)
    s = 0.8
    _, masks = sa_merge_lora(base, adapters, lora_scaling=s, p=0.4, n_rounds=1, return_masks=True)
    layers = list(base)
    bar = {k: sum(s * ad[k][0] @ ad[k][1] for ad in adapters) for k in layers}
    for n, ad in enumerate(adapters):
        ws = [base[k] + s * ad[k][0] @ ad[k][1] for k in layers]
        grads, _ = _synflow_grads([np.abs(w) for w in ws])
        for k, g, w in zip(layers, grads, ws, strict=True):
            B, A = ad[k]
            sal = []
            for j in range(5):
                comp = s * np.outer(B[:, j], A[j])  # dR/dc_j = <G_W, s b_j a_j^T>
                gamma = np.sum(g * np.sign(w) * comp)
                eta = B[:, j] @ bar[k] @ A[j]
                sal.append(abs(gamma * eta))
            keep = np.argsort(-np.array(sal), kind="stable")[: sa_keep_counts(5, 0.4, 1)[-1]]
            assert set(np.flatnonzero(masks[n][k])) == set(keep)


def test_lora_validation():
    rng = np.random.default_rng(17)
    base, adapters = _lora_setup(rng, n_experts=1)
    bad = [{"l0.weight": (np.ones((8, 2)), np.ones((3, 5)))}]
    with pytest.raises(ValueError, match="must be"):
        sa_merge_lora(base, bad)
    with pytest.raises(ValueError, match="not one of the layers"):
        sa_merge_lora(base, [{"zz": adapters[0]["l0.weight"]}])
    with pytest.raises(ValueError, match="adapts keys"):
        sa_merge_lora(base, [adapters[0], {"l0.weight": adapters[0]["l0.weight"]}])
    with pytest.raises(TypeError, match="list of mappings"):
        sa_merge_lora(base, adapters[0])


_G, _B, _A = np.ones((3, 2)), np.ones((3, 1)), np.ones((1, 2))


@pytest.mark.parametrize(
    ("func", "args", "error", "match"),
    [
        (synflow_score_mlp, ([np.ones((1, 2)).astype(str), _B],), TypeError, r"weights\[0\] must"),
        (synflow_grad_mlp, ([_A, _B + 1j],), ValueError, r"weights\[1\] holds complex"),
        (synflow_grad_mlp, ([np.array([[1.0, np.inf]])],), ValueError, r"weights\[0\] contains"),
        (lora_factor_grads, (np.nan * _G, _B, _A), ValueError, "grad_w contains NaN"),
        (lora_factor_grads, (_G, _B.astype(str), _A), TypeError, "B must be a numeric"),
        (lora_factor_grads, (_G, _B, _A[..., None]), ValueError, "A must be 2-D"),
    ],
)
def test_bad_arrays_are_refused_by_name(func, args, error, match):
    with pytest.raises(error, match=match):
        func(*args)


def test_lora_adapter_factors_must_be_real():
    rng = np.random.default_rng(17)
    base, adapters = _lora_setup(rng, n_experts=1)
    B, A = adapters[0]["l0.weight"]
    with pytest.raises(TypeError, match=r"the B of adapters\[0\]\['l0.weight'\]"):
        sa_merge_lora(base, [{**adapters[0], "l0.weight": (B.astype(str), A)}])
    A = A.copy()
    A[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"the A of adapters\[0\]\['l0.weight'\] contains NaN"):
        sa_merge_lora(base, [{**adapters[0], "l0.weight": (B, A)}])


def test_sa_merge_only_integer_entries_is_refused():
    base = {"w": np.zeros((2, 2), int)}
    with pytest.raises(ValueError, match=r"base has no floating-point entry to merge"):
        sa_merge(base, [{"w": np.ones((2, 2), int)}])
    with pytest.raises(ValueError, match=r"base has no floating-point entry to merge"):
        sa_merge_lora(base, [{"w": (np.ones((2, 1)), np.ones((1, 2)))}])


def test_sa_merge_float16_overflow_names_the_key():
    base = {"w": np.full((2, 2), 60000.0, np.float16)}
    expert = {"w": np.full((2, 2), 65000.0, np.float16)}
    with pytest.raises(ValueError, match=r"'w' overflows float16"):
        sa_merge(base, [expert, expert], p=0.0, n_rounds=0, scaling=4.0)
