"""Two-dimensional toy tasks with few pairs and many unpaired conditions, and metrics.

A design of this package for the demo of the semi-supervised multi-objective
diffusion method, not the paper's benchmarks: the
condition is ``c ~ U[low, high]`` and each task ``k`` has a target
``x | c ~ N(m_k(c), noise^2 I)`` in the plane, ``m_sine(c) = (c, sin 2c)``,
``m_parabola(c) = (c, c^2 - 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

import numpy as np
from sklearn.utils import check_random_state

from mvlearn_ext.utils._validation import (
    check_count,
    check_magnitude,
    real_array,
    unit_exponent,
)

__all__ = [
    "TOY_TASKS",
    "ToyTasks",
    "conditional_mean_error",
    "energy_distance",
    "evaluate_toy_sampler",
    "make_toy_tasks",
    "toy_task_mean",
]


def _sine(c):
    return np.column_stack([c, np.sin(2.0 * c)])


def _parabola(c):
    return np.column_stack([c, c * c - 1.0])


def _cubic(c):
    return np.column_stack([c, 0.5 * c**3 - c])


#: The conditional means ``m_k(c)`` of the toy tasks, by name.
TOY_TASKS = {"sine": _sine, "parabola": _parabola, "cubic": _cubic}


def toy_task_mean(task, c):
    """``m_task(c)``, of shape (n, 2), for conditions of shape (n,) or (n, 1).

    Parameters
    ----------
    task : str
        A name in :data:`TOY_TASKS`.
    c : array-like of shape (n,) or (n, 1)
        Conditions.

    Returns
    -------
    mean : ndarray of shape (n, 2)
        The conditional mean of the task at each condition.

    Raises
    ------
    TypeError
        If ``c`` is not a numeric array (strings included).
    ValueError
        If ``task`` is unknown; if ``c`` holds complex values, NaN or
        infinity, is not of shape (n,) or (n, 1), or is so large that the mean
        overflows float64.

    See Also
    --------
    make_toy_tasks : Samples of the toy tasks.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.diffusion import toy_task_mean
    >>> toy_task_mean("parabola", np.array([0.0, 1.0])).shape
    (2, 2)
    """
    if task not in TOY_TASKS:
        raise ValueError(f"task must be one of {sorted(TOY_TASKS)}, got {task!r}")
    return _task_mean(task, _check_conditions(c, "c"), "c")


def _task_mean(task, c, name):
    """``m_task(c)`` of checked conditions ``c``, refused (naming ``name``) where it overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        mean = TOY_TASKS[task](c)
    if not np.all(np.isfinite(mean)):  # the cubic task overflows from |c| ~ 1e103
        raise ValueError(
            f"the {task} mean overflows float64 at the largest |{name}| = "
            f"{np.abs(c).max():.3g}; rescale {name}"
        )
    return mean


def _check_conditions(c, name):
    """Conditions of shape (n,) or (n, 1) as a validated float64 array of shape (n,)."""
    c = real_array(c, name, allow_empty=True)
    if c.ndim == 2 and c.shape[1] == 1:
        c = c[:, 0]
    if c.ndim != 1:
        raise ValueError(f"{name} must have shape (n,) or (n, 1), got {c.shape}")
    check_magnitude(c, name)
    return c


