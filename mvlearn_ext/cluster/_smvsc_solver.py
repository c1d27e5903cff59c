"""The steps of SMVSC and FPMVS-CAG, shared by their in-memory and block paths.

Both solve ``sum_v alpha_v^2 ||X_v - W_v A Z||_F^2 + lambda ||Z||_F^2``: the authors'
algorithm step for step (:func:`authors_fit`) or a monotone minimiser of the stated
objective (:func:`smvsc_fit`). EOMSC-CA reuses the anchor and view-weight steps.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from mvlearn_ext._lib._kernels import project_simplex
from mvlearn_ext.cluster._common import (
    generalized_power_iteration,
    procrustes,
    squared_view_weights,
)
from mvlearn_ext.cluster._preprocessing import constant_columns
from mvlearn_ext.utils._simplex_qp import simplex_qp
from mvlearn_ext.utils._validation import check_allocation
from mvlearn_ext.utils._warnings import warn

#: Settings of the inner solvers of the paper variant (exact to rounding here).
_QP_MAX_ITER = 300
_QP_TOL = 1e-9
_GPI_MAX_ITER = 30
#: The authors' codes also stop once the objective falls below this.
_OBJECTIVE_FLOOR = 1e-10


# --------------------------------------------------------------------------- shared steps


def mapstd_statistics(Xs):
    """Per-view feature means and sample standard deviations (``ddof=1``).

    The z-scoring of the authors' codes (MATLAB's ``mapstd``): every feature
    is centred and divided by its sample standard deviation (normalised by
    ``n - 1``). A constant feature gets scale 1, so it becomes 0. Returns
    ``(means, scales)``, two lists, for
    :func:`~mvlearn_ext.cluster._preprocessing.apply_view_scaling`.
    """
    means, scales = [], []
    for X in Xs:
        X = np.asarray(X, dtype=np.float64)
        mean = X.mean(axis=0)
        scale = X.std(axis=0, ddof=1) if X.shape[0] > 1 else np.zeros(X.shape[1])
        scale[constant_columns(mean, scale, np.float64)] = 1.0
        means.append(mean)
        scales.append(scale)
    return means, scales


def initial_graph(views, m, init, seed):
    """The starting anchor graph ``Z`` (m x n), one-hot columns.

    ``init="first"``: sample ``j < m`` is anchor ``j``'s only member and the
    other columns are 0 (``Z = [I_m, 0]``, the authors' codes; it depends on
    the order of the samples). ``init="kmeans"``: each sample on its cluster
    among ``m`` k-means clusters of the joined views (seeded by ``seed``).
    """
    n = views[0].shape[0]
    Z = np.zeros((m, n))
    if init == "first":
        Z[np.arange(m), np.arange(m)] = 1.0
        return Z
    labels = KMeans(n_clusters=m, n_init=1, random_state=seed).fit_predict(np.hstack(views))
    Z[labels, np.arange(n)] = 1.0
    return Z


def warn_degenerate_graph(est, n_distinct, anchor_mass):
    """Warn that the learned graph separates fewer groups than ``n_clusters``.

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
    k = est.n_clusters
    m = len(anchor_mass)
    n_empty = int(np.sum(np.asarray(anchor_mass) <= 0.0))
    name = type(est).__name__
    if "n_anchors" in est.get_params():
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
    if est.init == "first":
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


def start_model(widths, d):
    """``(W, A, alpha)`` at the start of the anchor solvers (both paths).

    ``W_v = I_{d_v x d}`` for every view width ``d_v`` in ``widths``, ``A`` not
    yet set (None) and uniform view weights. Refuses, naming ``n_components``,
    a ``d`` whose projections could not fit in memory.
    """
    check_allocation(int(d) * max(int(w) for w in widths), "n_components", d)
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


def store_anchor_model(est, m, d, W, A):
    """Set the fitted anchor model shared by SMVSC, FPMVS-CAG and EOMSC-CA on ``est``.

    ``n_anchors_``, ``n_components_``, ``projections_`` (``W``),
    ``consensus_anchors_`` (``A``) and ``anchors_`` (``(W_v A)^T`` per view).
    """
    est.n_anchors_, est.n_components_ = m, d
    est.projections_ = W
    est.consensus_anchors_ = A
    est.anchors_ = [(Wv @ A).T for Wv in W]


def final_kmeans(est, F, n_distinct, anchor_mass, seed):
    """The k-means of SMVSC's embedding ``F``, with a warning when the graph is degenerate.

    When ``n_distinct`` (the distinct rows of the embedding) is below ``n_clusters``,
    :func:`warn_degenerate_graph` warns with ``anchor_mass()`` (called only then) and
    scikit-learn's own warning about distinct clusters is silenced.
    """
    with warnings.catch_warnings():
        if n_distinct < est.n_clusters:
            warn_degenerate_graph(est, n_distinct, anchor_mass())
            warnings.filterwarnings("ignore", "Number of distinct clusters")
        return KMeans(n_clusters=est.n_clusters, n_init=est.n_init, random_state=seed).fit(F)


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


