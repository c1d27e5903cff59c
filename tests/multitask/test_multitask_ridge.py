"""The robust estimator's optional ridge term (``ridge``, ``ridge_metric``, ``ridges``)."""

import numpy as np
import pytest

from mvlearn_ext.multitask import (
    DEFAULT_RIDGES,
    RobustMultiTaskRegressor,
    RobustMultiTaskRegressorCV,
)


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


def _metric(X, tasks, metric):
    """``M``: the mean of the tasks' second moments, or its mean eigenvalue times I."""
    S = np.mean(
        [X[tasks == j].T @ X[tasks == j] / np.sum(tasks == j) for j in np.unique(tasks)], 0
    )
    return S if metric == "second_moment" else np.trace(S) / S.shape[0] * np.eye(S.shape[0])


def _fit(X, y, tasks, **params):
    params = {"fit_intercept": False, "tol": 1e-13, **params}
    return RobustMultiTaskRegressor(**params).fit(X, y, tasks=tasks)


@pytest.mark.parametrize("metric", ["second_moment", "identity"])
@pytest.mark.parametrize("q", [0.2, 0.5])
def test_ridge_is_the_paper_estimator_on_augmented_rows(metric, q):
    # Every task (n rows) gets d rows sqrt(n rho) M^{1/2} with responses 0. The
    # paper's estimator (ridge=0) on those n + d rows has moments n / (n + d)
    # (Sigma_j + rho M) and b_j n / (n + d), and lambda_j = q sqrt(d / (n + d)):
    # the same objective, times n / (n + d), as the ridge term at the same q.
    n, d, m, rho = 12, 6, 5, 0.7
    X, y, tasks = _problem([n] * m, seed=1)
    M = _metric(X, tasks, metric)
    e, V = np.linalg.eigh(M)
    root = (V * np.sqrt(e)) @ V.T
    Xa, ya, ta = [], [], []
    for j in range(m):
        Xa += [X[tasks == j], np.sqrt(n * rho) * root]
        ya += [y[tasks == j], np.zeros(d)]
        ta += [np.full(n + d, j)]
    aug = _fit(np.vstack(Xa), np.concatenate(ya), np.concatenate(ta), reg_lambda=q)
    ridge = _fit(X, y, tasks, reg_lambda=q, ridge=rho, ridge_metric=metric)
    assert 0 < ridge.fused_.sum() < m  # a mixed regime, not a limit
    np.testing.assert_allclose(ridge.coef_, aug.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ridge.center_, aug.center_, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(ridge.fused_, aug.fused_)


@pytest.mark.parametrize("metric", ["second_moment", "identity"])
def test_ridge_limits_are_ridge_per_task_and_pooled_ridge(metric):
    # q = 0: every task's own generalised ridge (Sigma_j + rho M)^{-1} b_j, also
    # for tasks with n_j < d; q = inf: (sum_j (Sigma_j + rho M))^{-1} sum_j b_j.
    sizes = [4, 9, 20, 3, 15]
    X, y, tasks = _problem(sizes, seed=2)
    rho = 0.05
    M = _metric(X, tasks, metric)
    Sig = [X[tasks == j].T @ X[tasks == j] / n for j, n in enumerate(sizes)]
    b = [X[tasks == j].T @ y[tasks == j] / n for j, n in enumerate(sizes)]
    own = np.array([np.linalg.solve(S + rho * M, bj) for S, bj in zip(Sig, b, strict=True)])
    np.testing.assert_allclose(
        _fit(X, y, tasks, reg_lambda=0.0, ridge=rho, ridge_metric=metric).coef_, own, rtol=1e-9
    )
    pooled = np.linalg.solve(sum(Sig) + len(sizes) * rho * M, sum(b))
    fit = _fit(X, y, tasks, reg_lambda=np.inf, ridge=rho, ridge_metric=metric)
    np.testing.assert_allclose(fit.coef_, np.tile(pooled, (len(sizes), 1)), rtol=1e-9)
    # the ridge shrinks: the pooled ridge fit is shorter in the M norm than pooled OLS
    ols = _fit(X, y, tasks, reg_lambda=np.inf).center_
    assert pooled @ M @ pooled < ols @ M @ ols


def test_invariant_metric_keeps_every_prediction_invariant_even_with_small_tasks():
    # With the mean second moment as M the ridge term transforms with the features:
    # under X -> X A every prediction is unchanged, out of sample too, and also for
    # tasks with n_j < d (the augmented Sigma_j has full rank: no projector).
    X, y, tasks = _problem([4, 30, 5, 40, 20, 25], seed=8, outliers=(0, 3))
    Xt, _, tt = _problem([10] * 6, seed=9)
    rng = np.random.default_rng(10)
    A = np.diag(10.0 ** np.linspace(-2, 2, 6)) @ (np.eye(6) + 0.3 * rng.normal(size=(6, 6)))
    # (ridge 0 is left out of the grid: there a task with n_j < d predicts out of
    # sample through the Euclidean projector, invariant under rotations only)
    params = dict(
        fit_intercept=True, random_state=0, ridges=(0.01, 0.1, 1.0), ridge_metric="second_moment"
    )
    base = RobustMultiTaskRegressorCV(**params).fit(X, y, tasks=tasks)
    mapped = RobustMultiTaskRegressorCV(**params).fit(X @ A, y, tasks=tasks)
    np.testing.assert_allclose(
        mapped.cv_results_["mean_test_mse"], base.cv_results_["mean_test_mse"], rtol=1e-7
    )
    assert (mapped.ridge_, mapped.reg_lambda_) == (base.ridge_, base.reg_lambda_)
    fixed = dict(reg_lambda=1.0, ridge=0.1, ridge_metric="second_moment", fit_intercept=True)
    fit0 = RobustMultiTaskRegressor(**fixed).fit(X, y, tasks=tasks)
    fit1 = RobustMultiTaskRegressor(**fixed).fit(X @ A, y, tasks=tasks)
    assert 0 < fit0.fused_.sum() < 6
    np.testing.assert_allclose(
        fit1.predict(Xt @ A, tasks=tt), fit0.predict(Xt, tasks=tt), rtol=1e-7, atol=1e-7
    )


def test_identity_metric_is_invariant_to_rotations_only():
    X, y, tasks = _problem([8, 30, 12, 40, 20], seed=11)
    Xt, _, tt = _problem([10] * 5, seed=12)
    rng = np.random.default_rng(13)
    Q = np.linalg.qr(rng.normal(size=(6, 6)))[0]
    A = np.diag(10.0 ** np.linspace(-1, 1, 6))
    fixed = dict(reg_lambda=0.3, ridge=0.1, ridge_metric="identity", tol=1e-13)
    fits = [
        RobustMultiTaskRegressor(**fixed).fit(X @ T, y, tasks=tasks) for T in (np.eye(6), Q, A)
    ]
    preds = [f.predict(Xt @ T, tasks=tt) for f, T in zip(fits, (np.eye(6), Q, A), strict=True)]
    np.testing.assert_allclose(preds[1], preds[0], rtol=1e-7, atol=1e-7)
    assert np.max(np.abs(preds[2] - preds[0])) > 1e-3


def test_default_cv_is_the_identity_ridge_grid_and_its_zero_block_the_paper_estimator():
    X, y, tasks = _problem([15, 20, 12, 30, 25], seed=14)
    default = RobustMultiTaskRegressorCV(fit_intercept=False, random_state=0).fit(
        X, y, tasks=tasks
    )
    explicit = RobustMultiTaskRegressorCV(
        fit_intercept=False, random_state=0, ridges=DEFAULT_RIDGES, ridge_metric="identity"
    ).fit(X, y, tasks=tasks)
    assert DEFAULT_RIDGES[0] == 0.0 and len(DEFAULT_RIDGES) == 6
    np.testing.assert_array_equal(default.cv_results_["ridge"], explicit.cv_results_["ridge"])
    np.testing.assert_array_equal(
        default.cv_results_["mean_test_mse"], explicit.cv_results_["mean_test_mse"]
    )
    np.testing.assert_array_equal(default.coef_, explicit.coef_)
    # ridges=(0,) is the paper's estimator: its CV scores are the rho = 0 block of
    # the default's (same folds), its refit the plain estimator at the chosen q
    paper = RobustMultiTaskRegressorCV(fit_intercept=False, random_state=0, ridges=[0.0])
    paper.fit(X, y, tasks=tasks)
    zero = default.cv_results_["ridge"] == 0.0
    np.testing.assert_array_equal(
        paper.cv_results_["mean_test_mse"], default.cv_results_["mean_test_mse"][zero]
    )
    plain = _fit(X, y, tasks, reg_lambda=paper.reg_lambda_, tol=1e-10)
    np.testing.assert_allclose(paper.coef_, plain.coef_, rtol=1e-8, atol=1e-10)
    assert paper.ridge_ == 0.0


@pytest.mark.parametrize("q", [0.3, 1.0])
def test_ridge_zero_limit_is_the_paper_estimator(q):
    # rho -> 0 is continuous (full-rank tasks): a vanishing identity ridge gives the
    # paper's estimator to 1e-8, and at rho = 0 the metric plays no role at all
    X, y, tasks = _problem([15, 20, 12, 30, 25], seed=16, outliers=(0, 2))
    paper = _fit(X, y, tasks, reg_lambda=q)
    assert 0 < paper.fused_.sum() < 5
    tiny = _fit(X, y, tasks, reg_lambda=q, ridge=1e-11, ridge_metric="identity")
    np.testing.assert_allclose(tiny.coef_, paper.coef_, rtol=1e-8, atol=1e-10)
    for metric in ("identity", "second_moment"):
        zero = _fit(X, y, tasks, reg_lambda=q, ridge=0.0, ridge_metric=metric)
        np.testing.assert_array_equal(zero.coef_, paper.coef_)


@pytest.mark.parametrize("q", [0.0, np.inf])
def test_default_cv_at_q_zero_and_inf_is_ridge_per_task_and_pooled_ridge(q):
    # with a one-value q grid the default CV chooses rho only, and refits the closed
    # form at it: per-task ridge (q = 0, tasks with n_j < d included) or pooled ridge
    sizes = [4, 9, 20, 5, 15]
    X, y, tasks = _problem(sizes, seed=2)
    cv = RobustMultiTaskRegressorCV(reg_lambdas=[q], fit_intercept=False, random_state=0, cv=2)
    cv.fit(X, y, tasks=tasks)
    rho, M = cv.ridge_, _metric(X, tasks, "identity")
    Sig = [X[tasks == j].T @ X[tasks == j] / n for j, n in enumerate(sizes)]
    b = [X[tasks == j].T @ y[tasks == j] / n for j, n in enumerate(sizes)]
    if q == 0.0:
        expected = np.array(
            [np.linalg.pinv(S + rho * M) @ bj for S, bj in zip(Sig, b, strict=True)]
        )
        if rho == 0.0:  # the paper's q = 0: least squares, gaps filled from the centre
            expected = _fit(X, y, tasks, reg_lambda=0.0).coef_
    else:
        pooled = np.linalg.solve(sum(Sig) + len(sizes) * rho * M, sum(b))
        expected = np.tile(pooled, (len(sizes), 1))
    np.testing.assert_allclose(cv.coef_, expected, rtol=1e-8, atol=1e-10)


def test_default_cv_is_invariant_under_scaled_rotations_not_under_units():
    # M = tr(S)/d I maps with X -> X c Q (Q orthogonal): CV scores, the chosen pair
    # and out-of-sample predictions are unchanged. Features in units 1e-1 .. 1e1
    # apart change the default's fit; the paper's estimator (ridges=(0,)) is unmoved.
    # weak, unrelated signals under unit noise: a ridge pays (CV picks rho > 0)
    rng = np.random.default_rng(17)
    sizes = [14, 16, 18, 15, 17, 16]  # full rank in every fold: the paper is invariant
    X = rng.normal(size=(sum(sizes), 6))
    tasks = np.repeat(np.arange(6), sizes)
    y = np.einsum("ik,ik->i", X, 0.2 * rng.normal(size=(6, 6))[tasks]) + rng.normal(size=len(X))
    Xt, tt = rng.normal(size=(60, 6)), np.repeat(np.arange(6), 10)
    Q = 7.0 * np.linalg.qr(rng.normal(size=(6, 6)))[0]
    U = np.diag(10.0 ** np.linspace(-1, 1, 6))
    params = dict(fit_intercept=True, random_state=0)
    base = RobustMultiTaskRegressorCV(**params).fit(X, y, tasks=tasks)
    rot = RobustMultiTaskRegressorCV(**params).fit(X @ Q, y, tasks=tasks)
    assert base.ridge_ > 0.0  # the ridge term is in use here
    np.testing.assert_allclose(
        rot.cv_results_["mean_test_mse"], base.cv_results_["mean_test_mse"], rtol=1e-7
    )
    assert (rot.ridge_, rot.reg_lambda_) == (base.ridge_, base.reg_lambda_)
    pred = base.predict(Xt, tasks=tt)
    np.testing.assert_allclose(rot.predict(Xt @ Q, tasks=tt), pred, rtol=1e-7, atol=1e-7)
    units = RobustMultiTaskRegressorCV(**params).fit(X @ U, y, tasks=tasks)
    assert np.max(np.abs(units.predict(Xt @ U, tasks=tt) - pred)) > 1e-3
    paper = [
        RobustMultiTaskRegressorCV(ridges=(0.0,), **params).fit(X @ T, y, tasks=tasks)
        for T in (np.eye(6), U)
    ]
    np.testing.assert_allclose(
        paper[1].predict(Xt @ U, tasks=tt), paper[0].predict(Xt, tasks=tt), rtol=1e-7, atol=1e-7
    )


def test_cv_chooses_the_best_pair_and_refits_it():
    X, y, tasks = _problem([15, 20, 12, 30, 25], seed=15, outliers=(0, 2))
    grid, ridges = [0.0, 0.3, 1.0, np.inf], [0.0, 0.1, 1.0]
    cv = RobustMultiTaskRegressorCV(
        reg_lambdas=grid, ridges=ridges, fit_intercept=False, random_state=0
    ).fit(X, y, tasks=tasks)
    res = cv.cv_results_
    assert res["mean_test_mse"].shape == (12,)
    np.testing.assert_array_equal(res["ridge"], np.repeat(ridges, 4))
    np.testing.assert_array_equal(res["reg_lambda"], np.tile(grid, 3))
    k = int(np.argmin(res["mean_test_mse"]))
    assert (cv.ridge_, cv.reg_lambda_) == (res["ridge"][k], res["reg_lambda"][k])
    # each ridge's block of scores is that ridge's own CV over q (same folds)
    for r in ridges:
        one = RobustMultiTaskRegressorCV(
            reg_lambdas=grid, ridges=[r], fit_intercept=False, random_state=0
        ).fit(X, y, tasks=tasks)
        np.testing.assert_allclose(
            res["mean_test_mse"][res["ridge"] == r], one.cv_results_["mean_test_mse"], rtol=1e-12
        )
    refit = _fit(X, y, tasks, reg_lambda=cv.reg_lambda_, ridge=cv.ridge_, tol=1e-10)
    np.testing.assert_allclose(cv.coef_, refit.coef_, rtol=1e-9, atol=1e-12)


def test_ridge_arguments_are_validated():
    X, y, tasks = _problem([10, 10])
    for bad in (-1.0, np.inf):
        with pytest.raises(ValueError, match="ridge"):
            RobustMultiTaskRegressor(ridge=bad).fit(X, y, tasks=tasks)
    with pytest.raises(ValueError, match="ridge_metric"):
        RobustMultiTaskRegressor(ridge_metric="euclid").fit(X, y, tasks=tasks)
    for bad in ([], [0.0, -0.1], [np.nan], [np.inf]):
        with pytest.raises(ValueError, match="ridges"):
            RobustMultiTaskRegressorCV(ridges=bad, cv=2).fit(X, y, tasks=tasks)
