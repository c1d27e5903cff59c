"""make_multiview_blobs: shapes, the generative model, seeding, validation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mvlearn_ext.datasets import _generators, make_multiview_blobs
from mvlearn_ext.metrics import clustering_accuracy


def test_defaults():
    Xs, y = make_multiview_blobs(random_state=0)
    assert len(Xs) == 3 and all(X.shape == (500, 10) and X.dtype == np.float64 for X in Xs)
    assert y.shape == (500,) and y.dtype == np.int64
    np.testing.assert_array_equal(np.bincount(y), [167, 167, 166])


def test_per_view_features_and_dtype():
    Xs, y = make_multiview_blobs(
        n_samples=50, n_views=2, n_features=[4, 1], dtype=np.float32, random_state=0
    )
    assert [X.shape for X in Xs] == [(50, 4), (50, 1)]
    assert all(X.dtype == np.float32 for X in Xs)


def test_float32_is_the_float64_output_rounded():
    kwargs = dict(n_samples=300, n_views=2, n_features=[3, 5], random_state=4)
    X64, y64 = make_multiview_blobs(**kwargs)
    X32, y32 = make_multiview_blobs(dtype="float32", **kwargs)
    np.testing.assert_array_equal(y64, y32)
    for a, b in zip(X64, X32, strict=True):
        np.testing.assert_array_equal(a.astype(np.float32), b)


def test_noise_free_rows_sit_on_their_centres():
    Xs, y, centers = make_multiview_blobs(
        n_samples=60,
        n_views=2,
        n_features=[3, 2],
        cluster_std=0.0,
        random_state=1,
        return_centers=True,
    )
    for X, mu in zip(Xs, centers, strict=True):
        np.testing.assert_array_equal(X, mu[y])


def which_centre(X, mu):
    """The index of the centre each row of a noise-free view sits on."""
    return np.array([np.flatnonzero((mu == row).all(axis=1))[0] for row in X])


@pytest.mark.parametrize("noise", [0.1, 0.5])
def test_noise_redraws_the_stated_fraction_of_rows(noise):
    n, k = 400, 4
    Xs, y, centers = make_multiview_blobs(
        n_samples=n,
        n_views=3,
        n_features=3,
        n_clusters=k,
        cluster_std=0.0,
        noise=[0.0, noise, noise],
        random_state=2,
        return_centers=True,
    )
    np.testing.assert_array_equal(which_centre(Xs[0], centers[0]), y)
    moved = [which_centre(X, mu) != y for X, mu in zip(Xs[1:], centers[1:], strict=True)]
    for m in moved:
        # round(noise * n) rows are redrawn; about 1/k of them land on their own cluster.
        assert 0.6 * noise * n * (k - 1) / k < m.sum() <= noise * n
    assert not np.array_equal(moved[0], moved[1])  # views are corrupted independently


def test_full_noise_makes_a_view_independent_of_the_labels():
    n, k = 4000, 2
    Xs, y, centers = make_multiview_blobs(
        n_samples=n,
        n_views=1,
        n_clusters=k,
        cluster_std=0.0,
        noise=1.0,
        random_state=0,
        return_centers=True,
    )
    seen = which_centre(Xs[0], centers[0])
    table = np.array([[np.sum((y == a) & (seen == b)) for b in range(k)] for a in range(k)])
    np.testing.assert_allclose(table / n, 1 / k**2, atol=0.03)
    assert abs(clustering_accuracy(y, seen) - 0.5) < 0.05


@pytest.mark.parametrize(
    ("fraction", "d", "m"), [(1.0, 10, 10), (0.5, 10, 5), (0.25, 10, 3), (0.01, 10, 1), (0, 8, 0)]
)
def test_informative_features_are_the_first_ones(fraction, d, m):
    Xs, y, centers = make_multiview_blobs(
        n_samples=30,
        n_views=1,
        n_features=d,
        informative=fraction,
        random_state=0,
        return_centers=True,
    )
    mu = centers[0]
    assert mu.shape == (3, d)
    assert np.all(mu[:, m:] == 0)
    assert np.all(mu[:, :m] != 0)
    assert np.all((mu[:, :m] >= -10) & (mu[:, :m] <= 10))


def test_center_box():
    *_, centers = make_multiview_blobs(
        n_samples=30, n_views=2, center_box=(2.0, 3.0), random_state=0, return_centers=True
    )
    for mu in centers:
        assert np.all((mu >= 2.0) & (mu <= 3.0))


def test_separated_clusters_are_recoverable():
    from sklearn.cluster import KMeans

    Xs, y = make_multiview_blobs(n_samples=300, n_clusters=4, cluster_std=0.3, random_state=0)
    labels = KMeans(4, n_init=5, random_state=0).fit_predict(np.hstack(Xs))
    assert clustering_accuracy(y, labels) == 1.0


def test_weights_give_exact_sizes():
    _, y = make_multiview_blobs(n_samples=101, n_clusters=3, weights=[2, 1, 1], random_state=0)
    np.testing.assert_array_equal(np.bincount(y), [51, 25, 25])
    _, y = make_multiview_blobs(n_samples=10, n_clusters=3, weights=[0.2, 0.3, 0.5])
    np.testing.assert_array_equal(np.bincount(y), [2, 3, 5])


def test_shuffle_false_orders_by_cluster():
    _, y = make_multiview_blobs(n_samples=12, n_clusters=3, shuffle=False, random_state=0)
    np.testing.assert_array_equal(y, np.repeat([0, 1, 2], 4))
    _, y = make_multiview_blobs(n_samples=12, n_clusters=3, shuffle=True, random_state=0)
    assert not np.all(np.diff(y) >= 0)


def test_seeding_and_the_global_rng():
    state = np.random.get_state()  # noqa: NPY002 - the global state is what we check
    a = make_multiview_blobs(n_samples=40, random_state=3)
    b = make_multiview_blobs(n_samples=40, random_state=3)
    c = make_multiview_blobs(n_samples=40, random_state=4)
    make_multiview_blobs(n_samples=40)
    after = np.random.get_state()  # noqa: NPY002 - the global state is what we check
    assert np.array_equal(state[1], after[1]) and state[2:] == after[2:]
    for X, Y in zip(a[0], b[0], strict=True):
        np.testing.assert_array_equal(X, Y)
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0][0], c[0][0])
    g = make_multiview_blobs(n_samples=40, random_state=np.random.default_rng(0))
    h = make_multiview_blobs(n_samples=40, random_state=np.random.default_rng(0))
    np.testing.assert_array_equal(g[0][1], h[0][1])
    make_multiview_blobs(n_samples=40, random_state=np.random.RandomState(0))


def test_views_have_independent_streams():
    base_Xs, base_y = make_multiview_blobs(n_samples=80, n_views=2, random_state=5)
    # Changing the second view's settings leaves the first view and the labels alone.
    Xs, y = make_multiview_blobs(
        n_samples=80,
        n_views=2,
        n_features=[10, 3],
        cluster_std=[1.0, 5.0],
        noise=[0, 0.3],
        random_state=5,
    )
    np.testing.assert_array_equal(Xs[0], base_Xs[0])
    np.testing.assert_array_equal(y, base_y)
    # Adding a view at the end keeps the earlier ones.
    Xs3, y3 = make_multiview_blobs(n_samples=80, n_views=3, random_state=5)
    for a, b in zip(Xs3[:2], base_Xs, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(y3, base_y)


@pytest.mark.parametrize("d", [7, 3])
def test_blocks_do_not_change_the_values(d):
    """NumPy's generators give the same stream drawn at once or in blocks."""
    mu = np.arange(3.0 * d).reshape(3, d)
    seen = np.random.default_rng(0).integers(0, 3, size=1000)
    at_once = _generators._draw_rows(np.random.default_rng(9), mu, seen, 0.5, np.float64, 10**9)
    blocks = _generators._draw_rows(np.random.default_rng(9), mu, seen, 0.5, np.float64, 50)
    np.testing.assert_array_equal(blocks, at_once)


