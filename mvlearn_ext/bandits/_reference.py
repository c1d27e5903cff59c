"""Plain-Python reference implementations of the allocation rules.

Used by the tests (an independent implementation of every selection rule,
compared with the compiled kernels on the same observations), and a plain
Python loop to time :func:`simulate` against.
Written from the rules in the docstrings of
:mod:`mvlearn_ext.bandits._policies`, not from the kernels.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["reference_run"]


def _largest_remainder(weights, budget, floor):
    K = len(weights)
    clamped = [False] * K
    while True:
        free = [k for k in range(K) if not clamped[k]]
        wsum = sum(weights[k] for k in free)
        free_budget = budget - floor * (K - len(free))
        real = [
            floor
            if clamped[k]
            else (free_budget * weights[k] / wsum if wsum > 0 else free_budget / len(free))
            for k in range(K)
        ]
        newly = [k for k in free if real[k] < floor]
        if not newly:
            break
        for k in newly:
            clamped[k] = True
    out = [floor if clamped[k] else max(floor, math.floor(real[k])) for k in range(K)]
    order = sorted(
        (k for k in range(K) if not clamped[k]),
        key=lambda k: (-(real[k] - math.floor(real[k])), k),
    )
    for k in order[: budget - sum(out)]:
        out[k] += 1
    return out


def reference_run(rule, samples, *, p, n0=2, sigma=None, bonus=0.0, log_term=0.0):
    """Run one replication of ``rule`` on ``samples[k][j]`` in plain Python.

    Parameters
    ----------
    rule : str
        One of "uniform", "oracle", "two_stage", "greedy", "gafs_max", "ch_as",
        "b_as", "variance_ucb".
    samples : array-like of shape (n_groups, budget)
        Observation ``j`` of group ``k``.
    p : float
    n0 : int
        Warm start of greedy / two-stage.
    sigma : sequence of float, optional
        True standard deviations (oracle).
    bonus, log_term : float
        The confidence-bonus constants (``pp[2]``, ``pp[3]`` of the kernels).

    Returns
    -------
    counts, means : list of int, list of float
    """
    samples = np.asarray(samples, dtype=float)
    K, T = samples.shape
    q = 2.0 if math.isinf(p) else 2.0 * p / (p + 1.0)
    n = [0] * K
    mean = [0.0] * K
    m2 = [0.0] * K
    target = None
    if rule == "uniform":
        target = [T // K + (1 if k < T % K else 0) for k in range(K)]
    elif rule == "oracle":
        target = _largest_remainder([s**q for s in sigma], T, 1)

    def index(k):
        var = m2[k] / (n[k] - 1) if n[k] > 1 else 0.0
        if rule == "ch_as" or rule == "variance_ucb":
            var = var + bonus * math.sqrt(log_term / n[k])
        elif rule == "b_as":
            var = (math.sqrt(var) + bonus * math.sqrt(log_term / n[k])) ** 2
        return var ** (0.5 * q) / n[k]

    for t in range(T):
        if target is not None and rule in ("uniform", "oracle"):
            k = max(range(K), key=lambda j: (target[j] - n[j], -j))
        else:
            kmin = min(range(K), key=lambda j: (n[j], j))
            if rule == "gafs_max":
                forced = n[kmin] < math.sqrt(t + 1.0) + 1.0
            else:
                forced = n[kmin] < n0
            if forced:
                k = kmin
            elif rule == "two_stage":
                if target is None:
                    w = [(m2[j] / (n[j] - 1)) ** (0.5 * q) for j in range(K)]
                    target = _largest_remainder(w, T, n0)
                k = max(range(K), key=lambda j: (target[j] - n[j], -j))
            else:
                k = max(range(K), key=lambda j: (index(j), -j))
        x = float(samples[k, n[k]])
        n[k] += 1
        d = x - mean[k]
        mean[k] += d / n[k]
        m2[k] += d * (x - mean[k])
    return n, mean
