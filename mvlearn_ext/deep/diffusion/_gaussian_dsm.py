"""GaussianDSMDiffusion: the Gaussian-posterior denoiser fitted by DSM (estimator)."""

from __future__ import annotations

from numbers import Integral

import numpy as np
import torch
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import metadata_routing
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from mvlearn_ext.deep.diffusion._training import (
    COMMON_CONSTRAINTS,
    SAMPLER_CONSTRAINT,
    _check_samples,
    _gaussian_form_eps,
    _reverse_diffuse,
    _start_fit,
    _train,
)
from mvlearn_ext.diffusion._sampling import gaussian_eps
from mvlearn_ext.diffusion._two_stage import PolynomialGaussian
from mvlearn_ext.utils._torch import with_torch_threads
from mvlearn_ext.utils._validation import as_real_array, check_allocation


def _check_domain(domain):
    """``(low, high)`` as floats with ``low < high``."""
    try:
        lo, hi = (float(v) for v in domain)
    except (TypeError, ValueError):
        raise ValueError(f"domain must be (low, high) with low < high, got {domain!r}") from None
    if not hi > lo:
        raise ValueError(f"domain must be (low, high) with low < high, got {domain}")
    return lo, hi


class GaussianDSMDiffusion(BaseEstimator):
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
    max_iter : int, default=1500
        Adam steps.
    batch_size : int, default=128
        Rows per step, drawn with replacement (so more than ``n`` is fine).
    learning_rate : float, default=2e-2
        Adam's step size.
    learning_rate_schedule : {"constant", "cosine"}, default="cosine"
    sampler : {"ddpm", "ddim"}, default="ddpm"
    random_state : int, RandomState instance or None, default=None
        Seeds the mini-batches, the noise and the steps (the global torch
        RNG is restored after ``fit``).
    device : str or None, default=None
        ``None`` picks CUDA when available.
    n_jobs : int or None, default=None
        Threads of torch's intra-op pool during ``fit`` and sampling
        (restored afterwards): ``None`` means 1, ``-1`` every available CPU;
        never more than the available CPUs.

    Attributes
    ----------
    coef_ : ndarray of shape (degree + 1, d)
        ``A`` in data units (``mu(c) = phi(c) @ coef_``).
    var_ : ndarray of shape (d,)
        ``s^2`` in data units.
    schedule_ : DiffusionSchedule
    loss_curve_ : list of float
        Mean training loss per block of 100 steps.
    n_iter_ : int
        Adam steps taken (``max_iter``).

    See Also
    --------
    ConditionalDiffusion : The neural epsilon-network.
    mvlearn_ext.diffusion.fit_polynomial_gaussian : The closed-form least-squares fit.

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
    >>> model.mean(C[:5]).shape
    (5, 2)
    """

    # The data arguments are not metadata to route.
    __metadata_request__fit = {"C": metadata_routing.UNUSED}

    _parameter_constraints: dict = {
        **COMMON_CONSTRAINTS,
        "degree": [Interval(Integral, 0, None, closed="left")],
        "domain": [tuple, list, None],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "sampler": SAMPLER_CONSTRAINT,
    }

    def __init__(
        self,
        *,
        degree=5,
        domain=None,
        n_steps=50,
        max_iter=1500,
        batch_size=128,
        learning_rate=2e-2,
        learning_rate_schedule="cosine",
        sampler="ddpm",
        random_state=None,
        device=None,
        n_jobs=None,
    ):
        self.degree = degree
        self.domain = domain
        self.n_steps = n_steps
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_schedule = learning_rate_schedule
        self.sampler = sampler
        self.random_state = random_state
        self.device = device
        self.n_jobs = n_jobs

    def _basis(self, C):
        """Legendre basis of the conditions (validated by the shell model)."""
        return self.polynomial_._basis(C)

    @_fit_context(prefer_skip_nested_validation=True)
    @with_torch_threads
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
        X = _check_samples(X)
        n, d = X.shape
        check_allocation(
            self.batch_size * d * 4,
            "batch_size",
            self.batch_size,
            what="a mini-batch (rows are drawn with replacement)",
        )
        check_allocation(
            (self.degree + 1) * (n + d), "degree", self.degree, what="the Legendre basis"
        )
        c = as_real_array(C, "C")
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
            lo, hi = _check_domain(self.domain)
        p = self.degree + 1
        # a shell model holds the basis; its coefficients are set after the fit
        self.polynomial_ = PolynomialGaussian(
            degree=int(self.degree),
            domain=(lo, hi),
            coef=np.zeros((1, p, d)),
            cov=np.zeros((1, d, d)),
        )
        Phi = self._basis(c)
        seed, device = _start_fit(self, X)
        T = self.n_steps
        with torch.random.fork_rng(devices=[]):
            gen = torch.Generator(device=device)
            gen.manual_seed(seed)
            A = torch.zeros(p, d, dtype=torch.float64, device=device, requires_grad=True)
            log_v = torch.zeros(d, dtype=torch.float64, device=device, requires_grad=True)
            Zt = torch.as_tensor((X - self.x_mean_) / self.x_scale_, device=device)
            Pt = torch.as_tensor(Phi, device=device)
            ab = torch.as_tensor(self.schedule_.alpha_bars, device=device)
            learning_rate = self.learning_rate
            opt = torch.optim.Adam([A, log_v], lr=learning_rate)
            bs = self.batch_size  # rows drawn with replacement, whatever n

            def batch_loss(it):
                idx = torch.randint(n, (bs,), generator=gen, device=device)
                t = torch.randint(T, (bs,), generator=gen, device=device)
                eps = torch.randn(bs, d, generator=gen, device=device, dtype=torch.float64)
                a = ab[t][:, None]
                xt = a.sqrt() * Zt[idx] + (1 - a).sqrt() * eps
                pred = _gaussian_form_eps(xt, a, Pt[idx] @ A, log_v.exp())
                return ((pred - eps) ** 2).mean()

            self.n_iter_ = self.max_iter
            self.loss_curve_ = _train(
                opt,
                batch_loss,
                max_iter=self.max_iter,
                lr=learning_rate,
                learning_rate_schedule=self.learning_rate_schedule,
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
        check_is_fitted(self, "coef_")

    def mean(self, C):
        """The fitted ``mu(c)`` in data units.

        Parameters
        ----------
        C : array-like of shape (n,) or (n, 1)
            Scalar conditions.

        Returns
        -------
        mu : ndarray of shape (n, d)
            The fitted mean of every condition.

        Raises
        ------
        TypeError
            If ``C`` is not numeric (strings of digits included).
        ValueError
            If ``C`` holds complex values, NaN or infinity, is empty, has not
            the shape (n,) or (n, 1), or lies so far outside ``domain`` that
            the polynomial overflows.
        """
        self._check_fitted()
        Phi = self._basis(C)
        with np.errstate(over="ignore", invalid="ignore"):
            return self.polynomial_._finite(Phi @ self.coef_, C)

    def eps_fn(self, C):
        """The fitted noise predictor at the conditions ``C`` (standardised space)."""
        self._check_fitted()
        mu = self._basis(C) @ self.coef_std_
        return gaussian_eps(mu, self.var_std_, self.schedule_)

    def sample(self, C, *, random_state=None):
        """One sample per condition by reverse diffusion.

        Parameters
        ----------
        C : array-like of shape (n, d_c) or (n,)
            The conditions, one sample per row.
        random_state : int, RandomState instance, Generator or None, default=None
            Seeds the reverse diffusion; a ``Generator`` (or ``RandomState``)
            is advanced by the sampling.

        Returns
        -------
        X : ndarray of shape (n, d)
            One sample per condition.
        """
        fn = self.eps_fn(C)
        return _reverse_diffuse(self, fn, np.asarray(C).shape[0], random_state)
