"""The real-data multi-view clustering suite: shapes, labels, determinism, sources."""

import numpy as np
import pytest
from sklearn.cluster import KMeans

from mvlearn_ext.datasets import load_mvc_dataset, load_mvc_real_suite, mvc_real_suite_names
from mvlearn_ext.metrics import clustering_accuracy

# name: (n_samples, n_clusters, widths)
SHAPES = {
    "handwritten": (2000, 10, (76, 216, 64, 240, 47, 6)),
    "handwritten-noise-pix": (2000, 10, (76, 216, 64, 240, 47, 6)),
    "handwritten-weak3": (2000, 10, (76, 47, 6)),
    "digits-quadrants": (1797, 10, (16, 16, 16, 16)),
    "digits-profiles": (1797, 10, (8, 8, 16)),
    "breast-cancer-groups": (569, 2, (10, 10, 10)),
    "nutrimouse-genotype": (40, 2, (120, 21)),
    "nutrimouse-diet": (40, 5, (120, 21)),
    "gesture-z-transforms": (100, 10, (128, 64, 127)),
    "chinatown-transforms": (42, 2, (24, 12, 23)),
    "handwritten-n100": (100, 10, (76, 216, 64, 240, 47, 6)),
    "handwritten-weak3-n150": (150, 10, (76, 47, 6)),
    "digits-quadrants-n150": (150, 10, (16, 16, 16, 16)),
    "digits-profiles-n120": (120, 10, (8, 8, 16)),
    "breast-cancer-groups-n60": (60, 2, (10, 10, 10)),
    "blobs-strong-weak": (600, 4, (4, 30, 30)),
    "blobs-strong-weak-n120": (120, 4, (4, 30, 30)),
    "blobs-strong-redundant": (600, 4, (4, 30, 30, 30, 30)),
}
SMALL = [name for name, (n, _, _) in SHAPES.items() if n <= 150]


@pytest.fixture(scope="module")
def small_sets():
    return load_mvc_real_suite(SMALL)


def test_names_are_the_documented_sets_in_order():
    assert mvc_real_suite_names() == tuple(SHAPES)


def test_small_sets_have_the_documented_shapes_and_labels(small_sets):
    assert [name for name, _, _ in small_sets] == SMALL
    for name, Xs, y in small_sets:
        n, k, widths = SHAPES[name]
        assert tuple(X.shape for X in Xs) == tuple((n, d) for d in widths), name
        assert all(X.dtype == np.float64 and np.all(np.isfinite(X)) for X in Xs), name
        assert y.dtype == np.int64 and y.shape == (n,), name
        assert np.array_equal(np.unique(y), np.arange(k)), name


@pytest.mark.slow
def test_every_set_has_the_documented_shapes():
    for name, Xs, y in load_mvc_real_suite():
        n, k, widths = SHAPES[name]
        assert tuple(X.shape for X in Xs) == tuple((n, d) for d in widths), name
        assert np.array_equal(np.unique(y), np.arange(k)), name


def test_determinism_and_independence_of_the_other_sets(small_sets):
    alone = load_mvc_real_suite(["handwritten-n100"])[0]
    together = dict((name, (Xs, y)) for name, Xs, y in small_sets)["handwritten-n100"]
    for a, b in zip(alone[1], together[0], strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(alone[2], together[1])
    other = load_mvc_real_suite(["handwritten-n100"], random_state=1)[0]
    assert not np.array_equal(alone[1][0], other[1][0])


def test_subsamples_are_stratified_rows_of_the_full_set():
    full_Xs, full_y = load_mvc_dataset("breast-cancer-groups", return_Xs_y=True)
    _, Xs, y = load_mvc_real_suite(["breast-cancer-groups-n60"])[0]
    # class proportions of the full set (212 / 569 of class 0) within one sample
    assert abs(np.sum(y == 0) - 60 * np.mean(full_y == 0)) < 1
    rows = [np.flatnonzero((full_Xs[0] == row).all(axis=1))[0] for row in Xs[0]]
    assert len(set(rows)) == 60
    np.testing.assert_array_equal(full_y[rows], y)
    for full, X in zip(full_Xs, Xs, strict=True):
        np.testing.assert_array_equal(full[rows], X)


def test_series_views_are_transforms_of_the_first(small_sets):
    for name, Xs, _ in small_sets:
        if not name.endswith("-transforms"):
            continue
        series, spectrum, differences = Xs
        np.testing.assert_allclose(differences, np.diff(series, axis=1))
        centred = series - series.mean(axis=1, keepdims=True)
        np.testing.assert_allclose(spectrum, np.abs(np.fft.rfft(centred, axis=1))[:, 1:])


def test_nutrimouse_matches_the_published_data(small_sets):
    sets = {name: (Xs, y) for name, Xs, y in small_sets}
    (genes, lipids), diet = sets["nutrimouse-diet"]
    _, genotype = sets["nutrimouse-genotype"]
    # a 2 x 5 design with four mice per cell
    counts = np.zeros((2, 5), dtype=int)
    np.add.at(counts, (genotype, diet), 1)
    assert np.all(counts == 4)
    # fatty acid concentrations are percentages: every row sums to about 100
    np.testing.assert_allclose(lipids.sum(axis=1), 100.0, atol=1.5)


def test_strong_view_is_far_better_than_the_weak_ones(small_sets):
    _, Xs, y = dict((n, (n, X, t)) for n, X, t in small_sets)["blobs-strong-weak-n120"]
    acc = [clustering_accuracy(y, KMeans(4, n_init=10, random_state=0).fit_predict(X)) for X in Xs]
    assert acc[0] > 0.9
    assert max(acc[1:]) < acc[0] - 0.2


def test_bad_names_raise():
    with pytest.raises(ValueError, match="names: 'nope' is not a set"):
        load_mvc_real_suite(["nope"])
    assert [name for name, _, _ in load_mvc_real_suite("nutrimouse-diet")] == ["nutrimouse-diet"]
