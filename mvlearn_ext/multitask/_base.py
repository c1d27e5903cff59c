"""Shared machinery of the multi-task linear regressors.

All estimators of :mod:`mvlearn_ext.multitask` take the rows of every task
stacked in ``X, y`` with one task label per row (``tasks``), and fit one
linear model per task. Validation happens once, in :meth:`fit`; the rows
are sorted by task and reduced to per-task moments
(:class:`TaskMoments`), from which every solver works: the squared loss of
task ``j`` with weights ``s_i`` is, up to a constant,
``1/2 ||theta - theta_hat_j||^2_{Sigma_j}`` with
``Sigma_j = sum_i s_i x_i x_i^T / W_j`` and ``b_j = Sigma_j theta_hat_j``.
"""

from __future__ import annotations

import contextlib
import contextvars
import numbers
from numbers import Integral, Real

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.metadata_routing import MetadataRequest
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    validate_data,
)

from mvlearn_ext.multitask._kernels import task_eigh, task_moments
from mvlearn_ext.utils._progress import VerboseMixin
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT, fit_threads
from mvlearn_ext.utils._validation import (
    check_magnitude,
    real_array,
    refuse_strings,
    unit_exponent,
)
from mvlearn_ext.utils._warnings import warn

__all__ = [
    "TaskMoments",
    "data_scale",
    "feature_scale",
    "one_fit",
    "record_stops",
    "report_stop",
    "stop_advice",
    "stack_tasks",
]

#: The list collecting :func:`report_stop`'s messages inside :func:`record_stops`.
_STOPS = contextvars.ContextVar("mvlearn_ext_multitask_stops", default=None)


def report_stop(message, parameter="max_iter"):
    """Report a solve that stopped at its iteration cap before converging.

    A ``ConvergenceWarning`` (``message`` and the advice to increase
    ``parameter``, the cap) naming the user's line; inside :func:`record_stops`,
    the pair ``(message, parameter)`` is collected instead, for the caller to
    report once.
    """
    stops = _STOPS.get()
    if stops is None:
        warn(f"{message}; increase {parameter}", ConvergenceWarning)
    else:
        stops.append((message, parameter))


def stop_advice(stops):
    """``"; increase <caps>"`` for the collected ``(message, parameter)`` pairs ``stops``."""
    return "; increase " + " and ".join(sorted({parameter for _, parameter in stops}))


@contextlib.contextmanager
def record_stops():
    """Collect the ``(message, parameter)`` pairs of :func:`report_stop` in the block.

    Yields their list.
    """
    stops = []
    token = _STOPS.set(stops)
    try:
        yield stops
    finally:
        _STOPS.reset(token)


class one_fit:
    """Context manager: the block is one fit, whose stopped solves are reported once.

    The first message, with the count when several solves of the fit stopped,
    goes to :func:`report_stop`. A class, not a generator: the report is made
    from a frame of this package, so that the warning names the user's line.
    """

    def __enter__(self):
        self._stops = []
        self._token = _STOPS.set(self._stops)
        return self

    def __exit__(self, exc_type, exc, tb):
        _STOPS.reset(self._token)
        if exc_type is None and self._stops:
            message, parameter = self._stops[0]
            extra = f" (in {len(self._stops)} of the fit's solves)" if len(self._stops) > 1 else ""
            report_stop(message + extra, parameter)
        return False


def data_scale(X):
    """The power of two nearest above ``max |X|`` (1 for an all-zero ``X``).

    The solvers work on ``X / scale``, whose entries are at most 1 in
    magnitude, so that ``X^T X`` neither underflows nor overflows whatever
    the units of ``X``; a power of two keeps the division exact.
    """
    return float(np.ldexp(1.0, unit_exponent(X)))


