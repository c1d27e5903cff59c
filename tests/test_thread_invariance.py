"""Same seed, same bits, on any thread count: one test per estimator family.

Every fit runs twice: once with one thread everywhere (the estimator's own
``n_jobs``/``n_threads``, BLAS, OpenMP and Numba), once with two, and every
fitted array (labels and floats alike) must be bit-identical. On the code
before the thread rules of :mod:`mvlearn_ext.utils._threads`, LMVSC and DRMC
failed here (BLAS and scikit-learn's OpenMP k-means; DRMC's labels changed)
and LVMOGP's OpenMP k-means initialisation was not pinned.
"""

from __future__ import annotations

import contextlib
import os

import joblib
import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from mvlearn_ext.bandits import GreedyPlugIn, simulate
from mvlearn_ext.cluster import (
    DRMC,
    EOMSCCA,
    FPMVSCAG,
    HAGMVC,
    LMVSC,
    SMVSC,
    ConcatKMeans,
    ConcatSpectral,
)
from mvlearn_ext.cluster._hagmvc_pyramid import _gram
from mvlearn_ext.datasets import make_multiview_blobs
from mvlearn_ext.datasets._multitask import make_contaminated_tasks
from mvlearn_ext.gaussian_process import LVMOGPRegressor
from mvlearn_ext.multitask import (
    ARMULRegressor,
    ClusteredARMULRegressor,
    IndependentTaskRegressor,
    LowRankARMULRegressor,
    MeanRegularizedRegressor,
    PooledRegressor,
    RobustMultiTaskRegressor,
)
from mvlearn_ext.multitask import _kernels as mt_kernels
from mvlearn_ext.utils import _simplex_qp, effective_n_jobs
from mvlearn_ext.utils._threads import map_tasks, row_tiles

TWO_CPUS = numba.config.NUMBA_NUM_THREADS >= 2 and (os.cpu_count() or 1) >= 2
needs_two = pytest.mark.skipif(not TWO_CPUS, reason="needs two CPUs to compare 1 and 2 threads")


@contextlib.contextmanager
def process_threads(n):
    """BLAS, OpenMP and Numba of this process at ``n`` threads (then restored)."""
    old = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        with threadpool_limits(limits=n):
            yield
    finally:
        numba.set_num_threads(old)


def fitted_arrays(est):
    """Every public fitted attribute that is an array or a number (and k-means centres)."""
    out = {}
    for key, value in vars(est).items():
        if not key.endswith("_") or key.startswith("_"):
            continue
        if isinstance(value, (list, tuple)) and value and isinstance(value[0], np.ndarray):
            out.update({f"{key}[{i}]": v for i, v in enumerate(value)})
        elif isinstance(value, (np.ndarray, float, int, np.floating)):
            out[key] = np.asarray(value)
        elif hasattr(value, "cluster_centers_"):
            out[f"{key}.cluster_centers_"] = value.cluster_centers_
    return out


def assert_same_bits(one, two):
    assert one.keys() == two.keys()
    differ = {
        k: float(np.max(np.abs(one[k].astype(float) - two[k].astype(float))))
        for k in one
        if not np.array_equal(one[k], two[k])
    }
    assert not differ, f"changed with the thread count (max abs difference): {differ}"


def fit_on(n, make, fit):
    with process_threads(n):
        return fitted_arrays(fit(make(n)))


# --------------------------------------------------------------------------- tiles and tasks


