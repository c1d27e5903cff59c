"""Clustering metrics against hand-computed values and brute-force oracles."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from mvlearn_ext.metrics import (
    clustering_accuracy,
    clustering_accuracy_scorer,
    clustering_report,
    contingency_table,
    nmi_max_scorer,
    normalized_mutual_info,
    purity,
    purity_scorer,
)


def labels_from_table(table):
    """Label vectors whose contingency table is ``table``."""
    true, pred = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            true += [i] * count
            pred += [j] * count
    return np.array(true), np.array(pred)


def brute_force_accuracy(labels_true, labels_pred):
    """Max over every one-to-one map of clusters to classes (padded with dummies)."""
    classes = sorted(set(labels_true))
    clusters = sorted(set(labels_pred))
    k = max(len(classes), len(clusters))
    best = 0
    for perm in itertools.permutations(range(k), len(clusters)):
        mapping = {
            c: (classes[p] if p < len(classes) else None)
            for c, p in zip(clusters, perm, strict=True)
        }
        hits = sum(mapping[c] == t for t, c in zip(labels_true, labels_pred, strict=True))
        best = max(best, hits)
    return best / len(labels_true)


def brute_force_purity(labels_true, labels_pred):
    total = 0
    for c in set(labels_pred):
        members = [t for t, p in zip(labels_true, labels_pred, strict=True) if p == c]
        total += max(members.count(t) for t in set(members))
    return total / len(labels_true)


# --------------------------------------------------------------------------- hand-computed


def test_permuted_labels_score_one():
    y = [0, 0, 1, 1, 2, 2, 2]
    c = [5, 5, 3, 3, 9, 9, 9]
    assert clustering_accuracy(y, c) == 1.0
    assert purity(y, c) == 1.0
    assert normalized_mutual_info(y, c) == pytest.approx(1.0)
    assert clustering_report(y, c) == pytest.approx(
        {"ACC": 1.0, "NMI": 1.0, "NMI_max": 1.0, "ARI": 1.0, "purity": 1.0}
    )


def test_known_contingency_table():
    # 3 classes, 2 clusters. Best one-to-one matching: class 0 -> cluster 0 (4)
    # and class 2 -> cluster 1 (2): ACC = 6/10. Majority per cluster: 4 and 3:
    # purity = 7/10.
    table = [[4, 3], [0, 1], [0, 2]]
    y, c = labels_from_table(table)
    np.testing.assert_array_equal(contingency_table(y, c), table)
    assert clustering_accuracy(y, c) == pytest.approx(0.6)
    assert purity(y, c) == pytest.approx(0.7)


def test_square_table():
    # Diagonal matching 5 + 3 + 4 = 12 beats any other; majorities are 5, 3, 4 too.
    table = [[5, 1, 0], [2, 3, 1], [0, 0, 4]]
    y, c = labels_from_table(table)
    assert clustering_accuracy(y, c) == pytest.approx(12 / 16)
    assert purity(y, c) == pytest.approx(12 / 16)


def test_more_clusters_than_classes():
    y = [0, 0, 0, 1, 1, 1]
    c = [0, 0, 1, 2, 2, 3]
    assert clustering_accuracy(y, c) == pytest.approx(4 / 6)  # clusters 1 and 3 unmatched
    assert purity(y, c) == 1.0


def test_fewer_clusters_than_classes():
    y = [0, 1, 2, 3]
    c = [0, 0, 0, 0]
    assert clustering_accuracy(y, c) == pytest.approx(0.25)
    assert purity(y, c) == pytest.approx(0.25)


def test_one_sample():
    assert clustering_accuracy([3], ["x"]) == 1.0
    assert purity([3], ["x"]) == 1.0


def test_labels_of_any_hashable_type():
    y = ["cat", "cat", "dog", "dog"]
    assert clustering_accuracy(y, [1, 1, 0, 0]) == 1.0
    assert (
        clustering_accuracy(np.array(y, dtype=object), np.array([True, True, False, True])) == 0.75
    )
    tuples = [(1, 2), (1, 2), (3, 4), (3, 4)]
    assert clustering_accuracy(tuples, ["a", "a", "b", "b"]) == 1.0
    mixed = [1, "a", 1, "a"]  # cannot be sorted: coded in order of appearance
    assert clustering_accuracy(np.array(mixed, dtype=object), [0, 1, 0, 0]) == 0.75
    assert clustering_accuracy(range(4), iter([0, 0, 1, 1])) == 0.5


def test_pandas_input():
    pd = pytest.importorskip("pandas")
    y = pd.Series(["a", "b", "a", "b"])
    c = pd.Categorical(["x", "y", "x", "x"])
    assert clustering_accuracy(y, c) == 0.75


def test_nmi_hand_values_and_normalisations():
    # c refines y: I(Y;C) = H(Y) = 1 bit, H(C) = 1.5 bits.
    y, c = [0, 0, 1, 1], [0, 0, 1, 2]
    expected = {
        "arithmetic": 1 / 1.25,
        "geometric": 1 / math.sqrt(1.5),
        "sqrt": 1 / math.sqrt(1.5),
        "max": 1 / 1.5,
        "min": 1.0,
    }
    for method, value in expected.items():
        assert normalized_mutual_info(y, c, average_method=method) == pytest.approx(value)
    assert normalized_mutual_info(y, c) == pytest.approx(0.8)


def test_nmi_matches_scikit_learn():
    rng = np.random.default_rng(0)
    y, c = rng.integers(0, 4, 200), rng.integers(0, 6, 200)
    for method in ("arithmetic", "geometric", "max", "min"):
        assert normalized_mutual_info(y, c, average_method=method) == pytest.approx(
            normalized_mutual_info_score(y, c, average_method=method)
        )


def test_report_matches_the_single_metrics():
    rng = np.random.default_rng(1)
    y, c = rng.integers(0, 3, 100), rng.integers(0, 4, 100)
    report = clustering_report(y, c)
    assert list(report) == ["ACC", "NMI", "NMI_max", "ARI", "purity"]
    assert report["ACC"] == clustering_accuracy(y, c)
    assert report["purity"] == purity(y, c)
    assert report["NMI"] == pytest.approx(normalized_mutual_info(y, c))
    assert report["NMI_max"] == pytest.approx(normalized_mutual_info(y, c, average_method="max"))
    assert report["ARI"] == pytest.approx(adjusted_rand_score(y, c))
    assert all(isinstance(v, float) for v in report.values())


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "func", [clustering_accuracy, purity, normalized_mutual_info, clustering_report]
)
def test_errors(func):
    with pytest.raises(ValueError, match="same length, got 3 and 2"):
        func([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="empty"):
        func([], [])
    with pytest.raises(
        ValueError, match=r"labels_true must be 1-d, got an array of shape \(2, 2\)"
    ):
        func(np.zeros((2, 2)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="labels_pred must be 1-d"):
        func([0, 1], np.zeros((2, 1)))
    with pytest.raises(
        TypeError, match="labels_true must be a 1-d sequence of labels, got a string"
    ):
        func("abc", [0, 1, 2])
    with pytest.raises(TypeError, match="labels_pred must be a 1-d sequence of labels, got int"):
        func([0, 1], 5)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_float_labels_must_be_finite(bad):
    with pytest.raises(ValueError, match="labels_true contains"):
        clustering_accuracy([0.0, bad, 1.0], [0, 1, 1])
    with pytest.raises(ValueError, match="labels_pred contains"):
        contingency_table([0, 1, 1], np.array([0.0, 1.0, bad]))
    # finite float labels and any other categories are still labels
    assert purity([0.5, 0.5, 2.0], ["a", "a", 1j]) == 1.0


def test_bad_average_method():
    with pytest.raises(ValueError, match="average_method must be one of"):
        normalized_mutual_info([0, 1], [0, 1], average_method="mean")


# --------------------------------------------------------------------------- properties

small_labelings = st.integers(1, 12).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
    )
)


@settings(max_examples=200)
@given(small_labelings)
def test_accuracy_equals_the_brute_force_maximum(pair):
    y, c = pair
    assert clustering_accuracy(y, c) == pytest.approx(brute_force_accuracy(y, c))
    assert purity(y, c) == pytest.approx(brute_force_purity(y, c))


@settings(max_examples=100)
@given(small_labelings, st.permutations(range(4)), st.permutations(["w", "x", "y", "z"]))
def test_invariant_to_renaming(pair, perm_true, names_pred):
    y, c = pair
    y2 = [perm_true[v] for v in y]
    c2 = [names_pred[v] for v in c]
    assert clustering_accuracy(y2, c2) == pytest.approx(clustering_accuracy(y, c))
    assert purity(y2, c2) == pytest.approx(purity(y, c))
    assert normalized_mutual_info(y2, c2) == pytest.approx(normalized_mutual_info(y, c))


@settings(max_examples=100)
@given(small_labelings)
def test_bounds_and_orderings(pair):
    y, c = pair
    acc, pur = clustering_accuracy(y, c), purity(y, c)
    assert 0 < acc <= pur <= 1
    # The matching is symmetric, and purity in either direction bounds it.
    assert clustering_accuracy(c, y) == pytest.approx(acc)
    assert acc <= purity(c, y) + 1e-12
    values = [
        normalized_mutual_info(y, c, average_method=m)
        for m in ("min", "geometric", "arithmetic", "max")
    ]
    assert all(-1e-12 <= v <= 1 + 1e-12 for v in values)
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(values))


# --------------------------------------------------------------------------- scorers


def test_scorers_in_grid_search():
    from sklearn.cluster import KMeans
    from sklearn.datasets import make_blobs
    from sklearn.model_selection import GridSearchCV

    X, y = make_blobs(n_samples=90, centers=3, cluster_std=0.5, random_state=0)
    for scorer in (clustering_accuracy_scorer, purity_scorer, nmi_max_scorer):
        search = GridSearchCV(
            KMeans(n_init=2, random_state=0), {"n_clusters": [2, 3]}, scoring=scorer, cv=3
        ).fit(X, y)
        if scorer is not purity_scorer:  # purity rewards more clusters, ACC and NMI do not
            assert search.best_params_ == {"n_clusters": 3}
        assert 0 < search.best_score_ <= 1
    model = KMeans(3, n_init=2, random_state=0).fit(X)
    assert clustering_accuracy_scorer(model, X, y) == clustering_accuracy(y, model.predict(X))


@pytest.mark.parametrize(
    "func", [clustering_accuracy, purity, normalized_mutual_info, clustering_report]
)
def test_nested_lists_are_refused_as_arrays_are(func):
    nested = [[0, 1], [2, 3]]
    with pytest.raises(
        ValueError, match=r"labels_true must be 1-d, got an array of shape \(2, 2\)"
    ):
        func(np.array(nested), [[0, 0], [1, 1]])
    with pytest.raises(
        ValueError, match=r"labels_true must be 1-d, got an array of shape \(2, 2\)"
    ):
        func(nested, [[0, 0], [1, 1]])
    with pytest.raises(
        ValueError, match=r"labels_pred must be 1-d, got an array of shape \(2, 2\)"
    ):
        func([0, 1], nested)
    with pytest.raises(ValueError, match=r"labels_pred must be 1-d, got nested sequences"):
        func([0, 1], [[0, 1], [2]])
    with pytest.raises(ValueError, match=r"labels_true must be 1-d, got nested sequences"):
        func([0, np.array([1, 2])], [0, 1])


def test_contingency_table_refuses_nested_lists():
    with pytest.raises(ValueError, match="labels_true must be 1-d"):
        contingency_table([[0, 1], [2, 3]], [0, 1])
    # tuples stay labels
    assert contingency_table([(0, 1), (2, 3)], [0, 1]).tolist() == [[1, 0], [0, 1]]
