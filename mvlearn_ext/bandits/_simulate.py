"""The Monte Carlo engine: ``simulate`` and the sample streams (``ArmSampler``)."""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np

from mvlearn_ext._lib import effective_n_jobs
from mvlearn_ext.bandits import _kernels as K_
from mvlearn_ext.bandits._objective import (
    _check_budget,
    _check_p,
    _check_sigma,
    oracle_allocation,
    oracle_value,
)
from mvlearn_ext.bandits._policies import _AllocationPolicy
from mvlearn_ext.utils._numba import numba_threads
from mvlearn_ext.utils._validation import (
    check_allocation,
    integer_array,
    real_array,
    unit_exponent,
)
from mvlearn_ext.utils._warnings import warn

__all__ = ["ArmSampler", "SimulationResult", "simulate"]

#: Default shape parameter of each family (see :class:`ArmSampler`).
DEFAULT_SHAPE = {"bernoulli": 0.2, "gamma": 1.0, "three_point": 0.5}

#: Bytes of pre-drawn samples per chunk on the user-sampler path.
_PRESAMPLE_BYTES = 64 * 2**20


def _check_seed(seed, name="random_state"):
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name} must be a non-negative int, got {type(seed).__name__}")
    if not 0 <= seed < 2**64:
        raise ValueError(f"{name} must be in [0, 2**64), got {seed}")
    return int(seed)


def _check_family(distribution, shape):
    """Return ``(code, shape)``; callables return ``(PRESAMPLED, nan)``."""
    if callable(distribution):
        return K_.PRESAMPLED, np.nan
    if not isinstance(distribution, str) or distribution not in K_.DIST_CODES:
        raise ValueError(
            f"distribution must be one of {sorted(K_.DIST_CODES)} or a callable "
            f"sampler(group, size, rng), got {distribution!r}"
        )
    if shape is None:
        shape = DEFAULT_SHAPE.get(distribution, np.nan)
    elif distribution not in DEFAULT_SHAPE:
        raise ValueError(f"distribution={distribution!r} takes no shape parameter")
    shape = float(shape)
    if distribution == "bernoulli" and not 0 < shape < 1:
        raise ValueError(f"bernoulli shape (success probability) must be in (0, 1), got {shape}")
    if distribution == "gamma" and not shape > 0:
        raise ValueError(f"gamma shape must be positive, got {shape}")
    if distribution == "three_point" and not 1.0 / 3.0 <= shape <= 1.0:
        raise ValueError(
            f"three_point shape w must be in [1/3, 1] (strictly sub-Gaussian range), got {shape}"
        )
    return K_.DIST_CODES[distribution], shape


def _check_mean(mean, n_groups):
    if mean is None:
        return np.zeros(n_groups)
    mean = real_array(mean, "mean")
    if mean.shape != (n_groups,):
        raise ValueError(f"mean must have shape ({n_groups},), got {mean.shape}")
    return mean


