"""RTE, continuous regime: decomposition, oracle ordering, in-support parity, errors."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from mvlearn_ext.extrapolate import (
    InductiveTaskRegressor,
    RelationalTaskExtrapolator,
    make_function_tasks,
)

SMALL = dict(hidden_layer_sizes=(32, 32), max_iter=150)


def _library(seed=0, n_tasks=60):
    rng = np.random.default_rng(seed)
    thetas = rng.uniform(0.5, 1.5, size=(n_tasks, 2))
    X, Y = make_function_tasks("quadratic", thetas, n_points=20, noise=0.05, random_state=seed)
    return thetas, X, Y


def _targets(low, high, n=20, seed=1, noise=0.1):
    rng = np.random.default_rng(seed)
    thetas = rng.uniform(low, high, size=(n, 2))
    Xc, Yc = make_function_tasks("quadratic", thetas, n_points=5, noise=noise, random_state=seed)
    Xq = np.tile(np.linspace(-1, 1, 41), (n, 1))
    return thetas, Xc, Yc, Xq, thetas[:, :1] * Xq**2 + thetas[:, 1:] * Xq


@pytest.fixture(scope="module")
def fitted():
    thetas, X, Y = _library()
    rte = RelationalTaskExtrapolator(n_pairs=600, random_state=0, **SMALL)
    rte.fit(X, Y, task_params=thetas)
    ind = InductiveTaskRegressor(random_state=0, **SMALL).fit(X, Y, task_params=thetas)
    return thetas, rte, ind


def test_delta_range_is_recorded_and_covers_the_demo_split(fitted):
    thetas, rte, _ = fitted
    diff = thetas[:, None, :] - thetas[None, :, :]
    assert np.all(rte.delta_min_ >= diff.min(axis=(0, 1)))
    assert np.all(rte.delta_max_ <= diff.max(axis=(0, 1)))
    assert np.all(rte.delta_min_ < -0.8) and np.all(rte.delta_max_ > 0.8)
    T, Xc, _, _, _ = _targets(1.9, 2.3, noise=0.0)
    for t, x in zip(T, Xc, strict=True):
        _, phi = rte.decompose(x, t[0] * x**2 + t[1] * x)
        assert np.all(phi >= rte.delta_min_) and np.all(phi <= rte.delta_max_)


def test_anchor_is_the_true_nearest_neighbour_on_clean_context(fitted):
    """Nearest in the parameters divided by their spread over the library."""
    thetas, rte, _ = fitted
    np.testing.assert_allclose(rte.param_scale_, thetas.std(axis=0), rtol=1e-12)
    T, Xc, _, _, _ = _targets(0.3, 2.3, noise=0.0, seed=4)
    for t, x in zip(T, Xc, strict=True):
        anchor, phi = rte.decompose(x, t[0] * x**2 + t[1] * x)
        dist = np.linalg.norm((thetas - t) / thetas.std(axis=0), axis=1)
        assert anchor == int(np.argmin(dist))
        np.testing.assert_allclose(thetas[anchor] + phi, t, atol=1e-8)


def test_oracle_ordering_on_out_of_support_tasks(fitted):
    thetas, rte, ind = fitted
    T, Xc, Yc, Xq, Fq = _targets(1.9, 2.3)
    mse_true, mse_est, mse_ind = [], [], []
    for t, xc, yc, xq, fq in zip(T, Xc, Yc, Xq, Fq, strict=True):
        k = int(np.argmin(np.linalg.norm(thetas - t, axis=1)))
        mse_true.append(np.mean((rte.predict_relation(xq, thetas[k], t - thetas[k]) - fq) ** 2))
        mse_est.append(np.mean((rte.predict(xq, xc, yc) - fq) ** 2))
        mse_ind.append(np.mean((ind.predict(xq, xc, yc) - fq) ** 2))
    assert np.mean(mse_true) <= np.mean(mse_est) <= np.mean(mse_ind)
    assert np.mean(mse_est) < 0.5 * np.mean(mse_ind)


def test_in_support_rte_is_not_worse_than_inductive_beyond_a_small_tolerance(fitted):
    _, rte, ind = fitted
    T, Xc, Yc, Xq, Fq = _targets(0.6, 1.4, seed=5)
    rte_mse = np.mean((rte.predict_tasks(Xq, Xc, Yc) - Fq) ** 2)
    ind_mse = np.mean((ind.predict_tasks(Xq, Xc, Yc) - Fq) ** 2)
    assert rte_mse <= ind_mse + 0.02


def test_more_candidates_never_fit_the_context_worse(fitted):
    thetas, rte, _ = fitted
    _, Xc, Yc, _, _ = _targets(1.9, 2.3, seed=6)
    try:
        for xc, yc in zip(Xc, Yc, strict=True):
            rte.set_params(n_candidates=1)
            a1, p1 = rte.decompose(xc, yc)
            rte.set_params(n_candidates=5)
            a5, p5 = rte.decompose(xc, yc)
            l1 = np.mean((rte.predict_relation(xc, thetas[a1], p1) - yc) ** 2)
            l5 = np.mean((rte.predict_relation(xc, thetas[a5], p5) - yc) ** 2)
            assert l5 <= l1 + 1e-12
    finally:
        rte.set_params(n_candidates=1)


def test_seed_determinism_and_variants():
    thetas, X, Y = _library(n_tasks=20)
    kw = dict(n_pairs=100, hidden_layer_sizes=(8,), max_iter=20)
    xq, xc = np.linspace(-1, 1, 5), np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    yc = 2 * xc**2 + 2 * xc
    a = RelationalTaskExtrapolator(random_state=3, **kw).fit(X, Y).predict(xq, xc, yc)
    b = RelationalTaskExtrapolator(random_state=3, **kw).fit(X, Y).predict(xq, xc, yc)
    c = RelationalTaskExtrapolator(random_state=4, **kw).fit(X, Y).predict(xq, xc, yc)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    for extra in ({"residual": False}, {"anchor_features": "grid", "n_anchor_grid": 4}):
        out = RelationalTaskExtrapolator(random_state=0, **kw, **extra).fit(X, Y)
        assert out.predict(xq, xc, yc).shape == (5,)
    ragged = RelationalTaskExtrapolator(random_state=0, **kw).fit(
        [x[: 5 + k % 7] for k, x in enumerate(X)], [y[: 5 + k % 7] for k, y in enumerate(Y)]
    )
    assert ragged.task_params_.shape == (20, 2)


def test_bad_input_is_refused_clearly(fitted):
    _, rte, ind = fitted
    X = np.zeros((3, 4))
    with pytest.raises(ValueError, match="tasks_x has 3 tasks but tasks_y has 2"):
        RelationalTaskExtrapolator().fit(X, X[:2])
    with pytest.raises(ValueError, match="task_params must have shape"):
        RelationalTaskExtrapolator().fit(X, X, task_params=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="family"):
        RelationalTaskExtrapolator(family="cubic").fit(X, X)
    with pytest.raises(ValueError, match="n_pairs"):
        RelationalTaskExtrapolator(n_pairs=0).fit(X, X)
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        RelationalTaskExtrapolator(hidden_layer_sizes=(0,)).fit(X, X)
    with pytest.raises(TypeError, match="lists of 1-D arrays"):
        RelationalTaskExtrapolator().fit(np.zeros(4), np.zeros(4))
    with pytest.raises(ValueError, match="at least 2 points"):
        rte.predict([0.0], [0.5], [1.0])
    with pytest.raises(ValueError, match="same length"):
        ind.predict([0.0], [0.5, 0.6], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        rte.predict([np.nan], [0.5, 0.6], [1.0, 2.0])
    with pytest.raises(ValueError, match="anchor_params and phi"):
        rte.predict_relation([0.0], [1.0], [0.0, 0.0])
    with pytest.raises(NotFittedError):
        RelationalTaskExtrapolator().predict([0.0], [0.1, 0.2], [0.0, 0.0])


@pytest.mark.slow
def test_demo_acceptance_rte_halves_the_inductive_mse():
    """Quadratic, train [0.5, 1.5]^2, test [1.9, 2.3]^2, 5 context points: RTE halves the MSE."""
    from mvlearn_ext._demo.extrapolate import parameter_scores

    res = parameter_scores(0)
    assert res["RTE"]["out"] < 0.5 * res["inductive"]["out"]


def test_clone_and_pickle_round_trip(fitted):
    import pickle

    from sklearn.base import clone

    _, rte, ind = fitted
    xq, xc = np.linspace(-1, 1, 7), np.array([-1.0, -0.3, 0.2, 0.6, 1.0])
    yc = 2.0 * xc**2 + 2.2 * xc
    for est in (rte, ind):
        again = pickle.loads(pickle.dumps(est))
        np.testing.assert_array_equal(est.predict(xq, xc, yc), again.predict(xq, xc, yc))
        fresh = clone(est)
        assert fresh.get_params() == est.get_params() and not hasattr(fresh, "family_")


def test_fit_accepts_dataframes_and_an_empty_query_gives_an_empty_result():
    pd = pytest.importorskip("pandas")
    thetas, X, Y = _library(n_tasks=12)
    kw = dict(hidden_layer_sizes=(8,), max_iter=20, random_state=0)
    xc = np.array([-0.9, -0.4, 0.0, 0.5, 1.0])
    yc = 2.0 * xc**2 + 2.0 * xc
    for cls in (RelationalTaskExtrapolator, InductiveTaskRegressor):
        extra = dict(n_pairs=50) if cls is RelationalTaskExtrapolator else {}
        est = cls(**kw, **extra).fit(pd.DataFrame(X), pd.DataFrame(Y), task_params=thetas)
        ref = cls(**kw, **extra).fit(X, Y, task_params=thetas)
        np.testing.assert_array_equal(est.predict(xc, xc, yc), ref.predict(xc, xc, yc))
        out = est.predict(np.array([]), xc, yc)
        assert isinstance(out, np.ndarray) and out.shape == (0,)
