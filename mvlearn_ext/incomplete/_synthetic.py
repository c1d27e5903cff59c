"""Unbalanced observation with the label in the poorly observed view (CIMLN test bed).

A package design, built to exhibit the setting of CIMLN's abstract: view
observation rates differ strongly, and "observation bias acts as a
confounder, causing clustering predictions to spuriously depend on
low-missing-rate views". Not one of the paper's benchmarks.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from mvlearn_ext.utils._validation import as_random_state, check_bool, check_count, real_array

__all__ = ["make_rate_mask", "make_unbalanced_views"]


def _check_rates(observation_rates):
    r = real_array(observation_rates, "observation_rates", ndim=1)
    if r.size < 2 or (r <= 0).any() or (r > 1).any():
        raise ValueError(
            f"observation_rates must hold >= 2 rates in (0, 1], got {observation_rates!r}"
        )
    return r


def make_rate_mask(n_samples, observation_rates, *, random_state=None):
    """A missing-view mask with a given observation rate per view.

    View ``v`` of each sample is observed independently with probability
    ``r_v`` (missing completely at random). A sample left with no view gets
    one back, view ``v`` with probability ``r_v / sum_u r_u``; this raises
    each rate by at most ``prod_u (1 - r_u)`` (``0.05 * 0.4 * 0.7 = 0.014``
    for rates ``0.95 / 0.6 / 0.3``).

    Parameters
    ----------
    n_samples : int
    observation_rates : sequence of float in (0, 1]
        ``r_v``, one per view.
    random_state : int, RandomState or Generator instance or None, default=None

    Returns
    -------
    mask : ndarray of bool, shape (n_samples, n_views)
        ``True`` where the view is observed; every row has a view.

    See Also
    --------
    make_unbalanced_mask : CIMLN's protocol.

    Examples
    --------
    >>> from mvlearn_ext.incomplete import make_rate_mask
    >>> m = make_rate_mask(20000, [0.95, 0.6, 0.3], random_state=0)
    >>> m.mean(axis=0).round(2).tolist(), bool(m.any(axis=1).all())
    ([0.96, 0.61, 0.3], True)
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive int, got {n_samples!r}")
    r = _check_rates(observation_rates)
    rng = as_random_state(random_state)
    mask = rng.uniform(size=(n_samples, r.size)) < r
    empty = np.flatnonzero(~mask.any(axis=1))
    if empty.size:
        mask[empty, rng.choice(r.size, size=empty.size, p=r / r.sum())] = True
    return mask


def make_unbalanced_views(
    n_samples=1500,
    *,
    n_clusters=5,
    observation_rates=(0.95, 0.6, 0.3),
    label_separation=(0.5, 1.5, 4.0),
    nuisance_separation=(4.0, 1.0, 0.0),
    n_features=10,
    random_state=None,
    return_nuisance=False,
):
    """Views whose label signal sits in the poorly observed view, with a mask.

    Each sample has a label ``y`` and an independent nuisance group ``z``,
    both uniform on ``{0, ..., n_clusters - 1}``. View ``v`` is::

        x_v = label_separation[v] * a_v[y] + nuisance_separation[v] * b_v[z] + e,

    with ``a_v[k]``, ``b_v[k]`` random unit directions in ``R^p`` (one set per
    view) and ``e`` standard normal noise. With the defaults the well
    observed view 0 (rate 0.95) clusters by the nuisance ``z``, view 1 (0.6)
    carries a moderate label signal and the poorly observed view 2 (0.3) a
    strong one; about 17 % of the samples are complete. A clustering of
    the completed views that follows view 0 finds ``z``, not ``y``.

    Parameters
    ----------
    n_samples : int, default=1500
    n_clusters : int >= 2, default=5
        Number of label classes and of nuisance groups.
    observation_rates : sequence of float in (0, 1], default=(0.95, 0.6, 0.3)
        Passed to :func:`make_rate_mask`; sets the number of views.
    label_separation, nuisance_separation : sequence of float >= 0
        One per view.
    n_features : int >= 1, default=10
        Features per view.
    random_state : int, RandomState or Generator instance or None, default=None
    return_nuisance : bool, default=False
        Also return ``z``.

    Returns
    -------
    Xs : list of ndarray of shape (n_samples, n_features)
        Fully observed views (use :func:`mask_views` to hide the missing rows).
    y : ndarray of int, shape (n_samples,)
    mask : ndarray of bool, shape (n_samples, n_views)
    z : ndarray of int, shape (n_samples,), optional

    See Also
    --------
    make_rate_mask : The mask alone.

    Examples
    --------
    >>> from mvlearn_ext.incomplete import make_unbalanced_views, mask_views
    >>> Xs, y, mask = make_unbalanced_views(300, random_state=0)
    >>> len(Xs), Xs[0].shape, mask.shape
    (3, (300, 10), (300, 3))
    """
    n_samples = check_count(n_samples, "n_samples", 2)
    n_clusters = check_count(n_clusters, "n_clusters", 2)
    n_features = check_count(n_features, "n_features", 1)
    check_bool(return_nuisance, "return_nuisance")
    r = _check_rates(observation_rates)
    V = r.size
    seps = []
    for name, value in (
        ("label_separation", label_separation),
        ("nuisance_separation", nuisance_separation),
    ):
        s = real_array(value, name, ndim=1)
        if s.shape != (V,) or (s < 0).any():
            raise ValueError(f"{name} must hold {V} floats >= 0 (one per view), got {value!r}")
        seps.append(s)
    lab, nui = seps
    rng = as_random_state(random_state)
    y = rng.randint(0, n_clusters, size=n_samples)
    z = rng.randint(0, n_clusters, size=n_samples)
    Xs = []
    for v in range(V):
        dirs = rng.normal(size=(2, n_clusters, n_features))
        dirs /= np.linalg.norm(dirs, axis=2, keepdims=True)
        X = lab[v] * dirs[0][y] + nui[v] * dirs[1][z] + rng.normal(size=(n_samples, n_features))
        Xs.append(X)
    mask = make_rate_mask(n_samples, r, random_state=rng)
    if return_nuisance:
        return Xs, y, mask, z
    return Xs, y, mask
