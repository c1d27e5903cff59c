"""Count likelihoods of multi-output GPs: zero-inflated negative binomial, Gauss-Hermite.

Framework-free (NumPy/SciPy) reference of the likelihood that
:class:`mvlearn_ext.deep.gaussian_process.TLVMOGPRegressor` uses for counts (the torch
version there is tested against this one). The parametrisation follows the
T-LVMOGP authors' code for spatial transcriptomics: a latent GP value ``f`` gives the mean
``m = s softplus(f)`` (``s`` a fixed scale), the negative binomial has
dispersion ``r = 1 / alpha`` (variance ``m + alpha m^2``), and the zero
inflation is mean-dependent, ``psi = k / (k + m)`` with ``k = zero_inflation``:

* ``P(y = 0) = psi + (1 - psi) NB(0; r, m)``,
* ``P(y = k) = (1 - psi) NB(k; r, m)`` for ``k > 0``.

``zero_inflation = 0`` is the plain negative binomial. Expectations over a Gaussian
``q(f) = N(mu, v)`` use Gauss-Hermite quadrature.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

__all__ = ["gauss_hermite_expectation", "softplus", "zinb_logpmf"]


def softplus(f):
    """``log(1 + exp(f))``, stable for large ``|f|``."""
    f = np.asarray(f, dtype=np.float64)
    return np.logaddexp(0.0, f)


def zinb_logpmf(y, f, alpha, *, scale=1.0, zero_inflation=0.1):
    """Log-probability of counts ``y`` under the zero-inflated negative binomial.

    Parameters
    ----------
    y : array-like of non-negative integers
        Counts (broadcast against ``f``).
    f : array-like of float
        Latent function values; the mean is ``m = scale * softplus(f)``.
    alpha : array-like of float > 0
        Dispersion ``alpha = 1 / r`` (broadcast against ``f``).
    scale : float or array-like > 0, default=1.0
        The fixed scale factor ``s`` of the mean.
    zero_inflation : float >= 0, default=0.1
        ``k`` in the zero-inflation probability ``psi = k / (k + m)``; ``0`` gives the plain
        negative binomial.

    Returns
    -------
    logp : ndarray of the broadcast shape
    """
    y = np.asarray(y, dtype=np.float64)
    f = np.asarray(f, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    if np.any(y < 0) or np.any(y != np.round(y)):
        raise ValueError("y must hold non-negative integer counts")
    if np.any(alpha <= 0):
        raise ValueError("alpha must be positive")
    if zero_inflation < 0:
        raise ValueError(f"zero_inflation must be non-negative, got {zero_inflation}")
    m = np.asarray(scale, dtype=np.float64) * softplus(f)
    r = 1.0 / alpha
    log_rm = np.log(r + m)
    # log NB(y; r, m) = lgamma(y + r) - lgamma(r) - lgamma(y + 1)
    #                  + r log(r / (r + m)) + y log(m / (r + m))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_m = np.log(m)
        ylogm = np.where(y > 0, y * (log_m - log_rm), 0.0)
    log_nb0 = r * (np.log(r) - log_rm)
    log_nb = gammaln(y + r) - gammaln(r) - gammaln(y + 1.0) + log_nb0 + ylogm
    if zero_inflation == 0:
        return log_nb
    log_km = np.log(zero_inflation + m)
    log_psi = np.log(zero_inflation) - log_km
    with np.errstate(divide="ignore"):
        log_1mpsi = log_m - log_km
    zero = np.logaddexp(log_psi, log_1mpsi + log_nb0)
    return np.where(y == 0, zero, log_1mpsi + log_nb)


def gauss_hermite_expectation(fn, mean, var, n_points=20):
    """``E[fn(f)]`` for ``f ~ N(mean, var)`` by Gauss-Hermite quadrature.

    Parameters
    ----------
    fn : callable
        Vectorised function of an array of ``f`` values (the quadrature
        nodes are stacked on a new leading axis).
    mean, var : array-like of the same shape
        Moments of the Gaussian (``var >= 0``).
    n_points : int, default=20
        Quadrature nodes; exact for polynomials of degree ``2 n_points - 1``.

    Returns
    -------
    expectation : ndarray of the shape of ``mean``
    """
    mean = np.asarray(mean, dtype=np.float64)
    var = np.asarray(var, dtype=np.float64)
    if np.any(var < 0):
        raise ValueError("var must be non-negative")
    x, w = np.polynomial.hermite.hermgauss(int(n_points))
    shape = (-1,) + (1,) * mean.ndim
    f = mean[None] + np.sqrt(2.0 * var)[None] * x.reshape(shape)
    return np.tensordot(w / np.sqrt(np.pi), fn(f), axes=(0, 0))
