"""Numba kernels of the anchor-graph clusterers.

Each kernel takes plain contiguous arrays, assumes valid input and calls
nothing above it; the NumPy drivers of :mod:`mvlearn_ext.cluster._common`
validate and call them.
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext.utils._numba import jit

__all__ = [
    "d2_pick",
    "d2_seeds_from_gram",
    "d2_total",
    "d2_update",
    "indicator_sweeps",
    "smallest_in_gram_rows",
    "smallest_in_rows",
]


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


@jit(inline="always")
def _insert_sorted(values, columns, d, j):
    """Insert ``(d, j)`` into the ascending ``values`` (dropping the last), after its equals."""
    p = values.size - 1
    while p > 0 and values[p - 1] > d:
        values[p] = values[p - 1]
        columns[p] = columns[p - 1]
        p -= 1
    values[p] = d
    columns[p] = j


@jit(inline="always")
def _smallest_of_row(row, best, where):
    """The ``best.size`` smallest ``(value, column)`` of ``row`` into ``best``/``where``.

    One pass with a sorted buffer: a value enters only if it beats the buffer's
    largest, after its equals (so equal values keep increasing columns).
    """
    best[:] = np.inf
    where[:] = -1
    worst = np.inf
    last = best.size - 1
    for j in range(row.size):
        d = row[j]
        if d < worst:
            _insert_sorted(best, where, d, j)
            worst = best[last]


@jit
def smallest_in_rows(D, count):
    """The ``count`` smallest entries of every row of ``D``, by (value, column).

    Returns ``(columns, values, tied)``: ``columns`` and ``values`` of shape
    ``(n, count)`` in increasing order of value, equal values by increasing
    column; ``tied[i]`` tells that the ``count``-th and the next smallest value of
    row ``i`` are equal, so that which columns are the ``count`` smallest is not
    unique (a caller that must break such ties as another routine does redoes
    those rows). One pass over each row with a sorted buffer of ``count + 1``
    entries: ``O(n m)`` for small ``count``, against a selection per row.
    ``count`` is at most the number of columns.
    """
    n = D.shape[0]
    columns = np.empty((n, count), dtype=np.int64)
    values = np.empty((n, count))
    tied = np.zeros(n, dtype=np.bool_)
    best = np.empty(count + 1)
    where = np.empty(count + 1, dtype=np.int64)
    for i in range(n):
        _smallest_of_row(D[i], best, where)
        for c in range(count):
            columns[i, c] = where[c]
            values[i, c] = best[c]
        tied[i] = best[count - 1] == best[count]
    return columns, values, tied


@jit
def smallest_in_gram_rows(G, sq, count):
    """:func:`smallest_in_rows` of the squared distances ``D_ij = (sq_i + sq_j) - 2 G_ij``.

    ``G`` is the ``(n, n)`` Gram matrix ``X X^T`` of the rows and ``sq`` its
    diagonal as the caller computed it; the diagonal ``j = i`` is left out (a row is
    not its own neighbour). Every ``D_ij`` is rounded as the NumPy expression
    ``sq[:, None] + sq[None, :] - 2.0 * G`` rounds it, and the ``n x n`` matrix is
    never formed. Returns ``(columns, tied)``; ``count`` is at most ``n - 1``.
    """
    n = G.shape[0]
    columns = np.empty((n, count), dtype=np.int64)
    tied = np.zeros(n, dtype=np.bool_)
    best = np.empty(count + 1)
    where = np.empty(count + 1, dtype=np.int64)
    d = np.empty(n)
    for i in range(n):
        row = G[i]
        s = sq[i]
        for j in range(n):  # a loop without branches, which the compiler vectorises
            d[j] = (s + sq[j]) - 2.0 * row[j]
        d[i] = np.inf
        _smallest_of_row(d, best, where)
        for c in range(count):
            columns[i, c] = where[c]
        tied[i] = best[count - 1] == best[count]
    return columns, tied


@jit(inline="always")
def d2_update(closest, norms, inner, index):
    """Lower ``closest`` to the squared distances to row ``index``, in place; 0 at ``index``.

    ``inner`` holds the inner products of every row with row ``index`` and ``norms``
    the rows' squared norms; each distance is rounded as ``max((norms_j - 2
    inner_j) + norms_index, 0)``. Started from ``+inf``, it gives the distances.
    """
    for j in range(closest.size):
        d = max((norms[j] - 2.0 * inner[j]) + norms[index], 0.0)
        if d < closest[j]:
            closest[j] = d
    closest[index] = 0.0


@jit(inline="always")
def d2_total(closest, cumulative):
    """The running sum of ``closest`` into ``cumulative``; returns the total."""
    total = 0.0
    for j in range(closest.size):
        total += closest[j]
        cumulative[j] = total
    return total


@jit(inline="always")
def d2_pick(closest, cumulative, threshold):
    """The first row whose running sum reaches ``threshold``, skipping rows at distance 0."""
    n = closest.size
    index = min(np.searchsorted(cumulative, threshold), n - 1)
    while closest[index] <= 0.0:  # rounding put us on a chosen row
        index = (index + 1) % n
    return index


@jit
def d2_seeds_from_gram(G, norms, first, uniforms):
    """Rows chosen by D^2 sampling, reading the inner products from the Gram matrix.

    ``G`` is ``P P^T`` (n x n, symmetric) and ``norms`` its diagonal; seed 0 is
    ``first``, and seed ``s`` is :func:`d2_pick` at ``uniforms[s - 1]`` times the
    total squared distance to the nearest seed (:func:`d2_total`,
    :func:`d2_update`). Stops early when every distance is 0 (every row
    coincides with a seed). Returns the chosen rows, at most ``uniforms.size + 1``.
    """
    n = norms.size
    chosen = np.empty(uniforms.size + 1, dtype=np.int64)
    chosen[0] = first
    closest = np.full(n, np.inf)
    d2_update(closest, norms, G[first], first)
    cumulative = np.empty(n)
    count = 1
    for s in range(uniforms.size):
        total = d2_total(closest, cumulative)
        if total <= 0.0:
            break
        index = d2_pick(closest, cumulative, uniforms[s] * total)
        d2_update(closest, norms, G[index], index)
        chosen[count] = index
        count += 1
    return chosen[:count]
