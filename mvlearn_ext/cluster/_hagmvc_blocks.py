"""HAG-MVC by row blocks: fit and predict of :class:`HAGMVC` on views larger than memory.

Only the finest level of the pyramid touches the samples; every coarser level links
anchors to anchors and stays in memory. One pass over the row blocks computes the
level-1 graph of each block (row-wise, exactly as in memory) and returns the sums the
rest of the algorithm needs: ``sum_i ||x_{v,i}||^2`` per view, ``Z^T X`` (``m_1 x d``),
the anchor masses ``Z^T 1``, the penalty ``sum_i lambda_i ||z_i||^2`` and ``Z^T Z``
(``m_1 x m_1``). From them come the objective, the exact anchor update and the
spectral problem of the composite graph. The sums are folded in block order
(:meth:`~mvlearn_ext.cluster._blockwise.RowBlocks.map`), so a fit does not depend on
the number of workers or on where the blocks ran.

What differs from the in-memory algorithm (``block_size=None`` on NumPy views), on
purpose, because the in-memory one needs every row at once:

* all random row subsets are drawn first, from the fit's random state, in this order:
  the rows of the view-weight scores (at most 1000), the rows among which the level-1
  anchors are seeded (``max(10000, 20 m_1)``, as in memory), and the rows on which the
  final k-means is fitted (at most ``100000``); the in-memory algorithm draws the
  first two at the points where it uses them;
* the final k-means (10 restarts) is fitted on the embedding of that subsample of rows,
  and every sample then gets the nearest centre; in memory it is fitted on all rows;
* the standardisation statistics are merged block by block (Chan et al.'s update)
  instead of being computed over the whole column.

Running the block algorithm on NumPy views (``HAGMVC(block_size=...)``) gives the same
labels as a dask array chunked by the same rows, in memory, on disk (zarr, memmap) or
on a cluster.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state

from mvlearn_ext.cluster._base import (
    labels_by_blocks,
    labels_like_input,
    open_blocks,
    open_fitted_blocks,
)
from mvlearn_ext.cluster._blockwise import (
    scaling_from_moments,
    statistics_pass,
)
from mvlearn_ext.cluster._common import regularised_projection_from_gram
from mvlearn_ext.cluster._hagmvc_pyramid import (
    _FINAL_N_INIT,
    _SEED_SAMPLE_MIN,
    _SEED_SAMPLE_PER_SEED,
    _feature_weights,
    _fixed_scale,
    _graph_step,
    _level_neighbors,
    _level_terms,
    _normalise_rows,
    _pyramid_sizes,
    _seed_level,
    _update_anchors,
    sweep_done,
)
from mvlearn_ext.cluster._view_weights import DEFAULT_MAX_SAMPLES, fit_view_weights
from mvlearn_ext.utils._threads import single_threaded_pools

__all__ = ["fit_hagmvc_blocks", "predict_hagmvc_blocks"]

#: Rows of the subsample on which the final k-means of the block algorithm is fitted.
KMEANS_SAMPLE = 100_000


# --------------------------------------------------------------------------- block tasks


def _standardise_block(views, means, scales):
    return np.ascontiguousarray(
        np.hstack(
            [
                (np.asarray(X, dtype=np.float64) - mean) / scale
                for X, mean, scale in zip(views, means, scales, strict=True)
            ]
        )
    )


def _graph_task(p, rows, *views):
    """Level-1 graph of one block and the sums of one sweep."""
    with single_threaded_pools():
        X = _standardise_block(views, p["means"], p["scales"])
        lam, Z = _graph_step(X, p["anchors"], p["w"], p["nn"], p["lambda"], p["n_threads"])
        Z = sp.csr_matrix(Z)
        sumsq = np.array([np.einsum("ij,ij->", X[:, s], X[:, s]) for s in p["slices"]])
        cross = np.asarray(Z.T @ X)
        mass = np.asarray(Z.sum(axis=0)).ravel()
        penalty = float(np.dot(lam, np.asarray(Z.multiply(Z).sum(axis=1)).ravel()))
        gram = (Z.T @ Z).toarray()
        return dict(
            sumsq=sumsq, cross=cross, mass=mass, penalty=penalty, gram=gram, sample=Z[rows]
        )


def _label_task(p, _, *views):
    """Labels of one block: level-1 graph, up the pyramid, embedding, nearest centre."""
    with single_threaded_pools():
        X = _standardise_block(views, p["means"], p["scales"])
        _, G = _graph_step(X, p["anchors"], p["w"], p["nn"], p["lambda"], p["n_threads"])
        for U in p["upper"]:
            G = G @ U
        F = np.asarray(G @ p["projection"])
        return p["kmeans"].predict(_normalise_rows(F)).astype(np.intp)


def _fold(total, part):
    if total is None:
        return {key: ([value] if key == "sample" else value) for key, value in part.items()}
    for key, value in part.items():
        if key == "sample":
            total[key].append(value)
        else:
            total[key] = total[key] + value
    return total


# --------------------------------------------------------------------------- algebra


def _level0_terms(stats, anchors, view_slices, view_scale):
    """Per-view losses of level 1 from the sums of a pass, for any anchors."""
    losses = np.empty(len(view_slices))
    for v, block in enumerate(view_slices):
        a = anchors[:, block]
        value = (
            stats["sumsq"][v]
            - 2.0 * np.einsum("ij,ij->", stats["cross"][:, block], a)
            + np.dot(stats["mass"], np.einsum("ij,ij->i", a, a))
        )
        losses[v] = max(value, 0.0) / view_scale[v]
    return losses


def _objective(stats, anchors, graphs, weights, lams, scales, view_slices):
    level0 = float(
        np.dot(weights[0] ** 2, _level0_terms(stats, anchors[0], view_slices, scales[0]))
        + stats["penalty"]
    )
    total = level0
    for level in range(1, len(anchors)):
        losses, penalty = _level_terms(
            anchors[level - 1], anchors[level], graphs[level], lams[level], view_slices,
            scales[level],
        )  # fmt: skip
        total += float(np.dot(weights[level] ** 2, losses) + penalty)
    return total


def _update_level0(stats, anchors, graphs, weights, scales, view_slices):
    """The exact anchor update of level 1 (``_update_anchors``) from the sums of a pass."""
    n_features = anchors[0].shape[1]
    w_own = _feature_weights(weights[0], scales[0], view_slices, n_features)
    numerator = stats["cross"] * w_own
    denominator = stats["mass"][:, None] * w_own[None, :]
    if len(anchors) > 1:
        w_up = _feature_weights(weights[1], scales[1], view_slices, n_features)
        numerator = numerator + np.asarray(graphs[1] @ anchors[1]) * w_up
        denominator = denominator + w_up[None, :]
    new = anchors[0].copy()
    used = denominator > 0.0
    new[used] = numerator[used] / denominator[used]
    return new


# --------------------------------------------------------------------------- fit


def _draw_rows(rng, n, size):
    return np.sort(rng.choice(n, size=size, replace=False)) if n > size else np.arange(n)


def _view_names(name, v):
    return f"{name}[{v}]"


def fit_hagmvc_blocks(est, Xs):
    """HAG-MVC of ``est``'s parameters by row blocks; see the module docstring.

    Returns the fitted pieces, which ``est`` stores (as for the in-memory fit).

    Called by ``fit``, which runs it with one BLAS/OpenMP thread (the blocks are the parallelism).
    """
    blocks = open_blocks(est, Xs)
    n, k = blocks.n_samples, est.n_clusters
    n_threads = 1 if blocks.uses_dask else est._n_threads
    verbose = bool(est.verbose)
    rng = check_random_state(est.random_state)
    sizes = _pyramid_sizes(n, k, est.n_anchors, est.ratio, est.n_levels, est._sample_graph_below())
    neighbors = _level_neighbors(est.n_neighbors, sizes)
    auto = isinstance(est.view_weights, str) and est.view_weights in ("auto", "factor")
    start = time.perf_counter()

    # 1. The random rows, then one pass: finiteness, moments, the rows themselves.
    score_rows = _draw_rows(rng, n, DEFAULT_MAX_SAMPLES) if auto else np.empty(0, np.int64)
    seed_rows = _draw_rows(rng, n, max(_SEED_SAMPLE_MIN, _SEED_SAMPLE_PER_SEED * sizes[0]))
    kmeans_rows = _draw_rows(rng, n, KMEANS_SAMPLE)
    wanted = np.union1d(np.union1d(score_rows, seed_rows), kmeans_rows)
    moments, picked = statistics_pass(blocks, wanted, progress=verbose, desc="HAGMVC statistics")
    dtypes = [np.dtype(X.dtype) for X in blocks.views]
    stats = [
        scaling_from_moments(m_v, unit_view_variance=True, dtype=dt)
        for m_v, dt in zip(moments, dtypes, strict=True)
    ]
    means = [mean for mean, _ in stats]
    scales_v = [scale for _, scale in stats]
    bounds = np.cumsum([0, *blocks.widths])
    slices = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    n_views = len(slices)

    def rows_of(subset):
        where = np.searchsorted(wanted, subset)
        return [P[where] for P in picked]

    # 2. Fixed view weights.
    if auto:
        scores = fit_view_weights(
            rows_of(score_rows),
            k,
            n_neighbors=est.n_neighbors,
            rule="factor" if est.view_weights == "factor" else "reliability",
            random_state=rng,
        )
        fixed = scores.weights_
    else:
        fixed, scores = est._fixed_weights(list(blocks.views), rng)
    fixed_scale = _fixed_scale(fixed)
    uniform = np.full(n_views, 1.0 / n_views)

    # 3. The pyramid at initialisation: seeds on the seeding rows, coarser levels in memory.
    lambda_ = float(est.reg_lambda)
    n_features = int(bounds[-1])
    levels = []
    below = _standardise_block(rows_of(seed_rows), means, scales_v)
    for level in range(len(sizes)):
        with single_threaded_pools():
            A, scale, seeding = _seed_level(
                below, sizes[level], rng, fixed_scale, slices, n_features
            )
            if level == 0:
                lam, Z = None, None  # computed by the first pass
            else:
                lam, Z = _graph_step(below, A, seeding, neighbors[level], lambda_, n_threads)
        levels.append((A, Z, uniform.copy(), lam, scale))
        below = A
    anchors, graphs, weights, lams, scales = (list(column) for column in zip(*levels, strict=True))
    est._log(f"initialised {list(sizes)} anchors ({time.perf_counter() - start:.2f} s)")

    # 4. Sweeps: a pass for level 1, the coarser levels in memory.
    w0 = _feature_weights(weights[0], scales[0], slices, n_features)
    history, n_sweeps, sweep = [], 0, 0
    local_kmeans_rows = blocks.local_rows(kmeans_rows)
    while True:
        params = dict(
            means=means, scales=scales_v, slices=slices, anchors=anchors[0],
            w=w0, nn=neighbors[0], n_threads=n_threads, **{"lambda": lambda_},
        )  # fmt: skip
        sums = None
        for part in blocks.map(
            _graph_task, params, local_kmeans_rows, progress=verbose, desc=f"HAGMVC pass {sweep}"
        ):
            sums = _fold(sums, part)
        if sweep == 0:
            history.append(_objective(sums, anchors, graphs, weights, lams, scales, slices))
        label_anchors = anchors[0]
        last = sums
        if n_sweeps == est.max_iter:
            break
        anchors[0] = _update_level0(sums, anchors, graphs, weights, scales, slices)
        with single_threaded_pools():
            for level in range(1, len(sizes)):
                below = anchors[level - 1]
                w = _feature_weights(weights[level], scales[level], slices, n_features)
                lams[level], graphs[level] = _graph_step(
                    below, anchors[level], w, neighbors[level], lambda_, n_threads
                )
                top = level == len(sizes) - 1
                anchors[level] = _update_anchors(
                    anchors[level], below, graphs[level], weights[level], scales[level],
                    None if top else anchors[level + 1], None if top else graphs[level + 1],
                    None if top else weights[level + 1], None if top else scales[level + 1],
                    slices,
                )  # fmt: skip
        n_sweeps += 1
        history.append(_objective(sums, anchors, graphs, weights, lams, scales, slices))
        if sweep_done(history, n_sweeps, est.tol, start, verbose) or n_sweeps == est.max_iter:
            break
        sweep += 1

    # 5. Spectral embedding of the composite graph from its Gram matrix; k-means on the
    # subsample; then a pass that labels every block.
    upper = [sp.csr_matrix(Z) for Z in graphs[1:]]
    degree, gram, sample_graph = last["mass"], last["gram"], sp.vstack(last["sample"], "csr")
    if upper:
        U = upper[0]
        for Z in upper[1:]:
            U = U @ Z
        U = U.toarray()
        degree, gram, sample_graph = degree @ U, U.T @ gram @ U, sample_graph @ U
    n_components = min(k, int(np.count_nonzero(degree > 0)))
    projection = regularised_projection_from_gram(gram, degree, n, n_components)
    with single_threaded_pools():
        F = np.asarray(sample_graph @ projection)
        kmeans = KMeans(n_clusters=k, n_init=_FINAL_N_INIT, random_state=rng).fit(
            _normalise_rows(F)
        )
    label_params = dict(
        means=means, scales=scales_v, anchors=label_anchors, w=w0,
        nn=neighbors[0], n_threads=n_threads, upper=upper, projection=projection,
        kmeans=kmeans, **{"lambda": lambda_},
    )  # fmt: skip
    labels = np.concatenate(
        list(blocks.map(_label_task, label_params, progress=verbose, desc="HAGMVC labels"))
    )
    est._log(f"labelled {n} samples ({time.perf_counter() - start:.2f} s)")

    return dict(
        means=means, scales=scales_v, scores=scores, sizes=sizes, slices=slices,
        anchors=anchors, graphs=[None, *upper], weights=weights,
        normalisers=scales, lambda_=lambda_, neighbors=neighbors, fixed=fixed,
        history=np.asarray(history), n_iter=n_sweeps, embedding=None, composite=None,
        projection=projection, kmeans=kmeans,
        labels=labels_like_input(labels, Xs, blocks),
    )  # fmt: skip


# --------------------------------------------------------------------------- predict


def predict_hagmvc_blocks(est, Xs):
    """Labels of new views by row blocks: lazy (a dask array) for dask views."""
    blocks = open_fitted_blocks(est, Xs)
    n_features = int(sum(blocks.widths))
    params = dict(
        means=est.view_means_, scales=est.view_scales_, anchors=est._anchors_std[0],
        w=_feature_weights(est._alpha0, est._view_scale0, est._slices, n_features),
        nn=est._neighbors[0], n_threads=1 if blocks.uses_dask else est._n_threads,
        upper=[sp.csr_matrix(Z) for Z in est._graphs_rows[1:]],
        projection=est.spectral_projection_, kmeans=est.kmeans_,
        **{"lambda": est._lambda_scale},
    )  # fmt: skip
    return labels_by_blocks(est, Xs, blocks, _label_task, params, "HAGMVC")
