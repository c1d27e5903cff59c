"""ControlG: feedback-controlled scheduling of single-objective training blocks.

Reconstruction: ControlG (Grover, Vasiloudis, Xie, Lu, Song & Faloutsos,
arXiv 2602.05036) is known from its abstract and a short third-party
summary only: sensing of per-objective difficulty and pairwise antagonism, a
Pareto-aware log-hypervolume planner that sets target budgets, and a
deficit-tracking PID controller that assigns discrete single-objective
blocks, with an auditable schedule. The formulas below are this package's
reconstruction, not the paper's:

* difficulty ``d_k = L_k(t) / L_k(0)``; antagonism ``A_kl = max(0, -cos(g_k, g_l))``
  (EMA-smoothed);
* planner ``b* = argmax_{b in simplex, b >= b_min} sum_k log(eps + delta_k(b))`` with
  predicted gains ``delta_k(b) = d_k b_k - kappa sum_{l != k} A_kl d_l b_l``;
  without antagonism this is water-filling ``b_k = max(b_min, nu - eps/d_k)``;
* executor: deficits ``e_k(t) = b_k t - n_k(t)``, control
  ``u_k = K_p e_k + K_i sum e_k + K_d (e_k(t) - e_k(t-1))`` with a clamped
  integral; the next block trains ``argmax_k u_k`` (ties to the lowest index).

Everything is NumPy; losses and gradients may come from any framework
(anything :func:`numpy.asarray` accepts, or objects with
``.detach().cpu().numpy()``, such as torch tensors).
"""

from __future__ import annotations

import json
import numbers

import numpy as np
from scipy.optimize import linprog

from mvlearn_ext.moo._simplex import project_simplex_1d
from mvlearn_ext.utils._validation import check_real

__all__ = [
    "ControlGScheduler",
    "PIDController",
    "antagonism_matrix",
    "plan_budgets",
    "plan_targets",
    "replay_schedule",
    "simulate_block_training",
]


def _to_numpy(x, name):
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric, got {type(x).__name__}") from exc
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return arr


def antagonism_matrix(grads, *, previous=None, smoothing=0.0):
    """Pairwise antagonism ``A_kl = max(0, -cos(g_k, g_l))``, EMA-smoothed.

    Parameters
    ----------
    grads : array-like of shape (n_objectives, n_params)
        One gradient (on the shared parameters) per objective.
    previous : array-like of shape (n_objectives, n_objectives), optional
        The previous estimate, for the EMA.
    smoothing : float in [0, 1), default=0.0
        ``A <- smoothing * previous + (1 - smoothing) * A_now``.

    Returns
    -------
    A : ndarray of shape (n_objectives, n_objectives)
        Symmetric, zero diagonal, entries in [0, 1].

    See Also
    --------
    plan_budgets : Takes the antagonism into account.

    Examples
    --------
    >>> from mvlearn_ext.moo.controlg import antagonism_matrix
    >>> A = antagonism_matrix([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    >>> float(A[0, 1]), float(A[0, 2]) == 0  # opposed, then orthogonal gradients
    (1.0, True)
    """
    G = _to_numpy(grads, "grads")
    if G.ndim != 2:
        raise ValueError(f"grads must be 2-D (n_objectives, n_params), got shape {G.shape}")
    smoothing = check_real(smoothing, "smoothing", low=0.0, high=1.0)
    norms = np.linalg.norm(G, axis=1)
    safe = np.where(norms > 0, norms, 1.0)
    cos = (G @ G.T) / np.outer(safe, safe)
    cos[norms == 0, :] = 0.0
    cos[:, norms == 0] = 0.0
    A = np.clip(-cos, 0.0, 1.0)
    np.fill_diagonal(A, 0.0)
    if previous is not None:
        P = _to_numpy(previous, "previous")
        if P.shape != A.shape:
            raise ValueError(f"previous must have shape {A.shape}, got {P.shape}")
        A = smoothing * P + (1 - smoothing) * A
    return A


