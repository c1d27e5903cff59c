"""The multi-view contract suite catches what it claims to catch.

Each broken estimator below breaks one clause of the contract; the check for
that clause must fail on it, and every check must pass on the well-behaved
estimators (ConcatKMeans and a toy transformer).
"""

import copy
import pickle

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from mvlearn_ext.base import MultiViewClusterMixin, MultiViewTransformerMixin
from mvlearn_ext.cluster import ConcatKMeans
from mvlearn_ext.utils import estimator_checks as ec
from mvlearn_ext.utils._validation import check_views_consistent, validate_views


class ViewScaler(MultiViewTransformerMixin, BaseEstimator):
    """A well-behaved toy transformer: standardises each view, returns the list."""

    def __init__(self, *, with_std=True):
        self.with_std = with_std

    def fit(self, Xs, y=None):
        Xs = validate_views(Xs)
        check_views_consistent(self, Xs, reset=True)
        self.means_ = [X.mean(axis=0) for X in Xs]
        self.scales_ = [X.std(axis=0) if self.with_std else np.ones(X.shape[1]) for X in Xs]
        return self

    def transform(self, Xs):
        check_is_fitted(self)
        Xs = validate_views(Xs)
        check_views_consistent(self, Xs, reset=False)
        return [(X - m) / s for X, m, s in zip(Xs, self.means_, self.scales_, strict=True)]


# ------------------------------------------------------------------ one defect each


class NoSelf(ConcatKMeans):
    def fit(self, Xs, y=None):
        super().fit(Xs, y)


class ExtraInitAttribute(ConcatKMeans):
    def __init__(self, n_clusters=8, *, scaling="zscore", n_init=10, max_iter=300, tol=1e-4,
                 random_state=None):  # fmt: skip
        super().__init__(n_clusters, scaling=scaling, n_init=n_init, max_iter=max_iter,
                         tol=tol, random_state=random_state)  # fmt: skip
        self.history = []


class PositionalParams(ConcatKMeans):
    def __init__(self, n_clusters=8, scaling="zscore", n_init=10, max_iter=300, tol=1e-4,
                 random_state=None):  # fmt: skip
        super().__init__(n_clusters, scaling=scaling, n_init=n_init, max_iter=max_iter,
                         tol=tol, random_state=random_state)  # fmt: skip


class CopiesParams(ViewScaler):
    def __init__(self, *, with_std=True):
        self.with_std = list(with_std) if isinstance(with_std, list) else with_std


class CloneKeepsFit(ConcatKMeans):
    def __sklearn_clone__(self):
        return copy.deepcopy(self)


class IgnoresSetParams(ConcatKMeans):
    def set_params(self, **params):
        return self


class BadRepr(ConcatKMeans):
    def __repr__(self, N_CHAR_MAX=700):
        return "<a clusterer>"


class SkipsFittedCheck(ConcatKMeans):
    def predict(self, Xs):
        Z = self.kmeans_.cluster_centers_  # AttributeError, not NotFittedError, before fit
        return np.zeros(len(Xs[0]), dtype=int) + 0 * Z.shape[0]


class PublicAttributeInFit(ConcatKMeans):
    def fit(self, Xs, y=None):
        super().fit(Xs, y)
        self.fitted = True
        return self


class ChangesParamsInFit(ConcatKMeans):
    def fit(self, Xs, y=None):
        super().fit(Xs, y)
        self.n_init = 1
        return self


class NoViewsRecord(ConcatKMeans):
    def fit(self, Xs, y=None):
        super().fit(Xs, y)
        del self.n_views_
        return self


class ListWidths(ConcatKMeans):
    def fit(self, Xs, y=None):
        super().fit(Xs, y)
        self.n_features_per_view_ = list(self.n_features_per_view_)
        return self


class ModifiesInput(ConcatKMeans):
    def fit(self, Xs, y=None):
        Xs[0] -= Xs[0].mean(axis=0)
        return super().fit(Xs, y)


class Unpicklable(ConcatKMeans):
    def fit(self, Xs, y=None):
        super().fit(Xs, y)
        self.transform_ = lambda X: X
        return self


class RefusesTuples(ConcatKMeans):
    def fit(self, Xs, y=None):
        if isinstance(Xs, tuple):
            raise TypeError("tuples are not supported")
        return super().fit(Xs, y)


class RemembersFirstFit(ConcatKMeans):
    def fit(self, Xs, y=None):
        if hasattr(self, "kmeans_"):
            return self
        return super().fit(Xs, y)


class IgnoresSeed(ConcatKMeans):
    def fit(self, Xs, y=None):
        super().fit(Xs, y)
        self.labels_ = np.random.default_rng().permutation(self.labels_)  # fresh entropy
        return self


class UsesGlobalRandomState(ConcatKMeans):
    def fit(self, Xs, y=None):
        np.random.random_sample()  # noqa: NPY002 (the defect under test)
        return super().fit(Xs, y)


class RandomLabels(ConcatKMeans):
    def fit(self, Xs, y=None):
        super().fit(Xs, y)
        self.labels_ = np.random.default_rng(0).integers(self.n_clusters, size=len(self.labels_))
        return self


class FloatLabels(ConcatKMeans):
    def fit(self, Xs, y=None):
        super().fit(Xs, y)
        self.labels_ = self.labels_.astype(float)
        return self


class UnvalidatedViews(ConcatKMeans):
    """Validates the concatenation: scikit-learn's single-array messages leak out."""

    def fit(self, Xs, y=None):
        check_array(np.hstack(Xs))
        return super().fit(Xs, y)


