"""Validation and the training loop shared by the diffusion estimators (private driver)."""

from __future__ import annotations

import time
from numbers import Integral

import numpy as np
import torch
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from mvlearn_ext.diffusion._sampling import ddim_sample, ddpm_sample
from mvlearn_ext.diffusion._schedule import make_schedule
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT
from mvlearn_ext.utils._torch import (
    LEARNING_RATE_CONSTRAINT,
    check_finite_loss,
    resolve_device,
)
from mvlearn_ext.utils._validation import as_random_state, check_allocation, validate_array

#: Constraints of the parameters the diffusion estimators share.
COMMON_CONSTRAINTS: dict = {
    "n_steps": [Interval(Integral, 1, None, closed="left")],
    "batch_size": [Interval(Integral, 1, None, closed="left")],
    "learning_rate": LEARNING_RATE_CONSTRAINT,
    "learning_rate_schedule": [StrOptions({"constant", "cosine"})],
    "random_state": ["random_state"],
    "device": [str, None],
    "n_jobs": N_JOBS_CONSTRAINT,
}
SAMPLER_CONSTRAINT = [StrOptions({"ddpm", "ddim"})]


def _check_samples(X, name="X"):
    """``X`` as a finite float64 (n, d) array with ``n >= 2`` (the training samples).

    :func:`~mvlearn_ext.utils._validation.validate_array` refuses, with a
    message naming ``name``: NaN, infinity, complex values (in scikit-learn's
    words, which its estimator checks expect), strings (digit strings
    included), ragged rows, another number of dimensions than 2, no
    features, values whose squares overflow (the standardisation squares
    them) and fewer than two rows (no scale).
    """
    return validate_array(X, name, dtype=np.float64, min_samples=2)


def _check_hidden(hidden, name="hidden_layer_sizes"):
    if isinstance(hidden, (str, bytes)) or not hasattr(hidden, "__iter__"):
        raise TypeError(f"{name} must be a tuple of positive ints, got {hidden!r}")
    h = tuple(hidden)
    if not h or any(isinstance(w, bool) or not isinstance(w, Integral) or w < 1 for w in h):
        raise ValueError(f"{name} must be a non-empty tuple of positive ints, got {hidden!r}")
    return tuple(int(w) for w in h)


def _unequal(w):
    return bool(np.ptp(w) > 1e-12 * np.max(w))


def _batch_rows(weights, batch_size, generator, weighted):
    """Row ids of one mini-batch.

    With unequal ``weights`` the rows are drawn with probabilities
    ``w / sum(w)`` and the plain mean of their losses is taken: the same
    expected loss as the weighted mean over uniformly drawn rows, without
    its variance when a few rows carry most of the weight (the real pairs
    under ``TwoStageDiffusion(mix_weight=...)``: 64 rows against 4000
    pseudo-pairs, each weighted about 30 times more).
    """
    if weighted:
        return torch.multinomial(weights, batch_size, replacement=True, generator=generator)
    n = weights.shape[0]
    return torch.randint(n, (batch_size,), generator=generator, device=weights.device)


def _gaussian_form_eps(xt, ab, mu, var):
    """``sqrt(1 - ab) (x_t - sqrt(ab) mu) / (ab var + 1 - ab)``, the optimum for N(mu, var)."""
    return (1 - ab).sqrt() * (xt - ab.sqrt() * mu) / (ab * var + 1 - ab)


def _cosine_lr(lr, it, max_iter):
    """Step size of step ``it`` of ``max_iter`` under a half-period cosine decay to 0."""
    return 0.5 * lr * (1.0 + np.cos(np.pi * it / max(max_iter, 1)))


def _train(opt, batch_loss, *, max_iter, lr, learning_rate_schedule, est=None):
    """``max_iter`` Adam steps on ``batch_loss(it)``; the mean loss of every 100 steps.

    ``learning_rate_schedule="cosine"`` sets the step size of every step by
    :func:`_cosine_lr`. With ``est`` (a :class:`VerboseMixin` estimator), a
    bar over the steps (``verbose >= 1``) and each block's loss
    (``verbose >= 2``) go to stderr.
    """
    history, running, start = [], 0.0, time.perf_counter()
    steps = range(max_iter)
    if est is not None:
        steps = est._progress(steps, desc="fit", unit="step")
    for it in steps:
        if learning_rate_schedule == "cosine":
            for group in opt.param_groups:
                group["lr"] = _cosine_lr(lr, it, max_iter)
        loss = batch_loss(it)
        if est is not None:
            check_finite_loss(loss, est, where=f" at step {it + 1}")
        elif not torch.isfinite(loss):
            raise ValueError(
                f"the training loss became {float(loss)} at step {it + 1}; the training "
                "diverged: lower learning_rate"
            )
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += float(loss.detach())
        if (it + 1) % 100 == 0 or it + 1 == max_iter:
            history.append(running / ((it % 100) + 1))
            running = 0.0
            if est is not None:
                est._log(
                    f"step {it + 1}/{max_iter}: loss {history[-1]:.4f} "
                    f"({time.perf_counter() - start:.1f} s)",
                    level=2,
                )
    return history


def _start_fit(est, X):
    """What every diffusion fit sets first; returns ``(seed, device)``.

    Sets the standardisation of the samples ``X`` (``x_mean_``, ``x_scale_``;
    :func:`_reverse_diffuse` undoes it), ``schedule_`` and ``n_features_``;
    ``seed`` is the fit's torch seed drawn from ``est.random_state`` and
    ``device`` the resolved ``est.device``.
    """
    check_allocation(
        8 * est.n_steps, "n_steps", est.n_steps, what="the noise schedule (8 x n_steps)"
    )
    est.x_mean_, est.x_scale_ = X.mean(0), X.std(0) + 1e-8
    est.schedule_ = make_schedule(est.n_steps)
    est.n_features_ = X.shape[1]
    seed = int(check_random_state(est.random_state).randint(2**31 - 1))
    return seed, resolve_device(est.device)


def _reverse_diffuse(est, eps_fn, n, random_state):
    """``n`` samples of a fitted diffusion estimator ``est`` (one per condition of
    ``eps_fn``) by its reverse-diffusion sampler, mapped back to data units."""
    sampler = ddpm_sample if est.sampler == "ddpm" else ddim_sample
    rng = as_random_state(random_state)
    Z = sampler(eps_fn, est.schedule_, n_samples=n, dim=est.n_features_, random_state=rng)
    return Z * est.x_scale_ + est.x_mean_
