"""Contaminated multi-task regression data: the settings of Kim (ICML 2026)."""

from __future__ import annotations

import numpy as np
from sklearn.utils import Bunch, check_random_state

from mvlearn_ext.utils._validation import check_count, check_real, integer_array

__all__ = ["make_contaminated_tasks"]


def _upper_hemisphere(rng, n, d):
    g = rng.standard_normal((n, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    g[g[:, 0] < 0] *= -1.0
    return g


def make_contaminated_tasks(
    n_tasks=30,
    n_samples=100,
    n_features=30,
    *,
    delta=0.3,
    epsilon=0.1,
    alpha=1.0,
    noise=1.0,
    center="axis",
    outlier_scale=10.0,
    balancedness=None,
    random_state=None,
):
    """Linear tasks near a common centre, a fraction of them arbitrary outliers.

    The synthetic design of Kim (2026), taken from the paper's reference code:

    * centre ``theta* = 2 e_1`` (``center="axis"``) or ``2 u`` with ``u``
      uniform on the upper unit hemisphere (``"dense"``);
    * inliers ``theta_j = theta* + delta u_j``; ``floor(epsilon m)`` outliers,
      chosen at random, ``theta_j = outlier_scale u_j`` (``u_j`` uniform on
      the upper hemisphere, ``u_1 >= 0``);
    * covariates ``x = (g / ||g||) * s`` with ``g ~ N(0, I)`` and scales
      ``s_k = k^(-alpha)``, so the population second moment is
      ``diag(s^2) / d`` (uniform on the sphere, then scaled; not Gaussian);
    * ``y = x^T theta_j + noise * N(0, 1)``.

    With ``balancedness=B`` (the paper's B-sweep), inliers get two-group
    "spiked" second moments ``proportional to eta I + (1 - eta) e_g e_g^T``
    with spike ``g = 1`` (majority) or ``g = 2`` (minority of size
    ``max(1, floor(n_inliers / B))``, capped at ``n_inliers / 2``) and
    ``eta = (1/B - p_min) / (1 - p_min)`` clipped to [0, 1]. Outlier tasks
    get the majority's spiked moment (spike ``g = 1``), as in the paper's
    reference code; ``alpha`` is then unused. The scales are
    ``s_k = sqrt(eta)`` off the spike and 1 on it, so ``B`` is exactly the
    population balancedness of the inliers. At ``B = 5`` with 25 inliers
    ``p_min = 1/B`` and ``eta = 0``: every task is rank one.

    Parameters
    ----------
    n_tasks : int, default=30
        ``m`` (>= 1).
    n_samples : int or array-like of int, default=100
        Rows per task, each >= 1 (one value, or one per task).
    n_features : int, default=30
        ``d`` (>= 1; >= 2 with ``balancedness``).
    delta : float, default=0.3
        Spread (>= 0) of the inliers around the centre.
    epsilon : float in [0, 1], default=0.1
        Fraction of outlier tasks.
    alpha : float, default=1.0
        Decay of the covariate scales (0: isotropic).
    noise : float, default=1.0
        Noise standard deviation ``sigma`` (>= 0).
    center : {"axis", "dense"}, default="axis"
    outlier_scale : float, default=10.0
        Norm (>= 0) of the outlier tasks' coefficients.
    balancedness : float or None, default=None
        The target ``B >= 1`` of the two-group spiked design (``None``: off).
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (sum n_j, d), ``y`` (sum n_j,), ``tasks`` (sum n_j,) task
        indices, ``coef`` (m, d) the true ``theta_j``, ``center`` (d,),
        ``outliers`` (m,) bool, ``second_moment`` (m, d) the diagonal of
        every task's population second moment ``Sigma_j``, and
        ``Xs``/``ys`` the per-task lists.

    Raises
    ------
    TypeError
        If a count is not an int or a float parameter not a real number.
    ValueError
        If a parameter is out of the range given above, or ``n_samples`` has
        neither one value nor one per task.

    See Also
    --------
    mvlearn_ext.multitask.ARMULRegressor : A regressor robust to the outlier tasks.

    Examples
    --------
    >>> from mvlearn_ext.datasets import make_contaminated_tasks
    >>> data = make_contaminated_tasks(n_tasks=5, n_samples=8, n_features=3, random_state=0)
    >>> data.X.shape, data.coef.shape, int(data.outliers.sum())
    ((40, 3), (5, 3), 0)
    """
    m = check_count(n_tasks, "n_tasks", 1)
    d = check_count(n_features, "n_features", 1)
    sizes = integer_array(n_samples, "n_samples", ndim=(0, 1), low=1)
    if sizes.ndim == 1 and sizes.shape != (m,):
        raise ValueError(
            f"n_samples must be one int or one per task ({m} for n_tasks={m}), "
            f"got {sizes.shape[0]} values"
        )
    sizes = np.broadcast_to(sizes, (m,)).copy()
    delta = check_real(delta, "delta", low=0.0)
    epsilon = check_real(epsilon, "epsilon")
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1] (a fraction of the tasks), got {epsilon!r}")
    alpha = check_real(alpha, "alpha")
    noise = check_real(noise, "noise", low=0.0)
    outlier_scale = check_real(outlier_scale, "outlier_scale", low=0.0)
    if balancedness is not None:
        balancedness = check_real(balancedness, "balancedness", low=1.0)
        if d < 2:
            raise ValueError(
                f"balancedness needs n_features >= 2 (the minority's spike is on the "
                f"second coordinate), got n_features={d}"
            )
    rng = check_random_state(random_state)
    gen = np.random.default_rng(rng.randint(2**31 - 1))
    if center == "axis":
        theta_star = np.zeros(d)
        theta_star[0] = 2.0
    elif center == "dense":
        theta_star = 2.0 * _upper_hemisphere(gen, 1, d)[0]
    else:
        raise ValueError(f"center must be 'axis' or 'dense', got {center!r}")
    n_out = int(np.floor(epsilon * m + 1e-9))
    outliers = np.zeros(m, dtype=bool)
    outliers[gen.choice(m, size=n_out, replace=False)] = True
    U = _upper_hemisphere(gen, m, d)
    coef = np.where(outliers[:, None], outlier_scale * U, theta_star + delta * U)
    base = np.arange(1, d + 1, dtype=float) ** (-float(alpha))
    scales = np.tile(base, (m, 1))
    if balancedness is not None:
        inliers = np.flatnonzero(~outliers)
        n_in = inliers.size
        n_min = int(min(max(1, np.floor(n_in / balancedness)), n_in // 2))
        p_min = n_min / n_in if n_in else 0.0
        eta = float(np.clip((1.0 / balancedness - p_min) / (1.0 - p_min), 0.0, 1.0))
        minority = gen.permutation(inliers)[:n_min]
        spike = np.zeros(m, dtype=np.int64)
        spike[minority] = 1
        # Every task, outliers included, gets the spiked moment; only inliers
        # of the minority have their spike on the second coordinate.
        for j in range(m):
            s = np.full(d, np.sqrt(eta))
            s[spike[j]] = 1.0
            scales[j] = s
    Xs, ys = [], []
    for j in range(m):
        g = gen.standard_normal((sizes[j], d))
        X = g / np.linalg.norm(g, axis=1, keepdims=True) * scales[j]
        Xs.append(X)
        ys.append(X @ coef[j] + noise * gen.standard_normal(sizes[j]))
    tasks = np.concatenate([np.full(sizes[j], j) for j in range(m)])
    return Bunch(
        X=np.vstack(Xs),
        y=np.concatenate(ys),
        tasks=tasks,
        coef=coef,
        center=theta_star,
        outliers=outliers,
        second_moment=scales**2 / d,
        Xs=Xs,
        ys=ys,
    )
