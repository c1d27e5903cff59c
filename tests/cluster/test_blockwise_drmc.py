"""DRMC's block path: dask arrays, zarr arrays and memmaps.

The promise: with the same row blocks and seed, the labels are the same in memory
(``block_size``), out of core (memmap, zarr), with dask threads and on a
``dask.distributed`` cluster, because every reduction is folded in block order; up to
``ROTATION_SAMPLE`` samples the block algorithm is the in-memory one.
"""

import subprocess
import sys

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from mvlearn_ext.cluster import DRMC, _drmc_blocks
from mvlearn_ext.cluster._common import DEGREE_REG, regularised_projection_from_gram
from mvlearn_ext.datasets import make_multiview_blobs
from mvlearn_ext.metrics import clustering_accuracy

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

N, K, CHUNK = 3000, 4, 700  # five blocks, the last one shorter


@pytest.fixture(scope="module")
def views():
    # Two informative views and a pure-noise one, so that the feedback has work to do.
    Xs, y = make_multiview_blobs(
        N, n_views=3, n_clusters=K, n_features=[6, 5, 4], cluster_std=2.0,
        noise=[0.1, 0.1, 1.0], random_state=3,
    )  # fmt: skip
    return [X.astype(np.float32) for X in Xs], y


@pytest.fixture(scope="module")
def on_disk(views, tmp_path_factory):
    """The views as NumPy memmaps and as zarr arrays (when zarr is installed)."""
    Xs, _ = views
    root = tmp_path_factory.mktemp("drmc_views")
    memmaps = []
    for v, X in enumerate(Xs):
        np.save(root / f"view{v}.npy", X)
        memmaps.append(np.load(root / f"view{v}.npy", mmap_mode="r"))
    zarrs = None
    try:
        import zarr
    except ImportError:
        pass
    else:
        zarrs = []
        for v, X in enumerate(Xs):
            path = str(root / f"view{v}.zarr")
            z = zarr.create_array(path, shape=X.shape, chunks=(CHUNK, X.shape[1]), dtype=X.dtype)
            z[:] = X
            zarrs.append(zarr.open_array(path, mode="r"))
    return memmaps, zarrs


def _model(**kwargs):
    return DRMC(n_clusters=K, random_state=7, **kwargs)


@pytest.fixture(scope="module")
def in_memory(views):
    Xs, _ = views
    return _model(block_size=CHUNK).fit(Xs)


def _same_fit(model, reference, name):
    np.testing.assert_array_equal(np.asarray(model.labels_), reference.labels_, err_msg=name)
    np.testing.assert_array_equal(model.view_weights_, reference.view_weights_, err_msg=name)
    np.testing.assert_array_equal(model.anchors_[1], reference.anchors_[1], err_msg=name)
    np.testing.assert_array_equal(
        model.anchor_memberships_, reference.anchor_memberships_, err_msg=name
    )
    assert model.n_iter_ == reference.n_iter_, name


def test_block_algorithm_clusters_and_learns_the_weights(in_memory, views):
    from mvlearn_ext.cluster import ConcatKMeans

    Xs, y = views
    # Each informative view shows 10% of the rows a random cluster, so no method is
    # perfect here; the block fit must stay within 0.03 of the concatenation baseline.
    baseline = clustering_accuracy(y, ConcatKMeans(n_clusters=K, random_state=0).fit_predict(Xs))
    assert clustering_accuracy(y, in_memory.labels_) >= baseline - 0.03
    assert in_memory.anchor_graph_ is None and in_memory.embedding_ is None
    # The feedback ran.
    assert in_memory.n_iter_ >= 1 and len(in_memory.view_weights_history_) >= 2
    # The noise view ends with almost no weight (the factor start already gives it little).
    assert max(in_memory.view_weights_[2], in_memory.view_weights_history_[0][2]) < 0.1


def test_same_labels_in_memory_on_disk_and_on_a_cluster(in_memory, views, on_disk):
    Xs, _ = views
    memmaps, zarrs = on_disk
    fitted = {"memmap": _model(block_size=CHUNK).fit(memmaps)}
    if zarrs is not None:
        fitted["zarr"] = _model(block_size=CHUNK).fit(zarrs)
    dask_views = [da.from_array(X, chunks=(CHUNK, -1)) for X in Xs]
    fitted["dask threads"] = _model().fit(dask_views)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        lazy = [da.from_zarr(z) for z in zarrs] if zarrs is not None else dask_views
        fitted["LocalCluster"] = _model().fit(lazy)
        labels = fitted["LocalCluster"].labels_
        assert isinstance(labels, da.Array) and labels.chunks[0] == lazy[0].chunks[0]
        predicted = fitted["LocalCluster"].predict(lazy)
        assert isinstance(predicted, da.Array)
        np.testing.assert_array_equal(predicted.compute(), in_memory.predict(Xs))
        # Scattered to the cluster's workers: they live as long as the client.
        fitted["LocalCluster"].labels_ = labels.compute()
    for name, model in fitted.items():
        _same_fit(model, in_memory, name)


