"""RTE in the discrete regime: tasks as compositions of primitives (length, composition).

A task is a composition ``f = g_{c_L} o ... o g_{c_1}`` of primitives from a
fixed set, identified by its code ``(c_1, ..., c_L)`` (the empty code is the
identity). The relation between a library task and its one-step extension
is the primitive applied last, ``f_j = g o f_i`` with ``phi = g`` (the
discrete regime of RTE, Ousherovitch and Wang, ICML 2026, arXiv 2605.30132,
as described in a third-party summary). The relational operator ``Psi(x,
f_i(x), onehot(g))`` is learned from library pairs without access to the
primitives' formulas: the anchor is known only by its observed values
(linearly interpolated). Length extrapolation chains ``Psi`` beyond the
library's lengths; compositional extrapolation reaches combinations of
primitives absent from the library. The primitive set, the interpolation
and the enumeration decomposer (in place of the paper's trained decomposer)
are design choices of this package.
"""

from __future__ import annotations

import itertools
import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state, metadata_routing
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from mvlearn_ext.extrapolate._continuous import (
    _SHARED_CONSTRAINTS,
    _check_tasks,
    _fit_mlp,
    _require_context,
)
from mvlearn_ext.extrapolate._families import _as_float_array
from mvlearn_ext.utils._progress import VerboseMixin
from mvlearn_ext.utils._validation import check_layer_sizes

__all__ = [
    "PRIMITIVES",
    "CompositionalTaskExtrapolator",
    "InductiveCompositionRegressor",
    "all_codes",
    "compose_primitives",
    "make_composition_tasks",
]


def _sin(v):
    return np.sin(0.5 * np.pi * v)


def _square(v):
    return 2.0 * v**2 - 1.0


def _flip(v):
    return 0.1 - 0.8 * v


def _tanh(v):
    return np.tanh(2.0 * v)


#: The default primitives, each mapping [-1, 1] into [-1, 1] (so compositions stay bounded).
PRIMITIVES = (("sin", _sin), ("square", _square), ("flip", _flip), ("tanh", _tanh))


def _check_code(code, n_primitives, name="code"):
    try:
        c = tuple(int(v) for v in code)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a sequence of primitive indices, got {code!r}") from exc
    if any(v != w for v, w in zip(c, code, strict=True)):
        raise TypeError(f"{name} must hold ints, got {code!r}")
    if any(v < 0 or v >= n_primitives for v in c):
        raise ValueError(f"{name} {code!r} has an index outside 0..{n_primitives - 1}")
    return c


def compose_primitives(code, x, primitives=PRIMITIVES):
    """``g_{c_L}(··· g_{c_1}(x))`` for ``code = (c_1, ..., c_L)``; the empty code is ``x``.

    Parameters
    ----------
    code : sequence of int
        Indices into ``primitives``, applied first to last.
    x : array-like
        Inputs (any shape; the primitives act elementwise).
    primitives : sequence of (str, callable), default=PRIMITIVES
        The named primitives ``g_k``.

    Returns
    -------
    values : ndarray
        The composition at ``x``, of the shape of ``x``.

    See Also
    --------
    make_composition_tasks : Noisy samples of composed tasks.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.extrapolate import compose_primitives
    >>> compose_primitives((2, 2), np.array([0.0, 1.0]))   # flip(flip(x)) = 0.02 + 0.64 x
    array([0.02, 0.66])
    """
    c = _check_code(code, len(primitives))
    v = _as_float_array(x, "x")
    for k in c:
        v = primitives[k][1](v)
    return v


def all_codes(n_primitives, lengths):
    """Every code of the given lengths, in lexicographic order.

    Parameters
    ----------
    n_primitives : int
        Number of primitives (each code entry is in ``0 .. n_primitives - 1``).
    lengths : iterable of int
        The code lengths to enumerate, in this order (0: the empty code).

    Returns
    -------
    codes : list of tuple of int
        ``n_primitives ** L`` codes for every length ``L``.

    See Also
    --------
    compose_primitives : The function a code stands for.

    Examples
    --------
    >>> from mvlearn_ext.extrapolate import all_codes
    >>> all_codes(2, [0, 1, 2])
    [(), (0,), (1,), (0, 0), (0, 1), (1, 0), (1, 1)]
    """
    if (
        isinstance(n_primitives, bool)
        or not isinstance(n_primitives, Integral)
        or n_primitives < 1
    ):
        raise ValueError(f"n_primitives must be a positive int, got {n_primitives!r}")
    out = []
    for L in lengths:
        if isinstance(L, bool) or not isinstance(L, Integral) or L < 0:
            raise ValueError(f"lengths must be non-negative ints, got {L!r}")
        out.extend(itertools.product(range(n_primitives), repeat=int(L)))
    return out