def _waterfill(d, eps, b_min):
    """argmax sum log(eps + d_k b_k) over {b >= b_min, sum b = 1}, exactly."""
    K = d.size
    if eps == 0:
        return np.full(K, 1.0 / K)
    # b_k(nu) = max(b_min, nu - eps/d_k) is increasing piecewise linear in nu
    thr = eps / d
    free = 1.0 - K * b_min
    if free <= 1e-15:
        return np.full(K, b_min)
    # breakpoints nu = thr_k + b_min; sum over active set: sum(nu - thr_k) + b_min (K - |act|) = 1
    order = np.argsort(thr)
    ts = thr[order]
    for m in range(K, 0, -1):
        act = ts[:m]
        nu = (1.0 - b_min * (K - m) + act.sum()) / m
        if nu - ts[m - 1] >= b_min - 1e-15 and (m == K or nu - ts[m] <= b_min + 1e-15):
            break
    return np.maximum(b_min, nu - thr)


def plan_budgets(difficulty, antagonism=None, *, eps=0.1, kappa=1.0, b_min=0.0, max_iter=2000):
    """Log-hypervolume budget planner (reconstruction).

    Maximises ``sum_k log(eps + delta_k(b))`` over the shares ``b`` (on the
    simplex, each ``>= b_min``) with predicted gains ``delta_k(b) = d_k b_k
    - kappa sum_{l != k} A_kl d_l b_l``: the log-HV of the predicted-gain
    point, a proportional-fair (Nash) allocation. Without antagonism the
    solution is the closed-form water-filling ``b_k = max(b_min, nu -
    eps/d_k)``; with antagonism it is found by projected gradient ascent from
    a strictly feasible start (found by a linear programme).

    Parameters
    ----------
    difficulty : array-like of shape (K,)
        ``d_k > 0``, e.g. ``L_k(t) / L_k(0)``.
    antagonism : array-like of shape (K, K), optional
        Non-negative; the diagonal is ignored.
    eps : float, default=0.1
        ``eps >= 0``; as ``eps -> 0`` the plan tends to uniform shares.
    kappa : float, default=1.0
        Weight of antagonism in the predicted gains.
    b_min : float, default=0.0
        Floor on every share, ``0 <= b_min <= 1/K``.
    max_iter : int, default=2000

    Returns
    -------
    budgets : ndarray of shape (K,)

    Raises
    ------
    ValueError
        If no share vector keeps every ``eps + delta_k(b) > 0`` (antagonism
        too strong for ``eps``).

    See Also
    --------
    plan_targets : The continuous planner of target values.
    antagonism_matrix : The antagonism it takes.

    Examples
    --------
    >>> from mvlearn_ext.moo.controlg import plan_budgets
    >>> plan_budgets([1.0, 1.0, 1.0])
    array([0.33333333, 0.33333333, 0.33333333])
    >>> plan_budgets([1.0, 0.5], eps=0.2).round(3)  # harder objective (d=1) gets more
    array([0.6, 0.4])
    """
    d = _to_numpy(difficulty, "difficulty").reshape(-1)
    K = d.size
    if K < 1:
        raise ValueError("difficulty must have at least one entry")
    if d.min() <= 0:
        raise ValueError("difficulty must be > 0 for every objective")
    eps = check_real(eps, "eps", low=0.0)
    kappa = check_real(kappa, "kappa", low=0.0)
    b_min = check_real(b_min, "b_min", low=0.0, high=1.0 / K)
    if antagonism is None or kappa == 0:
        A = None
    else:
        A = _to_numpy(antagonism, "antagonism")
        if A.shape != (K, K):
            raise ValueError(f"antagonism must have shape ({K}, {K}), got {A.shape}")
        if A.min() < 0:
            raise ValueError("antagonism must be non-negative")
        A = A.copy()
        np.fill_diagonal(A, 0.0)
        if not A.any():
            A = None
    if A is None:
        return _waterfill(d, eps, b_min)
    # delta(b) = M b with M = diag(d) - kappa * A * d (columns scaled by d_l)
    M = np.diag(d) - kappa * A * d[None, :]
    # a strictly feasible start: the antagonism-free plan or uniform shares if they
    # are feasible (the common case), else the max-min LP (which also proves infeasibility)
    b = None
    for cand in (_waterfill(d, eps, b_min), np.full(K, 1.0 / K)):
        if (eps + M @ cand).min() > 0:
            b = cand
            break
    if b is None:
        # max t s.t. eps + (M b)_k >= t, b in {simplex, >= b_min}
        c = np.zeros(K + 1)
        c[-1] = -1.0
        A_ub = np.hstack([-M, np.ones((K, 1))])
        res = linprog(
            c,
            A_ub=A_ub,
            b_ub=np.full(K, eps),
            A_eq=np.hstack([np.ones((1, K)), np.zeros((1, 1))]),
            b_eq=[1.0],
            bounds=[(b_min, 1.0)] * K + [(None, None)],
            method="highs",
        )
        if not res.success or res.x[-1] <= 0:
            raise ValueError(
                "plan_budgets: no budget keeps every predicted gain eps + delta_k(b) > 0; "
                "increase eps or decrease kappa"
            )
        b = res.x[:K]
    free = 1.0 - K * b_min

    def f(b):
        z = eps + M @ b
        return -np.inf if z.min() <= 0 else float(np.log(z).sum())

    def proj(v):
        if free <= 1e-15:
            return np.full(K, b_min)
        return b_min + project_simplex_1d(v - b_min, scale=free)

    fb = f(b)
    step = 1.0
    for _ in range(max_iter):
        grad = M.T @ (1.0 / (eps + M @ b))
        while True:
            cand = proj(b + step * grad)
            fc = f(cand)
            # Armijo on the projected step
            if fc >= fb + 1e-4 * grad @ (cand - b) or step < 1e-14:
                break
            step *= 0.5
        if step < 1e-14 or np.abs(cand - b).max() < 1e-13:
            b = cand if fc >= fb else b
            break
        b, fb = cand, fc
        step *= 2.0
    return b


