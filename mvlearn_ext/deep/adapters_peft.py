"""BADIT on PEFT: orthogonal PiSSA experts as LoRA adapters of a ``transformers`` model.

Needs the ``llm`` extra; ``import mvlearn_ext.deep`` does not import this
module. BADIT's experts (:mod:`mvlearn_ext.adapters`) become K PEFT LoRA
adapters of rank r on the same target modules, one adapter per expert, all
active at once (PEFT then adds their outputs: the ungated mixture with
weights 1, which is what the initialisation preserves; PEFT has no router,
so BADIT's gate is not part of this bridge, see
:class:`mvlearn_ext.adapters.LoRAMoELinear` for the gated layer).

:func:`badit_init_peft` writes the PiSSA-MoE initialisation into the LoRA
modules of a PEFT model (the top ``K r`` singular triplets of each base
weight split into K mutually orthogonal experts, the base weight replaced by
the exact residual, so the model computes the same function);
:func:`badit_regroup_peft` is the orthogonality-preserving maintenance step
(the rank-1 units are permuted between experts by the clustering of their
accumulated gradients: a permutation keeps the sum of the experts and the
mutual orthogonality of the units); :func:`peft_expert_orthogonality`
measures it.
"""

from __future__ import annotations

import numpy as np
import torch

from mvlearn_ext.adapters import (
    balanced_spherical_kmeans,
    expert_orthogonality,
    intra_inter_cosine,
    pissa_moe_init,
    regroup_permutation,
    unit_gradient_vectors,
)
from mvlearn_ext.deep._llm import require_llm

peft = require_llm("peft", feature="mvlearn_ext.deep.adapters_peft")

__all__ = ["badit_init_peft", "badit_regroup_peft", "peft_expert_orthogonality"]


def _names(adapter_names):
    if isinstance(adapter_names, str) or len(adapter_names) < 2:
        raise ValueError(
            f"adapter_names must list the K >= 2 expert adapters, got {adapter_names!r}"
        )
    names = list(adapter_names)
    if len(set(names)) != len(names):
        raise ValueError(f"adapter_names has repeated names: {names}")
    return names


def _lora_layers(model, adapter_names):
    """``{name: module}`` of the PEFT LoRA linear layers that hold every adapter."""
    from peft.tuners.lora import LoraLayer

    layers = {}
    for name, module in model.named_modules():
        if isinstance(module, LoraLayer) and all(a in module.lora_A for a in adapter_names):
            base = module.get_base_layer()
            if not isinstance(base, torch.nn.Linear):
                raise TypeError(f"{name}: BADIT needs nn.Linear base layers, got {type(base)}")
            layers[name] = module
    if not layers:
        raise ValueError(f"no LoRA layer of the model holds all the adapters {adapter_names}")
    return layers


def _ranks_and_scaling(module, adapter_names):
    ranks = {module.r[a] for a in adapter_names}
    scalings = {float(module.scaling[a]) for a in adapter_names}
    if len(ranks) != 1 or len(scalings) != 1:
        raise ValueError("the expert adapters must share one rank and one lora_alpha")
    return ranks.pop(), scalings.pop()


