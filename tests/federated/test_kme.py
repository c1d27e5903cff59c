"""Personalised FL by KME multi-task averaging (reconstruction): oracles and regimes."""

import numpy as np
import pytest

from mvlearn_ext.federated import (
    KMEPersonalizedRidge,
    RandomFourierMap,
    agent_kme_statistics,
    agent_ridge_statistics,
    collaboration_weights,
    ditto_ridge,
    mmd2_unbiased,
    weighted_ridge,
)


def clustered_agents(r, *, B=10, n=200, p=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(2, p))
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    Xs, ys, th = [], [], []
    for b in range(B):
        t = np.ones(p) + r * centers[b % 2]
        X = rng.normal(size=(n, p))
        Xs.append(X)
        ys.append(X @ t + 0.5 * rng.normal(size=n))
        th.append(t)
    return Xs, ys, np.array(th)


def test_rff_unbiased_with_predicted_spread():
    x, y = np.array([[0.3, -0.2]]), np.array([[1.0, 0.4]])
    k = np.exp(-np.sum((x - y) ** 2) / 2)
    D = 64
    vals = [
        (
            RandomFourierMap(D, 2, random_state=s).transform(x)
            @ RandomFourierMap(D, 2, random_state=s).transform(y).T
        )[0, 0]
        for s in range(2000)
    ]
    sd = np.sqrt((1 + k**4 / 2 - k**2) / D)
    assert abs(np.mean(vals) - k) < 4 * sd / np.sqrt(2000)
    assert np.std(vals) == pytest.approx(sd, rel=0.1)


def test_mmd_kernel_sums_match_rff():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(100, 2)), rng.normal(loc=0.7, size=(120, 2))
    exact = mmd2_unbiased(X, Y)
    fm = RandomFourierMap(20000, 2, random_state=1)
    mx, vx = agent_kme_statistics(fm.transform(X))
    my, vy = agent_kme_statistics(fm.transform(Y))
    # ||mu_x - mu_y||^2 is biased up by v_x + v_y (within-sample diagonal terms)
    approx = np.sum((mx - my) ** 2) - vx - vy
    assert approx == pytest.approx(exact, abs=0.02)
    # identical distributions: expectation 0 before clipping
    vals = [mmd2_unbiased(*np.random.default_rng(s).normal(size=(2, 30, 2))) for s in range(300)]
    assert abs(np.mean(vals)) < 3 * np.std(vals) / np.sqrt(300)


def test_unbiased_risk_estimate_by_monte_carlo():
    # Gaussian features in R^d: mu_hat_c ~ mean of n_c draws of N(mu_c, I)
    rng = np.random.default_rng(2)
    d, n = 5, np.array([10, 20, 40])
    mu = rng.normal(size=(3, d)) * 0.3
    omega = np.array([0.5, 0.3, 0.2])
    b = 0
    est, true = [], []
    for _ in range(4000):
        samples = [mu[c] + rng.normal(size=(n[c], d)) for c in range(3)]
        stats = [agent_kme_statistics(S) for S in samples]
        M = np.stack([m for m, _ in stats])
        v = np.array([s for _, s in stats])
        agg = omega @ M
        est.append(np.sum((agg - M[b]) ** 2) + 2 * omega[b] * v[b] - v[b])
        true.append(np.sum((agg - mu[b]) ** 2))
    expected = np.sum((omega @ mu - mu[b]) ** 2) + np.sum(omega**2 * d / n)
    assert np.mean(true) == pytest.approx(expected, rel=0.05)
    assert abs(np.mean(est) - np.mean(true)) < 4 * np.std(
        np.array(est) - np.array(true)
    ) / np.sqrt(4000)


