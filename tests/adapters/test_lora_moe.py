"""BADIT's LoRA-MoE layer: exact init, true-permutation regroup, function preservation."""

import copy

import numpy as np
import pytest
import torch

from mvlearn_ext.adapters import (
    LoRAMoELinear,
    expert_orthogonality,
)


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def _base(seed=0, n_in=16, n_out=12):
    torch.manual_seed(seed)
    return torch.nn.Linear(n_in, n_out).double()


def _train_a_little(layer, steps=5, seed=0, accumulate=True):
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam([p for p in layer.parameters() if p.requires_grad], lr=1e-2)
    target = torch.randn(12, 16, generator=gen, dtype=torch.float64)
    for _ in range(steps):
        x = torch.randn(8, 4, 16, generator=gen, dtype=torch.float64)
        loss = ((layer(x) - x @ target.T) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        if accumulate:
            layer.accumulate_unit_gradients()
        opt.step()
    return opt


def test_pissa_init_is_exact_and_orthogonal():
    base = _base()
    layer = LoRAMoELinear(base, n_experts=3, rank=2, lora_alpha=8.0)
    W = layer.weight_res + layer.delta_weight()
    torch.testing.assert_close(W, base.weight.detach(), rtol=0, atol=1e-12)
    ortho = expert_orthogonality(layer.lora_B.detach().numpy(), layer.lora_A.detach().numpy())
    assert ortho["A"] < 1e-10 and ortho["B"] < 1e-10
    x = torch.randn(5, 7, 16, dtype=torch.float64)
    torch.testing.assert_close(layer(x), base(x), rtol=1e-10, atol=1e-10)  # preserve_init
    faithful = LoRAMoELinear(base, n_experts=3, rank=2, preserve_init=False)
    approx = faithful.weight_res + faithful.delta_weight() / 3  # code: near W_res + (W - W_res)/K
    torch.testing.assert_close(faithful(x), x @ approx.T + base.bias, rtol=1e-10, atol=1e-10)


def test_random_init_starts_at_the_base_function():
    base = _base(1)
    layer = LoRAMoELinear(base, n_experts=2, rank=3, init="random", random_state=0)
    x = torch.randn(4, 16, dtype=torch.float64)
    torch.testing.assert_close(layer(x), base(x))
    assert torch.count_nonzero(layer.lora_A) > 0 and torch.count_nonzero(layer.lora_B) == 0


def test_regroup_is_a_true_permutation_of_units():
    layer = LoRAMoELinear(_base(2), n_experts=3, rank=2)
    opt = _train_a_little(layer)
    K, r = 3, 2
    before_A = layer.lora_A.detach().clone().reshape(K * r, -1)
    before_B = layer.lora_B.detach().clone().permute(0, 2, 1).reshape(K * r, -1)
    moments = opt.state[layer.lora_A]["exp_avg"].clone().reshape(K * r, -1)
    info = layer.regroup(optimizer=opt, random_state=0)
    perm = info["perm"]
    assert sorted(perm.tolist()) == list(range(K * r))
    assert np.bincount(info["labels"]).tolist() == [r] * K
    after_A = layer.lora_A.detach().reshape(K * r, -1)
    after_B = layer.lora_B.detach().permute(0, 2, 1).reshape(K * r, -1)
    torch.testing.assert_close(after_A, before_A[perm])
    torch.testing.assert_close(after_B, before_B[perm])  # (a_i, b_i) pairs move together
    torch.testing.assert_close(
        opt.state[layer.lora_A]["exp_avg"].reshape(K * r, -1), moments[perm]
    )
    with pytest.raises(RuntimeError, match="no accumulated"):
        layer.regroup()


def _plant_gradients(layer, seed=0):
    """Unit gradients along 3 directions, spread so that regrouping must move units."""
    rng = np.random.default_rng(seed)
    dirs_A, dirs_B = rng.normal(size=(3, 16)), rng.normal(size=(3, 12))
    planted = np.array([0, 1, 2, 0, 1, 2])
    gA = np.stack([dirs_A[p] + 0.05 * rng.normal(size=16) for p in planted]).reshape(3, 2, 16)
    gB = np.stack([dirs_B[p] + 0.05 * rng.normal(size=12) for p in planted]).reshape(3, 2, 12)
    layer._grad_A.copy_(torch.as_tensor(gA, dtype=layer._grad_A.dtype))
    layer._grad_B.copy_(torch.as_tensor(gB.transpose(0, 2, 1), dtype=layer._grad_B.dtype))
    layer._n_accumulated = 1
    return planted


def test_function_is_preserved_by_regrouping_under_uniform_gating():
    for preserve in (True, False):
        layer = LoRAMoELinear(
            _base(3), n_experts=3, rank=2, gate="uniform", preserve_init=preserve
        )
        _train_a_little(layer, steps=3, accumulate=False)
        _plant_gradients(layer)
        x = torch.randn(6, 5, 16, dtype=torch.float64)
        before = layer(x).detach()
        info = layer.regroup(random_state=1)
        assert not np.array_equal(info["perm"], np.arange(6))  # units really moved
        torch.testing.assert_close(layer(x), before, rtol=1e-12, atol=1e-12)


def test_permute_gate_moves_gate_rows_with_their_units():
    layer = LoRAMoELinear(_base(4), n_experts=3, rank=2)
    _train_a_little(layer, steps=4)
    gate_before = layer.gate_weight.detach().clone()
    info = layer.regroup(permute_gate=True, random_state=0)
    from mvlearn_ext.adapters import gate_permutation

    gperm = gate_permutation(info["perm"], 3, 2)
    torch.testing.assert_close(layer.gate_weight.detach(), gate_before[gperm])


def test_regroup_raises_intra_expert_cosine_on_planted_gradients():
    layer = LoRAMoELinear(_base(5), n_experts=3, rank=2)
    planted = _plant_gradients(layer)
    info = layer.regroup(random_state=0)
    assert info["after"]["intra"] > info["before"]["intra"]
    assert info["after"]["inter"] < info["before"]["inter"]
    new_groups = [set(planted[info["perm"][2 * e : 2 * e + 2]]) for e in range(3)]
    assert all(len(g) == 1 for g in new_groups)


def test_layer_validation():
    with pytest.raises(TypeError, match="nn.Linear"):
        LoRAMoELinear(torch.nn.Conv1d(2, 2, 1))
    with pytest.raises(ValueError, match="top_k"):
        LoRAMoELinear(_base(), n_experts=2, rank=2, top_k=3)
    with pytest.raises(ValueError, match="exceeds"):
        LoRAMoELinear(_base(), n_experts=4, rank=4)
    layer = LoRAMoELinear(_base(), n_experts=2, rank=2, top_k=1)
    g = layer.gate_weights(torch.randn(3, 16, dtype=torch.float64))
    assert torch.all((g > 0).sum(dim=1) == 1)
    with pytest.raises(RuntimeError, match="backward"):
        copy.deepcopy(layer).accumulate_unit_gradients()