def test_result_does_not_depend_on_the_number_of_threads(views, in_memory):
    import dask

    Xs, _ = views
    dask_views = [da.from_array(X, chunks=(CHUNK, -1)) for X in Xs]
    for workers in (1, 3):
        with dask.config.set(num_workers=workers):
            model = _model().fit(dask_views)
        _same_fit(model, in_memory, f"{workers} threads")


def test_blocks_reproduce_the_in_memory_algorithm(views, in_memory):
    """Up to ROTATION_SAMPLE rows, only the rounding of the block sums differs."""
    Xs, _ = views
    classic = _model().fit(Xs)
    for blocked in (in_memory, _model(block_size=N).fit(Xs)):
        assert clustering_accuracy(classic.labels_, blocked.labels_) == 1.0
        assert clustering_accuracy(classic.initial_labels_, blocked.initial_labels_) == 1.0
        assert blocked.n_iter_ == classic.n_iter_
        np.testing.assert_allclose(blocked.view_weights_, classic.view_weights_, rtol=1e-9)
        for A_b, A_c in zip(blocked.anchors_, classic.anchors_, strict=True):
            np.testing.assert_allclose(A_b, A_c, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(
            blocked.anchor_memberships_, classic.anchor_memberships_, atol=1e-12
        )
    assert clustering_accuracy(classic.predict(Xs), in_memory.predict(Xs)) == 1.0


def test_projection_from_the_gram_matrix_is_the_in_memory_embedding(in_memory, views):
    """``Z^T P`` with ``P`` from ``Z Z^T`` and the degrees spans the embedding of ``Z``."""
    Xs, _ = views
    graph = _model().fit(Xs).anchor_graph_
    degree = np.asarray(graph.sum(axis=1)).ravel()
    P = regularised_projection_from_gram((graph @ graph.T).toarray(), degree, N, K)
    F_blocks = np.asarray(graph.T @ P)
    np.testing.assert_allclose(F_blocks.T @ F_blocks, np.eye(K), atol=1e-10)
    # Reference: F^T S_tau F for S_tau = Z^T (Delta + tau I)^{-1} Z, applied to F through Z
    # (no n x n matrix), is the diagonal of the top eigenvalues of the m x m problem.
    live = degree > 0
    tau = DEGREE_REG * N / live.sum()
    Z = graph.toarray()[live]
    weights = 1.0 / (degree[live] + tau)
    SF = Z.T @ (weights[:, None] * (Z @ F_blocks))
    top = np.linalg.eigvalsh(np.sqrt(weights)[:, None] * (Z @ Z.T) * np.sqrt(weights))[::-1][:K]
    np.testing.assert_allclose(SF, F_blocks * top, atol=1e-8)


class _SampledRotationDRMC(DRMC):
    """DRMC whose block path rotates on 1000 rows (100000 by default)."""

    _rotation_sample = 1000


def test_rotation_on_a_sample_and_the_assignment_pass(views, on_disk):
    """Above ``_rotation_sample`` rows: rotation on a sample, then a labelling pass."""
    Xs, y = views
    memmaps, _ = on_disk
    full = _model(block_size=CHUNK).fit(Xs)

    def sampled_model(**kwargs):
        return _SampledRotationDRMC(n_clusters=K, random_state=7, **kwargs)

    sampled = sampled_model(block_size=CHUNK).fit(Xs)
    assert sampled.initial_labels_ is None
    assert clustering_accuracy(y, sampled.labels_) >= clustering_accuracy(y, full.labels_) - 0.01
    assert clustering_accuracy(full.labels_, sampled.labels_) > 0.99
    _same_fit(sampled_model(block_size=CHUNK).fit(memmaps), sampled, "memmap, sampled rotation")
    dask_views = [da.from_array(X, chunks=(CHUNK, -1)) for X in Xs]
    _same_fit(sampled_model().fit(dask_views), sampled, "dask, sampled rotation")


def test_in_memory_is_the_fit_of_one_block(views):
    """Views in memory are one row block of the same driver, every row rotated."""
    Xs, _ = views
    in_memory = _SampledRotationDRMC(n_clusters=K, random_state=7).fit(Xs)
    one_block = _model(block_size=N).fit(Xs)
    _same_fit(in_memory, one_block, "in memory, one block")
    np.testing.assert_array_equal(in_memory.initial_labels_, one_block.initial_labels_)
    np.testing.assert_array_equal(in_memory.rotation_, one_block.rotation_)
    # Above _rotation_sample the in-memory fit still rotates every row.
    assert in_memory.embedding_.shape == (N, K) and in_memory.anchor_graph_.shape[1] == N
    assert one_block.embedding_ is None


def test_kept_neighbours_rebuild_the_block_graph_exactly():
    """The labelling pass rebuilds each block's graph from 60 bytes per row, bit for bit."""
    rng = np.random.default_rng(1)
    for ragged in (False, True):
        dense = np.zeros((30, 50))  # 30 anchors x 50 samples, 5 neighbours per sample
        for i in range(50):
            width = 5 if not ragged else 1 + i % 5
            dense[rng.choice(30, width, replace=False), i] = rng.random(width)
        Z = _drmc_blocks.sp.csr_matrix(dense)
        kept = _drmc_blocks._neighbours(Z)
        assert (kept[3] is None) == (not ragged)
        assert kept[1].dtype == np.int32
        rebuilt = _drmc_blocks._graph_of(kept, 30)
        for name in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(rebuilt, name), getattr(Z, name), err_msg=name)


