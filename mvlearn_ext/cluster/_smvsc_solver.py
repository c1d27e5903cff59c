"""SMVSC and FPMVS-CAG over row blocks: one driver for in-memory and out-of-core views.

Both solve ``sum_v alpha_v^2 ||X_v - W_v A Z||_F^2 + lambda ||Z||_F^2``: the authors'
algorithm step for step or a monotone minimiser of the stated objective
(:func:`fit_smvsc`). The samples enter only through row-wise steps (each sample's Z
step) and sums over rows (``X_v Z^T``, ``Z Z^T``, the view losses), so every outer
iteration is a pass over the row blocks (:meth:`~._blockwise.RowBlocks.map`), folded in
block order: a fit does not depend on the number of workers or on where the blocks ran.
Views in memory are one block, whose graph and embedding the driver keeps. Views that do
not fit in memory never hold more than one block: the code variant's graph is a
function of the block and of the last pass's ``(W, A, alpha)`` and is recomputed by the
label pass; the paper variant warm-starts each block's QP from its previous graph, kept
in the calling process; the final k-means is fitted on the embedding of at most
``kmeans_sample`` random rows, and every sample gets the nearest centre; the
``mapstd`` statistics are merged block by block (Chan, Golub & LeVeque). EOMSC-CA
reuses the anchor and view-weight steps.
"""

from __future__ import annotations

import time
import warnings
from typing import NamedTuple

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from mvlearn_ext._lib._kernels import project_simplex
from mvlearn_ext.cluster._blockwise import RowBlocks, draw_rows, statistics_pass
from mvlearn_ext.cluster._common import (
    generalized_power_iteration,
    gram_eigenpairs,
    procrustes,
    squared_view_weights,
)
from mvlearn_ext.cluster._preprocessing import apply_view_scaling, constant_columns
from mvlearn_ext.utils._simplex_qp import simplex_qp
from mvlearn_ext.utils._threads import single_threaded_pools
from mvlearn_ext.utils._validation import check_allocation
from mvlearn_ext.utils._warnings import warn

#: Settings of the inner solvers of the paper variant (exact to rounding here).
_QP_MAX_ITER = 300
_QP_TOL = 1e-9
_GPI_MAX_ITER = 30
#: The authors' codes also stop once the objective falls below this.
_OBJECTIVE_FLOOR = 1e-10


# --------------------------------------------------------------------------- shared steps


def warn_degenerate_graph(name, n_clusters, init, n_distinct, anchor_mass, *, free_anchors):
    """Warn that the graph learned by ``name`` separates fewer groups than ``n_clusters``.

    ``anchor_mass`` holds ``sum_i z_ji^2`` of every anchor ``j`` (the diagonal of
    ``Z Z^T``); an anchor with mass 0 holds no sample. With the authors' start
    ``Z_0 = [I_m, 0]`` (``init="first"``), the first ``m`` samples may miss some
    clusters; an anchor that then loses all its samples in a Z step gets no pull
    back from the data: its column of ``X_v Z^T`` is zero, so the ``W_v`` and
    ``A`` steps leave its direction to the polar factor's arbitrary choice
    (rounding), and the next Z steps usually give it no sample again. The
    authors' code then clusters an embedding in which two groups share an
    anchor (its SVD of ``Z^T`` adds an arbitrary null-space direction, and its
    k-means runs as usual); this fit does the same on its embedding and warns.
    """
    k = n_clusters
    m = len(anchor_mass)
    n_empty = int(np.sum(np.asarray(anchor_mass) <= 0.0))
    if free_anchors:
        advice = (
            f"more anchors (n_anchors={2 * k} or {3 * k}: the authors' grid is n_clusters "
            "times 1, 2 and 3)"
        )
    else:  # FPMVSCAG: m = k by definition
        advice = (
            f"SMVSC(n_clusters={k}, n_anchors={2 * k}, reg_lambda=0) (this objective "
            "with more anchors)"
        )
    cause, other = "", ""
    if init == "first":
        other = ", init='kmeans' (in memory), or shuffle the samples"
        if n_empty:
            cause = (
                f"With init='first' (the authors' start on the first {m} samples, which "
                "depends on the order of the samples) an anchor that loses its samples gets "
                "no pull back from the data. "
            )
    warn(
        f"{name}: the learned anchor graph separates only {n_distinct} groups of samples "
        f"({n_empty} of its {m} anchors ended with no sample), fewer than "
        f"n_clusters={k}, so labels_ merge clusters. {cause}Use {advice}{other}",
        ConvergenceWarning,
    )


