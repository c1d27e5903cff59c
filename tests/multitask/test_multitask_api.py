"""API contracts of the multi-task regressors: errors, dtypes, weights, routing, checks."""

import re

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

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
    robust_multitask_regression,
    stack_tasks,
)

ESTIMATORS = [
    RobustMultiTaskRegressor(),
    RobustMultiTaskRegressorCV(cv=2, reg_lambdas=[0.0, 1.0, np.inf]),
    ARMULRegressor(),
    ARMULRegressorCV(cv=2, reg_lambdas=[0.1, 1.0]),
    ClusteredARMULRegressor(n_clusters=2, n_init=2, random_state=0),
    ClusteredARMULRegressorCV(
        cv=2, reg_lambdas=[0.1, 1.0], n_clusters=2, n_init=2, random_state=0
    ),
    LowRankARMULRegressor(rank=2),
    LowRankARMULRegressorCV(cv=2, reg_lambdas=[0.1, 1.0], rank=2),
    IndependentTaskRegressor(),
    IndependentTaskRegressorCV(cv=2, reg_lambdas=[0.0, 0.1]),
    PooledRegressor(),
    MeanRegularizedRegressor(),
    MeanRegularizedRegressorCV(cv=2, reg_lambdas=[0.1, 1.0]),
]

# scikit-learn's checks fit one task (tasks=None), where a single prototype is all
# ClusteredARMULRegressor can fit.
CHECKED = [
    clone(est).set_params(n_clusters=1) if "n_clusters" in est.get_params() else est
    for est in ESTIMATORS
]


_TWO_PROTOTYPES = (
    "the check sets n_clusters=2 and fits one task (tasks=None): two prototypes need at "
    "least two tasks, and the estimator refuses n_clusters > n_tasks with a ValueError"
)


def _expected_failed(estimator):
    if "n_clusters" in estimator.get_params():
        return {"check_methods_sample_order_invariance": _TWO_PROTOTYPES}
    return {}


@parametrize_with_checks(CHECKED, expected_failed_checks=_expected_failed, xfail_strict=True)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def data():
    return make_contaminated_tasks(
        n_tasks=8, n_samples=30, n_features=4, epsilon=0.25, alpha=0.5, random_state=0
    )


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_bad_input_errors(estimator, data):
    X, y, tasks = data.X, data.y, data.tasks
    model = clone(estimator).fit(X, y, tasks=tasks)
    with pytest.raises(ValueError, match="not seen in fit"):
        model.predict(X[:3], tasks=[0, 1, 99])
    with pytest.raises(ValueError, match="tasks is required"):
        model.predict(X[:3])
    with pytest.raises(ValueError, match="tasks has 5 entries but X has 240 rows"):
        clone(estimator).fit(X, y, tasks=tasks[:5])
    with pytest.raises(ValueError, match="tasks has 2 entries but X has 3 rows"):
        model.predict(X[:3], tasks=[0, 1])
    one_row = tasks.copy()
    one_row[0] = 42
    with pytest.raises(ValueError, match="task 42 has 1"):
        clone(estimator).fit(X, y, tasks=one_row)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clone(estimator).fit(Xn, y, tasks=tasks)
    with pytest.raises(ValueError, match="NaN"):
        model.predict(Xn, tasks=tasks)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        clone(estimator).fit(X, y[:-1], tasks=tasks)
    with pytest.raises(ValueError, match="NaN"):
        clone(estimator).fit(X, y, tasks=np.where(tasks == 0, np.nan, tasks))


def test_string_task_labels_and_list_form(data):
    labels = np.array([f"task-{j:02d}" for j in range(8)])
    model = RobustMultiTaskRegressor(reg_lambda=0.5).fit(data.X, data.y, tasks=labels[data.tasks])
    listed = RobustMultiTaskRegressor(reg_lambda=0.5).fit_tasks(data.Xs, data.ys)
    np.testing.assert_allclose(model.coef_, listed.coef_, atol=1e-12)
    preds = listed.predict_tasks(data.Xs)
    np.testing.assert_allclose(
        np.concatenate(preds), model.predict(data.X, tasks=labels[data.tasks]), atol=1e-12
    )
    assert list(model.tasks_) == list(labels)


