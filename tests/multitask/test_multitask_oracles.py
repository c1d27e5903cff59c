"""Oracles of the robust multi-task estimator (closed forms, limits, invariances)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from mvlearn_ext.datasets import make_contaminated_tasks
from mvlearn_ext.multitask import (
    ARMULRegressor,
    ClusteredARMULRegressor,
    IndependentTaskRegressor,
    LowRankARMULRegressor,
    MeanRegularizedRegressor,
    PooledRegressor,
    RobustMultiTaskRegressor,
)
from mvlearn_ext.multitask._base import TaskMoments
from mvlearn_ext.multitask._kernels import task_eigh, task_moments


def _tasks(m=6, n=40, d=5, spread=1.0, seed=0, sizes=None, aniso=True):
    """Gaussian tasks with anisotropic covariates and scattered coefficients."""
    rng = np.random.default_rng(seed)
    sizes = np.full(m, n) if sizes is None else np.asarray(sizes)
    scales = np.linspace(1.0, 0.2, d) if aniso else np.ones(d)
    center = rng.normal(size=d)
    Xs, ys, thetas = [], [], []
    for j in range(m):
        X = rng.normal(size=(sizes[j], d)) * scales
        # the first two tasks are outliers, the others near the centre
        theta = center + (spread if j < 2 else 0.1 * spread) * rng.normal(size=d)
        Xs.append(X)
        ys.append(X @ theta + 0.5 * rng.normal(size=sizes[j]))
        thetas.append(theta)
    tasks = np.concatenate([np.full(s, j) for j, s in enumerate(sizes)])
    return np.vstack(Xs), np.concatenate(ys), tasks, np.array(thetas)


def _ols(X, y, tasks):
    return np.array(
        [np.linalg.lstsq(X[tasks == j], y[tasks == j], rcond=None)[0] for j in np.unique(tasks)]
    )


def _sigma(X, tasks, j):
    Xj = X[tasks == j]
    return Xj.T @ Xj / Xj.shape[0]


# -- kernels against NumPy references ---------------------------------------------------


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_task_moments_match_numpy(fit_intercept, dtype):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 4)).astype(dtype)
    y = rng.normal(size=30)
    sw = rng.uniform(0.5, 2.0, size=30)
    starts = np.array([0, 7, 19, 30])
    S, b, xbar, ybar, n = task_moments(X, y, sw, starts, fit_intercept)
    for j in range(3):
        sl = slice(starts[j], starts[j + 1])
        Xj, yj, wj = X[sl].astype(float), y[sl], sw[sl]
        mx = np.average(Xj, axis=0, weights=wj) if fit_intercept else np.zeros(4)
        my = np.average(yj, weights=wj) if fit_intercept else 0.0
        Xc, yc = Xj - mx, yj - my
        np.testing.assert_allclose(S[j], (Xc * wj[:, None]).T @ Xc / wj.sum(), atol=1e-12)
        np.testing.assert_allclose(b[j], (Xc * wj[:, None]).T @ yc / wj.sum(), atol=1e-12)
        np.testing.assert_allclose(n[j], wj.sum())


def test_task_eigh_pseudo_inverse_and_rank():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3, 6))  # rank 3 in 6 dimensions
    S = (X.T @ X / 3)[None]
    b = (X.T @ rng.normal(size=3) / 3)[None]
    evals, evecs, rank, theta, c0 = task_eigh(S, b, 1e-12)
    assert rank[0] == 3
    np.testing.assert_allclose(theta[0], np.linalg.pinv(S[0]) @ b[0], atol=1e-10)
    np.testing.assert_allclose(c0[0], b[0] @ np.linalg.pinv(S[0]) @ b[0], rtol=1e-10)


# -- closed form, KKT, exact fusion -------------------------------------------------------


def test_closed_form_and_kkt_at_the_solution():
    X, y, tasks, _ = _tasks(spread=1.5)
    q = 0.6
    model = RobustMultiTaskRegressor(reg_lambda=q, fit_intercept=False).fit(X, y, tasks=tasks)
    ols = _ols(X, y, tasks)
    beta = model.center_
    d = X.shape[1]
    grad = np.zeros(d)
    for j in range(6):
        S = _sigma(X, tasks, j)
        lam = q * np.sqrt(d / 40)
        r = np.sqrt((ols[j] - beta) @ S @ (ols[j] - beta))
        c = max(0.0, 1 - lam / r)
        np.testing.assert_allclose(model.coef_[j], beta + c * (ols[j] - beta), atol=1e-8)
        dist = np.sqrt((model.coef_[j] - ols[j]) @ S @ (model.coef_[j] - ols[j]))
        np.testing.assert_allclose(dist, min(lam, r), atol=1e-8)
        grad += min(1.0, lam / r) * (S @ ols[j] - S @ beta)
    assert 0 < model.fused_.sum() < 6  # a mixed regime, so the test has teeth
    np.testing.assert_allclose(grad, 0.0, atol=1e-8)


def test_irls_matches_a_generic_solver_of_the_profile_objective():
    X, y, tasks, _ = _tasks(spread=1.5, seed=3)
    q, d = 0.6, X.shape[1]
    model = RobustMultiTaskRegressor(reg_lambda=q, fit_intercept=False, tol=1e-13)
    model.fit(X, y, tasks=tasks)
    ols = _ols(X, y, tasks)
    Ss = [_sigma(X, tasks, j) for j in range(6)]
    lam = q * np.sqrt(d / 40)

    def profile(beta):
        total = 0.0
        for j in range(6):
            diff = ols[j] - beta
            r = np.sqrt(diff @ Ss[j] @ diff)
            total += 0.5 * r**2 if r <= lam else lam * r - 0.5 * lam**2
        return total

    ref = minimize(profile, np.zeros(d), method="BFGS", options={"gtol": 1e-12})
    assert model.objective_ <= ref.fun + 1e-10
    np.testing.assert_allclose(model.objective_, ref.fun, rtol=1e-8)
    np.testing.assert_allclose(model.center_, ref.x, atol=1e-4)


def _joint_objective(coef, beta, Xs, ys, w, lam, eps=0.0):
    """The paper's objective over (theta_1..theta_m, beta), optionally smoothed."""
    total = 0.0
    for j, (Xj, yj) in enumerate(zip(Xs, ys, strict=True)):
        n, diff = Xj.shape[0], coef[j] - beta
        pen = np.sqrt(max(diff @ (Xj.T @ Xj / n) @ diff, 0.0) + eps**2)
        total += w[j] * (0.5 * np.sum((yj - Xj @ coef[j]) ** 2) / n + lam[j] * pen)
    return total


