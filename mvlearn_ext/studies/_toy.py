"""Toy replicate functions, importable by worker processes (used by the tests and docs)."""

from __future__ import annotations

import numpy as np

__all__ = ["location_estimators", "logged_flaky", "thread_report"]


def location_estimators(setting, rng):
    """Squared errors of the mean and the median of ``n`` draws from N(mu, sigma^2).

    ``setting`` has ``n`` (int), ``sigma`` (float) and optionally ``mu``
    (float, default 0). Returns one record per estimator.
    """
    mu = setting.get("mu", 0.0)
    x = rng.normal(mu, setting["sigma"], size=setting["n"])
    return [
        {"method": "mean", "sq_err": float((x.mean() - mu) ** 2)},
        {"method": "median", "sq_err": float((np.median(x) - mu) ** 2)},
    ]


def thread_report(setting, rng):
    """The BLAS and Numba thread counts seen inside a replication (for tests)."""
    import numba
    from threadpoolctl import threadpool_info

    blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
    return {"blas_threads": max(blas, default=-1), "numba_threads": numba.get_num_threads()}


def logged_flaky(setting, rng):
    """Like :func:`location_estimators`, and logs each call; may fail once (for tests).

    Appends ``"<n> <squared error of the mean>"`` to the file ``setting["log"]``
    on each call. If ``setting["fail_now"]`` is true and the file
    ``setting["fail_flag"]`` exists, removes the file and raises
    ``RuntimeError``: the first such call fails, whichever process runs it.
    """
    import os

    out = location_estimators(setting, rng)
    with open(setting["log"], "a") as f:
        f.write(f"{setting['n']} {out[0]['sq_err']!r}\n")
    if setting.get("fail_now"):
        flag = setting["fail_flag"]
        try:
            os.remove(flag)
        except FileNotFoundError:
            return out
        raise RuntimeError("injected failure")
    return out
