"""Contextual extension: groups with linear models on random contexts.

Model (a reconstruction; the full paper was not available): a
sample of group ``k`` reveals a context ``x ~ P_k`` in ``R^d`` (exogenous,
not chosen by the learner) and a response ``y = x^T beta_k + eps``,
``Var eps = sigma_k^2``. The goal is every ``beta_k`` in the ``A``-norm:
the loss of group ``k`` is ``E (beta_hat_k - beta_k)^T A (beta_hat_k -
beta_k) ≈ c_k / n_k`` with ``c_k = sigma_k^2 tr(A Sigma_k^{-1})`` and
``Sigma_k = E x x^T``. The oracle allocation is that of the plain problem
with ``sigma_k^2`` replaced by ``c_k``: ``n_k ∝ c_k^(q/2)``. With ``d = 1``
and ``x = 1`` this is the plain problem.

The simulated contexts are Gaussian, ``x ~ N(m_k, C_k)`` (so ``Sigma_k =
C_k + m_k m_k^T``; put a constant feature through ``m_k`` with a zero
variance to model an intercept).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from mvlearn_ext.bandits import _contextual_kernels as CK_
from mvlearn_ext.bandits import _kernels as K_
from mvlearn_ext.bandits._objective import _check_budget, _check_p, allocation_exponent
from mvlearn_ext.bandits._policies import (
    _check_n_groups,
    _check_state_origin,
    _OnlineRun,
    resolve_warm_start,
)
from mvlearn_ext.bandits._simulate import _check_seed, _numba_threads
from mvlearn_ext.utils._validation import check_allocation, check_magnitude, real_array

__all__ = [
    "ContextualArmSampler",
    "ContextualGreedyPlugIn",
    "contextual_oracle_weights",
    "simulate_contextual",
]


# ---------------------------------------------------------------------------
# Validation and public API


def _check_model(context_mean, context_cov, beta, sigma):
    """The validated model ``(m, C, Lc, B, s)``; ``beta=None`` stands for zeros."""
    m = np.ascontiguousarray(real_array(context_mean, "context_mean"))
    if m.ndim != 2:
        raise ValueError(f"context_mean must be (n_groups, n_features), got {m.ndim}-D")
    K, d = m.shape
    _check_n_groups(K)
    C = np.ascontiguousarray(real_array(context_cov, "context_cov"))
    if C.shape != (K, d, d):
        raise ValueError(f"context_cov must have shape ({K}, {d}, {d}), got {C.shape}")
    B = np.zeros((K, d)) if beta is None else np.ascontiguousarray(real_array(beta, "beta"))
    if B.shape != (K, d):
        raise ValueError(f"beta must have shape ({K}, {d}), got {B.shape}")
    s = np.ascontiguousarray(real_array(sigma, "sigma"))
    if s.shape != (K,) or np.any(s <= 0):
        raise ValueError(f"sigma must be {K} positive finite noise standard deviations")
    # the weights c_k square sigma_k and the second moments m_k m_k^T
    check_magnitude(m, "context_mean")
    check_magnitude(s, "sigma")
    Lc = np.zeros_like(C)
    for k in range(K):
        if not np.allclose(C[k], C[k].T):
            raise ValueError(f"context_cov[{k}] is not symmetric")
        # PSD factor (eigen route allows a zero-variance constant feature).
        w, V = np.linalg.eigh(C[k])
        if w.min() < -1e-12 * max(1.0, abs(w).max()):
            raise ValueError(f"context_cov[{k}] is not positive semi-definite")
        if w.min() > 0:
            Lc[k] = np.linalg.cholesky(C[k])
        else:
            Lc[k] = V * np.sqrt(np.maximum(w, 0.0))
        second = C[k] + np.outer(m[k], m[k])
        if np.linalg.matrix_rank(second) < d:
            raise ValueError(f"E[x x^T] of group {k} is singular: beta_{k} is not identifiable")
    return m, C, Lc, B, s


def _check_A(A, d):
    if A is None:
        return np.eye(d)
    A = np.ascontiguousarray(real_array(A, "A"))
    if A.shape != (d, d):
        raise ValueError(f"A must be a ({d}, {d}) matrix, got shape {A.shape}")
    if np.linalg.eigvalsh((A + A.T) / 2).min() < 0:
        raise ValueError("A must be positive semi-definite")
    return A


def contextual_oracle_weights(context_mean, context_cov, sigma, A=None):
    """``c_k = sigma_k^2 tr(A Sigma_k^{-1})``, ``Sigma_k = C_k + m_k m_k^T``.

    Parameters
    ----------
    context_mean : array-like of shape (n_groups, n_features)
        Means ``m_k`` of the contexts of each group.
    context_cov : array-like of shape (n_groups, n_features, n_features)
        Covariances ``C_k`` of the contexts (symmetric positive semi-definite,
        with ``C_k + m_k m_k^T`` invertible).
    sigma : array-like of shape (n_groups,)
        Noise standard deviations.
    A : array-like of shape (n_features, n_features) or None, default=None
        Positive semi-definite weight of the coefficient error (identity).

    Returns
    -------
    weights : ndarray of shape (n_groups,)
        The oracle weights ``c_k``.

    See Also
    --------
    ContextualGreedyPlugIn : The policy that estimates these weights.
    oracle_allocation : The allocation for groups without covariates.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.bandits import contextual_oracle_weights
    >>> contextual_oracle_weights(np.zeros((2, 1)), np.ones((2, 1, 1)), [1.0, 2.0]).tolist()
    [1.0, 4.0]
    """
    m, C, _, _, s = _check_model(context_mean, context_cov, None, sigma)
    A = _check_A(A, m.shape[1])
    out = np.empty(m.shape[0])
    for k in range(m.shape[0]):
        out[k] = s[k] ** 2 * np.trace(A @ np.linalg.inv(C[k] + np.outer(m[k], m[k])))
    return out


class ContextualArmSampler:
    """Observations ``(x, y)`` of the Gaussian-context linear model (as simulated).

    Parameters
    ----------
    context_mean : array-like of shape (n_groups, n_features)
    context_cov : array-like of shape (n_groups, n_features, n_features)
    beta : array-like of shape (n_groups, n_features)
    sigma : array-like of shape (n_groups,)
        Noise standard deviations.
    random_state : int, default=0
        The root of the counter-based streams (as in :class:`ArmSampler`).

    See Also
    --------
    simulate_contextual : Draws the same streams inside its compiled loop.
    ArmSampler : The streams of the model without covariates.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.bandits import ContextualArmSampler
    >>> arms = ContextualArmSampler(context_mean=np.zeros((2, 1)), context_cov=np.ones((2, 1, 1)),
    ...                             beta=np.ones((2, 1)), sigma=[1.0, 2.0], random_state=0)
    >>> x, y = arms.sample(0, 1, 0)  # replication 0, group 1, first observation
    >>> x.shape
    (1,)
    """

    def __init__(self, *, context_mean, context_cov, beta, sigma, random_state=0):
        self._m, _, self._Lc, self._B, self._s = _check_model(
            context_mean, context_cov, beta, sigma
        )
        self.random_state = _check_seed(random_state, "random_state")

    def sample(self, replication, group, index):
        """``(x, y)`` of observation ``index`` of ``group`` in ``replication``.

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
        x : ndarray of shape (n_features,)
            The context.
        y : float
            The response ``x @ beta_k`` plus noise of deviation ``sigma_k``.
        """
        k = int(group)
        x = np.empty(self._m.shape[1])
        key = np.uint64(K_.stream_key(self.random_state, int(replication), k))
        y = CK_.ctx_draw(key, int(index), self._m[k], self._Lc[k], self._B[k], self._s[k], x)
        return x, float(y)


class ContextualGreedyPlugIn(_OnlineRun):
    """Greedy plug-in allocation for groups with linear models (contextual extension).

    Reconstruction (Wei, Zhong & Li, arXiv 2510.10374, from the abstract;
    the linear model of :class:`ContextualArmSampler`): after
    ``n0`` samples per group (``n0 >= n_features + 1``), pull
    ``argmax_k c_hat_k^(q/2) / n_k`` with the plug-in
    ``c_hat_k = s_k^2 tr(A Sigma_hat_k^{-1})``: the OLS residual variance
    ``s_k^2 = RSS_k / (n_k - d)`` and ``Sigma_hat_k = X_k^T X_k / n_k``.

    Parameters
    ----------
    p : float or "inf", default=2.0
    warm_start : int, "sqrt" or "linear", default="sqrt"
        As in :class:`GreedyPlugIn`, raised to ``n_features + 1`` if smaller.
    linear_fraction : float, default=0.25
    A : array-like of shape (n_features, n_features) or None, default=None
        The loss metric (identity).

    See Also
    --------
    simulate_contextual : Monte Carlo replications of this policy.
    contextual_oracle_weights : The weights of its oracle allocation.
    GreedyPlugIn : The rule for groups without covariates.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.bandits import ContextualGreedyPlugIn, simulate_contextual
    >>> mean, cov = np.zeros((2, 1)), np.ones((2, 1, 1))
    >>> res = simulate_contextual(ContextualGreedyPlugIn(p=2), context_mean=mean,
    ...                           context_cov=cov, beta=np.ones((2, 1)), sigma=[1.0, 3.0],
    ...                           budget=100, n_replications=10, random_state=0)
    >>> bool((res["counts"][:, 1] > res["counts"][:, 0]).all())  # the noisier group gets more
    True
    >>> policy = ContextualGreedyPlugIn().reset(n_groups=2, budget=20, n_features=2)
    >>> k = policy.next_group()  # one step of an online run
    >>> policy.update(k, np.array([1.0, 0.5]), 2.0).counts_.tolist()
    [1, 0]
    """

    _reset_args = "n_groups, budget, n_features"

    def __init__(self, *, p=2.0, warm_start="sqrt", linear_fraction=0.25, A=None):
        self.p = p
        self.warm_start = warm_start
        self.linear_fraction = linear_fraction
        self.A = A

    def _params(self):
        return {
            "p": self.p,
            "warm_start": self.warm_start,
            "linear_fraction": self.linear_fraction,
            "A": self.A,
        }

    def __repr__(self):
        return (
            f"ContextualGreedyPlugIn(p={self.p!r}, warm_start={self.warm_start!r}, "
            f"linear_fraction={self.linear_fraction!r})"
        )

    def _compile(self, n_groups, budget, n_features):
        n_groups = _check_n_groups(n_groups)
        budget = _check_budget(budget)
        if (
            isinstance(n_features, bool)
            or not isinstance(n_features, numbers.Integral)
            or n_features < 1
        ):
            raise ValueError(f"n_features must be a positive int, got {n_features!r}")
        q = allocation_exponent(_check_p(self.p))
        n0 = resolve_warm_start(self.warm_start, n_groups, budget, self.linear_fraction)
        n0 = max(n0, int(n_features) + 1)
        if n0 * n_groups > budget:
            raise ValueError(
                f"budget={budget} is smaller than the warm start: {n_groups} groups x {n0} "
                f"samples "
                f"(at least n_features + 1 = {n_features + 1} per group)"
            )
        return CK_.CtxRule(q, n0, _check_A(self.A, int(n_features)))

    def reset(self, n_groups, budget, n_features):
        """Start a run; returns ``self``."""
        self._rule_ = self._compile(n_groups, budget, n_features)
        self.n_groups_, self.budget_, self.n_features_ = (
            int(n_groups),
            int(budget),
            int(n_features),
        )
        d = self.n_features_
        self._state_ = {
            "counts": np.zeros(n_groups, dtype=np.int64),
            "gram": np.zeros((n_groups, d, d)),
            "xty": np.zeros((n_groups, d)),
            "yty": np.zeros(n_groups),
            "scores": np.zeros(n_groups),
            "t": 0,
        }
        # plain tuples: Numba types them on its fast path (see _kernels)
        self._work_ = tuple(CK_.ctx_work(d))
        return self

    def next_group(self):
        """The group to sample next."""
        self._require_started()
        if self._state_["t"] >= self.budget_:
            raise RuntimeError(f"the budget of {self.budget_} samples is spent")
        s = self._state_
        return int(CK_.ctx_choose(self._rule_.n0, s["counts"], s["scores"]))

    def update(self, group, x, y):
        """Record the context ``x`` and response ``y`` of ``group``; returns ``self``.

        Parameters
        ----------
        group : int
            The group sampled, in ``0 .. n_groups - 1``.
        x : array-like of shape (n_features,)
            Its context.
        y : float
            Its response.

        Returns
        -------
        self : ContextualGreedyPlugIn

        Raises
        ------
        TypeError
            If ``x`` is not a numeric array (strings included).
        ValueError
            If ``x`` holds complex values, NaN, infinity or values whose
            squares overflow, or not ``n_features`` values; if ``y`` is NaN or
            infinite.
        """
        self._require_started()
        self._check_group(group)
        x = np.ascontiguousarray(real_array(x, "x", allow_empty=True)).reshape(-1)
        if x.shape[0] != self.n_features_:
            raise ValueError(f"x has {x.shape[0]} features, expected {self.n_features_}")
        check_magnitude(x, "x")  # the Gram matrix squares the contexts
        y = float(y)
        if not math.isfinite(y):
            raise ValueError(f"observation of group {group} has NaN or inf (y={y})")
        s = self._state_
        stats = (s["counts"], s["gram"], s["xty"], s["yty"], s["scores"])  # a CtxStats
        CK_.ctx_observe(tuple(self._rule_), int(group), x, y, stats, self._work_)
        s["t"] += 1
        return self

    def get_state(self):
        """A deep copy of the run's state."""
        self._require_started()
        state = self._copy_state()
        state.update(n_groups=self.n_groups_, budget=self.budget_, n_features=self.n_features_)
        state.update(policy=type(self).__name__, params=self._params())
        return state

    def set_state(self, state):
        """Restore a state from :meth:`get_state`; returns ``self``.

        The state must come from a policy of the same class and configuration
        and, when this policy has been :meth:`reset`, from a run with the same
        ``n_groups``, ``budget`` and ``n_features``.

        Raises
        ------
        ValueError
            If a key is missing, or naming what differs.
        """
        keys = ("counts", "gram", "xty", "yty", "scores", "t")
        _check_state_origin(self, state, (*keys, "n_groups", "budget", "n_features"))
        self.reset(state["n_groups"], state["budget"], state["n_features"])
        for k in self._state_:
            v = state[k]
            self._state_[k] = v.copy() if isinstance(v, np.ndarray) else int(v)
        return self

    @property
    def coef_(self):
        """OLS estimates ``beta_hat``, shape ``(n_groups, n_features)`` (NaN where singular)."""
        self._require_started()
        out = np.full((self.n_groups_, self.n_features_), np.nan)
        for k in range(self.n_groups_):
            G = self._state_["gram"][k]
            if np.linalg.matrix_rank(G) == self.n_features_:
                out[k] = np.linalg.solve(G, self._state_["xty"][k])
        return out


