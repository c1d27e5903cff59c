"""Parametric function families, task generators and the pair sampler of RTE.

RTE: the Relational Task Extrapolator (Ousherovitch and Wang, ICML 2026,
arXiv 2605.30132); the families are those of its parameter-extrapolation
benchmarks as described in a third-party summary of the paper (quadratic,
Sin-Trend, exponential). The task embedding ``theta_hat`` is a least-squares
fit of the family's parameters, a stand-in for the paper's Task2Vec
embedding (a design choice of this package).
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from numbers import Integral, Real

import numpy as np
from scipy.optimize import least_squares
from sklearn.utils import check_random_state

from mvlearn_ext.utils._validation import check_magnitude, max_abs_units, real_array

__all__ = [
    "ExponentialFamily",
    "FunctionFamily",
    "QuadraticFamily",
    "SinTrendFamily",
    "get_family",
    "make_function_tasks",
    "sample_task_pairs",
]


def _as_float_array(value, name, ndim=None):
    """``value`` as a finite float64 array whose squares do not overflow (empty allowed)."""
    arr = real_array(value, name, ndim=ndim, allow_empty=True)
    check_magnitude(arr, name)
    return arr


class FunctionFamily(ABC):
    """A parametric family of scalar functions ``f_theta(x)`` (abstract).

    Subclasses define ``n_params``, :meth:`evaluate` and :meth:`estimate`.

    See Also
    --------
    get_family : A family from its name.
    QuadraticFamily, SinTrendFamily, ExponentialFamily : The families of the package.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.extrapolate import get_family
    >>> family = get_family("quadratic")
    >>> family.evaluate(np.array([2.0]), np.array([1.0, 1.0])).tolist()
    [6.0]
    """

    name = "family"
    n_params = 0

    @abstractmethod
    def evaluate(self, x, theta):
        """``f_theta(x)``: ``theta`` of shape (..., n_params), ``x`` broadcast against (..., m).

        Parameters
        ----------
        x : array-like of shape (..., m)
            The points, broadcast against the leading axes of ``theta``.
        theta : array-like of shape (..., n_params)
            The parameters of one function per leading index.

        Returns
        -------
        f : ndarray of float64
            ``f_theta(x)``, of the broadcast shape of ``x`` and ``theta[..., :1]``.

        Raises
        ------
        TypeError
            If ``x`` or ``theta`` is not a numeric array (strings included).
        ValueError
            If ``x`` or ``theta`` holds complex values, NaN or infinity, or
            values whose squares overflow; if the last axis of ``theta`` does
            not hold ``n_params`` parameters; if ``f_theta(x)`` overflows
            float64 (``exp(theta x)`` for ``theta x > 709``, say).
        """

    @abstractmethod
    def estimate(self, x, y):
        """The least-squares ``theta_hat`` of one task from its points ``(x, y)``."""

    def __call__(self, x, theta):
        return self.evaluate(x, theta)

    def __repr__(self):
        """``Name(param=value, ...)`` over the constructor's named parameters."""
        init = type(self).__init__
        names = [] if init is object.__init__ else list(inspect.signature(init).parameters)[1:]
        args = ", ".join(f"{name}={getattr(self, name)}" for name in names)
        return f"{type(self).__name__}({args})"

    def _check_evaluate(self, x, theta):
        """``(x, theta)`` of :meth:`evaluate` as validated float64 arrays."""
        return _as_float_array(x, "x"), self._check_theta(theta)

    def _check_theta(self, theta, name="theta", ndim=None):
        """``theta`` as a validated float64 array with ``n_params`` entries in its last axis."""
        t = _as_float_array(theta, name, ndim=ndim)
        if t.shape[-1:] != (self.n_params,):
            raise ValueError(
                f"{name} must have {self.n_params} parameters in its last axis for the "
                f"{self.name} family, got shape {t.shape}"
            )
        return t

    def _finite_values(self, f):
        """``f``, the values of :meth:`evaluate` on validated inputs, or a ValueError.

        The inputs being finite, a value that is not is an overflow of float64.
        """
        if not np.all(np.isfinite(f)):
            raise ValueError(
                f"f_theta(x) of the {self.name} family overflows float64 (largest value "
                f"{np.finfo(np.float64).max:.3g}) for these x and theta; rescale x or theta"
            )
        return f

    def _check_points(self, x, y):
        x = _as_float_array(x, "x", ndim=(1,))
        y = _as_float_array(y, "y", ndim=(1,))
        if x.shape != y.shape:
            raise ValueError(f"x and y must have the same length, got {x.shape} and {y.shape}")
        if x.size < self.n_params:
            raise ValueError(
                f"estimating {self.n_params} parameters needs at least {self.n_params} points, "
                f"got {x.size}"
            )
        return x, y


