"""The LMVSC algorithm over row blocks: one driver for in-memory and out-of-core views.

LMVSC codes every sample on the anchors of each view by its own simplex QP, so the
graphs are computed block by block (each column of the QP stops on its own
criterion). A pass returns, per block, the Gram matrix ``Z_bar Z_bar^T``
(``V m x V m``) of the stacked graphs and the terms of each view's objective; the
driver folds them in block order
(:meth:`~mvlearn_ext.cluster._blockwise.RowBlocks.map`), so the fit does not depend
on the number of workers or on where the blocks ran. The embedding is ``Z_bar^T P``
with ``P`` from the top eigenpairs of that Gram matrix.

Views in memory are one block: the driver keeps their graphs and embedding and fits
the anchors and the final k-means on every row. Views that do not fit in memory only
ever hold one block, so two choices need the caller's sizes (``anchor_sample``,
``kmeans_sample``):

* the anchors of each view are fitted on at most ``anchor_sample`` random rows
  (MiniBatchKMeans when the data set has more rows than that, as in memory above
  that many rows);
* the final k-means is fitted on the embedding of at most ``kmeans_sample`` random
  rows, and every sample gets the nearest centre in a second pass;
* the standardisation statistics are merged block by block.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from sklearn.cluster import KMeans

from mvlearn_ext.cluster._blockwise import draw_rows, scaling_from_moments, statistics_pass
from mvlearn_ext.cluster._common import gram_eigenpairs, kmeans_anchors
from mvlearn_ext.cluster._preprocessing import apply_view_scaling
from mvlearn_ext.utils._simplex_qp import simplex_qp
from mvlearn_ext.utils._threads import single_threaded_pools

__all__ = ["LMVSCFit", "fit_lmvsc", "lmvsc_embedding"]

#: k-means iterations for the anchors (the reference code's setting).
_ANCHOR_MAX_ITER = 100


def _view_graph(X, anchors, reg_lambda, *, max_iter, tol, n_threads):
    """The LMVSC graph of one view and its objective.

    Column ``i`` of ``Z`` (n_anchors x n_samples) solves
    ``min_z ||x_i - A^T z||^2 + reg_lambda ||z||^2`` over the simplex, that is
    ``1/2 z^T H z - b_i^T z`` with ``H = A A^T + reg_lambda I`` and
    ``b_i = A x_i`` (``A`` holds the anchors as rows), exactly by the
    active-set method of :func:`~mvlearn_ext.utils._simplex_qp.simplex_qp`
    (``max_iter`` and ``tol`` bound its first-order fallback).
    """
    H = anchors @ anchors.T
    H[np.diag_indices_from(H)] += reg_lambda
    B = anchors @ X.T
    Z, n_iter = simplex_qp(H, B, max_iter=max_iter, tol=tol, n_jobs=n_threads)
    # ||X - Z^T A||^2 + reg_lambda ||Z||^2 = ||X||^2 - 2 <B, Z> + <H Z, Z>.
    objective = float(np.sum(X * X) - 2.0 * np.sum(B * Z) + np.sum((H @ Z) * Z))
    return Z, n_iter, objective


def _graphs(p, views):
    graphs, objectives, iterations = [], [], []
    for X, A in zip(apply_view_scaling(views, p["means"], p["scales"]), p["anchors"], strict=True):
        Z, n_iter, objective = _view_graph(
            X, A, p["reg_lambda"], max_iter=p["max_iter"], tol=p["tol"], n_threads=p["n_threads"]
        )
        graphs.append(Z)
        objectives.append(objective)
        iterations.append(n_iter)
    return graphs, objectives, iterations


def _stacked(graphs):
    return np.vstack(graphs) / np.sqrt(len(graphs))


def _graph_task(p, rows, *views):
    with single_threaded_pools():
        graphs, objectives, iterations = _graphs(p, views)
        Z_bar = _stacked(graphs)
        return dict(
            gram=Z_bar @ Z_bar.T,
            objective=np.asarray(objectives),
            n_iter=np.asarray(iterations),
            graphs=graphs if p["keep_graphs"] else None,
            sample=None if rows is None else np.ascontiguousarray(Z_bar[:, rows].T),
        )


def _embedding_task(p, _, *views):
    with single_threaded_pools():
        return _stacked(_graphs(p, views)[0]).T @ p["projection"]


def _label_task(p, _, *views):
    with single_threaded_pools():
        return p["kmeans"].predict(_embedding_task(p, None, *views)).astype(np.intp)


class LMVSCFit(NamedTuple):
    """The fitted pieces of :func:`fit_lmvsc`."""

    view_means: list | None
    view_scales: list | None
    anchors: list
    #: Per view, the ``(n_anchors, n_samples)`` graph; None unless ``keep_graphs``.
    graphs: list | None
    #: The ``(n_samples, n_clusters)`` embedding; None unless ``keep_graphs``.
    embedding: np.ndarray | None
    singular_values: np.ndarray
    projection: np.ndarray
    objective: np.ndarray
    n_iter: int
    kmeans: KMeans
    labels: np.ndarray


def _params(anchors, means, scales, *, reg_lambda, max_iter, tol, n_threads, **extra):
    return dict(
        means=means, scales=scales, anchors=anchors, reg_lambda=reg_lambda, max_iter=max_iter,
        tol=tol, n_threads=n_threads, **extra,
    )  # fmt: skip


def fit_lmvsc(
    blocks,
    n_clusters,
    *,
    n_anchors,
    reg_lambda,
    scaling,
    n_init,
    max_iter,
    tol,
    anchor_seed,
    kmeans_seed,
    n_threads,
    keep_graphs,
    anchor_sample=None,
    kmeans_sample=None,
    log=None,
    progress=False,
):
    """Fit LMVSC on the row blocks ``blocks`` (a :class:`~._blockwise.RowBlocks`).

    Parameters
    ----------
    blocks : RowBlocks
        The views; NaN and infinity raise ``ValueError``.
    n_clusters, n_anchors, reg_lambda, scaling, n_init, max_iter, tol
        As in :class:`~mvlearn_ext.cluster.LMVSC` (``n_anchors`` capped at ``n_samples``).
    anchor_seed, kmeans_seed : int
        Seeds of the anchor k-means (every view the same) and of the final k-means.
    n_threads : int
        Threads of the QP kernels (1 is used when the blocks run on dask's threads).
    keep_graphs : bool
        Keep every row's graphs and embedding (views in memory); the labels are then
        those of the final k-means fit, with no second pass.
    anchor_sample, kmeans_sample : int or None
        Rows on which the anchors and the final k-means are fitted (None: every row).
    log : callable or None
        Called with a progress message.
    progress : bool
        Show progress bars over the blocks.

    Returns
    -------
    LMVSCFit
    """
    log = log or (lambda message: None)
    n, k = blocks.n_samples, n_clusters
    n_views, m = len(blocks.widths), min(n_anchors, n)
    if n_views * m < k:
        raise ValueError(
            f"n_anchors={n_anchors} gives {n_views} views x {m} anchors = {n_views * m} "
            f"columns of the anchor graph, fewer than n_clusters={k}: the embedding has "
            f"one column per cluster"
        )
    n_threads = 1 if blocks.uses_dask else n_threads
    start = time.perf_counter()

    anchor_rows = draw_rows(np.random.RandomState(anchor_seed), n, anchor_sample)
    kmeans_rows = draw_rows(np.random.RandomState(kmeans_seed), n, kmeans_sample)
    wanted = anchor_rows if keep_graphs else np.union1d(anchor_rows, kmeans_rows)
    moments, picked = statistics_pass(
        blocks, wanted, n_clusters=n_clusters, progress=progress, name="LMVSC"
    )
    means = scales = None
    if scaling is not None:
        stats = [
            scaling_from_moments(m_v, unit_view_variance=False, dtype=X.dtype)
            for m_v, X in zip(moments, blocks.views, strict=True)
        ]
        means, scales = [s[0] for s in stats], [s[1] for s in stats]

    where = np.searchsorted(wanted, anchor_rows)
    # A sample of the rows gets the k-means of the full data set (MiniBatchKMeans above
    # ``anchor_sample`` rows); all rows get the choice of kmeans_anchors.
    minibatch = None if anchor_sample is None else n > anchor_sample
    settings = dict(n_init=n_init, max_iter=_ANCHOR_MAX_ITER, minibatch=minibatch)
    anchors = [
        kmeans_anchors(X, m, random_state=anchor_seed, **settings)
        for X in apply_view_scaling([P[where] for P in picked], means, scales)
    ]
    log(f"{m} anchors per view ({time.perf_counter() - start:.2f} s)")

    params = _params(
        anchors, means, scales, reg_lambda=reg_lambda, max_iter=max_iter, tol=tol,
        n_threads=n_threads,
    )  # fmt: skip
    sample_rows = None if keep_graphs else blocks.local_rows(kmeans_rows)
    gram, objective, n_iter, graphs, sample = None, None, None, [], []
    for part in blocks.map(
        _graph_task, dict(params, keep_graphs=keep_graphs), sample_rows,
        progress=progress, desc="LMVSC graphs",
    ):  # fmt: skip
        gram = part["gram"] if gram is None else gram + part["gram"]
        objective = part["objective"] if objective is None else objective + part["objective"]
        n_iter = part["n_iter"] if n_iter is None else np.maximum(n_iter, part["n_iter"])
        graphs.append(part["graphs"])
        sample.append(part["sample"])
    for v, (value, steps) in enumerate(zip(objective, n_iter, strict=True)):
        log(f"view {v}: graph objective {value:.6g} after {steps} QP iterations")
    sigma, V, scale = gram_eigenpairs(gram, k)
    projection = V * scale
    if keep_graphs:
        by_view = zip(*graphs, strict=True)
        graphs = [parts[0] if len(parts) == 1 else np.hstack(parts) for parts in by_view]
        embedding = _stacked(graphs).T @ projection
        kmeans = KMeans(n_clusters=k, n_init=n_init, random_state=kmeans_seed).fit(embedding)
        labels = kmeans.labels_.astype(np.intp, copy=False)
    else:
        graphs = embedding = None
        F = np.vstack(sample) @ projection
        kmeans = KMeans(n_clusters=k, n_init=n_init, random_state=kmeans_seed).fit(F)
    log(f"graphs, embedding and k-means done ({time.perf_counter() - start:.2f} s)")
    if not keep_graphs:
        labels = np.concatenate(
            list(
                blocks.map(
                    _label_task, dict(params, kmeans=kmeans, projection=projection),
                    progress=progress, desc="LMVSC labels",
                )
            )
        )  # fmt: skip
    return LMVSCFit(
        view_means=means, view_scales=scales, anchors=anchors, graphs=graphs,
        embedding=embedding, singular_values=sigma, projection=projection,
        objective=objective, n_iter=int(n_iter.max()), kmeans=kmeans, labels=labels,
    )  # fmt: skip


def lmvsc_embedding(blocks, *, view_means, view_scales, anchors, projection, reg_lambda,
                    max_iter, tol, n_threads):  # fmt: skip
    """The embedding ``z_bar^T P`` of every row of ``blocks`` (views in memory)."""
    params = _params(
        anchors, view_means, view_scales, reg_lambda=reg_lambda, max_iter=max_iter, tol=tol,
        n_threads=n_threads, projection=projection,
    )  # fmt: skip
    return np.vstack(list(blocks.map(_embedding_task, params)))


def lmvsc_label_task(*, view_means, view_scales, anchors, projection, kmeans, reg_lambda,
                     max_iter, tol, n_threads):  # fmt: skip
    """``(task, params)`` that label a block by the fitted model, for ``map_labels``."""
    params = _params(
        anchors, view_means, view_scales, reg_lambda=reg_lambda, max_iter=max_iter, tol=tol,
        n_threads=n_threads, projection=projection, kmeans=kmeans,
    )  # fmt: skip
    return _label_task, params