@pytest.mark.parametrize("n_rows", [0, 1, 255, 256, 257, 600, 2000])
def test_row_tiles_cover_the_rows_in_near_equal_tiles(n_rows):
    tiles = row_tiles(n_rows)
    assert tiles[0].start == 0 and tiles[-1].stop == n_rows
    assert all(a.stop == b.start for a, b in zip(tiles[:-1], tiles[1:], strict=True))
    sizes = [t.stop - t.start for t in tiles]
    assert max(sizes) <= 256 and max(sizes) - min(sizes) <= 1
    assert len(tiles) == max(1, -(-n_rows // 256))


def test_map_tasks_keeps_the_order_and_runs_blas_on_one_thread():
    def task(i):
        blas = [p["num_threads"] for p in threadpool_info_of_blas()]
        return i * i, blas

    for n_threads in (1, 2, 8):
        out = map_tasks(task, range(7), n_threads)
        assert [value for value, _ in out] == [i * i for i in range(7)]
        assert all(threads == 1 for _, blas in out for threads in blas)


def threadpool_info_of_blas():
    from threadpoolctl import threadpool_info

    return [p for p in threadpool_info() if p["user_api"] == "blas"]


@needs_two
def test_tiled_gram_is_symmetric_close_to_blas_and_the_same_on_two_threads():
    P = np.random.default_rng(0).standard_normal((700, 90))
    one, two = _gram(P, 1), _gram(P, 2)
    assert np.array_equal(one, two)
    assert np.array_equal(one, one.T)
    # Single precision: within its rounding of the products (90 terms of about 1).
    assert one.dtype == np.float32
    np.testing.assert_allclose(one, P @ P.T, rtol=0, atol=1e-4)


# --------------------------------------------------------------------------- clustering


#: A wide view (240 features) and 600 samples: large enough for OpenBLAS to
#: split the inner dimension of ``Z @ X`` and for k-means to span several
#: OpenMP chunks.
CLUSTER_VIEWS = make_multiview_blobs(
    600, n_views=2, n_features=[240, 12], n_clusters=4, random_state=0
)[0]

CLUSTERERS = [
    pytest.param(LMVSC, 4, id="LMVSC"),
    pytest.param(HAGMVC, 4, id="HAGMVC"),
    pytest.param(DRMC, 4, id="DRMC"),
    pytest.param(SMVSC, 4, id="SMVSC"),
    pytest.param(FPMVSCAG, 4, id="FPMVSCAG"),
    pytest.param(EOMSCCA, 4, id="EOMSCCA"),
    pytest.param(ConcatSpectral, 4, id="ConcatSpectral"),
    pytest.param(ConcatKMeans, 4, id="ConcatKMeans"),
]


@needs_two
@pytest.mark.filterwarnings("ignore:Number of distinct clusters")
@pytest.mark.parametrize("cls, k", CLUSTERERS)
def test_clusterer_gives_the_same_bits_on_one_and_two_threads(cls, k):
    def make(n):
        own = {"n_jobs": n} if "n_jobs" in cls().get_params() else {}
        return cls(n_clusters=k, random_state=0, **own)

    one, two = (fit_on(n, make, lambda est: est.fit(CLUSTER_VIEWS)) for n in (1, 2))
    assert "labels_" in one
    assert_same_bits(one, two)


def test_lmvsc_n_jobs_bounds_the_numba_kernel_and_restores_the_settings(monkeypatch):
    seen = []
    kernel = _simplex_qp.simplex_active_set

    def spy(*args):
        seen.append(numba.get_num_threads())
        return kernel(*args)

    monkeypatch.setattr(_simplex_qp, "simplex_active_set", spy)
    before = numba.get_num_threads()
    views = make_multiview_blobs(60, n_views=2, n_features=[5, 4], random_state=0)[0]
    LMVSC(n_clusters=3, n_anchors=10, n_init=1, n_jobs=1, random_state=0).fit(views)
    assert seen and set(seen) == {1}
    assert numba.get_num_threads() == before
    if TWO_CPUS:
        seen.clear()
        LMVSC(n_clusters=3, n_anchors=10, n_init=1, n_jobs=2, random_state=0).fit(views)
        assert set(seen) == {2}


def test_fista_momentum_builds_agree():
    rng = np.random.default_rng(0)
    Y, Z, Zn = (rng.random((300, 7)) for _ in range(3))
    outs = []
    for kernel in (_simplex_qp._fista_momentum_serial, _simplex_qp._fista_momentum_parallel):
        args = [Y.copy(), Z.copy(), Zn.copy(), np.ones(300), 0.05, np.zeros(300, bool)]
        kernel(*args)
        outs.append(args)
    for a, b in zip(*outs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_simplex_active_set_builds_agree():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(9, 12))
    H = A @ A.T + 0.3 * np.eye(9)
    Bt = rng.normal(scale=4.0, size=(400, 9))
    outs = []
    for kernel in (
        _simplex_qp._simplex_active_set_serial,
        _simplex_qp._simplex_active_set_parallel,
    ):
        args = [H, Bt, np.zeros((400, 9)), np.zeros(400, np.int64), np.zeros(400, bool)]
        kernel(*args, 1e-11, 1e-10, 56)
        outs.append(args[2:])
    for a, b in zip(*outs, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad", [0, -(2**40)])
def test_lmvsc_n_jobs_out_of_range_is_a_clear_error(bad):
    views = make_multiview_blobs(30, n_views=2, n_features=[3, 3], random_state=0)[0]
    with pytest.raises(ValueError, match="n_jobs"):
        LMVSC(n_clusters=2, n_anchors=5, n_jobs=bad).fit(views)


def test_effective_n_jobs_follows_the_one_rule():
    cpus = effective_n_jobs(-1)
    assert cpus >= 1
    assert effective_n_jobs(None) == 1
    assert effective_n_jobs(1) == 1
    assert effective_n_jobs(-2) == max(1, cpus - 1) or cpus == 1
    # never more threads than CPUs, however many are asked for
    assert effective_n_jobs(10**6) == cpus
    assert effective_n_jobs(2**40) == cpus
    with joblib.parallel_config(n_jobs=-1):
        assert effective_n_jobs(None) == cpus
    for bad in (0, -(cpus + 1), -5000):
        with pytest.raises(ValueError, match="n_jobs"):
            effective_n_jobs(bad)
    for bad in (1.5, "2", True):
        with pytest.raises(TypeError, match="n_jobs must be an int or None"):
            effective_n_jobs(bad)


# --------------------------------------------------------------------------- bandits


@needs_two
def test_bandit_simulation_gives_the_same_bits_on_one_and_two_threads():
    def run(n):
        with process_threads(n):
            res = simulate(
                GreedyPlugIn(p=2),
                sigma=[0.5, 1.0, 2.0],
                budget=200,
                n_replications=64,
                random_state=3,
                n_jobs=n,
            )
        return {"counts": res.counts, "estimates": res.estimates, "rp": res.rp}

    assert_same_bits(run(1), run(2))


def test_bandit_n_jobs_is_validated():
    with pytest.raises(ValueError, match="n_jobs"):
        simulate(GreedyPlugIn(p=2), sigma=[1.0, 2.0], budget=10, n_jobs=0)


# --------------------------------------------------------------------------- multitask

MULTITASK = [
    RobustMultiTaskRegressor(),
    ARMULRegressor(),
    ClusteredARMULRegressor(n_clusters=2, n_init=2, random_state=0),
    LowRankARMULRegressor(rank=2),
    IndependentTaskRegressor(),
    PooledRegressor(),
    MeanRegularizedRegressor(),
]


@needs_two
@pytest.mark.parametrize("estimator", MULTITASK, ids=lambda e: type(e).__name__)
def test_multitask_gives_the_same_bits_on_one_and_two_threads(estimator, monkeypatch):
    # the threaded builds of the per-task passes, whatever the problem size
    monkeypatch.setattr(mt_kernels, "PARALLEL_WORK", 0)
    data = make_contaminated_tasks(
        n_tasks=12, n_samples=40, n_features=5, epsilon=0.25, random_state=0
    )

    def fit(est):
        return est.fit(data.X, data.y, tasks=data.tasks)

    one, two = (
        fit_on(n, lambda n: estimator.__class__(**estimator.get_params()), fit) for n in (1, 2)
    )
    assert "coef_" in one
    assert_same_bits(one, two)


# --------------------------------------------------------------------------- Gaussian process


@needs_two
def test_lvmogp_gives_the_same_bits_on_one_and_two_threads():
    rng = np.random.default_rng(0)
    X = np.sort(rng.uniform(0, 1, 300))[:, None]  # k-means over several OpenMP chunks
    loc = np.linspace(0, 1, 20)
    Y = np.sin(2 * np.pi * X + 1.5 * loc) + 0.05 * rng.standard_normal((300, 20))
    Y[rng.random(Y.shape) < 0.2] = np.nan

    def make(n):
        return LVMOGPRegressor(
            n_inducing=8, n_inducing_latent=5, max_iter=15, random_state=0, n_jobs=n
        )

    fits = {}
    for n in (1, 2):
        with process_threads(n):
            est = make(n).fit(X, Y)
            fits[n] = dict(fitted_arrays(est), predict=est.predict(X))
    assert_same_bits(fits[1], fits[2])


def test_lvmogp_n_jobs_is_validated():
    with pytest.raises(ValueError, match="n_jobs"):
        LVMOGPRegressor(n_jobs=0).fit(np.zeros((3, 1)), np.zeros((3, 2)))
