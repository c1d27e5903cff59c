"""scikit-learn's metadata routing over every discovered estimator.

An estimator's data arguments (``X``, ``Xs``, ``y``: what a meta-estimator
passes positionally) are not metadata; its optional per-sample or per-call
arguments (``tasks``, ``sample_weight``, ``mask``, ``phenotypes``, ...) are,
and a :class:`~sklearn.pipeline.Pipeline` or a search routes them once
requested, or refuses them with scikit-learn's own error when not requested.
"""

import inspect

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.utils.metadata_routing import MetadataRouter

from mvlearn_ext.base import MultiViewMixin
from mvlearn_ext.cluster import ConcatKMeans
from mvlearn_ext.compose import MultiViewAdapter
from mvlearn_ext.multitask import PooledRegressor
from mvlearn_ext.utils.discovery import all_estimators

ESTIMATORS = [cls for _, cls in all_estimators()]
ROUTED_METHODS = ("fit", "predict", "predict_proba", "decision_function", "score", "transform")


@pytest.fixture(autouse=True)
def _routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _instance(cls):
    return cls(ConcatKMeans()) if cls is MultiViewAdapter else cls()


def _methods(cls):
    return [m for m in ROUTED_METHODS if inspect.isfunction(getattr(cls, m, None))]


def _optional_arguments(cls, method):
    """The arguments of ``method`` that default to None, other than ``y``: its metadata."""
    params = list(inspect.signature(getattr(cls, method)).parameters.values())[1:]
    return {
        p.name
        for p in params
        if p.default is None
        and p.name not in ("y", "Y")
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }


def _metadata_cases():
    return [
        pytest.param(cls, method, name, id=f"{cls.__name__}.{method}({name})")
        for cls in ESTIMATORS
        for method in _methods(cls)
        for name in sorted(_optional_arguments(cls, method))
    ]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda cls: cls.__name__)
def test_the_routable_metadata_are_the_optional_arguments(cls):
    routing = _instance(cls).get_metadata_routing()
    if isinstance(routing, MetadataRouter):  # a meta-estimator: its estimator's requests
        return
    for method in _methods(cls):
        assert set(getattr(routing, method).requests) == _optional_arguments(cls, method), method


@pytest.mark.parametrize("cls, method, name", _metadata_cases())
def test_metadata_is_routed_once_requested(cls, method, name):
    est = _instance(cls)
    value = np.arange(4)
    if getattr(est.get_metadata_routing(), method).requests[name] is not True:
        # Not requested: a Pipeline refuses it with scikit-learn's error, naming it.
        pipe = Pipeline([("est", est)])
        with pytest.raises(UnsetMetadataPassedError, match=name):
            pipe.get_metadata_routing().route_params(caller=method, params={name: value})
        getattr(est, f"set_{method}_request")(**{name: True})
    routed = (
        Pipeline([("est", est)])
        .get_metadata_routing()
        .route_params(caller=method, params={name: value})
    )
    assert routed["est"][method] == {name: value}


def test_an_unrequested_sample_weight_is_refused_by_a_pipeline_fit():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 2)), rng.normal(size=20)
    pipe = Pipeline([("est", PooledRegressor())])
    with pytest.raises(UnsetMetadataPassedError, match="sample_weight"):
        pipe.fit(X, y, sample_weight=np.ones(20))


# --------------------------------------------------------------------------- fits