def simulate_contextual(
    policy,
    *,
    context_mean,
    context_cov,
    beta,
    sigma,
    budget,
    n_replications=1000,
    random_state=0,
    replication_offset=0,
    n_jobs=None,
):
    """Monte Carlo replications of :class:`ContextualGreedyPlugIn` (Numba, parallel).

    Parameters
    ----------
    policy : ContextualGreedyPlugIn
        The policy (its configuration only; it is not modified).
    context_mean : array-like of shape (n_groups, n_features)
        Means of the contexts of each group.
    context_cov : array-like of shape (n_groups, n_features, n_features)
        Covariances of the contexts (symmetric positive semi-definite).
    beta : array-like of shape (n_groups, n_features)
        True coefficients of each group's linear model.
    sigma : array-like of shape (n_groups,)
        Noise standard deviations.
    budget : int
        Horizon ``T``.
    n_replications : int, default=1000
        Number of replications ``R``.
    random_state : int, default=0
        The root of the streams (see :class:`ContextualArmSampler`).
    replication_offset : int, default=0
        Replication ``r`` uses the streams of index ``replication_offset + r``,
        so a study split into batches reproduces one big run.
    n_jobs : int or None, default=None
        Numba threads over replications, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``:
        every CPU). The result does not depend on it.

    Returns
    -------
    result : dict
        ``counts`` (R, K), ``coef`` (R, K, d), ``rp`` (R,) = ``R_p`` of
        ``c_k / n_k`` with the true ``c_k`` (:func:`contextual_oracle_weights`),
        ``oracle_value``, ``regret`` (R,) and the true weights ``c`` (K,).

    See Also
    --------
    simulate : The simulation without covariates.
    ContextualGreedyPlugIn : The policy simulated.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.bandits import ContextualGreedyPlugIn, simulate_contextual
    >>> res = simulate_contextual(ContextualGreedyPlugIn(p=2), context_mean=np.zeros((2, 1)),
    ...                           context_cov=np.ones((2, 1, 1)), beta=np.ones((2, 1)),
    ...                           sigma=[1.0, 3.0], budget=100, n_replications=10)
    >>> res["counts"].shape, res["rp"].shape
    ((10, 2), (10,))
    """
    if not isinstance(policy, ContextualGreedyPlugIn):
        raise TypeError("policy must be a ContextualGreedyPlugIn")
    m, C, Lc, B, s = _check_model(context_mean, context_cov, beta, sigma)
    K, d = m.shape
    budget = _check_budget(budget)
    R = _check_budget(n_replications, "n_replications")
    check_allocation(R * K * d, "n_replications", R)
    rule = policy._compile(K, budget, d)
    q, A = rule.q, rule.A
    p = _check_p(policy.p)
    c_true = contextual_oracle_weights(m, C, s, A)
    counts = np.zeros((R, K), dtype=np.int64)
    coef = np.zeros((R, K, d))
    rp = np.zeros(R)
    with _numba_threads(n_jobs):
        CK_.ctx_simulate_kernel(
            rule, budget, CK_.CtxTruth(m, Lc, B, s), _check_seed(random_state, "random_state"),
            _check_seed(replication_offset, "replication_offset"), c_true, p, counts, coef, rp,
        )  # fmt: skip
    w = c_true ** (q / 2.0)
    star = float(np.sum(w) ** (1.0 if np.isinf(p) else (p + 1.0) / p) / budget)
    return {
        "counts": counts,
        "coef": coef,
        "rp": rp,
        "oracle_value": star,
        "regret": rp - star,
        "c": c_true,
    }