class QuadraticFamily(FunctionFamily):
    """``f_theta(x) = theta_1 x^2 + theta_2 x`` (linear in theta: exact least squares).

    See Also
    --------
    get_family : A family from its name.
    make_function_tasks : Samples of tasks of a family.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.extrapolate import QuadraticFamily
    >>> family = QuadraticFamily()
    >>> x = np.linspace(-1.0, 1.0, 30)
    >>> theta = np.array([1.5, -0.5])
    >>> np.round(family.estimate(x, family.evaluate(x, theta)), 3).tolist()
    [1.5, -0.5]
    """

    name = "quadratic"
    n_params = 2

    def evaluate(self, x, theta):
        x, t = self._check_evaluate(x, theta)
        with np.errstate(over="ignore", invalid="ignore"):
            f = t[..., 0:1] * x**2 + t[..., 1:2] * x
        return self._finite_values(f)

    def estimate(self, x, y):
        x, y = self._check_points(x, y)
        B = np.column_stack([x**2, x])
        # Columns scaled to unit maximum: the columns differ by a factor of the
        # unit of x, and lstsq's relative cut-off on the singular values would
        # otherwise drop the x**2 column for units far from 1.
        scale = max_abs_units(B)
        return np.linalg.lstsq(B / scale, y, rcond=None)[0] / scale


class SinTrendFamily(FunctionFamily):
    """``f_theta(x) = sin(theta_1 x) + theta_2 x`` (Sin-Trend).

    :meth:`estimate` scans ``theta_1`` on a grid over ``frequency_range``
    (``theta_2`` in closed form for each) and refines the best point with
    :func:`scipy.optimize.least_squares`.

    Parameters
    ----------
    frequency_range : tuple of two floats, default=(0.0, 5.0)
        The range of ``theta_1`` scanned for the starting point of the fit, in
        units of ``1 / x``: divide it by ``c`` when ``x`` is multiplied by ``c``.
    n_grid : int, default=251
        Number of grid points of the scan (a finer grid misses fewer local
        minima of the oscillating least-squares loss).

    See Also
    --------
    get_family : A family from its name.
    make_function_tasks : Samples of tasks of a family.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.extrapolate import SinTrendFamily
    >>> family = SinTrendFamily()
    >>> x = np.linspace(-1.0, 1.0, 30)
    >>> theta = np.array([2.0, 0.5])
    >>> np.round(family.estimate(x, family.evaluate(x, theta)), 3).tolist()
    [2.0, 0.5]
    """

    name = "sin_trend"
    n_params = 2

    def __init__(self, frequency_range=(0.0, 5.0), n_grid=251):
        self.frequency_range = frequency_range
        self.n_grid = n_grid

    def evaluate(self, x, theta):
        x, t = self._check_evaluate(x, theta)
        with np.errstate(over="ignore", invalid="ignore"):
            f = np.sin(t[..., 0:1] * x) + t[..., 1:2] * x
        return self._finite_values(f)

    def estimate(self, x, y):
        x, y = self._check_points(x, y)
        lo, hi = self.frequency_range
        w = np.linspace(lo, hi, self.n_grid)
        S = np.sin(w[:, None] * x[None, :])  # (grid, m)
        xx = float(x @ x)
        slope = (y[None, :] - S) @ x / xx if xx > 0 else np.zeros(w.size)
        sse = ((y[None, :] - S - slope[:, None] * x[None, :]) ** 2).sum(1)
        k = int(np.argmin(sse))
        res = least_squares(
            lambda t: np.sin(t[0] * x) + t[1] * x - y, x0=[w[k], slope[k]], method="lm"
        )
        return res.x


class ExponentialFamily(FunctionFamily):
    """``f_theta(x) = exp(theta x)`` (one parameter; grid scan then least squares).

    Parameters
    ----------
    rate_range : tuple of two floats, default=(-4.0, 4.0)
        The range of ``theta`` scanned for the starting point of the fit, in
        units of ``1 / x``: divide it by ``c`` when ``x`` is multiplied by ``c``.
    n_grid : int, default=161
        Number of grid points of the scan.

    See Also
    --------
    get_family : A family from its name.
    make_function_tasks : Samples of tasks of a family.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.extrapolate import ExponentialFamily
    >>> family = ExponentialFamily()
    >>> x = np.linspace(-1.0, 1.0, 30)
    >>> theta = np.array([1.5])
    >>> np.round(family.estimate(x, family.evaluate(x, theta)), 3).tolist()
    [1.5]
    """

    name = "exp"
    n_params = 1

    def __init__(self, rate_range=(-4.0, 4.0), n_grid=161):
        self.rate_range = rate_range
        self.n_grid = n_grid

    def evaluate(self, x, theta):
        x, t = self._check_evaluate(x, theta)
        with np.errstate(over="ignore", invalid="ignore"):
            f = np.exp(t[..., 0:1] * x)
        return self._finite_values(f)

    def estimate(self, x, y):
        x, y = self._check_points(x, y)
        w = np.linspace(*self.rate_range, self.n_grid)
        sse = ((np.exp(w[:, None] * x[None, :]) - y[None, :]) ** 2).sum(1)
        k = int(np.argmin(sse))
        res = least_squares(lambda t: np.exp(t[0] * x) - y, x0=[w[k]], method="lm")
        return res.x