def _unequal_problem(seed=7):
    """Unequal n_j (two tasks with n_j < d), anisotropic covariates, one outlier task."""
    rng = np.random.default_rng(seed)
    sizes, d = (2, 5, 20, 60, 9), 4
    scales = np.array([1.0, 0.5, 0.1, 0.02])
    centre = rng.normal(size=d)
    Xs = [rng.normal(size=(n, d)) * scales for n in sizes]
    thetas = [centre + (3.0 if j == 0 else 0.3) * rng.normal(size=d) for j in range(5)]
    ys = [Xj @ t + 0.5 * rng.normal(size=len(Xj)) for Xj, t in zip(Xs, thetas, strict=True)]
    return Xs, ys, np.asarray(sizes, dtype=float), d


@pytest.mark.parametrize("task_weight", ["uniform", "n_samples"])
@pytest.mark.parametrize("q", [0.5, 0.7])  # q* is about 1 here
def test_optimality_certificate_of_the_joint_objective(task_weight, q):
    # 0 in the subdifferential of the joint objective over (theta, beta), checked
    # directly (not through the Huber profile), with unequal n_j, n_j < d,
    # w_j in {1, n_j} and lambda_j = q sqrt(d / n_j).
    Xs, ys, n, d = _unequal_problem()
    X, y, tasks = np.vstack(Xs), np.concatenate(ys), np.repeat(np.arange(5), n.astype(int))
    model = RobustMultiTaskRegressor(
        reg_lambda=q, task_weight=task_weight, fit_intercept=False, tol=1e-14
    ).fit(X, y, tasks=tasks)
    assert 0 < model.fused_.sum() < 5  # a mixed regime
    assert not (model.fused_[0] and model.fused_[1])  # a task with n_j < d is free
    w = np.ones(5) if task_weight == "uniform" else n
    lam = q * np.sqrt(d / n)
    balance = np.zeros(d)
    for j in range(5):
        S, b = Xs[j].T @ Xs[j] / n[j], Xs[j].T @ ys[j] / n[j]
        # theta_j-stationarity forces the subgradient g_j of ||theta_j - beta||_S
        g = (b - S @ model.coef_[j]) / lam[j]
        diff = model.coef_[j] - model.center_
        r = np.sqrt(max(diff @ S @ diff, 0.0))
        if model.fused_[j]:
            np.testing.assert_allclose(S @ diff, 0.0, atol=1e-10)
            # g_j must lie in the dual unit ball: range(S) and g^T S^+ g <= 1
            assert g @ np.linalg.pinv(S, rcond=1e-10) @ g <= 1 + 1e-8
            assert np.linalg.norm(g - S @ np.linalg.pinv(S, rcond=1e-10) @ g) < 1e-8
        else:
            np.testing.assert_allclose(g, S @ diff / r, atol=1e-8)
        balance += w[j] * lam[j] * g
    np.testing.assert_allclose(balance, 0.0, atol=1e-8 * np.sum(w))  # beta-stationarity
    F = _joint_objective(model.coef_, model.center_, Xs, ys, w, lam)
    np.testing.assert_allclose(
        model.objective_
        + sum(  # the profile value plus constants
            w[j] * (0.5 * ys[j] @ ys[j] / n[j] - 0.5 * ols @ (Xs[j].T @ ys[j] / n[j]))
            for j, ols in enumerate(np.linalg.lstsq(Xs[j], ys[j], rcond=None)[0] for j in range(5))
        ),
        F,
        rtol=1e-10,
    )


