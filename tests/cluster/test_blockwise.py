"""The block path of the anchor clusterers: dask arrays, zarr arrays and memmaps.

The promise: with the same row blocks and seed, the labels are the same in memory
(``block_size``), out of core (memmap, zarr) and on a ``dask.distributed`` cluster,
because every reduction is folded in block order.
"""

import subprocess
import sys

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from mvlearn_ext.cluster import HAGMVC, LMVSC
from mvlearn_ext.datasets import make_multiview_blobs
from mvlearn_ext.metrics import clustering_accuracy

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

N, K, CHUNK = 3000, 4, 700  # five blocks, the last one shorter


@pytest.fixture(scope="module")
def views():
    Xs, y = make_multiview_blobs(N, n_views=3, n_clusters=K, n_features=[6, 5, 4], random_state=3)
    return [X.astype(np.float32) for X in Xs], y


@pytest.fixture(scope="module")
def on_disk(views, tmp_path_factory):
    """The views as NumPy memmaps and as zarr arrays (when zarr is installed)."""
    Xs, _ = views
    root = tmp_path_factory.mktemp("views")
    memmaps = []
    for v, X in enumerate(Xs):
        path = root / f"view{v}.npy"
        np.save(path, X)
        memmaps.append(np.load(path, mmap_mode="r"))
    zarrs = None
    try:
        import zarr
    except ImportError:
        pass
    else:
        zarrs = []
        for v, X in enumerate(Xs):
            z = zarr.create_array(
                str(root / f"view{v}.zarr"), shape=X.shape, chunks=(CHUNK, X.shape[1]),
                dtype=X.dtype,
            )  # fmt: skip
            z[:] = X
            zarrs.append(zarr.open_array(str(root / f"view{v}.zarr"), mode="r"))
    return memmaps, zarrs


def _model(**kwargs):
    return HAGMVC(n_clusters=K, random_state=7, **kwargs)


@pytest.fixture(scope="module")
def in_memory(views):
    Xs, _ = views
    return _model(block_size=CHUNK).fit(Xs)


def test_block_algorithm_clusters_the_blobs(in_memory, views):
    _, y = views
    assert clustering_accuracy(y, in_memory.labels_) > 0.95
    assert in_memory.embedding_ is None and in_memory.graphs_[0] is None
    # The objective is evaluated from the block sums: the sweeps lower it here.
    assert in_memory.objective_[-1] < in_memory.objective_[0]


def test_same_labels_in_memory_on_disk_and_on_a_cluster(in_memory, views, on_disk):
    Xs, _ = views
    memmaps, zarrs = on_disk
    reference = in_memory.labels_
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
        labels = np.asarray(model.labels_)
        np.testing.assert_array_equal(labels, reference, err_msg=name)
        np.testing.assert_array_equal(model.objective_, in_memory.objective_, err_msg=name)
        np.testing.assert_array_equal(model.anchors_[0][1], in_memory.anchors_[0][1], err_msg=name)


def test_result_does_not_depend_on_the_number_of_threads(views, in_memory):
    import dask

    Xs, _ = views
    dask_views = [da.from_array(X, chunks=(CHUNK, -1)) for X in Xs]
    for workers in (1, 3):
        with dask.config.set(num_workers=workers):
            model = _model().fit(dask_views)
        np.testing.assert_array_equal(model.labels_.compute(), in_memory.labels_)


def test_other_blocks_change_only_the_rounding(views, in_memory):
    Xs, _ = views
    other = _model(block_size=1024).fit(Xs)
    np.testing.assert_allclose(other.objective_, in_memory.objective_, rtol=1e-9)
    assert clustering_accuracy(in_memory.labels_, other.labels_) == 1.0


