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

The SynFlow saliency ``G = dR/d|W|`` comes from one of two routes
(``saliency=``): the closed form of a chain of linear layers (the base
model's 2-D weights chain ``(n_out, n_in)`` shapes: an MLP), or autograd
through any model (:func:`synflow_grad_model`), which is what a
``transformers`` LLM needs. On a chain the two agree to float round-off
(a test).

Reconstruction, from the abstract and a third-party summary of the paper
(SA-Merging, Park, Lee, Sohn, ICML 2026, arXiv 2606.00511; no public code):
the paper does not say how the connectivity score passes through attention
and normalisation. The autograd route makes three design choices, chosen so
that ``R`` stays an increasing function of every ``|W|`` (``G >= 0``, as in
SynFlow's linear case, which the consensus sign reading of the saliency
relies on) and finite in deep models:

* the input is one all-ones token embedding (``inputs_embeds``, sequence
  length 1, so rotary position embeddings are the identity) and ``R`` the
  sum of the logits;
* every normalisation layer (``*RMSNorm``, ``*LayerNorm``) multiplies its
  input by ``|weight|`` and divides it by its root mean square treated as a
  constant (no centring, no bias): the scale stays bounded as in the model,
  and the statistic is frozen as SynFlow freezes eval-mode batch norm;
* attention drops the softmax and keeps its scaled score: with one token
  the softmax is the constant 1, which would give the query and key
  projections zero saliency.

Weights are made absolute and biases set to 0, in float64, as in
:func:`mvlearn_ext.deep.merging.synflow_grad`; the MLP activations are
kept (SiLU and GELU are positive and increasing on the positive inputs
they see). Memory: a float64 copy of the base model, and one backward pass
per expert and round.
"""

from __future__ import annotations

import copy
import re

import numpy as np
import torch

from mvlearn_ext import merging as _np_merging
from mvlearn_ext.deep._llm import require_llm
from mvlearn_ext.deep.merging import _synflow_module

peft = require_llm("peft", feature="mvlearn_ext.deep.merging_peft")

__all__ = [
    "lora_pairs_from_peft",
    "sa_merge_peft_dense",
    "sa_merge_peft_lora",
    "synflow_grad_model",
]

_SYNFLOW_ATTENTION = "mvlearn_ext_synflow"
_SALIENCY = ("auto", "closed_form", "autograd")

_KEY = re.compile(r"^(?:base_model\.model\.)?(?P<path>.*)\.lora_(?P<ab>[AB])(?:\.[^.]+)?\.weight$")


def _check_plain_model(model, name):
    """Refuse a ``PeftModel`` or a non-module as the base model ``name``."""
    if isinstance(model, peft.PeftModel):
        raise TypeError(
            f"{name} must be the plain base model (not a PeftModel): its weights are the "
            "ones the adapters were trained on"
        )
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"{name} must be an nn.Module, got {type(model).__name__}")


def _base_state(base_model):
    _check_plain_model(base_model, "base_model")
    return base_model.state_dict()


def lora_pairs_from_peft(adapter_state_dict, base_state_dict):
    """``{base_weight_key: (B, A)}`` (float64 arrays) from a PEFT adapter state dict.

    Keys ``base_model.model.<path>.lora_A[.<adapter>].weight`` (the layout
    of ``get_peft_model_state_dict``) map to ``<path>.weight`` of the base
    model's state dict.

    See Also
    --------
    mvlearn_ext.deep.merging.peft_lora_pairs : The pairs of one state dict.

    Examples
    --------
    >>> import copy
    >>> import torch
    >>> from peft import LoraConfig, get_peft_model, get_peft_model_state_dict
    >>> _ = torch.manual_seed(0)
    >>> base = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
    >>> config = LoraConfig(r=2, lora_alpha=4, target_modules=["0", "2"], lora_dropout=0.0)
    >>> def adapter():
    ...     model = get_peft_model(copy.deepcopy(base), copy.deepcopy(config))
    ...     with torch.no_grad():
    ...         for name, p in model.named_parameters():
    ...             if "lora_" in name:
    ...                 p.copy_(0.3 * torch.randn(p.shape))
    ...     return get_peft_model_state_dict(model)
    >>> adapters = [adapter(), adapter()]
    >>> from mvlearn_ext.deep.merging_peft import lora_pairs_from_peft
    >>> pairs = lora_pairs_from_peft(adapters[0], base.state_dict())
    >>> {key: (B.shape, A.shape) for key, (B, A) in pairs.items()}
    {'0.weight': ((8, 2), (2, 6)), '2.weight': ((4, 2), (2, 8))}
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


# ---------------------------------------------------------------------------
# SynFlow gradient of a transformers model (or any module) by autograd


class _FrozenRMSScale(torch.nn.Module):
    """``x * |weight| / rms(x)`` with ``rms(x)`` a constant (no gradient through it)."""

    def __init__(self, weight):
        super().__init__()
        self.weight = weight  # the norm's own Parameter: same state-dict key

    def forward(self, x, *args, **kwargs):
        rms = x.pow(2).mean(-1, keepdim=True).sqrt().detach()
        out = x / torch.where(rms > 0, rms, torch.ones_like(rms))
        return out if self.weight is None else out * self.weight.abs()


def _synflow_attention(module, query, key, value, attention_mask, scaling=None, **kwargs):
    """Attention with the softmax dropped: ``(causal(q k^T) * scaling) v``."""
    groups = query.shape[1] // key.shape[1]
    key = key.repeat_interleave(groups, dim=1)
    value = value.repeat_interleave(groups, dim=1)
    if scaling is None:
        scaling = query.shape[-1] ** -0.5
    scores = (query @ key.transpose(2, 3)) * scaling
    L, S = scores.shape[-2:]
    causal = torch.ones(L, S, dtype=scores.dtype, device=scores.device).tril(diagonal=S - L)
    return ((scores * causal) @ value).transpose(1, 2).contiguous(), None


def _is_transformers_model(model):
    config = getattr(model, "config", None)
    return config is not None and hasattr(config, "_attn_implementation")


def _replace_norms(m):
    targets = []
    for name, sub in m.named_modules():
        cls = type(sub).__name__
        if isinstance(sub, torch.nn.LayerNorm) or cls.endswith(("RMSNorm", "LayerNorm")):
            if cls.startswith("Gemma"):
                raise ValueError(
                    f"model: {name!r} is a {cls}, which scales by (1 + weight); the SynFlow "
                    "saliency of this bridge supports only norms that scale by their weight "
                    "(LayerNorm, RMSNorm), so Gemma models are refused"
                )
            targets.append(name)
    for name in targets:
        parent_name, _, child = name.rpartition(".")
        parent = m.get_submodule(parent_name) if parent_name else m
        weight = getattr(parent.get_submodule(child), "weight", None)
        setattr(parent, child, _FrozenRMSScale(weight))


def _synflow_copy(model):
    """The float64 absolute-weight copy of ``model`` and its all-ones forward ``R``."""
    _check_plain_model(model, "model")
    m = _synflow_module(model)  # float64, eval, |W|, biases 0
    if _is_transformers_model(m):
        transformers = require_llm("transformers", feature="synflow_grad_model")
        transformers.AttentionInterface.register(_SYNFLOW_ATTENTION, _synflow_attention)
        _replace_norms(m)
        m.config._attn_implementation = _SYNFLOW_ATTENTION
        hidden = m.get_input_embeddings().weight.shape[1]

        def score():
            x = torch.ones((1, 1, hidden), dtype=torch.float64)
            return m(inputs_embeds=x, use_cache=False).logits.sum()

    else:
        first = next((p for p in m.parameters() if p.ndim >= 2), None)
        if first is None or first.ndim != 2:
            raise ValueError(
                "model is not a transformers model and its first weight is not 2-D: the "
                "all-ones input (1, n_in) cannot be built"
            )

        def score():
            return m(torch.ones((1, first.shape[1]), dtype=torch.float64)).sum()

    return m, score


def _synflow_grad_fn(model, keys):
    m, score = _synflow_copy(model)
    params = dict(m.named_parameters())
    missing = [k for k in keys if k not in params]
    if missing:
        raise ValueError(f"{missing} are not parameters of the model (buffers cannot be adapted)")
    for name, p in params.items():
        p.requires_grad_(name in keys)

    def grad_fn(state):
        with torch.no_grad():
            for name, p in params.items():
                if name in state:
                    value = torch.as_tensor(state[name], dtype=torch.float64)
                    p.copy_(torch.zeros_like(value) if name.endswith("bias") else value.abs())
        for k in keys:
            params[k].grad = None
        score().backward()
        return {k: params[k].grad.detach().cpu().numpy().copy() for k in keys}

    return grad_fn


def synflow_grad_model(model, *, keys=None, state_dict=None):
    """SynFlow gradient ``G = dR/d|W|`` of a ``transformers`` model (or any module) by autograd.

    ``R`` is the connectivity score of the module docstring: a float64 copy
    of ``model`` with absolute weights and zero biases, fed one all-ones
    token embedding (a ``transformers`` model: normalisation by a frozen
    root mean square, attention without softmax) or an all-ones row of
    ``n_in`` features (any other module, whose first weight is 2-D), and
    ``R`` the sum of its output. For a chain of linear layers and ReLUs this
    is the closed form of :func:`mvlearn_ext.merging.synflow_grad_mlp`.
    Reconstruction: the treatment of attention and normalisation is a design
    choice (see the module docstring).

    Parameters
    ----------
    model : nn.Module
        The plain base model (a ``transformers`` causal LM, or a module
        taking a ``(batch, n_in)`` input); it is not modified.
    keys : list of str, default=None
        Parameters to return, default every parameter with 2 or more dimensions.
    state_dict : dict, optional
        Weights to use instead of the model's (e.g. base plus an adapter's
        update), any subset of its keys.

    Returns
    -------
    grads : dict of str to ndarray
        Non-negative float64 arrays in the shapes of the parameters.

    Raises
    ------
    ValueError
        If ``model`` holds a Gemma norm (it scales by ``1 + weight``, which this
        saliency does not model).

    See Also
    --------
    mvlearn_ext.deep.merging.synflow_grad : The same gradient of any module.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep.merging_peft import synflow_grad_model
    >>> net = torch.nn.Sequential(torch.nn.Linear(2, 1, bias=False))
    >>> with torch.no_grad():
    ...     _ = net[0].weight.copy_(torch.tensor([[1.0, -2.0]]))
    >>> {key: g.tolist() for key, g in synflow_grad_model(net).items()}  # R = |w1| + |w2|
    {'0.weight': [[1.0, 1.0]]}
    """
    if keys is None:
        keys = [k for k, p in model.named_parameters() if p.ndim >= 2]
    elif isinstance(keys, str):
        raise TypeError("keys must be a list of parameter names, not a string")
    grad_fn = _synflow_grad_fn(model, list(keys))
    state = {}
    if state_dict is not None:
        state = {k: torch.as_tensor(v).detach().double().cpu() for k, v in state_dict.items()}
    return grad_fn(state)


def _grad_fn_for(saliency, base_model, keys, chain_ok):
    """None (closed form) or an autograd ``grad_fn`` for ``keys``."""
    if saliency not in _SALIENCY:
        raise ValueError(f"saliency must be one of {_SALIENCY}, got {saliency!r}")
    if saliency == "closed_form" or (saliency == "auto" and chain_ok):
        return None
    return _synflow_grad_fn(base_model, keys)


def _chains(base_sd, layers):
    """Whether ``layers`` (default every 2-D floating weight) chain (n_out, n_in) shapes."""
    if layers is None:
        layers = [k for k, v in base_sd.items() if v.is_floating_point() and v.ndim >= 2]
    shapes = [tuple(base_sd[k].shape) for k in layers if k in base_sd]
    if len(shapes) != len(layers) or any(len(s) != 2 for s in shapes):
        return False
    return all(b[1] == a[0] for a, b in zip(shapes[:-1], shapes[1:], strict=True))


def _adapters(base_sd, adapter_state_dicts):
    if isinstance(adapter_state_dicts, dict) or len(adapter_state_dicts) < 1:
        raise TypeError("adapter_state_dicts must be a list of PEFT adapter state dicts")
    return [lora_pairs_from_peft(sd, base_sd) for sd in adapter_state_dicts]


def sa_merge_peft_lora(base_model, adapter_state_dicts, config, *, saliency="auto", **kwargs):
    """Rank-wise SA-Merging of PEFT LoRA adapters into one loadable adapter.

    Parameters
    ----------
    base_model : nn.Module
        The plain base model the adapters were trained on.
    adapter_state_dicts : list of dict
        ``peft.get_peft_model_state_dict(peft_model_n)``, one per expert.
    config : peft.LoraConfig
        The experts' config (one rank and alpha for every module).
    saliency : {"auto", "closed_form", "autograd"}, default="auto"
        How ``G`` is computed: the closed form of a chain of linear layers,
        or :func:`synflow_grad_model` (any model, e.g. a ``transformers``
        LLM). ``"auto"``: the closed form when the base's 2-D weights (or
        ``layers``) chain, autograd otherwise.
    **kwargs
        ``p``, ``n_rounds``, ``scaling``, ``layers`` of
        :func:`mvlearn_ext.merging.sa_merge_lora` (``layers``: for the closed
        form, the chain of weight matrices, default every 2-D weight of the
        base in order; for autograd, default the adapted weights).

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

    See Also
    --------
    sa_merge_peft_dense : The dense merge.
    mvlearn_ext.merging.sa_merge_lora : The NumPy merge.

    Examples
    --------
    >>> import copy
    >>> import torch
    >>> from peft import LoraConfig, get_peft_model, get_peft_model_state_dict
    >>> _ = torch.manual_seed(0)
    >>> base = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
    >>> config = LoraConfig(r=2, lora_alpha=4, target_modules=["0", "2"], lora_dropout=0.0)
    >>> def adapter():
    ...     model = get_peft_model(copy.deepcopy(base), copy.deepcopy(config))
    ...     with torch.no_grad():
    ...         for name, p in model.named_parameters():
    ...             if "lora_" in name:
    ...                 p.copy_(0.3 * torch.randn(p.shape))
    ...     return get_peft_model_state_dict(model)
    >>> adapters = [adapter(), adapter()]
    >>> from mvlearn_ext.deep.merging_peft import sa_merge_peft_lora
    >>> adapter_sd, merged_config, masks = sa_merge_peft_lora(base, adapters, config, p=0.5,
    ...                                                       n_rounds=1)
    >>> merged_config.r <= 2 * config.r
    True
    """
    s = _scaling(config)
    base_sd = _base_state(base_model)
    adapters = _adapters(base_sd, adapter_state_dicts)
    scaling = kwargs.pop("scaling", 1.0)
    keys = list(adapters[0])
    grad_fn = _grad_fn_for(saliency, base_model, keys, _chains(base_sd, kwargs.get("layers")))
    if grad_fn is not None and kwargs.get("layers") is None:
        kwargs["layers"] = keys
    _, masks = _np_merging.sa_merge_lora(
        _numpy(base_sd),
        adapters,
        lora_scaling=s,
        scaling=scaling,
        grad_fn=grad_fn,
        return_masks=True,
        **kwargs,
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


def sa_merge_peft_dense(base_model, adapter_state_dicts, config, *, saliency="auto", **kwargs):
    """Dense SA-Merging of PEFT LoRA adapters: merged weights for the base model.

    Each expert is the base model with its adapter merged in
    (``W + s B A``); :func:`mvlearn_ext.merging.sa_merge` prunes and merges
    their task vectors over the adapted weights. The result, a state dict
    of the base model, loads with ``base_model.load_state_dict`` (dense
    pruning leaves no LoRA structure to return as an adapter).

    Parameters
    ----------
    base_model, adapter_state_dicts, config, saliency
        As in :func:`sa_merge_peft_lora`.
    **kwargs
        ``p``, ``n_rounds``, ``scaling``, ``saliency_sign``, ``layers`` of
        :func:`mvlearn_ext.merging.sa_merge` (with autograd, ``layers``
        defaults to the adapted weights).

    Returns
    -------
    state_dict : dict of str to Tensor
        The base model's state dict with the adapted weights merged.

    See Also
    --------
    sa_merge_peft_lora : The rank-wise merge.
    mvlearn_ext.merging.sa_merge : The NumPy merge.

    Examples
    --------
    >>> import copy
    >>> import torch
    >>> from peft import LoraConfig, get_peft_model, get_peft_model_state_dict
    >>> _ = torch.manual_seed(0)
    >>> base = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
    >>> config = LoraConfig(r=2, lora_alpha=4, target_modules=["0", "2"], lora_dropout=0.0)
    >>> def adapter():
    ...     model = get_peft_model(copy.deepcopy(base), copy.deepcopy(config))
    ...     with torch.no_grad():
    ...         for name, p in model.named_parameters():
    ...             if "lora_" in name:
    ...                 p.copy_(0.3 * torch.randn(p.shape))
    ...     return get_peft_model_state_dict(model)
    >>> adapters = [adapter(), adapter()]
    >>> from mvlearn_ext.deep.merging_peft import sa_merge_peft_dense
    >>> merged = sa_merge_peft_dense(base, adapters, config, p=0.5, n_rounds=1)
    >>> merged["0.weight"].shape
    torch.Size([8, 6])
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
    layers = kwargs.get("layers")
    chain_ok = _chains(base_sd, layers)
    layers = list(adapters[0]) if layers is None else list(layers)
    grad_fn = _grad_fn_for(saliency, base_model, layers, chain_ok)
    if grad_fn is not None:
        kwargs["layers"] = layers
    merged = _np_merging.sa_merge(base_np, experts, grad_fn=grad_fn, **kwargs)
    return {
        k: torch.as_tensor(np.ascontiguousarray(merged[k])).to(dtype=v.dtype, device=v.device)
        for k, v in base_sd.items()
    }
