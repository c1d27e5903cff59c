"""RTE's function families, task generator and pair sampler."""

import numpy as np
import pytest

from mvlearn_ext.extrapolate import (
    ExponentialFamily,
    QuadraticFamily,
    SinTrendFamily,
    get_family,
    make_function_tasks,
    sample_task_pairs,
)


@pytest.mark.parametrize(
    "family, theta",
    [
        (QuadraticFamily(), [2.1, -0.7]),
        (SinTrendFamily(), [2.7, 0.4]),
        (ExponentialFamily(), [1.8]),
    ],
)
def test_estimate_recovers_the_parameters_from_clean_points(family, theta):
    x = np.linspace(-1, 1, 15)
    y = family.evaluate(x, np.array(theta))
    np.testing.assert_allclose(family.estimate(x, y), theta, atol=1e-6)


def test_evaluate_broadcasts_over_tasks():
    fam = get_family("quadratic")
    T = np.array([[1.0, 0.0], [0.0, 2.0]])
    X = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(fam(X, T), [[1.0, 4.0], [6.0, 8.0]])


def test_make_function_tasks_is_exact_without_noise_and_seeded():
    T = np.array([[1.0, 0.5], [0.7, 1.2], [1.4, 0.6]])
    X, Y = make_function_tasks("quadratic", T, n_points=7, noise=0.0, random_state=0)
    assert X.shape == Y.shape == (3, 7) and X.min() >= -1 and X.max() <= 1
    np.testing.assert_allclose(Y, T[:, :1] * X**2 + T[:, 1:] * X)
    X2, Y2 = make_function_tasks("quadratic", T, n_points=7, random_state=3)
    X3, Y3 = make_function_tasks("quadratic", T, n_points=7, random_state=3)
    np.testing.assert_array_equal(Y2, Y3)


def test_pairs_satisfy_the_relation_exactly_and_cover_all_ordered_pairs():
    T = np.random.default_rng(0).uniform(0.5, 1.5, size=(5, 2))
    i, j, phi = sample_task_pairs(T, 4000, random_state=0)
    np.testing.assert_array_equal(T[i] + phi, T[j])  # exact in floating point here
    assert np.all(i != j)
    counts = np.zeros((5, 5))
    np.add.at(counts, (i, j), 1)
    off = counts[~np.eye(5, dtype=bool)]
    assert off.min() > 0.6 * off.mean()  # uniform over the 20 ordered pairs
    a = sample_task_pairs(T, 10, random_state=1)
    b = sample_task_pairs(T, 10, random_state=1)
    np.testing.assert_array_equal(a[2], b[2])


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: get_family("cubic"), ValueError, "family must be one of"),
        (lambda: sample_task_pairs([[1.0, 2.0]], 3), ValueError, "at least two tasks"),
        (lambda: sample_task_pairs([[1.0], [2.0]], 0), ValueError, "n_pairs"),
        (lambda: make_function_tasks("quadratic", [[1.0]]), ValueError, "2 parameters"),
        (lambda: make_function_tasks("exp", [[1.0]], noise=-1.0), ValueError, "noise"),
        (lambda: make_function_tasks("exp", [[1.0]], x_range=(1, 0)), ValueError, "x_range"),
        (lambda: QuadraticFamily().estimate([0.0], [1.0]), ValueError, "at least 2 points"),
        (lambda: QuadraticFamily().estimate([0.0, 1.0], [1.0]), ValueError, "same length"),
        (lambda: ExponentialFamily().estimate([0.0, np.nan], [1.0, 2.0]), ValueError, "NaN"),
        (lambda: sample_task_pairs("ab", 2), TypeError, "numeric"),
        (lambda: QuadraticFamily().evaluate([0.0, np.nan], [1.0, 2.0]), ValueError, "^x .*NaN"),
        (lambda: SinTrendFamily().evaluate([0.0], [1.0, np.inf]), ValueError, "^theta .*inf"),
        (lambda: SinTrendFamily().evaluate(["1", "2"], [1.0, 2.0]), TypeError, "^x .*numeric"),
        (lambda: ExponentialFamily().evaluate([1.0], [1j]), ValueError, "^theta .*complex"),
        (lambda: QuadraticFamily().evaluate([1e200], [1.0, 0.0]), ValueError, "^x .*too large"),
        (lambda: QuadraticFamily().evaluate([1e150], [1e150, 0.0]), ValueError, "overflows"),
        (lambda: ExponentialFamily().evaluate([1e3], [1.0]), ValueError, "exp family overflows"),
    ],
)
def test_bad_input_is_refused_clearly(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_family_repr_names_the_constructor_parameters():
    assert repr(QuadraticFamily()) == "QuadraticFamily()"
    assert repr(SinTrendFamily()) == "SinTrendFamily(frequency_range=(0.0, 5.0), n_grid=251)"
    assert repr(ExponentialFamily((0.5, 2.0), 11)) == (
        "ExponentialFamily(rate_range=(0.5, 2.0), n_grid=11)"
    )


def test_evaluate_keeps_finite_values_near_the_overflow():
    # exp(709) is finite, exp(-1e6) underflows to 0: both are values, not overflows
    f = ExponentialFamily().evaluate([709.0, -1e6], [1.0])
    assert np.isfinite(f).all() and f[1] == 0.0
