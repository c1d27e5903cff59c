"""Numba kernels of the mean-estimation bandits (plain, side information, contextual).

Everything the online policies and :func:`mvlearn_ext.bandits.simulate` do
per step lives here, so both run *the same compiled code*: the sample
streams, the Welford updates, the arm scores and the selection rules. This is
what makes the online interface and the Monte Carlo engine agree exactly for
the same seeds.

Random numbers are counter based. The stream of replication ``r`` and group
``g`` under seed ``s`` has the key ``key(s, r, g)`` (three rounds of the
SplitMix64 finaliser, Steele, Lea & Flood, OOPSLA 2014); the ``j``-th sample
of that stream uses the sub-key ``s_j = mix(key + (j + 1) * gamma)`` (the
``j``-th SplitMix64 output) as its first uniform and
``mix(s_j + i * gamma)`` as its ``i``-th (``i >= 1``). A sample therefore
depends only on ``(s, r, g, j)``, never on the order in which the policy
asked for it, nor on the thread that ran the replication.

Kernels take plain contiguous arrays, scalars and small named tuples of them
(:class:`Welford`, :class:`Source`, :class:`SideConfig`, ...: one argument
per role instead of one per array) and assume valid input; the drivers in
:mod:`mvlearn_ext.bandits._simulate`, :mod:`mvlearn_ext.bandits._policies`,
:mod:`mvlearn_ext.bandits._side_info` and :mod:`mvlearn_ext.bandits._contextual`
validate. The side-information and contextual kernels follow the plain ones.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import prange

from mvlearn_ext.utils._kernels import cholesky_solve
from mvlearn_ext.utils._numba import jit

__all__ = [
    "DIST_CODES",
    "POLICY_CODES",
    "CtxRule",
    "CtxStats",
    "CtxTruth",
    "CtxWork",
    "Outputs",
    "PlainRule",
    "PlainState",
    "SideConfig",
    "SideWork",
    "Source",
    "Streams",
    "Welford",
    "advance",
    "cholesky_inplace",
    "count_table",
    "ctx_choose",
    "ctx_draw",
    "ctx_observe",
    "ctx_simulate_kernel",
    "ctx_stats",
    "ctx_work",
    "draw_value",
    "plugin_targets",
    "rp_value",
    "side_advance",
    "side_fit",
    "side_simulate_kernel",
    "side_work",
    "simulate_kernel",
    "step",
    "stream_key",
]

# Policy codes (the drivers map the public classes to these).
UNIFORM = 0
ORACLE = 1
TWO_STAGE = 2
GREEDY = 3
GAFS_MAX = 4
CH_AS = 5
B_AS = 6
VARIANCE_UCB = 7
POLICY_CODES = {
    "uniform": UNIFORM,
    "oracle": ORACLE,
    "two_stage": TWO_STAGE,
    "greedy": GREEDY,
    "gafs_max": GAFS_MAX,
    "ch_as": CH_AS,
    "b_as": B_AS,
    "variance_ucb": VARIANCE_UCB,
}

# Distribution codes; PRESAMPLED reads a (replication, group, index) array.
PRESAMPLED = -1
GAUSSIAN = 0
RADEMACHER = 1
UNIFORM_DIST = 2
BERNOULLI = 3
GAMMA = 4
THREE_POINT = 5
DIST_CODES = {
    "gaussian": GAUSSIAN,
    "rademacher": RADEMACHER,
    "uniform": UNIFORM_DIST,
    "bernoulli": BERNOULLI,
    "gamma": GAMMA,
    "three_point": THREE_POINT,
}

# Indices into the policy parameter vector ``pp`` (float64).
PP_Q = 0  # exponent q = 2p / (p + 1) (2 for p = inf)
PP_N0 = 1  # warm start n0
PP_BONUS = 2  # coefficient of the confidence bonus
PP_LOG = 3  # log term inside the bonus's square root
PP_SIZE = 4

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_S63 = np.uint64(63)
_SQRT3 = np.sqrt(3.0)
_ONE = np.uint64(1)
_SALT_REP = np.uint64(0xD1B54A32D192ED03)
_SALT_GROUP = np.uint64(0x8CB92BA72F3D8DD7)
_TWO_M53 = 1.0 / 9007199254740992.0


@jit
def _mix64(z):
    """SplitMix64 finaliser of a uint64."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@jit
def stream_key(seed, replication, group):
    """Key of the stream of ``(seed, replication, group)`` (all non-negative ints)."""
    h = _mix64(np.uint64(seed) ^ _GAMMA)
    h = _mix64(h + (np.uint64(replication) + _ONE) * _SALT_REP)
    return _mix64(h + (np.uint64(group) + _ONE) * _SALT_GROUP)


@jit
def _to_unit(u):
    """A uint64 to a double strictly inside (0, 1)."""
    return (float(u >> _S11) + 0.5) * _TWO_M53