@torch.no_grad()
def badit_init_peft(model, adapter_names):
    """BADIT's PiSSA-MoE initialisation of K PEFT LoRA adapters (one per expert).

    For each LoRA linear layer holding all ``adapter_names``: with
    ``W = U S V^T`` its base weight, expert e (the adapter
    ``adapter_names[e]``) gets the singular triplets ``e r .. (e + 1) r - 1``
    (:func:`mvlearn_ext.adapters.pissa_moe_init`, with PEFT's scaling
    ``s = lora_alpha / r``) and the base weight becomes
    ``W - s sum_e B_e A_e``. With every expert adapter active
    (``model.base_model.set_adapter(adapter_names)``) the model computes
    what it computed before, to float rounding.

    Parameters
    ----------
    model : peft.PeftModel or nn.Module with PEFT LoRA layers
    adapter_names : list of str
        The K expert adapters, of one rank r with ``K r <= min(n_out, n_in)``
        in every layer.

    Returns
    -------
    orthogonality : dict
        Per layer, :func:`mvlearn_ext.adapters.expert_orthogonality` of the
        experts as stored in the adapters (the largest cross-expert entry of
        ``A_e A_f^T`` and ``B_e^T B_f``), i.e. :func:`peft_expert_orthogonality`
        right after the initialisation: zero up to the rounding of the
        model's dtype (of order 1e-4 in bfloat16), not of the float64
        decomposition.

    See Also
    --------
    mvlearn_ext.adapters.pissa_moe_init : The NumPy initialisation.
    badit_regroup_peft : The regrouping during training.

    Examples
    --------
    >>> import torch
    >>> from peft import LoraConfig, get_peft_model
    >>> _ = torch.manual_seed(0)
    >>> config = LoraConfig(r=2, lora_alpha=4, target_modules=["0"], lora_dropout=0.0)
    >>> net = torch.nn.Sequential(torch.nn.Linear(8, 8))
    >>> model = get_peft_model(net, config, adapter_name="e0")
    >>> model.add_adapter("e1", config)
    >>> model.base_model.set_adapter(["e0", "e1"])
    >>> x = torch.randn(3, 8)
    >>> before = model(x).detach()
    >>> from mvlearn_ext.deep.adapters_peft import badit_init_peft
    >>> orthogonality = badit_init_peft(model, ["e0", "e1"])
    >>> bool(torch.allclose(model(x), before, atol=1e-5))  # the function is unchanged
    True
    """
    names = _names(adapter_names)
    out = {}
    for name, module in _lora_layers(model, names).items():
        r, s = _ranks_and_scaling(module, names)
        base = module.get_base_layer()
        W = base.weight.detach().to(torch.float64).cpu().numpy()
        residual, B, A, _ = pissa_moe_init(W, len(names), r, lora_alpha=s * r)
        dtype, device = base.weight.dtype, base.weight.device
        base.weight.copy_(torch.as_tensor(residual, dtype=dtype, device=device))
        for e, adapter in enumerate(names):
            module.lora_A[adapter].weight.copy_(torch.as_tensor(A[e], dtype=dtype, device=device))
            module.lora_B[adapter].weight.copy_(torch.as_tensor(B[e], dtype=dtype, device=device))
        out[name] = expert_orthogonality(*_stack(module, names))
    return out


def _stack(module, names, grad=False):
    def get(layer):
        t = layer.weight.grad if grad else layer.weight
        if t is None:
            raise RuntimeError("no gradients on the expert adapters: call loss.backward() first")
        return t.detach().to(torch.float64).cpu().numpy()

    A = np.stack([get(module.lora_A[a]) for a in names])  # (K, r, in)
    B = np.stack([get(module.lora_B[a]) for a in names])  # (K, out, r)
    return B, A


def peft_expert_orthogonality(model, adapter_names):
    """Per layer, the largest cross-expert entry of ``A_e A_f^T`` and ``B_e^T B_f``.

    See Also
    --------
    mvlearn_ext.adapters.expert_orthogonality : The NumPy check.

    Examples
    --------
    >>> import torch
    >>> from peft import LoraConfig, get_peft_model
    >>> _ = torch.manual_seed(0)
    >>> config = LoraConfig(r=2, lora_alpha=4, target_modules=["0"], lora_dropout=0.0)
    >>> net = torch.nn.Sequential(torch.nn.Linear(8, 8))
    >>> model = get_peft_model(net, config, adapter_name="e0")
    >>> model.add_adapter("e1", config)
    >>> model.base_model.set_adapter(["e0", "e1"])
    >>> x = torch.randn(3, 8)
    >>> before = model(x).detach()
    >>> from mvlearn_ext.deep.adapters_peft import badit_init_peft
    >>> from mvlearn_ext.deep.adapters_peft import peft_expert_orthogonality
    >>> _ = badit_init_peft(model, ["e0", "e1"])
    >>> worst = next(iter(peft_expert_orthogonality(model, ["e0", "e1"]).values()))
    >>> bool(worst["A"] < 1e-5), bool(worst["B"] < 1e-5)
    (True, True)
    """
    names = _names(adapter_names)
    return {
        name: expert_orthogonality(*_stack(module, names))
        for name, module in _lora_layers(model, names).items()
    }


