"""BADIT and SA-Merging on PEFT LoRA adapters."""

import copy

import numpy as np
import pytest
import torch
from peft import LoraConfig, get_peft_model, get_peft_model_state_dict, set_peft_model_state_dict

from mvlearn_ext import merging as np_merging
from mvlearn_ext.adapters import pissa_moe_init
from mvlearn_ext.deep._llm import tiny_causal_lm
from mvlearn_ext.deep.adapters_peft import (
    badit_init_peft,
    badit_regroup_peft,
    peft_expert_orthogonality,
)
from mvlearn_ext.deep.merging_peft import (
    lora_pairs_from_peft,
    sa_merge_peft_dense,
    sa_merge_peft_lora,
)

NAMES = ["e0", "e1", "e2"]


@pytest.fixture()
def peft_llm():
    model, tok = tiny_causal_lm(["a", "b", "c", "d", "e"], hidden_size=16, n_layers=1, seed=0)
    model = model.double()
    ids = tok(["a b c d e a"], return_tensors="pt").input_ids
    with torch.no_grad():
        logits = model(ids).logits
    weights = {
        n: m.weight.detach().clone()
        for n, m in model.named_modules()
        if n.endswith(("q_proj", "v_proj"))
    }
    config = LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj", "v_proj"], lora_dropout=0.0)
    pm = get_peft_model(model, config, adapter_name=NAMES[0])
    for name in NAMES[1:]:
        pm.add_adapter(name, config)
    pm.base_model.set_adapter(NAMES)
    return pm, ids, logits, weights


def test_badit_init_preserves_the_function_and_is_orthogonal(peft_llm):
    pm, ids, logits, weights = peft_llm
    info = badit_init_peft(pm, NAMES)
    assert len(info) == 2  # q_proj and v_proj of the one layer
    with torch.no_grad():
        np.testing.assert_allclose(pm(ids).logits.numpy(), logits.numpy(), atol=1e-10)
    for orth in info.values():
        assert orth["A"] < 1e-10 and orth["B"] < 1e-10
    # the experts are those of the NumPy initialisation of the original weight
    layer = next(m for n, m in pm.named_modules() if n.endswith("q_proj") and hasattr(m, "r"))
    original = next(w for n, w in weights.items() if n.endswith("q_proj"))
    residual, B, A, s = pissa_moe_init(original.numpy(), 3, 2, lora_alpha=4)
    assert s == layer.scaling["e0"] == 2.0
    np.testing.assert_allclose(layer.get_base_layer().weight.numpy(), residual, atol=1e-12)
    for e, name in enumerate(NAMES):
        np.testing.assert_allclose(layer.lora_A[name].weight.detach().numpy(), A[e], atol=1e-12)
        np.testing.assert_allclose(layer.lora_B[name].weight.detach().numpy(), B[e], atol=1e-12)


def test_badit_regroup_is_a_permutation_that_keeps_function_and_orthogonality(peft_llm):
    pm, ids, logits, _ = peft_llm
    badit_init_peft(pm, NAMES)
    params = [p for p in pm.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=1e-3)
    layer = next(m for n, m in pm.named_modules() if n.endswith("v_proj") and hasattr(m, "r"))
    for _ in range(2):  # one step so that Adam has moments, then fresh gradients
        opt.zero_grad()
        (pm(ids).logits ** 2).mean().backward()
        opt.step()
    with torch.no_grad():
        before_logits = pm(ids).logits.clone()
    rows = np.concatenate([layer.lora_A[n].weight.detach().numpy() for n in NAMES])
    moments = np.concatenate([opt.state[layer.lora_A[n].weight]["exp_avg"].numpy() for n in NAMES])
    info = badit_regroup_peft(pm, NAMES, optimizer=opt, random_state=0)
    perm = next(v["perm"] for k, v in info.items() if k.endswith("v_proj"))
    assert sorted(perm.tolist()) == list(range(6))
    new_rows = np.concatenate([layer.lora_A[n].weight.detach().numpy() for n in NAMES])
    np.testing.assert_array_equal(new_rows, rows[perm])
    new_moments = np.concatenate(
        [opt.state[layer.lora_A[n].weight]["exp_avg"].numpy() for n in NAMES]
    )
    np.testing.assert_array_equal(new_moments, moments[perm])
    with torch.no_grad():
        np.testing.assert_allclose(pm(ids).logits.numpy(), before_logits.numpy(), atol=1e-10)
    # cross-expert products after the regroup are products of distinct units before it
    cols = np.concatenate([layer.lora_B[n].weight.detach().numpy() for n in NAMES], axis=1)
    off = ~np.eye(6, dtype=bool)
    orth = next(v for k, v in peft_expert_orthogonality(pm, NAMES).items() if "v_proj" in k)
    assert orth["A"] <= np.abs(rows @ rows.T)[off].max() + 1e-15
    assert orth["B"] <= np.abs(cols.T @ cols)[off].max() + 1e-15


