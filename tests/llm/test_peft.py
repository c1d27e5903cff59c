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
    synflow_grad_model,
)

NAMES = ["e0", "e1", "e2"]


@pytest.fixture()
def peft_llm():
    model, tok = tiny_causal_lm(
        ["a", "b", "c", "d", "e"], hidden_size=16, n_layers=1, random_state=0
    )
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


def test_badit_init_reports_the_orthogonality_of_the_stored_weights():
    """In bfloat16 the report is the stored adapters' orthogonality, not float64's."""
    model, _ = tiny_causal_lm(
        ["a", "b", "c", "d", "e"], hidden_size=16, n_layers=1, random_state=0
    )
    model = model.to(torch.bfloat16)
    config = LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj", "v_proj"], lora_dropout=0.0)
    pm = get_peft_model(model, config, adapter_name=NAMES[0])
    for name in NAMES[1:]:
        pm.add_adapter(name, config)
    pm.base_model.set_adapter(NAMES)
    info = badit_init_peft(pm, NAMES)
    assert info == peft_expert_orthogonality(pm, NAMES)
    layer = next(m for n, m in pm.named_modules() if n.endswith("q_proj") and hasattr(m, "r"))
    A = np.concatenate([layer.lora_A[n].weight.float().detach().numpy() for n in NAMES])
    gram = np.abs(A.astype(np.float64) @ A.T.astype(np.float64))
    cross = ~np.kron(np.eye(3, dtype=bool), np.ones((2, 2), dtype=bool))
    reported = next(v for k, v in info.items() if k.endswith("q_proj"))
    np.testing.assert_allclose(reported["A"], gram[cross].max(), rtol=1e-12)
    assert reported["A"] > 1e-6  # bfloat16 rounding, far above float64's 1e-16


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


CHAIN = ("0.weight", "2.weight", "4.weight")
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


