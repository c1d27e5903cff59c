"""LVMOGP: latent variable multi-output GP regression (Dai, Alvarez & Lawrence, 2017)."""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state, metadata_routing
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from mvlearn_ext._lib import effective_n_jobs
from mvlearn_ext.gaussian_process import _bound as bd
from mvlearn_ext.gaussian_process._common import check_targets, initial_latents, kmeans_or_distinct
from mvlearn_ext.utils._progress import VerboseMixin
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT, single_threaded_pools
from mvlearn_ext.utils._validation import (
    as_real_array,
    check_allocation,
    check_magnitude,
    max_abs_units,
    refuse_strings,
    validate_vector,
)
from mvlearn_ext.utils._warnings import warn

__all__ = ["LVMOGPRegressor"]


def _output_scaling(packer, data):
    """Per-parameter scale ``d`` of the coordinates ``theta / d`` that L-BFGS sees.

    The parameters of output ``p`` (``mu_p``, ``log S_p``) enter the bound
    per observed entry with weight about ``count_p / n_obs`` (about
    ``1 / P``), the global ones with weight about 1: their curvatures differ
    by that factor, which L-BFGS's scalar initial Hessian cannot absorb.
    With ``d = sqrt(n_obs / count_p)`` for output ``p``'s parameters (1 for
    the others) both are of the same order. The optimum is unchanged.
    """
    d = np.ones(packer.size)
    rs = np.sqrt(data.n_obs / data.count)
    for name in ("mu", "log_S"):
        if name in packer.slices:
            size = packer.slices[name].stop - packer.slices[name].start
            d[packer.slices[name]] = np.repeat(rs, size // rs.size)  # rows (P, D_H)
    return d


def _scaled_objective(free, mask, theta, d, packer, data, *, jitter, n_threads):
    """Minus the profiled bound per observed entry, and its gradient, at
    ``theta`` with ``theta[mask] = free * d[mask]`` (the L-BFGS objective)."""
    th = theta.copy()
    th[mask] = free * d[mask]
    e, g, _ = bd.profiled_elbo_and_grad(th, packer, data, jitter=jitter, n_threads=n_threads)
    scale = 1.0 / data.n_obs
    return -e * scale, -g[mask] * d[mask] * scale


class LVMOGPRegressor(VerboseMixin, RegressorMixin, BaseEstimator):
    """Latent variable multi-output GP regression (LVMOGP) for many outputs.

    Every output ``p`` gets a latent vector ``h_p`` with a Gaussian
    variational posterior ``q(h_p) = N(mu_p, diag S_p)`` (prior ``N(0, I)``),
    and one GP on (input, output latent) pairs with the separable kernel
    ``k((x, h), (x', h')) = k_X(x, x') k_H(h, h')`` (ARD-RBF factors) models
    every output: ``y_np = f(x_n, h_p) + eps``, ``eps ~ N(0, sigma^2)``. The
    inducing variables sit on the grid ``Z_X x Z_H`` with a whitened,
    Kronecker-structured ``q(U) = N(M, S_H kron S_X)``, so that the
    variational bound has an exact Kronecker form (Dai, Alvarez & Lawrence,
    2017). Missing entries (NaN in ``Y``) are left out of the bound, which
    sums the observed entries only. It is evaluated from per-input sums of
    the outputs' Psi-statistics over the outputs observed at each input
    (full sums minus the missing entries when those are fewer), at a cost
    of ``O(n_visited M_H^2 + N P M_H + N M_X^2 M_H^2 + P M_H^2 D_H +
    (M_X M_H)^3)`` per evaluation, ``n_visited`` the smaller of the
    numbers of missing and observed entries: linear in the data and never
    quadratic in the number of outputs. Every hyper-parameter (kernel
    variance and lengthscales, noise, inducing inputs), the covariance
    factors of ``q(U)`` and the latent posteriors are fitted by L-BFGS on
    the exact gradient of the bound; the sparse sums and Psi-statistics run
    in the compiled core (``mvlearn_ext._lib._kernels``).

    The mean ``M`` of ``q(U)`` is not left to the optimiser: the bound is a
    concave quadratic in it, and every evaluation sets it to its
    closed-form maximiser (a linear system of size ``M_X M_H``), so L-BFGS
    climbs the bound maximised over ``M`` (its gradient is the partial
    gradient there). Optimising ``M`` jointly with the hyper-parameters, as
    GPy does, stalls: on smooth fields over a 2-D grid of 1,000 outputs it
    stopped at a held-out RMSE 2.3 times that of independent GPs, where the
    profiled bound reaches the independent GPs' error. The schedule otherwise follows GPy's
    ``optimize_auto``: a first phase of ``int(0.1 * max_iter)`` iterations
    on the ``q(U)`` covariance and the noise only, then ``max_iter``
    iterations on everything. L-BFGS works in rescaled coordinates: the
    parameters of output ``p`` (``mu_p``, ``log S_p``) are divided by
    ``sqrt(n_observed / n_observed_p)``, so that their curvature in the
    bound per observed entry (about ``1 / P`` of the global parameters')
    is of the global parameters' order. That changes the optimiser's path,
    not the bound or its optimum.

    Parameters
    ----------
    n_latent : int, default=2
        Dimension ``D_H`` of the output latent vectors.
    n_inducing : int, default=10
        Inducing inputs ``M_X`` on the input side (capped at ``n_samples``).
    n_inducing_latent : int, default=6
        Inducing points ``M_H`` in the latent space (capped at ``n_outputs``).
        They must resolve the outputs' latent manifold, and a grid that is
        too coarse caps the accuracy whatever the number of iterations
        (outputs on a 2-D manifold need about 10 or more).
        The cost of an evaluation grows with ``M_H^2`` in the data terms
        and with ``(M_X M_H)^3`` in the inducing algebra.
    latent_posterior : {"gaussian", "point"}, default="gaussian"
        ``"gaussian"``: ``q(h_p) = N(mu_p, diag S_p)`` with Psi-statistics;
        ``"point"``: a point estimate ``h_p = mu_p`` (MAP under ``N(0, I)``).
    init : {"spectral", "pca"}, default="spectral"
        Initial latent means: a spectral embedding (Laplacian eigenmaps) of
        the outputs' k-nearest-neighbour graph in the space of their top 20
        principal components, or the top principal-component scores (the
        linear analogue of GPy's ``init='GP'``). Both see missing entries as
        the output's mean. The spectral start recovers a curved manifold of
        outputs (e.g. outputs on a 2-D grid of locations) that PCA folds.
    max_iter : int, default=1000
        L-BFGS iterations of the main phase. When that phase stops at this
        limit before meeting ``tol``, :meth:`fit` emits a
        :class:`~sklearn.exceptions.ConvergenceWarning`.
    tol : float, default=1e-7
        L-BFGS ``ftol`` on the bound per observed entry.
    normalize_y : bool, default=True
        Centre and scale the targets by the mean and standard deviation of
        all observed entries before the fit (undone by :meth:`predict`).
        One shared pair on purpose: per-output statistics are biased for an
        output missing over a region of the inputs.
    jitter : float, default=1e-6
        Relative jitter added to both inducing covariances.
    n_jobs : int or None, default=None
        Threads of the compiled kernels, resolved by
        :func:`mvlearn_ext.utils.effective_n_jobs` (``None``: 1, ``-1``: every
        CPU, ``-k``: all but ``k - 1``). The result does not depend
        on it: every sum over outputs runs in a fixed order, and BLAS and
        OpenMP run on one thread inside ``fit`` and ``predict``.
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means initialisation of the inducing inputs.
    verbose : int, default=0
        Print the progress of ``fit`` to standard error.

    Attributes
    ----------
    latent_outputs_ : ndarray of shape (n_outputs, n_latent)
        Posterior means ``mu_p`` of the output latent vectors.
    latent_variances_ : ndarray of shape (n_outputs, n_latent)
        Posterior variances ``S_p`` (zeros for ``latent_posterior="point"``).
    inducing_inputs_ : ndarray of shape (n_inducing_, n_features_in_)
    inducing_latent_ : ndarray of shape (n_inducing_latent_, n_latent)
    variance_ : float
        Kernel variance (on the standardised scale if ``normalize_y``).
    lengthscales_ : ndarray of shape (n_features_in_,)
        Input lengthscales.
    latent_lengthscales_ : ndarray of shape (n_latent,)
    noise_variance_ : float
        ``sigma^2`` on the standardised scale.
    elbo_ : float
        The final bound (sum over observed entries, standardised scale).
    n_iter_ : int
        L-BFGS iterations over both phases.
    n_inducing_, n_inducing_latent_ : int
        The inducing sizes actually used.
    n_outputs_ : int
    n_features_in_ : int
    y_mean_, y_std_ : ndarray of shape (n_outputs_,)
        The standardisation of each output (the same for all with
        ``normalize_y``; zeros and ones without). ``y_std_`` is 0 for
        targets with nothing to fit (see Notes).

    See Also
    --------
    mvlearn_ext.deep.TLVMOGPRegressor : The torch version with neural kernels.
    sklearn.gaussian_process.GaussianProcessRegressor : One GP per output, the baseline.

    Notes
    -----
    :meth:`predict` returns the predictive mean of ``y``; with
    ``return_std=True`` also the standard deviation of a new noisy
    observation (the latent function's variance plus ``sigma^2``).

    When every observed entry of ``Y`` has the same value (every one is 0
    without ``normalize_y``), ``f = 0`` fits the centred targets exactly and
    the bound has no maximum: it grows without limit as the noise and kernel
    variances shrink. :meth:`fit` then leaves every parameter at its initial
    value (``n_iter_ = 0``) and sets ``y_std_`` to 0, the limit of that
    ascent: :meth:`predict` returns the value for every output and input,
    with standard deviation 0.

    References
    ----------
    Z. Dai, M. A. Alvarez, N. D. Lawrence, "Efficient Modeling of Latent
    Information in Supervised Learning using Gaussian Processes", NeurIPS 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.gaussian_process import LVMOGPRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = np.linspace(0, 1, 30)[:, None]
    >>> shifts = rng.uniform(0, 1, 8)
    >>> Y = np.sin(6 * X + shifts) + 0.05 * rng.standard_normal((30, 8))
    >>> Y[rng.random(Y.shape) < 0.2] = np.nan
    >>> model = LVMOGPRegressor(n_inducing=8, random_state=0).fit(X, Y)
    >>> mean, std = model.predict(X, return_std=True)
    >>> mean.shape, model.latent_outputs_.shape
    ((30, 8), (8, 2))
    """

    # ``return_std`` is an option of the output, not metadata to route.
    __metadata_request__predict = {"return_std": metadata_routing.UNUSED}

    _parameter_constraints: dict = {
        "n_latent": [Interval(Integral, 1, None, closed="left")],
        "n_inducing": [Interval(Integral, 1, None, closed="left")],
        "n_inducing_latent": [Interval(Integral, 1, None, closed="left")],
        "latent_posterior": [StrOptions({"gaussian", "point"})],
        "init": [StrOptions({"spectral", "pca"})],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "normalize_y": ["boolean"],
        "jitter": [Interval(Real, 0, None, closed="neither")],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        n_latent=2,
        n_inducing=10,
        n_inducing_latent=6,
        latent_posterior="gaussian",
        init="spectral",
        max_iter=1000,
        tol=1e-7,
        normalize_y=True,
        jitter=1e-6,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.n_latent = n_latent
        self.n_inducing = n_inducing
        self.n_inducing_latent = n_inducing_latent
        self.latent_posterior = latent_posterior
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.normalize_y = normalize_y
        self.jitter = jitter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------ fitting

    def _initial_params(self, X, F, rng):
        """Initial parameters; ``F`` (P, N) holds the standardised targets with
        0 (the standardised mean) at the missing entries."""
        P, N = F.shape
        d_x, d_h = X.shape[1], self.n_latent
        seed = int(rng.integers(2**31 - 1))
        m_x = min(self.n_inducing, N)
        m_h = min(self.n_inducing_latent, P)
        Z_x = kmeans_or_distinct(X, m_x, seed)
        m_x = Z_x.shape[0]
        # Output latents from the outputs (missing entries filled by 0, the
        # standardised mean), with a small noise that breaks ties between
        # identical outputs.
        mu = initial_latents(F, d_h, init=self.init, noise=1e-3, rng=rng, seed=seed)
        Z_h = kmeans_or_distinct(mu, m_h, seed)
        m_h = Z_h.shape[0]
        # Per-feature spread times sqrt(d_x): the scaled squared distance of
        # two inputs is then about 2 whatever d_x, not 2 d_x (with 10 features
        # the kernel starts near zero between all inputs and the fit stalls
        # at the mean, R^2 = 0). Unchanged for a single input feature.
        ls_x = X.std(axis=0)
        ls_x = np.where(ls_x > 0, ls_x, 1.0) * np.sqrt(d_x)
        # The same rule for the output latents, whose means have unit spread
        # per dimension (``initial_latents``): lengthscales sqrt(d_h). With
        # unit lengthscales each informative dimension adds about 2 to the
        # scaled squared distance of two outputs, and the latent variances S
        # shrink the Psi-statistics by (1 + 2 S)^(-d_h / 2): for a large
        # n_latent the kernel starts near zero between outputs and the fit
        # stays at the mean (noise variance 1, R^2 = 0).
        ls_h = np.full(d_h, np.sqrt(d_h))
        packer = bd.make_packer(P, d_x, d_h, m_x, m_h, self.latent_posterior == "gaussian")
        params = {
            "log_variance": np.zeros(1),
            "log_ls_x": np.log(ls_x),
            "log_ls_h": np.log(ls_h),
            "log_noise": np.array([np.log(0.1)]),
            "Z_x": Z_x,
            "Z_h": Z_h,
            "M": np.zeros((m_x, m_h)),
            "L_sx": np.diag(np.full(m_x, 0.5 * np.log(0.3))),
            "L_sh": np.diag(np.full(m_h, 0.5 * np.log(0.3))),
            "mu": mu,
            "log_S": np.full((P, d_h), np.log(0.1)),
        }
        return packer, packer.pack(params)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, Y):
        """Fit the model to ``Y`` (NaN = missing) observed at the inputs ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs shared by every output; finite.
        Y : array-like of shape (n_samples, n_outputs) or (n_samples,)
            Targets; NaN marks a missing entry. Every output needs at least
            one observed entry.

        Returns
        -------
        self : LVMOGPRegressor

        Raises
        ------
        TypeError
            If ``X`` or ``Y`` is not numeric (strings of digits included).
        ValueError
            If ``X`` holds NaN, infinity or complex values, or values too
            large to square; if ``Y`` holds infinity or complex values, has
            an output with no observed entry, or not one row per row of ``X``.

        Warns
        -----
        ConvergenceWarning
            If the main phase of L-BFGS stops at ``max_iter`` iterations
            before the bound per observed entry changes by less than ``tol``.
        """
        nt = effective_n_jobs(self.n_jobs, name="n_jobs")
        # The dense algebra left in NumPy is on inducing-sized matrices, where
        # a multi-threaded BLAS only adds overhead (10-100x on a loaded
        # machine) and changes the last bits with the thread count, as the
        # OpenMP k-means of the initialisation does; the compiled kernels
        # carry the threads.
        with single_threaded_pools():
            return self._fit(X, Y, nt)

    def _fit(self, X, Y, nt):
        refuse_strings(X, "X")
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        check_magnitude(X, "X")
        # Each input feature is divided by its largest magnitude: the kernel's
        # squared distances then neither underflow nor overflow whatever the
        # units, and the optimiser starts from the same point in any units.
        self._x_unit = max_abs_units(X)
        X = X / self._x_unit
        Y, self._y_1d = check_targets(Y, X.shape[0])
        # the latent means and variances: n_outputs x n_latent each
        check_allocation(Y.shape[1] * self.n_latent, "n_latent", self.n_latent)
        t0 = time.perf_counter()
        rng = np.random.default_rng(check_random_state(self.random_state).randint(2**31 - 1))
        P = Y.shape[1]
        lo, hi = float(np.nanmin(Y)), float(np.nanmax(Y))
        # Every observed entry equal to the mean (0 without normalize_y):
        # f = 0 explains the centred targets exactly and the bound grows
        # without limit as the noise and kernel variances shrink, so there
        # is no optimum to climb to. The limit predicts the mean with zero
        # spread, which a zero scale gives (see the class docstring).
        flat = lo == hi and (self.normalize_y or lo == 0.0)
        if self.normalize_y:
            # One mean and scale for all outputs: per-output statistics
            # would be biased for an output missing over a region of the
            # inputs, and shift it away from the structure it shares. The
            # mean of equal entries is that value, not its rounded average.
            self.y_mean_ = np.full(P, lo if flat else np.nanmean(Y))
            self.y_std_ = np.full(P, 1.0 if flat else float(np.nanstd(Y)))
        else:
            self.y_mean_, self.y_std_ = np.zeros(P), np.ones(P)
        data = bd.Data(X, ((Y - self.y_mean_) / self.y_std_).T)
        del Y
        packer, theta = self._initial_params(X, data.Y0, rng)
        m_slice = packer.slices["M"]

        d = _output_scaling(packer, data)

        def objective(free, mask):
            return _scaled_objective(
                free, mask, theta_full, d, packer, data, jitter=self.jitter, n_threads=nt
            )

        fixed = np.zeros(packer.size, dtype=bool)
        for name in bd.HYPER:
            if name in packer.slices:
                fixed[packer.slices[name]] = True
        free_mean = np.zeros(packer.size, dtype=bool)
        free_mean[m_slice] = True
        n_iter = 0
        theta_full = theta
        phases = [
            (~fixed & ~free_mean, int(0.1 * self.max_iter)),
            (~free_mean, self.max_iter),
        ]
        for phase, (mask, iters) in enumerate(phases):
            if iters == 0 or flat:
                continue
            res = minimize(
                objective,
                theta_full[mask] / d[mask],
                args=(mask,),
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": iters, "ftol": self.tol, "gtol": 1e-9},
            )
            theta_full = theta_full.copy()
            theta_full[mask] = res.x * d[mask]
            n_iter += int(res.nit)
            self._log(f"phase {phase + 1}: {res.nit} iterations, bound/entry {-res.fun:.5f}")
            # status 1: L-BFGS-B stopped at its iteration (or evaluation)
            # limit; the first phase is a warm-up that stops there by design.
            if phase == len(phases) - 1 and res.status == 1:
                warn(
                    f"LVMOGPRegressor's optimiser stopped at its limit of max_iter="
                    f"{self.max_iter} iterations before the bound per observed entry "
                    f"changed by less than tol={self.tol:g}; increase max_iter",
                    ConvergenceWarning,
                )
        # the bound at the optimal q(U) mean, and that mean
        self.elbo_, M = bd.profiled_elbo_and_grad(
            theta_full, packer, data, jitter=self.jitter, n_threads=nt, grad=False
        )
        theta_full[m_slice] = M.ravel()
        self._packer, self._theta = packer, theta_full
        p = packer.unpack(theta_full)
        self.latent_outputs_ = p["mu"].copy()
        self.latent_variances_ = np.exp(p["log_S"]) if "log_S" in p else np.zeros_like(p["mu"])
        self.inducing_inputs_ = p["Z_x"] * self._x_unit
        self.inducing_latent_ = p["Z_h"].copy()
        self.variance_ = float(np.exp(p["log_variance"][0]))
        self.lengthscales_ = np.exp(p["log_ls_x"]) * self._x_unit
        self.latent_lengthscales_ = np.exp(p["log_ls_h"])
        self.noise_variance_ = float(np.exp(p["log_noise"][0]))
        self.n_inducing_, self.n_inducing_latent_ = p["M"].shape
        self.n_outputs_ = P
        self.n_iter_ = n_iter
        if flat:
            self.y_std_ = np.zeros(P)
        self._log(f"fit in {time.perf_counter() - t0:.2f} s, bound {self.elbo_:.3f}")
        return self

    # --------------------------------------------------------- prediction

    def predict(self, X, return_std=False):
        """Predictive mean (and standard deviation) of every output at ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return the standard deviation of a new noisy observation.

        Returns
        -------
        mean : ndarray of shape (n_samples, n_outputs_) (or (n_samples,) if
            ``Y`` was 1-D at ``fit``)
        std : ndarray of the shape of ``mean``, only if ``return_std``

        Raises
        ------
        TypeError
            If ``X`` is not numeric (strings of digits included).
        ValueError
            If ``X`` holds NaN, infinity or complex values, values too large
            to square, or not the number of features seen at ``fit``.
        """
        check_is_fitted(self)
        refuse_strings(X, "X")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        check_magnitude(X, "X")
        X = X / self._x_unit
        nt = effective_n_jobs(self.n_jobs, name="n_jobs")
        with single_threaded_pools():
            m, v = bd.predict_moments(
                self._theta, self._packer, X, jitter=self.jitter, n_threads=nt
            )
        mean = m * self.y_std_ + self.y_mean_
        if self._y_1d:
            mean = mean[:, 0]
        if not return_std:
            return mean
        std = np.sqrt(v + self.noise_variance_) * self.y_std_
        return mean, std[:, 0] if self._y_1d else std

    def score(self, X, y, sample_weight=None):
        """Mean over outputs of the R^2 on the observed (non-NaN) entries of ``y``.

        ``y`` has one column per output of the training targets (NaN = not
        scored). Outputs without an observed entry in ``y`` are skipped; with
        ``sample_weight`` (n_samples,) each entry is weighted by its row's weight.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test inputs.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs_)
            True targets, NaN where an entry is not scored. 1-D only for a
            model of one output.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows (all 1 by default).

        Returns
        -------
        score : float
            The mean over the scored outputs of their (weighted) ``R^2``; an
            output whose observed targets are constant scores 1 if predicted
            exactly and 0 otherwise.

        Raises
        ------
        TypeError
            If ``X`` or ``y`` is not numeric (strings of digits included).
        ValueError
            If ``y`` is not 1-D or 2-D, has another number of outputs than the
            training targets or another number of rows than ``X``, holds
            infinity or no observed entry; if ``sample_weight`` is not one
            finite weight per row; for the errors of :meth:`predict`.
        """
        check_is_fitted(self)
        Y = as_real_array(y, "y")
        if Y.ndim not in (1, 2):
            raise ValueError(f"y must be 1-D or 2-D, got shape {Y.shape}")
        n_y = 1 if Y.ndim == 1 else Y.shape[1]
        if n_y != self.n_outputs_:
            raise ValueError(
                f"y has {n_y} output(s) (columns) but {type(self).__name__} was fitted "
                f"with {self.n_outputs_}"
            )
        if np.isinf(Y).any():
            raise ValueError("y contains infinity; mark the entries not to score with NaN")
        pred = self.predict(X)
        n = pred.shape[0]
        if Y.shape[0] != n:
            raise ValueError(f"X and y have inconsistent numbers of samples: {n} and {Y.shape[0]}")
        Y = Y.reshape(n, -1)
        pred = pred.reshape(Y.shape)
        obs = ~np.isnan(Y)
        if not obs.any():
            raise ValueError("y has no observed entry (all NaN): there is nothing to score")
        if sample_weight is None:
            w = np.ones(n)
        else:
            w = validate_vector(sample_weight, "sample_weight", n_samples=n)
        scores = []
        for j in range(Y.shape[1]):
            o = obs[:, j]
            if not o.any():
                continue
            y, f, ww = Y[o, j], pred[o, j], w[o]
            ybar = np.average(y, weights=ww)
            ss_tot = np.sum(ww * (y - ybar) ** 2)
            ss_res = np.sum(ww * (y - f) ** 2)
            scores.append(1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0))
        return float(np.mean(scores))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags
