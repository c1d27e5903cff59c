"""Regret curves over horizons and their log-log slopes."""

from __future__ import annotations

import math

from mvlearn_ext.bandits._simulate import simulate
from mvlearn_ext.studies import fit_loglog_slope
from mvlearn_ext.utils._validation import integer_array

__all__ = ["regret_curve"]


def regret_curve(
    policy, *, sigma, budgets, n_replications=1000, random_state=0, **simulate_kwargs
):
    """Mean proxy regret (and SE) of ``policy`` at every horizon, and its log-log slope.

    Every horizon uses the same ``random_state`` (common random numbers across ``T``
    and across policies), which lowers the variance of differences.

    Parameters
    ----------
    policy : policy object
        An allocation policy accepted by :func:`~mvlearn_ext.bandits.simulate`.
    sigma : array-like of shape (n_groups,)
        True standard deviations (positive).
    budgets : array-like of shape (n_budgets,)
        The horizons ``T`` of the curve (positive ints).
    n_replications : int, default=1000
        Replications per horizon.
    random_state : int, default=0
        The root of the sample streams, shared by every horizon.
    **simulate_kwargs : dict
        Further keyword arguments of :func:`~mvlearn_ext.bandits.simulate`
        (``mean``, ``distribution``, ``shape``, ``replication_offset``,
        ``group_keys``, ``n_jobs``).

    Returns
    -------
    curve : dict
        ``budgets``, ``mean``, ``se``, ``true_loss`` (lists) and ``fit``
        (the :class:`~mvlearn_ext.studies.LogLogFit` of
        :func:`mvlearn_ext.studies.fit_loglog_slope` on the means and their
        standard errors). ``fit`` is ``None`` where no fit is possible: fewer
        than two distinct budgets, or a mean that is not positive and
        finite. With ``n_replications=1`` the standard errors are NaN (one
        replication has no spread) and the fit is unweighted.

    See Also
    --------
    simulate : One budget's replications.
    proxy_regret : The regret of one allocation.
    mvlearn_ext.studies.fit_loglog_slope : The slope fit of the curve.

    Examples
    --------
    >>> from mvlearn_ext.bandits import GreedyPlugIn, regret_curve
    >>> curve = regret_curve(GreedyPlugIn(p=2), sigma=[0.5, 2.0], budgets=[64, 128],
    ...                      n_replications=20)
    >>> curve["budgets"], len(curve["mean"])
    ([64, 128], 2)
    """
    budgets = integer_array(budgets, "budgets", ndim=1, low=1).tolist()
    means, ses, losses = [], [], []
    for T in budgets:
        res = simulate(
            policy,
            sigma=sigma,
            budget=T,
            n_replications=n_replications,
            random_state=random_state,
            **simulate_kwargs,
        )
        m, s = res.mean_regret()
        means.append(m)
        ses.append(s)
        losses.append(res.true_loss()[0])
    fit = None
    if len(set(budgets)) >= 2 and all(math.isfinite(m) and m > 0 for m in means):
        weighted = all(math.isfinite(s) for s in ses)
        fit = fit_loglog_slope(budgets, means, ses if weighted else None)
    return {
        "budgets": budgets,
        "mean": means,
        "se": ses,
        "true_loss": losses,
        "fit": fit,
    }
