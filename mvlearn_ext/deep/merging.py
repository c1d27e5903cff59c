"""Torch bridge of :mod:`mvlearn_ext.merging`: merge state dicts and modules.

Every merge function of :mod:`mvlearn_ext.merging` has a twin here with the
same name and keyword arguments. It accepts, for ``base`` and each expert,
either an ``nn.Module`` or a ``state_dict`` (a mapping of names to tensors),
converts them to NumPy, runs the NumPy implementation and returns the type of
``base``: a deep copy of the base module with the merged weights loaded, or a
new ``state_dict`` whose tensors have the base's dtypes and devices.
:func:`synflow_grad` computes the SynFlow connectivity gradient of an
arbitrary module by autograd, which :func:`sa_merge` uses for modules
(convolutions, attention) where the closed form for linear stacks does not
apply.
"""

from __future__ import annotations

import copy
import re
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np
import torch
from torch import nn

from mvlearn_ext import merging as _np_merging
from mvlearn_ext.merging._baselines import overflow_error

__all__ = [
    "dare",
    "dare_ties",
    "magnitude_merge",
    "peft_lora_pairs",
    "random_mask_merge",
    "sa_merge",
    "sa_merge_lora",
    "synflow_grad",
    "task_arithmetic",
    "task_vectors",
    "ties",
]

# numpy has no bfloat16: such tensors travel as float32 and are cast back
_NUMPY_SAFE = {torch.bfloat16: torch.float32, torch.float16: torch.float32}


def _as_torch_state(obj, name):
    if isinstance(obj, nn.Module):
        return obj.state_dict()
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            if not isinstance(value, torch.Tensor):
                raise TypeError(
                    f"{name}[{key!r}] is a {type(value).__name__}, not a tensor; pass NumPy "
                    "state dicts to mvlearn_ext.merging instead"
                )
        return obj
    raise TypeError(
        f"{name} must be an nn.Module or a state_dict (mapping of names to tensors), "
        f"got {type(obj).__name__}"
    )


def _to_numpy(state):
    out = {}
    for key, t in state.items():
        t = t.detach()
        if t.dtype in _NUMPY_SAFE:
            t = t.to(_NUMPY_SAFE[t.dtype])
        out[key] = t.cpu().numpy()
    return out


def _convert(base, experts):
    """NumPy versions of base and experts, after checking torch dtypes match."""
    if isinstance(experts, (Mapping, nn.Module)) or not isinstance(experts, Sequence):
        raise TypeError(
            "experts must be a list or tuple of nn.Modules or state_dicts, "
            f"got {type(experts).__name__}"
        )
    base_sd = _as_torch_state(base, "base")
    expert_sds = [_as_torch_state(e, f"experts[{n}]") for n, e in enumerate(experts)]
    for n, sd in enumerate(expert_sds):
        for key, t in sd.items():
            if key in base_sd and t.dtype != base_sd[key].dtype:
                raise TypeError(
                    f"experts[{n}][{key!r}] has dtype {t.dtype}, but base[{key!r}] has dtype "
                    f"{base_sd[key].dtype}"
                )
    return base_sd, _to_numpy(base_sd), [_to_numpy(sd) for sd in expert_sds]


def _restore(base, base_sd, merged):
    """The type of ``base``: a module copy with ``merged`` loaded, or a state_dict.

    Half-precision entries are merged in float32 (NumPy has no bfloat16); a merged
    value beyond the range of the base's dtype (float16 beyond 65504) raises a
    ValueError naming the key, as the NumPy functions do, rather than becoming inf.
    """
    out = OrderedDict()
    for key, ref in base_sd.items():
        value = np.ascontiguousarray(merged[key])
        tensor = torch.as_tensor(value).to(dtype=ref.dtype, device=ref.device)
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise overflow_error(
                key, ref.dtype, value, float(torch.finfo(ref.dtype).max), "torch.float32"
            )
        out[key] = tensor
    if isinstance(base, nn.Module):
        module = copy.deepcopy(base)
        module.load_state_dict(out)
        return module
    return out


#: Keyword arguments of each wrapper's example (seeds of the random merges).
_EXAMPLE_KWARGS = {"dare": "random_state=0", "dare_ties": "random_state=0"}
_EXAMPLE_KWARGS["random_mask_merge"] = "density=0.5, random_state=0"