def feature_scale(X, sw, fit_intercept):
    """The standard deviation of every column of ``X`` (weights ``sw``).

    About the weighted mean with ``fit_intercept``, otherwise the root mean
    square (the intercept is then not free to absorb the mean), as glmnet's
    ``standardize=TRUE``. A column whose spread is at rounding level
    relative to its magnitude is constant: its scale is its largest
    magnitude (1 for an all-zero column), a relative test that does not
    depend on the units of ``X``. ``X`` is expected within ``[-1, 1]``
    (divided by :func:`data_scale`), so that the squares neither underflow
    nor overflow.
    """
    X = np.asarray(X, dtype=np.float64)
    w = sw / sw.sum()
    top = np.max(np.abs(X), axis=0) if X.shape[0] else np.zeros(X.shape[1])
    Xc = X - w @ X if fit_intercept else X
    spread = np.sqrt(w @ (Xc * Xc))
    constant = spread <= np.finfo(np.float64).eps * X.shape[0] * top
    return np.where(constant, np.where(top > 0.0, top, 1.0), spread)


def stack_tasks(Xs, ys, sample_weights=None):
    """Stack per-task arrays into ``X, y, tasks`` (and ``sample_weight``).

    Parameters
    ----------
    Xs : list of array-like of shape (n_j, n_features)
        The design of each task.
    ys : list of array-like of shape (n_j,)
        The responses of each task.
    sample_weights : list of array-like of shape (n_j,) or None, default=None
        Per-row weights of each task.

    Returns
    -------
    X : ndarray of shape (sum_j n_j, n_features)
    y : ndarray of shape (sum_j n_j,)
    tasks : ndarray of shape (sum_j n_j,)
        Task ``j`` (its position in ``Xs``) for every row.
    sample_weight : ndarray of shape (sum_j n_j,) or None

    See Also
    --------
    WithinTaskKFold : Cross-validation folds split within every task.
    ARMULRegressor : An estimator that takes the stacked ``X, y, tasks``.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.multitask import stack_tasks
    >>> X, y, tasks, _ = stack_tasks([np.ones((2, 3)), np.zeros((1, 3))], [[1.0, 2.0], [3.0]])
    >>> X.shape, y.tolist(), tasks.tolist()
    ((3, 3), [1.0, 2.0, 3.0], [0, 0, 1])
    """
    if not isinstance(Xs, (list, tuple)) or not isinstance(ys, (list, tuple)):
        raise TypeError("Xs and ys must be lists of per-task arrays")
    if len(Xs) != len(ys):
        raise ValueError(f"Xs has {len(Xs)} tasks but ys has {len(ys)}")
    if len(Xs) == 0:
        raise ValueError("Xs is empty: at least one task is needed")
    for j, (X, y) in enumerate(zip(Xs, ys, strict=True)):
        # Refuse what no regressor can fit (NaN, infinity, complex, strings, ragged
        # lists); the arrays are stacked in their own dtypes, as given.
        real_array(X, f"Xs[{j}]", ndim=2, allow_empty=True)
        real_array(y, f"ys[{j}]", allow_empty=True)
    Xs = [np.asarray(X) for X in Xs]
    ys = [np.asarray(y).reshape(-1) for y in ys]
    for j, (X, y) in enumerate(zip(Xs, ys, strict=True)):
        if X.shape[0] != y.shape[0]:
            raise ValueError(f"Xs[{j}] has {X.shape[0]} rows but ys[{j}] has {y.shape[0]}")
    tasks = np.concatenate([np.full(X.shape[0], j) for j, X in enumerate(Xs)])
    sw = None
    if sample_weights is not None:
        if len(sample_weights) != len(Xs):
            raise ValueError(f"sample_weights has {len(sample_weights)} tasks, Xs {len(Xs)}")
        sw = np.concatenate(
            [
                real_array(s, f"sample_weights[{j}]", allow_empty=True).reshape(-1)
                for j, s in enumerate(sample_weights)
            ]
        )
    return np.vstack(Xs), np.concatenate(ys), tasks, sw


