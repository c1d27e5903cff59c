"""Noise schedules and the forward (noising) process of DDPM, in NumPy."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from mvlearn_ext.utils._validation import real_array

__all__ = ["DiffusionSchedule", "forward_marginal", "make_schedule", "q_sample"]


@dataclass(frozen=True, eq=False)
class DiffusionSchedule:
    """A discrete noise schedule ``beta_0, ..., beta_{T-1}`` and its derived quantities.

    Step ``t`` (an index in ``0 .. T-1``) has ``alpha_t = 1 - beta_t`` and
    ``alpha_bar_t = prod_{s <= t} alpha_s``; the forward marginal is
    ``x_t = sqrt(alpha_bar_t) x_0 + sqrt(1 - alpha_bar_t) eps``
    (Ho et al., "Denoising diffusion probabilistic models", NeurIPS 2020).
    Build one with :func:`make_schedule`.

    Parameters
    ----------
    betas : array-like of shape (T,)
        The noise variances ``beta_t``, each in the open interval (0, 1);
        stored as a read-only float64 array (the attribute ``betas``).

    See Also
    --------
    make_schedule : Builds a linear or cosine schedule.
    q_sample : Draws from the forward process of a schedule.

    Examples
    --------
    >>> from mvlearn_ext.diffusion import make_schedule
    >>> s = make_schedule(50)
    >>> s.n_steps, bool(s.alpha_bars[-1] < s.alpha_bars[0])
    (50, True)
    """

    betas: np.ndarray

    def __post_init__(self):
        b = np.asarray(self.betas, dtype=np.float64)
        if b.ndim != 1 or b.size == 0:
            raise ValueError(f"betas must be a non-empty 1-D array, got shape {b.shape}")
        if not np.isfinite(b).all() or (b <= 0).any() or (b >= 1).any():
            raise ValueError("betas must lie in the open interval (0, 1)")
        b.setflags(write=False)
        object.__setattr__(self, "betas", b)

    @property
    def n_steps(self):
        """``T``."""
        return self.betas.shape[0]

    @property
    def alphas(self):
        return 1.0 - self.betas

    @property
    def alpha_bars(self):
        """``alpha_bar_t``, decreasing from ``alpha_0`` toward 0."""
        return np.cumprod(self.alphas)

    @property
    def alpha_bars_prev(self):
        """``alpha_bar_{t-1}``, with ``alpha_bar_{-1} = 1``."""
        return np.concatenate([[1.0], self.alpha_bars[:-1]])

    @property
    def posterior_variances(self):
        """``beta_tilde_t = (1 - alpha_bar_{t-1}) / (1 - alpha_bar_t) beta_t`` (0 at t = 0)."""
        return (1.0 - self.alpha_bars_prev) / (1.0 - self.alpha_bars) * self.betas


#: The largest beta of a schedule (the cap of the cosine schedule and of the default
#: linear one).
_BETA_MAX = 0.999


def make_schedule(n_steps=50, *, kind="linear", beta_start=1e-4, beta_end=None):
    """A noise schedule of ``n_steps`` steps.

    Parameters
    ----------
    n_steps : int, default=50
        ``T``.
    kind : {"linear", "cosine"}, default="linear"
        ``"linear"``: betas evenly spaced from ``beta_start`` to ``beta_end``,
        both multiplied by ``1000 / T`` (Ho et al.'s schedule rescaled to
        ``T`` steps, as in Nichol & Dhariwal, ICML 2021, so that short chains
        still end near pure noise). ``"cosine"``: Nichol & Dhariwal's cosine
        schedule (offset 0.008, betas clipped at 0.999).
    beta_start : float, default=1e-4
        The first beta of the linear schedule at ``T = 1000``. Its rescaled
        value ``beta_start * 1000 / T`` must be below 0.999.
    beta_end : float or None, default=None
        The last beta of the linear schedule at ``T = 1000``. A given value
        is used as is: its rescaled value ``beta_end * 1000 / T`` must be
        below 0.999 (``beta_end < 0.999 T / 1000``), else a ValueError says
        so. ``None`` means 0.02 with the rescaled last beta capped at 0.999,
        which takes effect for ``T <= 20`` (the last beta is then 0.999).

    Returns
    -------
    schedule : DiffusionSchedule

    See Also
    --------
    DiffusionSchedule : The schedule it returns.

    Examples
    --------
    >>> from mvlearn_ext.diffusion import make_schedule
    >>> s = make_schedule(50)
    >>> s.n_steps, round(float(s.betas[0]), 4), round(float(s.betas[-1]), 4)
    (50, 0.002, 0.4)
    """
    if isinstance(n_steps, bool) or not isinstance(n_steps, Integral) or n_steps < 1:
        raise ValueError(f"n_steps must be a positive int, got {n_steps!r}")
    if kind == "linear":
        end = 0.02 if beta_end is None else beta_end
        for name, v in (("beta_start", beta_start), ("beta_end", end)):
            if isinstance(v, bool) or not isinstance(v, Real) or not 0 < v < 1:
                raise ValueError(f"{name} must be a float in (0, 1), got {v!r}")
        if end < beta_start:
            what = "the default beta_end=0.02" if beta_end is None else f"beta_end={end}"
            raise ValueError(f"{what} is below beta_start={beta_start}")
        scale = 1000.0 / n_steps
        for name, v in (("beta_start", beta_start), ("beta_end", beta_end)):
            if v is not None and scale * v >= _BETA_MAX:
                raise ValueError(
                    f"{name}={v} rescaled to n_steps={n_steps} (times 1000 / n_steps) is "
                    f"{scale * v:.4g}, not below {_BETA_MAX}: with n_steps={n_steps}, {name} "
                    f"must be below {_BETA_MAX / scale:.4g}"
                    + (" (or None for the capped default)" if name == "beta_end" else "")
                )
        betas = np.linspace(scale * beta_start, min(scale * end, _BETA_MAX), n_steps)
    elif kind == "cosine":
        s = 0.008
        x = np.arange(n_steps + 1) / n_steps
        f = np.cos((x + s) / (1 + s) * np.pi / 2) ** 2
        betas = np.clip(1.0 - f[1:] / f[:-1], 1e-8, _BETA_MAX)
    else:
        raise ValueError(f"kind must be 'linear' or 'cosine', got {kind!r}")
    return DiffusionSchedule(betas)


def _check_schedule(schedule):
    if not isinstance(schedule, DiffusionSchedule):
        raise TypeError(f"schedule must be a DiffusionSchedule, got {type(schedule).__name__}")


def _check_steps(t, schedule, n):
    t = np.asarray(t)
    if t.dtype.kind not in "iu":
        raise TypeError(f"t must hold integer step indices, got dtype {t.dtype}")
    if t.ndim == 0:
        t = np.full(n, int(t))
    if t.shape != (n,):
        raise ValueError(f"t must be an int or have shape ({n},), got {t.shape}")
    if (t < 0).any() or (t >= schedule.n_steps).any():
        raise ValueError(f"t must lie in [0, {schedule.n_steps}), got {t.min()}..{t.max()}")
    return t


def _check_points(x, name="x0"):
    """``x`` as a finite float array of shape (n, d), or an error naming ``name``."""
    return real_array(x, name, ndim=2)


def forward_marginal(x0, t, schedule):
    """Mean and variance of ``q(x_t | x_0) = N(sqrt(ab_t) x_0, (1 - ab_t) I)``.

    Parameters
    ----------
    x0 : array-like of shape (n, d)
    t : int or array-like of int, shape (n,)
    schedule : DiffusionSchedule

    Returns
    -------
    mean : ndarray of shape (n, d)
    var : ndarray of shape (n, 1)

    See Also
    --------
    q_sample : Draws from this marginal.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.diffusion import forward_marginal, make_schedule
    >>> s = make_schedule(50)
    >>> mean, var = forward_marginal(np.ones((1, 2)), 49, s)
    >>> bool(np.allclose(mean**2 + var, 1.0))  # variance preserving
    True
    """
    _check_schedule(schedule)
    x0 = _check_points(x0)
    t = _check_steps(t, schedule, x0.shape[0])
    ab = schedule.alpha_bars[t][:, None]
    return np.sqrt(ab) * x0, 1.0 - ab


def q_sample(x0, t, schedule, *, noise=None, random_state=None):
    """Draw ``x_t ~ q(x_t | x_0)``; returns ``(x_t, noise)``.

    ``noise`` (the ``eps`` of the denoising loss) is drawn from
    ``random_state`` when not given.

    Parameters
    ----------
    x0 : array-like of shape (n, d)
        Clean samples.
    t : int or array-like of int, shape (n,)
        Step of each sample in ``0 .. T-1`` (an int: the same step for all).
    schedule : DiffusionSchedule
        The noise schedule.
    noise : array-like of shape (n, d) or None, default=None
        The standard normal ``eps``; drawn from ``random_state`` when None.
    random_state : int, RandomState instance or None, default=None
        Seeds the draw of ``noise`` (ignored when ``noise`` is given).

    Returns
    -------
    x_t : ndarray of shape (n, d)
        ``sqrt(alpha_bar_t) x0 + sqrt(1 - alpha_bar_t) noise``.
    noise : ndarray of shape (n, d)
        The ``eps`` used.

    See Also
    --------
    forward_marginal : The mean and variance of the draw.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.diffusion import make_schedule, q_sample
    >>> x_t, noise = q_sample(np.zeros((4, 2)), 10, make_schedule(50), random_state=0)
    >>> x_t.shape, noise.shape
    ((4, 2), (4, 2))
    """
    mean, var = forward_marginal(x0, t, schedule)
    if noise is None:
        noise = check_random_state(random_state).standard_normal(mean.shape)
    else:
        noise = real_array(noise, "noise")
        if noise.shape != mean.shape:
            raise ValueError(f"noise has shape {noise.shape}, expected {mean.shape}")
    return mean + np.sqrt(var) * noise, noise