def test_badit_bad_input(peft_llm):
    pm, *_ = peft_llm
    with pytest.raises(ValueError, match="K >= 2"):
        badit_init_peft(pm, "e0")
    with pytest.raises(ValueError, match="no LoRA layer"):
        badit_init_peft(pm, ["e0", "nope"])


# ---------------------------------------------------------------------------
# SA-Merging of PEFT adapters (a chain of linear layers)


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8), torch.nn.ReLU(),
        torch.nn.Linear(8, 4),
    ).double()  # fmt: skip


CONFIG = LoraConfig(r=3, lora_alpha=6, target_modules=["0", "4"], lora_dropout=0.0)


def _adapters(base, n=3, seed=0):
    gen = torch.Generator().manual_seed(seed)
    sds = []
    for _ in range(n):
        pm = get_peft_model(copy.deepcopy(base), copy.deepcopy(CONFIG))
        with torch.no_grad():
            for name, p in pm.named_parameters():
                if "lora_" in name:
                    p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
        sds.append(get_peft_model_state_dict(pm))
    return sds


def _numpy_state(module):
    return {k: v.detach().numpy().astype(np.float64) for k, v in module.state_dict().items()}


def test_rankwise_sa_merge_gives_a_loadable_adapter_equal_to_numpy():
    base = _mlp()
    sds = _adapters(base)
    adapter, cfg, masks = sa_merge_peft_lora(base, sds, CONFIG, p=0.3, n_rounds=2, scaling=0.7)
    pairs = [lora_pairs_from_peft(sd, base.state_dict()) for sd in sds]
    expected, np_masks = np_merging.sa_merge_lora(
        _numpy_state(base), pairs, lora_scaling=2.0, p=0.3, n_rounds=2, scaling=0.7,
        return_masks=True,
    )  # fmt: skip
    for m, n in zip(masks, np_masks, strict=True):
        assert all(np.array_equal(m[k], n[k]) for k in n)
    kept = sum(int(m["0.weight"].sum()) for m in masks)
    assert cfg.r == max(kept, sum(int(m["4.weight"].sum()) for m in masks)) < 9
    # load it as PEFT would, then fold it into the weights
    pm = get_peft_model(copy.deepcopy(base), cfg)
    result = set_peft_model_state_dict(pm, adapter)
    assert not result.unexpected_keys
    assert not [k for k in result.missing_keys if "lora_" in k]
    merged = pm.merge_and_unload().state_dict()
    for key in ("0.weight", "2.weight", "4.weight", "0.bias"):
        np.testing.assert_allclose(merged[key].numpy(), expected[key], atol=1e-12)


def test_dense_sa_merge_equals_numpy():
    base = _mlp()
    sds = _adapters(base, seed=1)
    got = sa_merge_peft_dense(base, sds, CONFIG, p=0.3, n_rounds=2)
    base_np = _numpy_state(base)
    experts = []
    for sd in sds:
        e = dict(base_np)
        for key, (B, A) in lora_pairs_from_peft(sd, base.state_dict()).items():
            e[key] = base_np[key] + 2.0 * B @ A
        experts.append(e)
    expected = np_merging.sa_merge(base_np, experts, p=0.3, n_rounds=2)
    for key, value in got.items():
        np.testing.assert_allclose(value.numpy(), expected[key], atol=1e-12)
    base.load_state_dict(got)  # loadable into the base model


def test_sa_merge_refuses_a_transformer_with_the_reason():
    model, _ = tiny_causal_lm(["a", "b"], hidden_size=16, n_layers=1, seed=0)
    config = LoraConfig(r=2, lora_alpha=2, target_modules=["q_proj"], lora_dropout=0.0)
    sd = get_peft_model_state_dict(get_peft_model(copy.deepcopy(model), config))
    with pytest.raises(ValueError, match="chain"):
        sa_merge_peft_lora(model, [sd, sd], config)
    with pytest.raises(TypeError, match="plain base model"):
        sa_merge_peft_lora(get_peft_model(model, config), [sd], config)
