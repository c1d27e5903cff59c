"""Numba kernels of the anchor-graph clusterers.

Each kernel takes plain contiguous arrays, assumes valid input and calls
nothing above it; the NumPy drivers of :mod:`mvlearn_ext.cluster._common`
validate and call them.
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext.utils._numba import jit

__all__ = ["indicator_sweeps"]


@jit
def _cluster_term(s, count, scaled):
    """Contribution ``s / sqrt(count)`` (scaled) or ``s`` of one cluster."""
    if count <= 0:
        return 0.0
    if scaled:
        return s / np.sqrt(count)
    return s


@jit
def indicator_sweeps(G, labels, scaled, max_sweeps):
    """Coordinate ascent of ``tr(Y_hat^T G)`` over indicators, in place on ``labels``.

    ``G`` is ``(n, k)``; ``labels`` an int64 array of ``n`` labels in
    ``[0, k)`` with no empty cluster. With ``scaled``, the objective is
    ``sum_j s_j / sqrt(n_j)`` with ``s_j`` the sum of ``G[i, j]`` over the
    samples of cluster ``j`` and ``n_j`` its size (the scaled indicator
    ``Y (Y^T Y)^{-1/2}``); otherwise ``sum_j s_j``. Samples are visited in
    order; each moves to the cluster of largest strict gain, and a sample
    that is alone in its cluster never moves, so no cluster empties and
    the objective never decreases. Sweeps stop when none moves, or after
    ``max_sweeps``. Returns the number of moves of the last sweep.
    """
    n, k = G.shape
    sums = np.zeros(k)
    counts = np.zeros(k, dtype=np.int64)
    for i in range(n):
        sums[labels[i]] += G[i, labels[i]]
        counts[labels[i]] += 1
    moved = 0
    for _ in range(max_sweeps):
        moved = 0
        for i in range(n):
            a = labels[i]
            if counts[a] <= 1:
                continue
            old_a = _cluster_term(sums[a], counts[a], scaled)
            new_a = _cluster_term(sums[a] - G[i, a], counts[a] - 1, scaled)
            loss = old_a - new_a
            best = a
            best_gain = 0.0
            for b in range(k):
                if b == a:
                    continue
                gain = (
                    _cluster_term(sums[b] + G[i, b], counts[b] + 1, scaled)
                    - _cluster_term(sums[b], counts[b], scaled)
                    - loss
                )
                # A move needs a gain above rounding level, so sweeps cannot cycle.
                if gain > best_gain + 1e-12 * (1.0 + abs(old_a)):
                    best_gain = gain
                    best = b
            if best != a:
                sums[a] -= G[i, a]
                counts[a] -= 1
                sums[best] += G[i, best]
                counts[best] += 1
                labels[i] = best
                moved += 1
        # Recompute the sums exactly, so that rounding does not accumulate.
        sums[:] = 0.0
        for i in range(n):
            sums[labels[i]] += G[i, labels[i]]
        if moved == 0:
            break
    return moved
