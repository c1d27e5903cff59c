"""Personalised FL by multi-task averaging of kernel mean embeddings (KMEs).

Reconstruction: Fermanian, Le Bars & Bellet, "Adaptive Personalized
Federated Learning via Multi-task Averaging of Kernel Mean Embeddings"
(arXiv 2603.02233) is known from its abstract only: each agent ``b``
minimises ``sum_c omega_bc R_c(h)`` with weights learned by estimating
``b``'s KME from all agents' KMEs with multi-task-averaging tools, moving
between local and global learning, with a random-Fourier-feature (RFF)
implementation that trades communication for accuracy. The weight rule
here is a reconstruction: the unbiased risk estimate of the weighted KME,

    ``R_b(omega) = ||sum_c omega_c mu_c - mu_b||^2 + 2 omega_b v_b - v_b``,

minimised over the simplex, optionally in its Q-aggregation form
``(1 - nu) R_b(omega) + nu sum_c omega_c R_b(e_c)`` (an upper-confidence-style
correction in the spirit of Blanchard, Fermanian & Marienwald 2024).
Everything is computed from per-agent sufficient statistics:
the mean RFF feature (D floats), the scalar ``v_c`` and, for ridge models,
``X^T X / n`` and ``X^T y / n``.
"""

from __future__ import annotations

import numbers
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils import check_random_state, metadata_routing
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_feature_names, check_is_fitted

from mvlearn_ext.moo import solve_simplex_qp
from mvlearn_ext.utils._validation import (
    _view_feature_names,
    check_allocation,
    check_magnitude,
    integer_array,
    real_array,
    validate_array,
    validate_vector,
)
from mvlearn_ext.utils._warnings import warn

__all__ = [
    "KMEPersonalizedRidge",
    "RandomFourierMap",
    "agent_kme_statistics",
    "agent_ridge_statistics",
    "collaboration_weights",
    "ditto_ridge",
    "mmd2_unbiased",
    "weighted_ridge",
]


class RandomFourierMap:
    """Random Fourier features of the Gaussian kernel (Rahimi & Recht 2007).

    ``phi(z) = sqrt(2/D) cos(W z + b)`` with rows of ``W`` drawn from
    ``N(0, bandwidth^-2 I)`` and ``b ~ U[0, 2 pi]``, so that
    ``phi(z) . phi(z')`` is unbiased for
    ``k(z, z') = exp(-||z - z'||^2 / (2 bandwidth^2))``.

    Parameters
    ----------
    n_components : int
        ``D``.
    n_features : int
        Dimension of ``z``.
    bandwidth : float, default=1.0
    random_state : int, Generator or None

    See Also
    --------
    agent_kme_statistics : The kernel mean embedding statistics of the features.
    KMEPersonalizedRidge : Uses these features.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.federated import RandomFourierMap
    >>> fmap = RandomFourierMap(2000, 2, bandwidth=1.0, random_state=0)
    >>> Z = fmap.transform(np.array([[0.0, 0.0], [1.0, 0.0]]))
    >>> round(float(Z[0] @ Z[1]), 1)  # the Gaussian kernel exp(-1 / 2)
    0.6
    """

    def __init__(self, n_components, n_features, *, bandwidth=1.0, random_state=None):
        if not isinstance(n_components, Integral) or n_components < 1:
            raise ValueError(f"n_components must be an int >= 1, got {n_components!r}")
        if not isinstance(n_features, Integral) or n_features < 1:
            raise ValueError(f"n_features must be an int >= 1, got {n_features!r}")
        if not isinstance(bandwidth, Real) or not bandwidth > 0:
            raise ValueError(f"bandwidth must be > 0, got {bandwidth!r}")
        self.n_components = int(n_components)
        self.n_features = int(n_features)
        self.bandwidth = float(bandwidth)
        rng = np.random.default_rng(random_state)
        self.W = rng.standard_normal((self.n_components, self.n_features)) / self.bandwidth
        self.b = rng.uniform(0.0, 2.0 * np.pi, self.n_components)

    def transform(self, Z):
        """The features ``phi(z)`` of every row of ``Z``.

        Parameters
        ----------
        Z : array-like of shape (n_samples, n_features)
            Points ``z``.

        Returns
        -------
        Phi : ndarray of shape (n_samples, n_components)
            ``sqrt(2/D) cos(W z + b)``, one row per point.

        Raises
        ------
        TypeError
            If ``Z`` is not a numeric array (strings included).
        ValueError
            If ``Z`` holds complex values, NaN or infinity, or values whose
            squares overflow, or is not of shape ``(n, n_features)``.
        """
        Z = real_array(Z, "Z", allow_empty=True)
        check_magnitude(Z, "Z")  # the kernel approximated takes squared distances
        if Z.ndim != 2 or Z.shape[1] != self.n_features:
            raise ValueError(f"Z must have shape (n, {self.n_features}), got {Z.shape}")
        return np.sqrt(2.0 / self.n_components) * np.cos(Z @ self.W.T + self.b)


