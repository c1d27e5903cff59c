"""DRMC by row blocks: fit and predict of :class:`DRMC` on views larger than memory.

DRMC touches all the samples in three places: the column statistics of the views,
the consensus kNN anchor graph ``Z`` (m x n) of every feedback round, and the
spectral rotation that labels the samples. The first two are row-wise: a pass over
the row blocks returns, per block, the anchor degrees ``Z 1`` and the Gram matrix
``Z Z^T`` (m x m), from which the degree-regularised embedding's projection ``P``
(``F = Z^T P``) follows exactly (:func:`_projection_from_gram`). The sums are folded in
block order (:meth:`~mvlearn_ext.cluster._blockwise.RowBlocks.map`), so a fit does not
depend on the number of workers or on where the blocks ran. Everything else (the
anchor k-means, the view-redundancy scores, the per-view graphs of the agreement
scores) already runs on random subsamples of at most 20000 rows in memory, drawn
with the same seeds here, and those rows are read in the first pass.

The rotation is sequential (each sample's move changes the cluster sizes the next
one sees), so it runs on the rows of the embedding kept in memory:

* up to ``DRMC._rotation_sample`` (100000) samples, on every row: the block algorithm is then the
  in-memory algorithm, statistic for statistic; only the rounding of the block sums
  differs (``Z Z^T`` summed block by block, the column statistics merged by Chan et
  al.'s update), which changed no label on the tests' data;
* above, on that many random rows together with the rows of the view
  scores; the feedback rounds (agreement, new weights, a pass for the new graph's
  ``P``, the rotation warm-started from the previous labels) run on those rows, and a
  last pass gives every sample the cluster of largest linearised gain of the rotation
  objective, ``(F_i R)_c / sqrt(n_c) - s_c / (2 n_c^{3/2})`` with ``n_c`` and ``s_c``
  the size and the sum of ``(F R)_{ic}`` of cluster ``c`` on the rotated rows (a
  Jacobi step from the rotation's statistics; ``argmax_c (F_i R)_c`` for the
  unscaled indicator). ``initial_labels_`` is then None and ``n_labels_changed_``
  counts the rotated rows. That last pass reads no data: every graph pass keeps each
  sample's ``_N_NEIGHBORS`` anchor indices (int32) and weights (float64), 60 bytes per
  sample held by the driver (the previous pass's lists are dropped before the next
  pass), and the labelling rebuilds each block's ``Z`` from them, the same matrix.

With ``align_anchors=True`` the per-view anchors are aligned through the kNN graphs
of the (at most 20000) k-means rows instead of all rows.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from mvlearn_ext.cluster._base import (
    labels_by_blocks,
    labels_like_input,
    open_blocks,
    open_fitted_blocks,
    scaling_of_moments,
)
from mvlearn_ext.cluster._blockwise import (
    _progress_bar,
    moments_of_block,
    statistics_pass,
)
from mvlearn_ext.cluster._common import regularised_projection_from_gram
from mvlearn_ext.cluster._drmc_graphs import (
    _anchor_graphs,
    _feature_factors,
    _initial_anchors,
    _scaled_joint,
    _subsample_rows,
    _view_graphs,
)
from mvlearn_ext.cluster._drmc_solver import (
    _REDUNDANCY_ROWS,
    _check_live,
    _feedback,
    _match_labels,
    _memberships,
    _predict_rows,
    _rotate,
    _view_redundancy,
)
from mvlearn_ext.cluster._view_weights import DEFAULT_MAX_SAMPLES
from mvlearn_ext.utils._threads import single_threaded_pools

__all__ = ["fit_drmc_blocks", "predict_drmc_blocks"]


# --------------------------------------------------------------------------- block tasks


def _stats_task(_, rows, *views):
    """Per-view finiteness, column moments, and the raw rows ``rows`` of one block."""
    finite = [np.dtype(X.dtype).kind not in "fc" or bool(np.isfinite(X).all()) for X in views]
    moments = [moments_of_block(X) for X in views]
    return finite, moments, [np.asarray(X)[rows] for X in views]


def _block_graph(p, views):
    """The consensus graph (m x rows, CSR) of one block under ``p``'s weights."""
    _, scaled = _scaled_joint(
        [np.asarray(X) for X in views], p["means"], p["scales"], p["factors"]
    )
    graph, _ = _anchor_graphs(scaled, p["anchors"], p["ratios"], per_view=False)
    return graph


