"""The thread rule over every discovered estimator with an ``n_jobs`` parameter.

``n_jobs=0`` is refused naming ``n_jobs``; a fit with ``n_jobs=-1`` or with
a count far above the machine's never starts more threads than there are
CPUs, beyond those its library pools (Numba, OpenBLAS, torch) hold after a
fit with ``n_jobs=1``. A watcher thread counts the process's threads
(``/proc/self/task``) during the fit.
"""

import importlib.util
import inspect
import os
import pathlib
import sys
import threading
import time
import warnings

import pytest
from sklearn.base import clone

from mvlearn_ext.utils.discovery import all_estimators

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="counts threads in /proc/self/task"
)

_spec = importlib.util.spec_from_file_location(
    "_bad_input_cases", pathlib.Path(__file__).with_name("test_bad_input.py")
)
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

#: (name, n_jobs) -> why it still breaks the rule; strict xfails, so a fix shows.
KNOWN_FAILURES = {}


def _with_n_jobs():
    return [
        (name, cls)
        for name, cls in all_estimators()
        if "n_jobs" in inspect.signature(cls.__init__).parameters and name in cases.SETUPS
    ]


ESTIMATORS = _with_n_jobs()


def _params(values):
    for name, cls in ESTIMATORS:
        for n_jobs in values:
            reason = KNOWN_FAILURES.get((name, n_jobs))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(name, cls, n_jobs, id=f"{name}-{n_jobs}", marks=marks)


def _setup(name, cls):
    estimator, adapter = cases.SETUPS[name][0](cls), cases.SETUPS[name][1]()
    return estimator, adapter


def _fit(adapter, est):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        adapter.fit(est)


def _threads():
    return len(os.listdir("/proc/self/task"))


def _watched_fit(adapter, estimator, n_jobs):
    """Warm up with ``n_jobs=1``, then fit with ``n_jobs`` under a watcher thread.

    Returns how many threads above the warmed-up process the fit reached. The fit
    runs in this process: a forked child can deadlock on a lock that another
    thread (an OpenMP or torch pool) held at the fork.
    """
    _fit(adapter, clone(estimator).set_params(n_jobs=1))
    done = threading.Event()
    peak = [0]

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], _threads())
            time.sleep(0.001)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    time.sleep(0.01)
    baseline = _threads()
    peak[0] = baseline
    try:
        _fit(adapter, clone(estimator).set_params(n_jobs=n_jobs))
    finally:
        done.set()
        watcher.join()
    return peak[0] - baseline


@pytest.mark.parametrize("name, cls, n_jobs", list(_params([-1, 10**6])))
def test_fit_never_starts_more_threads_than_cpus(name, cls, n_jobs):
    estimator, adapter = _setup(name, cls)
    extra = _watched_fit(adapter, estimator, n_jobs)
    assert extra <= CPUS, (
        f"{name}(n_jobs={n_jobs}) started {extra} threads, more than the {CPUS} CPUs, "
        "above its pools' threads after a fit with n_jobs=1"
    )


@pytest.mark.parametrize("name, cls, n_jobs", list(_params([0])))
def test_n_jobs_zero_is_refused_by_name(name, cls, n_jobs):
    estimator, adapter = _setup(name, cls)
    with pytest.raises(ValueError, match="n_jobs"):
        _fit(adapter, clone(estimator).set_params(n_jobs=n_jobs))
