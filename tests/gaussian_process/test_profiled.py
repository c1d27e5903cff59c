"""The one-pass profiled bound (per-input statistics, q(U) mean at its optimum)
against the per-output route at ``optimal_mean``, its gradient against finite
differences of the maximised bound, and the sparse pattern sums it runs on."""

import numpy as np
import pytest

from mvlearn_ext._lib import _kernels as kern
from mvlearn_ext._lib import _reference as ref
from mvlearn_ext.gaussian_process import _bound as bd
from mvlearn_ext.gaussian_process._lvmogp import _output_scaling, _scaled_objective

JIT = 1e-6


def problem(rng, N=7, P=5, D_x=2, D_h=2, M_x=4, M_h=3, frac=0.0, gaussian=False):
    """As in test_bound.py: random data (NaN = missing) and parameters."""
    X = rng.standard_normal((N, D_x))
    Yt = rng.standard_normal((P, N))
    if frac:
        Yt[rng.random((P, N)) < frac] = np.nan
        Yt[:, 0] = 1.0  # every output keeps an observation
    pk = bd.make_packer(P, D_x, D_h, M_x, M_h, gaussian)
    theta = 0.3 * rng.standard_normal(pk.size)
    return bd.Data(X, Yt), pk, theta


@pytest.mark.parametrize("frac", [0.0, 0.3, 0.7])
@pytest.mark.parametrize("gaussian", [False, True])
@pytest.mark.parametrize("complement", [True, False])
def test_profiled_bound_equals_bound_at_optimal_mean(frac, gaussian, complement):
    rng = np.random.default_rng(5)
    data, pk, theta = problem(rng, P=9, N=8, frac=frac, gaussian=gaussian)
    data = bd.Data(data.X, data.Yt, complement=complement)
    sl = pk.slices["M"]
    th = theta.copy()
    th[sl] = bd.optimal_mean(theta, pk, data, jitter=JIT).ravel()
    e_ref, g_ref = bd.elbo_and_grad(th, pk, data, jitter=JIT)
    e, g, M = bd.profiled_elbo_and_grad(theta, pk, data, jitter=JIT)
    assert abs(e - e_ref) <= 1e-11 * abs(e_ref)
    np.testing.assert_allclose(M.ravel(), th[sl], rtol=0, atol=1e-10 * np.abs(th[sl]).max())
    scale = np.abs(g_ref).max()
    np.testing.assert_allclose(g, g_ref, rtol=0, atol=1e-10 * scale)
    assert np.abs(g[sl]).max() < 1e-9 * scale  # stationary in M~
    # the M entries of theta are ignored; grad=False gives the same bound and mean
    theta2 = theta.copy()
    theta2[sl] = rng.standard_normal(sl.stop - sl.start)
    e2, M2 = bd.profiled_elbo_and_grad(theta2, pk, data, jitter=JIT, grad=False)
    assert abs(e2 - e) <= 1e-11 * abs(e)
    np.testing.assert_allclose(M2, M, atol=1e-10 * np.abs(M).max())


@pytest.mark.parametrize("gaussian", [False, True])
def test_profiled_gradient_is_the_gradient_of_the_maximised_bound(gaussian):
    """Envelope theorem: the returned gradient is d/dtheta max_M bound(theta, M)."""
    rng = np.random.default_rng(6)
    data, pk, theta = problem(rng, N=8, P=6, M_x=4, M_h=3, frac=0.3, gaussian=gaussian)
    _, g, _ = bd.profiled_elbo_and_grad(theta, pk, data, jitter=JIT)
    sl = pk.slices["M"]

    def f(t):
        return bd.profiled_elbo_and_grad(t, pk, data, jitter=JIT, grad=False)[0]

    eps = 1e-6
    idx = np.setdiff1d(np.arange(pk.size), np.arange(sl.start, sl.stop))
    fd = np.empty(idx.size)
    for k, i in enumerate(idx):
        d = np.zeros_like(theta)
        d[i] = eps
        fd[k] = (f(theta + d) - f(theta - d)) / (2 * eps)
    np.testing.assert_allclose(g[idx], fd, rtol=1e-5, atol=1e-5 * np.abs(fd).max())