def _ziggurat_tables(n_layers=128, r=3.442619855899, v=9.91256303526217e-3):
    """Layer edges ``x`` and ratios ``x[i+1] / x[i]`` of the normal ziggurat.

    Marsaglia & Tsang (J. Stat. Softw. 2000) with Doornik's (2005) exact
    rejection step, 128 layers.
    """
    x = np.zeros(n_layers + 1)
    f = np.exp(-0.5 * r * r)
    x[0] = v / f
    x[1] = r
    for i in range(2, n_layers):
        x[i] = np.sqrt(-2.0 * np.log(v / x[i - 1] + f))
        f = np.exp(-0.5 * x[i] * x[i])
    x[n_layers] = 0.0
    return x, x[1:] / x[:-1]


_ZIG_X, _ZIG_R = _ziggurat_tables()
_ZIG_TAIL = 3.442619855899
_ZIG_MASK = np.uint64(127)


@jit
def _word(sub, c):
    """The ``c``-th 64-bit word of a sample's sub-stream."""
    if c == 0:
        return sub
    return _mix64(sub + np.uint64(c) * _GAMMA)


@jit
def _normal(sub, c):
    """A standard normal from words ``c, c + 1, ...``; returns ``(z, next c)`` (ziggurat)."""
    while True:
        w = _word(sub, c)
        c += 1
        u = 2.0 * _to_unit(w) - 1.0
        i = int(w & _ZIG_MASK)
        if abs(u) < _ZIG_R[i]:
            return u * _ZIG_X[i], c
        if i == 0:
            # Tail beyond r (Marsaglia 1964).
            while True:
                a = np.log(_to_unit(_word(sub, c))) / _ZIG_TAIL
                b = np.log(_to_unit(_word(sub, c + 1)))
                c += 2
                if -2.0 * b >= a * a:
                    break
            return (a - _ZIG_TAIL if u < 0.0 else _ZIG_TAIL - a), c
        z = u * _ZIG_X[i]
        f0 = np.exp(-0.5 * (_ZIG_X[i] * _ZIG_X[i] - z * z))
        f1 = np.exp(-0.5 * (_ZIG_X[i + 1] * _ZIG_X[i + 1] - z * z))
        if f1 + _to_unit(_word(sub, c)) * (f0 - f1) < 1.0:
            return z, c + 1
        c += 1


@jit
def _gamma_std(sub, a):
    """Gamma(a, 1) by Marsaglia & Tsang (2000), boosted for ``a < 1``."""
    c = 0
    boost = 1.0
    if a < 1.0:
        boost = _to_unit(_word(sub, 0)) ** (1.0 / a)
        c = 1
        a = a + 1.0
    d = a - 1.0 / 3.0
    cc = 1.0 / np.sqrt(9.0 * d)
    while True:
        x, c = _normal(sub, c)
        v = 1.0 + cc * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = _to_unit(_word(sub, c))
        c += 1
        if np.log(u) < 0.5 * x * x + d - d * v + d * np.log(v):
            return d * v * boost


@jit
def _standard_draw(dist, shape, key, j):
    """The ``j``-th draw (mean 0, variance 1) of the stream ``key``."""
    sub = _mix64(key + (np.uint64(j) + _ONE) * _GAMMA)
    if dist == GAUSSIAN:
        return _normal(sub, 0)[0]
    if dist == RADEMACHER:
        # The top bit of the word, branch free: -1 or +1.
        return 2.0 * float(sub >> _S63) - 1.0
    if dist == UNIFORM_DIST:
        return _SQRT3 * (2.0 * _to_unit(sub) - 1.0)
    if dist == BERNOULLI:
        b = 1.0 if _to_unit(sub) < shape else 0.0
        return (b - shape) / np.sqrt(shape * (1.0 - shape))
    if dist == GAMMA:
        return (_gamma_std(sub, shape) - shape) / np.sqrt(shape)
    # THREE_POINT: +-1 with probability shape / 2 each, 0 otherwise.
    u = _to_unit(sub)
    if u < 0.5 * shape:
        return -1.0 / np.sqrt(shape)
    if u < shape:
        return 1.0 / np.sqrt(shape)
    return 0.0


@jit
def draw_value(dist, shape, mean_k, sigma_k, key, j):
    """The ``j``-th observation ``mean_k + sigma_k * z_j`` of the stream ``key``."""
    return mean_k + sigma_k * _standard_draw(dist, shape, key, j)


@jit
def draw_block(dist, shape, mean_k, sigma_k, key, out):
    """Fill ``out`` with observations ``0 .. len(out) - 1`` of the stream ``key``."""
    for j in range(out.shape[0]):
        out[j] = mean_k + sigma_k * _standard_draw(dist, shape, key, j)


# ---------------------------------------------------------------------------
# Policy steps


@jit
def _argmax(values):
    """The index of the largest value (ties to the lowest index)."""
    best = 0
    for k in range(1, values.shape[0]):
        if values[k] > values[best]:
            best = k
    return best