def _wrap(np_func):
    name = np_func.__name__
    kwargs_text = _EXAMPLE_KWARGS.get(name, "")

    def merge(base, experts, **kwargs):
        base_sd, base_np, experts_np = _convert(base, experts)
        return _restore(base, base_sd, np_func(base_np, experts_np, **kwargs))

    merge.__name__ = np_func.__name__
    merge.__qualname__ = np_func.__name__
    merge.__doc__ = (
        f"Torch twin of :func:`mvlearn_ext.merging.{np_func.__name__}`.\n\n"
        "``base`` and each expert are modules (``nn.Module``) or state dicts; the keyword\n"
        "arguments are those of the NumPy function. Returns the type of ``base``\n"
        "(a deep copy of the module with the merged weights loaded, or a new\n"
        "``state_dict`` with the base's dtypes and devices).\n\n"
        "See Also\n--------\n"
        f"mvlearn_ext.merging.{name} : The NumPy function it runs.\n"
        "task_vectors : The task vectors of modules or state dicts.\n\n"
        "Examples\n--------\n"
        ">>> import torch\n"
        f">>> from mvlearn_ext.deep.merging import {name}\n"
        ">>> base = torch.nn.Linear(3, 2)\n"
        ">>> experts = [{k: v + 0.1 for k, v in base.state_dict().items()} for _ in range(2)]\n"
        f">>> merged = {name}(base, experts{', ' + kwargs_text if kwargs_text else ''})\n"
        ">>> type(merged).__name__, merged.weight.shape  # a module, like the base\n"
        "('Linear', torch.Size([2, 3]))\n"
    )
    return merge


task_arithmetic = _wrap(_np_merging.task_arithmetic)
ties = _wrap(_np_merging.ties)
dare = _wrap(_np_merging.dare)
dare_ties = _wrap(_np_merging.dare_ties)
magnitude_merge = _wrap(_np_merging.magnitude_merge)
random_mask_merge = _wrap(_np_merging.random_mask_merge)


def task_vectors(base, experts):
    """Task vectors ``theta_n - theta_0`` as float64 state dicts (floating keys only).

    ``base`` and each expert are modules (``nn.Module``) or state dicts.

    See Also
    --------
    mvlearn_ext.merging.task_vectors : The NumPy function it runs.
    task_arithmetic : Sums them onto the base.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep.merging import task_vectors
    >>> taus = task_vectors({"w": torch.zeros(2)}, [{"w": torch.tensor([1.0, -2.0])}])
    >>> taus[0]["w"].tolist()
    [1.0, -2.0]
    """
    base_sd, base_np, experts_np = _convert(base, experts)
    taus = _np_merging.task_vectors(base_np, experts_np)
    device = {k: v.device for k, v in base_sd.items()}
    return [
        OrderedDict((k, torch.as_tensor(v, device=device[k])) for k, v in tau.items())
        for tau in taus
    ]


# ---------------------------------------------------------------------------
# SynFlow gradient by autograd


def _synflow_module(module):
    """A float64 eval-mode copy whose weights are |W| and whose biases are 0."""
    m = copy.deepcopy(module).to(torch.float64).eval()
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name.endswith("bias"):
                p.zero_()
            else:
                p.abs_()
            p.requires_grad_(True)
    return m


def _default_input_shape(module):
    for p in module.parameters():
        if p.ndim == 2:
            return (1, p.shape[1])
        if p.ndim > 2:
            raise ValueError(
                "the first weight of the module is not 2-D: pass input_shape=, e.g. (1, 3, 32, 32)"
            )
    raise ValueError("the module has no weight with 2 or more dimensions")


def _synflow_backward(m, input_shape, keys):
    for p in m.parameters():
        p.grad = None
    x = torch.ones(input_shape, dtype=torch.float64)
    m(x).sum().backward()
    params = dict(m.named_parameters())
    return {k: params[k].grad.detach().cpu().numpy().copy() for k in keys}


