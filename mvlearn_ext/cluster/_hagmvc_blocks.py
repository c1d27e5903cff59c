"""The HAG-MVC driver: fit and labelling of :class:`HAGMVC` over row blocks.

Every input goes through this driver: NumPy views as blocks of
:data:`~mvlearn_ext.cluster._blockwise.DEFAULT_BLOCK_SIZE` rows (or ``block_size``),
memmaps, zarr and dask arrays by their blocks. Only the finest level of the pyramid
touches the samples; every coarser level links anchors to anchors and stays in memory.
One pass over the row blocks computes the level-1 graph of each block (row-wise, so it
does not depend on the blocks) and returns the sums the rest of the algorithm needs:
``sum_i ||x_{v,i}||^2`` per view, ``Z^T X`` (``m_1 x d``), the anchor masses ``Z^T 1``,
the penalty ``sum_i lambda_i ||z_i||^2`` and ``Z^T Z`` (``m_1 x m_1``). From them come
the objective, the exact anchor update and the spectral problem of the composite graph.
The sums are folded in block order (:meth:`~mvlearn_ext.cluster._blockwise.RowBlocks.map`),
so a fit does not depend on the number of workers or on where the blocks ran.

The random row subsets are drawn first, from the fit's random state, so that the
passes can bring back what they need of them: the rows of the view-weight scores (at
most 1000), the rows among which the level-1 anchors are seeded (``max(10000, 20 m_1)``)
and the rows on which the final k-means (10 restarts) is fitted (at most
:data:`KMEANS_SAMPLE`); a subset that would hold every row is every row and draws
nothing. Every sample then gets the nearest k-means centre (below
:data:`KMEANS_SAMPLE` rows, the k-means labels themselves; above, from the embedding
of every sample when the graph is kept, else by one more pass).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state

from mvlearn_ext.cluster._blockwise import draw_rows, scaling_from_moments, statistics_pass
from mvlearn_ext.cluster._common import DEGREE_REG, regularised_projection_from_gram
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
    _standardise,
    _update_anchors,
    sweep_done,
)
from mvlearn_ext.cluster._view_weights import DEFAULT_MAX_SAMPLES, fit_view_weights
from mvlearn_ext.utils._progress import log_message
from mvlearn_ext.utils._threads import single_threaded_pools

__all__ = ["check_view_weights", "fit_hagmvc", "label_block", "label_params"]

#: Rows of the subsample on which the final k-means is fitted.
KMEANS_SAMPLE = 100_000
#: Degree regularisation (fraction of the mean live anchor degree) of the spectral step
#: when the labelled graph has one anchor per sample: ``tau`` is then the mean degree.
SAMPLE_GRAPH_DEGREE_REG = 1.0


def check_view_weights(view_weights, n_views):
    """Fixed view weights (summing to 1) of a ``view_weights`` argument, or None if learned."""
    if isinstance(view_weights, str):
        return np.full(n_views, 1.0 / n_views) if view_weights == "uniform" else None
    weights = np.asarray(view_weights, dtype=np.float64)
    if weights.shape != (n_views,):
        raise ValueError(
            f"view_weights has shape {weights.shape}; give one weight per view ({n_views} views)"
        )
    if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
        raise ValueError(
            f"view_weights must be finite, nonnegative and not all zero, got {weights.tolist()}"
        )
    return weights / weights.sum()


# --------------------------------------------------------------------------- block tasks


def _graph_task(p, rows, *views):
    """Level-1 graph of one block and the sums of one sweep.

    ``p["standardised"]`` and ``p["distances"]`` (optional) are the block's
    standardised rows and their weighted squared distances to the anchors, when the
    driver already holds them (a single block, every row read for the seeding).
    """
    with single_threaded_pools():
        X = p.get("standardised")
        if X is None:
            X = _standardise(views, p["means"], p["scales"])
        lam, Z = _graph_step(
            X, p["anchors"], p["w"], p["nn"], p["lambda"], p["n_threads"], p.get("distances")
        )
        Z = sp.csr_matrix(Z)
        sumsq = np.array([np.einsum("ij,ij->", X[:, s], X[:, s]) for s in p["slices"]])
        cross = np.asarray(Z.T @ X)
        mass = np.asarray(Z.sum(axis=0)).ravel()
        penalty = float(np.dot(lam, np.asarray(Z.multiply(Z).sum(axis=1)).ravel()))
        gram = (Z.T @ Z).toarray()
        keep = p["keep_graph"]
        return dict(
            sumsq=sumsq, cross=cross, mass=mass, penalty=penalty, gram=gram,
            sample=None if keep else Z[rows], graph=Z if keep else None,
        )  # fmt: skip


def label_block(p, _, *views):
    """Labels of one block: level-1 graph, up the pyramid, embedding, nearest centre."""
    with single_threaded_pools():
        X = _standardise(views, p["means"], p["scales"])
        _, G = _graph_step(X, p["anchors"], p["w"], p["nn"], p["lambda"], p["n_threads"])
        for U in p["upper"]:
            G = G @ U
        F = np.asarray(G @ p["projection"])
        return p["kmeans"].predict(_normalise_rows(F)).astype(np.intp)


def label_params(*, means, scales, anchors, feature_weights, n_neighbors, reg_lambda, upper,
                 projection, kmeans, n_threads):  # fmt: skip
    """The shared argument of :func:`label_block` (sent once to the scheduler)."""
    return dict(
        means=means, scales=scales, anchors=anchors, w=feature_weights, nn=n_neighbors,
        n_threads=n_threads, upper=[sp.csr_matrix(Z) for Z in upper], projection=projection,
        kmeans=kmeans, **{"lambda": reg_lambda},
    )  # fmt: skip


#: Parts of a pass that are listed per block rather than summed.
_LISTED = ("sample", "graph")


def _fold(total, part):
    if total is None:
        return {key: ([value] if key in _LISTED else value) for key, value in part.items()}
    for key, value in part.items():
        if key in _LISTED:
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


def fit_hagmvc(
    blocks, *, n_clusters, n_anchors, ratio, n_levels, n_neighbors, reg_lambda, max_iter, tol,
    view_weights, small_sample_graph, random_state, n_threads, verbose, keep_graph,
):  # fmt: skip
    """HAG-MVC over the row blocks ``blocks`` (a ``RowBlocks``); see the module docstring.

    The keyword arguments are :class:`HAGMVC`'s parameters (``n_threads`` the resolved
    ``n_jobs``). With ``keep_graph`` the level-1 graph of every sample is kept, and the
    result holds it, the composite graph and the embedding of every sample (``None``
    otherwise). Returns a dict of the fitted pieces, which the estimator stores:
    ``graphs`` in row orientation (points of the level below as rows),
    ``feature_weights`` those of the level-1 distances, ``labels`` a NumPy array.
    """
    n, k = blocks.n_samples, n_clusters
    progress = bool(verbose) and blocks.n_blocks > 1
    rng = check_random_state(random_state)
    sample_graph_below = 2 * n_neighbors * k if small_sample_graph else 0
    sizes = _pyramid_sizes(n, k, n_anchors, ratio, n_levels, sample_graph_below)
    neighbors = _level_neighbors(n_neighbors, sizes)
    bounds = np.cumsum([0, *blocks.widths])
    slices = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    n_views = len(slices)
    fixed = check_view_weights(view_weights, n_views)
    start = time.perf_counter()

    # 1. The random rows, then one pass: finiteness, moments, the rows that are read.
    score_rows = draw_rows(rng, n, DEFAULT_MAX_SAMPLES) if fixed is None else np.empty(0, int)
    seed_rows = draw_rows(rng, n, max(_SEED_SAMPLE_MIN, _SEED_SAMPLE_PER_SEED * sizes[0]))
    kmeans_rows = draw_rows(rng, n, KMEANS_SAMPLE)  # their graph rows, from the passes
    wanted = np.union1d(score_rows, seed_rows)
    moments, picked = statistics_pass(
        blocks, wanted, n_clusters=n_clusters, progress=progress, name="HAGMVC"
    )
    stats = [
        scaling_from_moments(m_v, unit_view_variance=True, dtype=np.dtype(X.dtype))
        for m_v, X in zip(moments, blocks.views, strict=True)
    ]
    means = [mean for mean, _ in stats]
    scales_v = [scale for _, scale in stats]

    def rows_of(subset):
        where = np.searchsorted(wanted, subset)
        return [P[where] for P in picked]

    # 2. Fixed view weights.
    scores = None
    if fixed is None:
        scores = fit_view_weights(
            rows_of(score_rows),
            k,
            n_neighbors=n_neighbors,
            rule="factor" if view_weights == "factor" else "reliability",
            random_state=rng,
            n_threads=n_threads,
        )
        fixed = scores.weights_
    fixed_scale = _fixed_scale(fixed)
    uniform = np.full(n_views, 1.0 / n_views)

    # 3. The pyramid at initialisation: seeds on the seeding rows, coarser levels in memory.
    lambda_ = float(reg_lambda)
    n_features = int(bounds[-1])
    levels = []
    below = _standardise(rows_of(seed_rows), means, scales_v)
    # One block whose every row is a seeding row: the passes reuse the standardised rows
    # and the first pass the seeding's distances to the seeds (the first anchors),
    # wherever the block is stored, so that its labels do not depend on the storage.
    whole = blocks.n_blocks == 1 and seed_rows.size == n
    reused = {"standardised": below} if whole else {}
    for level in range(len(sizes)):
        with single_threaded_pools():
            A, scale, seeding = _seed_level(
                below, sizes[level], rng, fixed_scale, slices, n_features,
                keep=reused if whole and level == 0 else None, n_threads=n_threads,
            )  # fmt: skip
            if level == 0:
                lam, Z = None, None  # computed by the first pass
            else:
                lam, Z = _graph_step(below, A, seeding, neighbors[level], lambda_, n_threads)
        levels.append((A, Z, uniform.copy(), lam, scale))
        below = A
    anchors, graphs, weights, lams, scales = (list(column) for column in zip(*levels, strict=True))
    log_message(
        "HAGMVC", f"initialised {list(sizes)} anchors ({time.perf_counter() - start:.2f} s)",
        verbose,
    )  # fmt: skip

    # 4. Sweeps: a pass for level 1, the coarser levels in memory.
    w0 = _feature_weights(weights[0], scales[0], slices, n_features)
    history, n_sweeps, sweep = [], 0, 0
    local_kmeans_rows = blocks.local_rows(kmeans_rows)
    while True:
        params = dict(
            means=means, scales=scales_v, slices=slices, anchors=anchors[0], w=w0,
            nn=neighbors[0], n_threads=n_threads, keep_graph=keep_graph,
            standardised=reused.get("standardised"),
            distances=reused.pop("distances", None) if sweep == 0 else None,
            **{"lambda": lambda_},
        )  # fmt: skip
        sums = None
        for part in blocks.map(
            _graph_task, params, local_kmeans_rows, progress=progress, desc=f"HAGMVC pass {sweep}"
        ):
            sums = _fold(sums, part)
        if sweep == 0:
            history.append(_objective(sums, anchors, graphs, weights, lams, scales, slices))
        label_anchors = anchors[0]
        last = sums
        if n_sweeps == max_iter:
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
        if sweep_done(history, n_sweeps, tol, start, verbose) or n_sweeps == max_iter:
            break
        sweep += 1

    # 5. Spectral embedding of the composite graph from its Gram matrix, k-means on the
    # subsample, and the labels: those of the k-means when the subsample is every row,
    # else from the kept embedding or by a pass that labels every block.
    upper = [sp.csr_matrix(Z) for Z in graphs[1:]]
    finest = sp.vstack(last["graph"], "csr") if keep_graph else None
    if finest is None:
        sample_graph = sp.vstack(last["sample"], "csr")
    else:
        sample_graph = finest if kmeans_rows.size == n else finest[kmeans_rows]
    degree, gram = last["mass"], last["gram"]
    composite = finest
    if upper:
        U = upper[0]
        for Z in upper[1:]:
            U = U @ Z
        U = U.toarray()
        degree, gram, sample_graph = degree @ U, U.T @ gram @ U, sample_graph @ U
        composite = None if finest is None else sp.csr_matrix(finest @ U)
    n_components = min(k, int(np.count_nonzero(degree > 0)))
    # When the labelled graph has an anchor per sample it is a graph over the samples,
    # the setting of regularised spectral clustering, so tau is its mean degree (Qin &
    # Rohe, 2013); anchors that each stand for many samples keep the tenth.
    reg = SAMPLE_GRAPH_DEGREE_REG if gram.shape[0] == n else DEGREE_REG
    projection = regularised_projection_from_gram(gram, degree, n, n_components, reg=reg)
    with single_threaded_pools():
        F = np.asarray(sample_graph @ projection)
        kmeans = KMeans(n_clusters=k, n_init=_FINAL_N_INIT, random_state=rng).fit(
            _normalise_rows(F)
        )
    embedding = None if composite is None else np.asarray(composite @ projection)
    if kmeans_rows.size == n:
        labels = kmeans.labels_.astype(np.intp)
    elif embedding is not None:
        with single_threaded_pools():
            labels = kmeans.predict(_normalise_rows(embedding)).astype(np.intp)
    else:
        shared = label_params(
            means=means, scales=scales_v, anchors=label_anchors, feature_weights=w0,
            n_neighbors=neighbors[0], reg_lambda=lambda_, upper=upper, projection=projection,
            kmeans=kmeans, n_threads=n_threads,
        )  # fmt: skip
        labels = np.concatenate(
            list(blocks.map(label_block, shared, progress=progress, desc="HAGMVC labels"))
        )
    log_message("HAGMVC", f"labelled {n} samples ({time.perf_counter() - start:.2f} s)", verbose)

    return dict(
        means=means, scales=scales_v, scores=scores, sizes=sizes, slices=slices,
        anchors=anchors, graphs=[finest, *upper], feature_weights=w0, lambda_=lambda_,
        neighbors=neighbors, fixed=fixed,
        history=np.asarray(history), n_iter=n_sweeps,
        embedding=embedding,
        composite=None if composite is None else sp.csr_matrix(composite.T),
        projection=projection, kmeans=kmeans, labels=labels,
    )  # fmt: skip
