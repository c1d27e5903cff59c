"""Thread settings of the estimators: one rule for ``n_jobs``, fixed results.

Every estimator and public function with an ``n_jobs`` argument follows the
same rules:

* the argument is validated by :data:`N_JOBS_CONSTRAINT` and resolved once, at
  the start of the call, by :func:`mvlearn_ext.utils.effective_n_jobs`:
  ``None`` means 1 (or the ``n_jobs`` of an enclosing
  :func:`joblib.parallel_config`), ``-1`` every CPU available to the process,
  ``-k`` all but ``k - 1`` of them, and a positive count is capped at the
  number of available CPUs;
* the count bounds the package's own threads: the C++ kernels and the Numba
  ``parallel=True`` kernels (:func:`~mvlearn_ext.utils._numba.numba_threads`);
* the BLAS and OpenMP pools of NumPy, SciPy and scikit-learn run on one
  thread inside the call (:func:`single_threaded_pools`): OpenBLAS splits
  the inner dimension of a skinny product (``(k, n) @ (n, d)`` with small
  ``k, d``) and long dot products across its threads, and scikit-learn's
  k-means sums its centres per OpenMP thread, so both change the last bits
  of a result with the thread count, and those bits can change labels.

With these rules, and kernels that never reduce across threads in a
thread-dependent order, the same seed gives the same bits on any thread
count (the tests in ``tests/test_thread_invariance.py``). Python-level work
that splits into independent pieces (the tiles of rows of :func:`row_tiles`,
one task per view) runs on ``n_jobs`` threads through :func:`map_tasks`: the
pieces do not depend on the thread count, and each runs single-threaded, so
neither do the bits of the result.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from concurrent.futures import ThreadPoolExecutor
from numbers import Integral

from sklearn.utils._param_validation import Interval

from mvlearn_ext._lib import effective_n_jobs
from mvlearn_ext.utils._numba import numba_threads

__all__ = [
    "N_JOBS_CONSTRAINT",
    "ROW_TILE",
    "fit_threads",
    "map_tasks",
    "numba_threads",
    "row_tiles",
    "single_threaded_pools",
    "with_single_threaded_pools",
]

#: The scikit-learn parameter constraint of every ``n_jobs`` argument: ``None``
#: or a non-zero int (:func:`~mvlearn_ext.utils.effective_n_jobs` resolves it).
N_JOBS_CONSTRAINT = [
    Interval(Integral, None, -1, closed="right"),
    Interval(Integral, 1, None, closed="left"),
    None,
]

#: Rows per tile of :func:`row_tiles`: enough for a tile's matrix products to run
#: at full speed, few enough that two threads share the rows of a 500-sample data set.
ROW_TILE = 256

_controllers: dict = {}


def _controller():
    """A cached ``threadpoolctl.ThreadpoolController``, rebuilt when new modules load.

    Building one lists the loaded native libraries (about a millisecond);
    a limit through a cached one costs microseconds, so kernels called in a
    loop can afford it.
    """
    from threadpoolctl import ThreadpoolController  # a scikit-learn dependency

    n = len(sys.modules)
    controller = _controllers.get(n)
    if controller is None:
        _controllers.clear()
        controller = _controllers[n] = ThreadpoolController()
    return controller


def single_threaded_pools():
    """A context in which the BLAS and OpenMP pools run on one thread (then restored)."""
    return _controller().limit(limits=1)


def with_single_threaded_pools(func):
    """Decorate ``func`` to run inside :func:`single_threaded_pools`."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with single_threaded_pools():
            return func(*args, **kwargs)

    return wrapper


@contextlib.contextmanager
def fit_threads(n_jobs, *, name="n_jobs"):
    """Resolve a thread argument and apply the package's thread rules for a block.

    Yields the resolved count, to pass to the compiled kernels; inside the
    block the Numba kernels use at most that many threads and the BLAS and
    OpenMP pools one.

    Parameters
    ----------
    n_jobs : int or None
        The estimator's argument (see the module docstring).
    name : str, default="n_jobs"
        Its name, for the error message.
    """
    n = effective_n_jobs(n_jobs, name=name)
    with single_threaded_pools(), numba_threads(n):
        yield n


def row_tiles(n_rows, tile=ROW_TILE):
    """Slices of near-equal length, at most ``tile`` rows each, covering ``range(n_rows)``.

    The tiles depend on ``n_rows`` and ``tile`` alone, never on a thread count.
    """
    n_tiles = max(1, -(-int(n_rows) // tile))
    bounds = [i * int(n_rows) // n_tiles for i in range(n_tiles + 1)]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def map_tasks(func, items, n_threads):
    """``[func(item) for item in items]``, run on up to ``n_threads`` threads, in order.

    The BLAS and OpenMP pools run on one thread meanwhile (each task is
    single-threaded), so a result assembled from the tasks' outputs is the same
    bits whatever ``n_threads``, provided the tasks are independent and ``func``
    does not itself depend on the thread count. ``func`` releases the GIL in
    its NumPy, BLAS and compiled calls; pure-Python work gains nothing.
    """
    items = list(items)
    n_threads = min(int(n_threads or 1), len(items))
    with single_threaded_pools():
        if n_threads <= 1:
            return [func(item) for item in items]
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            return list(pool.map(func, items))
