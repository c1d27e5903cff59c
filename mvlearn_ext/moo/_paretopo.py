"""ParetoPO numeric core: GRPO advantages, HV-guided scalarisation, Pareto-rank advantages.

Reconstruction: ParetoPO (Li et al., "Towards Pareto-Optimal Tool-Integrated
Agents with Pareto Ranking Policy Optimization", ICML 2026) is known from its
abstract and a third-party summary only (stage 1: hypervolume-guided dynamic
scalarisation of the reward weights from the progress of the global Pareto
front; stage 2: Pareto-rank-based advantages within GRPO groups). The
formulas here follow the project spec's reconstruction (multiobjective.md
§8-§9), including the ``stage1="hvc_gradient"`` variant of §9.4 (adaptive
weights from the gradient of a hypervolume contribution); constants
(``alpha``, ``gamma``, ``beta``, the variant's margin, EMA and floor) are
not the paper's.
Everything is framework-free NumPy: rewards in, advantages out.
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext.moo._pareto import ParetoArchive, crowding_distance, pareto_rank
from mvlearn_ext.utils._validation import check_count, check_real

__all__ = [
    "HVCGradientWeights",
    "HVMetaReward",
    "OptimalCallsTracker",
    "grpo_advantages",
    "hvc_gradient",
    "pareto_rank_advantages",
    "simulate_tool_bandit",
    "sweep_tool_bandit",
    "tool_bandit_front",
    "tool_efficiency_reward",
]


def grpo_advantages(rewards, *, scale="group", eps=1e-4):
    """GRPO group-relative advantages ``(R - mean_G R) / (std_G R + eps)``.

    TRL semantics: Bessel-corrected standard deviation, ``eps = 1e-4``.
    A group whose rewards are all equal gets 0; NaN rewards (unscorable
    rollouts) get 0 and are left out of their group's statistics.

    Parameters
    ----------
    rewards : array-like of shape (n_groups, group_size)
        One row per prompt.
    scale : {"group", "batch", "none"}, default="group"
        Which standard deviation divides the centred rewards.
    eps : float, default=1e-4

    Returns
    -------
    advantages : ndarray of shape (n_groups, group_size)

    Examples
    --------
    >>> from mvlearn_ext.moo import grpo_advantages
    >>> grpo_advantages([[1.0, 0.0, 0.0, 1.0], [0.5, 0.5, 0.5, 0.5]]).round(3)
    array([[ 0.866, -0.866, -0.866,  0.866],
           [ 0.   ,  0.   ,  0.   ,  0.   ]])
    """
    R = np.asarray(rewards, dtype=np.float64)
    if R.ndim != 2 or R.shape[1] < 1:
        raise ValueError(f"rewards must be 2-D (n_groups, group_size), got shape {R.shape}")
    if np.isinf(R).any():
        raise ValueError("rewards contains infinity")
    if scale not in ("group", "batch", "none"):
        raise ValueError(f"scale must be 'group', 'batch' or 'none', got {scale!r}")
    eps = check_real(eps, "eps", low=0.0)
    valid = ~np.isnan(R)
    cnt = valid.sum(axis=1, keepdims=True)
    Rz = np.where(valid, R, 0.0)
    mean = Rz.sum(axis=1, keepdims=True) / np.maximum(cnt, 1)
    centred = np.where(valid, R - mean, 0.0)
    if scale == "none":
        return centred
    if scale == "group":
        var = (centred**2).sum(axis=1, keepdims=True) / np.maximum(cnt - 1, 1)
        std = np.sqrt(var)
    else:
        vals = R[valid]
        std = vals.std(ddof=1) if vals.size > 1 else 0.0
    A = centred / (std + eps)
    # constant groups: exactly zero (centred is already 0 up to round-off)
    const = np.array(
        [np.ptp(r[v]) == 0 if v.any() else True for r, v in zip(R, valid, strict=True)]
    )
    A[const] = 0.0
    return A


def tool_efficiency_reward(n_calls, n_opt, *, alpha=0.5):
    """``r_tool = exp(-alpha |N_call - N_opt|)``, in (0, 1].

    Examples
    --------
    >>> from mvlearn_ext.moo import tool_efficiency_reward
    >>> tool_efficiency_reward([0, 1, 3], 1, alpha=1.0).round(4)
    array([0.3679, 1.    , 0.1353])
    """
    n = np.asarray(n_calls, dtype=np.float64)
    if not np.isfinite(n).all() or (n < 0).any():
        raise ValueError("n_calls must be finite and >= 0")
    n_opt = check_real(n_opt, "n_opt", low=0.0)
    alpha = check_real(alpha, "alpha", low=0.0)
    return np.exp(-alpha * np.abs(n - n_opt))


class OptimalCallsTracker:
    """``N_opt``: the fewest tool calls of any successful trajectory so far.

    Before the first success there is no minimum and :attr:`n_opt_` is the
    placeholder 0 (a project design choice: the summary does not say); from
    the first success on it never increases.
    """

    def __init__(self):
        self.n_opt_ = 0.0
        self.has_success_ = False

    def update(self, n_calls, success):
        n = np.asarray(n_calls, dtype=np.float64).reshape(-1)
        s = np.asarray(success, dtype=bool).reshape(-1)
        if n.shape != s.shape:
            raise ValueError("n_calls and success must have the same length")
        if s.any():
            m = float(n[s].min())
            self.n_opt_ = m if not self.has_success_ else min(self.n_opt_, m)
            self.has_success_ = True
        return self.n_opt_


class HVMetaReward:
    """Stage 1: hypervolume-guided multiplicative meta-reward (reconstruction).

    Keeps a non-dominated archive of reward vectors (maximised, reference
    ``ref``). For a batch ``R`` each trajectory gets
    ``r_pareto,i = 0.5 + 1.5 tanh(gamma h + (1 - gamma) dHV_i)``, with
    ``dHV_i`` its hypervolume gain against the archive as it stood before the
    batch and ``h`` the running EMA of batch-mean gains; the scalar reward is
    ``r_pareto,i * (w . r_i)``. :meth:`update` then takes one EMA step with
    the batch-mean gain and adds the batch to the archive.

    ``mode="lu2025"`` is the baseline of Lu et al. 2025 (arXiv 2509.11452):
    one meta-reward ``0.5 + 1.5 tanh(HVC)`` for the batch-mean objective
    vector, which joins the archive only if its contribution is positive.

    Parameters
    ----------
    weights : array-like of shape (n_objectives,)
    ref : array-like of shape (n_objectives,), default=zeros
    gamma : float in [0, 1], default=0.9
    mode : {"paretopo", "lu2025"}, default="paretopo"

    Notes
    -----
    With a binary task reward, any success with exactly ``N_opt`` calls has
    the reward vector ``(1, 1)``, the ideal point. Once one is archived the
    archive's HV is 1, every later gain is 0, the meta-reward decays to one
    constant per batch and GRPO's group standardisation cancels it: stage 1
    then trains like fixed weights (up to GRPO's ``eps``). This follows from
    the spec's per-trajectory archive ([design], §9.3). An archive of
    per-step mean objective vectors (Lu et al.; :class:`HVCGradientWeights`)
    does not saturate this way.
    """

    def __init__(self, weights, *, ref=None, gamma=0.9, mode="paretopo"):
        self.weights = weights
        self.ref = ref
        self.gamma = gamma
        self.mode = mode
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if w.size < 1 or not np.isfinite(w).all() or w.min() < 0:
            raise ValueError("weights must be finite and non-negative")
        self._w = w
        self._gamma = check_real(gamma, "gamma", low=0.0, high=1.0)
        if mode not in ("paretopo", "lu2025"):
            raise ValueError(f"mode must be 'paretopo' or 'lu2025', got {mode!r}")
        r = np.zeros(w.size) if ref is None else np.asarray(ref, dtype=np.float64)
        self.archive_ = ParetoArchive(ref=r, maximise=True)
        self.ema_ = 0.0

    def _check(self, R):
        R = np.asarray(R, dtype=np.float64)
        if R.ndim != 2 or R.shape[1] != self._w.size:
            raise ValueError(f"rewards must have shape (n, {self._w.size}), got {R.shape}")
        if not np.isfinite(R).all():
            raise ValueError("rewards contains NaN or infinity")
        return R

    def meta_rewards(self, R):
        """Per-trajectory ``r_pareto`` in [0.5, 2), without changing state."""
        R = self._check(R)
        if self.mode == "lu2025":
            g = self.archive_.gain(R.mean(axis=0))
            return np.full(R.shape[0], 0.5 + 1.5 * np.tanh(g))
        gains = self.archive_.gain(R) if R.shape[0] else np.zeros(0)
        return 0.5 + 1.5 * np.tanh(self._gamma * self.ema_ + (1 - self._gamma) * gains)

    def scalarise(self, R):
        """``r_pareto * (w . r)`` for every row of ``R``."""
        R = self._check(R)
        return self.meta_rewards(R) * (R @ self._w)

    def update(self, R):
        """EMA step with the batch-mean gain, then archive the batch."""
        R = self._check(R)
        if self.mode == "lu2025":
            y = R.mean(axis=0)
            if self.archive_.gain(y) > 0:
                self.archive_.add(y)
            return self
        gains = self.archive_.gain(R)
        self.ema_ = self._gamma * self.ema_ + (1 - self._gamma) * float(np.mean(gains))
        self.archive_.add(R)
        return self


def _check_vector(x, name, size=None):
    v = np.asarray(x, dtype=np.float64)
    if v.ndim != 1 or v.size < 1:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {v.shape}")
    if size is not None and v.size != size:
        raise ValueError(f"{name} must have {size} entries, got {v.size}")
    if not np.isfinite(v).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return v


def hvc_gradient(point, archive, ref):
    """Gradient of a point's hypervolume contribution against an archive (maximisation).

    ``HVC(y; A) = HV(A ∪ {y}; r) - HV(A; r)`` is the measure of the box
    ``[r, y]`` that no archive point dominates. Its partial derivative in
    ``y_k`` is the (K-1)-D measure of the exclusive face of that region at
    ``z_k = y_k``: the box ``prod_{j != k} [r_j, y_j]`` minus its part
    dominated by the archive points with ``a_k > y_k`` (a (K-1)-D
    hypervolume, exact in any dimension). In 2-D this is the closed form
    ``(y_2 - a_2, y_1 - a_1)``, with ``a_2`` (``a_1``) the largest second
    (first) coordinate of the archive points beyond ``y`` in the first
    (second) coordinate, or the reference's coordinate if there is none.

    ``HVC`` is piecewise polynomial in ``y``; where ``y_k`` ties with an
    archive coordinate or with ``r_k`` it has a kink, and this returns the
    right derivative (the gain rate of increasing ``y_k``). The gradient is
    0 where ``y`` is strictly dominated by an archive point and in every
    coordinate ``k`` where ``y`` does not dominate ``r`` in some
    coordinate other than ``k`` (the contribution is then 0 nearby).

    Parameters
    ----------
    point : array-like of shape (n_objectives,)
        The point ``y`` (objectives maximised), ``n_objectives >= 2``.
    archive : array-like of shape (n_archived, n_objectives)
        The archive ``A``; may have no rows. Dominated rows change nothing.
    ref : array-like of shape (n_objectives,)
        The reference point ``r``.

    Returns
    -------
    grad : ndarray of shape (n_objectives,)
        Non-negative.

    Examples
    --------
    >>> from mvlearn_ext.moo import hvc_gradient
    >>> hvc_gradient([0.6, 0.6], [[0.8, 0.3], [0.2, 0.9]], [0.0, 0.0])
    array([0.3, 0.4])
    """
    from mvlearn_ext.moo._pareto import hypervolume

    y = _check_vector(point, "point")
    K = y.size
    if K < 2:
        raise ValueError(f"point must have at least 2 objectives, got {K}")
    r = _check_vector(ref, "ref", K)
    A = np.asarray(archive, dtype=np.float64)
    if A.size == 0:
        A = np.empty((0, K))
    if A.ndim != 2 or A.shape[1] != K:
        raise ValueError(f"archive must have shape (n_archived, {K}), got {A.shape}")
    if not np.isfinite(A).all():
        raise ValueError("archive contains NaN or infinity")
    g = np.zeros(K)
    for k in range(K):
        if y[k] < r[k]:
            continue  # no part of the box [r, y] lies at z_k = y_k
        others = np.arange(K) != k
        box = float(np.prod(np.maximum(y[others] - r[others], 0.0)))
        if box == 0.0:
            continue
        cover = np.minimum(A[A[:, k] > y[k]][:, others], y[others])
        if K == 2:  # closed form: the covering interval is [r_j, max a_j]
            covered = max(float(cover.max()) - r[others][0], 0.0) if cover.size else 0.0
        else:
            covered = hypervolume(cover, r[others], maximise=True)
        g[k] = max(box - covered, 0.0)
    return g


def _project_simplex_floor(v, floor):
    """Euclidean projection of ``v`` onto ``{w : w >= floor, sum(w) = 1}``."""
    K = v.size
    total = 1.0 - K * floor
    u = v - floor
    s = np.sort(u)[::-1]
    css = np.cumsum(s) - total
    idx = np.arange(1, K + 1)
    rho = np.flatnonzero(s - css / idx > 0)[-1]
    tau = css[rho] / (rho + 1)
    return np.maximum(u - tau, 0.0) + floor


class HVCGradientWeights:
    """Stage 1 variant ``hvc_gradient``: weights from the HVC gradient (reconstruction).

    The spec's reconstruction (§9.4) of "reward weights that adapt to the
    progress of the global Pareto frontier": each step's mean objective
    vector ``y_t`` (maximised) is scored against an archive of the
    non-dominated past step points; the direction
    ``d_t = g_t / sum(g_t)``, ``g_t = hvc_gradient(y_t, archive, ref)``,
    enters an EMA ``v_t = ema v_{t-1} + (1 - ema) d_t`` started at the
    user's weights (normalised to sum 1), and the weights are ``v_t``
    projected onto the simplex with every entry ``>= floor``. The
    reference is ``y_0 - margin`` (the first point minus a margin) unless
    ``ref`` is given. Then ``y_t`` joins the archive.

    Where the gradient is 0 (``y_t`` dominated by the archive, or outside
    the reference box) the weights are kept unchanged and
    :attr:`n_kept_` counts the step. The paper's rule, reference and
    constants are not known; ``margin``, ``ema`` and ``floor`` are project
    choices.

    Parameters
    ----------
    weights : array-like of shape (n_objectives,)
        Initial weights, non-negative with a positive sum.
    margin : float >= 0, default=0.1
    ema : float in [0, 1], default=0.9
        The smoothing factor of the stage-1 EMA (``gamma`` in the spec).
    floor : float in [0, 1 / n_objectives), default=0.05
    ref : array-like of shape (n_objectives,), optional

    Attributes
    ----------
    weights_ : ndarray of shape (n_objectives,)
        The weights to use for the next step.
    ref_ : ndarray or None
        The reference point (set by the first :meth:`update` by default).
    archive_ : ParetoArchive
    n_kept_ : int

    Notes
    -----
    With noisy step means (the tool bandit: 96 rollouts a step) the
    archive keeps the lucky step points and most later points are
    dominated by them or fall below the reference, so the weights move on
    few steps (see the user guide's ParetoPO section).

    Examples
    --------
    >>> from mvlearn_ext.moo import HVCGradientWeights
    >>> hw = HVCGradientWeights([0.5, 0.5], ema=0.0, floor=0.1, ref=[0.0, 0.0])
    >>> hw.update([0.8, 0.2]).weights_.round(3)
    array([0.2, 0.8])
    """

    def __init__(self, weights, *, margin=0.1, ema=0.9, floor=0.05, ref=None):
        self.weights = weights
        self.margin = margin
        self.ema = ema
        self.floor = floor
        self.ref = ref
        w = _check_vector(weights, "weights")
        if w.size < 2:
            raise ValueError(f"weights must have at least 2 entries, got {w.size}")
        if w.min() < 0 or w.sum() <= 0:
            raise ValueError("weights must be non-negative with a positive sum")
        self._margin = check_real(margin, "margin", low=0.0)
        self._ema = check_real(ema, "ema", low=0.0, high=1.0)
        self._floor = check_real(floor, "floor", low=0.0)
        if self._floor >= 1.0 / w.size:
            raise ValueError(f"floor must be < 1 / n_objectives = {1.0 / w.size}, got {floor}")
        self._avg = w / w.sum()
        self.weights_ = self._avg.copy()
        self.ref_ = None if ref is None else _check_vector(ref, "ref", w.size)
        self.archive_ = None if ref is None else ParetoArchive(ref=self.ref_, maximise=True)
        self.n_kept_ = 0

    def gradient(self, y):
        """``hvc_gradient(y, archive, ref)`` against the archive as it stands."""
        y = _check_vector(y, "y", self._avg.size)
        ref = y - self._margin if self.ref_ is None else self.ref_
        pts = np.empty((0, y.size)) if self.archive_ is None else self.archive_.points_
        return hvc_gradient(y, pts, ref)

    def update(self, y):
        """One step with the step's mean objective vector ``y``; returns ``self``."""
        y = _check_vector(y, "y", self._avg.size)
        if self.ref_ is None:
            self.ref_ = y - self._margin
            self.archive_ = ParetoArchive(ref=self.ref_, maximise=True)
        g = self.gradient(y)
        if g.sum() > 0:
            self._avg = self._ema * self._avg + (1.0 - self._ema) * g / g.sum()
            self.weights_ = _project_simplex_floor(self._avg, self._floor)
        else:
            self.n_kept_ += 1
        self.archive_.add(y)
        return self


def pareto_rank_advantages(R, scalar=None, *, beta=0.5, mode="paretopo", center=True, eps=1e-4):
    """Stage 2: dominance-aware advantages within one GRPO group (reconstruction).

    ``mode="paretopo"``: ``rho_i`` = 1-based Pareto rank (maximisation),
    ``A_i = N_rank - rho_i + 1 + beta (rhat_i - 0.5)`` with ``rhat`` the
    min-max normalised scalar reward of the group (0.5 if constant). For
    ``beta < 1`` a better rank always gets a strictly higher advantage;
    ties within a front are broken by ``rhat`` only. ``center=True``
    standardises the result within the group (order preserved).

    ``mode="rank_score"``: ``-rank`` tie-broken inside a front by normalised
    crowding distance, standardised. ``mode="dominance_count"``: number
    dominated minus number dominating, standardised.

    Parameters
    ----------
    R : array-like of shape (group_size, n_objectives)
        Reward vectors (maximised).
    scalar : array-like of shape (group_size,), optional
        Scalarised rewards for the tie-break (default: the row means).
    beta : float in [0, 1], default=0.5
    mode : {"paretopo", "rank_score", "dominance_count"}
    center : bool, default=True
    eps : float, default=1e-4

    Returns
    -------
    advantages : ndarray of shape (group_size,)

    Examples
    --------
    >>> from mvlearn_ext.moo import pareto_rank_advantages
    >>> R = [[1.0, 0.9], [1.0, 0.5], [0.0, 1.0], [0.0, 0.2]]
    >>> pareto_rank_advantages(R, center=False).round(3)
    array([3.25 , 2.132, 2.985, 0.75 ])
    """
    R = np.asarray(R, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] < 1:
        raise ValueError(f"R must be 2-D (group_size, n_objectives), got shape {R.shape}")
    if not np.isfinite(R).all():
        raise ValueError("R contains NaN or infinity")
    beta = check_real(beta, "beta", low=0.0, high=1.0)
    G = R.shape[0]
    s = R.mean(axis=1) if scalar is None else np.asarray(scalar, dtype=np.float64).reshape(-1)
    if s.shape != (G,):
        raise ValueError(f"scalar must have shape ({G},), got {s.shape}")
    ranks = pareto_rank(R, maximise=True)
    if mode == "paretopo":
        span = np.ptp(s)
        rhat = np.full(G, 0.5) if span == 0 else (s - s.min()) / span
        n_rank = ranks.max() + 1
        A = (n_rank - (ranks + 1) + 1) + beta * (rhat - 0.5)
        if not center:
            return A
    elif mode == "rank_score":
        A = -ranks.astype(np.float64)
        for f in np.unique(ranks):
            idx = np.flatnonzero(ranks == f)
            if idx.size > 1:
                cd = crowding_distance(R[idx])
                finite = np.isfinite(cd)
                top = cd[finite].max() if finite.any() else 0.0
                tb = np.where(finite, cd / top if top > 0 else 0.0, 1.0)
                A[idx] += 0.9 * tb  # < 1: never crosses a front
    elif mode == "dominance_count":
        ge = (R[:, None, :] >= R[None, :, :]).all(axis=2)
        gt = (R[:, None, :] > R[None, :, :]).any(axis=2)
        dom = ge & gt  # dom[i, j]: i dominates j
        A = dom.sum(axis=1) - dom.sum(axis=0).astype(np.float64)
    else:
        raise ValueError(
            f"mode must be 'paretopo', 'rank_score' or 'dominance_count', got {mode!r}"
        )
    sd = A.std(ddof=1) if G > 1 else 0.0
    if G < 2 or sd == 0:
        return np.zeros(G)
    return (A - A.mean()) / (sd + eps)


def _check_bandit(difficulties, max_calls):
    kap = np.asarray(difficulties, dtype=np.float64).reshape(-1)
    if kap.size < 1 or not np.isfinite(kap).all() or kap.min() < 0 or kap.max() > 1:
        raise ValueError(f"difficulties must be a non-empty list of values in [0, 1], got {kap}")
    return kap, check_count(max_calls, "max_calls", 1)


def tool_bandit_front(*, difficulties=(0.2, 0.5, 0.9), max_calls=4):
    """Exact (accuracy, efficiency) Pareto front of the tool bandit (oracle).

    A policy picks, for each difficulty ``kappa_t`` (prompts uniform over
    them), a distribution over ``n = 0..max_calls`` calls. Accuracy
    ``mean_t sum_n pi_t(n) (1 - kappa_t exp(-n / 2))`` and efficiency
    ``1 - mean calls / max_calls`` are linear in the policy, so the attainable
    set is a convex polytope (the average of the per-difficulty hulls) whose
    vertices are deterministic policies. Because ``1 - kappa exp(-n / 2)`` is
    concave in ``n``, its upper-right boundary is traced exactly by starting
    from zero calls everywhere and adding single calls in decreasing order of
    their accuracy gain per call (a merge of the per-difficulty slopes).
    Mixed policies reach every point of the segments between vertices.

    Parameters
    ----------
    difficulties : array-like of float in [0, 1], default=(0.2, 0.5, 0.9)
    max_calls : int >= 1, default=4

    Returns
    -------
    front : dict
        ``accuracy`` and ``efficiency`` of the vertices (efficiency
        increasing), ``calls`` (n_vertices, n_difficulties) the deterministic
        policy of each vertex, and ``hv``: the hypervolume of the attainable
        set against ``(0, 0)`` (area under the piecewise-linear front).

    Examples
    --------
    >>> from mvlearn_ext.moo._paretopo import tool_bandit_front
    >>> f = tool_bandit_front(difficulties=[0.5], max_calls=1)
    >>> f["accuracy"].round(4), f["efficiency"], round(f["hv"], 4)
    (array([0.6967, 0.5   ]), array([0., 1.]), 0.5984)
    """
    kap, M = _check_bandit(difficulties, max_calls)
    T = kap.size
    steps = []  # (accuracy gain per call, type)
    for t in range(T):
        for n in range(M):
            gain = kap[t] * (np.exp(-n / 2.0) - np.exp(-(n + 1) / 2.0)) / T
            if gain > 0:  # kappa = 0: extra calls buy nothing (dominated)
                steps.append((gain, t))
    steps.sort(key=lambda g: -g[0])  # stable; per type the gains already decrease
    calls = np.zeros(T, dtype=int)
    verts = [calls.copy()]
    for _, t in steps:
        calls[t] += 1
        verts.append(calls.copy())
    C = np.array(verts[::-1])  # efficiency increasing
    acc = (1.0 - kap[None, :] * np.exp(-C / 2.0)).mean(axis=1)
    eff = 1.0 - C.mean(axis=1) / M
    hv = float(eff[0] * acc[0] + np.sum(np.diff(eff) * (acc[1:] + acc[:-1]) / 2.0))
    return {"accuracy": acc, "efficiency": eff, "calls": C, "hv": hv}


def _front_gap(front, accuracy, efficiency):
    """Accuracy the front attains at this efficiency minus ``accuracy`` (>= 0)."""
    return float(np.interp(efficiency, front["efficiency"], front["accuracy"]) - accuracy)


def simulate_tool_bandit(
    method,
    *,
    n_steps=300,
    n_prompts=12,
    group_size=8,
    difficulties=(0.2, 0.5, 0.9),
    max_calls=4,
    weights=(0.5, 0.5),
    alpha=0.3,
    beta=0.5,
    stage1_steps=100,
    learning_rate=0.5,
    n_opt_scope="prompt",
    stage1="meta_reward",
    ref_margin=0.1,
    weight_ema=0.9,
    weight_floor=0.05,
    seed=None,
):
    """Tool-use bandit (spec §9.5): GRPO-trained softmax policy over call counts.

    A prompt of difficulty ``kappa`` is solved with probability
    ``1 - kappa exp(-n / 2)`` after ``n`` tool calls. Rewards are
    ``(success, r_tool)`` with ``r_tool = exp(-alpha |n - N_opt|)``. Methods:
    ``"fixed"`` (GRPO on ``w . r``), ``"stage1"`` (HV-guided meta-reward),
    ``"lu2025"`` (Lu et al.'s meta-reward), ``"paretopo"`` (stage 1 for
    ``stage1_steps`` steps, then Pareto-rank advantages). ``n_opt_scope``:
    ``"prompt"`` tracks ``N_opt`` per prompt type, ``"global"`` over all
    prompts.

    ``stage1`` picks the stage-1 rule of ``"stage1"`` and ``"paretopo"``:
    ``"meta_reward"`` (:class:`HVMetaReward`, spec §9.3) or
    ``"hvc_gradient"`` (:class:`HVCGradientWeights`, spec §9.4: GRPO on
    ``w_t . r`` with ``w_t`` adapted from the HVC gradient of the step's
    mean reward vector, starting at ``weights``; reference: the first
    step's mean minus ``ref_margin``; ``weight_ema`` and ``weight_floor``
    its EMA factor and floor). In ``"paretopo"`` stage 2 then breaks ties
    with the weights stage 1 ended with, held fixed.

    Returns
    -------
    result : dict
        ``accuracy`` and ``mean_calls`` of the final policy (exact
        expectations, prompts uniform over the difficulties),
        ``efficiency = 1 - mean_calls / max_calls``, ``hv``: the hypervolume
        of ``(accuracy, efficiency)`` against ``(0, 0)``, ``front_gap``: the
        accuracy the exact front (:func:`tool_bandit_front`) reaches at the
        same efficiency minus ``accuracy`` (0 on the front), ``policy``
        (n_difficulties, max_calls + 1) and ``weights_path`` (n_steps,
        n_objectives): the weights of each step's scalarisation (constant
        unless ``stage1="hvc_gradient"``).

    Notes
    -----
    A single point says where on the trade-off a method lands, not how good
    the trade-off is: compare methods by ``front_gap`` or by the front traced
    over their weights (:func:`sweep_tool_bandit`). In this toy the success
    model makes the exact front concave, so every point of it maximises some
    weighted sum of accuracy and efficiency, and the per-trajectory archive
    of stage 1 holds the ideal point ``(1, 1)`` as soon as one rollout
    succeeds with ``N_opt`` calls; from then on the meta-reward decays to a
    group constant that GRPO's standardisation cancels.
    """
    if method not in ("fixed", "stage1", "lu2025", "paretopo"):
        raise ValueError(
            f"method must be 'fixed', 'stage1', 'lu2025' or 'paretopo', got {method!r}"
        )
    kap, max_calls = _check_bandit(difficulties, max_calls)
    rng = np.random.default_rng(seed)
    T = kap.size
    n_arms = max_calls + 1
    calls = np.arange(n_arms, dtype=np.float64)
    p_success = 1.0 - kap[:, None] * np.exp(-calls[None, :] / 2.0)
    w = np.asarray(weights, dtype=np.float64)
    theta = np.zeros((T, n_arms))
    if n_opt_scope not in ("prompt", "global"):
        raise ValueError(f"n_opt_scope must be 'prompt' or 'global', got {n_opt_scope!r}")
    trackers = [OptimalCallsTracker() for _ in range(T if n_opt_scope == "prompt" else 1)]
    if stage1 not in ("meta_reward", "hvc_gradient"):
        raise ValueError(f"stage1 must be 'meta_reward' or 'hvc_gradient', got {stage1!r}")
    adaptive = stage1 == "hvc_gradient"
    if adaptive and method not in ("stage1", "paretopo"):
        raise ValueError(
            f"stage1='hvc_gradient' applies to method 'stage1' or 'paretopo', not {method!r}"
        )
    meta = HVMetaReward(w, gamma=0.9, mode="lu2025" if method == "lu2025" else "paretopo")
    hw = (
        HVCGradientWeights(w, margin=ref_margin, ema=weight_ema, floor=weight_floor)
        if adaptive
        else None
    )
    w_path = np.zeros((n_steps, w.size))
    for step in range(n_steps):
        w_step = hw.weights_ if adaptive else w
        w_path[step] = w_step
        pi = np.exp(theta - theta.max(axis=1, keepdims=True))
        pi /= pi.sum(axis=1, keepdims=True)
        types = rng.integers(T, size=n_prompts)
        u = rng.random((n_prompts, group_size))
        cdf = np.cumsum(pi[types], axis=1)
        n = (u[:, :, None] > cdf[:, None, :]).sum(axis=2).clip(max=max_calls)
        success = rng.random((n_prompts, group_size)) < p_success[types[:, None], n]
        if n_opt_scope == "prompt":
            n_opt = np.array([trackers[t].n_opt_ for t in types])[:, None]
        else:
            n_opt = trackers[0].n_opt_
        r_tool = np.exp(-alpha * np.abs(n - n_opt))
        R = np.stack([success.astype(np.float64), r_tool], axis=2)  # (B, G, 2)
        flat = R.reshape(-1, 2)
        if method == "fixed":
            A = grpo_advantages(R @ w)
        elif adaptive and (method == "stage1" or step < stage1_steps):
            A = grpo_advantages(R @ w_step)
            hw.update(flat.mean(axis=0))
        elif method in ("stage1", "lu2025") or step < stage1_steps:
            A = grpo_advantages(meta.scalarise(flat).reshape(n_prompts, group_size))
            meta.update(flat)
        else:
            A = np.stack(
                [pareto_rank_advantages(R[b], R[b] @ w_step, beta=beta) for b in range(n_prompts)]
            )
        if n_opt_scope == "prompt":
            for t in range(T):
                sel = types == t
                trackers[t].update(n[sel].ravel(), success[sel].ravel())
        else:
            trackers[0].update(n.ravel(), success.ravel())
        grad = np.zeros_like(theta)
        onehot = np.eye(n_arms)[n]  # (B, G, arms)
        score = onehot - pi[types][:, None, :]
        np.add.at(grad, types, (A[:, :, None] * score).mean(axis=1))
        theta += learning_rate * grad / max(1, n_prompts / T)
    pi = np.exp(theta - theta.max(axis=1, keepdims=True))
    pi /= pi.sum(axis=1, keepdims=True)
    acc = float((pi * p_success).sum(axis=1).mean())
    mean_calls = float((pi * calls).sum(axis=1).mean())
    eff = 1.0 - mean_calls / max_calls
    front = tool_bandit_front(difficulties=kap, max_calls=max_calls)
    return {
        "accuracy": acc,
        "mean_calls": mean_calls,
        "efficiency": eff,
        "hv": acc * eff,
        "front_gap": _front_gap(front, acc, eff),
        "policy": pi,
        "weights_path": w_path,
    }


def _sweep_args(accuracy_weights, seeds, kwargs, who):
    """Check the arguments of a weight sweep; return the weights and the seeds as arrays/lists."""
    w = np.asarray(accuracy_weights, dtype=np.float64).reshape(-1)
    if w.size < 1 or not np.isfinite(w).all() or w.min() < 0 or w.max() > 1:
        raise ValueError(f"accuracy_weights must be values in [0, 1], got {w}")
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must not be empty")
    for k in ("weights", "seed"):
        if k in kwargs:
            raise TypeError(f"{k} is set by {who}; do not pass it")
    return w, seeds


def sweep_tool_bandit(method, accuracy_weights, *, seeds=(0,), **kwargs):
    """Trade-off front traced by one method over its weights, seed by seed.

    Runs :func:`simulate_tool_bandit` with ``weights = (w, 1 - w)`` for every
    ``w`` in ``accuracy_weights`` and every seed (the same seeds for every
    method make the comparison paired). The front of a seed is the set of its
    attained ``(accuracy, efficiency)`` points; its quality is their joint
    hypervolume against ``(0, 0)``, at most the oracle's ``hv``.

    Parameters
    ----------
    method : str
        As in :func:`simulate_tool_bandit`.
    accuracy_weights : array-like of float in [0, 1]
        The grid of accuracy weights (fix it before looking at results).
    seeds : iterable of int, default=(0,)
    **kwargs
        Passed to :func:`simulate_tool_bandit` (not ``weights`` or ``seed``).

    Returns
    -------
    result : dict
        ``accuracy``, ``efficiency``, ``front_gap`` and ``point_hv``
        (``accuracy * efficiency``, the single point's hypervolume against
        ``(0, 0)``) of shape (n_seeds, n_weights), ``hv`` of shape
        (n_seeds,): the hypervolume of each seed's attained points,
        ``oracle_hv``, ``final_weights`` (n_seeds, n_weights, 2): the
        weights of the last step, and ``frac_weights_kept`` (n_seeds,
        n_weights): the fraction of steps whose weights equal the previous
        step's (1 for constant weights).
    """
    from mvlearn_ext.moo._pareto import hypervolume

    w, seeds = _sweep_args(accuracy_weights, seeds, kwargs, "sweep_tool_bandit")
    keys = ("accuracy", "efficiency", "front_gap")
    out = {k: np.zeros((len(seeds), w.size)) for k in keys}
    out["final_weights"] = np.zeros((len(seeds), w.size, 2))
    out["frac_weights_kept"] = np.zeros((len(seeds), w.size))
    for i, sd in enumerate(seeds):
        for j, wa in enumerate(w):
            r = simulate_tool_bandit(method, weights=(wa, 1.0 - wa), seed=sd, **kwargs)
            for k in keys:
                out[k][i, j] = r[k]
            W = r["weights_path"]
            out["final_weights"][i, j] = W[-1]
            out["frac_weights_kept"][i, j] = (
                float(np.mean(np.all(W[1:] == W[:-1], axis=1))) if len(W) > 1 else 1.0
            )
    out["point_hv"] = out["accuracy"] * out["efficiency"]
    pts = np.stack([out["accuracy"], out["efficiency"]], axis=2)
    out["hv"] = np.array([hypervolume(p, [0.0, 0.0], maximise=True) for p in pts])
    front = tool_bandit_front(
        difficulties=kwargs.get("difficulties", (0.2, 0.5, 0.9)),
        max_calls=kwargs.get("max_calls", 4),
    )
    out["oracle_hv"] = front["hv"]
    return out
