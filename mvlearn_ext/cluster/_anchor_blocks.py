"""EOMSC-CA by row blocks: views larger than memory.

The solver of :class:`~mvlearn_ext.cluster.EOMSCCA` touches the samples through row-wise
steps and sums over rows, so each outer iteration is a pass over the row blocks
(:meth:`~mvlearn_ext.cluster._blockwise.RowBlocks.map`, folded in block order, so that a
fit does not depend on the number of workers or on where the blocks ran).

**EOMSC-CA** (:func:`fit_eomscca_blocks`). The graph step
(:func:`~mvlearn_ext.cluster._eomsc_solver.connected_bipartite_graph`) runs by blocks too
(:func:`block_bipartite_graph`): each pass of its ``lambda`` search projects every
sample's row (local) and every anchor's column over all ``n`` samples (one threshold per
anchor, :func:`column_thresholds`, exact from the blocks' largest values), then an
``m x m`` eigenproblem of sums over blocks; the connected components come from which
anchors share a sample (:func:`number_components`). The graph is never stored: the
sample half of the spectral state (``U`` and ``D_1^{-1/2}``, ``n x (k + 1)``) is kept by
blocks. On a ``dask.distributed`` cluster it stays on the workers, with the block's
rows of ``B`` (computed once per outer iteration) and the last target or rows of the
graph, so that a pass sends only the ``m x m`` parameters and receives only sums and
column candidates. Elsewhere it is kept in the calling process and each pass
recomputes a block's rows of the graph from it and from the block's rows of ``B``
(persisted in this process on the local dask scheduler, recomputed from the views
on the NumPy block path). Every block computes the same functions of the same
inputs on all paths, so the fit is the same bits. A pass of the search goes twice
over the blocks; an outer iteration adds one pass for the first thresholds and one
over the views for the components, the view losses and ``X_v Z^T``.

What differs from the in-memory fit, because that one holds every row at once:

* the ``mapstd`` statistics (mean, ``ddof=1`` standard deviation) are merged block by
  block (Chan, Golub & LeVeque), and every sum over rows is a sum of block sums: the
  results equal the in-memory ones to rounding;
* EOMSC-CA: the degrees and ``S_1^T S_1`` are sums of block sums (the column
  thresholds are the in-memory bits); ``anchor_graph_`` is None, ``embedding_`` is kept;
* ``init="kmeans"`` (a k-means of all joined rows) is refused.
"""

from __future__ import annotations

import time

import numpy as np

from mvlearn_ext.cluster._base import (
    draw_seeds,
    labels_like_input,
    open_blocks,
    scaling_of_moments,
)
from mvlearn_ext.cluster._blockwise import (
    RowBlocks,
    _active_client,
    _progress_bar,
    statistics_pass,
)
from mvlearn_ext.cluster._eomsc_solver import (
    _GRAPH_TERM_WEIGHT,
    _inverse_sqrt_degrees,
    _progress,
    component_labels,
    lambda_step,
    project_simplex_masked,
    top_eigenpairs_of_gram,
)
from mvlearn_ext.cluster._preprocessing import apply_view_scaling
from mvlearn_ext.cluster._smvsc_solver import (
    anchor_step,
    code_view_weights,
    fold_list,
    fold_sum,
    iteration_done,
    mapstd_from_moments,
    residual_losses,
    start_model,
)
from mvlearn_ext.utils._threads import single_threaded_pools

__all__ = ["fit_eomscca_blocks"]


# --------------------------------------------------------------------------- shared


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


# --------------------------------------------------------------------------- EOMSC-CA

#: Largest values of every anchor column that each block sends for the column thresholds
#: (more are asked for, in a new pass, for a column whose threshold they do not settle).
COLUMN_CANDIDATES = 128
_HALF = np.sqrt(2.0) / 2.0


def _eomsc_linear(p, views):
    """Standardised views and ``B = sum_v alpha_v^2 X_v W_v A`` (n_b x m) of one block.

    When ``p["cached"]``, the block's only view is ``B`` itself (see
    :func:`_linear_blocks`) and no views are returned.
    """
    if p.get("cached"):
        return None, views[0]
    X = apply_view_scaling(views, p["means"], p["scales"])
    B = sum(w * (Xv @ (Wv @ p["A"])) for w, Xv, Wv in zip(p["a2"], X, p["W"], strict=True))
    return X, B


