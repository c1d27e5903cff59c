"""RTE in the continuous regime: anchor + parameter difference, learned relational operator.

RTE (Relational Task Extrapolator; Ousherovitch and Wang, ICML 2026, arXiv
2605.30132). The abstract states the idea: decompose a target task into a
known anchor task and a transformation, and learn a relational operator that
maps an (anchor, transformation) pair to the target's predictions. The
continuous-regime details below (``phi_ij = theta_j - theta_i`` from task
embeddings, nearest-neighbour anchor retrieval, ``Psi`` an MLP trained on
library pairs) follow a detailed third-party summary of the paper; the code
of the paper was not available. Design choices of this package are marked
[design] in the docstrings.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.compose import TransformedTargetRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_random_state, metadata_routing
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from mvlearn_ext.extrapolate._families import (
    FunctionFamily,
    _as_float_array,
    get_family,
    sample_task_pairs,
)
from mvlearn_ext.utils._progress import VerboseMixin
from mvlearn_ext.utils._validation import (
    LEARNING_RATE_CONSTRAINT,
    as_real_array,
    check_layer_sizes,
    check_magnitude,
    max_abs_units,
)

__all__ = ["InductiveTaskRegressor", "RelationalTaskExtrapolator"]


def _task_rows(tasks, name):
    """``tasks`` as a list of tasks: a list or tuple as is, any other 2-D array-like
    (ndarray, DataFrame, ...) one task per row; None for what is neither."""
    if isinstance(tasks, (list, tuple)):
        return tasks
    arr = as_real_array(tasks, name)  # TypeError naming ``name`` for non-numbers
    return list(arr) if arr.ndim == 2 else None


def _check_tasks(tasks_x, tasks_y, *, min_tasks, name_x="tasks_x", name_y="tasks_y"):
    """Lists of 1-D arrays per task (a 2-D array-like is one task per row)."""
    rows_x, rows_y = _task_rows(tasks_x, name_x), _task_rows(tasks_y, name_y)
    if rows_x is None or rows_y is None:
        raise TypeError(
            f"{name_x} and {name_y} must be 2-D array-likes (one task per row) or lists of "
            f"1-D arrays, got {type(tasks_x).__name__} and {type(tasks_y).__name__}"
        )
    tasks_x, tasks_y = rows_x, rows_y
    if len(tasks_x) != len(tasks_y):
        raise ValueError(f"{name_x} has {len(tasks_x)} tasks but {name_y} has {len(tasks_y)}")
    if len(tasks_x) < min_tasks:
        raise ValueError(f"{name_x} must hold at least {min_tasks} tasks, got {len(tasks_x)}")
    xs, ys = [], []
    for t, (x, y) in enumerate(zip(tasks_x, tasks_y, strict=True)):
        x = _as_float_array(x, f"{name_x}[{t}]", ndim=(1,))
        y = _as_float_array(y, f"{name_y}[{t}]", ndim=(1,))
        if x.shape != y.shape or x.size == 0:
            raise ValueError(
                f"task {t}: {name_x}[{t}] and {name_y}[{t}] must be non-empty and of the same "
                f"length, got {x.shape} and {y.shape}"
            )
        xs.append(x)
        ys.append(y)
    return xs, ys


def _fit_mlp(est, seed, F, target):
    """Fit the MLP model; ``max_iter`` is a budget, so its ConvergenceWarning is muted."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return _mlp(est, seed).fit(F, target)


def _mlp(est, seed):
    """An MLP on standardised input columns, trained on the standardised target.

    Both standardisations are fitted on the training rows and applied to every
    prediction, so that the network, its initialisation, ``alpha`` and
    ``learning_rate_init`` see the same numbers whatever the units of ``x``
    and ``y``: the predictions are then in the unit of ``y`` and do not depend
    on either unit.
    """
    network = make_pipeline(
        *_standardiser(),
        MLPRegressor(
            hidden_layer_sizes=tuple(est.hidden_layer_sizes),
            alpha=est.alpha,
            learning_rate_init=est.learning_rate_init,
            max_iter=est.max_iter,
            batch_size=est.batch_size,
            random_state=seed,
        ),
    )
    return TransformedTargetRegressor(
        network, transformer=make_pipeline(*_standardiser()), check_inverse=False
    )


