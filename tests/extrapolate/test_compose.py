"""RTE, discrete regime: compositions of primitives, length and compositional extrapolation."""

import numpy as np
import pytest

from mvlearn_ext.extrapolate import (
    PRIMITIVES,
    CompositionalTaskExtrapolator,
    InductiveCompositionRegressor,
    all_codes,
    compose_primitives,
    make_composition_tasks,
)

KW = dict(hidden_layer_sizes=(32, 32), max_iter=100, random_state=0)


def test_compose_applies_primitives_in_order():
    x = np.linspace(-1, 1, 9)
    sin, square = PRIMITIVES[0][1], PRIMITIVES[1][1]
    np.testing.assert_allclose(compose_primitives((0, 1), x), square(sin(x)))
    np.testing.assert_allclose(compose_primitives((), x), x)
    for code in all_codes(4, [1, 2, 3]):
        v = compose_primitives(code, x)
        assert np.abs(v).max() <= 1.0 + 1e-12
    assert len(all_codes(4, [0, 1, 2, 3])) == 1 + 4 + 16 + 64


def test_make_composition_tasks_exact_without_noise():
    codes = [(0,), (1, 2)]
    X, Y = make_composition_tasks(codes, n_points=11, noise=0.0, random_state=0)
    np.testing.assert_allclose(Y[1], compose_primitives((1, 2), X[1]))
    Xr, _ = make_composition_tasks(codes, grid=False, random_state=0)
    assert np.all(np.diff(Xr, axis=1) >= 0)


@pytest.fixture(scope="module")
def length_setup():
    codes = all_codes(4, [1, 2, 3])
    X, Y = make_composition_tasks(codes, random_state=0)
    rte = CompositionalTaskExtrapolator(**KW).fit(codes, X, Y)
    ind = InductiveCompositionRegressor(**KW).fit(codes, X, Y)
    return codes, rte, ind


def test_pairs_are_the_one_step_prefixes(length_setup):
    codes, rte, _ = length_setup
    assert rte.n_pairs_ == len(codes)  # every code of length 1..3 has its prefix
    assert rte.codes_[0] == ()
    sub = [c for c in codes if len(c) != 2]  # length-3 codes lose their prefixes
    X, Y = make_composition_tasks(sub, n_points=11, random_state=0)
    small = CompositionalTaskExtrapolator(hidden_layer_sizes=(4,), max_iter=5).fit(sub, X, Y)
    assert small.n_pairs_ == 4


def test_clean_context_of_a_library_extension_is_decomposed_to_a_matching_chain(length_setup):
    _, rte, _ = length_setup
    x = np.linspace(-1, 1, 12)
    target = (1, 3, 0, 2)
    anchor, chain = rte.decompose(x, compose_primitives(target, x))
    assert (*anchor, *chain) == target


def test_length_extrapolation_beats_the_direct_model(length_setup):
    _, rte, ind = length_setup
    rng = np.random.default_rng(0)
    xq = np.linspace(-1, 1, 41)
    rte_mse, ind_mse = [], []
    for _ in range(12):
        code = tuple(rng.integers(0, 4, size=4))
        xc = np.sort(rng.uniform(-1, 1, 10))
        yc = compose_primitives(code, xc) + 0.02 * rng.normal(size=10)
        truth = compose_primitives(code, xq)
        rte_mse.append(np.mean((rte.predict(xq, xc, yc) - truth) ** 2))
        ind_mse.append(np.mean((ind.predict(xq, code) - truth) ** 2))
    assert np.mean(rte_mse) < 0.5 * np.mean(ind_mse)


def test_predict_relation_matches_the_decomposed_prediction(length_setup):
    _, rte, _ = length_setup
    x = np.linspace(-1, 1, 10)
    y = compose_primitives((2, 2, 1, 0), x)
    anchor, chain = rte.decompose(x, y)
    np.testing.assert_allclose(rte.predict(x, x, y), rte.predict_relation(x, anchor, chain))


