"""DRMC's driver: the feedback between the partition and the view weights.

Part of the DRMC reconstruction (see :class:`~mvlearn_ext.cluster.DRMC`).
:func:`fit_drmc` is the one driver, over row blocks (the views in memory are one
block): it reads the column statistics and the rows of the subsamples, sets the
starting weights and places the anchors, builds the consensus graph under the
current view weights (a pass over the blocks, :mod:`~mvlearn_ext.cluster._drmc_blocks`),
embeds and rotates it (:func:`_rotate`), scores each view's agreement with the
partition (:func:`_partition_agreement`) and feeds the new weights back
(:func:`_feedback`) until the weights or the labels settle. The graphs, anchors
and starting weights come from :mod:`mvlearn_ext.cluster._drmc_graphs`, the
degree-regularised projection and the spectral rotation from
:mod:`mvlearn_ext.cluster._common`.
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from mvlearn_ext.cluster._blockwise import (
    _progress_bar,
    draw_rows,
    scaling_from_moments,
    statistics_pass,
)
from mvlearn_ext.cluster._common import (
    procrustes,
    regularised_projection_from_gram,
    spectral_rotation,
)
from mvlearn_ext.cluster._drmc_blocks import (
    _assignment_rule,
    _graph_task,
    _label_task,
)
from mvlearn_ext.cluster._drmc_graphs import (
    _SUBSAMPLE,
    _feature_factors,
    _initial_anchors,
    _memberships,
    _scaled_joint,
    _scores_views,
    _starting_weights,
    _subsample_rows,
    _view_graphs,
)
from mvlearn_ext.cluster._kernels import indicator_sweeps
from mvlearn_ext.cluster._view_weights import (
    DEFAULT_MAX_SAMPLES,
    _neighbour_overlap,
    _neighbours,
    _standardised,
)
from mvlearn_ext.utils._progress import log_message
from mvlearn_ext.utils._threads import map_tasks

#: Stop the feedback when the weights move by less than this (L1 norm).
_WEIGHT_TOL = 1e-3
#: Alternations and sweeps per alternation of the warm-started rotation.
_ROTATION_MAX_ITER = 100
_ROTATION_SWEEPS = 50
#: Rows and neighbours of the copy (redundancy) scores.
_REDUNDANCY_ROWS = 1000
_REDUNDANCY_NEIGHBORS = 10
#: Most entries (n x m x V) of the per-view distances kept between the graphs of a fit
#: whose views are one block in memory.
_DISTANCE_CACHE = 2**23


# --------------------------------------------------------------------------- feedback


def _partition_agreement(graph, labels, n_clusters):
    """Chance-corrected agreement of one view's anchor graph with a partition.

    With ``S = Z^T Delta^{-1} Z`` the sample similarity of the view's
    anchor graph ``Z`` (m x n, columns on the simplex) and ``Y_hat`` the
    scaled indicator of ``labels``, the association ``a = tr(Y_hat^T S
    Y_hat)`` lies in ``[0, k]`` (``S`` is doubly stochastic, its
    eigenvalues in ``[0, 1]``). Over uniformly random relabellings with
    the same cluster sizes its mean is exactly
    ``e = k tr(S)/n + (n - k)(n - tr(S)) / (n (n - 1))``. Returns
    ``(a - e) / (k - e)``: 1 when every cluster is a union of connected
    components of the view's graph, about 0 for a view independent of the
    partition whatever its width or units, negative below chance.
    """
    n = labels.shape[0]
    k = n_clusters
    degree = np.asarray(graph.sum(axis=1)).ravel()
    live = degree > 0
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    onehot = sp.csr_matrix((np.ones(n), (np.arange(n), labels)), shape=(n, k))
    P = np.asarray((graph @ onehot).todense())  # m x k: anchor mass per cluster
    inv = np.zeros_like(degree)
    inv[live] = 1.0 / degree[live]
    assoc = float(np.sum((P * P) * inv[:, None] / np.maximum(counts, 1.0)[None, :]))
    trace = float(np.asarray(graph.multiply(graph).sum(axis=1)).ravel() @ inv)
    if n < 2:
        return 0.0
    expected = k * trace / n + (n - k) * (n - trace) / (n * (n - 1.0))
    if k - expected <= 0:
        return 0.0
    return (assoc - expected) / (k - expected)


def _view_redundancy(
    Xs, seed, n_rows=_REDUNDANCY_ROWS, n_neighbors=_REDUNDANCY_NEIGHBORS, known=None
):
    """How many copies of each view there are: ``c_v = sum_u K_vu^2``.

    ``K_vu`` is the chance-corrected overlap of the ``n_neighbors``-nearest-
    neighbour sets of the samples in views ``v`` and ``u`` (z-scored, on
    ``n_rows`` random rows): 1 for identical views, about 0 for unrelated
    ones (``K_vv = 1``). Unlike the copy discount of ``fit_view_weights``
    (which raises ``K`` to the 8th power, to discount only near-copies), any
    overlap counts here: the feedback already separates views by agreement.

    ``known``: neighbour lists of the standardised views on every row of ``Xs``
    already computed (by ``fit_view_weights`` on the same rows; None for a view
    without them), used where they hold ``n_neighbors`` neighbours of every row.
    """
    rows = draw_rows(np.random.RandomState(seed), Xs[0].shape[0], n_rows)
    s = rows.size
    k = min(n_neighbors, s - 1)
    if k < 1:
        return np.ones(len(Xs))
    if known is None or s != Xs[0].shape[0]:
        known = [None] * len(Xs)
    neighbours = [
        nb if nb is not None and nb.shape == (s, k) else _neighbours(_standardised(X[rows]), k)
        for X, nb in zip((np.asarray(X) for X in Xs), known, strict=True)
    ]
    V = len(Xs)
    K = np.eye(V)
    for v in range(V):
        for u in range(v + 1, V):
            K[v, u] = K[u, v] = _neighbour_overlap(neighbours[v], neighbours[u], s)
    return (K**2).sum(axis=1)


def _agreement_weights(scores, prior):
    """Simplex weights ``∝ max(score_v, 0)`` (the prior if every score is <= 0)."""
    s = np.maximum(np.asarray(scores, dtype=np.float64), 0.0)
    total = s.sum()
    if not np.isfinite(total) or total <= 0:
        return prior.copy()
    return s / total


def _rotation_objective(F, R, labels, n_clusters, scaled):
    """``||F R - Y_hat||_F^2`` (``F`` orthonormal, ``R`` orthogonal: ``||F R||^2 = ||F||^2``)."""
    Y = _scaled_indicator(labels, n_clusters, scaled)
    return float(np.sum(F * F) + np.sum(Y * Y) - 2.0 * np.sum(Y * (F @ R)))


def _warm_rotation(F, labels, n_clusters, scaled, max_iter=_ROTATION_MAX_ITER):
    """Spectral rotation started from a given partition (the discrete feedback).

    Alternates ``R = polar(F^T Y_hat)`` and exact coordinate moves of the
    labels (:func:`indicator_sweeps`, no cluster emptied) from ``labels``;
    each step lowers ``||F R - Y_hat||^2``. Returns ``(labels, R)``.
    """
    labels = labels.astype(np.int64, copy=True)
    R = np.eye(n_clusters)
    for _ in range(max_iter):
        R = procrustes(F.T @ _scaled_indicator(labels, n_clusters, scaled))
        previous = labels.copy()
        indicator_sweeps(np.ascontiguousarray(F @ R), labels, scaled, _ROTATION_SWEEPS)
        if np.array_equal(previous, labels):
            break
    return labels, R


def _rotate(F, n_clusters, scaled, seed, previous=None):
    """Spectral rotation of an embedding ``F``, fresh and (with ``previous``) warm-started.

    With ``previous`` labels, the rotation is also run from them and the
    result with the lower ``||F R - Y_hat||^2`` is kept (the fresh start
    on ties): the partition is fed back as a starting point, never forced.
    Returns ``(labels, R)``.
    """
    F = np.ascontiguousarray(F)
    labels, R = spectral_rotation(F, scaled=scaled, random_state=seed)
    labels = np.asarray(labels, dtype=np.int64)
    if previous is not None and np.all(np.bincount(previous, minlength=n_clusters) > 0):
        warm, R_warm = _warm_rotation(F, previous, n_clusters, scaled)
        if _rotation_objective(F, R_warm, warm, n_clusters, scaled) < _rotation_objective(
            F, R, labels, n_clusters, scaled
        ):
            labels, R = warm, R_warm
    return labels, R


def _match_labels(reference, labels, n_clusters):
    """``labels`` renamed to best match ``reference``, the renaming, and the number that differ.

    The renaming maximises the number of samples with equal labels (linear
    assignment on the k x k contingency table), so a partition that only
    permutes the cluster names counts as unchanged.
    """
    overlap = np.zeros((n_clusters, n_clusters))
    np.add.at(overlap, (reference, labels), 1.0)
    rows, cols = linear_sum_assignment(overlap, maximize=True)
    rename = np.empty(n_clusters, dtype=np.int64)
    rename[cols] = rows
    matched = rename[labels]
    return matched, rename, int(np.sum(matched != reference))


def _scaled_indicator(labels, n_clusters, scaled):
    """``Y (Y^T Y)^{-1/2}`` (``scaled``) or ``Y``; empty clusters give zero columns."""
    n = labels.shape[0]
    Y = np.zeros((n, n_clusters))
    Y[np.arange(n), labels] = 1.0
    if scaled:
        counts = np.bincount(labels, minlength=n_clusters).astype(np.float64)
        Y /= np.sqrt(np.maximum(counts, 1.0))
    return Y


# --------------------------------------------------------------------------- driver


def _check_live(degree, n_clusters):
    """Raise if fewer anchors than clusters are connected to samples (``degree = Z 1``)."""
    live = int(np.sum(degree > 0))
    if live < n_clusters:
        raise ValueError(
            f"only {live} anchors are connected to samples, fewer than "
            f"n_clusters={n_clusters}; use more anchors or fewer clusters"
        )


def _feedback_value(scores, redundancy):
    """``sum_v max(a_v, 0)^2 / c_v``: the partition's agreement under its best weights.

    For agreements ``a`` and redundancies ``c`` the weights of :func:`_agreement_weights`,
    ``w ∝ max(a, 0) / c``, maximise ``sum_v w_v a_v`` over ``w >= 0`` with
    ``sum_v c_v w_v^2 = 1`` (copies share one unit of weight); this is the square of
    that maximum. The feedback alternates this weight step with the partition.
    """
    return float(np.sum(np.maximum(scores, 0.0) ** 2 / redundancy))


def _feedback(
    build,
    weights,
    *,
    view_graphs,
    score_index,
    prior,
    redundancy,
    n_clusters,
    max_iter,
    learn,
    verbose,
    start,
    header,
):
    """The feedback loop of DRMC.

    ``build(weights, previous)`` builds the consensus graph under
    ``weights``, embeds it and rotates it (warm-started from ``previous``
    labels when given) and returns ``(F, labels, R)``; ``build(weights, None,
    rotate=False)`` makes the graph of ``weights`` current again, without
    rotating (the driver keeps the previous graph when it can). ``labels`` are those
    of the rows the rotation ran on, and ``score_index`` picks the rows of
    the view graphs among them (None: the same rows). A round is kept only if
    its partition raises :func:`_feedback_value`; otherwise the previous
    partition, its weights and its graph are restored and the loop stops.
    Returns a dict of results (``F``, ``R``, ``labels``, ``initial_labels``,
    ``weights``, ``scores``, ``weight_history``, ``n_iter``).
    """
    F, labels, R = build(weights, None)
    initial_labels = labels.copy()
    weight_history = [weights.copy()]
    scores = None
    log_message(
        "DRMC",
        f"init: {header}, weights {np.round(weights, 3)} ({time.perf_counter() - start:.2f} s)",
        verbose,
    )
    n_iter = 0
    kept = None
    for iteration in range(1, max_iter + 2 if learn else 1):
        sub = labels if score_index is None else labels[score_index]
        scores = np.array([_partition_agreement(G, sub, n_clusters) for G in view_graphs])
        value = _feedback_value(scores, redundancy)
        if kept is not None and value <= kept[0]:
            # The partition agrees less with the views than the one before: keep that one.
            _, F, R, labels, weights, scores = kept
            build(weights, None, rotate=False)
            log_message("DRMC", f"feedback {iteration - 1} undone: agreement fell", verbose)
            break
        kept = (value, F, R, labels, weights, scores)
        if iteration > max_iter:
            break
        new_weights = _agreement_weights(scores / redundancy, prior)
        n_iter = iteration
        if np.sum(np.abs(new_weights - weights)) <= _WEIGHT_TOL:
            break
        weights = new_weights
        weight_history.append(weights.copy())
        F, new_labels, R = build(weights, labels)
        new_labels, rename, changed = _match_labels(labels, new_labels, n_clusters)
        # Column c of R scores cluster c: move the columns with the names.
        R_renamed = np.empty_like(R)
        R_renamed[:, rename] = R
        labels, R = new_labels, R_renamed
        log_message(
            "DRMC",
            f"feedback {iteration}: agreement {np.round(scores, 3)}, weights "
            f"{np.round(weights, 3)}, {changed} labels changed "
            f"({time.perf_counter() - start:.2f} s)",
            verbose,
        )
        if changed == 0:
            break
    return {
        "F": F,
        "R": R,
        "labels": labels,
        "initial_labels": initial_labels,
        "weights": weights,
        "scores": scores,
        "weight_history": weight_history,
        "n_iter": n_iter,
    }


def fit_drmc(
    blocks,
    n_clusters,
    *,
    n_anchors,
    n_neighbors,
    view_weights,
    align_anchors,
    scaling,
    max_iter,
    random_state,
    n_threads=None,
    verbose=0,
    subsample=_SUBSAMPLE,
    rotation_sample=None,
):
    """Run DRMC on the views of ``blocks`` (a :class:`RowBlocks`); return the fitted pieces.

    The one driver of :class:`~mvlearn_ext.cluster.DRMC`, in memory (the views as
    one block) and by row blocks. Passes over the blocks: one for the column
    statistics and the rows of the subsamples, then one per graph built (the anchor
    degrees and ``Z Z^T`` folded in block order, see
    :mod:`~mvlearn_ext.cluster._drmc_blocks`), then, when the rotation ran on a
    sample of the rows, a labelling pass that reads no data. Everything else (the
    starting weights, the view-redundancy scores, the anchor k-means, the per-view
    graphs of the agreement scores) runs on random subsamples of the rows.

    Parameters
    ----------
    blocks : RowBlocks
        The views (valid: finite, numeric, at least ``n_clusters`` rows).
    n_clusters, n_anchors : int
        ``k`` and the number of anchors ``m`` (``k <= m <= n``).
    n_neighbors : int
        Anchors each sample is linked to in every graph (at most ``m - 1``).
    view_weights : {"agreement", "factor", "uniform"}
        The starting weights and whether the feedback learns them.
    align_anchors : bool
        Per-view k-means anchors matched by the Hungarian method.
    scaling : {"zscore"} or None
        Per-feature z-scores of the views, or the features as given.
    max_iter : int
        Most feedback rounds.
    random_state : RandomState
        The first draws seed the starting weights, the anchors and the rotation.
    n_threads : int or None
        Threads of the compiled kNN kernel (``align_anchors``), of the view scores
        and of the tiles of rows of the anchor graphs (in memory; over dask, the
        blocks run in parallel instead). The labels do not depend on it.
    verbose : int
        Lines per round and progress bars over the blocks.
    subsample : int
        Rows of the anchor k-means and the view scores (a random subsample above).
    rotation_sample : int or None
        Above this many samples the rotation runs on that many random rows (with
        the rows of the view scores) and every sample is labelled by the linearised
        rotation gain; None rotates every row.

    Returns
    -------
    dict
        ``labels``, ``initial_labels`` (None when the rotation ran on a sample),
        ``n_labels_changed``, ``means``, ``scales``, ``factors``, ``anchors``
        (scaled), ``ratios``, ``R``, ``weights``, ``scores``, ``weight_history``,
        ``n_iter``, ``reference``, ``memberships`` and, when the rotation ran on
        every row, ``graph`` (m x n) and ``F``.
    """
    start = time.perf_counter()
    n, k, V = blocks.n_samples, n_clusters, len(blocks.widths)
    widths = list(blocks.widths)
    verbose = bool(verbose)
    sampled = rotation_sample is not None and n > rotation_sample

    # The seeds: starting weights and redundancy, anchors, rotation.
    prior_seed = int(random_state.randint(np.iinfo(np.int32).max))
    kmeans_seed = int(random_state.randint(np.iinfo(np.int32).max))
    rotation_seed = int(random_state.randint(np.iinfo(np.int32).max))
    learn = view_weights in ("agreement", "factor") and V > 1 and max_iter > 0

    # 1. One pass: finiteness, column moments, the rows of the subsamples.
    redundancy_rows = (
        draw_rows(np.random.RandomState(prior_seed), n, _REDUNDANCY_ROWS)
        if learn
        else np.empty(0, np.int64)
    )
    # The rows of the factor scores, drawn as fit_view_weights draws them.
    score_state = np.random.RandomState(prior_seed)
    score_rows = (
        draw_rows(score_state, n, DEFAULT_MAX_SAMPLES)
        if _scores_views(view_weights, V)
        else np.empty(0, np.int64)
    )
    sub_rows = _subsample_rows(n, kmeans_seed, subsample)
    kmeans_rows = np.arange(n) if sub_rows is None else sub_rows
    wanted = np.union1d(np.union1d(redundancy_rows, score_rows), kmeans_rows)
    moments, picked = statistics_pass(
        blocks, wanted, n_clusters=n_clusters, progress=verbose, name="DRMC"
    )
    means, scales = None, None
    if scaling is not None:
        stats = [
            scaling_from_moments(m_v, unit_view_variance=False, dtype=X.dtype)
            for m_v, X in zip(moments, blocks.views, strict=True)
        ]
        means, scales = [m for m, _ in stats], [s for _, s in stats]

    def rows_of(subset):
        where = np.searchsorted(wanted, subset)
        return [P[where] for P in picked]

    # 2. Starting weights, redundancy, anchors and the per-view graphs of the scores.
    scored = {}
    tile_threads = 1 if blocks.uses_dask else int(n_threads or 1)
    prior, factors = _starting_weights(
        widths, view_weights, k, rows_of(score_rows), score_state, keep=scored,
        n_threads=tile_threads,
    )  # fmt: skip
    redundancy = np.ones(V)
    if learn:
        # The factor scores drew the same rows: their neighbourhoods are the redundancy's.
        same_rows = np.array_equal(score_rows, redundancy_rows)
        redundancy = np.asarray(
            _view_redundancy(
                rows_of(redundancy_rows), prior_seed,
                known=scored.get("neighbours") if same_rows else None,
            )
        )  # fmt: skip
    joint, views = _scaled_joint(rows_of(kmeans_rows), means, scales, factors)

    # The graphs of the scores on random anchors do not need the k-means anchors: on
    # two or more threads they are built beside the anchor k-means.
    beside = learn and not align_anchors and tile_threads > 1
    tasks = [
        partial(_initial_anchors, views, joint, n_anchors, align_anchors, kmeans_seed,
                n_neighbors, n_threads),
    ]  # fmt: skip
    if beside:
        tasks.append(
            partial(_view_graphs, views, None, n_anchors, kmeans_seed, n, n_neighbors, subsample,
                    tile_threads - 1)
        )  # fmt: skip
    done = map_tasks(lambda task: task(), tasks, len(tasks))
    anchors, reference = done[0]
    view_graphs = done[1] if beside else None
    if learn and not beside:
        own = anchors if align_anchors else None
        view_graphs = _view_graphs(
            views, own, n_anchors, kmeans_seed, n, n_neighbors, subsample, tile_threads
        )
    del joint, views

    # 3. The rows the rotation runs on; the view scores' rows among them.
    if not sampled:
        rotation_rows, score_index = np.arange(n), sub_rows
    else:
        drawn = np.random.default_rng([rotation_seed, 19]).choice(
            n, size=rotation_sample, replace=False
        )
        rotation_rows = np.union1d(drawn, kmeans_rows)
        score_index = np.searchsorted(rotation_rows, kmeans_rows)
    local_rotation_rows = blocks.local_rows(rotation_rows)

    weights = np.full(V, 1.0 / V) if view_weights == "uniform" else prior
    base = dict(
        means=means,
        scales=scales,
        factors=factors,
        anchors=anchors,
        n_neighbors=n_neighbors,
        n_threads=tile_threads,
    )
    # One block in memory: each view's distances to the anchors do not change between
    # graphs; keep them when they are small (Handwritten: 19 MB).
    in_memory = blocks.n_blocks == 1 and not blocks.uses_dask
    if in_memory and n * n_anchors * V <= _DISTANCE_CACHE:
        base["cache"] = {}
    last = {}
    # One block in memory: the graph before the last one is kept too (its neighbour
    # lists are small beside the views), so that an undone round restores it rather than
    # building it again (the same numbers, one pass less). Over row blocks only one is kept.
    before = {} if in_memory else None
    passes = [0]

    def build(weights, previous, rotate=True):
        if not rotate and before and np.array_equal(before["weights"], weights):
            last.clear()
            last.update(before)
            return None
        if before is not None:
            before.clear()
            before.update(last)
        ratios = _feature_factors(widths, weights) / factors
        degree, gram, sample, kept = None, None, [], []
        # Only the last graph's neighbour lists are kept (12 bytes per neighbour), and in
        # memory the ones before them (in `before`).
        last.pop("neighbours", None)
        for part in blocks.map(
            _graph_task, dict(base, ratios=ratios, keep=sampled), local_rotation_rows,
            progress=verbose, desc=f"DRMC graph {passes[0]}",
        ):  # fmt: skip
            degree = part["degree"] if degree is None else degree + part["degree"]
            gram = part["gram"] if gram is None else gram + part["gram"]
            sample.append(part["sample"])
            if sampled:
                kept.append(part["neighbours"])
        if sampled:
            last["neighbours"] = kept
        passes[0] += 1
        if previous is None:
            _check_live(degree, k)
        projection = regularised_projection_from_gram(gram, degree, n, k)
        graph_rows = sp.vstack(sample, format="csr")
        last.update(
            weights=weights.copy(), ratios=ratios, projection=projection, graph_rows=graph_rows,
            degree=degree,
        )  # fmt: skip
        if not rotate:
            return None
        F = np.asarray(graph_rows @ projection)
        labels, R = _rotate(F, k, True, rotation_seed, previous)
        return F, labels, R

    result = _feedback(
        build,
        weights,
        view_graphs=view_graphs,
        score_index=score_index,
        prior=prior,
        redundancy=redundancy,
        n_clusters=k,
        max_iter=max_iter,
        learn=learn,
        verbose=verbose,
        start=start,
        header=f"{n} samples in {blocks.n_blocks} blocks, {V} views, {n_anchors} anchors",
    )
    rotated = result.pop("labels")
    result.update(
        means=means, scales=scales, factors=factors, ratios=last["ratios"], anchors=anchors,
        reference=reference, n_labels_changed=_match_labels(
            result["initial_labels"], rotated, k
        )[2],
    )  # fmt: skip
    if not sampled:
        labels = rotated.astype(np.intp)
        graph = last["graph_rows"].T.tocsr()
        mass = np.asarray(graph @ _scaled_indicator(labels, k, False))
        result.update(graph=graph, initial_labels=result["initial_labels"].astype(np.intp))
    else:
        slope, offset = _assignment_rule(result["F"], result["R"], rotated, k)
        params = dict(
            projection=last["projection"], rotation=result["R"], slope=slope, offset=offset
        )
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
        del result["F"]
        result.update(initial_labels=None)
    result.update(labels=labels, memberships=_memberships(mass, last["degree"]))
    log_message(
        "DRMC",
        f"labelled {n} samples after {passes[0]} graph passes "
        f"({time.perf_counter() - start:.2f} s)",
        verbose,
    )
    return result
