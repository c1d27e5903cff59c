"""Kernel matrices and factor parametrisations of the torch LVMOGPs."""

from __future__ import annotations

import math

import numpy as np
import torch

_SQRT5 = math.sqrt(5.0)


def _spread_lengthscales(E, dim=None):
    """Initial ARD lengthscales: each coordinate's spread times ``sqrt(D)``.

    The scaled squared distance of two points is then about 2 in any
    dimension ``D``, not ``2 D`` (a kernel near zero between all points for
    ``D >= 10``, where the fit stalls at the mean). ``D`` is the number of
    columns of ``E`` unless ``dim`` gives the dimension of the kernel's
    whole input (a factor of a product kernel).
    """
    ls = E.std(axis=0)
    return np.where(ls > 1e-3, ls, 1.0) * math.sqrt(E.shape[1] if dim is None else dim)


def _tri(raw):
    """Lower-triangular factor with an exponentiated (positive) diagonal."""
    diag = torch.diagonal(raw, dim1=-2, dim2=-1)
    return torch.tril(raw, -1) + torch.diag_embed(torch.exp(diag))


def _kernel(A, B, lengthscales, outputscale, kind):
    """Stationary ARD kernel matrix between the rows of ``A`` and ``B``."""
    A, B = A / lengthscales, B / lengthscales
    d2 = ((A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)).clamp_min(0.0)
    if kind == "rbf":
        return outputscale * torch.exp(-0.5 * d2)
    r = _SQRT5 * torch.sqrt(d2.clamp_min(1e-36))
    return outputscale * (1.0 + r + r * r / 3.0) * torch.exp(-r)
