"""Allocation policies for multi-group mean estimation: the online interface.

A policy object holds its configuration (``p``, warm start, constants).
``reset(n_groups, budget)`` starts a run; ``next_group()`` says which group
to sample, ``update(group, observation)`` takes the observation. The per-step
work is done by the compiled kernels of :mod:`mvlearn_ext.bandits._kernels`,
the same ones :func:`mvlearn_ext.bandits.simulate` runs, so an online run fed
with the samples of :class:`mvlearn_ext.bandits.ArmSampler` reproduces a
simulated replication exactly.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from mvlearn_ext.bandits import _kernels as K_
from mvlearn_ext.bandits._objective import (
    _check_budget,
    _check_p,
    _check_sigma,
    allocation_exponent,
    round_allocation,
)
from mvlearn_ext.utils._validation import unit_scaled

__all__ = [
    "BAS",
    "CHAS",
    "GAFSMax",
    "GreedyPlugIn",
    "OracleAllocation",
    "TwoStagePlugIn",
    "UniformAllocation",
    "VarianceUCB",
]

_STATE_KEYS = ("counts", "means", "m2", "scores", "targets", "steps")


def _check_n_groups(n_groups):
    if isinstance(n_groups, bool) or not isinstance(n_groups, numbers.Integral):
        raise TypeError(f"n_groups must be an int, got {type(n_groups).__name__}")
    if n_groups < 2:
        raise ValueError(
            f"n_groups={n_groups}: allocation needs at least 2 groups "
            "(with one group every sample goes to it)"
        )
    return int(n_groups)


def resolve_warm_start(warm_start, n_groups, budget, linear_fraction=0.25):
    """The warm start ``n0`` (samples per group before the plug-in rule takes over).

    ``"sqrt"``: ``ceil(sqrt(T))``; ``"linear"``: ``max(2, floor(c T / K))``
    with ``c = linear_fraction``; an int: itself. ``n0 >= 2`` (a variance
    needs two samples) and ``K n0 <= T`` are enforced.
    """
    if isinstance(warm_start, str):
        if warm_start == "sqrt":
            n0 = math.ceil(math.sqrt(budget))
        elif warm_start == "linear":
            if not (0 < linear_fraction <= 1):
                raise ValueError(f"linear_fraction must be in (0, 1], got {linear_fraction}")
            n0 = max(2, int(math.floor(linear_fraction * budget / n_groups)))
        else:
            raise ValueError(
                f"warm_start must be an int >= 2, 'sqrt' or 'linear', got {warm_start!r}"
            )
    elif isinstance(warm_start, numbers.Integral) and not isinstance(warm_start, bool):
        n0 = int(warm_start)
        if n0 < 2:
            raise ValueError(f"warm_start={n0}: the plug-in variance needs at least 2 samples")
    else:
        raise TypeError(f"warm_start must be an int or a str, got {type(warm_start).__name__}")
    if n0 * n_groups > budget:
        raise ValueError(
            f"budget={budget} is smaller than the warm start: {n_groups} groups x "
            f"warm_start={n0} = {n0 * n_groups} samples"
        )
    return n0


def _same_param(a, b):
    """Whether two configuration values are equal (arrays entry by entry)."""
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return a is b or (type(a) is type(b) and a == b)
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):
        return a == b


def _check_state_origin(policy, state, keys):
    """Refuse, by name, a state that another policy, configuration or run produced."""
    if not isinstance(state, dict):
        raise TypeError(f"state must be a dict from get_state(), got {type(state).__name__}")
    missing = [k for k in (*keys, "policy", "params") if k not in state]
    if missing:
        raise ValueError(f"state is missing {missing}; pass the dict that get_state() returned")
    name = type(policy).__name__
    if state["policy"] != name:
        raise ValueError(f"state comes from a {state['policy']} policy, not a {name}")
    params, saved = policy._params(), state["params"]
    for key in params:
        same = key in saved and (
            _check_p(params[key]) == _check_p(saved[key])
            if key == "p"
            else _same_param(params[key], saved[key])
        )
        if not same:
            raise ValueError(
                f"state comes from {name} with {key}={saved.get(key)!r}, "
                f"this policy has {key}={params[key]!r}"
            )
    if hasattr(policy, "_state_"):
        run = [("n_groups", policy.n_groups_), ("budget", policy.budget_)]
        if "n_features" in keys:
            run.append(("n_features", policy.n_features_))
        for key, current in run:
            if state[key] != current:
                raise ValueError(
                    f"state comes from a run with {key}={state[key]!r}, this policy was "
                    f"reset with {key}={current}; reset it with {key}={state[key]!r} or "
                    "restore into a policy not started"
                )


class _OnlineRun:
    """The online interface's checks and accessors that every policy shares."""

    #: The arguments of ``reset``, named when a method is called before it.
    _reset_args = "n_groups, budget"

    def _require_started(self):
        if not hasattr(self, "_state_"):
            raise RuntimeError(f"call {type(self).__name__}.reset({self._reset_args}) first")

    def _check_group(self, group):
        if isinstance(group, bool) or not isinstance(group, numbers.Integral):
            raise TypeError(f"group must be an int, got {type(group).__name__}")
        if not 0 <= group < self.n_groups_:
            raise ValueError(f"group={group} is out of range [0, {self.n_groups_})")

    def _copy_state(self):
        """A deep copy of the online state (arrays copied)."""
        return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in self._state_.items()}

    @property
    def counts_(self):
        """Samples taken per group so far."""
        self._require_started()
        return self._state_["counts"].copy()


