"""The compiled kNN anchor graph against its NumPy reference and oracles."""

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mvlearn_ext._lib._reference import anchor_graph_dense, kneighbors_anchors_dense
from mvlearn_ext.utils import anchor_graph, kneighbors_anchors, project_simplex


@st.composite
def problems(draw, integer_grid=False):
    n = draw(st.integers(1, 25))
    m = draw(st.integers(1, 20))
    d = draw(st.integers(1, 6))
    if integer_grid:  # exact distances, many exact ties
        elements = st.integers(-2, 2).map(float)
    else:
        elements = st.floats(-100, 100, allow_nan=False, width=64)
    X = draw(arrays(np.float64, (n, d), elements=elements))
    A = draw(arrays(np.float64, (m, d), elements=elements))
    if m > 1 and draw(st.booleans()):  # duplicated anchors
        A[draw(st.integers(0, m - 1))] = A[draw(st.integers(0, m - 1))]
    k = draw(st.integers(1, m + 3))  # includes k >= n_anchors
    return X, A, k


def check_graph(Z, n, m, k, rtol=1e-12):
    assert sp.issparse(Z) and Z.format == "csr" and Z.shape == (n, m)
    width = max(min(k, m - 1), 1)
    assert np.all(np.diff(Z.indptr) == width)
    assert Z.has_sorted_indices
    for i in range(n):
        cols = Z.indices[Z.indptr[i] : Z.indptr[i + 1]]
        assert len(np.unique(cols)) == len(cols)
    assert np.all(Z.data >= 0)
    np.testing.assert_allclose(np.asarray(Z.sum(axis=1), dtype=float).ravel(), 1.0, rtol=rtol)


@settings(max_examples=150, deadline=None)
@given(problems())
def test_matches_dense_reference(problem):
    X, A, k = problem
    Z = anchor_graph(X, A, n_neighbors=k, n_jobs=1)
    check_graph(Z, X.shape[0], A.shape[0], k)
    ref = anchor_graph_dense(X, A, k)
    np.testing.assert_allclose(Z.toarray(), ref.toarray(), atol=1e-9)


@settings(max_examples=150, deadline=None)
@given(problems(integer_grid=True))
def test_ties_and_duplicates_follow_the_lower_index_rule(problem):
    X, A, k = problem
    Z = anchor_graph(X, A, n_neighbors=k)
    check_graph(Z, X.shape[0], A.shape[0], k)
    np.testing.assert_allclose(Z.toarray(), anchor_graph_dense(X, A, k).toarray(), atol=1e-12)
    kk = min(k, A.shape[0])
    dist, ind = kneighbors_anchors(X, A, n_neighbors=kk)
    rdist, rind = kneighbors_anchors_dense(X, A, kk)
    np.testing.assert_array_equal(ind, rind)
    np.testing.assert_array_equal(dist, rdist)


def test_weights_solve_the_adaptive_simplex_problem():
    """Nie et al.'s weights are argmin_z z.d + gamma ||z||^2 over the simplex
    with gamma = (k d_{k+1} - sum_{h<=k} d_h) / 2: i.e. Pi(-d / (2 gamma))."""
    rng = np.random.default_rng(0)
    X, A, k = rng.normal(size=(200, 4)), rng.normal(size=(30, 4)), 6
    Z = anchor_graph(X, A, n_neighbors=k).toarray()
    D = ((X[:, None] - A[None]) ** 2).sum(-1)
    Ds = np.sort(D, axis=1)
    gamma = (k * Ds[:, k] - Ds[:, :k].sum(axis=1)) / 2
    np.testing.assert_allclose(Z, project_simplex(-D / (2 * gamma[:, None])), atol=1e-12)
    assert np.all((Z > 0).sum(axis=1) == k)


def test_hand_computed_example():
    X = np.array([[0.0], [1.0], [3.0]])
    A = np.array([[0.0], [2.0], [4.0]])
    # x=0: d = (0, 4, 16), k=2 -> (16, 12) / 28
    expected = np.array([[16 / 28, 12 / 28, 0], [0.5, 0.5, 0], [0, 0.5, 0.5]])
    np.testing.assert_allclose(anchor_graph(X, A, n_neighbors=2).toarray(), expected)


