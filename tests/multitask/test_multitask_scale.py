"""Units of the data, extreme penalties and size hyperparameters of the multi-task regressors."""

import numpy as np
import pytest
from sklearn.base import clone

from mvlearn_ext.datasets import make_contaminated_tasks
from mvlearn_ext.multitask import (
    ARMULRegressor,
    ARMULRegressorCV,
    ClusteredARMULRegressor,
    ClusteredARMULRegressorCV,
    IndependentTaskRegressor,
    IndependentTaskRegressorCV,
    LowRankARMULRegressor,
    LowRankARMULRegressorCV,
    MeanRegularizedRegressor,
    MeanRegularizedRegressorCV,
    PooledRegressor,
    RobustMultiTaskRegressor,
    RobustMultiTaskRegressorCV,
    WithinTaskKFold,
)

#: Every estimator, with how its penalty changes when X is multiplied by c:
#: not at all for the covariance-weighted penalty of the robust estimator
#: and for a penalty on the standardised features (``scaling="global"`` or
#: ``"zscore"``);
#: with ``scaling=None`` a norm penalty on the coefficients by c, a ridge by
#: c^2.
CASES = [
    (RobustMultiTaskRegressor(reg_lambda=0.5), None),
    (RobustMultiTaskRegressorCV(cv=2, reg_lambdas=[0.0, 0.5, np.inf], random_state=0), None),
]
for scaling, norm, ridge in (
    ("global", None, None),
    ("zscore", None, None),
    (None, "norm", "ridge"),
):
    CASES += [
        (ARMULRegressor(reg_lambda=0.05, scaling=scaling), norm),
        (
            ARMULRegressorCV(cv=2, reg_lambdas=[0.0, 0.05, 1.0], random_state=0, scaling=scaling),
            norm,
        ),
        (
            ClusteredARMULRegressor(2, reg_lambda=0.05, n_init=2, random_state=0, scaling=scaling),
            norm,
        ),
        (
            ClusteredARMULRegressorCV(
                cv=2,
                reg_lambdas=[0.05, 1.0],
                n_clusters=2,
                n_init=2,
                random_state=0,
                scaling=scaling,
            ),
            norm,
        ),
        (LowRankARMULRegressor(rank=2, reg_lambda=0.05, scaling=scaling), norm),
        (
            LowRankARMULRegressorCV(
                cv=2, reg_lambdas=[0.05, 1.0], rank=2, random_state=0, scaling=scaling
            ),
            norm,
        ),
        (MeanRegularizedRegressor(reg_lambda=0.3, scaling=scaling), ridge),
        (
            MeanRegularizedRegressorCV(
                cv=2, reg_lambdas=[0.0, 0.3, np.inf], random_state=0, scaling=scaling
            ),
            ridge,
        ),
    ]
CASES += [
    (IndependentTaskRegressor(reg_lambda=0.1), "ridge"),
    (IndependentTaskRegressorCV(cv=2, reg_lambdas=[0.0, 0.1], random_state=0), "ridge"),
    (PooledRegressor(reg_lambda=0.1), "ridge"),
]
IDS = [
    type(est).__name__ + ("-unscaled" if est.get_params().get("scaling", 0) is None else "")
    for est, _ in CASES
]


@pytest.fixture(scope="module")
def data():
    return make_contaminated_tasks(
        n_tasks=6, n_samples=30, n_features=3, epsilon=0.2, alpha=0.5, random_state=0
    )


def _rescaled(estimator, kind, c):
    """The estimator with its penalty in the units of the coefficients of c X."""
    factor = {None: 1.0, "norm": c, "ridge": c * c}[kind]
    est = clone(estimator)
    for name in ("reg_lambda", "reg_lambdas"):
        if name in est.get_params() and est.get_params()[name] is not None:
            est.set_params(**{name: np.asarray(est.get_params()[name], dtype=float) * factor})
    if "reg_lambda" in est.get_params():
        est.set_params(reg_lambda=float(est.reg_lambda))
    return est


# (a ridge rescaled by c^2 underflows below c = 1e-150)
UNITS = [
    pytest.param(est, kind, c, id=f"{name}-{c:g}")
    for (est, kind), name in zip(CASES, IDS, strict=True)
    for c in [2.0**-997, 1e-150, 1e-20, 1e20, 1e150]
    if not (kind == "ridge" and c < 1e-150)
]