class _AllocationPolicy(_OnlineRun):
    """Shared machinery: configuration -> kernel parameters, online state."""

    _code: int = -1
    _name: str = ""
    _min_per_group: int = 2
    #: Whether the allocation depends on the data only through ratios of the
    #: noise levels: :func:`simulate` then runs it on ``sigma`` divided by a
    #: power of two, so that the counts are the same at any scale.
    _scale_free: bool = False
    #: The arrays of the online state that get_state / set_state carry.
    _state_keys: tuple = _STATE_KEYS

    def __init__(self, *, p=2.0):
        self.p = p

    # -- configuration --------------------------------------------------------
    def _params(self):
        return {"p": self.p}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"

    def _warm_start(self, n_groups, budget):
        return resolve_warm_start(self._min_per_group, n_groups, budget)

    def _extra_params(self, pp, n_groups, budget):
        """Fill the bonus entries of ``pp`` (policies with a confidence bonus)."""

    def _compile(self, n_groups, budget, sigma=None):
        """Validate and return ``(code, pp, initial targets, count table)`` for the kernels."""
        n_groups = _check_n_groups(n_groups)
        budget = _check_budget(budget)
        p = _check_p(self.p)
        pp = np.zeros(K_.PP_SIZE)
        pp[K_.PP_Q] = allocation_exponent(p)
        pp[K_.PP_N0] = self._warm_start(n_groups, budget)
        self._extra_params(pp, n_groups, budget)
        target = self._initial_target(n_groups, budget, sigma, pp)
        return self._code, pp, target, K_.count_table(pp[K_.PP_Q], budget)

    def _initial_target(self, n_groups, budget, sigma, pp):
        return round_allocation(np.ones(n_groups), budget, floor=0)

    # -- online interface -------------------------------------------------------
    def reset(self, n_groups, budget):
        """Start a run of ``budget`` samples over ``n_groups`` groups; returns ``self``.

        Parameters
        ----------
        n_groups : int
            Number of groups ``K >= 2``.
        budget : int
            The horizon ``T`` (total number of samples).
        """
        code, pp, target, tab = self._compile(n_groups, budget)
        self._code_, self._pp_, self._tab_ = code, pp, tab
        self.n_groups_, self.budget_ = int(n_groups), int(budget)
        self._state_ = {
            "counts": np.zeros(n_groups, dtype=np.int64),
            "means": np.zeros(n_groups),
            "m2": np.zeros(n_groups),
            "scores": np.zeros(n_groups),
            "targets": target.astype(np.int64),
            # [samples so far, two-stage targets set, warm start over]
            "steps": np.zeros(3, dtype=np.int64),
        }
        # The kernel's named tuples as plain tuples, built once (Numba types
        # plain tuples on its fast path; set_state writes into these arrays).
        s = self._state_
        state = (s["steps"], s["counts"], s["means"], s["m2"], s["scores"], s["targets"])
        self._args_ = ((code, pp, tab), state)
        return self

    def _advance(self, mode, group, x):
        rule, state = self._args_
        return K_.step(mode, rule, state, group, x)

    def next_group(self):
        """The group to sample next (an int in ``[0, n_groups)``)."""
        self._require_started()
        if self._state_["steps"][0] >= self.budget_:
            raise RuntimeError(f"the budget of {self.budget_} samples is spent")
        return int(self._advance(K_.MODE_CHOOSE, 0, 0.0))

    def update(self, group, observation):
        """Record ``observation`` of ``group``; returns ``self``.

        Any group may be updated (not only the one :meth:`next_group`
        proposed), e.g. when an experiment could not reach the proposed group.
        """
        self._require_started()
        self._check_group(group)
        x = float(observation)
        if not math.isfinite(x):
            raise ValueError(f"observation of group {group} is {x}: observations must be finite")
        if self._state_["steps"][0] >= self.budget_:
            raise RuntimeError(f"the budget of {self.budget_} samples is spent")
        self._advance(K_.MODE_OBSERVE, int(group), x)
        return self

    def get_state(self):
        """A deep copy of the run's state (a dict of arrays), for :meth:`set_state`.

        Besides the arrays it records ``policy`` (the class name), ``params``
        (the configuration), ``n_groups`` and ``budget``, which
        :meth:`set_state` checks.
        """
        self._require_started()
        state = self._copy_state()
        state["n_groups"], state["budget"] = self.n_groups_, self.budget_
        state["policy"], state["params"] = type(self).__name__, self._params()
        return state

    def set_state(self, state):
        """Restore a state from :meth:`get_state`; returns ``self``.

        The state must come from a policy of the same class and configuration
        and, when this policy has been :meth:`reset`, from a run with the same
        ``n_groups`` and ``budget``; a policy not started takes the run's
        ``n_groups`` and ``budget`` from the state.

        Raises
        ------
        ValueError
            If a key is missing, or naming what differs (the policy class, a
            parameter, ``n_groups``, ``budget``) or an array of the wrong
            shape.
        """
        _check_state_origin(self, state, (*self._state_keys, "n_groups", "budget"))
        self.reset(state["n_groups"], state["budget"])
        for k in self._state_keys:
            value = np.asarray(state[k], dtype=self._state_[k].dtype)
            if value.shape != self._state_[k].shape:
                raise ValueError(
                    f"state[{k!r}] has shape {value.shape}, expected {self._state_[k].shape}"
                )
            self._state_[k][...] = value  # in place: the kernel's arguments hold these
        return self

    @property
    def means_(self):
        """Sample means per group (0 for an unsampled group)."""
        self._require_started()
        return self._state_["means"].copy()

    @property
    def variances_(self):
        """Unbiased sample variances per group (NaN below two samples)."""
        self._require_started()
        n = self._state_["counts"].astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 1, self._state_["m2"] / (n - 1.0), np.nan)

    @property
    def n_samples_(self):
        """Samples taken so far."""
        self._require_started()
        return int(self._state_["steps"][0])