def count_table(q, budget):
    """``tab[n] = n^(-2/q)`` for ``n = 0 .. budget`` (``tab[0] = 0``).

    The index ``v^(q/2) / n`` and ``v * n^(-2/q)`` order the groups
    identically (``x -> x^(2/q)`` is increasing), so the kernels compare
    ``v * tab[n]``: no power per step.
    """
    n = np.arange(budget + 1, dtype=float)
    tab = np.zeros(budget + 1)
    if q == 2.0:
        tab[1:] = 1.0 / n[1:]
    else:
        tab[1:] = n[1:] ** (-2.0 / q)
    return tab


@jit
def arm_score(code, bonus, log_term, tab_n, n_k, m2_k):
    """Index of one arm, ``v * n_k^(-2/q)`` (``tab_n``) with ``v`` a (bonused) variance.

    Equivalent (same argmax) to ``v^(q/2) / n_k``, the form of the docs.
    Scalars only, so that calls in the hot loop cost no reference counting.
    """
    nf = float(n_k)
    var = m2_k / (nf - 1.0) if n_k > 1 else 0.0
    if code == CH_AS or code == VARIANCE_UCB:
        v = var + bonus * np.sqrt(log_term / nf)
    elif code == B_AS:
        s = np.sqrt(var) + bonus * np.sqrt(log_term / nf)
        v = s * s
    else:
        v = var
    return v * tab_n


@jit
def plugin_targets(weights, budget, floor, out):
    """Integer counts tracking ``budget * w / sum(w)`` with a floor, summing to ``budget``.

    Real counts ``x_k = max(floor, c w_k)`` with ``sum x = budget`` (water
    filling: arms whose share falls under the floor are clamped and the rest
    renormalised), then largest-remainder rounding (ties to the lower
    index). If every free weight is zero the free budget is split evenly.
    Assumes ``len(w) * floor <= budget``.
    """
    K = weights.shape[0]
    clamped = np.zeros(K, dtype=np.bool_)
    real = np.empty(K)
    while True:
        n_clamped = 0
        wsum = 0.0
        for k in range(K):
            if clamped[k]:
                n_clamped += 1
            else:
                wsum += weights[k]
        free_budget = budget - floor * n_clamped
        n_free = K - n_clamped
        changed = False
        for k in range(K):
            if clamped[k]:
                real[k] = floor
            elif wsum > 0.0:
                real[k] = free_budget * weights[k] / wsum
            else:
                real[k] = free_budget / n_free
            if not clamped[k] and real[k] < floor:
                clamped[k] = True
                changed = True
        if not changed:
            break
    total = 0
    for k in range(K):
        if clamped[k]:
            out[k] = floor
        else:
            out[k] = max(floor, int(np.floor(real[k])))
        total += out[k]
    rest = budget - total
    # Largest remainder (stable: ties go to the lower index).
    frac = np.empty(K)
    for k in range(K):
        frac[k] = -1.0 if clamped[k] else real[k] - np.floor(real[k])
    while rest > 0:
        best = _argmax(frac)
        out[best] += 1
        frac[best] = -2.0
        rest -= 1
    while rest < 0:  # only reachable through floating-point slack
        best = _argmax(out)
        out[best] -= 1
        rest += 1


# ---------------------------------------------------------------------------
# Argument structs of the kernels
#
# Named tuples of arrays and scalars (Numba types them as heterogeneous
# tuples: no copy, no boxing inside the kernels); each groups what one
# kernel argument used to be spread over. The kernels unpack them by
# position, so a plain tuple of the same fields is accepted too: the online
# policies pass plain tuples, which Numba's dispatcher types on its fast path
# (a named tuple from Python takes its slow path, about 15 us a call).


class Welford(NamedTuple):
    """A run's per-group running statistics (updated in place)."""

    steps: np.ndarray  # int64 (2,): [samples so far, warm start over]
    n: np.ndarray  # int64 (K,): samples per group
    mean: np.ndarray  # (K,): running means
    m2: np.ndarray  # (K,): running sums of squared deviations


class Source(NamedTuple):
    """Where ``MODE_RUN`` draws its observations from (see :func:`advance`)."""

    dist: int  # distribution code (PRESAMPLED: read ``presampled``)
    shape_param: float  # its shape parameter
    mean: np.ndarray  # (K,): true means
    sigma: np.ndarray  # (K,): true standard deviations
    keys: np.ndarray  # uint64 (K,): the groups' stream keys
    presampled: np.ndarray  # (R, K, budget): observations when dist == PRESAMPLED
    r: int  # replication (row of ``presampled``)


@jit(inline="always")
def _source_draw(source, k, j):
    """Observation ``j`` of group ``k`` from ``source``."""
    dist, shape, mean, sigma, keys, presampled, r = source
    if dist == PRESAMPLED:
        return presampled[r, k, j]
    return mean[k] + sigma[k] * _standard_draw(dist, shape, keys[k], j)