@dataclass(frozen=True, eq=False)
class ToyTasks:
    """Paired, unpaired and held-out data of several toy tasks (one entry per task).

    Parameters
    ----------
    names : tuple of str
        Names of the tasks, in :data:`TOY_TASKS`.
    pairs : list of (C, X)
        ``C`` of shape (n_pairs, 1), ``X`` of shape (n_pairs, 2).
    unpaired : list of ndarray of shape (n_unpaired, 1)
        Conditions without samples.
    test : list of ndarray of shape (n_test, 1)
        Held-out conditions.
    noise : float
        Standard deviation of ``x`` around its conditional mean.

    See Also
    --------
    make_toy_tasks : Draws them.
    toy_task_mean : The true conditional mean of a task.

    Examples
    --------
    >>> from mvlearn_ext.diffusion import make_toy_tasks
    >>> data = make_toy_tasks(n_pairs=8, n_unpaired=20, n_test=5, random_state=0)
    >>> data.names, len(data.pairs), data.test[0].shape
    (('sine', 'parabola'), 2, (5, 1))
    >>> data.mean(0, data.test[0]).shape, data.sample(1, data.test[0], random_state=0).shape
    ((5, 2), (5, 2))
    """

    names: tuple
    pairs: list
    unpaired: list
    test: list
    noise: float

    def mean(self, k, C):
        """The true conditional mean of task ``k`` at the conditions ``C``.

        Parameters
        ----------
        k : int
            Index of the task in ``names``.
        C : array-like of shape (n,) or (n, 1)
            Conditions.

        Returns
        -------
        mean : ndarray of shape (n, 2)
            The conditional mean of the task at each condition.

        Raises
        ------
        TypeError
            If ``C`` is not a numeric array (strings included).
        ValueError
            If ``C`` holds complex values, NaN, infinity or values whose
            squares overflow, is not of shape (n,) or (n, 1), or makes the
            mean overflow float64.
        """
        return _task_mean(self.names[k], _check_conditions(C, "C"), "C")

    def sample(self, k, C, *, random_state=None):
        """Samples of task ``k`` at ``C`` from the true conditional law.

        Parameters
        ----------
        k : int
            Index of the task in ``names``.
        C : array-like of shape (n,) or (n, 1)
            Conditions.
        random_state : int, RandomState instance or None, default=None
            Seeds the noise.

        Returns
        -------
        X : ndarray of shape (n, 2)
            The conditional mean plus Gaussian noise of deviation ``noise``.

        Raises
        ------
        TypeError
            If ``C`` is not a numeric array (strings included).
        ValueError
            If ``C`` holds complex values, NaN, infinity or values whose
            squares overflow, or is not of shape (n,) or (n, 1).
        """
        m = self.mean(k, C)
        return m + self.noise * check_random_state(random_state).standard_normal(m.shape)


def make_toy_tasks(
    n_pairs=32,
    n_unpaired=2000,
    n_test=256,
    *,
    tasks=("sine", "parabola"),
    noise=0.05,
    low=-1.5,
    high=1.5,
    random_state=None,
):
    """The 2-D toy tasks of the demo: few pairs, many unpaired conditions per task.

    Parameters
    ----------
    n_pairs : int, default=32
        Paired ``(c, x)`` samples per task.
    n_unpaired : int, default=2000
        Unpaired conditions per task.
    n_test : int, default=256
        Held-out conditions per task.
    tasks : sequence of str, default=("sine", "parabola")
        Names in :data:`TOY_TASKS`.
    noise : float, default=0.05
        Standard deviation of ``x`` around its conditional mean.
    low, high : float, default=-1.5, 1.5
        Range of the conditions.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    data : ToyTasks

    See Also
    --------
    ToyTasks : The data it returns.
    two_stage_polynomial : The pipeline fitted on them.

    Examples
    --------
    >>> from mvlearn_ext.diffusion import make_toy_tasks
    >>> data = make_toy_tasks(random_state=0)
    >>> data.names, data.pairs[0][1].shape, data.unpaired[1].shape
    (('sine', 'parabola'), (32, 2), (2000, 1))
    """
    for name, v, lo in (
        ("n_pairs", n_pairs, 1),
        ("n_unpaired", n_unpaired, 0),
        ("n_test", n_test, 1),
    ):
        check_count(v, name, lo)
    if isinstance(tasks, str):
        raise TypeError("tasks must be a sequence of task names, not a single string")
    tasks = tuple(tasks)
    if not tasks:
        raise ValueError("tasks must name at least one task")
    for t in tasks:
        if t not in TOY_TASKS:
            raise ValueError(f"unknown task {t!r}; known: {sorted(TOY_TASKS)}")
    if not isinstance(noise, Real) or not np.isfinite(noise) or noise <= 0:
        raise ValueError(f"noise must be a positive float, got {noise!r}")
    if not (isinstance(low, Real) and isinstance(high, Real) and low < high):
        raise ValueError(f"low and high must be floats with low < high, got {low!r}, {high!r}")
    rng = check_random_state(random_state)
    pairs, unpaired, test = [], [], []
    for t in tasks:
        C = rng.uniform(low, high, size=(n_pairs, 1))
        X = toy_task_mean(t, C) + noise * rng.standard_normal((n_pairs, 2))
        pairs.append((C, X))
        unpaired.append(rng.uniform(low, high, size=(n_unpaired, 1)))
        test.append(rng.uniform(low, high, size=(n_test, 1)))
    return ToyTasks(names=tasks, pairs=pairs, unpaired=unpaired, test=test, noise=float(noise))


