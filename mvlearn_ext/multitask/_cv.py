"""Cross-validation of a multi-task regressor's grid: the one driver of every ``...CV`` class."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning

from mvlearn_ext.multitask._base import (
    MultiTaskLinearMixin,
    TaskMoments,
    WithinTaskKFold,
    _sorted_problem,
    record_stops,
    stop_advice,
)
from mvlearn_ext.utils._threads import fit_threads
from mvlearn_ext.utils._warnings import warn

__all__ = ["MultiTaskCVMixin", "check_task_splits", "cross_validate_path"]


def check_task_splits(cv, X, y, index, random_state):
    """The ``(train, validation)`` row indices of ``cv``, checked against the data.

    ``cv`` is a number of folds (dealt within tasks by
    :class:`WithinTaskKFold`, seeded by ``random_state``), a splitter with a
    ``split(X, y, groups)`` method (called with the task positions as
    groups) or an iterable of ``(train, validation)`` index arrays.
    """
    n = X.shape[0]
    if isinstance(cv, Integral):
        if cv > n:
            raise ValueError(f"cv={cv} folds exceeds the number of rows, {n}")
        cv = WithinTaskKFold(int(cv), random_state=random_state)
    if hasattr(cv, "split"):
        splits = cv.split(X, y, groups=index)
    else:
        splits = cv
    out = []
    for k, split in enumerate(splits):
        try:
            train, valid = split
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"cv must yield (train, validation) pairs; split {k}: {exc}"
            ) from None
        train, valid = (_row_indices(a, n, f"cv split {k}") for a in (train, valid))
        out.append((train, valid))
    if len(out) < 1:
        raise ValueError("cv yielded no split")
    return out


def _row_indices(rows, n, name):
    rows = np.asarray(rows)
    if rows.dtype == bool:
        if rows.shape != (n,):
            raise ValueError(f"{name}: a boolean mask must have {n} entries")
        return np.flatnonzero(rows)
    if rows.ndim != 1 or (rows.size and not np.issubdtype(rows.dtype, np.integer)):
        raise ValueError(f"{name}: row indices must be a 1-D array of ints")
    if rows.size and (rows.min() < -n or rows.max() >= n):
        raise ValueError(f"{name}: row indices must be in [0, {n})")
    return rows % n if rows.size else rows.astype(np.int64)


def cross_validate_path(
    path, grid, X, y, index, sw, n_tasks, splits, *, fit_intercept, rcond, scale=1.0
):
    """Validation MSE of every grid value, split and task.

    ``path(moments, grid) -> list of (m, d) coef`` fits the training rows of
    a split for every grid value. ``splits`` are ``(train, validation)`` row
    indices (:func:`check_task_splits`). Returns ``scores`` of shape
    ``(n_splits, len(grid), n_tasks)``: the weighted validation MSE of each
    task (NaN where a task has no validation row in a split).
    """
    scores = np.full((len(splits), len(grid), n_tasks), np.nan)
    for k, (train, valid) in enumerate(splits):
        it = index[train]
        counts = np.bincount(it, minlength=n_tasks)
        small = np.flatnonzero(counts < 2)
        if small.size:
            raise ValueError(
                f"cv split {k} leaves task position {small[0]} with {counts[small[0]]} "
                "training row(s); every task needs at least 2 training rows "
                "(use fewer folds)"
            )
        Xt, yt, swt, starts, _ = _sorted_problem(X[train], y[train], it, sw[train], n_tasks)
        moments = TaskMoments(Xt, yt, swt, starts, fit_intercept, rcond, scale)
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
    """Mean over tasks then splits of the validation MSE; the best grid index."""
    with warnings.catch_warnings():
        # a split may have no validation row at all (tasks with fewer rows than folds)
        warnings.simplefilter("ignore", RuntimeWarning)
        per_fold = np.nanmean(scores, axis=2)  # (n_splits, n_grid)
        mean = np.nanmean(per_fold, axis=0)
        std = np.nanstd(per_fold, axis=0)
    return int(np.argmin(mean)), mean, std


def select_per_task(scores):
    """The best grid index of every task (mean over its splits)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        per_task = np.nanmean(scores, axis=0)  # (n_grid, n_tasks)
    per_task = np.where(np.isnan(per_task), np.inf, per_task)
    return np.argmin(per_task, axis=0), per_task