def test_seed_determinism():
    codes = all_codes(2, [1, 2])
    X, Y = make_composition_tasks(codes, n_points=11, random_state=0)
    kw = dict(n_primitives=2, hidden_layer_sizes=(8,), max_iter=20)
    x = np.linspace(-1, 1, 5)
    a = CompositionalTaskExtrapolator(random_state=1, **kw).fit(codes, X, Y)
    b = CompositionalTaskExtrapolator(random_state=1, **kw).fit(codes, X, Y)
    c = CompositionalTaskExtrapolator(random_state=2, **kw).fit(codes, X, Y)
    pa = a.predict_relation(x, (0,), (1,))
    np.testing.assert_array_equal(pa, b.predict_relation(x, (0,), (1,)))
    assert not np.allclose(pa, c.predict_relation(x, (0,), (1,)))


def test_bad_input_is_refused_clearly(length_setup):
    _, rte, ind = length_setup
    X, Y = make_composition_tasks([(0,), (1,)], n_points=5, random_state=0)
    est = CompositionalTaskExtrapolator()
    with pytest.raises(ValueError, match="one code per task"):
        est.fit([(0,)], X, Y)
    with pytest.raises(ValueError, match="outside 0..3"):
        est.fit([(0,), (4,)], X, Y)
    with pytest.raises(ValueError, match="distinct"):
        est.fit([(0,), (0,)], X, Y)
    with pytest.raises(ValueError, match="empty code"):
        est.fit([(), (1,)], X, Y)
    with pytest.raises(ValueError, match="nothing to learn"):
        est.fit([(0, 1), (1, 1)], X, Y)
    with pytest.raises(TypeError, match="hold ints"):
        est.fit([(0.5,), (1,)], X, Y)
    with pytest.raises(ValueError, match="not a library task"):
        rte.predict_relation([0.0], (3, 3, 3, 3), ())
    with pytest.raises(ValueError, match="same length"):
        rte.decompose([0.0, 0.1], [0.0])
    with pytest.raises(ValueError, match="longer than max_length"):
        ind.predict([0.0], (0,) * 9)


@pytest.mark.parametrize(
    "x, exc, match",
    [
        (np.array(["0.5", "1.0"]), TypeError, "x must be a numeric array"),
        (np.array([0.5, 1.0]) + 1j, ValueError, "x holds complex values"),
        (np.array([0.5, np.nan]), ValueError, "x contains NaN"),
        (np.array([0.5, np.inf]), ValueError, "x contains infinity"),
        (np.array([1e300, 1.0]), ValueError, "x holds values too large"),
    ],
    ids=["str", "complex", "nan", "inf", "huge"],
)
def test_compose_refuses_unusable_inputs_by_name(x, exc, match):
    with pytest.raises(exc, match=match):
        compose_primitives((1, 2), x)


def test_compose_of_no_points_is_empty():
    assert compose_primitives((1,), np.empty(0)).shape == (0,)


def test_fit_accepts_dataframes_and_an_empty_query_gives_an_empty_result():
    pd = pytest.importorskip("pandas")
    codes = all_codes(4, [1, 2])
    X, Y = make_composition_tasks(codes, random_state=0)
    kw = dict(hidden_layer_sizes=(8,), max_iter=20, random_state=0)
    est = CompositionalTaskExtrapolator(**kw).fit(codes, pd.DataFrame(X), pd.DataFrame(Y))
    ref = CompositionalTaskExtrapolator(**kw).fit(codes, X, Y)
    np.testing.assert_array_equal(est.predict(X[5], X[5], Y[5]), ref.predict(X[5], X[5], Y[5]))
    assert est.predict(np.array([]), X[5], Y[5]).shape == (0,)
    ind = InductiveCompositionRegressor(**kw).fit(codes, pd.DataFrame(X), pd.DataFrame(Y))
    assert ind.predict(np.array([]), code=(0, 1)).shape == (0,)