def start_model(widths, d, n_anchors):
    """``(W, A, alpha)`` at the start of the anchor solvers (both paths).

    ``W_v = I_{d_v x d}`` for every view width ``d_v`` in ``widths``, ``A`` not
    yet set (None) and uniform view weights. Refuses, naming ``n_components``,
    a ``d`` whose projections ``W_v`` (``d_v x d``) or consensus anchors ``A``
    (``d x n_anchors``) could not fit in memory.
    """
    largest = max(max(int(w) for w in widths), int(n_anchors))
    check_allocation(int(d) * largest, "n_components", d)
    n_views = len(widths)
    return [np.eye(width, d) for width in widths], None, np.full(n_views, 1.0 / n_views)


def anchor_step(XZt, W, A, alpha):
    """The ``W_v`` and ``A`` steps of the authors' codes from ``X_v Z^T`` (``d_v x m``).

    ``W_v`` is the polar factor of ``X_v Z^T A^T`` (kept as given while ``A`` is
    None, the first iteration), then ``A`` the polar factor of
    ``sum_v alpha_v^2 W_v^T X_v Z^T``. Returns ``(W, A)``.
    """
    if A is not None:
        W = [procrustes(P @ A.T) for P in XZt]
    a2 = alpha**2
    A = procrustes(sum(w * (Wv.T @ P) for w, Wv, P in zip(a2, W, XZt, strict=True)))
    return W, A


def iteration_done(
    log, n_iter, history, start, tol, *, min_iter=2, floor=_OBJECTIVE_FLOOR, detail=""
):
    """Log outer iteration ``n_iter`` and tell whether the anchor solvers stop after it.

    The rule of the authors' codes (SMVSC, FPMVS-CAG, EOMSC-CA), in memory and by
    blocks: stop when the last objective is below ``floor`` (None: no floor, the
    paper variant), or, once ``history`` holds ``max(min_iter, 2)`` values, when
    its relative change is below ``tol``. ``detail`` is added to the log line.
    """
    log(
        f"iteration {n_iter}: objective {history[-1]:.8g}{detail} "
        f"({time.perf_counter() - start:.2f} s)"
    )
    if floor is not None and history[-1] < floor:
        return True
    if len(history) < max(min_iter, 2):
        return False
    change = abs(history[-2] - history[-1]) / max(abs(history[-2]), 1e-300)
    return change < tol


def final_kmeans(F, n_clusters, n_init, seed, n_distinct, warn_degenerate):
    """The k-means of SMVSC's embedding ``F``, with a warning when the graph is degenerate.

    When ``n_distinct`` (the distinct rows of the embedding) is below ``n_clusters``,
    ``warn_degenerate(n_distinct)`` warns and scikit-learn's own warning about
    distinct clusters is silenced.
    """
    with warnings.catch_warnings():
        if n_distinct < n_clusters:
            warn_degenerate(n_distinct)
            warnings.filterwarnings("ignore", "Number of distinct clusters")
        return KMeans(n_clusters=n_clusters, n_init=n_init, random_state=seed).fit(F)


def residual_losses(views, W, A, Z):
    """``||X_v^T - W_v A Z||_F^2`` of every view, from the residual itself.

    Forming the residual (n x d_v per view, O(n m d_v)) avoids the
    cancellation of the expanded form, so that the view weights are those of
    the authors' code to rounding.
    """
    return np.array(
        [float(np.sum((X - Z.T @ (Wv @ A).T) ** 2)) for X, Wv in zip(views, W, strict=True)]
    )


