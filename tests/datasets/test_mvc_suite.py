"""The multi-view clustering suite: shapes, splits, determinism, noise views, no download."""

import socket
import urllib.request

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.feature_selection import f_classif

from mvlearn_ext.datasets import (
    load_handwritten,
    load_mvc_dataset,
    load_mvc_suite,
    mvc_suite_names,
)

DEV = (
    "handwritten",
    "handwritten-noise-pix",
    "handwritten-noise-mor",
    "handwritten-weak3",
    "blobs-1inf-2noise",
    "blobs-mixed",
    "wine-groups",
    "iris-sepal-petal",
)
EVAL = ("digits-quadrants", "digits-profiles", "breast-cancer-groups")

# name: (n_samples, n_clusters, widths, noise views)
SHAPES = {
    "handwritten": (2000, 10, (76, 216, 64, 240, 47, 6), ()),
    "handwritten-noise-pix": (2000, 10, (76, 216, 64, 240, 47, 6), (3,)),
    "handwritten-noise-mor": (2000, 10, (76, 216, 64, 240, 47, 6), (5,)),
    "handwritten-weak3": (2000, 10, (76, 47, 6), ()),
    "blobs-1inf-2noise": (600, 4, (10, 3, 3), (1, 2)),
    "blobs-mixed": (800, 5, (20, 8, 2, 50), (3,)),
    "wine-groups": (178, 3, (5, 2, 6), ()),
    "iris-sepal-petal": (150, 3, (2, 2), ()),
    "digits-quadrants": (1797, 10, (16, 16, 16, 16), ()),
    "digits-profiles": (1797, 10, (8, 8, 16), ()),
    "breast-cancer-groups": (569, 2, (10, 10, 10), ()),
}


@pytest.fixture(scope="module")
def suite():
    return load_mvc_suite("all")


def test_split_flags_partition_the_suite():
    assert mvc_suite_names() == DEV
    assert mvc_suite_names("dev") == DEV
    assert mvc_suite_names("eval") == EVAL
    assert mvc_suite_names("all") == DEV + EVAL
    # Everything built from scikit-learn's digits or breast-cancer data is held out.
    assert not any(n.startswith(("digits", "breast")) for n in mvc_suite_names("dev"))
    with pytest.raises(ValueError, match="split must be one of"):
        mvc_suite_names("test")


def test_suite_splits_and_bunch_flags(suite):
    assert tuple(load_mvc_suite("eval")) == EVAL
    assert tuple(load_mvc_suite()) == DEV
    for name, data in suite.items():
        assert data.name == name
        assert data.split == ("eval" if name in EVAL else "dev")
        assert (data.split == "eval") == data.DESCR.startswith("HELD OUT")
    with pytest.raises(ValueError, match="'digits-quadrants' is not a 'dev' set"):
        load_mvc_suite("dev", names=["digits-quadrants"])
    with pytest.raises(ValueError, match="split must be one of"):
        load_mvc_suite("everything")


@pytest.mark.parametrize("name", DEV + EVAL)
def test_shapes_labels_and_dtypes(suite, name):
    n, k, widths, noise = SHAPES[name]
    data = suite[name]
    assert tuple(X.shape for X in data.Xs) == tuple((n, d) for d in widths)
    assert all(X.dtype == np.float64 and X.flags.c_contiguous for X in data.Xs)
    assert all(np.all(np.isfinite(X)) for X in data.Xs)
    assert data.y.shape == (n,) and data.y.dtype == np.int64
    np.testing.assert_array_equal(np.unique(data.y), np.arange(k))
    assert data.n_clusters == k
    assert data.noise_views == noise
    assert len(data.view_names) == len(widths)


def test_names_restrict_and_keep_the_suite_order():
    suite = load_mvc_suite("all", names=["breast-cancer-groups", "wine-groups"])
    assert tuple(suite) == ("wine-groups", "breast-cancer-groups")


def test_unknown_name():
    with pytest.raises(ValueError, match="name must be one of the suite's data sets"):
        load_mvc_dataset("handwriten")