def test_joint_objective_brute_force_on_a_tiny_problem():
    # A generic quasi-Newton solver on the smoothed joint objective never does better.
    Xs, ys, n, d = _unequal_problem(seed=11)
    X, y, tasks = np.vstack(Xs), np.concatenate(ys), np.repeat(np.arange(5), n.astype(int))
    w, q, eps = n, 0.6, 1e-4  # smoothing raises the objective by at most sum w lam eps
    lam = q * np.sqrt(d / n)
    model = RobustMultiTaskRegressor(reg_lambda=q, task_weight="n_samples", fit_intercept=False)
    model.fit(X, y, tasks=tasks)
    ours = _joint_objective(model.coef_, model.center_, Xs, ys, w, lam)
    Ss = [Xj.T @ Xj / len(Xj) for Xj in Xs]
    bs = [Xj.T @ yj / len(Xj) for Xj, yj in zip(Xs, ys, strict=True)]

    def smoothed(z):
        beta, coef = z[:d], z[d:].reshape(5, d)
        f, gb, gc = _joint_objective(coef, beta, Xs, ys, w, lam, eps), np.zeros(d), []
        for j in range(5):
            Sd = Ss[j] @ (coef[j] - beta)
            pull = w[j] * lam[j] * Sd / np.sqrt((coef[j] - beta) @ Sd + eps**2)
            gc.append(w[j] * (Ss[j] @ coef[j] - bs[j]) + pull)
            gb -= pull
        return f, np.concatenate([gb, *gc])

    res = minimize(smoothed, np.zeros(6 * d), jac=True, method="BFGS", options={"gtol": 1e-9})
    brute = _joint_objective(res.x[d:].reshape(5, d), res.x[:d], Xs, ys, w, lam)
    assert ours <= brute + 1e-10
    assert brute <= ours + np.sum(w * lam) * eps


@pytest.mark.parametrize("task_weight", ["n_samples", "uniform"])
def test_above_the_threshold_the_fit_is_pooled_exactly(task_weight):
    X, y, tasks, _ = _tasks(sizes=[20, 30, 40, 50, 35, 25], spread=0.5)
    model = RobustMultiTaskRegressor(reg_lambda=1.0, task_weight=task_weight, fit_intercept=False)
    qstar = model.fit(X, y, tasks=tasks).fusion_threshold_
    above = RobustMultiTaskRegressor(
        reg_lambda=qstar * 1.0000001, task_weight=task_weight, fit_intercept=False
    ).fit(X, y, tasks=tasks)
    if task_weight == "n_samples":
        dp = np.linalg.lstsq(X, y, rcond=None)[0]
    else:
        Ss = [_sigma(X, tasks, j) for j in range(6)]
        bs = [X[tasks == j].T @ y[tasks == j] / np.sum(tasks == j) for j in range(6)]
        dp = np.linalg.solve(sum(Ss), sum(bs))
    assert above.fused_.all()
    np.testing.assert_allclose(above.coef_, np.tile(dp, (6, 1)), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(above.center_, dp, rtol=1e-10, atol=1e-12)
    below = RobustMultiTaskRegressor(
        reg_lambda=qstar * 0.98, task_weight=task_weight, fit_intercept=False
    ).fit(X, y, tasks=tasks)
    assert not below.fused_.all()


def test_lambda_zero_is_independent_ols_and_small_lambda_converges_to_it():
    X, y, tasks, _ = _tasks(spread=1.0)
    ols = _ols(X, y, tasks)
    zero = RobustMultiTaskRegressor(reg_lambda=0.0, fit_intercept=False).fit(X, y, tasks=tasks)
    np.testing.assert_allclose(zero.coef_, ols, atol=1e-10)
    small = RobustMultiTaskRegressor(reg_lambda=1e-6, fit_intercept=False).fit(X, y, tasks=tasks)
    np.testing.assert_allclose(small.coef_, ols, atol=1e-5)


def test_lambda_zero_with_fewer_rows_than_features_matches_in_sample():
    X, y, tasks, _ = _tasks(d=8, sizes=[5, 30, 30, 6], m=4)
    zero = RobustMultiTaskRegressor(reg_lambda=0.0, fit_intercept=False).fit(X, y, tasks=tasks)
    ols = _ols(X, y, tasks)  # minimum-norm for the small tasks
    for j in range(4):
        Xj = X[tasks == j]
        np.testing.assert_allclose(Xj @ zero.coef_[j], Xj @ ols[j], atol=1e-9)
    # the unexplored directions of a small task come from the centre, not from 0
    Xj = X[tasks == 0]
    null = np.linalg.svd(Xj)[2][5:]
    np.testing.assert_allclose(null @ zero.coef_[0], null @ zero.center_, atol=1e-9)


# -- safety, invariance, robustness ---------------------------------------------------------


@pytest.mark.parametrize("q", [0.3, 1.0, 3.0])
def test_in_sample_predictions_move_at_most_lambda_from_ols(q):
    X, y, tasks, _ = _tasks(d=6, sizes=[4, 40, 40, 10, 60, 5], spread=2.0, seed=4)
    model = RobustMultiTaskRegressor(reg_lambda=q, fit_intercept=True).fit(X, y, tasks=tasks)
    itl = IndependentTaskRegressor(fit_intercept=True).fit(X, y, tasks=tasks)
    for j in range(6):
        rows = tasks == j
        moved = model.predict(X[rows], tasks=tasks[rows]) - itl.predict(X[rows], tasks=tasks[rows])
        rms = np.sqrt(np.mean(moved**2))
        lam = q * np.sqrt(6 / rows.sum())
        assert rms <= lam * (1 + 1e-9) + 1e-12
        if not model.fused_[j]:
            np.testing.assert_allclose(rms, lam, rtol=1e-7)


def _invertible(d, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, d)) + np.diag(np.linspace(0.5, 3.0, d))
    assert np.linalg.cond(A) < 1e3
    return A