def _graph_task(p, rows, *views):
    """Anchor degrees, ``Z Z^T`` and the graph's columns at ``rows`` of one block.

    With ``p["keep"]``, also the block's neighbour lists (:func:`_neighbours`), from
    which the labelling pass rebuilds ``Z`` without reading the block again.
    """
    with single_threaded_pools():
        Z = _block_graph(p, views)
        out = dict(
            degree=np.asarray(Z.sum(axis=1)).ravel(),
            gram=(Z @ Z.T).toarray(),
            sample=Z.T.tocsr()[rows],
        )
        if p.get("keep"):
            out["neighbours"] = _neighbours(Z)
        return out


def _neighbours(Z):
    """The rows of ``Z^T`` as ``(n_rows, columns as int32, weights, indptr)``.

    ``indptr`` is None when every sample has the same number of neighbours (always,
    for the kNN graph), so that a sample costs 12 bytes per neighbour: 60 bytes with
    ``_N_NEIGHBORS = 5``. :func:`_graph_of` rebuilds the same CSR matrix.
    """
    Zt = Z.T.tocsr()
    counts = np.diff(Zt.indptr)
    regular = counts.size > 0 and bool(np.all(counts == counts[0]))
    indptr = None if regular else Zt.indptr.copy()
    return Zt.shape[0], Zt.indices.astype(np.int32), Zt.data.copy(), indptr