class TaskMoments:
    """Per-task sufficient statistics of a weighted least-squares problem.

    Attributes ``Sigma`` (m, d, d), ``b`` (m, d), ``xbar`` (m, d), ``ybar``
    (m,), ``n`` (m,) (sum of the weights of each task, its effective
    sample size); ``evals``/``evecs``/``rank``/``theta``/``c0`` from
    :func:`mvlearn_ext.multitask._kernels.task_eigh`, computed on first use.
    ``scale`` is the factor ``X`` was divided by: the moments are those of
    ``X / scale``, and coefficients solved on them are ``scale`` times those
    of ``X``. A float (:func:`data_scale`) leaves the penalty on the
    coefficients of ``X`` (``penalty_scale`` is ``scale``, by which the
    solvers convert it); an array of shape ``(n_features,)``
    (:func:`feature_scale` times :func:`data_scale`) puts it on those of the
    standardised ``X / scale``, the solver's own units (``penalty_scale``
    is 1).
    """

    def __init__(self, X, y, sw, starts, fit_intercept, rcond=None, scale=1.0):
        self.Sigma, self.b, self.xbar, self.ybar, self.n = task_moments(
            X, y, sw, starts, bool(fit_intercept)
        )
        self.m, self.d = self.b.shape
        if rcond is None:
            rows = int(np.max(np.diff(starts))) if starts.shape[0] > 1 else 1
            rcond = float(np.finfo(np.float64).eps * max(rows, self.d))
        self.rcond = rcond
        if np.ndim(scale) == 0:
            self.scale = self.penalty_scale = float(scale)
        else:
            self.scale, self.penalty_scale = np.asarray(scale, dtype=np.float64), 1.0
        self._eig = None

    def _ensure_eig(self):
        if self._eig is None:
            self._eig = task_eigh(self.Sigma, self.b, self.rcond)
        return self._eig

    evals = property(lambda self: self._ensure_eig()[0])
    evecs = property(lambda self: self._ensure_eig()[1])
    rank = property(lambda self: self._ensure_eig()[2])
    theta = property(lambda self: self._ensure_eig()[3])
    c0 = property(lambda self: self._ensure_eig()[4])

    def task_weights(self, task_weight):
        """``w_j``: 1 (``"uniform"``) or the effective ``n_j`` (``"n_samples"``)."""
        if task_weight == "uniform":
            return np.ones(self.m)
        return self.n.copy()


_ROUTING_HINT = (
    "In model selection, enable scikit-learn's metadata routing "
    "(sklearn.set_config(enable_metadata_routing=True)) and pass tasks as a parameter, "
    "with folds that keep every task in training "
    "(folds = list(WithinTaskKFold(5).split(X, y, groups=tasks))): "
    "Pipeline(...).fit(X, y, tasks=tasks) then .predict(X, tasks=tasks), "
    "GridSearchCV(est, grid, cv=folds).fit(X, y, tasks=tasks), "
    "cross_val_score(est, X, y, params={'tasks': tasks}, cv=folds); these estimators "
    "request tasks in fit, predict and score by default. cross_val_predict routes tasks "
    "to fit only, not to predict, so it cannot be used; for out-of-fold predictions, run "
    "cross_validate(est, X, y, params={'tasks': tasks}, cv=folds, return_estimator=True, "
    "return_indices=True) and predict each fold's test rows with that fold's estimator "
    "and their tasks"
)