def plan_targets(values, ref, costs, budget):
    """Continuous log-HV planner (reconstruction).

    ``max_delta sum_k log(f_k + delta_k - r_k)`` s.t. ``sum_k c_k delta_k <=
    budget``, ``delta >= 0``: water-filling ``f_k + delta_k - r_k =
    max(f_k - r_k, 1/(nu c_k))``, ``nu`` set by the budget.

    Parameters
    ----------
    values : array-like of shape (K,)
        Current values ``f_k`` (maximised), each ``> ref_k``.
    ref : array-like of shape (K,)
    costs : array-like of shape (K,)
        ``c_k > 0``, e.g. ``d_k (1 + sum_j a_jk)``.
    budget : float
        ``Omega >= 0``.

    Returns
    -------
    targets : ndarray of shape (K,)
        ``f + delta``.

    See Also
    --------
    plan_budgets : The planner of block budgets.

    Examples
    --------
    >>> from mvlearn_ext.moo.controlg import plan_targets
    >>> plan_targets([1.0, 2.0], [0.0, 0.0], [1.0, 1.0], 1.0).tolist()  # the weaker value rises
    [2.0, 2.0]
    """
    f = _to_numpy(values, "values").reshape(-1)
    r = _to_numpy(ref, "ref").reshape(-1)
    c = _to_numpy(costs, "costs").reshape(-1)
    if not (f.shape == r.shape == c.shape):
        raise ValueError("values, ref and costs must have the same length")
    if np.any(f <= r):
        raise ValueError("values must exceed ref in every objective")
    if c.min() <= 0:
        raise ValueError("costs must be > 0")
    budget = check_real(budget, "budget", low=0.0)
    base = f - r
    if budget == 0:
        return f.copy()
    # levels h_k = max(base_k, 1/(nu c_k)); spend(nu) = sum c_k (h_k - base_k), decreasing in nu

    def spend(inv_nu):
        return float((c * (np.maximum(base, inv_nu / c) - base)).sum())

    lo, hi = 0.0, float((c * base).max()) + budget
    while spend(hi) < budget:
        hi *= 2
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if spend(mid) < budget:
            lo = mid
        else:
            hi = mid
    return r + np.maximum(base, hi / c)


