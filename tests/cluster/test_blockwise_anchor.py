"""The block path of SMVSC, FPMVS-CAG (``_smvsc_solver.py``) and EOMSC-CA (``_eomsc_blocks.py``).

The promises: with the same row blocks and seed, the labels are the same bits in memory
(``block_size``), out of core (memmap, zarr), on dask threads and on a
``dask.distributed`` cluster, because every reduction is folded in block order; and a
single block runs the in-memory algorithm (same iterations, same objective to rounding).
"""

import subprocess
import sys

import numpy as np
import pytest

from mvlearn_ext.cluster import EOMSCCA, FPMVSCAG, SMVSC, _eomsc_blocks
from mvlearn_ext.cluster._blockwise import merge_moments, moments_of_block
from mvlearn_ext.cluster._eomsc_blocks import column_thresholds, number_components
from mvlearn_ext.cluster._eomsc_solver import project_simplex_masked
from mvlearn_ext.cluster._smvsc_solver import mapstd_from_moments
from mvlearn_ext.datasets import make_multiview_blobs
from mvlearn_ext.metrics import clustering_accuracy

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

N, K, CHUNK = 2000, 4, 450  # five blocks, the last one shorter

MODELS = {
    "SMVSC": lambda **kw: SMVSC(n_clusters=K, n_anchors=8, n_init=3, random_state=5, **kw),
    "FPMVSCAG": lambda **kw: FPMVSCAG(n_clusters=K, n_init=3, random_state=5, **kw),
    "EOMSCCA": lambda **kw: EOMSCCA(n_clusters=K, n_components=2 * K, random_state=5, **kw),
}


@pytest.fixture(scope="module")
def views():
    Xs, y = make_multiview_blobs(N, n_views=3, n_clusters=K, n_features=[6, 5, 4], random_state=3)
    return [X.astype(np.float32) for X in Xs], y


@pytest.fixture(scope="module")
def on_disk(views, tmp_path_factory):
    """The views as NumPy memmaps and as zarr arrays (when zarr is installed)."""
    Xs, _ = views
    root = tmp_path_factory.mktemp("anchor_views")
    memmaps = []
    for v, X in enumerate(Xs):
        np.save(root / f"view{v}.npy", X)
        memmaps.append(np.load(root / f"view{v}.npy", mmap_mode="r"))
    try:
        import zarr
    except ImportError:
        return memmaps, None
    zarrs = []
    for v, X in enumerate(Xs):
        path = str(root / f"view{v}.zarr")
        z = zarr.create_array(path, shape=X.shape, chunks=(CHUNK, X.shape[1]), dtype=X.dtype)
        z[:] = X
        zarrs.append(zarr.open_array(path, mode="r"))
    return memmaps, zarrs


@pytest.fixture(scope="module")
def references(views):
    Xs, _ = views
    return {name: make(block_size=CHUNK).fit(Xs) for name, make in MODELS.items()}


def _same_fit(model, reference, name):
    np.testing.assert_array_equal(np.asarray(model.labels_), reference.labels_, err_msg=name)
    np.testing.assert_array_equal(model.objective_, reference.objective_, err_msg=name)
    np.testing.assert_array_equal(model.view_weights_, reference.view_weights_, err_msg=name)
    np.testing.assert_array_equal(
        model.consensus_anchors_, reference.consensus_anchors_, err_msg=name
    )


@pytest.mark.parametrize("name", list(MODELS))
def test_block_fit_clusters_the_blobs(name, references, views):
    _, y = views
    model = references[name]
    assert clustering_accuracy(y, model.labels_) > 0.95
    assert model.n_iter_ >= 2


