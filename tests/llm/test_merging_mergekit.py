"""mergekit as the oracle of the merging baselines: same state dicts, same tensors.

mergekit's own merge methods run here on small float64 state dicts
(``mergekit.merge_methods.api``); ours are :mod:`mvlearn_ext.deep.merging`
(the torch twins of :mod:`mvlearn_ext.merging`). DARE is random on both
sides: its deterministic part (the rescale and the merge given the drop
masks) is compared by feeding mergekit's ``torch.bernoulli`` the masks that
our seeded generator draws.
"""

import numpy as np
import pytest
import torch

from mvlearn_ext.deep import merging as ours

mk_api = pytest.importorskip("mergekit.merge_methods.api")

SHAPES = {"layer.weight": (6, 5), "layer.bias": (6,), "head.weight": (3, 6)}


def _state_dicts(n_experts, seed=0):
    rng = np.random.default_rng(seed)
    base = {k: torch.as_tensor(rng.normal(size=s)) for k, s in SHAPES.items()}
    # distinct magnitudes in every task vector, so that top-k has no ties
    experts = [
        {k: v + torch.as_tensor(rng.normal(size=v.shape)) for k, v in base.items()}
        for _ in range(n_experts)
    ]
    return base, experts


def _mergekit(method, base, experts, parameters):
    models = {"base": base} | {f"e{n}": e for n, e in enumerate(experts)}
    return mk_api.merge_state_dicts(
        models, method, parameters=parameters, base="base", dtype=torch.float64
    )


def _assert_same(merged, oracle, atol=1e-12):
    assert set(merged) == set(oracle)
    for key in merged:
        np.testing.assert_allclose(merged[key].numpy(), oracle[key].numpy(), rtol=0, atol=atol)


# mergekit's Bernoulli path computes in float32 on the CPU whatever the input
# dtype, so DARE agrees to float32 round-off, not float64.
DARE_ATOL = 1e-5


@pytest.mark.parametrize("scaling", [1.0, 0.4])
def test_task_arithmetic_equals_mergekit(scaling):
    base, experts = _state_dicts(3)
    weights = [1.0, 0.5, 0.25]
    merged = ours.task_arithmetic(base, experts, scaling=scaling, weights=weights)
    params = {"weight": {f"e{n}": w for n, w in enumerate(weights)}, "lambda": scaling}
    _assert_same(merged, _mergekit("task_arithmetic", base, experts, params))


@pytest.mark.parametrize(("density", "weights"), [(0.5, [1.0, 1.0, 1.0]), (0.25, [1.0, 0.3, 2.0])])
def test_ties_equals_mergekit(density, weights):
    """Our defaults (per-tensor trim, + on a zero sign, mean merge) are mergekit's ``ties``."""
    base, experts = _state_dicts(3, seed=1)
    merged = ours.ties(base, experts, density=density, weights=weights, scaling=0.8)
    params = {
        "weight": {f"e{n}": w for n, w in enumerate(weights)},
        "density": density,
        "lambda": 0.8,
    }
    _assert_same(merged, _mergekit("ties", base, experts, params))


def test_ties_keep_count_differs_from_mergekit_where_documented():
    """``floor(density n)`` against mergekit's ``max(1, int(density n))``: a tiny density."""
    base, experts = _state_dicts(2, seed=2)
    merged = ours.ties(base, experts, density=0.05)  # 0.05 * 6 < 1: we keep no coordinate
    oracle = _mergekit("ties", base, experts, {"weight": 1.0, "density": 0.05})
    np.testing.assert_array_equal(merged["layer.bias"].numpy(), base["layer.bias"].numpy())
    assert not np.allclose(oracle["layer.bias"].numpy(), base["layer.bias"].numpy())


def _our_dare_masks(n_experts, density, seed):
    """The masks :func:`mvlearn_ext.merging.dare` draws: expert n from child n, key by key."""
    children = np.random.default_rng(seed).spawn(n_experts)
    return [
        {k: torch.as_tensor(child.random(s) < density).float() for k, s in SHAPES.items()}
        for child in children
    ]


def _mergekit_with_masks(method, base, experts, masks, parameters, monkeypatch):
    """mergekit's method, key by key, with its Bernoulli draws replaced by ``masks``."""
    out = {}
    for key in base:
        queue = [m[key] for m in masks]  # mergekit sparsifies the experts in input order

        def bernoulli(probs, *args, queue=queue, **kwargs):
            mask = queue.pop(0)
            assert mask.shape == probs.shape
            return mask.to(probs.dtype)

        monkeypatch.setattr(torch, "bernoulli", bernoulli)
        tensors = [base[key]] + [e[key] for e in experts]
        out[key] = mk_api.merge_tensors(
            tensors,
            method,
            parameters=parameters,
            ids=["base"] + [f"e{n}" for n in range(len(experts))],
            base_index=0,
            dtype=torch.float64,
        )
        monkeypatch.undo()
        assert not queue
    return out


@pytest.mark.parametrize("density", [0.5, 0.8])
def test_dare_linear_equals_mergekit_given_the_masks(density, monkeypatch):
    base, experts = _state_dicts(2, seed=3)
    masks = _our_dare_masks(2, density, seed=7)
    merged = ours.dare(
        base, experts, density=density, rescale="l1", weights=[1.0, 0.5], random_state=7
    )
    params = {"weight": {"e0": 1.0, "e1": 0.5}, "density": density}
    oracle = _mergekit_with_masks("dare_linear", base, experts, masks, params, monkeypatch)
    _assert_same(merged, oracle, DARE_ATOL)


def test_dare_ties_equals_mergekit_given_the_masks(monkeypatch):
    """mergekit's ``dare_ties`` sums the agreeing entries (``normalize=False``): our "sum"."""
    base, experts = _state_dicts(3, seed=4)
    masks = _our_dare_masks(3, 0.6, seed=11)
    merged = ours.dare_ties(
        base, experts, density=0.6, rescale="l1", merge_func="sum", random_state=11
    )
    oracle = _mergekit_with_masks(
        "dare_ties", base, experts, masks, {"weight": 1.0, "density": 0.6}, monkeypatch
    )
    _assert_same(merged, oracle, DARE_ATOL)
    # and with normalize=True, mergekit's mean is our default merge_func="mean"
    merged = ours.dare_ties(base, experts, density=0.6, rescale="l1", random_state=11)
    params = {"weight": 1.0, "density": 0.6, "normalize": True}
    oracle = _mergekit_with_masks("dare_ties", base, experts, masks, params, monkeypatch)
    _assert_same(merged, oracle, DARE_ATOL)