class PIDController:
    """Discrete PID on a vector error, with a clamped integral (anti-windup).

    ``u = kp e + ki I + kd (e - e_prev)``, ``I <- clip(I + e, -limit, limit)``.
    The derivative term is 0 on the first step.

    Parameters
    ----------
    kp, ki, kd : float, default=(1.0, 0.0, 0.0)
    integral_limit : float, default=inf

    See Also
    --------
    ControlGScheduler : The scheduler that uses it.

    Examples
    --------
    >>> from mvlearn_ext.moo.controlg import PIDController
    >>> pid = PIDController(kp=2.0)
    >>> pid.step([0.5, -1.0])
    array([ 1., -2.])
    """

    def __init__(self, *, kp=1.0, ki=0.0, kd=0.0, integral_limit=np.inf):
        self.kp = kp
        self.ki = ki
        self.kd = kd
        self.integral_limit = integral_limit
        for name, gain in (("kp", kp), ("ki", ki), ("kd", kd)):
            check_real(gain, name)
        if not (isinstance(integral_limit, numbers.Real) and integral_limit == np.inf):
            check_real(integral_limit, "integral_limit", low=0.0)
        self.reset()

    def reset(self):
        self.integral_ = None
        self.previous_error_ = None

    def step(self, error):
        e = _to_numpy(error, "error")
        if self.integral_ is None:
            self.integral_ = np.zeros_like(e)
            prev = e
        else:
            prev = self.previous_error_
        lim = float(self.integral_limit)
        self.integral_ = np.clip(self.integral_ + e, -lim, lim)
        u = self.kp * e + self.ki * self.integral_ + self.kd * (e - prev)
        self.previous_error_ = e
        return u