def code_view_weights(losses, power):
    """``alpha_v`` proportional to ``||R_v||_F^-power`` (``losses = ||R_v||_F^2``).

    ``power=2`` is the minimiser of ``sum_v alpha_v^2 ||R_v||^2`` on the
    simplex (SMVSC's code); ``power=1`` is FPMVS-CAG's and EOMSC-CA's code,
    the unsquared norm. Zero losses take all the weight, shared equally.
    """
    losses = np.asarray(losses, dtype=np.float64)
    return squared_view_weights(losses if power == 2 else np.sqrt(losses))


def code_z_step(views, W, A, scale, *, n_threads=None):
    """The authors' Z step: ``z_i = Pi(sum_v (W_v A)^T x_i / scale)``.

    ``scale = sum_v alpha_v^2 + lambda``. This is the exact minimiser of the
    QP with Hessian ``scale I`` and the *unweighted* linear term that the
    codes pass to ``quadprog``; it solves the SMVSC objective's Z step only
    when every ``alpha_v`` is equal and every ``W_v A`` has orthonormal
    columns (see :class:`SMVSC`).
    """
    B = sum(X @ (Wv @ A) for X, Wv in zip(views, W, strict=True)).T
    return project_simplex(np.ascontiguousarray(B) / scale, axis=0, n_threads=n_threads)


# --------------------------------------------------------------------------- paper variant


def _is_multiple_of_identity(M, rtol=1e-10):
    """Whether the square ``M`` equals ``c I`` to rounding; returns ``(flag, c)``."""
    c = float(np.trace(M)) / M.shape[0]
    off = M - c * np.eye(M.shape[0])
    return bool(np.abs(off).max() <= rtol * max(abs(c), 1e-300)), c


class _State:
    """The blocks ``W``, ``A``, ``alpha`` of the SMVSC model and the sums of the graph.

    The W, A and alpha steps and the objective only need ``Z Z^T`` (m x m),
    ``X_v Z^T`` (d_v x m) and ``||X_v||^2``, which a pass over the row blocks
    returns (:meth:`set_sums`). ``W[v]`` is ``(d_v, d)``, ``A`` is ``(d, m)``,
    ``alpha`` is ``(V,)``.
    """

    def __init__(self, W, A, alpha, lam, sums):
        self.W, self.A, self.alpha, self.lam = W, A, alpha, lam
        self.set_sums(*sums)

    def set_sums(self, ZZt, XZt, norms2):
        """The sums of the current graph: ``Z Z^T``, ``X_v Z^T`` and ``||X_v||^2``."""
        self.ZZt, self.XZt, self.norms2 = ZZt, XZt, [float(x) for x in norms2]

    def view_losses(self):
        """``||X_v - W_v A Z||^2`` for every view, without forming the residual."""
        AZZtAt = self.A @ self.ZZt @ self.A.T
        losses = []
        for W, XZt, norm2 in zip(self.W, self.XZt, self.norms2, strict=True):
            cross = float(np.sum(W * (XZt @ self.A.T)))
            quad = float(np.sum((W.T @ W) * AZZtAt))
            losses.append(max(norm2 - 2.0 * cross + quad, 0.0))
        return np.asarray(losses)

    def objective(self, losses=None):
        """``sum_v alpha_v^2 ||X_v - W_v A Z||^2 + lambda ||Z||^2``."""
        losses = self.view_losses() if losses is None else losses
        return float(np.sum(self.alpha**2 * losses) + self.lam * np.trace(self.ZZt))

    # -- block updates, each the exact minimiser or a monotone GPI step ------------------

    def update_W(self):
        AZZtAt = self.A @ self.ZZt @ self.A.T
        self.W = [
            generalized_power_iteration(XZt @ self.A.T, W, P=AZZtAt, max_iter=_GPI_MAX_ITER)
            for W, XZt in zip(self.W, self.XZt, strict=True)
        ]

    def update_A(self):
        a2 = self.alpha**2
        C = sum(w * (W.T @ XZt) for w, W, XZt in zip(a2, self.W, self.XZt, strict=True))
        Q = sum(w * (W.T @ W) for w, W in zip(a2, self.W, strict=True))
        identity, c = _is_multiple_of_identity(Q)
        if identity:
            self.A = generalized_power_iteration(C / c, self.A, P=self.ZZt, max_iter=_GPI_MAX_ITER)
        else:
            self.A = generalized_power_iteration(
                C, self.A, Q=Q, P=self.ZZt, max_iter=_GPI_MAX_ITER
            )

    def update_alpha(self):
        losses = self.view_losses()
        self.alpha = squared_view_weights(losses)
        return losses


