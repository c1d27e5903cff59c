"""Multi-hop tool bandit: a test bed where static scalarisation is weak (ParetoPO study).

The tool bandit of :func:`mvlearn_ext.rl.simulate_tool_bandit` has
a convex attainable set and rewards in [0, 1]: linear scalarisation reaches
every point of its front, and ParetoPO cannot beat it there. ParetoPO's
abstract claims better accuracy/efficiency trade-offs than static
scalarisation; that can only show where static scalarisation is weak. This
test bed has both weaknesses, by design:

* **A non-convex front.** A question needs ``hops`` facts; each tool call
  retrieves a new fact with probability ``retrieve``; the answer is right
  for sure once ``hops`` facts are in, and a guess is right with
  probability ``guess`` otherwise. So ``p(n) = guess + (1 - guess)
  P(Binomial(n, retrieve) >= hops)`` is S-shaped in the number of calls
  ``n``. The policy is unimodal with one parameter: ``pi_mu(n)`` is
  proportional to ``exp(-(n - mu)^2 / (2 width^2))`` on ``n = 0..max_calls``
  (it cannot mix distant call counts, like a model whose call budget is one
  number). Its expected (accuracy, efficiency) point, efficiency
  ``1 - E n / max_calls``, traces a curve as ``mu`` moves; both coordinates
  are monotone in ``mu`` (the family has monotone likelihood ratio and
  ``p`` is increasing), so every policy is Pareto-optimal and the whole
  curve is the exact front (:func:`hop_bandit_front`, a dense sweep over
  ``mu``). Where ``p`` is convex (few calls) the curve bends below its
  convex hull: those points maximise no weighted sum ``w . (accuracy,
  efficiency)``, so no fixed-weight scalarisation can settle there.
* **Objectives on very different and drifting scales.** The training
  rewards are raw: ``success`` in {0, 1} and the calls saved, priced at
  ``cost_scale * drift^(t / (n_steps - 1))`` per call at step ``t``
  (``cost_scale * max_calls`` = 60 times the accuracy reward at the start
  by default, 4 times that at the end). Methods see only the raw rewards
  (``normalise=True``, a diagnostic, divides them by the starting scales).
  Evaluation is on the unit scales (accuracy, efficiency).

Because every policy is on the front, the question is only where a method
lands and, over a sweep of its weights, how much of the front its final
policies cover: the hypervolume of the points of a sweep against (0, 0),
relative to the exact front's (:func:`sweep_hop_bandit`).
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext.moo import HVCGradientWeights, HVMetaReward, hypervolume
from mvlearn_ext.rl._advantages import group_advantages
from mvlearn_ext.rl._tool_bandit import _sweep_args
from mvlearn_ext.utils._validation import check_count, check_real, integer_array, real_array

__all__ = [
    "hop_bandit_front",
    "hop_success",
    "hull_gap",
    "simulate_hop_bandit",
    "sweep_hop_bandit",
]

_METHODS = ("fixed", "fixed_norm", "stage1", "stage2", "paretopo", "lu2025")


def hop_success(n_calls, *, hops=3, retrieve=0.5, guess=0.1):
    """``p(n) = guess + (1 - guess) P(Binomial(n, retrieve) >= hops)``.

    Parameters
    ----------
    n_calls : array-like of int
        Numbers of tool calls ``n`` (non-negative).
    hops : int, default=3
        Facts a question needs (at least 1).
    retrieve : float in [0, 1], default=0.5
        Probability that a tool call retrieves a new fact.
    guess : float in [0, 1], default=0.1
        Probability that an answer with too few facts is right.

    Returns
    -------
    p : ndarray
        The success probability of each ``n``, of the shape of ``n_calls``.

    See Also
    --------
    hop_bandit_front : The trade-off front built on it.

    Examples
    --------
    >>> from mvlearn_ext.rl import hop_success
    >>> hop_success([0, 2, 3, 4], hops=3, retrieve=0.5, guess=0.0)
    array([0.    , 0.    , 0.125 , 0.3125])
    """
    from scipy.stats import binom

    n = integer_array(n_calls, "n_calls", low=0, allow_empty=True)
    hops = check_count(hops, "hops", 1)
    retrieve = check_real(retrieve, "retrieve", low=0.0, high=1.0)
    guess = check_real(guess, "guess", low=0.0, high=1.0)
    return guess + (1.0 - guess) * binom.sf(hops - 1, n, retrieve)


def _policy(mu, max_calls, width):
    """Rows ``pi_mu(n)``, ``n = 0..max_calls``, for every ``mu``."""
    n = np.arange(max_calls + 1, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64).reshape(-1, 1)
    logit = -((n[None, :] - mu) ** 2) / (2.0 * width**2)
    pi = np.exp(logit - logit.max(axis=1, keepdims=True))
    return pi / pi.sum(axis=1, keepdims=True)


def _rank_advantages_batch(R, S, beta, eps=1e-4):
    """:func:`pareto_rank_advantages` (``mode="paretopo"``, centred) for many groups at once.

    ``R`` (n_groups, group_size, n_objectives), ``S`` (n_groups, group_size)
    the tie-break scalars. The same formula, vectorised over the groups (a
    test checks it against the per-group function); ranks by peeling the
    non-dominated fronts of each group.
    """
    B, G, _ = R.shape
    ge = (R[:, :, None, :] >= R[:, None, :, :]).all(axis=3)
    gt = (R[:, :, None, :] > R[:, None, :, :]).any(axis=3)
    dom = ge & gt  # dom[b, i, j]: i dominates j
    ranks = np.full((B, G), -1)
    left = np.ones((B, G), dtype=bool)
    for f in range(G):
        if not left.any():
            break
        dominated = (dom & left[:, :, None]).any(axis=1)
        front = left & ~dominated
        ranks[front] = f
        left &= ~front
    span = np.ptp(S, axis=1, keepdims=True)
    rhat = np.where(span == 0, 0.5, (S - S.min(axis=1, keepdims=True)) / np.where(span, span, 1))
    A = ranks.max(axis=1, keepdims=True) + 1 - ranks + beta * (rhat - 0.5)
    sd = A.std(axis=1, ddof=1, keepdims=True)
    out = (A - A.mean(axis=1, keepdims=True)) / (sd + eps)
    return np.where(sd == 0, 0.0, out)


def _check_bed(max_calls, hops, retrieve, guess, width):
    max_calls = check_count(max_calls, "max_calls", 1)
    width = check_real(width, "width", low=0.0)
    if width <= 0:
        raise ValueError("width must be > 0")
    p = hop_success(np.arange(max_calls + 1), hops=hops, retrieve=retrieve, guess=guess)
    return max_calls, width, p


def hop_bandit_front(*, max_calls=12, hops=3, retrieve=0.5, guess=0.1, width=1.0, n_grid=20001):
    """Exact (accuracy, efficiency) front of the multi-hop bandit (dense sweep over ``mu``).

    The attainable set is the curve ``mu -> (A(mu), E(mu))``; ``A`` rises and
    ``E`` falls with ``mu``, so the curve is its own Pareto front. It is
    swept on ``mu`` in ``[-8 width, max_calls + 8 width]``; at the ends the
    policy puts less than ``exp(-8.5)`` (2e-4) on any arm but 0 or
    ``max_calls``, so the part of the front's HV beyond the sweep (towards
    the limit points, pure 0 and pure ``max_calls`` calls) is below 1e-5.

    Parameters
    ----------
    max_calls : int, default=12
        The largest number of tool calls (the arms are ``n = 0..max_calls``).
    hops : int, default=3
        Facts a question needs (at least 1).
    retrieve : float in [0, 1], default=0.5
        Probability that a tool call retrieves a new fact.
    guess : float in [0, 1], default=0.1
        Probability that an answer with too few facts is right.
    width : float, default=1.0
        Width of the policy ``pi_mu(n) ∝ exp(-(n - mu)^2 / (2 width^2))`` (> 0).
    n_grid : int, default=20001
        Number of values of ``mu`` swept (at least 3).

    Returns
    -------
    front : dict
        ``mu``, ``accuracy``, ``efficiency`` (efficiency increasing),
        ``hv``: the hypervolume of the curve against ``(0, 0)`` (area under
        it, trapezoids), ``hv_points``: the hypervolume of the swept points
        themselves (a lower bound, short of ``hv`` by half the sum of
        ``d(efficiency) d(accuracy)`` over the grid steps, 5e-5 at the
        default grid), ``supported``: a mask of the points on the curve's
        upper convex hull (the only points that maximise some weighted sum
        with non-negative weights), ``supported_hv``: the hypervolume of
        the supported points, the most that any set of linear-scalarisation
        optima can cover, and ``hull_accuracy``, ``hull_efficiency``: the
        vertices of that hull (efficiency increasing).

    See Also
    --------
    simulate_hop_bandit : A GRPO run on the same bandit.
    hull_gap : The distance of a point below the front's hull.

    Examples
    --------
    >>> from mvlearn_ext.rl import hop_bandit_front
    >>> f = hop_bandit_front(n_grid=2001)
    >>> round(f["hv"], 3), round(f["supported_hv"] / f["hv"], 3)
    (0.59, 0.763)
    """
    max_calls, width, p = _check_bed(max_calls, hops, retrieve, guess, width)
    n_grid = check_count(n_grid, "n_grid", 3)
    mu = np.linspace(max_calls + 8 * width, -8 * width, n_grid)  # efficiency increasing
    pi = _policy(mu, max_calls, width)
    acc = pi @ p
    eff = 1.0 - pi @ np.arange(max_calls + 1) / max_calls
    hv = float(eff[0] * acc[0] + np.sum(np.diff(eff) * (acc[1:] + acc[:-1]) / 2.0))
    hv_points = hypervolume(np.column_stack([acc, eff]), [0.0, 0.0], maximise=True)
    # upper convex hull in the (efficiency, accuracy) plane (monotone chain)
    hull = []
    for i in range(n_grid):
        while len(hull) >= 2:
            o, a = hull[-2], hull[-1]
            cross = (eff[a] - eff[o]) * (acc[i] - acc[o]) - (acc[a] - acc[o]) * (eff[i] - eff[o])
            if cross >= 0:
                hull.pop()
            else:
                break
        hull.append(i)
    hull = np.array(hull)
    on_hull = np.interp(eff, eff[hull], acc[hull])
    supported = acc >= on_hull - 1e-12
    sup = np.column_stack([acc[supported], eff[supported]])
    return {
        "mu": mu,
        "accuracy": acc,
        "efficiency": eff,
        "hv": hv,
        "hv_points": hv_points,
        "supported": supported,
        "supported_hv": hypervolume(sup, [0.0, 0.0], maximise=True),
        "hull_accuracy": acc[hull],
        "hull_efficiency": eff[hull],
    }


def hull_gap(front, accuracy, efficiency):
    """Accuracy of the front's upper convex hull at ``efficiency`` minus ``accuracy``.

    For a point of the curve, a positive gap means that no weighted sum with
    non-negative weights is maximised there (an unsupported point).

    Parameters
    ----------
    front : dict
        The result of :func:`hop_bandit_front` (its ``hull_efficiency`` and
        ``hull_accuracy``).
    accuracy : array-like of float
        Accuracies of the points.
    efficiency : array-like of float
        Efficiencies of the points, of the shape of ``accuracy``.

    Returns
    -------
    gap : ndarray
        Of the shape of ``accuracy`` (the hull is interpolated linearly).

    See Also
    --------
    hop_bandit_front : The front.

    Examples
    --------
    >>> from mvlearn_ext.rl import hop_bandit_front, hull_gap
    >>> front = hop_bandit_front(n_grid=2001)
    >>> bool(hull_gap(front, 0.0, 0.5) > 0)  # zero accuracy is below the front
    True
    """
    a = real_array(accuracy, "accuracy", allow_empty=True)
    e = real_array(efficiency, "efficiency", allow_empty=True)
    return np.interp(e, front["hull_efficiency"], front["hull_accuracy"]) - a


def simulate_hop_bandit(
    method,
    *,
    weights=(0.5, 0.5),
    n_steps=300,
    n_prompts=12,
    group_size=8,
    max_calls=12,
    hops=3,
    retrieve=0.5,
    guess=0.1,
    width=1.0,
    mu0=6.0,
    cost_scale=5.0,
    drift=4.0,
    learning_rate=0.2,
    beta=0.5,
    stage1_steps=100,
    stage1="meta_reward",
    ref_margin=0.1,
    weight_ema=0.9,
    weight_floor=0.05,
    normalise=False,
    random_state=None,
):
    """GRPO on the multi-hop bandit with raw, drifting reward scales (reconstruction study).

    Each step draws ``n_prompts`` groups of ``group_size`` rollouts
    ``n ~ pi_mu``, a success with probability ``p(n)``, and the raw reward
    vector ``(success, c_t (max_calls - n))`` with the price
    ``c_t = cost_scale * drift^(t / (n_steps - 1))``. The advantages ``A``
    of the method give the policy-gradient step ``mu += learning_rate *
    mean(A (n - E_pi n)) / width^2`` (the score of ``pi_mu`` in ``mu``).

    Methods (``w = weights``):

    * ``"fixed"``: GRPO on ``w . r`` (raw rewards).
    * ``"fixed_norm"``: GRPO on ``w . (r / (1, cost_scale max_calls))``:
      scales normalised once, at the start (the drift then shifts the
      effective weights towards efficiency by a factor ``drift``).
    * ``"stage1"``: ParetoPO stage 1 alone for all steps: the
      per-trajectory HV meta-reward (:class:`HVMetaReward`, reference
      ``(0, 0)``) on ``w . r``, or, with ``stage1="hvc_gradient"``,
      GRPO on ``w_t . r`` with ``w_t`` from :class:`HVCGradientWeights`
      fed the step's mean raw reward vector.
    * ``"stage2"``: ParetoPO stage 2 alone from the first step:
      :func:`~mvlearn_ext.moo.pareto_rank_advantages` per group (batched),
      ties broken by ``w . r``.
    * ``"paretopo"``: stage 1 for ``stage1_steps`` steps, then stage 2
      (ties broken by the weights stage 1 ended with).
    * ``"lu2025"``: the meta-reward of Lu et al. 2025 (one multiplier per
      batch from the batch-mean vector's HV contribution).

    ``normalise=True`` gives every method the rewards divided by
    ``(1, cost_scale max_calls)`` (the start's scales; ``"fixed"`` then
    equals ``"fixed_norm"``), a diagnostic that separates the reward scales
    from the shape of the front.

    Parameters
    ----------
    method : {"fixed", "fixed_norm", "stage1", "stage2", "paretopo", "lu2025"}
        The advantage rule (see above).
    weights : array-like of shape (2,), default=(0.5, 0.5)
        ``w``, the weights of (success, calls saved): non-negative, with a
        positive sum.
    n_steps : int, default=300
        GRPO steps ``t = 0..n_steps - 1``.
    n_prompts : int, default=12
        Groups per step.
    group_size : int, default=8
        Rollouts per group (at least 2).
    max_calls : int, default=12
        The largest number of tool calls (the arms are ``n = 0..max_calls``).
    hops : int, default=3
        Facts a question needs (at least 1).
    retrieve : float in [0, 1], default=0.5
        Probability that a tool call retrieves a new fact.
    guess : float in [0, 1], default=0.1
        Probability that an answer with too few facts is right.
    width : float, default=1.0
        Width of the policy ``pi_mu(n) ∝ exp(-(n - mu)^2 / (2 width^2))`` (> 0).
    mu0 : float, default=6.0
        The initial policy centre ``mu``.
    cost_scale : float, default=5.0
        The price of a call saved at the first step (``>= 0``).
    drift : float, default=4.0
        The factor by which the price grows from the first step to the last
        (``> 0``; 1: no drift).
    learning_rate : float, default=0.2
        Step size of the policy-gradient update of ``mu``.
    beta : float in [0, 1], default=0.5
        Tie-breaking weight of the Pareto-rank advantages of stage 2.
    stage1_steps : int, default=100
        Steps of stage 1 in ``"paretopo"``.
    stage1 : {"meta_reward", "hvc_gradient"}, default="meta_reward"
        The stage-1 rule of ``"stage1"`` and ``"paretopo"`` (see above).
    ref_margin : float >= 0, default=0.1
        The margin of the reference point of ``stage1="hvc_gradient"``.
    weight_ema : float in [0, 1], default=0.9
        The EMA factor of the weights of ``stage1="hvc_gradient"``.
    weight_floor : float, default=0.05
        The floor of every weight of ``stage1="hvc_gradient"``.
    normalise : bool, default=False
        Divide the rewards of every method by the starting scales (see above).
    random_state : int, Generator or None, default=None
        Seeds the rollouts and their successes.

    Returns
    -------
    result : dict
        ``mu`` (final), ``accuracy`` and ``efficiency`` of the final policy
        (exact expectations; efficiency ``1 - E n / max_calls``),
        ``mean_calls``, ``hv`` (``accuracy * efficiency``) and
        ``weights_path`` (n_steps, 2): the weights of each step's
        scalarisation.

    See Also
    --------
    sweep_hop_bandit : Runs over several weights and seeds.
    hop_bandit_front : The exact front it is measured against.

    Examples
    --------
    >>> from mvlearn_ext.rl import simulate_hop_bandit
    >>> res = simulate_hop_bandit("fixed", n_steps=20, random_state=0)
    >>> 0.0 <= res["accuracy"] <= 1.0
    True
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    if stage1 not in ("meta_reward", "hvc_gradient"):
        raise ValueError(f"stage1 must be 'meta_reward' or 'hvc_gradient', got {stage1!r}")
    max_calls, width, p = _check_bed(max_calls, hops, retrieve, guess, width)
    n_steps = check_count(n_steps, "n_steps", 1)
    n_prompts = check_count(n_prompts, "n_prompts", 1)
    group_size = check_count(group_size, "group_size", 2)
    stage1_steps = check_count(stage1_steps, "stage1_steps", 0)
    mu = check_real(mu0, "mu0")
    cost_scale = check_real(cost_scale, "cost_scale", low=0.0)
    drift = check_real(drift, "drift", low=0.0)
    if drift <= 0:
        raise ValueError("drift must be > 0")
    lr = check_real(learning_rate, "learning_rate", low=0.0)
    w = real_array(weights, "weights").reshape(-1)
    if w.shape != (2,) or w.min() < 0 or w.sum() <= 0:
        raise ValueError(f"weights must be 2 non-negative numbers with a positive sum, got {w}")
    adaptive = stage1 == "hvc_gradient" and method in ("stage1", "paretopo")
    meta = HVMetaReward(w, gamma=0.9, mode="lu2025" if method == "lu2025" else "paretopo")
    hw = (
        HVCGradientWeights(w, margin=ref_margin, ema=weight_ema, floor=weight_floor)
        if adaptive
        else None
    )
    norm = np.array([1.0, cost_scale * max_calls]) if cost_scale > 0 else np.ones(2)
    rng = np.random.default_rng(random_state)
    arms = np.arange(max_calls + 1)
    w_path = np.zeros((n_steps, 2))
    for t in range(n_steps):
        w_t = hw.weights_ if adaptive else w
        w_path[t] = w_t
        pi = _policy(mu, max_calls, width)[0]
        n = rng.choice(arms, size=(n_prompts, group_size), p=pi)
        success = (rng.random(n.shape) < p[n]).astype(np.float64)
        price = cost_scale * drift ** (t / max(n_steps - 1, 1))
        R = np.stack([success, price * (max_calls - n)], axis=2)  # (B, G, 2) raw
        if normalise:
            R = R / norm
        flat = R.reshape(-1, 2)
        in_stage1 = method == "stage1" or (method == "paretopo" and t < stage1_steps)
        if method == "fixed":
            A = group_advantages(R @ w)
        elif method == "fixed_norm":
            A = group_advantages((R if normalise else R / norm) @ w)
        elif in_stage1 and adaptive:
            A = group_advantages(R @ w_t)
            hw.update(flat.mean(axis=0))
        elif in_stage1 or method == "lu2025":
            A = group_advantages(meta.scalarise(flat).reshape(n_prompts, group_size))
            meta.update(flat)
        else:  # stage 2 (alone, or after stage 1)
            A = _rank_advantages_batch(R, R @ w_t, beta)
        score = (n - pi @ arms) / width**2
        mu += lr * float(np.mean(A * score))
    pi = _policy(mu, max_calls, width)[0]
    acc = float(pi @ p)
    mean_calls = float(pi @ arms)
    eff = 1.0 - mean_calls / max_calls
    return {
        "mu": mu,
        "accuracy": acc,
        "efficiency": eff,
        "mean_calls": mean_calls,
        "hv": acc * eff,
        "weights_path": w_path,
    }


def sweep_hop_bandit(method, accuracy_weights, *, random_states=(0,), **kwargs):
    """Front traced by one method over its weights, seed by seed (see :func:`simulate_hop_bandit`).

    Runs ``weights = (w, 1 - w)`` for every ``w`` and seed. The front of a
    seed is its set of final (accuracy, efficiency) points; its quality is
    their joint hypervolume against ``(0, 0)``, reported also relative to
    the exact front's (``hv_ratio``, at most 1).

    Parameters
    ----------
    method : str
        A method of :func:`simulate_hop_bandit`.
    accuracy_weights : array-like of float in [0, 1]
        The grid of accuracy weights ``w``.
    random_states : iterable of int, default=(0,)
        One run per random state and weight; the same random states for
        every method make the comparison paired.
    **kwargs : dict
        Passed to :func:`simulate_hop_bandit` (not ``weights`` or
        ``random_state``); the test-bed arguments (``max_calls``, ``hops``,
        ``retrieve``, ``guess``, ``width``) also set the exact front.

    Returns
    -------
    result : dict
        ``accuracy``, ``efficiency``, ``mu`` of shape (n_random_states, n_weights),
        ``hv`` and ``hv_ratio`` of shape (n_random_states,), ``front_hv`` and
        ``supported_hv`` (the exact front's, and its supported part's).

    See Also
    --------
    simulate_hop_bandit : One run.

    Examples
    --------
    >>> from mvlearn_ext.rl import sweep_hop_bandit
    >>> res = sweep_hop_bandit("fixed", [0.3, 0.7], n_steps=10)
    >>> res["accuracy"].shape
    (1, 2)
    """
    w, random_states = _sweep_args(accuracy_weights, random_states, kwargs, "sweep_hop_bandit")
    out = {k: np.zeros((len(random_states), w.size)) for k in ("accuracy", "efficiency", "mu")}
    for i, sd in enumerate(random_states):
        for j, wa in enumerate(w):
            r = simulate_hop_bandit(method, weights=(wa, 1.0 - wa), random_state=sd, **kwargs)
            for k in ("accuracy", "efficiency", "mu"):
                out[k][i, j] = r[k]
    pts = np.stack([out["accuracy"], out["efficiency"]], axis=2)
    out["hv"] = np.array([hypervolume(q, [0.0, 0.0], maximise=True) for q in pts])
    bed = {
        k: kwargs[k] for k in ("max_calls", "hops", "retrieve", "guess", "width") if k in kwargs
    }
    front = hop_bandit_front(**bed)
    out["front_hv"] = front["hv"]
    out["supported_hv"] = front["supported_hv"]
    out["hv_ratio"] = out["hv"] / front["hv"]
    return out