class ControlGScheduler:
    """Sense -> plan -> PID block scheduler (reconstruction of ControlG).

    Usage from any training loop::

        sched = ControlGScheduler(n_objectives=3)
        for block in range(n_blocks):
            k = sched.next_objective()       # which objective to train now
            ...train objective k for one block...
            sched.observe(losses, grads)      # per-objective losses (and gradients)

    Every ``sense_every`` observed blocks the difficulty ``d_k = L_k / L_k(0)``
    and the EMA antagonism are refreshed and the planner
    (:func:`plan_budgets`) sets new target shares ``b``; between plans
    :meth:`set_targets` may override them. The executor is the deficit PID
    of the module docstring. ``record_`` holds one JSON-serialisable entry
    per block (block index, chosen objective, targets, difficulty,
    antagonism, deficits, control); :func:`replay_schedule` re-derives every
    choice from it.

    Parameters
    ----------
    n_objectives : int
    sense_every : int, default=1
    eps, kappa, b_min : float
        Planner parameters (see :func:`plan_budgets`); ``b_min`` is also the
        floor that prevents starvation.
    kp, ki, kd : float, default=(1.0, 0.0, 0.0)
        PID gains on the deficits; ``ki = kd = 0`` is largest-deficit
        round-robin, whose shares converge to the targets at rate O(1/t).
    integral_limit : float, default=5.0
    antagonism_smoothing : float, default=0.9
    targets : array-like of shape (n_objectives,), optional
        Initial shares (uniform by default).

    See Also
    --------
    PIDController : The controller it runs.
    plan_budgets : The planner of its targets.
    replay_schedule : Re-derives its choices from its record.

    Examples
    --------
    >>> from mvlearn_ext.moo.controlg import ControlGScheduler
    >>> s = ControlGScheduler(n_objectives=2, targets=[0.75, 0.25])
    >>> [s.next_objective() for _ in range(8)]
    [0, 1, 0, 0, 0, 1, 0, 0]
    """

    def __init__(
        self,
        *,
        n_objectives,
        sense_every=1,
        eps=0.1,
        kappa=1.0,
        b_min=0.05,
        kp=1.0,
        ki=0.0,
        kd=0.0,
        integral_limit=5.0,
        antagonism_smoothing=0.9,
        targets=None,
    ):
        self.n_objectives = n_objectives
        self.sense_every = sense_every
        self.eps = eps
        self.kappa = kappa
        self.b_min = b_min
        self.kp = kp
        self.ki = ki
        self.kd = kd
        self.integral_limit = integral_limit
        self.antagonism_smoothing = antagonism_smoothing
        self.targets = targets
        K = n_objectives
        if isinstance(K, bool) or not isinstance(K, numbers.Integral) or K < 1:
            raise ValueError(f"n_objectives must be an int >= 1, got {K!r}")
        if (
            isinstance(sense_every, bool)
            or not isinstance(sense_every, numbers.Integral)
            or sense_every < 1
        ):
            raise ValueError(f"sense_every must be an int >= 1, got {sense_every!r}")
        check_real(b_min, "b_min", low=0.0, high=1.0 / K)
        check_real(eps, "eps", low=0.0)
        check_real(kappa, "kappa", low=0.0)
        check_real(antagonism_smoothing, "antagonism_smoothing", low=0.0, high=1.0)
        self.targets_ = self._check_targets(np.full(K, 1.0 / K) if targets is None else targets)
        self.counts_ = np.zeros(K, dtype=np.int64)
        self.t_ = 0
        self.initial_losses_ = None
        self.difficulty_ = np.ones(K)
        self.antagonism_ = np.zeros((K, K))
        self.record_ = []
        self._pid = PIDController(kp=kp, ki=ki, kd=kd, integral_limit=integral_limit)
        self._n_observed = 0

    def _check_targets(self, b):
        b = _to_numpy(b, "targets").reshape(-1)
        if b.shape != (self.n_objectives,):
            raise ValueError(f"targets must have {self.n_objectives} entries, got {b.shape}")
        if b.min() < 0 or abs(b.sum() - 1) > 1e-9:
            raise ValueError("targets must be on the simplex (>= 0, sum to 1)")
        return b / b.sum()

    def set_targets(self, targets):
        """Override the target shares (e.g. from an external planner)."""
        self.targets_ = self._check_targets(targets)

    def deficits(self):
        """``e_k(t) = b_k t - n_k(t)``."""
        return self.targets_ * self.t_ - self.counts_

    def next_objective(self):
        """Choose the objective of the next block and log the decision."""
        e = self.deficits()
        u = self._pid.step(e)
        k = int(np.argmax(u))  # first maximum: ties to the lowest index
        self.record_.append(
            {
                "block": int(self.t_),
                "objective": k,
                "targets": self.targets_.tolist(),
                "difficulty": self.difficulty_.tolist(),
                "antagonism": self.antagonism_.tolist(),
                "deficits": e.tolist(),
                "control": u.tolist(),
            }
        )
        self.counts_[k] += 1
        self.t_ += 1
        return k

    def observe(self, losses, grads=None):
        """Feed per-objective losses (and optionally gradients) after a block."""
        L = _to_numpy(losses, "losses").reshape(-1)
        if L.shape != (self.n_objectives,):
            raise ValueError(f"losses must have {self.n_objectives} entries, got {L.shape}")
        if L.min() <= 0:
            raise ValueError("losses must be > 0 (difficulty is L_k / L_k(0))")
        initial = L.copy() if self.initial_losses_ is None else self.initial_losses_
        antagonism = self.antagonism_
        if grads is not None:
            G = _to_numpy(grads, "grads")
            if G.ndim != 2 or G.shape[0] != self.n_objectives:
                raise ValueError(
                    f"grads must have shape ({self.n_objectives}, n_params), one gradient "
                    f"per objective, got {G.shape}"
                )
            antagonism = antagonism_matrix(
                G,
                previous=self.antagonism_ if self._n_observed else None,
                smoothing=self.antagonism_smoothing,
            )
        n_observed = self._n_observed + 1
        difficulty, targets = self.difficulty_, self.targets_
        if n_observed % self.sense_every == 0:
            difficulty = L / initial
            targets = plan_budgets(
                difficulty, antagonism, eps=self.eps, kappa=self.kappa, b_min=self.b_min
            )
        # every check and the plan passed: commit the new state together
        self.initial_losses_ = initial
        self.antagonism_ = antagonism
        self._n_observed = n_observed
        self.difficulty_, self.targets_ = difficulty, targets

    @property
    def shares_(self):
        """Realised shares ``n_k(t) / t``."""
        return self.counts_ / max(self.t_, 1)

    def record_json(self):
        """The schedule record as a JSON string."""
        return json.dumps(self.record_)


