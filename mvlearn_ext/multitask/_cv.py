"""Cross-validation of a multi-task regressor's knob, folds split within tasks."""

from __future__ import annotations

import numpy as np

from mvlearn_ext.multitask._base import TaskMoments, single_threaded_blas, within_task_folds

__all__ = ["cross_validate_path"]


def cross_validate_path(
    path, grid, X, y, index, sw, n_tasks, *, n_splits, random_state, fit_intercept, rcond
):
    """Validation MSE of every grid value, fold and task.

    ``path(moments, grid) -> list of (m, d) coef`` fits the training part of
    a fold for every grid value. Rows must be sorted by task (``index``
    non-decreasing). Returns ``scores`` of shape ``(n_splits, len(grid),
    n_tasks)``: the weighted validation MSE of each task (NaN where a task
    has no validation row in a fold).
    """
    with single_threaded_blas():
        return _cross_validate_path(
            path, grid, X, y, index, sw, n_tasks, n_splits, random_state, fit_intercept, rcond
        )


def _cross_validate_path(
    path, grid, X, y, index, sw, n_tasks, n_splits, random_state, fit_intercept, rcond
):
    folds = within_task_folds(index, n_tasks, n_splits, random_state)
    scores = np.full((n_splits, len(grid), n_tasks), np.nan)
    for k in range(n_splits):
        train = folds != k
        valid = ~train
        counts = np.bincount(index[train], minlength=n_tasks)
        small = np.flatnonzero(counts < 2)
        if small.size:
            raise ValueError(
                f"cv={n_splits} leaves task position {small[0]} with {counts[small[0]]} "
                "training row(s) in a fold; every task needs at least 2 training rows "
                "(use fewer folds)"
            )
        starts = np.zeros(n_tasks + 1, dtype=np.int64)
        np.cumsum(counts, out=starts[1:])
        moments = TaskMoments(
            np.ascontiguousarray(X[train]),
            np.ascontiguousarray(y[train]),
            np.ascontiguousarray(sw[train]),
            starts,
            fit_intercept,
            rcond,
        )
        Xv, yv, sv, iv = X[valid], y[valid], sw[valid], index[valid]
        wsum = np.bincount(iv, weights=sv, minlength=n_tasks)
        present = wsum > 0
        for g, coef in enumerate(path(moments, grid)):
            pred = np.einsum("ik,ik->i", Xv, coef[iv])
            if fit_intercept:
                pred += (moments.ybar - np.einsum("jk,jk->j", moments.xbar, coef))[iv]
            err = np.bincount(iv, weights=sv * (yv - pred) ** 2, minlength=n_tasks)
            scores[k, g, present] = err[present] / wsum[present]
    return scores


def select_global(scores):
    """Mean over tasks then folds of the validation MSE; the best grid index."""
    import warnings

    with warnings.catch_warnings():
        # a fold may have no validation row at all (tasks with fewer rows than folds)
        warnings.simplefilter("ignore", RuntimeWarning)
        per_fold = np.nanmean(scores, axis=2)  # (n_splits, n_grid)
        mean = np.nanmean(per_fold, axis=0)
        std = np.nanstd(per_fold, axis=0)
    return int(np.argmin(mean)), mean, std


def select_per_task(scores):
    """The best grid index of every task (mean over its folds)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        per_task = np.nanmean(scores, axis=0)  # (n_grid, n_tasks)
    per_task = np.where(np.isnan(per_task), np.inf, per_task)
    return np.argmin(per_task, axis=0), per_task