def test_data_index_lists_the_visited_entries():
    rng = np.random.default_rng(7)
    Yt = rng.standard_normal((6, 5))
    Yt[rng.random(Yt.shape) < 0.3] = np.nan
    for complement in (True, False):
        data = bd.Data(rng.standard_normal((5, 1)), Yt, complement=complement)
        visit = np.isnan(Yt) if complement else ~np.isnan(Yt)
        indptr, indices = data.by_output
        for p in range(6):
            np.testing.assert_array_equal(
                indices[indptr[p] : indptr[p + 1]], np.flatnonzero(visit[p])
            )
        indptr, indices = data.by_input
        for n in range(5):
            np.testing.assert_array_equal(
                indices[indptr[n] : indptr[n + 1]], np.flatnonzero(visit[:, n])
            )
        np.testing.assert_array_equal(np.isnan(data.Yt), np.isnan(Yt))
        assert data.n_obs == int((~np.isnan(Yt)).sum())


def test_pattern_sum_matches_dense_product_and_reference():
    rng = np.random.default_rng(8)
    S = rng.random((40, 30)) < 0.25
    S[3] = False  # an empty row
    V = rng.standard_normal((30, 7))
    rows, cols = np.nonzero(S)
    indptr = np.concatenate([[0], np.cumsum(S.sum(1))])
    indptr, cols = indptr.astype(np.int64), cols.astype(np.int64)
    out = kern.pattern_sum(indptr, cols, V, n_threads=2)
    np.testing.assert_allclose(out, S.astype(float) @ V, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(out, ref.pattern_sum(indptr, cols, V), rtol=1e-13, atol=1e-13)
    assert np.all(out[3] == 0)


def test_pattern_sum_refuses_a_pattern_that_would_read_out_of_bounds():
    # The binding checks the pattern (it indexes memory with it), unchecked entry or not.
    V = np.ones((4, 2))

    def pattern_sum64(indptr, indices, V):
        return kern.pattern_sum(np.asarray(indptr, np.int64), np.asarray(indices, np.int64), V)

    with pytest.raises(ValueError, match="indices must lie"):
        pattern_sum64([0, 1], [4], V)
    with pytest.raises(ValueError, match="from 0 to len"):
        pattern_sum64([0, 2], [1], V)
    with pytest.raises(ValueError, match="non-decreasing"):
        pattern_sum64([0, 2, 1, 2], [1, 2], V)
    with pytest.raises(ValueError, match="V must be 2-D"):
        pattern_sum64([0, 1], [0], np.ones(4))


def test_output_scaling_and_the_scaled_objective():
    """The L-BFGS objective in the rescaled coordinates: d = sqrt(n_obs / count_p)
    on output p's latent parameters, and its gradient by finite differences."""
    rng = np.random.default_rng(9)
    data, pk, theta = problem(rng, N=8, P=6, M_x=4, M_h=3, frac=0.4, gaussian=True)
    d = _output_scaling(pk, data)
    count = (~np.isnan(data.Yt)).sum(axis=1)
    for name in ("mu", "log_S"):
        np.testing.assert_allclose(
            d[pk.slices[name]].reshape(6, 2), np.sqrt(count.sum() / count)[:, None] * np.ones(2)
        )
    others = np.ones(pk.size, dtype=bool)
    others[pk.slices["mu"]] = others[pk.slices["log_S"]] = False
    assert np.all(d[others] == 1.0)
    mask = np.ones(pk.size, dtype=bool)
    mask[pk.slices["M"]] = False
    u = theta[mask] / d[mask]
    f0, g = _scaled_objective(u, mask, theta, d, pk, data, jitter=JIT, n_threads=1)
    e, _, _ = bd.profiled_elbo_and_grad(theta, pk, data, jitter=JIT)
    assert abs(f0 + e / data.n_obs) <= 1e-12 * abs(f0)
    eps = 1e-6
    fd = np.empty(u.size)
    for i in range(u.size):
        du = np.zeros_like(u)
        du[i] = eps
        fp = _scaled_objective(u + du, mask, theta, d, pk, data, jitter=JIT, n_threads=1)[0]
        fm = _scaled_objective(u - du, mask, theta, d, pk, data, jitter=JIT, n_threads=1)[0]
        fd[i] = (fp - fm) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-5 * np.abs(fd).max())
