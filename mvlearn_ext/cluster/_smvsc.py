"""SMVSC (Sun et al., ACM MM 2021) and FPMVS-CAG (Wang et al., IEEE TIP 2022).

Two solvers share the model ``sum_v alpha_v^2 ||X_v - W_v A Z||_F^2 +
lambda ||Z||_F^2``:

* ``variant="code"`` (the default) is the algorithm of the authors' public
  MATLAB code, step for step: features z-scored with the sample standard
  deviation (``mapstd``), ``Z`` started on the first ``m`` samples, the Z
  step in closed form without ``alpha_v^2`` in its linear term, each
  code's view-weight formula and stopping rule. On Handwritten it gives the
  authors' graphs to rounding (see ``tests/cluster/test_smvsc.py``).
* ``variant="paper"`` minimises the stated objective monotonically
  (``alpha_v^2`` in both terms of the Z step, an exact simplex QP when the
  closed form does not apply, GPI steps for narrow views).
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from mvlearn_ext._lib._kernels import project_simplex
from mvlearn_ext.cluster._base import EmbeddingClusterer, draw_seeds
from mvlearn_ext.cluster._common import (
    anchor_spectral_embedding,
    generalized_power_iteration,
    procrustes,
    simplex_qp,
    squared_view_weights,
)
from mvlearn_ext.utils._threads import single_threaded_pools
from mvlearn_ext.utils._warnings import warn

__all__ = ["FPMVSCAG", "SMVSC"]

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
        eps = np.finfo(np.float64).eps
        scale[scale <= 10.0 * eps * np.maximum(np.abs(mean), 1.0)] = 1.0
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
    yet set (None) and uniform view weights.
    """
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


def store_smvsc_model(
    est, *, graph, embedding, sigma, projection, z_alpha, alpha, history, n_iter
):
    """Set SMVSC's fitted graph, embedding, weights and history (both paths; not the labels)."""
    est.anchor_graph_ = graph
    est.embedding_ = embedding
    est.singular_values_ = sigma
    est._projection = projection
    est._z_step_weights = z_alpha
    est.view_weights_ = alpha
    est.objective_ = np.asarray(history)
    est.n_iter_ = int(n_iter)


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
    Z, _ = simplex_qp(H, B, Z0=Z0, max_iter=_QP_MAX_ITER, tol=_QP_TOL, n_threads=n_threads)
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