def test_predictions_invariant_under_invertible_feature_maps_but_not_armul():
    X, y, tasks, _ = _tasks(spread=1.5, seed=5)
    Xt, yt, tt, _ = _tasks(spread=1.5, seed=6)  # new rows of the same tasks
    A = _invertible(5, 7)
    Q = np.linalg.qr(np.random.default_rng(8).normal(size=(5, 5)))[0]
    ours = RobustMultiTaskRegressor(reg_lambda=0.6, tol=1e-13)
    base = ours.fit(X, y, tasks=tasks).predict(Xt, tasks=tt)
    assert 0 < ours.fused_.sum() < 6
    mapped = ours.fit(X @ A, y, tasks=tasks).predict(Xt @ A, tasks=tt)
    np.testing.assert_allclose(mapped, base, rtol=1e-7, atol=1e-7)
    # ARMUL's Euclidean penalty on the coefficients of X: rotations only
    armul = ARMULRegressor(reg_lambda=0.6, tol=1e-12, scaling=None)
    a_base = armul.fit(X, y, tasks=tasks).predict(Xt, tasks=tt)
    assert 0 < armul.fused_.sum() < 6
    a_rot = armul.fit(X @ Q, y, tasks=tasks).predict(Xt @ Q, tasks=tt)
    np.testing.assert_allclose(a_rot, a_base, rtol=1e-5, atol=1e-5)
    a_map = armul.fit(X @ A, y, tasks=tasks).predict(Xt @ A, tasks=tt)
    assert np.max(np.abs(a_map - a_base)) > 1e-2
    # X over one spread (the default): rotations and a change of the unit of X
    D = np.array([1e-3, 0.5, 1.0, 7.0, 1e4])
    armul = ARMULRegressor(reg_lambda=0.6, tol=1e-12)
    a_base = armul.fit(X, y, tasks=tasks).predict(Xt, tasks=tt)
    a_rot = armul.fit(X @ Q * 3.7, y, tasks=tasks).predict(Xt @ Q * 3.7, tasks=tt)
    np.testing.assert_allclose(a_rot, a_base, rtol=1e-5, atol=1e-5)
    a_diag = armul.fit(X * D, y, tasks=tasks).predict(Xt * D, tasks=tt)
    assert np.max(np.abs(a_diag - a_base)) > 1e-2
    # on the standardised features: a rescaling of each feature only
    armul = ARMULRegressor(reg_lambda=0.6, tol=1e-12, scaling="zscore")
    a_base = armul.fit(X, y, tasks=tasks).predict(Xt, tasks=tt)
    assert 0 < armul.fused_.sum() < 6
    a_diag = armul.fit(X * D, y, tasks=tasks).predict(Xt * D, tasks=tt)
    np.testing.assert_allclose(a_diag, a_base, rtol=1e-5, atol=1e-5)
    a_rot = armul.fit(X @ Q, y, tasks=tasks).predict(Xt @ Q, tasks=tt)
    assert np.max(np.abs(a_rot - a_base)) > 1e-2


def test_predictions_invariant_under_permutations_of_tasks_and_rows():
    X, y, tasks, _ = _tasks(spread=1.5, seed=9)
    model = RobustMultiTaskRegressor(reg_lambda=0.6, tol=1e-13).fit(X, y, tasks=tasks)
    perm = np.random.default_rng(0).permutation(X.shape[0])
    relabel = np.array([3, 5, 0, 1, 4, 2])
    other = RobustMultiTaskRegressor(reg_lambda=0.6, tol=1e-13).fit(
        X[perm], y[perm], tasks=relabel[tasks[perm]]
    )
    np.testing.assert_allclose(
        other.predict(X, tasks=relabel[tasks]), model.predict(X, tasks=tasks), atol=1e-9
    )


def test_one_far_outlier_leaves_the_centre_bounded_while_pooling_follows_it():
    X, y, tasks, _ = _tasks(spread=0.3, seed=10, aniso=False)
    centres, pooled = [], []
    for shift in (1e2, 1e4, 1e6):
        y2 = y.copy()
        rows = tasks == 0
        y2[rows] += X[rows] @ np.full(5, shift)
        centres.append(
            RobustMultiTaskRegressor(reg_lambda=1.0, fit_intercept=False)
            .fit(X, y2, tasks=tasks)
            .center_
        )
        pooled.append(PooledRegressor(fit_intercept=False).fit(X, y2, tasks=tasks).center_)
    assert np.ptp(np.array(centres), axis=0).max() < 1e-6 * 1e6
    assert np.linalg.norm(centres[-1] - centres[0]) < 1.0
    assert np.linalg.norm(pooled[-1]) > 1e4


# -- statistical oracles (seeded Monte Carlo) ---------------------------------------------


def test_far_apart_tasks_cost_at_most_lambda_squared_over_ols():
    """In-sample error on unrelated tasks: about ITL + lambda^2, never more."""
    rng = np.random.default_rng(11)
    d, n, m, q = 5, 40, 6, 1.0
    lam = q * np.sqrt(d / n)
    ours_err, itl_err = [], []
    for _ in range(150):
        X = rng.normal(size=(m * n, d))
        tasks = np.repeat(np.arange(m), n)
        theta = 20.0 * rng.normal(size=(m, d))
        y = np.einsum("ik,ik->i", X, theta[tasks]) + rng.normal(size=m * n)
        ours = RobustMultiTaskRegressor(reg_lambda=q, fit_intercept=False).fit(X, y, tasks=tasks)
        ols = _ols(X, y, tasks)
        for j in range(m):
            S = _sigma(X, tasks, j)
            ours_err.append((ours.coef_[j] - theta[j]) @ S @ (ours.coef_[j] - theta[j]))
            itl_err.append((ols[j] - theta[j]) @ S @ (ols[j] - theta[j]))
    ours_err, itl_err = np.array(ours_err), np.array(itl_err)
    se = ours_err.std(ddof=1) / np.sqrt(ours_err.size)
    # E itl = sigma^2 d / n exactly (fixed design)
    assert abs(itl_err.mean() - d / n) < 4 * itl_err.std(ddof=1) / np.sqrt(itl_err.size)
    assert ours_err.mean() <= itl_err.mean() + lam**2 + 3 * se
    assert ours_err.mean() >= itl_err.mean() + lam**2 - 3 * se


