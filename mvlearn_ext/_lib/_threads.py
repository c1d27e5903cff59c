"""The thread rule of the compiled core: resolve an ``n_threads``/``n_jobs`` argument.

Kept apart from the façade (:mod:`mvlearn_ext._lib`) so that the unchecked
kernel entries (:mod:`mvlearn_ext._lib._kernels`) can use it without an
import cycle; :mod:`mvlearn_ext.utils._threads` builds the rest of the rule on it.
"""

from __future__ import annotations

import numbers
import os

__all__ = ["MAX_THREADS", "effective_n_threads"]


def _available_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


#: The largest thread count an ``n_threads``/``n_jobs`` argument may ask for
#: (in absolute value). A larger count is a mistake, not a machine: it would
#: overflow the compiled core's ``int`` or start more threads than the system allows.
MAX_THREADS = 4096


def effective_n_threads(n_threads, *, name="n_threads") -> int:
    """Resolve an ``n_threads`` (or ``n_jobs``) argument to a positive number of threads.

    ``None`` and ``-1`` mean every CPU available to this process; a negative
    ``n`` means ``n_cpus + 1 + n``, at least 1 (joblib's convention, so
    ``-2`` leaves one CPU free); a positive integer is used as given. ``0``
    and values beyond :data:`MAX_THREADS` in absolute value are refused with a
    ``ValueError`` that names the argument (``name``), before they reach the
    compiled core.
    """
    if n_threads is None:
        return _available_cpus()
    if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral):
        raise TypeError(f"{name} must be an int or None, got {type(n_threads).__name__}")
    n_threads = int(n_threads)
    if n_threads == 0 or abs(n_threads) > MAX_THREADS:
        raise ValueError(
            f"{name} must be a non-zero int between -{MAX_THREADS} and {MAX_THREADS}, or None "
            f"(negative: all CPUs but |{name}| - 1), got {n_threads}"
        )
    if n_threads < 0:
        return max(1, _available_cpus() + 1 + n_threads)
    return n_threads
