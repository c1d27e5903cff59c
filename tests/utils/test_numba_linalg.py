"""The shared Numba triangular-solve pair (``utils._kernels.cholesky_solve``)."""

import numpy as np
import pytest

from mvlearn_ext.utils._kernels import cholesky_solve


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cholesky_solve_matches_a_dense_solve_on_leading_blocks(seed):
    rng = np.random.default_rng(seed)
    d = 6
    A = rng.normal(size=(d, d))
    G = A @ A.T + d * np.eye(d)
    L = np.linalg.cholesky(G)
    rhs = rng.normal(size=d)
    for s in (1, 3, d):
        out = np.full(d, np.nan)
        cholesky_solve(L, s, rhs, out)
        # the leading factor of G[:s, :s] is L[:s, :s]: the block's own solve
        np.testing.assert_allclose(out[:s], np.linalg.solve(G[:s, :s], rhs[:s]), rtol=1e-12)
        assert np.isnan(out[s:]).all()  # nothing past s is written


def test_cholesky_solve_in_place():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(4, 4))
    G = A @ A.T + 4 * np.eye(4)
    L = np.linalg.cholesky(G)
    rhs = rng.normal(size=4)
    expected = np.empty(4)
    cholesky_solve(L, 4, rhs, expected)
    work = rhs.copy()
    cholesky_solve(L, 4, work, work)  # out may be rhs
    np.testing.assert_array_equal(work, expected)
