"""The two-stage pipeline (specialists, pseudo-pairs, generalist) and its NumPy oracle.

Reconstruction (the full paper was not available): "Semi-supervised
multi-objective learning for diffusion models" (arXiv 2605.25210, ICML 2026)
is known here from its abstract only. The abstract states that lightweight
*specialists* are fitted on the scarce paired data of each task and then
*distilled* into a generalist with pseudo-samples they generate for abundant
unpaired conditions, that the needed number of pairs depends on the
specialists' complexity, and that linear scalarisation of the task losses
gets sharper rates. The formalisation below (per-task sample weights
``lambda_k / n_k`` for the scalarised loss, one pseudo-sample per unpaired
condition, optional real pairs mixed in with weight ``mu``) and the
linear-Gaussian oracle are design choices of this package.

The oracle replaces the networks by conditional Gaussians with a polynomial
mean, ``x | c, k ~ N(A_k phi(c), Sigma_k)`` (:class:`PolynomialGaussian`):
low-degree specialists and a high-degree generalist, fitted by (weighted)
least squares. It tests the sample-complexity logic without any network.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from numpy.polynomial import legendre
from sklearn.utils import check_random_state

from mvlearn_ext.utils._validation import check_count, check_magnitude, integer_array, real_array

__all__ = [
    "PolynomialGaussian",
    "fit_polynomial_gaussian",
    "make_pseudo_pairs",
    "scalarize",
    "simplex_weights",
    "stack_pairs",
    "task_sample_weights",
    "two_stage_polynomial",
]


def simplex_weights(n_tasks, n_points=11):
    """A regular grid of scalarisation weights on the simplex.

    Parameters
    ----------
    n_tasks : int
    n_points : int, default=11
        Grid points per edge (weights are multiples of ``1 / (n_points - 1)``).

    Returns
    -------
    weights : ndarray of shape (n_weights, n_tasks)
        Non-negative rows that sum to 1; for two tasks, ``lambda_1`` runs
        from 0 to 1.

    See Also
    --------
    scalarize : The scalarised loss for one weight vector.

    Examples
    --------
    >>> from mvlearn_ext.diffusion import simplex_weights
    >>> simplex_weights(2, 3).tolist()
    [[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]]
    """
    n_tasks = check_count(n_tasks, "n_tasks", 1)
    n_points = check_count(n_points, "n_points", 2)
    m = n_points - 1
    rows = [c for c in itertools.product(range(m + 1), repeat=n_tasks - 1) if sum(c) <= m]
    W = np.array([[*c, m - sum(c)] for c in rows], dtype=np.float64) / m
    return W[np.lexsort(W.T[::-1])]


def _check_weights(weights, n_tasks=None, name="weights"):
    """Weights on the simplex, of shape (n_tasks,) (any length when ``n_tasks`` is None)."""
    w = real_array(weights, name, ndim=1)
    if n_tasks is not None and w.shape != (n_tasks,):
        raise ValueError(f"{name} must have shape ({n_tasks},), got {w.shape}")
    if (w < 0).any():
        raise ValueError(f"{name} must be non-negative, got {w.tolist()}")
    if abs(w.sum() - 1.0) > 1e-8:
        raise ValueError(f"{name} must sum to 1 (a point of the simplex), got sum {w.sum()}")
    return w


def scalarize(losses, weights):
    """Linear scalarisation ``sum_k lambda_k L_k`` of task losses (``lambda`` on the simplex).

    Parameters
    ----------
    losses : array-like of shape (n_tasks,)
        The task losses ``L_k``.
    weights : array-like of shape (n_tasks,)
        The weights ``lambda_k``: non-negative, summing to 1.

    Returns
    -------
    value : float
        ``sum_k lambda_k L_k``.

    See Also
    --------
    simplex_weights : A grid of scalarisation weights.
    task_sample_weights : The same scalarisation as per-sample weights.

    Examples
    --------
    >>> from mvlearn_ext.diffusion import scalarize
    >>> scalarize([1.0, 3.0], [0.5, 0.5])
    2.0
    """
    L = real_array(losses, "losses", ndim=1)
    return float(_check_weights(weights, L.size) @ L)


def _check_tasks(tasks, n=None, n_tasks=None):
    """Task ids in ``[0, n_tasks)`` of shape (n,) (any length when ``n`` is None)."""
    high = None if n_tasks is None else n_tasks - 1
    t = integer_array(tasks, "tasks", ndim=1, low=0, high=high)
    if n is not None and t.shape != (n,):
        raise ValueError(f"tasks must have shape ({n},), got {t.shape}")
    return t.astype(np.intp)


def task_sample_weights(tasks, weights=None):
    """Per-sample weights ``lambda_k / n_k`` that turn a weighted mean into ``sum_k lambda_k L_k``.

    With these weights (normalised to mean 1 over the samples),
    ``mean_i w_i l_i = n / K_eff * sum_k lambda_k mean_{i in k} l_i`` up to a
    constant factor: the minimiser of the weighted loss is that of the
    scalarised loss, whatever the task sizes ``n_k``.

    Parameters
    ----------
    tasks : array-like of int, shape (n,)
    weights : array-like of shape (n_tasks,), optional
        ``lambda`` on the simplex; default uniform over ``max(tasks) + 1`` tasks.

    Returns
    -------
    sample_weight : ndarray of shape (n,), mean 1

    See Also
    --------
    scalarize : The scalarisation these weights realise.

    Examples
    --------
    >>> from mvlearn_ext.diffusion import task_sample_weights
    >>> task_sample_weights([0, 0, 0, 1]).tolist()  # each task counts as much in the mean
    [0.6666666666666666, 0.6666666666666666, 0.6666666666666666, 2.0]
    """
    t = _check_tasks(tasks)
    if weights is None:
        K = int(t.max()) + 1
        lam = np.full(K, 1.0 / K)
    else:
        lam = _check_weights(weights)
        K = lam.shape[0]
    if (t >= K).any():
        raise ValueError(f"tasks holds ids up to {t.max()} but weights has {K} entries")
    counts = np.bincount(t, minlength=K).astype(np.float64)
    w = lam[t] / counts[t]
    return w * (t.shape[0] / w.sum())


def make_pseudo_pairs(samplers, condition_pools, *, n_per_condition=1, random_state=None):
    """Pseudo-pairs ``(c, x_tilde ~ s_k(· | c))`` for every condition of every task's pool.

    Parameters
    ----------
    samplers : list of callable ``(C, random_state) -> X``
        One per task: draws one sample per row of ``C``, seeded by the
        integer ``random_state``.
    condition_pools : list of array-like of shape (m_k, d_c)
        The unpaired conditions of each task.
    n_per_condition : int, default=1
        Pseudo-samples drawn per condition.
    random_state : int, RandomState instance or None, default=None
        Spawns one integer seed per task.

    Returns
    -------
    C : ndarray of shape (sum_k m_k n_per_condition, d_c)
    X : ndarray of shape (sum_k m_k n_per_condition, d)
    tasks : ndarray of int

    See Also
    --------
    two_stage_polynomial : The pipeline that trains the generalist on them.
    task_sample_weights : Weights that scalarise the task losses.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.diffusion import make_pseudo_pairs
    >>> sampler = lambda C, random_state: 2.0 * np.asarray(C)  # a deterministic "specialist"
    >>> C, X, tasks = make_pseudo_pairs([sampler, sampler], [np.ones((3, 1)), np.ones((2, 1))])
    >>> X.shape, tasks.tolist()
    ((5, 1), [0, 0, 0, 1, 1])
    """
    if len(samplers) != len(condition_pools):
        raise ValueError(
            f"samplers has {len(samplers)} entries, condition_pools has {len(condition_pools)}"
        )
    if not samplers:
        raise ValueError("samplers must hold at least one task")
    if isinstance(n_per_condition, bool) or not isinstance(n_per_condition, Integral):
        raise ValueError(f"n_per_condition must be a positive int, got {n_per_condition!r}")
    if n_per_condition < 1:
        raise ValueError(f"n_per_condition must be a positive int, got {n_per_condition!r}")
    pools = [
        real_array(pool, f"condition_pools[{k}]", ndim=(1, 2))
        for k, pool in enumerate(condition_pools)
    ]
    rng = check_random_state(random_state)
    seeds = rng.randint(2**31 - 1, size=len(samplers))
    Cs, Xs, Ts = [], [], []
    for k, (sampler, pool) in enumerate(zip(samplers, pools, strict=True)):
        if not callable(sampler):
            raise TypeError(f"samplers[{k}] must be callable, got {type(sampler).__name__}")
        C = pool[:, None] if pool.ndim == 1 else pool
        C = np.repeat(C, n_per_condition, axis=0)
        X = np.asarray(sampler(C, int(seeds[k])), dtype=np.float64)
        if X.ndim != 2 or X.shape[0] != C.shape[0]:
            raise ValueError(f"samplers[{k}] returned shape {X.shape} for {C.shape[0]} conditions")
        Cs.append(C)
        Xs.append(X)
        Ts.append(np.full(C.shape[0], k, dtype=np.intp))
    return np.vstack(Cs), np.vstack(Xs), np.concatenate(Ts)


def _as_conditions(C, name="C"):
    """Finite scalar conditions of shape (n,) or (n, 1), as a float array of shape (n,)."""
    C = real_array(C, name)
    if C.ndim == 2 and C.shape[1] == 1:
        C = C[:, 0]
    if C.ndim != 1:
        raise ValueError(
            f"{name} must have shape (n,) or (n, 1) (scalar conditions), got {C.shape}"
        )
    return C


@dataclass(frozen=True, eq=False)
class PolynomialGaussian:
    """A fitted conditional Gaussian ``x | c, k ~ N(A_k phi(c), Sigma_k)``.

    ``phi`` is the Legendre basis of degree ``degree`` on ``domain`` (mapped
    to [-1, 1]). Fit one with :func:`fit_polynomial_gaussian`.

    Parameters
    ----------
    degree : int
        Degree of the Legendre basis (``degree + 1`` coefficients per output).
    domain : tuple of float
        The range ``(low, high)`` of the conditions mapped to [-1, 1].
    coef : ndarray of shape (n_tasks, degree + 1, d)
        The coefficients ``A_k`` of each task.
    cov : ndarray of shape (n_tasks, d, d)
        The covariances ``Sigma_k`` of each task.

    See Also
    --------
    fit_polynomial_gaussian : Fits one.
    two_stage_polynomial : The two-stage pipeline with these models.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.diffusion import fit_polynomial_gaussian
    >>> C = np.linspace(-1.0, 1.0, 50)
    >>> model = fit_polynomial_gaussian(C, np.column_stack([C, C**2]), degree=2)
    >>> model.mean(np.array([0.5])).round(6).tolist()
    [[0.5, 0.25]]
    >>> model.sample(np.array([0.5, -0.5]), random_state=0).shape  # one draw per condition
    (2, 2)
    """

    degree: int
    domain: tuple
    coef: np.ndarray
    cov: np.ndarray

    @property
    def n_tasks(self):
        return self.coef.shape[0]

    def _basis(self, C):
        """The Legendre basis of the conditions ``C`` (checked here)."""
        return self._legendre(_as_conditions(C))

    def _legendre(self, c):
        """The Legendre basis of checked conditions ``c`` of shape (n,)."""
        lo, hi = self.domain
        with np.errstate(over="ignore", invalid="ignore"):
            u = 2.0 * (c - lo) / (hi - lo) - 1.0
            Phi = legendre.legvander(u, self.degree)
        return self._finite(Phi, c)

    def _finite(self, values, C):
        """``values`` computed from the (checked) conditions ``C``, or a ValueError if
        they overflowed."""
        if not np.all(np.isfinite(values)):
            largest = np.abs(np.asarray(C, dtype=np.float64)).max()
            raise ValueError(
                f"C holds conditions too far outside the domain {tuple(self.domain)} (largest "
                f"|C| {largest:.3g}): the degree-{self.degree} polynomial overflows float64 "
                "there"
            )
        return values

    def _tasks(self, tasks, n):
        if tasks is None:
            if self.n_tasks != 1:
                raise ValueError(f"tasks is required: the model has {self.n_tasks} tasks")
            return np.zeros(n, dtype=np.intp)
        if np.ndim(tasks) == 0:
            tasks = np.full(n, tasks)
        return _check_tasks(tasks, n, self.n_tasks)

    def mean(self, C, tasks=None):
        """``A_k phi(c)`` of shape (n, d)."""
        c = _as_conditions(C)
        Phi = self._legendre(c)
        t = self._tasks(tasks, Phi.shape[0])
        with np.errstate(over="ignore", invalid="ignore"):
            return self._finite(np.einsum("np,npd->nd", Phi, self.coef[t]), c)

    def sample(self, C, tasks=None, *, random_state=None):
        """One draw per condition, of shape (n, d).

        Parameters
        ----------
        C : array-like of shape (n,) or (n, 1)
            Scalar conditions.
        tasks : int, array-like of int of shape (n,) or None, default=None
            Task of each condition (an int: the same task for all); None only
            for a model of one task.
        random_state : int, RandomState instance or None, default=None
            Seeds the Gaussian draws.

        Returns
        -------
        X : ndarray of shape (n, d)
            ``A_k phi(c) + L_k z`` with ``L_k L_k^T = Sigma_k`` and ``z``
            standard normal.

        Raises
        ------
        TypeError
            If ``C`` is not a numeric array (strings included).
        ValueError
            If ``C`` holds complex values, NaN or infinity, is not of shape (n,)
            or (n, 1), or lies so far outside ``domain`` that the mean
            overflows float64; if ``tasks`` is missing or out of range.
        """
        M = self.mean(C, tasks)
        t = self._tasks(tasks, M.shape[0])
        # A jitter relative to each task's mean variance keeps the factorisation of a
        # singular covariance possible at any scale of X; a task without variance
        # gets no noise.
        d = M.shape[1]
        scale = np.einsum("kii->k", self.cov) / d
        flat = scale <= 0
        jitter = 1e-12 * np.where(flat, 1.0, scale)
        L = np.linalg.cholesky(self.cov + jitter[:, None, None] * np.eye(d))
        L[flat] = 0.0
        z = check_random_state(random_state).standard_normal(M.shape)
        return M + np.einsum("nij,nj->ni", L[t], z)


def fit_polynomial_gaussian(
    C, X, *, degree=3, tasks=None, n_tasks=None, sample_weight=None, alpha=1e-8, domain=None
):
    """Weighted least-squares fit of a :class:`PolynomialGaussian`.

    Parameters
    ----------
    C : array-like of shape (n,) or (n, 1)
        Scalar conditions.
    X : array-like of shape (n, d)
    degree : int, default=3
        The capacity of the class (``degree + 1`` coefficients per output
        and task).
    tasks : array-like of int, shape (n,), optional
        Task ids; a separate mean and covariance per task (a task-conditioned
        model). ``None``: one task.
    n_tasks : int, optional
        Default ``max(tasks) + 1``.
    sample_weight : array-like of shape (n,), optional
        E.g. :func:`task_sample_weights` for a scalarised loss.
    alpha : float, default=1e-8
        Ridge on the coefficients (for a well-posed solve).
    domain : (float, float), optional
        The range mapped to [-1, 1]; default the range of ``C``.

    Returns
    -------
    model : PolynomialGaussian

    See Also
    --------
    PolynomialGaussian : The fitted model.
    two_stage_polynomial : Fits the specialists and the generalist.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.diffusion import fit_polynomial_gaussian
    >>> C = np.linspace(-1.0, 1.0, 50)
    >>> model = fit_polynomial_gaussian(C, (2.0 * C)[:, None], degree=1)
    >>> model.mean(np.array([0.5])).round(6).tolist()  # x = 2 c
    [[1.0]]
    """
    c = _as_conditions(C)
    X = real_array(X, "X")
    if X.ndim != 2 or X.shape[0] != c.shape[0]:
        raise ValueError(f"X must have shape ({c.shape[0]}, d), got {X.shape}")
    check_magnitude(X, "X")
    if isinstance(degree, bool) or not isinstance(degree, Integral) or degree < 0:
        raise ValueError(f"degree must be a non-negative int, got {degree!r}")
    if not isinstance(alpha, Real) or alpha < 0:
        raise ValueError(f"alpha must be a non-negative float, got {alpha!r}")
    n = c.shape[0]
    t = np.zeros(n, dtype=np.intp) if tasks is None else _check_tasks(tasks, n, n_tasks)
    K = int(t.max()) + 1 if n_tasks is None else int(n_tasks)
    if sample_weight is None:
        w = np.ones(n)
    else:
        w = real_array(sample_weight, "sample_weight")
        if w.shape != (n,) or (w < 0).any():
            raise ValueError(f"sample_weight must be {n} non-negative finite values")
    if domain is None:
        domain = (float(c.min()), float(c.max()))
    lo, hi = float(domain[0]), float(domain[1])
    if not hi > lo:
        raise ValueError(f"domain must be (low, high) with low < high, got {domain!r}")
    shell = PolynomialGaussian(
        degree=int(degree), domain=(lo, hi), coef=np.zeros((K, 1, 1)), cov=np.zeros((K, 1, 1))
    )
    Phi = shell._basis(c)
    d, p = X.shape[1], degree + 1
    coef = np.zeros((K, p, d))
    cov = np.zeros((K, d, d))
    for k in range(K):
        sel = (t == k) & (w > 0)
        if not sel.any():
            raise ValueError(f"task {k} has no sample with a positive weight")
        P, Y, ww = Phi[sel], X[sel], w[sel]
        G = P.T @ (ww[:, None] * P) + alpha * ww.sum() * np.eye(p)
        coef[k] = np.linalg.solve(G, P.T @ (ww[:, None] * Y))
        R = Y - P @ coef[k]
        cov[k] = (ww[:, None] * R).T @ R / ww.sum()
    return PolynomialGaussian(degree=int(degree), domain=(lo, hi), coef=coef, cov=cov)


def stack_pairs(pairs):
    """The paired data of every task stacked, with the task of each row.

    The input of a task-conditioned model fitted on the real pairs alone (the
    labelled-only generalist), and the real-pair part of the second stage.

    Parameters
    ----------
    pairs : list of (C, X)
        Paired data of each task: conditions ``C`` of shape (n_k,) or (n_k, 1)
        and samples ``X`` of shape (n_k, d).

    Returns
    -------
    C : ndarray of shape (n, 1)
        The conditions, task 0's first.
    X : ndarray of shape (n, d)
        The samples, in the same order.
    tasks : ndarray of int, shape (n,)
        The index in ``pairs`` of each row's task.

    See Also
    --------
    fit_polynomial_gaussian : Fits a task-conditioned model on them.

    Examples
    --------
    >>> from mvlearn_ext.diffusion import make_toy_tasks, stack_pairs
    >>> data = make_toy_tasks(n_pairs=8, n_unpaired=1, n_test=1, random_state=0)
    >>> C, X, tasks = stack_pairs(data.pairs)
    >>> C.shape, X.shape, tasks.tolist()[6:10]
    ((16, 1), (16, 2), [0, 0, 1, 1])
    """
    if not isinstance(pairs, (list, tuple)) or len(pairs) == 0:
        raise ValueError("pairs must be a non-empty list of (C, X) pairs")
    Cs = [
        real_array(Ck, f"pairs[{k}] conditions").reshape(-1, 1) for k, (Ck, _) in enumerate(pairs)
    ]
    C = np.vstack(Cs)
    X = np.vstack([real_array(Xk, f"pairs[{k}] samples") for k, (_, Xk) in enumerate(pairs)])
    if len(C) != len(X):
        raise ValueError(f"pairs hold {len(C)} conditions but {len(X)} samples")
    return C, X, np.repeat(np.arange(len(pairs), dtype=np.intp), [len(Ck) for Ck in Cs])


def two_stage_polynomial(
    pairs,
    unpaired,
    *,
    specialist_degree=5,
    generalist_degree=12,
    weights=None,
    mix_weight=0.0,
    n_per_condition=1,
    domain=None,
    random_state=None,
):
    """The two-stage pipeline with polynomial-Gaussian specialists and generalist (the oracle).

    Stage 1 fits one degree-``specialist_degree`` model per task on its
    pairs; stage 2 draws pseudo-samples at each task's unpaired conditions
    and fits one task-conditioned degree-``generalist_degree`` model on them
    with the scalarised loss (weights ``lambda``), plus the real pairs with
    total weight share ``mix_weight``.

    Parameters
    ----------
    pairs : list of (C, X)
        Paired data of each task.
    unpaired : list of array-like
        Unpaired conditions of each task.
    specialist_degree, generalist_degree : int, default=5, 12
    weights : array-like of shape (n_tasks,), optional
        Scalarisation weights; default uniform.
    mix_weight : float in [0, 1), default=0.0
        ``mu``: share of the loss given to the real pairs.
    n_per_condition : int, default=1
    domain : (float, float), optional
        Range of the conditions; default the range of all conditions given.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    generalist : PolynomialGaussian
    specialists : list of PolynomialGaussian

    See Also
    --------
    fit_polynomial_gaussian : Fits each specialist and the generalist.
    make_pseudo_pairs : The pseudo-pairs of the second stage.
    mvlearn_ext.deep.TwoStageDiffusion : The same pipeline with diffusion models.

    Examples
    --------
    >>> from mvlearn_ext.diffusion import make_toy_tasks, two_stage_polynomial
    >>> data = make_toy_tasks(random_state=0)
    >>> g, specs = two_stage_polynomial(data.pairs, data.unpaired, random_state=0)
    >>> g.n_tasks, len(specs), specs[0].degree
    (2, 2, 5)
    """
    if len(pairs) != len(unpaired) or not pairs:
        raise ValueError(
            f"pairs and unpaired must list the same tasks, got {len(pairs)} and {len(unpaired)}"
        )
    if not isinstance(mix_weight, Real) or not 0 <= mix_weight < 1:
        raise ValueError(f"mix_weight must be a float in [0, 1), got {mix_weight!r}")
    K = len(pairs)
    lam = np.full(K, 1.0 / K) if weights is None else _check_weights(weights, K)
    if domain is None:
        allc = np.concatenate(
            [_as_conditions(C, f"pairs[{k}] conditions") for k, (C, _) in enumerate(pairs)]
            + [_as_conditions(U, f"unpaired[{k}]") for k, U in enumerate(unpaired)]
        )
        domain = (float(allc.min()), float(allc.max()))
    specialists = [
        fit_polynomial_gaussian(C, X, degree=specialist_degree, domain=domain) for C, X in pairs
    ]
    samplers = [(lambda C, seed, s=s: s.sample(C, random_state=seed)) for s in specialists]
    Cp, Xp, Tp = make_pseudo_pairs(
        samplers, unpaired, n_per_condition=n_per_condition, random_state=random_state
    )
    w = task_sample_weights(Tp, lam)
    if mix_weight > 0:
        Cr, Xr, Tr = stack_pairs(pairs)
        wr = task_sample_weights(Tr, lam)
        Cp = np.vstack([Cp, Cr])
        Xp = np.vstack([Xp, Xr])
        Tp = np.concatenate([Tp, Tr])
        w = np.concatenate([(1 - mix_weight) * w / w.sum(), mix_weight * wr / wr.sum()])
    generalist = fit_polynomial_gaussian(
        Cp, Xp, degree=generalist_degree, tasks=Tp, n_tasks=K, sample_weight=w, domain=domain
    )
    return generalist, specialists
