"""The HAG-MVC pyramid: its sizes, seeding and block updates.

The block updates (``_graph_step``, the graph of points on anchors, and
``_update_anchors``, the exact anchor update) and the per-level objective terms
(``_level_terms``) take the points of a level in memory; the driver
(:mod:`._hagmvc_blocks`) runs them on the coarser levels and, through sums over row
blocks, on the samples.
"""

from __future__ import annotations

import time
from numbers import Integral

import numpy as np
import scipy.sparse as sp

from mvlearn_ext._lib._kernels import project_simplex
from mvlearn_ext.cluster._kernels import (
    d2_pick,
    d2_seeds_from_gram,
    d2_total,
    d2_update,
    smallest_in_rows,
)
from mvlearn_ext.cluster._preprocessing import stack_scaled_views
from mvlearn_ext.utils._progress import log_message
from mvlearn_ext.utils._threads import map_tasks, row_tiles

#: Smallest regularisation weight of a graph column (guards the division).
_TINY = 1e-12
#: Smallest fixed view weight (relative to 1): keeps a zero-weight view's anchors moving.
_WEIGHT_FLOOR = 1e-9
#: k-means restarts on the normalised spectral embedding.
_FINAL_N_INIT = 10
#: k-means++ seeding of the anchors runs on a random subset above this many rows, so
#: its cost stops growing with n (as MiniBatchKMeans's ``init_size``).
_SEED_SAMPLE_MIN = 10_000
_SEED_SAMPLE_PER_SEED = 20
#: Up to this many rows, k-means++ seeding reads its distances from the Gram matrix
#: (single precision, at most 64 MB), computed by one matrix product instead of one
#: pass per seed.
_SEED_GRAM_ROWS = 4096


# --------------------------------------------------------------------------- preprocessing


def _standardise(Xs, means, scales):
    """The standardised views side by side, float64, C-contiguous (n, sum d_v)."""
    return stack_scaled_views(Xs, means, scales)[0]


# --------------------------------------------------------------------------- pyramid sizes


