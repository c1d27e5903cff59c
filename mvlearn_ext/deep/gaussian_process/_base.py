"""The estimator plumbing that T-LVMOGP and GS-LVMOGP share.

:class:`_SVILVMOGPRegressor` validates the data, standardises it,
initialises the output latents, trains the driver module by stochastic
variational inference (:func:`._drivers._train_svi`) and predicts; a
subclass names its parameters and supplies ``_latent_width``,
``_make_module`` (the driver with its inducing points and kernel
initialised) and ``_set_kernel_attributes``: the base is abstract
(:class:`abc.ABCMeta`), so a subclass that lacks one cannot be instantiated.
"""

from __future__ import annotations

import math
import time
from abc import ABCMeta, abstractmethod
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils import check_random_state, metadata_routing
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from mvlearn_ext.deep.gaussian_process._drivers import _train_svi
from mvlearn_ext.gaussian_process import LVMOGPRegressor, check_targets, initial_latents
from mvlearn_ext.utils._progress import VerboseMixin
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT
from mvlearn_ext.utils._torch import (
    LEARNING_RATE_CONSTRAINT,
    resolve_device,
    torch_threads,
)
from mvlearn_ext.utils._validation import check_allocation, check_magnitude


class _SVILVMOGPRegressor(VerboseMixin, RegressorMixin, BaseEstimator, metaclass=ABCMeta):
    """Shared base of :class:`TLVMOGPRegressor` and :class:`GSLVMOGPRegressor`.

    Holds the parameters both take (their constraints), ``fit``,
    ``predict``, ``score`` and the tags. Abstract: not an estimator of its own.
    """

    # ``return_std`` is an option of the output, not metadata to route.
    __metadata_request__predict = {"return_std": metadata_routing.UNUSED}

    _parameter_constraints: dict = {
        "n_latent": [Interval(Integral, 1, None, closed="left")],
        "n_inducing": [Interval(Integral, 1, None, closed="left")],
        "latent_posterior": [StrOptions({"full", "meanfield", "point"})],
        "likelihood": [StrOptions({"gaussian", "zinb"})],
        "zero_inflation": [Interval(Real, 0, None, closed="left")],
        "count_scale": [Interval(Real, 0, None, closed="neither")],
        "n_quadrature": [Interval(Integral, 1, None, closed="left")],
        "tighter_bound": ["boolean"],
        "init": [StrOptions({"pca", "spectral"})],
        "n_epochs": [Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "output_batch_size": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": LEARNING_RATE_CONSTRAINT,
        "normalize_y": ["boolean"],
        "jitter": [Interval(Real, 0, None, closed="neither")],
        "n_predict_samples": [Interval(Integral, 1, None, closed="left")],
        "dtype": [StrOptions({"float64", "float32"})],
        "device": [str, None],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # ------------------------------------------------------------ input

    def _check_fit_data(self, X, Y):
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        check_magnitude(X, "X", compute_dtype=np.dtype(self.dtype))
        if Y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        Y, y_1d = check_targets(Y, X.shape[0])
        check_magnitude(Y, "Y", allow_nan=True, compute_dtype=np.dtype(self.dtype))
        if self.likelihood == "zinb":
            obs = Y[~np.isnan(Y)]
            if np.any(obs < 0) or np.any(obs != np.round(obs)):
                raise ValueError(
                    "likelihood='zinb' needs non-negative integer counts in Y "
                    "(NaN for missing entries)"
                )
        if self.tighter_bound and self.likelihood != "gaussian":
            raise ValueError("tighter_bound=True is only available with likelihood='gaussian'")
        self._check_sizes(*Y.shape)
        return X, Y, y_1d

    def _check_sizes(self, N, P):
        """Refuse size hyperparameters whose tensors cannot fit, before allocating them."""
        d_h = self._latent_width()
        name = "n_terms" if getattr(self, "n_terms", 1) > self.n_latent else "n_latent"
        check_allocation(
            P * d_h * (d_h if self.latent_posterior == "full" else 1) + N * d_h,
            name,
            getattr(self, name),
            what="the output latents and their covariances (n_outputs x latent width^2)",
        )
        check_allocation(
            self.n_predict_samples * P * d_h,
            "n_predict_samples",
            self.n_predict_samples,
            what="the latent draws of predict (n_predict_samples x n_outputs x latent width)",
        )

    # ------------------------------------------------------------ fitting

    @abstractmethod
    def _latent_width(self):
        """Columns of ``h_p`` (the latent coordinates of one output)."""

    @abstractmethod
    def _make_module(self, Xs, mu0, observed, rng, seed, dtype):
        """The driver module with its kernel and inducing points initialised."""

    @abstractmethod
    def _set_kernel_attributes(self, module):
        """The fitted kernel's attributes (``lengthscales_``, ...) from ``module``."""

    def _module_options(self):
        """The driver module's options that both models share (posterior, likelihood, jitter)."""
        return {
            "latent": self.latent_posterior,
            "likelihood": self.likelihood,
            "zero_inflation": self.zero_inflation,
            "count_scale": self.count_scale,
            "n_quadrature": self.n_quadrature,
            "tighter_bound": self.tighter_bound,
            "jitter": self.jitter,
        }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, Y):
        """Fit the model to ``Y`` (NaN = missing) observed at the inputs ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs shared by every output; finite.
        Y : array-like of shape (n_samples, n_outputs) or (n_samples,)
            Targets; NaN marks a missing entry. Every output needs at least
            one observed entry. Non-negative integer counts with
            ``likelihood="zinb"``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        with torch_threads(self.n_jobs):
            return self._fit(X, Y)

    def _fit(self, X, Y, callback=None):
        X, Y, self._y_1d = self._check_fit_data(X, Y)
        t0 = time.perf_counter()
        rs = check_random_state(self.random_state)
        seed = int(rs.randint(2**31 - 1))
        self._predict_seed = int(rs.randint(2**31 - 1))
        rng = np.random.default_rng(seed)
        N, P = Y.shape
        gaussian = self.likelihood == "gaussian"
        if gaussian and self.normalize_y:
            sd = float(np.nanstd(Y))
            self.y_mean_ = np.full(P, np.nanmean(Y))
            self.y_std_ = np.full(P, sd if sd > 0 else 1.0)
        else:
            self.y_mean_, self.y_std_ = np.zeros(P), np.ones(P)
        self.x_mean_ = X.mean(axis=0)
        xs = X.std(axis=0)
        self.x_std_ = np.where(xs > 0, xs, 1.0)
        Xs = (X - self.x_mean_) / self.x_std_
        Ys = (Y - self.y_mean_) / self.y_std_
        observed = ~np.isnan(Ys)
        n_obs = int(observed.sum())
        d_h = self._latent_width()
        # Latent means from the outputs (missing entries 0), plus a noise of scale
        # 1e-2 that breaks ties between equal outputs (see initial_latents).
        Yf = Ys if gaussian else np.log1p(Ys)
        Fm = np.where(np.isnan(Yf), 0.0, Yf).T  # (P, N)
        mu0 = initial_latents(Fm, d_h, init=self.init, noise=1e-2, rng=rng, seed=seed)
        device = resolve_device(self.device)
        dtype = torch.float64 if self.dtype == "float64" else torch.float32
        module = self._make_module(Xs, mu0, observed, rng, seed, dtype)
        with torch.no_grad():
            module.h_mean.copy_(torch.from_numpy(mu0))
            if self.latent_posterior == "full":
                module.h_chol.copy_(torch.diag_embed(torch.full((P, d_h), math.log(0.1))))
            elif self.latent_posterior == "meanfield":
                module.h_log_std.fill_(math.log(0.1))
            if not gaussian:  # start the ZINB mean at the average count
                c0 = max(float(np.nanmean(Y)) / self.count_scale, 1e-3)
                module.mean_const.fill_(c0 + math.log(-math.expm1(-c0)))  # softplus^-1
        module = module.to(device)

        X_t = torch.as_tensor(Xs, dtype=dtype, device=device)
        Y_t = torch.as_tensor(np.nan_to_num(Ys), dtype=dtype, device=device)
        O_t = torch.as_tensor(observed, device=device)
        self.loss_curve_, n_iter = _train_svi(
            module, X_t, Y_t, O_t, n_obs=n_obs, n_epochs=self.n_epochs,
            batch_size=self.batch_size, output_batch_size=self.output_batch_size,
            lr=self.learning_rate,
            sample_latents=self.latent_posterior != "point", seed=seed, verbose=self.verbose,
            desc=type(self).__name__, callback=callback,
        )  # fmt: skip

        module = module.cpu().eval()
        self.module_ = module
        with torch.no_grad():
            self.latent_outputs_ = module.h_mean.detach().numpy().astype(np.float64)
            Lh = module.latent_factor(torch.arange(P))
            self.latent_covariances_ = (
                np.zeros((P, d_h, d_h)) if Lh is None else (Lh @ Lh.transpose(1, 2)).numpy()
            )
            self._set_kernel_attributes(module)
            if gaussian:
                self.noise_variance_ = float(torch.exp(module.log_noise))
            else:
                self.dispersion_ = torch.exp(module.log_alpha).numpy().astype(np.float64)
        self.n_outputs_ = P
        self.n_iter_ = n_iter
        self._log(
            f"{n_iter} steps in {time.perf_counter() - t0:.2f} s, "
            f"final loss {self.loss_curve_[-1] if self.loss_curve_ else float('nan'):.4f}"
        )
        return self

    # --------------------------------------------------------- prediction

    def predict(self, X, return_std=False):
        """Predictive mean (and standard deviation) of every output at ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return the standard deviation of a new observation.

        Returns
        -------
        mean : ndarray of shape (n_samples, n_outputs_) (or (n_samples,) if
            ``Y`` was 1-D at ``fit``)
        std : ndarray of the shape of ``mean``, only if ``return_std``
        """
        check_is_fitted(self, "module_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        check_magnitude(X, "X", compute_dtype=np.dtype(self.dtype))
        module = self.module_
        dtype = module.h_mean.dtype
        Xs = torch.as_tensor((X - self.x_mean_) / self.x_std_, dtype=dtype)
        S = 1 if self.latent_posterior == "point" else self.n_predict_samples
        gen = torch.Generator().manual_seed(self._predict_seed)
        eps = torch.randn(S, self.n_outputs_, module.d_h, generator=gen, dtype=dtype)
        with torch_threads(self.n_jobs):
            m, v = module.predict_moments(Xs, eps)
        m, v = m.numpy().astype(np.float64), v.numpy().astype(np.float64)
        if self.likelihood == "gaussian":
            mean = m * self.y_std_ + self.y_mean_
            std = np.sqrt(v + self.noise_variance_) * self.y_std_
        else:
            mean, std = m, np.sqrt(v)
        if self._y_1d:
            mean, std = mean[:, 0], std[:, 0]
        return (mean, std) if return_std else mean

    score = LVMOGPRegressor.score

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags
