"""DRMC: discretely-refined multi-view clustering with aligned anchors (a reconstruction).

Only the abstract of the ICML 2026 paper (poster 66036) is public. This module
implements the reconstruction of ``specs/multiview_clustering.md`` section 2.3:
every block of the model below and the order of the updates are choices made
here from the abstract and from the closest published methods, not the
paper's algorithm. Layout: :class:`DRMC` validates; :func:`_drmc` (the
driver) assumes valid, preprocessed views and runs the alternation; the
numerical building blocks come from :mod:`mvlearn_ext.cluster._common`
(Procrustes, view weights, simplex QP, anchor spectral embedding, spectral
rotation, k-means anchors) and the Numba kernel
:func:`mvlearn_ext.cluster._kernels.indicator_sweeps`.
"""

from __future__ import annotations

import sys
import time
from numbers import Integral, Real

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from mvlearn_ext.base import MultiViewClusterMixin
from mvlearn_ext.cluster._common import (
    anchor_spectral_embedding,
    kmeans_anchors,
    procrustes,
    simplex_qp,
    simplex_qp_update,
    spectral_rotation,
    squared_view_weights,
)
from mvlearn_ext.cluster._kernels import indicator_sweeps
from mvlearn_ext.cluster._preprocessing import (
    apply_view_scaling,
    fit_view_scaling,
    stack_scaled_views,
)
from mvlearn_ext.utils import anchor_graph, kneighbors_anchors

__all__ = ["DRMC"]

#: Neighbours of the parameter-free kNN graph that initialises the consensus graph.
_N_NEIGHBORS = 5
#: Default number of anchors per cluster (``n_anchors=None``), capped at ``n_samples``.
_ANCHORS_PER_CLUSTER = 10
#: Lloyd iterations of the k-means that places the initial anchors.
_KMEANS_MAX_ITER = 30
#: Generalised power iterations per F update, and sweeps per Y update.
_GPI_MAX_ITER = 10
_Y_MAX_SWEEPS = 50
#: Iterations and tolerance of the column-wise simplex QPs (Z step and predict).
_QP_MAX_ITER = 200
_QP_TOL = 1e-9
#: Iterations of the warm-started QP of one Z step (an inexact MM step is still monotone).
_Z_QP_MAX_ITER = 5
#: Stop once the labels have not changed for this many consecutive iterations.
_STABLE_ITERATIONS = 3

#: Names of the blocks, in the order of one outer iteration.
BLOCKS = ("A", "alpha", "Z", "F", "R", "Y")


# --------------------------------------------------------------------------- preprocessing


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


def _reseed_dead_anchors(X_joint, anchors, n_threads=None):
    """Move anchors that no sample uses to the samples farthest from every anchor.

    Returns the kNN graph (CSR, n x m) on the updated ``anchors`` (changed in
    place). Anchors still unused afterwards are left for the driver, which
    drops them (their graph terms are zero, never divided by).
    """
    graph = anchor_graph(X_joint, anchors, n_neighbors=_N_NEIGHBORS, n_threads=n_threads)
    degree = np.asarray(graph.sum(axis=0)).ravel()
    dead = np.flatnonzero(degree <= 0)
    if dead.size == 0:
        return graph
    distances, _ = kneighbors_anchors(X_joint, anchors, n_neighbors=1, n_threads=n_threads)
    # Farthest samples first; ties towards the lower sample index.
    order = np.lexsort((np.arange(X_joint.shape[0]), -distances[:, 0]))
    anchors[dead] = X_joint[order[: dead.size]]
    return anchor_graph(X_joint, anchors, n_neighbors=_N_NEIGHBORS, n_threads=n_threads)