def test_unrelated_tasks_with_cv_are_no_worse_than_independent_learning():
    from mvlearn_ext.multitask import RobustMultiTaskRegressorCV

    rng = np.random.default_rng(12)
    d, n, m = 5, 40, 8
    diff = []
    for rep in range(25):
        X = rng.normal(size=(m * n, d)) * np.linspace(1, 0.3, d)
        tasks = np.repeat(np.arange(m), n)
        theta = 5.0 * rng.normal(size=(m, d))
        y = np.einsum("ik,ik->i", X, theta[tasks]) + rng.normal(size=m * n)
        cov = np.linspace(1, 0.3, d) ** 2
        # the paper's estimator (ridges=(0,)): its safety is relative to least squares
        ours = RobustMultiTaskRegressorCV(fit_intercept=False, random_state=rep, ridges=(0.0,))
        ours.fit(X, y, tasks=tasks)
        ols = _ols(X, y, tasks)
        e_ours = np.mean(np.sum((ours.coef_ - theta) ** 2 * cov, axis=1))
        e_itl = np.mean(np.sum((ols - theta) ** 2 * cov, axis=1))
        diff.append(e_ours - e_itl)
    diff = np.array(diff)
    assert diff.mean() <= 3 * diff.std(ddof=1) / np.sqrt(diff.size)


def test_identical_tasks_with_large_lambda_reach_pooled_error_rate():
    rng = np.random.default_rng(13)
    d, n, m = 4, 30, 5
    errs = []
    for _ in range(200):
        X = rng.normal(size=(m * n, d))
        tasks = np.repeat(np.arange(m), n)
        theta = np.ones(d)
        y = X @ theta + rng.normal(size=m * n)
        model = RobustMultiTaskRegressor(reg_lambda=np.inf, fit_intercept=False)
        coef = model.fit(X, y, tasks=tasks).center_
        S = X.T @ X / (m * n)
        errs.append((coef - theta) @ S @ (coef - theta))
    errs = np.array(errs)
    # DP, fixed pooled design: E = sigma^2 d / (m n)
    assert abs(errs.mean() - d / (m * n)) < 4 * errs.std(ddof=1) / np.sqrt(errs.size)


# -- baselines ------------------------------------------------------------------------


def test_armul_fusion_oracle_and_generic_solver():
    X, y, tasks, _ = _tasks(spread=1.5, seed=14)
    C, d = 0.6, 5
    model = ARMULRegressor(reg_lambda=C, fit_intercept=False, tol=1e-13, scaling=None)
    model.fit(X, y, tasks=tasks)
    gamma = model.center_
    lam = C * np.sqrt(d / 40)
    for j in range(6):
        Xj, yj = X[tasks == j], y[tasks == j]
        g = np.linalg.norm(Xj.T @ (Xj @ gamma - yj) / 40)
        assert model.fused_[j] == (g <= lam)
    assert 0 < model.fused_.sum() < 6

    def objective(z):
        th, ga = z[: 6 * d].reshape(6, d), z[6 * d :]
        total = 0.0
        for j in range(6):
            Xj, yj = X[tasks == j], y[tasks == j]
            total += np.sum((yj - Xj @ th[j]) ** 2) / 80 + lam * np.sqrt(
                np.sum((th[j] - ga) ** 2) + 1e-14
            )
        return total

    ours = objective(np.concatenate([model.coef_.ravel(), gamma]))
    start = np.concatenate([_ols(X, y, tasks).ravel(), np.zeros(d)])
    ref = minimize(objective, start, method="L-BFGS-B", options={"maxiter": 20000})
    assert ours <= ref.fun + 1e-7


def test_mean_regularized_closed_form_matches_the_joint_linear_system():
    X, y, tasks, _ = _tasks(spread=1.0, seed=15, sizes=[10, 40, 25, 3, 40, 30], d=5)
    lam = 0.2
    model = MeanRegularizedRegressor(reg_lambda=lam, fit_intercept=False, scaling=None)
    model.fit(X, y, tasks=tasks)
    m, d = 6, 5
    # stationarity of sum_j [1/(2n_j)||y_j - X_j t_j||^2 + lam/2 ||t_j - b||^2]
    K = np.zeros(((m + 1) * d, (m + 1) * d))
    r = np.zeros((m + 1) * d)
    for j in range(m):
        Xj, yj = X[tasks == j], y[tasks == j]
        n = Xj.shape[0]
        sl = slice(j * d, (j + 1) * d)
        K[sl, sl] = Xj.T @ Xj / n + lam * np.eye(d)
        K[sl, m * d :] = -lam * np.eye(d)
        K[m * d :, sl] = -lam * np.eye(d)
        K[m * d :, m * d :] += lam * np.eye(d)
        r[sl] = Xj.T @ yj / n
    sol = np.linalg.solve(K, r)
    np.testing.assert_allclose(model.coef_, sol[: m * d].reshape(m, d), atol=1e-9)
    np.testing.assert_allclose(model.center_, sol[m * d :], atol=1e-9)