class SMVSC(EmbeddingClusterer):
    """Scalable multi-view subspace clustering with unified anchors (SMVSC).

    One anchor graph ``Z`` (m x n) is learned from all views at once, on
    ``m`` anchors ``A`` shared in a ``d``-dimensional latent space and
    mapped to each view by an orthonormal ``W_v`` (Sun et al., 2021):

        ``min sum_v alpha_v^2 ||X_v - W_v A Z||_F^2 + lambda ||Z||_F^2``

    subject to ``W_v^T W_v = I``, ``A^T A = I``, ``Z >= 0``,
    ``Z^T 1 = 1`` and ``alpha`` on the simplex (samples as columns of
    ``X_v``, ``d_v x n``). The blocks are updated in turn (``W_v``, ``A``,
    ``Z``, ``alpha``); then the ``m`` left singular vectors of ``Z^T`` are
    row-normalised and clustered by k-means, as in the authors' code. Cost
    per iteration O(n m sum_v d_v + n m log m); memory O(n (m + d_v))
    besides the data: no n x n matrix is formed.

    **variant="code"** (default) runs the algorithm of the authors' public
    code (Jeaninezpp/SMVSC, ``algo_qp.m``), step for step:

    * every feature is z-scored with its sample standard deviation
      (``mapstd``; ``standardize=True``);
    * ``Z`` starts as ``[I_m, 0]``: the first ``m`` samples are the
      anchors (``init="first"``), so the result depends on the order of
      the samples; ``W_v`` starts as ``I_{d_v x d}``;
    * ``W_v`` and ``A`` are polar factors (Procrustes) of
      ``X_v Z^T A^T`` and ``sum_v alpha_v^2 W_v^T X_v Z^T``;
    * the Z step is ``z_i = Pi(sum_v (W_v A)^T x_i / (sum_v alpha_v^2 +
      lambda))``: the QP that the code hands to ``quadprog``, with the
      Hessian ``2 (sum_v alpha_v^2 + lambda) I`` and a linear term
      **without** ``alpha_v^2``. It is not the Z step of the stated
      objective: the linear term lacks the weights, and the Hessian is a
      multiple of ``I`` only if every ``W_v A`` has orthonormal columns,
      which fails when ``m > d`` (``A`` then has orthonormal rows) or for a
      view narrower than ``d`` (such as Handwritten's 6 morphological
      features with ``d = 10``; its ``W_v`` has orthonormal rows);
    * ``alpha_v`` proportional to ``1 / ||X_v - W_v A Z||_F^2``;
    * the objective is recorded after the ``alpha`` step; the iterations
      stop after iteration 10 or later once its relative change is below
      ``tol``, or after ``max_iter`` iterations (the code allows a 51st).

    Leaving ``alpha_v^2`` out of the linear term is what keeps the
    6-feature view, whose weight is the largest, from dominating the graph:
    with the weights in both terms, the authors' code drops on Handwritten
    from ACC 0.823 to 0.548 (FPMVS-CAG). The objective is not monotone.

    **variant="paper"** minimises the stated objective, every block update
    being exact or a majorise-minimise step, so that ``objective_`` never
    increases: ``alpha_v^2`` in both terms of the Z step, solved exactly
    (closed form when the Hessian ``sum_v alpha_v^2 A^T W_v^T W_v A +
    lambda I`` is ``c I``, accelerated projected gradient otherwise);
    ``A`` and, for narrow views, ``W_v`` by generalised power iterations on
    the set of matrices with orthonormal rows when ``m > d`` or ``d_v <
    d``; ``alpha_v`` proportional to ``1 / ||R_v||^2``; stop at a relative
    decrease below ``tol``; a last Z step with the final weights.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters ``k``.
    n_anchors : int or None, default=None
        Number of anchors ``m``; ``None`` means ``n_clusters`` (the
        authors' grid is ``{k, 2k, 3k}``). Capped at ``n_samples``.
    n_components : int or None, default=None
        Dimension ``d`` of the latent anchor space; ``None`` means
        ``n_clusters`` (the authors' setting).
    reg_lambda : float, default=1.0
        ``lambda``, the weight of ``||Z||_F^2`` (the demo's value); 0 gives
        FPMVS-CAG's model (see :class:`FPMVSCAG`). Not named ``lambda_``:
        a trailing underscore marks fitted attributes in scikit-learn, and
        ``check_is_fitted`` would take any instance for fitted.
    variant : {"code", "paper"}, default="code"
        The authors' algorithm or the monotone solver of the stated
        objective (see above).
    init : {"first", "kmeans"}, default="first"
        Starting graph: the first ``m`` samples as anchors (the authors'
        codes; order-dependent), or each sample on its cluster among ``m``
        k-means clusters of the joined views (seeded by ``random_state``;
        equivariant to permutations of the samples).
    n_singular_vectors : int or None, default=None
        Left singular vectors of ``Z^T`` kept for the final k-means
        (capped at ``m``). ``None`` keeps all ``m``, as the reference code
        does; after row normalisation, the directions of tiny singular
        values then weigh as much as the leading ones, which can split
        clean clusters when ``m > k`` (``n_clusters`` is the usual
        alternative).
    standardize : bool, default=True
        Centre every feature and divide it by its sample standard deviation
        (``ddof=1``), as the authors' code does (``mapstd``), with the
        training statistics reused by :meth:`predict`.
    n_init : int, default=10
        Restarts of the final k-means on the embedding (the authors'
        evaluation script instead reports the best of 50 single runs).
    max_iter : int, default=50
        Maximum outer iterations.
    tol : float, default=1e-3
        Relative change of the objective below which the iterations stop.
    random_state : int, RandomState instance or None, default=None
        Seeds the final k-means (and the initial one with
        ``init="kmeans"``); converted once per ``fit``.
    n_jobs : int or None, default=None
        Threads of the compiled simplex projection (``None``: every CPU).
        The result does not depend on it: BLAS and OpenMP run on one thread
        inside :meth:`fit` and :meth:`predict`, so that the floats are the
        same on any machine setting.
    verbose : int, default=0
        Print the objective at every iteration to standard error (and a
        progress bar over the row blocks on the block path).
    block_size : int or None, default=None
        The block algorithm (``mvlearn_ext.cluster._anchor_blocks``): one pass
        over row blocks per iteration, never more than one block of samples
        in memory. It runs on its own for views given as dask arrays (their
        row chunks are the blocks; every view must have the same row
        chunks), zarr arrays or NumPy memmaps (cut every ``block_size`` rows,
        65536 if None), and on NumPy views when ``block_size`` is an int.
        Only ``init="first"``; ``variant="paper"`` keeps the ``n x m`` graph
        in this process (its QPs are warm-started from it). The final k-means
        is fitted on at most 100000 random rows (see the user guide). With the
        same blocks and seed it gives the same labels in memory, on disk and
        on a ``dask.distributed`` cluster. ``anchor_graph_`` and
        ``embedding_`` are then None; for dask views, ``labels_`` and
        :meth:`predict` return dask arrays.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The cluster of each training sample.
    anchors_ : list of ndarray of shape (n_anchors_, n_features_v)
        The anchors in each view's (standardised) feature space, the rows
        of ``(W_v A)^T``.
    consensus_anchors_ : ndarray of shape (n_components_, n_anchors_)
        ``A``, the shared latent anchors.
    projections_ : list of ndarray of shape (n_features_v, n_components_)
        ``W_v``.
    anchor_graph_ : ndarray of shape (n_anchors_, n_samples)
        ``Z``; every column is on the simplex.
    embedding_ : ndarray of shape (n_samples, n_singular_vectors)
        The row-normalised left singular vectors of ``Z^T`` (all
        ``n_anchors_`` by default).
    singular_values_ : ndarray of shape (n_singular_vectors,)
        The corresponding singular values of ``Z``.
    view_weights_ : ndarray of shape (n_views,)
        ``alpha`` after the last iteration.
    objective_ : ndarray
        The objective after each outer iteration (``n_iter_`` values); the
        paper variant appends the value after its final Z step and is
        non-increasing.
    n_iter_ : int
        Outer iterations run.
    n_anchors_, n_components_ : int
        The ``m`` and ``d`` used.
    kmeans_ : sklearn.cluster.KMeans
        The k-means fitted on ``embedding_``.
    view_means_, view_scales_ : list of ndarray or None
        Standardisation statistics of each view.
    n_views_ : int
        Number of views seen at ``fit``.
    n_features_per_view_ : tuple of int
        Number of features of each view seen at ``fit``.

    See Also
    --------
    FPMVSCAG : The parameter-free special case ``lambda = 0``, ``m = d = k``.
    LMVSC : One graph per view on per-view k-means anchors.
    EOMSCCA : FPMVS-CAG's model with a connectivity constraint; labels from
        the graph.

    Notes
    -----
    On Handwritten (the six views in the order of
    :func:`~mvlearn_ext.datasets.load_handwritten`, unshuffled) with
    ``n_clusters=10`` and the defaults, the learned graph equals the one of
    the authors' code run under GNU Octave to rounding (objective history
    to 1e-13 relative, principal angles between the embeddings below 1e-5
    degrees). ``labels_`` then score ACC 0.8205, NMI 0.789 for every seed;
    the authors' evaluation of their embedding gives 0.821 / 0.789 (best of
    50 single k-means runs) and ACC 0.810 +- 0.027 (k-means with 10
    random-start restarts, over seeds). When some anchors end unused (there
    with ``m = 2k`` and ``3k``), ``Z`` is rank deficient and the authors'
    embedding also holds an arbitrary basis of the null space of ``Z^T``
    (whatever LAPACK returns); ours sets those directions to zero.

    **An anchor left empty.** With ``init="first"`` the start is the first
    ``m`` samples; if they miss some clusters, an anchor can lose all its
    samples in a Z step, and then gets no pull back from the data (its column
    of ``X_v Z^T`` is zero). When the fitted graph separates fewer than
    ``n_clusters`` groups, ``fit`` emits a ``ConvergenceWarning`` that names
    the empty anchors and the advice (more anchors, ``init="kmeans"``, or
    shuffled samples), and ``labels_`` then merge clusters, as the authors'
    code would. On 10^5 samples of 10 blobs whose first 10 samples hold 7 of
    them (``benchmarks/bench_clustering_dask.py``), ``m = k`` ends so (one
    anchor empty, two blobs merged) while ``m = 2k`` and ``3k`` reach ACC 1.

    :meth:`predict` codes each new sample on the learned anchors by the Z
    step of the variant with the fitted ``W_v``, ``A`` and the weights of
    the last Z step, maps its code ``z`` to the embedding by the
    out-of-sample extension of the singular vectors (``z^T V Sigma^{-1}``,
    exact on the training samples), normalises the row and assigns the
    nearest k-means centre.

    References
    ----------
    M. Sun, P. Zhang, S. Wang, S. Zhou, W. Tu, X. Liu, E. Zhu and C. Wang,
    "Scalable multi-view subspace clustering with unified anchors", in
    Proc. ACM International Conference on Multimedia, 2021, pp. 3528-3536.

    F. Nie, R. Zhang and X. Li, "A generalized power iteration method for
    solving quadratic problem on the Stiefel manifold", Science China
    Information Sciences 60, 2017.

    Examples
    --------
    >>> from mvlearn_ext.cluster import SMVSC
    >>> from mvlearn_ext.datasets import make_multiview_blobs
    >>> from mvlearn_ext.metrics import clustering_accuracy
    >>> Xs, y = make_multiview_blobs(120, n_views=2, n_features=[4, 3], random_state=0)
    >>> model = SMVSC(n_clusters=3, n_anchors=6, random_state=0).fit(Xs)
    >>> model.anchor_graph_.shape, model.consensus_anchors_.shape
    ((6, 120), (3, 6))
    >>> float(clustering_accuracy(y, model.labels_))
    1.0
    """

    _min_views = 2

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_anchors": [Interval(Integral, 1, None, closed="left"), None],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "reg_lambda": [Interval(Real, 0, None, closed="left")],
        "variant": [StrOptions({"code", "paper"})],
        "init": [StrOptions({"first", "kmeans"})],
        "n_singular_vectors": [Interval(Integral, 1, None, closed="left"), None],
        "standardize": ["boolean"],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "block_size": [Interval(Integral, 1, None, closed="left"), None],
    }

    #: The authors' code: ``alpha_v ~ ||R_v||^-2`` and at least 10 iterations.
    _code_weight_power = 2
    _code_min_iter = 10

    def __init__(
        self,
        n_clusters=8,
        *,
        n_anchors=None,
        n_components=None,
        reg_lambda=1.0,
        variant="code",
        init="first",
        n_singular_vectors=None,
        standardize=True,
        n_init=10,
        max_iter=50,
        tol=1e-3,
        random_state=None,
        n_jobs=None,
        verbose=0,
        block_size=None,
    ):
        self.n_clusters = n_clusters
        self.n_anchors = n_anchors
        self.n_components = n_components
        self.reg_lambda = reg_lambda
        self.variant = variant
        self.init = init
        self.n_singular_vectors = n_singular_vectors
        self.standardize = standardize
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.block_size = block_size

    def _embedding_size(self, m):
        """Left singular vectors kept for the final k-means."""
        return m if self.n_singular_vectors is None else min(self.n_singular_vectors, m)

    def _model_settings(self):
        """``(n_anchors, n_components, lambda)`` before capping at ``n_samples``."""
        k = self.n_clusters
        m = k if self.n_anchors is None else self.n_anchors
        d = k if self.n_components is None else self.n_components
        return m, d, float(self.reg_lambda)

    def _fit_blocks(self, Xs):
        from mvlearn_ext.cluster._anchor_blocks import fit_smvsc_blocks

        return fit_smvsc_blocks(self, Xs)

    def _predict_blocks(self, Xs):
        from mvlearn_ext.cluster._anchor_blocks import predict_smvsc_blocks

        return predict_smvsc_blocks(self, Xs)

    def _fit_views(self, Xs):
        _, (init_seed, kmeans_seed) = draw_seeds(self.random_state, 2)
        n_samples = Xs[0].shape[0]
        self._fit_view_scaling(Xs, mapstd_statistics)
        views = self._scale_views(Xs)
        m, d, lam = self._model_settings()
        m = min(m, n_samples)
        with single_threaded_pools():
            Z0 = initial_graph(views, m, self.init, init_seed)
            settings = dict(
                Z0=Z0, n_components=d, lam=lam, max_iter=self.max_iter, tol=self.tol,
                n_threads=self.n_jobs, log=self._log,
            )  # fmt: skip
            if self.variant == "code":
                W, A, Z, alpha, z_alpha, history, n_iter = authors_fit(
                    views,
                    min_iter=self._code_min_iter,
                    weight_power=self._code_weight_power,
                    **settings,
                )
            else:
                state, history, n_iter = smvsc_fit(views, **settings)
                W, A, Z, alpha = state.W, state.A, state.Z, state.alpha
                z_alpha = alpha
            F, sigma, P = anchor_spectral_embedding(
                Z, self._embedding_size(m), normalize=False, return_projection=True
            )
            F = _normalize_rows(F)
            n_distinct = np.unique(F, axis=0).shape[0]
            self.kmeans_ = final_kmeans(
                self, F, n_distinct, lambda: np.sum(Z * Z, axis=1), kmeans_seed
            )

        store_anchor_model(self, m, d, W, A)
        store_smvsc_model(
            self, graph=Z, embedding=F, sigma=sigma, projection=P, z_alpha=z_alpha,
            alpha=alpha, history=history, n_iter=n_iter,
        )  # fmt: skip
        self.labels_ = self.kmeans_.labels_.astype(np.intp, copy=False)
        return self

    def _transform_views(self, Xs):
        views = self._scale_views(Xs)
        lam = self._model_settings()[2]
        W, A, alpha = self.projections_, self.consensus_anchors_, self._z_step_weights
        with single_threaded_pools():
            if self.variant == "code":
                Z = code_z_step(views, W, A, float(np.sum(alpha**2)) + lam, n_threads=self.n_jobs)
            else:
                H, B = z_problem(views, W, A, alpha, lam)
                Z = solve_z(H, B, n_threads=self.n_jobs)
            return _normalize_rows(Z.T @ self._projection)

    def _predict_views(self, Xs):
        F = self._transform_views(Xs)
        with single_threaded_pools():
            return self.kmeans_.predict(F).astype(np.intp, copy=False)


