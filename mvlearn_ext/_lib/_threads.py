"""The thread rule of the package: resolve an ``n_jobs`` argument.

Kept apart from the façade (:mod:`mvlearn_ext._lib`) so that the unchecked
kernel entries (:mod:`mvlearn_ext._lib._kernels`) can use it without an
import cycle; :mod:`mvlearn_ext.utils._threads` builds the rest of the rule on it.
"""

from __future__ import annotations

import numbers
import os

__all__ = ["MAX_THREADS", "effective_n_jobs"]


def _available_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


#: An upper bound on any resolved thread count, whatever the machine reports:
#: the compiled core takes an ``int``, and no machine this package targets has more CPUs.
MAX_THREADS = 4096


def effective_n_jobs(n_jobs, *, name="n_jobs") -> int:
    """Resolve an ``n_jobs`` argument to the number of threads a call may use.

    The one rule of the package, as in scikit-learn's glossary:

    * ``None`` means 1, unless the call runs inside
      :func:`joblib.parallel_config` with ``n_jobs`` set, whose value is then
      resolved by the same rule;
    * ``-1`` means every CPU available to this process (its affinity mask),
      and ``-k`` all of them but ``k - 1`` (joblib's convention);
    * a positive ``k`` means ``k``, but never more than the CPUs available:
      a larger count is capped, since extra threads only contend for the same
      cores.

    ``0``, a negative value that leaves no CPU, and anything but an int or
    ``None`` are refused with an error that names the argument (``name``).

    Parameters
    ----------
    n_jobs : int or None
        The argument to resolve.
    name : str, default="n_jobs"
        Its name, for the error message.

    Returns
    -------
    n_threads : int
        A count between 1 and the number of available CPUs.

    See Also
    --------
    joblib.parallel_config : Sets the default for ``n_jobs=None``.

    Examples
    --------
    >>> from mvlearn_ext.utils import effective_n_jobs
    >>> effective_n_jobs(None)
    1
    >>> effective_n_jobs(10**6) == effective_n_jobs(-1)
    True
    """
    if isinstance(n_jobs, bool) or not (n_jobs is None or isinstance(n_jobs, numbers.Integral)):
        raise TypeError(f"{name} must be an int or None, got {type(n_jobs).__name__}")
    if n_jobs is None:
        n_jobs = _joblib_default_n_jobs()
        if n_jobs is None:
            return 1
    n_jobs = int(n_jobs)
    if n_jobs == 1:  # the kernels' usual count: no affinity system call on the hot path
        return 1
    cpus = min(_available_cpus(), MAX_THREADS)
    if n_jobs == 0:
        raise ValueError(f"{name} must be a positive int, -1 (every CPU) or None (one), got 0")
    if n_jobs < 0:
        n = cpus + 1 + n_jobs
        if n < 1:
            raise ValueError(
                f"{name}={n_jobs} leaves no CPU on this machine ({cpus} available): "
                f"use -1 for every CPU, or a positive count"
            )
        return n
    return min(n_jobs, cpus)


def _joblib_default_n_jobs():
    """``n_jobs`` set by an enclosing :func:`joblib.parallel_config`, or ``None``."""
    from joblib.parallel import get_active_backend

    return get_active_backend()[1]