def test_degenerate_cases():
    X = np.array([[0.0, 0.0], [5.0, 1.0]])
    # A single anchor: every sample puts weight 1 on it.
    Z = anchor_graph(X, [[1.0, 1.0]], n_neighbors=5)
    np.testing.assert_array_equal(Z.toarray(), [[1.0], [1.0]])
    # Equidistant anchors (zero denominator): the k nearest get 1/k each.
    square = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    Z = anchor_graph([[0.0, 0.0]], square, n_neighbors=2).toarray()
    np.testing.assert_allclose(Z, [[0.5, 0.5, 0.0, 0.0]])
    # k >= n_anchors is clipped to n_anchors - 1.
    Z = anchor_graph(X, square, n_neighbors=10)
    assert np.all(np.diff(Z.indptr) == 3)
    np.testing.assert_allclose(Z.toarray(), anchor_graph(X, square, n_neighbors=3).toarray())
    # A sample sitting on an anchor that is duplicated splits between the copies
    # only if the (k+1)-th distance differs.
    Z = anchor_graph([[0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0], [3.0, 0.0]], n_neighbors=2)
    np.testing.assert_allclose(Z.toarray(), [[0.5, 0.5, 0.0]])


def test_one_column_inputs_and_layouts():
    rng = np.random.default_rng(1)
    X, A = rng.normal(size=(300, 1)), rng.normal(size=(12, 1))
    np.testing.assert_allclose(
        anchor_graph(X, A, n_neighbors=3).toarray(), anchor_graph_dense(X, A, 3).toarray()
    )
    X, A = rng.normal(size=(300, 7)), rng.normal(size=(40, 7))
    ref = anchor_graph(X, A, n_neighbors=4)
    for Xv, Av in [
        (np.asfortranarray(X), np.asfortranarray(A)),
        (np.repeat(X, 2, axis=1)[:, ::2], np.repeat(A, 3, axis=1)[:, ::3]),
        (X[::-1][::-1], A),
    ]:
        Zv = anchor_graph(Xv, Av, n_neighbors=4)
        np.testing.assert_array_equal(Zv.indices, ref.indices)
        np.testing.assert_array_equal(Zv.data, ref.data)


def test_dtypes_and_threads():
    rng = np.random.default_rng(2)
    X, A = rng.normal(size=(3000, 9)), rng.normal(size=(150, 9))
    ref = anchor_graph(X, A, n_neighbors=5, n_jobs=1)
    for nt in (2, 5, -1, None):
        Z = anchor_graph(X, A, n_neighbors=5, n_jobs=nt)
        np.testing.assert_array_equal(Z.indices, ref.indices)
        np.testing.assert_array_equal(Z.data, ref.data)
    Z32 = anchor_graph(X.astype(np.float32), A.astype(np.float32), n_neighbors=5)
    assert Z32.dtype == np.float32
    agree = (Z32.indices == ref.indices).mean()
    assert agree > 0.999  # neighbours may swap only on float32 near-ties
    # Mixed precision computes in float64.
    assert anchor_graph(X.astype(np.float32), A, n_neighbors=5).dtype == np.float64


def test_many_anchors_and_blocks():
    """More anchors than one tile and more samples than one block per thread."""
    rng = np.random.default_rng(3)
    X, A = rng.normal(size=(1001, 5)), rng.normal(size=(517, 5))
    Z = anchor_graph(X, A, n_neighbors=7, n_jobs=3)
    np.testing.assert_allclose(Z.toarray(), anchor_graph_dense(X, A, 7).toarray(), atol=1e-12)
    # Large k uses the heap path for k > 64.
    Z = anchor_graph(X[:50], A, n_neighbors=100)
    np.testing.assert_allclose(
        Z.toarray(), anchor_graph_dense(X[:50], A, 100).toarray(), atol=1e-12
    )


def test_kneighbors_anchors():
    rng = np.random.default_rng(5)
    X, A = rng.normal(size=(100, 3)), rng.normal(size=(20, 3))
    dist, ind = kneighbors_anchors(X, A, n_neighbors=4)
    rdist, rind = kneighbors_anchors_dense(X, A, 4)
    np.testing.assert_array_equal(ind, rind)
    np.testing.assert_allclose(dist, rdist, rtol=1e-14)
    assert ind.dtype == np.int64 and dist.shape == (100, 4)
    dist, ind = kneighbors_anchors(X, A, n_neighbors=50)  # clipped to n_anchors
    assert ind.shape == (100, 20)