def mmd2_unbiased(X, Y, *, bandwidth=1.0):
    """Unbiased MMD^2 with the Gaussian kernel, from kernel sums (not clipped).

    ``D_X + D_Y - 2 Kbar_XY`` with ``D_X`` the mean off-diagonal kernel
    value within ``X`` (Gretton et al. 2012; Marienwald et al. 2021).

    Parameters
    ----------
    X : array-like of shape (n, d)
        First sample (at least 2 points).
    Y : array-like of shape (m, d)
        Second sample (at least 2 points).
    bandwidth : float, default=1.0
        Width of the Gaussian kernel ``exp(-||z - z'||^2 / (2 bandwidth^2))``.

    Returns
    -------
    mmd2 : float
        The unbiased estimate; it can be negative when the laws are close.

    See Also
    --------
    collaboration_weights : Weights from the agents' kernel mean embeddings.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.federated import mmd2_unbiased
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(200, 2)), rng.normal(size=(200, 2))
    >>> bool(abs(mmd2_unbiased(X, Y)) < mmd2_unbiased(X, Y + 2.0))
    True
    """
    X = real_array(X, "X", ndim=2)
    Y = real_array(Y, "Y", ndim=2)
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns but Y has {Y.shape[1]}; they must match")
    if X.shape[0] < 2 or Y.shape[0] < 2:
        raise ValueError("X and Y need at least 2 samples each")
    check_magnitude(X, "X")  # the kernel takes squared distances
    check_magnitude(Y, "Y")

    def k(A, B):
        sq = (A**2).sum(1)[:, None] + (B**2).sum(1)[None, :] - 2 * A @ B.T
        return np.exp(-np.maximum(sq, 0) / (2 * bandwidth**2))

    n, m = X.shape[0], Y.shape[0]
    Kxx, Kyy = k(X, X), k(Y, Y)
    dx = (Kxx.sum() - np.trace(Kxx)) / (n * (n - 1))
    dy = (Kyy.sum() - np.trace(Kyy)) / (m * (m - 1))
    return float(dx + dy - 2 * k(X, Y).mean())


def agent_kme_statistics(Phi):
    """``(mean_feature, variance)`` of one agent from its feature matrix.

    ``variance`` is ``v_c = tr(Cov(phi)) / n``, the unbiased estimate of
    ``(E k(z, z) - ||mu_c||^2) / n_c`` = ``E ||mu_hat_c - mu_c||^2``.

    Parameters
    ----------
    Phi : array-like of shape (n_samples, D)
        The agent's features (e.g. :meth:`RandomFourierMap.transform` of its
        samples), at least 2 rows.

    Returns
    -------
    mean_feature : ndarray of shape (D,)
        The empirical kernel mean embedding ``mu_hat_c``.
    variance : float
        ``v_c``.

    See Also
    --------
    RandomFourierMap : The feature map.
    collaboration_weights : The weights computed from these statistics.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.federated import agent_kme_statistics
    >>> mean, var = agent_kme_statistics(np.array([[1.0, 0.0], [0.0, 1.0]]))
    >>> mean.tolist()
    [0.5, 0.5]
    """
    Phi = real_array(Phi, "Phi", ndim=2)
    check_magnitude(Phi, "Phi")  # the variance squares it
    n = Phi.shape[0]
    if n < 2:
        raise ValueError("an agent needs at least 2 samples for its variance estimate")
    mean = Phi.mean(axis=0)
    var = ((Phi - mean) ** 2).sum() / (n - 1) / n
    return mean, float(var)