@pytest.mark.parametrize("cls", [RobustMultiTaskRegressor, ARMULRegressor, PooledRegressor])
def test_float32_input_keeps_dtype_and_matches_float64(cls, data):
    m64 = cls().fit(data.X, data.y, tasks=data.tasks)
    m32 = cls().fit(data.X.astype(np.float32), data.y, tasks=data.tasks)
    assert m32.coef_.dtype == np.float32
    pred = m32.predict(data.X.astype(np.float32), tasks=data.tasks)
    assert pred.dtype == np.float32
    np.testing.assert_allclose(pred, m64.predict(data.X, tasks=data.tasks), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    "cls", [RobustMultiTaskRegressor, ARMULRegressor, MeanRegularizedRegressor]
)
def test_integer_sample_weights_equal_repeated_rows(cls, data):
    rng = np.random.default_rng(0)
    sw = rng.integers(0, 3, size=data.X.shape[0])
    sw[np.searchsorted(data.tasks, np.arange(8))] = 1  # every task keeps rows
    sw[np.searchsorted(data.tasks, np.arange(8)) + 1] = 2
    rep = np.repeat(np.arange(data.X.shape[0]), sw)
    weighted = cls(tol=1e-13) if "tol" in cls().get_params() else cls()
    weighted.fit(data.X, data.y, tasks=data.tasks, sample_weight=sw)
    repeated = clone(weighted).fit(data.X[rep], data.y[rep], tasks=data.tasks[rep])
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-7)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, atol=1e-7)


def test_per_task_intercepts_absorb_per_task_shifts(data):
    shift = np.linspace(-5, 5, 8)
    base = RobustMultiTaskRegressor(reg_lambda=0.5).fit(data.X, data.y, tasks=data.tasks)
    moved = RobustMultiTaskRegressor(reg_lambda=0.5).fit(
        data.X, data.y + shift[data.tasks], tasks=data.tasks
    )
    np.testing.assert_allclose(moved.coef_, base.coef_, atol=1e-10)
    np.testing.assert_allclose(moved.intercept_ - base.intercept_, shift, atol=1e-10)


def test_fewer_rows_than_features_is_exact_without_regularisation():
    data = make_contaminated_tasks(n_tasks=12, n_samples=6, n_features=10, random_state=1)
    model = RobustMultiTaskRegressor(reg_lambda=0.3, fit_intercept=False)
    model.fit(data.X, data.y, tasks=data.tasks)
    assert np.all(np.isfinite(model.coef_))
    itl = IndependentTaskRegressor(fit_intercept=False).fit(data.X, data.y, tasks=data.tasks)
    moved = model.predict(data.X, tasks=data.tasks) - itl.predict(data.X, tasks=data.tasks)
    rms = np.sqrt(np.bincount(data.tasks, moved**2) / 6)
    assert np.all(rms <= 0.3 * np.sqrt(10 / 6) * (1 + 1e-9))


def test_cv_selects_from_the_grid_and_is_reproducible(data):
    # ridges=(0,): the paper's estimator (the default's ridge grid: test_multitask_ridge)
    cv = RobustMultiTaskRegressorCV(reg_lambdas=[0.0, 0.3, 3.0], random_state=0, ridges=(0.0,))
    cv.fit(data.X, data.y, tasks=data.tasks)
    best = int(np.argmin(cv.cv_results_["mean_test_mse"]))
    assert cv.reg_lambda_ == [0.0, 0.3, 3.0][best]
    again = RobustMultiTaskRegressorCV(reg_lambdas=[0.0, 0.3, 3.0], random_state=0, ridges=(0.0,))
    np.testing.assert_array_equal(again.fit(data.X, data.y, tasks=data.tasks).coef_, cv.coef_)
    fixed = RobustMultiTaskRegressor(reg_lambda=cv.reg_lambda_).fit(
        data.X, data.y, tasks=data.tasks
    )
    np.testing.assert_allclose(fixed.coef_, cv.coef_, atol=1e-12)
    # the CV score of a grid value is the mean over folds of the per-task validation MSE
    folds = list(WithinTaskKFold(5, random_state=0).split(data.X, data.y, data.tasks))
    scores = []
    for train, test in folds:
        m = RobustMultiTaskRegressor(reg_lambda=0.3).fit(
            data.X[train], data.y[train], tasks=data.tasks[train]
        )
        err = (m.predict(data.X[test], tasks=data.tasks[test]) - data.y[test]) ** 2
        scores.append(np.mean(np.bincount(data.tasks[test], err) / np.bincount(data.tasks[test])))
    np.testing.assert_allclose(cv.cv_results_["mean_test_mse"][1], np.mean(scores), rtol=1e-10)