class UniformAllocation(_AllocationPolicy):
    """Uniform allocation ``n_k = T / K`` (round robin; the first ``T mod K`` groups get one more).

    Parameters
    ----------
    p : float or "inf", default=2.0
        Order of the objective (only used to report ``R_p``).

    See Also
    --------
    GreedyPlugIn : The adaptive exploration-free allocation.
    OracleAllocation : The allocation with known noise levels, the benchmark.
    simulate : Monte Carlo replications of a policy.

    Examples
    --------
    >>> from mvlearn_ext.bandits import UniformAllocation, simulate
    >>> res = simulate(UniformAllocation(p=2), sigma=[0.5, 1.0, 2.0], budget=120,
    ...                n_replications=20, random_state=0)
    >>> res.counts.shape, bool((res.counts.sum(axis=1) == 120).all())
    ((20, 3), True)
    """

    _code = K_.UNIFORM
    _scale_free = True
    _min_per_group = 1

    def _warm_start(self, n_groups, budget):
        if budget < n_groups:
            raise ValueError(f"budget={budget} is smaller than n_groups={n_groups}")
        return 1


class OracleAllocation(_AllocationPolicy):
    """The oracle allocation ``n_k ∝ sigma_k^q``, ``q = 2p / (p + 1)``, with known ``sigma``.

    The real allocation of :func:`oracle_allocation` is rounded by
    :func:`round_allocation` with a floor of one sample per group; the pulls
    go to the group of largest remaining deficit. The regret of this rule is
    rounding error only: ``O(T^-3)`` for finite ``p`` (``R_p`` is smooth at
    the optimum) and ``O(T^-2)`` for ``p = inf``.

    Parameters
    ----------
    p : float or "inf", default=2.0
    sigma : array-like of shape (n_groups,) or None, default=None
        The standard deviations. Required online; :func:`simulate` uses the
        true ones when ``None`` (a given ``sigma`` is a misspecified oracle).

    See Also
    --------
    oracle_allocation : The continuous allocation it rounds.
    oracle_value : The objective value it attains.
    GreedyPlugIn : The adaptive policy that estimates the noise levels.

    Examples
    --------
    >>> from mvlearn_ext.bandits import OracleAllocation, simulate
    >>> sigma = [0.5, 1.0, 2.0]
    >>> res = simulate(OracleAllocation(p=2, sigma=sigma), sigma=sigma, budget=120,
    ...                n_replications=20, random_state=0)
    >>> res.counts.shape, bool((res.counts.sum(axis=1) == 120).all())
    ((20, 3), True)
    """

    _code = K_.ORACLE
    _scale_free = True
    _min_per_group = 1

    def __init__(self, *, p=2.0, sigma=None):
        self.p = p
        self.sigma = sigma

    def _params(self):
        return {"p": self.p, "sigma": self.sigma}

    def _warm_start(self, n_groups, budget):
        if budget < n_groups:
            raise ValueError(f"budget={budget} is smaller than n_groups={n_groups}")
        return 1

    def _initial_target(self, n_groups, budget, sigma, pp):
        if self.sigma is not None:
            sigma = self.sigma
        if sigma is None:
            raise ValueError("OracleAllocation needs sigma (pass sigma=... to the constructor)")
        sigma = _check_sigma(sigma)
        if sigma.shape[0] != n_groups:
            raise ValueError(f"sigma has {sigma.shape[0]} groups, expected {n_groups}")
        # sigma over a power of two near its largest value: the same allocation
        # (exactly) at any scale, with no underflow of sigma**q
        return round_allocation(unit_scaled(sigma) ** pp[K_.PP_Q], budget, floor=1)


