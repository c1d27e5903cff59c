"""The clusterers' shared plumbing (``cluster/_base.py``) and the eigen step they share."""

import numpy as np
import pytest
from sklearn.utils import check_random_state

import mvlearn_ext.cluster as cluster
from mvlearn_ext.cluster import DRMC, LMVSC, SMVSC, ConcatSpectral
from mvlearn_ext.cluster._base import (
    BaseClusterer,
    EmbeddingClusterer,
    InductiveClusterer,
    check_anchors_cover_clusters,
    draw_seeds,
    open_blocks,
)
from mvlearn_ext.cluster._common import gram_eigenpairs, kmeans_anchors
from mvlearn_ext.cluster._preprocessing import distinct_samples
from mvlearn_ext.datasets import make_multiview_blobs


def small_views(n=60, n_views=2):
    Xs, _ = make_multiview_blobs(n, n_views=n_views, n_features=4, random_state=0)
    return Xs


def test_every_clusterer_takes_the_shared_entry_points():
    """fit (and predict/transform where the estimator has them) come from the base."""
    for name in cluster.__all__:
        obj = getattr(cluster, name)
        if not isinstance(obj, type) or not hasattr(obj, "fit"):
            continue
        assert issubclass(obj, BaseClusterer), name
        assert obj.fit is BaseClusterer.fit, name
        if hasattr(obj, "predict"):
            assert issubclass(obj, InductiveClusterer), name
        if hasattr(obj, "transform"):
            assert issubclass(obj, EmbeddingClusterer), name
        if "block_size" in obj().get_params():
            assert obj._fit_blocks is not None, name
    assert not hasattr(ConcatSpectral, "predict")  # transductive


def test_every_clusterer_labels_with_intp():
    """labels_, fit_predict and predict share one integer type across the family."""
    Xs = small_views()
    for name in cluster.__all__:
        obj = getattr(cluster, name)
        if not isinstance(obj, type) or not hasattr(obj, "fit"):
            continue
        model = obj(n_clusters=3, random_state=0).fit(Xs)
        assert model.labels_.dtype == np.intp, name
        if hasattr(model, "predict"):
            assert model.predict(Xs).dtype == np.intp, name


def test_draw_seeds_is_the_preambles_draw():
    """One ``randint(2**31 - 1, size=n)`` draw from ``check_random_state``, as ints."""
    for make_state in (lambda: 0, lambda: 7, lambda: np.random.RandomState(3)):
        expected = check_random_state(make_state()).randint(np.iinfo(np.int32).max, size=3)
        rng, seeds = draw_seeds(make_state(), 3)
        assert seeds == tuple(int(s) for s in expected)
        assert all(type(s) is int for s in seeds)
        assert isinstance(rng, np.random.RandomState)
    shared = np.random.RandomState(5)
    rng, _ = draw_seeds(shared, 2)
    assert rng is shared  # later draws continue the caller's stream


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"n_anchors=2 is below n_clusters=3"):
        check_anchors_cover_clusters(2, 3, 2)
    check_anchors_cover_clusters(3, 3, None)
    with pytest.raises(ValueError, match="LMVSC needs at least 2 views"):
        LMVSC(2, block_size=16).fit(small_views(n_views=2)[:1])
    with pytest.raises(ValueError, match="1 view but at least 2 are required"):
        SMVSC(2).fit(small_views(n_views=2)[:1])

    class Blocked:
        block_size, n_clusters = 8, 10

    with pytest.raises(ValueError, match="Xs has 6 samples but n_clusters=10"):
        open_blocks(Blocked(), [np.zeros((6, 2)), np.zeros((6, 3))])


def test_fitted_means_labelled():
    model = DRMC(3, random_state=0)
    assert not model.__sklearn_is_fitted__()
    assert model.fit(small_views()).__sklearn_is_fitted__()


