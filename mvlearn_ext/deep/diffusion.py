"""Semi-supervised multi-objective diffusion (torch bridge): tiny epsilon-networks, distillation.

Reconstruction (the full paper was not available): "Semi-supervised
multi-objective learning for diffusion models" (arXiv 2605.25210, ICML 2026)
is known from its abstract only. Its abstract describes several target
distributions (tasks) with scarce paired ``(condition, sample)`` data and
abundant unpaired conditions; lightweight *specialists* fitted on the pairs
of each task; and a *generalist* obtained by distilling them with
pseudo-samples they generate for the unpaired conditions. Everything else
here is a design of this package (spec section 7.2): the specialists and the
generalist are conditional DDPMs trained with the denoising loss
``E w(t) ||eps_theta(sqrt(ab_t) x + sqrt(1 - ab_t) eps, t, c, k) - eps||^2``
(``w = 1``), the multi-objective loss of the generalist is the linear
scalarisation ``sum_k lambda_k L_k`` (per-sample weights
:func:`mvlearn_ext.diffusion.task_sample_weights`), pseudo-samples come from
DDPM ancestral sampling, and the real pairs may be mixed in with a share
``mu`` (``mix_weight``, default 0). The paper's bounds, its on-policy-shift
extension to diffusion policies, and its architectures are not reproduced.

* :class:`EpsMLP`: the epsilon-network (an MLP on the noised sample, sine
  features of the step, the condition and a task embedding);
* :class:`ConditionalDiffusion`: trains one by denoising score matching and
  samples with the NumPy samplers of :mod:`mvlearn_ext.diffusion`;
* :class:`GaussianDSMDiffusion`: a lightweight specialist that is still a
  diffusion model, the Gaussian-posterior denoiser with a polynomial mean,
  fitted by the same loss and sampled by the same samplers (a design
  choice of this package; the abstract leaves the specialist class open);
* :class:`TwoStageDiffusion`: specialists on the pairs, pseudo-pairs, the
  generalist.

These are not scikit-learn estimators: ``fit`` takes conditions, samples and
task ids (or lists of them per task) and sampling is stochastic, so they do
not derive from ``BaseEstimator`` (whose contract tests assume ``fit(X, y)``
and a deterministic ``predict``).
"""

from __future__ import annotations

import sys
import time
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.utils import check_random_state
from torch import nn

from mvlearn_ext.deep._bridge import resolve_device
from mvlearn_ext.diffusion._sampling import ddim_sample, ddpm_sample, gaussian_eps
from mvlearn_ext.diffusion._schedule import make_schedule
from mvlearn_ext.diffusion._two_stage import (
    PolynomialGaussian,
    fit_polynomial_gaussian,
    make_pseudo_pairs,
    task_sample_weights,
)

__all__ = ["ConditionalDiffusion", "EpsMLP", "GaussianDSMDiffusion", "TwoStageDiffusion"]


