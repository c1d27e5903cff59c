"""The torch bridge of merging equals the NumPy route and returns the input types."""

import copy

import numpy as np
import pytest
import torch
from torch import nn

from mvlearn_ext import merging as npm
from mvlearn_ext.deep import merging as tm


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """Tiny models: one intra-op thread is much faster on a shared machine."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def _mlp(seed, dtype=torch.float32):
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 6), nn.ReLU(), nn.Linear(6, 3)
    ).to(dtype)


def _experts(base, n=3, seed=0, scale=0.1):
    gen = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        m = copy.deepcopy(base)
        with torch.no_grad():
            for p in m.parameters():
                p.add_(scale * torch.randn(p.shape, generator=gen, dtype=p.dtype))
        out.append(m)
    return out


def _np(sd):
    return {k: v.detach().cpu().numpy() for k, v in sd.items()}


CASES = {
    "task_arithmetic": {"scaling": 0.4},
    "ties": {"density": 0.3, "granularity": "global", "merge_func": "sum"},
    "dare": {"density": 0.3, "random_state": 5},
    "dare_ties": {"density": 0.3, "random_state": 5, "rescale": "l1"},
    "magnitude_merge": {"density": 0.2},
    "random_mask_merge": {"density": 0.2, "random_state": 1},
    "sa_merge": {"p": 0.3, "n_rounds": 3},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_state_dict_and_module_routes_equal_the_numpy_route(name):
    base = _mlp(0)
    experts = _experts(base)
    kwargs = CASES[name]
    ref = getattr(npm, name)(
        _np(base.state_dict()), [_np(e.state_dict()) for e in experts], **kwargs
    )
    out_sd = getattr(tm, name)(base.state_dict(), [e.state_dict() for e in experts], **kwargs)
    assert isinstance(out_sd, dict) and list(out_sd) == list(ref)
    for k, v in out_sd.items():
        assert isinstance(v, torch.Tensor) and v.dtype == torch.float32
        np.testing.assert_array_equal(v.numpy(), ref[k])
    out_mod = getattr(tm, name)(base, experts, **kwargs)
    assert type(out_mod) is nn.Sequential and out_mod is not base
    for k, v in out_mod.state_dict().items():
        np.testing.assert_allclose(v.numpy(), ref[k], rtol=1e-6, atol=1e-6)
    # the base module is untouched
    for k, v in base.state_dict().items():
        assert torch.equal(v, _mlp(0).state_dict()[k])


def test_a_float16_merge_that_overflows_is_refused_by_key():
    # Merged in float32, cast back to float16: beyond 65504 it would be inf.
    base = {"w": torch.full((3,), 60000.0, dtype=torch.float16)}
    experts = [{"w": torch.full((3,), 65000.0, dtype=torch.float16)}]
    with pytest.raises(ValueError, match=r"merged value of 'w' overflows torch.float16"):
        tm.task_arithmetic(base, experts, scaling=3.0)
    within = tm.task_arithmetic(base, experts, scaling=0.5)["w"]
    assert within.dtype == torch.float16 and bool(torch.isfinite(within).all())


def test_mixed_inputs_and_bfloat16_roundtrip():
    base = _mlp(1, torch.bfloat16)
    experts = _experts(base, n=2)
    out = tm.task_arithmetic(base.state_dict(), [experts[0], experts[1].state_dict()])
    assert all(v.dtype == torch.bfloat16 for v in out.values())
    expected = {
        k: base.state_dict()[k].float()
        + sum(e.state_dict()[k].float() - base.state_dict()[k].float() for e in experts)
        for k in out
    }
    for k in out:
        torch.testing.assert_close(out[k].float(), expected[k].to(torch.bfloat16).float())


def test_task_vectors_are_tensors():
    base = _mlp(2)
    experts = _experts(base, n=2)
    taus = tm.task_vectors(base, experts)
    for tau, e in zip(taus, experts, strict=True):
        for k, v in tau.items():
            torch.testing.assert_close(v, (e.state_dict()[k] - base.state_dict()[k]).double())


def test_errors_name_the_problem():
    base = _mlp(3)
    other = _mlp(3, torch.float64)
    with pytest.raises(TypeError, match=r"experts\[0\]\['0.weight'\] has dtype torch.float64"):
        tm.task_arithmetic(base, [other])
    with pytest.raises(TypeError, match="nn.Module or a state_dict"):
        tm.ties(base, [np.zeros(3)])
    with pytest.raises(TypeError, match="experts must be a list"):
        tm.ties(base, base)
    wrong = nn.Sequential(nn.Linear(5, 7))
    with pytest.raises(ValueError, match="missing keys"):
        tm.task_arithmetic(base, [wrong])
    with pytest.raises(TypeError, match="needs base to be an nn.Module"):
        tm.sa_merge(base.state_dict(), [base.state_dict()], saliency="autograd")


def test_autograd_synflow_matches_the_closed_form():
    base = _mlp(4, torch.float64)
    grads = tm.synflow_grad(base)
    weights = [base.state_dict()[f"{i}.weight"].numpy() for i in (0, 2, 4)]
    closed = npm.synflow_grad_mlp(weights)
    for i, g in zip((0, 2, 4), closed, strict=True):
        np.testing.assert_allclose(grads[f"{i}.weight"], g, rtol=1e-12)


def test_autograd_sa_merge_equals_closed_form_on_a_linear_stack():
    base = _mlp(5)
    experts = _experts(base)
    auto, m_auto = tm.sa_merge(base, experts, p=0.3, n_rounds=4, return_masks=True)
    closed, m_closed = tm.sa_merge(
        base, experts, p=0.3, n_rounds=4, saliency="closed_form", return_masks=True
    )
    for a, b in zip(m_auto, m_closed, strict=True):
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
    for k, v in auto.state_dict().items():
        torch.testing.assert_close(v, closed.state_dict()[k])


def test_autograd_sa_merge_runs_on_a_convolutional_module():
    torch.manual_seed(0)
    base = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    experts = _experts(base, n=2)
    merged, masks = tm.sa_merge(
        base, experts, input_shape=(1, 1, 6, 6), p=0.5, n_rounds=1, return_masks=True
    )
    assert masks[0]["0.weight"].shape == (4, 1, 3, 3)
    assert masks[0]["0.weight"].sum() == npm.sa_keep_counts(36, 0.5, 1)[-1]
    assert merged(torch.ones(1, 1, 6, 6)).shape == (1, 3)


def test_dead_unit_in_a_module_is_pruned_first():
    base = _mlp(6, torch.float64)
    with torch.no_grad():
        for p in base.parameters():
            p.abs_()
    expert = copy.deepcopy(base)
    with torch.no_grad():
        expert[2].weight[:, 3] = 0.0  # hidden unit 3 of layer 0 has no outgoing weight
        expert[0].weight.add_(0.01)  # small live updates that agree with the consensus
        expert[0].weight[3] += 50.0
    _, masks = tm.sa_merge(
        base, [expert], p=0.2, n_rounds=1, layers=["0.weight"], return_masks=True
    )
    assert not masks[0]["0.weight"][3].any()


def test_peft_pairs_and_lora_bridge():
    rng = np.random.default_rng(0)
    base = _mlp(7)
    sd = {
        "base_model.model.0.lora_A.default.weight": torch.tensor(
            rng.normal(size=(2, 5)), dtype=torch.float32
        ),
        "base_model.model.0.lora_B.default.weight": torch.tensor(
            rng.normal(size=(7, 2)), dtype=torch.float32
        ),
    }
    pairs = tm.peft_lora_pairs(sd)
    assert list(pairs) == ["base_model.model.0.weight"]
    B, A = pairs["base_model.model.0.weight"]
    assert B.shape == (7, 2) and A.shape == (2, 5)
    adapters = [{"0.weight": (torch.tensor(B), torch.tensor(A))}, {"0.weight": (0.5 * B, -A)}]
    layers = ["0.weight", "2.weight", "4.weight"]
    out = tm.sa_merge_lora(base, adapters, lora_scaling=0.5, p=0.5, n_rounds=1, layers=layers)
    ref = npm.sa_merge_lora(
        _np(base.state_dict()),
        [{"0.weight": (B, A)}, {"0.weight": (0.5 * B, -A)}],
        lora_scaling=0.5,
        p=0.5,
        n_rounds=1,
        layers=layers,
    )
    assert isinstance(out, nn.Sequential)
    for k, v in out.state_dict().items():
        np.testing.assert_allclose(v.numpy(), ref[k], rtol=1e-6)
    with pytest.raises(ValueError, match="no '<path>.lora_A"):
        tm.peft_lora_pairs(base.state_dict())