def test_cv_refuses_folds_that_starve_a_task():
    data = make_contaminated_tasks(n_tasks=3, n_samples=3, n_features=2, random_state=0)
    RobustMultiTaskRegressorCV(cv=5).fit(data.X, data.y, tasks=data.tasks)  # 2 rows left: fine
    data = make_contaminated_tasks(n_tasks=3, n_samples=2, n_features=2, random_state=0)
    with pytest.raises(ValueError, match="at least 2 training rows"):
        RobustMultiTaskRegressorCV(cv=5).fit(data.X, data.y, tasks=data.tasks)


def test_independent_ridge_cv_chooses_per_task(data):
    cv = IndependentTaskRegressorCV(random_state=0).fit(data.X, data.y, tasks=data.tasks)
    assert cv.reg_lambda_.shape == (8,)
    ref = IndependentTaskRegressor(reg_lambda=float(cv.reg_lambda_[0])).fit(
        data.X, data.y, tasks=data.tasks
    )
    np.testing.assert_allclose(cv.coef_[0], ref.coef_[0], atol=1e-12)


def test_metadata_routing_through_pipeline_and_grid_search(data):
    X, y, tasks = data.X, data.y, data.tasks
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_pipeline(StandardScaler(), RobustMultiTaskRegressor(reg_lambda=0.5))
        pipe.fit(X, y, tasks=tasks)
        direct = RobustMultiTaskRegressor(reg_lambda=0.5).fit(
            StandardScaler().fit_transform(X), y, tasks=tasks
        )
        np.testing.assert_allclose(pipe[-1].coef_, direct.coef_, atol=1e-12)
        np.testing.assert_allclose(
            pipe.predict(X, tasks=tasks), direct.predict(pipe[0].transform(X), tasks=tasks)
        )
        splits = list(WithinTaskKFold(3, random_state=0).split(X, y, tasks))
        search = GridSearchCV(
            pipe, {"robustmultitaskregressor__reg_lambda": [0.0, 0.5, 5.0]}, cv=splits
        )
        search.fit(X, y, tasks=tasks)
        # the search's fold scores are the estimator's R^2 with tasks routed to score
        train, test = splits[0]
        ref = clone(pipe).set_params(
            robustmultitaskregressor__reg_lambda=search.best_params_[
                "robustmultitaskregressor__reg_lambda"
            ]
        )
        ref.fit(X[train], y[train], tasks=tasks[train])
        np.testing.assert_allclose(
            search.cv_results_["split0_test_score"][search.best_index_],
            ref.score(X[test], y[test], tasks=tasks[test]),
        )
        # GridSearchCV.predict takes no metadata: predict with the refitted best estimator
        assert search.best_estimator_.predict(X[:4], tasks=tasks[:4]).shape == (4,)
        # The splitter itself: with routing, the search hands it its groups.
        routed = GridSearchCV(
            pipe,
            {"robustmultitaskregressor__reg_lambda": [0.0, 0.5, 5.0]},
            cv=WithinTaskKFold(3, random_state=0),
        )
        routed.fit(X, y, tasks=tasks, groups=tasks)
        np.testing.assert_array_equal(
            routed.cv_results_["mean_test_score"], search.cv_results_["mean_test_score"]
        )


def test_within_task_kfold_deals_every_task_to_every_fold(data):
    for train, test in WithinTaskKFold(5, random_state=1).split(data.X, groups=data.tasks):
        assert set(data.tasks[train]) == set(range(8))
        assert set(data.tasks[test]) == set(range(8))
    with pytest.raises(ValueError, match="groups"):
        next(WithinTaskKFold(3).split(data.X))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_within_task_kfold_refuses_nan_and_infinite_groups_when_called(bad):
    groups = np.array([0.0, 0.0, 1.0, 1.0, bad, 2.0])
    with pytest.raises(ValueError, match="groups contains NaN or infinity"):
        WithinTaskKFold(2).split(None, groups=groups)  # refused before the first fold
    folds = list(WithinTaskKFold(2, random_state=0).split(None, groups=list("aabbcc")))
    assert len(folds) == 2