def test_weights_simplex_and_permutation_equivariant():
    rng = np.random.default_rng(3)
    M = rng.normal(size=(6, 8))
    v = rng.uniform(0.01, 0.1, 6)
    for nu in (0.0, 0.3):
        W = collaboration_weights(M, v, nu=nu)
        assert W.min() >= 0
        np.testing.assert_allclose(W.sum(1), 1)
        p = rng.permutation(6)
        np.testing.assert_allclose(
            collaboration_weights(M[p], v[p], nu=nu), W[np.ix_(p, p)], atol=1e-8
        )
    np.testing.assert_array_equal(collaboration_weights(M, v, method="local"), np.eye(6))
    Wg = collaboration_weights(M, v, method="global", n_samples=[1, 1, 2, 2, 2, 2])
    np.testing.assert_allclose(Wg[3], [0.1, 0.1, 0.2, 0.2, 0.2, 0.2])


def test_weighted_ridge_limits():
    Xs, ys, _ = clustered_agents(1.0, B=3, n=50)
    stats = [agent_ridge_statistics(X, y) for X, y in zip(Xs, ys, strict=True)]
    S = np.stack([s[0] for s in stats])
    s = np.stack([s[1] for s in stats])
    local = weighted_ridge(S, s, np.eye(3), alpha=0.0)
    for b in range(3):
        Xa = np.hstack([np.ones((50, 1)), Xs[b]])
        np.testing.assert_allclose(local[b], np.linalg.lstsq(Xa, ys[b], rcond=None)[0], atol=1e-10)
    pooled = weighted_ridge(S, s, np.full((3, 3), 1 / 3), alpha=0.0)
    Xa = np.hstack([np.ones((150, 1)), np.vstack(Xs)])
    np.testing.assert_allclose(
        pooled[0], np.linalg.lstsq(Xa, np.concatenate(ys), rcond=None)[0], atol=1e-10
    )
    np.testing.assert_allclose(
        ditto_ridge(S, s, pooled[0], reg_lambda=0.0, alpha=0.0), local, atol=1e-9
    )
    np.testing.assert_allclose(
        ditto_ridge(S, s, pooled[0], reg_lambda=1e9), np.tile(pooled[0], (3, 1)), atol=1e-6
    )


def test_regimes_identical_global_far_local():
    def excess(r, w):
        Xs, ys, th = clustered_agents(r)
        m = KMEPersonalizedRidge(weights=w, random_state=0).fit(Xs, ys)
        return np.mean(np.sum((m.coef_ - th) ** 2, 1))

    # identical agents: close to the global fit, clearly better than local
    e = {w: excess(0.0, w) for w in ("unbiased", "local", "global")}
    assert e["unbiased"] < 0.5 * e["local"]
    # far-apart agents: close to the local fit, far better than global
    e = {w: excess(10.0, w) for w in ("unbiased", "local", "global")}
    assert e["unbiased"] < 3 * e["local"] and e["unbiased"] < 0.01 * e["global"]


def test_estimator_contract_and_errors():
    Xs, ys, _ = clustered_agents(1.0, B=3, n=30)
    m = KMEPersonalizedRidge(random_state=0).fit(Xs, ys)
    m2 = KMEPersonalizedRidge(random_state=0).fit(Xs, ys)
    np.testing.assert_array_equal(m.weights_, m2.weights_)
    assert m.predict(Xs[0], 1).shape == (30,)
    assert KMEPersonalizedRidge(bandwidth="median", random_state=0).fit(Xs, ys).bandwidth_ > 0
    with pytest.raises(ValueError, match="agent must be"):
        m.predict(Xs[0], 5)
    with pytest.raises(ValueError, match="agent 1"):
        KMEPersonalizedRidge().fit([Xs[0], Xs[1][:, :2]], ys[:2])
    with pytest.raises(ValueError, match="NaN"):
        KMEPersonalizedRidge().fit([np.full((5, 3), np.nan)], [np.zeros(5)])
    with pytest.raises(ValueError):
        KMEPersonalizedRidge(nu=2.0).fit(Xs, ys)


