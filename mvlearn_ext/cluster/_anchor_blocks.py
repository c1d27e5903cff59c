"""SMVSC, FPMVS-CAG and EOMSC-CA by row blocks: views larger than memory.

The solvers of :class:`~mvlearn_ext.cluster.SMVSC`, :class:`~mvlearn_ext.cluster.FPMVSCAG`
and :class:`~mvlearn_ext.cluster.EOMSCCA` touch the samples through row-wise steps and
sums over rows, so each outer iteration is a pass over the row blocks
(:meth:`~mvlearn_ext.cluster._blockwise.RowBlocks.map`, folded in block order, so that a
fit does not depend on the number of workers or on where the blocks ran).

**SMVSC and FPMVS-CAG, variant="code"** (:func:`fit_smvsc_blocks`). An iteration of the
authors' code needs ``X_v Z^T`` (``d_v x m``) of the previous graph for the ``W_v`` and
``A`` steps; the Z step is a simplex projection of every sample's own column; the view
weights need ``||X_v - W_v A Z||^2`` and the recorded objective ``||Z||^2``. A pass
takes ``(W, A, sum_v alpha_v^2 + lambda)``, computes the graph of each block by the
in-memory :func:`~mvlearn_ext.cluster._smvsc.code_z_step` and returns those sums and
``Z Z^T`` (``m x m``), from which the embedding's projection comes. The graph is never
stored: it is a function of the block and of the last pass's ``(W, A, alpha)``, and
the label pass recomputes it. The first iteration's ``X_v Z_0^T`` for ``Z_0 = [I_m,
0]`` is the first ``m`` standardised rows, read in the statistics pass, so the start is
exact and depends on the order of the samples, as in memory. A fit reads the data
``n_iter_ + 2`` times.

**variant="paper"**: the ``W``, ``A`` and ``alpha`` steps and the objective of
:class:`~mvlearn_ext.cluster._smvsc._State` only need ``Z Z^T``, ``X_v Z^T`` and
``||X_v||^2``, which a pass returns; the exact Z step
(:func:`~mvlearn_ext.cluster._smvsc.solve_z`) warm-starts each column's QP from the
previous graph, so the graph (``m x n`` float64) is kept, one array per block, in the
calling process, and sent with its block on every pass. A fit reads the data
``n_iter_ + 2`` times.

**EOMSC-CA** (:func:`fit_eomscca_blocks`). The views are read by blocks (two passes
per iteration: the linear term ``B = sum_v alpha_v^2 X_v^T W_v A`` of the graph step,
then the view losses and ``X_v Z^T`` of the new graph), but the graph step itself,
:func:`~mvlearn_ext.cluster._eomsc.connected_bipartite_graph`, runs in the calling
process on the ``n x m`` matrix ``B``: it projects every anchor's *column* onto the
simplex over all ``n`` samples and takes the connected components of the whole
bipartite graph, at every pass of its ``lambda`` search. It is the in-memory code, so
the labels are its labels; the memory it needs is ``O(n m)`` (a few ``n x m`` float64
arrays) instead of ``O(n (m + sum_v d_v))``.

What differs from the in-memory fit, because that one holds every row at once:

* the ``mapstd`` statistics (mean, ``ddof=1`` standard deviation) are merged block by
  block (Chan, Golub & LeVeque), and every sum over rows is a sum of block sums: the
  results equal the in-memory ones to rounding;
* SMVSC/FPMVS-CAG: the embedding's projection comes from the eigenvectors of ``Z Z^T``
  instead of an SVD of ``Z^T`` (the same subspace, to rounding), and the final k-means is
  fitted on the embedding of at most 100000 random rows (all rows below that), then
  every sample gets the nearest centre;
* ``init="kmeans"`` (a k-means of all joined rows) is refused.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.cluster import KMeans

from mvlearn_ext.cluster._base import (
    check_anchors_cover_clusters,
    draw_seeds,
    labels_like_input,
    open_blocks,
    scaling_of_moments,
)
from mvlearn_ext.cluster._blockwise import (
    RowBlocks,
    is_dask_array,
    map_labels,
    statistics_pass,
)
from mvlearn_ext.cluster._common import procrustes
from mvlearn_ext.cluster._lmvsc_blocks import _draw, _projection_from_gram
from mvlearn_ext.cluster._preprocessing import apply_view_scaling
from mvlearn_ext.cluster._smvsc import (
    _OBJECTIVE_FLOOR,
    _normalize_rows,
    _State,
    code_view_weights,
    code_z_step,
    residual_losses,
    solve_z,
    z_problem,
)
from mvlearn_ext.utils._threads import single_threaded_pools

__all__ = ["fit_eomscca_blocks", "fit_smvsc_blocks", "predict_smvsc_blocks"]

#: Rows of the subsample on which the final k-means of SMVSC/FPMVS-CAG is fitted.
KMEANS_SAMPLE = 100_000


# --------------------------------------------------------------------------- shared


def mapstd_from_moments(moments):
    """``(mean, scale)`` of :func:`~mvlearn_ext.cluster._smvsc.mapstd_statistics` from moments.

    ``moments`` is the merged ``(count, mean, M2)`` of one view; the scale is the
    sample standard deviation (``ddof=1``), 1 for a constant feature.
    """
    n, mean, m2 = moments
    mean = np.asarray(mean, dtype=np.float64)
    scale = np.sqrt(np.maximum(m2, 0.0) / (n - 1)) if n > 1 else np.zeros(mean.shape[0])
    eps = np.finfo(np.float64).eps
    scale[scale <= 10.0 * eps * np.maximum(np.abs(mean), 1.0)] = 1.0
    return mean, scale


def _refuse(est, name):
    if est.init != "first":
        raise ValueError(
            f"init={est.init!r} is not available on the block path of {name}: it runs a "
            "k-means of all samples at once; use init='first' (the authors' start)"
        )


def _statistics(est, blocks, name, m):
    """One pass: finiteness, ``mapstd`` statistics and the first ``m`` rows of every view.

    Sets ``est.view_means_`` and ``est.view_scales_`` and returns the first ``m`` rows of
    each view, standardised with them.
    """
    wanted = np.arange(m)
    moments, picked = statistics_pass(
        blocks, wanted, progress=bool(est.verbose), desc=f"{name} statistics"
    )
    scaling_of_moments(est, moments, blocks.views, mapstd_from_moments)
    return apply_view_scaling(picked, est.view_means_, est.view_scales_)


def _anchor_step(XZt, W, A, alpha):
    """The ``W_v`` and ``A`` steps of the authors' codes from ``X_v Z^T`` (``d_v x m``)."""
    if A is not None:
        W = [procrustes(P @ A.T) for P in XZt]
    a2 = alpha**2
    A = procrustes(sum(w * (Wv.T @ P) for w, Wv, P in zip(a2, W, XZt, strict=True)))
    return W, A


