"""Every public estimator against its contract, found by discovery.

Multi-view estimators (``fit(Xs)``) go through the multi-view contract suite
(:mod:`mvlearn_ext.utils.estimator_checks`), and through scikit-learn's
``parametrize_with_checks`` behind a :class:`~mvlearn_ext.compose.MultiViewAdapter`
(scikit-learn skips a multi-view estimator itself: its tags say that it takes no
single 2-D array); single-array estimators through scikit-learn's
``parametrize_with_checks``. A new estimator in a public
subpackage is picked up without being registered here; the tables below only
give instances for estimators that need constructor arguments or faster
settings.
"""

import warnings

import pytest
from sklearn.base import _fit_context, clone
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import check_clustering, parametrize_with_checks

from mvlearn_ext.cluster import ConcatKMeans
from mvlearn_ext.compose import MultiViewAdapter, ViewSplitter
from mvlearn_ext.utils.discovery import all_estimators
from mvlearn_ext.utils.estimator_checks import (
    _assert_fitted_methods_raise,
    _assert_same_outputs,
    _call,
    _estimator_id,
    _fit,
    _fitted_methods,
    _multiview_blobs,
    _name,
    _outputs,
    _prepared,
    parametrize_with_multiview_checks,
)

#: Instances to test, for estimators that are not default-constructible or
#: that have faster settings; any other estimator is tested as ``cls()``.
INSTANCES = {
    ConcatKMeans: [ConcatKMeans(n_init=2)],
    MultiViewAdapter: [
        MultiViewAdapter(ConcatKMeans(n_clusters=3, n_init=2, random_state=0), view_sizes=2),
        MultiViewAdapter(
            ConcatKMeans(n_clusters=3, n_init=2, scaling=None, random_state=0),
            view_columns=[slice(None, None, 2), slice(1, None, 2)],
        ),
    ],
    ViewSplitter: [ViewSplitter(view_sizes=2)],
}

_EXTRA = dict(hidden_layer_sizes=(8,), max_iter=20, batch_size=16, random_state=0)

#: Fast constructor arguments by class name, for estimators whose module
#: needs an optional extra (importing them here would need it too).
FAST_PARAMS = {
    "AESClassifier": dict(n_epochs_stage1=2, n_epochs_stage2=1, random_state=0, n_jobs=1),
    "TLVMOGPRegressor": dict(n_epochs=5, n_inducing=16, random_state=0, n_jobs=1),
    "GSLVMOGPRegressor": dict(n_epochs=5, n_terms=2, random_state=0, n_jobs=1),
    "CIMLN": dict(
        hidden_layer_sizes=(16,), embed_dim=4, n_epochs_pretrain=2, n_epochs=2, n_init=1
    ),
    "KMEPersonalizedRidge": dict(n_components=16, random_state=0),
    "CompositionalTaskExtrapolator": dict(**_EXTRA),
    "InductiveCompositionRegressor": dict(**_EXTRA),
    "InductiveTaskRegressor": dict(**_EXTRA),
    "RelationalTaskExtrapolator": dict(n_pairs=40, **_EXTRA),
    "PhenoBrainClassifier": dict(n_epochs=2, embed_dim=8, random_state=0, n_jobs=1),
    "ConditionalDiffusion": dict(hidden_layer_sizes=(4,), max_iter=2, random_state=0),
    "GaussianDSMDiffusion": dict(degree=1, max_iter=2, random_state=0),
    "TwoStageDiffusion": dict(
        hidden_layer_sizes_specialist=(4,),
        hidden_layer_sizes_generalist=(4,),
        max_iter_specialist=2,
        max_iter_generalist=2,
        random_state=0,
    ),
}

_LIST_OUTPUT = (
    "ViewSplitter returns a list of views, not an array; scikit-learn's transformer checks "
    "compare array outputs (tests/compose/test_compose.py covers the splitter)"
)

#: Every check expected to fail, with the reason; strict, so a fixed one shows.
EXPECTED_FAILED_CHECKS = {
    ViewSplitter: {
        "check_dtype_object": (
            "ViewSplitter does not convert values (the multi-view estimator after it does, "
            "naming the view at fault), so a non-numeric object passes through"
        ),
        "check_pipeline_consistency": _LIST_OUTPUT,
        "check_estimators_pickle": _LIST_OUTPUT,
        "check_transformer_data_not_an_array": _LIST_OUTPUT,
        "check_transformer_general": _LIST_OUTPUT,
        "check_transformer_preserve_dtypes": _LIST_OUTPUT,
        "check_methods_sample_order_invariance": _LIST_OUTPUT,
        "check_methods_subset_invariance": _LIST_OUTPUT,
    },
}