class AcceptsA2DArray(ConcatKMeans):
    def fit(self, Xs, y=None):
        if isinstance(Xs, np.ndarray) and Xs.ndim == 2:
            Xs = [Xs]
        return super().fit(Xs, y)


class DropsEmptyViews(ConcatKMeans):
    def fit(self, Xs, y=None):
        return super().fit([X for X in Xs if np.shape(X)[1] > 0], y)


class NoConsistencyCheck(ConcatKMeans):
    def predict(self, Xs):
        check_is_fitted(self)
        Z = np.hstack(validate_views(Xs))
        return self.kmeans_.predict(Z)

    def score(self, Xs, y=None):
        return -1.0


class NoClusterCountCheck(ConcatKMeans):
    def fit(self, Xs, y=None):
        Xs = validate_views(Xs)
        if len(Xs[0]) < self.n_clusters:
            raise ValueError("not enough data")
        return super().fit(Xs, y)


class WrongMixinOrder(BaseEstimator, MultiViewClusterMixin):
    pass


#: (broken estimator, the check that must catch it); the check fails with an
#: AssertionError unless the defect raises its own error first (see RAISES).
BROKEN = [
    (NoSelf(), "check_fit_returns_self"),
    (ExtraInitAttribute(), "check_init_params"),
    (PositionalParams(), "check_init_params"),
    (CopiesParams(with_std=[True]), "check_init_params"),
    (CloneKeepsFit(), "check_clone"),
    (IgnoresSetParams(), "check_get_set_params"),
    (BadRepr(), "check_repr"),
    (SkipsFittedCheck(), "check_not_fitted"),
    (PublicAttributeInFit(), "check_fitted_attributes"),
    (ChangesParamsInFit(), "check_fitted_attributes"),
    (NoViewsRecord(), "check_fitted_attributes"),
    (ListWidths(), "check_fitted_attributes"),
    (ModifiesInput(), "check_fit_does_not_modify_input"),
    (Unpicklable(), "check_pickle"),
    (RefusesTuples(), "check_input_containers"),
    (RemembersFirstFit(), "check_fit_idempotent"),
    (IgnoresSeed(), "check_random_state"),
    (UsesGlobalRandomState(), "check_random_state"),
    (RandomLabels(), "check_clusterer"),
    (FloatLabels(), "check_clusterer"),
    (WrongMixinOrder(), "check_multiview_tags"),
    (AcceptsA2DArray(), "check_error_not_a_list_of_views"),
    (UnvalidatedViews(), "check_error_n_samples_mismatch"),
    (UnvalidatedViews(), "check_error_nan_inf"),
    (DropsEmptyViews(), "check_error_empty_view"),
    (NoConsistencyCheck(), "check_error_views_differ_from_fit"),
    (NoClusterCountCheck(), "check_error_too_few_samples"),
]


RAISES = {
    "Unpicklable": (AttributeError, pickle.PicklingError),  # pickling a lambda
    "RefusesTuples": TypeError,  # its own error, raised inside the check
}


@pytest.mark.parametrize(
    ("estimator", "check_name"),
    BROKEN,
    ids=[f"{type(e).__name__}-{name}" for e, name in BROKEN],
)
def test_each_check_catches_its_defect(estimator, check_name):
    check = getattr(ec, check_name)
    with pytest.raises(RAISES.get(type(estimator).__name__, AssertionError)):
        check(estimator)


def test_every_check_is_exercised_by_a_broken_estimator():
    names = {check.__name__ for _, check in ec.yield_multiview_checks(ConcatKMeans())}
    caught = {name for _, name in BROKEN}
    assert names == caught, f"checks without a defect test: {sorted(names - caught)}"


@ec.parametrize_with_multiview_checks([ConcatKMeans(n_init=2), ViewScaler()])
def test_well_behaved_estimators_pass(estimator, check):
    check(estimator)


def test_check_multiview_estimator_reports_the_check_and_the_estimator():
    with pytest.raises(AssertionError, match=r"check_fit_returns_self failed for NoSelf\(\)"):
        ec.check_multiview_estimator(NoSelf())


def test_error_message_check_explains_a_wrong_message():
    with pytest.raises(AssertionError, match=r"does not match 'view 1\\\\b"):
        ec.check_error_n_samples_mismatch(UnvalidatedViews())


def test_expected_failed_checks_are_strict_xfails():
    marker = ec.parametrize_with_multiview_checks(
        [NoSelf()], expected_failed_checks=lambda est: {"check_fit_returns_self": "known"}
    )
    params = marker.args[1]
    marked = [p for p in params if p.marks]
    assert [p.id for p in marked] == ["NoSelf()-check_fit_returns_self"]
    (mark,) = marked[0].marks
    assert mark.name == "xfail" and mark.kwargs == {"reason": "known", "strict": True}


def test_checks_do_not_modify_the_estimator_given():
    estimator = ConcatKMeans(n_clusters=5, n_init=2)
    for _, check in ec.yield_multiview_checks(estimator):
        check(estimator)
    assert estimator.get_params()["n_clusters"] == 5 and estimator.random_state is None
    assert not hasattr(estimator, "labels_")


def test_check_data_are_seeded_blobs():
    Xs, y = ec._multiview_blobs()
    again, y_again = ec._multiview_blobs()
    assert [X.shape for X in Xs] == [(60, 4), (60, 3)] and np.bincount(y).tolist() == [20] * 3
    np.testing.assert_array_equal(Xs[1], again[1])
    np.testing.assert_array_equal(y, y_again)