def _eomsc_linear_task(p, _, *views):
    with single_threaded_pools():
        return _eomsc_linear(p, views)[1]


def _linear_blocks(blocks, core):
    """The blocks of ``B`` for the passes of the ``lambda`` search, without a cluster.

    On the local dask scheduler (zarr, dask arrays, memmaps with dask installed) ``B``
    (``n x m`` float64) is computed once per outer iteration and persisted in this
    process; the passes then read it instead of the views. On the NumPy block path
    every pass recomputes a block's ``B`` from its views, so that nothing of size
    ``n x m`` is held. (On a ``dask.distributed`` cluster, :class:`_WorkerCarries`
    keeps ``B`` on the workers instead.) Each block's ``B`` is the same function of
    the same rows either way, so the fit is the same bits.
    """
    if not blocks.uses_dask:
        return blocks, core
    import dask
    import dask.array as da

    m = core["A"].shape[1]
    parts = [X.to_delayed().ravel() for X in blocks.views]
    shared = dask.delayed(core, pure=True)
    task = dask.delayed(_eomsc_linear_task, pure=True)
    B = da.concatenate(
        [
            da.from_delayed(
                task(shared, None, *(p[b] for p in parts)), shape=(size, m), dtype=np.float64
            )
            for b, size in enumerate(blocks.row_chunks)
        ]
    )
    return RowBlocks([B.persist()]), dict(core, cached=True)


def _eomsc_target(p, B, U, inv1):
    """``(B - lambda/2 d) / scale`` of one block's rows from their state ``(U, inv1)``.

    The expression of :func:`~mvlearn_ext.cluster._eomsc_solver.connected_bipartite_graph`,
    row by row: ``p`` holds the anchors' half ``V``, ``D_2^{-1/2}`` and ``lambda``.
    """
    inv2 = p["inv2"]
    U1, V1 = inv1[:, None] * U, inv2[:, None] * p["V"]
    dist = np.sum(U1 * U1, axis=1)[:, None] + np.sum(V1 * V1, axis=1)[None, :] - 2.0 * U1 @ V1.T
    dist = np.maximum(dist, 0.0)
    dist[~(inv1 > 0)] = 0.0
    dist[:, ~(inv2 > 0)] = 0.0
    return (B - 0.5 * p["lam"] * dist) / p["scale"]


def _column_candidates(target, support, size):
    """The ``size`` largest supported values of every column (unsorted) and their counts."""
    with np.errstate(invalid="ignore"):
        masked = np.where(support, target, -np.inf)
    n_b = masked.shape[0]
    if n_b > size:
        masked = np.partition(masked, n_b - size, axis=0)[n_b - size :]
    return masked, support.sum(axis=0)


def column_thresholds(parts, size):
    """The thresholds of the column projections from the blocks' candidates.

    ``parts`` holds ``(candidates, counts)`` of every block (:func:`_column_candidates`
    with ``size``). Every value among a column's global ``size`` largest is among its
    block's ``size`` largest, so the candidates sorted in decreasing order start with the
    column's global ``size`` largest values, in the order of the in-memory sort: the
    cumulative sums and the thresholds ``t_k = (sum_{l <= k} u_l - 1) / k`` of the
    sort-based rule (:func:`~mvlearn_ext.cluster._eomsc_solver.project_simplex_masked`) are
    the in-memory ones, bit for bit, as far as they go. The threshold is ``t_K`` with
    ``K`` the last ``k`` where ``u_k > t_k``; it is settled unless every one of the
    ``size`` values is active while the column holds more.

    Returns ``(tau, has_support, unsettled)``, per column.
    """
    candidates = np.vstack([c for c, _ in parts])
    counts = sum(n for _, n in parts)
    u = -np.sort(-candidates, axis=0)[:size]
    length, m = u.shape
    with np.errstate(invalid="ignore"):
        t = (np.cumsum(u, axis=0) - 1.0) / np.arange(1, length + 1)[:, None]
        active = (u - t) > 0.0
    has_support = active[0]
    last = length - 1 - np.argmax(active[::-1], axis=0)
    tau = t[last, np.arange(m)]
    tau[~has_support] = 0.0
    unsettled = has_support & (last == length - 1) & (counts > length)
    return tau, has_support, unsettled


