"""Conversions between the NumPy core and torch, shared by the deep estimators."""

from __future__ import annotations

import numbers

import numpy as np
import torch

__all__ = ["as_numpy", "as_tensor", "resolve_device", "seeded_generator"]


def resolve_device(device=None) -> torch.device:
    """``None`` or ``"auto"`` picks CUDA when available, else the CPU."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(
            f"device must be None, 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r}"
        ) from exc


def as_tensor(X, *, dtype=None, device=None) -> torch.Tensor:
    """A tensor view of ``X`` (no copy for a CPU float array of the right dtype).

    ``dtype`` defaults to the float dtype of ``X`` (float32 stays float32,
    anything else becomes float64).
    """
    if isinstance(X, torch.Tensor):
        t = X
    else:
        arr = np.asarray(X)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"X must be numeric, got dtype {arr.dtype}")
        if arr.dtype != np.float32:
            arr = arr.astype(np.float64, copy=False)
        t = torch.from_numpy(np.ascontiguousarray(arr))
    return t.to(
        device=resolve_device(device) if device is not None else t.device, dtype=dtype or t.dtype
    )


def as_numpy(t) -> np.ndarray:
    """A NumPy array from a tensor (detached, moved to the CPU)."""
    if isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    return np.asarray(t)


def seeded_generator(random_state, device=None) -> torch.Generator:
    """A ``torch.Generator`` seeded from a scikit-learn style ``random_state``.

    The global torch RNG is never touched. ``None`` draws a fresh seed from
    the operating system; an int or a ``numpy.random.Generator`` /
    ``RandomState`` gives a reproducible seed.
    """
    if random_state is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    elif isinstance(random_state, numbers.Integral):
        seed = int(random_state)
    elif isinstance(random_state, np.random.Generator):
        seed = int(random_state.integers(2**63 - 1))
    elif isinstance(random_state, np.random.RandomState):
        seed = int(random_state.randint(2**31 - 1))
    else:
        raise TypeError(
            "random_state must be None, an int, a numpy Generator or RandomState, "
            f"got {type(random_state).__name__}"
        )
    gen = torch.Generator(device=resolve_device(device) if device is not None else "cpu")
    gen.manual_seed(seed)
    return gen
