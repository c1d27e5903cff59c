"""What every torch estimator shares: devices, seeds, tensors, threads and sizes.

Imported only by modules that need torch (the torch bridge and the torch
halves of the families), never by the core: importing this module imports
torch.

* :func:`resolve_device` turns a ``device`` parameter into a
  :class:`torch.device`, refusing by name a device this machine does not
  have;
* :func:`torch_threads` (and the method decorator :func:`with_torch_threads`)
  bounds torch's intra-op threads by the estimator's resolved ``n_jobs``
  for the duration of a call and restores torch's setting afterwards;
  torch's inter-op pool is capped at the available CPUs once per process;
* :func:`mlp_elements` counts the weights of a multi-layer perceptron, for
  :func:`mvlearn_ext.utils._validation.check_allocation`, which refuses a
  size hyperparameter whose tensors could not fit in memory;
* :data:`LEARNING_RATE_CONSTRAINT` and :data:`WEIGHT_DECAY_CONSTRAINT`
  (shared with the networks of scikit-learn's MLP, defined in
  :mod:`mvlearn_ext.utils._validation`) bound every step size and weight
  decay, and
  :func:`check_finite_loss` stops a training that diverged, naming the
  parameters that can cause it;
* :func:`seeded_generator`, :func:`as_tensor` and :func:`as_numpy` convert
  seeds and arrays.
"""

from __future__ import annotations

import contextlib
import functools
import math
import numbers
import os

import numpy as np
import torch

from mvlearn_ext._lib import effective_n_jobs
from mvlearn_ext.utils._validation import LEARNING_RATE_CONSTRAINT, WEIGHT_DECAY_CONSTRAINT

__all__ = [
    "LEARNING_RATE_CONSTRAINT",
    "WEIGHT_DECAY_CONSTRAINT",
    "as_numpy",
    "as_tensor",
    "check_finite_loss",
    "mlp_elements",
    "resolve_device",
    "seeded_generator",
    "torch_threads",
    "with_torch_threads",
]


def resolve_device(device=None, *, name="device") -> torch.device:
    """The :class:`torch.device` of a ``device`` parameter.

    ``None`` or ``"auto"`` picks CUDA when available, else the CPU.
    ``"cpu"``, ``"cuda"``, ``"cuda:N"`` and ``"mps"`` are accepted when this
    machine has that device; anything else is refused with a ``ValueError``
    naming ``name``.

    Parameters
    ----------
    device : str, torch.device or None, default=None
        The requested device.
    name : str, default="device"
        The parameter name that error messages give.

    Returns
    -------
    device : torch.device
        The resolved device.

    See Also
    --------
    as_tensor : Moves data to the device.

    Examples
    --------
    >>> from mvlearn_ext.deep import resolve_device
    >>> resolve_device("cpu")
    device(type='cpu')
    """
    if device is None or (isinstance(device, str) and device == "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not isinstance(device, (str, torch.device)):
        raise TypeError(
            f"{name} must be None, 'auto' or a device string, got {type(device).__name__}"
        )
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} must be None, 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps', got {device!r}"
        ) from exc
    if dev.type == "cpu":
        return dev
    if dev.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(f"{name}={device!r}: no CUDA device is available on this machine")
        if dev.index is not None and dev.index >= count:
            raise ValueError(
                f"{name}={device!r}: this machine has {count} CUDA device(s), "
                f"cuda:0 to cuda:{count - 1}"
            )
        return dev
    if dev.type == "mps":
        if not torch.backends.mps.is_available():
            raise ValueError(f"{name}={device!r}: no MPS device is available on this machine")
        return dev
    raise ValueError(
        f"{name} must be None, 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps', got {device!r}"
    )


def _available_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_interop_capped = False


def _cap_interop_threads():
    """Cap torch's inter-op pool at the available CPUs (once per process).

    torch sizes that pool by the machine's cores, not by the CPUs this
    process may use; it can only be resized before its first use, so a
    process that already used it keeps its size.
    """
    global _interop_capped
    if _interop_capped:
        return
    _interop_capped = True
    cpus = _available_cpus()
    if torch.get_num_interop_threads() > cpus:
        with contextlib.suppress(RuntimeError):
            torch.set_num_interop_threads(cpus)


