"""DREAM: drift-corrected federated multi-objective learning (reconstruction).

Reconstruction: DREAM (Zhou, Ou & Shi, ICML 2026) is known from its abstract
only: clients use drift-aware control variates (SCAFFOLD-like) and
momentum-smoothed local updates; the server solves a regularised QP
parameterised by a task-correction matrix. The algorithm here is this
package's reconstruction:

client ``i``, task ``s``, round ``t``, local steps ``k = 1..K``::

    v = grad f_{i,s}(y) - c_i^s + c^s          (control variates, optional)
    m = beta m + (1 - beta) v                   (momentum, kept across rounds)
    y = y - eta_l m                             (eta_l: learning_rate_local)
    Delta_i^s = (x_t - y) / (K eta_l)           (normalised pseudo-gradient)
    c_i^s <- c_i^s - c^s + Delta_i^s

server: ``Delta^s = mean_i Delta_i^s``, ``c^s += (|sampled| / N) mean_i (change
of c_i^s)``, weights ``lambda`` from :func:`dream_weights`
(or fixed), ``x <- x - eta (C lambda)^T [Delta^1 .. Delta^S]`` with ``eta`` the
``learning_rate``.

With ``control_variates=False, momentum=0`` and the QP at ``C = I, rho = 0``
this is FMGDA (Yang et al., NeurIPS 2023); with one task it is SCAFFOLD
(Karimireddy et al., ICML 2020); with fixed weights and no control variates
the server averages per-task local runs (FedAvg on the scalarised loss when
``K = 1``). The engine-free protocol objects (:class:`DREAMServer`,
:class:`DREAMClient`) run unchanged on the in-process simulator and on
Flower (:mod:`mvlearn_ext.federated._flower`).
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np

from mvlearn_ext.moo import min_norm_direction, solve_simplex_qp
from mvlearn_ext.utils._validation import (
    check_count,
    check_magnitude,
    check_real,
    check_rng,
    real_array,
    unit_exponent,
)

__all__ = [
    "DREAMClient",
    "DREAMServer",
    "FMOLResult",
    "InProcessSimulator",
    "QuadraticFMOL",
    "dream_direction",
    "dream_weights",
    "run_dream",
]


def _check_correction(correction, n_tasks):
    """``C`` as a float64 array of shape ``(n_tasks, n_tasks)`` (identity for None)."""
    if correction is None:
        return np.eye(n_tasks)
    C = real_array(correction, "correction", ndim=2)
    if C.shape != (n_tasks, n_tasks):
        raise ValueError(f"correction must have shape ({n_tasks}, {n_tasks}), got {C.shape}")
    return C


def _check_anchor(anchor, n_tasks):
    """``w`` as a float64 point of the simplex of shape ``(n_tasks,)`` (uniform for None)."""
    if anchor is None:
        return np.full(n_tasks, 1.0 / n_tasks)
    w = real_array(anchor, "anchor").reshape(-1)
    if w.shape != (n_tasks,):
        raise ValueError(f"anchor must have shape ({n_tasks},), got {w.shape}")
    if w.min() < 0 or abs(w.sum() - 1) > 1e-9:
        raise ValueError("anchor must be on the probability simplex (>= 0, sums to 1)")
    return w


def _check_dream_inputs(G, correction, reg_rho, anchor):
    """``(G, C, reg_rho, w)`` of :func:`dream_weights`, validated, with the defaults filled in."""
    G = real_array(G, "G", ndim=2)
    check_magnitude(G, "G")  # the QP takes the Gram matrix of the directions
    S = G.shape[0]
    C = _check_correction(correction, S)
    reg_rho = check_real(reg_rho, "reg_rho", low=0.0)
    w = _check_anchor(anchor, S)
    return G, C, reg_rho, w


def _check_momentum(momentum):
    """``momentum`` as a float in ``[0, 1)``."""
    momentum = check_real(momentum, "momentum")
    if not 0.0 <= momentum < 1.0:
        raise ValueError(f"momentum must be in [0, 1), got {momentum!r}")
    return momentum


def _check_seed(random_state):
    """The int root of the seeded streams of :class:`DREAMServer` and :class:`DREAMClient`.

    An int (>= 0) is the root itself; ``None``, a ``Generator`` or a
    ``RandomState`` give a root drawn from :func:`~mvlearn_ext.utils.check_rng`.
    """
    if isinstance(random_state, numbers.Integral):  # bool included: refused by check_count
        return check_count(random_state, "random_state", 0)
    return int(check_rng(random_state).integers(2**32))


def _two_task(a, b, reg_rho, w1):
    """Closed form of the server QP for two tasks: the weight on the first direction."""
    diff = a - b
    denom = diff @ diff + 2 * reg_rho
    if denom <= 0:
        return 0.5 if reg_rho == 0 else w1
    alpha = (b @ (b - a) + 2 * reg_rho * w1) / denom
    return float(np.clip(alpha, 0.0, 1.0))


def dream_weights(G, *, correction=None, reg_rho=0.0, anchor=None, method="auto"):
    """Task weights of the DREAM server QP (reconstruction).

    Solves ``lambda* = argmin_{lambda in simplex} 1/2 lambda^T C^T G G^T C
    lambda + reg_rho/2 ||lambda - w||^2`` for task directions ``G`` (one
    row per task), a task-correction matrix ``C`` and anchor weights ``w``;
    the server direction is ``d = (C lambda*)^T G``.

    Reconstruction: DREAM (Zhou, Ou & Shi, ICML 2026) is known from its
    abstract only ("a regularised QP parameterised by a task correction
    matrix" covering scalarisation, prioritisation and gradient
    manipulation); this QP is one that covers those cases. Special cases:
    ``C = I, reg_rho = 0`` is MGDA (:func:`mvlearn_ext.moo.min_norm_weights`);
    ``reg_rho -> inf`` gives ``lambda = w`` (linear scalarisation with weights
    ``C w``); ``C = diag(priorities)`` prioritises; ``C = diag(1/||g_s||)`` is
    MGDA on normalised directions.

    Parameters
    ----------
    G : array-like of shape (n_tasks, n_params)
        Task directions (gradients or pseudo-gradients), one per row.
    correction : array-like of shape (n_tasks, n_tasks), optional
        ``C``; identity by default.
    reg_rho : float, default=0.0
        ``rho >= 0``; with ``rho > 0`` the solution is unique and Lipschitz
        in ``G``.
    anchor : array-like of shape (n_tasks,), optional
        ``w`` on the simplex; uniform by default.
    method : {"auto", "closed_form", "qp"}, default="auto"
        ``"auto"`` uses the closed form for two tasks and
        :func:`mvlearn_ext.moo.solve_simplex_qp` otherwise.

    Returns
    -------
    weights : ndarray of shape (n_tasks,)

    See Also
    --------
    dream_direction : The weights and the common direction.
    mvlearn_ext.moo.min_norm_weights : The unregularised min-norm (MGDA) weights.

    Examples
    --------
    >>> from mvlearn_ext.federated import dream_weights
    >>> dream_weights([[1.0, 0.0], [0.0, 2.0]])  # MGDA: 0.8 g1 + 0.2 g2
    array([0.8, 0.2])
    >>> dream_weights([[1.0, 0.0], [0.0, 2.0]], reg_rho=1e9).round(6)
    array([0.5, 0.5])
    """
    G, C, reg_rho, w = _check_dream_inputs(G, correction, reg_rho, anchor)
    if method not in ("auto", "closed_form", "qp"):
        raise ValueError(f"method must be 'auto', 'closed_form' or 'qp', got {method!r}")
    if method == "closed_form" and G.shape[0] != 2:
        raise ValueError(f"method='closed_form' needs exactly 2 tasks, got {G.shape[0]}")
    return _dream_weights(G, C, reg_rho, w, method)


def _dream_weights(G, C, reg_rho, w, method):
    """:func:`dream_weights` on validated inputs."""
    S = G.shape[0]
    M = C.T @ G  # rows: the corrected task directions (columns of G_t C)
    if S == 1:
        return np.ones(1)
    if method == "closed_form" or (method == "auto" and S == 2):
        alpha = _two_task(M[0], M[1], reg_rho, w[0])
        return np.array([alpha, 1.0 - alpha])
    Q = M @ M.T + reg_rho * np.eye(S)
    return solve_simplex_qp(Q, -reg_rho * w)


def dream_direction(G, *, correction=None, reg_rho=0.0, anchor=None):
    """``(weights, d)`` with ``d = (C weights)^T G`` (see :func:`dream_weights`).

    Parameters
    ----------
    G : array-like of shape (n_tasks, n_params)
        Task directions (gradients or pseudo-gradients), one per row.
    correction : array-like of shape (n_tasks, n_tasks), optional
        ``C``; identity by default.
    reg_rho : float, default=0.0
        ``rho >= 0``, the pull of the weights toward ``anchor``.
    anchor : array-like of shape (n_tasks,), optional
        ``w`` on the simplex; uniform by default.

    Returns
    -------
    weights : ndarray of shape (n_tasks,)
        The weights of :func:`dream_weights`.
    d : ndarray of shape (n_params,)
        The common update direction.

    See Also
    --------
    dream_weights : The weights alone.

    Examples
    --------
    >>> from mvlearn_ext.federated import dream_direction
    >>> weights, d = dream_direction([[1.0, 0.0], [0.0, 2.0]])  # MGDA: 0.8 g1 + 0.2 g2
    >>> weights.round(6).tolist(), d.round(6).tolist()
    ([0.8, 0.2], [0.8, 0.4])
    """
    G, C, reg_rho, w = _check_dream_inputs(G, correction, reg_rho, anchor)
    lam = _dream_weights(G, C, reg_rho, w, "auto")
    return lam, (C @ lam) @ G


class QuadraticFMOL:
    """Heterogeneous quadratic test bed with a closed-form Pareto set.

    ``f_{i,s}(x) = 1/2 ||A_{i,s} x - b_{i,s}||^2`` on client ``i`` for task
    ``s``; ``F_s = mean_i f_{i,s}``. The Pareto set is ``{x(w) : w in
    simplex}`` with ``x(w) = (sum_s w_s H_s)^{-1} sum_s w_s h_s``.

    Parameters
    ----------
    n_clients, n_tasks, dim : int
        Numbers of clients, of tasks and of model parameters (each >= 1).
    heterogeneity : float, default=1.0
        Size (>= 0) of the client-specific perturbations of ``A`` and ``b``.
    noise : float, default=0.0
        Standard deviation (>= 0) of additive Gaussian gradient noise.
    random_state : int, numpy.random.Generator, numpy.random.RandomState or None, default=None
        Seeds the draw of ``A`` and ``b`` (see :func:`~mvlearn_ext.utils.check_rng`).

    Raises
    ------
    TypeError
        If a count is not an int, a float parameter not a real number, or
        ``random_state`` of another type.
    ValueError
        If a count is below 1, or ``heterogeneity`` or ``noise`` is negative
        or not finite.

    See Also
    --------
    run_dream : Runs DREAM on this test bed.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.federated import QuadraticFMOL
    >>> prob = QuadraticFMOL(n_clients=2, n_tasks=2, dim=3, random_state=0)
    >>> x = prob.pareto_point([0.5, 0.5])  # a point of the Pareto set
    >>> bool(prob.pareto_stationarity(x) < 1e-10)
    True
    >>> prob.task_losses(x).shape, prob.grad(0, 1, x).shape  # F_s(x); grad of f_{0,1}
    ((2,), (3,))
    """

    def __init__(
        self, *, n_clients, n_tasks, dim, heterogeneity=1.0, noise=0.0, random_state=None
    ):
        n_clients = check_count(n_clients, "n_clients", 1)
        n_tasks = check_count(n_tasks, "n_tasks", 1)
        dim = check_count(dim, "dim", 1)
        heterogeneity = check_real(heterogeneity, "heterogeneity", low=0.0)
        self.noise = check_real(noise, "noise", low=0.0)
        rng = check_rng(random_state)
        self.n_clients, self.n_tasks, self.dim = n_clients, n_tasks, dim
        m = dim + 2
        base_A = rng.normal(size=(n_tasks, m, dim)) / np.sqrt(m) + np.eye(m, dim)[None]
        base_b = rng.normal(size=(n_tasks, m)) * 2.0
        self.A = base_A[None] + heterogeneity * rng.normal(
            size=(n_clients, n_tasks, m, dim)
        ) / np.sqrt(m)
        self.b = base_b[None] + heterogeneity * rng.normal(size=(n_clients, n_tasks, m))
        self._H = np.einsum("istd,iste->isde", self.A, self.A)  # A^T A per client/task
        self._h = np.einsum("istd,ist->isd", self.A, self.b)
        self.H = self._H.mean(0)
        self.h = self._h.mean(0)

    def _check_point(self, x):
        """``x`` as a validated float64 array of shape ``(dim,)``."""
        x = real_array(x, "x", ndim=1)
        if x.shape != (self.dim,):
            raise ValueError(f"x must have shape ({self.dim},), got {x.shape}")
        return x

    def _grad(self, i, s, x):
        """:meth:`grad` without the checks (the local steps of :func:`run_dream`)."""
        return self._H[i, s] @ x - self._h[i, s]

    def grad(self, i, s, x):
        """Exact gradient of ``f_{i,s}`` at ``x``.

        Parameters
        ----------
        i : int
            The client.
        s : int
            The task.
        x : array-like of shape (dim,)
            The point.

        Returns
        -------
        g : ndarray of shape (dim,)
            ``A_{i,s}^T (A_{i,s} x - b_{i,s})``.

        Raises
        ------
        TypeError
            If ``x`` is not a numeric array (strings included).
        ValueError
            If ``x`` holds complex values, NaN or infinity, or is not of shape
            ``(dim,)``.
        """
        return self._grad(i, s, self._check_point(x))

    def task_gradients(self, x):
        """``(S, dim)``: the gradients of the global task losses ``F_s``.

        Parameters
        ----------
        x : array-like of shape (dim,)
            The point.

        Returns
        -------
        G : ndarray of shape (n_tasks, dim)
            ``grad F_s(x)``, one row per task.

        Raises
        ------
        TypeError
            If ``x`` is not a numeric array (strings included).
        ValueError
            If ``x`` holds complex values, NaN or infinity, or is not of shape
            ``(dim,)``.
        """
        x = self._check_point(x)
        return np.einsum("sde,e->sd", self.H, x) - self.h

    def task_losses(self, x):
        """``(S,)``: the global task losses ``F_s(x)``.

        Parameters
        ----------
        x : array-like of shape (dim,)
            The point.

        Returns
        -------
        F : ndarray of shape (n_tasks,)
            ``F_s(x) = mean_i 1/2 ||A_{i,s} x - b_{i,s}||^2``.

        Raises
        ------
        TypeError
            If ``x`` is not a numeric array (strings included).
        ValueError
            If ``x`` holds complex values, NaN or infinity, values whose
            squares overflow, or is not of shape ``(dim,)``.
        """
        x = self._check_point(x)
        check_magnitude(x, "x")  # the losses square the residuals
        r = np.einsum("istd,d->ist", self.A, x) - self.b
        return 0.5 * (r**2).sum(-1).mean(0)

    def pareto_point(self, w):
        """The minimiser of ``sum_s w_s F_s``.

        Parameters
        ----------
        w : array-like of shape (n_tasks,)
            The task weights (a point of the simplex for a Pareto point).

        Returns
        -------
        x : ndarray of shape (dim,)
            ``x(w) = (sum_s w_s H_s)^{-1} sum_s w_s h_s``.

        Raises
        ------
        TypeError
            If ``w`` is not a numeric array (strings included).
        ValueError
            If ``w`` holds complex values, NaN or infinity, or is not of shape
            ``(n_tasks,)``; if ``sum_s w_s H_s`` is singular
            (:class:`numpy.linalg.LinAlgError`).
        """
        w = real_array(w, "w", ndim=1)
        if w.shape != (self.n_tasks,):
            raise ValueError(f"w must have shape ({self.n_tasks},), got {w.shape}")
        return np.linalg.solve(np.tensordot(w, self.H, 1), w @ self.h)

    def pareto_stationarity(self, x):
        """``min_{lambda in simplex} ||sum_s lambda_s grad F_s(x)||`` (0 on the Pareto set).

        The norm is taken of the direction over a power of two (exact), so that it
        stays finite wherever the direction is.
        """
        d = min_norm_direction(self.task_gradients(x))[1]
        e = unit_exponent(d)
        return float(np.ldexp(np.linalg.norm(np.ldexp(d, -e)), e))


def _round_rng(random_state, client, rnd):
    return np.random.default_rng(
        np.random.SeedSequence([int(random_state), int(client), int(rnd)])
    )


class DREAMClient:
    """One client: control variates, momentum and the local steps.

    ``grad(s, y)`` returns the (exact) gradient of this client's loss of task
    ``s`` at ``y``; ``noise`` adds seeded Gaussian noise to every gradient
    (seeded by ``(random_state, client_id, round)``, so any engine gives the same
    numbers).

    Parameters
    ----------
    client_id : int
        The client's index, >= 0 (also a key of its noise stream).
    grad : callable
        ``grad(s, y) -> ndarray of shape (dim,)``, the gradient of this
        client's loss of task ``s`` at ``y``.
    n_tasks : int
        Number of tasks ``S`` (>= 1).
    dim : int
        Dimension of the model ``x`` (>= 1).
    local_steps : int
        Local steps ``K`` per task and round (>= 1).
    learning_rate_local : float
        Step size of the local steps (> 0).
    momentum : float in [0, 1), default=0.0
        ``beta`` of the local direction ``m <- beta m + (1 - beta) v``
        (0: no momentum); ``m`` is kept across rounds.
    control_variates : bool, default=True
        Correct every local gradient by ``c - c_local`` (SCAFFOLD-style
        control variates, against client drift); False gives FMGDA's plain
        local steps.
    noise : float, default=0.0
        Standard deviation (>= 0) of the Gaussian noise added to every gradient.
    random_state : int, numpy.random.Generator, numpy.random.RandomState or None, default=0
        The root of the noise streams: an int (>= 0) is the root; ``None``, a
        ``Generator`` or a ``RandomState`` draw it once, here.

    Raises
    ------
    TypeError
        If ``grad`` is not callable, a count is not an int, a float
        parameter not a real number, or ``random_state`` of another type.
    ValueError
        If a parameter is out of the range given above.

    See Also
    --------
    DREAMServer : The server it answers.
    run_dream : Runs a server and its clients on a :class:`QuadraticFMOL`.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.federated import DREAMClient, DREAMServer, QuadraticFMOL
    >>> from mvlearn_ext.federated import InProcessSimulator
    >>> prob = QuadraticFMOL(n_clients=2, n_tasks=2, dim=3, random_state=0)
    >>> server = DREAMServer(np.zeros(3), n_tasks=2, n_clients=2, learning_rate=0.1)
    >>> clients = [DREAMClient(i, (lambda s, y, i=i: prob.grad(i, s, y)), n_tasks=2, dim=3,
    ...                        local_steps=1, learning_rate_local=0.05) for i in range(2)]
    >>> _ = InProcessSimulator(server, clients).run(300)
    >>> bool(prob.pareto_stationarity(server.x) < 1e-6)
    True
    """

    def __init__(
        self,
        client_id,
        grad,
        *,
        n_tasks,
        dim,
        local_steps,
        learning_rate_local,
        momentum=0.0,
        control_variates=True,
        noise=0.0,
        random_state=0,
    ):
        self.client_id = check_count(client_id, "client_id", 0)
        if not callable(grad):
            raise TypeError(f"grad must be callable, got {type(grad).__name__}")
        self.grad = grad
        self.n_tasks = check_count(n_tasks, "n_tasks", 1)
        self.dim = check_count(dim, "dim", 1)
        self.local_steps = check_count(local_steps, "local_steps", 1)
        self.learning_rate_local = check_real(
            learning_rate_local, "learning_rate_local", low=0.0, low_open=True
        )
        self.momentum = _check_momentum(momentum)
        self.control_variates = bool(control_variates)
        self.noise = check_real(noise, "noise", low=0.0)
        self.random_state = _check_seed(random_state)
        self.c_local = np.zeros((self.n_tasks, self.dim))
        self.m = np.zeros((self.n_tasks, self.dim))

    def get_state(self):
        return {"c_local": self.c_local.copy(), "m": self.m.copy()}

    def set_state(self, state):
        self.c_local = np.array(state["c_local"], dtype=np.float64)
        self.m = np.array(state["m"], dtype=np.float64)

    def fit(self, message):
        """Run the local steps for every task; return pseudo-gradients and c changes.

        Parameters
        ----------
        message : dict
            The server's message of the round: ``"x"`` (the global model, of
            shape (dim,)), ``"c"`` (the global control variates, of shape
            (n_tasks, dim)) and ``"round"`` (int).

        Returns
        -------
        reply : dict
            ``"delta"``: the pseudo-gradients ``(x - y_K) / (K lr)`` of shape
            (n_tasks, dim); ``"delta_c"``: the change of the client's control
            variates (zeros without control variates).
        """
        x = np.asarray(message["x"], dtype=np.float64)
        c = np.asarray(message["c"], dtype=np.float64)
        rnd = int(message["round"])
        rng = _round_rng(self.random_state, self.client_id, rnd)
        K, lr, beta = self.local_steps, self.learning_rate_local, self.momentum
        delta = np.empty((self.n_tasks, self.dim))
        delta_c = np.zeros((self.n_tasks, self.dim))
        for s in range(self.n_tasks):
            y = x.copy()
            m = self.m[s]
            for _ in range(K):
                g = self.grad(s, y)
                if self.noise > 0:
                    g = g + self.noise * rng.standard_normal(self.dim)
                v = g - self.c_local[s] + c[s] if self.control_variates else g
                m = beta * m + (1.0 - beta) * v
                y = y - lr * m
            self.m[s] = m
            delta[s] = (x - y) / (K * lr)
            if self.control_variates:
                new = self.c_local[s] - c[s] + delta[s]
                delta_c[s] = new - self.c_local[s]
                self.c_local[s] = new
        return {"delta": delta, "delta_c": delta_c}


class DREAMServer:
    """The server: client sampling, control-variate averaging and the QP step.

    Parameters
    ----------
    x0 : array-like of shape (dim,)
        The initial model (finite).
    n_tasks, n_clients : int
        Numbers of tasks and of clients (each >= 1).
    learning_rate : float
        Step size (> 0) of the server's update.
    aggregation : {"qp", "fixed"}, default="qp"
        ``"qp"``: weights from :func:`dream_weights` with
        ``correction``, ``reg_rho`` and ``anchor``; ``"fixed"``: ``anchor``
        (uniform by default) as fixed scalarisation weights.
    correction : array-like of shape (n_tasks, n_tasks), optional
        ``C`` of :func:`dream_weights`; identity by default.
    reg_rho : float, default=0.0
        ``rho >= 0`` of :func:`dream_weights`.
    anchor : array-like of shape (n_tasks,), optional
        ``w`` on the simplex; uniform by default.
    participation : float in (0, 1], default=1.0
        Fraction of clients sampled each round (without replacement).
    random_state : int, numpy.random.Generator, numpy.random.RandomState or None, default=0
        Seeds the sampling of the clients of each round: an int (>= 0) is the
        root of the streams; ``None``, a ``Generator`` or a ``RandomState``
        draw it once, here.

    Raises
    ------
    TypeError
        If a count is not an int, a float parameter not a real number, an
        array not numeric, or ``random_state`` of another type.
    ValueError
        If a parameter is out of the range given above, ``x0`` is not 1-D,
        or ``correction`` or ``anchor`` has the wrong shape.

    See Also
    --------
    DREAMClient : The clients it aggregates.
    dream_weights : The task weights of its QP step.
    run_dream : Runs a server and its clients on a :class:`QuadraticFMOL`.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.federated import DREAMClient, DREAMServer, QuadraticFMOL
    >>> from mvlearn_ext.federated import InProcessSimulator
    >>> prob = QuadraticFMOL(n_clients=2, n_tasks=2, dim=3, random_state=0)
    >>> server = DREAMServer(np.zeros(3), n_tasks=2, n_clients=2, learning_rate=0.1)
    >>> clients = [DREAMClient(i, (lambda s, y, i=i: prob.grad(i, s, y)), n_tasks=2, dim=3,
    ...                        local_steps=1, learning_rate_local=0.05) for i in range(2)]
    >>> _ = InProcessSimulator(server, clients).run(300)
    >>> bool(prob.pareto_stationarity(server.x) < 1e-6)
    True
    """

    def __init__(
        self,
        x0,
        *,
        n_tasks,
        n_clients,
        learning_rate,
        aggregation="qp",
        correction=None,
        reg_rho=0.0,
        anchor=None,
        participation=1.0,
        random_state=0,
    ):
        self.x = real_array(x0, "x0", ndim=1)
        self.n_tasks = check_count(n_tasks, "n_tasks", 1)
        self.n_clients = check_count(n_clients, "n_clients", 1)
        self.learning_rate = check_real(learning_rate, "learning_rate", low=0.0, low_open=True)
        if aggregation not in ("qp", "fixed"):
            raise ValueError(f"aggregation must be 'qp' or 'fixed', got {aggregation!r}")
        self.aggregation = aggregation
        self.correction = (
            None if correction is None else _check_correction(correction, self.n_tasks)
        )
        self.reg_rho = check_real(reg_rho, "reg_rho", low=0.0)
        self.anchor = _check_anchor(anchor, self.n_tasks)
        self.participation = check_real(
            participation, "participation", low=0.0, low_open=True, high=1.0
        )
        self.random_state = _check_seed(random_state)
        self.c = np.zeros((self.n_tasks, self.x.size))
        self.history = []

    def configure_round(self, rnd):
        """``{client_id: message}`` for the clients sampled in round ``rnd``."""
        k = max(1, int(round(self.participation * self.n_clients)))
        if k == self.n_clients:
            chosen = np.arange(self.n_clients)
        else:
            rng = _round_rng(self.random_state, 2**31, rnd)  # server stream, no client has this id
            chosen = np.sort(rng.choice(self.n_clients, size=k, replace=False))
        msg = {"x": self.x.copy(), "c": self.c.copy(), "round": int(rnd)}
        return {int(i): msg for i in chosen}

    def aggregate_round(self, rnd, replies):
        """Apply the replies ``{client_id: reply}`` of round ``rnd``."""
        ids = sorted(replies)
        D = np.mean([replies[i]["delta"] for i in ids], axis=0)  # (S, dim)
        dc = np.mean([replies[i]["delta_c"] for i in ids], axis=0)
        self.c = self.c + (len(ids) / self.n_clients) * dc
        if self.aggregation == "qp":
            lam = dream_weights(
                D, correction=self.correction, reg_rho=self.reg_rho, anchor=self.anchor
            )
        else:
            lam = self.anchor
        C = np.eye(self.n_tasks) if self.correction is None else self.correction
        d = (C @ lam) @ D
        self.x = self.x - self.learning_rate * d
        self.history.append({"round": int(rnd), "weights": lam.tolist(), "clients": ids})
        return self.x


class InProcessSimulator:
    """Runs a server and its clients in one process, round by round (no engine).

    Parameters
    ----------
    server : DREAMServer
        The server (updated in place).
    clients : iterable of DREAMClient
        The clients, keyed by their ``client_id``.

    See Also
    --------
    run_flower_inprocess : The same protocol on Flower's app objects.
    run_flower_simulation : The same protocol on Flower's Simulation Engine.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.federated import DREAMClient, DREAMServer, QuadraticFMOL
    >>> from mvlearn_ext.federated import InProcessSimulator
    >>> prob = QuadraticFMOL(n_clients=2, n_tasks=2, dim=3, random_state=0)
    >>> server = DREAMServer(np.zeros(3), n_tasks=2, n_clients=2, learning_rate=0.1)
    >>> clients = [DREAMClient(i, (lambda s, y, i=i: prob.grad(i, s, y)), n_tasks=2, dim=3,
    ...                        local_steps=1, learning_rate_local=0.05) for i in range(2)]
    >>> _ = InProcessSimulator(server, clients).run(300)
    >>> bool(prob.pareto_stationarity(server.x) < 1e-6)
    True
    """

    def __init__(self, server, clients):
        self.server = server
        self.clients = {int(c.client_id): c for c in clients}

    def run(self, n_rounds, *, callback=None):
        """Run ``n_rounds`` (an int >= 1) rounds; ``callback(rnd, server)`` after each.

        Returns the server.
        """
        n_rounds = check_count(n_rounds, "n_rounds", 1)
        for rnd in range(n_rounds):
            messages = self.server.configure_round(rnd)
            replies = {cid: self.clients[cid].fit(msg) for cid, msg in messages.items()}
            self.server.aggregate_round(rnd, replies)
            if callback is not None:
                callback(rnd, self.server)
        return self.server


@dataclasses.dataclass
class FMOLResult:
    """Result of :func:`run_dream`: final ``x`` and per-round ``stationarity``.

    Parameters
    ----------
    x : ndarray of shape (dim,)
        The final model.
    stationarity : ndarray of shape (n_rounds,)
        Pareto stationarity of the model after each round (0 on the Pareto set).
    weights : list of list of float
        The task weights of each round.

    See Also
    --------
    run_dream : Returns it.

    Examples
    --------
    >>> from mvlearn_ext.federated import QuadraticFMOL, run_dream
    >>> res = run_dream(QuadraticFMOL(n_clients=2, n_tasks=2, dim=3, random_state=0), n_rounds=50)
    >>> res.x.shape, res.stationarity.shape
    ((3,), (50,))
    """

    x: np.ndarray
    stationarity: np.ndarray
    weights: list


def run_dream(
    problem,
    *,
    n_rounds,
    local_steps=5,
    learning_rate_local=0.05,
    learning_rate=0.1,
    momentum=0.0,
    control_variates=True,
    aggregation="qp",
    correction=None,
    reg_rho=0.0,
    anchor=None,
    participation=1.0,
    random_state=0,
    x0=None,
):
    """DREAM (or its reductions) on a :class:`QuadraticFMOL`, in process.

    Named presets: FMGDA is ``control_variates=False, momentum=0``; FedAvg
    with linear scalarisation is additionally ``aggregation="fixed"``.

    Parameters
    ----------
    problem : QuadraticFMOL
        The test bed (its gradients and gradient noise).
    n_rounds : int
        Number of communication rounds (>= 1).
    local_steps : int, default=5
        Local steps per task and round, >= 1 (see :class:`DREAMClient`).
    learning_rate_local : float, default=0.05
        Step size (> 0) of the local steps.
    learning_rate : float, default=0.1
        Step size (> 0) of the server's update.
    momentum : float in [0, 1), default=0.0
        Local momentum (see :class:`DREAMClient`).
    control_variates : bool, default=True
        Whether clients correct their local gradients by control variates.
    aggregation : {"qp", "fixed"}, default="qp"
        See :class:`DREAMServer`.
    correction : array-like of shape (n_tasks, n_tasks), optional
        ``C`` of :func:`dream_weights`; identity by default.
    reg_rho : float, default=0.0
        ``rho >= 0`` of :func:`dream_weights`.
    anchor : array-like of shape (n_tasks,), optional
        ``w`` on the simplex; uniform by default.
    participation : float in (0, 1], default=1.0
        Fraction of clients sampled each round.
    random_state : int, numpy.random.Generator, numpy.random.RandomState or None, default=0
        Seeds the client sampling and the gradient noise: an int (>= 0) is the
        root of the streams; ``None``, a ``Generator`` or a ``RandomState``
        draw one root for the run.
    x0 : array-like of shape (dim,), optional
        The initial model; zeros by default.

    Returns
    -------
    result : FMOLResult

    Raises
    ------
    TypeError
        If ``problem`` is not a :class:`QuadraticFMOL`, a count is not an
        int, a float parameter not a real number, an array not numeric, or
        ``random_state`` of another type.
    ValueError
        If a parameter is out of the range given above, or ``x0``,
        ``correction`` or ``anchor`` has the wrong shape.

    See Also
    --------
    QuadraticFMOL : The test bed.
    DREAMServer : The server it runs.
    dream_weights : The task weights of the server's QP.

    Examples
    --------
    >>> from mvlearn_ext.federated import QuadraticFMOL, run_dream
    >>> prob = QuadraticFMOL(n_clients=4, n_tasks=2, dim=3, random_state=0)
    >>> res = run_dream(prob, n_rounds=400, local_steps=1, learning_rate=0.1)
    >>> bool(res.stationarity[-1] < 1e-6)
    True
    """
    if not isinstance(problem, QuadraticFMOL):
        raise TypeError(f"problem must be a QuadraticFMOL, got {type(problem).__name__}")
    n_rounds = check_count(n_rounds, "n_rounds", 1)
    if x0 is None:
        x0 = np.zeros(problem.dim)
    else:
        x0 = real_array(x0, "x0", ndim=1)
        if x0.shape != (problem.dim,):
            raise ValueError(
                f"x0 must have shape ({problem.dim},) (the problem's dim), got {x0.shape}"
            )
    # One root for the server and every client, drawn once if random_state is not an int.
    random_state = _check_seed(random_state)
    server = DREAMServer(
        x0,
        n_tasks=problem.n_tasks,
        n_clients=problem.n_clients,
        learning_rate=learning_rate,
        aggregation=aggregation,
        correction=correction,
        reg_rho=reg_rho,
        anchor=anchor,
        participation=participation,
        random_state=random_state,
    )
    clients = [
        DREAMClient(
            i,
            (lambda s, y, i=i: problem._grad(i, s, y)),
            n_tasks=problem.n_tasks,
            dim=problem.dim,
            local_steps=local_steps,
            learning_rate_local=learning_rate_local,
            momentum=momentum,
            control_variates=control_variates,
            noise=problem.noise,
            random_state=random_state,
        )
        for i in range(problem.n_clients)
    ]
    stat = []
    InProcessSimulator(server, clients).run(
        n_rounds, callback=lambda r, srv: stat.append(problem.pareto_stationarity(srv.x))
    )
    return FMOLResult(
        x=server.x, stationarity=np.array(stat), weights=[h["weights"] for h in server.history]
    )