def _label(value):
    """A task label as a plain Python value (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _label_kind(value):
    """The kind of a task label held in an object array: number, string or other."""
    if isinstance(value, (numbers.Number, np.bool_)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "bytes"
    return "other"


def _check_task_labels(tasks, name, *, n_rows=None):
    """``tasks`` as a 1-D array of task labels, or an error naming ``name``.

    Labels are categories (numbers, strings, any sortable values), all of one
    kind; NaN, infinity and None are not labels. An object array of strings
    becomes a string array. With ``n_rows``, one label per row is required.

    Raises
    ------
    ValueError
        If ``tasks`` is not 1-D (a column vector of shape ``(n, 1)`` included,
        as scikit-learn refuses 2-D ``groups`` and ``sample_weight``), is ragged,
        has another length than ``n_rows``, or holds complex values, NaN,
        infinity or None.
    TypeError
        If the labels mix numbers, strings and other objects.
    """
    try:
        tasks = np.asarray(tasks)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(f"{name} must be a 1-D array of labels (ragged lists are not)") from exc
    if tasks.ndim != 1:
        hint = (
            f"; pass {name}.ravel() for a single column"
            if tasks.ndim == 2 and tasks.shape[1] == 1
            else ""
        )
        raise ValueError(
            f"{name} must be 1-D of shape (n_samples,), one label per row, got shape "
            f"{tasks.shape}{hint}"
        )
    if n_rows is not None and tasks.shape[0] != n_rows:
        raise ValueError(f"{name} has {tasks.shape[0]} entries but X has {n_rows} rows")
    if tasks.dtype.kind == "c":
        raise ValueError(f"{name} holds complex values; task labels are real numbers or strings")
    if tasks.dtype.kind == "f" and not np.all(np.isfinite(tasks)):
        raise ValueError(f"{name} contains NaN or infinity")
    if tasks.dtype.kind == "O":
        if any(t is None or (isinstance(t, float) and t != t) for t in tasks):
            raise ValueError(f"{name} contains None or NaN")
        kinds = {_label_kind(t) for t in tasks}
        if len(kinds) > 1:
            types = sorted({type(t).__name__ for t in tasks})
            raise TypeError(
                f"{name} must hold labels of one type (all numbers or all strings), got a "
                f"mix of {', '.join(types[:-1])} and {types[-1]}"
            )
        if kinds == {"string"}:
            tasks = tasks.astype(str)
    return tasks


def _task_positions(tasks, name):
    """The sorted distinct labels of checked ``tasks`` and the position of every row's."""
    try:
        labels, index = np.unique(tasks, return_inverse=True)
    except TypeError as exc:  # objects of one kind that do not compare
        raise TypeError(
            f"{name} labels cannot be sorted ({exc}); they must be of one type that "
            "compares, such as all numbers or all strings"
        ) from exc
    return labels, index.reshape(-1).astype(np.int64)