class ArmSampler:
    """The sample streams of :func:`simulate`, one observation at a time.

    Observation ``j`` of group ``k`` in replication ``r`` is
    ``mean_k + sigma_k * z`` with ``z`` a standardised draw (mean 0,
    variance 1) that depends only on ``(random_state, r, group_keys[k], j)``
    (counter-based SplitMix64 streams, see
    :mod:`mvlearn_ext.bandits._kernels`). Feeding an online policy with
    ``sample(r, k, policy.counts_[k])`` therefore reproduces replication
    ``r`` of :func:`simulate` with the same ``random_state`` exactly.

    Families (all standardised to mean ``mean_k`` and standard deviation
    ``sigma_k``):

    * ``"gaussian"``; ``"rademacher"`` (``±1``); ``"uniform"`` (on
      ``±sqrt(3)``) -- strictly sub-Gaussian;
    * ``"three_point"``: ``±1/sqrt(w)`` with probability ``w/2`` each, 0
      otherwise; strictly sub-Gaussian exactly for ``w in [1/3, 1]`` (the
      fourth-order condition kurtosis ``1/w <= 3`` is necessary; sufficiency
      is checked numerically in the tests), ``w = 1`` is Rademacher: the
      paper's strictly sub-Gaussian class beyond the Gaussian;
    * ``"bernoulli"``: a centred, scaled Bernoulli(``shape``) (bounded, not
      strictly sub-Gaussian for ``shape != 1/2``), default ``shape = 0.2``;
    * ``"gamma"``: a centred, scaled Gamma(``shape``) (heavy right tail),
      default ``shape = 1`` (exponential);
    * a callable ``sampler(group, size, rng) -> array of size observations``
      (``rng`` a :class:`numpy.random.Generator` seeded by
      ``SeedSequence(random_state, spawn_key=(r, group_keys[k]))``); its draws are
      the actual observations (``mean``/``sigma`` are not applied). A
      callable draws a block of ``budget`` observations per (replication,
      group) at once.

    Parameters
    ----------
    sigma : array-like of shape (n_groups,)
        Standard deviations.
    mean : array-like of shape (n_groups,) or None, default=None
        Means (zeros).
    distribution : str or callable, default="gaussian"
    shape : float or None, default=None
        The family's shape parameter (see above).
    random_state : int, default=0
        The root of the counter-based streams, an int in ``[0, 2**64)``
        (not a generator: every stream is derived from it by its key, so
        that any replication can be reproduced alone).
    group_keys : array-like of int or None, default=None
        Stream identity of each group (``arange(n_groups)``): permuting the
        groups together with their keys permutes the streams.
    budget : int or None, default=None
        Block size of a callable sampler (required for callables).

    See Also
    --------
    simulate : Draws the same streams inside its compiled loop.
    ContextualArmSampler : The streams of the contextual model.

    Examples
    --------
    >>> from mvlearn_ext.bandits import ArmSampler
    >>> arms = ArmSampler(sigma=[1.0, 2.0], random_state=0)
    >>> x = arms.sample(0, 1, 0)  # replication 0, group 1, first observation
    >>> x == arms.sample(0, 1, 0)  # the stream is reproducible
    True
    >>> bool(arms.block(0, 1, 3)[0] == x)  # its first 3 observations at once
    True
    """

    def __init__(
        self,
        *,
        sigma,
        mean=None,
        distribution="gaussian",
        shape=None,
        random_state=0,
        group_keys=None,
        budget=None,
    ):
        self.sigma = _check_sigma(sigma, allow_zero=True)
        K = self.sigma.shape[0]
        self.mean = _check_mean(mean, K)
        self.distribution = distribution
        self._dist, self._shape = _check_family(distribution, shape)
        self.random_state = _check_seed(random_state, "random_state")
        self.group_keys = _check_group_keys(group_keys, K)
        if self._dist == K_.PRESAMPLED:
            self.budget = _check_budget(budget, "budget")
        else:
            self.budget = budget
        self._blocks = {}

    def sample(self, replication, group, index):
        """Observation ``index`` (0-based) of ``group`` in ``replication``.

        Parameters
        ----------
        replication : int
            Replication number ``r`` (selects the stream family).
        group : int
            Group (arm) ``k`` in ``0 .. n_groups - 1``.
        index : int
            Position of the observation in the group's stream, 0-based.

        Returns
        -------
        value : float
            The observation; the same arguments always give the same value.
        """
        r, k, j = int(replication), int(group), int(index)
        if self._dist == K_.PRESAMPLED:
            block = self._blocks.get((r, k))
            if block is None:
                block = _user_block(
                    self.distribution, self.random_state, r, k, self.group_keys[k], self.budget
                )
                self._blocks[(r, k)] = block
            return float(block[j])
        key = np.uint64(K_.stream_key(self.random_state, r, int(self.group_keys[k])))
        return float(K_.draw_value(self._dist, self._shape, self.mean[k], self.sigma[k], key, j))

    def block(self, replication, group, size):
        """Observations ``0 .. size - 1`` of ``group`` in ``replication`` (ndarray)."""
        r, k = int(replication), int(group)
        if self._dist == K_.PRESAMPLED:
            return np.array([self.sample(r, k, j) for j in range(size)])
        out = np.empty(int(size))
        key = np.uint64(K_.stream_key(self.random_state, r, int(self.group_keys[k])))
        K_.draw_block(self._dist, self._shape, self.mean[k], self.sigma[k], key, out)
        return out