class _MaxAbsScaler(TransformerMixin, BaseEstimator):
    """Each column divided by its largest magnitude (an all-zero column by 1).

    Unlike scikit-learn's ``MaxAbsScaler``, no absolute floor: a column of
    values near 1e-300 is scaled like any other.
    """

    def fit(self, X, y=None):
        self.scale_ = max_abs_units(np.asarray(X, dtype=np.float64))
        return self

    def transform(self, X):
        return np.asarray(X, dtype=np.float64) / self.scale_

    def inverse_transform(self, X):
        return np.asarray(X, dtype=np.float64) * self.scale_


def _standardiser():
    """Steps that standardise columns of any finite magnitude.

    Dividing by the largest magnitude first keeps the variance computation
    from overflowing or underflowing (a column of values near 1e-300 or 1e300
    has no representable variance); a constant column keeps scale 1 by
    scikit-learn's test, relative to the column's magnitude.
    """
    return _MaxAbsScaler(), StandardScaler()


def _column_scale(A):
    """The standard deviation of each column of ``A`` (1 for a constant column)."""
    maxabs, std = _standardiser()
    return maxabs.fit(A).scale_ * std.fit(maxabs.transform(A)).scale_


_SHARED_CONSTRAINTS = {
    "family": [str, FunctionFamily],
    "hidden_layer_sizes": [tuple, list],
    "alpha": [Interval(Real, 0, None, closed="left")],
    "learning_rate_init": LEARNING_RATE_CONSTRAINT,
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "batch_size": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}


def _require_context(context_x, context_y):
    """Refuse a prediction without the target task's context points."""
    missing = [n for n, v in (("context_x", context_x), ("context_y", context_y)) if v is None]
    if missing:
        raise ValueError(
            f"{' and '.join(missing)} required: a prediction for a new task needs its "
            "context points"
        )


class _TaskModel(VerboseMixin, BaseEstimator):
    """Shared input handling of the continuous-regime estimators."""

    # The data arguments are not metadata to route.
    __metadata_request__fit = {
        "tasks_x": metadata_routing.UNUSED,
        "tasks_y": metadata_routing.UNUSED,
    }
    __metadata_request__predict = {"x": metadata_routing.UNUSED}

    def _library(self, tasks_x, tasks_y, task_params):
        check_layer_sizes(self.hidden_layer_sizes, "hidden_layer_sizes")
        self.family_ = get_family(self.family)
        xs, ys = _check_tasks(tasks_x, tasks_y, min_tasks=2)
        if task_params is None:
            thetas = np.vstack(
                [
                    self._estimate(x, y, f"tasks_x[{t}] and tasks_y[{t}]")
                    for t, (x, y) in enumerate(zip(xs, ys, strict=True))
                ]
            )
        else:
            thetas = _as_float_array(task_params, "task_params", ndim=(2,))
            if thetas.shape != (len(xs), self.family_.n_params):
                raise ValueError(
                    f"task_params must have shape ({len(xs)}, {self.family_.n_params}), got "
                    f"{thetas.shape}"
                )
        sizes = tuple(int(h) for h in self.hidden_layer_sizes)
        if not sizes or min(sizes) < 1:
            raise ValueError(
                f"hidden_layer_sizes must be positive ints, got {self.hidden_layer_sizes!r}"
            )
        self.task_params_ = thetas
        allx = np.concatenate(xs)
        self.x_range_ = (float(allx.min()), float(allx.max()))
        return xs, ys, thetas

    def _estimate(self, x, y, source):
        """``family.estimate(x, y)``, refused when the parameters cannot be squared."""
        theta = self.family_.estimate(x, y)
        try:
            check_magnitude(theta, "theta")
        except ValueError as exc:
            raise ValueError(
                f"the {self.family_.name} parameters estimated from {source} are too large "
                f"for the computation (largest |value| {np.abs(theta).max():.3g}): in these "
                "units of x and y their squares overflow; rescale x or y"
            ) from exc
        return theta

    def _context(self, context_x, context_y):
        x = _as_float_array(context_x, "context_x", ndim=(1,))
        y = _as_float_array(context_y, "context_y", ndim=(1,))
        if x.shape != y.shape:
            raise ValueError(
                f"context_x and context_y must have the same length, got {x.shape} and {y.shape}"
            )
        if x.size < self.family_.n_params:
            raise ValueError(
                f"the context needs at least {self.family_.n_params} points to estimate the "
                f"target task, got {x.size}"
            )
        return x, y

    def estimate_task(self, context_x, context_y):
        """``theta_hat`` of a target task from its context points."""
        check_is_fitted(self)
        return self._estimate(*self._context(context_x, context_y), "context_x and context_y")

    def predict_tasks(self, X, context_X, context_Y):
        """:meth:`predict` for several target tasks, one per row of ``X``.

        Returns a list of arrays (an array of shape (n_tasks, m) when every
        task has the same number of query points).
        """
        xq, _ = _check_tasks(X, X, min_tasks=1, name_x="X", name_y="X")
        xc, yc = _check_tasks(
            context_X, context_Y, min_tasks=1, name_x="context_X", name_y="context_Y"
        )
        if len(xq) != len(xc):
            raise ValueError(f"X has {len(xq)} tasks but context_X has {len(xc)}")
        out = [self.predict(q, cx, cy) for q, cx, cy in zip(xq, xc, yc, strict=True)]
        return np.vstack(out) if len({o.size for o in out}) == 1 else out