def collaboration_weights(means, variances, *, method="unbiased", nu=0.0, n_samples=None):
    """Collaboration weights ``omega`` (one row per agent, on the simplex).

    Parameters
    ----------
    means : array-like of shape (B, D)
        Mean features ``mu_hat_c`` (RFF, or any Hilbert-space coordinates).
    variances : array-like of shape (B,)
        ``v_hat_c``.
    method : {"unbiased", "local", "global"}, default="unbiased"
        ``"unbiased"``: minimise ``(1 - nu) R_b(omega) + nu sum_c omega_c
        R_b(e_c)`` over the simplex (reconstruction; ``nu = 0`` is the plain
        unbiased-risk rule). ``"local"``: ``omega = I``. ``"global"``:
        ``omega_bc ∝ n_c`` (needs ``n_samples``), FedAvg's objective.
    nu : float in [0, 1], default=0.0
    n_samples : array-like of int of shape (B,), optional
        Every agent's number of samples (needed by ``method="global"``).

    Returns
    -------
    weights : ndarray of shape (B, B)
        Row ``b`` holds agent ``b``'s weights.

    See Also
    --------
    agent_kme_statistics : The statistics it takes.
    weighted_ridge : The ridge fit with these weights.
    mmd2_unbiased : The distance between two agents' distributions.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.federated import collaboration_weights
    >>> W = collaboration_weights(np.eye(3), np.full(3, 0.1), method="global", n_samples=[5] * 3)
    >>> W.round(3).tolist()[0]
    [0.333, 0.333, 0.333]
    """
    M = real_array(means, "means", ndim=2)
    check_magnitude(M, "means")  # the weights come from the Gram matrix M M^T
    v = real_array(variances, "variances").reshape(-1)
    B = M.shape[0]
    if v.shape != (B,):
        raise ValueError(f"variances must have shape ({B},) (one per row of means), got {v.shape}")
    if v.min() < 0:
        raise ValueError(f"variances must be >= 0, got {v.min()!r}")
    if n_samples is not None:
        n = integer_array(n_samples, "n_samples", ndim=1, low=0)
        if n.shape != (B,):
            raise ValueError(
                f"n_samples must have shape ({B},) (one per row of means), got {n.shape}"
            )
        if n.sum() == 0:
            raise ValueError("n_samples are all 0")
    if method == "local":
        return np.eye(B)
    if method == "global":
        if n_samples is None:
            raise ValueError("method='global' needs n_samples")
        return np.tile(n / n.sum(), (B, 1))
    if method != "unbiased":
        raise ValueError(f"method must be 'unbiased', 'local' or 'global', got {method!r}")
    if isinstance(nu, bool) or not isinstance(nu, numbers.Real) or not 0 <= nu <= 1:
        raise ValueError(f"nu must be a number in [0, 1], got {nu!r}")
    G = M @ M.T
    W = np.empty((B, B))
    for b in range(B):
        # R_b(omega) = omega^T G omega - 2 omega^T G_b + G_bb + 2 omega_b v_b - v_b
        lin = -2.0 * G[b] + 2.0 * v[b] * (np.arange(B) == b)
        vertex = np.diag(G) + lin  # R_b(e_c) - G_bb + v_b
        Q = 2.0 * (1.0 - nu) * G
        c = (1.0 - nu) * lin + nu * vertex
        W[b] = solve_simplex_qp(Q, c)
    return W