def _check_group_keys(group_keys, n_groups):
    if group_keys is None:
        return np.arange(n_groups, dtype=np.int64)
    keys = integer_array(group_keys, "group_keys", low=0)
    if keys.shape != (n_groups,):
        raise ValueError(f"group_keys must have shape ({n_groups},), got {keys.shape}")
    if np.unique(keys).shape[0] != n_groups:
        raise ValueError("group_keys must be distinct (one stream per group)")
    return keys


def _user_block(sampler, seed, replication, group, key, size):
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(replication, int(key))))
    block = np.asarray(sampler(group, size, rng), dtype=float)
    if block.shape != (size,):
        raise ValueError(
            f"sampler(group={group}, size={size}, rng) returned shape {block.shape}, "
            f"expected ({size},)"
        )
    if not np.all(np.isfinite(block)):
        raise ValueError(f"sampler returned NaN or inf for group {group}")
    return block


@dataclasses.dataclass
class SimulationResult:
    """Outcome of :func:`simulate`: per-replication counts, estimates and ``R_p``.

    Parameters
    ----------
    counts, estimates, rp, oracle_value, sigma, mean, budget, p, policy
        The attributes below, in this order (built by :func:`simulate`).

    Attributes
    ----------
    counts : ndarray of shape (n_replications, n_groups)
        Final sample counts ``n_T`` (each row sums to ``budget``).
    estimates : ndarray of shape (n_replications, n_groups)
        Final sample means.
    rp : ndarray of shape (n_replications,)
        ``R_p(n_T)`` with the true ``sigma``.
    oracle_value : float
        ``R_p(n*)`` of the continuous oracle.
    sigma : ndarray of shape (n_groups,)
        True standard deviations of the groups.
    mean : ndarray of shape (n_groups,)
        True means of the groups.
    budget : int
        Horizon ``T`` (total number of samples of a replication).
    p : float
        Exponent of the ``R_p`` objective (``inf`` for the maximum).
    policy : str
        ``repr`` of the policy.

    See Also
    --------
    simulate : Returns it.
    regret_curve : Summarises simulations over several budgets.

    Examples
    --------
    >>> from mvlearn_ext.bandits import GreedyPlugIn, simulate
    >>> res = simulate(GreedyPlugIn(p=2), sigma=[1.0, 2.0], budget=50, n_replications=10)
    >>> res.rp.shape, res.budget
    ((10,), 50)
    """

    counts: np.ndarray
    estimates: np.ndarray
    rp: np.ndarray
    oracle_value: float
    sigma: np.ndarray
    mean: np.ndarray
    budget: int
    p: float
    policy: str

    @property
    def regret(self):
        """Proxy regret ``R_p(n_T) - R_p(n*)`` of every replication."""
        return self.rp - self.oracle_value

    def mean_regret(self):
        """``(mean, standard error)`` of the proxy regret over replications."""
        reg = self.regret
        # on the regret over a power of two near its largest magnitude, so
        # that the squares neither overflow nor underflow at any scale
        e = unit_exponent(reg)
        reg = np.ldexp(reg, -e)
        mean = float(np.ldexp(reg.mean(), e))
        if reg.shape[0] < 2:
            return mean, float("nan")
        return mean, float(np.ldexp(reg.std(ddof=1) / np.sqrt(reg.shape[0]), e))

    def true_loss(self):
        """Monte Carlo true loss ``(sum_k E[(mu_hat_k - mu_k)^2]^p)^(1/p) - R_p(n*)``.

        For ``p = inf``: ``max_k E[(mu_hat_k - mu_k)^2] - sum sigma^2 / T``
        (Antos et al.; Carpentier et al.). Only meaningful for the built-in
        families (a callable sampler's means are unknown here). Returns
        ``(value, per-group mean squared errors)``.
        """
        # errors over a power of two near sigma: their squares and powers stay
        # in range at any scale
        e = unit_exponent(self.sigma)
        err = np.ldexp(self.estimates - self.mean, -e)
        mse = np.mean(err * err, axis=0)
        if np.isinf(self.p):
            value = mse.max()
        else:
            value = np.sum(mse**self.p) ** (1.0 / self.p)
        with np.errstate(under="ignore"):
            value, mse = float(np.ldexp(value, 2 * e)), np.ldexp(mse, 2 * e)
        return float(value - self.oracle_value), mse

    def allocation_deviation(self):
        """``max_k |n_k - n_k*| / sqrt(T)`` of every replication."""
        star = oracle_allocation(self.sigma, self.budget, self.p)
        return np.max(np.abs(self.counts - star), axis=1) / np.sqrt(self.budget)