def test_outlier_scores_single_out_outliers():
    data = make_contaminated_tasks(
        n_tasks=20,
        n_samples=100,
        n_features=5,
        epsilon=0.2,
        alpha=0.0,
        delta=0.1,
        random_state=3,
    )
    model = RobustMultiTaskRegressor(reg_lambda=2.0, fit_intercept=False)
    model.fit(data.X, data.y, tasks=data.tasks)
    assert model.fused_[~data.outliers].all()
    assert not model.fused_[data.outliers].any()
    assert model.outlier_scores_[data.outliers].min() > model.outlier_scores_[~data.outliers].max()
    assert model.balancedness_ >= 1.0 - 1e-12


def test_demo_section_runs():
    from mvlearn_ext._demo.multitask import run
    from mvlearn_ext._demo.registry import DemoContext

    rows = run(DemoContext(seeds=(0, 1)))
    names = [r.method for r in rows]
    assert any("Robust" in n for n in names) and any("ARMUL" in n for n in names)
    for row in rows:
        assert len(row.scores["MSE"]) == 2 and len(row.fit_times) == 2
        assert all(np.isfinite(row.scores["MSE"]))


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_n_jobs_is_validated_and_does_not_change_the_fit(estimator, data):
    X, y, tasks = data.X, data.y, data.tasks
    with pytest.raises(ValueError, match="n_jobs"):
        clone(estimator).set_params(n_jobs=0).fit(X, y, tasks=tasks)
    if "random_state" in estimator.get_params():
        estimator = clone(estimator).set_params(random_state=0)
    one = clone(estimator).fit(X, y, tasks=tasks)
    every = clone(estimator).set_params(n_jobs=-1).fit(X, y, tasks=tasks)
    np.testing.assert_array_equal(every.coef_, one.coef_)


def test_strings_of_digits_are_refused_not_parsed(data):
    X, y, tasks = data.X, data.y, data.tasks
    with pytest.raises(TypeError, match="X must be a numeric array"):
        robust_multitask_regression(X.astype(str), y, tasks)
    with pytest.raises(TypeError, match="y must be a numeric array"):
        robust_multitask_regression(X, y.astype(str), tasks)
    model = RobustMultiTaskRegressor().fit(X, y, tasks=tasks)
    with pytest.raises(TypeError, match="X must be a numeric array"):
        model.predict(X.astype(str).tolist(), tasks=tasks)
    # strings are task labels, not data
    robust_multitask_regression(X, y, tasks.astype(str))


def test_stack_tasks_names_the_task_at_fault_and_keeps_dtypes():
    Xs = [np.ones((2, 3), dtype=np.float32), np.zeros((1, 3), dtype=np.float32)]
    X, y, tasks, _ = stack_tasks(Xs, [[1, 2], [3]])
    assert (X.dtype, y.dtype, tasks.tolist()) == (np.float32, np.int64, [0, 0, 1])
    with pytest.raises(ValueError, match=r"Xs\[1\] contains NaN"):
        stack_tasks([Xs[0], np.full((1, 3), np.nan)], [[1, 2], [3]])
    with pytest.raises(ValueError, match=r"ys\[0\] contains infinity"):
        stack_tasks(Xs, [[1, np.inf], [3]])
    with pytest.raises(ValueError, match=r"Xs\[0\] must be 2-D"):
        stack_tasks([np.ones(2), Xs[1]], [[1, 2], [3]])
    with pytest.raises(TypeError, match=r"sample_weights\[1\] must be a numeric array"):
        stack_tasks(Xs, [[1, 2], [3]], [[1.0, 1.0], ["1"]])


def _tasks_required_message(model, X):
    with pytest.raises(ValueError, match="tasks is required") as info:
        model.predict(X)
    return str(info.value)