class _WarmStartPolicy(_AllocationPolicy):
    _scale_free = True

    def __init__(self, *, p=2.0, warm_start="sqrt", linear_fraction=0.25):
        self.p = p
        self.warm_start = warm_start
        self.linear_fraction = linear_fraction

    def _params(self):
        return {
            "p": self.p,
            "warm_start": self.warm_start,
            "linear_fraction": self.linear_fraction,
        }

    def _warm_start(self, n_groups, budget):
        return resolve_warm_start(self.warm_start, n_groups, budget, self.linear_fraction)


class TwoStagePlugIn(_WarmStartPolicy):
    """Non-adaptive exploration-free allocation: warm start, then one plug-in allocation.

    Reconstruction (Wei, Zhong & Li, arXiv 2510.10374; only the abstract was
    available): (1) sample every group ``n0`` times (round robin); (2)
    estimate the variances (unbiased); (3) spend the rest so that the final
    counts are :func:`round_allocation` of ``sigma_hat^q`` with floor
    ``n0`` (water filling, largest-remainder rounding), pulling the group of
    largest remaining deficit.

    Parameters
    ----------
    p : float or "inf", default=2.0
        Order of the objective ``R_p``.
    warm_start : int, "sqrt" or "linear", default="linear"
        ``n0``: an int ``>= 2``; ``"sqrt"`` = ``ceil(sqrt(T))``; ``"linear"``
        = ``max(2, floor(linear_fraction * T / K))``. The rate depends on it,
        hence the linear default: with ``"sqrt"`` the plug-in variances keep
        a relative error of order ``T^(-1/4)`` after the single allocation
        and the regret decays only about as ``T^(-5/4)`` (``p = inf``) or
        ``T^(-3/2)`` (finite ``p``); ``"linear"`` gives the fast rates.
    linear_fraction : float, default=0.25
        ``c`` of the linear schedule (``T / (4K)`` by default).

    See Also
    --------
    GreedyPlugIn : The adaptive version, which keeps updating the plug-in variances.
    OracleAllocation : The allocation with known noise levels.
    simulate : Monte Carlo replications of a policy.

    Examples
    --------
    >>> from mvlearn_ext.bandits import TwoStagePlugIn, simulate
    >>> res = simulate(TwoStagePlugIn(p=2), sigma=[0.5, 1.0, 2.0], budget=120,
    ...                n_replications=20, random_state=0)
    >>> res.counts.shape, bool((res.counts.sum(axis=1) == 120).all())
    ((20, 3), True)
    """

    _code = K_.TWO_STAGE

    def __init__(self, *, p=2.0, warm_start="linear", linear_fraction=0.25):
        super().__init__(p=p, warm_start=warm_start, linear_fraction=linear_fraction)


