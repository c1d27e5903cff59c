"""The compiled simplex projection against its NumPy reference and oracles."""

import threading

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import minimize

from mvlearn_ext._lib._reference import project_simplex_sort
from mvlearn_ext.utils import project_simplex

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=64)
matrices = st.tuples(st.integers(1, 30), st.integers(1, 40)).flatmap(
    lambda shape: arrays(np.float64, shape, elements=finite)
)
scales = st.floats(1e-3, 1e3)


def assert_kkt(X, Z, s, rtol=1e-9):
    """Z is the projection of X iff Z = max(X - tau, 0) for one tau per row
    with sum(Z) = s: entries in the support share X - Z = tau, entries out of
    it have X <= tau."""
    assert np.all(Z >= 0)
    # Rounding errors scale with the magnitude of the input (z = x - tau).
    scale = np.maximum(1.0, np.abs(X).max(axis=1))
    m = X.shape[1]
    np.testing.assert_allclose(Z.sum(axis=1), s, rtol=rtol, atol=1e-15 * m * scale.max() + 1e-12)
    for x, z, sc in zip(X, Z, scale, strict=True):
        support = z > 0
        assert support.any()
        tau = (x - z)[support]
        np.testing.assert_allclose(tau, tau.mean(), atol=1e-9 * sc + 1e-12)
        assert np.all(x[~support] <= tau.mean() + 1e-9 * sc)


@settings(max_examples=150, deadline=None)
@given(X=matrices, s=scales)
def test_matches_sort_reference_and_kkt(X, s):
    Z = project_simplex(X, scale=s, n_jobs=1)
    scale = np.maximum(1.0, np.abs(X).max())
    np.testing.assert_allclose(Z, project_simplex_sort(X, s), atol=1e-10 * scale)
    assert_kkt(X, Z, s)


@settings(max_examples=60, deadline=None)
@given(
    X=st.tuples(st.integers(1, 20), st.integers(1, 12)).flatmap(
        lambda shape: arrays(np.float64, shape, elements=st.integers(-3, 3).map(float))
    )
)
def test_ties(X):
    """Repeated values (many exact ties) still give the exact projection."""
    Z = project_simplex(X)
    np.testing.assert_allclose(Z, project_simplex_sort(X), atol=1e-12)
    assert_kkt(X, Z, 1.0)
    # Tied inputs get tied outputs.
    for x, z in zip(X, Z, strict=True):
        for v in np.unique(x):
            assert np.ptp(z[x == v]) <= 1e-15


def test_constant_row_goes_to_the_barycentre():
    Z = project_simplex(np.full((3, 5), 7.0), scale=2.0)
    np.testing.assert_allclose(Z, 0.4)


def test_points_on_the_simplex_are_fixed():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(9), size=50) * 3.0
    np.testing.assert_allclose(project_simplex(P, scale=3.0), P, atol=1e-14)


def test_one_column():
    X = np.array([[-5.0], [0.0], [1e9]])
    np.testing.assert_array_equal(project_simplex(X, scale=2.5), np.full((3, 1), 2.5))


def test_equals_generic_qp_solution():
    """min_z c/2 ||z||^2 - b.z on the simplex is solved by Pi(b / c)."""
    rng = np.random.default_rng(1)
    for _ in range(10):
        m = rng.integers(2, 8)
        b, c = rng.normal(size=m), rng.uniform(0.5, 3.0)
        res = minimize(
            lambda z, b=b, c=c: 0.5 * c * z @ z - b @ z,
            np.full(m, 1.0 / m),
            jac=lambda z, b=b, c=c: c * z - b,
            bounds=[(0, None)] * m,
            constraints=[{"type": "eq", "fun": lambda z: z.sum() - 1.0}],
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 500},
        )
        np.testing.assert_allclose(project_simplex((b / c)[None]), res.x[None], atol=1e-6)


def test_layouts_axis_and_in_place():
    rng = np.random.default_rng(2)
    base = rng.normal(size=(40, 30))
    expected = project_simplex_sort(base)
    np.testing.assert_array_equal(project_simplex(np.asfortranarray(base)), project_simplex(base))
    strided = np.repeat(base, 2, axis=1)[:, ::2]
    assert not strided.flags.c_contiguous and not strided.flags.f_contiguous
    np.testing.assert_allclose(project_simplex(strided), expected, atol=1e-14)
    np.testing.assert_allclose(project_simplex(base[::-1])[::-1], expected, atol=1e-14)
    # axis=0 projects columns (the Z of shape (n_anchors, n_samples)).
    np.testing.assert_allclose(project_simplex(base.T, axis=0), expected.T, atol=1e-14)
    inplace = base.copy()
    out = project_simplex(inplace, out=inplace)
    assert out is inplace
    np.testing.assert_allclose(inplace, expected, atol=1e-14)


def test_dtypes():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 20))
    Z32 = project_simplex(X.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, project_simplex_sort(X.astype(np.float32)), atol=2e-6)
    Zint = project_simplex(np.arange(12).reshape(3, 4))
    assert Zint.dtype == np.float64
    np.testing.assert_allclose(Zint, np.tile([0, 0, 0, 1.0], (3, 1)))
    # Lists are accepted like any array-like.
    np.testing.assert_allclose(project_simplex([[1.0, 0.0]]), [[1.0, 0.0]])


def test_threads_give_identical_results():
    X = np.random.default_rng(4).normal(size=(5000, 33))
    ref = project_simplex(X, n_jobs=1)
    for nt in (2, 3, 7, -1, None):
        np.testing.assert_array_equal(project_simplex(X, n_jobs=nt), ref)