@contextlib.contextmanager
def torch_threads(n_jobs, *, name="n_jobs"):
    """Run a block with torch's intra-op threads set to the resolved ``n_jobs``.

    ``n_jobs`` follows the package's rule
    (:func:`mvlearn_ext.utils.effective_n_jobs`: ``None`` is 1, ``-1`` every
    available CPU, a positive count capped at the available CPUs); torch's
    previous setting is restored when the block ends. Yields the count.
    """
    n = effective_n_jobs(n_jobs, name=name)
    _cap_interop_threads()
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield n
    finally:
        torch.set_num_threads(previous)


def with_torch_threads(method):
    """Decorate an estimator method to run inside :func:`torch_threads` of ``self.n_jobs``."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with torch_threads(self.n_jobs):
            return method(self, *args, **kwargs)

    return wrapper


def mlp_elements(widths):
    """Weights and biases of a multi-layer perceptron with layer widths ``widths``.

    Python integers, so a huge width cannot overflow the count.
    """
    widths = [int(w) for w in widths]
    return sum(a * b + b for a, b in zip(widths[:-1], widths[1:], strict=True))


def check_finite_loss(loss, estimator, causes=("learning_rate",), *, where=""):
    """Raise a ``ValueError`` naming ``causes`` if the training ``loss`` is not finite.

    Called once per step or epoch by the training loops, so that a training
    that diverged stops with an error instead of fitting NaN weights.
    """
    value = float(loss.detach()) if isinstance(loss, torch.Tensor) else float(loss)
    if math.isfinite(value):
        return
    settings = ", ".join(f"{name}={getattr(estimator, name)!r}" for name in causes)
    raise ValueError(
        f"{type(estimator).__name__}: the training loss became {value}{where}; the training "
        f"diverged. Lower {' or '.join(causes)} (now {settings})."
    )


def as_tensor(X, *, dtype=None, device=None) -> torch.Tensor:
    """A tensor view of ``X`` (no copy for a CPU float array of the right dtype).

    ``dtype`` defaults to the float dtype of ``X`` (float32 stays float32,
    anything else becomes float64).

    Parameters
    ----------
    X : array-like or tensor
        Numeric data.
    dtype : torch.dtype, default=None
        The tensor's dtype; None keeps the float dtype of ``X`` as above.
    device : str, torch.device or None, default=None
        The tensor's device (:func:`resolve_device`); None keeps the
        device of a tensor and the CPU for an array.

    Returns
    -------
    tensor : torch.Tensor
        ``X`` as a tensor, sharing memory with ``X`` where it can.

    See Also
    --------
    as_numpy : The reverse conversion.
    resolve_device : The device rule.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.deep import as_tensor
    >>> as_tensor(np.arange(3)).dtype  # integers become float64
    torch.float64
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
    """A NumPy array from a tensor (detached, moved to the CPU).

    Parameters
    ----------
    t : tensor or array-like
        The tensor; anything else goes through :func:`numpy.asarray`.

    Returns
    -------
    array : ndarray
        The values of ``t``.

    See Also
    --------
    as_tensor : The reverse conversion.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep import as_numpy
    >>> as_numpy(torch.ones(2, requires_grad=True)).tolist()
    [1.0, 1.0]
    """
    if isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    return np.asarray(t)


def seeded_generator(random_state, device=None) -> torch.Generator:
    """A ``torch.Generator`` seeded from a scikit-learn style ``random_state``.

    The global torch RNG is never touched. ``None`` draws a fresh seed from
    the operating system; an int or a ``numpy.random.Generator`` /
    ``RandomState`` gives a reproducible seed.

    Parameters
    ----------
    random_state : int, numpy.random.Generator, numpy.random.RandomState or None
        The seed source.
    device : str, torch.device or None, default=None
        The device of the generator; None for the CPU.

    Returns
    -------
    generator : torch.Generator
        A generator seeded from ``random_state``.

    See Also
    --------
    resolve_device : The device rule.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep import seeded_generator
    >>> a = torch.rand(2, generator=seeded_generator(0))
    >>> bool(torch.equal(a, torch.rand(2, generator=seeded_generator(0))))
    True
    """
    if random_state is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    elif isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
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