@pytest.mark.parametrize("name", list(MODELS))
def test_same_labels_in_memory_on_disk_on_threads_and_on_a_cluster(
    name, references, views, on_disk
):
    Xs, _ = views
    memmaps, zarrs = on_disk
    make, reference = MODELS[name], references[name]
    fitted = {"memmap": make(block_size=CHUNK).fit(memmaps)}
    if zarrs is not None:
        fitted["zarr"] = make(block_size=CHUNK).fit(zarrs)
    dask_views = [da.from_array(X, chunks=(CHUNK, -1)) for X in Xs]
    fitted["dask threads"] = make().fit(dask_views)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        lazy = [da.from_zarr(z) for z in zarrs] if zarrs is not None else dask_views
        fitted["LocalCluster"] = make().fit(lazy)
        labels = fitted["LocalCluster"].labels_
        assert isinstance(labels, da.Array) and labels.chunks[0] == lazy[0].chunks[0]
        if hasattr(reference, "predict"):
            predicted = fitted["LocalCluster"].predict(lazy)
            assert isinstance(predicted, da.Array)
            np.testing.assert_array_equal(predicted.compute(), reference.predict(Xs))
            # The training labels are the nearest centres of the training rows.
            np.testing.assert_array_equal(predicted.compute(), reference.labels_)
        # Scattered to the cluster's workers: they live as long as the client.
        fitted["LocalCluster"].labels_ = labels.compute()
    for key, model in fitted.items():
        _same_fit(model, reference, f"{name}, {key}")


def test_result_does_not_depend_on_the_number_of_threads(views, references):
    import dask

    Xs, _ = views
    dask_views = [da.from_array(X, chunks=(CHUNK, -1)) for X in Xs]
    for workers in (1, 3):
        with dask.config.set(num_workers=workers):
            model = MODELS["SMVSC"]().fit(dask_views)
        _same_fit(model, references["SMVSC"], f"{workers} threads")


@pytest.mark.parametrize("name", list(MODELS))
def test_one_block_runs_the_in_memory_algorithm(name, views):
    """One block: the same iterations as in memory, the sums equal to rounding."""
    Xs, _ = views
    classic = MODELS[name]().fit(Xs)
    blocked = MODELS[name](block_size=N).fit(Xs)
    assert blocked.n_iter_ == classic.n_iter_
    np.testing.assert_allclose(blocked.objective_, classic.objective_, rtol=1e-9)
    np.testing.assert_allclose(blocked.view_weights_, classic.view_weights_, rtol=1e-9)
    np.testing.assert_allclose(
        blocked.consensus_anchors_, classic.consensus_anchors_, rtol=1e-6, atol=1e-9
    )
    for P_b, P_c in zip(blocked.anchors_, classic.anchors_, strict=True):
        np.testing.assert_allclose(P_b, P_c, rtol=1e-6, atol=1e-9)
    if name != "EOMSCCA":  # there d = 8 exceeds every d_v: W_v (orthonormal rows) is not unique
        for P_b, P_c in zip(blocked.projections_, classic.projections_, strict=True):
            np.testing.assert_allclose(P_b, P_c, rtol=1e-6, atol=1e-9)
    assert clustering_accuracy(classic.labels_, blocked.labels_) == 1.0
    if name == "EOMSCCA":  # the components, numbered by first sample, are the same
        np.testing.assert_array_equal(blocked.labels_, classic.labels_)
        np.testing.assert_array_equal(blocked.n_inner_iter_, classic.n_inner_iter_)
        assert blocked.graph_reg_ == classic.graph_reg_
        assert blocked.anchor_graph_ is None  # never stored on the block path
        # The top eigenvalue 1 is repeated (one per component): U is a basis chosen by
        # rounding, U U^T is not.
        U_b, U_c = blocked.embedding_[:300], classic.embedding_[:300]
        np.testing.assert_allclose(U_b @ U_b.T, U_c @ U_c.T, atol=1e-9)