def z_problem(views, W, A, alpha, lam):
    """The Hessian ``H`` (m x m) and linear terms ``B`` (m x n) of the Z step.

    The Z step minimises ``sum_v alpha_v^2 ||X_v - W_v A Z||^2 + lambda ||Z||^2``
    column by column: ``1/2 z^T H z - b_i^T z`` with
    ``H = sum_v alpha_v^2 (W_v A)^T (W_v A) + lambda I`` and
    ``b_i = sum_v alpha_v^2 (W_v A)^T x_i`` (``alpha_v^2`` in both terms).
    """
    a2 = alpha**2
    WA = [Wv @ A for Wv in W]
    H = sum(w * (P.T @ P) for w, P in zip(a2, WA, strict=True))
    H = H + lam * np.eye(A.shape[1])
    B = sum(w * (X @ P) for w, X, P in zip(a2, views, WA, strict=True)).T
    return H, np.ascontiguousarray(B)


def solve_z(H, B, *, Z0=None, n_threads=None):
    """The exact Z step: closed form when ``H = c I``, accelerated QP otherwise."""
    identity, c = _is_multiple_of_identity(H)
    if identity and c > 0:
        return project_simplex(B / c, axis=0, n_threads=n_threads)
    Z, _ = simplex_qp(
        H, B, method="fista", Z0=Z0, max_iter=_QP_MAX_ITER, tol=_QP_TOL, n_jobs=n_threads
    )
    return Z


def _normalize_rows(F):
    norms = np.linalg.norm(F, axis=1, keepdims=True)
    return F / np.where(norms > 0, norms, 1.0)


# --------------------------------------------------------------------------- the driver


def mapstd_from_moments(moments):
    """``(mean, scale)``: the z-scoring of the authors' codes from merged moments.

    MATLAB's ``mapstd``: every feature is centred and divided by its sample standard
    deviation (normalised by ``n - 1``). ``moments`` is the merged ``(count, mean,
    M2)`` of one view; a constant feature gets scale 1, so it becomes 0.
    """
    n, mean, m2 = moments
    mean = np.asarray(mean, dtype=np.float64)
    scale = np.sqrt(np.maximum(m2, 0.0) / (n - 1)) if n > 1 else np.zeros(mean.shape[0])
    scale[constant_columns(mean, scale, np.float64)] = 1.0
    return mean, scale


def fold_sum(total, part):
    """``total + part``, or ``part`` when ``total`` is None (a fold over blocks)."""
    return part if total is None else total + part


def fold_list(total, part):
    """:func:`fold_sum` of two lists, item by item."""
    return list(part) if total is None else [t + p for t, p in zip(total, part, strict=True)]


def _block_graph(p, X, Z_prev=None):
    """The Z step of the variant on one block (``Z_prev``: the paper variant's warm start)."""
    if p["variant"] == "code":
        return code_z_step(X, p["W"], p["A"], p["scale"], n_threads=p["n_threads"])
    H, B = z_problem(X, p["W"], p["A"], p["alpha"], p["lam"])
    return solve_z(H, B, Z0=Z_prev, n_threads=p["n_threads"])


def _sums(Z, X):
    return dict(
        gram=Z @ Z.T,
        XZt=[(Z @ Xv).T for Xv in X],
        norms2=np.array([float(np.sum(Xv * Xv)) for Xv in X]),
    )


def _scaled_task(p, _, *views):
    return apply_view_scaling(views, p["means"], p["scales"])