MODE_CHOOSE = 0
MODE_OBSERVE = 1
MODE_RUN = 2


class PlainRule(NamedTuple):
    """A plain allocation policy compiled for :func:`advance` (read-only)."""

    code: int  # POLICY_CODES
    pp: np.ndarray  # (PP_SIZE,): q, n0, bonus, log term (the PP_* entries)
    tab: np.ndarray  # (budget + 1,): count_table(q, budget)


class PlainState(NamedTuple):
    """A plain policy's run (updated in place)."""

    steps: np.ndarray  # int64 (3,): [samples so far, two-stage targets set, warm start over]
    n: np.ndarray  # int64 (K,): samples per group
    mean: np.ndarray  # (K,): running means
    m2: np.ndarray  # (K,): running sums of squared deviations
    score: np.ndarray  # (K,): index scores
    target: np.ndarray  # int64 (K,): targets of the deficit rules


@jit
def _least_sampled(n):
    """The group with the fewest samples (ties to the lowest index)."""
    kmin = 0
    for j in range(1, n.shape[0]):
        if n[j] < n[kmin]:
            kmin = j
    return kmin


@jit
def _largest_deficit(target, n):
    """The group of largest ``target_k - n_k`` (ties to the lowest index)."""
    k = 0
    for j in range(1, n.shape[0]):
        if target[j] - n[j] > target[k] - n[k]:
            k = j
    return k


@jit(inline="always")
def _welford(n, mean, m2, k, x):
    """Add observation ``x`` to group ``k``'s running count, mean and squared deviations."""
    n[k] += 1
    delta = x - mean[k]
    mean[k] += delta / n[k]
    m2[k] += delta * (x - mean[k])


# The step loops of the plain and side-information rules (advance,
# side_advance) share these ``inline="always"`` helpers: Numba splices them
# into both loops at the level of its IR, so the hottest loop pays no call.


@jit(inline="always")
def _n_steps(mode, budget, t):
    """How many steps a call runs: the rest of the budget in ``MODE_RUN``, else one."""
    if mode == MODE_RUN:
        return budget - t
    return 1


@jit(inline="always")
def _warm_start(n, n0, flags, i):
    """The least-sampled group while ``n_min < n0`` (ties to the lowest index), else ``-1``.

    When the warm start is found over, ``flags[i]`` is set to 1 (the callers
    then skip this test for good).
    """
    kmin = _least_sampled(n)
    if n[kmin] < n0:
        return kmin
    flags[i] = 1
    return -1


@jit
def advance(mode, rule, state, k_in, x_in, source):
    """The one implementation of a policy step, shared by the online and simulated paths.

    ``rule`` is a :class:`PlainRule`, ``state`` a :class:`PlainState` with
    ``state.steps = [t, targets_set, warm_done]``. ``MODE_CHOOSE`` returns the
    group to sample at step ``t`` (nothing changes, except that two-stage
    targets and the warm-start flag are fixed when reached);
    ``MODE_OBSERVE`` adds the observation ``x_in`` of group ``k_in``;
    ``MODE_RUN`` runs the remaining steps up to the budget
    (``len(rule.tab) - 1``), drawing observation ``n[k]`` of group ``k``
    from the :class:`Source` ``source``. Selection rules (ties to the lowest
    index):

    * uniform, oracle: the largest deficit ``target_k - n_k``;
    * GAFS-MAX: the least-sampled group if ``n_min < sqrt(t + 1) + 1``
      (round ``t + 1``), else the largest score;
    * the others: the least-sampled group while ``n_min < n0``; then the
      two-stage rule fixes its targets once and follows the largest deficit,
      the index rules take the largest score.
    """
    # The draw, the Welford update and the largest score are written out here
    # rather than called (_source_draw, _welford, _argmax): in this, the hottest
    # loop, plain calls cost about 7% of a simulated step, and even inlined ones
    # (``inline="always"``, as the step count and the warm start are) ran 4-9%
    # slower (simulate, K = 10, T = 4096, one thread; 2026-12-04). The
    # side-information loop, dominated by its model fit, calls them.
    code, pp, tab = rule
    state_i, n, mean, m2, score, target = state
    K = n.shape[0]
    q = pp[PP_Q]
    n0 = int(pp[PP_N0])
    bonus = pp[PP_BONUS]
    log_term = pp[PP_LOG]
    budget = tab.shape[0] - 1
    k = k_in
    for _ in range(_n_steps(mode, budget, state_i[0])):
        if mode != MODE_OBSERVE:
            # ---- choose ----
            t = state_i[0]
            k = -1
            if code == UNIFORM or code == ORACLE:
                k = _largest_deficit(target, n)
            else:
                if code == GAFS_MAX:
                    kmin = _least_sampled(n)
                    if n[kmin] < np.sqrt(t + 1.0) + 1.0:
                        k = kmin
                elif state_i[2] == 0:
                    k = _warm_start(n, n0, state_i, 2)
                if k < 0 and code == TWO_STAGE:
                    if state_i[1] == 0:
                        weights = np.empty(K)
                        for j in range(K):
                            weights[j] = (m2[j] / (n[j] - 1.0)) ** (0.5 * q)
                        plugin_targets(weights, budget, n0, target)
                        state_i[1] = 1
                    k = _largest_deficit(target, n)
                elif k < 0:
                    k = 0
                    for j in range(1, K):
                        if score[j] > score[k]:
                            k = j
            if mode == MODE_CHOOSE:
                return k
            dist, shape, mean_true, sigma_true, keys, presampled, r = source
            if dist == PRESAMPLED:
                x = presampled[r, k, n[k]]
            else:
                x = mean_true[k] + sigma_true[k] * _standard_draw(dist, shape, keys[k], n[k])
        else:
            x = x_in
        n[k] += 1
        delta = x - mean[k]
        mean[k] += delta / n[k]
        m2[k] += delta * (x - mean[k])
        score[k] = arm_score(code, bonus, log_term, tab[n[k]], n[k], m2[k])
        state_i[0] += 1
    return k