def _multitask_data(seed=0, n=90, n_tasks=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    tasks = np.repeat(np.arange(n_tasks), n // n_tasks)
    coef = rng.normal(size=(n_tasks, 3))
    y = np.einsum("ij,ij->i", X, coef[tasks]) + 0.1 * rng.normal(size=n)
    return X, y, tasks, rng.uniform(0.2, 2.0, size=n)


MULTITASK = [cls for cls in ESTIMATORS if cls.__module__.startswith("mvlearn_ext.multitask")]


@pytest.mark.parametrize("cls", MULTITASK, ids=lambda cls: cls.__name__)
def test_a_pipeline_fits_with_tasks_and_sample_weight_as_the_estimator_does(cls):
    X, y, tasks, sample_weight = _multitask_data()
    est = cls().set_fit_request(sample_weight=True)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    pipe = Pipeline([("est", est)]).fit(X, y, tasks=tasks, sample_weight=sample_weight)
    direct = clone(est).fit(X, y, tasks=tasks, sample_weight=sample_weight)
    np.testing.assert_array_equal(pipe[-1].coef_, direct.coef_)
    np.testing.assert_array_equal(pipe.predict(X, tasks=tasks), direct.predict(X, tasks=tasks))
    # The weights change the fit (they are used, not dropped on the way).
    unweighted = clone(est).fit(X, y, tasks=tasks)
    assert not np.array_equal(unweighted.coef_, direct.coef_)


def test_a_grid_search_splits_tasks_and_sample_weight_with_the_rows():
    X, y, tasks, sample_weight = _multitask_data(seed=1)
    est = PooledRegressor().set_fit_request(sample_weight=True)
    est.set_score_request(sample_weight=True)
    splits = list(KFold(3, shuffle=True, random_state=0).split(X))
    search = GridSearchCV(est, {"fit_intercept": [True, False]}, cv=splits)
    search.fit(X, y, tasks=tasks, sample_weight=sample_weight)
    for k, (train, test) in enumerate(splits):
        ref = clone(est).set_params(fit_intercept=search.best_params_["fit_intercept"])
        ref.fit(X[train], y[train], tasks=tasks[train], sample_weight=sample_weight[train])
        np.testing.assert_allclose(
            search.cv_results_[f"split{k}_test_score"][search.best_index_],
            ref.score(X[test], y[test], tasks=tasks[test], sample_weight=sample_weight[test]),
            rtol=1e-12,
        )


def test_a_pipeline_fits_a_diffusion_with_tasks_and_sample_weight_as_the_estimator_does():
    pytest.importorskip("torch")
    from mvlearn_ext.deep.diffusion import ConditionalDiffusion

    rng = np.random.default_rng(2)
    C, X = rng.normal(size=(40, 2)), rng.normal(size=(40, 2))
    tasks, sample_weight = np.repeat([0, 1], 20), rng.uniform(0.2, 2.0, size=40)
    est = ConditionalDiffusion(hidden_layer_sizes=(4,), max_iter=3, n_tasks=2, random_state=0)
    est.set_fit_request(tasks=True, sample_weight=True)
    pipe = Pipeline([("est", est)]).fit(C, X, tasks=tasks, sample_weight=sample_weight)
    direct = clone(est).fit(C, X, tasks=tasks, sample_weight=sample_weight)
    np.testing.assert_array_equal(
        pipe[-1].sample(C, tasks, random_state=0), direct.sample(C, tasks, random_state=0)
    )


class _WeightedViews(MultiViewMixin, BaseEstimator):
    """A multi-view estimator whose fit consumes sample_weight (it keeps it)."""

    def fit(self, Xs, y=None, sample_weight=None):
        self.n_views_ = len(Xs)
        self.sample_weight_ = sample_weight
        return self


def test_the_adapter_routes_fit_metadata_to_its_estimator():
    X = np.arange(12.0).reshape(4, 3)
    weights = np.array([1.0, 2.0, 3.0, 4.0])
    # Not requested by the estimator: scikit-learn's error, naming the argument.
    pipe = Pipeline([("adapter", MultiViewAdapter(_WeightedViews(), view_sizes=[1, 2]))])
    with pytest.raises(UnsetMetadataPassedError, match="sample_weight"):
        pipe.fit(X, sample_weight=weights)
    # Requested: it reaches the estimator's fit, with the views split.
    est = _WeightedViews().set_fit_request(sample_weight=True)
    pipe = Pipeline([("adapter", MultiViewAdapter(est, view_sizes=[1, 2]))])
    fitted = pipe.fit(X, sample_weight=weights)[-1].estimator_
    assert fitted.n_views_ == 2
    np.testing.assert_array_equal(fitted.sample_weight_, weights)
    # Without routing, the adapter passes its keyword arguments on as given.
    with sklearn.config_context(enable_metadata_routing=False):
        adapter = MultiViewAdapter(_WeightedViews(), view_sizes=[1, 2])
        fitted = adapter.fit(X, sample_weight=weights).estimator_
    np.testing.assert_array_equal(fitted.sample_weight_, weights)