def test_predict_before_fit_is_not_fitted_and_agent_is_required():
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.estimator_checks import check_estimators_unfitted

    check_estimators_unfitted("KMEPersonalizedRidge", KMEPersonalizedRidge())
    with pytest.raises(NotFittedError):
        KMEPersonalizedRidge().predict(np.zeros((2, 3)), 0)
    Xs, ys, _ = clustered_agents(1.0, B=3, n=30)
    m = KMEPersonalizedRidge(n_components=16, random_state=0).fit(Xs, ys)
    with pytest.raises(ValueError, match="agent is required: the model was fitted on 3 agents"):
        m.predict(Xs[0])
    one = KMEPersonalizedRidge(n_components=16, random_state=0).fit(Xs[:1], ys[:1])
    np.testing.assert_array_equal(one.predict(Xs[0]), one.predict(Xs[0], 0))


def test_nan_in_ys_is_named():
    Xs, ys, _ = clustered_agents(1.0, B=3, n=30)
    ys = [y.copy() for y in ys]
    ys[2][4] = np.nan
    with pytest.raises(ValueError, match=r"ys\[2\] contains NaN \(first at entry 4\)"):
        KMEPersonalizedRidge(n_components=16).fit(Xs, ys)


def test_a_huge_feature_dimension_is_refused_before_allocation():
    Xs, ys, _ = clustered_agents(1.0, B=2, n=30)
    with pytest.raises(ValueError, match=r"n_components=1000000000000 needs an array of"):
        KMEPersonalizedRidge(n_components=10**12).fit(Xs, ys)