def agent_ridge_statistics(X, y):
    """``(X^T X / n, X^T y / n, n)`` of one agent (with a leading 1-column).

    Parameters
    ----------
    X : array-like of shape (n, p)
        The agent's features.
    y : array-like of shape (n,)
        The agent's targets.

    Returns
    -------
    gram : ndarray of shape (p + 1, p + 1)
        ``X'^T X' / n`` with ``X' = [1, X]``.
    moment : ndarray of shape (p + 1,)
        ``X'^T y / n``.
    n : int
        The number of samples.

    See Also
    --------
    weighted_ridge : The personalised ridge fit from these statistics.
    ditto_ridge : The Ditto fit from these statistics.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.federated import agent_ridge_statistics
    >>> gram, moment, n = agent_ridge_statistics(np.array([[1.0], [3.0]]), np.array([1.0, 2.0]))
    >>> gram.tolist(), moment.tolist(), n
    ([[1.0, 2.0], [2.0, 5.0]], [1.5, 3.5], 2)
    """
    # Named errors for NaN/inf, values too large to square (X^T X overflows),
    # complex, strings, ragged lists.
    X = validate_array(X, "X", dtype=np.float64)
    y = validate_vector(y, "y", n_samples=X.shape[0])
    Xa = np.hstack([np.ones((X.shape[0], 1)), X])
    n = X.shape[0]
    return Xa.T @ Xa / n, Xa.T @ y / n, n


def _check_ridge_statistics(grams, moments):
    """The agents' ``S_c`` (B, q, q) and ``s_c`` (B, q) as float64 arrays of matching shapes."""
    S = real_array(grams, "grams", ndim=3)
    s = real_array(moments, "moments", ndim=2)
    B, q = S.shape[:2]
    if S.shape[2] != q:
        raise ValueError(f"grams must have shape (B, q, q), got {S.shape}")
    if s.shape != (B, q):
        raise ValueError(f"moments must have shape ({B}, {q}) (as grams {S.shape}), got {s.shape}")
    return S, s