@jit
def step(mode, rule, state, k_in, x_in):
    """:func:`advance` without a :class:`Source`: the online interface's entry.

    ``MODE_CHOOSE`` and ``MODE_OBSERVE`` never draw, so the source is a
    placeholder built here (a source tuple from Python would cost a third of
    a step in the dispatcher's typing).
    """
    mean = state[2]
    none = Source(0, 0.0, mean, mean, np.empty(0, dtype=np.uint64), np.empty((0, 0, 0)), 0)
    return advance(mode, rule, state, k_in, x_in, none)


@jit
def rp_value(sigma2, n, p):
    """``R_p(n) = (sum_k (sigma2_k / n_k)^p)^(1/p)``, or ``max_k`` for ``p = inf``."""
    K = sigma2.shape[0]
    top = 0.0
    for k in range(K):
        v = sigma2[k] / n[k]
        if v > top:
            top = v
    if np.isinf(p) or top == 0.0:
        return top
    total = 0.0
    for k in range(K):
        total += (sigma2[k] / n[k] / top) ** p
    return top * total ** (1.0 / p)


class Streams(NamedTuple):
    """What the replications of a simulate kernel draw from (read-only)."""

    dist: int  # distribution code (PRESAMPLED: read ``presampled``)
    shape_param: float  # its shape parameter
    mean: np.ndarray  # (K,): true means
    sigma: np.ndarray  # (K,): true standard deviations
    seed: int  # the run's seed
    rep_offset: int  # the number of the first replication
    group_keys: np.ndarray  # (K,): the groups' stream numbers
    presampled: np.ndarray  # (R, K, budget): observations when dist == PRESAMPLED


class Outputs(NamedTuple):
    """The per-replication outputs of a simulate kernel (written in place)."""

    counts: np.ndarray  # int64 (R, K): samples per group
    means: np.ndarray  # (R, K): the final estimates
    rp: np.ndarray  # (R,): R_p at the final counts


@jit
def _replication_source(streams, r):
    """The :class:`Source` of replication ``r``: its stream keys under the run's seed."""
    dist, shape, mean, sigma, seed, rep_offset, group_keys, presampled = streams
    K = mean.shape[0]
    keys = np.empty(K, dtype=np.uint64)
    for k in range(K):
        keys[k] = stream_key(seed, rep_offset + r, group_keys[k])
    return Source(dist, shape, mean, sigma, keys, presampled, r)


@jit
def _store_replication(out, r, n, mean, sigma2, p):
    """Row ``r`` of the :class:`Outputs`: counts, estimates and ``R_p``."""
    for k in range(n.shape[0]):
        out[0][r, k] = n[k]
        out[1][r, k] = mean[k]
    out[2][r] = rp_value(sigma2, n, p)


@jit(parallel=True)
def simulate_kernel(rule, target0, streams, p, out):
    """Run ``out.counts.shape[0]`` replications of one plain policy (``prange``).

    ``rule`` is a :class:`PlainRule` (the budget is ``len(rule.tab) - 1``),
    ``streams`` the :class:`Streams`, ``out`` the :class:`Outputs`.
    ``target0`` holds the fixed targets of uniform/oracle (any vector summing
    to the budget for the others). With ``streams.dist == PRESAMPLED`` the
    observations are ``streams.presampled[r, k, j]``.
    """
    R = out[0].shape[0]
    sigma = streams[3]
    K = sigma.shape[0]
    sigma2 = sigma * sigma
    for r in prange(R):
        state = PlainState(
            np.zeros(3, dtype=np.int64),
            np.zeros(K, dtype=np.int64),
            np.zeros(K),
            np.zeros(K),
            np.zeros(K),
            target0.copy(),
        )
        advance(MODE_RUN, rule, state, 0, 0.0, _replication_source(streams, r))
        _store_replication(out, r, state.n, state.mean, sigma2, p)