def _initial_graph(Xs, n_anchors, align_anchors, seed, n_threads=None, X_joint=None):
    """Initial anchors (per view, aligned) and the consensus graph ``Z0``.

    With ``align_anchors``, each view gets its own k-means anchors and its
    own kNN graph; the anchor sets are aligned across views by the
    Hungarian method (:func:`_align_views`). Otherwise the anchors are the
    view blocks of the k-means centres of the concatenated views, aligned
    by construction. The consensus graph is the parameter-free kNN graph
    of the samples on the aligned anchor tuples under the summed distance
    ``sum_v ||x_v - a_j^v||^2``. Every view's k-means gets the same seed,
    so that the result does not depend on the order of the views.
    ``X_joint`` is the concatenation of the views if the caller holds it.
    """
    widths = [X.shape[1] for X in Xs]
    if X_joint is None:
        X_joint = np.hstack(Xs)
    reference = None
    if align_anchors and len(Xs) > 1:
        anchors = [
            kmeans_anchors(X, n_anchors, random_state=seed, max_iter=_KMEANS_MAX_ITER) for X in Xs
        ]
        graphs = [
            anchor_graph(X, A, n_neighbors=_N_NEIGHBORS, n_threads=n_threads)
            for X, A in zip(Xs, anchors, strict=True)
        ]
        reference, perms = _align_views(graphs)
        joint = np.hstack([A[perm] for A, perm in zip(anchors, perms, strict=True)])
    else:
        joint = kmeans_anchors(X_joint, n_anchors, random_state=seed, max_iter=_KMEANS_MAX_ITER)
        perms = [np.arange(n_anchors) for _ in Xs]
    graph = _reseed_dead_anchors(X_joint, joint, n_threads)
    bounds = np.cumsum([0, *widths])
    anchors = [joint[:, a:b].copy() for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    Z = np.ascontiguousarray(graph.T.toarray())
    return Z, anchors, reference, perms


# --------------------------------------------------------------------------- objective pieces


def _anchor_means(Z, F):
    """Degrees ``Delta``, ``Z F`` and the embedding means ``(Z F)_j / Delta_j`` of the anchors.

    Anchors of zero degree get a zero mean (their term of the graph
    objective is 0, the limit of ``||(ZF)_j||^2 / Delta_j``).
    """
    degree = Z.sum(axis=1)
    ZF = Z @ F
    live = degree > 0
    means = np.zeros_like(ZF)
    means[live] = ZF[live] / degree[live, None]
    return degree, ZF, means


def _graph_term(Z, F):
    """``tr(F^T Z^T Delta^{-1} Z F) = sum_j ||(ZF)_j||^2 / Delta_j`` (zero-degree anchors: 0)."""
    _, ZF, means = _anchor_means(Z, F)
    return float(np.sum(ZF * means))


def _graph_gradient(Z, F):
    """Gradient in ``Z`` of the graph term, ``2 Delta^{-1} Z F F^T - c 1^T``.

    Entry ``(j, i)`` is ``2 a_j . f_i - ||a_j||^2`` with ``a_j`` the
    embedding mean of anchor ``j``; rows of zero-degree anchors are 0, a
    valid subgradient there since the term is nonnegative and 0 at that
    point. The term is convex in ``Z`` (a sum of quadratic-over-linear
    functions), so its linearisation minorises it.
    """
    _, _, means = _anchor_means(Z, F)
    gradient = 2.0 * (means @ F.T)
    gradient -= np.einsum("jc,jc->j", means, means)[:, None]
    return gradient


def _scaled_indicator(labels, n_clusters, scaled):
    """``Y (Y^T Y)^{-1/2}`` (``scaled``) or ``Y``; empty clusters give zero columns."""
    n = labels.shape[0]
    Y = np.zeros((n, n_clusters))
    Y[np.arange(n), labels] = 1.0
    if scaled:
        counts = np.bincount(labels, minlength=n_clusters).astype(np.float64)
        Y /= np.sqrt(np.maximum(counts, 1.0))
    return Y


def _cross_products(Xs, Z):
    """``Z Z^T`` and ``Z X_v`` per view: everything the A step and the losses need."""
    return Z @ Z.T, [Z @ X for X in Xs]


def _sq_residuals(norms2, A, gram, ZXs):
    """``||X_v - Z^T A_v||_F^2`` per view, from cross products (no n x d residual)."""
    losses = []
    for ZX, norm2, Av in zip(ZXs, norms2, A, strict=True):
        value = norm2 - 2.0 * np.sum(Av * ZX) + np.sum((gram @ Av) * Av)
        losses.append(max(float(value), 0.0))
    return np.array(losses)


class _State:
    """The variables of the alternation and the pieces of the objective."""

    def __init__(self, *, n_samples, n_clusters, n_views, lambda_, beta, gamma, scaled):
        self.n = n_samples
        self.k = n_clusters
        self.V = n_views
        self.lambda_ = lambda_
        self.beta = beta
        self.gamma = gamma
        self.scaled = scaled

    def rotation_term(self):
        """``||F R - Y_hat||_F^2``."""
        return float(np.sum((self.F @ self.R - self.Yhat) ** 2))

    def view_losses(self):
        """``||X_v - Z^T A_v||^2 + lambda ||Z||^2`` per view."""
        return self.losses + self.lambda_ * float(np.vdot(self.Z, self.Z))

    def objective(self):
        """The DRMC objective (see the class docstring), from the stored pieces."""
        fit = self.V * float(np.sum(self.alpha**2 * self.view_losses())) / self.n
        graph = self.beta * _graph_term(self.Z, self.F) / self.k
        rotation = self.gamma * self.rotation_term() / self.k
        return fit - graph + rotation


# --------------------------------------------------------------------------- block updates


def _update_anchors(gram, ZXs):
    """Least-squares anchors ``A_v = (Z Z^T)^+ Z X_v``: the exact minimiser in ``A_v``.

    The pseudo-inverse gives zero-degree anchors (zero rows and columns of
    ``Z Z^T``) the minimum-norm value 0, the centre of the standardised view.
    """
    w, U = scipy.linalg.eigh((gram + gram.T) / 2.0, check_finite=False)
    cutoff = max(float(w[-1]), 0.0) * gram.shape[0] * np.finfo(np.float64).eps
    inv = np.where(w > cutoff, 1.0 / np.where(w > cutoff, w, 1.0), 0.0)
    pinv = (U * inv) @ U.T
    return [pinv @ ZX for ZX in ZXs]


def _qp_terms(Xs, A, alpha, lambda_, n_views):
    """Hessian and linear term of ``V sum_v alpha_v^2 (||x_v - A_v^T z||^2 + lambda ||z||^2)``.

    In the form ``1/2 z^T H z - b^T z`` up to a constant:
    ``H = 2 V sum_v alpha_v^2 (A_v A_v^T + lambda I)`` and
    ``B = 2 V sum_v alpha_v^2 A_v X_v^T``.
    """
    m = A[0].shape[0]
    H = np.zeros((m, m))
    B = np.zeros((m, Xs[0].shape[0]))
    for X, Av, a in zip(Xs, A, alpha, strict=True):
        w = n_views * a * a
        H += w * (Av @ Av.T)
        H[np.diag_indices(m)] += w * lambda_
        B += w * (Av @ X.T)
    return 2.0 * H, 2.0 * B


def _update_graph(state, Xs, n_threads):
    """MM step in ``Z``: the concave ``-beta`` term linearised at the current ``Z``.

    The surrogate ``(V/n) sum_v alpha_v^2 (||X_v - Z^T A_v||^2 + lambda ||Z||^2)
    - (beta/k) <G, Z>`` with ``G`` the gradient of the graph term (its
    ``Delta``-dependence included) majorises the objective and touches it
    at the current ``Z``. It separates into one simplex QP per sample with
    a shared Hessian, solved warm-started by blocks of samples; a sample
    keeps its old column unless the new one lowers its QP, so the
    objective never increases. The linear terms are formed block by block
    (``2 V alpha_v^2 A_v x_v`` plus the graph gradient), never as an m x n
    matrix.
    """
    weights = [state.V * a * a for a in state.alpha]
    m = state.A[0].shape[0]
    H = np.zeros((m, m))
    for Av, w in zip(state.A, weights, strict=True):
        H += w * (Av @ Av.T)
    H[np.diag_indices(m)] += sum(weights) * state.lambda_
    H *= 2.0
    maps = [(2.0 * w) * Av for Av, w in zip(state.A, weights, strict=True)]
    coef = state.n * state.beta / state.k
    if coef > 0:
        _, _, means = _anchor_means(state.Z, state.F)
        means2 = 2.0 * coef * means
        offset = coef * np.einsum("jc,jc->j", means, means)

    def linear_rows(start, stop):
        rows = Xs[0][start:stop] @ maps[0].T
        for X, C in zip(Xs[1:], maps[1:], strict=True):
            rows += X[start:stop] @ C.T
        if coef > 0:
            rows += state.F[start:stop] @ means2.T
            rows -= offset
        return rows

    simplex_qp_update(
        H, linear_rows, state.Z, max_iter=_Z_QP_MAX_ITER, tol=_QP_TOL, n_threads=n_threads
    )


def _gpi_value(state, SF):
    return state.beta * float(np.sum(SF * state.F)) + 2.0 * state.gamma * float(
        np.sum(state.F * (state.Yhat @ state.R.T))
    )


def _update_embedding(state):
    """F by generalised power iteration, ``F <- polar(2 beta S F + 2 gamma Y_hat R^T)``.

    Maximises ``beta tr(F^T S F) + 2 gamma tr(F^T Y_hat R^T)`` over
    orthonormal ``F``; ``S = Z^T Delta^{-1} Z`` is PSD, so every step is
    monotone (GPI with ``eta = 0``). ``S F = Z^T (Delta^{-1} (Z F))`` costs
    O(n m k); no n x n matrix is formed.
    """
    if state.beta == 0 and state.gamma == 0:
        return
    linear = state.gamma * (state.Yhat @ state.R.T)

    def product(F):
        _, _, means = _anchor_means(state.Z, F)
        return state.Z.T @ means

    SF = product(state.F)
    value = _gpi_value(state, SF)
    for _ in range(_GPI_MAX_ITER):
        F_new = _polar(2.0 * (state.beta * SF + linear))
        SF_new = product(F_new)
        previous_F = state.F
        state.F = F_new
        new_value = _gpi_value(state, SF_new)
        if new_value < value:  # rounding only: GPI is monotone in exact arithmetic
            state.F = previous_F
            break
        gain = new_value - value
        SF, value = SF_new, new_value
        if gain <= 1e-12 * max(abs(value), 1.0):
            break


def _polar(M):
    """Polar factor of a tall ``M`` (n x k) as ``M (M^T M)^{-1/2}``, in O(n k^2).

    Equal to :func:`procrustes` when ``M`` has full column rank, and much
    cheaper than a thin SVD of an n x k matrix; falls back to it when
    ``M^T M`` is ill-conditioned.
    """
    C = M.T @ M
    w, U = scipy.linalg.eigh((C + C.T) / 2.0, check_finite=False)
    if w[0] <= 1e-10 * max(float(w[-1]), 1e-300):
        return procrustes(M)
    return M @ ((U / np.sqrt(w)) @ U.T)


def _update_rotation(state):
    """R by Procrustes: ``R = polar(F^T Y_hat)``, the exact minimiser."""
    state.R = procrustes(state.F.T @ state.Yhat)


def _update_indicator(state):
    """Y by exact coordinate ascent of ``tr(Y_hat^T F R)`` (no cluster emptied)."""
    G = np.ascontiguousarray(state.F @ state.R)
    labels = state.labels.copy()
    indicator_sweeps(G, labels, state.scaled, _Y_MAX_SWEEPS)
    Yhat = _scaled_indicator(labels, state.k, state.scaled)
    # Keep the move only if it lowers ||F R - Y_hat||^2 (it does up to rounding).
    if np.sum((G - Yhat) ** 2) <= np.sum((G - state.Yhat) ** 2):
        state.labels, state.Yhat = labels, Yhat


# --------------------------------------------------------------------------- driver


def _drmc(
    Xs,
    n_clusters,
    *,
    n_anchors,
    lambda_,
    beta,
    gamma,
    align_anchors,
    scaled,
    max_iter,
    tol,
    random_state,
    n_threads=None,
    verbose=0,
    record_blocks=False,
    X_joint=None,
):
    """Run DRMC on preprocessed float64 views; returns a dict of results.

    The views may be column blocks of ``X_joint``, their concatenation
    (see :func:`stack_scaled_views`), which then is not formed again.

    ``random_state`` is a RandomState instance; two integer seeds are drawn
    from it (k-means anchors, initial rotation). With ``record_blocks`` the
    objective after every block update is recorded as
    ``(iteration, block, value)``.
    """
    start = time.perf_counter()
    n = Xs[0].shape[0]
    V = len(Xs)
    kmeans_seed = int(random_state.randint(np.iinfo(np.int32).max))
    rotation_seed = int(random_state.randint(np.iinfo(np.int32).max))

    Z, anchors, reference, perms = _initial_graph(
        Xs, n_anchors, align_anchors, kmeans_seed, n_threads, X_joint
    )
    if int(np.sum(Z.sum(axis=1) > 0)) < n_clusters:
        raise ValueError(
            f"only {int(np.sum(Z.sum(axis=1) > 0))} anchors are connected to samples, fewer "
            f"than n_clusters={n_clusters}; use more anchors or fewer clusters"
        )
    F, _ = anchor_spectral_embedding(Z, n_clusters)
    labels, R = spectral_rotation(F, scaled=scaled, random_state=rotation_seed)

    state = _State(
        n_samples=n,
        n_clusters=n_clusters,
        n_views=V,
        lambda_=lambda_,
        beta=beta,
        gamma=gamma,
        scaled=scaled,
    )
    state.Z, state.F, state.R = Z, np.ascontiguousarray(F), R
    state.labels = np.asarray(labels, dtype=np.int64)
    state.Yhat = _scaled_indicator(state.labels, n_clusters, scaled)
    state.A = anchors
    state.alpha = np.full(V, 1.0 / V)
    norms2 = [float(np.einsum("ij,ij->", X, X)) for X in Xs]
    gram, ZXs = _cross_products(Xs, state.Z)
    state.losses = _sq_residuals(norms2, state.A, gram, ZXs)

    history = [state.objective()]
    blocks = []
    if verbose:
        print(
            f"[DRMC] init: {n} samples, {V} views, {n_anchors} anchors, objective "
            f"{history[0]:.6g} ({time.perf_counter() - start:.2f} s)",
            file=sys.stderr,
        )
    n_iter = 0
    stable = 0
    for iteration in range(1, max_iter + 1):
        previous_labels = state.labels.copy()
        for block in BLOCKS:
            if block == "A":
                state.A = _update_anchors(gram, ZXs)
                state.losses = _sq_residuals(norms2, state.A, gram, ZXs)
            elif block == "alpha":
                state.alpha = squared_view_weights(state.view_losses())
            elif block == "Z":
                _update_graph(state, Xs, n_threads)
                gram, ZXs = _cross_products(Xs, state.Z)
                state.losses = _sq_residuals(norms2, state.A, gram, ZXs)
            elif block == "F":
                _update_embedding(state)
            elif block == "R":
                _update_rotation(state)
            else:
                _update_indicator(state)
            if record_blocks:
                blocks.append((iteration, block, state.objective()))
        n_iter = iteration
        history.append(state.objective())
        changed = int(np.sum(previous_labels != state.labels))
        if verbose:
            print(
                f"[DRMC] iteration {iteration}: objective {history[-1]:.8g}, "
                f"{changed} labels changed ({time.perf_counter() - start:.2f} s)",
                file=sys.stderr,
            )
        stable = stable + 1 if changed == 0 else 0
        if stable >= _STABLE_ITERATIONS:
            break
        if changed == 0 and abs(history[-2] - history[-1]) <= tol * max(abs(history[-1]), 1.0):
            break
    return {
        "Z": state.Z,
        "A": state.A,
        "F": state.F,
        "R": state.R,
        "labels": state.labels,
        "Yhat": state.Yhat,
        "alpha": state.alpha,
        "objective": history,
        "blocks": blocks,
        "n_iter": n_iter,
        "reference": reference,
        "perms": perms,
    }


def _code_samples(Xs, A, alpha, lambda_, n_threads):
    """Simplex codes of samples on the anchors: the Z step without the graph term."""
    H, B = _qp_terms(Xs, A, alpha, lambda_, len(Xs))
    Z, _ = simplex_qp(H, B, max_iter=_QP_MAX_ITER, tol=_QP_TOL, n_threads=n_threads)
    return Z


# --------------------------------------------------------------------------- estimator


class DRMC(MultiViewClusterMixin, BaseEstimator):
    """Discretely-refined multi-view clustering with aligned anchors (reconstruction).

    **Reconstruction.** Only the abstract of the paper is public (ICML 2026,
    poster 66036; no full text, author list or code). It fixes four
    ingredients: a sample-anchor bipartite graph; its elevation to a
    sample-level similarity graph; a spectral embedding learned jointly with
    a discrete indicator by orthogonal alignment; and the feedback of the
    partition into the construction of the consensus graph. The title adds
    "aligned anchor learning". The objective, the constraints, the updates,
    the initialisation and the defaults below are this package's
    reconstruction of those ingredients (``specs/multiview_clustering.md``
    section 2.3), not the paper's algorithm, and its results are not the
    paper's results.

    With the views standardised (``X_v`` of shape (n, d_v), samples as
    rows here), ``n`` samples, ``V`` views, ``k`` clusters and ``m``
    anchors, DRMC minimises

    .. math::

        J = \\frac{V}{n}\\sum_v \\alpha_v^2 \\left(\\|X_v - Z^\\top A_v\\|_F^2
            + \\lambda\\|Z\\|_F^2\\right)
            - \\frac{\\beta}{k}\\operatorname{tr}(F^\\top Z^\\top \\Delta^{-1} Z F)
            + \\frac{\\gamma}{k}\\|F R - \\hat Y\\|_F^2

    over the consensus anchor graph ``Z`` (m x n, every column on the
    probability simplex), the anchors ``A_v`` (m x d_v), the view weights
    ``alpha`` (on the simplex), the embedding ``F`` (n x k, orthonormal
    columns), the rotation ``R`` (k x k, orthogonal) and the cluster
    indicator ``Y`` (through ``Y_hat = Y (Y^T Y)^{-1/2}``, or ``Y`` itself
    when ``scaled_indicator=False``), with ``Delta = diag(Z 1)``. The
    sample-level graph ``S = Z^T Delta^{-1} Z`` (Liu, He & Chang, 2010) is
    never formed: ``S F = Z^T (Delta^{-1} (Z F))``. The factors ``V/n``,
    ``1/n`` and ``1/k`` make every term of order one, so the defaults of
    ``reg_lambda``, ``beta`` and ``gamma`` do not depend on the number of
    samples, views or clusters (with equal views, the first term equals the
    loss of one view). The ridge term sits inside the weighted sum of every
    view, unlike spec 2.3 where it stands alone: with simplex codes and more
    anchors than features, a view can be reconstructed almost exactly, and
    the squared-weight rule then gives it all the weight (observed on
    Handwritten: the 6-feature view took weight 1.0); inside the sum, every
    view's loss is at least ``lambda ||Z||^2`` and the weights stay spread.

    Each outer iteration updates, in this order, and never increases ``J``:

    * ``A_v`` by least squares (exact);
    * ``alpha`` by the squared-weight rule
      ``alpha_v ∝ 1/(||X_v - Z^T A_v||^2 + lambda ||Z||^2)`` (exact);
    * ``Z`` by a majorise-minimise step: the ``-beta`` term is concave in
      ``Z`` and is replaced by its linearisation, including the dependence
      of ``Delta`` on ``Z`` (the ``c``-term of the spec); the resulting
      column-wise simplex QPs share one Hessian. Anchors that lose all their
      mass are dropped from the graph terms (their term is 0), never
      divided by, and may regain mass later. This is where the partition is
      fed back into the graph: the linear term rewards linking a sample to
      the anchors whose embedding mean is close to its own row of ``F``,
      which the ``gamma`` term pulls towards its cluster indicator;
    * ``F`` by the generalised power iteration (monotone, ``S`` is PSD);
    * ``R`` by orthogonal Procrustes (exact);
    * ``Y`` by exact coordinate ascent, sample by sample (no cluster is
      emptied).

    ``labels_`` are read directly from ``Y``; there is no k-means step.

    Initialisation and anchor alignment ("aligned anchor learning" of the
    title, read as cross-view anchor correspondence): anchor ``j`` must be
    the same prototype in every view. With ``align_anchors=True`` every
    view gets its own k-means anchors and kNN graph, and the anchor sets
    are aligned across views by linear assignment (Hungarian method) on the
    anchor overlap ``Z_u^T Z_v``, to the view that agrees most with the
    others (FMVACC-style alignment, Wang et al., 2022). This is the only
    place where a permutation ``P_v`` matters: once a single consensus
    ``Z`` is learned, ``A_v P_v`` ranges over the same set as ``A_v``, so a
    permutation step would not change the optimum (spec 2.3); it is
    therefore done once, before the alternation, and absorbed into
    ``A_v``. With ``align_anchors=False`` the anchors are the view blocks
    of k-means centres of the concatenated views, aligned by construction.
    The initial ``Z`` is the parameter-free kNN graph (5 neighbours, Nie et
    al., 2014) of the samples on the aligned anchors under the summed
    distance of all views; anchors no sample links to are re-seeded at the
    samples farthest from every anchor. ``F`` starts as the top-``k``
    spectral embedding of ``S`` (through the m x m matrix), ``Y`` and ``R``
    by spectral rotation of it.

    Parameters
    ----------
    n_clusters : int, default=8
        The number of clusters ``k``.
    n_anchors : int or None, default=None
        The number of anchors ``m``, at least ``n_clusters``; capped at the
        number of samples. ``None`` uses ``10 * n_clusters``.
    reg_lambda : float, default=1.0
        Weight of the ridge term ``||Z||^2`` (larger: denser anchor codes).
    beta : float, default=1.0
        Weight of the graph term: how strongly the embedding and the
        partition shape the consensus graph, and the graph the embedding.
    gamma : float, default=1.0
        Weight of the alignment of ``F`` with the discrete indicator.
    align_anchors : bool, default=False
        ``True``: learn per-view anchors and align them across views by the
        Hungarian method (FMVACC-style). ``False``: anchors aligned by
        construction, as the view blocks of joint k-means centres (see
        above). The default is ``False`` because, on Handwritten with 100
        anchors, the Hungarian route sometimes mismatches anchors and merges
        two digits (mean ACC 0.938 +- 0.044 over seeds 0-9 against
        0.970 +- 0.002 shared); with 200 anchors both routes reach 0.970.
    scaled_indicator : bool, default=True
        Use the scaled indicator ``Y (Y^T Y)^{-1/2}`` (spectral rotation of
        Huang, Nie & Huang) or the plain ``Y`` (the Yu-Shi variant).
    standardize : bool, default=True
        Centre every feature, scale it to unit variance and divide each view
        by the square root of its width, so that every view has unit
        variance per sample whatever its units and width (statistics of the
        training views, reused by :meth:`predict`). Without it the views
        enter as given.
    max_iter : int, default=10
        Maximum number of outer iterations (0: the initial spectral
        rotation only).
    tol : float, default=1e-3
        Stop when no label changes and the objective changes by less than
        ``tol`` times its magnitude over an iteration. The alternation also
        stops once no label has changed for 3 consecutive iterations (the
        partition is the output; the graph would only keep polishing).
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means anchors and the initial rotation. Converted once
        per ``fit``; every view's k-means gets the same seed.
    n_jobs : int or None, default=None
        Threads of the compiled kernels (simplex projections, kNN graphs);
        ``None`` or ``-1`` uses every CPU. The results do not depend on it.
    verbose : int, default=0
        Print the objective at every iteration to stderr.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The cluster of each training sample, read from the indicator.
    anchors_ : list of ndarray of shape (n_anchors_, n_features_v)
        The learned anchors of every view, in the units of the input
        (standardisation undone); row ``j`` of every view is the same
        anchor.
    anchor_graph_ : scipy.sparse.csr_matrix of shape (n_anchors_, n_samples)
        The consensus anchor graph ``Z``; every column sums to 1.
    embedding_ : ndarray of shape (n_samples, n_clusters)
        The spectral embedding ``F`` (orthonormal columns).
    indicator_ : ndarray of shape (n_samples, n_clusters)
        The (scaled) indicator ``Y_hat`` of ``labels_``.
    rotation_ : ndarray of shape (n_clusters, n_clusters)
        The orthogonal ``R`` aligning ``embedding_`` with ``indicator_``.
    anchor_memberships_ : ndarray of shape (n_anchors_, n_clusters)
        Fraction of each anchor's mass in ``anchor_graph_`` that belongs to
        each cluster (zero rows for anchors of zero degree); used by
        :meth:`predict`.
    view_weights_ : ndarray of shape (n_views,)
        The weights ``alpha`` (sum to 1).
    objective_ : list of float
        ``J`` after the initialisation and after every iteration
        (non-increasing).
    n_iter_ : int
        Number of outer iterations run.
    n_anchors_ : int
        Number of anchors used.
    reference_view_ : int or None
        The view the anchor sets were aligned to (``None`` without
        alignment or with one view).
    view_means_, view_scales_ : list of ndarray of shape (n_features_v,) or None
        The standardisation of every view (``None`` if ``standardize=False``).
    n_views_ : int
        Number of views seen at ``fit``.
    n_features_per_view_ : tuple of int
        Number of features of each view seen at ``fit``.

    See Also
    --------
    mvlearn_ext.cluster.ConcatKMeans : The concatenation baseline.

    Notes
    -----
    Cost per outer iteration: O(n m (sum_v d_v + m + k)) for the least
    squares, the QP iterations and the graph products, plus
    O(m^2 sum_v d_v + m^3) for the anchor solves; memory
    O(n (m + k) + m sum_v d_v) beyond the views. Linear in ``n``.

    :meth:`predict` codes new samples on the learned anchors by the ``Z``
    step without the graph term (which needs the samples' embedding) and
    labels each with the cluster of largest ``z^T anchor_memberships_``:
    the clusters of the anchors it is coded on, weighted by its code.

    One view is accepted: the method is then single-view spectral
    clustering with discrete feedback. Duplicating a view changes nothing
    (with equal views the weights are equal and the fit term is that of one
    view).

    To confirm against the paper when it appears (spec 2.5): the constraint
    sets, ``Z^T Delta^{-1} Z`` versus ``Z^T Z``, scaled or plain
    indicators, the initialisation, the stopping rule and the alignment
    mechanism.

    References
    ----------
    "Discretely-Refined Multi-view Clustering via Aligned Anchor Learning",
    ICML 2026, poster 66036 (abstract only).

    W. Liu, J. He and S.-F. Chang, "Large graph construction for scalable
    semi-supervised learning", in Proc. ICML, 2010.

    J. Huang, F. Nie and H. Huang, "Spectral rotation versus K-means in
    spectral clustering", in Proc. AAAI, 2013.

    F. Nie, X. Wang and H. Huang, "Clustering and projected clustering with
    adaptive neighbors", in Proc. KDD, 2014.

    F. Nie, R. Zhang and X. Li, "A generalized power iteration method for
    solving quadratic problem on the Stiefel manifold", Science China
    Information Sciences 60, 2017.

    S. Wang, X. Liu, S. Liu, J. Jin, W. Tu, X. Zhu and E. Zhu, "Align then
    fusion: generalized large-scale multi-view clustering with
    anchor matching correspondences", in Proc. NeurIPS, 2022.

    Examples
    --------
    >>> from mvlearn_ext.cluster._drmc import DRMC
    >>> from mvlearn_ext.datasets import make_multiview_blobs
    >>> from mvlearn_ext.metrics import clustering_accuracy
    >>> Xs, y = make_multiview_blobs(300, n_views=3, n_clusters=3, random_state=0)
    >>> model = DRMC(n_clusters=3, random_state=0).fit(Xs)
    >>> float(clustering_accuracy(y, model.labels_))
    1.0
    >>> model.anchor_graph_.shape, model.embedding_.shape, len(model.anchors_)
    ((30, 300), (300, 3), 3)
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_anchors": [Interval(Integral, 1, None, closed="left"), None],
        "reg_lambda": [Interval(Real, 0, None, closed="left")],
        "beta": [Interval(Real, 0, None, closed="left")],
        "gamma": [Interval(Real, 0, None, closed="left")],
        "align_anchors": ["boolean"],
        "scaled_indicator": ["boolean"],
        "standardize": ["boolean"],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        n_anchors=None,
        reg_lambda=1.0,
        beta=1.0,
        gamma=1.0,
        align_anchors=False,
        scaled_indicator=True,
        standardize=True,
        max_iter=10,
        tol=1e-3,
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.n_clusters = n_clusters
        self.n_anchors = n_anchors
        self.reg_lambda = reg_lambda
        self.beta = beta
        self.gamma = gamma
        self.align_anchors = align_anchors
        self.scaled_indicator = scaled_indicator
        self.standardize = standardize
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_is_fitted__(self):
        # Fitted means labelled: fitted attributes are set together at the end of fit.
        return hasattr(self, "labels_")

    def _preprocess(self, Xs):
        return apply_view_scaling(Xs, self.view_means_, self.view_scales_)

    def _n_anchors(self, n_samples):
        m = _ANCHORS_PER_CLUSTER * self.n_clusters if self.n_anchors is None else self.n_anchors
        if m < self.n_clusters:
            raise ValueError(
                f"n_anchors={m} is smaller than n_clusters={self.n_clusters}; the embedding "
                "needs at least as many anchors as clusters"
            )
        return min(m, n_samples)

    def _fit(self, Xs, record_blocks):
        Xs = self._validate_fit_views(Xs, n_clusters=self.n_clusters)
        n_samples = Xs[0].shape[0]
        n_anchors = self._n_anchors(n_samples)
        self.view_means_, self.view_scales_ = (
            fit_view_scaling(Xs, unit_view_variance=True) if self.standardize else (None, None)
        )
        X_joint, views = stack_scaled_views(Xs, self.view_means_, self.view_scales_)
        result = _drmc(
            views,
            self.n_clusters,
            n_anchors=n_anchors,
            lambda_=float(self.reg_lambda),
            beta=float(self.beta),
            gamma=float(self.gamma),
            align_anchors=self.align_anchors,
            scaled=self.scaled_indicator,
            max_iter=self.max_iter,
            tol=float(self.tol),
            random_state=check_random_state(self.random_state),
            n_threads=self.n_jobs,
            verbose=self.verbose,
            record_blocks=record_blocks,
            X_joint=X_joint,
        )
        del X_joint, views
        Z = result["Z"]
        labels = result["labels"]
        self.n_anchors_ = n_anchors
        self._anchors_std = result["A"]
        if self.view_means_ is None:
            self.anchors_ = [A.copy() for A in result["A"]]
        else:
            self.anchors_ = [
                A * scale + mean
                for A, mean, scale in zip(
                    result["A"], self.view_means_, self.view_scales_, strict=True
                )
            ]
        self.anchor_graph_ = sp.csr_matrix(Z)
        self.embedding_ = result["F"]
        self.indicator_ = result["Yhat"]
        self.rotation_ = result["R"]
        self.labels_ = labels.astype(np.intp)
        self.view_weights_ = result["alpha"]
        self.objective_ = [float(v) for v in result["objective"]]
        self.n_iter_ = int(result["n_iter"])
        self.reference_view_ = result["reference"]
        degree = Z.sum(axis=1)
        memberships = Z @ _scaled_indicator(labels, self.n_clusters, False)
        live = degree > 0
        memberships[live] /= degree[live, None]
        memberships[~live] = 0.0
        self.anchor_memberships_ = memberships
        self._block_objectives = result["blocks"]
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, Xs, y=None):
        """Learn the consensus anchor graph, the embedding and the partition.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views (see :func:`mvlearn_ext.utils.validate_views`), with
            at least ``n_clusters`` samples.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : DRMC
            The fitted estimator.
        """
        return self._fit(Xs, record_blocks=False)

    def predict(self, Xs):
        """Assign new samples to clusters through the learned anchors.

        Each sample is coded on the anchors by the simplex QP of the ``Z``
        step without the graph term (the reconstruction of all views,
        weighted by ``view_weights_``, plus the ridge term), and takes the
        cluster of largest ``z^T anchor_memberships_``.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            Views with the number and widths of the training views.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            The cluster of each sample.
        """
        Xs = self._validate_predict_views(Xs)
        views = [np.ascontiguousarray(X) for X in self._preprocess(Xs)]
        codes = _code_samples(
            views, self._anchors_std, self.view_weights_, float(self.reg_lambda), self.n_jobs
        )
        scores = codes.T @ self.anchor_memberships_
        return np.argmax(scores, axis=1).astype(np.intp)