def conditional_mean_error(samples, true_means):
    """Mean squared error of the Monte Carlo conditional mean: ``mean_i ||xbar_i - m(c_i)||^2``.

    Parameters
    ----------
    samples : array-like of shape (n_conditions, n_draws, d)
        Draws of the model at each condition.
    true_means : array-like of shape (n_conditions, d)

    Returns
    -------
    error : float
        Includes the Monte Carlo variance of the mean (``noise^2 d / n_draws``
        for a perfect model).

    See Also
    --------
    toy_task_mean : The true conditional means of the toy tasks.
    energy_distance : A distance between whole samples.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.diffusion import conditional_mean_error
    >>> samples = np.ones((3, 10, 2))  # 10 draws at each of 3 conditions
    >>> conditional_mean_error(samples, np.zeros((3, 2)))
    2.0
    """
    S = real_array(samples, "samples")
    M = real_array(true_means, "true_means")
    if S.ndim != 3:
        raise ValueError(f"samples must be 3-D (n_conditions, n_draws, d), got shape {S.shape}")
    if M.shape != (S.shape[0], S.shape[2]):
        raise ValueError(f"true_means has shape {M.shape}, expected {(S.shape[0], S.shape[2])}")
    check_magnitude(S, "samples")
    check_magnitude(M, "true_means")
    d = S.mean(axis=1) - M
    return float((d * d).sum(axis=1).mean())


def _mean_dist(A, B):
    diff = A[:, None, :] - B[None, :, :]
    return float(np.sqrt((diff * diff).sum(-1)).mean())


def energy_distance(X, Y):
    """The energy distance ``2 E||X - Y|| - E||X - X'|| - E||Y - Y'||`` of two samples.

    Zero in the limit exactly when the two laws agree (Szekely & Rizzo,
    2013); computed with all pairs (V-statistic), so use a few thousand
    points at most. It is in the units of the data (multiplying ``X`` and
    ``Y`` by ``c > 0`` multiplies it by ``c``): it is computed on the data
    divided by a power of two above their largest magnitude, then scaled
    back, so that tiny values do not underflow.

    Parameters
    ----------
    X : array-like of shape (n, d)
    Y : array-like of shape (m, d)

    Returns
    -------
    distance : float

    See Also
    --------
    conditional_mean_error : The error of the conditional means alone.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.diffusion import energy_distance
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(200, 2)), rng.normal(size=(200, 2))
    >>> bool(energy_distance(X, Y) < energy_distance(X, Y + 1.0))
    True
    """
    X = real_array(X, "X", ndim=2)
    Y = real_array(Y, "Y", ndim=2)
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X and Y must be 2-D arrays of equal width, got {X.shape}, {Y.shape}")
    check_magnitude(X, "X")
    check_magnitude(Y, "Y")
    e = unit_exponent(X, Y)
    X, Y = np.ldexp(X, -e), np.ldexp(Y, -e)
    return float(np.ldexp(2.0 * _mean_dist(X, Y) - _mean_dist(X, X) - _mean_dist(Y, Y), e))