class SideConfig(NamedTuple):
    """The side-information greedy rule and its log-linear model (read-only)."""

    n0: int  # warm start: samples per group before the greedy rule
    tab: np.ndarray  # (budget + 1,): count_table(q, budget)
    Z: np.ndarray  # (K, m): design rows (1, z_k) or z_k
    coef_known: np.ndarray  # (m,): the known coefficients when ``known``
    known: bool
    tau2_fixed: float  # tau^2 (< 0: estimate it; inf: no pooling)
    btab: np.ndarray  # (budget + 1,): bias b(nu) of log s^2 by count
    vtab: np.ndarray  # (budget + 1,): variance psi'(nu / 2) of log s^2 by count


class SideWork(NamedTuple):
    """Outputs and workspace of :func:`side_fit`."""

    out: np.ndarray  # (K,): the plug-in variances
    coef: np.ndarray  # (m,): the fitted coefficients (NaN if not fitted)
    ws: np.ndarray  # (4, K): l, v, weights, log s^2
    use: np.ndarray  # bool (K,): groups with a usable variance
    G: np.ndarray  # (m, m): normal equations
    L: np.ndarray  # (m, m): their Cholesky factor
    col: np.ndarray  # (m,): right-hand side, then a solve's column


@jit
def side_work(K, m):
    """A zeroed :class:`SideWork` for ``K`` groups and ``m`` coefficients."""
    return SideWork(
        np.zeros(K),
        np.zeros(m),
        np.zeros((4, K)),
        np.zeros(K, dtype=np.bool_),
        np.zeros((m, m)),
        np.zeros((m, m)),
        np.zeros(m),
    )


class CtxStats(NamedTuple):
    """The contextual groups' sufficient statistics (updated in place)."""

    n: np.ndarray  # int64 (K,): samples per group
    G: np.ndarray  # (K, d, d): sum of x x^T
    b: np.ndarray  # (K, d): sum of x y
    yy: np.ndarray  # (K,): sum of y^2
    score: np.ndarray  # (K,): plug-in scores


class CtxWork(NamedTuple):
    """Workspace of the contextual kernels."""

    L: np.ndarray  # (d, d): Cholesky factor
    work: np.ndarray  # (d,): a solve's output
    col: np.ndarray  # (d,): a column of G^-1
    e: np.ndarray  # (d,): a unit vector


@jit
def ctx_stats(K, d):
    """Zeroed :class:`CtxStats` for ``K`` groups in dimension ``d``."""
    return CtxStats(
        np.zeros(K, dtype=np.int64),
        np.zeros((K, d, d)),
        np.zeros((K, d)),
        np.zeros(K),
        np.zeros(K),
    )


@jit
def ctx_work(d):
    """A zeroed :class:`CtxWork` in dimension ``d``."""
    return CtxWork(np.zeros((d, d)), np.zeros(d), np.zeros(d), np.zeros(d))


# ---------------------------------------------------------------------------
# Small dense linear algebra


@jit
def cholesky_inplace(G, L):
    """Lower Cholesky factor of ``G`` into ``L``; returns False if not positive definite."""
    d = G.shape[0]
    for i in range(d):
        for j in range(i + 1):
            s = G[i, j]
            for m in range(j):
                s -= L[i, m] * L[j, m]
            if i == j:
                if s <= 0.0:
                    return False
                L[i, i] = np.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
        for j in range(i + 1, d):
            L[i, j] = 0.0
    return True


# ---------------------------------------------------------------------------
# Side information per group (mvlearn_ext.bandits._side_info)


