"""EOMSC-CA over row blocks: one driver for in-memory and out-of-core views.

The solver of :class:`~mvlearn_ext.cluster.EOMSCCA` touches the samples through row-wise
steps and sums over rows, so each outer iteration is a pass over the row blocks
(:meth:`~mvlearn_ext.cluster._blockwise.RowBlocks.map`, folded in block order, so that a
fit does not depend on the number of workers or on where the blocks ran). Views in
memory are one block.

The graph step (:func:`block_bipartite_graph`, the authors'
``coclustering_bipartite_fast1``) runs by blocks too: each pass of its ``lambda`` search
projects every sample's row (local) and every anchor's column over all ``n`` samples
(one threshold per anchor, :func:`column_thresholds`, exact from the blocks' largest
values), then an ``m x m`` eigenproblem of sums over blocks (the degrees, then
``S_1^T S_1`` with them); the connected components come from which anchors share a sample
(:func:`number_components`). The sample half of the spectral state (``U`` and
``D_1^{-1/2}``, ``n x (k + 1)``) is kept by blocks. In memory and on a
``dask.distributed`` cluster (on the workers) each block also keeps its rows of ``B``
(computed once per outer iteration) and the last target or rows of the graph, so that a
pass sends only the ``m x m`` parameters and receives only sums and column candidates.
Out of core without a cluster, each pass recomputes a block's rows of the graph from
the state and from the block's rows of ``B`` (persisted in this process on the local
dask scheduler, recomputed from the views on the NumPy block path), and the graph is
never assembled. Every block computes the same functions of the same inputs on all
paths, so the fit is the same bits. A pass of the search goes three times over the blocks;
an outer iteration adds one pass for the first thresholds and one over the views for
the components, the view losses and ``X_v Z^T``. The ``mapstd`` statistics (mean,
``ddof=1`` standard deviation) are merged block by block (Chan, Golub & LeVeque).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

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
    one_hot_blocks,
    pass_sums,
    residual_losses,
    scale_in_memory,
    start_labels,
    start_model,
    sums_task,
)
from mvlearn_ext.utils._threads import single_threaded_pools

__all__ = ["EOMSCCAFit", "fit_eomscca"]


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

    The target of :func:`block_bipartite_graph`, row by row: ``p`` holds the anchors'
    half ``V``, ``D_2^{-1/2}`` and ``lambda``.
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
# state or thresholds pass) or the rows of ``S`` (after a degrees pass). Elsewhere
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
    """The rows of ``S`` of the last degrees pass (its parameters are ``p["prev"]``)."""
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


def _eomsc_degrees_task(p, carry, *views):
    """The anchors' degrees over one block's rows of ``S``."""
    with single_threaded_pools():
        B = _carry_linear(p, carry, views)
        S = _eomsc_graph(p, _carry_target(p, carry, B), B > 0)
        if "B" in carry:
            carry = _kept(carry, S=S)
        return carry, S.sum(axis=0)


def _eomsc_gram_task(p, carry, *views):
    """``S_1^T S_1`` over one block's rows of ``S_1 = D_1^{-1/2} S D_2^{-1/2}``.

    ``p["inv2"]`` holds the anchors' ``D_2^{-1/2}`` of the degrees pass, and
    ``p["prev"]`` its parameters (for the rows of ``S`` that a carry does not keep).
    """
    with single_threaded_pools():
        S = _carry_graph(p, carry, _carry_linear(p, carry, views))
        inv1, _ = _inverse_sqrt_degrees(S.sum(axis=1))
        S1 = inv1[:, None] * S * p["inv2"][None, :]
        return carry, S1.T @ S1


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
            usv=float(np.trace(U.T @ S1 @ p["V"])),
            losses=residual_losses(X, p["W"], p["A"], Z),
            XZt=[(Z @ Xv).T for Xv in X],
            Z=Z if p["keep"] else None,
        )


def _start_state(start, inv2, m, c):
    """A block's rows of the one-hot start: ``U`` and ``D_1^{-1/2}`` of ``G_0``.

    ``start`` holds each row's anchor in ``G_0`` (-1: none) and ``inv2`` the anchors'
    ``D_2^{-1/2}``; row ``i`` of ``U`` is ``D_2^{-1/2} e_{l_i} / sqrt(2)``.
    """
    U, inv1 = np.zeros((len(start), c)), np.zeros(len(start))
    member = np.flatnonzero(start >= 0)
    anchors = start[member]
    U[member] = _HALF * (inv2[anchors, None] * np.eye(m, c)[anchors])
    inv1[member] = 1.0
    return dict(U=U, inv1=inv1)


def _initial_carry_task(p, start, *views):
    """A kept carry's start: the block's ``B`` and its rows of the one-hot start."""
    with single_threaded_pools():
        B = _eomsc_linear(p, views)[1]
        return dict(_start_state(start, p["inv2"], p["m"], p["c"]), B=B)


class _LocalCarries:
    """The carries in this process; every pass sends each block's carry with its block.

    ``linear`` holds the blocks the passes read (``B`` persisted on the local dask
    scheduler, else the views: see :func:`_linear_blocks`). With ``keep`` (views in
    memory) every carry keeps its block's ``B`` and last target or rows of ``S``, as
    on the workers of a cluster, so that ``B`` is computed once per outer iteration.
    """

    def __init__(self, blocks, core, starts, inv2, m, c, keep=False):
        if keep:
            self.linear, self.params = blocks, core
            start = dict(core, inv2=inv2, m=m, c=c)
            self.carries = list(blocks.map(_initial_carry_task, start, starts))
            return
        self.linear, self.params = _linear_blocks(blocks, core)
        self.carries = [_start_state(start, inv2, m, c) for start in starts]

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

    def __init__(self, client, blocks, core, starts, inv2, m, c):
        import dask

        self.client = client
        self.params = core
        self.chunks = [X.to_delayed().ravel() for X in blocks.views]
        task = dask.delayed(_initial_carry_task, pure=False)
        start = dict(core, inv2=inv2, m=m, c=c)
        self.carries = client.compute(
            [
                task(start, starts[b], *(chunk[b] for chunk in self.chunks))
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


def _carries(blocks, core, starts, inv2, m, c, keep):
    """The carries of the graph step: on the workers of a cluster, else in this process."""
    client = _active_client() if blocks.uses_dask else None
    if client is not None:
        return _WorkerCarries(client, blocks, core, starts, inv2, m, c)
    return _LocalCarries(blocks, core, starts, inv2, m, c, keep)


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
    blocks, core, m, c, *, starts, inv2, reg_init, max_iter, verbose, desc,
    candidates=COLUMN_CANDIDATES, keep=False,
):  # fmt: skip
    """The authors' connectivity-constrained graph step (``coclustering_bipartite_fast1``).

    Finds a nonnegative ``S`` (n x m) close to ``B / scale`` whose bipartite
    graph ``[[0, S], [S^T, 0]]`` has ``c`` connected components, through the Ky
    Fan relaxation with an adaptive weight ``lambda``:

    * the embedding ``F = [U; V] / sqrt(2)`` holds the top ``c`` singular
      vectors of ``D_1^{-1/2} S D_2^{-1/2}``, first from the one-hot graph ``G_0``
      (whose normalised Gram matrix is ``I``, so that its first ``c`` unit vectors
      are the eigenvectors);
    * each sample row and each anchor column of ``S`` is projected onto the
      simplex, ``Pi((b - lambda/2 d) / scale)`` with ``d_ij`` the squared distance
      between the degree-normalised rows ``u_i / sqrt(D_1,ii)`` and ``v_j /
      sqrt(D_2,jj)``, on the support ``b > 0``; ``S`` is the mean of the two. A
      node of zero degree has an undefined normalised row; the code's distances
      are then 0 (its NaN is clipped by ``max(d, 0)``), and so they are here;
    * ``lambda`` (from ``reg_init``) doubles while the top ``c`` eigenvalues of
      ``S_n^T S_n`` sum below ``c`` (fewer than ``c`` components) and halves while
      the top ``c + 1`` sum to ``c + 1`` (more); the loop stops when neither
      holds, or after ``max_iter`` passes. The recorded graph term is
      ``0.1 (tr U^T U + tr V^T V - tr U^T S_n V)``.

    ``core`` holds the standardisation, ``W``, ``A``, ``alpha^2`` and ``scale``, from
    which every block computes its rows of ``B``. The sample half of the state (``U``
    and ``D_1^{-1/2}``, ``n x (c + 1)``) is kept by blocks, in this process or on the
    workers of a cluster (see the carries above), and the graph is never assembled.
    Each pass of the ``lambda`` search goes three times over the blocks: for the
    anchors' degrees, for ``S_1^T S_1`` with them (sums over blocks, folded in block
    order), and for the new state and the candidates of the next column thresholds
    (:func:`column_thresholds`). A last pass returns the embedding, the connected
    components (which anchors share a sample, reduced by a logical or), the graph
    term and the view losses and ``X_v Z^T`` of the final graph. The search starts
    from the one-hot graph ``G_0`` of ``starts`` (per block, each row's anchor, -1:
    none; ``inv2`` its anchors' ``D_2^{-1/2}``). With ``keep`` (views in memory)
    the graph ``Z`` (m x n) is returned too, else None.

    Returns ``(labels, U, graph_term, n_iter, lam, losses, XZt, Z)``.
    """
    carries = _carries(blocks, core, starts, inv2, m, c, keep)
    params = dict(carries.params, V=_HALF * np.eye(m, c), inv2=inv2, lam=float(reg_init))
    tau, has_support = _thresholds(carries, params, verbose, f"{desc}, start", candidates)
    lam = float(reg_init)
    n_iter = 0
    while True:
        n_iter += 1
        current = dict(params, tau=tau, has_support=has_support)
        colsum, gram = None, None
        for part in carries.run(_eomsc_degrees_task, current, verbose, f"{desc}, pass {n_iter}"):
            colsum = fold_sum(colsum, part)
        inv2, _ = _inverse_sqrt_degrees(colsum)
        for part in carries.run(
            _eomsc_gram_task, dict(carries.params, inv2=inv2, prev=current), verbose,
            f"{desc}, pass {n_iter} Gram",
        ):  # fmt: skip
            gram = fold_sum(gram, part)
        V_raw, top, eigenvalues = top_eigenpairs_of_gram(gram, c)
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
    step = dict(step, cached=False, prev=dict(step["prev"], cached=False), keep=keep)
    Us, firsts, together, uu, usv, losses, XZt, Zs = [], [], None, 0.0, 0.0, None, None, []
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
        Zs.append(part["Z"])
    V = step["V"]
    graph_term = _GRAPH_TERM_WEIGHT * float(uu + np.sum(V * V) - usv)
    labels = number_components(np.concatenate(firsts), together)
    Z = (Zs[0] if len(Zs) == 1 else np.hstack(Zs)) if keep else None
    return labels, np.vstack(Us), graph_term, n_iter, lam, losses, XZt, Z


class EOMSCCAFit(NamedTuple):
    """The fitted pieces of :func:`fit_eomscca`."""

    view_means: list | None
    view_scales: list | None
    W: list
    A: np.ndarray
    #: The ``(m, n_samples)`` graph; None unless ``keep_graph``.
    graph: np.ndarray | None
    embedding: np.ndarray
    alpha: np.ndarray
    history: list
    n_iter: int
    inner: list
    reg: float
    n_found: int
    labels: np.ndarray


def fit_eomscca(
    blocks,
    n_clusters,
    *,
    n_anchors,
    n_components,
    reg_init,
    init,
    scaling,
    max_iter,
    max_iter_inner,
    tol,
    init_seed,
    kmeans_seed,
    keep_graph,
    column_candidates=COLUMN_CANDIDATES,
    log=None,
    progress=False,
):
    """Fit EOMSC-CA on the row blocks ``blocks`` (a :class:`~._blockwise.RowBlocks`).

    The alternating scheme of the authors' code. Per iteration: ``W_v`` (polar
    factor of ``X_v Z^T A^T``; ``I_{d_v x d}`` in the first), ``A`` (polar factor of
    ``sum_v alpha_v^2 W_v^T X_v Z^T``), then the graph by
    :func:`block_bipartite_graph` on ``B = sum_v alpha_v^2 X_v^T W_v A``
    (``alpha_v^2`` in the linear term) and ``sum_v alpha_v^2``, restarted from the
    starting graph every time; then ``alpha_v ~ 1/||X_v - W_v A Z||_F`` and the
    recorded objective ``sum_v alpha_v^2 ||R_v||^2 + graph term``. Stops from the
    second iteration on when the relative change is below ``tol``. When the final
    graph does not have ``n_clusters`` components, the labels come from k-means on
    the embedding (:func:`~._eomsc_solver.component_labels`).

    Parameters
    ----------
    blocks : RowBlocks
    n_clusters, reg_init, init, scaling, max_iter, max_iter_inner, tol
        As in :class:`~mvlearn_ext.cluster.EOMSCCA`; ``init="kmeans"`` needs one block.
    n_anchors, n_components : int
        ``m`` (at most ``n_samples``, at least ``n_clusters``) and ``d``.
    init_seed, kmeans_seed : int
        Seeds of ``init="kmeans"`` and of the k-means fallback.
    keep_graph : bool
        Views in memory: keep ``B`` and the graph of every block between the passes
        of the ``lambda`` search, and return the graph.
    column_candidates : int
        Largest values of every anchor column that each block sends for the column
        thresholds (more are asked for where they do not settle one); the result
        does not depend on it.
    log : callable or None
        Called with a progress message.
    progress : bool
        Show progress bars over the blocks.

    Returns
    -------
    EOMSCCAFit
    """
    log = log or (lambda message: None)
    k, m, d = n_clusters, n_anchors, n_components
    start = time.perf_counter()
    first = np.arange(m) if init == "first" else np.empty(0, dtype=np.int64)
    moments, picked = statistics_pass(
        blocks, first, n_clusters=n_clusters, progress=progress, name="EOMSCCA"
    )
    means = scales = None
    if scaling is not None:
        stats = [mapstd_from_moments(m_v) for m_v in moments]
        means, scales = [s[0] for s in stats], [s[1] for s in stats]
    base = dict(means=means, scales=scales)
    if keep_graph:
        blocks, base = scale_in_memory(blocks, base)
    anchor_of = start_labels(blocks, m, init, init_seed, base)
    if init == "first":
        # Z_0 = [I_m, 0]: Z_0 X_v holds the first m (standardised) rows of X_v.
        XZt = [X_v.T for X_v in apply_view_scaling(picked, means, scales)]
    else:
        graphs = one_hot_blocks(blocks, anchor_of, m)
        XZt = pass_sums(blocks, sums_task, base, graphs, progress, "EOMSCCA start")[1]
    counts = np.bincount(anchor_of[anchor_of >= 0], minlength=m).astype(np.float64)
    inv2, _ = _inverse_sqrt_degrees(counts)
    bounds = blocks.bounds
    starts = [anchor_of[bounds[b] : bounds[b + 1]] for b in range(blocks.n_blocks)]
    W, A, alpha = start_model(blocks.widths, d, m)
    history, inner = [], []
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        W, A = anchor_step(XZt, W, A, alpha)
        a2 = alpha**2
        core = dict(base, W=W, A=A, a2=a2, scale=float(np.sum(a2)))
        labels, U, graph_term, n_inner, lam, losses, XZt, Z = block_bipartite_graph(
            blocks, core, m, k, starts=starts, inv2=inv2, reg_init=reg_init,
            max_iter=max_iter_inner, verbose=progress, desc=f"EOMSCCA iteration {n_iter}",
            candidates=column_candidates, keep=keep_graph,
        )  # fmt: skip
        alpha = code_view_weights(losses, 1)
        history.append(float(np.sum(alpha**2 * losses)) + graph_term)
        inner.append(n_inner)
        detail = _progress(labels, lam, n_inner)
        if iteration_done(log, n_iter, history, start, tol, detail=detail):
            break
    labels, n_found = component_labels(labels, U, k, max_iter_inner, kmeans_seed)
    return EOMSCCAFit(
        view_means=means, view_scales=scales, W=W, A=A, graph=Z, embedding=U, alpha=alpha,
        history=history, n_iter=int(n_iter), inner=inner, reg=float(lam), n_found=n_found,
        labels=labels,
    )  # fmt: skip