def _fold_sum(total, part):
    return part if total is None else total + part


def _fold_list(total, part):
    return list(part) if total is None else [t + p for t, p in zip(total, part, strict=True)]


# --------------------------------------------------------------------------- SMVSC, FPMVS-CAG


def _smvsc_pass_task(p, rows, *views):
    """Graph of one block by the code's Z step, and the sums of one iteration."""
    with single_threaded_pools():
        X = apply_view_scaling(views, p["means"], p["scales"])
        Z = code_z_step(X, p["W"], p["A"], p["scale"], n_threads=p["n_threads"])
        return dict(
            losses=residual_losses(X, p["W"], p["A"], Z),
            XZt=[(Z @ Xv).T for Xv in X],
            sumsq=float(np.sum(Z * Z)),
            gram=Z @ Z.T,
            sample=np.ascontiguousarray(Z[:, rows].T),
        )


def _block_graph(p, X, Z_prev=None):
    """The Z step of the variant on one block (``Z_prev``: the paper variant's warm start)."""
    if p["variant"] == "code":
        return code_z_step(X, p["W"], p["A"], p["scale"], n_threads=p["n_threads"])
    H, B = z_problem(X, p["W"], p["A"], p["alpha"], p["lam"])
    return solve_z(H, B, Z0=Z_prev, n_threads=p["n_threads"])


