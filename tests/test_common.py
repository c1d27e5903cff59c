"""Every public estimator against its contract, found by discovery.

Multi-view estimators (``fit(Xs)``) go through the multi-view contract suite
(:mod:`mvlearn_ext.utils.estimator_checks`); single-array estimators through
scikit-learn's ``parametrize_with_checks``. A new estimator in a public
subpackage is picked up without being registered here; the tables below only
give instances for estimators that need constructor arguments or faster
settings.
"""

import pytest
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import check_clustering, parametrize_with_checks

from mvlearn_ext.cluster import ConcatKMeans
from mvlearn_ext.compose import MultiViewAdapter, ViewSplitter
from mvlearn_ext.utils.discovery import all_estimators
from mvlearn_ext.utils.estimator_checks import parametrize_with_multiview_checks

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

#: Fast constructor arguments by class name, for estimators whose module
#: needs an optional extra (importing them here would need it too).
FAST_PARAMS = {
    "AESClassifier": dict(n_epochs_stage1=2, n_epochs_stage2=1, random_state=0, n_jobs=1),
    "TLVMOGPRegressor": dict(n_epochs=5, n_inducing=16, random_state=0, n_jobs=1),
    "GSLVMOGPRegressor": dict(n_epochs=5, n_terms=2, random_state=0, n_jobs=1),
    "CIMLN": dict(
        hidden_layer_sizes=(16,), embed_dim=4, n_epochs_pretrain=2, n_epochs=2, n_init=1
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
    # fit(Xs, ys) takes one array per agent, which neither suite's inputs are.
    "mvlearn_ext.federated": "tests/federated/",
    # its own parametrize_with_checks run uses a short L-BFGS budget for speed.
    "mvlearn_ext.gaussian_process": "tests/gaussian_process/test_lvmogp.py",
    # fit(tasks, ...) / fit(codes, ...) take task libraries, not (X, y).
    "mvlearn_ext.extrapolate": "tests/extrapolate/",
    # fit(A, phenotypes, y) takes connectomes with a phenotype per subject.
    "mvlearn_ext.brain": "tests/brain/test_phenobrain.py",
    # conditional generators: fit(C, X) or fit(pairs, unpaired), a stochastic
    # sample() and no predict; the checks that apply run there.
    "mvlearn_ext.deep.diffusion": "tests/deep/test_diffusion.py",
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


def test_discovery_finds_both_kinds():
    assert any(isinstance(est, ConcatKMeans) for est in MULTIVIEW)
    assert {type(est) for est in SINGLE_ARRAY} >= {MultiViewAdapter, ViewSplitter}


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator), {})


@parametrize_with_multiview_checks(MULTIVIEW)
def test_multiview_contract(estimator, check):
    check(estimator)


@parametrize_with_checks(
    SINGLE_ARRAY, expected_failed_checks=_expected_failed_checks, xfail_strict=True
)
def test_sklearn_contract(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    "estimator",
    [est for est in SINGLE_ARRAY if get_tags(est).estimator_type == "clusterer"],
    ids=repr,
)
@pytest.mark.parametrize("readonly_memmap", [False, True])
def test_sklearn_clustering_contract_of_adapted_clusterers(estimator, readonly_memmap):
    # scikit-learn yields its clustering checks only for ClusterMixin
    # subclasses; an adapter is a clusterer by its tags, so run them here.
    check_clustering(type(estimator).__name__, estimator, readonly_memmap=readonly_memmap)