@pytest.mark.parametrize("name", ["SMVSC", "EOMSCCA"])
def test_first_anchors_across_several_blocks(name, views):
    """``Z_0 = [I_m, 0]`` with the first m samples spread over several blocks is exact."""
    Xs, _ = views
    make, size = {
        "SMVSC": (lambda **kw: SMVSC(n_clusters=K, n_init=3, random_state=5, **kw), 3),
        "EOMSCCA": (lambda **kw: EOMSCCA(n_clusters=K, n_anchors=12, random_state=5, **kw), 5),
    }[name]
    head = [X[:400] for X in Xs]
    small = make(block_size=size).fit(head)
    one = make(block_size=400).fit(head)
    np.testing.assert_allclose(small.objective_, one.objective_, rtol=1e-9)
    assert clustering_accuracy(small.labels_, one.labels_) == 1.0
    # Reordering the samples moves the start: the fit depends on the order, as in memory.
    order = np.random.RandomState(0).permutation(400)
    shuffled = make(block_size=400).fit([X[order] for X in head])
    assert not np.allclose(shuffled.objective_[0], one.objective_[0], rtol=1e-6)


def test_paper_variant_on_blocks(views, on_disk):
    """The monotone solver: one block is the in-memory fit; dask gives the same bits."""
    Xs, y = views
    memmaps, _ = on_disk

    def make(**kw):
        return SMVSC(
            n_clusters=K, n_anchors=8, n_components=3, variant="paper", n_init=3,
            random_state=5, **kw,
        )  # fmt: skip

    classic = make().fit(Xs)
    one = make(block_size=N).fit(Xs)
    assert one.n_iter_ == classic.n_iter_
    np.testing.assert_allclose(one.objective_, classic.objective_, rtol=1e-8)
    assert clustering_accuracy(classic.labels_, one.labels_) == 1.0
    # The objective never increases, on blocks as in memory.
    reference = make(block_size=CHUNK).fit(Xs)
    assert np.all(np.diff(reference.objective_) <= 1e-9 * reference.objective_[:-1])
    assert clustering_accuracy(y, reference.labels_) > 0.95
    _same_fit(make(block_size=CHUNK).fit(memmaps), reference, "memmap")
    lazy = [da.from_array(X, chunks=(CHUNK, -1)) for X in Xs]
    model = make().fit(lazy)
    _same_fit(model, reference, "dask")
    np.testing.assert_array_equal(model.predict(lazy).compute(), reference.predict(Xs))


def test_other_blocks_change_only_the_rounding(views, references):
    Xs, _ = views
    for name, make in MODELS.items():
        other = make(block_size=1024).fit(Xs)
        reference = references[name]
        assert clustering_accuracy(reference.labels_, other.labels_) == 1.0
        if name == "SMVSC":
            # m = 8 > d = 4: anchors end unused, X_v Z^T has zero columns and its polar
            # factor is not unique, so the code's (non-monotone) iteration takes the
            # rounding of the sums to a different iterate after a few iterations.
            np.testing.assert_allclose(other.objective_[0], reference.objective_[0], rtol=1e-12)
            continue
        np.testing.assert_allclose(other.objective_, reference.objective_, rtol=1e-9)
    square = [
        SMVSC(n_clusters=K, n_init=3, random_state=5, block_size=b).fit(Xs) for b in (450, N)
    ]
    np.testing.assert_allclose(square[0].objective_, square[1].objective_, rtol=1e-9)


def test_mapstd_from_merged_moments():
    rng = np.random.RandomState(0)
    X = rng.normal(3.0, 2.0, size=(500, 4))
    X[:, 2] = 7.0  # constant: scale 1
    merged = None
    for start in range(0, 500, 130):
        merged = merge_moments(merged, moments_of_block(X[start : start + 130]))
    mean, scale = mapstd_from_moments(merged)
    np.testing.assert_allclose(mean, X.mean(axis=0), rtol=1e-13)
    assert scale[2] == 1.0
    np.testing.assert_allclose(scale[[0, 1, 3]], X[:, [0, 1, 3]].std(axis=0, ddof=1))


def test_progress_bar_over_blocks(views, capsys):
    Xs, _ = views
    MODELS["FPMVSCAG"](block_size=CHUNK, verbose=1, max_iter=2).fit(Xs)
    err = capsys.readouterr().err
    assert "FPMVSCAG iteration 1" in err and "0/5 [" in err