def _check_int(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def _check_hidden(hidden, name="hidden"):
    if isinstance(hidden, (str, bytes)) or not hasattr(hidden, "__iter__"):
        raise TypeError(f"{name} must be a tuple of positive ints, got {hidden!r}")
    h = tuple(hidden)
    if not h or any(isinstance(w, bool) or not isinstance(w, Integral) or w < 1 for w in h):
        raise ValueError(f"{name} must be a non-empty tuple of positive ints, got {hidden!r}")
    return tuple(int(w) for w in h)


def _unequal(w):
    return bool(np.ptp(w) > 1e-12 * np.max(w))


def _batch_rows(weights, batch_size, generator, weighted):
    """Row ids of one mini-batch.

    With unequal ``weights`` the rows are drawn with probabilities
    ``w / sum(w)`` and the plain mean of their losses is taken: the same
    expected loss as the weighted mean over uniformly drawn rows, without
    its variance when a few rows carry most of the weight (the real pairs
    under ``TwoStageDiffusion(mix_weight=...)``: 64 rows against 4000
    pseudo-pairs, each weighted about 30 times more).
    """
    if weighted:
        return torch.multinomial(weights, batch_size, replacement=True, generator=generator)
    n = weights.shape[0]
    return torch.randint(n, (batch_size,), generator=generator, device=weights.device)


def _gaussian_form_eps(xt, ab, mu, var):
    """``sqrt(1 - ab) (x_t - sqrt(ab) mu) / (ab var + 1 - ab)``, the optimum for N(mu, var)."""
    return (1 - ab).sqrt() * (xt - ab.sqrt() * mu) / (ab * var + 1 - ab)


def _cosine_lr(lr, it, n_iter):
    """Step size of step ``it`` of ``n_iter`` under a half-period cosine decay to 0."""
    return 0.5 * lr * (1.0 + np.cos(np.pi * it / max(n_iter, 1)))


def _train(opt, batch_loss, *, n_iter, lr, lr_schedule, name=None):
    """``n_iter`` Adam steps on ``batch_loss(it)``; the mean loss of every 100 steps.

    ``lr_schedule="cosine"`` sets the step size of every step by
    :func:`_cosine_lr`. With ``name``, each block's loss goes to stderr.
    """
    history, running, start = [], 0.0, time.perf_counter()
    for it in range(n_iter):
        if lr_schedule == "cosine":
            for group in opt.param_groups:
                group["lr"] = _cosine_lr(lr, it, n_iter)
        loss = batch_loss(it)
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += float(loss.detach())
        if (it + 1) % 100 == 0 or it + 1 == n_iter:
            history.append(running / ((it % 100) + 1))
            running = 0.0
            if name is not None:
                print(
                    f"[{name}] step {it + 1}/{n_iter}: loss {history[-1]:.4f} "
                    f"({time.perf_counter() - start:.1f} s)",
                    file=sys.stderr,
                )
    return history


class EpsMLP(nn.Module):
    """The noise predictor ``eps_theta(x_t, t, c, k)``: an MLP with SiLU activations.

    Its input is the noised sample, ``2 n_freq`` sine and cosine features of
    ``t / T``, the condition and (for several tasks) a learned task embedding.

    Parameters
    ----------
    dim : int
        Dimension of the samples.
    cond_dim : int
        Dimension of the conditions (0: unconditional).
    hidden : tuple of int, default=(32, 32)
    n_tasks : int, default=1
    task_dim : int, default=8
        Width of the task embedding (unused with one task).
    n_freq : int, default=8
    """

    def __init__(self, dim, cond_dim, *, hidden=(32, 32), n_tasks=1, task_dim=8, n_freq=8):
        super().__init__()
        self.n_tasks = int(n_tasks)
        self.register_buffer("freqs", torch.pi * 2.0 ** torch.arange(n_freq, dtype=torch.float32))
        self.task = nn.Embedding(n_tasks, task_dim) if n_tasks > 1 else None
        width = dim + 2 * n_freq + cond_dim + (task_dim if n_tasks > 1 else 0)
        layers = []
        for h in hidden:
            layers += [nn.Linear(width, h), nn.SiLU()]
            width = h
        layers.append(nn.Linear(width, dim))
        self.net = nn.Sequential(*layers)

    def forward(self, x, t_frac, c, tasks=None):
        """``x`` (n, d), ``t_frac`` (n,) in [0, 1], ``c`` (n, cond_dim), ``tasks`` (n,) long."""
        ang = t_frac[:, None] * self.freqs[None, :]
        parts = [x, torch.sin(ang), torch.cos(ang), c]
        if self.task is not None:
            parts.append(self.task(tasks))
        return self.net(torch.cat(parts, dim=1))


class ConditionalDiffusion:
    """A conditional DDPM with a tiny epsilon-network, for one or several tasks.

    ``fit`` minimises the (sample-weighted) denoising loss with Adam on
    mini-batches; ``sample`` runs the NumPy DDPM or DDIM sampler of
    :mod:`mvlearn_ext.diffusion` with the trained network as ``eps_fn``.
    Samples and conditions are standardised with their training mean and
    standard deviation.

    Parameters
    ----------
    hidden : tuple of int, default=(32, 32)
        Widths of the hidden layers (the spec's specialist: 2 x 32; its
        generalist: 3 x 128).
    n_tasks : int, default=1
    n_steps : int, default=50
        ``T`` of the linear schedule rescaled to ``T`` steps
        (:func:`mvlearn_ext.diffusion.make_schedule`).
    n_iter : int, default=2000
        Adam steps.
    batch_size : int, default=128
    lr : float, default=2e-3
    lr_schedule : {"constant", "cosine"}, default="constant"
        ``"cosine"`` decays the step size from ``lr`` to 0 over the
        ``n_iter`` steps (half a cosine period), so that the last iterate
        settles instead of jittering at the scale of ``lr``. On the toy
        tasks it made the 3 x 128 networks' conditional means 2-3 times more
        accurate at 3000 steps, but it under-trains small networks given
        few steps (a 2 x 32 network at 3000 steps), so it is not the
        default; see the user guide.
    weight_decay : float, default=0.0
    sampler : {"ddpm", "ddim"}, default="ddpm"
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, the mini-batches, the noise and the steps (the
        global torch RNG is restored after ``fit``).
    device : str or None, default=None
        ``None`` picks CUDA when available.
    verbose : int, default=0

    Attributes
    ----------
    network_ : EpsMLP
    schedule_ : DiffusionSchedule
    loss_history_ : list of float
        Mean training loss per block of 100 steps.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.deep.diffusion import ConditionalDiffusion
    >>> rng = np.random.default_rng(0)
    >>> C = rng.uniform(-1, 1, (64, 1))
    >>> X = np.hstack([C, 2 * C]) + 0.05 * rng.normal(size=(64, 2))
    >>> model = ConditionalDiffusion(n_iter=50, random_state=0).fit(C, X)
    >>> model.sample(C[:5], random_state=0).shape
    (5, 2)
    """

    def __init__(
        self,
        *,
        hidden=(32, 32),
        n_tasks=1,
        n_steps=50,
        n_iter=2000,
        batch_size=128,
        lr=2e-3,
        lr_schedule="constant",
        weight_decay=0.0,
        sampler="ddpm",
        random_state=None,
        device=None,
        verbose=0,
    ):
        self.hidden = hidden
        self.n_tasks = n_tasks
        self.n_steps = n_steps
        self.n_iter = n_iter
        self.batch_size = batch_size
        self.lr = lr
        self.lr_schedule = lr_schedule
        self.weight_decay = weight_decay
        self.sampler = sampler
        self.random_state = random_state
        self.device = device
        self.verbose = verbose

    # -- input ---------------------------------------------------------------
    def _conditions(self, C, n=None, name="C"):
        C = np.asarray(C, dtype=np.float64)
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

    def _validate_params(self):
        self._hidden = _check_hidden(self.hidden)
        _check_int(self.n_tasks, "n_tasks", 1)
        _check_int(self.n_steps, "n_steps", 1)
        _check_int(self.n_iter, "n_iter", 0)
        _check_int(self.batch_size, "batch_size", 1)
        for name in ("lr", "weight_decay"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, Real) or not np.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a non-negative float, got {v!r}")
        if self.lr == 0:
            raise ValueError("lr must be positive")
        if self.sampler not in ("ddpm", "ddim"):
            raise ValueError(f"sampler must be 'ddpm' or 'ddim', got {self.sampler!r}")
        if self.lr_schedule not in ("constant", "cosine"):
            raise ValueError(
                f"lr_schedule must be 'constant' or 'cosine', got {self.lr_schedule!r}"
            )

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
        self._validate_params()
        for attr in ("c_mean_", "c_scale_"):
            self.__dict__.pop(attr, None)
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] == 0:
            raise ValueError(f"X must be a non-empty 2-D array (n, d), got shape {X.shape}")
        if not np.isfinite(X).all():
            raise ValueError("X holds NaN or infinite values")
        n, d = X.shape
        C = self._conditions(C, n)
        t_ids = self._tasks(tasks, n)
        if sample_weight is None:
            w = np.ones(n)
        else:
            w = np.asarray(sample_weight, dtype=np.float64)
            if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
                raise ValueError(
                    f"sample_weight must be {n} non-negative finite values with a positive sum"
                )
        w = w * (n / w.sum())
        self.x_mean_, self.x_scale_ = X.mean(0), X.std(0) + 1e-8
        self.c_mean_, self.c_scale_ = C.mean(0), C.std(0) + 1e-8
        self.schedule_ = make_schedule(self.n_steps)
        self.n_features_ = d
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(2**31 - 1))
        device = resolve_device(self.device)
        self.device_ = device
        T = self.n_steps
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            gen = torch.Generator(device=device)
            gen.manual_seed(seed)
            net = EpsMLP(d, C.shape[1], hidden=self._hidden, n_tasks=self.n_tasks).to(device)
            Xt = torch.as_tensor((X - self.x_mean_) / self.x_scale_, dtype=torch.float32)
            Ct = torch.as_tensor((C - self.c_mean_) / self.c_scale_, dtype=torch.float32)
            Xt, Ct = Xt.to(device), Ct.to(device)
            Kt = torch.as_tensor(t_ids, device=device)
            Wt = torch.as_tensor(w, dtype=torch.float32, device=device)
            ab = torch.as_tensor(self.schedule_.alpha_bars, dtype=torch.float32, device=device)
            opt = torch.optim.Adam(net.parameters(), lr=self.lr, weight_decay=self.weight_decay)
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

            self.loss_history_ = _train(
                opt,
                batch_loss,
                n_iter=self.n_iter,
                lr=self.lr,
                lr_schedule=self.lr_schedule,
                name="ConditionalDiffusion" if self.verbose else None,
            )
        self.network_ = net.eval()
        return self

    def _check_fitted(self):
        if not hasattr(self, "network_"):
            raise RuntimeError(
                "this ConditionalDiffusion is not fitted yet; call fit before sampling"
            )

    def eps_fn(self, C, tasks=None):
        """The trained noise predictor at the conditions ``C`` (one per row), in data units.

        Returns a callable ``(x, t) -> eps_hat`` for the NumPy samplers; ``x``
        is in the standardised space of the network.
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
            if x.shape[0] != n:
                raise ValueError(f"x has {x.shape[0]} rows for {n} conditions")
            with torch.no_grad():
                xt = torch.as_tensor(x, dtype=torch.float32, device=self.device_)
                tf = torch.full((n,), (t + 1) / T, dtype=torch.float32, device=self.device_)
                return net(xt, tf, Ct, K).double().cpu().numpy()

        return eps

    def sample(self, C, tasks=None, *, random_state=None):
        """One sample per condition (row of ``C``), shape (n, d)."""
        fn = self.eps_fn(C, tasks)
        n = np.asarray(C).shape[0]
        sampler = ddpm_sample if self.sampler == "ddpm" else ddim_sample
        Z = sampler(
            fn, self.schedule_, n_samples=n, dim=self.n_features_, random_state=random_state
        )
        return Z * self.x_scale_ + self.x_mean_


class GaussianDSMDiffusion:
    """A lightweight diffusion specialist: the Gaussian-posterior denoiser, fitted by DSM.

    The noise predictor has the form of the exact optimum for
    ``x | c ~ N(mu(c), diag(s^2))`` data (:func:`mvlearn_ext.diffusion.gaussian_eps`)::

        eps(x_t, t, c) = sqrt(1 - ab_t) (x_t - sqrt(ab_t) mu(c)) / (ab_t s^2 + 1 - ab_t)

    with ``mu(c) = A phi(c)``, ``phi`` the Legendre basis of degree ``degree``
    on ``domain`` (the features of
    :func:`mvlearn_ext.diffusion.fit_polynomial_gaussian`), and a learned
    per-dimension ``log s^2``. ``A`` and ``log s^2`` are fitted by the same
    denoising loss as :class:`ConditionalDiffusion` (uniform steps, Adam,
    in the standardised space of ``X``), and ``sample`` runs the same
    reverse-diffusion samplers. It has ``(degree + 2) d`` parameters.

    The specialist class is a design choice of this package: the abstract of
    arXiv 2605.25210 asks for *lightweight* specialists and leaves their
    class open. This one is a diffusion model whose complexity is that of
    the polynomial-Gaussian model: for any step distribution the
    expected DSM loss is minimised exactly by the least-squares ``A`` and the
    mean squared residual ``s^2`` (the closed-form fit), which the tests
    check.

    Parameters
    ----------
    degree : int, default=5
    domain : (float, float), optional
        The condition range mapped to [-1, 1]; default the range of the
        conditions given to ``fit``.
    n_steps : int, default=50
    n_iter : int, default=1500
        Adam steps.
    batch_size : int, default=128
        Rows per step, drawn with replacement (so more than ``n`` is fine).
    lr : float, default=2e-2
    lr_schedule : {"constant", "cosine"}, default="cosine"
    sampler : {"ddpm", "ddim"}, default="ddpm"
    random_state : int, RandomState instance or None, default=None
        Seeds the mini-batches, the noise and the steps (the global torch
        RNG is restored after ``fit``).
    device : str or None, default=None

    Attributes
    ----------
    coef_ : ndarray of shape (degree + 1, d)
        ``A`` in data units (``mu(c) = phi(c) @ coef_``).
    var_ : ndarray of shape (d,)
        ``s^2`` in data units.
    schedule_ : DiffusionSchedule
    loss_history_ : list of float
        Mean training loss per block of 100 steps.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.deep.diffusion import GaussianDSMDiffusion
    >>> rng = np.random.default_rng(0)
    >>> C = rng.uniform(-1, 1, (64, 1))
    >>> X = np.hstack([C, C**2]) + 0.05 * rng.normal(size=(64, 2))
    >>> model = GaussianDSMDiffusion(degree=2, random_state=0).fit(C, X)
    >>> model.sample(C[:5], random_state=0).shape
    (5, 2)
    """

    def __init__(
        self,
        *,
        degree=5,
        domain=None,
        n_steps=50,
        n_iter=1500,
        batch_size=128,
        lr=2e-2,
        lr_schedule="cosine",
        sampler="ddpm",
        random_state=None,
        device=None,
    ):
        self.degree = degree
        self.domain = domain
        self.n_steps = n_steps
        self.n_iter = n_iter
        self.batch_size = batch_size
        self.lr = lr
        self.lr_schedule = lr_schedule
        self.sampler = sampler
        self.random_state = random_state
        self.device = device

    def _validate_params(self):
        _check_int(self.degree, "degree", 0)
        _check_int(self.n_steps, "n_steps", 1)
        _check_int(self.n_iter, "n_iter", 0)
        _check_int(self.batch_size, "batch_size", 1)
        lr = self.lr
        if isinstance(lr, bool) or not isinstance(lr, Real) or not np.isfinite(lr) or lr <= 0:
            raise ValueError(f"lr must be a positive float, got {lr!r}")
        if self.lr_schedule not in ("constant", "cosine"):
            raise ValueError(
                f"lr_schedule must be 'constant' or 'cosine', got {self.lr_schedule!r}"
            )
        if self.sampler not in ("ddpm", "ddim"):
            raise ValueError(f"sampler must be 'ddpm' or 'ddim', got {self.sampler!r}")

    def _basis(self, C):
        """Legendre basis of the conditions (validated by the shell model)."""
        return self.polynomial_._basis(C)

    def fit(self, C, X):
        """Fit ``A`` and ``log s^2`` by denoising score matching.

        Parameters
        ----------
        C : array-like of shape (n,) or (n, 1)
            Scalar conditions.
        X : array-like of shape (n, d)

        Returns
        -------
        self : GaussianDSMDiffusion
        """
        self._validate_params()
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] == 0:
            raise ValueError(f"X must be a non-empty 2-D array (n, d), got shape {X.shape}")
        if not np.isfinite(X).all():
            raise ValueError("X holds NaN or infinite values")
        n, d = X.shape
        c = np.asarray(C, dtype=np.float64)
        if c.ndim == 2 and c.shape[1] == 1:
            c = c[:, 0]
        if c.ndim != 1 or c.shape[0] != n:
            raise ValueError(f"C must have shape ({n},) or ({n}, 1), got {np.shape(C)}")
        if not np.isfinite(c).all():
            raise ValueError("C holds NaN or infinite values")
        if self.domain is None:
            lo, hi = float(c.min()), float(c.max())
            if not hi > lo:
                lo, hi = lo - 1.0, hi + 1.0
        else:
            lo, hi = (float(v) for v in self.domain)
            if not hi > lo:
                raise ValueError(f"domain must be (low, high) with low < high, got {self.domain}")
        p = self.degree + 1
        # a shell model holds the basis; its coefficients are set after the fit
        self.polynomial_ = PolynomialGaussian(
            degree=int(self.degree),
            domain=(lo, hi),
            coef=np.zeros((1, p, d)),
            cov=np.zeros((1, d, d)),
        )
        Phi = self._basis(c)
        self.x_mean_, self.x_scale_ = X.mean(0), X.std(0) + 1e-8
        self.schedule_ = make_schedule(self.n_steps)
        self.n_features_ = d
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(2**31 - 1))
        device = resolve_device(self.device)
        T = self.n_steps
        with torch.random.fork_rng(devices=[]):
            gen = torch.Generator(device=device)
            gen.manual_seed(seed)
            A = torch.zeros(p, d, dtype=torch.float64, device=device, requires_grad=True)
            log_v = torch.zeros(d, dtype=torch.float64, device=device, requires_grad=True)
            Zt = torch.as_tensor((X - self.x_mean_) / self.x_scale_, device=device)
            Pt = torch.as_tensor(Phi, device=device)
            ab = torch.as_tensor(self.schedule_.alpha_bars, device=device)
            opt = torch.optim.Adam([A, log_v], lr=self.lr)
            bs = self.batch_size  # rows drawn with replacement, whatever n

            def batch_loss(it):
                idx = torch.randint(n, (bs,), generator=gen, device=device)
                t = torch.randint(T, (bs,), generator=gen, device=device)
                eps = torch.randn(bs, d, generator=gen, device=device, dtype=torch.float64)
                a = ab[t][:, None]
                xt = a.sqrt() * Zt[idx] + (1 - a).sqrt() * eps
                pred = _gaussian_form_eps(xt, a, Pt[idx] @ A, log_v.exp())
                return ((pred - eps) ** 2).mean()

            self.loss_history_ = _train(
                opt, batch_loss, n_iter=self.n_iter, lr=self.lr, lr_schedule=self.lr_schedule
            )
        self.coef_std_ = A.detach().cpu().numpy()
        self.var_std_ = np.exp(log_v.detach().cpu().numpy())
        coef = self.coef_std_ * self.x_scale_
        coef[0] += self.x_mean_  # the degree-0 Legendre polynomial is 1
        self.coef_ = coef
        self.var_ = self.var_std_ * self.x_scale_**2
        self.polynomial_ = PolynomialGaussian(
            degree=int(self.degree),
            domain=(lo, hi),
            coef=coef[None].copy(),
            cov=np.diag(self.var_)[None],
        )
        return self

    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise RuntimeError(
                "this GaussianDSMDiffusion is not fitted yet; call fit before sampling"
            )

    def mean(self, C):
        """The fitted ``mu(c)`` in data units, shape (n, d)."""
        self._check_fitted()
        return self._basis(C) @ self.coef_

    def eps_fn(self, C):
        """The fitted noise predictor at the conditions ``C`` (standardised space)."""
        self._check_fitted()
        mu = self._basis(C) @ self.coef_std_
        return gaussian_eps(mu, self.var_std_, self.schedule_)

    def sample(self, C, *, random_state=None):
        """One sample per condition by reverse diffusion, shape (n, d)."""
        fn = self.eps_fn(C)
        n = np.asarray(C).shape[0]
        sampler = ddpm_sample if self.sampler == "ddpm" else ddim_sample
        Z = sampler(
            fn, self.schedule_, n_samples=n, dim=self.n_features_, random_state=random_state
        )
        return Z * self.x_scale_ + self.x_mean_


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
        C, X = np.asarray(p[0], dtype=np.float64), np.asarray(p[1], dtype=np.float64)
        if C.ndim == 1:
            C = C[:, None]
        if X.ndim != 2 or C.shape[0] != X.shape[0] or C.shape[0] == 0:
            raise ValueError(f"pairs[{k}] must hold C (n, d_c) and X (n, d) with equal n >= 1")
        out.append((C, X))
    return out


class TwoStageDiffusion:
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
        polynomial mean, fitted by DSM with ``specialist_iter`` Adam steps
        at its own default step size, sampled by reverse diffusion). The
        last two need scalar conditions and use ``specialist_degree``.
    specialist_hidden : tuple of int, default=(32, 32)
    specialist_degree : int, default=5
        Degree of the ``"polynomial"`` and ``"gaussian_dsm"`` specialists.
    generalist_hidden : tuple of int, default=(128, 128, 128)
    n_steps : int, default=50
    specialist_iter : int, default=1500
    generalist_iter : int, default=3000
    batch_size : int, default=128
    lr : float, default=2e-3
    lr_schedule : {"constant", "cosine"}, default="constant"
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
    verbose : int, default=0

    Attributes
    ----------
    specialists_ : list of ConditionalDiffusion, PolynomialGaussian or GaussianDSMDiffusion
    generalist_ : ConditionalDiffusion
    pseudo_pairs_ : tuple (C, X, tasks)
    """

    def __init__(
        self,
        *,
        specialist="diffusion",
        specialist_hidden=(32, 32),
        specialist_degree=5,
        generalist_hidden=(128, 128, 128),
        n_steps=50,
        specialist_iter=1500,
        generalist_iter=3000,
        batch_size=128,
        lr=2e-3,
        lr_schedule="constant",
        weights=None,
        mix_weight=0.0,
        n_per_condition=1,
        random_state=None,
        device=None,
        verbose=0,
    ):
        self.specialist = specialist
        self.specialist_hidden = specialist_hidden
        self.specialist_degree = specialist_degree
        self.generalist_hidden = generalist_hidden
        self.n_steps = n_steps
        self.specialist_iter = specialist_iter
        self.generalist_iter = generalist_iter
        self.batch_size = batch_size
        self.lr = lr
        self.lr_schedule = lr_schedule
        self.weights = weights
        self.mix_weight = mix_weight
        self.n_per_condition = n_per_condition
        self.random_state = random_state
        self.device = device
        self.verbose = verbose

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
        if not isinstance(self.mix_weight, Real) or not 0 <= self.mix_weight < 1:
            raise ValueError(f"mix_weight must be a float in [0, 1), got {self.mix_weight!r}")
        lam = None if self.weights is None else np.asarray(self.weights, dtype=np.float64)
        if lam is not None and lam.shape != (K,):
            raise ValueError(f"weights must have shape ({K},), got {lam.shape}")
        rng = check_random_state(self.random_state)
        seeds = rng.randint(2**31 - 1, size=K + 2)
        common = dict(
            n_steps=self.n_steps,
            batch_size=self.batch_size,
            lr=self.lr,
            lr_schedule=self.lr_schedule,
            device=self.device,
            verbose=max(0, int(self.verbose) - 1),
        )
        start = time.perf_counter()
        if self.specialist not in ("diffusion", "polynomial", "gaussian_dsm"):
            raise ValueError(
                "specialist must be 'diffusion', 'polynomial' or 'gaussian_dsm', "
                f"got {self.specialist!r}"
            )
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
                    n_iter=self.specialist_iter,
                    batch_size=self.batch_size,
                    random_state=int(seeds[k]),
                    device=self.device,
                )
                self.specialists_.append(spec.fit(C, X))
                continue
            spec = ConditionalDiffusion(
                hidden=self.specialist_hidden,
                n_iter=self.specialist_iter,
                random_state=int(seeds[k]),
                **common,
            )
            self.specialists_.append(spec.fit(C, X))
            if self.verbose:
                print(
                    f"[TwoStageDiffusion] specialist {k + 1}/{K} "
                    f"({time.perf_counter() - start:.1f} s)",
                    file=sys.stderr,
                )
        samplers = [
            (lambda C, seed, s=s: s.sample(C, random_state=seed)) for s in self.specialists_
        ]
        Cp, Xp, Tp = make_pseudo_pairs(
            samplers, unpaired, n_per_condition=self.n_per_condition, random_state=int(seeds[K])
        )
        w = task_sample_weights(Tp, lam if lam is not None else np.full(K, 1.0 / K))
        self.pseudo_pairs_ = (Cp, Xp, Tp)
        if self.mix_weight > 0:
            Cr = np.vstack([C for C, _ in pairs])
            Xr = np.vstack([X for _, X in pairs])
            Tr = np.concatenate([np.full(len(C), k) for k, (C, _) in enumerate(pairs)])
            wr = task_sample_weights(Tr, lam if lam is not None else np.full(K, 1.0 / K))
            w = np.concatenate(
                [(1 - self.mix_weight) * w / w.sum(), self.mix_weight * wr / wr.sum()]
            )
            Cp, Xp, Tp = np.vstack([Cp, Cr]), np.vstack([Xp, Xr]), np.concatenate([Tp, Tr])
        self.generalist_ = ConditionalDiffusion(
            hidden=self.generalist_hidden,
            n_tasks=K,
            n_iter=self.generalist_iter,
            random_state=int(seeds[K + 1]),
            **common,
        ).fit(Cp, Xp, Tp, sample_weight=w)
        if self.verbose:
            print(
                f"[TwoStageDiffusion] generalist on {len(Tp)} pairs "
                f"({time.perf_counter() - start:.1f} s)",
                file=sys.stderr,
            )
        return self

    def sample(self, C, tasks, *, random_state=None):
        """Samples of the generalist, one per row of ``C``, for the task ids ``tasks``."""
        if not hasattr(self, "generalist_"):
            raise RuntimeError("this TwoStageDiffusion is not fitted yet; call fit first")
        return self.generalist_.sample(C, tasks, random_state=random_state)