_FAMILIES = {
    "quadratic": QuadraticFamily,
    "sin_trend": SinTrendFamily,
    "exp": ExponentialFamily,
}


def get_family(family):
    """A :class:`FunctionFamily` from its name (``"quadratic"``, ``"sin_trend"``, ``"exp"``).

    Parameters
    ----------
    family : str or FunctionFamily
        A family name, or an instance (returned as is).

    Returns
    -------
    family : FunctionFamily
        A new instance with default settings for a name.

    See Also
    --------
    FunctionFamily : The interface of a family.

    Examples
    --------
    >>> from mvlearn_ext.extrapolate import get_family
    >>> type(get_family("sin_trend")).__name__
    'SinTrendFamily'
    """
    if isinstance(family, FunctionFamily):
        return family
    if isinstance(family, str) and family in _FAMILIES:
        return _FAMILIES[family]()
    raise ValueError(
        f"family must be one of {sorted(_FAMILIES)} or a FunctionFamily instance, got {family!r}"
    )


def make_function_tasks(
    family, thetas, *, n_points=50, x_range=(-1.0, 1.0), noise=0.05, random_state=None
):
    """Noisy samples ``y = f_theta(x) + noise * eps`` of one task per row of ``thetas``.

    Parameters
    ----------
    family : str or FunctionFamily
    thetas : array-like of shape (n_tasks, n_params)
    n_points : int, default=50
        Points per task, ``x`` uniform in ``x_range``.
    x_range : tuple of two floats, default=(-1, 1)
    noise : float >= 0, default=0.05
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X, Y : ndarray of shape (n_tasks, n_points)

    See Also
    --------
    get_family : The families by name.
    RelationalTaskExtrapolator : Learns from these tasks.

    Examples
    --------
    >>> from mvlearn_ext.extrapolate import make_function_tasks
    >>> X, Y = make_function_tasks("quadratic", [[1.0, 0.5], [0.7, 1.2]], n_points=5,
    ...                            random_state=0)
    >>> X.shape, Y.shape
    ((2, 5), (2, 5))
    """
    fam = get_family(family)
    T = fam._check_theta(thetas, "thetas", ndim=(2,))
    if isinstance(n_points, bool) or not isinstance(n_points, Integral) or n_points < 1:
        raise ValueError(f"n_points must be a positive int, got {n_points!r}")
    if not isinstance(noise, Real) or noise < 0:
        raise ValueError(f"noise must be a non-negative float, got {noise!r}")
    lo, hi = _check_range(x_range, "x_range")
    rng = check_random_state(random_state)
    X = rng.uniform(lo, hi, size=(T.shape[0], n_points))
    Y = fam.evaluate(X, T) + noise * rng.normal(size=X.shape)
    return X, Y


def _check_range(value, name):
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be two floats (low, high), got {value!r}") from exc
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"{name} must have finite low < high, got {value!r}")
    return lo, hi


def sample_task_pairs(thetas, n_pairs, *, random_state=None):
    """Random ordered pairs ``(i, j)``, ``i != j``, and ``phi_ij = theta_j - theta_i``.

    The relations RTE learns in the continuous regime: ``theta_i + phi_ij ==
    theta_j`` exactly.

    Parameters
    ----------
    thetas : array-like of shape (n_tasks, n_params)
        Task embeddings of the library (at least two tasks).
    n_pairs : int
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    i, j : ndarray of int, shape (n_pairs,)
    phi : ndarray of shape (n_pairs, n_params)

    See Also
    --------
    RelationalTaskExtrapolator : Trains on such pairs.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.extrapolate import sample_task_pairs
    >>> T = np.array([[0.0, 1.0], [2.0, 3.0], [5.0, 5.0]])
    >>> i, j, phi = sample_task_pairs(T, 4, random_state=0)
    >>> bool(np.all(T[i] + phi == T[j])), bool(np.all(i != j))
    (True, True)
    """
    T = _as_float_array(thetas, "thetas", ndim=(2,))
    if T.shape[0] < 2:
        raise ValueError(f"thetas must hold at least two tasks, got {T.shape[0]}")
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, Integral) or n_pairs < 1:
        raise ValueError(f"n_pairs must be a positive int, got {n_pairs!r}")
    rng = check_random_state(random_state)
    n = T.shape[0]
    i = rng.randint(0, n, size=n_pairs)
    j = (i + rng.randint(1, n, size=n_pairs)) % n  # uniform over j != i
    return i, j, T[j] - T[i]