@pytest.mark.filterwarnings("error::RuntimeWarning")  # the infinity raises before any warning
def test_unsupported_settings_are_named(views):
    Xs, _ = views
    with pytest.raises(ValueError, match="init='kmeans' is not available on the block path"):
        SMVSC(n_clusters=K, init="kmeans", block_size=CHUNK).fit(Xs)
    with pytest.raises(ValueError, match="init='kmeans' is not available on the block path"):
        EOMSCCA(n_clusters=K, init="kmeans", block_size=CHUNK).fit(Xs)
    with pytest.raises(ValueError, match="needs at least 2 views"):
        SMVSC(n_clusters=K, block_size=CHUNK).fit(Xs[:1])
    with pytest.raises(ValueError, match="n_anchors=2 is below n_clusters=4"):
        EOMSCCA(n_clusters=K, n_anchors=2, block_size=CHUNK).fit(Xs)
    bad = Xs[1].copy()
    bad[3, 0] = np.inf
    with pytest.raises(ValueError, match=r"Xs\[1\] contains NaN or infinity"):
        EOMSCCA(n_clusters=K, block_size=CHUNK).fit([Xs[0], bad])
    model = SMVSC(n_clusters=K, block_size=CHUNK, max_iter=2).fit(Xs)
    with pytest.raises(ValueError, match="features"):
        model.predict([da.from_array(X[:, :3], chunks=(CHUNK, -1)) for X in Xs])