def _smvsc_embedding(p, views):
    Z = _block_graph(p, apply_view_scaling(views, p["means"], p["scales"]))
    return _normalize_rows(Z.T @ p["projection"])


def _paper_pass_task(p, Z_prev, *views):
    """The paper variant's exact Z step on one block, warm-started, and its sums."""
    with single_threaded_pools():
        X = apply_view_scaling(views, p["means"], p["scales"])
        Z = _block_graph(p, X, Z_prev)
        return dict(
            Z=Z,
            gram=Z @ Z.T,
            XZt=[(Z @ Xv).T for Xv in X],
            norms2=np.array([float(np.sum(Xv * Xv)) for Xv in X]),
        )


def _smvsc_label_task(p, _, *views):
    with single_threaded_pools():
        return p["kmeans"].predict(_smvsc_embedding(p, views)).astype(np.intp)


def _distinct_task(p, _, *views):
    with single_threaded_pools():
        return np.unique(_smvsc_embedding(p, views), axis=0)[: p["k"]]


def _count_distinct(blocks, params, k):
    """Distinct rows of the embedding, counted up to ``k`` over all blocks."""
    seen = set()
    for rows in blocks.map(_distinct_task, dict(params, k=k)):
        seen.update(row.tobytes() for row in rows)
        if len(seen) >= k:
            break
    return len(seen)


def fit_smvsc_blocks(est, Xs):
    """Fit ``est`` (an :class:`SMVSC` or :class:`FPMVSCAG`) by row blocks.

    See the module docstring; the iterations and stopping rules are those of
    :func:`~mvlearn_ext.cluster._smvsc.authors_fit`.

    Called by ``fit``, which runs it with one BLAS/OpenMP thread (the blocks are the parallelism).
    """
    name = type(est).__name__
    _refuse(est, name)
    k = est.n_clusters
    blocks = open_blocks(est, Xs, min_views=2, name=name)
    n = blocks.n_samples
    _, (_, kmeans_seed) = draw_seeds(est.random_state, 2)
    m, d, lam = est._model_settings()
    m = min(m, n)
    start = time.perf_counter()
    first = _statistics(est, blocks, name, m)
    base = dict(
        means=est.view_means_, scales=est.view_scales_, variant=est.variant, lam=lam,
        n_threads=1 if blocks.uses_dask else est.n_jobs,
    )  # fmt: skip
    # Z_0 = [I_m, 0]: Z_0 X_v holds the first m (standardised) rows of X_v.
    XZt = [np.ascontiguousarray(X_v.T) for X_v in first]
    kmeans_rows = _draw(kmeans_seed, n, KMEANS_SAMPLE)
    if est.variant == "code":
        fitted = _code_iterations(est, blocks, base, XZt, d, lam, name, start, kmeans_rows)
        W, A, alpha, z_alpha, history, n_iter, gram, sample = fitted
    else:
        fitted = _paper_iterations(est, blocks, base, XZt, m, d, lam, name, start)
        W, A, alpha, z_alpha, history, n_iter, gram, graphs = fitted
        sample = np.hstack(graphs)[:, kmeans_rows].T
    projection, sigma = _projection_from_gram(gram, est._embedding_size(m))
    params = dict(base, W=W, A=A, alpha=z_alpha, scale=float(np.sum(z_alpha**2)) + lam)
    params["projection"] = projection
    F = _normalize_rows(sample @ projection)
    if np.unique(F, axis=0).shape[0] < k:
        if est.variant == "code":
            n_distinct = _count_distinct(blocks, params, k)
        else:
            n_distinct = np.unique(_normalize_rows(np.hstack(graphs).T @ projection), axis=0)
            n_distinct = n_distinct.shape[0]
        if n_distinct < k:
            raise ValueError(
                f"n_clusters={k} is more than the {n_distinct} distinct rows "
                "of the learned embedding: the anchor graph cannot separate that many "
                "clusters. Lower n_clusters or use more anchors (n_anchors)"
            )
    kmeans = KMeans(n_clusters=k, n_init=est.n_init, random_state=kmeans_seed).fit(F)
    params["kmeans"] = kmeans
    if est.variant == "code":
        labels = np.concatenate(
            list(
                blocks.map(
                    _smvsc_label_task, params, progress=bool(est.verbose), desc=f"{name} labels"
                )
            )
        )
    else:
        labels = np.concatenate(
            [kmeans.predict(_normalize_rows(Z.T @ projection)).astype(np.intp) for Z in graphs]
        )
    est._log(f"embedding, k-means and labels done ({time.perf_counter() - start:.2f} s)")

    est.n_anchors_, est.n_components_ = m, d
    est.projections_ = W
    est.consensus_anchors_ = A
    est.anchors_ = [(Wv @ A).T for Wv in W]
    est.anchor_graph_ = None
    est.embedding_ = None
    est.singular_values_ = sigma
    est._projection = projection
    est._z_step_weights = z_alpha
    est.view_weights_ = alpha
    est.objective_ = np.asarray(history)
    est.n_iter_ = int(n_iter)
    est.kmeans_ = kmeans
    est.labels_ = labels_like_input(labels, Xs, blocks)
    return est


