"""TwoStageDiffusion: specialists on the pairs, distilled into a generalist (estimator)."""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state, metadata_routing
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from mvlearn_ext.deep.diffusion._conditional import ConditionalDiffusion
from mvlearn_ext.deep.diffusion._gaussian_dsm import GaussianDSMDiffusion
from mvlearn_ext.deep.diffusion._training import COMMON_CONSTRAINTS, _check_hidden, _check_samples
from mvlearn_ext.diffusion._two_stage import (
    fit_polynomial_gaussian,
    make_pseudo_pairs,
    stack_pairs,
    task_sample_weights,
)
from mvlearn_ext.utils._progress import VerboseMixin
from mvlearn_ext.utils._torch import mlp_elements, with_torch_threads
from mvlearn_ext.utils._validation import as_real_array, check_allocation


def _check_task_lists(pairs, unpaired):
    if not isinstance(pairs, (list, tuple)) or not isinstance(unpaired, (list, tuple)):
        raise TypeError("pairs and unpaired must be lists with one entry per task")
    if len(pairs) != len(unpaired) or not pairs:
        raise ValueError(
            f"pairs and unpaired must list the same tasks, got {len(pairs)} and {len(unpaired)}"
        )
    out = []
    for k, p in enumerate(pairs):
        if not isinstance(p, (list, tuple)) or len(p) != 2:
            raise TypeError(f"pairs[{k}] must be a (C, X) pair of arrays")
        X = _check_samples(p[1], f"X of pairs[{k}]")
        C = as_real_array(p[0], f"C of pairs[{k}]")
        if C.ndim == 1:
            C = C[:, None]
        if C.ndim != 2 or C.shape[0] != X.shape[0]:
            raise ValueError(f"pairs[{k}] must hold C (n, d_c) and X (n, d) with equal n")
        if not np.isfinite(C).all():
            raise ValueError(f"C of pairs[{k}] holds NaN or infinite values")
        out.append((C, X))
    for k, U in enumerate(unpaired):
        if not np.isfinite(as_real_array(U, f"unpaired[{k}]")).all():
            raise ValueError(f"unpaired[{k}] holds NaN or infinite values")
    return out