def test_autograd_saliency_equals_the_closed_form_on_a_chain():
    base = _mlp()
    weights = [base.state_dict()[k].numpy() for k in CHAIN]
    closed = np_merging.synflow_grad_mlp(weights)
    auto = synflow_grad_model(base)
    for key, g in zip(CHAIN, closed, strict=True):
        np.testing.assert_allclose(auto[key], g, rtol=1e-12, atol=0)
    # the whole rank-wise merge: same masks, same adapter, by either route
    sds = _adapters(base, seed=2)
    a1, c1, m1 = sa_merge_peft_lora(base, sds, CONFIG, p=0.3, n_rounds=2, saliency="closed_form")
    a2, c2, m2 = sa_merge_peft_lora(base, sds, CONFIG, p=0.3, n_rounds=2, saliency="autograd")
    assert c1.r == c2.r
    for x, y in zip(m1, m2, strict=True):
        assert all(np.array_equal(x[k], y[k]) for k in x)
    for key in a1:
        torch.testing.assert_close(a1[key], a2[key], rtol=0, atol=0)
    d1 = sa_merge_peft_dense(base, sds, CONFIG, p=0.3, n_rounds=2, saliency="closed_form")
    d2 = sa_merge_peft_dense(
        base, sds, CONFIG, p=0.3, n_rounds=2, saliency="autograd", layers=list(CHAIN)
    )
    for key in d1:
        torch.testing.assert_close(d1[key], d2[key], rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------
# SA-Merging of a transformers model's adapters (autograd saliency)

LM_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj"]
LM_CONFIG = LoraConfig(r=4, lora_alpha=8, target_modules=LM_TARGETS, lora_dropout=0.0)


@pytest.fixture(scope="module")
def tiny_lm():
    model, tok = tiny_causal_lm(["a", "b", "c", "d"], hidden_size=16, n_layers=2, random_state=0)
    model = model.double().eval()
    ids = tok(["a b c d a"], return_tensors="pt").input_ids
    return model, ids


def _lm_adapters(model, n, seed, zero_b=False):
    gen = torch.Generator().manual_seed(seed)
    sds = []
    for _ in range(n):
        pm = get_peft_model(copy.deepcopy(model), copy.deepcopy(LM_CONFIG))
        with torch.no_grad():
            for name, p in pm.named_parameters():
                if "lora_A" in name or ("lora_B" in name and not zero_b):
                    p.copy_(0.2 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
        sds.append(get_peft_model_state_dict(pm))
    return sds


def _delta(model, sds, masks, scaling):
    """scaling * sum_n s B_n Diag(m_n) A_n for every adapted weight, by hand."""
    s = LM_CONFIG.lora_alpha / LM_CONFIG.r
    out = {}
    for sd, m in zip(sds, masks, strict=True):
        for key, (B, A) in lora_pairs_from_peft(sd, model.state_dict()).items():
            out[key] = out.get(key, 0.0) + scaling * s * (B * m[key]) @ A
    return out


def test_transformer_synflow_gradient_is_positive_on_every_projection(tiny_lm):
    model, _ = tiny_lm
    before = {k: v.clone() for k, v in model.state_dict().items()}
    grads = synflow_grad_model(model)
    for key, g in grads.items():
        assert np.isfinite(g).all() and (g >= 0).all(), key
    blocks = [("self_attn", t) for t in LM_TARGETS] + [
        ("mlp", t) for t in ("gate_proj", "up_proj", "down_proj")
    ]
    for layer in range(2):
        for block, target in blocks:
            key = f"model.layers.{layer}.{block}.{target}.weight"
            assert grads[key].min() > 0, key  # every weight lies on a path (q and k too)
    for key, value in model.state_dict().items():  # the model is left as it was
        torch.testing.assert_close(value, before[key], rtol=0, atol=0)


def test_synflow_refuses_gemma_norms_with_a_clear_error(tiny_lm):
    # Gemma's RMSNorm scales by (1 + weight), which the frozen-RMS saliency does not
    # model: a model holding one is refused, naming the argument and the module.
    model, _ = tiny_lm
    model = copy.deepcopy(model)
    norm = model.model.norm
    GemmaRMSNorm = type("GemmaRMSNorm", (type(norm),), {})
    norm.__class__ = GemmaRMSNorm
    with pytest.raises(ValueError, match=r"model: 'model\.norm' is a GemmaRMSNorm"):
        synflow_grad_model(model)


def test_rankwise_sa_merge_of_transformer_adapters_loads_and_keeps_the_fraction(tiny_lm):
    model, ids = tiny_lm
    sds = _lm_adapters(model, 3, seed=0)
    adapter, cfg, masks = sa_merge_peft_lora(model, sds, LM_CONFIG, p=0.5, n_rounds=2, scaling=0.5)
    kept = np_merging.sa_keep_counts(LM_CONFIG.r, 0.5, 2)[-1]  # 4 -> 2 -> 1
    assert kept == 1
    for m in masks:
        assert len(m) == 2 * len(LM_TARGETS)
        assert all(int(v.sum()) == kept for v in m.values())
    assert cfg.r == 3 * kept
    pm = get_peft_model(copy.deepcopy(model), cfg)
    result = set_peft_model_state_dict(pm, adapter)
    assert not result.unexpected_keys
    assert not [k for k in result.missing_keys if "lora_" in k]
    merged = pm.merge_and_unload().state_dict()
    delta = _delta(model, sds, masks, 0.5)
    for key, value in model.state_dict().items():
        expected = value.numpy() + delta.get(key, 0.0)
        np.testing.assert_allclose(merged[key].numpy(), expected, atol=1e-12, err_msg=key)


def test_identical_adapters_merge_to_that_adapter_and_zero_updates_to_the_base(tiny_lm):
    model, ids = tiny_lm
    (sd,) = _lm_adapters(model, 1, seed=3)
    one, _, m1 = sa_merge_peft_lora(model, [sd], LM_CONFIG, p=0.3, n_rounds=3)
    three, cfg3, m3 = sa_merge_peft_lora(model, [sd, sd, sd], LM_CONFIG, p=0.3, n_rounds=3,
                                         scaling=1 / 3)  # fmt: skip
    for m in m3:  # the consensus of copies is the adapter itself: same ranks kept
        assert all(np.array_equal(m[k], m1[0][k]) for k in m)
    d1, d3 = _delta(model, [sd], m1, 1.0), _delta(model, [sd] * 3, m3, 1 / 3)
    for key in d1:
        np.testing.assert_allclose(d3[key], d1[key], atol=1e-14)
    # with no pruning, the merge of one adapter is that adapter: same logits
    full, cfg_full, _ = sa_merge_peft_lora(model, [sd], LM_CONFIG, p=0.0, n_rounds=2)
    pm = get_peft_model(copy.deepcopy(model), copy.deepcopy(LM_CONFIG))
    set_peft_model_state_dict(pm, sd)
    pf = get_peft_model(copy.deepcopy(model), cfg_full)
    set_peft_model_state_dict(pf, full)
    with torch.no_grad():
        torch.testing.assert_close(pf(ids).logits, pm(ids).logits, rtol=0, atol=1e-12)
    # zero task vectors (PEFT's own initialisation, B = 0) merge to the base model
    zeros = _lm_adapters(model, 2, seed=4, zero_b=True)
    adapter, cfg, _ = sa_merge_peft_lora(model, zeros, LM_CONFIG, p=0.3, n_rounds=2)
    pz = get_peft_model(copy.deepcopy(model), cfg)
    set_peft_model_state_dict(pz, adapter)
    dense = sa_merge_peft_dense(model, zeros, LM_CONFIG, p=0.3, n_rounds=2)
    with torch.no_grad():
        torch.testing.assert_close(pz(ids).logits, model(ids).logits, rtol=0, atol=0)
    for key, value in model.state_dict().items():
        torch.testing.assert_close(dense[key], value, rtol=0, atol=0)


def test_dense_sa_merge_of_transformer_adapters_keeps_the_fraction(tiny_lm):
    model, _ = tiny_lm
    sds = _lm_adapters(model, 2, seed=5)
    got = sa_merge_peft_dense(model, sds, LM_CONFIG, p=0.5, n_rounds=3)
    n = model.config.hidden_size
    kept = np_merging.sa_keep_counts(n * n, 0.5, 3)[-1]
    for key, value in model.state_dict().items():
        changed = int((got[key] != value).sum())
        if any(t in key for t in LM_TARGETS):
            assert 0 < changed <= 2 * kept, key  # each expert keeps `kept` of the n * n
        else:
            assert changed == 0, key
    model_copy = copy.deepcopy(model)
    model_copy.load_state_dict(got)  # loadable into the base model


def test_sa_merge_peft_bad_input(tiny_lm):
    model, _ = tiny_lm
    config = LoraConfig(r=2, lora_alpha=2, target_modules=["q_proj"], lora_dropout=0.0)
    sd = get_peft_model_state_dict(get_peft_model(copy.deepcopy(model), config))
    with pytest.raises(ValueError, match="chain"):
        sa_merge_peft_lora(model, [sd, sd], config, saliency="closed_form")
    with pytest.raises(ValueError, match="saliency must be"):
        sa_merge_peft_lora(model, [sd, sd], config, saliency="exact")
    with pytest.raises(TypeError, match="plain base model"):
        sa_merge_peft_lora(get_peft_model(copy.deepcopy(model), config), [sd], config)
    with pytest.raises(TypeError, match="plain base model"):
        synflow_grad_model(get_peft_model(copy.deepcopy(model), config))