def test_one_block_reproduces_the_in_memory_fit(views):
    """NumPy views run the same driver as one block of at most 65536 rows."""
    Xs, _ = views
    for params in (dict(), dict(n_levels=2)):
        classic = _model(**params).fit(Xs)
        blocked = _model(block_size=N, **params).fit(Xs)
        assert blocked.n_anchors_ == classic.n_anchors_
        np.testing.assert_array_equal(blocked.objective_, classic.objective_)
        for level_b, level_c in zip(blocked.anchors_, classic.anchors_, strict=True):
            for A_b, A_c in zip(level_b, level_c, strict=True):
                np.testing.assert_array_equal(A_b, A_c)
        np.testing.assert_array_equal(blocked.view_weights_, classic.view_weights_)
        np.testing.assert_array_equal(blocked.labels_, classic.labels_)
    assert len(classic.n_anchors_) == 2


def test_progress_bar_over_blocks(views, capsys):
    Xs, _ = views
    _model(block_size=CHUNK, verbose=1).fit(Xs)
    err = capsys.readouterr().err
    assert "HAGMVC pass 0" in err and "0/5 [" in err


def test_bad_block_input_is_named(views):
    Xs, _ = views
    a = da.from_array(Xs[0], chunks=(CHUNK, -1))
    b = da.from_array(Xs[1], chunks=(CHUNK + 1, -1))
    with pytest.raises(ValueError, match=r"Xs\[1\] has row chunks .*rechunk"):
        _model().fit([a, b])
    unknown = da.from_array(Xs[1], chunks=(CHUNK, -1))
    unknown = unknown[unknown[:, 0] > -np.inf]  # a boolean mask: unknown chunk sizes
    with pytest.raises(ValueError, match=r"Xs\[1\] has unknown row chunk sizes"):
        _model().fit([a, unknown])
    bad = Xs[2].copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match=r"Xs\[1\] contains NaN"):
        _model(block_size=CHUNK).fit([Xs[0], bad])
    with pytest.raises(ValueError, match="same number of samples"):
        _model(block_size=CHUNK).fit([Xs[0], Xs[1][:-1]])
    with pytest.raises(InvalidParameterError, match="block_size"):
        _model(block_size=0).fit(Xs)
    model = _model(block_size=CHUNK).fit(Xs)
    with pytest.raises(ValueError, match="features"):
        model.predict([da.from_array(X[:, :3], chunks=(CHUNK, -1)) for X in Xs])


def test_the_cluster_package_and_the_numpy_block_path_never_import_dask():
    code = (
        "import sys, numpy as np\n"
        "from mvlearn_ext.cluster import HAGMVC\n"
        "from mvlearn_ext.datasets import make_multiview_blobs\n"
        "Xs, _ = make_multiview_blobs(400, n_views=2, n_clusters=3, random_state=0)\n"
        "HAGMVC(n_clusters=3, block_size=128, random_state=0).fit(Xs)\n"
        "assert 'dask' not in sys.modules and 'distributed' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_memmaps_without_dask(views, on_disk, in_memory, tmp_path):
    """Without dask, memmaps are read block after block in the calling thread."""
    memmaps, _ = on_disk
    np.save(tmp_path / "labels.npy", in_memory.labels_)
    code = (
        "import sys, numpy as np\n"
        "sys.modules['dask'] = None  # what a missing dask looks like to import\n"
        "from mvlearn_ext.cluster import HAGMVC\n"
        f"Xs = [np.load(p, mmap_mode='r') for p in {[str(m.filename) for m in memmaps]!r}]\n"
        f"m = HAGMVC(n_clusters={K}, random_state=7, block_size={CHUNK}).fit(Xs)\n"
        f"assert np.array_equal(m.labels_, np.load({str(tmp_path / 'labels.npy')!r}))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_worker_processes_give_the_same_labels(views, in_memory):
    """Two worker processes (about 20 s to start on a loaded 2-core machine)."""
    Xs, _ = views
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
            host="127.0.0.1",
        ) as cluster,
        distributed.Client(cluster),
    ):  # fmt: skip
        model = _model().fit([da.from_array(X, chunks=(CHUNK, -1)) for X in Xs])
        np.testing.assert_array_equal(model.labels_.compute(), in_memory.labels_)