@pytest.mark.parametrize("c", [1e-300, 1e-150, 1e150])
def test_fit_does_not_depend_on_the_units_of_x(c):
    """Standardised features: X -> c X divides the coefficients by c, nothing else."""
    Xs, ys, _ = clustered_agents(1.0, B=3, n=30)
    ref = KMEPersonalizedRidge(n_components=32, random_state=0).fit(Xs, ys)
    scaled = KMEPersonalizedRidge(n_components=32, random_state=0).fit([c * X for X in Xs], ys)
    np.testing.assert_allclose(scaled.weights_, ref.weights_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(scaled.coef_ * c, ref.coef_, rtol=1e-9)
    for b in range(3):
        pred = scaled.predict(c * Xs[b], b)
        np.testing.assert_allclose(pred, ref.predict(Xs[b], b), rtol=1e-9, atol=1e-12)
        assert np.ptp(pred) > 0.1 * np.ptp(ys[b])


def test_protocol_matches_the_estimator_with_standardised_ridge():
    from mvlearn_ext.federated import InProcessSimulator, KMEProtocolClient, KMEProtocolServer

    Xs, ys, _ = clustered_agents(1.0, B=3, n=30)
    Xs = [X * 1e-3 for X in Xs]  # features in other units than the targets
    server = KMEProtocolServer(3, n_components=32, random_state=0)
    clients = [KMEProtocolClient(b, X, y) for b, (X, y) in enumerate(zip(Xs, ys, strict=True))]
    InProcessSimulator(server, clients).run(server.n_rounds)
    est = KMEPersonalizedRidge(n_components=32, random_state=0).fit(Xs, ys)
    np.testing.assert_allclose(server.z_scale_, est.z_scale_, rtol=1e-12)
    np.testing.assert_allclose(server.weights_, est.weights_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(server.coef_, est.coef_, rtol=1e-9)


def test_the_statistics_functions_name_the_argument_at_fault():
    X = np.random.default_rng(0).normal(size=(6, 2))
    with pytest.raises(ValueError, match=r"Y contains NaN"):
        mmd2_unbiased(X, np.where(X > 1, np.nan, X))
    with pytest.raises(ValueError, match="X holds values too large"):
        mmd2_unbiased(X * 1e300, X)
    with pytest.raises(TypeError, match="Phi must be a numeric array"):
        agent_kme_statistics(X.astype(str))
    with pytest.raises(ValueError, match="y contains infinity"):
        agent_ridge_statistics(X, np.r_[np.inf, np.zeros(5)])
    with pytest.raises(ValueError, match="n_samples must be >= 0"):
        collaboration_weights(np.eye(2), np.ones(2), method="global", n_samples=[3, -1])
    gram, moment, _ = agent_ridge_statistics(X, X[:, 0])
    grams, moments = np.stack([gram, gram]), np.stack([moment, moment])
    with pytest.raises(ValueError, match=r"weights must be 2-D"):
        weighted_ridge(grams, moments, np.full(2, 0.5))
    with pytest.raises(ValueError, match=r"moments is empty"):
        ditto_ridge(grams, moments[:0], np.zeros(3))
    with pytest.raises(ValueError, match=r"global_coef must have shape \(3,\)"):
        ditto_ridge(grams, moments, np.zeros(2))


@pytest.mark.parametrize(
    "Z, exc, match",
    [
        ([[0.0, np.nan]], ValueError, "^Z .*NaN"),
        ([[0.0, np.inf]], ValueError, "^Z .*infinity"),
        ([[0.0, 1j]], ValueError, "^Z .*complex"),
        ([["0", "1"]], TypeError, "^Z .*numeric"),
        ([[0.0, 1e200]], ValueError, "^Z .*too large"),
        ([[0.0, 1.0, 2.0]], ValueError, r"^Z must have shape \(n, 2\)"),
    ],
)
def test_rff_transform_refuses_unusable_points(Z, exc, match):
    fmap = RandomFourierMap(8, 2, random_state=0)
    with pytest.raises(exc, match=match):
        fmap.transform(Z)
    assert fmap.transform(np.zeros((0, 2))).shape == (0, 8)


def test_kme_random_state_as_documented():
    """random_state: an int, a RandomState or None (the constraint of scikit-learn)."""
    Xs, ys = clustered_agents(0.0, B=3, n=30)[:2]
    for random_state in (0, np.random.RandomState(0), None):
        KMEPersonalizedRidge(n_components=8, random_state=random_state).fit(Xs, ys)
    doc = KMEPersonalizedRidge.__doc__
    assert "random_state : int, RandomState instance or None" in doc


def test_kme_feature_names_checked_at_predict():
    pd = pytest.importorskip("pandas")
    Xs, ys = clustered_agents(0.0, B=3, n=30)[:2]
    frames = [pd.DataFrame(X, columns=["a", "b", "c"]) for X in Xs]
    model = KMEPersonalizedRidge(n_components=8, random_state=0).fit(frames, ys)
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    expected = Xs[1] @ model.coef_[1] + model.intercept_[1]
    np.testing.assert_allclose(model.predict(frames[1], agent=1), expected)
    with pytest.raises(ValueError, match="same order"):
        model.predict(frames[1][["c", "a", "b"]], agent=1)
    with pytest.raises(ValueError, match="unseen at fit"):
        model.predict(frames[1].rename(columns={"a": "z"}), agent=1)
    with pytest.warns(UserWarning, match="does not have valid feature names") as record:
        model.predict(Xs[1], agent=1)
    assert record[0].filename == __file__
    plain = KMEPersonalizedRidge(n_components=8, random_state=0).fit(Xs, ys)
    assert not hasattr(plain, "feature_names_in_")
    with pytest.warns(UserWarning, match="fitted without feature names"):
        plain.predict(frames[0], agent=0)
    # refitting without names forgets them
    assert not hasattr(model.fit(Xs, ys), "feature_names_in_")


def test_kme_agents_feature_names_must_agree():
    pd = pytest.importorskip("pandas")
    Xs, ys = clustered_agents(0.0, B=3, n=30)[:2]
    frames = [pd.DataFrame(X, columns=["a", "b", "c"]) for X in Xs]
    frames[2] = frames[2][["b", "a", "c"]]
    with pytest.raises(ValueError, match=r"Xs\[2\] differ from those of Xs\[0\]"):
        KMEPersonalizedRidge(n_components=8, random_state=0).fit(frames, ys)