def make_composition_tasks(
    codes, *, n_points=41, grid=True, noise=0.02, primitives=PRIMITIVES, random_state=None
):
    """Noisy samples of composition tasks on ``x`` in ``[-1, 1]``.

    Parameters
    ----------
    codes : sequence of sequences of int
    n_points : int, default=41
    grid : bool, default=True
        A shared even grid (``True``) or uniform random points per task.
    noise : float >= 0, default=0.02
    primitives : sequence of (name, callable), default=PRIMITIVES
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X, Y : ndarray of shape (n_tasks, n_points)

    See Also
    --------
    compose_primitives : The noiseless composition.
    CompositionalTaskExtrapolator : Learns from these tasks.

    Examples
    --------
    >>> from mvlearn_ext.extrapolate import make_composition_tasks
    >>> X, Y = make_composition_tasks([(0,), (0, 1)], n_points=5, random_state=0)
    >>> X.shape, Y.shape
    ((2, 5), (2, 5))
    """
    if isinstance(n_points, bool) or not isinstance(n_points, Integral) or n_points < 2:
        raise ValueError(f"n_points must be an int >= 2, got {n_points!r}")
    if not isinstance(noise, Real) or noise < 0:
        raise ValueError(f"noise must be a non-negative float, got {noise!r}")
    codes = [_check_code(c, len(primitives), f"codes[{t}]") for t, c in enumerate(codes)]
    if not codes:
        raise ValueError("codes must hold at least one task")
    rng = check_random_state(random_state)
    if grid:
        X = np.tile(np.linspace(-1.0, 1.0, n_points), (len(codes), 1))
    else:
        X = np.sort(rng.uniform(-1.0, 1.0, size=(len(codes), n_points)), axis=1)
    Y = np.vstack([compose_primitives(c, x, primitives) for c, x in zip(codes, X, strict=True)])
    return X, Y + noise * rng.normal(size=Y.shape)


#: The MLP settings shared with the continuous-regime estimators (no ``family`` here).
_CONSTRAINTS = {k: v for k, v in _SHARED_CONSTRAINTS.items() if k != "family"}


def _check_library(est, codes, tasks_x, tasks_y):
    xs, ys = _check_tasks(tasks_x, tasks_y, min_tasks=1)
    short = [t for t, x in enumerate(xs) if x.size < 2]
    if short:
        raise ValueError(
            f"every library task needs at least 2 points (its function is interpolated "
            f"between them); tasks_x[{short[0]}] has {xs[short[0]].size}"
        )
    if not isinstance(codes, (list, tuple)) or len(codes) != len(xs):
        raise ValueError(
            f"codes must be a list with one code per task ({len(xs)}), got "
            f"{len(codes) if isinstance(codes, (list, tuple)) else type(codes).__name__}"
        )
    n_prim = est.n_primitives
    codes = [_check_code(c, n_prim, f"codes[{t}]") for t, c in enumerate(codes)]
    if len(set(codes)) != len(codes):
        raise ValueError("codes must be distinct (one library task per code)")
    if not est.hidden_layer_sizes:
        raise ValueError("hidden_layer_sizes must name at least one layer, got ()")
    check_layer_sizes(est.hidden_layer_sizes, "hidden_layer_sizes")
    order = [np.argsort(x, kind="stable") for x in xs]
    xs = [x[o] for x, o in zip(xs, order, strict=True)]
    ys = [y[o] for y, o in zip(ys, order, strict=True)]
    return codes, xs, ys