def sums_task(p, Z, *views):
    """The sums of a given graph ``Z`` of one block (the start of the paper variant)."""
    with single_threaded_pools():
        return dict(_sums(Z, apply_view_scaling(views, p["means"], p["scales"])), Z=Z)


def _code_pass_task(p, rows, *views):
    """Graph of one block by the code's Z step, and the sums of one iteration."""
    with single_threaded_pools():
        X = apply_view_scaling(views, p["means"], p["scales"])
        Z = code_z_step(X, p["W"], p["A"], p["scale"], n_threads=p["n_threads"])
        return dict(
            losses=residual_losses(X, p["W"], p["A"], Z),
            XZt=[(Z @ Xv).T for Xv in X],
            sumsq=float(np.sum(Z * Z)),
            gram=Z @ Z.T,
            sample=None if rows is None else np.ascontiguousarray(Z[:, rows].T),
            Z=Z if p["keep"] else None,
        )


def _paper_pass_task(p, Z_prev, *views):
    """The paper variant's exact Z step on one block, warm-started, and its sums."""
    with single_threaded_pools():
        X = apply_view_scaling(views, p["means"], p["scales"])
        Z = _block_graph(p, X, Z_prev)
        return dict(_sums(Z, X), Z=Z)


def _embedding_task(p, _, *views):
    with single_threaded_pools():
        Z = _block_graph(p, apply_view_scaling(views, p["means"], p["scales"]))
        return _normalize_rows(Z.T @ p["projection"])


def smvsc_label_task(p, _, *views):
    """Labels of one block by the fitted model ``p`` (for :func:`~._blockwise.map_labels`)."""
    with single_threaded_pools():
        return p["kmeans"].predict(_embedding_task(p, None, *views)).astype(np.intp)


def _distinct_task(p, _, *views):
    with single_threaded_pools():
        return np.unique(_embedding_task(p, None, *views), axis=0)[: p["k"]]


def _count_distinct(blocks, params, k):
    """Distinct rows of the embedding, counted up to ``k`` over all blocks."""
    seen = set()
    for rows in blocks.map(_distinct_task, dict(params, k=k)):
        seen.update(row.tobytes() for row in rows)
        if len(seen) >= k:
            break
    return len(seen)


def scale_in_memory(blocks, p):
    """Views in memory standardised once: their block and parameters with no scaling left.

    The passes would otherwise standardise the block anew every time; the values are
    the same.
    """
    (views,) = blocks.map(_scaled_task, p)
    return RowBlocks(views, blocks.n_samples), dict(p, means=None, scales=None)


def start_labels(blocks, m, init, seed, p):
    """The anchor of every sample in the starting graph ``Z_0`` (-1: none), one-hot.

    ``init="first"``: sample ``j < m`` is anchor ``j``'s only member (``Z_0 =
    [I_m, 0]``, the authors' codes; it depends on the order of the samples).
    ``init="kmeans"``: each sample on its cluster among ``m`` k-means clusters of
    the joined views standardised by ``p`` (seeded by ``seed``), which needs every
    row at once: views in memory, one block.
    """
    if init == "first":
        labels = np.full(blocks.n_samples, -1)
        labels[:m] = np.arange(m)
        return labels
    (views,) = blocks.map(_scaled_task, p)
    return KMeans(n_clusters=m, n_init=1, random_state=seed).fit_predict(np.hstack(views))


def one_hot_blocks(blocks, labels, m):
    """Per block, the columns (m x n_b) of the one-hot graph of ``labels``."""
    graphs = []
    for b in range(blocks.n_blocks):
        lo, hi = int(blocks.bounds[b]), int(blocks.bounds[b + 1])
        Z0 = np.zeros((m, hi - lo))
        member = np.flatnonzero(labels[lo:hi] >= 0)
        Z0[labels[lo:hi][member], member] = 1.0
        graphs.append(Z0)
    return graphs