@pytest.mark.parametrize("func", [anchor_graph, kneighbors_anchors])
def test_errors(func):
    X, A = np.ones((4, 3)), np.zeros((5, 3))
    with pytest.raises(ValueError, match="X has 3 features but anchors have 2"):
        func(X, A[:, :2])
    with pytest.raises(ValueError, match="n_neighbors must be >= 1"):
        func(X, A, n_neighbors=0)
    with pytest.raises(TypeError, match="n_neighbors must be an int"):
        func(X, A, n_neighbors=2.0)
    with pytest.raises(ValueError, match="anchors must have at least one row"):
        func(X, np.empty((0, 3)))
    with pytest.raises(TypeError, match="sparse"):
        func(sp.csr_matrix(X), A)
    for bad in (np.nan, np.inf):
        Xb = X.copy()
        Xb[2, 1] = bad
        with pytest.raises(ValueError, match="NaN or infinity"):
            func(Xb, A)
        Ab = A.copy()
        Ab[4, 0] = bad
        with pytest.raises(ValueError, match="NaN or infinity"):
            func(X, Ab)
    with pytest.raises(ValueError, match="n_jobs"):
        func(X, A, n_jobs=0)


# --- Any finite magnitude ----------------------------------------------------
# Squared distances overflow from about 1e154 (float64) or 1e19 (float32) and
# lose their relative precision below about 1e-146 (or 1e-16): the kernels
# must still find the right neighbours, with finite distances and weights.


def exact_sq_distances(X, A):
    """Exact squared distances as fractions (the inputs are binary floats)."""
    Xf = [[Fraction(float(v)) for v in row] for row in X]
    Af = [[Fraction(float(v)) for v in row] for row in A]
    return [[sum((x - a) ** 2 for x, a in zip(xr, ar, strict=True)) for ar in Af] for xr in Xf]


def exact_anchor_graph(D, k):
    """Weights of Nie et al. in exact arithmetic, ties to the lower anchor index."""
    n, m = len(D), len(D[0])
    k = min(k, m - 1)
    W = np.zeros((n, m))
    for i, row in enumerate(D):
        order = sorted(range(m), key=lambda j, row=row: (row[j], j))
        if k == 0:
            W[i, order[0]] = 1.0
            continue
        last = row[order[k]]
        den = sum(last - row[j] for j in order[:k])
        for j in order[:k]:
            W[i, j] = float((last - row[j]) / den) if den > 0 else 1.0 / k
    return W


def weight_tolerance(D, k, dtype):
    """Bound on a weight's error from relative errors ``c eps`` of the distances.

    ``w_j = (D_{k+1} - D_j) / sum_h (D_{k+1} - D_h)``: the numerators move by
    up to ``2 c eps D_{k+1}`` and the denominator by ``k`` times that.
    """
    m = len(D[0])
    k = min(k, m - 1)
    c = 8  # a sum over at most 6 features, and the scalings
    tol = np.zeros(len(D))
    for i, row in enumerate(D):
        if k == 0:
            continue
        s = sorted(row)
        den = sum(s[k] - v for v in s[:k])
        if den == 0:
            tol[i] = np.inf
        else:
            ratio = 2 * c * (k + 1) * Fraction(float(np.finfo(dtype).eps)) * s[k] / den
            tol[i] = float(ratio) if ratio < 1 else np.inf
    return tol[:, None] + 4 * np.finfo(dtype).eps


@st.composite
def scaled_problems(draw, dtype):
    n, m, d = draw(st.integers(1, 8)), draw(st.integers(1, 9)), draw(st.integers(1, 4))
    lo, hi = (-300, 300) if dtype == np.float64 else (-38, 36)
    unit = st.floats(-1, 1, allow_subnormal=False, width=32)
    X = draw(arrays(np.float64, (n, d), elements=unit))
    A = draw(arrays(np.float64, (m, d), elements=unit))
    if m > 1 and draw(st.booleans()):  # a sample on an anchor
        X[0] = A[draw(st.integers(0, m - 1))]
    scale = 10.0 ** draw(st.integers(lo, hi))
    k = draw(st.integers(1, m + 1))
    return (X * scale).astype(dtype), (A * scale).astype(dtype), k


def exact_sqrt(q):
    """The square root of a non-negative fraction, rounded once to float64."""
    if q == 0:
        return 0.0
    e = (q.numerator.bit_length() - q.denominator.bit_length()) // 2
    return math.ldexp(math.sqrt(q / Fraction(2) ** (2 * e)), e)


