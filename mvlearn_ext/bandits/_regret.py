"""Regret curves over horizons and their log-log slopes."""

from __future__ import annotations

import numpy as np

from mvlearn_ext.bandits._simulate import simulate

__all__ = ["fit_loglog_slope", "regret_curve"]


def fit_loglog_slope(budgets, mean_regret, se=None, *, level=0.95):
    """Slope of ``log(regret)`` against ``log(T)``, with a confidence interval.

    Weighted least squares on the log means, with the delta-method variance
    ``(se / mean)^2`` of each log mean when ``se`` is given (ordinary least
    squares otherwise, with the residual variance). The interval is normal
    (``level``); a zero ``se`` (a deterministic rule) falls back to ordinary
    least squares. The interval covers Monte Carlo error only, not the curvature of the
    curve (pre-asymptotic terms).

    Parameters
    ----------
    budgets : array-like of shape (n_points,)
    mean_regret : array-like of shape (n_points,)
        Positive mean regrets.
    se : array-like of shape (n_points,) or None, default=None
    level : float, default=0.95

    Returns
    -------
    fit : dict
        ``slope``, ``intercept``, ``stderr``, ``ci_low``, ``ci_high``.

    Examples
    --------
    >>> from mvlearn_ext.bandits import fit_loglog_slope
    >>> round(fit_loglog_slope([10, 100, 1000], [1.0, 0.01, 0.0001])["slope"], 6)
    -2.0
    """
    from scipy.stats import norm

    x = np.log(np.asarray(budgets, dtype=float))
    m = np.asarray(mean_regret, dtype=float)
    if x.shape != m.shape or x.ndim != 1 or x.shape[0] < 2:
        raise ValueError("budgets and mean_regret must be 1-D of the same length >= 2")
    if np.any(m <= 0):
        raise ValueError("mean_regret must be positive to take logs")
    y = np.log(m)
    X = np.column_stack([np.ones_like(x), x])
    se_arr = None if se is None else np.asarray(se, dtype=float)
    if se_arr is not None and np.all(se_arr > 0):
        var = (se_arr / m) ** 2
        w = 1.0 / np.maximum(var, 1e-300)
        cov = np.linalg.inv(X.T @ (w[:, None] * X))
        beta = cov @ X.T @ (w * y)
    else:
        beta, *_ = np.linalg.lstsq(X, y, rcond=None)
        dof = max(1, x.shape[0] - 2)
        resid = y - X @ beta
        cov = np.linalg.inv(X.T @ X) * (resid @ resid / dof)
    stderr = float(np.sqrt(cov[1, 1]))
    z = norm.ppf(0.5 + level / 2.0)
    return {
        "slope": float(beta[1]),
        "intercept": float(beta[0]),
        "stderr": stderr,
        "ci_low": float(beta[1] - z * stderr),
        "ci_high": float(beta[1] + z * stderr),
    }


def regret_curve(
    policy, *, sigma, budgets, n_replications=1000, random_state=0, **simulate_kwargs
):
    """Mean proxy regret (and SE) of ``policy`` at every horizon, and its log-log slope.

    Every horizon uses the same ``random_state`` (common random numbers across ``T``
    and across policies), which lowers the variance of differences.

    Returns
    -------
    curve : dict
        ``budgets``, ``mean``, ``se``, ``true_loss`` (lists) and ``fit``
        (:func:`fit_loglog_slope`, or ``None`` if a mean is not positive).
    """
    means, ses, losses = [], [], []
    for T in budgets:
        res = simulate(
            policy,
            sigma=sigma,
            budget=int(T),
            n_replications=n_replications,
            random_state=random_state,
            **simulate_kwargs,
        )
        m, s = res.mean_regret()
        means.append(m)
        ses.append(s)
        losses.append(res.true_loss()[0])
    fit = fit_loglog_slope(budgets, means, ses) if min(means) > 0 else None
    return {
        "budgets": [int(T) for T in budgets],
        "mean": means,
        "se": ses,
        "true_loss": losses,
        "fit": fit,
    }
