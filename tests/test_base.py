"""The multi-view mixins: tags, is_multiview, fit_predict and fit_transform."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.cluster import KMeans
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import check_estimator

from mvlearn_ext.base import (
    MultiViewClusterMixin,
    MultiViewMixin,
    MultiViewTransformerMixin,
    is_multiview,
)


class Recorder(MultiViewClusterMixin, BaseEstimator):
    """Records what fit received; labels every sample 0."""

    def fit(self, Xs, y=None, **kwargs):
        self.received_ = (Xs, y, kwargs)
        self.labels_ = np.zeros(len(Xs[0]), dtype=int)
        return self


class Concatenator(MultiViewTransformerMixin, BaseEstimator):
    def fit(self, Xs, y=None, *, offset=0.0):
        self.offset_ = offset
        self.y_ = y
        return self

    def transform(self, Xs):
        return np.hstack(Xs) + self.offset_


class Plain(MultiViewMixin, BaseEstimator):
    def fit(self, Xs, y=None):
        return self


Xs = [np.ones((4, 2)), np.zeros((4, 1))]


@pytest.mark.parametrize("cls", [Plain, Recorder, Concatenator])
def test_input_tags_say_list_of_views(cls):
    tags = get_tags(cls())
    assert tags.input_tags.two_d_array is False
    assert tags.input_tags.three_d_array is True
    assert is_multiview(cls) and is_multiview(cls()) and is_multiview(clone(cls()))


def test_cluster_mixin_tags():
    tags = get_tags(Recorder())
    assert tags.estimator_type == "clusterer"
    assert tags.transformer_tags is None


def test_transformer_mixin_tags():
    tags = get_tags(Concatenator())
    assert tags.transformer_tags is not None
    assert tags.estimator_type is None


def test_single_array_estimators_are_not_multiview():
    assert not is_multiview(KMeans) and not is_multiview(KMeans())


def test_fit_predict_passes_y_and_kwargs_and_returns_labels():
    est = Recorder()
    y = np.arange(4)
    labels = est.fit_predict(Xs, y, weight=3)
    assert labels is est.labels_
    received_Xs, received_y, kwargs = est.received_
    assert received_Xs is Xs and received_y is y and kwargs == {"weight": 3}


def test_fit_transform_is_fit_then_transform():
    est = Concatenator()
    out = est.fit_transform(Xs, "y", offset=2.0)
    np.testing.assert_array_equal(out, np.hstack(Xs) + 2.0)
    assert est.y_ == "y"


def test_sklearn_check_estimator_skips_multiview_estimators():
    # two_d_array=False: scikit-learn's suite declines to run, rather than
    # failing on 2-D inputs the estimator was never meant to take.
    with pytest.warns(UserWarning, match="Can't test estimator Recorder"):
        check_estimator(Recorder())