@pytest.mark.parametrize(
    "estimator",
    [RobustMultiTaskRegressor(reg_lambda=0.5), ARMULRegressorCV(cv=2, reg_lambdas=[0.1, 1.0])],
    ids=lambda e: type(e).__name__,
)
def test_the_advice_of_tasks_is_required_runs_as_written(estimator, data):
    """Every call the message recommends is in it verbatim and runs; cross_val_predict,
    which routes tasks to fit only, is named as unusable."""
    from sklearn.model_selection import cross_val_predict, cross_val_score, cross_validate

    X, y, tasks = data.X, data.y, data.tasks
    message = _tasks_required_message(clone(estimator).fit(X, y, tasks=tasks), X)
    assert "enable_metadata_routing=True" in message
    assert "cross_val_predict routes tasks to fit only" in message
    est, grid = clone(estimator), {"fit_intercept": [True, False]}
    scope = dict(
        est=est, grid=grid, X=X, y=y, tasks=tasks, WithinTaskKFold=WithinTaskKFold,
        GridSearchCV=GridSearchCV, cross_val_score=cross_val_score,
        cross_validate=cross_validate,
    )  # fmt: skip
    with sklearn.config_context(enable_metadata_routing=True):
        folds = "folds = list(WithinTaskKFold(5).split(X, y, groups=tasks))"
        assert folds in message
        exec(folds, scope)
        search = "GridSearchCV(est, grid, cv=folds).fit(X, y, tasks=tasks)"
        assert search in message
        assert np.isfinite(eval(search, scope).cv_results_["mean_test_score"]).all()
        score = "cross_val_score(est, X, y, params={'tasks': tasks}, cv=folds)"
        assert score in message
        assert np.isfinite(eval(score, scope)).all()
        # Pipeline(...).fit(X, y, tasks=tasks) then .predict(X, tasks=tasks)
        assert "Pipeline(...).fit(X, y, tasks=tasks) then .predict(X, tasks=tasks)" in message
        pipe = make_pipeline(StandardScaler(), clone(estimator)).fit(X, y, tasks=tasks)
        assert pipe.predict(X, tasks=tasks).shape == y.shape
        # out-of-fold predictions: cross_validate, then each fold's estimator on its rows
        out_of_fold = (
            "cross_validate(est, X, y, params={'tasks': tasks}, cv=folds, "
            "return_estimator=True, return_indices=True)"
        )
        assert out_of_fold in message
        result = eval(out_of_fold, scope)
        pred = np.full(y.shape, np.nan)
        for fitted, test in zip(result["estimator"], result["indices"]["test"], strict=True):
            pred[test] = fitted.predict(X[test], tasks=tasks[test])
        assert np.isfinite(pred).all() and np.corrcoef(pred, y)[0, 1] > 0.5
        # what the message says of cross_val_predict holds
        with pytest.raises(ValueError, match="tasks is required"):
            cross_val_predict(est, X, y, params={"tasks": tasks}, cv=scope["folds"])


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_tasks_as_a_column_vector_is_refused_naming_tasks(estimator, data):
    """As scikit-learn refuses 2-D groups and sample_weight: a ValueError naming tasks
    (no DataConversionWarning about y from inside the package)."""
    X, y, tasks = data.X, data.y, data.tasks
    column = r"tasks must be 1-D of shape \(n_samples,\).*got shape \(240, 1\); pass tasks.ravel"
    with pytest.raises(ValueError, match=column):
        clone(estimator).fit(X, y, tasks=tasks[:, None])
    model = clone(estimator).fit(X, y, tasks=tasks)
    with pytest.raises(ValueError, match=column):
        model.predict(X, tasks=tasks[:, None])
    with pytest.raises(ValueError, match=r"tasks must be 1-D.*got shape \(\)"):
        model.predict(X[:1], tasks=0)
    with pytest.raises(ValueError, match=r"groups must be 1-D.*pass groups.ravel"):
        WithinTaskKFold(2).split(X, groups=tasks[:, None])


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_task_labels_of_mixed_types_are_refused_naming_tasks(estimator, data):
    X, y, tasks = data.X, data.y, data.tasks
    mixed = np.array([j if j % 2 else f"t{j}" for j in tasks.tolist()], dtype=object)
    one_type = r"tasks must hold labels of one type \(all numbers or all strings\), got a mix "
    with pytest.raises(TypeError, match=one_type + "of int and str"):
        clone(estimator).fit(X, y, tasks=mixed)
    model = clone(estimator).fit(X, y, tasks=tasks)
    with pytest.raises(TypeError, match=one_type):
        model.predict(X, tasks=mixed)
    with pytest.raises(TypeError, match=r"groups must hold labels of one type"):
        WithinTaskKFold(2).split(X, groups=mixed)
    # labels of one kind that do not compare (complex numbers held as objects)
    with pytest.raises(TypeError, match="tasks labels cannot be sorted"):
        clone(estimator).fit(X, y, tasks=(tasks * 1j).astype(object))
    with pytest.raises(ValueError, match="tasks holds complex values"):
        clone(estimator).fit(X, y, tasks=tasks * 1j)


