"""DRMC's passes over row blocks: the tasks its driver maps over :class:`RowBlocks`.

DRMC touches all the samples in three places: the column statistics of the views
(:func:`~mvlearn_ext.cluster._blockwise.statistics_pass`), the consensus kNN anchor
graph ``Z`` (m x n) of every feedback round, and the labelling. The graph pass
(:func:`_graph_task`) returns, per block, the anchor degrees ``Z 1`` and the Gram
matrix ``Z Z^T`` (m x m), from which the degree-regularised embedding's projection
``P`` (``F = Z^T P``) follows exactly, and the graph's columns at the rows the
rotation runs on; the driver (:func:`~mvlearn_ext.cluster._drmc_solver.fit_drmc`)
folds them in block order, so a fit does not depend on the number of workers or on
where the blocks ran.

When the rotation runs on a sample of the rows, a last pass gives every sample the
cluster of largest linearised gain of the rotation objective
(:func:`_assignment_rule`, :func:`_label_task`). That pass reads no data: every graph
pass keeps each sample's anchor indices (int32) and weights (float64), 12 bytes
per neighbour (:func:`_neighbours`), and the labelling rebuilds each
block's ``Z`` from them (:func:`_graph_of`), the same matrix.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from mvlearn_ext.cluster._drmc_graphs import _anchor_graphs, _predict_rows, _scaled_joint
from mvlearn_ext.utils._threads import single_threaded_pools

# --------------------------------------------------------------------------- block tasks


def _block_graph(p, views):
    """The consensus graph (m x rows, CSR) of one block under ``p``'s weights.

    ``p["cache"]`` (a dict, or None) keeps the block's scaled views and each view's
    squared distances to the anchors between the passes of a fit, so that a new
    weighting only re-sums them (the same numbers); the driver gives one only when
    the views are one block in memory, read in the calling thread.
    """
    cache = p.get("cache")
    scaled = None if cache is None else cache.get("views")
    if scaled is None:
        _, scaled = _scaled_joint(
            [np.asarray(X) for X in views], p["means"], p["scales"], p["factors"]
        )
        if cache is not None:
            cache["views"] = scaled
    graph, _ = _anchor_graphs(
        scaled, p["anchors"], p["ratios"], per_view=False, n_neighbors=p["n_neighbors"],
        cache=cache, n_threads=p.get("n_threads", 1),
    )  # fmt: skip
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
    for the kNN graph), so that a sample costs 12 bytes per neighbour.
    :func:`_graph_of` rebuilds the same CSR matrix.
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
            p["anchors"], p["ratios"], p["memberships"], p["n_neighbors"],
        )  # fmt: skip


# --------------------------------------------------------------------------- algebra


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
