"""LVMOGPRegressor: contracts, missing data, predictions and errors."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from mvlearn_ext.gaussian_process import LVMOGPRegressor


def low_rank_problem(seed=0, N=40, P=30, frac=0.2, noise=0.05):
    """Outputs that are smooth functions of a 1-D output location and of x."""
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(0, 1, N))[:, None]
    loc = np.linspace(0, 1, P)
    F = np.sin(2 * np.pi * X + 1.5 * loc) * (1 + 0.5 * loc)
    Y = F + noise * rng.standard_normal(F.shape)
    missing = rng.random(Y.shape) < frac
    Ytr = Y.copy()
    Ytr[missing] = np.nan
    return X, Ytr, Y, F, missing


FAST = dict(n_inducing=8, n_inducing_latent=5, max_iter=80, random_state=0)


@pytest.fixture(scope="module")
def fitted():
    X, Ytr, Y, F, missing = low_rank_problem()
    return LVMOGPRegressor(**FAST).fit(X, Ytr), (X, Ytr, Y, F, missing)


def test_fit_predict_shapes_and_attributes(fitted):
    model, (X, Ytr, *_) = fitted
    mean, std = model.predict(X, return_std=True)
    assert mean.shape == std.shape == Ytr.shape
    assert np.all(std > 0) and np.all(np.isfinite(mean))
    assert model.latent_outputs_.shape == (Ytr.shape[1], 2)
    assert model.latent_variances_.shape == (Ytr.shape[1], 2)
    assert np.all(model.latent_variances_ > 0)
    assert model.inducing_inputs_.shape == (model.n_inducing_, 1)
    assert model.n_outputs_ == Ytr.shape[1] and model.n_iter_ > 0
    assert np.isfinite(model.elbo_)


def test_predicts_missing_entries_better_than_output_means(fitted):
    model, (X, Ytr, Y, F, missing) = fitted
    mean, std = model.predict(X, return_std=True)
    rmse = np.sqrt(np.mean((mean - Y)[missing] ** 2))
    baseline = np.sqrt(np.mean((np.nanmean(Ytr, axis=0) - Y)[missing] ** 2))
    assert rmse < 0.3 * baseline
    # Calibration: most held-out entries within 3 predictive standard deviations.
    z = np.abs(mean - Y)[missing] / std[missing]
    assert np.mean(z < 3) > 0.9
    assert model.score(X, Y) > 0.9


def test_point_latents_and_pca_init():
    X, Ytr, Y, F, missing = low_rank_problem(seed=1)
    m = LVMOGPRegressor(latent_posterior="point", init="pca", **FAST).fit(X, Ytr)
    assert np.all(m.latent_variances_ == 0)
    mean = m.predict(X)
    baseline = np.sqrt(np.mean((np.nanmean(Ytr, axis=0) - Y)[missing] ** 2))
    assert np.sqrt(np.mean((mean - Y)[missing] ** 2)) < 0.3 * baseline


def test_one_dimensional_target_and_reproducibility():
    X, Ytr, *_ = low_rank_problem(P=1, frac=0.0)
    y = Ytr[:, 0]
    a = LVMOGPRegressor(**FAST).fit(X, y)
    b = clone(a).fit(X, y)
    mean, std = a.predict(X, return_std=True)
    assert mean.shape == std.shape == (X.shape[0],)
    np.testing.assert_array_equal(mean, b.predict(X))
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(mean, c.predict(X))


def test_fit_does_not_depend_on_the_thread_count():
    X, Ytr, *_ = low_rank_problem(P=150)  # several blocks of the compiled sums over outputs
    kw = dict(FAST, max_iter=30)
    one = LVMOGPRegressor(**kw, n_jobs=1).fit(X, Ytr)
    two = LVMOGPRegressor(**kw, n_jobs=2).fit(X, Ytr)
    np.testing.assert_array_equal(one.predict(X), two.predict(X))


def test_output_missing_on_half_the_inputs_borrows_from_its_neighbours():
    """An output unobserved for x > 0.5 is predicted there from the related
    outputs (the point of a multi-output GP); its own mean cannot do that."""
    X, Ytr, Y, F, _ = low_rank_problem(seed=2, frac=0.0)
    j = 10
    hidden = X[:, 0] > 0.5
    Ytr[hidden, j] = np.nan
    model = LVMOGPRegressor(**FAST).fit(X, Ytr)
    err = np.sqrt(np.mean((model.predict(X)[hidden, j] - F[hidden, j]) ** 2))
    assert err < 0.25 * F[:, j].std()


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda X, Y: (X, np.where(np.arange(Y.shape[1]) == 3, np.nan, Y)), "column 3"),
        (lambda X, Y: (X[:-1], Y), "inconsistent numbers of samples"),
        (lambda X, Y: (np.where(X > 0.5, np.nan, X), Y), "NaN"),
        (lambda X, Y: (np.where(X > 0.5, np.inf, X), Y), "infinity"),
        (lambda X, Y: (X, np.where(Y > 0.5, np.inf, Y)), "infinity"),
        (lambda X, Y: (X, Y[..., None]), "1-D or 2-D"),
    ],
)
def test_bad_input_errors(make, match):
    X, Ytr, *_ = low_rank_problem(N=10, P=5)
    Xb, Yb = make(X, Ytr)
    with pytest.raises(ValueError, match=match):
        LVMOGPRegressor(**FAST).fit(Xb, Yb)


@pytest.mark.parametrize(
    "make, exc, match",
    [
        (lambda X, Y: (X.astype(str), Y), TypeError, "X must be a numeric array"),
        (lambda X, Y: (X, Y.astype(str)), TypeError, "Y must be a numeric array"),
        (lambda X, Y: (X, Y + 1j), ValueError, "Y holds complex"),
    ],
)
def test_fit_refuses_strings_and_complex_values(make, exc, match):
    # strings of digits are refused, not parsed; complex targets are not truncated
    X, Ytr, *_ = low_rank_problem(N=10, P=5)
    Xb, Yb = make(X, Ytr)
    with pytest.raises(exc, match=match):
        LVMOGPRegressor(**FAST).fit(Xb, Yb)


def test_predict_errors(fitted):
    model, (X, *_) = fitted
    with pytest.raises(ValueError, match="features"):
        model.predict(np.hstack([X, X]))
    with pytest.raises(TypeError, match="X must be a numeric array"):
        model.predict(X.astype(str))
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        LVMOGPRegressor().predict(X)
    with pytest.raises(ValueError, match="latent_posterior"):
        LVMOGPRegressor(latent_posterior="delta").fit(X, X)


# check_regressors_train (R^2 > 0.5 on 10 standardised features) is the
# regression test of the lengthscale initialisation: per-feature spreads
# alone started the kernel near zero and the fit stayed at the mean.
@parametrize_with_checks(
    [LVMOGPRegressor(n_inducing=4, n_inducing_latent=2, max_iter=15, random_state=0)]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def smooth_field(seed=0, N=40, g=10, noise=0.1, n_features=200):
    """A GP draw (random Fourier features, lengthscales 0.2 in x and 0.5 in
    the output location) over x in [0, 1] and a g x g grid of output
    locations in [0, 1]^2, 20% of the entries missing."""
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(0, 1, N))[:, None]
    s = np.stack(np.meshgrid(np.linspace(0, 1, g), np.linspace(0, 1, g)), -1).reshape(-1, 2)
    u = X @ (rng.standard_normal((n_features, 1)) / 0.2).T + rng.uniform(0, 2 * np.pi, n_features)
    t = s @ (rng.standard_normal((n_features, 2)) / 0.5).T
    a = rng.standard_normal(n_features) * np.sqrt(2.0 / n_features)
    F = (np.cos(u) * a) @ np.cos(t).T - (np.sin(u) * a) @ np.sin(t).T
    Y = F + noise * rng.standard_normal(F.shape)
    missing = rng.random(Y.shape) < 0.2
    return X, np.where(missing, np.nan, Y), Y, F, missing


def test_smooth_field_reaches_the_noise_floor():
    """The profiled bound reaches the noise floor on a smooth field.

    The field has output-space rank about 8, which the 10 x 8 inducing grid
    can represent, so the held-out error must approach the noise (sd 0.1);
    optimising the q(U) mean jointly with the hyper-parameters stalls well
    above it."""
    X, Ytr, Y, F, missing = smooth_field(N=60, g=10)
    model = LVMOGPRegressor(
        n_inducing=10, n_inducing_latent=8, max_iter=200, random_state=0, n_jobs=1
    ).fit(X, Ytr)
    mean = model.predict(X)
    noise_floor = np.sqrt(np.mean((F - Y)[missing] ** 2))
    rmse = np.sqrt(np.mean((mean - Y)[missing] ** 2))
    assert rmse < 1.2 * noise_floor
    # and the fitted noise is the simulated one, not inflated by underfitting
    assert 0.7 < np.sqrt(model.noise_variance_) * model.y_std_[0] / 0.1 < 1.3


@pytest.mark.parametrize("c", [2.0**-997, 2.0**-500, 2.0**500])
def test_predictions_do_not_depend_on_the_units_of_x(c):
    """Inputs in other units (a power of two apart: exact) give the same fit."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(25, 2))
    Y = np.sin(X[:, :1] + np.arange(3)[None, :]) + 0.05 * rng.normal(size=(25, 3))
    kw = dict(n_inducing=6, n_inducing_latent=3, max_iter=30, random_state=0, n_jobs=1)
    ref = LVMOGPRegressor(**kw).fit(X, Y)
    scaled = LVMOGPRegressor(**kw).fit(c * X, Y)
    np.testing.assert_array_equal(scaled.predict(c * X), ref.predict(X))
    np.testing.assert_array_equal(scaled.lengthscales_, c * ref.lengthscales_)
    np.testing.assert_array_equal(scaled.inducing_inputs_, c * ref.inducing_inputs_)


