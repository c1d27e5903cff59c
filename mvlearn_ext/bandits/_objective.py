"""The objective R_p, the oracle allocation and the regrets (closed forms)."""

from __future__ import annotations

import numbers

import numpy as np

from mvlearn_ext.bandits import _kernels
from mvlearn_ext.utils._validation import check_allocation, check_magnitude, real_array

__all__ = [
    "allocation_exponent",
    "oracle_allocation",
    "oracle_value",
    "proxy_regret",
    "round_allocation",
    "rp_objective",
]


def _check_p(p):
    if isinstance(p, str):
        if p.strip().lower() in ("inf", "infinity"):
            return np.inf
        raise ValueError(f"p must be a number >= 1 or 'inf', got {p!r}")
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"p must be a real number >= 1 or np.inf, got {type(p).__name__}")
    p = float(p)
    if not (p >= 1.0):
        raise ValueError(f"p must be >= 1 (or np.inf), got {p}")
    return p


def _check_sigma(sigma, name="sigma", *, allow_zero=False):
    sigma = real_array(sigma, name)
    if sigma.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D (one standard deviation per group), got {sigma.ndim}-D"
        )
    if sigma.shape[0] < 2:
        raise ValueError(
            f"{name} has {sigma.shape[0]} group(s); allocation needs at least 2 groups "
            "(with one group every sample goes to it)"
        )
    if np.any(sigma < 0) or (not allow_zero and np.any(sigma == 0)):
        bad = int(np.flatnonzero(sigma <= 0 if not allow_zero else sigma < 0)[0])
        raise ValueError(
            f"{name}[{bad}] = {sigma[bad]}: every group needs a positive standard deviation "
            "(a zero-variance group needs a single sample; leave it out of the allocation)"
        )
    check_magnitude(sigma, name)  # the objective and the allocations square sigma
    return sigma


def _check_budget(budget, name="budget", minimum=1):
    if isinstance(budget, bool) or not isinstance(budget, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(budget).__name__}")
    budget = int(budget)
    if budget < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {budget}")
    # every count sizes an array of that many entries (tables over the horizon,
    # one row per replication): refuse what cannot be allocated, by name
    check_allocation(budget + 1, name, budget)
    return budget


def allocation_exponent(p):
    """The exponent ``q = 2p / (p + 1)`` of the oracle allocation (``q = 2`` for ``p = inf``).

    Parameters
    ----------
    p : float or "inf"
        Order of the objective, ``p >= 1``.

    Returns
    -------
    q : float

    See Also
    --------
    oracle_allocation : The allocation with this exponent.

    Examples
    --------
    >>> from mvlearn_ext.bandits import allocation_exponent
    >>> allocation_exponent(1.0), allocation_exponent("inf")
    (1.0, 2.0)
    """
    p = _check_p(p)
    return 2.0 if np.isinf(p) else 2.0 * p / (p + 1.0)


def rp_objective(sigma, counts, p):
    """``R_p(n) = (sum_k (sigma_k^2 / n_k)^p)^(1/p)``; ``max_k sigma_k^2 / n_k`` for ``p = inf``.

    Parameters
    ----------
    sigma : array-like of shape (n_groups,)
        Standard deviations of the groups.
    counts : array-like of shape (n_groups,) or (n_runs, n_groups)
        Sample counts (real counts are accepted, for the continuous oracle).
    p : float or "inf"

    Returns
    -------
    value : float or ndarray of shape (n_runs,)

    See Also
    --------
    oracle_value : Its minimum over allocations.
    proxy_regret : Its excess over that minimum.

    Examples
    --------
    >>> from mvlearn_ext.bandits import rp_objective
    >>> float(rp_objective([1.0, 2.0], [10, 40], p="inf"))
    0.1
    """
    p = _check_p(p)
    sigma = _check_sigma(sigma)
    counts = real_array(counts, "counts", ndim=(1, 2))
    if counts.shape[-1] != sigma.shape[0]:
        raise ValueError(f"counts has {counts.shape[-1]} groups, sigma has {sigma.shape[0]}")
    if np.any(counts <= 0):
        raise ValueError("counts must be positive (R_p is infinite for an unsampled group)")
    v = sigma**2 / counts
    if np.isinf(p):
        return v.max(axis=-1)
    top = v.max(axis=-1, keepdims=True)
    return np.squeeze(top, -1) * np.sum((v / top) ** p, axis=-1) ** (1.0 / p)