def replay_schedule(record, *, kp=1.0, ki=0.0, kd=0.0, integral_limit=5.0):
    """Re-derive every choice of a schedule record from its logged targets.

    Returns the replayed objective sequence; it equals the logged one when
    the record is authentic and the gains are those used.

    Parameters
    ----------
    record : list of dict or str
        A scheduler's ``record_`` (one entry with its ``"targets"`` per
        block), or its JSON string (:meth:`ControlGScheduler.record_json`).
    kp, ki, kd : float, default=(1.0, 0.0, 0.0)
        The PID gains of the scheduler that wrote the record.
    integral_limit : float, default=5.0
        The clamp of the PID integral of that scheduler.

    Returns
    -------
    choices : list of int
        The objective chosen at every block.

    See Also
    --------
    ControlGScheduler : The scheduler whose record it replays.

    Examples
    --------
    >>> from mvlearn_ext.moo.controlg import ControlGScheduler, replay_schedule
    >>> s = ControlGScheduler(n_objectives=2, targets=[0.75, 0.25])
    >>> choices = [s.next_objective() for _ in range(8)]
    >>> replay_schedule(s.record_) == choices
    True
    """
    if isinstance(record, str):
        record = json.loads(record)
    if not record:
        return []
    K = len(record[0]["targets"])
    pid = PIDController(kp=kp, ki=ki, kd=kd, integral_limit=integral_limit)
    counts = np.zeros(K)
    out = []
    for t, entry in enumerate(record):
        e = np.asarray(entry["targets"]) * t - counts
        k = int(np.argmax(pid.step(e)))
        out.append(k)
        counts[k] += 1
    return out


