"""ParetoPO's numeric core: hypervolume-guided scalarisation and Pareto-rank advantages.

Reconstruction: ParetoPO (Li et al., "Towards Pareto-Optimal Tool-Integrated
Agents with Pareto Ranking Policy Optimization", ICML 2026) is known from its
abstract and a third-party summary only (stage 1: hypervolume-guided dynamic
scalarisation of the reward weights from the progress of the global Pareto
front; stage 2: Pareto-rank-based advantages within GRPO groups). The
formulas here are this package's reconstruction of those two stages,
including a stage-1 variant with adaptive weights from the gradient of a
hypervolume contribution (:class:`HVCGradientWeights`); constants
(``alpha``, ``gamma``, ``beta``, the variant's margin, EMA and floor) are
not the paper's.
Everything is framework-free NumPy: rewards in, advantages out.
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext.moo._pareto import ParetoArchive, crowding_distance, pareto_rank
from mvlearn_ext.utils._validation import check_bool, check_magnitude, check_real, real_array

__all__ = [
    "HVCGradientWeights",
    "HVMetaReward",
    "hvc_gradient",
    "pareto_rank_advantages",
]


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
        Non-negative weights of the objectives in the scalar reward.
    ref : array-like of shape (n_objectives,), default=zeros
        The archive's reference point.
    gamma : float in [0, 1], default=0.9
    mode : {"paretopo", "lu2025"}, default="paretopo"

    See Also
    --------
    HVCGradientWeights : Weights from the HVC gradient of batch means.
    pareto_rank_advantages : Stage 2, dominance-aware advantages.
    ParetoArchive : The archive it keeps.

    Notes
    -----
    With a binary task reward, any success with exactly ``N_opt`` calls has
    the reward vector ``(1, 1)``, the ideal point. Once one is archived the
    archive's HV is 1, every later gain is 0, the meta-reward decays to one
    constant per batch and GRPO's group standardisation cancels it: stage 1
    then trains like fixed weights (up to GRPO's ``eps``). This follows from
    the per-trajectory archive. An archive of
    per-step mean objective vectors (Lu et al.; :class:`HVCGradientWeights`)
    does not saturate this way.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.moo import HVMetaReward
    >>> meta = HVMetaReward([0.5, 0.5], ref=[0.0, 0.0])
    >>> R = np.array([[0.8, 0.2], [0.2, 0.8], [0.1, 0.1]])  # one batch of reward vectors
    >>> meta.scalarise(R).shape
    (3,)
    >>> _ = meta.update(R)
    """

    def __init__(self, weights, *, ref=None, gamma=0.9, mode="paretopo"):
        self.weights = weights
        self.ref = ref
        self.gamma = gamma
        self.mode = mode
        w = real_array(weights, "weights", ndim=1)
        if w.size < 1 or w.min() < 0:
            raise ValueError(
                f"weights must hold one non-negative weight per objective, got {w.tolist()}"
            )
        self._w = w
        self._gamma = check_real(gamma, "gamma", low=0.0, high=1.0)
        if mode not in ("paretopo", "lu2025"):
            raise ValueError(f"mode must be 'paretopo' or 'lu2025', got {mode!r}")
        r = np.zeros(w.size) if ref is None else real_array(ref, "ref", ndim=1)
        if r.shape != w.shape:
            raise ValueError(
                f"ref must have one entry per objective ({w.size}, as weights), got {r.size}"
            )
        self.archive_ = ParetoArchive(ref=r, maximise=True)
        self.ema_ = 0.0

    def _check(self, R):
        """``R`` as a finite float64 array of shape (n, n_objectives)."""
        R = real_array(R, "R", ndim=2, allow_empty=True)
        if R.shape[1] != self._w.size:
            raise ValueError(f"R must have shape (n, {self._w.size}), got {R.shape}")
        check_magnitude(R, "R")  # the hypervolume gains multiply coordinates
        return R

    def meta_rewards(self, R):
        """Per-trajectory ``r_pareto`` in [0.5, 2), without changing state.

        Parameters
        ----------
        R : array-like of shape (n, n_objectives)
            One batch of reward vectors (maximised); may have no rows.

        Returns
        -------
        r_pareto : ndarray of shape (n,)

        Raises
        ------
        TypeError
            If ``R`` is not numeric (strings of digits included).
        ValueError
            If ``R`` is not 2-D with one column per objective, or holds
            complex values, NaN, infinity or values too large to square.
        """
        R = self._check(R)
        return self._meta_rewards(R)

    def _meta_rewards(self, R):
        if R.shape[0] == 0:
            return np.zeros(0)
        if self.mode == "lu2025":
            g = self.archive_.gain(R.mean(axis=0))
            return np.full(R.shape[0], 0.5 + 1.5 * np.tanh(g))
        gains = self.archive_.gain(R)
        return 0.5 + 1.5 * np.tanh(self._gamma * self.ema_ + (1 - self._gamma) * gains)

    def scalarise(self, R):
        """``r_pareto * (w . r)`` for every row of ``R``.

        Parameters
        ----------
        R : array-like of shape (n, n_objectives)
            One batch of reward vectors (maximised); may have no rows.

        Returns
        -------
        rewards : ndarray of shape (n,)

        Raises
        ------
        TypeError
            If ``R`` is not numeric (strings of digits included).
        ValueError
            If ``R`` is not 2-D with one column per objective, or holds
            complex values, NaN, infinity or values too large to square.
        """
        R = self._check(R)
        return self._meta_rewards(R) * (R @ self._w)

    def update(self, R):
        """EMA step with the batch-mean gain, then archive the batch.

        Parameters
        ----------
        R : array-like of shape (n, n_objectives)
            One batch of reward vectors (maximised), with at least one row.

        Returns
        -------
        self : HVMetaReward

        Raises
        ------
        TypeError
            If ``R`` is not numeric (strings of digits included).
        ValueError
            If ``R`` is not 2-D with one column per objective, has no rows,
            or holds complex values, NaN, infinity or values too large to
            square.
        """
        R = self._check(R)
        if R.shape[0] == 0:
            raise ValueError("R has no rows; an update needs at least one reward vector")
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
    v = real_array(x, name)
    if v.ndim != 1:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {v.shape}")
    if size is not None and v.size != size:
        raise ValueError(f"{name} must have {size} entries, got {v.size}")
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

    See Also
    --------
    hv_contributions : The contributions themselves.
    HVCGradientWeights : Weights that follow this gradient.

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
    A = real_array(archive, "archive", allow_empty=True)
    if A.size == 0:
        A = np.empty((0, K))
    if A.ndim != 2 or A.shape[1] != K:
        raise ValueError(f"archive must have shape (n_archived, {K}), got {A.shape}")
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

    A reconstruction of "reward weights that adapt to the
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
        The smoothing factor of the stage-1 EMA.
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

    See Also
    --------
    HVMetaReward : The per-trajectory meta-reward of stage 1.
    hvc_gradient : The gradient it follows.

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
        Standardise ``mode="paretopo"``'s advantages within the group (the
        other modes always do).
    eps : float >= 0, default=1e-4
        Added to the standard deviation of the standardisation.

    Returns
    -------
    advantages : ndarray of shape (group_size,)

    See Also
    --------
    HVMetaReward : Stage 1, the hypervolume-guided meta-reward.
    mvlearn_ext.rl.group_advantages : Plain group-relative advantages.

    Examples
    --------
    >>> from mvlearn_ext.moo import pareto_rank_advantages
    >>> R = [[1.0, 0.9], [1.0, 0.5], [0.0, 1.0], [0.0, 0.2]]
    >>> pareto_rank_advantages(R, center=False).round(3)
    array([3.25 , 2.132, 2.985, 0.75 ])
    """
    R = real_array(R, "R")
    if R.ndim != 2:
        raise ValueError(f"R must be 2-D (group_size, n_objectives), got shape {R.shape}")
    check_magnitude(R, "R")  # row means, crowding spans
    beta = check_real(beta, "beta", low=0.0, high=1.0)
    center = check_bool(center, "center")
    eps = check_real(eps, "eps", low=0.0)
    G = R.shape[0]
    if scalar is None:
        s = R.mean(axis=1)
    else:
        s = real_array(scalar, "scalar").reshape(-1)
        check_magnitude(s, "scalar")  # the span max - min normalises it
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