def test_gram_eigenpairs_are_the_singular_pairs():
    """``Z^T V / sigma`` are the top left singular vectors of ``Z^T`` (SVD oracle)."""
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((12, 200))
    sigma, V, inverse = gram_eigenpairs(Z @ Z.T, 4)
    U, s, _ = np.linalg.svd(Z.T, full_matrices=False)
    np.testing.assert_allclose(sigma, s[:4], rtol=1e-10)
    F = Z.T @ (V * inverse)
    np.testing.assert_allclose(np.abs(F.T @ U[:, :4]), np.eye(4), atol=1e-8)
    # Exact null directions get a zero inverse, not an infinite one.
    sigma, _, inverse = gram_eigenpairs(np.diag([4.0, 1.0, 0.0, 0.0]), 4)
    np.testing.assert_array_equal(sigma, [2.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(inverse, [0.5, 1.0, 0.0, 0.0])


def test_gram_eigenpairs_lanczos_path_matches_the_dense_solver():
    """From LANCZOS_MIN_ROWS rows the Lanczos path gives the dense solver's pairs."""
    from mvlearn_ext.cluster._common import LANCZOS_MIN_ROWS

    rng = np.random.default_rng(1)
    m = LANCZOS_MIN_ROWS + 50
    Z = np.abs(rng.standard_normal((m, 3 * m)))
    M = Z @ Z.T
    sigma, V, _ = gram_eigenpairs(M, 6)
    values, vectors = np.linalg.eigh(M)
    np.testing.assert_allclose(sigma**2, values[::-1][:6], rtol=1e-10)
    # The same eigenvectors up to sign.
    np.testing.assert_allclose(np.abs(np.sum(V * vectors[:, ::-1][:, :6], axis=0)), 1.0, atol=1e-8)
    # Deterministic: the same bits on a second call.
    again = gram_eigenpairs(M, 6)
    np.testing.assert_array_equal(again[1], V)


def _with_n_jobs():
    for name in cluster.__all__:
        obj = getattr(cluster, name)
        if isinstance(obj, type) and "n_jobs" in obj().get_params():
            yield obj


@pytest.mark.parametrize("make", list(_with_n_jobs()), ids=lambda c: c.__name__)
def test_n_jobs_follows_the_one_rule(make):
    """0 and counts that leave no CPU are errors naming ``n_jobs``; huge counts are capped."""
    from mvlearn_ext.utils import effective_n_jobs
    from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT

    assert make._parameter_constraints["n_jobs"] == N_JOBS_CONSTRAINT
    Xs = small_views()
    for bad in (0, -(effective_n_jobs(-1) + 1), -5000):
        with pytest.raises(ValueError, match="n_jobs") as caught:
            make(n_clusters=2, n_jobs=bad).fit(Xs)
        assert "n_threads" not in str(caught.value)
    one = make(n_clusters=2, n_jobs=1, random_state=0).fit(Xs)
    many = make(n_clusters=2, n_jobs=10**6, random_state=0).fit(Xs)
    assert many._n_threads == effective_n_jobs(-1)
    np.testing.assert_array_equal(one.labels_, many.labels_)


def test_distinct_samples_reads_slices_until_enough_are_found():
    """The distinct rows of the views side by side, at most ``limit``, found across
    slices; -0.0 and 0.0 are one value; a sample differing in one view only counts."""
    a = np.zeros((50, 2))
    b = np.zeros((50, 1))
    a[7, 0] = -0.0
    b[40, 0] = 1.0  # the only other sample, in the second view, past the first slice
    found = distinct_samples([a, b], 3, chunk=8)
    np.testing.assert_array_equal(found, [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    assert distinct_samples([a, b], 1).shape == (1, 3)
    c = np.arange(40.0)[:, None]
    assert distinct_samples([c], 5, chunk=8).shape == (5, 1)


def test_anchors_of_a_view_with_fewer_distinct_rows_are_those_rows():
    X = np.repeat([[0.0, 1.0], [3.0, 2.0]], 5, axis=0)
    anchors = kmeans_anchors(X, 5, random_state=0)
    np.testing.assert_array_equal(anchors, [[0.0, 1.0], [3.0, 2.0]] * 2 + [[0.0, 1.0]])
