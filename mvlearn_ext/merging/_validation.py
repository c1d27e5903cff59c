"""Validation of state dicts, done once at the entry of every public merge function.

A *state dict* here is a mapping from parameter names to NumPy arrays (the
layout of ``torch.nn.Module.state_dict()``). The merge functions take a base
state dict and a non-empty sequence of expert state dicts; the drivers below
them assume what :func:`check_state_dicts` returns and check nothing.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from mvlearn_ext.utils._validation import (
    check_rng,  # noqa: F401  (used by the merges)
    real_array,
)

__all__ = ["check_state_dicts", "check_weights", "check_fraction", "check_rng"]


def _as_state(state, name):
    if not isinstance(state, Mapping):
        raise TypeError(
            f"{name} must be a mapping of parameter names to arrays (a state dict), "
            f"got {type(state).__name__}"
        )
    if len(state) == 0:
        raise ValueError(f"{name} is empty: a state dict needs at least one parameter")
    out = {}
    for key, value in state.items():
        if not isinstance(key, str):
            raise TypeError(f"{name} has a non-string key {key!r}; keys must be parameter names")
        try:
            arr = np.asarray(value)
        except Exception as exc:  # pragma: no cover - exotic objects
            raise TypeError(f"{name}[{key!r}] cannot be converted to an array") from exc
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name}[{key!r}] must be numeric, got dtype {arr.dtype}")
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}[{key!r}] contains NaN or inf")
        out[key] = arr
    return out


def check_state_dicts(base, experts, *, name="experts"):
    """Validate a base state dict and its experts; return ``(base, [expert, ...])``.

    Every expert must have exactly the base's keys, and for each key the same
    shape and dtype. Floating arrays must be finite. Non-floating entries
    (counters such as ``num_batches_tracked``) are allowed; the merge
    functions copy them from the base.

    Raises
    ------
    TypeError
        Not a mapping, a non-string key, a non-numeric array, a dtype that
        differs from the base's, or ``experts`` not a sequence of mappings.
    ValueError
        No experts, missing or extra keys, a shape that differs, NaN or inf.
    """
    base = _as_state(base, "base")
    if (
        isinstance(experts, Mapping)
        or not isinstance(experts, Sequence)
        or isinstance(experts, str)
    ):
        raise TypeError(
            f"{name} must be a list or tuple of state dicts (one per expert), "
            f"got {type(experts).__name__}"
        )
    if len(experts) == 0:
        raise ValueError(f"{name} is empty: merging needs at least one expert")
    checked = []
    for n, expert in enumerate(experts):
        where = f"{name}[{n}]"
        expert = _as_state(expert, where)
        missing = [k for k in base if k not in expert]
        extra = [k for k in expert if k not in base]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing keys {missing}")
            if extra:
                parts.append(f"extra keys {extra}")
            raise ValueError(f"{where} does not match the keys of base: " + "; ".join(parts))
        for key, arr in base.items():
            other = expert[key]
            if other.shape != arr.shape:
                raise ValueError(
                    f"{where}[{key!r}] has shape {other.shape}, but base[{key!r}] has "
                    f"shape {arr.shape}"
                )
            if other.dtype != arr.dtype:
                raise TypeError(
                    f"{where}[{key!r}] has dtype {other.dtype}, but base[{key!r}] has "
                    f"dtype {arr.dtype}; cast the experts to the base's dtype first"
                )
        checked.append({k: expert[k] for k in base})
    return base, checked


def check_weights(weights, n_experts, *, name="weights"):
    """Per-expert weights as a float64 vector (default: all ones)."""
    if weights is None:
        return np.ones(n_experts)
    w = real_array(weights, name, allow_empty=True)
    if w.shape != (n_experts,):
        raise ValueError(
            f"{name} must have one entry per expert ({n_experts}), got shape {w.shape}"
        )
    return w


def check_fraction(value, name, *, low_open=False, high_open=False):
    """A real number in [0, 1] (ends optionally open)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    low_ok = value > 0 if low_open else value >= 0
    high_ok = value < 1 if high_open else value <= 1
    if not (low_ok and high_ok) or not np.isfinite(value):
        interval = f"{'(' if low_open else '['}0, 1{')' if high_open else ']'}"
        raise ValueError(f"{name} must lie in {interval}, got {value}")
    return value


def check_scaling(value, name="scaling"):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise TypeError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def check_key_names(names, float_keys, name):
    """A list of parameter names, each one of ``float_keys`` (the base's floating keys)."""
    if isinstance(names, str):
        raise TypeError(f"{name} must be a list of parameter names, not a string")
    names = list(names)
    unknown = [k for k in names if k not in float_keys]
    if unknown:
        raise ValueError(f"{name} names keys that are not floating parameters of base: {unknown}")
    return names


def check_choice(value, name, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value