def _graph_of(neighbours, n_anchors):
    """The block's graph (``n_anchors`` x rows, CSR) from :func:`_neighbours`."""
    n_rows, cols, weights, indptr = neighbours
    if indptr is None:
        indptr = np.arange(0, cols.size + 1, cols.size // n_rows)
    Zt = sp.csr_matrix((weights, cols, indptr), shape=(n_rows, n_anchors))
    return Zt.T.tocsr()


def _label_task(p, neighbours):
    """Labels of one block by the linearised rotation gain, and ``Z Y`` of the block.

    The block's graph is rebuilt from the ``neighbours`` the last graph pass kept (the
    same matrix as :func:`_block_graph` gives), so this pass reads no data.
    """
    with single_threaded_pools():
        Z = _graph_of(neighbours, p["projection"].shape[0])
        G = np.asarray(Z.T @ p["projection"]) @ p["rotation"]
        labels = np.argmax(G * p["slope"] - p["offset"], axis=1).astype(np.intp)
        k = p["rotation"].shape[0]
        onehot = sp.csr_matrix(
            (np.ones(labels.size), (np.arange(labels.size), labels)), shape=(labels.size, k)
        )
        return labels, np.asarray((Z @ onehot).todense())


def _predict_task(p, _, *views):
    with single_threaded_pools():
        return _predict_rows(
            [np.asarray(X) for X in views], p["means"], p["scales"], p["factors"],
            p["anchors"], p["ratios"], p["memberships"],
        )  # fmt: skip


# --------------------------------------------------------------------------- algebra


def _draw_rows(rng, n, size):
    """``size`` sorted random rows of ``n`` (all of them when ``n <= size``)."""
    return np.sort(rng.choice(n, size=size, replace=False)) if n > size else np.arange(n)


def _assignment_rule(F, R, labels, n_clusters):
    """``(slope, offset)`` of the linearised rotation gain ``G * slope - offset``.

    ``G = F R`` on the rotated rows; with the scaled indicator the gain of adding a
    sample to cluster ``c`` of size ``n_c`` and sum ``s_c`` is, to first order,
    ``G_ic / sqrt(n_c) - s_c / (2 n_c^{3/2})`` (empty clusters are never chosen).
    """
    G = F @ R
    counts = np.bincount(labels, minlength=n_clusters).astype(np.float64)
    sums = np.bincount(labels, weights=G[np.arange(labels.size), labels], minlength=n_clusters)
    live = counts > 0
    slope = np.where(live, 1.0 / np.sqrt(np.maximum(counts, 1.0)), 0.0)
    offset = np.where(live, sums / (2.0 * np.maximum(counts, 1.0) ** 1.5), np.inf)
    return slope, offset


# --------------------------------------------------------------------------- fit


def fit_drmc_blocks(est, Xs):
    """Fit ``est`` (a :class:`DRMC`) by row blocks; see the module docstring.

    Called by ``fit``, which runs it with one BLAS/OpenMP thread (the blocks are the parallelism).
    """
    blocks = open_blocks(est, Xs)
    n, k, V = blocks.n_samples, est.n_clusters, len(blocks.widths)
    widths = list(blocks.widths)
    n_anchors = est._n_anchors(n)
    verbose = bool(est.verbose)
    rotation_sample = est._rotation_sample
    start = time.perf_counter()

    # The seeds, in the order of the in-memory fit.
    rng = check_random_state(est.random_state)
    prior_seed = est._prior_seed(rng)
    kmeans_seed = int(rng.randint(np.iinfo(np.int32).max))
    rotation_seed = int(rng.randint(np.iinfo(np.int32).max))
    learn = est._learns(V)

    # 1. One pass: finiteness, column moments, the rows of the subsamples.
    redundancy_rows = (
        np.sort(np.random.RandomState(prior_seed).choice(n, _REDUNDANCY_ROWS, replace=False))
        if learn and n > _REDUNDANCY_ROWS
        else (np.arange(n) if learn else np.empty(0, np.int64))
    )
    # The rows of the factor scores, drawn as fit_view_weights draws them in memory.
    score_state = np.random.RandomState(prior_seed)
    score_rows = (
        _draw_rows(score_state, n, DEFAULT_MAX_SAMPLES)
        if est._scores_factor(V)
        else np.empty(0, np.int64)
    )
    sub_rows = _subsample_rows(n, kmeans_seed, est._subsample)
    kmeans_rows = np.arange(n) if sub_rows is None else sub_rows
    wanted = np.union1d(np.union1d(redundancy_rows, score_rows), kmeans_rows)
    moments, picked = statistics_pass(blocks, wanted, progress=verbose, desc="DRMC statistics")
    scaling_of_moments(est, moments, blocks.views)

    def rows_of(subset):
        where = np.searchsorted(wanted, subset)
        return [P[where] for P in picked]

    # 2. Starting weights, redundancy, anchors and the per-view graphs of the scores,
    # on the subsamples.
    prior, factors = est._starting_weights(widths, rows_of(score_rows), score_state)
    redundancy = np.ones(V)
    if learn:
        redundancy = np.asarray(_view_redundancy(rows_of(redundancy_rows), prior_seed))
    joint, views = _scaled_joint(rows_of(kmeans_rows), est.view_means_, est.view_scales_, factors)
    anchors, reference = _initial_anchors(
        views, joint, n_anchors, est.align_anchors, kmeans_seed, est._n_threads, est._subsample
    )
    view_graphs = None
    if learn:
        own = anchors if est.align_anchors else None
        view_graphs, _ = _view_graphs(
            views, own, n_anchors, kmeans_seed, n_total=n, subsample=est._subsample
        )
    del joint, views

    # 3. The rows the rotation runs on; the view scores' rows among them.
    if n <= rotation_sample:
        rotation_rows, score_index = np.arange(n), sub_rows
    else:
        drawn = np.random.default_rng([rotation_seed, 19]).choice(
            n, size=rotation_sample, replace=False
        )
        rotation_rows = np.union1d(drawn, kmeans_rows)
        score_index = np.searchsorted(rotation_rows, kmeans_rows)
    local_rotation_rows = blocks.local_rows(rotation_rows)

    weights = np.full(V, 1.0 / V) if est.view_weights == "uniform" else prior
    base = dict(means=est.view_means_, scales=est.view_scales_, factors=factors, anchors=anchors)
    last = {}
    passes = [0]

    # Above rotation_sample the labelling pass needs the last graph's neighbour lists:
    # every graph pass keeps its own (60 bytes per sample, the previous pass's freed).
    keep = n > rotation_sample

    def build(weights, previous):
        ratios = _feature_factors(widths, weights) / factors
        degree, gram, sample, kept = None, None, [], []
        last.pop("neighbours", None)
        for part in blocks.map(
            _graph_task, dict(base, ratios=ratios, keep=keep), local_rotation_rows,
            progress=verbose, desc=f"DRMC graph {passes[0]}",
        ):  # fmt: skip
            degree = part["degree"] if degree is None else degree + part["degree"]
            gram = part["gram"] if gram is None else gram + part["gram"]
            sample.append(part["sample"])
            if keep:
                kept.append(part["neighbours"])
        if keep:
            last["neighbours"] = kept
        passes[0] += 1
        if previous is None:
            _check_live(degree, k)
        projection = regularised_projection_from_gram(gram, degree, n, k)
        graph_rows = sp.vstack(sample, format="csr")
        F = np.asarray(graph_rows @ projection)
        labels, R = _rotate(F, k, True, rotation_seed, previous)
        last.update(ratios=ratios, projection=projection, graph_rows=graph_rows, degree=degree)
        return F, labels, R

    result = _feedback(
        build,
        weights,
        view_graphs=view_graphs,
        score_index=score_index,
        prior=prior,
        redundancy=redundancy,
        weight_power=est._weight_power,
        n_clusters=k,
        max_iter=est.max_iter,
        learn=learn,
        verbose=verbose,
        start=start,
        header=f"{n} samples in {blocks.n_blocks} blocks, {V} views, {n_anchors} anchors",
    )
    result.update(ratios=last["ratios"], anchors=anchors, reference=reference)
    rotated = result["labels"]
    if n <= rotation_sample:
        labels = rotated.astype(np.intp)
        mass = np.asarray(last["graph_rows"].T @ sp.csr_matrix(
            (np.ones(n), (np.arange(n), labels)), shape=(n, k)
        ).toarray())  # fmt: skip
        est.initial_labels_ = result["initial_labels"].astype(np.intp)
    else:
        slope, offset = _assignment_rule(result["F"], result["R"], rotated, k)
        params = dict(
            base, ratios=last["ratios"], projection=last["projection"], rotation=result["R"],
            slope=slope, offset=offset,
        )  # fmt: skip
        # The last graph pass's neighbour lists give every block's graph: no data read.
        parts, mass = [], None
        kept = last.pop("neighbours")
        bar = _progress_bar(len(kept), "DRMC labels") if verbose else None
        for b in range(len(kept)):
            block_labels, block_mass = _label_task(params, kept[b])
            kept[b] = None
            parts.append(block_labels)
            mass = block_mass if mass is None else mass + block_mass
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        labels = np.concatenate(parts)
        est.initial_labels_ = None
    est._store(result, factors, n_anchors, _memberships(mass, last["degree"]))
    est.n_labels_changed_ = _match_labels(result["initial_labels"], rotated, k)[2]
    est.anchor_graph_ = None
    est.embedding_ = None
    est.indicator_ = None
    if verbose:
        est._log(f"labelled {n} samples after {passes[0]} graph passes "
                 f"({time.perf_counter() - start:.2f} s)")  # fmt: skip
    est.labels_ = labels_like_input(labels, Xs, blocks)
    return est


# --------------------------------------------------------------------------- predict


def predict_drmc_blocks(est, Xs):
    """Labels of new views by row blocks (the rule of :meth:`DRMC.predict`).

    Lazy (a dask array chunked like the rows) for dask views.
    """
    blocks = open_fitted_blocks(est, Xs)
    params = dict(
        means=est.view_means_, scales=est.view_scales_, factors=est._factors,
        anchors=est._anchors_scaled, ratios=est._ratios, memberships=est.anchor_memberships_,
    )  # fmt: skip
    return labels_by_blocks(est, Xs, blocks, _predict_task, params, "DRMC")