def test_independent_ridge_matches_closed_form():
    X, y, tasks, _ = _tasks(d=6, sizes=[4, 30, 30, 30, 30, 30])
    model = IndependentTaskRegressor(reg_lambda=0.1, fit_intercept=False).fit(X, y, tasks=tasks)
    for j in range(6):
        Xj, yj = X[tasks == j], y[tasks == j]
        n = Xj.shape[0]
        ref = np.linalg.solve(Xj.T @ Xj / n + 0.1 * np.eye(6), Xj.T @ yj / n)
        np.testing.assert_allclose(model.coef_[j], ref, atol=1e-10)


def test_contaminated_generator_settings():
    data = make_contaminated_tasks(
        n_tasks=20, n_samples=12, n_features=4, epsilon=0.25, random_state=0
    )
    assert data.outliers.sum() == 5
    assert np.all(data.coef[:, 0] >= 0)
    np.testing.assert_allclose(np.linalg.norm(data.coef[data.outliers], axis=1), 10.0)
    np.testing.assert_allclose(data.second_moment[0], np.arange(1, 5) ** -2.0 / 4)
    spiked = make_contaminated_tasks(
        n_tasks=50,
        n_features=4,
        epsilon=0.5,
        delta=0.5,
        center="dense",
        balancedness=5,
        random_state=0,
    )
    inl = spiked.second_moment[~spiked.outliers]
    assert set(np.argmax(inl, axis=1)) == {0, 1}
    mom = TaskMoments(
        spiked.X, spiked.y, np.ones(spiked.X.shape[0]), np.arange(0, 50 * 100 + 1, 100), False
    )
    assert mom.m == 50