class SMVSCFit(NamedTuple):
    """The fitted pieces of :func:`fit_smvsc`."""

    view_means: list | None
    view_scales: list | None
    W: list
    A: np.ndarray
    #: View weights after the last iteration, and those of the last Z step.
    alpha: np.ndarray
    z_alpha: np.ndarray
    history: list
    n_iter: int
    #: The ``(m, n_samples)`` graph and the embedding; None unless ``keep_graph``.
    graph: np.ndarray | None
    embedding: np.ndarray | None
    singular_values: np.ndarray
    projection: np.ndarray
    kmeans: KMeans
    labels: np.ndarray


def fit_smvsc(
    blocks,
    n_clusters,
    *,
    variant,
    init,
    n_anchors,
    n_components,
    reg_lambda,
    n_embedding,
    scaling,
    n_init,
    max_iter,
    tol,
    weight_power,
    min_iter,
    init_seed,
    kmeans_seed,
    n_threads,
    keep_graph,
    kmeans_sample=None,
    warn_degenerate=None,
    log=None,
    progress=False,
    name="SMVSC",
    callback=None,
):
    """Fit SMVSC / FPMVS-CAG on the row blocks ``blocks`` (a :class:`~._blockwise.RowBlocks`).

    ``variant="code"`` runs the authors' alternating scheme: every iteration
    updates ``W_v`` (polar factor of ``X_v Z^T A^T``; the first iteration keeps
    ``W_v = I_{d_v x d}``, what the code's SVD of its all-zero start gives), ``A``
    (polar factor of ``sum_v alpha_v^2 W_v^T X_v Z^T``), ``Z`` (:func:`code_z_step`
    with ``sum_v alpha_v^2 + lambda``, one pass over the blocks) and ``alpha``
    (:func:`code_view_weights`), then records ``sum_v alpha_v^2 ||R_v||^2 + lambda
    ||Z||^2`` with the new ``alpha``; it stops after iteration ``t`` when
    ``t >= min_iter`` and the relative change of that value is below ``tol``, when
    it falls below 1e-10, or at ``max_iter``. The first iteration's ``X_v Z_0^T``
    for ``Z_0 = [I_m, 0]`` is the first ``m`` standardised rows, read in the
    statistics pass. ``variant="paper"`` minimises the objective monotonically:
    the W, A and alpha steps of :class:`_State` on the sums of a pass, and the
    exact Z step (:func:`solve_z`) warm-started from the previous graph, which is
    kept, one array per block; a last Z step with the final weights makes the
    graph the one ``predict`` computes for the training samples.

    The embedding is the ``n_embedding`` top left singular vectors of ``Z^T``
    (from the eigenpairs of ``Z Z^T``, summed over blocks), row-normalised.

    Parameters
    ----------
    blocks : RowBlocks
    n_clusters, variant, init, scaling, n_init, max_iter, tol
        As in :class:`~mvlearn_ext.cluster.SMVSC`; ``init="kmeans"`` needs one block.
    n_anchors, n_components, reg_lambda : int, int, float
        ``m`` (at most ``n_samples``), ``d`` and ``lambda``.
    n_embedding : int
        Singular vectors kept for the final k-means (at most ``m``).
    weight_power, min_iter : int
        The code variant's view weights (:func:`code_view_weights`) and its fewest
        iterations.
    init_seed, kmeans_seed : int
        Seeds of ``init="kmeans"`` and of the final k-means.
    n_threads : int
        Threads of the simplex projections (1 when the blocks run on dask's threads).
    keep_graph : bool
        Keep the graph and the embedding of every row (views in memory); the labels
        are then those of the final k-means fit, with no label pass.
    kmeans_sample : int or None
        Rows on which the final k-means is fitted (None: every row).
    warn_degenerate : callable or None
        ``warn_degenerate(n_distinct, anchor_mass)``, called when the embedding has
        fewer than ``n_clusters`` distinct rows.
    log : callable or None
        Called with a progress message.
    progress : bool
        Show progress bars over the blocks.
    name : str
        Label of the progress bars.
    callback : callable or None
        The paper variant calls ``callback(n_iter, block, objective)`` after every
        block update (``block`` is ``"W"``, ``"A"``, ``"Z"`` or ``"alpha"``).

    Returns
    -------
    SMVSCFit
    """
    log = log or (lambda message: None)
    n, k, m, d, lam = blocks.n_samples, n_clusters, n_anchors, n_components, reg_lambda
    n_threads = 1 if blocks.uses_dask else n_threads
    start = time.perf_counter()
    first = np.arange(m) if init == "first" else np.empty(0, dtype=np.int64)
    moments, picked = statistics_pass(
        blocks, first, n_clusters=n_clusters, progress=progress, name=name
    )
    means = scales = None
    if scaling is not None:
        stats = [mapstd_from_moments(m_v) for m_v in moments]
        means, scales = [s[0] for s in stats], [s[1] for s in stats]
    base = dict(means=means, scales=scales, variant=variant, lam=lam, n_threads=n_threads)
    if keep_graph:
        blocks, base = scale_in_memory(blocks, base)
    kmeans_rows = (
        None if keep_graph else draw_rows(np.random.RandomState(kmeans_seed), n, kmeans_sample)
    )
    graphs = XZt = None
    if variant == "code" and init == "first":
        # Z_0 = [I_m, 0]: Z_0 X_v holds the first m (standardised) rows of X_v.
        XZt = [X_v.T for X_v in apply_view_scaling(picked, means, scales)]
    else:
        graphs = one_hot_blocks(blocks, start_labels(blocks, m, init, init_seed, base), m)
    pieces = dict(base=base, name=name, log=log, progress=progress, start=start)
    if variant == "code":
        if XZt is None:
            XZt = pass_sums(blocks, sums_task, base, graphs, progress, f"{name} start")[1]
        W, A, alpha, z_alpha, history, n_iter, gram, sample, graphs = _code_iterations(
            blocks, XZt, m, d, lam, max_iter, tol, weight_power, min_iter, keep_graph,
            kmeans_rows, **pieces,
        )  # fmt: skip
    else:
        W, A, alpha, history, n_iter, gram, graphs = _paper_iterations(
            blocks, graphs, m, d, lam, max_iter, tol, callback, **pieces
        )
        z_alpha = alpha
        sample = None if keep_graph else np.hstack(graphs)[:, kmeans_rows].T
    sigma, V, scale = gram_eigenpairs(gram, n_embedding)
    projection = V * scale
    params = dict(base, W=W, A=A, alpha=z_alpha, scale=float(np.sum(z_alpha**2)) + lam)
    params["projection"] = projection
    graph = embedding = None
    if keep_graph:
        graph = graphs[0] if len(graphs) == 1 else np.hstack(graphs)
        embedding = F = _normalize_rows(graph.T @ projection)
        n_distinct = np.unique(F, axis=0).shape[0]
    else:
        F = _normalize_rows(sample @ projection)
        n_distinct = k
        if np.unique(F, axis=0).shape[0] < k:
            if variant == "code":
                n_distinct = _count_distinct(blocks, params, k)
            else:
                n_distinct = np.unique(_normalize_rows(np.hstack(graphs).T @ projection), axis=0)
                n_distinct = n_distinct.shape[0]
    warn = (lambda count: warn_degenerate(count, np.diag(gram))) if warn_degenerate else None
    kmeans = final_kmeans(F, k, n_init, kmeans_seed, n_distinct, warn or (lambda count: None))
    if keep_graph:
        labels = kmeans.labels_.astype(np.intp, copy=False)
    elif variant == "code":
        labels = np.concatenate(
            list(
                blocks.map(
                    smvsc_label_task, dict(params, kmeans=kmeans), progress=progress,
                    desc=f"{name} labels",
                )
            )
        )  # fmt: skip
    else:
        labels = np.concatenate(
            [kmeans.predict(_normalize_rows(Z.T @ projection)).astype(np.intp) for Z in graphs]
        )
    log(f"embedding, k-means and labels done ({time.perf_counter() - start:.2f} s)")
    return SMVSCFit(
        view_means=means, view_scales=scales, W=W, A=A, alpha=alpha, z_alpha=z_alpha,
        history=history, n_iter=int(n_iter), graph=graph, embedding=embedding,
        singular_values=sigma, projection=projection, kmeans=kmeans, labels=labels,
    )  # fmt: skip