class TwoStageDiffusion(VerboseMixin, BaseEstimator):
    """Specialists on the pairs, distilled into a generalist with pseudo-samples (reconstruction).

    Stage 1 fits one specialist per task on its pairs (a small
    :class:`ConditionalDiffusion`, a polynomial-Gaussian model or a
    :class:`GaussianDSMDiffusion`, see ``specialist``). Stage 2 draws
    ``n_per_condition`` pseudo-samples per unpaired condition of each task
    from its specialist
    (:func:`mvlearn_ext.diffusion.make_pseudo_pairs`) and fits one larger,
    task-conditioned :class:`ConditionalDiffusion` on them with the
    scalarised loss ``sum_k lambda_k L_k``, the real pairs taking the share
    ``mix_weight`` of it.

    Parameters
    ----------
    specialist : {"diffusion", "polynomial", "gaussian_dsm"}, default="diffusion"
        The specialists' class (the abstract leaves it open; each is a
        design of this package): ``"diffusion"``, small MLP diffusion
        models; ``"polynomial"``, the polynomial-Gaussian models of
        :func:`mvlearn_ext.diffusion.fit_polynomial_gaussian` (closed-form
        least squares, sampled directly, not by diffusion);
        ``"gaussian_dsm"``, the diffusion models of
        :class:`GaussianDSMDiffusion` (the Gaussian-posterior denoiser with a
        polynomial mean, fitted by DSM with ``max_iter_specialist`` Adam steps
        at its own default step size, sampled by reverse diffusion). The
        last two need scalar conditions and use ``specialist_degree``.
    hidden_layer_sizes_specialist : tuple of int, default=(32, 32)
    specialist_degree : int, default=5
        Degree of the ``"polynomial"`` and ``"gaussian_dsm"`` specialists.
    hidden_layer_sizes_generalist : tuple of int, default=(128, 128, 128)
    n_steps : int, default=50
    max_iter_specialist : int, default=1500
    max_iter_generalist : int, default=3000
    batch_size : int, default=128
    learning_rate : float, default=2e-3
        Adam's step size of the networks trained here.
    learning_rate_schedule : {"constant", "cosine"}, default="constant"
        Step-size schedule of the networks trained here (see
        :class:`ConditionalDiffusion`; the ``"gaussian_dsm"`` specialists
        always use their own default, a cosine decay).
    weights : array-like of shape (n_tasks,), optional
        Scalarisation weights ``lambda`` on the simplex; default uniform.
    mix_weight : float in [0, 1), default=0.0
        ``mu``: share of the generalist's loss on the real pairs (realised
        by drawing them into the mini-batches at that share, see
        :meth:`ConditionalDiffusion.fit`).
    n_per_condition : int, default=1
    random_state : int, RandomState instance or None, default=None
    device : str or None, default=None
        ``None`` picks CUDA when available.
    n_jobs : int or None, default=None
        Threads of torch's intra-op pool during ``fit`` and sampling
        (restored afterwards): ``None`` means 1, ``-1`` every available CPU;
        never more than the available CPUs.
    verbose : int, default=0

    Attributes
    ----------
    specialists_ : list of ConditionalDiffusion, PolynomialGaussian or GaussianDSMDiffusion
    generalist_ : ConditionalDiffusion
    pseudo_pairs_ : tuple (C, X, tasks)

    See Also
    --------
    mvlearn_ext.diffusion.two_stage_polynomial : The same pipeline with polynomial Gaussians.
    ConditionalDiffusion : One diffusion model on the pairs alone.

    Examples
    --------
    >>> from mvlearn_ext.deep import TwoStageDiffusion
    >>> from mvlearn_ext.diffusion import make_toy_tasks
    >>> data = make_toy_tasks(n_pairs=16, n_unpaired=32, n_test=4, random_state=0)
    >>> model = TwoStageDiffusion(specialist="polynomial", hidden_layer_sizes_generalist=(16,),
    ...                           max_iter_specialist=20, max_iter_generalist=20, n_steps=10,
    ...                           random_state=0).fit(data.pairs, data.unpaired)
    >>> model.sample(data.test[0], 0, random_state=0).shape
    (4, 2)
    """

    # The data arguments are not metadata to route.
    __metadata_request__fit = {
        "pairs": metadata_routing.UNUSED,
        "unpaired": metadata_routing.UNUSED,
    }

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "specialist": [StrOptions({"diffusion", "polynomial", "gaussian_dsm"})],
        "hidden_layer_sizes_specialist": [tuple, list],
        "specialist_degree": [Interval(Integral, 0, None, closed="left")],
        "hidden_layer_sizes_generalist": [tuple, list],
        "max_iter_specialist": [Interval(Integral, 0, None, closed="left")],
        "max_iter_generalist": [Interval(Integral, 0, None, closed="left")],
        "weights": ["array-like", None],
        "mix_weight": [Interval(Real, 0, 1, closed="left")],
        "n_per_condition": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        specialist="diffusion",
        hidden_layer_sizes_specialist=(32, 32),
        specialist_degree=5,
        hidden_layer_sizes_generalist=(128, 128, 128),
        n_steps=50,
        max_iter_specialist=1500,
        max_iter_generalist=3000,
        batch_size=128,
        learning_rate=2e-3,
        learning_rate_schedule="constant",
        weights=None,
        mix_weight=0.0,
        n_per_condition=1,
        random_state=None,
        device=None,
        n_jobs=None,
        verbose=0,
    ):
        self.specialist = specialist
        self.hidden_layer_sizes_specialist = hidden_layer_sizes_specialist
        self.specialist_degree = specialist_degree
        self.hidden_layer_sizes_generalist = hidden_layer_sizes_generalist
        self.n_steps = n_steps
        self.max_iter_specialist = max_iter_specialist
        self.max_iter_generalist = max_iter_generalist
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_schedule = learning_rate_schedule
        self.weights = weights
        self.mix_weight = mix_weight
        self.n_per_condition = n_per_condition
        self.random_state = random_state
        self.device = device
        self.n_jobs = n_jobs
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    @with_torch_threads
    def fit(self, pairs, unpaired, *, specialists=None):
        """Run both stages.

        Parameters
        ----------
        pairs : list of (C, X)
            Paired data of each task: ``C`` (n_k, d_c), ``X`` (n_k, d).
        unpaired : list of array-like of shape (m_k, d_c)
            Unpaired conditions of each task.
        specialists : list, optional
            Fitted specialists, one per task (e.g. ``other.specialists_`` of
            a model fitted on the same pairs): stage 1 is skipped and only
            the generalist is fitted. With the same ``random_state`` and
            specialist settings the result equals a full fit (the seeds of
            the pseudo-samples and the generalist do not depend on stage 1);
            used to compare ``mix_weight`` values without refitting.

        Returns
        -------
        self : TwoStageDiffusion
        """
        pairs = _check_task_lists(pairs, unpaired)
        K = len(pairs)
        for name in ("hidden_layer_sizes_specialist", "hidden_layer_sizes_generalist"):
            hidden = _check_hidden(getattr(self, name), name)
            check_allocation(
                mlp_elements([64, *hidden, 64]),
                name,
                getattr(self, name),
                what="a network's weights",
                itemsize=4,
            )
        n_unpaired = sum(np.shape(U)[0] if np.ndim(U) else 1 for U in unpaired)
        check_allocation(
            self.n_per_condition * n_unpaired * (pairs[0][0].shape[1] + pairs[0][1].shape[1] + 1),
            "n_per_condition",
            self.n_per_condition,
            what="the pseudo-pairs (n_per_condition x unpaired conditions)",
        )
        lam = None if self.weights is None else as_real_array(self.weights, "weights")
        if lam is not None and lam.shape != (K,):
            raise ValueError(f"weights must have shape ({K},), got {lam.shape}")
        rng = check_random_state(self.random_state)
        seeds = rng.randint(2**31 - 1, size=K + 2)
        common = dict(
            n_steps=self.n_steps,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate,
            learning_rate_schedule=self.learning_rate_schedule,
            device=self.device,
            n_jobs=self.n_jobs,
            verbose=max(0, int(self.verbose) - 1),
        )
        start = time.perf_counter()
        if self.specialist != "diffusion":
            if any(C.shape[1] != 1 for C, _ in pairs):
                raise ValueError(
                    f"specialist={self.specialist!r} needs scalar conditions (d_c = 1)"
                )
            allc = np.concatenate(
                [C[:, 0] for C, _ in pairs]
                + [np.asarray(U, dtype=float).ravel() for U in unpaired]
            )
            domain = (float(allc.min()), float(allc.max()))
        if specialists is not None:
            if not isinstance(specialists, (list, tuple)) or len(specialists) != K:
                raise ValueError(f"specialists must be a list of {K} fitted specialists")
            if any(not callable(getattr(sp, "sample", None)) for sp in specialists):
                raise TypeError("specialists must have a sample(C, random_state=...) method")
        self.specialists_ = [] if specialists is None else list(specialists)
        for k, (C, X) in enumerate(pairs if specialists is None else []):
            if self.specialist == "polynomial":
                spec = fit_polynomial_gaussian(C, X, degree=self.specialist_degree, domain=domain)
                self.specialists_.append(spec)
                continue
            if self.specialist == "gaussian_dsm":
                spec = GaussianDSMDiffusion(
                    degree=self.specialist_degree,
                    domain=domain,
                    n_steps=self.n_steps,
                    max_iter=self.max_iter_specialist,
                    batch_size=self.batch_size,
                    random_state=int(seeds[k]),
                    device=self.device,
                    n_jobs=self.n_jobs,
                )
                self.specialists_.append(spec.fit(C, X))
                continue
            spec = ConditionalDiffusion(
                hidden_layer_sizes=self.hidden_layer_sizes_specialist,
                max_iter=self.max_iter_specialist,
                random_state=int(seeds[k]),
                **common,
            )
            self.specialists_.append(spec.fit(C, X))
            self._log(f"specialist {k + 1}/{K} ({time.perf_counter() - start:.1f} s)")
        samplers = [
            (lambda C, seed, s=s: s.sample(C, random_state=seed)) for s in self.specialists_
        ]
        Cp, Xp, Tp = make_pseudo_pairs(
            samplers, unpaired, n_per_condition=self.n_per_condition, random_state=int(seeds[K])
        )
        w = task_sample_weights(Tp, lam if lam is not None else np.full(K, 1.0 / K))
        self.pseudo_pairs_ = (Cp, Xp, Tp)
        if self.mix_weight > 0:
            Cr, Xr, Tr = stack_pairs(pairs)
            wr = task_sample_weights(Tr, lam if lam is not None else np.full(K, 1.0 / K))
            w = np.concatenate(
                [(1 - self.mix_weight) * w / w.sum(), self.mix_weight * wr / wr.sum()]
            )
            Cp, Xp, Tp = np.vstack([Cp, Cr]), np.vstack([Xp, Xr]), np.concatenate([Tp, Tr])
        self.generalist_ = ConditionalDiffusion(
            hidden_layer_sizes=self.hidden_layer_sizes_generalist,
            n_tasks=K,
            max_iter=self.max_iter_generalist,
            random_state=int(seeds[K + 1]),
            **common,
        ).fit(Cp, Xp, Tp, sample_weight=w)
        self._log(f"generalist on {len(Tp)} pairs ({time.perf_counter() - start:.1f} s)")
        return self

    def sample(self, C, tasks, *, random_state=None):
        """Samples of the generalist, one per row of ``C``, for the task ids ``tasks``.

        Parameters
        ----------
        C : array-like of shape (n, d_c) or (n,)
            The conditions, one sample per row.
        tasks : int or array-like of int, shape (n,)
            The task id of every condition.
        random_state : int, RandomState instance, Generator or None, default=None
            Seeds the reverse diffusion; a ``Generator`` (or ``RandomState``)
            is advanced by the sampling.

        Returns
        -------
        X : ndarray of shape (n, d)
            One sample per condition.
        """
        check_is_fitted(self, "generalist_")
        return self.generalist_.sample(C, tasks, random_state=random_state)