def assert_right_neighbours(D, ind, dist, dtype):
    """Each returned neighbour is as near as the exact j-th nearest, up to rounding."""
    eps = Fraction(float(np.finfo(dtype).eps))
    for i, row in enumerate(D):
        exact = sorted(row)
        assert len(set(ind[i])) == ind.shape[1]
        for j, a in enumerate(ind[i]):
            got, want = row[a], exact[j]
            assert abs(got - want) <= 16 * eps * want
        ref = np.array([exact_sqrt(row[a]) for a in ind[i]])
        np.testing.assert_allclose(
            dist[i].astype(np.float64),
            ref,
            rtol=16 * float(eps),
            atol=2 * float(np.finfo(dtype).smallest_subnormal),
        )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_any_magnitude_matches_exact_reference(dtype, data):
    X, A, k = data.draw(scaled_problems(dtype))
    D = exact_sq_distances(X, A)
    kk = min(k, A.shape[0])
    dist, ind = kneighbors_anchors(X, A, n_neighbors=kk)
    assert dist.dtype == dtype and np.all(np.isfinite(dist))
    assert_right_neighbours(D, ind, dist, dtype)
    Z = anchor_graph(X, A, n_neighbors=k)
    assert Z.dtype == dtype and np.all(np.isfinite(Z.data))
    check_graph(Z, X.shape[0], A.shape[0], k, rtol=4 * k * np.finfo(dtype).eps)
    tol = weight_tolerance(D, k, dtype)
    err = np.abs(Z.toarray() - exact_anchor_graph(D, k))
    assert np.all(err <= tol)
    # The NumPy reference is scale-safe too.
    assert np.all(np.abs(anchor_graph_dense(X, A, k).toarray() - exact_anchor_graph(D, k)) <= tol)
    rdist, rind = kneighbors_anchors_dense(X, A, kk)
    assert_right_neighbours(D, rind, rdist, np.float64)


def test_magnitudes_apart_in_one_call():
    """Rows 1e600 apart in scale: each finds its own neighbours."""
    A = np.array([[0.0, 0.0], [3e-300, 0.0], [0.0, 1e-300], [1e300, 0.0], [0.0, -2e300]])
    X = np.array([[1e-300, 0.0], [9e299, 1e299], [-1e300, 1e300], [0.0, -1.5e300]])
    D = exact_sq_distances(X, A)
    dist, ind = kneighbors_anchors(X, A, n_neighbors=3)
    assert np.all(np.isfinite(dist))
    assert_right_neighbours(D, ind, dist, np.float64)
    np.testing.assert_array_equal(ind[0], [0, 2, 1])
    np.testing.assert_allclose(dist[0], [1e-300, np.sqrt(2) * 1e-300, 2e-300], rtol=1e-15)
    assert ind[1, 0] == 3 and ind[3, 0] == 4
    Z = anchor_graph(X, A, n_neighbors=2)
    assert np.all(np.isfinite(Z.data))
    assert np.all(np.abs(Z.toarray() - exact_anchor_graph(D, 2)) <= weight_tolerance(D, 2, float))


@pytest.mark.parametrize("scale", [2.0**-600, 2.0**-300, 2.0**300, 2.0**600])
def test_power_of_two_scale_leaves_the_graph_unchanged(scale):
    """The weights do not depend on the unit: an exact rescaling gives the same graph."""
    rng = np.random.default_rng(6)
    X, A = rng.normal(size=(400, 5)), rng.normal(size=(40, 5))
    ref = anchor_graph(X, A, n_neighbors=5)
    Z = anchor_graph(X * scale, A * scale, n_neighbors=5)
    np.testing.assert_array_equal(Z.indices, ref.indices)
    np.testing.assert_allclose(Z.data, ref.data, rtol=1e-13, atol=1e-15)
    dist, ind = kneighbors_anchors(X * scale, A * scale, n_neighbors=5)
    rdist, rind = kneighbors_anchors(X, A, n_neighbors=5)
    np.testing.assert_array_equal(ind, rind)
    np.testing.assert_allclose(dist / scale, rdist, rtol=1e-13)


@pytest.mark.parametrize("func", [anchor_graph, kneighbors_anchors])
def test_strings_of_digits_are_refused_by_name(func):
    X, A = np.ones((4, 3)), np.zeros((5, 3))
    with pytest.raises(TypeError, match="X must be a numeric array"):
        func(X.astype(str), A)
    with pytest.raises(TypeError, match="anchors must be a numeric array"):
        func(X, A.astype(str))
    # integers are numbers: converted to float64, as before
    assert func(X.astype(int), A.astype(np.float32), n_neighbors=2)[0].dtype == np.float64
