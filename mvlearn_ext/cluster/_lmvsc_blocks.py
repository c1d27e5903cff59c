"""LMVSC by row blocks: fit and predict of :class:`LMVSC` on views larger than memory.

LMVSC codes every sample on the anchors of each view by its own simplex QP, so the
graphs are computed block by block, exactly as in memory (each column of the QP stops
on its own criterion). A pass returns, per block, the Gram matrix ``Z_bar Z_bar^T``
(``V m x V m``) of the stacked graphs and the terms of each view's objective; the
driver folds them in block order
(:meth:`~mvlearn_ext.cluster._blockwise.RowBlocks.map`), so the fit does not depend on
the number of workers or on where the blocks ran. The embedding is the out-of-sample
map ``Z_bar^T P`` of the in-memory fit.

What differs from the in-memory algorithm, because that one needs every row at once:

* above 50000 rows, the anchors of each view are the MiniBatchKMeans centres (the
  in-memory settings: ``n_init`` restarts, batches of 4096) of 50000 random rows of the
  view; in memory, MiniBatchKMeans runs on all rows. Up to 50000 rows both run KMeans
  on all rows, and the anchors are the same. (Full KMeans on the 50000-row sample cost
  24x MiniBatchKMeans on it for 0.7% lower inertia, and was most of a dask fit once the
  QPs became cheap);
* the final k-means is fitted on the embedding of at most 100000 random rows, and
  every sample gets the nearest centre;
* the standardisation statistics are merged block by block.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.cluster import KMeans

from mvlearn_ext.cluster._base import (
    draw_seeds,
    labels_by_blocks,
    labels_like_input,
    open_blocks,
    open_fitted_blocks,
    scaling_of_moments,
)
from mvlearn_ext.cluster._blockwise import (
    statistics_pass,
)
from mvlearn_ext.cluster._common import (
    gram_eigenpairs,
    kmeans_anchors,
)
from mvlearn_ext.cluster._preprocessing import apply_view_scaling
from mvlearn_ext.utils._simplex_qp import simplex_qp
from mvlearn_ext.utils._threads import single_threaded_pools

__all__ = ["fit_lmvsc_blocks", "predict_lmvsc_blocks"]

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


#: Rows of the subsample on which the final k-means is fitted.
KMEANS_SAMPLE = 100_000


def _graphs(p, views):
    graphs, objectives, iterations = [], [], []
    for X, A in zip(apply_view_scaling(views, p["means"], p["scales"]), p["anchors"], strict=True):
        Z, n_iter, objective = _view_graph(
            X, A, p["alpha"], max_iter=p["max_iter"], tol=p["tol"], n_threads=p["n_threads"]
        )
        graphs.append(Z)
        objectives.append(objective)
        iterations.append(n_iter)
    return np.vstack(graphs) / np.sqrt(len(graphs)), objectives, iterations


def _graph_task(p, rows, *views):
    with single_threaded_pools():
        Z_bar, objectives, iterations = _graphs(p, views)
        return dict(
            gram=Z_bar @ Z_bar.T,
            objective=np.asarray(objectives),
            n_iter=max(iterations),
            sample=np.ascontiguousarray(Z_bar[:, rows].T),
        )


def _label_task(p, _, *views):
    with single_threaded_pools():
        Z_bar, _, _ = _graphs(p, views)
        return p["kmeans"].predict(Z_bar.T @ p["projection"]).astype(np.intp)


def _projection_from_gram(gram, n_components):
    """``P`` of ``anchor_spectral_embedding(Z_bar, k, normalize=False)`` from ``Z_bar Z_bar^T``."""
    sigma, V, scale = gram_eigenpairs(gram, n_components)
    return V * scale, sigma


def _draw(seed, n, size):
    rng = np.random.RandomState(seed)
    return np.sort(rng.choice(n, size=size, replace=False)) if n > size else np.arange(n)


def fit_lmvsc_blocks(est, Xs):
    """Fit ``est`` (an :class:`LMVSC`) by row blocks; see the module docstring.

    Called by ``fit``, which runs it with one BLAS/OpenMP thread (the blocks are the parallelism).
    """
    blocks = open_blocks(est, Xs, min_views=2, name="LMVSC")
    n, k = blocks.n_samples, est.n_clusters
    n_threads = 1 if blocks.uses_dask else est._n_threads
    verbose = bool(est.verbose)
    _, (anchor_seed, kmeans_seed) = draw_seeds(est.random_state, 2)
    start = time.perf_counter()

    anchor_rows = _draw(anchor_seed, n, est._anchor_sample)
    kmeans_rows = _draw(kmeans_seed, n, KMEANS_SAMPLE)
    wanted = np.union1d(anchor_rows, kmeans_rows)
    moments, picked = statistics_pass(blocks, wanted, progress=verbose, desc="LMVSC statistics")
    scaling_of_moments(est, moments, blocks.views)
    m = min(est.n_anchors, n)
    est.n_anchors_ = m

    def rows_of(subset):
        where = np.searchsorted(wanted, subset)
        return apply_view_scaling([P[where] for P in picked], est.view_means_, est.view_scales_)

    settings = dict(n_init=est.n_init, max_iter=_ANCHOR_MAX_ITER, minibatch=n > est._anchor_sample)
    anchors = [
        kmeans_anchors(X, m, random_state=anchor_seed, **settings) for X in rows_of(anchor_rows)
    ]
    est._log(f"{m} anchors per view ({time.perf_counter() - start:.2f} s)")

    params = dict(
        means=est.view_means_, scales=est.view_scales_, anchors=anchors, alpha=est.reg_lambda,
        max_iter=est.max_iter, tol=est.tol, n_threads=n_threads,
    )  # fmt: skip
    gram, objective, n_iter, sample = None, None, 0, []
    for part in blocks.map(
        _graph_task, params, blocks.local_rows(kmeans_rows), progress=verbose, desc="LMVSC graphs"
    ):
        gram = part["gram"] if gram is None else gram + part["gram"]
        objective = part["objective"] if objective is None else objective + part["objective"]
        n_iter = max(n_iter, part["n_iter"])
        sample.append(part["sample"])
    projection, sigma = _projection_from_gram(gram, k)
    F = np.vstack(sample) @ projection
    kmeans = KMeans(n_clusters=k, n_init=est.n_init, random_state=kmeans_seed).fit(F)
    est._log(f"graphs, embedding and k-means done ({time.perf_counter() - start:.2f} s)")
    labels = np.concatenate(
        list(
            blocks.map(
                _label_task, dict(params, kmeans=kmeans, projection=projection),
                progress=verbose, desc="LMVSC labels",
            )
        )
    )  # fmt: skip

    est._store_model(
        anchors=anchors, graphs=None, embedding=None, sigma=sigma, projection=projection,
        objective=objective, n_iter=n_iter,
    )  # fmt: skip
    est.kmeans_ = kmeans
    est.labels_ = labels_like_input(labels, Xs, blocks)
    return est


def predict_lmvsc_blocks(est, Xs):
    """Labels of new views by row blocks: lazy (a dask array) for dask views."""
    blocks = open_fitted_blocks(est, Xs)
    params = dict(
        means=est.view_means_, scales=est.view_scales_, anchors=est.anchors_, alpha=est.reg_lambda,
        max_iter=est.max_iter, tol=est.tol, n_threads=1 if blocks.uses_dask else est._n_threads,
        kmeans=est.kmeans_, projection=est._projection,
    )  # fmt: skip
    return labels_by_blocks(est, Xs, blocks, _label_task, params, "LMVSC")