def test_assignment_rule_is_the_first_order_gain():
    """The rule's scores are the exact gains of adding a sample, to first order in 1/n_c."""
    rng = np.random.default_rng(0)
    F = rng.standard_normal((400, 3))
    labels = np.argmax(F, axis=1)
    R = np.eye(3)
    slope, offset = _drmc_blocks._assignment_rule(F, R, labels, 3)
    G = F @ R
    counts = np.bincount(labels, minlength=3).astype(float)
    sums = np.array([G[labels == c, c].sum() for c in range(3)])
    g = np.array([0.3, -0.2, 0.1])  # a new sample's row of F R
    exact = (sums + g) / np.sqrt(counts + 1) - sums / np.sqrt(counts)
    # Taylor: exact - linear = -g / (2 n^{3/2}) + 3 s / (8 n^{5/2}) + higher orders.
    bound = np.abs(g) / counts**1.5 + np.abs(sums) / counts**2.5
    assert np.all(np.abs(g * slope - offset - exact) <= bound)
    assert np.argmax(g * slope - offset) == np.argmax(exact)


def test_fixed_weights_on_blocks(views):
    Xs, _ = views
    for params in ({"view_weights": "uniform"}, {"max_iter": 0}):
        classic = _model(**params).fit(Xs)
        blocked = _model(block_size=CHUNK, **params).fit(Xs)
        assert clustering_accuracy(classic.labels_, blocked.labels_) == 1.0
        np.testing.assert_array_equal(blocked.view_weights_, classic.view_weights_)


def test_factor_weights_on_blocks(views):
    # The scoring rows of the factor weights are drawn as in memory (N > 1000: a
    # subsample), so the starting weights and the fit are the same.
    Xs, _ = views
    classic = _model(view_weights="factor").fit(Xs)
    blocked = _model(view_weights="factor", block_size=CHUNK).fit(Xs)
    np.testing.assert_array_equal(
        blocked.view_weights_history_[0], classic.view_weights_history_[0]
    )
    assert clustering_accuracy(classic.labels_, blocked.labels_) == 1.0
    np.testing.assert_allclose(blocked.view_weights_, classic.view_weights_, rtol=1e-9)


def test_progress_bar_over_blocks(views, capsys):
    Xs, _ = views
    _model(block_size=CHUNK, verbose=1).fit(Xs)
    err = capsys.readouterr().err
    assert "DRMC graph 0" in err and "0/5 [" in err and "[DRMC] feedback 1" in err


def test_bad_block_input_is_named(views):
    Xs, _ = views
    a = da.from_array(Xs[0], chunks=(CHUNK, -1))
    b = da.from_array(Xs[1], chunks=(CHUNK + 1, -1))
    with pytest.raises(ValueError, match=r"Xs\[1\] has row chunks .*rechunk"):
        _model().fit([a, b])
    bad = Xs[2].copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match=r"Xs\[1\] contains NaN"):
        _model(block_size=CHUNK).fit([Xs[0], bad])
    with pytest.raises(ValueError, match="same number of samples"):
        _model(block_size=CHUNK).fit([Xs[0], Xs[1][:-1]])
    with pytest.raises(ValueError, match="n_clusters=4"):
        _model(block_size=2).fit([X[:3] for X in Xs])
    with pytest.raises(InvalidParameterError, match="block_size"):
        _model(block_size=0).fit(Xs)
    model = _model(block_size=CHUNK).fit(Xs)
    with pytest.raises(ValueError, match="features"):
        model.predict([da.from_array(X[:, :3], chunks=(CHUNK, -1)) for X in Xs])


def test_the_numpy_block_path_never_imports_dask():
    code = (
        "import sys, numpy as np\n"
        "from mvlearn_ext.cluster import DRMC\n"
        "from mvlearn_ext.datasets import make_multiview_blobs\n"
        "Xs, _ = make_multiview_blobs(400, n_views=2, n_clusters=3, random_state=0)\n"
        "m = DRMC(n_clusters=3, block_size=128, random_state=0).fit(Xs)\n"
        "m.predict(Xs)\n"
        "assert 'dask' not in sys.modules and 'distributed' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
