"""Side information per group: a log-linear model shared by the groups' noise levels.

Model (Reconstruction: Wei, Zhong & Li, arXiv 2510.10374, mention a
contextual extension "that uses side information" in their abstract; the
model below is ours, to be confirmed against the full text). Group ``k``
comes with a known feature vector ``z_k`` in ``R^m`` (its covariates) and

    log sigma_k^2 = gamma_0 + z_k^T gamma + u_k,   u_k iid, E u_k = 0, Var u_k = tau^2,

so that groups with similar features have similar noise levels. ``tau = 0``
is the exact log-linear model; ``tau = inf`` says the features carry no
information. The means ``mu_k`` are unrestricted (only the variances drive
the allocation).

Estimator (an empirical-Bayes meta-regression of the log sample variances).
For a group with ``n_k >= 2`` samples and sample variance ``s_k^2 > 0``, put
``nu_k = n_k - 1`` and

    l_k = log s_k^2 - b(nu_k),   b(nu) = psi(nu / 2) - log(nu / 2),   v_k = psi'(nu_k / 2),

the bias-corrected log sample variance and its sampling variance: for
Gaussian groups ``nu s^2 / sigma^2 ~ chi^2_nu``, so
``E log s^2 = log sigma^2 + b(nu)`` and ``Var log s^2 = psi'(nu / 2)``
(``psi`` the digamma function; Bartlett & Kendall, JRSS Suppl. 1946). Then

1. ``tau^2`` (unless fixed) by the DerSimonian--Laird moment estimator of
   meta-regression, ``tau^2 = max(0, (Q - (G - r)) / c)``, with the
   fixed-effect weights ``a_k = 1 / v_k``, the weighted residual sum of
   squares ``Q`` of ``l`` on ``(1, z)``, ``G`` the number of usable groups,
   ``r`` the number of fitted coefficients and
   ``c = sum a_k - tr((Z^T A Z)^-1 Z^T A^2 Z)`` (DerSimonian & Laird,
   Control. Clin. Trials 1986; Raudenbush 2009 for the regression form);
2. ``gamma_hat`` by weighted least squares of ``l_k`` on ``(1, z_k)`` with
   weights ``1 / (v_k + tau^2)`` (or the known ``gamma``);
3. the plug-in variance is the geometric interpolation

       sigma_hat_k^2 = (s_k^2)^(w_k) * exp(gamma_hat_0 + z_k^T gamma_hat)^(1 - w_k),

   with ``w_k = tau^2 / (tau^2 + v_k)``: the precision-weighted
   (posterior-mean type) compromise between the group's own estimate and the
   model's prediction. A group without a usable
   variance (``n_k < 2`` or ``s_k^2 = 0``) gets the prediction. As ``n_k``
   grows, ``v_k ~ 2 / n_k -> 0`` and ``w_k -> 1`` whenever ``tau^2 > 0``: the
   plug-in is consistent even when the model is wrong, and the model only
   matters early. Its own term uses the uncorrected ``log s_k^2`` (it differs
   from the corrected posterior mean of ``log sigma_k^2`` by ``w_k b(nu_k) =
   O(1 / n_k)``) so that ``tau = inf`` is exactly :class:`GreedyPlugIn`.

Where the model cannot be fitted (fewer usable groups than coefficients, no
residual degrees of freedom for ``tau^2``, a singular design, ``c <= 0``) the
plug-in falls back to the plain ``s_k^2`` (0 without a usable variance), i.e.
:class:`GreedyPlugIn`'s estimate. The allocation rule is the greedy R_p
plug-in: ``argmax_k sigma_hat_k^q / n_k`` after a warm start of ``n0``
samples per group. ``b`` and ``psi'`` are the Gaussian ones; for other
families the log sample variance has variance about ``(kappa - 1) / n``
(``kappa`` the kurtosis), so the weights are then approximate.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy import special

from mvlearn_ext.bandits import _kernels as K_
from mvlearn_ext.bandits import _side_kernels as SK_
from mvlearn_ext.bandits._objective import _check_budget, _check_p, allocation_exponent
from mvlearn_ext.bandits._policies import _AllocationPolicy, _check_n_groups, resolve_warm_start

__all__ = ["SideInfoGreedyPlugIn", "log_variance_tables"]

_STATE_KEYS = ("counts", "means", "m2", "steps")


def log_variance_tables(budget):
    """Bias ``b(nu)`` and variance ``psi'(nu / 2)`` of ``log s^2`` for ``n = 0, ..., budget``.

    Entry ``n`` refers to a Gaussian sample of size ``n`` (``nu = n - 1``):
    ``E log s^2 - log sigma^2 = psi(nu / 2) - log(nu / 2)`` and
    ``Var log s^2 = psi'(nu / 2)``. Entries ``n < 2`` are NaN.

    Parameters
    ----------
    budget : int

    Returns
    -------
    bias, variance : ndarray of shape (budget + 1,)

    See Also
    --------
    SideInfoGreedyPlugIn : Fits the log sample variances with these tables.

    Examples
    --------
    >>> from mvlearn_ext.bandits import log_variance_tables
    >>> bias, var = log_variance_tables(3)
    >>> round(float(bias[3]), 4), round(float(var[3]), 4)  # nu = 2: -gamma_E, pi^2 / 6
    (-0.5772, 1.6449)
    """
    budget = _check_budget(budget)
    bias = np.full(budget + 1, np.nan)
    var = np.full(budget + 1, np.nan)
    if budget >= 2:
        half = (np.arange(2, budget + 1) - 1.0) / 2.0
        bias[2:] = special.digamma(half) - np.log(half)
        var[2:] = special.polygamma(1, half)
    return bias, var


# ---------------------------------------------------------------------------
# Validation and the policy


def _check_features(features, fit_intercept):
    if features is None:
        raise ValueError("group_features is required: one feature vector z_k per group")
    try:
        Z = np.asarray(features, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"group_features must be a numeric array: {exc}") from None
    if Z.ndim == 1:
        Z = Z[:, None]
    if Z.ndim != 2:
        raise ValueError(
            f"group_features must be 2-D (n_groups, n_features), got {Z.ndim}-D array"
        )
    if not np.all(np.isfinite(Z)):
        bad = np.argwhere(~np.isfinite(Z))[0]
        raise ValueError(
            f"group_features contains NaN or inf (group {int(bad[0])}, feature {int(bad[1])})"
        )
    if not isinstance(fit_intercept, (bool, np.bool_)):
        raise TypeError(f"fit_intercept must be a bool, got {type(fit_intercept).__name__}")
    if fit_intercept:
        Z = np.hstack([np.ones((Z.shape[0], 1)), Z])
    if Z.shape[1] == 0:
        raise ValueError("the model has no coefficient: give features or fit_intercept=True")
    return np.ascontiguousarray(Z)


class SideInfoGreedyPlugIn(_AllocationPolicy):
    """Greedy plug-in allocation with side information per group (log-linear noise model).

    Reconstruction (Wei, Zhong & Li, arXiv 2510.10374, state a contextual
    extension that uses side information; the model and estimator here are
    ours): each group ``k`` carries known features ``z_k`` and
    ``log sigma_k^2 = gamma_0 + z_k^T gamma + u_k`` with group deviations of
    variance ``tau^2``. The plug-in variance of a group is its sample
    variance shrunk, on the log scale, towards the prediction of a weighted
    least-squares fit of the bias-corrected log sample variances of all
    groups on ``(1, z)`` (empirical Bayes, ``tau^2`` by DerSimonian--Laird),
    with the weight ``w_k = tau^2 / (tau^2 + psi'((n_k - 1) / 2))`` on the
    group's own estimate (see :mod:`mvlearn_ext.bandits._side_info` for the
    exact formulas). After a warm start of ``n0`` samples per group it pulls
    ``argmax_k sigma_hat_k^q / n_k`` (``q = 2p / (p + 1)``), the rule of
    :class:`GreedyPlugIn` with these variances.

    Limits: ``deviation_sd=np.inf`` is exactly :class:`GreedyPlugIn`;
    ``deviation_sd=0`` with the true ``coef`` uses the true variances (the
    oracle plug-in); with ``deviation_sd=None`` (estimated) ``w_k -> 1`` as
    ``n_k`` grows, so the rule stays consistent when the model is wrong.

    Parameters
    ----------
    group_features : array-like of shape (n_groups, n_features)
        The side information ``z_k`` (a 1-D array is one feature). Its row
        ``k`` belongs to group ``k``; permute it together with the groups.
    p : float or "inf", default=2.0
    warm_start : int, "sqrt" or "linear", default="sqrt"
        ``n0`` as in :class:`GreedyPlugIn`.
    linear_fraction : float, default=0.25
    fit_intercept : bool, default=True
        Add the intercept ``gamma_0`` (needed for scale invariance).
    deviation_sd : float or None, default=None
        ``tau``: ``None`` estimates it from the data at every step; ``0``
        trusts the log-linear model exactly; ``np.inf`` ignores the features.
    coef : array-like or None, default=None
        Known coefficients ``(gamma_0, gamma)`` (intercept first when
        ``fit_intercept``), shape ``(n_features + fit_intercept,)``; ``None``
        fits them.

    See Also
    --------
    GreedyPlugIn : The rule without group features.
    log_variance_tables : The bias and variance of the log sample variances it fits.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.bandits import ArmSampler, SideInfoGreedyPlugIn
    >>> z = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> sigma = np.exp(0.5 * (-1.0 + 0.8 * z[:, 0]))  # log sigma^2 = -1 + 0.8 z
    >>> policy = SideInfoGreedyPlugIn(group_features=z, p=2).reset(4, 400)
    >>> arms = ArmSampler(sigma=sigma, random_state=0)
    >>> for _ in range(400):
    ...     k = policy.next_group()
    ...     _ = policy.update(k, arms.sample(0, k, policy.counts_[k]))
    >>> int(policy.counts_.sum()), policy.coef_.shape
    (400, (2,))
    """

    _min_per_group = 2
    _state_keys = _STATE_KEYS

    def __init__(
        self,
        *,
        group_features,
        p=2.0,
        warm_start="sqrt",
        linear_fraction=0.25,
        fit_intercept=True,
        deviation_sd=None,
        coef=None,
    ):
        self.group_features = group_features
        self.p = p
        self.warm_start = warm_start
        self.linear_fraction = linear_fraction
        self.fit_intercept = fit_intercept
        self.deviation_sd = deviation_sd
        self.coef = coef

    def _params(self):
        return {
            "group_features": self.group_features,
            "p": self.p,
            "warm_start": self.warm_start,
            "linear_fraction": self.linear_fraction,
            "fit_intercept": self.fit_intercept,
            "deviation_sd": self.deviation_sd,
            "coef": self.coef,
        }

    def __repr__(self):
        shape = np.shape(self.group_features)
        return (
            f"SideInfoGreedyPlugIn(group_features=<{'x'.join(map(str, shape))}>, p={self.p!r}, "
            f"warm_start={self.warm_start!r}, linear_fraction={self.linear_fraction!r}, "
            f"fit_intercept={self.fit_intercept!r}, deviation_sd={self.deviation_sd!r}, "
            f"coef={None if self.coef is None else np.asarray(self.coef).tolist()!r})"
        )

    def _side_compile(self, n_groups, budget):
        """Validate; returns the kernel configuration (a :class:`_side_kernels.SideConfig`)."""
        n_groups = _check_n_groups(n_groups)
        budget = _check_budget(budget)
        q = allocation_exponent(_check_p(self.p))
        Z = _check_features(self.group_features, self.fit_intercept)
        if Z.shape[0] != n_groups:
            raise ValueError(
                f"group_features has {Z.shape[0]} rows (groups), expected n_groups={n_groups}"
            )
        n0 = resolve_warm_start(self.warm_start, n_groups, budget, self.linear_fraction)
        tau = self.deviation_sd
        if tau is None:
            tau2 = -1.0
        else:
            if isinstance(tau, bool) or not isinstance(tau, numbers.Real) or not tau >= 0:
                raise ValueError(
                    f"deviation_sd must be None (estimate), a number >= 0 or np.inf, got {tau!r}"
                )
            tau2 = float(tau) ** 2
        if self.coef is None:
            known, coef = False, np.zeros(Z.shape[1])
        else:
            coef = np.ascontiguousarray(self.coef, dtype=float).reshape(-1)
            if coef.shape[0] != Z.shape[1]:
                raise ValueError(
                    f"coef has {coef.shape[0]} entries, expected {Z.shape[1]} "
                    f"(n_features={Z.shape[1] - int(bool(self.fit_intercept))}"
                    f"{' + intercept' if self.fit_intercept else ''})"
                )
            if not np.all(np.isfinite(coef)):
                raise ValueError("coef contains NaN or inf")
            known = True
        btab, vtab = log_variance_tables(budget)
        return SK_.SideConfig(
            n0=n0,
            tab=K_.count_table(q, budget),
            Z=Z,
            coef_known=coef,
            known=known,
            tau2_fixed=tau2,
            btab=btab,
            vtab=vtab,
        )

    def _compile(self, n_groups, budget, sigma=None):
        raise TypeError("SideInfoGreedyPlugIn runs on its own kernel (see simulate)")

    def _replication_runner(self, n_groups, budget, sigma, mean, dist, shape, seed, keys, p):
        """A function ``run(rep_offset, presampled, counts, estimates, rp)`` for simulate."""
        cfg = self._side_compile(n_groups, budget)

        def run(rep_offset, presampled, out_counts, out_means, out_rp):
            streams = K_.Streams(dist, shape, mean, sigma, seed, rep_offset, keys, presampled)
            out = K_.Outputs(out_counts, out_means, out_rp)
            SK_.side_simulate_kernel(cfg, streams, p, out)

        return run

    # -- online interface -------------------------------------------------------
    # The kernels take the named tuples of ``_kernels`` as plain tuples here
    # (Numba types those on its fast path: one online step stays as cheap as
    # with separate array arguments).
    def reset(self, n_groups, budget):
        """Start a run of ``budget`` samples over ``n_groups`` groups; returns ``self``."""
        self._cfg_ = self._side_compile(n_groups, budget)
        self.n_groups_, self.budget_ = int(n_groups), int(budget)
        K, m = self._cfg_.Z.shape
        self._state_ = {
            "counts": np.zeros(K, dtype=np.int64),
            "means": np.zeros(K),
            "m2": np.zeros(K),
            "steps": np.zeros(2, dtype=np.int64),  # [samples so far, warm start over]
        }
        self._work_ = SK_.side_work(K, m)
        # The online path never draws: a source of placeholders.
        source = K_.Source(
            0, 0.0, np.zeros(1), np.zeros(1), np.zeros(1, dtype=np.uint64), np.zeros((1, 1, 1)), 0
        )
        self._args_ = (tuple(self._cfg_), tuple(source), tuple(self._work_))
        return self

    def _advance(self, mode, group, x):
        s = self._state_
        cfg, source, work = self._args_
        state = (s["steps"], s["counts"], s["means"], s["m2"])  # a Welford
        return SK_.side_advance(mode, cfg, state, group, x, source, work)

    def _fit_now(self):
        self._require_started()
        s, w = self._state_, self._work_
        tau2 = SK_.side_fit(s["counts"], s["m2"], self._args_[0], self._args_[2])
        return w.out.copy(), w.coef.copy(), float(tau2)

    @property
    def plugin_variances_(self):
        """The plug-in variances ``sigma_hat_k^2`` the rule would use now."""
        return self._fit_now()[0]

    @property
    def coef_(self):
        """Current ``(gamma_0, gamma)`` (the known ones if given; NaN if not fitted)."""
        return self._fit_now()[1]

    @property
    def deviation_sd_(self):
        """Current ``tau`` (estimated or fixed; ``inf`` where the model is not used)."""
        return math.sqrt(self._fit_now()[2])