def _sigma_exponent(policy, sigma, budget):
    """The power of two ``e`` that :func:`simulate` divides ``sigma`` (and ``mean``) by.

    A scale-free policy (its allocation depends on ratios of the noise
    levels only) runs on ``sigma / 2**e`` with ``2**e`` the power of two
    above ``max(sigma)``: the division is exact, so the counts are those of
    any other scale, and the squares neither underflow nor overflow. Other
    policies (constants in data units) run on ``sigma`` itself (``e = 0``)
    and are refused, naming ``sigma``, where ``min(sigma)**2 / budget``, the
    smallest plug-in score, underflows.
    """
    if policy._scale_free:
        return unit_exponent(sigma)
    tiny = np.finfo(np.float64).tiny
    smallest = float(sigma.min())
    with np.errstate(under="ignore"):
        underflow = not smallest * smallest / budget >= tiny
    if underflow:
        raise ValueError(
            f"sigma: its smallest value {smallest:.3g} squared, over budget={budget}, "
            f"underflows float64 (below {tiny:.3g}); {policy!r} has constants in the units "
            "of the data, so its allocation would be wrong. Rescale: multiply sigma (and "
            "mean) by a power of ten and the constants accordingly"
        )
    return 0


def _numba_threads(n_jobs):
    """The Numba thread count of a simulation call.

    Resolved by :func:`mvlearn_ext.utils.effective_n_jobs`, then capped at
    Numba's pool. Every replication draws from its own streams, so the
    counts and estimates do not depend on it.
    """
    return numba_threads(effective_n_jobs(n_jobs, name="n_jobs"))