class GreedyPlugIn(_WarmStartPolicy):
    """Adaptive exploration-free allocation (greedy plug-in, "gradient tracking").

    Reconstruction (Wei, Zhong & Li, arXiv 2510.10374; only the abstract was
    available): after ``n0`` samples per group, pull
    ``argmax_k sigma_hat_k^(2p) / n_k^(p+1)``, computed as the equivalent
    (monotone transform) ``argmax_k sigma_hat_k^q / n_k`` with
    ``q = 2p / (p + 1)`` (``sigma_hat_k^2 / n_k`` for ``p = inf``). The score
    is, up to the factor ``p``, minus the partial derivative of ``R_p^p``;
    there is no confidence bonus. Variances are updated online (Welford).

    Parameters
    ----------
    p : float or "inf", default=2.0
    warm_start : int, "sqrt" or "linear", default="sqrt"
        ``n0`` (see :class:`TwoStagePlugIn`). Not fewer than a few samples
        per group: a near-zero first variance estimate from a 2-sample warm
        start can starve a group and destroy the regret rate; ``"sqrt"``
        keeps the fast rate, because the greedy rule keeps updating the
        plug-in variances.
    linear_fraction : float, default=0.25

    See Also
    --------
    TwoStagePlugIn : One plug-in allocation after the warm start.
    SideInfoGreedyPlugIn : The same rule with group features.
    ContextualGreedyPlugIn : The same rule for linear models per group.
    simulate : Monte Carlo replications of a policy.

    Examples
    --------
    >>> from mvlearn_ext.bandits import GreedyPlugIn, ArmSampler
    >>> policy = GreedyPlugIn(p="inf").reset(n_groups=2, budget=100)
    >>> arms = ArmSampler(sigma=[1.0, 2.0], random_state=0)
    >>> for _ in range(100):
    ...     k = policy.next_group()
    ...     _ = policy.update(k, arms.sample(0, k, policy.counts_[k]))
    >>> int(policy.counts_.sum())
    100
    """

    _code = K_.GREEDY


class GAFSMax(_AllocationPolicy):
    """GAFS-MAX (Antos, Grover & Szepesvari, ALT 2008; TCS 411, 2010).

    At round ``t`` (1-based), if some group has ``T_k < sqrt(t) + 1`` samples
    the least-sampled such group is pulled (forced selection); otherwise
    ``argmax_k sigma_hat_k^2 / T_k``. Literature (confirm the ``sqrt(t)``
    constant against the original). For finite ``p`` the greedy score
    ``sigma_hat_k^q / T_k`` replaces ``sigma_hat_k^2 / T_k`` (our
    generalisation; GAFS-MAX itself targets ``p = inf``).

    Parameters
    ----------
    p : float or "inf", default=np.inf

    See Also
    --------
    GreedyPlugIn : The adaptive exploration-free allocation.
    OracleAllocation : The allocation with known noise levels, the benchmark.
    simulate : Monte Carlo replications of a policy.

    Examples
    --------
    >>> from mvlearn_ext.bandits import GAFSMax, simulate
    >>> res = simulate(GAFSMax(), sigma=[0.5, 1.0, 2.0], budget=120,
    ...                n_replications=20, random_state=0)
    >>> res.counts.shape, bool((res.counts.sum(axis=1) == 120).all())
    ((20, 3), True)
    """

    _code = K_.GAFS_MAX
    _scale_free = True

    def __init__(self, *, p=np.inf):
        self.p = p

    def _warm_start(self, n_groups, budget):
        if budget < 2 * n_groups:
            raise ValueError(f"budget={budget} is smaller than 2 * n_groups = {2 * n_groups}")
        return 2


