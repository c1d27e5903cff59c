"""What a block fit on a ``dask.distributed`` client puts in its graphs: chunks, not rows.

``labels_`` of a fit on dask views is a dask array. Built by ``da.from_array`` of the
fitted labels, every ``compute`` on a client sent all ``n`` labels inside the graph
(8 bytes a row: the 76 MiB warning of dask at ``n = 10^7``). The row chunks are now
scattered to the workers, so the graph holds one small task per chunk: its size
grows with the number of chunks, not with the rows in them. Memmap views were sent
whole in every pass (a memmap pickles with its data); they are now read from their file.
"""

import pickle

import numpy as np
import pytest

from mvlearn_ext.cluster import DRMC, LMVSC

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

CHUNK = 512  # 4 KiB of int64 labels a chunk


def _views(n):
    rng = np.random.default_rng(0)
    centres = rng.uniform(-10.0, 10.0, size=(3, 4, 8))
    y = rng.integers(4, size=n)
    return [centres[v][y] + rng.standard_normal((n, 8)) for v in range(3)]


def _graph_bytes(array):
    return len(pickle.dumps(dict(array.__dask_graph__())))


def test_without_a_client_the_labels_stay_in_this_process():
    # (before the module's client starts)
    Xs = _views(2 * CHUNK)
    model = LMVSC(n_clusters=4, random_state=0).fit([da.from_array(X, CHUNK) for X in Xs])
    assert distributed.client._get_global_client() is None
    np.testing.assert_array_equal(
        model.labels_.compute(scheduler="synchronous"),
        LMVSC(n_clusters=4, random_state=0, block_size=CHUNK).fit(Xs).labels_,
    )


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.mark.parametrize("make", [LMVSC, DRMC])
def test_labels_graph_grows_by_chunks_not_by_rows(client, make):
    sizes, labels = {}, {}
    for n in (4 * CHUNK, 8 * CHUNK):
        Xs = _views(n)
        model = make(n_clusters=4, random_state=0).fit([da.from_array(X, CHUNK) for X in Xs])
        assert isinstance(model.labels_, da.Array)
        assert model.labels_.chunks[0] == (CHUNK,) * (n // CHUNK)
        sizes[n] = _graph_bytes(model.labels_)
        labels[n] = model.labels_.compute()
        # The same labels as the NumPy block path (the fit is folded in block order).
        reference = make(n_clusters=4, random_state=0, block_size=CHUNK).fit(Xs).labels_
        np.testing.assert_array_equal(labels[n], reference)
    per_added_chunk = (sizes[8 * CHUNK] - sizes[4 * CHUNK]) / 4
    # Labels in the graph would add 8 * CHUNK = 4096 bytes a chunk.
    assert per_added_chunk < 1024, sizes
    assert sizes[4 * CHUNK] < 8 * 4 * CHUNK, sizes


def test_memmap_views_are_read_from_their_file_not_sent(client, tmp_path):
    """A memmap pickles with its data: the block graph now names the file instead."""
    from mvlearn_ext.cluster._blockwise import RowBlocks

    n = 8 * CHUNK
    Xs = [X.astype(np.float32) for X in _views(n)]
    memmaps = []
    for v, X in enumerate(Xs):
        np.save(tmp_path / f"view{v}.npy", X)
        memmaps.append(np.load(tmp_path / f"view{v}.npy", mmap_mode="r"))
    blocks = RowBlocks(memmaps, CHUNK)
    assert blocks.uses_dask
    for X, view in zip(Xs, blocks.views, strict=True):
        assert _graph_bytes(view) < X.nbytes / 10  # 128 KiB of data a view
        np.testing.assert_array_equal(view.compute(), X)
    # A slice of a memmap keeps its parent's offset: it is sent as before, still right.
    sliced = RowBlocks([m[CHUNK:] for m in memmaps], CHUNK).views[0]
    np.testing.assert_array_equal(sliced.compute(), Xs[0][CHUNK:])
    model = LMVSC(n_clusters=4, random_state=0, block_size=CHUNK).fit(memmaps)
    reference = LMVSC(n_clusters=4, random_state=0, block_size=CHUNK).fit(Xs)
    np.testing.assert_array_equal(model.labels_, reference.labels_)
