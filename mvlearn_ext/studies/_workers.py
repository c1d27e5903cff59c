"""What runs on the workers: one replication, with its seed, its thread limits and its errors.

Nothing here imports dask, pandas or matplotlib; the module is imported by
loky and dask worker processes when they unpickle a task.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import sys
import time
import traceback

from mvlearn_ext.utils._threads import _controller

from ._seeding import jsonable, replication_rng

__all__ = ["RESERVED", "run_replication"]

#: Column names the runner adds to every record.
RESERVED = ("setting_id", "replication")


@contextlib.contextmanager
def thread_limits(inner_threads, *, blas: bool):
    """Cap BLAS/OpenMP pools (if ``blas``) and Numba's threads (this thread) at ``inner_threads``.

    ``None`` leaves everything as it is. Numba's setting is per thread and is
    restored on exit; it is applied only when Numba is already imported.
    """
    if inner_threads is None:
        yield
        return
    with contextlib.ExitStack() as stack:
        if blas:
            stack.enter_context(_controller().limit(limits=inner_threads))
        numba = sys.modules.get("numba")
        if numba is not None and hasattr(numba, "set_num_threads"):
            old = numba.get_num_threads()
            numba.set_num_threads(max(1, min(inner_threads, numba.config.NUMBA_NUM_THREADS)))
            stack.callback(numba.set_num_threads, old)
        yield


def _normalise_records(out, setting_keys):
    """The replicate's return value as a list of JSON-ready dicts, or a TypeError/ValueError."""
    if isinstance(out, dict):
        out = [out]
    elif isinstance(out, (list, tuple)) and all(isinstance(r, dict) for r in out):
        out = list(out)
    else:
        raise TypeError(
            "replicate must return a dict or a list of dicts (one record each), "
            f"got {type(out).__name__}"
        )
    records = []
    for j, rec in enumerate(out):
        where = f"record {j}" if len(out) > 1 else "the record"
        clash = [k for k in rec if k in RESERVED or k in setting_keys]
        if clash:
            raise ValueError(
                f"{where} has key(s) {clash} that clash with the setting's keys or the "
                f"runner's columns {list(RESERVED)}; rename them"
            )
        records.append(jsonable(rec, where=where))
    return records


def _portable(exc):
    """``exc`` if it survives pickling (to travel back from a worker), else a RuntimeError."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def run_replication(
    replicate, setting_json, key, replication, root_seed, inner_threads, parent_pid
):
    """Run one replication; never raises (errors come back as values).

    Returns ``("ok", key, replication, (line, records), seconds)`` with
    ``line`` the JSON text of the replication's entry in the results file and
    ``records`` its (plain JSON) records, or
    ``(kind, key, replication, exception, traceback_text)`` with ``kind`` one
    of ``"raised"`` (the replicate function raised) or ``"returned"`` (it
    returned something that is not a list of JSON-ready records).
    """
    setting = json.loads(setting_json)
    rng = replication_rng(root_seed, key, replication)
    start = time.perf_counter()
    try:
        # BLAS pools are process-wide: cap them here only in a worker process;
        # the parent caps its own around the whole run.
        with thread_limits(inner_threads, blas=os.getpid() != parent_pid):
            out = replicate(setting, rng)
    except Exception as exc:
        return ("raised", key, replication, _portable(exc), traceback.format_exc())
    seconds = time.perf_counter() - start
    try:
        records = _normalise_records(out, setting)
        line = json.dumps(
            {
                "setting": f"{key:016x}",
                "replication": replication,
                "records": records,
                "seconds": round(seconds, 6),
            },
            separators=(",", ":"),
            allow_nan=True,
        )
    except (TypeError, ValueError) as exc:
        return ("returned", key, replication, exc, "")
    # The records as they read back from the line (plain JSON types already).
    return ("ok", key, replication, (line, records), seconds)
