"""Tool-use bandit: a GRPO-trained policy over the number of tool calls (ParetoPO's setting).

A prompt of difficulty ``kappa`` is solved with probability
``1 - kappa exp(-n / 2)`` after ``n`` tool calls; the two objectives are
accuracy and the efficiency reward ``exp(-alpha |n - N_opt|)``. The exact
front is known (:func:`tool_bandit_front`), so a method's final policy is
scored by its distance to it. The ParetoPO pieces (hypervolume-guided
scalarisation, Pareto-rank advantages) are those of :mod:`mvlearn_ext.moo`.
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext.moo import (
    HVCGradientWeights,
    HVMetaReward,
    hypervolume,
    pareto_rank_advantages,
)
from mvlearn_ext.rl._advantages import group_advantages
from mvlearn_ext.utils._validation import check_count, check_real, real_array

__all__ = [
    "OptimalCallsTracker",
    "simulate_tool_bandit",
    "sweep_tool_bandit",
    "tool_bandit_front",
    "tool_efficiency_reward",
]


def tool_efficiency_reward(n_calls, n_opt, *, alpha=0.5):
    """``r_tool = exp(-alpha |N_call - N_opt|)``, in (0, 1].

    Parameters
    ----------
    n_calls : array-like of float
        Tool calls ``N_call`` of each trajectory (finite, ``>= 0``).
    n_opt : float
        The reference number of calls ``N_opt`` (``>= 0``; see
        :class:`OptimalCallsTracker`).
    alpha : float, default=0.5
        The decay rate (``>= 0``; 0 makes every reward 1).

    Returns
    -------
    reward : ndarray
        Of the shape of ``n_calls``.

    See Also
    --------
    OptimalCallsTracker : Tracks ``N_opt``.

    Examples
    --------
    >>> from mvlearn_ext.rl import tool_efficiency_reward
    >>> tool_efficiency_reward([0, 1, 3], 1, alpha=1.0).round(4)
    array([0.3679, 1.    , 0.1353])
    """
    n = real_array(n_calls, "n_calls", allow_empty=True)
    if (n < 0).any():
        raise ValueError("n_calls must be >= 0")
    n_opt = check_real(n_opt, "n_opt", low=0.0)
    alpha = check_real(alpha, "alpha", low=0.0)
    return np.exp(-alpha * np.abs(n - n_opt))


class OptimalCallsTracker:
    """``N_opt``: the fewest tool calls of any successful trajectory so far.

    Before the first success there is no minimum and :attr:`n_opt_` is the
    placeholder 0 (a project design choice: the summary does not say); from
    the first success on it never increases.

    See Also
    --------
    tool_efficiency_reward : The reward centred on ``N_opt``.

    Examples
    --------
    >>> from mvlearn_ext.rl import OptimalCallsTracker
    >>> tracker = OptimalCallsTracker()
    >>> tracker.update([3, 2, 4], [True, False, True])  # fewest calls of a success
    3.0
    >>> tracker.update([1], [True])
    1.0
    """

    def __init__(self):
        self.n_opt_ = 0.0
        self.has_success_ = False

    def update(self, n_calls, success):
        n = real_array(n_calls, "n_calls", allow_empty=True).reshape(-1)
        s = np.asarray(success, dtype=bool).reshape(-1)
        if n.shape != s.shape:
            raise ValueError("n_calls and success must have the same length")
        if s.any():
            m = float(n[s].min())
            self.n_opt_ = m if not self.has_success_ else min(self.n_opt_, m)
            self.has_success_ = True
        return self.n_opt_


def _check_bandit(difficulties, max_calls):
    kap = real_array(difficulties, "difficulties").reshape(-1)
    if kap.min() < 0 or kap.max() > 1:
        raise ValueError(f"difficulties must be values in [0, 1], got {kap}")
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

    See Also
    --------
    simulate_tool_bandit : A GRPO run on the same bandit.

    Examples
    --------
    >>> from mvlearn_ext.rl import tool_bandit_front
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
    random_state=None,
):
    """Tool-use bandit: a GRPO-trained softmax policy over the number of tool calls.

    A prompt of difficulty ``kappa`` is solved with probability
    ``1 - kappa exp(-n / 2)`` after ``n`` tool calls. Rewards are
    ``(success, r_tool)`` with ``r_tool = exp(-alpha |n - N_opt|)``. Methods:
    ``"fixed"`` (GRPO on ``w . r``), ``"stage1"`` (HV-guided meta-reward),
    ``"lu2025"`` (Lu et al.'s meta-reward), ``"paretopo"`` (stage 1 for
    ``stage1_steps`` steps, then Pareto-rank advantages). ``n_opt_scope``:
    ``"prompt"`` tracks ``N_opt`` per prompt type, ``"global"`` over all
    prompts.

    ``stage1`` picks the stage-1 rule of ``"stage1"`` and ``"paretopo"``:
    ``"meta_reward"`` (:class:`mvlearn_ext.moo.HVMetaReward`) or
    ``"hvc_gradient"`` (:class:`mvlearn_ext.moo.HVCGradientWeights`: GRPO on
    ``w_t . r`` with ``w_t`` adapted from the HVC gradient of the step's
    mean reward vector, starting at ``weights``; reference: the first
    step's mean minus ``ref_margin``; ``weight_ema`` and ``weight_floor``
    its EMA factor and floor). In ``"paretopo"`` stage 2 then breaks ties
    with the weights stage 1 ended with, held fixed.

    Parameters
    ----------
    method : {"fixed", "stage1", "lu2025", "paretopo"}
        The advantage rule (see above).
    n_steps : int, default=300
        GRPO steps.
    n_prompts : int, default=12
        Prompts per step, their difficulties drawn uniformly.
    group_size : int, default=8
        Rollouts per prompt (a GRPO group).
    difficulties : array-like of float in [0, 1], default=(0.2, 0.5, 0.9)
        The prompt types ``kappa``.
    max_calls : int >= 1, default=4
        The largest number of tool calls (the policy has ``max_calls + 1`` arms).
    weights : array-like of shape (2,), default=(0.5, 0.5)
        Weights of (success, ``r_tool``) in the scalarised reward, and the
        starting weights of ``stage1="hvc_gradient"``.
    alpha : float, default=0.3
        The decay rate of ``r_tool`` (see :func:`tool_efficiency_reward`).
    beta : float in [0, 1], default=0.5
        Tie-breaking weight of :func:`mvlearn_ext.moo.pareto_rank_advantages`
        in stage 2 of ``"paretopo"``.
    stage1_steps : int, default=100
        Steps of stage 1 in ``"paretopo"``.
    learning_rate : float, default=0.5
        Step size of the policy-gradient update of the softmax logits.
    n_opt_scope : {"prompt", "global"}, default="prompt"
        Where ``N_opt`` is tracked (see above).
    stage1 : {"meta_reward", "hvc_gradient"}, default="meta_reward"
        The stage-1 rule (see above).
    ref_margin : float >= 0, default=0.1
        The margin of the reference point of ``stage1="hvc_gradient"``.
    weight_ema : float in [0, 1], default=0.9
        The EMA factor of the weights of ``stage1="hvc_gradient"``.
    weight_floor : float, default=0.05
        The floor of every weight of ``stage1="hvc_gradient"``.
    random_state : int, Generator or None, default=None
        Seeds the prompts, the rollouts and their successes.

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

    See Also
    --------
    sweep_tool_bandit : Runs over several weights and seeds.
    tool_bandit_front : The exact front it is measured against.

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

    Examples
    --------
    >>> from mvlearn_ext.rl import simulate_tool_bandit
    >>> res = simulate_tool_bandit("fixed", n_steps=20, random_state=0)
    >>> 0.0 <= res["accuracy"] <= 1.0, 0.0 <= res["efficiency"] <= 1.0
    (True, True)
    """
    if method not in ("fixed", "stage1", "lu2025", "paretopo"):
        raise ValueError(
            f"method must be 'fixed', 'stage1', 'lu2025' or 'paretopo', got {method!r}"
        )
    kap, max_calls = _check_bandit(difficulties, max_calls)
    rng = np.random.default_rng(random_state)
    T = kap.size
    n_arms = max_calls + 1
    calls = np.arange(n_arms, dtype=np.float64)
    p_success = 1.0 - kap[:, None] * np.exp(-calls[None, :] / 2.0)
    w = real_array(weights, "weights", ndim=1)
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
            A = group_advantages(R @ w)
        elif adaptive and (method == "stage1" or step < stage1_steps):
            A = group_advantages(R @ w_step)
            hw.update(flat.mean(axis=0))
        elif method in ("stage1", "lu2025") or step < stage1_steps:
            A = group_advantages(meta.scalarise(flat).reshape(n_prompts, group_size))
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


def _sweep_args(accuracy_weights, random_states, kwargs, who):
    """Check the arguments of a weight sweep; return the weights and the random states."""
    w = real_array(accuracy_weights, "accuracy_weights").reshape(-1)
    if w.min() < 0 or w.max() > 1:
        raise ValueError(f"accuracy_weights must be values in [0, 1], got {w}")
    random_states = list(random_states)
    if not random_states:
        raise ValueError("random_states must not be empty")
    for k in ("weights", "random_state"):
        if k in kwargs:
            raise TypeError(f"{k} is set by {who}; do not pass it")
    return w, random_states


def sweep_tool_bandit(method, accuracy_weights, *, random_states=(0,), **kwargs):
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
    random_states : iterable of int, default=(0,)
        One run per random state and weight; the same random states for
        every method make the comparison paired.
    **kwargs
        Passed to :func:`simulate_tool_bandit` (not ``weights`` or ``random_state``).

    Returns
    -------
    result : dict
        ``accuracy``, ``efficiency``, ``front_gap`` and ``point_hv``
        (``accuracy * efficiency``, the single point's hypervolume against
        ``(0, 0)``) of shape (n_random_states, n_weights), ``hv`` of shape
        (n_random_states,): the hypervolume of each seed's attained points,
        ``oracle_hv``, ``final_weights`` (n_random_states, n_weights, 2): the
        weights of the last step, and ``frac_weights_kept`` (n_random_states,
        n_weights): the fraction of steps whose weights equal the previous
        step's (1 for constant weights).

    See Also
    --------
    simulate_tool_bandit : One run.

    Examples
    --------
    >>> from mvlearn_ext.rl import sweep_tool_bandit
    >>> res = sweep_tool_bandit("fixed", [0.3, 0.7], n_steps=10)
    >>> res["accuracy"].shape
    (1, 2)
    """
    w, random_states = _sweep_args(accuracy_weights, random_states, kwargs, "sweep_tool_bandit")
    keys = ("accuracy", "efficiency", "front_gap")
    out = {k: np.zeros((len(random_states), w.size)) for k in keys}
    out["final_weights"] = np.zeros((len(random_states), w.size, 2))
    out["frac_weights_kept"] = np.zeros((len(random_states), w.size))
    for i, sd in enumerate(random_states):
        for j, wa in enumerate(w):
            r = simulate_tool_bandit(method, weights=(wa, 1.0 - wa), random_state=sd, **kwargs)
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