def test_single_cluster_and_single_sample():
    Xs, y = make_multiview_blobs(n_samples=5, n_clusters=1, noise=0.5, random_state=0)
    assert np.all(y == 0) and Xs[0].shape == (5, 10)
    Xs, y = make_multiview_blobs(n_samples=1, n_clusters=1, n_views=1, random_state=0)
    assert Xs[0].shape == (1, 10)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(n_samples=0), ValueError, r"n_samples must be >= 1, got 0"),
        (dict(n_samples=10.0), TypeError, r"n_samples must be an int"),
        (dict(n_samples=True), TypeError, r"n_samples must be an int"),
        (dict(n_views=0), ValueError, r"n_views must be >= 1"),
        (dict(n_clusters=0), ValueError, r"n_clusters must be >= 1"),
        (dict(n_samples=2, n_clusters=3), ValueError, r"n_samples=2 leaves cluster 2 empty"),
        (dict(n_features=0), ValueError, r"n_features must be >= 1"),
        (dict(n_features=[3, 4]), ValueError, r"n_features has 2 entries but n_views=3"),
        (dict(n_features=[3, 0, 2]), ValueError, r"n_features\[1\] must be >= 1"),
        (dict(n_features=[[3]]), ValueError, r"n_features must be a number or a 1-d sequence"),
        (dict(n_features="10"), TypeError, r"n_features must be a number or a sequence"),
        (dict(cluster_std=-1.0), ValueError, r"cluster_std must be >= 0.0, got -1.0"),
        (dict(cluster_std=np.inf), ValueError, r"cluster_std must be finite"),
        (dict(cluster_std=[1, 2, -1]), ValueError, r"cluster_std\[2\] must be >= 0.0"),
        (dict(informative=1.5), ValueError, r"informative must be <= 1.0"),
        (dict(informative="all"), TypeError, r"informative must be a number"),
        (dict(noise=-0.1), ValueError, r"noise must be >= 0.0"),
        (dict(informative=[1.0, "x", 0.5]), TypeError, r"informative\[1\] must be a real number"),
        (dict(center_box=(0.0, np.nan)), ValueError, r"center_box\[1\] must be finite"),
        (dict(noise=[0.1, 0.2]), ValueError, r"noise has 2 entries but n_views=3"),
        (dict(weights=[1, 1]), ValueError, r"weights has 2 entries but n_clusters=3"),
        (dict(weights=[1, 0, 1]), ValueError, r"weights must be finite and > 0"),
        (dict(weights=1.0), TypeError, r"weights must be None or a 1-d sequence"),
        (dict(weights=[100, 1, 1], n_samples=10), ValueError, r"leaves cluster 1 empty"),
        (dict(center_box=(1.0, 1.0)), ValueError, r"center_box must satisfy low < high"),
        (dict(center_box=5.0), ValueError, r"center_box must be a pair"),
        (dict(dtype=np.int32), ValueError, r"dtype must be numpy.float32 or numpy.float64"),
        (dict(dtype="nonsense"), TypeError, r"dtype must be numpy.float32 or numpy.float64"),
        (dict(shuffle=1), TypeError, r"shuffle must be a bool"),
        (dict(return_centers="no"), TypeError, r"return_centers must be a bool"),
        (dict(random_state="x"), TypeError, r"random_state must be None, an int"),
    ],
)
def test_invalid_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_multiview_blobs(**kwargs)