def _normalize_rows(F):
    norms = np.linalg.norm(F, axis=1, keepdims=True)
    return F / np.where(norms > 0, norms, 1.0)


class FPMVSCAG(SMVSC):
    """Fast parameter-free multi-view subspace clustering (FPMVS-CAG).

    The SMVSC model without the regulariser and with as many anchors and
    latent dimensions as clusters, ``lambda = 0`` and ``m = d = k`` (Wang
    et al., 2022). ``A`` is then a ``k x k`` orthogonal matrix.

    **variant="code"** (default) runs the algorithm of the authors' code
    (the open ``algo_qp.m`` of Qinghai-Zheng/FPMVS-CAG; the official
    wangsiwei2010/FPMVS-CAG ships its solver as P-code only): everything as
    in :class:`SMVSC`'s code variant, except that ``alpha_v`` is
    proportional to ``1 / ||X_v - W_v A Z||_F`` (the unsquared norm, which
    does not minimise the squared-weight objective) and that exactly 20
    iterations run (``max_iter=20``, ``tol=0``; the code's tolerance rule
    is commented out). The Z step has no ``alpha_v^2`` in its linear term;
    with it, the authors' code drops on Handwritten from ACC 0.823 to 0.548,
    because the 6-feature view gets the largest weight (0.46) and then
    dominates the graph. **variant="paper"** is :class:`SMVSC`'s monotone
    solver with ``lambda = 0``.

    On Handwritten (unshuffled, six views) with ``n_clusters=10`` and the
    defaults, the graph equals the authors' (principal angles between the
    embeddings below 1e-5 degrees) and every k-means run gives ACC 0.8235,
    NMI 0.7931, as the authors' code does.

    With ``m = k`` fixed, the authors' start on the first ``k`` samples can
    leave an anchor empty when those samples miss some clusters; ``fit`` then
    warns and the labels merge clusters (see "An anchor left empty" in
    :class:`SMVSC`).

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters ``k``, also the number of anchors and the latent
        dimension (each capped at ``n_samples``).
    variant : {"code", "paper"}, default="code"
        The authors' algorithm or the monotone solver (see :class:`SMVSC`).
    init : {"first", "kmeans"}, default="first"
        Starting graph (see :class:`SMVSC`).
    standardize : bool, default=True
        Centre every feature and divide it by its sample standard deviation.
    n_init : int, default=10
        Restarts of the final k-means.
    max_iter : int, default=20
        Maximum outer iterations (the authors' code runs exactly 20).
    tol : float, default=0.0
        Relative change of the objective below which the iterations stop
        (0: run ``max_iter`` iterations, as the code does).
    random_state : int, RandomState instance or None, default=None
        Seeds the final k-means (and the initial one with ``init="kmeans"``).
    n_jobs : int or None, default=None
        Threads of the compiled simplex projection; the result does not
        depend on it.
    verbose : int, default=0
        Print the objective at every iteration to standard error (and a
        progress bar over the row blocks on the block path).
    block_size : int or None, default=None
        The block algorithm for views larger than memory (dask, zarr, memmaps,
        or NumPy views with an int ``block_size``), as in :class:`SMVSC`.

    Attributes
    ----------
    labels_, anchors_, consensus_anchors_, projections_, anchor_graph_, \
embedding_, singular_values_, view_weights_, objective_, n_iter_, n_anchors_, \
n_components_, kmeans_, view_means_, view_scales_, n_views_, n_features_per_view_
        As in :class:`SMVSC`.

    See Also
    --------
    SMVSC : The model with ``lambda``, ``m`` and ``d`` free.
    EOMSCCA : This model with a connectivity constraint on the graph.

    References
    ----------
    S. Wang, X. Liu, X. Zhu, P. Zhang, Y. Zhang, F. Gao and E. Zhu, "Fast
    parameter-free multi-view subspace clustering with consensus anchor
    guidance", IEEE Transactions on Image Processing 31, 2022.

    Examples
    --------
    >>> from mvlearn_ext.cluster import FPMVSCAG
    >>> from mvlearn_ext.datasets import make_multiview_blobs
    >>> from mvlearn_ext.metrics import clustering_accuracy
    >>> Xs, y = make_multiview_blobs(120, n_views=2, n_features=[4, 3], random_state=0)
    >>> model = FPMVSCAG(n_clusters=3, random_state=0).fit(Xs)
    >>> model.anchor_graph_.shape
    (3, 120)
    >>> float(clustering_accuracy(y, model.labels_))
    1.0
    """

    _parameter_constraints: dict = {
        key: value
        for key, value in SMVSC._parameter_constraints.items()
        if key not in ("n_anchors", "n_components", "reg_lambda", "n_singular_vectors")
    }

    #: The authors' code: ``alpha_v ~ ||R_v||^-1``; the iteration count is fixed.
    _code_weight_power = 1
    _code_min_iter = 1

    def __init__(
        self,
        n_clusters=8,
        *,
        variant="code",
        init="first",
        standardize=True,
        n_init=10,
        max_iter=20,
        tol=0.0,
        random_state=None,
        n_jobs=None,
        verbose=0,
        block_size=None,
    ):
        self.n_clusters = n_clusters
        self.variant = variant
        self.init = init
        self.standardize = standardize
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.block_size = block_size

    def _model_settings(self):
        return self.n_clusters, self.n_clusters, 0.0

    def _embedding_size(self, m):
        return m
