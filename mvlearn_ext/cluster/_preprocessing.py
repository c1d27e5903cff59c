"""Per-view standardisation of the clusterers, and their check for repeated samples."""

from __future__ import annotations

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mvlearn_ext.utils._warnings import warn

__all__ = [
    "apply_view_scaling",
    "constant_columns",
    "distinct_samples",
    "fit_view_scaling",
    "merge_distinct",
    "stack_scaled_views",
    "view_statistics",
    "warn_if_few_distinct",
]


def constant_columns(mean, scale, dtype):
    """The columns whose spread ``scale`` is at the rounding level of their values.

    The test is relative to each column's own magnitude ``|mean|``, never to
    an absolute floor, so that it does not depend on the unit of the data: a
    view multiplied by 1e-16 keeps the same constant columns.
    """
    kind = np.dtype(dtype)
    eps = np.finfo(kind if kind.kind == "f" else np.float64).eps
    return scale <= 10.0 * eps * np.abs(mean)


def distinct_samples(Xs, limit, *, chunk=4096):
    """Up to ``limit`` distinct samples of the views ``Xs``, as the rows of one array.

    A sample is its rows in every view side by side (as float64, with -0.0
    read as 0.0). The rows are read in slices, the first of ``2 * limit`` rows,
    then of ``chunk``, until ``limit`` distinct samples are found: on data
    without repeats only the first slice is read, and on data with many repeats
    the memory stays that of one slice.
    """
    n = Xs[0].shape[0]
    found = np.empty((0, sum(X.shape[1] for X in Xs)))
    start, size = 0, 2 * limit
    while start < n and found.shape[0] < limit:
        stop = min(n, start + size)
        rows = np.hstack([np.asarray(X[start:stop], dtype=np.float64) for X in Xs]) + 0.0
        found = merge_distinct(found, rows, limit)
        start, size = stop, chunk
    return found


def merge_distinct(found, rows, limit):
    """Up to ``limit`` distinct rows of ``found`` and ``rows`` together (float64, no -0.0).

    Rows are compared as raw bytes, which for such rows is comparing values, and
    costs one sort of ``n`` keys instead of a sort over every column.
    """
    stacked = np.ascontiguousarray(np.vstack([found, rows]))
    keys = stacked.view(np.dtype((np.void, stacked.itemsize * stacked.shape[1]))).ravel()
    _, first = np.unique(keys, return_index=True)
    return stacked[np.sort(first)[:limit]]


def warn_if_few_distinct(name, n_distinct, n_clusters):
    """Warn (``ConvergenceWarning``, naming ``name``) when ``n_distinct < n_clusters``.

    With fewer distinct samples than clusters, no partition puts each distinct
    sample in a cluster of its own without splitting identical samples or leaving
    a cluster empty, so the labels depend on how the method breaks the tie.
    """
    if n_distinct >= n_clusters:
        return
    if n_distinct <= 1:
        message = (
            f"{name}: every sample has the same values in every view, so no two samples "
            "can be told apart and the cluster labels are arbitrary"
        )
    else:
        message = (
            f"{name}: Xs has {n_distinct} distinct samples, fewer than "
            f"n_clusters={n_clusters}, so identical samples may fall in different "
            "clusters and some clusters may be empty"
        )
    warn(message, ConvergenceWarning)


def view_statistics(X, *, unit_view_variance=False):
    """Column means and scales of one view (constant columns get scale 1).

    With ``unit_view_variance=True`` the scales are further multiplied by
    ``sqrt(n_features)``, so that the standardised view has total variance 1
    whatever its width: every view then weighs the same in a sum of per-view
    losses or in a concatenation (otherwise a 240-feature view outweighs a
    6-feature one 40 to 1).
    """
    X = np.asarray(X)
    mean = X.mean(axis=0, dtype=np.float64)
    scale = X.std(axis=0, dtype=np.float64)
    scale[constant_columns(mean, scale, X.dtype)] = 1.0
    if unit_view_variance:
        scale = scale * np.sqrt(X.shape[1])
    return mean, scale


def fit_view_scaling(Xs, *, unit_view_variance=False):
    """``(means, scales)``: the :func:`view_statistics` of every view, as two lists."""
    stats = [view_statistics(X, unit_view_variance=unit_view_variance) for X in Xs]
    return [m for m, _ in stats], [s for _, s in stats]


def apply_view_scaling(Xs, means, scales):
    """The views in float64, standardised with ``(means, scales)``, or as they are if None."""
    if means is None:
        return [np.asarray(X, dtype=np.float64) for X in Xs]
    return [
        (np.asarray(X, dtype=np.float64) - mean) / scale
        for X, mean, scale in zip(Xs, means, scales, strict=True)
    ]


def stack_scaled_views(Xs, means, scales):
    """The scaled views written side by side into one float64 array, without temporaries.

    Returns ``(joint, views)``: ``joint`` is C-contiguous of shape
    ``(n_samples, sum_v n_features_v)`` and ``views[v]`` is the column
    block of view ``v`` in it (a view of ``joint``, not a copy), equal to
    ``apply_view_scaling(Xs, means, scales)[v]``. Methods that need both
    the concatenation and the views hold the data once.
    """
    widths = [X.shape[1] for X in Xs]
    joint = np.empty((Xs[0].shape[0], sum(widths)), dtype=np.float64)
    bounds = np.cumsum([0, *widths])
    views = [joint[:, a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    for v, (X, view) in enumerate(zip(Xs, views, strict=True)):
        if means is None:
            view[...] = X
        else:
            np.subtract(X, means[v], out=view)
            view /= scales[v]
    return joint, views