@jit
def side_fit(n, m2, cfg, work):
    """Plug-in variances of the log-linear side-information model into ``work.out``.

    ``n``, ``m2``: the groups' counts and sums of squared deviations; ``cfg``
    a :class:`SideConfig`. ``cfg.tau2_fixed < 0`` estimates ``tau^2``
    (DerSimonian--Laird), ``inf`` is no pooling. ``work.coef`` receives the
    coefficients (NaN if not fitted). Returns ``tau^2`` (``inf`` when the
    model is not used). One function without array-argument calls besides
    the Cholesky helpers: it runs once per step, and Numba's reference
    counting on helper calls would dominate its cost.
    """
    _, _, Z, coef_known, known, tau2_fixed, btab, vtab = cfg
    out, coef, ws, use, G, L, col = work
    K, m = Z.shape
    lk = ws[0]
    vk = ws[1]
    ak = ws[2]
    ls = ws[3]
    n_use = 0
    for k in range(K):
        if n[k] >= 2 and m2[k] > 0.0:
            use[k] = True
            n_use += 1
            ls[k] = np.log(m2[k] / (n[k] - 1.0))
            lk[k] = ls[k] - btab[n[k]]
            vk[k] = vtab[n[k]]
        else:
            use[k] = False
    m_fit = 0 if known else m
    if known:
        for i in range(m):
            coef[i] = coef_known[i]
    tau2 = tau2_fixed
    ok = not np.isinf(tau2)
    estimate = ok and tau2 < 0.0
    df = n_use - m_fit
    if estimate and df <= 0:
        ok = False
    if ok and n_use < m_fit:
        ok = False
    # Stage 0: fixed-effect fit and the moment estimate of tau^2; stage 1: final fit.
    stage = 0 if estimate else 1
    while ok and stage < 2:
        for k in range(K):
            if not use[k]:
                ak[k] = 0.0
            elif stage == 0:
                ak[k] = 1.0 / vk[k]
            else:
                ak[k] = 1.0 / (vk[k] + tau2)
        if not known:
            # Normal equations G coef = Z^T A l, Cholesky G = L L^T, two triangular solves.
            for i in range(m):
                col[i] = 0.0
                for j in range(m):
                    G[i, j] = 0.0
            for k in range(K):
                if use[k]:
                    for i in range(m):
                        col[i] += ak[k] * Z[k, i] * lk[k]
                        for j in range(i + 1):
                            G[i, j] += ak[k] * Z[k, i] * Z[k, j]
            if not cholesky_inplace(G, L):
                ok = False
                break
            cholesky_solve(L, L.shape[0], col, coef)
        if stage == 0:
            Q = 0.0
            sa = 0.0
            tr = 0.0
            for k in range(K):
                if not use[k]:
                    continue
                pred = 0.0
                for i in range(m):
                    pred += Z[k, i] * coef[i]
                r = lk[k] - pred
                Q += ak[k] * r * r
                sa += ak[k]
                if not known:
                    # a_k^2 z_k^T G^-1 z_k = a_k^2 |L^-1 z_k|^2 (forward substitution).
                    h = 0.0
                    for i in range(m):
                        acc = Z[k, i]
                        for t in range(i):
                            acc -= L[i, t] * col[t]
                        col[i] = acc / L[i, i]
                        h += col[i] * col[i]
                    tr += ak[k] * ak[k] * h
            c = sa - tr
            if c <= 0.0:
                ok = False
                break
            tau2 = max(0.0, (Q - df) / c)
        stage += 1
    if not ok:
        if not known:
            for i in range(m):
                coef[i] = np.nan
        for k in range(K):
            out[k] = m2[k] / (n[k] - 1.0) if n[k] >= 2 else 0.0
        return np.inf
    for k in range(K):
        pred = 0.0
        for i in range(m):
            pred += Z[k, i] * coef[i]
        if use[k]:
            w = tau2 / (tau2 + vk[k])
            out[k] = np.exp(w * ls[k] + (1.0 - w) * pred)
        else:
            out[k] = np.exp(pred)
    return tau2


@jit
def side_advance(mode, cfg, state, k_in, x_in, source, work):
    """One step (or the rest of a run) of the side-information greedy rule.

    Same modes as :func:`advance` on the :class:`Welford` ``state``
    (``state.steps = [t, warm_done]``): the least-sampled group while
    ``n_min < cfg.n0`` (ties to the lowest index; once the warm start is
    over it stays over), then ``argmax_k out_k * cfg.tab[n_k]`` with ``out``
    the plug-in variances of :func:`side_fit` computed from the current
    state. ``MODE_RUN`` draws from the :class:`Source` ``source``.
    """
    state_i, n, mean, m2 = state
    n0, tab = cfg[0], cfg[1]
    K = n.shape[0]
    budget = tab.shape[0] - 1
    k = k_in
    for _ in range(_n_steps(mode, budget, state_i[0])):
        if mode != MODE_OBSERVE:
            k = -1
            if state_i[1] == 0:
                k = _warm_start(n, n0, state_i, 1)
            if k < 0:
                side_fit(n, m2, cfg, work)
                out = work[0]
                k = 0
                best = out[0] * tab[n[0]]
                for j in range(1, K):
                    s = out[j] * tab[n[j]]
                    if s > best:
                        best = s
                        k = j
            if mode == MODE_CHOOSE:
                return k
            x = _source_draw(source, k, n[k])
        else:
            x = x_in
        _welford(n, mean, m2, k, x)
        state_i[0] += 1
    return k


@jit(parallel=True)
def side_simulate_kernel(cfg, streams, p, out):
    """``out.counts.shape[0]`` replications of the side-information rule (``prange``).

    As :func:`simulate_kernel`, with the rule's :class:`SideConfig` ``cfg``.
    """
    R = out[0].shape[0]
    K, m = cfg[2].shape
    sigma = streams[3]
    sigma2 = sigma * sigma
    for r in prange(R):
        state = Welford(
            np.zeros(2, dtype=np.int64), np.zeros(K, dtype=np.int64), np.zeros(K), np.zeros(K)
        )
        source = _replication_source(streams, r)
        side_advance(MODE_RUN, cfg, state, 0, 0.0, source, side_work(K, m))
        _store_replication(out, r, state.n, state.mean, sigma2, p)