def pass_sums(blocks, task, params, graphs, progress, desc):
    """``(Z Z^T, X_v Z^T, ||X_v||^2, graphs)`` folded over one pass of ``task``."""
    gram, XZt, norms2, new = None, None, None, []
    for part in blocks.map(task, params, graphs, progress=progress, desc=desc):
        gram = fold_sum(gram, part["gram"])
        XZt = fold_list(XZt, part["XZt"])
        norms2 = fold_sum(norms2, part["norms2"])
        new.append(part["Z"])
    return gram, XZt, norms2, new


def _code_iterations(
    blocks, XZt, m, d, lam, max_iter, tol, weight_power, min_iter, keep, sample_rows, *,
    base, name, log, progress, start,
):  # fmt: skip
    """The code variant's iterations, one pass over the blocks each."""
    W, A, alpha = start_model(blocks.widths, d, m)
    z_alpha = alpha
    history = []
    n_iter = 0
    local = None if sample_rows is None else blocks.local_rows(sample_rows)
    gram = sample = graphs = None
    for n_iter in range(1, max_iter + 1):
        W, A = anchor_step(XZt, W, A, alpha)
        z_alpha = alpha
        params = dict(base, W=W, A=A, scale=float(np.sum(alpha**2)) + lam, keep=keep)
        losses, XZt, sumsq, gram, sample, graphs = None, None, 0.0, None, [], []
        for part in blocks.map(
            _code_pass_task, params, local, progress=progress, desc=f"{name} iteration {n_iter}"
        ):
            losses = fold_sum(losses, part["losses"])
            XZt = fold_list(XZt, part["XZt"])
            sumsq += part["sumsq"]
            gram = fold_sum(gram, part["gram"])
            sample.append(part["sample"])
            graphs.append(part["Z"])
        alpha = code_view_weights(losses, weight_power)
        history.append(float(np.sum(alpha**2 * losses) + lam * sumsq))
        if iteration_done(log, n_iter, history, start, tol, min_iter=min_iter):
            break
    sample = None if local is None else np.vstack(sample)
    return W, A, alpha, z_alpha, history, n_iter, gram, sample, graphs