def evaluate_toy_sampler(data, sample, mean=None, *, n_draws=16, random_state=0):
    """Conditional-mean error and energy distance of a conditional sampler on held-out conditions.

    For each task ``k`` of ``data``, ``n_draws`` samples are drawn at each
    held-out condition of ``data.test[k]``; the error of their mean against
    the true conditional mean (:func:`conditional_mean_error`, or the exact
    squared error when ``mean`` gives the model's mean) and the energy
    distance (:func:`energy_distance`) of the joint ``(c, x)`` samples to
    fresh samples of the true law are averaged over the tasks. The energy
    distance uses at most about 1000 rows, taken at a regular stride so
    that every held-out condition is represented.

    Parameters
    ----------
    data : ToyTasks
        The tasks, as :func:`make_toy_tasks` returns them.
    sample : callable
        ``sample(k, C, seed)`` returns model samples of task ``k`` at the
        conditions ``C`` of shape (n, 1), as an array of shape (n, 2).
    mean : callable or None, default=None
        ``mean(k, C)`` returns the model's exact conditional mean at ``C``;
        ``None`` uses the mean of the ``n_draws`` samples.
    n_draws : int, default=16
        Samples per held-out condition.
    random_state : int >= 0, default=0
        Task ``k``'s model samples use the seed ``random_state + k``, its
        true samples ``random_state + 100 + k``.

    Returns
    -------
    mean_error : float
        Squared error of the conditional mean, averaged over conditions and
        tasks.
    energy : float
        Energy distance of the joint samples, averaged over tasks.

    See Also
    --------
    conditional_mean_error : The error of Monte Carlo conditional means.
    energy_distance : The distance between two samples.

    Examples
    --------
    >>> from mvlearn_ext.diffusion import evaluate_toy_sampler, make_toy_tasks
    >>> data = make_toy_tasks(n_pairs=8, n_unpaired=1, n_test=32, random_state=0)
    >>> def truth(k, C, seed):  # samples of the true law: a perfect model
    ...     return data.sample(k, C, random_state=seed)
    >>> err, energy = evaluate_toy_sampler(data, truth, mean=data.mean)
    >>> err, bool(energy < 0.01)
    (0.0, True)
    """
    if not isinstance(data, ToyTasks):
        raise TypeError(f"data must be a ToyTasks, got {type(data).__name__}")
    if not callable(sample):
        raise TypeError(f"sample must be callable, got {type(sample).__name__}")
    if mean is not None and not callable(mean):
        raise TypeError(f"mean must be callable or None, got {type(mean).__name__}")
    n_draws = check_count(n_draws, "n_draws", 1)
    random_state = check_count(random_state, "random_state", 0)
    errs, eds = [], []
    for k in range(len(data.names)):
        C = data.test[k]
        Cr = np.repeat(C, n_draws, axis=0)
        X = np.asarray(sample(k, Cr, random_state + k), dtype=np.float64)
        if X.shape != (len(Cr), 2):
            raise ValueError(f"sample returned shape {X.shape}, expected {(len(Cr), 2)}")
        if mean is None:
            errs.append(conditional_mean_error(X.reshape(len(C), n_draws, -1), data.mean(k, C)))
        else:
            errs.append(float(((mean(k, C) - data.mean(k, C)) ** 2).sum(1).mean()))
        # rows are grouped by condition: a stride, not the first rows, covers every condition
        sub = slice(0, None, -(-len(Cr) // 1000))
        truth = data.sample(k, Cr[sub], random_state=random_state + 100 + k)
        eds.append(energy_distance(np.hstack([Cr[sub], X[sub]]), np.hstack([Cr[sub], truth])))
    return float(np.mean(errs)), float(np.mean(eds))