#: Families whose own test module runs the contract on their estimators,
#: with instances and written expected failures of its own.
COVERED_ELSEWHERE = {
    "mvlearn_ext.multitask": "tests/multitask/test_multitask_api.py",
    # its own parametrize_with_checks run uses a short L-BFGS budget for speed.
    "mvlearn_ext.gaussian_process": "tests/gaussian_process/test_lvmogp.py",
}

#: The checks that fit on one array ``X`` (and ``y``): an estimator whose fit
#: takes another kind of data fails them by construction.
_FIT_ON_X_CHECKS = (
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_dtype_object",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_estimator_sparse_tag",
    "check_estimators_dtypes",
    "check_estimators_empty_data_messages",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_1sample",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_fit_score_takes_y",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_pipeline_consistency",
    "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input",
)
_TASK_LIBRARY = (
    "fit takes a library of tasks (one array per task, with codes or contexts) and predict "
    "a task's context, not (X, y)",
    ("check_complex_data", "check_fit1d"),
)
_GENERATOR = "a conditional generator: fit(C, X) and sample(C), no predict"

#: Estimators whose fit takes other data than one (X, y): the reason, and the
#: checks they fail beyond _FIT_ON_X_CHECKS. The checks that do not fit (the
#: constructor, get_params/set_params, cloning, tags) still run and must pass.
OTHER_FIT_SIGNATURES = {
    "KMEPersonalizedRidge": (
        "fit(Xs, ys) takes one array per agent and predict(X, agent) the agent",
        (
            "check_complex_data",
            "check_fit1d",
            "check_regressor_data_not_an_array",
            "check_regressors_int",
            "check_regressors_no_decision_function",
            "check_regressors_train",
            "check_requires_y_none",
            "check_supervised_y_2d",
            "check_supervised_y_no_nan",
        ),
    ),
    "CompositionalTaskExtrapolator": _TASK_LIBRARY,
    "InductiveCompositionRegressor": _TASK_LIBRARY,
    "InductiveTaskRegressor": _TASK_LIBRARY,
    "RelationalTaskExtrapolator": _TASK_LIBRARY,
    "PhenoBrainClassifier": (
        "fit(connectomes, y, phenotypes=...) takes 3-D connectomes and a phenotype per subject",
        (
            "check_classifier_data_not_an_array",
            "check_classifiers_classes",
            "check_classifiers_one_label",
            "check_classifiers_regression_target",
            "check_classifiers_train",
            "check_complex_data",
            "check_decision_proba_consistency",
            "check_requires_y_none",
            "check_supervised_y_2d",
        ),
    ),
    "ConditionalDiffusion": (
        _GENERATOR,
        (
            "check_all_zero_sample_weights_error",
            "check_sample_weight_equivalence_on_dense_data",
            "check_sample_weights_list",
            "check_sample_weights_not_an_array",
            "check_sample_weights_not_overwritten",
            "check_sample_weights_pandas_series",
            "check_sample_weights_shape",
        ),
    ),
    "GaussianDSMDiffusion": (_GENERATOR, ()),
    "TwoStageDiffusion": (
        "fit(pairs, unpaired) takes paired and unpaired conditions per task",
        ("check_complex_data", "check_fit1d"),
    ),
}


def _covered_elsewhere(cls):
    return any(cls.__module__.startswith(package) for package in COVERED_ELSEWHERE)


def _instances(multiview):
    return [
        instance
        for _, cls in all_estimators(multiview=multiview)
        if not _covered_elsewhere(cls)
        for instance in INSTANCES.get(cls, None) or [cls(**FAST_PARAMS.get(cls.__name__, {}))]
    ]


MULTIVIEW = _instances(multiview=True)
SINGLE_ARRAY = _instances(multiview=False)


