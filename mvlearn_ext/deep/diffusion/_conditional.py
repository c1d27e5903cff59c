"""ConditionalDiffusion: a conditional DDPM with a tiny epsilon-network (estimator)."""

from __future__ import annotations

from numbers import Integral

import numpy as np
import torch
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import metadata_routing
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from mvlearn_ext.deep.diffusion._network import EpsMLP
from mvlearn_ext.deep.diffusion._training import (
    COMMON_CONSTRAINTS,
    SAMPLER_CONSTRAINT,
    _batch_rows,
    _check_hidden,
    _check_samples,
    _reverse_diffuse,
    _start_fit,
    _train,
    _unequal,
)
from mvlearn_ext.utils._progress import VerboseMixin
from mvlearn_ext.utils._torch import (
    WEIGHT_DECAY_CONSTRAINT,
    mlp_elements,
    torch_threads,
    with_torch_threads,
)
from mvlearn_ext.utils._validation import as_real_array, check_allocation


class ConditionalDiffusion(VerboseMixin, BaseEstimator):
    """A conditional DDPM with a tiny epsilon-network, for one or several tasks.

    ``fit`` minimises the (sample-weighted) denoising loss with Adam on
    mini-batches; ``sample`` runs the NumPy DDPM or DDIM sampler of
    :mod:`mvlearn_ext.diffusion` with the trained network as ``eps_fn``.
    Samples and conditions are standardised with their training mean and
    standard deviation.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(32, 32)
        Widths of the hidden layers.
    n_tasks : int, default=1
    n_steps : int, default=50
        ``T`` of the linear schedule rescaled to ``T`` steps
        (:func:`mvlearn_ext.diffusion.make_schedule`).
    max_iter : int, default=2000
        Adam steps.
    batch_size : int, default=128
    learning_rate : float, default=2e-3
        Adam's step size.
    learning_rate_schedule : {"constant", "cosine"}, default="constant"
        ``"cosine"`` decays the step size from ``learning_rate`` to 0 over the
        ``max_iter`` steps (half a cosine period), so that the last iterate
        settles instead of jittering at the scale of ``learning_rate``; it
        under-trains small networks given few steps, so it is not the
        default.
    weight_decay : float in [0, 1e6], default=0.0
        Adam's L2 penalty; larger values shrink every weight to zero
        whatever the data.
    sampler : {"ddpm", "ddim"}, default="ddpm"
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, the mini-batches, the noise and the steps (the
        global torch RNG is restored after ``fit``).
    device : str or None, default=None
        ``None`` picks CUDA when available.
    n_jobs : int or None, default=None
        Threads of torch's intra-op pool during ``fit`` and sampling
        (restored afterwards): ``None`` means 1, ``-1`` every available CPU;
        never more than the available CPUs.
    verbose : int, default=0

    Attributes
    ----------
    network_ : EpsMLP
    schedule_ : DiffusionSchedule
    loss_curve_ : list of float
        Mean training loss per block of 100 steps.
    n_iter_ : int
        Adam steps taken (``max_iter``).

    See Also
    --------
    GaussianDSMDiffusion : A lightweight Gaussian-posterior specialist.
    TwoStageDiffusion : Specialists distilled into a generalist.
    mvlearn_ext.diffusion.ddpm_sample : The NumPy sampler it uses.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.deep.diffusion import ConditionalDiffusion
    >>> rng = np.random.default_rng(0)
    >>> C = rng.uniform(-1, 1, (64, 1))
    >>> X = np.hstack([C, 2 * C]) + 0.05 * rng.normal(size=(64, 2))
    >>> model = ConditionalDiffusion(max_iter=50, random_state=0).fit(C, X)
    >>> model.sample(C[:5], random_state=0).shape
    (5, 2)
    """

    # The data arguments are not metadata to route.
    __metadata_request__fit = {"C": metadata_routing.UNUSED}

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "hidden_layer_sizes": [tuple, list],
        "n_tasks": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "weight_decay": WEIGHT_DECAY_CONSTRAINT,
        "sampler": SAMPLER_CONSTRAINT,
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        hidden_layer_sizes=(32, 32),
        n_tasks=1,
        n_steps=50,
        max_iter=2000,
        batch_size=128,
        learning_rate=2e-3,
        learning_rate_schedule="constant",
        weight_decay=0.0,
        sampler="ddpm",
        random_state=None,
        device=None,
        n_jobs=None,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.n_tasks = n_tasks
        self.n_steps = n_steps
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_schedule = learning_rate_schedule
        self.weight_decay = weight_decay
        self.sampler = sampler
        self.random_state = random_state
        self.device = device
        self.n_jobs = n_jobs
        self.verbose = verbose

    # -- input ---------------------------------------------------------------
    def _conditions(self, C, n=None, name="C"):
        """``C`` as a float64 (n, d_c) array (a 1-D ``C`` is one column).

        NaN, infinity, complex values, strings (digit strings included) and
        ragged rows are refused with a message naming ``name``
        (:func:`~mvlearn_ext.utils._validation.as_real_array` for the types);
        so are no rows, another number of rows than ``n`` and, once fitted,
        another number of columns.
        """
        C = as_real_array(C, name)
        if C.ndim == 1:
            C = C[:, None]
        if C.ndim != 2 or C.shape[0] == 0:
            raise ValueError(f"{name} must be a non-empty 2-D array (n, d_c), got shape {C.shape}")
        if n is not None and C.shape[0] != n:
            raise ValueError(f"{name} has {C.shape[0]} rows, expected {n}")
        if not np.isfinite(C).all():
            raise ValueError(f"{name} holds NaN or infinite values")
        if hasattr(self, "c_mean_") and C.shape[1] != self.c_mean_.shape[0]:
            raise ValueError(
                f"{name} has {C.shape[1]} columns; "
                f"the model was fitted with {self.c_mean_.shape[0]}"
            )
        return C

    def _tasks(self, tasks, n):
        K = self.n_tasks
        if tasks is None:
            if K != 1:
                raise ValueError(f"tasks is required: the model has n_tasks={K}")
            return np.zeros(n, dtype=np.int64)
        t = np.asarray(tasks)
        if t.ndim == 0:
            t = np.full(n, t)
        if t.dtype.kind not in "iu":
            raise TypeError(f"tasks must hold integer task ids, got dtype {t.dtype}")
        if t.shape != (n,):
            raise ValueError(f"tasks must be an int or have shape ({n},), got {t.shape}")
        if (t < 0).any() or (t >= K).any():
            raise ValueError(f"tasks must lie in [0, {K}), got {t.min()}..{t.max()}")
        return t.astype(np.int64)

    @_fit_context(prefer_skip_nested_validation=True)
    @with_torch_threads
    def fit(self, C, X, tasks=None, sample_weight=None):
        """Train the epsilon-network by denoising score matching.

        Parameters
        ----------
        C : array-like of shape (n, d_c) or (n,)
            Conditions.
        X : array-like of shape (n, d)
            Samples.
        tasks : array-like of int, shape (n,), optional
            Task ids in ``[0, n_tasks)``; required when ``n_tasks > 1``.
        sample_weight : array-like of shape (n,), optional
            Loss weights (normalised to mean 1), e.g.
            :func:`mvlearn_ext.diffusion.task_sample_weights` for the
            scalarised multi-task loss. Unequal weights are realised by
            drawing the mini-batch rows with probabilities proportional to
            them (the same expected loss as the weighted mean, with a lower
            variance when a few rows carry much of the weight).

        Returns
        -------
        self : ConditionalDiffusion
        """
        hidden = _check_hidden(self.hidden_layer_sizes)
        check_allocation(
            mlp_elements([64, *hidden, 64]),
            "hidden_layer_sizes",
            self.hidden_layer_sizes,
            what="the network's weights",
            itemsize=4,
        )
        check_allocation(
            8 * self.n_tasks, "n_tasks", self.n_tasks, what="the task embedding", itemsize=4
        )
        for attr in ("c_mean_", "c_scale_"):
            self.__dict__.pop(attr, None)
        X = _check_samples(X)
        n, d = X.shape
        C = self._conditions(C, n)
        t_ids = self._tasks(tasks, n)
        if sample_weight is None:
            w = np.ones(n)
        else:
            w = as_real_array(sample_weight, "sample_weight")
            if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
                raise ValueError(
                    f"sample_weight must be {n} non-negative finite values with a positive sum"
                )
        w = w * (n / w.sum())
        seed, device = _start_fit(self, X)
        self.c_mean_, self.c_scale_ = C.mean(0), C.std(0) + 1e-8
        self.device_ = device
        T = self.n_steps
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            gen = torch.Generator(device=device)
            gen.manual_seed(seed)
            net = EpsMLP(d, C.shape[1], hidden_layer_sizes=hidden, n_tasks=self.n_tasks).to(device)
            Xt = torch.as_tensor((X - self.x_mean_) / self.x_scale_, dtype=torch.float32)
            Ct = torch.as_tensor((C - self.c_mean_) / self.c_scale_, dtype=torch.float32)
            Xt, Ct = Xt.to(device), Ct.to(device)
            Kt = torch.as_tensor(t_ids, device=device)
            Wt = torch.as_tensor(w, dtype=torch.float32, device=device)
            ab = torch.as_tensor(self.schedule_.alpha_bars, dtype=torch.float32, device=device)
            learning_rate = self.learning_rate
            opt = torch.optim.Adam(
                net.parameters(), lr=learning_rate, weight_decay=self.weight_decay
            )
            bs = min(self.batch_size, n)
            weighted = _unequal(w)

            def batch_loss(it):
                idx = _batch_rows(Wt, bs, gen, weighted)
                t = torch.randint(T, (bs,), generator=gen, device=device)
                eps = torch.randn(bs, d, generator=gen, device=device)
                a = ab[t][:, None]
                xt = a.sqrt() * Xt[idx] + (1 - a).sqrt() * eps
                pred = net(xt, (t.float() + 1) / T, Ct[idx], Kt[idx])
                per_row = ((pred - eps) ** 2).mean(1)
                return per_row.mean() if weighted else (Wt[idx] * per_row).mean()

            self.n_iter_ = self.max_iter
            self.loss_curve_ = _train(
                opt,
                batch_loss,
                max_iter=self.max_iter,
                lr=learning_rate,
                learning_rate_schedule=self.learning_rate_schedule,
                est=self,
            )
        self.network_ = net.eval()
        return self

    def _check_fitted(self):
        check_is_fitted(self, "network_")

    def eps_fn(self, C, tasks=None):
        """The trained noise predictor at the conditions ``C`` (one per row), in data units.

        Returns a callable ``(x, t) -> eps_hat`` for the NumPy samplers; ``x``
        is in the standardised space of the network and must have shape
        ``(n, n_features_)``, one row per condition (a ``ValueError`` otherwise).
        """
        self._check_fitted()
        C = self._conditions(C)
        n = C.shape[0]
        K = torch.as_tensor(self._tasks(tasks, n), device=self.device_)
        Ct = torch.as_tensor((C - self.c_mean_) / self.c_scale_, dtype=torch.float32).to(
            self.device_
        )
        net, T = self.network_, self.n_steps

        def eps(x, t):
            if np.ndim(x) != 2 or np.shape(x) != (n, self.n_features_):
                raise ValueError(
                    f"x must have shape ({n}, {self.n_features_}) (one row per condition, "
                    f"the features of the fit), got {np.shape(x)}"
                )
            with torch.no_grad(), torch_threads(self.n_jobs):
                xt = torch.as_tensor(x, dtype=torch.float32, device=self.device_)
                tf = torch.full((n,), (t + 1) / T, dtype=torch.float32, device=self.device_)
                return net(xt, tf, Ct, K).double().cpu().numpy()

        return eps

    def sample(self, C, tasks=None, *, random_state=None):
        """One sample per condition (row of ``C``) by reverse diffusion.

        Parameters
        ----------
        C : array-like of shape (n, d_c) or (n,)
            The conditions, one sample per row.
        tasks : int or array-like of int, shape (n,), default=None
            Task ids in ``[0, n_tasks)``; required when ``n_tasks > 1``.
        random_state : int, RandomState instance, Generator or None, default=None
            Seeds the reverse diffusion; a ``Generator`` (or ``RandomState``)
            is advanced by the sampling.

        Returns
        -------
        X : ndarray of shape (n, d)
            One sample per condition.
        """
        fn = self.eps_fn(C, tasks)
        return _reverse_diffuse(self, fn, np.asarray(C).shape[0], random_state)