def _eomsc_graph(p, target, support):
    """One block's rows of ``S``: the mean of the row and column projections.

    The rows are projected here; the columns with the global thresholds ``p["tau"]``
    (:func:`column_thresholds`), which gives the in-memory values.
    """
    S_rows = project_simplex_masked(target, support)
    with np.errstate(invalid="ignore"):
        S_cols = np.maximum(np.where(support, target, -np.inf) - p["tau"][None, :], 0.0)
    S_cols[:, ~p["has_support"]] = 0.0
    return 0.5 * (S_rows + S_cols)


# A block's carry: the dict of its rows' state that a pass of the lambda search takes and
# returns. It always holds ``U`` and ``inv1`` (``D_1^{-1/2}``). On a dask.distributed
# cluster (:class:`_WorkerCarries`) it stays on a worker and also holds ``B`` and the
# last array computed from them, which the next pass needs: the ``target`` (after a
# state or thresholds pass) or the rows of ``S`` (after a sums pass). Elsewhere
# (:class:`_LocalCarries`) it holds only ``U`` and ``inv1`` and each pass recomputes
# ``B``, the target and ``S`` from the block, as the same functions of the same
# inputs: the same bits either way.


def _carry_linear(p, carry, views):
    B = carry.get("B")
    return _eomsc_linear(p, views)[1] if B is None else B


def _carry_target(p, carry, B):
    target = carry.get("target")
    return _eomsc_target(p, B, carry["U"], carry["inv1"]) if target is None else target


def _carry_graph(p, carry, B):
    """The rows of ``S`` of the last sums pass (its parameters are ``p["prev"]``)."""
    S = carry.get("S")
    if S is None:
        prev = p["prev"]
        S = _eomsc_graph(prev, _eomsc_target(prev, B, carry["U"], carry["inv1"]), B > 0)
    return S


def _kept(carry, **arrays):
    """The carry that a kept (worker) carry becomes: ``B``, the state and ``arrays``."""
    return dict(B=carry["B"], U=carry["U"], inv1=carry["inv1"], **arrays)


def _eomsc_candidates_task(p, carry, *views):
    """Column candidates of one block for the next projection (its rows' state given)."""
    with single_threaded_pools():
        B = _carry_linear(p, carry, views)
        target = _carry_target(p, carry, B)
        if "B" in carry:
            carry = _kept(carry, target=target)
        return carry, _column_candidates(target, B > 0, p["size"])


def _eomsc_sums_task(p, carry, *views):
    """Degrees of the anchors and ``S^T D_1^{-1} S`` over one block's rows of ``S``."""
    with single_threaded_pools():
        B = _carry_linear(p, carry, views)
        S = _eomsc_graph(p, _carry_target(p, carry, B), B > 0)
        inv1, _ = _inverse_sqrt_degrees(S.sum(axis=1))
        S1 = inv1[:, None] * S
        if "B" in carry:
            carry = _kept(carry, S=S)
        return carry, (S.sum(axis=0), S1.T @ S1)