@pytest.mark.parametrize(("estimator", "kind", "c"), UNITS)
def test_predictions_do_not_depend_on_the_units_of_x(estimator, kind, c, data):
    """X -> c X with the penalty in the new units gives the same predictions."""
    X, y, tasks = data.X, data.y, data.tasks
    ref = clone(estimator).fit(X, y, tasks=tasks).predict(X, tasks=tasks)
    model = _rescaled(estimator, kind, c).fit(c * X, y, tasks=tasks)
    # closed forms agree to rounding; the L-BFGS solvers (ARMUL variants) to
    # their stopping tolerance, reached from differently rounded starts
    rtol = 1e-5 if "max_iter" in estimator.get_params() else 1e-9
    np.testing.assert_allclose(model.predict(c * X, tasks=tasks), ref, rtol=rtol, atol=rtol)
    assert np.all(np.isfinite(model.coef_))


@pytest.mark.parametrize(("estimator", "kind"), CASES, ids=IDS)
def test_tiny_x_with_default_penalties_still_predicts_from_x(estimator, kind, data):
    """At X ~ 1e-300 the default fit is the problem's limit there, not a constant.

    (A norm penalty fuses every task, a ridge of fixed strength zeroes the
    coefficients; with the defaults, a fused or unpenalised fit remains.)
    """
    X, y, tasks = data.X * 1e-300, data.y, data.tasks
    default = type(estimator)()
    if "random_state" in default.get_params():
        default.set_params(random_state=0)
    pred = default.fit(X, y, tasks=tasks).predict(X, tasks=tasks)
    assert np.all(np.isfinite(pred))
    # every task's predictions vary with its rows (the targets do)
    for j in range(6):
        assert np.ptp(pred[tasks == j]) > 0.1 * np.ptp(y[tasks == j])


def test_robust_fitted_attributes_in_the_units_of_x(data):
    X, y, tasks = data.X, data.y, data.tasks
    ref = RobustMultiTaskRegressor(reg_lambda=0.5).fit(X, y, tasks=tasks)
    c = 1e-200
    tiny = RobustMultiTaskRegressor(reg_lambda=0.5).fit(c * X, y, tasks=tasks)
    np.testing.assert_allclose(tiny.coef_ * c, ref.coef_, rtol=1e-9)
    np.testing.assert_allclose(tiny.center_ * c, ref.center_, rtol=1e-9)
    assert tiny.fusion_threshold_ == pytest.approx(ref.fusion_threshold_, rel=1e-9)
    assert tiny.balancedness_ == pytest.approx(ref.balancedness_, rel=1e-9)
    # a penalty on the standardised features is in no unit of X ...
    armul = ARMULRegressor(reg_lambda=0.05).fit(X, y, tasks=tasks)
    tiny = ARMULRegressor(reg_lambda=0.05).fit(c * X, y, tasks=tasks)
    assert tiny.fusion_threshold_ == pytest.approx(armul.fusion_threshold_, rel=1e-6)
    np.testing.assert_allclose(tiny.center_ * c, armul.center_, rtol=1e-6)
    # ... one on the coefficients of X is in the inverse unit of X
    armul = ARMULRegressor(reg_lambda=0.05, scaling=None).fit(X, y, tasks=tasks)
    tiny = ARMULRegressor(reg_lambda=0.05 * c, scaling=None).fit(c * X, y, tasks=tasks)
    assert tiny.fusion_threshold_ == pytest.approx(armul.fusion_threshold_ * c, rel=1e-6)
    np.testing.assert_allclose(tiny.center_ * c, armul.center_, rtol=1e-6)


@pytest.mark.parametrize("reg_lambda", [1e308, np.inf])
def test_pooled_ridge_at_extreme_penalties_is_the_zero_limit(reg_lambda, data):
    model = PooledRegressor(reg_lambda=reg_lambda).fit(data.X, data.y, tasks=data.tasks)
    assert np.all(np.isfinite(model.coef_)) and np.all(np.isfinite(model.intercept_))
    np.testing.assert_allclose(model.coef_, 0.0, atol=1e-300)
    # the intercepts are then the per-task means
    for j, label in enumerate(model.tasks_):
        assert model.intercept_[j] == pytest.approx(data.y[data.tasks == label].mean())