def authors_fit(
    views,
    *,
    Z0,
    n_components,
    lam,
    max_iter,
    tol,
    min_iter,
    weight_power,
    n_threads,
    log,
    callback=None,
):
    """The alternating scheme of the authors' SMVSC / FPMVS-CAG code.

    Every iteration updates, in the order of the code, ``W_v`` (polar
    factor of ``X_v Z^T A^T``; the first iteration takes
    ``W_v = I_{d_v x d}``, what the code's SVD of its all-zero start gives),
    ``A`` (polar factor of ``sum_v alpha_v^2 W_v^T X_v Z^T``), ``Z``
    (:func:`code_z_step` with ``sum_v alpha_v^2 + lambda``) and ``alpha``
    (:func:`code_view_weights`), then records
    ``sum_v alpha_v^2 ||R_v||^2 + lambda ||Z||^2`` with the new ``alpha``.
    Stops after iteration ``t`` when ``t >= min_iter`` and the relative
    change of that value is below ``tol``, when it falls below 1e-10, or
    at ``max_iter``. ``views`` are ``(n, d_v)`` (samples as rows).

    Returns ``(W, A, Z, alpha, z_alpha, history, n_iter)``, where
    ``z_alpha`` are the weights the last Z step used.
    """
    Z = Z0
    W, A, alpha = start_model([X.shape[1] for X in views], n_components)
    history = []
    start = time.perf_counter()
    n_iter = 0
    z_alpha = alpha
    for n_iter in range(1, max_iter + 1):
        XZt = [(Z @ X).T for X in views]  # d_v x m
        W, A = anchor_step(XZt, W, A, alpha)
        z_alpha = alpha
        Z = code_z_step(views, W, A, float(np.sum(alpha**2)) + lam, n_threads=n_threads)
        losses = residual_losses(views, W, A, Z)
        alpha = code_view_weights(losses, weight_power)
        history.append(float(np.sum(alpha**2 * losses) + lam * np.sum(Z * Z)))
        if callback is not None:
            callback(n_iter, W, A, Z, alpha)
        if iteration_done(log, n_iter, history, start, tol, min_iter=min_iter):
            break
    return W, A, Z, alpha, z_alpha, history, n_iter


# --------------------------------------------------------------------------- paper variant


def _is_multiple_of_identity(M, rtol=1e-10):
    """Whether the square ``M`` equals ``c I`` to rounding; returns ``(flag, c)``."""
    c = float(np.trace(M)) / M.shape[0]
    off = M - c * np.eye(M.shape[0])
    return bool(np.abs(off).max() <= rtol * max(abs(c), 1e-300)), c


class _State:
    """The blocks of the SMVSC model and the per-view statistics they need.

    ``views`` are ``(n, d_v)`` (samples as rows); ``W[v]`` is ``(d_v, d)``,
    ``A`` is ``(d, m)``, ``Z`` is ``(m, n)``, ``alpha`` is ``(V,)``.
    """

    def __init__(self, views, W, A, Z, alpha, lam):
        self.views = views
        self.norms2 = [float(np.sum(X * X)) for X in views]
        self.W, self.A, self.Z, self.alpha, self.lam = W, A, Z, alpha, lam
        self.refresh_graph()

    def refresh_graph(self):
        """Recompute the products with ``Z``: ``Z Z^T`` and ``X_v^T Z^T``."""
        self.ZZt = self.Z @ self.Z.T
        self.XZt = [(self.Z @ X).T for X in self.views]  # d_v x m

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

    def update_Z(self, n_threads):
        H, B = z_problem(self.views, self.W, self.A, self.alpha, self.lam)
        self.Z = solve_z(H, B, Z0=self.Z, n_threads=n_threads)
        self.refresh_graph()

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


def smvsc_fit(views, *, Z0, n_components, lam, max_iter, tol, n_threads, log, callback=None):
    """Alternating minimisation of the SMVSC objective (driver; valid input assumed).

    ``Z0`` (m x n) is the starting graph (:func:`initial_graph`); ``W_v``
    and ``A`` start as ``I_{d_v x d}`` and ``I_{d x m}``, ``alpha`` uniform.

    Returns the final :class:`_State`, the objective after every outer
    iteration, and the number of iterations. ``callback(iteration, block,
    objective)`` is called after every block update when given (tests use it
    to check that each block decreases the objective).
    """
    d, m = n_components, Z0.shape[0]
    W0, _, alpha0 = start_model([X.shape[1] for X in views], d)
    state = _State(views, W0, np.eye(d, m), Z0, alpha0, lam)
    history = []
    start = time.perf_counter()
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        for block, update in (
            ("W", state.update_W),
            ("A", state.update_A),
            ("Z", lambda: state.update_Z(n_threads)),
            ("alpha", state.update_alpha),
        ):
            update()
            if callback is not None:
                callback(n_iter, block, state.objective())
        history.append(state.objective())
        if iteration_done(log, n_iter, history, start, tol, floor=None):
            break
    # A last Z step with the final view weights: the graph is then the one
    # that ``predict`` computes for the training samples.
    state.update_Z(n_threads)
    if callback is not None:
        callback(n_iter, "Z", state.objective())
    history.append(state.objective())
    return state, history, n_iter


# --------------------------------------------------------------------------- estimators


def _normalize_rows(F):
    norms = np.linalg.norm(F, axis=1, keepdims=True)
    return F / np.where(norms > 0, norms, 1.0)