def _code_iterations(est, blocks, base, XZt, d, lam, name, start, sample_rows):
    """:func:`~mvlearn_ext.cluster._smvsc.authors_fit`, one pass over the blocks per iteration."""
    W = [np.eye(width, d) for width in blocks.widths]
    A = None
    n_views = len(blocks.widths)
    alpha = np.full(n_views, 1.0 / n_views)
    z_alpha = alpha
    history = []
    n_iter = 0
    local = blocks.local_rows(sample_rows)
    for n_iter in range(1, est.max_iter + 1):
        W, A = _anchor_step(XZt, W, A, alpha)
        z_alpha = alpha
        params = dict(base, W=W, A=A, scale=float(np.sum(alpha**2)) + lam)
        losses, XZt, sumsq, gram, sample = None, None, 0.0, None, []
        for part in blocks.map(
            _smvsc_pass_task, params, local, progress=bool(est.verbose),
            desc=f"{name} iteration {n_iter}",
        ):  # fmt: skip
            losses = _fold_sum(losses, part["losses"])
            XZt = _fold_list(XZt, part["XZt"])
            sumsq += part["sumsq"]
            gram = _fold_sum(gram, part["gram"])
            sample.append(part["sample"])
        alpha = code_view_weights(losses, est._code_weight_power)
        history.append(float(np.sum(alpha**2 * losses) + lam * sumsq))
        est._log(
            f"iteration {n_iter}: objective {history[-1]:.8g} "
            f"({time.perf_counter() - start:.2f} s)"
        )
        if history[-1] < _OBJECTIVE_FLOOR:
            break
        if n_iter >= max(est._code_min_iter, 2):
            change = abs(history[-2] - history[-1]) / max(abs(history[-2]), 1e-300)
            if change < est.tol:
                break
    return W, A, alpha, z_alpha, history, n_iter, gram, np.vstack(sample)