def oracle_allocation(sigma, budget, p):
    """The continuous oracle allocation ``n_k* = T sigma_k^q / sum_j sigma_j^q``.

    It minimises ``R_p(n)`` over real ``n > 0`` with ``sum n = T``: a
    Lagrange condition ``sigma_k^(2p) / n_k^(p+1) = const`` gives
    ``q = 2p / (p + 1)``; ``p = 1`` is the Neyman allocation ``n ∝ sigma``
    (Carpentier & Munos, NeurIPS 2011) and ``p = inf`` gives ``n ∝ sigma^2``
    (Antos, Grover & Szepesvari, 2010).

    Parameters
    ----------
    sigma : array-like of shape (n_groups,)
    budget : int
        The horizon ``T``.
    p : float or "inf"

    Returns
    -------
    counts : ndarray of shape (n_groups,)
        Real counts summing to ``budget``; see :func:`round_allocation`.

    See Also
    --------
    oracle_value : The objective at this allocation.
    round_allocation : Integer counts near it.
    OracleAllocation : The policy that follows it.

    Examples
    --------
    >>> from mvlearn_ext.bandits import oracle_allocation
    >>> oracle_allocation([1.0, 2.0], 100, "inf").tolist()
    [20.0, 80.0]
    """
    sigma = _check_sigma(sigma)
    budget = _check_budget(budget)
    w = sigma ** allocation_exponent(p)
    return budget * w / w.sum()


def oracle_value(sigma, budget, p):
    """``R_p(n*) = (sum_k sigma_k^q)^((p+1)/p) / T``; ``sum_k sigma_k^2 / T`` for ``p = inf``.

    Parameters
    ----------
    sigma : array-like of shape (n_groups,)
        Standard deviations of the groups (positive).
    budget : int
        The horizon ``T``.
    p : float or "inf"
        Order of the objective, ``p >= 1``.

    Returns
    -------
    value : float
        The objective at the continuous oracle allocation
        (:func:`oracle_allocation`), the lower bound of ``R_p`` at budget ``T``.

    See Also
    --------
    oracle_allocation : The allocation that attains it.
    proxy_regret : The excess of an allocation over it.

    Examples
    --------
    >>> from mvlearn_ext.bandits import oracle_value
    >>> oracle_value([1.0, 2.0], 100, "inf")
    0.05
    """
    p = _check_p(p)
    sigma = _check_sigma(sigma)
    budget = _check_budget(budget)
    q = allocation_exponent(p)
    exponent = 1.0 if np.isinf(p) else (p + 1.0) / p
    return float(np.sum(sigma**q) ** exponent / budget)


def round_allocation(weights, budget, floor=1):
    """Integer counts near ``budget * w / sum(w)``, each ``>= floor``, summing to ``budget``.

    Water filling for the floor, then largest-remainder rounding (ties to the
    lower index). This is the rounding of the oracle and two-stage rules.

    Parameters
    ----------
    weights : array-like of shape (n_groups,)
        Non-negative weights (e.g. ``sigma ** q``).
    budget : int
    floor : int, default=1

    Returns
    -------
    counts : ndarray of shape (n_groups,), dtype int64

    See Also
    --------
    oracle_allocation : The continuous allocation to round.

    Examples
    --------
    >>> from mvlearn_ext.bandits import round_allocation
    >>> round_allocation([1.0, 1.0, 2.0], 10).tolist()
    [3, 2, 5]
    """
    weights = np.ascontiguousarray(real_array(weights, "weights", ndim=1))
    if np.any(weights < 0):
        raise ValueError("weights must be non-negative")
    budget = _check_budget(budget)
    floor = _check_budget(floor, "floor", minimum=0)
    if floor * weights.shape[0] > budget:
        raise ValueError(
            f"budget={budget} is smaller than floor * n_groups = {floor * weights.shape[0]}"
        )
    out = np.zeros(weights.shape[0], dtype=np.int64)
    _kernels.plugin_targets(weights, budget, floor, out)
    return out


def proxy_regret(sigma, counts, p):
    """``R_p(n) - R_p(n*)`` for final counts ``n`` (exact, per run).

    Parameters
    ----------
    sigma : array-like of shape (n_groups,)
        Standard deviations of the groups (positive).
    counts : array-like of shape (n_groups,) or (n_runs, n_groups)
        Final sample counts; every run must sum to the same budget ``T``,
        which sets the oracle ``n*``.
    p : float or "inf"
        Order of the objective, ``p >= 1``.

    Returns
    -------
    regret : float or ndarray of shape (n_runs,)
        Non-negative (``n*`` minimises ``R_p`` over real counts), up to
        floating-point rounding.

    See Also
    --------
    rp_objective : The objective whose excess it is.
    regret_curve : Its mean over replications at several budgets.

    Examples
    --------
    >>> from mvlearn_ext.bandits import proxy_regret
    >>> round(float(proxy_regret([1.0, 2.0], [50, 50], "inf")), 4)  # uniform vs. oracle [20, 80]
    0.03
    """
    counts = real_array(counts, "counts", ndim=(1, 2))
    budget = np.sum(counts, axis=-1)
    if np.ndim(budget) and not np.all(budget == budget.flat[0]):
        raise ValueError("every run must have the same budget")
    T = int(np.ravel(budget)[0])
    return rp_objective(sigma, counts, p) - oracle_value(sigma, T, p)