@torch.no_grad()
def badit_regroup_peft(model, adapter_names, *, optimizer=None, n_init=4, random_state=None):
    """BADIT's regroup of the rank-1 units between the expert adapters, from their gradients.

    Call after ``loss.backward()`` (the ``.grad`` of the adapters' weights,
    accumulated over as many batches as wanted, are the unit gradients). In
    each layer the ``K r`` units (a row of ``A_e`` with the matching column of
    ``B_e``) are clustered by the direction of their gradients into K
    clusters of exactly r units (:func:`mvlearn_ext.adapters.balanced_spherical_kmeans`)
    and permuted so that cluster e becomes adapter e. A permutation keeps
    ``sum_e B_e A_e`` (the model's function with all experts active) and
    the mutual orthogonality of the units. With ``optimizer``, the
    optimiser's state tensors of each weight's shape (Adam's moments) move
    with the units.

    Parameters
    ----------
    model : peft.PeftModel or nn.Module with PEFT LoRA layers
    adapter_names : list of str
    optimizer : torch.optim.Optimizer, optional
    n_init : int, default=4
    random_state : int or None, default=None

    Returns
    -------
    info : dict
        Per layer: ``perm`` (new flat unit -> old flat unit) and the mean
        intra-/inter-expert gradient cosines ``before`` and ``after``.

    See Also
    --------
    mvlearn_ext.adapters.balanced_spherical_kmeans : The clustering of the units.
    badit_init_peft : The initialisation.

    Examples
    --------
    >>> import torch
    >>> from peft import LoraConfig, get_peft_model
    >>> _ = torch.manual_seed(0)
    >>> config = LoraConfig(r=2, lora_alpha=4, target_modules=["0"], lora_dropout=0.0)
    >>> net = torch.nn.Sequential(torch.nn.Linear(8, 8))
    >>> model = get_peft_model(net, config, adapter_name="e0")
    >>> model.add_adapter("e1", config)
    >>> model.base_model.set_adapter(["e0", "e1"])
    >>> x = torch.randn(3, 8)
    >>> before = model(x).detach()
    >>> from mvlearn_ext.deep.adapters_peft import badit_init_peft, badit_regroup_peft
    >>> _ = badit_init_peft(model, ["e0", "e1"])
    >>> (model(x) ** 2).mean().backward()  # the gradients that group the units
    >>> info = badit_regroup_peft(model, ["e0", "e1"], random_state=0)
    >>> bool(torch.allclose(model(x), before, atol=1e-5))  # a permutation: same function
    True
    """
    names = _names(adapter_names)
    K = len(names)
    info = {}
    for name, module in _lora_layers(model, names).items():
        r, _ = _ranks_and_scaling(module, names)
        gB, gA = _stack(module, names, grad=True)
        vectors = unit_gradient_vectors(gB, gA)
        labels = balanced_spherical_kmeans(vectors, K, n_init=n_init, random_state=random_state)
        perm = regroup_permutation(labels, K, r)
        src = [(perm[u] // r, perm[u] % r) for u in range(K * r)]  # (old expert, old row)
        # A_0 .. A_{K-1} (units are rows), then B_0 .. B_{K-1} (units are columns)
        tensors = [module.lora_A[a].weight for a in names]
        tensors += [module.lora_B[a].weight for a in names]
        states = [optimizer.state.get(t, {}) if optimizer is not None else {} for t in tensors]
        old = [t.detach().clone() for t in tensors]
        old_states = [
            {k: v.clone() for k, v in st.items() if torch.is_tensor(v) and v.shape == t.shape}
            for st, t in zip(states, tensors, strict=True)
        ]
        for e in range(K):
            for i in range(r):
                oe, oi = src[e * r + i]
                tensors[e][i].copy_(old[oe][oi])
                tensors[K + e][:, i].copy_(old[K + oe][:, oi])
                for key in old_states[e]:
                    states[e][key][i].copy_(old_states[oe][key][oi])
                for key in old_states[K + e]:
                    states[K + e][key][:, i].copy_(old_states[K + oe][key][:, oi])
        info[name] = {
            "perm": perm,
            "before": intra_inter_cosine(vectors, np.arange(K * r) // r),
            "after": intra_inter_cosine(vectors, labels),
        }
    return info
