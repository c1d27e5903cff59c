"""Synthetic multi-view data with a known cluster structure."""

from __future__ import annotations

import numpy as np

from mvlearn_ext.datasets._base import check_seed_sequence
from mvlearn_ext.utils._validation import check_bool, check_count, check_real

__all__ = ["make_multiview_blobs"]

# Rows of one view are drawn this many values at a time (about 8 MB of
# float64), so that the temporaries stay small next to the output. The values
# do not depend on it: NumPy's generators produce the same stream whether a
# block of normals is drawn at once or in pieces.
_CHUNK_VALUES = 1 << 20


def _draw_rows(rng, mu, seen, std, dtype, chunk_values=_CHUNK_VALUES):
    """Rows ``mu[seen] + std * N(0, I)``, drawn in blocks of about ``chunk_values`` values."""
    n_samples, d = seen.shape[0], mu.shape[1]
    X = np.empty((n_samples, d), dtype=dtype)
    step = max(1, chunk_values // d)
    for start in range(0, n_samples, step):
        stop = min(start + step, n_samples)
        block = rng.standard_normal((stop - start, d))
        block *= std
        block += mu[seen[start:stop]]
        X[start:stop] = block
    return X


def _per_view(value, name, n_views, check):
    """A scalar broadcast to every view, or a sequence of one value per view."""
    if isinstance(value, (str, bytes)):
        raise TypeError(
            f"{name} must be a number or a sequence of {n_views} numbers, got {value!r}"
        )
    if np.ndim(value) == 0:
        return [check(value, name)] * n_views
    values = list(np.asarray(value, dtype=object).ravel()) if np.ndim(value) == 1 else None
    if values is None:
        raise ValueError(
            f"{name} must be a number or a 1-d sequence, got {np.ndim(value)} dimensions"
        )
    if len(values) != n_views:
        raise ValueError(
            f"{name} has {len(values)} entries but n_views={n_views}; give one value per "
            "view, or a single value for all views"
        )
    return [check(v, f"{name}[{i}]") for i, v in enumerate(values)]


def _cluster_sizes(n_samples, n_clusters, weights):
    """Exact cluster sizes: balanced, or proportional to ``weights``.

    Sizes are ``floor(n * w_c)`` plus one for the clusters with the largest
    remainders (ties to the lower index), so they always sum to ``n``.
    """
    if weights is None:
        w = np.full(n_clusters, 1.0 / n_clusters)
    else:
        if isinstance(weights, (str, bytes)) or np.ndim(weights) != 1:
            raise TypeError(f"weights must be None or a 1-d sequence of {n_clusters} numbers")
        try:
            w = np.asarray(weights, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"weights must contain real numbers, got {weights!r}") from exc
        if w.shape[0] != n_clusters:
            raise ValueError(f"weights has {w.shape[0]} entries but n_clusters={n_clusters}")
        if not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise ValueError(f"weights must be finite and > 0, got {w.tolist()}")
        w = w / w.sum()
    exact = n_samples * w
    sizes = np.floor(exact).astype(np.int64)
    short = n_samples - int(sizes.sum())
    if short:
        order = np.argsort(-(exact - sizes), kind="stable")
        sizes[order[:short]] += 1
    empty = np.flatnonzero(sizes == 0)
    if empty.size:
        raise ValueError(
            f"n_samples={n_samples} leaves cluster {int(empty[0])} empty "
            f"(n_clusters={n_clusters}{'' if weights is None else ', with these weights'}); "
            "increase n_samples"
        )
    return sizes


def make_multiview_blobs(
    n_samples=500,
    *,
    n_views=3,
    n_features=10,
    n_clusters=3,
    cluster_std=1.0,
    informative=1.0,
    noise=0.0,
    weights=None,
    center_box=(-10.0, 10.0),
    shuffle=True,
    dtype=np.float64,
    random_state=None,
    return_centers=False,
):
    """Generate isotropic Gaussian blobs seen through several views.

    Every sample belongs to one of ``n_clusters`` clusters. Each view ``v``
    has its own cluster centres and is generated independently given the
    cluster: row ``i`` of view ``v`` is

        ``x_i^v = mu^v_{z_i^v} + cluster_std_v * e_i^v``,  ``e_i^v ~ N(0, I)``,

    where ``z_i^v`` is the sample's cluster ``y_i``, except for a fraction
    ``noise_v`` of the samples, chosen at random in each view, for which it
    is redrawn uniformly from all the clusters (like ``flip_y`` of
    :func:`sklearn.datasets.make_classification`): such a row "sees" a random
    cluster, often not its own, so views disagree and combining them helps;
    ``noise_v = 1`` makes view ``v`` independent of the labels. Only the first ``m_v`` features
    of a view carry the clusters: their centre coordinates are drawn
    uniformly from ``center_box``; the other features have centre 0 for every
    cluster and are pure noise, with ``m_v = round(informative_v * n_features_v)``
    (halves rounded up, and at least 1 when ``informative_v > 0``). How well
    the clusters separate is set by the width of ``center_box`` relative to
    ``cluster_std``.

    The views are drawn from independent random streams spawned from
    ``random_state``: with the same seed, changing the settings of one view,
    or adding views at the end, leaves the other views and the labels as
    they were. Memory is the output plus small blocks of temporaries, so
    ``n_samples`` can be in the millions.

    Parameters
    ----------
    n_samples : int, default=500
        Number of samples, >= ``n_clusters``.
    n_views : int, default=3
        Number of views, >= 1.
    n_features : int or sequence of int, default=10
        Features of every view, or one number per view (>= 1 each).
    n_clusters : int, default=3
        Number of clusters, >= 1.
    cluster_std : float or sequence of float, default=1.0
        Standard deviation of the noise of each view (>= 0), or one per view.
    informative : float or sequence of float, default=1.0
        Fraction, in [0, 1], of each view's features that carry the clusters;
        0 makes the view pure noise. One value for all views or one per view.
    noise : float or sequence of float, default=0.0
        Fraction, in [0, 1], of the samples whose row in a view is drawn from
        a uniformly random cluster instead of their own (rounded to a whole
        number of samples and chosen independently per view; with ``k``
        clusters about ``noise * (k - 1) / k`` of the rows end up in another
        cluster). One value for all views or one per view.
    weights : sequence of float, optional
        Relative cluster sizes (> 0, normalised to sum to 1). By default the
        clusters are balanced. Sizes are exact, not random: ``floor(n * w_c)``
        plus one for the largest remainders.
    center_box : tuple of float, default=(-10.0, 10.0)
        Bounds ``(low, high)`` of the informative centre coordinates.
    shuffle : bool, default=True
        Shuffle the samples (all views and ``y`` alike). If False the samples
        are ordered by cluster.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        dtype of the views and centres. The values are computed in float64.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        Seed for reproducible output. NumPy's global random state is never
        used; ``None`` draws fresh entropy from the operating system.
    return_centers : bool, default=False
        Also return the centres of every view.

    Returns
    -------
    Xs : list of ndarray of shape (n_samples, n_features_v)
        The views.
    y : ndarray of int64 of shape (n_samples,)
        The cluster of each sample, 0 to ``n_clusters - 1``.
    centers : list of ndarray of shape (n_clusters, n_features_v)
        Only when ``return_centers=True``: the centres of each view (zero on
        the non-informative features).

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is out of range, or a per-view sequence does not have
        ``n_views`` entries.

    See Also
    --------
    sklearn.datasets.make_blobs : the single-view version.
    load_handwritten : a real six-view data set.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.datasets import make_multiview_blobs
    >>> Xs, y = make_multiview_blobs(
    ...     n_samples=90, n_views=2, n_features=[5, 3], n_clusters=3, random_state=0
    ... )
    >>> [X.shape for X in Xs]
    [(90, 5), (90, 3)]
    >>> np.bincount(y)
    array([30, 30, 30])

    A noisy second view with only one informative feature:

    >>> Xs, y, centers = make_multiview_blobs(
    ...     n_samples=100, n_views=2, n_features=4, informative=[1.0, 0.25],
    ...     noise=[0.0, 0.2], random_state=0, return_centers=True,
    ... )
    >>> centers[1][:, 1:]
    array([[0., 0., 0.],
           [0., 0., 0.],
           [0., 0., 0.]])
    """
    n_samples = check_count(n_samples, "n_samples", 1)
    n_views = check_count(n_views, "n_views", 1)
    n_clusters = check_count(n_clusters, "n_clusters", 1)
    features = _per_view(n_features, "n_features", n_views, lambda v, n: check_count(v, n, 1))
    stds = _per_view(cluster_std, "cluster_std", n_views, lambda v, n: check_real(v, n, low=0.0))
    fractions = _per_view(
        informative, "informative", n_views, lambda v, n: check_real(v, n, low=0.0, high=1.0)
    )
    noises = _per_view(noise, "noise", n_views, lambda v, n: check_real(v, n, low=0.0, high=1.0))
    if isinstance(center_box, (str, bytes)) or np.ndim(center_box) != 1 or len(center_box) != 2:
        raise ValueError(f"center_box must be a pair (low, high), got {center_box!r}")
    low = check_real(center_box[0], "center_box[0]")
    high = check_real(center_box[1], "center_box[1]")
    if not low < high:
        raise ValueError(f"center_box must satisfy low < high, got {center_box!r}")
    check_bool(shuffle, "shuffle")
    check_bool(return_centers, "return_centers")
    try:
        dtype = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"dtype must be numpy.float32 or numpy.float64, got {dtype!r}") from exc
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be numpy.float32 or numpy.float64, got {dtype}")
    sizes = _cluster_sizes(n_samples, n_clusters, weights)

    seeds = check_seed_sequence(random_state).spawn(1 + n_views)

    y = np.repeat(np.arange(n_clusters, dtype=np.int64), sizes)
    if shuffle:
        np.random.default_rng(seeds[0]).shuffle(y)

    Xs, centers = [], []
    for v in range(n_views):
        rng = np.random.default_rng(seeds[1 + v])
        d, std = features[v], stds[v]
        fraction = fractions[v]
        n_informative = 0 if fraction == 0 else max(1, int(np.floor(fraction * d + 0.5)))
        mu = np.zeros((n_clusters, d))
        mu[:, :n_informative] = rng.uniform(low, high, size=(n_clusters, n_informative))

        seen = y  # the cluster each row of this view is drawn from
        n_redrawn = int(np.floor(noises[v] * n_samples + 0.5))
        if n_redrawn:
            seen = y.copy()
            rows = rng.choice(n_samples, size=n_redrawn, replace=False)
            seen[rows] = rng.integers(0, n_clusters, size=n_redrawn)

        Xs.append(_draw_rows(rng, mu, seen, std, dtype))
        centers.append(mu.astype(dtype, copy=False))

    if return_centers:
        return Xs, y, centers
    return Xs, y