@pytest.mark.parametrize("c", [1e-150, 1e-16, 1e16, 1e150])
def test_predictions_do_not_depend_on_any_units_of_x(c):
    """Inputs in any units: the same path of the optimiser, to rounding.

    A few iterations, so that the fits compared are not both at the optimum.
    """
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(25, 2)) * [1.0, 30.0]
    Y = np.sin(X[:, :1] + np.arange(3)[None, :]) + 0.05 * rng.normal(size=(25, 3))
    kw = dict(n_inducing=6, n_inducing_latent=3, max_iter=5, random_state=0, n_jobs=1)
    ref = LVMOGPRegressor(**kw).fit(X, Y)
    scaled = LVMOGPRegressor(**kw).fit(c * X, Y)
    np.testing.assert_allclose(scaled.predict(c * X), ref.predict(X), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(scaled.lengthscales_, c * ref.lengthscales_, rtol=1e-6)


def test_tiny_inputs_still_predict_from_x():
    rng = np.random.default_rng(1)
    X = rng.uniform(-2, 2, size=(25, 1))
    Y = np.sin(X + np.arange(3)[None, :]) + 0.05 * rng.normal(size=(25, 3))
    kw = dict(n_inducing=6, n_inducing_latent=3, max_iter=50, random_state=0, n_jobs=1)
    model = LVMOGPRegressor(**kw).fit(X * 1e-300, Y)
    assert model.score(X * 1e-300, Y) > 0.9


def test_a_huge_latent_dimension_is_refused_before_allocation():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(20, 1)), rng.normal(size=(20, 3))
    with pytest.raises(ValueError, match="n_latent=1000000000000 needs an array of"):
        LVMOGPRegressor(n_latent=10**12).fit(X, Y)


