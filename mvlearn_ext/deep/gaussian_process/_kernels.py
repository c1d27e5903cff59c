"""Kernel matrices and factor parametrisations of the torch LVMOGPs."""

from __future__ import annotations

import math

import numpy as np
import torch

_SQRT5 = math.sqrt(5.0)


def _spread_lengthscales(*blocks):
    """Initial ARD lengthscales of a kernel on the columns of ``blocks``.

    ``blocks`` are the point sets of the kernel's input, one array of shape
    (n_points, n_columns) per factor of a product kernel (the inputs and the
    output latents of GS-LVMOGP) or a single one (the embedded pairs of
    T-LVMOGP); one array of lengthscales is returned per block. A
    coordinate's lengthscale is its spread, at least 1 (the scale of the
    standardised inputs and of the latents' ``N(0, I)`` prior), times
    ``sqrt(D)``, where ``D`` sums ``min(spread, 1)^2`` over all coordinates
    (at least 1): the coordinates that vary on that scale. The scaled
    squared distance of two points is then about 2 in any dimension, not
    ``2 D`` (a kernel near zero between all points, where the fit stalls at
    the mean), and a coordinate that barely varies (a constant input; a
    latent dimension beyond the rank of the targets, whose initial means are
    only the tie-breaking noise of ``initial_latents``) is resolved no
    finer than the unit scale and does not count in ``D``.
    """
    spreads = [b.std(axis=0) for b in blocks]
    # The floor: without it a latent column of tie-breaking noise (spread
    # 1e-2) gets a lengthscale below the 0.1 standard deviation that q(h_p)
    # starts with, two draws of one output's latents lie many lengthscales
    # apart, the kernel between them is near zero and the fit stays at the mean.
    dim = max(sum(float(np.sum(np.minimum(s, 1.0) ** 2)) for s in spreads), 1.0)
    return [np.maximum(s, 1.0) * math.sqrt(dim) for s in spreads]


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