def _adapted(estimator):
    """``estimator`` with three clusters and a fixed seed, behind an adapter that cuts
    ``X`` into two views (scikit-learn's checks compare fits, so they need a seed)."""
    params = estimator.get_params(deep=False)
    settings = {k: v for k, v in dict(n_clusters=3, random_state=0).items() if k in params}
    return MultiViewAdapter(clone(estimator).set_params(**settings), view_sizes=2)


#: Every multi-view estimator behind a MultiViewAdapter (ConcatKMeans already is,
#: in INSTANCES).
ADAPTED = [_adapted(est) for est in MULTIVIEW if not isinstance(est, ConcatKMeans)]


def test_discovery_finds_both_kinds():
    assert any(isinstance(est, ConcatKMeans) for est in MULTIVIEW)
    assert {type(est) for est in SINGLE_ARRAY} >= {MultiViewAdapter, ViewSplitter}


def _expected_failed_checks(estimator):
    name = type(estimator).__name__
    if name in OTHER_FIT_SIGNATURES:
        reason, more = OTHER_FIT_SIGNATURES[name]
        return dict.fromkeys(_FIT_ON_X_CHECKS + tuple(more), reason)
    return EXPECTED_FAILED_CHECKS.get(type(estimator), {})


@parametrize_with_multiview_checks(MULTIVIEW)
def test_multiview_contract(estimator, check):
    check(estimator)


@parametrize_with_checks(
    SINGLE_ARRAY + ADAPTED, expected_failed_checks=_expected_failed_checks, xfail_strict=True
)
def test_sklearn_contract(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    "estimator",
    [est for est in SINGLE_ARRAY + ADAPTED if get_tags(est).estimator_type == "clusterer"],
    ids=repr,
)
@pytest.mark.parametrize("readonly_memmap", [False, True])
def test_sklearn_clustering_contract_of_adapted_clusterers(estimator, readonly_memmap):
    # scikit-learn yields its clustering checks only for ClusterMixin
    # subclasses; an adapter is a clusterer by its tags, so run them here.
    check_clustering(type(estimator).__name__, estimator, readonly_memmap=readonly_memmap)


#: The code object of scikit-learn's ``_fit_context`` wrapper (shared by every wrapped method).
_FIT_CONTEXT_CODE = _fit_context(prefer_skip_nested_validation=True)(lambda self: self).__code__


@pytest.mark.parametrize("cls", [cls for _, cls in all_estimators()], ids=lambda c: c.__name__)
def test_fit_validates_the_parameters_once_through_fit_context(cls):
    # scikit-learn's ``_fit_context`` validates ``_parameter_constraints`` on
    # entry (and skips it in nested fits where asked); no fit validates by hand.
    assert cls.fit.__code__ is _FIT_CONTEXT_CODE


@pytest.mark.parametrize("estimator", MULTIVIEW, ids=_estimator_id)
def test_feature_names_per_view(estimator):
    """DataFrame views keep their column names, checked view by view as scikit-learn does.

    Fitted on DataFrames with string column names, the estimator records them in
    ``feature_names_per_view_`` and gives the outputs of the same views as
    arrays; every fitted method then refuses a view whose columns come in
    another order, and warns (``UserWarning``) on views without names.
    """
    pd = pytest.importorskip("pandas")
    name = _name(estimator)
    Xs, y = _multiview_blobs()
    frames = [
        pd.DataFrame(X, columns=[f"v{v}_{j}" for j in range(X.shape[1])]) for v, X in enumerate(Xs)
    ]
    fitted = _fit(_prepared(estimator), frames, y)
    recorded = getattr(fitted, "feature_names_per_view_", None)
    assert recorded is not None and [list(n) for n in recorded] == [
        list(F.columns) for F in frames
    ], f"{name}.feature_names_per_view_ is {recorded!r} after a fit on DataFrames"
    _assert_same_outputs(
        _outputs(fitted, frames, y),
        _outputs(_fit(_prepared(estimator), Xs, y), Xs, y),
        f"{name} fitted on DataFrames",
    )
    reordered = [frames[0][frames[0].columns[::-1]]] + frames[1:]
    _assert_fitted_methods_raise(
        fitted, r"feature names of view 0\b", reordered, y, case="view 0's columns reordered"
    )
    for method in _fitted_methods(fitted):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            _call(fitted, method, Xs, y)
        assert any("no feature names" in str(w.message) for w in record), (
            f"{name}.{method} on arrays after a fit on DataFrames does not warn"
        )