def _paper_iterations(est, blocks, base, XZt, m, d, lam, name, start):
    """:func:`~mvlearn_ext.cluster._smvsc.smvsc_fit` on the sums of one pass per iteration.

    The ``W``, ``A`` and ``alpha`` steps and the objective are those of
    :class:`~mvlearn_ext.cluster._smvsc._State`, which only needs ``Z Z^T``, ``X_v Z^T``
    and ``||X_v||^2``; the Z step warm-starts each block's QP from its previous graph,
    so the graph (``m x n``) is kept, one array per block, in this process.
    """
    n_views = len(blocks.widths)
    state = _State.__new__(_State)  # the sums stand for the views
    state.views = None
    state.W = [np.eye(width, d) for width in blocks.widths]
    state.A = np.eye(d, m)
    state.alpha = np.full(n_views, 1.0 / n_views)
    state.lam = lam
    state.ZZt = np.eye(m)  # Z_0 Z_0^T
    state.XZt = XZt
    graphs = []
    for b in range(blocks.n_blocks):
        lo, hi = int(blocks.bounds[b]), int(blocks.bounds[b + 1])
        Z0 = np.zeros((m, hi - lo))
        first = np.arange(lo, min(hi, m))
        Z0[first, first - lo] = 1.0
        graphs.append(Z0)

    def z_step(desc):
        params = dict(base, W=state.W, A=state.A, alpha=state.alpha)
        gram, XZt, norms2, new = None, None, None, []
        for part in blocks.map(
            _paper_pass_task, params, graphs, progress=bool(est.verbose), desc=desc
        ):
            gram = _fold_sum(gram, part["gram"])
            XZt = _fold_list(XZt, part["XZt"])
            norms2 = _fold_sum(norms2, part["norms2"])
            new.append(part["Z"])
        graphs[:] = new
        state.ZZt, state.XZt, state.norms2 = gram, XZt, [float(x) for x in norms2]

    history = []
    n_iter = 0
    for n_iter in range(1, est.max_iter + 1):
        state.update_W()
        state.update_A()
        z_step(f"{name} iteration {n_iter}")
        state.update_alpha()
        history.append(state.objective())
        est._log(
            f"iteration {n_iter}: objective {history[-1]:.8g} "
            f"({time.perf_counter() - start:.2f} s)"
        )
        if len(history) > 1:
            change = abs(history[-2] - history[-1]) / max(abs(history[-2]), 1e-300)
            if change < est.tol:
                break
    z_step(f"{name} last Z step")
    history.append(state.objective())
    return state.W, state.A, state.alpha, state.alpha, history, n_iter, state.ZZt, graphs


def predict_smvsc_blocks(est, Xs):
    """Labels of new views by row blocks: lazy (a dask array) for dask views."""
    from sklearn.utils.validation import check_is_fitted

    from mvlearn_ext.utils._validation import check_views_consistent

    check_is_fitted(est)
    blocks = RowBlocks(Xs, est.block_size)
    check_views_consistent(est, blocks.views, reset=False)
    lam = est._model_settings()[2]
    alpha = est._z_step_weights
    params = dict(
        means=est.view_means_, scales=est.view_scales_, variant=est.variant, lam=lam,
        W=est.projections_, A=est.consensus_anchors_, alpha=alpha,
        scale=float(np.sum(alpha**2)) + lam, n_threads=1 if blocks.uses_dask else est.n_jobs,
        projection=est._projection, kmeans=est.kmeans_,
    )  # fmt: skip
    with single_threaded_pools():
        return map_labels(
            blocks,
            _smvsc_label_task,
            params,
            lazy=any(is_dask_array(X) for X in Xs),
            progress=bool(est.verbose),
            desc=f"{type(est).__name__} predict",
        )


# --------------------------------------------------------------------------- EOMSC-CA


def _eomsc_linear_task(p, _, *views):
    """``B`` rows of one block: ``sum_v alpha_v^2 X_v W_v A`` (n_b x m)."""
    with single_threaded_pools():
        X = apply_view_scaling(views, p["means"], p["scales"])
        return sum(w * (Xv @ (Wv @ p["A"])) for w, Xv, Wv in zip(p["a2"], X, p["W"], strict=True))


def _eomsc_loss_task(p, S, *views):
    """View losses and ``X_v Z^T`` of one block's rows ``S`` (n_b x m) of the graph."""
    with single_threaded_pools():
        X = apply_view_scaling(views, p["means"], p["scales"])
        Z = np.ascontiguousarray(S.T)
        return residual_losses(X, p["W"], p["A"], Z), [(Z @ Xv).T for Xv in X]