def simulate(
    policy,
    *,
    sigma,
    budget,
    n_replications=1000,
    mean=None,
    distribution="gaussian",
    shape=None,
    random_state=0,
    replication_offset=0,
    group_keys=None,
    n_jobs=None,
):
    """Monte Carlo replications of an allocation policy, compiled and parallel.

    Each replication runs the policy for ``budget`` steps on fresh sample
    streams (see :class:`ArmSampler`); replications run in parallel over
    Numba threads (``prange``). Replication ``r`` uses the streams of index
    ``replication_offset + r``, so a study split into batches reproduces one
    big run, and :class:`ArmSampler` with the same ``random_state`` reproduces any
    replication online.

    Parameters
    ----------
    policy : policy object
        :class:`GreedyPlugIn`, :class:`TwoStagePlugIn`,
        :class:`UniformAllocation`, :class:`OracleAllocation`,
        :class:`GAFSMax`, :class:`CHAS`, :class:`BAS`, :class:`VarianceUCB`
        or :class:`SideInfoGreedyPlugIn` (its configuration only; it is not
        modified).
    sigma : array-like of shape (n_groups,)
        True standard deviations (positive).
    budget : int
        Horizon ``T``.
    n_replications : int, default=1000
    mean : array-like of shape (n_groups,) or None, default=None
    distribution : str or callable, default="gaussian"
        See :class:`ArmSampler`. A callable takes the slower path: blocks of
        ``budget`` observations per (replication, group) are drawn in Python
        (in chunks) and the policy kernel replays them.
    shape : float or None, default=None
    random_state : int, default=0
        The root of the streams (see :class:`ArmSampler`).
    replication_offset : int, default=0
    group_keys : array-like of int or None, default=None
    n_jobs : int or None, default=None
        Numba threads over replications, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``:
        every CPU). The result does not depend on it.

    Returns
    -------
    result : SimulationResult

    See Also
    --------
    regret_curve : Simulations at several budgets, with the log-log slope.
    simulate_contextual : The simulation of the contextual model.
    ArmSampler : The same streams, one observation at a time.

    Examples
    --------
    >>> from mvlearn_ext.bandits import GreedyPlugIn, simulate
    >>> res = simulate(GreedyPlugIn(p=2), sigma=[0.5, 1.0, 2.0], budget=256,
    ...                n_replications=100, random_state=0)
    >>> res.counts.shape, bool((res.counts.sum(axis=1) == 256).all())
    ((100, 3), True)
    """
    if not isinstance(policy, _AllocationPolicy):
        raise TypeError(f"policy must be an allocation policy object, got {type(policy).__name__}")
    sigma = _check_sigma(sigma)
    n_groups = sigma.shape[0]
    budget = _check_budget(budget)
    n_replications = _check_budget(n_replications, "n_replications")
    mean = _check_mean(mean, n_groups)
    dist, shape_value = _check_family(distribution, shape)
    seed = _check_seed(random_state, "random_state")
    replication_offset = _check_seed(replication_offset, "replication_offset")
    keys = _check_group_keys(group_keys, n_groups)
    p = _check_p(policy.p)
    # the outputs: one row of n_groups per replication
    check_allocation(n_replications * n_groups, "n_replications", n_replications)
    true_sigma, true_mean = sigma, mean
    # A scale-free policy runs on the data divided by 2**e (exact); a drawn
    # observation, its mean, and R_p are then those of the unscaled run
    # times 2**e, 2**e and 2**(2e). A callable's draws are not rescaled
    # (they are the observations): only R_p is.
    e = _sigma_exponent(policy, sigma, budget)
    sigma = np.ldexp(sigma, -e)
    e_estimates = 0
    if dist != K_.PRESAMPLED:
        mean, e_estimates = np.ldexp(mean, -e), e
    runner = getattr(policy, "_replication_runner", None)
    if runner is not None:
        # Policies with their own compiled step (e.g. SideInfoGreedyPlugIn).
        run = runner(n_groups, budget, sigma, mean, dist, shape_value, seed, keys, p)
    else:
        code, pp, target, tab = policy._compile(n_groups, budget, sigma)

        rule = K_.PlainRule(code, pp, tab)

        def run(rep_offset, presampled, out_counts, out_means, out_rp):
            streams = K_.Streams(
                dist, shape_value, mean, sigma, seed, rep_offset, keys, presampled
            )
            out = K_.Outputs(out_counts, out_means, out_rp)
            K_.simulate_kernel(rule, target, streams, p, out)

    counts = np.zeros((n_replications, n_groups), dtype=np.int64)
    estimates = np.zeros((n_replications, n_groups))
    rp = np.zeros(n_replications)
    empty = np.zeros((1, 1, 1))
    with _numba_threads(n_jobs):
        if dist != K_.PRESAMPLED:
            run(replication_offset, empty, counts, estimates, rp)
        else:
            chunk = max(1, _PRESAMPLE_BYTES // (8 * n_groups * budget))
            for start in range(0, n_replications, chunk):
                stop = min(n_replications, start + chunk)
                block = np.empty((stop - start, n_groups, budget))
                for i in range(stop - start):
                    for k in range(n_groups):
                        block[i, k] = _user_block(
                            distribution, seed, replication_offset + start + i, k, keys[k], budget
                        )
                # Fresh C-contiguous outputs keep the kernel's one compiled signature.
                c_out = np.zeros((stop - start, n_groups), dtype=np.int64)
                e_out = np.zeros((stop - start, n_groups))
                r_out = np.zeros(stop - start)
                run(replication_offset + start, block, c_out, e_out, r_out)
                counts[start:stop], estimates[start:stop], rp[start:stop] = c_out, e_out, r_out
    with np.errstate(under="ignore"):
        best = float(np.ldexp(oracle_value(sigma, budget, p), 2 * e))
        rp = np.ldexp(rp, 2 * e)
        estimates = np.ldexp(estimates, e_estimates)
    if not best >= np.finfo(np.float64).tiny:
        warn(
            f"sigma: R_p of these standard deviations (the oracle value {best:.3g}) is below "
            "the smallest normal float64; the counts are exact, but rp, oracle_value and the "
            "regret are rounded to subnormal numbers or 0. Multiply sigma (and mean) by a "
            "power of ten to compare regrets",
            RuntimeWarning,
        )
    return SimulationResult(
        counts=counts,
        estimates=estimates,
        rp=rp,
        oracle_value=best,
        sigma=true_sigma,
        mean=true_mean,
        budget=budget,
        p=p,
        policy=repr(policy),
    )