class CompositionalTaskExtrapolator(VerboseMixin, BaseEstimator):
    """RTE, discrete regime: ``f = g o f_anc`` chained, with a learned ``Psi``.

    Training pairs are the library tasks with their one-step prefixes:
    ``(f_i, f_j)`` with ``code_j = code_i + (g,)`` (the identity is the
    anchor of the length-1 codes). ``Psi`` is an MLP on ``[x, f_i(x),
    onehot(g)]`` (standardised inputs and target) fitted to ``f_j(x)`` on the
    points of task ``j``; ``f_i(x)`` is the linear interpolation of task
    ``i``'s observed points. A target is decomposed from its context by
    enumeration: every library anchor (and the identity) with every chain of
    ``0..max_chain`` primitives, ``Psi`` applied once per link, scored by the
    context MSE. The best ``(anchor, chain)`` then predicts the target
    anywhere.

    Parameters
    ----------
    n_primitives : int, default=4
        Size of the primitive set (the codes' alphabet).
    max_chain : int, default=2
        Longest chain of transformations tried at decomposition.
    hidden_layer_sizes : tuple of int, default=(64, 64)
    alpha : float, default=1e-4
    learning_rate_init : float in (0, 1e6], default=1e-3
        Adam's step size; larger steps cannot train the MLP on its
        standardised input.
    max_iter : int, default=300
    batch_size : int, default=200
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0

    Attributes
    ----------
    codes_ : list of tuple
        Library codes (the identity ``()`` included as an anchor).
    n_pairs_ : int
        Library pairs ``(prefix, task)`` used to fit ``Psi``.
    psi_ : sklearn TransformedTargetRegressor
        The MLP pipeline on standardised inputs, with its standardised target.

    See Also
    --------
    InductiveCompositionRegressor : The direct baseline on the same codes.
    RelationalTaskExtrapolator : The continuous regime.
    make_composition_tasks : Samples of composition tasks.

    Examples
    --------
    >>> from mvlearn_ext.extrapolate import (CompositionalTaskExtrapolator, all_codes,
    ...                                      make_composition_tasks)
    >>> codes = all_codes(4, [1, 2])
    >>> X, Y = make_composition_tasks(codes, random_state=0)
    >>> rte = CompositionalTaskExtrapolator(max_iter=30, random_state=0).fit(codes, X, Y)
    >>> rte.n_pairs_
    20
    >>> rte.decompose(X[5], Y[5])  # a library task: its own anchor, no chain
    ((0, 1), ())
    >>> rte.predict(X[5], context_x=X[5], context_y=Y[5]).shape
    (41,)
    >>> rte.predict_relation(X[0], (0,), (1,)).shape
    (41,)
    """

    # The data arguments are not metadata to route.
    __metadata_request__fit = {
        "codes": metadata_routing.UNUSED,
        "tasks_x": metadata_routing.UNUSED,
        "tasks_y": metadata_routing.UNUSED,
    }
    __metadata_request__predict = {"x": metadata_routing.UNUSED}

    _parameter_constraints: dict = {
        **_CONSTRAINTS,
        "n_primitives": [Interval(Integral, 1, None, closed="left")],
        "max_chain": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        n_primitives=4,
        max_chain=2,
        hidden_layer_sizes=(64, 64),
        alpha=1e-4,
        learning_rate_init=1e-3,
        max_iter=300,
        batch_size=200,
        random_state=None,
        verbose=0,
    ):
        self.n_primitives = n_primitives
        self.max_chain = max_chain
        self.hidden_layer_sizes = hidden_layer_sizes
        self.alpha = alpha
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.random_state = random_state
        self.verbose = verbose

    def _anchor_values(self, k, x):
        if k == 0:  # the identity
            return np.asarray(x, dtype=np.float64)
        return np.interp(x, self._xs[k - 1], self._ys[k - 1])

    def _psi(self, x, v, g):
        """``Psi`` on rows: x, v (anchor values) and g (primitive indices) of equal length."""
        onehot = np.zeros((x.size, self.n_primitives))
        onehot[np.arange(x.size), g] = 1.0
        return self.psi_.predict(np.column_stack([x, v, onehot]))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, codes, tasks_x, tasks_y):
        """Learn ``Psi`` from the library's (prefix, task) pairs.

        Parameters
        ----------
        codes : list of sequences of int
            The code of each library task.
        tasks_x, tasks_y : array-like of shape (n_tasks, n_points) or lists of 1-D arrays

        Returns
        -------
        self : CompositionalTaskExtrapolator
        """
        start = time.perf_counter()
        codes, self._xs, self._ys = _check_library(self, codes, tasks_x, tasks_y)
        lib = [c for c in codes if c]
        if len(lib) != len(codes):
            raise ValueError("codes must not hold the empty code: the identity is implicit")
        # anchor index 0 is the identity; library task t is anchor t + 1
        self.codes_ = [(), *codes]
        index = {c: k for k, c in enumerate(self.codes_)}
        rows, targets = [], []
        for t, c in enumerate(codes):
            prefix = index.get(c[:-1])
            if prefix is None:
                continue
            x = self._xs[t]
            onehot = np.zeros((x.size, self.n_primitives))
            onehot[:, c[-1]] = 1.0
            rows.append(np.column_stack([x, self._anchor_values(prefix, x), onehot]))
            targets.append(self._ys[t])
        if not rows:
            raise ValueError(
                "no library task has its one-step prefix in the library: nothing to learn"
            )
        self.n_pairs_ = len(rows)
        rng = check_random_state(self.random_state)
        self.psi_ = _fit_mlp(
            self, int(rng.randint(2**31 - 1)), np.vstack(rows), np.concatenate(targets)
        )
        self._log(f"Psi fitted on {self.n_pairs_} pairs ({time.perf_counter() - start:.1f} s)")
        return self

    def predict_relation(self, x, anchor_code, chain):
        """``Psi`` applied along ``chain`` (primitive indices) from a library anchor."""
        check_is_fitted(self)
        x = _as_float_array(x, "x", ndim=(1,))
        a = _check_code(anchor_code, self.n_primitives, "anchor_code")
        if a not in self.codes_:
            raise ValueError(f"anchor_code {anchor_code!r} is not a library task")
        chain = _check_code(chain, self.n_primitives, "chain")
        v = self._anchor_values(self.codes_.index(a), x)
        for g in chain:
            v = self._psi(x, v, np.full(x.size, g))
        return v

    def decompose(self, context_x, context_y):
        """The ``(anchor_code, chain)`` whose ``Psi`` fits the context best."""
        check_is_fitted(self)
        x = _as_float_array(context_x, "context_x", ndim=(1,))
        y = _as_float_array(context_y, "context_y", ndim=(1,))
        if x.shape != y.shape or x.size == 0:
            raise ValueError(
                f"context_x and context_y must be non-empty and of the same length, got "
                f"{x.shape} and {y.shape}"
            )
        n_anchor, m, G = len(self.codes_), x.size, self.n_primitives
        V = np.vstack([self._anchor_values(k, x) for k in range(n_anchor)])  # (A, m)
        err = ((V - y) ** 2).mean(1)
        k = int(np.argmin(err))
        best = (float(err[k]), k, ())
        chains = [()]
        for _ in range(self.max_chain):
            # extend every current value row by every primitive
            n_rows = V.shape[0]
            xx = np.tile(x, n_rows * G)
            vv = np.repeat(V, G, axis=0).ravel()
            gg = np.tile(np.repeat(np.arange(G), m), n_rows)
            V = self._psi(xx, vv, gg).reshape(n_rows * G, m)
            chains = [(*c, g) for c in chains for g in range(G)]
            err = ((V - y) ** 2).mean(1)
            r = int(np.argmin(err))
            if err[r] < best[0]:
                best = (float(err[r]), r // len(chains), chains[r % len(chains)])
        return self.codes_[best[1]], best[2]

    def predict(self, x, context_x=None, context_y=None):
        """Predictions of a target task at ``x`` from its context points (required).

        Parameters
        ----------
        x : array-like of shape (m,)
            Query points; with none (``m = 0``) the result is empty.
        context_x, context_y : array-like of shape (n_context,)
            The target task's context points, from which :meth:`decompose`
            finds its anchor and chain (required).

        Returns
        -------
        y : ndarray of shape (m,)

        Raises
        ------
        TypeError
            If ``x``, ``context_x`` or ``context_y`` is not a numeric array
            (strings included).
        ValueError
            If one of them is not 1-D or holds complex values, NaN, infinity or
            values whose squares overflow; if the context is missing, empty or
            its two arrays differ in length.
        """
        check_is_fitted(self)
        _require_context(context_x, context_y)
        anchor, chain = self.decompose(context_x, context_y)
        return self.predict_relation(x, anchor, chain)


class InductiveCompositionRegressor(BaseEstimator):
    """The direct baseline: an MLP on ``[x, code]`` trained on the library tasks.

    The code is encoded one-hot per position (``max_length`` positions of
    ``n_primitives`` each, zeros beyond the code's length); the target's true
    code is given at prediction time, an advantage RTE does not get.

    Parameters
    ----------
    n_primitives : int, default=4
    max_length : int, default=8
    hidden_layer_sizes, alpha, learning_rate_init, max_iter, batch_size, random_state, verbose
        As in :class:`CompositionalTaskExtrapolator`.

    Attributes
    ----------
    model_ : sklearn TransformedTargetRegressor
        The MLP pipeline on standardised inputs, with its standardised target.

    See Also
    --------
    CompositionalTaskExtrapolator : The relational extrapolator it is compared with.

    Examples
    --------
    >>> from mvlearn_ext.extrapolate import (InductiveCompositionRegressor, all_codes,
    ...                                      make_composition_tasks)
    >>> codes = all_codes(4, [1, 2])
    >>> X, Y = make_composition_tasks(codes, n_points=11, random_state=0)
    >>> model = InductiveCompositionRegressor(max_iter=20, random_state=0).fit(codes, X, Y)
    >>> model.predict(X[0], code=(1, 2)).shape
    (11,)
    """

    # The data arguments are not metadata to route.
    __metadata_request__fit = {
        "codes": metadata_routing.UNUSED,
        "tasks_x": metadata_routing.UNUSED,
        "tasks_y": metadata_routing.UNUSED,
    }
    __metadata_request__predict = {"x": metadata_routing.UNUSED}

    _parameter_constraints: dict = {
        **_CONSTRAINTS,
        "n_primitives": [Interval(Integral, 1, None, closed="left")],
        "max_length": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        n_primitives=4,
        max_length=8,
        hidden_layer_sizes=(64, 64),
        alpha=1e-4,
        learning_rate_init=1e-3,
        max_iter=300,
        batch_size=200,
        random_state=None,
        verbose=0,
    ):
        self.n_primitives = n_primitives
        self.max_length = max_length
        self.hidden_layer_sizes = hidden_layer_sizes
        self.alpha = alpha
        self.learning_rate_init = learning_rate_init
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.random_state = random_state
        self.verbose = verbose

    def _encode(self, code, n):
        if len(code) > self.max_length:
            raise ValueError(f"code {code!r} is longer than max_length={self.max_length}")
        e = np.zeros(self.max_length * self.n_primitives)
        for pos, g in enumerate(code):
            e[pos * self.n_primitives + g] = 1.0
        return np.tile(e, (n, 1))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, codes, tasks_x, tasks_y):
        """Fit ``MLP(x, code) -> y`` on every library point.

        Parameters
        ----------
        codes : list of sequences of int
            The code of each library task (distinct).
        tasks_x, tasks_y : array-like of shape (n_tasks, n_points) or lists of 1-D arrays
            The points of each library task (at least 2 per task).

        Returns
        -------
        self : InductiveCompositionRegressor
        """
        codes, xs, ys = _check_library(self, codes, tasks_x, tasks_y)
        F = np.vstack(
            [np.column_stack([x, self._encode(c, x.size)]) for c, x in zip(codes, xs, strict=True)]
        )
        rng = check_random_state(self.random_state)
        self.model_ = _fit_mlp(self, int(rng.randint(2**31 - 1)), F, np.concatenate(ys))
        return self

    def predict(self, x, code=None):
        """Predictions at ``x`` of the task with the given code (required).

        Parameters
        ----------
        x : array-like of shape (m,)
            Query points; with none (``m = 0``) the result is empty.
        code : sequence of int
            The primitives of the task to predict, at most ``max_length`` long
            (required).

        Returns
        -------
        y : ndarray of shape (m,)
        """
        check_is_fitted(self)
        if code is None:
            raise ValueError("code is required: the primitives of the task to predict")
        x = _as_float_array(x, "x", ndim=(1,))
        c = _check_code(code, self.n_primitives)
        encoded = self._encode(c, x.size)
        if x.size == 0:  # no query point: no prediction (the MLP refuses 0 rows)
            return np.empty(0)
        return self.model_.predict(np.column_stack([x, encoded]))