def _sorted_problem(X, y, task_index, sw, n_tasks):
    """Sort rows by task; return ``X, y, sw`` sorted, ``starts`` and the order."""
    if task_index.shape[0] < 2 or np.all(task_index[1:] >= task_index[:-1]):
        order = np.arange(task_index.shape[0])
        counts = np.bincount(task_index, minlength=n_tasks)
        starts = np.zeros(n_tasks + 1, dtype=np.int64)
        np.cumsum(counts, out=starts[1:])
        c = np.ascontiguousarray
        return c(X), c(y), c(sw), starts, order
    order = np.argsort(task_index, kind="stable")
    counts = np.bincount(task_index, minlength=n_tasks)
    starts = np.zeros(n_tasks + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    Xs = np.ascontiguousarray(X[order])
    return Xs, np.ascontiguousarray(y[order]), np.ascontiguousarray(sw[order]), starts, order


class MultiTaskLinearMixin(VerboseMixin, RegressorMixin):
    """Validation, prediction and the list form shared by the regressors.

    Subclasses implement ``_solve(moments) -> coef`` (an ``(m, d)`` float64
    array of slopes, in the centred coordinates when ``fit_intercept``),
    storing any fitted diagnostics on ``self``. The moments are those of
    ``X / moments.scale`` (see :class:`TaskMoments`): a penalty on the
    coefficients is converted to those units by the solver
    (``moments.penalty_scale``), and :meth:`_unscale` brings fitted
    attributes in coefficient units back. Estimators with a ``scaling``
    parameter divide ``X`` by one spread (``"global"``) or every feature by its
    own (``"zscore"``) first.
    """

    #: Fitted attributes in the units of the coefficients (divided by the
    #: data scale after the fit) and in the units of ``reg_lambda`` for a
    #: norm penalty (multiplied by it).
    _coef_attributes = ()
    _penalty_attributes = ()

    # ``tasks`` is requested by default wherever it is accepted, so that it is
    # routed through Pipeline / GridSearchCV once metadata routing is enabled.
    __metadata_request__fit = {"tasks": True}
    __metadata_request__predict = {"tasks": True}
    __metadata_request__score = {"tasks": True}

    # -- validation ---------------------------------------------------------
    def _validate_fit(self, X, y, tasks, sample_weight):
        refuse_strings(X, "X")
        refuse_strings(y, "y")
        X, y = validate_data(
            self,
            X,
            y,
            dtype=[np.float64, np.float32],
            y_numeric=True,
            ensure_min_samples=2,
        )
        check_magnitude(X, "X")
        check_magnitude(y.astype(np.float64, copy=False), "y")
        tasks = self._check_tasks(tasks, X.shape[0])
        labels, index = _task_positions(tasks, "tasks")
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        counts = np.bincount(index, minlength=labels.shape[0])
        small = np.flatnonzero(counts < 2)
        if small.size:
            raise ValueError(
                f"every task needs at least 2 rows; task {_label(labels[small[0]])!r} has "
                f"{counts[small[0]]} (tasks with fewer than 2 rows: {small.size})"
            )
        wsum = np.bincount(index, weights=sw, minlength=labels.shape[0])
        zero = np.flatnonzero(wsum <= 0)
        if zero.size:
            raise ValueError(f"sample_weight sums to zero on task {_label(labels[zero[0]])!r}")
        scale = data_scale(X)
        if scale != 1.0:
            X = X / X.dtype.type(scale)
        scaling = getattr(self, "scaling", None)
        if scaling is not None:
            spread = feature_scale(X, sw, self.fit_intercept)
            if scaling == "global":
                spread = np.full_like(spread, np.sqrt(np.mean(spread * spread)))
            X = X / spread.astype(X.dtype)
            scale = scale * spread
        return X, np.asarray(y, dtype=np.float64), labels, index, sw, scale

    @staticmethod
    def _check_tasks(tasks, n_rows):
        if tasks is None:
            return np.zeros(n_rows, dtype=np.int64)
        return _check_task_labels(tasks, "tasks", n_rows=n_rows)

    def _task_index(self, tasks, n_rows):
        """Map the task labels of ``predict`` to fitted task positions."""
        if tasks is None:
            if self.tasks_.shape[0] != 1:
                raise ValueError(
                    f"tasks is required: the model was fitted on {self.tasks_.shape[0]} "
                    "tasks; pass the task label of every row as tasks. " + _ROUTING_HINT
                )
            return np.zeros(n_rows, dtype=np.int64)
        tasks = self._check_tasks(tasks, n_rows)
        try:
            pos = np.searchsorted(self.tasks_, tasks)
        except TypeError as exc:
            raise ValueError(
                f"tasks labels are not comparable with the fitted ones: {exc}"
            ) from exc
        pos = np.clip(pos, 0, self.tasks_.shape[0] - 1)
        unknown = self.tasks_[pos] != tasks
        if np.any(unknown):
            bad = np.unique(tasks[unknown])
            raise ValueError(
                f"tasks contains {bad.size} label(s) not seen in fit, e.g. {bad[:5].tolist()}"
            )
        return pos.astype(np.int64)

    # -- fitting --------------------------------------------------------------
    def _moments(self, X, y, index, sw, n_tasks, scale):
        Xs, ys, sws, starts, order = _sorted_problem(X, y, index, sw, n_tasks)
        return TaskMoments(
            Xs, ys, sws, starts, self.fit_intercept, getattr(self, "rcond", None), scale
        )

    def _unscale(self, moments):
        """Fitted attributes from the units of ``X / scale`` to those of ``X``."""
        for name in self._coef_attributes:
            if hasattr(self, name):
                setattr(self, name, getattr(self, name) / moments.scale)
        for name in self._penalty_attributes:
            if hasattr(self, name):
                setattr(self, name, getattr(self, name) * moments.penalty_scale)

    def _finish(self, coef, moments, labels, dtype):
        self.tasks_ = labels
        self.n_tasks_ = labels.shape[0]
        self.task_n_samples_ = moments.n.copy()
        if self.fit_intercept:
            intercept = moments.ybar - np.einsum("jk,jk->j", moments.xbar, coef)
        else:
            intercept = np.zeros(coef.shape[0])
        self.coef_ = (coef / moments.scale).astype(dtype, copy=False)
        self.intercept_ = intercept.astype(dtype, copy=False)
        self._unscale(moments)
        return self

    def _fit(self, X, y, tasks, sample_weight):
        X, y, labels, index, sw, scale = self._validate_fit(X, y, tasks, sample_weight)
        with fit_threads(self.n_jobs):
            moments = self._moments(X, y, index, sw, labels.shape[0], scale)
            coef = self._solve(moments)
        return self._finish(coef, moments, labels, X.dtype)

    # -- prediction -------------------------------------------------------------
    def predict(self, X, tasks=None):
        """Predict every row with the model of its task.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        tasks : array-like of shape (n_samples,), default=None
            The task of every row; labels must have been seen in ``fit``.
            May be omitted only when the model has a single task.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "coef_")
        refuse_strings(X, "X")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        check_magnitude(X, "X")
        index = self._task_index(tasks, X.shape[0])
        coef = self.coef_[index]
        return np.einsum("ik,ik->i", X, coef.astype(X.dtype, copy=False)) + self.intercept_[
            index
        ].astype(X.dtype, copy=False)

    def score(self, X, y, tasks=None, sample_weight=None):
        """Coefficient of determination R^2 of :meth:`predict` over all rows."""
        return r2_score(y, self.predict(X, tasks=tasks), sample_weight=sample_weight)

    # -- list form ---------------------------------------------------------------
    def fit_tasks(self, Xs, ys, sample_weights=None):
        """Fit from lists of per-task arrays (task ``j`` is ``Xs[j], ys[j]``).

        Returns
        -------
        self
        """
        X, y, tasks, sw = stack_tasks(Xs, ys, sample_weights)
        return self.fit(X, y, tasks=tasks, sample_weight=sw)

    def predict_tasks(self, Xs):
        """Predict a list of per-task designs; ``Xs[j]`` belongs to task ``j``.

        Only for models fitted with :meth:`fit_tasks` (or integer labels
        ``0..m-1``). Returns a list of arrays.
        """
        if not isinstance(Xs, (list, tuple)):
            raise TypeError("Xs must be a list of per-task arrays")
        return [
            self.predict(X, tasks=np.full(np.asarray(X).shape[0], j)) for j, X in enumerate(Xs)
        ]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


# Parameter constraints reused by the estimators.
CV = ["cv_object"]
REG_LAMBDA = [Interval(Real, 0, None, closed="left"), Options(Real, {np.inf})]
TASK_WEIGHT = [StrOptions({"uniform", "n_samples"})]
SCALING = [StrOptions({"global", "zscore"}), None]
COMMON_CONSTRAINTS = {
    "fit_intercept": ["boolean"],
    "rcond": [Interval(Real, 0, 1, closed="left"), None],
    "n_jobs": N_JOBS_CONSTRAINT,
}
ITER_CONSTRAINTS = {
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
}


def within_task_folds(index, n_tasks, n_splits, random_state):
    """Fold of every row: each task's rows are shuffled and dealt round-robin.

    Returns an int64 array of fold ids in ``[0, n_splits)``. Every task with
    at least ``n_splits`` rows has rows in every validation fold.
    """
    rng = check_random_state(random_state)
    folds = np.empty(index.shape[0], dtype=np.int64)
    order = np.argsort(index, kind="stable")
    counts = np.bincount(index, minlength=n_tasks)
    start = 0
    for j in range(n_tasks):
        rows = order[start : start + counts[j]]
        start += counts[j]
        perm = rng.permutation(counts[j])
        offset = rng.randint(n_splits)
        folds[rows[perm]] = (np.arange(counts[j]) + offset) % n_splits
    return folds


class WithinTaskKFold:
    """K-fold cross-validation with folds split within every task.

    Each task's rows are shuffled and dealt to the ``n_splits`` folds in
    turn, so that every task is present in every training fold. Pass the
    task labels as ``groups`` (``split(X, y, groups=tasks)``), or give the
    splits to ``GridSearchCV(cv=list(WithinTaskKFold(5).split(X, y, tasks)))``;
    with scikit-learn's metadata routing enabled, ``GridSearchCV(...,
    cv=WithinTaskKFold(5)).fit(X, y, tasks=tasks, groups=tasks)`` routes the
    groups to it.

    Parameters
    ----------
    n_splits : int, default=5
    random_state : int, RandomState instance or None, default=None

    See Also
    --------
    ARMULRegressorCV : Uses these folds by default.
    sklearn.model_selection.GroupKFold : Folds that keep whole groups apart instead.

    Examples
    --------
    >>> from mvlearn_ext.multitask import WithinTaskKFold
    >>> tasks = [0, 0, 0, 0, 1, 1, 1, 1]
    >>> for train, test in WithinTaskKFold(n_splits=2, random_state=0).split(tasks, groups=tasks):
    ...     print(sorted(test.tolist()))
    [...]
    [...]
    """

    def __init__(self, n_splits=5, *, random_state=None):
        if not isinstance(n_splits, Integral) or n_splits < 2:
            raise ValueError(f"n_splits must be an integer >= 2, got {n_splits!r}")
        self.n_splits = n_splits
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None):
        return self.n_splits

    def get_metadata_routing(self):
        """The routing request of the splitter: ``split`` takes ``groups`` (the tasks).

        With scikit-learn's metadata routing enabled, a model selection tool such as
        ``GridSearchCV`` then passes its ``groups`` to :meth:`split`, as it does for
        ``GroupKFold``.

        Returns
        -------
        routing : sklearn.utils.metadata_routing.MetadataRequest
        """
        routing = MetadataRequest(owner=type(self).__name__)
        routing.split.add_request(param="groups", alias=True)
        return routing

    def split(self, X, y=None, groups=None):
        """Generate the indices of the training and validation rows of every fold.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Not read (the rows are those of ``groups``); for scikit-learn's
            splitter API.
        y : array-like of shape (n_samples,), default=None
            Not read.
        groups : array-like of shape (n_samples,)
            The task label of every row (numbers, strings or other sortable
            values).

        Returns
        -------
        folds : iterator of tuple (train, test)
            For each fold, the indices of its training rows and of its
            validation rows (ndarrays of int). The arguments are checked when
            ``split`` is called, before the first fold is drawn.

        Raises
        ------
        ValueError
            If ``groups`` is missing, is not 1-D, holds complex values, NaN,
            infinity or None, or has fewer rows than ``n_splits``.
        TypeError
            If the labels of ``groups`` are not all of one type.
        """
        if groups is None:
            raise ValueError("WithinTaskKFold needs the task labels as groups")
        groups = _check_task_labels(groups, "groups")
        if self.n_splits > groups.shape[0]:
            raise ValueError(
                f"n_splits={self.n_splits} exceeds the number of rows, {groups.shape[0]}"
            )
        labels, index = _task_positions(groups, "groups")
        folds = within_task_folds(index, labels.shape[0], self.n_splits, self.random_state)
        return (
            (np.flatnonzero(folds != k), np.flatnonzero(folds == k)) for k in range(self.n_splits)
        )