def simulate_block_training(
    policy,
    *,
    n_blocks,
    rates,
    antagonism,
    initial_losses=None,
    random_state=None,
    noise=0.0,
    scheduler_kwargs=None,
):
    """Toy objective dynamics for comparing schedules.

    Training objective ``k`` for a block multiplies ``L_k`` by ``1 - rates_k``
    and every other ``L_l`` by ``1 + antagonism[k, l]`` (times an optional
    log-normal noise). ``policy`` is ``"controlg"`` (a
    :class:`ControlGScheduler` fed the losses and, as gradient proxies, unit
    vectors whose cosines are ``-antagonism``), ``"round_robin"`` or
    ``"uniform_mix"`` (every block applies the average effect of the K
    choices).

    Parameters
    ----------
    policy : {"controlg", "round_robin", "uniform_mix"}
        The schedule compared.
    n_blocks : int
        Number of training blocks ``T``.
    rates : array-like of shape (n_objectives,)
        ``rates_k``, the relative decrease of ``L_k`` when objective ``k``
        is trained for one block.
    antagonism : array-like of shape (n_objectives, n_objectives)
        ``antagonism[k, l]`` (``l != k``), the relative increase of ``L_l``
        when ``k`` is trained (negative: a shared gain). Keep the diagonal at
        0: the loss dynamics ignore it, but the gradient proxies of
        ``"controlg"`` (pairwise cosines ``-antagonism``) do not.
    initial_losses : array-like of shape (n_objectives,), optional
        ``L(0)``; ones by default.
    random_state : int, Generator or None, default=None
        Seeds the noise.
    noise : float, default=0.0
        The factor of ``L_l`` in each block is raised to the power
        ``exp(noise * z_l)``, ``z_l`` standard normal (0: deterministic
        dynamics).
    scheduler_kwargs : dict, optional
        Keyword arguments of the :class:`ControlGScheduler` (``policy="controlg"``
        only; ``n_objectives`` is set from ``rates``).

    Returns
    -------
    result : dict
        ``losses`` (n_blocks + 1, K), ``choices`` (n_blocks,), ``log_hv``:
        ``sum_k log(L_k(0) - L_k(T))`` (the log-HV of ``-L(T)`` against the
        reference ``-L(0)``; ``-inf`` if some objective did not improve),
        and ``scheduler`` (the ControlG scheduler, or None).

    See Also
    --------
    ControlGScheduler : The ``"controlg"`` policy.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.moo.controlg import simulate_block_training
    >>> res = simulate_block_training("round_robin", n_blocks=6, rates=[0.1, 0.2],
    ...                               antagonism=np.zeros((2, 2)), random_state=0)
    >>> res["choices"].tolist()  # round robin
    [0, 1, 0, 1, 0, 1]
    >>> res["losses"][-1].round(3).tolist()
    [0.729, 0.512]
    """
    rates = _to_numpy(rates, "rates").reshape(-1)
    K = rates.size
    A = _to_numpy(antagonism, "antagonism")
    L = (
        np.ones(K)
        if initial_losses is None
        else _to_numpy(initial_losses, "initial_losses").copy()
    )
    rng = np.random.default_rng(random_state)
    factors = np.ones((K, K)) + A  # row k: effect of training k
    np.fill_diagonal(factors, 1 - rates)
    hist = [L.copy()]
    choices = []
    sched = None
    if policy == "controlg":
        sched = ControlGScheduler(n_objectives=K, **(scheduler_kwargs or {}))
        # gradient proxies with pairwise cosines -A (when that Gram is PSD), else clipped
        gram = np.eye(K) - A
        w, V = np.linalg.eigh(gram)
        proxies = V * np.sqrt(np.clip(w, 0, None))
        sched.observe(L, proxies)
    elif policy not in ("round_robin", "uniform_mix"):
        raise ValueError(
            f"policy must be 'controlg', 'round_robin' or 'uniform_mix', got {policy!r}"
        )
    for t in range(n_blocks):
        z = np.exp(noise * rng.standard_normal(K)) if noise > 0 else np.ones(K)
        if policy == "uniform_mix":
            L = L * factors.mean(axis=0) ** z
            choices.append(-1)
        else:
            k = sched.next_objective() if policy == "controlg" else t % K
            L = L * factors[k] ** z
            choices.append(k)
            if sched is not None:
                sched.observe(L, proxies)
        hist.append(L.copy())
    L0 = hist[0]
    gain = L0 - L
    log_hv = float(np.log(gain).sum()) if np.all(gain > 0) else -np.inf
    return {
        "losses": np.array(hist),
        "choices": np.array(choices),
        "log_hv": log_hv,
        "scheduler": sched,
    }