def sine_outputs(P=8, seed=0):
    """P phase-shifted sines over 30 inputs in [0, 1] with noise 0.05."""
    rng = np.random.default_rng(seed)
    X = np.linspace(0, 1, 30)[:, None]
    return X, np.sin(6 * X + rng.uniform(0, 1, P)) + 0.05 * rng.standard_normal((30, P))


def _only_row_0(value):
    Y = np.full((30, 8), np.nan)
    Y[0] = value
    return Y


@pytest.mark.parametrize(
    "Y, kwargs, value",
    [
        (np.ones((30, 8)), {}, 1.0),
        (np.full((30, 8), 0.1), {}, 0.1),  # the mean of 240 entries 0.1 is not 0.1
        (np.full(30, -3.5), {}, -3.5),
        (_only_row_0(2.0), {}, 2.0),  # one observed entry per output
        (np.zeros((30, 8)), {"normalize_y": False}, 0.0),
    ],
    ids=["ones", "tenths", "1-D", "row-0-only", "zeros-not-normalised"],
)
def test_constant_targets_are_predicted_exactly(Y, kwargs, value):
    """Targets with a single observed value: no optimum to climb to, so the
    fit is the limit (that value, standard deviation 0), without an error."""
    X = np.linspace(0, 1, 30)[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = LVMOGPRegressor(n_inducing=6, max_iter=100, random_state=0, **kwargs).fit(X, Y)
    X_new = np.linspace(-1, 2, 7)[:, None]
    mean, std = model.predict(X_new, return_std=True)
    assert mean.shape == (7,) + Y.shape[1:]
    np.testing.assert_array_equal(mean, value)
    np.testing.assert_array_equal(std, 0.0)
    assert model.n_iter_ == 0 and np.all(model.y_std_ == 0)
    assert np.isfinite(model.elbo_)
    assert model.score(X, np.full(Y.shape, value)) == 1.0


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_constant_output_among_varying_ones_is_fitted():
    X, Ytr, Y, F, missing = low_rank_problem()
    Ytr[:, 4] = 2.0
    model = LVMOGPRegressor(**FAST).fit(X, Ytr)
    assert model.n_iter_ > 0 and model.y_std_[0] > 0
    np.testing.assert_allclose(model.predict(X)[:, 4], 2.0, atol=0.1)


def test_score_names_y_and_its_shape():
    X, Y = sine_outputs()
    model = LVMOGPRegressor(n_inducing=6, max_iter=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, Y)
        one = clone(model).fit(X, Y[:, 0])
    with pytest.raises(ValueError, match=r"y has 1 output\(s\) .* was fitted with 8"):
        model.score(X, Y[:, 0])
    with pytest.raises(ValueError, match=r"y has 3 output\(s\) .* was fitted with 8"):
        model.score(X, Y[:, :3])
    with pytest.raises(ValueError, match="inconsistent numbers of samples: 30 and 29"):
        model.score(X, Y[:-1])
    with pytest.raises(ValueError, match="y must be 1-D or 2-D"):
        model.score(X, Y[..., None])
    with pytest.raises(ValueError, match="y contains infinity"):
        model.score(X, np.where(Y > 0.5, np.inf, Y))
    with pytest.raises(ValueError, match="y has no observed entry"):
        model.score(X, np.full_like(Y, np.nan))
    with pytest.raises(TypeError, match="y must be a numeric array"):
        model.score(X, Y.astype(str))
    with pytest.raises(ValueError, match="sample_weight has 29 entries"):
        model.score(X, Y, sample_weight=np.ones(29))
    # a model of one output scores a 1-D y or a single column alike
    assert one.score(X, Y[:, 0]) == one.score(X, Y[:, :1])
    with pytest.raises(ValueError, match=r"y has 8 output\(s\) .* was fitted with 1"):
        one.score(X, Y)


def test_convergence_warning_at_max_iter():
    X, Y = sine_outputs()
    with pytest.warns(ConvergenceWarning, match="max_iter=1 iterations") as record:
        LVMOGPRegressor(n_inducing=6, max_iter=1, random_state=0).fit(X, Y)
    caught = [w for w in record if issubclass(w.category, ConvergenceWarning)]
    assert len(caught) == 1  # once per fit
    assert caught[0].filename == __file__  # it names the user's line


def test_no_convergence_warning_when_the_default_budget_converges():
    X, Y = sine_outputs()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = LVMOGPRegressor(n_inducing=6, random_state=0).fit(X, Y)
    assert 0 < model.n_iter_ < model.max_iter


@pytest.mark.parametrize(
    "P, n_latent, init",
    [
        (8, 2, "spectral"),
        (8, 30, "spectral"),
        (8, 50, "pca"),
        (50, 10, "pca"),
        (50, 30, "spectral"),
    ],
)
def test_many_latent_dimensions_fit_as_well_as_few(P, n_latent, init):
    """More latent dimensions than the outputs need (even than outputs) are
    redundant, not harmful: the fit still finds the shared structure."""
    X, Y = sine_outputs(P)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = LVMOGPRegressor(n_latent=n_latent, init=init, random_state=0).fit(X, Y)
    assert model.latent_outputs_.shape == (P, n_latent)
    assert model.score(X, Y) > 0.99