class RelationalTaskExtrapolator(_TaskModel):
    """RTE, continuous regime: ``y = Psi(x, f_anc, phi)`` with ``phi = theta - theta_anc``.

    Training samples ordered pairs of library tasks ``(f_i, f_j)``
    (:func:`sample_task_pairs`), with ``phi_ij = theta_j - theta_i`` from the
    task embeddings (least-squares parameters of ``family``, a stand-in for
    Task2Vec [design]), and fits ``Psi`` to ``E ||f_j(x) - Psi(x, f_i, phi_ij)||^2``
    on points of task ``j``. At test time the target is decomposed from a
    sparse context: ``theta_hat`` is estimated, the anchor is the library task
    nearest to it (or, with ``n_candidates > 1``, the one among the nearest
    whose ``Psi`` fits the context best) and ``phi = theta_hat - theta_anc``.
    Distances are measured with each parameter divided by its spread over the
    library (``param_scale_``): the parameters have different units (for the
    quadratic family, those of ``y / x**2`` and ``y / x``), so the nearest
    task in raw parameters would depend on the units of the data.
    A target beyond the training range is then out of *combination*, not out
    of support: ``phi`` lies inside the range of training differences as long
    as the extrapolation distance is within the width of the training range.

    ``Psi`` is a scikit-learn MLP on standardised inputs ``[x, anchor
    features, phi]`` trained on the standardised target, so that its
    predictions do not depend on the units of ``x`` and ``y``. The anchor is
    presented by its value ``f_anc(x)`` (``anchor_features="value"``) or also
    by its values on a fixed grid of the training ``x`` range (``"grid"``;
    Sin-Trend needs it), evaluated from the anchor's embedding. With
    ``residual=True`` [design] ``Psi`` is ``f_anc(x) + MLP(...)``, so the MLP
    predicts the change ``f_j - f_i``, whose range the training pairs cover;
    ``residual=False`` predicts ``y`` directly, which needs the MLP to reach
    output values beyond those it was trained on.

    Parameters
    ----------
    family : str or FunctionFamily, default="quadratic"
    n_pairs : int, default=3000
        Library pairs sampled for training.
    points_per_pair : int, default=4
        Points of task ``j`` per pair.
    anchor_features : {"value", "grid"}, default="value"
    n_anchor_grid : int, default=8
        Grid size for ``anchor_features="grid"``.
    residual : bool, default=True
    n_candidates : int, default=1
        Anchors scored on the context (``1``: nearest neighbour only).
    hidden_layer_sizes : tuple of int, default=(64, 64)
    alpha : float, default=1e-4
        L2 penalty of the MLP.
    learning_rate_init : float in (0, 1e6], default=1e-3
        Adam's step size; larger steps cannot train the MLP on its
        standardised input.
    max_iter : int, default=200
        Epochs of the MLP (Adam).
    batch_size : int, default=200
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0

    Attributes
    ----------
    family_ : FunctionFamily
    task_params_ : ndarray of shape (n_tasks, n_params)
        Library embeddings ``theta_i``.
    x_range_ : tuple of float
    anchor_grid_ : ndarray of shape (n_anchor_grid,)
    param_scale_ : ndarray of shape (n_params,)
        The spread (standard deviation) of each parameter over the library,
        the unit of the anchor distance (1 for a constant parameter).
    delta_min_, delta_max_ : ndarray of shape (n_params,)
        The range of the training differences ``phi_ij``.
    psi_ : sklearn TransformedTargetRegressor
        The relational operator: the MLP pipeline on standardised inputs,
        with its standardised target.

    See Also
    --------
    InductiveTaskRegressor : The direct baseline.
    CompositionalTaskExtrapolator : The discrete regime.
    make_function_tasks : Samples of tasks of a family.

    References
    ----------
    A. Ousherovitch and Y. Wang (names as in the arXiv listing), "Relational
    Task Extrapolator", ICML 2026, arXiv 2605.30132.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.extrapolate import RelationalTaskExtrapolator, make_function_tasks
    >>> rng = np.random.default_rng(0)
    >>> thetas = rng.uniform(0.5, 1.5, size=(30, 2))
    >>> X, Y = make_function_tasks("quadratic", thetas, n_points=20, random_state=0)
    >>> rte = RelationalTaskExtrapolator(n_pairs=200, max_iter=50, random_state=0)
    >>> rte = rte.fit(X, Y, task_params=thetas)
    >>> xc = np.array([-0.9, -0.4, 0.0, 0.5, 1.0])
    >>> rte.predict(np.array([0.3, 0.8]), xc, 2.0 * xc**2 + 2.0 * xc).shape
    (2,)
    """

    _parameter_constraints: dict = {
        **_SHARED_CONSTRAINTS,
        "n_pairs": [Interval(Integral, 1, None, closed="left")],
        "points_per_pair": [Interval(Integral, 1, None, closed="left")],
        "anchor_features": [StrOptions({"value", "grid"})],
        "n_anchor_grid": [Interval(Integral, 1, None, closed="left")],
        "residual": ["boolean"],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        family="quadratic",
        *,
        n_pairs=3000,
        points_per_pair=4,
        anchor_features="value",
        n_anchor_grid=8,
        residual=True,
        n_candidates=1,
        hidden_layer_sizes=(64, 64),
        alpha=1e-4,
        learning_rate_init=1e-3,
        max_iter=200,
        batch_size=200,
        random_state=None,
        verbose=0,
    ):
        self.family = family
        self.n_pairs = n_pairs
        self.points_per_pair = points_per_pair
        self.anchor_features = anchor_features
        self.n_anchor_grid = n_anchor_grid
        self.residual = residual
        self.n_candidates = n_candidates
        self.hidden_layer_sizes = hidden_layer_sizes
        self.alpha = alpha
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.random_state = random_state
        self.verbose = verbose

    def _features(self, x, theta_anc, phi):
        """Rows ``[x, anchor features, phi]``; ``theta_anc`` and ``phi`` one row per point."""
        f_anc = self.family_.evaluate(x[:, None], theta_anc)[:, 0]
        cols = [x[:, None], f_anc[:, None]]
        if self.anchor_features == "grid":
            cols.append(self.family_.evaluate(self.anchor_grid_[None, :], theta_anc))
        cols.append(phi)
        return np.hstack(cols), f_anc

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, tasks_x, tasks_y, *, task_params=None):
        """Learn ``Psi`` from pairs of library tasks.

        Parameters
        ----------
        tasks_x, tasks_y : array-like of shape (n_tasks, n_points) or lists of 1-D arrays
            The library: the points of each training task.
        task_params : array-like of shape (n_tasks, n_params), optional
            Known parameters of the library tasks; default: estimated from
            their points by ``family.estimate``.

        Returns
        -------
        self : RelationalTaskExtrapolator
        """
        start = time.perf_counter()
        xs, ys, thetas = self._library(tasks_x, tasks_y, task_params)
        rng = check_random_state(self.random_state)
        self.anchor_grid_ = np.linspace(*self.x_range_, self.n_anchor_grid)
        i, j, phi = sample_task_pairs(thetas, self.n_pairs, random_state=rng)
        self.delta_min_, self.delta_max_ = phi.min(axis=0), phi.max(axis=0)
        self.param_scale_ = _column_scale(thetas)
        m = self.points_per_pair
        sizes = np.array([x.size for x in xs])
        pick = (rng.uniform(size=(self.n_pairs, m)) * sizes[j][:, None]).astype(int)
        x = np.concatenate([xs[jj][p] for jj, p in zip(j, pick, strict=True)])
        y = np.concatenate([ys[jj][p] for jj, p in zip(j, pick, strict=True)])
        F, f_anc = self._features(x, np.repeat(thetas[i], m, axis=0), np.repeat(phi, m, axis=0))
        target = y - f_anc if self.residual else y
        self.psi_ = _fit_mlp(self, int(rng.randint(2**31 - 1)), F, target)
        self._log(
            f"Psi fitted on {F.shape[0]} rows from {self.n_pairs} pairs "
            f"({time.perf_counter() - start:.1f} s)"
        )
        return self

    def predict_relation(self, x, anchor_params, phi):
        """``Psi(x, f_anc, phi)`` for a given anchor embedding and transformation.

        Parameters
        ----------
        x : array-like of shape (m,)
            Query points; with none (``m = 0``) the result is empty.
        anchor_params : array-like of shape (n_params,)
            ``theta_anc`` (need not be a library task).
        phi : array-like of shape (n_params,)

        Returns
        -------
        y : ndarray of shape (m,)
        """
        check_is_fitted(self)
        x = _as_float_array(x, "x", ndim=(1,))
        p = self.family_.n_params
        th = _as_float_array(anchor_params, "anchor_params", ndim=(1,))
        ph = _as_float_array(phi, "phi", ndim=(1,))
        if th.shape != (p,) or ph.shape != (p,):
            raise ValueError(
                f"anchor_params and phi must have shape ({p},), got {th.shape} and {ph.shape}"
            )
        if x.size == 0:  # no query point: no prediction (the MLP refuses 0 rows)
            return np.empty(0)
        F, f_anc = self._features(x, np.tile(th, (x.size, 1)), np.tile(ph, (x.size, 1)))
        out = self.psi_.predict(F)
        return out + f_anc if self.residual else out

    def decompose(self, context_x, context_y):
        """The test-time decomposition of a target task from its context.

        Returns
        -------
        anchor : int
            Index of the anchor in the library.
        phi : ndarray of shape (n_params,)
            ``theta_hat - theta_anc``.
        """
        check_is_fitted(self)
        x, y = self._context(context_x, context_y)
        theta = self._estimate(x, y, "context_x and context_y")
        dist = np.linalg.norm((self.task_params_ - theta) / self.param_scale_, axis=1)
        order = np.argsort(dist, kind="stable")[: self.n_candidates]
        if order.size == 1:
            return int(order[0]), theta - self.task_params_[order[0]]
        losses = [
            np.mean(
                (self.predict_relation(x, self.task_params_[k], theta - self.task_params_[k]) - y)
                ** 2
            )
            for k in order
        ]
        best = int(order[int(np.argmin(losses))])
        return best, theta - self.task_params_[best]

    def predict(self, x, context_x=None, context_y=None):
        """Predictions of the target task at ``x`` from its context points.

        Parameters
        ----------
        x : array-like of shape (m,)
            Query points; with none (``m = 0``) the result is empty.
        context_x, context_y : array-like of shape (n_context,)
            The target task's context points (required).

        Returns
        -------
        y : ndarray of shape (m,)
        """
        check_is_fitted(self)
        _require_context(context_x, context_y)
        anchor, phi = self.decompose(context_x, context_y)
        return self.predict_relation(x, self.task_params_[anchor], phi)


class InductiveTaskRegressor(_TaskModel):
    """The inductive baseline: an MLP trained to predict ``y`` from ``(x, theta)`` directly.

    Trained on every point of every library task with the task's embedding;
    at test time ``theta_hat`` is estimated from the context. Out of the
    training range of ``theta``, the MLP extrapolates in its input space,
    which is what RTE avoids.

    Parameters
    ----------
    family : str or FunctionFamily, default="quadratic"
    hidden_layer_sizes : tuple of int, default=(64, 64)
    alpha, learning_rate_init, max_iter, batch_size, random_state, verbose
        As in :class:`RelationalTaskExtrapolator`.

    Attributes
    ----------
    family_ : FunctionFamily
    task_params_ : ndarray of shape (n_tasks, n_params)
    x_range_ : tuple of float
    model_ : sklearn TransformedTargetRegressor
        The MLP pipeline on standardised inputs, with its standardised target.

    See Also
    --------
    RelationalTaskExtrapolator : The relational extrapolator it is compared with.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.extrapolate import InductiveTaskRegressor, make_function_tasks
    >>> thetas = np.random.default_rng(0).uniform(0.5, 1.5, size=(20, 2))
    >>> X, Y = make_function_tasks("quadratic", thetas, n_points=10, random_state=0)
    >>> model = InductiveTaskRegressor(max_iter=20, random_state=0).fit(X, Y)
    >>> model.predict([0.1, 0.2], [-1.0, 0.0, 1.0], [0.0, 0.0, 2.0]).shape
    (2,)
    """

    _parameter_constraints: dict = dict(_SHARED_CONSTRAINTS)

    def __init__(
        self,
        family="quadratic",
        *,
        hidden_layer_sizes=(64, 64),
        alpha=1e-4,
        learning_rate_init=1e-3,
        max_iter=200,
        batch_size=200,
        random_state=None,
        verbose=0,
    ):
        self.family = family
        self.hidden_layer_sizes = hidden_layer_sizes
        self.alpha = alpha
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, tasks_x, tasks_y, *, task_params=None):
        """Fit ``MLP(x, theta_i) -> y`` on all library points (same inputs as RTE's fit).

        Parameters
        ----------
        tasks_x, tasks_y : array-like of shape (n_tasks, n_points) or lists of 1-D arrays
            The library: the points of each training task.
        task_params : array-like of shape (n_tasks, n_params), optional
            Known parameters of the library tasks; default: estimated from
            their points by ``family.estimate``.

        Returns
        -------
        self : InductiveTaskRegressor
        """
        start = time.perf_counter()
        xs, ys, thetas = self._library(tasks_x, tasks_y, task_params)
        rng = check_random_state(self.random_state)
        F = np.vstack(
            [
                np.column_stack([x, np.tile(t, (x.size, 1))])
                for x, t in zip(xs, thetas, strict=True)
            ]
        )
        self.model_ = _fit_mlp(self, int(rng.randint(2**31 - 1)), F, np.concatenate(ys))
        self._log(f"fitted on {F.shape[0]} rows ({time.perf_counter() - start:.1f} s)")
        return self

    def predict_params(self, x, params):
        """``MLP(x, theta)`` for a given task embedding."""
        check_is_fitted(self)
        x = _as_float_array(x, "x", ndim=(1,))
        th = _as_float_array(params, "params", ndim=(1,))
        if th.shape != (self.family_.n_params,):
            raise ValueError(f"params must have shape ({self.family_.n_params},), got {th.shape}")
        if x.size == 0:  # no query point: no prediction (the MLP refuses 0 rows)
            return np.empty(0)
        return self.model_.predict(np.column_stack([x, np.tile(th, (x.size, 1))]))

    def predict(self, x, context_x=None, context_y=None):
        """Predictions at ``x`` with ``theta_hat`` estimated from the context (required).

        Parameters
        ----------
        x : array-like of shape (m,)
            Query points; with none (``m = 0``) the result is empty.
        context_x, context_y : array-like of shape (n_context,)
            The target task's context points (required).

        Returns
        -------
        y : ndarray of shape (m,)
        """
        check_is_fitted(self)
        _require_context(context_x, context_y)
        return self.predict_params(x, self.estimate_task(context_x, context_y))