def test_the_numpy_block_path_never_imports_dask():
    code = (
        "import sys\n"
        "from mvlearn_ext.cluster import EOMSCCA, SMVSC\n"
        "from mvlearn_ext.datasets import make_multiview_blobs\n"
        "Xs, _ = make_multiview_blobs(300, n_views=2, n_clusters=3, random_state=0)\n"
        "SMVSC(n_clusters=3, block_size=64, random_state=0).fit(Xs).predict(Xs)\n"
        "EOMSCCA(n_clusters=3, block_size=64).fit(Xs)\n"
        "assert 'dask' not in sys.modules and 'distributed' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def _column_projection(target, support, tau, has_support):
    with np.errstate(invalid="ignore"):
        out = np.maximum(np.where(support, target, -np.inf) - tau[None, :], 0.0)
    out[:, ~has_support] = 0.0
    return out


def test_column_thresholds_give_the_in_memory_projection_bit_for_bit():
    """A column's threshold from per-block candidates is the sort-based rule's, exactly."""
    rng = np.random.RandomState(0)
    n, m = 1000, 7
    target = rng.normal(size=(n, m)) * np.array([0.01, 0.1, 1, 3, 0.001, 1, 1])
    support = rng.uniform(size=(n, m)) < 0.8
    support[:, 5] = False  # no support: a zero column
    support[:, 6] = False
    support[[3, 500, 999], 6] = True  # fewer supported values than candidates
    reference = project_simplex_masked(target.T, support.T).T
    bounds = [0, 130, 131, 400, 777, 1000]  # uneven blocks, one of a single row
    sizes_seen = set()
    for size in (1, 2, 8, 64, 4096):
        parts = [
            _eomsc_blocks._column_candidates(target[lo:hi], support[lo:hi], size)
            for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
        ]
        tau, has_support, unsettled = column_thresholds(parts, size)
        assert not has_support[5] and has_support[6]
        settled = ~unsettled
        got = _column_projection(target, support, tau, has_support)
        np.testing.assert_array_equal(got[:, settled], reference[:, settled])
        sizes_seen.add(bool(unsettled.any()))
    assert sizes_seen == {True, False}  # the small sizes leave columns to ask again
    np.testing.assert_allclose(reference[:, :5].sum(axis=0), 1.0)


def test_components_by_anchors_match_the_bipartite_graph():
    """Samples joined through shared anchors: scipy's components of the whole graph."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    rng = np.random.RandomState(1)
    n, m = 300, 12
    S = (rng.uniform(size=(n, m)) < 0.04) * rng.uniform(size=(n, m))
    S[:, 3] = 0.0  # an anchor without samples
    S[[0, 7, 150]] = 0.0  # samples without anchors: components of their own
    adjacency = sp.bmat([[None, sp.csr_matrix(S)], [sp.csr_matrix(S.T), None]], format="csr")
    _, components = connected_components(adjacency, directed=False)
    _, expected = np.unique(components[:n], return_inverse=True)
    together = None
    firsts = []
    for lo in range(0, n, 70):  # by blocks, as the block path does
        edges = S[lo : lo + 70] > 0
        firsts.append(np.where(edges.any(axis=1), np.argmax(edges, axis=1), -1))
        E = edges.astype(float)
        together = (E.T @ E > 0) if together is None else together | (E.T @ E > 0)
    labels = number_components(np.concatenate(firsts), together)
    np.testing.assert_array_equal(labels, expected)
    assert labels[0] == 0 and len(np.unique(labels)) > 10


class _TwoCandidatesEOMSCCA(EOMSCCA):
    """EOMSCCA whose blocks send two candidates per anchor column (128 by default)."""

    _column_candidates = 2


def _two_candidates(**kw):
    return _TwoCandidatesEOMSCCA(n_clusters=K, n_components=2 * K, random_state=5, **kw)


def test_eomscca_graph_step_does_not_depend_on_the_candidates(views, references):
    """Two candidates per block force more passes; the thresholds and fit are the same bits."""
    Xs, _ = views
    model = _two_candidates(block_size=CHUNK).fit(Xs)
    _same_fit(model, references["EOMSCCA"], "two candidates")
    np.testing.assert_array_equal(model.embedding_, references["EOMSCCA"].embedding_)


def test_eomscca_on_a_cluster_keeps_the_graph_step_on_the_workers(
    views, references, on_disk, monkeypatch
):
    """On a cluster the rows' state stays on the workers; the fit is the same bits.

    Two candidates per block force the extra thresholds passes on the kept targets too.
    """
    Xs, _ = views
    _, zarrs = on_disk
    kinds = []
    carries = _eomsc_blocks._carries

    def recording(*args):
        made = carries(*args)
        kinds.append(type(made).__name__)
        return made

    monkeypatch.setattr(_eomsc_blocks, "_carries", recording)
    if zarrs is not None:
        lazy = [da.from_zarr(z) for z in zarrs]
    else:
        lazy = [da.from_array(X, chunks=(CHUNK, -1)) for X in Xs]
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        model = _two_candidates().fit(lazy)
        reference = references["EOMSCCA"]
        # labels_ refers to row chunks scattered to the workers: read it while the client is open.
        _same_fit(model, reference, "cluster, two candidates")
    assert set(kinds) == {"_WorkerCarries"} and len(kinds) == model.n_iter_
    np.testing.assert_array_equal(model.embedding_, reference.embedding_)
    np.testing.assert_array_equal(model.n_inner_iter_, reference.n_inner_iter_)
    assert model.graph_reg_ == reference.graph_reg_


@pytest.mark.parametrize("make", [FPMVSCAG, SMVSC])
def test_an_anchor_left_empty_warns_with_advice(make, bench_dask_views):
    """The authors' start on the first 10 samples (7 of the 10 blobs) leaves an anchor
    empty: a fixed point of their algorithm. The fit warns, in memory and on blocks."""
    from sklearn.exceptions import ConvergenceWarning

    Xs, y = bench_dask_views(1000)
    assert len(np.unique(y[:10])) == 7
    advice = "n_anchors=20" if make is FPMVSCAG else "n_anchors=20 or 30"
    for block_size in (None, 300):
        with pytest.warns(ConvergenceWarning, match=r"separates only 9 groups") as record:
            model = make(n_clusters=10, n_init=2, random_state=0, block_size=block_size).fit(Xs)
        assert advice in str(record[0].message)
        assert "1 of its 10 anchors ended with no sample" in str(record[0].message)
        assert len(np.unique(model.labels_)) == 9
        assert 0.85 < clustering_accuracy(y, model.labels_) < 0.95