def synflow_grad(module, *, input_shape=None, keys=None):
    """SynFlow gradient ``dR/d|W|`` of a module by one backward pass.

    ``R = sum(module_abs(ones))``, where ``module_abs`` is a float64, eval-mode
    copy of ``module`` with every parameter replaced by its absolute value
    and every parameter whose name ends in ``bias`` set to 0 (design choice,
    so that a linear/ReLU stack gives exactly the closed form of
    :func:`mvlearn_ext.merging.synflow_grad_mlp`). Normalisation layers use
    their absolute weights and their running statistics (to confirm with the
    paper). No data is used. No rescaling: very deep modules can overflow.

    Parameters
    ----------
    module : nn.Module
    input_shape : tuple of int, default=None
        Shape of the all-ones input; default ``(1, in_features)`` of the first
        2-D weight.
    keys : list of str, default=None
        Parameters to return (default: all with 2 or more dimensions).

    Returns
    -------
    grads : dict of str to ndarray
        Non-negative float64 arrays in the shapes of the parameters.

    See Also
    --------
    mvlearn_ext.merging.synflow_grad_mlp : The closed form for linear stacks.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep.merging import synflow_grad
    >>> net = torch.nn.Sequential(torch.nn.Linear(2, 1, bias=False))
    >>> with torch.no_grad():
    ...     _ = net[0].weight.copy_(torch.tensor([[1.0, -2.0]]))
    >>> {k: g.tolist() for k, g in synflow_grad(net).items()}  # dR/d|W| with R = |w1| + |w2|
    {'0.weight': [[1.0, 1.0]]}
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be an nn.Module, got {type(module).__name__}")
    input_shape = tuple(input_shape) if input_shape is not None else _default_input_shape(module)
    if keys is None:
        keys = [k for k, p in module.named_parameters() if p.ndim >= 2]
    m = _synflow_module(module)
    return _synflow_backward(m, input_shape, keys)


def _autograd_grad_fn(module, input_shape, layers):
    m = _synflow_module(module)
    params = dict(m.named_parameters())
    missing = [k for k in layers if k not in params]
    if missing:
        raise ValueError(
            f"layers {missing} are not parameters of the module (buffers cannot be pruned)"
        )

    def grad_fn(state):
        with torch.no_grad():
            for name, p in params.items():
                if name not in state:
                    continue
                value = torch.as_tensor(state[name], dtype=torch.float64)
                p.copy_(torch.zeros_like(value) if name.endswith("bias") else value.abs())
        return _synflow_backward(m, input_shape, layers)

    return grad_fn


def sa_merge(base, experts, *, saliency="auto", input_shape=None, layers=None, **kwargs):
    """Torch twin of :func:`mvlearn_ext.merging.sa_merge`.

    Parameters
    ----------
    base, experts : nn.Module or state_dict
    saliency : {"auto", "closed_form", "autograd"}, default="auto"
        How ``G`` is computed: the closed form for a chain of 2-D weights, or
        autograd on ``base``'s architecture (needs ``base`` to be an
        ``nn.Module``). ``"auto"`` uses autograd for a module, the closed form
        for a state dict.
    input_shape : tuple of int, default=None
        Shape of the all-ones input for autograd (see :func:`synflow_grad`).
    layers : list of str, default=None
        Keys to prune; default as in the NumPy function (with autograd: every
        parameter with 2 or more dimensions, no chain needed).
    **kwargs
        ``p``, ``n_rounds``, ``scaling``, ``saliency_sign``, ``return_masks``.

    Returns
    -------
    merged : type of ``base``
    masks : list of dict of ndarray, only when ``return_masks=True``

    See Also
    --------
    mvlearn_ext.merging.sa_merge : The NumPy function it runs.
    synflow_grad : The autograd saliency it uses for general modules.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep.merging import sa_merge
    >>> torch.manual_seed(0) and None
    >>> base = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    >>> experts = [{k: v + 0.1 * torch.randn_like(v) for k, v in base.state_dict().items()}
    ...            for _ in range(2)]
    >>> merged = sa_merge(base, experts, p=0.5, n_rounds=2)
    >>> type(merged).__name__
    'Sequential'
    """
    if saliency not in {"auto", "closed_form", "autograd"}:
        raise ValueError(f"saliency must be 'auto', 'closed_form' or 'autograd', got {saliency!r}")
    use_autograd = saliency == "autograd" or (saliency == "auto" and isinstance(base, nn.Module))
    if use_autograd and not isinstance(base, nn.Module):
        raise TypeError("saliency='autograd' needs base to be an nn.Module")
    base_sd, base_np, experts_np = _convert(base, experts)
    grad_fn = None
    if use_autograd:
        if layers is None:
            layers = [k for k, p in base.named_parameters() if p.ndim >= 2]
        shape = tuple(input_shape) if input_shape is not None else _default_input_shape(base)
        grad_fn = _autograd_grad_fn(base, shape, list(layers))
    result = _np_merging.sa_merge(base_np, experts_np, layers=layers, grad_fn=grad_fn, **kwargs)
    if kwargs.get("return_masks", False):
        merged, masks = result
        return _restore(base, base_sd, merged), masks
    return _restore(base, base_sd, result)


_PEFT_A = re.compile(r"^(?P<prefix>.*)\.lora_A(?:\.(?P<adapter>[^.]+))?\.weight$")


def peft_lora_pairs(state_dict, *, adapter_name=None):
    """``{base_weight_key: (B, A)}`` from a peft LoRA ``state_dict`` (NumPy arrays).

    Recognises ``<path>.lora_A[.<adapter>].weight`` / ``<path>.lora_B[...].weight``
    pairs (the layouts of ``get_peft_model_state_dict`` and of a wrapped
    model's ``state_dict``) and maps them to ``<path>.weight``, the key of the
    adapted weight in the base model's ``state_dict``; B has shape
    (n_out, r) and A shape (r, n_in). ``adapter_name`` selects one
    adapter when several are present.

    See Also
    --------
    sa_merge_lora : Merges the pairs.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep.merging import peft_lora_pairs
    >>> sd = {"base_model.model.fc.lora_A.weight": torch.ones(2, 3),
    ...       "base_model.model.fc.lora_B.weight": torch.ones(4, 2)}
    >>> {k: (B.shape, A.shape) for k, (B, A) in peft_lora_pairs(sd).items()}
    {...}
    """
    sd = _as_torch_state(state_dict, "state_dict")
    pairs = {}
    for key in sd:
        match = _PEFT_A.match(key)
        if not match:
            continue
        adapter = match.group("adapter")
        if adapter_name is not None and adapter != adapter_name:
            continue
        b_key = key.replace(".lora_A", ".lora_B", 1)
        if b_key not in sd:
            raise ValueError(f"{key!r} has no matching {b_key!r}")
        target = match.group("prefix") + ".weight"
        if target in pairs:
            raise ValueError(f"several adapters target {target!r}: pass adapter_name=")
        A = sd[key].detach().to(torch.float64).cpu().numpy()
        B = sd[b_key].detach().to(torch.float64).cpu().numpy()
        pairs[target] = (B, A)
    if not pairs:
        raise ValueError("state_dict contains no '<path>.lora_A[.<adapter>].weight' keys")
    return pairs


def _pair_to_numpy(t):
    if isinstance(t, torch.Tensor):
        return t.detach().to(torch.float64).cpu().numpy()
    return np.asarray(t, dtype=np.float64)


def sa_merge_lora(base, adapters, **kwargs):
    """Torch twin of :func:`mvlearn_ext.merging.sa_merge_lora`.

    ``base`` is an ``nn.Module`` or ``state_dict`` of dense weights;
    ``adapters`` a list, one per expert, of mappings ``{key: (B, A)}`` with
    tensors or arrays (see :func:`peft_lora_pairs` for peft layouts).
    Returns the type of ``base`` (and the rank masks when
    ``return_masks=True``).

    See Also
    --------
    mvlearn_ext.merging.sa_merge_lora : The NumPy function it runs.
    peft_lora_pairs : The pairs of a peft state dict.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep.merging import sa_merge_lora
    >>> _ = torch.manual_seed(0)
    >>> base = {"w1": torch.randn(6, 4), "w2": torch.randn(3, 6)}
    >>> def adapter():
    ...     return {k: (torch.randn(v.shape[0], 2), torch.randn(2, v.shape[1]))
    ...             for k, v in base.items()}
    >>> merged = sa_merge_lora(base, [adapter(), adapter()], p=0.5, n_rounds=1)
    >>> merged["w1"].shape
    torch.Size([6, 4])
    """
    if not isinstance(adapters, (list, tuple)):
        raise TypeError("adapters must be a list of mappings {key: (B, A)}, one per expert")
    base_sd, base_np, _ = _convert(base, [base])
    np_adapters = []
    for n, ad in enumerate(adapters):
        if not isinstance(ad, Mapping):
            raise TypeError(f"adapters[{n}] must be a mapping {{key: (B, A)}}")
        np_adapters.append({k: tuple(_pair_to_numpy(t) for t in pair) for k, pair in ad.items()})
    result = _np_merging.sa_merge_lora(base_np, np_adapters, **kwargs)
    if kwargs.get("return_masks", False):
        merged, masks = result
        return _restore(base, base_sd, merged), masks
    return _restore(base, base_sd, result)