def weighted_ridge(grams, moments, weights, *, alpha=1e-3):
    """Per-agent ridge ``theta_b = (sum_c w_bc S_c + alpha I')^-1 sum_c w_bc s_c``.

    ``I'`` leaves the intercept (first coordinate) unpenalised.

    Parameters
    ----------
    grams : array-like of shape (B, p + 1, p + 1)
        Every agent's ``S_c`` (see :func:`agent_ridge_statistics`).
    moments : array-like of shape (B, p + 1)
        Every agent's ``s_c``.
    weights : array-like of shape (B, B)
        Collaboration weights; row ``b`` holds agent ``b``'s ``w_bc``.
    alpha : float, default=1e-3
        Ridge penalty on the coefficients (not the intercept).

    Returns
    -------
    coefs : ndarray of shape (B, p + 1)
        Intercept first.

    See Also
    --------
    collaboration_weights : The weights.
    agent_ridge_statistics : The statistics it takes.
    ditto_ridge : The Ditto baseline.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.federated import agent_ridge_statistics, weighted_ridge
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> stats = [agent_ridge_statistics(X, 1.0 + 2.0 * X[:, 0]) for _ in range(2)]
    >>> grams, moments = np.stack([s[0] for s in stats]), np.stack([s[1] for s in stats])
    >>> weighted_ridge(grams, moments, np.full((2, 2), 0.5), alpha=0.0).round(6).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    S, s = _check_ridge_statistics(grams, moments)
    W = real_array(weights, "weights", ndim=2)
    if W.shape[1] != S.shape[0]:
        raise ValueError(
            f"weights must have {S.shape[0]} columns (one per agent of grams), got shape {W.shape}"
        )
    pen = alpha * np.eye(S.shape[1])
    pen[0, 0] = 0.0
    out = np.empty((W.shape[0], S.shape[1]))
    for b in range(W.shape[0]):
        A = np.tensordot(W[b], S, axes=1) + pen
        out[b] = np.linalg.solve(A, W[b] @ s)
    return out


def ditto_ridge(grams, moments, global_coef, *, reg_lambda=1.0, alpha=1e-3):
    """Ditto (Li et al., ICML 2021) for ridge, in closed form.

    ``v_b = argmin_v R_b(v) + (reg_lambda / 2) ||v - w*||^2`` with
    ``R_b(v) = ||y_b - X_b v||^2 / (2 n_b) + alpha/2 ||v||^2``:
    ``v_b = (S_b + alpha I' + reg_lambda I)^-1 (s_b + reg_lambda w*)``.
    ``reg_lambda = 0`` is local, ``reg_lambda -> inf`` global.

    Parameters
    ----------
    grams : array-like of shape (B, p + 1, p + 1)
        Every agent's ``S_b`` (see :func:`agent_ridge_statistics`).
    moments : array-like of shape (B, p + 1)
        Every agent's ``s_b``.
    global_coef : array-like of shape (p + 1,)
        The global model ``w*``, intercept first.
    reg_lambda : float, default=1.0
        Strength of the pull toward ``w*``.
    alpha : float, default=1e-3
        Ridge penalty on the coefficients (not the intercept).

    Returns
    -------
    coefs : ndarray of shape (B, p + 1)
        The personalised models ``v_b``, intercept first.

    See Also
    --------
    weighted_ridge : The personalised ridge with collaboration weights.
    KMEPersonalizedRidge : The estimator with KME-based weights.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.federated import agent_ridge_statistics, ditto_ridge
    >>> rng = np.random.default_rng(0)
    >>> stats = [agent_ridge_statistics(rng.normal(size=(20, 2)), rng.normal(size=20))
    ...          for _ in range(3)]
    >>> grams, moments = np.stack([s[0] for s in stats]), np.stack([s[1] for s in stats])
    >>> ditto_ridge(grams, moments, np.zeros(3), reg_lambda=1.0).shape
    (3, 3)
    """
    S, s = _check_ridge_statistics(grams, moments)
    w = real_array(global_coef, "global_coef", ndim=1)
    p = S.shape[1]
    if w.shape != (p,):
        raise ValueError(
            f"global_coef must have shape ({p},) (as a row of moments), got {w.shape}"
        )
    pen = alpha * np.eye(p)
    pen[0, 0] = 0.0
    return np.stack(
        [
            np.linalg.solve(S[b] + pen + reg_lambda * np.eye(p), s[b] + reg_lambda * w)
            for b in range(S.shape[0])
        ]
    )


def _mean_and_scale(Z):
    """Column means and standard deviations of ``Z``, whatever its units.

    Each column is divided by a power of two near its largest magnitude
    before squaring (so that values near 1e-300 keep their spread), and a
    column whose spread is at rounding level relative to its magnitude
    gets the scale 1.
    """
    top = np.max(np.abs(Z), axis=0)
    unit = np.where(top > 0, np.ldexp(1.0, np.frexp(top)[1]), 1.0)
    W = Z / unit
    mean, std = W.mean(0), W.std(0)
    return mean * unit, np.where(is_constant(mean, std), 1.0, std * unit)


def is_constant(mean, std):
    """Columns whose spread is at rounding level relative to their magnitude."""
    return std <= 8 * np.finfo(np.float64).eps * np.abs(mean)


def _check_agents(Xs, ys):
    if not isinstance(Xs, (list, tuple)) or not isinstance(ys, (list, tuple)):
        raise TypeError("Xs and ys must be lists (one array per agent)")
    if len(Xs) != len(ys) or len(Xs) < 1:
        raise ValueError(
            f"Xs and ys must have the same number (>= 1) of agents, got {len(Xs)} and {len(ys)}"
        )
    out_X, out_y = [], []
    p = None
    for b, (X, y) in enumerate(zip(Xs, ys, strict=True)):
        # Named errors for NaN/inf, values too large to square (the ridge
        # statistics X^T X overflow), complex, strings, ragged lists.
        X = validate_array(X, f"Xs[{b}]", dtype=np.float64, min_samples=0)
        y = validate_vector(y, f"ys[{b}]")
        if X.shape[0] != y.shape[0]:
            raise ValueError(
                f"agent {b}: Xs[{b}] has {X.shape[0]} rows but ys[{b}] has {y.shape[0]}"
            )
        if X.shape[0] < 2:
            raise ValueError(f"agent {b} needs at least 2 samples")
        if p is None:
            p = X.shape[1]
        elif X.shape[1] != p:
            raise ValueError(f"agent {b}: Xs[{b}] has {X.shape[1]} features, agent 0 has {p}")
        out_X.append(X)
        out_y.append(y)
    return out_X, out_y


def _agent_feature_names(Xs):
    """The string column names shared by the agents' DataFrames in ``Xs`` (None if none).

    Raises a ValueError naming the agent whose names differ from those of the
    first named agent (other names, or the same in another order).
    """
    names = _view_feature_names(Xs)
    if names is None:
        return None
    first = next(b for b, n in enumerate(names) if n is not None)
    for b, given in enumerate(names):
        if given is not None and not np.array_equal(given, names[first]):
            detail = (
                "the same names in another order"
                if set(given) == set(names[first])
                else "other names"
            )
            raise ValueError(
                f"the feature names of Xs[{b}] differ from those of Xs[{first}] ({detail}); "
                "every agent must have the same features in the same order"
            )
    return names[first]


class KMEPersonalizedRidge(RegressorMixin, BaseEstimator):
    """Personalised ridge regression with KME-based collaboration weights.

    Reconstruction of Fermanian, Le Bars & Bellet (arXiv 2603.02233), from
    its abstract (see the module docstring): every agent ``b`` gets the ridge
    fit of ``sum_c omega_bc R_c``, with ``omega_b`` learned from the RFF
    kernel mean embeddings of the agents' joint samples ``z = (x, y)``.
    Communication: ``D + 1`` floats per agent for the weights, plus the
    ridge statistics.

    Parameters
    ----------
    n_components : int, default=256
        RFF dimension ``D``.
    bandwidth : float or "median", default=1.0
        Gaussian-kernel width on the standardised ``z``; ``"median"`` is the
        median pairwise distance of (up to 500) pooled standardised samples.
    alpha : float, default=1e-3
        Ridge penalty on the coefficients of the standardised features (each
        feature divided by its pooled standard deviation, ``z_scale_``), so
        that the fit does not depend on the units of ``X``; the intercept is
        unpenalised.
    weights : {"unbiased", "local", "global"}, default="unbiased"
    nu : float, default=0.3
        Q-aggregation mixing (see :func:`collaboration_weights`); ``0`` is the
        plain unbiased-risk rule, which overfits its noisy risk estimate
        (it puts weight on agents whose estimated risk is low by chance).
        The default is this package's choice, not a value from the paper.
    random_state : int, RandomState instance or None, default=None
        Seeds the random Fourier features and the subsample of
        ``bandwidth="median"``.

    Attributes
    ----------
    weights_ : ndarray of shape (n_agents, n_agents)
    coef_ : ndarray of shape (n_agents, n_features)
    intercept_ : ndarray of shape (n_agents,)
    z_mean_, z_scale_ : ndarray of shape (n_features + 1,)
        The pooled mean and standard deviation of ``z = (x, y)`` (1 for a
        column that does not vary relative to its magnitude).
    bandwidth_ : float
    n_agents_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names of the agents' DataFrames at fit (they must agree);
        defined only when some agent's ``X`` has string column names.
        :meth:`predict` refuses an ``X`` whose names differ (other names, or
        the same in another order).

    See Also
    --------
    KMEProtocolServer : The same fit as a federated protocol.
    collaboration_weights : The weights it learns from the agents' kernel mean embeddings.
    ditto_ridge : The Ditto baseline for ridge.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.federated import KMEPersonalizedRidge
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(50, 2)) for _ in range(3)]
    >>> ys = [X @ [1.0, -1.0] + 0.1 * rng.normal(size=50) for X in Xs]
    >>> model = KMEPersonalizedRidge(random_state=0).fit(Xs, ys)
    >>> model.weights_.shape, bool(np.allclose(model.weights_.sum(1), 1))
    ((3, 3), True)
    """

    # The data arguments are not metadata to route.
    __metadata_request__fit = {"Xs": metadata_routing.UNUSED, "ys": metadata_routing.UNUSED}

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "bandwidth": [Interval(Real, 0, None, closed="neither"), StrOptions({"median"})],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "weights": [StrOptions({"unbiased", "local", "global"})],
        "nu": [Interval(Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        n_components=256,
        bandwidth=1.0,
        alpha=1e-3,
        weights="unbiased",
        nu=0.3,
        random_state=None,
    ):
        self.n_components = n_components
        self.bandwidth = bandwidth
        self.alpha = alpha
        self.weights = weights
        self.nu = nu
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, Xs, ys):
        """Fit every agent's model from per-agent data lists ``Xs``, ``ys``.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples_b, n_features)
            The features of each agent (at least 2 samples each, the same
            features for all; DataFrames with string column names must have
            the same names in the same order).
        ys : list of array-like of shape (n_samples_b,)
            The targets of each agent.

        Returns
        -------
        self : KMEPersonalizedRidge
        """
        names = _agent_feature_names(Xs)
        Xs, ys = _check_agents(Xs, ys)
        self.__dict__.pop("feature_names_in_", None)
        if names is not None:
            self.feature_names_in_ = names
        # the largest array: one agent's RFF features
        n_rows = max(X.shape[0] for X in Xs)
        check_allocation(self.n_components * n_rows, "n_components", self.n_components)
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(2**31 - 1))
        Z = [np.column_stack([X, y]) for X, y in zip(Xs, ys, strict=True)]
        allz = np.vstack(Z)  # standardisation is a global, public-statistics step (design)
        self.z_mean_, self.z_scale_ = _mean_and_scale(allz)
        bw = self.bandwidth
        if bw == "median":
            sub = (allz[rng.permutation(allz.shape[0])[:500]] - self.z_mean_) / self.z_scale_
            d2 = ((sub[:, None, :] - sub[None, :, :]) ** 2).sum(-1)
            bw = float(np.sqrt(np.median(d2[np.triu_indices(sub.shape[0], 1)])))
        self.bandwidth_ = bw
        fmap = RandomFourierMap(self.n_components, allz.shape[1], bandwidth=bw, random_state=seed)
        stats = [
            agent_kme_statistics(fmap.transform((z - self.z_mean_) / self.z_scale_)) for z in Z
        ]
        means = np.stack([m for m, _ in stats])
        var = np.array([v for _, v in stats])
        n = np.array([X.shape[0] for X in Xs])
        self.weights_ = collaboration_weights(
            means, var, method=self.weights, nu=self.nu, n_samples=n
        )
        x_scale = self.z_scale_[:-1]
        rs = [agent_ridge_statistics(X / x_scale, y) for X, y in zip(Xs, ys, strict=True)]
        theta = weighted_ridge(
            np.stack([r[0] for r in rs]),
            np.stack([r[1] for r in rs]),
            self.weights_,
            alpha=self.alpha,
        )
        self.intercept_ = theta[:, 0]
        self.coef_ = theta[:, 1:] / x_scale
        self.n_agents_ = len(Xs)
        self.n_features_in_ = Xs[0].shape[1]
        return self

    def predict(self, X, agent=None):
        """Predictions of agent ``agent``'s model, shape (n_samples,).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A DataFrame must have the column names of the fit, in the same
            order (``feature_names_in_``).
        agent : int or None, default=None
            The agent whose model predicts; may be omitted only when the
            model was fitted on a single agent.
        """
        check_is_fitted(self)
        # scikit-learn's check of the names: it raises for other names or another
        # order; its warnings (names at fit but not now, or the converse) are
        # raised again here so that they name the caller's line.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _check_feature_names(self, X, reset=False)
        for record in caught:
            warn(str(record.message), record.category)
        if agent is None:
            if self.n_agents_ != 1:
                raise ValueError(
                    f"agent is required: the model was fitted on {self.n_agents_} agents"
                )
            agent = 0
        if (
            isinstance(agent, bool)
            or not isinstance(agent, Integral)
            or not 0 <= agent < self.n_agents_
        ):
            raise ValueError(f"agent must be an int in [0, {self.n_agents_}), got {agent!r}")
        X = validate_array(X, "X", dtype=np.float64, min_samples=0)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have shape (n, {self.n_features_in_}), got {X.shape}")
        return X @ self.coef_[agent] + self.intercept_[agent]

    def score(self, X, y, agent=None):
        """Coefficient of determination ``R^2`` of agent ``agent``'s predictions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test samples.
        y : array-like of shape (n_samples,)
            True targets.
        agent : int or None, default=None
            The agent whose model predicts (as in :meth:`predict`).

        Returns
        -------
        score : float
        """
        from sklearn.metrics import r2_score

        return r2_score(y, self.predict(X, agent))
