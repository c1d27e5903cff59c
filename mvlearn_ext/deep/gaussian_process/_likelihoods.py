"""Count likelihood and Gauss-Hermite expectations of the torch LVMOGPs.

The framework-free zero-inflated negative binomial and its Gauss-Hermite
expectation have a NumPy reference in
:mod:`mvlearn_ext.gaussian_process._likelihoods`.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch.nn import functional as F


def zinb_log_prob(y, f, alpha, *, scale=1.0, zero_inflation=0.1):
    """Zero-inflated negative binomial log-probability (torch, differentiable).

    The torch twin of
    :func:`mvlearn_ext.gaussian_process._likelihoods.zinb_logpmf`: mean
    ``m = scale * softplus(f)``, dispersion ``r = 1 / alpha``, zero inflation
    ``psi = k / (k + m)`` with ``k = zero_inflation``; ``zero_inflation = 0``
    is the plain negative binomial.
    Tensors broadcast; ``y`` holds non-negative integer counts.

    Parameters
    ----------
    y : tensor
        The counts.
    f : tensor
        The latent function values.
    alpha : float or tensor
        The dispersion, positive (the variance is ``m + alpha m^2``).
    scale : float or tensor, default=1.0
        The scale of the mean.
    zero_inflation : float, default=0.1
        ``k`` above, non-negative; 0 for no zero inflation.

    Returns
    -------
    log_prob : tensor
        The log-probability of every count, of the broadcast shape.

    See Also
    --------
    gauss_hermite_expectation : Its expectation under a Gaussian latent.
    mvlearn_ext.deep.TLVMOGPRegressor : Fits count data with ``likelihood="zinb"``.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep.gaussian_process import zinb_log_prob
    >>> y = torch.arange(200.0)
    >>> alpha = torch.tensor(0.5)
    >>> round(float(zinb_log_prob(y, torch.tensor(2.0), alpha).exp().sum()), 4)  # sums to 1
    1.0
    """
    m = (scale * F.softplus(f)).clamp_min(1e-30)
    r = 1.0 / alpha
    log_rm = torch.log(r + m)
    log_m = torch.log(m)
    log_nb0 = r * (torch.log(r) - log_rm)
    log_coef = torch.lgamma(y + r) - torch.lgamma(r) - torch.lgamma(y + 1.0)
    log_nb = log_coef + log_nb0 + y * (log_m - log_rm)
    if zero_inflation == 0:
        return log_nb
    log_km = torch.log(zero_inflation + m)
    log_psi = math.log(zero_inflation) - log_km
    log_1mpsi = log_m - log_km
    zero = torch.logaddexp(log_psi, log_1mpsi + log_nb0)
    return torch.where(y == 0, zero, log_1mpsi + log_nb)


def gauss_hermite_expectation(fn, mean, var, n_points=20):
    """``E[fn(f)]`` for ``f ~ N(mean, var)`` by Gauss-Hermite quadrature (torch).

    ``fn`` receives the nodes stacked on a new leading axis of size
    ``n_points``; the result has the shape of ``mean``.

    Parameters
    ----------
    fn : callable
        Maps a tensor of shape ``(n_points, *mean.shape)`` to one of the
        same leading size.
    mean : tensor
        The Gaussian means.
    var : tensor of the shape of ``mean``
        The Gaussian variances.
    n_points : int, default=20
        The number of quadrature nodes.

    Returns
    -------
    expectation : tensor of the shape of ``mean``
        The quadrature estimate of ``E[fn(f)]``.

    See Also
    --------
    zinb_log_prob : A log-likelihood whose expectation it takes.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep.gaussian_process import gauss_hermite_expectation
    >>> mean = torch.tensor([1.0], dtype=torch.float64)
    >>> var = torch.tensor([4.0], dtype=torch.float64)
    >>> round(float(gauss_hermite_expectation(lambda f: f**2, mean, var)), 6)  # 1 + 4
    5.0
    """
    f, w = _gh_nodes(mean, var, n_points)
    return torch.tensordot(w, fn(f), dims=([0], [0]))


def _gh_nodes(mean, var, n_points):
    """Gauss-Hermite nodes ``f`` (n_points, *mean.shape) and weights (summing to 1)."""
    x, w = np.polynomial.hermite.hermgauss(int(n_points))
    x = torch.as_tensor(x, dtype=mean.dtype, device=mean.device)
    w = torch.as_tensor(w / math.sqrt(math.pi), dtype=mean.dtype, device=mean.device)
    shape = (-1,) + (1,) * mean.dim()
    return mean.unsqueeze(0) + torch.sqrt(2.0 * var).unsqueeze(0) * x.reshape(shape), w


def _zinb_moments(f, alpha, scale, zero_inflation):
    """``E[y | f]`` and ``E[y^2 | f]`` of the zero-inflated negative binomial."""
    m = scale * F.softplus(f)
    keep = m / (zero_inflation + m) if zero_inflation > 0 else torch.ones_like(m)
    ey = keep * m
    ey2 = keep * (m + alpha * m * m + m * m)
    return ey, ey2
