"""MOPO for finite policies: closed-form tilted policies and projected dual descent.

Reconstruction: MOPO (Agnihotri, Jain, Ramachandran & Wen, "Multi-Objective
Preference Optimization", arXiv 2505.10892) is known from its abstract only
(maximise a primary preference objective with lower bounds on the secondary
ones, KL-regularised, from pairwise preferences, with closed-form iterative
updates). This module reconstructs it on the PsiPO/IPO framework
(Azar et al., 2023):

* ``P_k(pi) = E_{y ~ pi, y' ~ mu} p_k(y > y')`` (linear in ``pi``);
* ``max_pi P_1(pi) - tau KL(pi || pi_ref)`` s.t. ``P_k(pi) >= b_k``, k >= 2;
* for multipliers ``lambda >= 0`` the maximiser is
  ``pi_lambda ∝ pi_ref exp((s_1 + sum_k lambda_k s_k) / tau)`` with
  ``s_k = P_k mu``; the dual is minimised by
  ``lambda_k <- [lambda_k - eta (P_k(pi_lambda) - b_k)]_+``.
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np
from scipy.optimize import linprog, minimize

from mvlearn_ext.utils._validation import check_count, check_real, real_array

__all__ = [
    "MOPOResult",
    "exact_constrained_policy",
    "ipo_regression_loss",
    "make_preferences",
    "mopo_policy",
    "preference_values",
    "solve_mopo",
]


def _check_problem(prefs, mu, pi_ref):
    P = real_array(prefs, "prefs")
    if P.ndim == 2:
        P = P[None]
    if P.ndim != 3 or P.shape[1] != P.shape[2] or P.shape[1] < 2:
        raise ValueError(f"prefs must have shape (n_objectives, n_arms, n_arms), got {P.shape}")
    if not np.isfinite(P).all() or P.min() < 0 or P.max() > 1:
        raise ValueError("prefs must be probabilities in [0, 1]")
    if np.abs(P + P.transpose(0, 2, 1) - 1).max() > 1e-9:
        raise ValueError("prefs must satisfy p(y > y') + p(y' > y) = 1")
    Y = P.shape[1]
    out = []
    for name, v in (("mu", mu), ("pi_ref", pi_ref)):
        v = np.full(Y, 1.0 / Y) if v is None else real_array(v, name).reshape(-1)
        if v.shape != (Y,) or v.min() <= 0 or abs(v.sum() - 1) > 1e-9:
            raise ValueError(
                f"{name} must be a probability vector of length {Y} with full support"
            )
        out.append(v)
    return P, out[0], out[1]


def _tau(tau):
    if (
        isinstance(tau, bool)
        or not isinstance(tau, numbers.Real)
        or not np.isfinite(tau)
        or tau <= 0
    ):
        raise ValueError(f"tau must be a finite number > 0, got {tau!r}")
    return float(tau)


def _check_thresholds(thresholds, K):
    b = real_array(thresholds, "thresholds").reshape(-1)
    if b.shape != (K - 1,):
        raise ValueError(f"thresholds must have {K - 1} finite entries, got shape {b.shape}")
    return b


def _check_multipliers(lam, K):
    lam = real_array(lam, "lam", allow_empty=True).reshape(-1)
    if lam.shape != (K - 1,) or (lam < 0).any():
        raise ValueError(f"lam must be {K - 1} finite non-negative multipliers")
    return lam


def _check_policy(pi, Y, *, full_support=False):
    """``pi`` as a probability vector over the ``Y`` arms (each entry > 0 if ``full_support``)."""
    pi = real_array(pi, "pi").reshape(-1)
    low = pi.min() <= 0 if full_support else pi.min() < 0
    if pi.shape != (Y,) or low or abs(pi.sum() - 1) > 1e-9:
        support = " with full support" if full_support else ""
        raise ValueError(
            f"pi must be a probability vector of length {Y}{support}, got shape {pi.shape}"
            + (f" summing to {pi.sum():.6g} with smallest entry {pi.min():.3g}" if pi.size else "")
        )
    return pi


def preference_values(prefs, pi, mu=None):
    """``P_k(pi) = pi^T P_k mu`` for every objective, shape (n_objectives,).

    Parameters
    ----------
    prefs : array-like of shape (K, n_arms, n_arms)
        ``prefs[k, y, y'] = p_k(y > y')``; objective 0 is the primary one.
    pi : array-like of shape (n_arms,)
        The policy evaluated.
    mu : array-like of shape (n_arms,), optional
        The law of the compared arm ``y'`` (full support); uniform by default.

    Returns
    -------
    values : ndarray of shape (K,)
        The probability that an arm drawn from ``pi`` is preferred to one
        drawn from ``mu``, under each objective.

    See Also
    --------
    mopo_policy : A policy to evaluate.

    Examples
    --------
    >>> from mvlearn_ext.moo.mopo import make_preferences, preference_values
    >>> P = make_preferences("conflicting", n_arms=4, n_objectives=2, random_state=0)
    >>> preference_values(P, [0.25] * 4).round(6).tolist()  # the uniform policy
    [0.5, 0.5]
    """
    P, mu, _ = _check_problem(prefs, mu, None)
    pi = _check_policy(pi, P.shape[1])
    return np.einsum("y,kyz,z->k", pi, P, mu)


def mopo_policy(prefs, lam, *, tau, mu=None, pi_ref=None):
    """Closed-form ``pi_lambda ∝ pi_ref exp((s_1 + sum_k lam_k s_k) / tau)``.

    Parameters
    ----------
    prefs : array-like of shape (K, n_arms, n_arms)
        ``prefs[k, y, y'] = p_k(y > y')``; objective 0 is the primary one.
    lam : array-like of shape (K - 1,)
        Multipliers of the secondary objectives, ``>= 0``.
    tau : float
    mu, pi_ref : array-like of shape (n_arms,), optional (uniform)

    Returns
    -------
    pi : ndarray of shape (n_arms,)

    See Also
    --------
    solve_mopo : Chooses the multipliers.
    preference_values : The values the policy attains.

    Examples
    --------
    >>> from mvlearn_ext.moo.mopo import make_preferences, mopo_policy
    >>> P = make_preferences("conflicting", n_arms=4, n_objectives=2, random_state=0)
    >>> pi = mopo_policy(P, [0.5], tau=0.1)
    >>> pi.shape, round(float(pi.sum()), 6)
    ((4,), 1.0)
    """
    P, mu, pi_ref = _check_problem(prefs, mu, pi_ref)
    tau = _tau(tau)
    lam = _check_multipliers(lam, P.shape[0])
    s = P @ mu  # (K, Y)
    w = np.concatenate([[1.0], lam])
    z = np.log(pi_ref) + (w @ s) / tau
    z -= z.max()
    pi = np.exp(z)
    return pi / pi.sum()


@dataclasses.dataclass
class MOPOResult:
    """Result of :func:`solve_mopo`.

    Parameters
    ----------
    policy : ndarray of shape (n_arms,)
        The policy ``pi_lambda`` at the final multipliers.
    multipliers : ndarray of shape (K - 1,)
        The final multipliers ``lambda``.
    values : ndarray of shape (K,)
        ``P_k(policy)`` of every objective.
    n_iter : int
        Number of dual iterations run.
    history : list of dict
        ``{"iter", "lam", "values"}`` at the first iteration and every 50th.

    See Also
    --------
    solve_mopo : Returns it.

    Examples
    --------
    >>> from mvlearn_ext.moo.mopo import make_preferences, solve_mopo
    >>> P = make_preferences("conflicting", n_arms=4, n_objectives=2, random_state=0)
    >>> res = solve_mopo(P, [0.55], tau=0.1)
    >>> res.policy.shape, res.multipliers.shape, res.values.shape
    ((4,), (1,), (2,))
    """

    policy: np.ndarray
    multipliers: np.ndarray
    values: np.ndarray
    n_iter: int
    history: list


def solve_mopo(
    prefs,
    thresholds,
    *,
    tau,
    mu=None,
    pi_ref=None,
    learning_rate=None,
    max_iter=20000,
    tol=1e-10,
):
    """MOPO's iterative updates: projected dual descent over ``lambda``.

    Each iteration forms the closed-form policy ``pi_lambda``
    (:func:`mopo_policy`) and takes ``lambda_k <- [lambda_k - eta (P_k(pi_lambda)
    - b_k)]_+``. The dual is smooth with gradient Lipschitz constant at most
    ``||S||^2 / tau`` (``S`` the centred score matrix), so the default step is
    ``tau / ||S||_2^2``.

    Parameters
    ----------
    prefs : array-like of shape (K, n_arms, n_arms)
    thresholds : array-like of shape (K - 1,)
        Lower bounds ``b_k`` on the secondary objectives.
    tau : float
    mu, pi_ref : optional
    learning_rate : float, optional
        The dual step size ``eta``; default ``tau / ||S||_2^2``, the inverse
        of the dual gradient's Lipschitz bound.
    max_iter : int, default=20000
        Most dual iterations, ``>= 1``.
    tol : float, default=1e-10
        Stop when the projected dual gradient is below ``tol`` (``>= 0``).

    Returns
    -------
    result : MOPOResult

    See Also
    --------
    exact_constrained_policy : The primal solution, an oracle.
    mopo_policy : The policy for given multipliers.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.moo.mopo import make_preferences, solve_mopo
    >>> P = make_preferences("conflicting", n_arms=4, n_objectives=2, random_state=0)
    >>> res = solve_mopo(P, [0.55], tau=0.1)
    >>> bool(res.values[1] >= 0.55 - 1e-6)
    True
    """
    P, mu, pi_ref = _check_problem(prefs, mu, pi_ref)
    tau = _tau(tau)
    K = P.shape[0]
    b = _check_thresholds(thresholds, K)
    max_iter = check_count(max_iter, "max_iter", 1)
    tol = check_real(tol, "tol", low=0.0)
    s = P @ mu
    _check_feasible(s, b)
    if learning_rate is None:
        sc = s[1:] - s[1:].mean(axis=1, keepdims=True)
        L = max(np.linalg.norm(sc, 2) ** 2, 1e-12) / tau
        step = 1.0 / L
    else:
        step = check_real(learning_rate, "learning_rate", low=0.0, low_open=True)
    lam = np.zeros(K - 1)
    hist = []
    for it in range(1, max_iter + 1):
        pi = mopo_policy(P, lam, tau=tau, mu=mu, pi_ref=pi_ref)
        vals = s @ pi
        g = vals[1:] - b  # dual gradient is -(P_k - b_k) for minimisation of D
        new = np.maximum(lam - step * g, 0.0)
        pg = np.abs(new - lam).max() / step
        lam = new
        if it % 50 == 0 or it == 1:
            hist.append({"iter": it, "lam": lam.tolist(), "values": vals.tolist()})
        if pg < tol:
            break
    pi = mopo_policy(P, lam, tau=tau, mu=mu, pi_ref=pi_ref)
    return MOPOResult(policy=pi, multipliers=lam, values=s @ pi, n_iter=it, history=hist)


def _check_feasible(s, b):
    """Slater: some policy must satisfy every threshold strictly (an LP)."""
    K, Y = s.shape
    if K == 1:
        return
    # max t s.t. s_k . pi - b_k >= t, pi in simplex
    c = np.zeros(Y + 1)
    c[-1] = -1.0
    A_ub = np.hstack([-s[1:], np.ones((K - 1, 1))])
    res = linprog(
        c,
        A_ub=A_ub,
        b_ub=-b,
        A_eq=np.hstack([np.ones((1, Y)), [[0.0]]]),
        b_eq=[1.0],
        bounds=[(0, 1)] * Y + [(None, None)],
        method="highs",
    )
    if not res.success or res.x[-1] <= 0:
        best = -res.fun if res.success else float("nan")
        raise ValueError(
            "thresholds are not strictly attainable by any policy (max over policies of "
            f"min_k P_k - b_k = {best:.4g} <= 0); lower them"
        )


def exact_constrained_policy(prefs, thresholds, *, tau, mu=None, pi_ref=None):
    """Primal convex solve of the MOPO programme (oracle, SLSQP on the simplex).

    Returns the optimal policy, or ``None`` when the solver reports the
    thresholds infeasible.

    Parameters
    ----------
    prefs : array-like of shape (K, n_arms, n_arms)
        ``prefs[k, y, y'] = p_k(y > y')``; objective 0 is the primary one.
    thresholds : array-like of shape (K - 1,)
        Lower bounds ``b_k`` on the secondary objectives.
    tau : float
        The KL regularisation strength, ``> 0``.
    mu : array-like of shape (n_arms,), optional
        The law of the compared arm ``y'`` (full support); uniform by default.
    pi_ref : array-like of shape (n_arms,), optional
        The reference policy of the KL term (full support); uniform by default.

    Returns
    -------
    pi : ndarray of shape (n_arms,) or None
        The maximiser of ``P_1(pi) - tau KL(pi || pi_ref)`` under the bounds.

    See Also
    --------
    solve_mopo : The iterative solution it checks.

    Examples
    --------
    >>> from mvlearn_ext.moo.mopo import make_preferences, exact_constrained_policy
    >>> P = make_preferences("conflicting", n_arms=4, n_objectives=2, random_state=0)
    >>> pi = exact_constrained_policy(P, [0.55], tau=0.1)
    >>> round(float(pi.sum()), 6)
    1.0
    """
    P, mu, pi_ref = _check_problem(prefs, mu, pi_ref)
    tau = _tau(tau)
    s = P @ mu
    b = _check_thresholds(thresholds, P.shape[0])
    Y = s.shape[1]

    def neg(pi):
        pi = np.clip(pi, 1e-300, None)
        return -(s[0] @ pi - tau * (pi * np.log(pi / pi_ref)).sum())

    def grad(pi):
        pi = np.clip(pi, 1e-300, None)
        return -(s[0] - tau * (np.log(pi / pi_ref) + 1))

    cons = [{"type": "eq", "fun": lambda x: x.sum() - 1, "jac": lambda x: np.ones(Y)}]
    for k in range(1, s.shape[0]):
        cons.append(
            {"type": "ineq", "fun": lambda x, k=k: s[k] @ x - b[k - 1], "jac": lambda x, k=k: s[k]}
        )
    res = minimize(
        neg,
        pi_ref.copy(),
        jac=grad,
        bounds=[(1e-12, 1)] * Y,
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    if not res.success:
        return None
    return res.x / res.x.sum()


def ipo_regression_loss(pi, prefs, lam, *, tau, mu=None, pi_ref=None):
    """Population IPO-style loss of a tabular policy.

    ``E_{y, y' ~ mu}[(h_pi(y, y') - tau^{-1} sum_k w_k (p_k(y > y') - 1/2))^2]``
    with ``h_pi = log(pi(y) pi_ref(y') / (pi(y') pi_ref(y)))`` and
    ``w = (1, lam)``. Its minimiser over policies is :func:`mopo_policy`.

    Parameters
    ----------
    pi : array-like of shape (n_arms,)
        The policy evaluated (positive entries).
    prefs : array-like of shape (K, n_arms, n_arms)
        ``prefs[k, y, y'] = p_k(y > y')``; objective 0 is the primary one.
    lam : array-like of shape (K - 1,)
        Multipliers of the secondary objectives.
    tau : float
        The KL regularisation strength, ``> 0``.
    mu : array-like of shape (n_arms,), optional
        The law of the compared arm ``y'`` (full support); uniform by default.
    pi_ref : array-like of shape (n_arms,), optional
        The reference policy of the KL term (full support); uniform by default.

    Returns
    -------
    loss : float

    See Also
    --------
    mopo_policy : The closed-form minimiser of the loss.

    Examples
    --------
    >>> from mvlearn_ext.moo.mopo import make_preferences, ipo_regression_loss, mopo_policy
    >>> P = make_preferences("conflicting", n_arms=4, n_objectives=2, random_state=0)
    >>> pi = mopo_policy(P, [0.5], tau=0.1)
    >>> loss = ipo_regression_loss(pi, P, [0.5], tau=0.1)
    >>> bool(loss <= ipo_regression_loss([0.25] * 4, P, [0.5], tau=0.1))  # pi is the minimiser
    True
    """
    P, mu, pi_ref = _check_problem(prefs, mu, pi_ref)
    tau = _tau(tau)
    pi = _check_policy(pi, P.shape[1], full_support=True)
    w = np.concatenate([[1.0], _check_multipliers(lam, P.shape[0])])
    f = np.log(pi) - np.log(pi_ref)
    h = f[:, None] - f[None, :]
    target = np.tensordot(w, P - 0.5, axes=1) / tau
    return float(np.einsum("y,z,yz->", mu, mu, (h - target) ** 2))


def make_preferences(structure, *, n_arms=6, n_objectives=2, random_state=None):
    """Canonical synthetic preference structures.

    ``"bradley_terry"`` (random utilities, logistic), ``"thurstone"``
    (probit), ``"cyclic"`` (rock-paper-scissors blocks on top of BT),
    ``"conflicting"`` (objective 2 is ``1 - p_1`` on a random half of the
    pairs, BT elsewhere).

    Parameters
    ----------
    structure : {"bradley_terry", "thurstone", "cyclic", "conflicting"}
        The preference structure.
    n_arms : int, default=6
        Number of arms, ``>= 2``.
    n_objectives : int, default=2
        Number of objectives ``K >= 1`` (each draws its own random utilities).
    random_state : int, Generator or None, default=None
        Seeds the utilities (and the flipped pairs of ``"conflicting"``).

    Returns
    -------
    prefs : ndarray of shape (n_objectives, n_arms, n_arms)

    See Also
    --------
    solve_mopo : Solves the MOPO programme on them.

    Examples
    --------
    >>> from mvlearn_ext.moo.mopo import make_preferences
    >>> P = make_preferences("conflicting", n_arms=4, n_objectives=2, random_state=0)
    >>> P.shape
    (2, 4, 4)
    """
    from scipy.special import expit, ndtr

    Y = check_count(n_arms, "n_arms", 2)
    n_objectives = check_count(n_objectives, "n_objectives", 1)
    rng = np.random.default_rng(random_state)
    out = np.empty((n_objectives, Y, Y))
    for k in range(n_objectives):
        u = rng.normal(size=Y) * 2
        diff = u[:, None] - u[None, :]
        if structure == "bradley_terry":
            M = expit(diff)
        elif structure == "thurstone":
            M = ndtr(diff / np.sqrt(2))
        elif structure == "cyclic":
            M = expit(0.3 * diff)
            for i in range(0, Y - 2, 3):
                a, b_, c = i, i + 1, i + 2
                for x, y in ((a, b_), (b_, c), (c, a)):
                    M[x, y], M[y, x] = 0.85, 0.15
        elif structure == "conflicting":
            if k == 0:
                M = expit(diff)
            else:
                M = expit(diff)
                flip = np.triu(rng.random((Y, Y)) < 0.5, 1)
                M0 = out[0]
                M = np.where(flip, 1 - M0, M)
                M = np.where(flip.T, 1 - M0, M)
                M = np.triu(M, 1) + np.tril(1 - np.triu(M, 1).T, -1)
        else:
            raise ValueError(
                "structure must be 'bradley_terry', 'thurstone', 'cyclic' or 'conflicting', "
                f"got {structure!r}"
            )
        np.fill_diagonal(M, 0.5)
        out[k] = M
    return out