def fit_eomscca_blocks(est, Xs):
    """Fit ``est`` (an :class:`EOMSCCA`) with the views read by row blocks.

    See the module docstring; the iterations and stopping rule are those of
    :func:`~mvlearn_ext.cluster._eomsc.eomsc_fit`.

    Called by ``fit``, which runs it with one BLAS/OpenMP thread (the blocks are the parallelism).
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from mvlearn_ext.cluster._eomsc import connected_bipartite_graph

    _refuse(est, "EOMSCCA")
    k = est.n_clusters
    blocks = open_blocks(est, Xs, min_views=2, name="EOMSCCA")
    n = blocks.n_samples
    verbose = bool(est.verbose)
    m = min(k if est.n_anchors is None else est.n_anchors, n)
    check_anchors_cover_clusters(m, k, est.n_anchors)
    d = k if est.n_components is None else est.n_components
    _, (_, kmeans_seed) = draw_seeds(est.random_state, 2)
    start = time.perf_counter()
    first = _statistics(est, blocks, "EOMSCCA", m)
    base = dict(means=est.view_means_, scales=est.view_scales_)
    G0 = np.zeros((n, m))
    G0[np.arange(m), np.arange(m)] = 1.0
    XZt = [np.ascontiguousarray(X_v.T) for X_v in first]
    n_views = len(blocks.widths)
    W = [np.eye(width, d) for width in blocks.widths]
    A = None
    alpha = np.full(n_views, 1.0 / n_views)
    history, inner = [], []
    n_iter = 0
    for n_iter in range(1, est.max_iter + 1):
        W, A = _anchor_step(XZt, W, A, alpha)
        a2 = alpha**2
        B = np.vstack(
            list(
                blocks.map(
                    _eomsc_linear_task, dict(base, W=W, A=A, a2=a2), progress=verbose,
                    desc=f"EOMSCCA iteration {n_iter}, graph",
                )
            )
        )  # fmt: skip
        labels, S, U, graph_term, n_inner, lam = connected_bipartite_graph(
            B, G0, k, float(np.sum(a2)), reg_init=est.reg_init, max_iter=est.inner_max_iter
        )
        del B
        rows = [S[blocks.bounds[b] : blocks.bounds[b + 1]] for b in range(blocks.n_blocks)]
        losses, XZt = None, None
        for part_losses, part_XZt in blocks.map(
            _eomsc_loss_task, dict(base, W=W, A=A), rows, progress=verbose,
            desc=f"EOMSCCA iteration {n_iter}, losses",
        ):  # fmt: skip
            losses = _fold_sum(losses, part_losses)
            XZt = _fold_list(XZt, part_XZt)
        alpha = code_view_weights(losses, 1)
        history.append(float(np.sum(alpha**2 * losses)) + graph_term)
        inner.append(n_inner)
        est._log(
            f"iteration {n_iter}: objective {history[-1]:.8g}, {labels.max() + 1} components, "
            f"lambda {lam:.4g} after {n_inner} passes ({time.perf_counter() - start:.2f} s)"
        )
        if history[-1] < _OBJECTIVE_FLOOR:
            break
        if n_iter > 1:
            change = abs(history[-2] - history[-1]) / max(abs(history[-2]), 1e-300)
            if change < est.tol:
                break
    n_found = int(labels.max()) + 1
    if n_found != k:
        warnings.warn(
            f"EOMSCCA: the graph has {n_found} connected components instead of "
            f"n_clusters={k} after inner_max_iter={est.inner_max_iter} passes of "
            "the lambda search; labels_ come from k-means on the embedding",
            ConvergenceWarning,
            stacklevel=3,
        )
        F = np.nan_to_num(U)
        norms = np.linalg.norm(F, axis=1, keepdims=True)
        F = F / np.where(norms > 0, norms, 1.0)
        labels = KMeans(n_clusters=k, n_init=10, random_state=kmeans_seed).fit_predict(F)

    est.n_anchors_, est.n_components_ = m, d
    est.projections_ = W
    est.consensus_anchors_ = A
    est.anchors_ = [(Wv @ A).T for Wv in W]
    est.anchor_graph_ = np.ascontiguousarray(S.T)
    est.embedding_ = U
    est.view_weights_ = alpha
    est.objective_ = np.asarray(history)
    est.n_iter_ = int(n_iter)
    est.n_inner_iter_ = np.asarray(inner, dtype=np.intp)
    est.graph_reg_ = float(lam)
    est.n_graph_components_ = n_found
    labels = np.asarray(labels, dtype=np.intp)
    est.labels_ = labels_like_input(labels, Xs, blocks)
    return est