def test_concurrent_python_threads():
    """The kernel releases the GIL; concurrent calls stay correct."""
    rng = np.random.default_rng(5)
    inputs = [rng.normal(size=(2000, 16)) for _ in range(4)]
    results = [None] * 4

    def work(i):
        results[i] = project_simplex(inputs[i], n_jobs=1)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for X, Z in zip(inputs, results, strict=True):
        np.testing.assert_allclose(Z, project_simplex_sort(X), atol=1e-14)


def test_empty_rows():
    assert project_simplex(np.empty((0, 4))).shape == (0, 4)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(scale=0.0), ValueError, "scale must be a finite number > 0"),
        (dict(scale=-1.0), ValueError, "scale must be a finite number > 0"),
        (dict(scale=np.inf), ValueError, "scale must be a finite number > 0"),
        (dict(scale="1"), TypeError, "scale must be a real number"),
        (dict(axis=2), ValueError, "axis must be 0 or 1"),
        (dict(n_jobs=0), ValueError, "n_jobs must be a positive int"),
        (dict(n_jobs=1.5), TypeError, "n_jobs must be an int or None"),
        (dict(out=np.empty((2, 2))), ValueError, "out must have shape"),
        (dict(out=np.empty((3, 4), dtype=np.float32)), ValueError, "out must have shape"),
        (dict(out=[[0.0] * 4] * 3), TypeError, "out must be a numpy.ndarray"),
    ],
)
def test_argument_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        project_simplex(np.ones((3, 4)), **kwargs)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_is_refused(bad):
    X = np.ones((1000, 5))
    X[777, 3] = bad
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        project_simplex(X)


def test_input_shape_errors():
    with pytest.raises(ValueError, match="Expected 2D array"):
        project_simplex(np.ones(4))
    with pytest.raises(ValueError, match="0 feature"):
        project_simplex(np.ones((3, 0)))
    with pytest.raises(TypeError, match="sparse"):
        project_simplex(sp.eye(3, format="csr"))
    with pytest.raises(TypeError, match="X must be a numeric array"):
        project_simplex([["a", "b"]])
    with pytest.raises(TypeError, match="X must be a numeric array"):
        project_simplex(np.array([["1", "2"]]))  # check_array would parse these
    ro = np.ones((2, 3))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        project_simplex(np.ones((2, 3)), out=ro)


# --- Large and tiny magnitudes --------------------------------------------------
# Rounding errors must scale with the simplex size s, not with the magnitude
# of the row: every kernel shifts a row by its maximum before projecting.


def assert_projection_at_any_magnitude(X, Z, s):
    """KKT conditions with tolerances in units of s (independent of max|X|).

    The support entries lie within s of the row maximum, so X - max(X) is
    exact on them (Sterbenz) and the KKT check needs no magnitude slack."""
    m = X.shape[1]
    assert np.all(np.isfinite(Z)) and np.all(Z >= 0)
    np.testing.assert_allclose(Z.sum(axis=1), s, rtol=4 * m * np.finfo(float).eps)
    with np.errstate(over="ignore"):
        Y = X - X.max(axis=1, keepdims=True)
    for y, z in zip(Y, Z, strict=True):
        support = z > 0
        assert support.any()
        tau = (y - z)[support]
        tol = 8 * m * np.finfo(float).eps * s
        np.testing.assert_allclose(tau, tau.mean(), rtol=0, atol=tol)
        assert np.all(y[~support] <= tau.mean() + tol)


@settings(max_examples=200, deadline=None)
@given(
    B=st.tuples(st.integers(1, 12), st.integers(1, 20)).flatmap(
        lambda shape: arrays(np.float64, shape, elements=st.floats(-1.0, 1.0, width=64))
    ),
    exponent=st.integers(-300, 300),
    s=scales,
)
def test_property_any_magnitude(B, exponent, s):
    X = B * 10.0**exponent
    Z = project_simplex(X, scale=s, n_jobs=1)
    assert_projection_at_any_magnitude(X, Z, s)
    # The sort-based NumPy reference agrees in units of s.
    atol = 8 * X.shape[1] * np.finfo(float).eps * s
    np.testing.assert_allclose(Z, project_simplex_sort(X, s), rtol=0, atol=atol)


@pytest.mark.parametrize("project", [project_simplex, project_simplex_sort], ids=["cpp", "numpy"])
def test_large_values_regression(project):
    """[[1e16, 0, 0, 0]] projected to zeros; rows scaled by 1e17 left the simplex."""
    np.testing.assert_array_equal(project(np.array([[1e16, 0.0, 0.0, 0.0]])), [[1, 0, 0, 0]])
    X = np.random.default_rng(7).random((1000, 4)) * 1e17
    assert_projection_at_any_magnitude(X, project(X), 1.0)


def test_large_values_float32():
    X = (np.random.default_rng(8).random((500, 6)) * 1e30).astype(np.float32)
    Z = project_simplex(X)
    assert Z.dtype == np.float32
    np.testing.assert_allclose(Z.sum(axis=1), 1.0, rtol=1e-6)


def test_extreme_range_in_one_row():
    """Shifts that overflow (1.7e308 below the maximum) leave the entry out."""
    X = np.array([[1.7e308, -1.7e308, 1e308], [-1.7e308, 1.7e308, 1.7e308]])
    np.testing.assert_array_equal(project_simplex(X, scale=2.0), [[2, 0, 0], [0, 1, 1]])
    np.testing.assert_array_equal(project_simplex_sort(X, 2.0), [[2, 0, 0], [0, 1, 1]])