@pytest.mark.parametrize("name", DEV + EVAL)
def test_same_seed_same_data_and_alone_equals_in_suite(suite, name):
    data = load_mvc_dataset(name, random_state=0)
    for a, b in zip(data.Xs, suite[name].Xs, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(data.y, suite[name].y)


@pytest.mark.parametrize(
    "name, random",
    [
        ("handwritten-noise-pix", True),
        ("blobs-mixed", True),
        ("blobs-1inf-2noise", True),
        ("handwritten", False),
        ("wine-groups", False),
        ("digits-profiles", False),
    ],
)
def test_seed_changes_only_the_random_sets(name, random):
    a = load_mvc_dataset(name, random_state=0)
    b = load_mvc_dataset(name, random_state=1)
    same = all(np.array_equal(x, z) for x, z in zip(a.Xs, b.Xs, strict=True))
    assert same is not random


def test_return_Xs_y():
    Xs, y = load_mvc_dataset("iris-sepal-petal", return_Xs_y=True)
    assert len(Xs) == 2 and y.shape == (150,)


def test_handwritten_variants_keep_the_other_views():
    Xs, y = load_handwritten()
    for name, replaced in (("handwritten-noise-pix", 3), ("handwritten-noise-mor", 5)):
        data = load_mvc_dataset(name)
        np.testing.assert_array_equal(data.y, y)
        for v, (X, Z) in enumerate(zip(Xs, data.Xs, strict=True)):
            assert np.array_equal(X, Z) is (v != replaced)
        # The noise keeps the scale of the view it replaces.
        noise = data.Xs[replaced]
        sd = Xs[replaced].std(axis=0)
        assert np.all(np.abs(noise.mean(axis=0) - Xs[replaced].mean(axis=0)) <= 0.1 * sd + 1e-12)
        np.testing.assert_allclose(noise.std(axis=0), Xs[replaced].std(axis=0), rtol=0.1)
    weak = load_mvc_dataset("handwritten-weak3")
    for X, v in zip(weak.Xs, (0, 4, 5), strict=True):
        np.testing.assert_array_equal(X, Xs[v])


def _class_dependence_pvalues(X, y):
    """One-way ANOVA p-value of each feature against the labels."""
    keep = X.std(axis=0) > 0
    return f_classif(X[:, keep], y)[1]


@pytest.mark.parametrize(
    "name", ["handwritten-noise-pix", "handwritten-noise-mor", "blobs-1inf-2noise", "blobs-mixed"]
)
def test_noise_views_are_independent_of_the_labels(suite, name):
    # Under independence the p-values are uniform: with a fixed seed, at most
    # 5% of the features (and at least one allowed) reach p < 0.01, and none
    # reaches p < 1e-4. The informative views of the same set fail this test.
    data = suite[name]
    for v, X in enumerate(data.Xs):
        p = _class_dependence_pvalues(X, data.y)
        if v in data.noise_views:
            assert np.sum(p < 0.01) <= max(1, 0.05 * p.size)
            assert p.min() > 1e-4
        else:
            assert p.min() < 1e-10


def test_replaced_views_were_label_dependent():
    # The test above can fail: the views replaced by noise carry the labels.
    Xs, y = load_handwritten(views=["pix", "mor"])
    for X in Xs:
        p = _class_dependence_pvalues(X, y)
        assert np.mean(p < 0.01) > 0.5


def test_views_built_from_scikit_learn_data():
    wine = load_wine()
    data = load_mvc_dataset("wine-groups")
    np.testing.assert_array_equal(np.sort(np.hstack(data.Xs), axis=1), np.sort(wine.data, axis=1))
    np.testing.assert_array_equal(data.y, wine.target)

    cancer = load_breast_cancer()
    data = load_mvc_dataset("breast-cancer-groups")
    np.testing.assert_array_equal(np.hstack(data.Xs), cancer.data)  # mean | error | worst

    digits = load_digits()
    quadrants = load_mvc_dataset("digits-quadrants").Xs
    top = np.concatenate([q.reshape(-1, 4, 4) for q in quadrants[:2]], axis=2)
    bottom = np.concatenate([q.reshape(-1, 4, 4) for q in quadrants[2:]], axis=2)
    np.testing.assert_array_equal(np.concatenate([top, bottom], axis=1), digits.images)
    rows, cols, pooled = load_mvc_dataset("digits-profiles").Xs
    np.testing.assert_allclose(rows.sum(axis=1), digits.data.sum(axis=1))
    np.testing.assert_allclose(cols, digits.images.sum(axis=1))
    np.testing.assert_allclose(pooled[:, 0], digits.images[:, :2, :2].mean(axis=(1, 2)))


def test_nothing_is_downloaded(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the suite tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    suite = load_mvc_suite("all")
    assert tuple(suite) == DEV + EVAL


def test_random_state_validation():
    with pytest.raises(TypeError, match="random_state"):
        load_mvc_dataset("blobs-mixed", random_state="zero")
    with pytest.raises(ValueError, match="non-negative"):
        load_mvc_suite(random_state=-1)
    with pytest.raises(TypeError, match="return_Xs_y"):
        load_mvc_dataset("blobs-mixed", return_Xs_y=1)
