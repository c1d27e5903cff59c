"""Thread settings of the estimators: one rule for ``n_jobs``/``n_threads``, fixed results.

Every estimator with a thread argument follows the same rules:

* the argument is resolved once, at the start of the call, by
  :func:`mvlearn_ext.utils.effective_n_threads`: ``None`` or ``-1`` means
  every CPU available to the process, ``-n`` means all but ``n - 1`` of them
  (joblib's convention), and ``0`` or a count beyond
  :data:`~mvlearn_ext._lib.MAX_THREADS` is a ``ValueError`` naming the
  argument;
* the count bounds the package's own threads: the C++ kernels (their
  ``n_threads`` argument) and the Numba ``parallel=True`` kernels
  (:func:`~mvlearn_ext.utils._numba.numba_threads`);
* the BLAS and OpenMP pools of NumPy, SciPy and scikit-learn run on one
  thread inside the call (:func:`single_threaded_pools`): OpenBLAS splits
  the inner dimension of a skinny product (``(k, n) @ (n, d)`` with small
  ``k, d``) and long dot products across its threads, and scikit-learn's
  k-means sums its centres per OpenMP thread, so both change the last bits
  of a result with the thread count, and those bits can change labels.

With these rules, and kernels that never reduce across threads in a
thread-dependent order, the same seed gives the same bits on any thread
count (the tests in ``tests/test_thread_invariance.py``).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from numbers import Integral

from sklearn.utils._param_validation import Interval

from mvlearn_ext._lib import MAX_THREADS, effective_n_threads
from mvlearn_ext.utils._numba import numba_threads

__all__ = [
    "THREADS_CONSTRAINT",
    "fit_threads",
    "numba_threads",
    "single_threaded_pools",
    "with_single_threaded_pools",
]

#: scikit-learn parameter constraint of an ``n_jobs``/``n_threads`` argument:
#: ``None`` or a non-zero int with absolute value at most ``MAX_THREADS``.
THREADS_CONSTRAINT = [
    Interval(Integral, -MAX_THREADS, -1, closed="both"),
    Interval(Integral, 1, MAX_THREADS, closed="both"),
    None,
]

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
def fit_threads(n_threads, *, name="n_jobs"):
    """Resolve a thread argument and apply the package's thread rules for a block.

    Yields the resolved count, to pass to the compiled kernels; inside the
    block the Numba kernels use at most that many threads and the BLAS and
    OpenMP pools one.

    Parameters
    ----------
    n_threads : int or None
        The estimator's argument (see the module docstring).
    name : str, default="n_jobs"
        Its name, for the error message.

    Examples
    --------
    >>> from mvlearn_ext.utils._threads import fit_threads
    >>> with fit_threads(1) as n:
    ...     n
    1
    """
    n = effective_n_threads(n_threads, name=name)
    with single_threaded_pools(), numba_threads(n):
        yield n
