"""SA-Merging of PEFT LoRA adapters: ``get_peft_model_state_dict`` in, a loadable adapter out.

Needs the ``llm`` extra; ``import mvlearn_ext.deep`` does not import this
module. The adapters are the state dicts that
``peft.get_peft_model_state_dict`` returns (one per expert, fine-tuned on
the same base model with the same ``LoraConfig`` targets). The numbers are
those of :func:`mvlearn_ext.merging.sa_merge_lora` (rank-wise SA-Merging)
and :func:`mvlearn_ext.merging.sa_merge` (dense SA-Merging).

Rank-wise SA-Merging keeps whole rank-1 components of every expert; the
merged update ``scaling * sum_n s B_n Diag(m_n) A_n`` is itself a LoRA
update, of rank the number of components kept, so
:func:`sa_merge_peft_lora` returns it as one adapter (the kept columns of
the ``B_n`` and rows of the ``A_n`` side by side, zero-padded to one rank
for all modules) with its ``LoraConfig``: ``set_peft_model_state_dict``
loads it into a PEFT model of the base. Dense SA-Merging prunes single
weights, which leaves no low-rank structure: :func:`sa_merge_peft_dense`
returns merged dense weights for the base model instead.

Both use the closed-form SynFlow saliency of a chain of linear layers: the
2-D weights of the base model (``layers``, by default all of them in the
order of its state dict) must chain ``(n_out, n_in)`` shapes. A
transformer's embeddings, attention and MLP projections do not, and are
refused with that message: SA-Merging of a transformers LLM's adapters
(a SynFlow saliency through attention) is not done here.
"""

from __future__ import annotations

import copy
import re

import numpy as np
import torch

from mvlearn_ext import merging as _np_merging
from mvlearn_ext.deep._llm import require_llm

peft = require_llm("peft", feature="mvlearn_ext.deep.merging_peft")

__all__ = ["lora_pairs_from_peft", "sa_merge_peft_dense", "sa_merge_peft_lora"]

_KEY = re.compile(r"^(?:base_model\.model\.)?(?P<path>.*)\.lora_(?P<ab>[AB])(?:\.[^.]+)?\.weight$")


def _base_state(base_model):
    if isinstance(base_model, peft.PeftModel):
        raise TypeError(
            "base_model must be the plain base model (not a PeftModel): its weights are the "
            "ones the adapters were trained on"
        )
    if not isinstance(base_model, torch.nn.Module):
        raise TypeError(f"base_model must be an nn.Module, got {type(base_model).__name__}")
    return base_model.state_dict()


def lora_pairs_from_peft(adapter_state_dict, base_state_dict):
    """``{base_weight_key: (B, A)}`` (float64 arrays) from a PEFT adapter state dict.

    Keys ``base_model.model.<path>.lora_A[.<adapter>].weight`` (the layout
    of ``get_peft_model_state_dict``) map to ``<path>.weight`` of the base
    model's state dict.
    """
    pairs = {}
    for key, value in adapter_state_dict.items():
        m = _KEY.match(key)
        if not m:
            continue
        target = m.group("path") + ".weight"
        if target not in base_state_dict:
            raise ValueError(f"{key!r} adapts {target!r}, which the base model does not have")
        pairs.setdefault(target, {})[m.group("ab")] = (
            value.detach().to(torch.float64).cpu().numpy()
        )
    if not pairs:
        raise ValueError("the adapter state dict has no '<path>.lora_A.weight' keys")
    out = {}
    for target, ab in pairs.items():
        if set(ab) != {"A", "B"}:
            raise ValueError(f"{target!r} has lora_{'A' if 'A' in ab else 'B'} only")
        out[target] = (ab["B"], ab["A"])
    return out


def _scaling(config):
    if not isinstance(config, peft.LoraConfig):
        raise TypeError(f"config must be a peft.LoraConfig, got {type(config).__name__}")
    if config.rank_pattern or config.alpha_pattern:
        raise ValueError("per-module ranks (rank_pattern / alpha_pattern) are not supported")
    r = config.r
    return config.lora_alpha / (np.sqrt(r) if config.use_rslora else r)


def _numpy(sd):
    return {k: v.detach().to(torch.float64).cpu().numpy() for k, v in sd.items()}


def _adapters(base_sd, adapter_state_dicts):
    if isinstance(adapter_state_dicts, dict) or len(adapter_state_dicts) < 1:
        raise TypeError("adapter_state_dicts must be a list of PEFT adapter state dicts")
    return [lora_pairs_from_peft(sd, base_sd) for sd in adapter_state_dicts]


