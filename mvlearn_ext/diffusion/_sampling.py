"""Reverse samplers (DDPM, DDIM) and the analytic optimal denoisers of Gaussian data.

A sampler takes an ``eps_fn(x_t, t) -> eps_hat``: a noise predictor called on
an ``(n, d)`` batch at the integer step ``t`` (the same for the whole batch).
For Gaussian and Gaussian-mixture data the minimiser of the denoising loss,
``E[eps | x_t]``, is known in closed form (:func:`gaussian_eps`,
:func:`mixture_eps`); plugged into the DDPM chain with Gaussian data every
step is linear-Gaussian, so :func:`gaussian_chain_moments` gives the exact
law of the samples, against which the samplers are tested.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from mvlearn_ext.diffusion._schedule import _check_points, _check_schedule
from mvlearn_ext.utils._validation import check_magnitude, real_array

__all__ = [
    "ddim_sample",
    "ddpm_sample",
    "gaussian_chain_moments",
    "gaussian_eps",
    "mixture_eps",
]

_VARIANCES = ("beta", "beta_tilde")


def _reverse_sigmas(schedule, variance):
    if variance == "beta":
        return np.sqrt(schedule.betas)
    if variance == "beta_tilde":
        return np.sqrt(schedule.posterior_variances)
    raise ValueError(f"variance must be one of {_VARIANCES}, got {variance!r}")


def _start(x_T, n_samples, dim, rng):
    if x_T is not None:
        return _check_points(x_T, "x_T").copy()
    for name, v in (("n_samples", n_samples), ("dim", dim)):
        if isinstance(v, bool) or not isinstance(v, Integral) or v < 1:
            raise ValueError(f"{name} must be a positive int when x_T is not given, got {v!r}")
    return rng.standard_normal((n_samples, dim))


def _call(eps_fn, x, t):
    e = np.asarray(eps_fn(x, t), dtype=np.float64)
    if e.shape != x.shape:
        raise ValueError(f"eps_fn returned shape {e.shape} at step {t}, expected {x.shape}")
    if not np.isfinite(e).all():
        raise ValueError(f"eps_fn returned NaN or infinite values at step {t}")
    return e


def ddpm_sample(
    eps_fn,
    schedule,
    *,
    n_samples=None,
    dim=None,
    x_T=None,
    variance="beta",
    random_state=None,
):
    """Ancestral DDPM sampling (Ho et al., NeurIPS 2020, Algorithm 2).

    ``x_{t-1} = (x_t - beta_t / sqrt(1 - ab_t) eps_hat) / sqrt(alpha_t) + sigma_t z``
    for ``t = T-1 .. 0``, with no noise added at the last step (``t = 0``).

    Parameters
    ----------
    eps_fn : callable ``(x, t) -> eps_hat``
        ``x`` of shape (n, d), ``t`` an int step index.
    schedule : DiffusionSchedule
    n_samples, dim : int, optional
        Shape of the start ``x_T ~ N(0, I)``, when ``x_T`` is not given.
    x_T : array-like of shape (n, d), optional
        The start of the chain.
    variance : {"beta", "beta_tilde"}, default="beta"
        The reverse variances ``sigma_t^2``: ``beta_t`` or the posterior
        variance ``beta_tilde_t`` (the two choices of Ho et al.).
    random_state : int, RandomState instance or None, default=None
        Draws ``x_T`` and the noise of every step.

    Returns
    -------
    x0 : ndarray of shape (n, d)

    See Also
    --------
    ddim_sample : The (deterministic at ``eta = 0``) DDIM sampler.
    gaussian_eps : The exact noise predictor of Gaussian data.

    Examples
    --------
    >>> from mvlearn_ext.diffusion import ddpm_sample, gaussian_eps, make_schedule
    >>> s = make_schedule(1000)
    >>> x = ddpm_sample(gaussian_eps(2.0, 0.25, s), s, n_samples=4000, dim=1, random_state=0)
    >>> bool(abs(x.mean() - 2.0) < 0.03), bool(abs(x.var() / 0.25 - 1) < 0.06)
    (True, True)
    """
    _check_schedule(schedule)
    if not callable(eps_fn):
        raise TypeError(f"eps_fn must be callable, got {type(eps_fn).__name__}")
    sig = _reverse_sigmas(schedule, variance)
    rng = check_random_state(random_state)
    x = _start(x_T, n_samples, dim, rng)
    b, a, ab = schedule.betas, schedule.alphas, schedule.alpha_bars
    for t in range(schedule.n_steps - 1, -1, -1):
        e = _call(eps_fn, x, t)
        x = (x - b[t] / np.sqrt(1.0 - ab[t]) * e) / np.sqrt(a[t])
        if t > 0:
            x = x + sig[t] * rng.standard_normal(x.shape)
    return x


def ddim_sample(
    eps_fn,
    schedule,
    *,
    n_samples=None,
    dim=None,
    x_T=None,
    eta=0.0,
    timesteps=None,
    random_state=None,
):
    """DDIM sampling (Song, Meng & Ermon, ICLR 2021), deterministic at ``eta = 0``.

    From step ``t`` to the previous step ``s`` of ``timesteps``:
    ``x0_hat = (x_t - sqrt(1 - ab_t) eps_hat) / sqrt(ab_t)`` and
    ``x_s = sqrt(ab_s) x0_hat + sqrt(1 - ab_s - sigma^2) eps_hat + sigma z`` with
    ``sigma = eta sqrt((1 - ab_s) / (1 - ab_t)) sqrt(1 - ab_t / ab_s)`` and
    ``ab = 1`` after the last step.

    Parameters
    ----------
    eps_fn, schedule, n_samples, dim, x_T
        As in :func:`ddpm_sample`.
    eta : float >= 0, default=0.0
        Scale of the fresh noise of each step: 0 is the deterministic DDIM
        sampler, 1 the DDPM posterior variance.
    timesteps : array-like of int, optional
        Increasing step indices to visit (a sub-sequence for fewer network
        calls); default every step.
    random_state : int, RandomState instance or None, default=None
        As in :func:`ddpm_sample`.

    Returns
    -------
    x0 : ndarray of shape (n, d)

    See Also
    --------
    ddpm_sample : Ancestral sampling.
    gaussian_chain_moments : The exact moments of both samplers on Gaussian data.

    Examples
    --------
    >>> from mvlearn_ext.diffusion import ddim_sample, gaussian_eps, make_schedule
    >>> s = make_schedule(200)
    >>> x = ddim_sample(gaussian_eps(2.0, 0.25, s), s, n_samples=2000, dim=1, random_state=0)
    >>> round(float(x.mean()), 1), round(float(x.std()), 1)
    (2.0, 0.5)
    """
    _check_schedule(schedule)
    if not callable(eps_fn):
        raise TypeError(f"eps_fn must be callable, got {type(eps_fn).__name__}")
    if not isinstance(eta, Real) or not np.isfinite(eta) or eta < 0:
        raise ValueError(f"eta must be a non-negative float, got {eta!r}")
    if timesteps is None:
        steps = np.arange(schedule.n_steps)
    else:
        steps = np.asarray(timesteps)
        if steps.dtype.kind not in "iu" or steps.ndim != 1 or steps.size == 0:
            raise ValueError("timesteps must be a non-empty 1-D array of int step indices")
        if (np.diff(steps) <= 0).any() or steps[0] < 0 or steps[-1] >= schedule.n_steps:
            raise ValueError(
                f"timesteps must increase strictly within [0, {schedule.n_steps}), got {steps}"
            )
    rng = check_random_state(random_state)
    x = _start(x_T, n_samples, dim, rng)
    ab = schedule.alpha_bars
    for i in range(steps.size - 1, -1, -1):
        t = int(steps[i])
        ab_s = ab[steps[i - 1]] if i > 0 else 1.0
        e = _call(eps_fn, x, t)
        x0 = (x - np.sqrt(1.0 - ab[t]) * e) / np.sqrt(ab[t])
        sigma = eta * np.sqrt((1.0 - ab_s) / (1.0 - ab[t]) * (1.0 - ab[t] / ab_s))
        x = np.sqrt(ab_s) * x0 + np.sqrt(max(1.0 - ab_s - sigma**2, 0.0)) * e
        if sigma > 0:
            x = x + sigma * rng.standard_normal(x.shape)
    return x


def _check_var(var, name="var"):
    v = real_array(var, name)
    if (v < 0).any():
        raise ValueError(f"{name} must be non-negative and finite, got {var!r}")
    return v


def gaussian_eps(mean, var, schedule):
    """The optimal noise predictor ``E[eps | x_t]`` for data ``N(mean, var I)``.

    ``E[eps | x_t] = sqrt(1 - ab_t) (x_t - sqrt(ab_t) mean) / (ab_t var + 1 - ab_t)``,
    the minimiser of the denoising score-matching loss (the posterior mean of
    the noise; equivalently ``-sqrt(1 - ab_t)`` times the score of ``x_t``).

    Parameters
    ----------
    mean : float or array-like of shape (d,) or (n, d)
        A per-row mean (n, d) gives a conditional denoiser (the rows of ``x``
        passed to the predictor must then be aligned with it).
    var : float or array-like broadcastable to ``mean``
    schedule : DiffusionSchedule

    Returns
    -------
    eps_fn : callable ``(x, t) -> ndarray``

    See Also
    --------
    mixture_eps : The predictor of a Gaussian mixture.
    ddpm_sample : Samples with a noise predictor.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.diffusion import gaussian_eps, make_schedule
    >>> eps = gaussian_eps(0.0, 1.0, make_schedule(50))
    >>> x = np.array([[0.5]])
    >>> bool(np.allclose(eps(x, 10), x * np.sqrt(1 - make_schedule(50).alpha_bars[10])))
    True
    """
    _check_schedule(schedule)
    mu = real_array(mean, "mean")
    v = _check_var(var)
    ab = schedule.alpha_bars

    def eps_fn(x, t):
        return np.sqrt(1.0 - ab[t]) * (x - np.sqrt(ab[t]) * mu) / (ab[t] * v + 1.0 - ab[t])

    return eps_fn


def mixture_eps(means, var, schedule, *, weights=None):
    """The optimal noise predictor for an isotropic Gaussian mixture ``sum_k w_k N(mu_k, s_k I)``.

    ``E[eps | x_t] = sum_k r_k(x_t) sqrt(1 - ab_t) (x_t - sqrt(ab_t) mu_k) / v_k``,
    ``v_k = ab_t s_k + 1 - ab_t``,
    with ``r_k`` the posterior responsibilities of the components under the
    noised mixture ``x_t ~ sum_k w_k N(sqrt(ab_t) mu_k, (ab_t s_k + 1 - ab_t) I)``.

    Parameters
    ----------
    means : array-like of shape (K, d)
    var : float or array-like of shape (K,)
        Component variances ``s_k``.
    schedule : DiffusionSchedule
    weights : array-like of shape (K,), optional
        Mixture weights (normalised here); default uniform.

    Returns
    -------
    eps_fn : callable ``(x, t) -> ndarray``

    See Also
    --------
    gaussian_eps : The predictor of a single Gaussian.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.diffusion import ddpm_sample, make_schedule, mixture_eps
    >>> s = make_schedule(200)
    >>> eps = mixture_eps(np.array([[-2.0], [2.0]]), 0.01, s)
    >>> x = ddpm_sample(eps, s, n_samples=1000, dim=1, random_state=0)
    >>> round(float(np.abs(x).mean()), 1)  # the samples sit at the two modes
    2.0
    """
    _check_schedule(schedule)
    mu = _check_points(means, "means")
    check_magnitude(mu, "means")
    K, d = mu.shape
    s = np.broadcast_to(_check_var(var), (K,)).astype(np.float64)
    if weights is None:
        w = np.full(K, 1.0 / K)
    else:
        w = real_array(weights, "weights")
        if w.shape != (K,) or (w < 0).any() or w.sum() <= 0:
            raise ValueError(f"weights must be {K} non-negative values with a positive sum")
        w = w / w.sum()
    logw = np.log(np.where(w > 0, w, 1e-300))
    ab = schedule.alpha_bars

    def eps_fn(x, t):
        v = ab[t] * s + 1.0 - ab[t]  # (K,)
        diff = x[:, None, :] - np.sqrt(ab[t]) * mu[None]  # (n, K, d)
        logp = logw - 0.5 * d * np.log(v) - 0.5 * (diff * diff).sum(-1) / v
        logp -= logp.max(axis=1, keepdims=True)
        r = np.exp(logp)
        r /= r.sum(axis=1, keepdims=True)
        return np.sqrt(1.0 - ab[t]) * np.einsum("nk,nkd->nd", r / v, diff)

    return eps_fn


def gaussian_chain_moments(
    mean, var, schedule, *, sampler="ddpm", variance="beta", start_mean=0.0, start_var=1.0
):
    """Exact mean and variance of the samples of a chain driven by :func:`gaussian_eps`.

    With the optimal predictor of ``N(mean, var)`` data, each reverse step is
    ``x_{t-1} = a_t x_t + c_t + sigma_t z``, so the moments propagate exactly
    from ``x_T ~ N(start_mean, start_var)``. They equal ``(mean, var)`` only
    in the limit of many steps: with fixed reverse variances a short chain is
    biased (e.g. at ``T = 50`` the linear schedule gives 0.266 for
    ``var = 0.25`` with ``sigma_t^2 = beta_t``).

    Parameters
    ----------
    mean, var : float or ndarray (per dimension)
    schedule : DiffusionSchedule
    sampler : {"ddpm", "ddim"}, default="ddpm"
        ``"ddim"`` is deterministic DDIM over every step.
    variance : {"beta", "beta_tilde"}, default="beta"
        The DDPM reverse variances.
    start_mean, start_var : float, default=0.0, 1.0

    Returns
    -------
    mean_0, var_0 : ndarray
        The law of the chain's output, per dimension.

    See Also
    --------
    gaussian_eps : The noise predictor of the chain.
    ddpm_sample : Samples of the same chain.

    Examples
    --------
    >>> from mvlearn_ext.diffusion import gaussian_chain_moments, make_schedule
    >>> m, v = gaussian_chain_moments(1.0, 0.25, make_schedule(50))
    >>> round(float(m), 3), round(float(v), 3)
    (1.0, 0.266)
    """
    _check_schedule(schedule)
    mu = real_array(mean, "mean")
    v0 = _check_var(var)
    if sampler not in ("ddpm", "ddim"):
        raise ValueError(f"sampler must be 'ddpm' or 'ddim', got {sampler!r}")
    sig = _reverse_sigmas(schedule, variance)
    b, a, ab, abp = schedule.betas, schedule.alphas, schedule.alpha_bars, schedule.alpha_bars_prev
    m = real_array(start_mean, "start_mean") + 0.0 * mu
    v = _check_var(start_var, "start_var") + 0.0 * v0
    for t in range(schedule.n_steps - 1, -1, -1):
        den = ab[t] * v0 + 1.0 - ab[t]
        k = np.sqrt(1.0 - ab[t]) / den  # eps_hat = k x - k sqrt(ab) mu
        c0 = -k * np.sqrt(ab[t]) * mu
        if sampler == "ddpm":
            gain = (1.0 - b[t] / np.sqrt(1.0 - ab[t]) * k) / np.sqrt(a[t])
            off = -b[t] / np.sqrt(1.0 - ab[t]) * c0 / np.sqrt(a[t])
            noise = sig[t] ** 2 if t > 0 else 0.0
        else:
            # x_s = sqrt(ab_s) (x - sqrt(1 - ab_t) e) / sqrt(ab_t) + sqrt(1 - ab_s) e
            p = np.sqrt(abp[t]) / np.sqrt(ab[t])
            q = np.sqrt(1.0 - abp[t]) - p * np.sqrt(1.0 - ab[t])
            gain = p + q * k
            off = q * c0
            noise = 0.0
        m = gain * m + off
        v = gain * gain * v + noise
    return m, v
