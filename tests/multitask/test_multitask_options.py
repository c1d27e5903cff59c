"""The robust estimator's options ``lambda_scale`` and ``task_weight``: closed forms and limits."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mvlearn_ext.multitask import RobustMultiTaskRegressor, RobustMultiTaskRegressorCV


def _problem(sizes, d=6, seed=0, outliers=(0,)):
    """Anisotropic tasks near a centre; the tasks in ``outliers`` far from it."""
    rng = np.random.default_rng(seed)
    scales = np.geomspace(1.0, 0.05, d)
    centre = rng.normal(size=d)
    Xs, ys = [], []
    for j, n in enumerate(sizes):
        X = rng.normal(size=(n, d)) * scales
        theta = centre + (3.0 if j in outliers else 0.2) * rng.normal(size=d)
        Xs.append(X)
        ys.append(X @ theta + 0.3 * rng.normal(size=n))
    tasks = np.repeat(np.arange(len(sizes)), sizes)
    return np.vstack(Xs), np.concatenate(ys), tasks


def _fit(X, y, tasks, **params):
    params = {"fit_intercept": False, "tol": 1e-13, **params}
    return RobustMultiTaskRegressor(**params).fit(X, y, tasks=tasks)


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("task_weight", ["uniform", "n_samples"])
def test_rank_scale_equals_feature_scale_when_every_task_has_full_rank(fit_intercept, task_weight):
    # n_j > d + 1 for every task: rank(Sigma_j) = d, so lambda_j is the same.
    X, y, tasks = _problem([9, 15, 40, 12, 25])
    fits = [
        _fit(
            X,
            y,
            tasks,
            reg_lambda=0.4,
            lambda_scale=s,
            task_weight=task_weight,
            fit_intercept=fit_intercept,
        )
        for s in ("n_features", "rank")
    ]
    assert 0 < fits[0].fused_.sum() < 5  # a mixed regime, not a trivial limit
    for name in ("coef_", "center_", "outlier_scores_", "fusion_threshold_", "objective_"):
        np.testing.assert_allclose(getattr(fits[1], name), getattr(fits[0], name), rtol=1e-12)


def test_rank_scale_is_the_feature_scale_at_a_rescaled_level_when_ranks_are_equal():
    # Every task with n_j = 4 < d = 6 rows (rank 4): lambda_j = q sqrt(4 / 4) = q
    # under "rank", and q' sqrt(6 / 4) under "n_features"; equal for q' = q sqrt(4 / 6).
    X, y, tasks = _problem([4] * 7, seed=3)
    q = 0.5
    rank = _fit(X, y, tasks, reg_lambda=q, lambda_scale="rank")
    feat = _fit(X, y, tasks, reg_lambda=q * np.sqrt(4 / 6), lambda_scale="n_features")
    assert 0 < rank.fused_.sum() < 7
    np.testing.assert_allclose(rank.coef_, feat.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(rank.fusion_threshold_, feat.fusion_threshold_ * np.sqrt(6 / 4))
    # outlier scores are in units of reg_lambda: fused iff score <= reg_lambda
    np.testing.assert_array_equal(rank.fused_, rank.outlier_scores_ <= q)


def test_rank_scale_lambda_closed_form_with_unequal_ranks():
    # lambda_j = q sqrt(min(n_j, d) / n_j): the outlier scores r_j sqrt(n_j / rank_j)
    # are the Sigma_j-distances to the centre over sqrt(rank_j / n_j), and the
    # shrinkage factors are 1 - lambda_j / r_j for the tasks left free.
    sizes = [3, 5, 30, 60, 4, 20]
    X, y, tasks = _problem(sizes, seed=4)
    q = 0.3
    model = _fit(X, y, tasks, reg_lambda=q, lambda_scale="rank")
    n = np.array(sizes, dtype=float)
    lam = q * np.sqrt(np.minimum(n, 6) / n)
    r = np.empty(6)
    for j in range(6):
        Xj = X[tasks == j]
        diff = model.coef_[j] - model.center_
        ols = np.linalg.lstsq(Xj, y[tasks == j], rcond=None)[0]
        S = Xj.T @ Xj / n[j]
        dist = ols - model.center_
        r[j] = np.sqrt(dist @ S @ dist)
        # in the task's own metric theta_j sits on the segment from beta to its OLS fit
        np.testing.assert_allclose(
            np.sqrt(max(diff @ S @ diff, 0.0)), max(r[j] - lam[j], 0.0), atol=1e-8
        )
    np.testing.assert_allclose(model.outlier_scores_, r * np.sqrt(n / np.minimum(n, 6)), rtol=1e-8)
    free = ~model.fused_
    assert free.any() and model.fused_.any()
    np.testing.assert_allclose(model.shrinkage_[free], 1 - lam[free] / r[free], rtol=1e-8)


@pytest.mark.parametrize("lambda_scale", ["n_features", "rank"])
def test_sample_size_weights_with_equal_sizes_equal_unit_weights(lambda_scale):
    # w_j = n_j = n for every task scales the objective by n: the same minimiser
    # (15 rows: every training fold of 5-fold CV holds 12 rows of every task).
    X, y, tasks = _problem([15] * 6, seed=5)
    fits = [
        _fit(X, y, tasks, reg_lambda=0.3, task_weight=w, lambda_scale=lambda_scale)
        for w in ("uniform", "n_samples")
    ]
    assert 0 < fits[0].fused_.sum() < 6
    np.testing.assert_allclose(fits[1].coef_, fits[0].coef_, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(fits[1].objective_, 15 * fits[0].objective_, rtol=1e-9)
    cv = [
        RobustMultiTaskRegressorCV(
            fit_intercept=False, random_state=0, task_weight=w, lambda_scale=lambda_scale
        ).fit(X, y, tasks=tasks)
        for w in ("uniform", "n_samples")
    ]
    np.testing.assert_allclose(
        cv[1].cv_results_["mean_test_mse"], cv[0].cv_results_["mean_test_mse"]
    )
    assert cv[1].reg_lambda_ == cv[0].reg_lambda_


def test_sample_size_weights_differ_from_unit_weights_when_sizes_differ():
    # Not a no-op: with unequal n_j the pooled limit differs (task-balanced vs pooled OLS).
    X, y, tasks = _problem([8, 12, 40, 100, 20], seed=6)
    uni = _fit(X, y, tasks, reg_lambda=np.inf, task_weight="uniform")
    ns = _fit(X, y, tasks, reg_lambda=np.inf, task_weight="n_samples")
    pooled = np.linalg.lstsq(X, y, rcond=None)[0]
    np.testing.assert_allclose(ns.center_, pooled, rtol=1e-9)
    assert np.max(np.abs(uni.center_ - pooled)) > 1e-2


@pytest.mark.parametrize("lambda_scale", ["n_features", "rank"])
@pytest.mark.parametrize("task_weight", ["uniform", "n_samples"])
def test_cv_predictions_invariant_to_features_in_very_different_units(lambda_scale, task_weight):
    # A common invertible map of the features (units 1e-2 .. 1e2, then mixed):
    # the CV scores, the chosen q and every prediction are unchanged, and the
    # reweighting iteration's stopping rule (in the pooled metric) is too.
    X, y, tasks = _problem([15, 30, 12, 50, 20, 25], seed=8, outliers=(0, 3))
    Xt, _, tt = _problem([10] * 6, seed=9)
    rng = np.random.default_rng(10)
    A = np.diag(10.0 ** np.linspace(-2, 2, 6)) @ (np.eye(6) + 0.3 * rng.normal(size=(6, 6)))
    # ridges=(0,): the paper's estimator (the default's Euclidean ridge is not invariant)
    params = dict(
        fit_intercept=True,
        random_state=0,
        lambda_scale=lambda_scale,
        task_weight=task_weight,
        ridges=(0.0,),
    )
    base = RobustMultiTaskRegressorCV(**params).fit(X, y, tasks=tasks)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        mapped = RobustMultiTaskRegressorCV(**params).fit(X @ A, y, tasks=tasks)
    assert 0.0 < base.reg_lambda_ < np.inf
    np.testing.assert_allclose(
        mapped.cv_results_["mean_test_mse"], base.cv_results_["mean_test_mse"], rtol=1e-7
    )
    assert mapped.reg_lambda_ == base.reg_lambda_
    assert abs(mapped.n_iter_ - base.n_iter_) <= 0.5 * base.n_iter_ + 5
    np.testing.assert_allclose(
        mapped.predict(Xt @ A, tasks=tt), base.predict(Xt, tasks=tt), rtol=1e-7, atol=1e-7
    )


def test_lambda_scale_is_validated():
    X, y, tasks = _problem([10, 10])
    with pytest.raises(ValueError, match="lambda_scale"):
        RobustMultiTaskRegressor(lambda_scale="d").fit(X, y, tasks=tasks)