def sa_merge_peft_lora(base_model, adapter_state_dicts, config, **kwargs):
    """Rank-wise SA-Merging of PEFT LoRA adapters into one loadable adapter.

    Parameters
    ----------
    base_model : nn.Module
        The plain base model the adapters were trained on.
    adapter_state_dicts : list of dict
        ``peft.get_peft_model_state_dict(peft_model_n)``, one per expert.
    config : peft.LoraConfig
        The experts' config (one rank and alpha for every module).
    **kwargs
        ``p``, ``n_rounds``, ``scaling``, ``layers`` of
        :func:`mvlearn_ext.merging.sa_merge_lora` (``layers``: the chain of
        weight matrices, default every 2-D weight of the base in order).

    Returns
    -------
    adapter_state_dict : dict of str to Tensor
        In the layout of ``get_peft_model_state_dict``.
    merged_config : peft.LoraConfig
        ``config`` with ``r`` the merged rank (the largest number of kept
        components over the modules) and ``lora_alpha`` set so that the
        scaling is that of ``config``; no dropout.
    masks : list of dict
        The rank masks of every expert (:func:`mvlearn_ext.merging.sa_merge_lora`).
    """
    s = _scaling(config)
    base_sd = _base_state(base_model)
    adapters = _adapters(base_sd, adapter_state_dicts)
    scaling = kwargs.pop("scaling", 1.0)
    _, masks = _np_merging.sa_merge_lora(
        _numpy(base_sd), adapters, lora_scaling=s, scaling=scaling, return_masks=True, **kwargs
    )
    kept = {k: sum(int(m[k].sum()) for m in masks) for k in adapters[0]}
    rank = max(max(kept.values()), 1)
    dtype = next(iter(base_sd.values())).dtype
    out = {}
    pairs = list(zip(adapters, masks, strict=True))
    for key in adapters[0]:
        B = np.concatenate([ad[key][0][:, m[key]] for ad, m in pairs], axis=1)
        A = np.concatenate([ad[key][1][m[key]] for ad, m in pairs], axis=0)
        B_pad = np.zeros((B.shape[0], rank))
        A_pad = np.zeros((rank, A.shape[1]))
        B_pad[:, : B.shape[1]] = scaling * B
        A_pad[: A.shape[0]] = A
        path = "base_model.model." + key[: -len(".weight")]
        out[f"{path}.lora_A.weight"] = torch.as_tensor(A_pad, dtype=dtype)
        out[f"{path}.lora_B.weight"] = torch.as_tensor(B_pad, dtype=dtype)
    merged_config = copy.deepcopy(config)
    merged_config.r = rank
    merged_config.lora_alpha = s * (np.sqrt(rank) if config.use_rslora else rank)
    merged_config.lora_dropout = 0.0
    return out, merged_config, masks


def sa_merge_peft_dense(base_model, adapter_state_dicts, config, **kwargs):
    """Dense SA-Merging of PEFT LoRA adapters: merged weights for the base model.

    Each expert is the base model with its adapter merged in
    (``W + s B A``); :func:`mvlearn_ext.merging.sa_merge` prunes and merges
    their task vectors over the adapted weights. The result, a state dict
    of the base model, loads with ``base_model.load_state_dict`` (dense
    pruning leaves no LoRA structure to return as an adapter).

    Parameters
    ----------
    base_model, adapter_state_dicts, config
        As in :func:`sa_merge_peft_lora`.
    **kwargs
        ``p``, ``n_rounds``, ``scaling``, ``saliency_sign``, ``layers`` of
        :func:`mvlearn_ext.merging.sa_merge`.

    Returns
    -------
    state_dict : dict of str to Tensor
        The base model's state dict with the adapted weights merged.
    """
    s = _scaling(config)
    base_sd = _base_state(base_model)
    adapters = _adapters(base_sd, adapter_state_dicts)
    base_np = _numpy(base_sd)
    experts = []
    for ad in adapters:
        e = {k: v.copy() for k, v in base_np.items()}
        for key, (B, A) in ad.items():
            e[key] = e[key] + s * B @ A
        experts.append(e)
    merged = _np_merging.sa_merge(base_np, experts, **kwargs)
    return {
        k: torch.as_tensor(np.ascontiguousarray(merged[k])).to(dtype=v.dtype, device=v.device)
        for k, v in base_sd.items()
    }
