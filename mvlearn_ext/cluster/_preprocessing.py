"""Per-view standardisation shared by the clustering estimators."""

from __future__ import annotations

import numpy as np

__all__ = ["apply_view_scaling", "fit_view_scaling", "view_statistics"]


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
    # A column is constant when its spread is at the rounding level of its values.
    eps = np.finfo(X.dtype if X.dtype.kind == "f" else np.float64).eps
    scale[scale <= 10.0 * eps * np.maximum(np.abs(mean), 1.0)] = 1.0
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