@pytest.mark.parametrize("cls", [IndependentTaskRegressor, MeanRegularizedRegressor])
def test_other_ridges_at_extreme_penalties_are_finite(cls, data):
    for reg_lambda in (1e308, np.inf):
        model = cls(reg_lambda=reg_lambda).fit(data.X, data.y, tasks=data.tasks)
        assert np.all(np.isfinite(model.predict(data.X, tasks=data.tasks)))


@pytest.mark.parametrize("X_value", [0.0, 3.0, 1e-300])
def test_balancedness_is_finite_on_constant_features(X_value):
    rng = np.random.default_rng(0)
    X = np.full((40, 3), X_value)
    y = rng.normal(size=40)
    tasks = np.repeat([0, 1, 2, 3], 10)
    model = RobustMultiTaskRegressor().fit(X, y, tasks=tasks)
    assert model.balancedness_ == 1.0
    assert np.all(np.isfinite(model.coef_))


def test_clustered_armul_refuses_more_clusters_than_tasks():
    data = make_contaminated_tasks(n_tasks=2, n_samples=20, n_features=3, random_state=0)
    with pytest.raises(ValueError, match=r"n_clusters=31 exceeds the number of tasks \(2\)"):
        ClusteredARMULRegressor(n_clusters=31).fit(data.X, data.y, tasks=data.tasks)
    with pytest.raises(ValueError, match="n_clusters=3 exceeds"):
        ClusteredARMULRegressorCV(n_clusters=3, cv=2).fit(data.X, data.y, tasks=data.tasks)
    model = ClusteredARMULRegressor(n_clusters=2, random_state=0)
    assert model.fit(data.X, data.y, tasks=data.tasks).prototypes_.shape == (2, 3)


@pytest.mark.parametrize(
    "cls", [RobustMultiTaskRegressorCV, ARMULRegressorCV, IndependentTaskRegressorCV]
)
def test_a_huge_number_of_folds_is_refused_before_allocation(cls, data):
    with pytest.raises(ValueError, match=r"cv=1000000000000 folds exceeds the number of rows"):
        cls(cv=10**12).fit(data.X, data.y, tasks=data.tasks)
    with pytest.raises(ValueError, match="n_splits=1000000000000 exceeds the number of rows"):
        next(WithinTaskKFold(10**12).split(data.X, groups=data.tasks))


@pytest.mark.parametrize(
    "cls", [RobustMultiTaskRegressorCV, MeanRegularizedRegressorCV, IndependentTaskRegressorCV]
)
def test_cv_takes_a_number_a_splitter_or_splits_alike(cls, data):
    X, y, tasks = data.X, data.y, data.tasks
    by_number = cls(cv=3, random_state=2).fit(X, y, tasks=tasks)
    splitter = WithinTaskKFold(3, random_state=2)
    by_splitter = cls(cv=splitter).fit(X, y, tasks=tasks)
    by_splits = cls(cv=list(splitter.split(X, y, tasks))).fit(X, y, tasks=tasks)
    for other in (by_splitter, by_splits):
        np.testing.assert_array_equal(
            other.cv_results_["mean_test_mse"], by_number.cv_results_["mean_test_mse"]
        )
        np.testing.assert_array_equal(other.coef_, by_number.coef_)


def test_cv_splits_that_starve_a_task_or_are_malformed_are_refused(data):
    X, y, tasks = data.X, data.y, data.tasks
    only_task_0 = np.flatnonzero(tasks == 0)
    with pytest.raises(ValueError, match="at least 2 training rows"):
        ARMULRegressorCV(cv=[(only_task_0, np.arange(3))]).fit(X, y, tasks=tasks)
    with pytest.raises(ValueError, match=r"row indices must be in \[0, 180\)"):
        ARMULRegressorCV(cv=[(np.arange(500), np.arange(3))]).fit(X, y, tasks=tasks)
    with pytest.raises(ValueError, match="cv must yield"):
        ARMULRegressorCV(cv=[np.arange(3)]).fit(X, y, tasks=tasks)