def _eomsc_state(p, S):
    """``S_1`` and the new ``U`` and ``D_1^{-1/2}`` of one block's rows of ``S``."""
    inv1, _ = _inverse_sqrt_degrees(S.sum(axis=1))
    S1 = inv1[:, None] * S * p["inv2"][None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        U = (S1 @ p["V_raw"]) / np.sqrt(p["top"])[None, :]
    return S1, _HALF * U, inv1


def _eomsc_advance_task(p, carry, *views):
    """The new state of one block's rows and their candidates for the next projection."""
    with single_threaded_pools():
        B = _carry_linear(p, carry, views)
        _, U, inv1 = _eomsc_state(p, _carry_graph(p, carry, B))
        target = _eomsc_target(p, B, U, inv1)
        new = dict(U=U, inv1=inv1)
        if "B" in carry:
            new.update(B=B, target=target)
        return new, _column_candidates(target, B > 0, p["size"])


def _eomsc_finish_task(p, carry, *views):
    """The last graph's rows: embedding, edges, graph term, view losses and ``X_v Z^T``."""
    with single_threaded_pools():
        if "S" in carry:
            X, S = apply_view_scaling(views, p["means"], p["scales"]), carry["S"]
        else:
            X, B = _eomsc_linear(p, views)
            S = _carry_graph(p, carry, B)
        S1, U, _ = _eomsc_state(p, S)
        edges = S > 0
        linked = edges.any(axis=1)
        first = np.where(linked, np.argmax(edges, axis=1), -1)
        E = edges.astype(np.float64)
        Z = np.ascontiguousarray(S.T)
        return None, dict(
            U=U,
            first=first,
            together=(E.T @ E) > 0,
            uu=float(np.sum(U * U)),
            usv=float(np.sum(U * (S1 @ p["V"]))),
            losses=residual_losses(X, p["W"], p["A"], Z),
            XZt=[(Z @ Xv).T for Xv in X],
        )


def _initial_state(lo, hi, m, c):
    """A block's rows ``lo:hi`` of the one-hot start: ``U`` and ``D_1^{-1/2}`` of ``G_0``."""
    U, inv1 = np.zeros((hi - lo, c)), np.zeros(hi - lo)
    top = min(hi, m)
    if top > lo:
        U[: top - lo] = _HALF * np.eye(m, c)[lo:top]
        inv1[: top - lo] = 1.0
    return dict(U=U, inv1=inv1)


def _initial_carry_task(p, _, *views):
    """A kept carry's start: the block's ``B`` and its rows of the one-hot start."""
    with single_threaded_pools():
        B = _eomsc_linear(p, views)[1]
        return dict(_initial_state(p["lo"], p["hi"], p["m"], p["c"]), B=B)


class _LocalCarries:
    """The carries in this process; every pass sends each block's carry with its block.

    ``linear`` holds the blocks the passes read (``B`` persisted on the local dask
    scheduler, else the views: see :func:`_linear_blocks`).
    """

    def __init__(self, blocks, core, m, c):
        self.linear, self.params = _linear_blocks(blocks, core)
        bounds = blocks.bounds
        self.carries = [
            _initial_state(int(bounds[b]), int(bounds[b + 1]), m, c)
            for b in range(blocks.n_blocks)
        ]

    def run(self, task, params, verbose, desc, views=None):
        """``task`` on every block; keeps the new carries, returns the rest in block order."""
        source = self.linear if views is None else views
        carries, out = [], []
        for carry, part in source.map(task, params, self.carries, progress=verbose, desc=desc):
            carries.append(carry)
            out.append(part)
        self.carries = carries
        return out

    def close(self):
        self.linear = None  # releases a persisted B


class _WorkerCarries:
    """The carries on the workers of a ``dask.distributed`` client, as futures.

    Every block's ``B`` is computed once from its views (per outer iteration), and a
    pass runs each block's task where its carry is: only the parameters (``m x m``)
    go out and only the small parts (sums, candidates) come back, folded here in block
    order. Nothing of size ``n`` passes through the graph or this process, and the
    target and ``S`` are not recomputed from the state in the next pass.
    """

    def __init__(self, client, blocks, core, m, c):
        import dask

        self.client = client
        self.params = core
        self.chunks = [X.to_delayed().ravel() for X in blocks.views]
        task = dask.delayed(_initial_carry_task, pure=False)
        bounds = blocks.bounds
        self.carries = client.compute(
            [
                task(
                    dict(core, lo=int(bounds[b]), hi=int(bounds[b + 1]), m=m, c=c),
                    None,
                    *(chunk[b] for chunk in self.chunks),
                )
                for b in range(blocks.n_blocks)
            ]
        )

    def run(self, task, params, verbose, desc, views=None):
        """``task`` on every block; keeps the new carries, returns the rest in block order."""
        import operator

        client = self.client
        if views is None:
            results = [client.submit(task, params, carry, pure=False) for carry in self.carries]
        else:
            import dask

            delayed_task = dask.delayed(task, pure=False)
            results = client.compute(
                [
                    delayed_task(params, carry, *(chunk[b] for chunk in self.chunks))
                    for b, carry in enumerate(self.carries)
                ]
            )
        parts = [client.submit(operator.itemgetter(1), r, pure=False) for r in results]
        self.carries = [client.submit(operator.itemgetter(0), r, pure=False) for r in results]
        del results
        if verbose:
            from distributed import as_completed

            bar = _progress_bar(len(parts), desc)
            for _ in as_completed(parts):
                bar.update(1)
            bar.close()
        return client.gather(parts)

    def close(self):
        self.carries = []  # the workers drop B and the state


def _carries(blocks, core, m, c):
    """The carries of the graph step: on the workers of a cluster, else in this process."""
    client = _active_client() if blocks.uses_dask else None
    if client is not None:
        return _WorkerCarries(client, blocks, core, m, c)
    return _LocalCarries(blocks, core, m, c)


def _thresholds(carries, params, verbose, desc, candidates):
    """Column thresholds of the next projection, asking for more candidates when needed."""
    size = candidates
    while True:
        parts = carries.run(_eomsc_candidates_task, dict(params, size=size), verbose, desc)
        tau, has_support, unsettled = column_thresholds(parts, size)
        if not unsettled.any():
            return tau, has_support
        size *= 8


def number_components(first, together):
    """Labels of the samples by connected component, numbered in order of first sample.

    ``first`` holds, for every sample, one anchor it is linked to (-1 if none: the
    sample is a component of its own); ``together`` (m x m, boolean) tells which anchors
    share a sample. Two samples are in one component when their anchors are connected.
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    _, anchor_component = connected_components(sp.csr_matrix(together), directed=False)
    m = together.shape[0]
    keys = np.where(first >= 0, anchor_component[np.maximum(first, 0)], m + np.arange(len(first)))
    _, first_index, inverse = np.unique(keys, return_index=True, return_inverse=True)
    rank = np.empty(len(first_index), dtype=np.intp)
    rank[np.argsort(first_index, kind="stable")] = np.arange(len(first_index))
    return rank[inverse]


def block_bipartite_graph(
    blocks, core, m, c, *, reg_init, max_iter, verbose, desc, candidates=COLUMN_CANDIDATES
):
    """:func:`~mvlearn_ext.cluster._eomsc_solver.connected_bipartite_graph` by row blocks.

    ``core`` holds the standardisation, ``W``, ``A``, ``alpha^2`` and ``scale``, from
    which every block computes its rows of ``B``. The sample half of the state (``U``
    and ``D_1^{-1/2}``, ``n x (c + 1)``) is kept by blocks, in this process or on the
    workers of a cluster (see the carries above), and the graph is never assembled.
    Each pass of the ``lambda`` search goes twice over the blocks: once for the
    anchors' degrees and ``S_1^T S_1`` (sums over blocks, folded in block order), once
    for the new state and the candidates of the next column thresholds
    (:func:`column_thresholds`). A last pass returns the embedding, the connected
    components (which anchors share a sample, reduced by a logical or), the graph
    term and the view losses and ``X_v Z^T`` of the final graph.

    Returns ``(labels, U, graph_term, n_iter, lam, losses, XZt)``.
    """
    carries = _carries(blocks, core, m, c)
    params = dict(carries.params, V=_HALF * np.eye(m, c), inv2=np.ones(m), lam=float(reg_init))
    tau, has_support = _thresholds(carries, params, verbose, f"{desc}, start", candidates)
    lam = float(reg_init)
    n_iter = 0
    while True:
        n_iter += 1
        current = dict(params, tau=tau, has_support=has_support)
        colsum, gram = None, None
        for part_colsum, part_gram in carries.run(
            _eomsc_sums_task, current, verbose, f"{desc}, pass {n_iter}"
        ):
            colsum = fold_sum(colsum, part_colsum)
            gram = fold_sum(gram, part_gram)
        inv2, _ = _inverse_sqrt_degrees(colsum)
        V_raw, top, eigenvalues = top_eigenpairs_of_gram(inv2[:, None] * gram * inv2[None, :], c)
        lam, settled = lambda_step(eigenvalues, c, m, lam)
        step = dict(carries.params, V=_HALF * V_raw, inv2=inv2, lam=lam, prev=current)
        step.update(V_raw=V_raw, top=top)
        if settled or n_iter >= max_iter:
            break
        parts = carries.run(
            _eomsc_advance_task, dict(step, size=candidates), verbose,
            f"{desc}, pass {n_iter} state",
        )  # fmt: skip
        params = {key: value for key, value in step.items() if key != "prev"}
        tau, has_support, unsettled = column_thresholds(parts, candidates)
        if unsettled.any():
            tau, has_support = _thresholds(carries, params, verbose, f"{desc}, more", candidates)
    step = dict(step, cached=False, prev=dict(step["prev"], cached=False))
    Us, firsts, together, uu, usv, losses, XZt = [], [], None, 0.0, 0.0, None, None
    finished = carries.run(_eomsc_finish_task, step, verbose, f"{desc}, components", blocks)
    carries.close()
    for part in finished:
        Us.append(part["U"])
        firsts.append(part["first"])
        together = part["together"] if together is None else together | part["together"]
        uu += part["uu"]
        usv += part["usv"]
        losses = fold_sum(losses, part["losses"])
        XZt = fold_list(XZt, part["XZt"])
    V = step["V"]
    graph_term = _GRAPH_TERM_WEIGHT * float(uu + np.sum(V * V) - usv)
    labels = number_components(np.concatenate(firsts), together)
    return labels, np.vstack(Us), graph_term, n_iter, lam, losses, XZt


def fit_eomscca_blocks(est, Xs):
    """Fit ``est`` (an :class:`EOMSCCA`) with the views read by row blocks.

    See the module docstring; the iterations and stopping rule are those of
    :func:`~mvlearn_ext.cluster._eomsc_solver.eomsc_fit`.

    Called by ``fit``, which runs it with one BLAS/OpenMP thread (the blocks are the parallelism).
    """
    _refuse(est, "EOMSCCA")
    k = est.n_clusters
    blocks = open_blocks(est, Xs, min_views=2, name="EOMSCCA")
    verbose = bool(est.verbose)
    m, d = est._model_size(blocks.n_samples)
    _, (_, kmeans_seed) = draw_seeds(est.random_state, 2)
    start = time.perf_counter()
    first = _statistics(est, blocks, "EOMSCCA", m)
    base = dict(means=est.view_means_, scales=est.view_scales_)
    XZt = [np.ascontiguousarray(X_v.T) for X_v in first]
    W, A, alpha = start_model(blocks.widths, d)
    history, inner = [], []
    n_iter = 0
    for n_iter in range(1, est.max_iter + 1):
        W, A = anchor_step(XZt, W, A, alpha)
        a2 = alpha**2
        core = dict(base, W=W, A=A, a2=a2, scale=float(np.sum(a2)))
        labels, U, graph_term, n_inner, lam, losses, XZt = block_bipartite_graph(
            blocks, core, m, k, reg_init=est.reg_init, max_iter=est.inner_max_iter,
            verbose=verbose, desc=f"EOMSCCA iteration {n_iter}",
            candidates=est._column_candidates,
        )  # fmt: skip
        alpha = code_view_weights(losses, 1)
        history.append(float(np.sum(alpha**2 * losses)) + graph_term)
        inner.append(n_inner)
        detail = _progress(labels, lam, n_inner)
        if iteration_done(est._log, n_iter, history, start, est.tol, detail=detail):
            break
    labels, n_found = component_labels(est, labels, U, kmeans_seed)

    est._store_model(
        m, d, W, A, graph=None, U=U, alpha=alpha, history=history, n_iter=n_iter,
        inner=inner, lam=lam, n_found=n_found,
    )  # fmt: skip
    est.labels_ = labels_like_input(labels, Xs, blocks)
    return est