class CHAS(_AllocationPolicy):
    """CH-AS (Carpentier, Lazaric, Ghavamzadeh, Munos & Auer, ALT 2011; arXiv 1507.04523).

    Each group is pulled twice, then ``argmax_k B_k`` with the
    Chernoff-Hoeffding index
    ``B_k = (1 / T_k) (sigma_hat_k^2 + 5 sqrt(log(1/delta) / (2 T_k)))``.
    The constant 5 and ``delta ~ T^(-5/2)`` are the paper's (Literature,
    confirm); the bonus assumes rewards in ``[0, 1]``, so it is not
    scale-free. For finite ``p`` the bracket is raised to ``q / 2`` (our
    generalisation).

    Parameters
    ----------
    p : float or "inf", default=np.inf
    delta : float or None, default=None
        Confidence level; ``None`` is ``T^(-5/2)``.

    See Also
    --------
    BAS : The Bernstein variant.
    GreedyPlugIn : The adaptive exploration-free allocation.
    OracleAllocation : The allocation with known noise levels, the benchmark.
    simulate : Monte Carlo replications of a policy.

    Examples
    --------
    >>> from mvlearn_ext.bandits import CHAS, simulate
    >>> res = simulate(CHAS(), sigma=[0.5, 1.0, 2.0], budget=120,
    ...                n_replications=20, random_state=0)
    >>> res.counts.shape, bool((res.counts.sum(axis=1) == 120).all())
    ((20, 3), True)
    """

    _code = K_.CH_AS

    def __init__(self, *, p=np.inf, delta=None):
        self.p = p
        self.delta = delta

    def _params(self):
        return {"p": self.p, "delta": self.delta}

    def _warm_start(self, n_groups, budget):
        return resolve_warm_start(2, n_groups, budget)

    def _extra_params(self, pp, n_groups, budget):
        delta = budget**-2.5 if self.delta is None else _check_delta(self.delta)
        pp[K_.PP_BONUS] = 5.0
        pp[K_.PP_LOG] = math.log(1.0 / delta) / 2.0


def _check_delta(delta):
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not (0 < delta < 1):
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r}")
    return float(delta)