def _paper_iterations(
    blocks, graphs, m, d, lam, max_iter, tol, callback, *, base, name, log, progress, start
):
    """The paper variant on the sums of one pass per iteration (see :func:`fit_smvsc`)."""
    W, _, alpha = start_model(blocks.widths, d, m)
    gram, XZt, norms2, graphs = pass_sums(
        blocks, sums_task, base, graphs, progress, f"{name} start"
    )
    state = _State(W, np.eye(d, m), alpha, lam, (gram, XZt, norms2))

    def z_step(desc):
        params = dict(base, W=state.W, A=state.A, alpha=state.alpha)
        gram, XZt, norms2, graphs[:] = pass_sums(
            blocks, _paper_pass_task, params, graphs, progress, desc
        )
        state.set_sums(gram, XZt, norms2)

    def report(n_iter, block):
        if callback is not None:
            callback(n_iter, block, state.objective())

    history = []
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        state.update_W()
        report(n_iter, "W")
        state.update_A()
        report(n_iter, "A")
        z_step(f"{name} iteration {n_iter}")
        report(n_iter, "Z")
        state.update_alpha()
        report(n_iter, "alpha")
        history.append(state.objective())
        if iteration_done(log, n_iter, history, start, tol, floor=None):
            break
    z_step(f"{name} last Z step")
    report(n_iter, "Z")
    history.append(state.objective())
    return state.W, state.A, state.alpha, history, n_iter, state.ZZt, graphs


def smvsc_embedding(blocks, model):
    """The row-normalised embedding of every row of ``blocks`` (views in memory).

    ``model``: ``means``, ``scales``, ``variant``, ``lam``, ``n_threads``, ``W``,
    ``A``, ``alpha`` (the weights of the last Z step), ``scale`` and ``projection``.
    """
    return np.vstack(list(blocks.map(_embedding_task, model)))