@settings(max_examples=40)
@given(
    n_samples=st.integers(1, 60),
    n_views=st.integers(1, 4),
    n_clusters=st.integers(1, 5),
    data=st.data(),
)
def test_property_shapes_and_counts(n_samples, n_views, n_clusters, data):
    if n_samples < n_clusters:
        n_samples = n_clusters
    features = data.draw(st.lists(st.integers(1, 6), min_size=n_views, max_size=n_views))
    informative = data.draw(st.floats(0, 1))
    noise = data.draw(st.floats(0, 1))
    Xs, y, centers = make_multiview_blobs(
        n_samples,
        n_views=n_views,
        n_features=features,
        n_clusters=n_clusters,
        informative=informative,
        noise=noise,
        random_state=data.draw(st.integers(0, 2**32)),
        return_centers=True,
    )
    assert [X.shape for X in Xs] == [(n_samples, d) for d in features]
    assert [mu.shape for mu in centers] == [(n_clusters, d) for d in features]
    assert all(np.isfinite(X).all() for X in Xs)
    counts = np.bincount(y, minlength=n_clusters)
    assert counts.max() - counts.min() <= 1 and counts.sum() == n_samples


# ---- make_contaminated_tasks: argument checks ----------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"epsilon": 1.5}, ValueError, r"epsilon must be in \[0, 1\]"),
        ({"epsilon": -0.1}, ValueError, r"epsilon must be in \[0, 1\]"),
        ({"n_tasks": 3, "n_samples": [2, 3]}, ValueError, "n_samples must be one int or one per"),
        ({"n_samples": 0}, ValueError, "n_samples must be >= 1"),
        ({"n_tasks": 2, "n_samples": [4, 0]}, ValueError, "n_samples must be >= 1"),
        ({"n_samples": 2.5}, ValueError, "n_samples must hold whole numbers"),
        ({"noise": -1.0}, ValueError, "noise must be >= 0"),
        ({"delta": -1.0}, ValueError, "delta must be >= 0"),
        ({"outlier_scale": -1.0}, ValueError, "outlier_scale must be >= 0"),
        ({"alpha": np.nan}, ValueError, "alpha must be finite"),
        ({"n_tasks": 0}, ValueError, "n_tasks must be >= 1"),
        ({"n_tasks": 2.5}, TypeError, "n_tasks must be an int"),
        ({"n_features": 0}, ValueError, "n_features must be >= 1"),
        ({"balancedness": 0.5}, ValueError, "balancedness must be >= 1"),
        ({"balancedness": 5.0, "n_features": 1}, ValueError, "balancedness needs n_features"),
    ],
)
def test_make_contaminated_tasks_checks_arguments(kwargs, error, match):
    from mvlearn_ext.datasets import make_contaminated_tasks

    kwargs = {"n_tasks": 4, "n_samples": 5, "n_features": 3, "random_state": 0, **kwargs}
    with pytest.raises(error, match=match):
        make_contaminated_tasks(**kwargs)


def test_make_contaminated_tasks_valid_edges():
    from mvlearn_ext.datasets import make_contaminated_tasks

    data = make_contaminated_tasks(n_tasks=3, n_samples=[2, 3, 4], n_features=2, random_state=0)
    assert data.X.shape == (9, 2)
    np.testing.assert_array_equal(np.bincount(data.tasks), [2, 3, 4])
    data = make_contaminated_tasks(n_tasks=4, n_samples=3, n_features=2, epsilon=1.0)
    assert data.outliers.all()
    data = make_contaminated_tasks(n_tasks=4, n_samples=3, n_features=2, epsilon=0.0)
    assert not data.outliers.any()
