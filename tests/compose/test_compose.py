"""ViewSplitter and MultiViewAdapter: multi-view estimators in single-array pipelines."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import adjusted_rand_score, make_scorer
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import get_tags
from sklearn.utils._param_validation import InvalidParameterError

from mvlearn_ext.base import MultiViewTransformerMixin
from mvlearn_ext.cluster import ConcatKMeans
from mvlearn_ext.compose import MultiViewAdapter, ViewSplitter
from mvlearn_ext.utils._validation import check_views_consistent, validate_views

X = np.arange(24.0).reshape(4, 6)


def labelled_blobs(n_per_cluster=30, n_clusters=3, widths=(3, 2), random_state=0):
    """Blobs seen through views of the given widths, side by side in one array."""
    rng = np.random.default_rng(random_state)
    y = np.repeat(np.arange(n_clusters), n_per_cluster)
    blocks = []
    for width in widths:
        centers = rng.normal(scale=6.0, size=(n_clusters, width))
        blocks.append(centers[y] + rng.normal(size=(y.size, width)))
    return np.hstack(blocks), y


# ------------------------------------------------------------------ ViewSplitter


def test_view_sizes_split_consecutive_columns_without_copy():
    splitter = ViewSplitter(view_sizes=[2, 1, 3]).fit(X)
    Xs = splitter.transform(X)
    assert [V.shape for V in Xs] == [(4, 2), (4, 1), (4, 3)]
    np.testing.assert_array_equal(np.hstack(Xs), X)
    assert all(np.shares_memory(V, X) for V in Xs)
    assert splitter.n_views_ == 3 and splitter.n_features_in_ == 6
    assert splitter.view_columns_ == [slice(0, 2, 1), slice(2, 3, 1), slice(3, 6, 1)]


def test_int_view_sizes_split_like_array_split():
    Xs = ViewSplitter(view_sizes=4).fit_transform(X)
    expected = np.array_split(X, 4, axis=1)
    assert [V.shape[1] for V in Xs] == [2, 2, 1, 1]
    for view, reference in zip(Xs, expected, strict=True):
        np.testing.assert_array_equal(view, reference)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=5), st.integers(1, 5))
def test_view_sizes_round_trip(sizes, n_samples):
    data = np.arange(n_samples * sum(sizes), dtype=float).reshape(n_samples, sum(sizes))
    Xs = ViewSplitter(view_sizes=sizes).fit_transform(data)
    assert [V.shape for V in Xs] == [(n_samples, size) for size in sizes]
    np.testing.assert_array_equal(np.hstack(Xs), data)


def test_view_columns_slices_indices_and_masks():
    mask = np.array([True, False, False, False, False, True])
    splitter = ViewSplitter(view_columns=[slice(None, None, 2), [4, -1, 0], mask]).fit(X)
    Xs = splitter.transform(X)
    np.testing.assert_array_equal(Xs[0], X[:, [0, 2, 4]])
    np.testing.assert_array_equal(Xs[1], X[:, [4, 5, 0]])
    np.testing.assert_array_equal(Xs[2], X[:, [0, 5]])
    assert splitter.view_columns_[0] == slice(0, 6, 2)
    np.testing.assert_array_equal(splitter.view_columns_[1], [4, 5, 0])


def test_reversed_slice_becomes_indices():
    (view,) = ViewSplitter(view_columns=[slice(None, None, -1)]).fit_transform(X)
    np.testing.assert_array_equal(view, X[:, ::-1])


def test_splitter_keeps_dtype_and_leaves_values_to_the_estimator():
    data = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    Xs = ViewSplitter(view_sizes=[1, 2]).fit_transform(data)
    assert all(V.dtype == np.int32 for V in Xs)
    with_nan = X.copy()
    with_nan[0, 0] = np.nan
    Xs = ViewSplitter(view_sizes=2).fit_transform(with_nan)
    assert np.isnan(Xs[0][0, 0])


@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csc_array])
def test_splitter_splits_sparse_matrices(container):
    Xs = ViewSplitter(view_sizes=[4, 2]).fit_transform(container(X))
    assert all(sp.issparse(V) for V in Xs)
    np.testing.assert_array_equal(Xs[1].toarray(), X[:, 4:])


def test_splitter_in_a_pipeline_before_a_multiview_estimator():
    data, y = labelled_blobs()
    pipe = Pipeline(
        [
            ("scale", StandardScaler()),
            ("split", ViewSplitter(view_sizes=[3, 2])),
            ("cluster", ConcatKMeans(n_clusters=3, random_state=0)),
        ]
    )
    labels = pipe.fit_predict(data)
    assert adjusted_rand_score(y, labels) == 1.0
    assert pipe.named_steps["cluster"].n_features_per_view_ == (3, 2)
    np.testing.assert_array_equal(pipe.predict(data), labels)


@pytest.mark.parametrize(
    ("params", "error", "pattern"),
    [
        ({}, ValueError, "ViewSplitter needs view_sizes .* or view_columns .*; both are None"),
        (
            {"view_sizes": 2, "view_columns": [[0]]},
            ValueError,
            "view_sizes or view_columns, not both",
        ),
        ({"view_sizes": [2, 3]}, ValueError, "view_sizes sum to 5 but X has n_features=6"),
        ({"view_sizes": [2, 0, 4]}, ValueError, r"view_sizes\[1\]=0; every view needs at least"),
        ({"view_sizes": [2, 4.0]}, TypeError, r"view_sizes\[1\] must be an int"),
        ({"view_sizes": [3, True, 2]}, TypeError, r"view_sizes\[1\] must be an int"),
        ({"view_sizes": []}, ValueError, "view_sizes is empty"),
        ({"view_sizes": 7}, ValueError, "view_sizes=7 splits the columns into 7 views, but X has"),
        ({"view_columns": []}, ValueError, "view_columns is empty"),
        ({"view_columns": [[0], slice(6, None)]}, ValueError, r"view_columns\[1\]=slice\(6, None"),
        ({"view_columns": [[0], []]}, ValueError, r"view_columns\[1\] selects no column"),
        ({"view_columns": [[0, 6]]}, ValueError, r"view_columns\[0\] has column index 6"),
        ({"view_columns": [[-7]]}, ValueError, r"view_columns\[0\] has column index -7"),
        ({"view_columns": [[True, False]]}, ValueError, "boolean mask of length 2 but X has"),
        ({"view_columns": [3]}, TypeError, r"use \[3\] for a single column"),
        ({"view_columns": [["a", "b"]]}, TypeError, "column names are not supported"),
        ({"view_columns": [[0.5]]}, TypeError, "got an array of dtype float64"),
        ({"view_columns": [[[0, 1]]]}, ValueError, r"must be 1-D, got an array of shape \(1, 2\)"),
    ],
)
def test_splitter_errors(params, error, pattern):
    with pytest.raises(error, match=pattern):
        ViewSplitter(**params).fit(X)


@pytest.mark.parametrize("params", [{"view_sizes": 0}, {"view_sizes": "3"}, {"view_columns": 3}])
def test_splitter_parameter_validation(params):
    with pytest.raises(InvalidParameterError):
        ViewSplitter(**params).fit(X)


def test_splitter_refuses_another_width_at_transform():
    splitter = ViewSplitter(view_sizes=[2, 4]).fit(X)
    with pytest.raises(ValueError, match="X has 5 features, but ViewSplitter is expecting 6"):
        splitter.transform(X[:, :5])


def test_splitter_before_fit():
    with pytest.raises(NotFittedError):
        ViewSplitter(view_sizes=2).transform(X)


def test_splitter_has_no_set_output():
    # Its output is a list of views, which no set_output container can hold.
    assert not hasattr(ViewSplitter(view_sizes=2), "set_output")


# ------------------------------------------------------------------ MultiViewAdapter


def test_adapter_equals_the_wrapped_estimator_on_the_split_views():
    data, _ = labelled_blobs()
    adapter = MultiViewAdapter(ConcatKMeans(n_clusters=3, random_state=0), view_sizes=[3, 2])
    direct = ConcatKMeans(n_clusters=3, random_state=0).fit([data[:, :3], data[:, 3:]])
    labels = adapter.fit_predict(data)
    np.testing.assert_array_equal(labels, direct.labels_)
    np.testing.assert_array_equal(adapter.labels_, direct.labels_)
    np.testing.assert_allclose(adapter.estimator_.cluster_centers_, direct.cluster_centers_)
    np.testing.assert_array_equal(
        adapter.predict(data[:7]), direct.predict([data[:7, :3], data[:7, 3:]])
    )
    assert adapter.score(data) == pytest.approx(direct.score([data[:, :3], data[:, 3:]]))
    assert adapter.n_features_in_ == 5


def test_adapter_does_not_modify_the_given_estimator():
    inner = ConcatKMeans(n_clusters=3, random_state=0)
    adapter = MultiViewAdapter(inner, view_sizes=2).fit(labelled_blobs()[0])
    assert adapter.estimator is inner and not hasattr(inner, "labels_")
    assert adapter.estimator_ is not inner


def test_adapter_pipeline_with_a_scaler():
    informative, y = labelled_blobs(widths=(6,))
    noise = 1000.0 * np.random.default_rng(1).normal(size=(y.size, 2))
    data = np.hstack([informative, noise])  # unscaled, the noise view decides the clusters
    pipe = make_pipeline(
        StandardScaler(),
        MultiViewAdapter(
            ConcatKMeans(n_clusters=3, scaling=None, random_state=0), view_sizes=[6, 2]
        ),
    )
    assert adjusted_rand_score(y, pipe.fit_predict(data)) == 1.0
    assert adjusted_rand_score(y, pipe.predict(data)) == 1.0


def test_grid_search_over_nested_n_clusters_picks_the_true_k():
    data, y = labelled_blobs(n_per_cluster=20, n_clusters=4, random_state=3)
    pipe = make_pipeline(
        StandardScaler(),
        MultiViewAdapter(ConcatKMeans(n_init=3, random_state=0), view_sizes=[3, 2]),
    )
    search = GridSearchCV(
        pipe,
        {"multiviewadapter__estimator__n_clusters": [2, 3, 4, 5, 6]},
        scoring=make_scorer(adjusted_rand_score),
        cv=KFold(3, shuffle=True, random_state=0),
    ).fit(data, y)
    assert search.best_params_ == {"multiviewadapter__estimator__n_clusters": 4}
    assert search.best_score_ == pytest.approx(1.0)
    assert search.best_estimator_[-1].estimator_.n_clusters == 4


def test_adapter_nested_params_and_clone():
    adapter = MultiViewAdapter(ConcatKMeans(n_clusters=3), view_sizes=[3, 2])
    params = adapter.get_params()
    assert params["estimator__n_clusters"] == 3 and params["view_sizes"] == [3, 2]
    adapter.set_params(estimator__n_clusters=5, view_sizes=2)
    assert adapter.estimator.n_clusters == 5 and adapter.view_sizes == 2
    copy = clone(adapter)
    assert copy.estimator is not adapter.estimator and copy.estimator.n_clusters == 5


def test_adapter_validates_the_wrapped_parameters_at_fit():
    adapter = MultiViewAdapter(ConcatKMeans(n_clusters=0), view_sizes=2)
    with pytest.raises(InvalidParameterError, match="n_clusters"):
        adapter.fit(X)


def test_adapter_refuses_an_estimator_without_fit():
    with pytest.raises(InvalidParameterError, match="estimator"):
        MultiViewAdapter(object(), view_sizes=2).fit(X)


def test_adapter_reports_the_view_at_fault():
    data, _ = labelled_blobs()
    data[5, 4] = np.nan
    adapter = MultiViewAdapter(ConcatKMeans(n_clusters=3), view_sizes=[3, 2])
    with pytest.raises(
        ValueError, match=r"view 1 of Xs contains NaN \(first at sample 5, feature 1\)"
    ):
        adapter.fit(data)


def test_adapter_splitting_errors_name_the_adapter():
    with pytest.raises(ValueError, match="MultiViewAdapter needs view_sizes"):
        MultiViewAdapter(ConcatKMeans()).fit(X)
    with pytest.raises(ValueError, match="view_sizes sum to 4 but X has n_features=6"):
        MultiViewAdapter(ConcatKMeans(n_clusters=2), view_sizes=[2, 2]).fit(X)


def test_adapter_refuses_another_width_at_predict():
    data, _ = labelled_blobs()
    adapter = MultiViewAdapter(ConcatKMeans(n_clusters=3), view_sizes=2).fit(data)
    with pytest.raises(ValueError, match="X has 4 features, but MultiViewAdapter is expecting 5"):
        adapter.predict(data[:, :4])


def test_adapter_refuses_sparse_for_a_dense_estimator():
    with pytest.raises(TypeError, match="[Ss]parse"):
        MultiViewAdapter(ConcatKMeans(n_clusters=2), view_sizes=2).fit(sp.csr_matrix(X))


def test_adapter_takes_the_wrapped_estimator_type():
    tags = get_tags(MultiViewAdapter(ConcatKMeans(), view_sizes=2))
    assert tags.estimator_type == "clusterer"
    assert tags.input_tags.two_d_array and not tags.input_tags.three_d_array
    assert tags.transformer_tags is None


class _ViewMeans(MultiViewTransformerMixin, BaseEstimator):
    """A toy multi-view transformer: the mean of each view, one column per view."""

    def fit(self, Xs, y=None):
        check_views_consistent(self, validate_views(Xs), reset=True)
        return self

    def transform(self, Xs):
        Xs = validate_views(Xs)
        check_views_consistent(self, Xs, reset=False)
        return np.column_stack([X.mean(axis=1) for X in Xs])


def test_methods_exist_exactly_when_the_wrapped_estimator_has_them():
    clusterer = MultiViewAdapter(ConcatKMeans(), view_sizes=2)
    transformer = MultiViewAdapter(_ViewMeans(), view_sizes=2)
    for method in ("fit_predict", "predict", "score"):
        assert hasattr(clusterer, method) and not hasattr(transformer, method)
    for method in ("transform", "fit_transform"):
        assert hasattr(transformer, method) and not hasattr(clusterer, method)
    for method in ("predict_proba", "predict_log_proba", "decision_function"):
        assert not hasattr(clusterer, method) and not hasattr(transformer, method)
    assert get_tags(transformer).transformer_tags is not None


def test_adapter_delegates_transform_and_fit_transform():
    adapter = MultiViewAdapter(_ViewMeans(), view_columns=[[0, 1], slice(2, None)])
    expected = np.column_stack([X[:, :2].mean(axis=1), X[:, 2:].mean(axis=1)])
    np.testing.assert_allclose(adapter.fit_transform(X), expected)
    np.testing.assert_allclose(adapter.transform(X), expected)
    assert not hasattr(adapter, "labels_")
    assert adapter.estimator_.n_features_per_view_ == (2, 4)


def test_adapter_before_fit():
    adapter = MultiViewAdapter(ConcatKMeans(), view_sizes=2)
    for method in ("predict", "score"):
        with pytest.raises(NotFittedError):
            getattr(adapter, method)(X)
    assert not hasattr(adapter, "labels_")


def test_splitter_and_adapter_pickle_round_trip():
    data, _ = labelled_blobs()
    splitter = pickle.loads(
        pickle.dumps(ViewSplitter(view_columns=[[4, 0], slice(1, 4)]).fit(data))
    )
    views = splitter.transform(data)
    np.testing.assert_array_equal(views[0], data[:, [4, 0]])
    np.testing.assert_array_equal(views[1], data[:, 1:4])
    adapter = MultiViewAdapter(ConcatKMeans(n_clusters=3, random_state=0), view_sizes=[3, 2]).fit(
        data
    )
    restored = pickle.loads(pickle.dumps(adapter))
    np.testing.assert_array_equal(restored.predict(data), adapter.predict(data))


def test_adapter_names_a_single_array_estimator_that_fails_on_views():
    """KMeans gets a list of views from the adapter and fails deep in NumPy: the
    error says the estimator must take a list of views; a multi-view estimator's
    own errors pass through unchanged."""
    from sklearn.cluster import KMeans

    X = np.random.RandomState(0).normal(size=(30, 5))
    with pytest.raises(TypeError, match="estimator KMeans failed on the list of 2 views"):
        MultiViewAdapter(KMeans(3, n_init=1), view_sizes=[3, 2]).fit(X)
    with pytest.raises(ValueError, match="n_clusters=40"):
        MultiViewAdapter(ConcatKMeans(40), view_sizes=[3, 2]).fit(X)