_CV_STOPPED = [
    ARMULRegressorCV(max_iter=1, reg_lambdas=[0.01, 0.1, 1.0], cv=3, random_state=0),
    LowRankARMULRegressorCV(max_iter=1, reg_lambdas=[0.01, 0.1, 1.0], cv=3, rank=2),
    ClusteredARMULRegressorCV(
        max_iter=1, reg_lambdas=[0.01, 0.1, 1.0], cv=3, n_clusters=2, n_init=2, random_state=0
    ),
    RobustMultiTaskRegressorCV(max_iter=1, reg_lambdas=[0.01, 0.1, 1.0], cv=3, random_state=0),
]


@pytest.mark.parametrize("estimator", _CV_STOPPED, ids=lambda e: type(e).__name__)
def test_a_cv_fit_whose_inner_fits_stop_warns_once_at_the_callers_line(estimator, data):
    """One ConvergenceWarning per fit of a ...CV estimator, with the count of the inner
    fits that stopped at max_iter, naming this file (not one per inner fit)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        clone(estimator).fit(data.X, data.y, tasks=data.tasks)
    stops = [w for w in record if issubclass(w.category, ConvergenceWarning)]
    assert len(stops) == 1, [str(w.message) for w in stops]
    n_fits = 3 * (3 if "ridges" not in estimator.get_params() else 3 * 6)
    assert re.search(
        rf"^[1-9]\d* of the {n_fits} cross-validation fits .*max_iter=1.*increase max_iter$",
        str(stops[0].message),
    ), str(stops[0].message)
    assert stops[0].filename == __file__


def test_a_clustered_fit_warns_once_however_many_of_its_solves_stop(data):
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    model = ClusteredARMULRegressor(n_clusters=2, max_iter=1, n_init=2, random_state=0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model.fit(data.X, data.y, tasks=data.tasks)
    stops = [w for w in record if issubclass(w.category, ConvergenceWarning)]
    assert len(stops) == 1 and stops[0].filename == __file__, [str(w.message) for w in stops]
    assert "clustered ARMUL's L-BFGS did not converge in max_iter=1" in str(stops[0].message)


def _noisy_clustered_tasks():
    """Three clusters of task coefficients, few rows per task: the warm start errs."""
    rng = np.random.default_rng(5)
    m, n, d = 30, 8, 4
    theta = (2.0 * np.eye(d)[:3])[np.arange(m) % 3] + 0.3 * rng.normal(size=(m, d))
    X = rng.normal(size=(m * n, d))
    tasks = np.repeat(np.arange(m), n)
    return X, np.einsum("ik,ik->i", X, theta[tasks]) + 2.0 * rng.normal(size=m * n), tasks


def test_a_clustered_fit_whose_tasks_still_move_at_max_outer_warns():
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X, y, tasks = _noisy_clustered_tasks()
    settled = ClusteredARMULRegressor(3, reg_lambda=1.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        settled.fit(X, y, tasks=tasks)
    assert settled.n_iter_ > 1  # the tasks moved after the first alternation
    capped = ClusteredARMULRegressor(3, reg_lambda=1.0, random_state=0, max_outer=1)
    with pytest.warns(ConvergenceWarning, match=r"max_outer=1 alternations; increase max_outer$"):
        capped.fit(X, y, tasks=tasks)
    assert capped.n_iter_ == 1
    # A CV fit reports its stopped fits once, with the cap they reached.
    from mvlearn_ext.multitask import ClusteredARMULRegressorCV

    search = ClusteredARMULRegressorCV([1.0], cv=2, n_clusters=3, max_outer=1, random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"max_outer=1 alternations.*increase max_outer$"):
        search.fit(X, y, tasks=tasks)
