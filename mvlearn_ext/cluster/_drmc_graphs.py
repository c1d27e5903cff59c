"""DRMC's numerical building blocks: view scaling, kNN anchor graphs and anchors.

Part of the DRMC reconstruction (see :class:`~mvlearn_ext.cluster.DRMC`): the
feature factors that put the view weights into the distances, the
parameter-free kNN anchor graphs (Nie et al., 2014) computed block by block of
rows, and the anchors (k-means from k-means++ seeds, or each view's
own anchors aligned by the Hungarian method). Every function assumes valid,
standardised float64 input; the driver is :mod:`mvlearn_ext.cluster._drmc_solver`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.utils.extmath import randomized_svd

from mvlearn_ext._lib._kernels import anchor_graph
from mvlearn_ext.cluster._hagmvc_pyramid import _kmeanspp_seeds
from mvlearn_ext.cluster._kernels import smallest_in_rows
from mvlearn_ext.cluster._preprocessing import stack_scaled_views
from mvlearn_ext.cluster._view_weights import fit_view_weights
from mvlearn_ext.utils._threads import map_tasks, row_tiles

#: Neighbours (anchors) of every sample in the parameter-free kNN anchor graphs.
_N_NEIGHBORS = 5
#: Neighbours of every sample when every sample is an anchor (a kNN graph of the samples).
_N_NEIGHBORS_SAMPLES = 10
#: Lloyd iterations of the k-means that places the anchors. The anchors are the nodes of
#: a kNN graph, not centres to be estimated: a few steps move them from the seeds into
#: the bulk of their cells, and the steps after that, each as costly as the first, barely
#: change which anchors a sample is near.
_KMEANS_MAX_ITER = 5
#: Dimension of the principal subspace in which the anchor k-means runs on wider rows:
#: it keeps the cells of the full k-means on the development data (Handwritten's 649
#: scaled features, 400 anchors: ACC 0.976 against 0.977) at a third of its cost.
_ANCHOR_PCA_DIM = 50
#: Rows used by the anchor k-means and by the view scores (a random subsample above).
_SUBSAMPLE = 20_000
#: Floor, relative to the largest, of the starting weights in the stored scaling.
_PRIOR_FLOOR = 0.01
#: Fewest views for which ``view_weights="factor"`` scores the views: with two, the
#: agreement of the one pair does not tell their qualities apart (the factor fit is
#: not identified, and both views would get the same score).
_FACTOR_MIN_VIEWS = 3


# --------------------------------------------------------------------------- view scaling


def _prior_weights(widths):
    """Weights before any partition is known: proportional to ``sqrt(d_v)``.

    In the parametrisation of :func:`_feature_factors` (each view scaled to
    unit total variance, then weighted), equal weights are the per-view
    balanced concatenation and weights ``∝ d_v`` the plain z-scored one; the
    prior sits halfway (geometric mean) between the two.
    """
    w = np.sqrt(np.asarray(widths, dtype=np.float64))
    return w / w.sum()


def _scores_views(view_weights, n_views):
    """Whether the starting weights come from :func:`fit_view_weights`."""
    return view_weights == "factor" and n_views >= _FACTOR_MIN_VIEWS


def _starting_weights(
    widths, view_weights, n_clusters, score_views, random_state, keep=None, n_threads=1
):
    """``(prior, factors)``: the starting weights and the per-view factors of the stored views.

    ``view_weights="factor"`` with at least :data:`_FACTOR_MIN_VIEWS` views: the
    label-free weights of :func:`fit_view_weights` (``rule="factor"``) on
    ``score_views``, the views or their scoring rows drawn from ``random_state`` (a
    RandomState) as that function draws them; otherwise :func:`_prior_weights`.
    The stored views carry the starting weights, floored so that no view is lost
    before the feedback has seen it; the graphs reweight from there. ``keep`` is
    passed to :func:`fit_view_weights` (it receives the neighbour lists of the scores),
    and so is ``n_threads``.
    """
    if _scores_views(view_weights, len(widths)):
        prior = fit_view_weights(
            score_views,
            n_clusters,
            rule="factor",
            random_state=random_state,
            keep=keep,
            n_threads=n_threads,
        ).weights_
    else:
        prior = _prior_weights(widths)
    floored = np.maximum(prior, _PRIOR_FLOOR * prior.max())
    return prior, _feature_factors(widths, floored / floored.sum())


def _feature_factors(widths, weights):
    """Per-view multiplier of the z-scored features: ``sqrt(w_v / d_v)``.

    The squared distance in the joint space is then
    ``sum_v w_v ||x_v - a_v||^2 / d_v``: view ``v`` contributes ``w_v``
    times its mean squared feature difference, whatever its width.
    """
    return np.sqrt(np.asarray(weights, dtype=np.float64) / np.asarray(widths, dtype=np.float64))


def _scaled_joint(Xs, means, scales, factors):
    """Standardised views (``means``/``scales``, None: as given) times ``factors``.

    Returns ``(joint, blocks)``: the concatenation and its column blocks, written
    in place (no per-view temporaries).
    """
    joint, blocks = stack_scaled_views(Xs, means, scales)
    for block, f in zip(blocks, factors, strict=True):
        block *= f
    return joint, blocks


# --------------------------------------------------------------------------- anchor graphs


def _knn_rows(D, n_neighbors):
    """Parameter-free kNN weights (Nie et al., 2014) of every row of squared distances ``D``.

    Keeps the ``n_neighbors`` smallest entries of each row (ties to the
    lower anchor index) and weights them ``(d_{k+1} - d_j) / (k d_{k+1} -
    sum_h d_h)`` (uniform when the denominator is 0). Returns
    ``(columns, weights)`` of shape (rows, n_neighbors).
    """
    rows, m = D.shape
    k = n_neighbors
    if k >= m:
        cols = np.broadcast_to(np.arange(m), (rows, m)).copy()
        return cols, np.full((rows, m), 1.0 / m)
    # The k + 1 smallest of each row by (distance, anchor index), in one pass.
    cand, dist, tied = smallest_in_rows(D, k + 1)
    if tied.any():
        # The (k + 1)-th distance is tied with the next: the candidates are those of a
        # partition of the row, as the weights' reference rule takes them.
        rows = np.flatnonzero(tied)
        cand[rows], dist[rows] = _partition_candidates(D[rows], k)
    last = dist[:, k : k + 1]
    gap = last - dist[:, :k]
    den = gap.sum(axis=1, keepdims=True)
    weights = np.where(den > 0, gap / np.where(den > 0, den, 1.0), 1.0 / k)
    return cand[:, :k], weights


def _partition_candidates(D, k):
    """The ``k + 1`` candidates of every row of ``D`` by ``np.argpartition``, by (distance, index).

    The rule of rows whose ``(k + 1)``-th smallest distance is tied with the next.
    """
    cand = np.argpartition(D, k, axis=1)[:, : k + 1]
    dist = np.take_along_axis(D, cand, axis=1)
    order = np.lexsort((cand, dist), axis=1)
    return np.take_along_axis(cand, order, axis=1), np.take_along_axis(dist, order, axis=1)


def _to_graph(cols, weights, m):
    """CSR graph of shape (m, n) (samples as columns) from per-sample neighbour lists."""
    n, k = cols.shape
    indptr = np.arange(0, n * k + 1, k)
    G = sp.csr_matrix((weights.ravel(), cols.ravel(), indptr), shape=(n, m))
    return G.T.tocsr()


def _anchor_graphs(Xs, anchors, ratios, *, per_view, n_neighbors, cache=None, n_threads=1):
    """The weighted joint kNN anchor graph and, with ``per_view``, each view's own.

    ``Xs`` and ``anchors`` are the views and anchor blocks in the scaled
    space of the fit; the joint squared distance is
    ``sum_v ratios_v^2 ||x_v - a_v||^2``. Distances are computed tile by
    tile of rows (:func:`~mvlearn_ext.utils._threads.row_tiles`, on
    ``n_threads`` threads; the graphs do not depend on it) as
    ``||x||^2 - 2 x.a + ||a||^2`` (BLAS), never as an n x m x V array.
    Returns ``(joint, views)`` of CSR graphs of shape (m, n), ``views`` None
    without ``per_view``. ``cache`` (a dict, or None) keeps each view's squared
    distances between calls on the same views and anchors, so that a new
    weighting only re-sums them (the same numbers).
    """
    n = Xs[0].shape[0]
    m = anchors[0].shape[0]
    k = min(n_neighbors, m - 1) if m > 1 else 1
    sq_anchors = [np.einsum("ij,ij->i", A, A) for A in anchors]
    minus_twice = [-2.0 * A.T for A in anchors]
    joint_cols = np.empty((n, k), dtype=np.int64)
    joint_w = np.empty((n, k))
    view_cols = [np.empty((n, k), dtype=np.int64) for _ in Xs] if per_view else None
    view_w = [np.empty((n, k)) for _ in Xs] if per_view else None

    def tile(rows):
        D = np.zeros((rows.stop - rows.start, m))
        for v, (X, A2, a2, r) in enumerate(zip(Xs, minus_twice, sq_anchors, ratios, strict=True)):
            Dv = None if cache is None else cache.get((rows.start, v))
            if Dv is None:
                block = X[rows]
                Dv = block @ A2
                Dv += np.einsum("ij,ij->i", block, block)[:, None]
                Dv += a2[None, :]
                np.maximum(Dv, 0.0, out=Dv)
                if cache is not None:
                    cache[(rows.start, v)] = Dv
            if per_view:
                view_cols[v][rows], view_w[v][rows] = _knn_rows(Dv, k)
            if r != 0.0:
                D += (r * r) * Dv
        joint_cols[rows], joint_w[rows] = _knn_rows(D, k)

    map_tasks(tile, row_tiles(n), n_threads)
    joint = _to_graph(joint_cols, joint_w, m)
    views = None
    if per_view:
        views = [_to_graph(c, w, m) for c, w in zip(view_cols, view_w, strict=True)]
    return joint, views


# --------------------------------------------------------------------------- initialisation


def _align_views(graphs):
    """Hungarian alignment of per-view anchor sets to a reference view.

    ``graphs[v]`` is the CSR graph (n x m) of view ``v`` on its own anchors.
    The agreement of views ``u`` and ``v`` is the largest total overlap
    ``max_P tr(P^T Z_u^T Z_v)`` over permutations ``P`` (a linear assignment
    on the m x m overlap matrix). The reference is the view that agrees most
    with all the others (the medoid, lowest index on ties), so that the
    result does not depend on the order of the views. Returns the
    reference and, per view, the permutation ``perm`` with anchor
    ``perm[j]`` of the view matched to anchor ``j`` of the reference.
    """
    n_views = len(graphs)
    m = graphs[0].shape[1]
    agreement = np.zeros((n_views, n_views))
    for u in range(n_views):
        for v in range(u + 1, n_views):
            overlap = (graphs[u].T @ graphs[v]).toarray()
            rows, cols = linear_sum_assignment(overlap, maximize=True)
            agreement[u, v] = agreement[v, u] = overlap[rows, cols].sum()
    reference = int(np.argmax(agreement.sum(axis=1)))
    # The matching is always solved with the reference's anchors as rows, so
    # that ties (anchors that overlap nothing) are broken the same way
    # whatever the order of the views.
    perms = []
    for v in range(n_views):
        if v == reference:
            perms.append(np.arange(m))
            continue
        overlap = (graphs[reference].T @ graphs[v]).toarray()
        _, cols = linear_sum_assignment(overlap, maximize=True)
        perms.append(cols)
    return reference, perms


def _subsample_rows(n, seed, subsample=_SUBSAMPLE):
    """The rows of the anchor k-means and of the view scores (None: all ``n`` rows).

    Above ``subsample`` samples they run on that many random rows, so that their
    cost does not grow with ``n``; the driver reads these rows in its first pass.
    """
    if n <= subsample:
        return None
    return np.sort(np.random.RandomState(seed).choice(n, size=subsample, replace=False))


def _kmeans_anchors(X, n_anchors, seed):
    """Anchors: the cells of a k-means of the rows of ``X`` (k-means++ seeds, then Lloyd).

    The seeds are HAGMVC's (plain D^2 sampling, one draw per anchor, from the
    Gram matrix of the rows up to a few thousand rows) rather than scikit-learn's
    greedy ``2 + log(m)`` draws: with hundreds of anchors the greedy seeding
    cost several times the Lloyd iterations. Rows wider than :data:`_ANCHOR_PCA_DIM`
    features are clustered on their top principal components (randomized
    SVD), and each anchor is the mean of its cell in the full space (for a
    cell left empty, the row nearest its centre); the components and that
    k-means run in single precision, since they only decide which rows share a
    cell (at half the cost of the largest products). ``X`` holds the rows of
    :func:`_subsample_rows` (a random subsample rather than mini-batch
    k-means, which took 45 of 79 s at n = 10^5 with 200 anchors).
    """
    n, d = X.shape
    if n_anchors >= n:  # every row is an anchor (k-means with one centre per row)
        return np.array(X, dtype=np.float64)
    wide = d > _ANCHOR_PCA_DIM
    if wide:
        mean = X.mean(axis=0)
        centred = (X - mean).astype(np.float32)
        U, S, _ = randomized_svd(centred, _ANCHOR_PCA_DIM, n_iter=2, random_state=seed)
        P = U * S
    else:
        P = X
    centres = P[_kmeanspp_seeds(P, n_anchors, np.random.RandomState(seed))]
    model = KMeans(n_clusters=n_anchors, init=centres, n_init=1, max_iter=_KMEANS_MAX_ITER)
    model.fit(P)
    if not wide:
        return np.asarray(model.cluster_centers_, dtype=np.float64)
    cells = sp.csr_matrix((np.ones(n), (model.labels_, np.arange(n))), shape=(n_anchors, n))
    sizes = np.asarray(cells.sum(axis=1)).ravel()
    anchors = np.asarray(cells @ X, dtype=np.float64)
    filled = sizes > 0
    anchors[filled] /= sizes[filled, None]
    empty = model.cluster_centers_[~filled]
    if empty.size:
        nearest = (np.einsum("ij,ij->i", P, P)[None, :] - 2.0 * empty @ P.T).argmin(axis=1)
        anchors[~filled] = X[nearest]
    return anchors


def _initial_anchors(Xs, X_joint, n_anchors, align_anchors, seed, n_neighbors, n_threads=None):
    """Anchors aligned across views: row ``j`` of every block is the same prototype.

    ``align_anchors=False``: the view blocks of k-means centres of the joint
    (scaled) matrix, aligned by construction. ``True``: each view's own
    k-means anchors, matched to the view that agrees most with the others
    by the Hungarian method on the anchor overlaps of their kNN graphs
    (:func:`_align_views`). Every k-means gets the same seed.
    """
    widths = [X.shape[1] for X in Xs]
    reference = None
    if align_anchors and len(Xs) > 1:
        anchors = [_kmeans_anchors(X, n_anchors, seed) for X in Xs]
        graphs = [
            anchor_graph(X, A, n_neighbors=min(n_neighbors, n_anchors - 1), n_threads=n_threads)
            for X, A in zip(Xs, anchors, strict=True)
        ]
        reference, perms = _align_views(graphs)
        return [A[p] for A, p in zip(anchors, perms, strict=True)], reference
    joint = _kmeans_anchors(X_joint, n_anchors, seed)
    bounds = np.cumsum([0, *widths])
    blocks = [joint[:, a:b].copy() for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return blocks, reference


def _view_graphs(
    Xs, own_anchors, n_anchors, seed, n_samples, n_neighbors, subsample=_SUBSAMPLE, n_threads=1
):
    """Each view's kNN graph on anchors chosen without the other views (for the scores).

    Not on the view's blocks of the joint anchors: those are means of cells
    formed with the other views, and a sample is always a little closer to
    the cell it helped to form, which leaks the joint partition into the
    graph of a pure-noise view (agreement 0.15 instead of 0 for a 50-feature
    noise view beside two informative views). The anchors are the same
    ``n_anchors`` random rows in every view (no k-means: they only serve
    the scores), or the per-view k-means anchors of ``align_anchors=True``
    when given. ``Xs`` holds the rows of :func:`_subsample_rows` of
    ``n_samples`` samples; the anchors are drawn from ``seed`` after those rows.
    ``n_threads`` is passed to :func:`_anchor_graphs`. The distances are formed
    in single precision (half the cost of their products): the graphs only
    serve the scores, whose neighbour sets it changes at near-ties alone.
    """
    rng = np.random.RandomState(seed)
    if n_samples > subsample:  # the draw of _subsample_rows, which the anchors follow
        rng.choice(n_samples, size=subsample, replace=False)
    n_used = Xs[0].shape[0]
    picks = None
    if own_anchors is None:
        picks = np.sort(rng.choice(n_used, size=min(n_anchors, n_used), replace=False))
    graphs = []
    for v, X in enumerate(Xs):
        A = X[picks] if picks is not None else own_anchors[v]
        graphs.append(
            _anchor_graphs(
                [np.asarray(X, dtype=np.float32)],
                [np.ascontiguousarray(A, dtype=np.float32)],
                [1.0],
                per_view=False,
                n_neighbors=n_neighbors,
                n_threads=n_threads,
            )[0]
        )
    return graphs


# --------------------------------------------------------------------------- prediction


def _memberships(mass, degree):
    """Fraction of each anchor's mass in each cluster (zero rows for anchors of zero degree).

    ``mass`` is ``Z Y`` (m x k, ``Y`` the 0/1 indicator) and ``degree`` ``Z 1``.
    """
    memberships = np.array(mass, dtype=np.float64)
    live = degree > 0
    memberships[live] /= degree[live, None]
    memberships[~live] = 0.0
    return memberships


def _predict_rows(Xs, means, scales, factors, anchors, ratios, memberships, n_neighbors):
    """Labels of samples by their kNN anchor graph and the anchors' memberships."""
    _, views = _scaled_joint(Xs, means, scales, factors)
    graph, _ = _anchor_graphs(views, anchors, ratios, per_view=False, n_neighbors=n_neighbors)
    scores = np.asarray(graph.T @ memberships)
    return np.argmax(scores, axis=1).astype(np.intp)
