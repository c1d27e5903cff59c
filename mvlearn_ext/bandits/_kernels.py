"""Numba kernels of the mean-estimation bandits: streams, plain rules, Monte Carlo engine.

Everything the online policies and :func:`mvlearn_ext.bandits.simulate` do
per step lives here, so both run *the same compiled code*: the sample
streams, the Welford updates, the arm scores and the selection rules. This is
what makes the online interface and the Monte Carlo engine agree exactly for
the same seeds.

Random numbers are counter based. The stream of replication ``r`` and group
``g`` under seed ``s`` has the key ``key(s, r, g)`` (three passes of the
SplitMix64 finaliser, Steele, Lea & Flood, OOPSLA 2014); the ``j``-th sample
of that stream uses the sub-key ``s_j = mix(key + (j + 1) * gamma)`` (the
``j``-th SplitMix64 output) as its first uniform and
``mix(s_j + i * gamma)`` as its ``i``-th (``i >= 1``). A sample therefore
depends only on ``(s, r, g, j)``, never on the order in which the policy
asked for it, nor on the thread that ran the replication.

Kernels take plain contiguous arrays, scalars and small named tuples of them
(:class:`Welford`, :class:`Source`, :class:`Streams`, ...: one argument
per role instead of one per array) and assume valid input; the drivers in
:mod:`mvlearn_ext.bandits._simulate`, :mod:`mvlearn_ext.bandits._policies`,
:mod:`mvlearn_ext.bandits._side_info` and :mod:`mvlearn_ext.bandits._contextual`
validate. The side-information kernels (:mod:`._side_kernels`) and the
contextual ones (:mod:`._contextual_kernels`) build on these.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import prange

from mvlearn_ext.utils._numba import jit

__all__ = [
    "DIST_CODES",
    "POLICY_CODES",
    "Outputs",
    "PlainRule",
    "PlainState",
    "Source",
    "Streams",
    "Welford",
    "advance",
    "cholesky_inplace",
    "count_table",
    "draw_value",
    "plugin_targets",
    "rp_value",
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