def _default_first_level(n_samples, n_clusters):
    """``m_1`` of ``n_anchors=None``: see the parameter's description in :class:`HAGMVC`.

    Up to half the samples and 75 anchors per cluster while the ``n * m_1``
    sample-anchor distances stay within 1.5 million pairs (more anchors of small
    degree sharpen the graph at a cost linear in ``n m_1``); otherwise a quarter of
    the samples and 50 per cluster. Never below ``n_clusters``. At most a quarter
    (or half) of the samples: with as many anchors as samples, every anchor is a
    sample that codes itself and the graph degenerates.
    """
    per_cluster = max(n_clusters, min(50 * n_clusters, n_samples // 4))
    within_budget = min(n_samples // 2, 75 * n_clusters, 1_500_000 // n_samples)
    return max(per_cluster, within_budget)


def _pyramid_sizes(n_samples, n_clusters, n_anchors, ratio, n_levels, sample_graph_below=0):
    """The strictly decreasing level sizes ``m_1 > ... > m_L >= min(k, m_1)``.

    With ``n_anchors=None``, a rule that gives fewer than ``sample_graph_below``
    anchors is replaced by every sample (``m_1 = n``).
    """
    if n_anchors is None or isinstance(n_anchors, Integral):
        if n_anchors is None:
            first = _default_first_level(n_samples, n_clusters)
            if first < sample_graph_below:
                first = n_samples
        else:
            first = int(n_anchors)
        first = min(first, n_samples)
        sizes = [first]
        for _ in range(1, n_levels):
            size = max(n_clusters, int(round(sizes[-1] * ratio)))
            if size >= sizes[-1]:
                break
            sizes.append(size)
        if sizes[0] < n_clusters and n_samples >= n_clusters:
            raise ValueError(
                f"n_anchors={n_anchors} is smaller than n_clusters={n_clusters}; the coarsest "
                "level needs at least n_clusters anchors"
            )
        return sizes
    sizes = [int(size) for size in n_anchors]
    if not sizes:
        raise ValueError("n_anchors is an empty sequence; give at least one level size")
    if any(b >= a for a, b in zip(sizes, sizes[1:], strict=False)):
        raise ValueError(f"n_anchors={list(sizes)} must be strictly decreasing (fine to coarse)")
    if sizes[-1] < n_clusters:
        raise ValueError(
            f"the coarsest level of n_anchors={list(sizes)} has fewer anchors than "
            f"n_clusters={n_clusters}"
        )
    if sizes[0] > n_samples:
        raise ValueError(
            f"the finest level of n_anchors={list(sizes)} has more anchors than the "
            f"{n_samples} samples"
        )
    return sizes


def _level_neighbors(n_neighbors, sizes):
    """Nonzeros per graph column at each level: ``n_neighbors * m_l / m_1``, at least 1.

    A level-l graph links ``m_{l-1}`` points to ``m_l`` anchors; keeping the same
    fraction ``n_neighbors / m_1`` of anchors per column at every level keeps the
    composite graph from diffusing across clusters as the levels multiply.
    """
    return [max(1, min(size - 1, int(round(n_neighbors * size / sizes[0])))) for size in sizes]


# --------------------------------------------------------------------------- kernels


def _kmeanspp_seeds(
    P, n_seeds, rng, feature_weights=None, gram_rows=_SEED_GRAM_ROWS, keep=None, n_threads=1
):
    """Indices of ``n_seeds`` distinct rows of ``P`` by k-means++ seeding.

    One row per seed is drawn by D^2 sampling (Arthur & Vassilvitskii, 2007), the
    plain rule: scikit-learn's greedy rule (the best of ``2 + ln k`` draws) lowers
    the spread of the seeds' potential but not the clustering accuracy here, at a
    cost that grows with the number of draws.

    Seeds are rows of ``P``, so anchors
    initialised from them are points of the level below. Above
    ``max(_SEED_SAMPLE_MIN, _SEED_SAMPLE_PER_SEED * n_seeds)`` rows the seeding
    runs on a uniform random subset of that size (as scikit-learn's
    MiniBatchKMeans does with ``init_size``), so its cost stops growing with n.
    With ``feature_weights``, distances are ``sum_f w_f (p_f - q_f)^2`` (the
    view weights reach the seeding: a zero-weight view does not move it).

    Up to ``gram_rows`` rows the inner products come from the Gram matrix
    ``P P^T`` (:func:`_gram`, in single precision on ``n_threads`` threads;
    O(n^2 d) time, n^2 floats), and the draws run in a compiled loop
    (:func:`~mvlearn_ext.cluster._kernels.d2_seeds_from_gram`); above, from one
    matrix-vector pass over ``P`` per seed (O(n * n_seeds * d), no n x n matrix;
    memory-bound on wide views). The distances, and so the seeds, are the same
    either way up to rounding: a draw only changes where it falls within that
    rounding of the boundary between two rows.

    ``keep``, a dict, receives under ``"distances"`` the weighted squared distances
    of every row to the seeds (:func:`_distances_from_gram`) when the Gram matrix
    was formed over every row of ``P``: the first graph of the anchors at the
    seeds needs them.
    """
    n = P.shape[0]
    if n_seeds >= n:
        return np.arange(n)
    sample = max(_SEED_SAMPLE_MIN, _SEED_SAMPLE_PER_SEED * n_seeds)
    if n > sample:
        subset = np.sort(rng.choice(n, size=sample, replace=False))
        return subset[
            _kmeanspp_seeds(P[subset], n_seeds, rng, feature_weights, gram_rows, None, n_threads)
        ]
    if feature_weights is not None:
        P = P * np.sqrt(feature_weights)
    if n <= gram_rows:
        gram = _gram(P, n_threads)
        first = int(rng.randint(n))
        # The draws of the loop, taken at once; the generator then advances by as
        # many as were used (fewer when every row coincides with a seed).
        state = rng.get_state()
        chosen = d2_seeds_from_gram(
            gram, gram.diagonal().copy(), first, rng.uniform(size=n_seeds - 1)
        )
        if chosen.size < n_seeds:
            rng.set_state(state)
            rng.uniform(size=chosen.size - 1)
        chosen = chosen.tolist()
    else:
        chosen = _d2_seeds_by_passes(P, n_seeds, rng)
    if len(chosen) < n_seeds:  # every row coincides with a seed: pick unused rows
        unused = np.setdiff1d(np.arange(n), chosen)
        chosen.extend(unused[: n_seeds - len(chosen)].tolist())
    chosen = np.asarray(chosen)
    if keep is not None and n <= gram_rows:
        keep["distances"] = _distances_from_gram(gram, chosen)
    return chosen


def _d2_seeds_by_passes(P, n_seeds, rng):
    """:func:`~mvlearn_ext.cluster._kernels.d2_seeds_from_gram` with one pass over ``P`` per seed.

    The same draws from ``rng`` and the same rule (its compiled steps); the inner
    products are ``P p_i`` instead of rows of the Gram matrix. Returns the chosen
    rows as a list.
    """
    n = P.shape[0]
    norms = np.einsum("ij,ij->i", P, P)
    first = int(rng.randint(n))
    chosen = [first]
    closest, cumulative = np.full(n, np.inf), np.empty(n)
    d2_update(closest, norms, P @ P[first], first)
    for _ in range(1, n_seeds):
        total = d2_total(closest, cumulative)
        if total <= 0.0:
            break
        index = d2_pick(closest, cumulative, rng.uniform() * total)
        d2_update(closest, norms, P @ P[index], index)
        chosen.append(int(index))
    return chosen


def _gram(P, n_threads):
    """``P P^T`` in single precision, exactly symmetric, from fixed tiles of rows.

    Single precision halves the cost of the largest product of a fit: the
    seeding only needs the distances to the rounding of a draw's position, and
    the first graph pass, which reads its distances to the seeds from here when
    the rows are one block in memory, only sets where the anchors first move
    (relative error about 1e-7 of the rows' squared norms; the rows are
    standardised). Tile ``I`` computes its panel ``P_I P_{I:}^T`` (its rows, the
    columns from its first row on), mirrors the upper triangle of its diagonal
    block (a product need not round ``p_i . p_j`` and ``p_j . p_i`` alike) and
    writes the panel and its transpose, on ``n_threads`` threads: each entry
    comes from the same product whatever ``n_threads``, and no two tiles write
    the same entry.
    """
    n = P.shape[0]
    P = np.asarray(P, dtype=np.float32)
    gram = np.empty((n, n), dtype=np.float32)

    def panel(rows):
        block = P[rows] @ P[rows.start :].T
        diagonal = block[:, : rows.stop - rows.start]
        lower = np.tril_indices(diagonal.shape[0], -1)
        diagonal[lower] = diagonal.T[lower]
        gram[rows, rows.start :] = block
        gram[rows.start :, rows] = block.T

    map_tasks(panel, row_tiles(n), n_threads)
    return gram


def _distances_from_gram(gram, seeds):
    """Squared distances (float64) of every row of ``P`` to its rows ``seeds``, from ``P P^T``.

    ``||p_i||^2 - 2 p_i . p_j + ||p_j||^2`` with every term read from ``gram = P P^T``
    (single precision, :func:`_gram`), so that a seed is at distance exactly 0
    from itself and from its duplicates.
    """
    norms = gram.diagonal().astype(np.float64)
    D = gram[:, seeds].astype(np.float64)
    D *= -2.0
    D += norms[:, None]
    D += norms[seeds][None, :]
    np.maximum(D, 0.0, out=D)
    return D


def _weighted_sq_distances(P, A, feature_weights):
    """``D[i, j] = sum_f w_f (P[i, f] - A[j, f])^2``, shape (n_points, n_anchors)."""
    root = np.sqrt(feature_weights)
    Aw = A * root
    return _sq_distances_to(P * root, Aw, np.einsum("ij,ij->i", Aw, Aw))


def _sq_distances_to(Pw, Aw, anchor_sq):
    """Squared distances of the weighted rows ``Pw`` to the weighted anchors ``Aw``.

    ``anchor_sq`` holds the squared norms of ``Aw``'s rows, so that a caller that
    goes through many tiles of rows weighs the anchors once.
    """
    D = Pw @ Aw.T
    D *= -2.0
    D += np.einsum("ij,ij->i", Pw, Pw)[:, None]
    D += anchor_sq[None, :]
    np.maximum(D, 0.0, out=D)
    return D


def _adaptive_regularisation(D, n_neighbors, scale):
    """Per-row weight ``lambda_i`` that gives row ``i`` exactly ``s`` nonzeros.

    Nie, Wang & Huang (KDD 2014): with the sorted distances ``d_1 <= ... <= d_{s+1}``
    of row ``i``, ``lambda_i = (s d_{s+1} - sum_{h<=s} d_h) / 2`` makes
    ``argmin_{z in simplex} sum_j z_j d_j + lambda_i ||z||^2`` supported on the
    ``s`` nearest anchors. ``scale`` multiplies it (``> 1`` spreads the weights).
    """
    m = D.shape[1]
    s = min(n_neighbors, m - 1)
    if s < 1:
        return np.ones(D.shape[0])
    part = np.partition(D, s, axis=1)[:, : s + 1]
    part.sort(axis=1)
    lam = (s * part[:, s] - part[:, :s].sum(axis=1)) / 2.0
    # Ties (s + 1 equidistant anchors) give 0: fall back to the mean distance.
    fallback = np.maximum(D.mean(axis=1), 1.0) * _TINY
    return scale * np.maximum(lam, fallback)


def _solve_graph(D, lam, n_threads):
    """Rows ``z_i = argmin_{z in simplex} d_i^T z + lambda_i ||z||^2 = P(-d_i / 2 lambda_i)``."""
    Q = D / (-2.0 * lam[:, None])
    # Shift each row by its maximum: projection onto the simplex is shift-invariant,
    # and the shift keeps the values small.
    Q -= Q.max(axis=1, keepdims=True)
    return project_simplex(Q, axis=1, out=Q, n_threads=n_threads)


def _sparse_rows(Z):
    """A row-stochastic dense graph as CSR, dropping exact zeros."""
    return sp.csr_matrix(Z)


def _nearest_anchor_graph(D, n_neighbors, n_threads):
    """``(lambda, Z)`` of the adaptive-neighbour rule at ``scale = 1``, in closed form.

    With ``lambda_i = (s d_{s+1} - sum_{h<=s} d_h) / 2`` (sorted distances of row
    ``i``), the simplex projection of ``-d_i / (2 lambda_i)`` has the threshold
    ``-d_{s+1} / (2 lambda_i)``, so ``z_ij = (d_{s+1} - d_ij) / (2 lambda_i)`` where
    ``d_ij < d_{s+1}`` and 0 elsewhere (Nie, Wang & Huang, 2014): the same graph as
    :func:`_solve_graph`, from the ``s + 1`` smallest distances of each row (one
    compiled pass, :func:`~mvlearn_ext.cluster._kernels.smallest_in_rows`), without
    projecting. Rows whose ``lambda`` falls back (``s + 1`` tied distances) go
    through the projection.
    """
    n, m = D.shape
    s = min(n_neighbors, m - 1)
    columns, values, _ = smallest_in_rows(D, s + 1)
    threshold = values[:, s]
    raw = (s * threshold - values[:, :s].sum(axis=1)) / 2.0
    fallback = np.maximum(D.mean(axis=1), 1.0) * _TINY
    lam = np.maximum(raw, fallback)
    tied = raw <= fallback
    inside = values[:, :s] < threshold[:, None]
    inside[tied] = False
    # Each row's entries by increasing column, as a CSR matrix keeps them.
    order = np.argsort(np.where(inside, columns[:, :s], m), axis=1, kind="stable")
    inside = np.take_along_axis(inside, order, axis=1)
    cols = np.take_along_axis(columns[:, :s], order, axis=1)[inside]
    weights = (threshold[:, None] - np.take_along_axis(values[:, :s], order, axis=1)) / (
        2.0 * lam[:, None]
    )
    data = weights[inside]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(inside.sum(axis=1), out=indptr[1:])
    Z = sp.csr_matrix((data, cols, indptr), shape=D.shape)
    if tied.any():
        Z = sp.lil_matrix(Z)
        index = np.flatnonzero(tied)
        Z[index] = _solve_graph(D[index], lam[index], n_threads)
        Z = sp.csr_matrix(Z)
        Z.eliminate_zeros()
    return lam, Z


def _graph_step(P, A, feature_weights, n_neighbors, scale, n_threads, distances=None):
    """``(lambda, Z)``: the adaptive weights and the exact graph of points ``P`` on ``A``.

    Every step is row-wise, so the rows are computed by the fixed tiles of
    :func:`~mvlearn_ext.utils._threads.row_tiles`, on ``n_threads`` threads: the
    dense distances never take more than ``n_threads`` tiles of ``n_anchors``
    floats, and the graph is the same whatever ``n_threads``. It is returned as
    CSR with about ``n_neighbors`` entries per row. At ``scale = 1``
    (``reg_lambda=1``, the default) each row has a closed form
    (:func:`_nearest_anchor_graph`); otherwise every row is projected.
    ``distances``: the weighted squared distances of ``P`` to ``A``, when known.
    """
    closed_form = scale == 1.0 and min(n_neighbors, A.shape[0] - 1) >= 1
    root = np.sqrt(feature_weights)
    Aw = A * root
    anchor_sq = np.einsum("ij,ij->i", Aw, Aw)

    def tile(rows):
        D = (
            _sq_distances_to(P[rows] * root, Aw, anchor_sq)
            if distances is None
            else distances[rows]
        )
        if closed_form:
            return _nearest_anchor_graph(D, n_neighbors, 1)
        lam = _adaptive_regularisation(D, n_neighbors, scale)
        return lam, _sparse_rows(_solve_graph(D, lam, 1))

    parts = map_tasks(tile, row_tiles(P.shape[0]), n_threads)
    if len(parts) == 1:
        return parts[0]
    lams, blocks = zip(*parts, strict=True)
    return np.concatenate(lams), sp.vstack(blocks, format="csr")


# --------------------------------------------------------------------------- objective


def _level_terms(below, anchors, graph, lam, view_slices, view_scale):
    """Per-view losses ``M_v = sum_ij z_ij ||p_i - a_j||_v^2 / c_v`` and ``sum_i lam_i ||z_i||^2``.

    ``graph`` is the (n_points, n_anchors) row-stochastic CSR matrix of the level.
    """
    graph = sp.csr_matrix(graph)
    mass = np.asarray(graph.sum(axis=0)).ravel()
    cross = np.asarray(graph.T @ below)  # (m, D): sum_i z_ij p_i
    losses = np.empty(len(view_slices))
    for v, block in enumerate(view_slices):
        p = below[:, block]
        a = anchors[:, block]
        value = (
            np.einsum("ij,ij->", p, p)
            - 2.0 * np.einsum("ij,ij->", cross[:, block], a)
            + np.dot(mass, np.einsum("ij,ij->i", a, a))
        )
        losses[v] = max(value, 0.0) / view_scale[v]
    penalty = float(np.dot(lam, np.asarray(graph.multiply(graph).sum(axis=1)).ravel()))
    return losses, penalty


# --------------------------------------------------------------------------- block updates


def _feature_weights(alpha, view_scale, view_slices, n_features):
    """Per-feature weights ``alpha_v^2 / c_v`` over the concatenated features."""
    w = np.empty(n_features)
    for v, block in enumerate(view_slices):
        w[block] = alpha[v] ** 2 / view_scale[v]
    return w


def _update_anchors(
    anchors, below, graph, alpha, view_scale, above, up_graph, up_alpha, up_scale, view_slices
):
    """Exact minimiser of ``J`` over the anchors of one level.

    The anchors appear in the level's own term (as the points that code the level
    below) and, except at the top, in the term of the level above (as the points
    coded there). Both are weighted sums of squares, so anchor ``j`` is the
    weighted mean

        a_j = (w_l sum_i z_ij p_i + w_{l+1} sum_k z'_jk c_k) / (w_l sum_i z_ij + w_{l+1}),

    view by view (``w = alpha_v^2 / c_v``; the rows of the level-above graph sum to
    1). It is a convex combination of points of the levels below and above, so the
    anchors never leave the convex hull of the data. An anchor that no point uses
    and with no level above keeps its position (its term is 0 wherever it is).
    """
    n_features = below.shape[1]
    w_own = _feature_weights(alpha, view_scale, view_slices, n_features)
    mass = np.asarray(graph.sum(axis=0)).ravel()
    numerator = np.asarray(graph.T @ below) * w_own
    denominator = mass[:, None] * w_own[None, :]
    if above is not None:
        w_up = _feature_weights(up_alpha, up_scale, view_slices, n_features)
        numerator += np.asarray(up_graph @ above) * w_up
        denominator = denominator + w_up[None, :]
    new = anchors.copy()
    used = denominator > 0.0
    new[used] = numerator[used] / denominator[used]
    return new


# --------------------------------------------------------------------------- initialisation


def _fixed_scale(fixed_weights):
    """The normalisers ``c_v = 1 / (V^2 omega_v)`` of fixed view weights ``omega``.

    Fixed weights enter the objective as ``alpha_v = 1 / V`` and ``c_v``, so that every
    feature of view ``v`` has weight ``alpha_v^2 / c_v = omega_v``. A zero weight is
    floored, so that the anchors of that view still follow the graphs.
    """
    omega = np.maximum(np.asarray(fixed_weights, dtype=np.float64), _WEIGHT_FLOOR)
    return 1.0 / (omega.size**2 * omega)


def _seed_level(below, size, rng, fixed_scale, view_slices, n_features, keep=None, n_threads=1):
    """``(A, scale, seeding)``: a level's anchors, k-means++ seeds among the points ``below``.

    The seeding distances weight the views by the fixed view weights (``fixed_scale``
    from :func:`_fixed_scale`); ``scale`` is a copy of ``fixed_scale`` and ``seeding``
    the per-feature weights; ``keep`` and ``n_threads`` are passed to :func:`_kmeanspp_seeds`.
    """
    uniform = np.full(len(view_slices), 1.0 / len(view_slices))
    scale = fixed_scale.copy()
    seeding = _feature_weights(uniform, scale, view_slices, n_features)
    seeds = _kmeanspp_seeds(below, size, rng, seeding, keep=keep, n_threads=n_threads)
    return np.array(below[seeds], dtype=np.float64), scale, seeding


def sweep_done(history, n_iter, tol, start, verbose):
    """Log sweep ``n_iter`` and tell whether the sweeps stop.

    They stop when the change of ``J`` over the last sweep is at most ``tol``
    times ``|J|`` (floored at ``_TINY``).
    """
    change = abs(history[-2] - history[-1])
    log_message(
        "HAGMVC",
        f"sweep {n_iter:3d}  objective {history[-1]:.6e}  "
        f"change {change:.3e}  ({time.perf_counter() - start:.2f} s)",
        verbose,
    )
    return change <= tol * max(abs(history[-1]), _TINY)


def _normalise_rows(F):
    norms = np.linalg.norm(F, axis=1, keepdims=True)
    return F / np.where(norms > 0.0, norms, 1.0)