def check_grid(values, default, name, *, allow_inf=True):
    """A non-empty 1-D float grid of values ``>= 0`` (``default`` when ``None``)."""
    grid = np.asarray(default if values is None else values, dtype=float).reshape(-1)
    bad = np.isnan(grid) | (grid < 0)
    if not allow_inf:
        bad |= ~np.isfinite(grid)
    if grid.size == 0 or np.any(bad):
        kind = "finite values" if not allow_inf else "values"
        raise ValueError(f"{name} must be a non-empty grid of {kind} >= 0")
    return grid


def _warn_stops(cv_stops, n_splits, n_candidates, refit_stops):
    """One ConvergenceWarning for the fits of a CV fit that stopped at an iteration cap.

    ``cv_stops`` holds one ``(message, parameter)`` pair per cross-validation fit
    that stopped (of ``n_splits * n_candidates``), ``refit_stops`` those of the
    refit on all rows.
    """
    parts = []
    if cv_stops:
        n_fits = n_splits * n_candidates
        parts.append(
            f"{len(cv_stops)} of the {n_fits} cross-validation fits ({n_splits} splits x "
            f"{n_candidates} grid values) stopped before converging, so their validation "
            f"scores and the selection may be off (the first: {cv_stops[0][0]})"
        )
    if refit_stops:
        parts.append(f"the refit on all rows stopped before converging ({refit_stops[0][0]})")
    if parts:
        warn("; ".join(parts) + stop_advice(cv_stops + refit_stops), ConvergenceWarning)


class MultiTaskCVMixin(MultiTaskLinearMixin):
    """``fit`` of the ``...CV`` estimators: CV over a grid, then a refit on all rows.

    Subclasses implement ``_candidates() -> list`` (the grid, validated),
    ``_cv_path(moments, candidates) -> list of coef`` and
    ``_refit(candidates, scores, moments) -> coef`` (which records the
    selection and the fitted attributes of the final model).
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, tasks=None, sample_weight=None):
        """Choose the regularisation by cross-validation within tasks, then refit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows of all tasks, stacked (float32 or float64).
        y : array-like of shape (n_samples,)
        tasks : array-like of shape (n_samples,), default=None
            The task label of every row (``None``: one task).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative per-row weights; integer weights are equivalent to
            repeated rows (with ``cv`` given as explicit splits, where the
            repeated rows stay in the same split).

        Returns
        -------
        self

        Warns
        -----
        ConvergenceWarning
            One per call, when solves of the cross-validation fits or of the
            refit stopped at ``max_iter`` before converging; it gives how many
            of the cross-validation fits did.
        """
        candidates = self._candidates()
        X, y, labels, index, sw, scale = self._validate_fit(X, y, tasks, sample_weight)
        m = labels.shape[0]
        splits = check_task_splits(self.cv, X, y, index, self.random_state)
        with fit_threads(self.n_jobs), record_stops() as cv_stops:
            scores = cross_validate_path(
                self._cv_path,
                candidates,
                X,
                y,
                index,
                sw,
                m,
                splits,
                fit_intercept=self.fit_intercept,
                rcond=self.rcond,
                scale=scale,
            )
        with fit_threads(self.n_jobs), record_stops() as refit_stops:
            moments = self._moments(X, y, index, sw, m, scale)
            coef = self._refit(candidates, scores, moments)
        _warn_stops(cv_stops, len(splits), len(candidates), refit_stops)
        return self._finish(coef, moments, labels, X.dtype)