# ---------------------------------------------------------------------------
# Contextual groups (mvlearn_ext.bandits._contextual)


class CtxRule(NamedTuple):
    """The contextual greedy plug-in rule (read-only)."""

    q: float  # allocation exponent
    n0: int  # warm start: samples per group before the greedy rule
    A: np.ndarray  # (d, d): the loss's weight matrix


class CtxTruth(NamedTuple):
    """The simulated groups: contexts ``x ~ N(m_k, Lc_k Lc_k^T)``, ``y = x^T beta_k + eps``."""

    m: np.ndarray  # (K, d): context means
    Lc: np.ndarray  # (K, d, d): Cholesky factors of the context covariances
    beta: np.ndarray  # (K, d): coefficients
    sigma: np.ndarray  # (K,): noise standard deviations


@jit
def _ctx_score(q, A, n_k, G, b, yy, work):
    """Plug-in ``c_k^(q/2) / n_k`` with ``c_k = s2 n tr(A G^-1)``; 0 if ``G`` is singular."""
    L, sol, col, e = work
    d = G.shape[0]
    if n_k <= d or not cholesky_inplace(G, L):
        return 0.0
    cholesky_solve(L, L.shape[0], b, sol)
    rss = yy
    for i in range(d):
        rss -= b[i] * sol[i]
    s2 = max(rss, 0.0) / (n_k - d)
    tr = 0.0
    for j in range(d):  # column j of G^-1
        for i in range(d):
            e[i] = 0.0
        e[j] = 1.0
        cholesky_solve(L, L.shape[0], e, col)
        for i in range(d):
            tr += A[j, i] * col[i]
    c = s2 * n_k * tr
    if q == 2.0:
        return c / n_k
    return c ** (0.5 * q) / n_k


@jit
def ctx_observe(rule, k, x, y, stats, work):
    """Add ``(x, y)`` to group ``k``'s sufficient statistics and rescore it."""
    n, G, b, yy, score = stats
    d = x.shape[0]
    n[k] += 1
    for i in range(d):
        b[k, i] += x[i] * y
        for j in range(d):
            G[k, i, j] += x[i] * x[j]
    yy[k] += y * y
    q, _, A = rule
    score[k] = _ctx_score(q, A, n[k], G[k], b[k], yy[k], work)


@jit
def ctx_choose(n0, n, score):
    """The least-sampled group while ``n_min < n0``, then the largest score."""
    kmin = 0
    for k in range(1, n.shape[0]):
        if n[k] < n[kmin]:
            kmin = k
    if n[kmin] < n0:
        return kmin
    best = 0
    for k in range(1, n.shape[0]):
        if score[k] > score[best]:
            best = k
    return best


@jit
def ctx_draw(key, j, m, Lc, beta, sigma_k, x):
    """Context ``x = m + Lc z`` and response ``y = x^T beta + sigma_k eps`` of sample ``j``."""
    d = m.shape[0]
    sub = _mix64(key + (np.uint64(j) + _ONE) * _GAMMA)
    z = np.empty(d)
    c = 0
    for i in range(d):
        z[i], c = _normal(sub, c)
    y = 0.0
    for i in range(d):
        s = m[i]
        for t in range(d):
            s += Lc[i, t] * z[t]
        x[i] = s
        y += s * beta[i]
    eps, c = _normal(sub, c)
    return y + sigma_k * eps


@jit(parallel=True)
def ctx_simulate_kernel(rule, budget, truth, seed, rep_offset, c_true, p, out_counts, out_beta,
                        out_rp):  # fmt: skip
    """``out_counts.shape[0]`` replications of the contextual rule (``prange``)."""
    R = out_counts.shape[0]
    m, Lc, beta, sigma = truth
    n0 = rule[1]
    K, d = m.shape
    for r in prange(R):
        stats = ctx_stats(K, d)
        work = ctx_work(d)
        n, G, b = stats.n, stats.G, stats.b
        L, sol = work.L, work.work
        x = np.zeros(d)
        keys = np.empty(K, dtype=np.uint64)
        for k in range(K):
            keys[k] = stream_key(seed, rep_offset + r, k)
        for _ in range(budget):
            k = ctx_choose(n0, n, stats.score)
            y = ctx_draw(keys[k], n[k], m[k], Lc[k], beta[k], sigma[k], x)
            ctx_observe(rule, k, x, y, stats, work)
        for k in range(K):
            out_counts[r, k] = n[k]
            if cholesky_inplace(G[k], L):
                cholesky_solve(L, L.shape[0], b[k], sol)
                for i in range(d):
                    out_beta[r, k, i] = sol[i]
            else:
                for i in range(d):
                    out_beta[r, k, i] = np.nan
        out_rp[r] = rp_value(c_true, n, p)