class BAS(_AllocationPolicy):
    """B-AS (Carpentier, Lazaric, Ghavamzadeh, Munos & Auer, ALT 2011; arXiv 1507.04523).

    Each group is pulled twice, then ``argmax_k B_k`` with the Bernstein
    index on the standard deviation
    ``B_k = (1 / T_k) (sigma_hat_k + 2 a sqrt(log(2/delta) / T_k))^2``,
    where for sub-Gaussian rewards with ``P(|X - mu| > eps) <= c2
    exp(-eps^2 / c1)``
    ``a = 2 sqrt(c1 log(c2/delta)) + sqrt(c1 delta (1 + c2 + log(c2/delta)))
    sqrt(T) / ((1 - delta) sqrt(2 log(2/delta)))``, and ``delta = T^(-7/2)``.
    Literature (confirm the constants and ``delta`` against the original).
    For finite ``p`` the bracket is raised to ``q / 2`` (our generalisation).

    Parameters
    ----------
    p : float or "inf", default=np.inf
    delta : float or None, default=None
        ``None`` is ``T^(-7/2)``.
    c1, c2 : float, default=2.0, 2.0
        The sub-Gaussian tail constants (those of a unit-variance Gaussian).

    See Also
    --------
    CHAS : The Chernoff-Hoeffding variant.
    GreedyPlugIn : The adaptive exploration-free allocation.
    OracleAllocation : The allocation with known noise levels, the benchmark.
    simulate : Monte Carlo replications of a policy.

    Examples
    --------
    >>> from mvlearn_ext.bandits import BAS, simulate
    >>> res = simulate(BAS(), sigma=[0.5, 1.0, 2.0], budget=120,
    ...                n_replications=20, random_state=0)
    >>> res.counts.shape, bool((res.counts.sum(axis=1) == 120).all())
    ((20, 3), True)
    """

    _code = K_.B_AS

    def __init__(self, *, p=np.inf, delta=None, c1=2.0, c2=2.0):
        self.p = p
        self.delta = delta
        self.c1 = c1
        self.c2 = c2

    def _params(self):
        return {"p": self.p, "delta": self.delta, "c1": self.c1, "c2": self.c2}

    def _warm_start(self, n_groups, budget):
        return resolve_warm_start(2, n_groups, budget)

    def _extra_params(self, pp, n_groups, budget):
        delta = budget**-3.5 if self.delta is None else _check_delta(self.delta)
        c1, c2 = float(self.c1), float(self.c2)
        if not (c1 > 0 and c2 > 0):
            raise ValueError(f"c1 and c2 must be positive, got {c1}, {c2}")
        log2d = math.log(2.0 / delta)
        a = 2.0 * math.sqrt(c1 * math.log(c2 / delta)) + math.sqrt(
            c1 * delta * (1.0 + c2 + math.log(c2 / delta))
        ) * math.sqrt(budget) / ((1.0 - delta) * math.sqrt(2.0 * log2d))
        pp[K_.PP_BONUS] = 2.0 * a
        pp[K_.PP_LOG] = log2d


class VarianceUCB(_AllocationPolicy):
    """Variance-UCB (Aznag, Cummings & Elmachtoub, NeurIPS 2023; arXiv 2505.14882).

    Reconstruction (the selection rule is from the abstract; the bonus and
    its constants are ours, to confirm): each group is pulled twice, then
    ``argmax_k U_k^p / n_k^(p+1)`` (computed as ``U_k^(q/2) / n_k``) with
    the variance upper confidence bound
    ``U_k = sigma_hat_k^2 + c sqrt(log(2/delta) / n_k)`` and
    ``delta = T^-2``. The paper reports regret ``O(T^-2)`` for finite ``p``
    and ``O(T^-1.5)`` for ``p = inf``, with matching lower bounds.

    Parameters
    ----------
    p : float or "inf", default=2.0
    c : float, default=1.0
        Bonus coefficient (in the units of a variance: not scale-free).
    delta : float or None, default=None
        ``None`` is ``T^-2``.

    See Also
    --------
    GreedyPlugIn : The adaptive exploration-free allocation.
    OracleAllocation : The allocation with known noise levels, the benchmark.
    simulate : Monte Carlo replications of a policy.

    Examples
    --------
    >>> from mvlearn_ext.bandits import VarianceUCB, simulate
    >>> res = simulate(VarianceUCB(p=2), sigma=[0.5, 1.0, 2.0], budget=120,
    ...                n_replications=20, random_state=0)
    >>> res.counts.shape, bool((res.counts.sum(axis=1) == 120).all())
    ((20, 3), True)
    """

    _code = K_.VARIANCE_UCB

    def __init__(self, *, p=2.0, c=1.0, delta=None):
        self.p = p
        self.c = c
        self.delta = delta

    def _params(self):
        return {"p": self.p, "c": self.c, "delta": self.delta}

    def _warm_start(self, n_groups, budget):
        return resolve_warm_start(2, n_groups, budget)

    def _extra_params(self, pp, n_groups, budget):
        delta = budget**-2.0 if self.delta is None else _check_delta(self.delta)
        if not (float(self.c) >= 0):
            raise ValueError(f"c must be >= 0, got {self.c}")
        pp[K_.PP_BONUS] = float(self.c)
        pp[K_.PP_LOG] = math.log(2.0 / delta)