@pytest.mark.parametrize("B", [5.0, 10.0, 20.0])
def test_balancedness_design_matches_the_reference_code(B):
    # Kim's reference code gives every task, outliers included, the spiked
    # moment eta I + (1 - eta) e_g e_g^T (times 1/d); only minority inliers
    # have g = 2. B is then exactly the inliers' population balancedness.
    d = 6
    data = make_contaminated_tasks(
        n_tasks=50,
        n_samples=10,
        n_features=d,
        epsilon=0.5,
        delta=0.5,
        alpha=1.0,
        center="dense",
        balancedness=B,
        random_state=1,
    )
    n_in = 25
    n_min = int(min(max(1, np.floor(n_in / B)), n_in // 2))
    p_min = n_min / n_in
    eta = float(np.clip((1 / B - p_min) / (1 - p_min), 0.0, 1.0))
    majority = np.full(d, eta) / d
    majority[0] = 1.0 / d
    np.testing.assert_allclose(data.second_moment[data.outliers], np.tile(majority, (25, 1)))
    inl = data.second_moment[~data.outliers]
    assert np.sum(np.argmax(inl, axis=1) == 1) == n_min
    S = inl.mean(axis=0)
    np.testing.assert_allclose(np.max(inl[:, S > 0] / S[S > 0]), B, rtol=1e-12)
    if B == 5.0:  # p_min = 1/B: eta = 0, every task's design has rank one
        assert np.all(np.linalg.matrix_rank(data.Xs[0]) == 1)


def test_numba_route_matches_the_numpy_reference():
    from mvlearn_ext.multitask._reference import numpy_robust_fit

    data = make_contaminated_tasks(
        n_tasks=40,
        n_samples=[6, 30] * 20,
        n_features=10,
        alpha=0.5,
        epsilon=0.2,
        random_state=2,
    )
    model = RobustMultiTaskRegressor(reg_lambda=0.8, fit_intercept=False, tol=1e-13)
    model.fit(data.X, data.y, tasks=data.tasks)
    coef, beta, _ = numpy_robust_fit(data.X, data.y, data.tasks, 40, 0.8, tol=1e-13)
    assert 0 < model.fused_.sum() < 40
    np.testing.assert_allclose(model.center_, beta, atol=1e-8)
    np.testing.assert_allclose(model.coef_, coef, atol=1e-7)


@given(
    sizes=st.lists(st.integers(2, 9), min_size=1, max_size=5),
    d=st.integers(1, 7),
    seed=st.integers(0, 2**31 - 1),
)
@settings(max_examples=25, deadline=None)
def test_kernels_on_arbitrary_shapes_match_numpy(sizes, d, seed):
    """Moments, ranks and pseudo-inverse solutions for any task sizes (n_j < d included)."""
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    X = rng.normal(size=(n, d))
    y = rng.normal(size=n)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    S, b, _, _, _ = task_moments(X, y, np.ones(n), starts, False)
    evals, evecs, rank, theta, c0 = task_eigh(S, b, 1e-12)
    for j in range(len(sizes)):
        Xj, yj = X[starts[j] : starts[j + 1]], y[starts[j] : starts[j + 1]]
        np.testing.assert_allclose(S[j], Xj.T @ Xj / len(yj), atol=1e-12)
        assert rank[j] == np.linalg.matrix_rank(Xj)
        ols = np.linalg.lstsq(Xj, yj, rcond=None)[0]
        np.testing.assert_allclose(Xj @ theta[j], Xj @ ols, atol=1e-8)
        np.testing.assert_allclose(theta[j], ols, atol=1e-6 * (1 + np.abs(ols).max()))


def test_clustered_armul_recovers_clusters_and_reduces_to_vanilla():
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(16)
    m, n, d = 18, 50, 4
    centers = 2.0 * np.eye(d)[:3]
    truth = np.arange(m) % 3
    theta = centers[truth] + 0.1 * rng.normal(size=(m, d))
    X = rng.normal(size=(m * n, d))
    tasks = np.repeat(np.arange(m), n)
    y = np.einsum("ik,ik->i", X, theta[tasks]) + rng.normal(size=m * n)
    model = ClusteredARMULRegressor(3, reg_lambda=0.5, fit_intercept=False, random_state=0)
    model.fit(X, y, tasks=tasks)
    assert adjusted_rand_score(truth, model.labels_) == 1.0
    assert np.all(np.diff(model.objective_) <= 1e-12)
    err = np.mean(np.sum((model.coef_ - theta) ** 2, axis=1))
    itl = IndependentTaskRegressor(fit_intercept=False).fit(X, y, tasks=tasks)
    assert err < np.mean(np.sum((itl.coef_ - theta) ** 2, axis=1))
    one = ClusteredARMULRegressor(1, reg_lambda=0.5, fit_intercept=False, tol=1e-13)
    vanilla = ARMULRegressor(reg_lambda=0.5, fit_intercept=False, tol=1e-13)
    np.testing.assert_allclose(
        one.fit(X, y, tasks=tasks).coef_, vanilla.fit(X, y, tasks=tasks).coef_, atol=1e-6
    )


# -- low-rank ARMUL ----------------------------------------------------------------------


def _low_rank_tasks(m=24, n=60, d=8, rank=2, n_out=4, seed=0, shared_X=False):
    """Task coefficients in a ``rank``-dimensional subspace, the first ``n_out`` outliers."""
    rng = np.random.default_rng(seed)
    basis = 2.0 * np.eye(d)[:rank]
    theta = rng.normal(size=(m, rank)) @ basis
    theta[:n_out] = 2.0 * rng.normal(size=(n_out, d))
    X = np.tile(rng.normal(size=(n, d)), (m, 1)) if shared_X else rng.normal(size=(m * n, d))
    tasks = np.repeat(np.arange(m), n)
    y = np.einsum("ik,ik->i", X, theta[tasks]) + rng.normal(size=m * n)
    return X, y, tasks, theta


def test_low_rank_armul_full_rank_is_independent_learning():
    # rank = min(m, d): the centres reach every task's own fit
    X, y, tasks, _ = _low_rank_tasks(m=6, d=4)
    model = LowRankARMULRegressor(4, reg_lambda=0.7, fit_intercept=False).fit(X, y, tasks=tasks)
    np.testing.assert_allclose(model.coef_, _ols(X, y, tasks), atol=1e-10)
    assert model.fused_.all()


def test_low_rank_armul_fused_limit_is_reduced_rank_regression():
    # C = inf fuses every task: min sum_j ||theta_j - theta_hat_j||^2_Sigma over rank-K
    # matrices. With one design shared by all tasks this is Eckart-Young in the Sigma metric.
    X, y, tasks, _ = _low_rank_tasks(m=10, d=5, rank=2, shared_X=True, seed=3)
    model = LowRankARMULRegressor(2, reg_lambda=np.inf, fit_intercept=False, tol=1e-13)
    model.fit(X, y, tasks=tasks)
    S = _sigma(X, tasks, 0)
    e, V = np.linalg.eigh(S)
    root, inv_root = (V * np.sqrt(e)) @ V.T, (V / np.sqrt(e)) @ V.T
    U, s, Vt = np.linalg.svd(_ols(X, y, tasks) @ root)
    expected = (U[:, :2] * s[:2]) @ Vt[:2] @ inv_root
    np.testing.assert_allclose(model.coef_, expected, atol=1e-6)
    assert model.fused_.all()
    np.testing.assert_allclose(model.centers_, model.loadings_ @ model.components_)


def test_low_rank_armul_beats_vanilla_in_its_setting_and_is_rotation_invariant():
    X, y, tasks, theta = _low_rank_tasks(seed=5)
    C = 0.5
    # the penalty on the coefficients of X, whose objective is recomputed below
    lr = LowRankARMULRegressor(2, reg_lambda=C, fit_intercept=False, scaling=None)
    lr.fit(X, y, tasks=tasks)
    van = ARMULRegressor(reg_lambda=C, fit_intercept=False, scaling=None).fit(X, y, tasks=tasks)
    itl = IndependentTaskRegressor(fit_intercept=False).fit(X, y, tasks=tasks)

    def err(c):
        return np.mean(np.sum((c - theta) ** 2, axis=1)[4:])  # inlier tasks

    assert err(lr.coef_) < err(van.coef_)
    assert err(lr.coef_) < err(itl.coef_)
    # the objective is no worse than the SVD warm start's, and the fit is stationary
    from mvlearn_ext.multitask._kernels import armul_prox_tasks

    starts = np.searchsorted(tasks, np.arange(tasks.max() + 2)).astype(np.int64)
    mom = TaskMoments(X, y, np.ones(y.shape[0]), starts, False)
    lam = C * np.sqrt(mom.d / mom.n)
    w = mom.n / mom.n.sum()
    Uo, so, Vto = np.linalg.svd(_ols(X, y, tasks), full_matrices=False)
    start = (Uo[:, :2] * so[:2]) @ Vto[:2]
    args = (mom.Sigma, mom.b, mom.evals, mom.evecs)
    assert lr.objective_ <= armul_prox_tasks(*args, start, lam, w)[1].sum()
    G = armul_prox_tasks(*args, np.ascontiguousarray(lr.centers_), lam, w)[2]
    assert np.abs(G.T @ lr.loadings_).max() < 1e-6 and np.abs(G @ lr.components_.T).max() < 1e-6
    # rotations of the features leave the predictions unchanged
    Q, _ = np.linalg.qr(np.random.default_rng(1).normal(size=(8, 8)))
    rot = LowRankARMULRegressor(2, reg_lambda=C, fit_intercept=False, tol=1e-13, scaling=None)
    ref = LowRankARMULRegressor(2, reg_lambda=C, fit_intercept=False, tol=1e-13, scaling=None)
    np.testing.assert_allclose(
        rot.fit(X @ Q, y, tasks=tasks).predict(X @ Q, tasks=tasks),
        ref.fit(X, y, tasks=tasks).predict(X, tasks=tasks),
        atol=1e-6,
    )


def test_variant_cv_refits_the_selected_value_with_the_same_seed():
    from mvlearn_ext.multitask import ClusteredARMULRegressorCV, LowRankARMULRegressorCV

    X, y, tasks, _ = _low_rank_tasks(m=12, n=30, d=4, seed=7)
    grid = [0.05, 0.5, 2.0]
    cv = ClusteredARMULRegressorCV(grid, cv=3, n_clusters=2, n_init=2, random_state=4)
    cv.fit(X, y, tasks=tasks)
    ref = ClusteredARMULRegressor(2, reg_lambda=cv.reg_lambda_, n_init=2, random_state=4)
    np.testing.assert_array_equal(cv.coef_, ref.fit(X, y, tasks=tasks).coef_)
    np.testing.assert_array_equal(cv.labels_, ref.labels_)
    lr = LowRankARMULRegressorCV(grid, cv=3, rank=2, random_state=4).fit(X, y, tasks=tasks)
    assert lr.reg_lambda_ in grid and lr.cv_results_["mean_test_mse"].shape == (3,)
    ref = LowRankARMULRegressor(2, reg_lambda=lr.reg_lambda_).fit(X, y, tasks=tasks)
    np.testing.assert_array_equal(lr.coef_, ref.coef_)
    np.testing.assert_array_equal(lr.components_, ref.components_)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize(
    "make",
    [
        lambda s: ARMULRegressor(reg_lambda=0.6, tol=1e-13, scaling=s),
        lambda s: LowRankARMULRegressor(2, reg_lambda=0.6, tol=1e-13, scaling=s),
        lambda s: ClusteredARMULRegressor(2, reg_lambda=0.6, random_state=0, scaling=s),
        lambda s: MeanRegularizedRegressor(reg_lambda=0.2, scaling=s),
    ],
    ids=["ARMUL", "LowRankARMUL", "ClusteredARMUL", "MeanRegularized"],
)
def test_zscore_is_the_unscaled_fit_on_standardised_features(make, fit_intercept):
    """scaling="zscore" is scaling=None on X / s, s the weighted standard deviations."""
    X, y, tasks, _ = _tasks(spread=1.5, seed=17)
    X = X * np.array([1e-3, 0.5, 1.0, 7.0, 1e4]) + (3.0 if fit_intercept else 0.0)
    sw = np.random.default_rng(18).uniform(0.5, 2.0, size=y.shape[0])
    w = sw / sw.sum()
    Xc = X - w @ X if fit_intercept else X
    s = np.sqrt(w @ Xc**2)
    model = make("zscore").set_params(fit_intercept=fit_intercept)
    model.fit(X, y, tasks=tasks, sample_weight=sw)
    ref = make(None).set_params(fit_intercept=fit_intercept)
    ref.fit(X / s, y, tasks=tasks, sample_weight=sw)
    np.testing.assert_allclose(model.coef_ * s, ref.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(model.intercept_, ref.intercept_, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize(
    "make",
    [
        lambda s: ARMULRegressor(reg_lambda=0.6, tol=1e-13, scaling=s),
        lambda s: MeanRegularizedRegressor(reg_lambda=0.2, scaling=s),
    ],
    ids=["ARMUL", "MeanRegularized"],
)
def test_global_is_the_unscaled_fit_on_x_over_one_spread(make, fit_intercept):
    """scaling="global" is scaling=None on X / s, s the RMS of the features' spreads."""
    X, y, tasks, _ = _tasks(spread=1.5, seed=17)
    X = X * np.array([1e-3, 0.5, 1.0, 7.0, 1e4]) + (3.0 if fit_intercept else 0.0)
    sw = np.random.default_rng(18).uniform(0.5, 2.0, size=y.shape[0])
    w = sw / sw.sum()
    Xc = X - w @ X if fit_intercept else X
    s = np.sqrt(np.mean(w @ Xc**2))
    model = make("global").set_params(fit_intercept=fit_intercept)
    model.fit(X, y, tasks=tasks, sample_weight=sw)
    ref = make(None).set_params(fit_intercept=fit_intercept)
    ref.fit(X / s, y, tasks=tasks, sample_weight=sw)
    np.testing.assert_allclose(model.coef_ * s, ref.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(model.intercept_, ref.intercept_, rtol=1e-6, atol=1e-8)