# --------------------------------------------------------------------------- LMVSC


def _lmvsc(**kwargs):
    from mvlearn_ext.cluster import LMVSC

    return LMVSC(n_clusters=K, n_anchors=20, n_init=3, random_state=5, **kwargs)


def test_lmvsc_same_labels_in_memory_on_disk_and_on_a_cluster(views, on_disk):
    Xs, y = views
    memmaps, zarrs = on_disk
    reference = _lmvsc(block_size=CHUNK).fit(Xs)
    assert clustering_accuracy(y, reference.labels_) > 0.95
    assert reference.anchor_graph_ is None and reference.embedding_ is None
    fitted = {"memmap": _lmvsc(block_size=CHUNK).fit(memmaps)}
    if zarrs is not None:
        fitted["zarr"] = _lmvsc(block_size=CHUNK).fit(zarrs)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        lazy = [da.from_array(X, chunks=(CHUNK, -1)) for X in Xs]
        fitted["LocalCluster"] = _lmvsc().fit(lazy)
        assert isinstance(fitted["LocalCluster"].labels_, da.Array)
        predicted = fitted["LocalCluster"].predict(lazy)
        np.testing.assert_array_equal(predicted.compute(), reference.predict(Xs))
        # Scattered to the cluster's workers: they live as long as the client.
        fitted["LocalCluster"].labels_ = fitted["LocalCluster"].labels_.compute()
    for name, model in fitted.items():
        np.testing.assert_array_equal(np.asarray(model.labels_), reference.labels_, err_msg=name)
        np.testing.assert_array_equal(model.objective_, reference.objective_, err_msg=name)


def test_lmvsc_one_block_reproduces_the_in_memory_algorithm(views):
    """Below 50000 rows the anchors are the same k-means; one block sums like memory."""
    Xs, _ = views
    classic = _lmvsc().fit(Xs)
    blocked = _lmvsc(block_size=N).fit(Xs)
    for A_b, A_c in zip(blocked.anchors_, classic.anchors_, strict=True):
        np.testing.assert_allclose(A_b, A_c, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(blocked.objective_, classic.objective_, rtol=1e-9)
    np.testing.assert_allclose(blocked.singular_values_, classic.singular_values_, rtol=1e-9)
    assert blocked.n_iter_ == classic.n_iter_
    assert clustering_accuracy(classic.labels_, blocked.labels_) == 1.0
    # Other blocks: the QPs are per sample, only the rounding of the sums changes.
    other = _lmvsc(block_size=1024).fit(Xs)
    np.testing.assert_allclose(other.objective_, blocked.objective_, rtol=1e-9)
    assert clustering_accuracy(other.labels_, blocked.labels_) == 1.0


class _SampledAnchorsLMVSC(LMVSC):
    """LMVSC whose block path fits the anchors on 1000 rows (50000 by default)."""

    _anchor_sample = 1000


def test_lmvsc_blocks_fit_minibatch_anchors_on_the_drawn_rows(views):
    """Above the anchor sample size, MiniBatchKMeans (the in-memory choice) on the sample."""
    from mvlearn_ext.cluster._common import kmeans_anchors

    Xs, y = views
    model = _SampledAnchorsLMVSC(**_lmvsc(block_size=CHUNK).get_params()).fit(Xs)
    assert clustering_accuracy(y, model.labels_) > 0.95
    seed = np.random.RandomState(5).randint(np.iinfo(np.int32).max, size=2)[0]
    rows = np.sort(np.random.RandomState(seed).choice(N, size=1000, replace=False))
    for X, mean, scale, A in zip(
        Xs, model.view_means_, model.view_scales_, model.anchors_, strict=True
    ):
        expected = kmeans_anchors(
            (X[rows] - mean) / scale, 20, random_state=seed, n_init=3, minibatch=True
        )
        np.testing.assert_allclose(A, expected, rtol=1e-7, atol=1e-9)
