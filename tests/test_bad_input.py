"""Bad-input cases and per-family adapters over every discovered estimator.

The adapters and fast instances (``SETUPS``) are shared with
tests/test_threads.py and tests/test_scale_invariance.py.

Every discovered estimator is fitted on tiny valid data corrupted in one
argument: NaN, infinity, huge finite values (x1e300), complex values,
strings, no rows, one row, a ragged nested list. Each case must raise a
``ValueError``/``TypeError`` whose message names the problem (and, where
stated, the argument), or give a finite, correct result. Every declared
parameter constraint must reject an invalid value with an
``InvalidParameterError`` naming the parameter. Sizes far beyond the data,
devices that do not exist, NaN in any input array and extreme real values that
a constraint admits are refused naming the parameter (or give finite results);
use before fit raises ``NotFittedError``; float32 input fits.
"""

from __future__ import annotations

import inspect
import re
import signal
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import adjusted_rand_score
from sklearn.utils._param_validation import (
    InvalidParameterError,
    generate_invalid_param_val,
    make_constraint,
)

from mvlearn_ext.utils.discovery import all_estimators

# -- corruptions of one array ------------------------------------------------


def _nan(A):
    A = A.astype(np.float64, copy=True)
    A.flat[1] = np.nan
    return A


def _inf(A):
    A = A.astype(np.float64, copy=True)
    A.flat[1] = np.inf
    return A


def _huge(A):
    return A.astype(np.float64) * 1e300


def _complex(A):
    return A.astype(np.float64) + 1j


def _strings(A):
    # not numbers written as strings (which numpy would convert), but words
    return np.char.add("v", A.astype(str))


def _ragged(A):
    rows = A.tolist()
    if A.ndim == 1:
        return [rows[0], rows[1:3]] + rows[3:]
    if A.ndim == 3:
        rows[0][0] = rows[0][0][:-1]
        return rows
    rows[0] = rows[0][:-1]
    return rows


#: name -> (corruption of the target array, rows kept in every array, the
#: message pattern of the problem). ``rows`` subsets all arrays together.
CASES = {
    "nan": (_nan, None, r"NaN|nan"),
    "inf": (_inf, None, r"inf"),
    "huge": (_huge, None, r"too large"),
    "complex": (_complex, None, r"[Cc]omplex"),
    "strings": (_strings, None, r"numeric|string|convert|dtype"),
    "ragged": (_ragged, None, r"ragged|inhomogeneous|same length|sequence"),
    "empty": (None, slice(0, 0), r"sample|empty|0 row|minimum|subject|at least"),
    "one_sample": (None, slice(0, 1), r"sample|row|minimum|at least|subject|class|cluster"),
}


class Outcome:
    """What a case did: raised ``error``, or fitted ``estimator``."""

    def __init__(self, error=None, estimator=None):
        self.error, self.estimator = error, estimator


def run_case(adapter, estimator, case):
    corrupt, rows, _ = CASES[case]
    est = clone(estimator)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            adapter.fit(est, corrupt=corrupt, rows=rows)
    except (ValueError, TypeError) as exc:
        return Outcome(error=exc)
    return Outcome(estimator=est)


def assert_clear_error_or_correct(adapter, estimator, case, reference=None):
    """The case raised a named error, or (huge values only) gave the right answer."""
    outcome = run_case(adapter, estimator, case)
    pattern = CASES[case][2]
    if outcome.error is not None:
        message = str(outcome.error)
        assert re.search(pattern, message), (
            f"{type(estimator).__name__}, {case}: the message does not name the problem: "
            f"{message!r}"
        )
        if adapter.names_argument(case):
            assert re.search(adapter.name, message), (
                f"{type(estimator).__name__}, {case}: the message does not name the "
                f"argument ({adapter.name}): {message!r}"
            )
        return
    assert case == "huge", (
        f"{type(estimator).__name__} accepted {case} input silently "
        f"(fitted: {outcome.estimator!r})"
    )
    adapter.assert_huge_correct(outcome.estimator, reference)


def assert_constraints_enforced(adapter, estimator):
    """Every declared parameter constraint rejects an invalid value, naming the parameter."""
    constraints = getattr(type(estimator), "_parameter_constraints", None)
    assert constraints is not None, f"{type(estimator).__name__} declares no constraints"
    params = estimator.get_params(deep=False)
    assert set(params) <= set(constraints), (
        f"{type(estimator).__name__}: parameters without constraints: "
        f"{sorted(set(params) - set(constraints))}"
    )

    class BadType:
        pass

    checked = 0
    for name, declared in constraints.items():
        if name not in params or declared == "no_validation":
            continue
        made = [make_constraint(c) for c in declared]
        values = [BadType()]
        for constraint in made:
            try:
                values.append(generate_invalid_param_val(constraint))
            except NotImplementedError:
                continue
        for value in values:
            est = clone(estimator).set_params(**{name: value})
            with pytest.raises(InvalidParameterError, match=rf"'{name}' parameter"):
                adapter.fit(est)
            checked += 1
    assert checked >= len(params)


def same_partition(labels_a, labels_b):
    return adjusted_rand_score(labels_a, labels_b) == 1.0


# -- one adapter per way of passing data -------------------------------------


class _Adapter:
    #: pattern of the corrupted argument's name in messages
    name = r"\bX\b"
    #: cases whose message must also name the argument (not only the problem)
    named_cases = frozenset({"nan", "inf", "huge", "complex", "strings", "ragged"})

    def names_argument(self, case):
        return case in self.named_cases

    @staticmethod
    def _apply(arrays, target, corrupt, rows):
        out = [a if rows is None else a[rows] for a in arrays]
        if corrupt is not None:
            out[target] = corrupt(out[target])
        return out

    def assert_huge_correct(self, est, reference):
        raise AssertionError(f"{type(est).__name__} accepted values x1e300 silently")


class MultiViewAdapterCase(_Adapter):
    """fit(Xs): two views of three well-separated blobs; view 0 is corrupted."""

    name = r"view 0\b"

    def __init__(self):
        from mvlearn_ext.datasets import make_multiview_blobs

        self.Xs, self.y = make_multiview_blobs(
            24, n_views=2, n_features=[3, 2], cluster_std=0.3, random_state=0
        )

    def fit(self, est, corrupt=None, rows=None):
        est.fit(self._apply(list(self.Xs), 0, corrupt, rows))

    def assert_huge_correct(self, est, reference):
        # A clusterer that handles x1e300 (by standardising) must find the
        # partition it finds on the unscaled data.
        labels = est.labels_
        assert np.all(np.isfinite(getattr(est, "view_scales_", [1.0])[0]))
        assert same_partition(labels, reference.labels_)


class SingleArrayCase(_Adapter):
    """fit(X, y) for scikit-learn-style estimators; X is corrupted."""

    name = r"\bX\b|Input|view \d of Xs"
    # scikit-learn's own messages for complex, string and ragged input (which
    # its estimator checks expect) name the problem but not the argument
    named_cases = frozenset({"nan", "inf", "huge"})

    def __init__(self, kind="regressor"):
        rng = np.random.default_rng(0)
        self.X = rng.normal(size=(24, 4))
        if kind == "classifier":
            self.y = np.tile([0, 1], 12)
        elif kind == "multioutput":
            self.y = np.column_stack([self.X[:, 0], self.X[:, 1] - self.X[:, 2]])
        elif kind == "unsupervised":
            self.y = None
        else:
            self.y = self.X @ [1.0, -1.0, 0.5, 0.0]

    def fit(self, est, corrupt=None, rows=None):
        arrays = [self.X] + ([] if self.y is None else [self.y])
        args = self._apply(arrays, 0, corrupt, rows)
        est.fit(*args)


class MultiTaskCase(_Adapter):
    """fit(X, y, tasks=tasks): two tasks of 12 rows; X is corrupted."""

    # scikit-learn's validate_data messages (which the estimators' own
    # scikit-learn checks expect) name complex/string/ragged input, not X
    named_cases = frozenset({"nan", "inf", "huge"})

    def __init__(self):
        rng = np.random.default_rng(0)
        self.X = rng.normal(size=(24, 3))
        self.tasks = np.repeat([0, 1], 12)
        coef = np.array([[1.0, -1.0, 0.5], [1.2, -0.8, 0.4]])
        self.y = np.einsum("ij,ij->i", self.X, coef[self.tasks]) + 0.01 * rng.normal(size=24)

    def fit(self, est, corrupt=None, rows=None):
        X, y, tasks = self._apply([self.X, self.y, self.tasks], 0, corrupt, rows)
        est.fit(X, y, tasks=tasks)


class FederatedCase(_Adapter):
    """fit(Xs, ys), one array per agent; Xs[0] is corrupted."""

    name = r"Xs\[0\]"

    def __init__(self):
        rng = np.random.default_rng(0)
        self.Xs = [rng.normal(size=(12, 2)) for _ in range(2)]
        self.ys = [X @ [1.0, -1.0] for X in self.Xs]

    def fit(self, est, corrupt=None, rows=None):
        X0, y0 = self._apply([self.Xs[0], self.ys[0]], 0, corrupt, rows)
        est.fit([X0, self.Xs[1]], [y0, self.ys[1]])


class TaskLibraryCase(_Adapter):
    """fit([codes,] tasks_x, tasks_y): function tasks; tasks_y[0] (1-D) is corrupted."""

    name = r"tasks_y\[0\]"

    def __init__(self, compositional):
        from mvlearn_ext.extrapolate import make_composition_tasks, make_function_tasks

        self.compositional = compositional
        if compositional:
            self.codes = [(0,), (1,), (0, 1)]
            self.tx, self.ty = make_composition_tasks(self.codes, n_points=8, random_state=0)
        else:
            thetas = np.array([[1.0, 0.5], [0.8, 1.2], [1.3, 0.7]])
            self.tx, self.ty = make_function_tasks(
                "quadratic", thetas, n_points=8, noise=0.0, random_state=0
            )
        self.tx, self.ty = list(self.tx), list(self.ty)

    def fit(self, est, corrupt=None, rows=None):
        ty0, tx0 = self._apply([self.ty[0], self.tx[0]], 0, corrupt, rows)
        tx = [tx0] + self.tx[1:]
        ty = [ty0] + self.ty[1:]
        if self.compositional:
            est.fit(self.codes, tx, ty)
        else:
            est.fit(tx, ty)


class ConnectomeCase(_Adapter):
    """fit(connectomes, y, phenotypes=P); the connectomes (3-D) are corrupted."""

    name = r"connectomes"
    named_cases = _Adapter.named_cases | {"empty"}

    def __init__(self):
        rng = np.random.default_rng(0)
        A = rng.normal(size=(16, 5, 5))
        self.A = (A + A.transpose(0, 2, 1)) / 2
        self.y = np.tile([0, 1], 8)
        self.P = rng.normal(size=(16, 2))

    def fit(self, est, corrupt=None, rows=None):
        if corrupt in (_nan, _inf):
            # keep the matrices symmetric: corrupt one entry and its mirror
            A = self._apply([self.A], 0, None, rows)[0].copy()
            A[0, 0, 1] = A[0, 1, 0] = np.nan if corrupt is _nan else np.inf
        else:
            A = self._apply([self.A], 0, corrupt, rows)[0]
        y, P = self._apply([self.y, self.P], 0, None, rows)
        est.fit(A, y, phenotypes=P)


class FusionCase(_Adapter):
    """fit(head_logits, y): the logits of three heads, shape (n_heads, n_samples,
    n_classes), are corrupted (``X`` holds them); rows are the second axis."""

    name = r"head_logits"
    named_cases = frozenset({"nan", "inf", "complex", "strings"})

    def __init__(self):
        rng = np.random.default_rng(0)
        self.y = np.tile([0, 1, 2], 8)
        onehot = np.eye(3)[self.y]
        self.X = np.stack([2.0 * onehot + rng.normal(size=(24, 3)) for _ in range(3)])

    def fit(self, est, corrupt=None, rows=None):
        L = self.X if rows is None else self.X[:, rows]
        y = self.y if rows is None else self.y[rows]
        est.fit(L if corrupt is None else corrupt(L), y)

    def assert_huge_correct(self, est, reference):
        # Logits x1e300 make every head's softmax one-hot, a limit the fusion
        # computes without overflow: finite probabilities that sum to 1.
        P = est.predict_proba(_huge(self.X))
        assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0)


class DiffusionCase(_Adapter):
    """fit(C, X) of a conditional generator: X (the samples) is corrupted."""

    # check_array's messages for complex, string and ragged input name the
    # problem, not the argument (as for SingleArrayCase)
    named_cases = frozenset({"nan", "inf", "huge"})

    def __init__(self):
        rng = np.random.default_rng(0)
        self.C = rng.uniform(-1, 1, (16, 1))
        self.X = np.hstack([self.C, self.C**2]) + 0.05 * rng.normal(size=(16, 2))

    def fit(self, est, corrupt=None, rows=None):
        X, C = self._apply([self.X, self.C], 0, corrupt, rows)
        est.fit(C, X)


class TwoStageCase(DiffusionCase):
    """fit(pairs, unpaired) with two tasks; the samples of task 0 are corrupted."""

    name = r"X of pairs\[0\]"

    def fit(self, est, corrupt=None, rows=None):
        X, C = self._apply([self.X, self.C], 0, corrupt, rows)
        est.fit([(C, X), (self.C, -self.X)], [self.C[:6], self.C[6:12]])


# -- the estimators, found by discovery ----------------------------------------

_MV = MultiViewAdapterCase
_EXTRA = dict(hidden_layer_sizes=(8,), max_iter=20, batch_size=16, random_state=0)


def _setups():
    """name -> (fast instance factory, adapter factory) for every estimator."""
    from mvlearn_ext.cluster import ConcatKMeans

    mt_cv = dict(cv=2, reg_lambdas=[0.1, 1.0])
    return {
        # multi-view clusterers: fit(Xs)
        "ConcatKMeans": (lambda c: c(n_clusters=3, n_init=2, random_state=0), _MV),
        "HAGMVC": (lambda c: c(n_clusters=3, random_state=0, n_jobs=1), _MV),
        "DRMC": (lambda c: c(n_clusters=3, max_iter=3, random_state=0, n_jobs=1), _MV),
        "LMVSC": (lambda c: c(n_clusters=3, n_anchors=6, n_init=2, random_state=0), _MV),
        "SMVSC": (lambda c: c(n_clusters=3, n_init=2, max_iter=5, random_state=0), _MV),
        "FPMVSCAG": (lambda c: c(n_clusters=3, n_init=2, max_iter=5, random_state=0), _MV),
        "EOMSCCA": (lambda c: c(n_clusters=3, max_iter=5, random_state=0), _MV),
        "ConcatSpectral": (lambda c: c(n_clusters=3, n_neighbors=5, random_state=0), _MV),
        "CIMLN": (
            lambda c: c(
                n_clusters=3,
                hidden_layer_sizes=(16,),
                embed_dim=4,
                n_epochs_pretrain=2,
                n_epochs=2,
                n_init=1,
                random_state=0,
            ),
            _MV,
        ),
        # single arrays
        "MultiViewAdapter": (
            lambda c: c(ConcatKMeans(n_clusters=3, n_init=2, random_state=0), view_sizes=2),
            lambda: SingleArrayCase("unsupervised"),
        ),
        "ViewSplitter": (
            # A pure column splitter that passes values through; the estimator
            # after it validates them (naming the view), which is what is tested.
            lambda c: _splitter_pipeline(c),
            lambda: SingleArrayCase("unsupervised"),
        ),
        "LVMOGPRegressor": (
            lambda c: c(n_inducing=4, n_inducing_latent=2, max_iter=5, random_state=0),
            lambda: SingleArrayCase("multioutput"),
        ),
        "AESClassifier": (
            lambda c: c(n_epochs_stage1=2, n_epochs_stage2=1, random_state=0, n_jobs=1),
            lambda: SingleArrayCase("classifier"),
        ),
        "TLVMOGPRegressor": (
            lambda c: c(n_epochs=2, n_inducing=4, random_state=0, n_jobs=1),
            lambda: SingleArrayCase("multioutput"),
        ),
        "GSLVMOGPRegressor": (
            lambda c: c(n_epochs=2, n_terms=1, n_inducing=4, random_state=0, n_jobs=1),
            lambda: SingleArrayCase("multioutput"),
        ),
        # multi-task: fit(X, y, tasks=...)
        "RobustMultiTaskRegressor": (lambda c: c(), MultiTaskCase),
        "RobustMultiTaskRegressorCV": (
            lambda c: c(cv=2, reg_lambdas=[0.0, 1.0]),
            MultiTaskCase,
        ),
        "ARMULRegressor": (lambda c: c(), MultiTaskCase),
        "ARMULRegressorCV": (lambda c: c(**mt_cv), MultiTaskCase),
        "ClusteredARMULRegressor": (
            lambda c: c(n_clusters=2, n_init=2, random_state=0),
            MultiTaskCase,
        ),
        "ClusteredARMULRegressorCV": (
            lambda c: c(n_clusters=2, n_init=2, random_state=0, **mt_cv),
            MultiTaskCase,
        ),
        "LowRankARMULRegressor": (lambda c: c(rank=1), MultiTaskCase),
        "LowRankARMULRegressorCV": (lambda c: c(rank=1, **mt_cv), MultiTaskCase),
        "IndependentTaskRegressor": (lambda c: c(), MultiTaskCase),
        "IndependentTaskRegressorCV": (
            lambda c: c(cv=2, reg_lambdas=[0.0, 0.1]),
            MultiTaskCase,
        ),
        "PooledRegressor": (lambda c: c(), MultiTaskCase),
        "MeanRegularizedRegressor": (lambda c: c(), MultiTaskCase),
        "MeanRegularizedRegressorCV": (lambda c: c(**mt_cv), MultiTaskCase),
        # federated: fit(Xs, ys) per agent
        "KMEPersonalizedRidge": (lambda c: c(n_components=16, random_state=0), FederatedCase),
        # task libraries
        "CompositionalTaskExtrapolator": (
            lambda c: c(**_EXTRA),
            lambda: TaskLibraryCase(compositional=True),
        ),
        "InductiveCompositionRegressor": (
            lambda c: c(**_EXTRA),
            lambda: TaskLibraryCase(compositional=True),
        ),
        "InductiveTaskRegressor": (
            lambda c: c(**_EXTRA),
            lambda: TaskLibraryCase(compositional=False),
        ),
        "RelationalTaskExtrapolator": (
            lambda c: c(n_pairs=40, **_EXTRA),
            lambda: TaskLibraryCase(compositional=False),
        ),
        # connectomes
        "PhenoBrainClassifier": (
            lambda c: c(n_epochs=2, embed_dim=8, random_state=0, n_jobs=1),
            ConnectomeCase,
        ),
        # head fusion: fit(head_logits, y)
        "ConflictArbitratedFusion": (lambda c: c(), FusionCase),
        # conditional generators (torch): fit(C, X), fit(pairs, unpaired)
        "ConditionalDiffusion": (
            lambda c: c(hidden_layer_sizes=(4,), max_iter=2, random_state=0),
            DiffusionCase,
        ),
        "GaussianDSMDiffusion": (lambda c: c(degree=1, max_iter=2, random_state=0), DiffusionCase),
        "TwoStageDiffusion": (
            lambda c: c(
                hidden_layer_sizes_specialist=(4,),
                hidden_layer_sizes_generalist=(4,),
                max_iter_specialist=2,
                max_iter_generalist=2,
                random_state=0,
            ),
            TwoStageCase,
        ),
    }


def _splitter_pipeline(cls):
    from sklearn.pipeline import make_pipeline

    from mvlearn_ext.cluster import ConcatKMeans

    return make_pipeline(cls(view_sizes=2), ConcatKMeans(n_clusters=3, n_init=2, random_state=0))


SETUPS = _setups()
ESTIMATORS = all_estimators()
_ADAPTERS = {}


def _setup(name, cls):
    make, adapter = SETUPS[name]
    if name not in _ADAPTERS:
        _ADAPTERS[name] = adapter()
    return make(cls), _ADAPTERS[name]


def test_every_discovered_estimator_has_a_setup():
    assert {name for name, _ in ESTIMATORS} <= set(SETUPS), (
        "add the new estimators to SETUPS: "
        f"{sorted({name for name, _ in ESTIMATORS} - set(SETUPS))}"
    )


def _bad_input_params():
    for name, cls in ESTIMATORS:
        for case in CASES:
            yield pytest.param(name, cls, case, id=f"{name}-{case}")


@pytest.mark.parametrize("name, cls, case", list(_bad_input_params()))
def test_bad_input_is_refused_or_handled(name, cls, case):
    estimator, adapter = _setup(name, cls)

    class LazyReference:
        """The fit on the unscaled data, computed only if a case needs it."""

        def __getattr__(self, attr):
            ref = clone(estimator)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                adapter.fit(ref)
            return getattr(ref, attr)

    assert_clear_error_or_correct(adapter, estimator, case, reference=LazyReference())


@pytest.mark.parametrize("name, cls", ESTIMATORS, ids=[name for name, _ in ESTIMATORS])
def test_invalid_hyperparameters_are_refused(name, cls):
    estimator, adapter = _setup(name, cls)
    if name == "ViewSplitter":
        estimator = estimator.steps[0][1]
        adapter.fit = lambda est, corrupt=None, rows=None: est.fit(adapter.X)
    assert_constraints_enforced(adapter, estimator)


# -- single cases, one by one --------------------------------------------------


def _clusterers():
    from mvlearn_ext.cluster import DRMC, FPMVSCAG, HAGMVC, LMVSC, SMVSC, ConcatKMeans

    return [
        (cls.__name__, SETUPS[cls.__name__][0](cls))
        for cls in (ConcatKMeans, HAGMVC, DRMC, LMVSC, SMVSC, FPMVSCAG)
    ]


@pytest.mark.parametrize("name, estimator", _clusterers(), ids=[name for name, _ in _clusterers()])
def test_clusterers_handle_large_and_tiny_finite_scales_up_to_the_limit(name, estimator):
    """Below the limit of check_magnitude the standardised clusterers find the
    partition of the unscaled data (the limit is tight: 10% above it is refused)."""
    case = MultiViewAdapterCase()
    reference = clone(estimator).fit(case.Xs).labels_
    limit = np.sqrt(np.finfo(np.float64).max / 4 / np.sum(case.Xs[0] ** 2))
    for scale in (limit * 0.9, 1e-150):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = clone(estimator).fit([case.Xs[0] * scale, case.Xs[1]])
        assert all(np.all(np.isfinite(s)) for s in getattr(est, "view_scales_", None) or [])
        assert same_partition(est.labels_, reference), (name, scale)
    with pytest.raises(ValueError, match=r"view 0 of Xs holds values too large .*1\.\d+e\+15"):
        clone(estimator).fit([case.Xs[0] * limit * 1.1, case.Xs[1]])


def test_kme_refuses_nan_complex_and_huge_at_predict_and_fit():
    from mvlearn_ext.federated import KMEPersonalizedRidge

    case = FederatedCase()
    model = KMEPersonalizedRidge(n_components=16, random_state=0).fit(case.Xs, case.ys)
    X = case.Xs[0].copy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"X contains NaN \(first at sample 3, feature 1\)"):
        model.predict(X, 0)
    with pytest.raises(ValueError, match="X holds complex values"):
        model.predict(case.Xs[0] + 1j, 0)
    with pytest.raises(ValueError, match=r"Xs\[0\] holds values too large .*e\+300"):
        KMEPersonalizedRidge(n_components=16).fit([case.Xs[0] * 1e300, case.Xs[1]], case.ys)
    with pytest.raises(ValueError, match=r"ys\[1\] holds complex values"):
        KMEPersonalizedRidge(n_components=16).fit(case.Xs, [case.ys[0], case.ys[1] + 1j])
    # Below the limit, the fit is the fit of the rescaled problem (ridge with
    # a tiny penalty: the coefficients scale as 1/s).
    s = 1e100
    big = KMEPersonalizedRidge(n_components=16, alpha=1e-12, random_state=0)
    big.fit([X * s for X in case.Xs], case.ys)
    ref = KMEPersonalizedRidge(n_components=16, alpha=1e-12, random_state=0)
    ref.fit(case.Xs, case.ys)
    np.testing.assert_allclose(big.coef_ * s, ref.coef_, rtol=1e-6)


@pytest.mark.parametrize(
    "name", ["ARMULRegressor", "LowRankARMULRegressor", "RobustMultiTaskRegressorCV"]
)
def test_multitask_in_model_selection_without_routing_is_refused(name):
    import sklearn
    from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

    from mvlearn_ext import multitask

    cls = getattr(multitask, name)
    estimator, case = SETUPS[name][0](cls), MultiTaskCase()
    param = "fit_intercept"
    folds = KFold(2, shuffle=True, random_state=0)
    hint = r"tasks is required.*enable_metadata_routing=True"
    # Without routing, tasks reaches fit but not score: scoring raises the
    # message, which scikit-learn raises (error_score="raise") or reports
    # with every score NaN.
    search = GridSearchCV(estimator, {param: [True, False]}, cv=folds, error_score="raise")
    with pytest.raises(ValueError, match=hint):
        search.fit(case.X, case.y, tasks=case.tasks)
    with pytest.warns(UserWarning, match=hint):
        scores = cross_val_score(estimator, case.X, case.y, cv=folds, params={"tasks": case.tasks})
    assert np.all(np.isnan(scores))
    search = GridSearchCV(estimator, {param: [True, False]}, cv=folds)
    # With routing, as the message says, every candidate gets a finite score.
    with sklearn.config_context(enable_metadata_routing=True):
        search.fit(case.X, case.y, tasks=case.tasks)
        scores = cross_val_score(estimator, case.X, case.y, cv=folds, params={"tasks": case.tasks})
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert np.all(np.isfinite(scores)) and scores.min() > 0.9
    # A single task needs no routing: fit and score see the same (no) tasks.
    assert np.isfinite(cross_val_score(estimator, case.X, case.y, cv=folds)).all()
    # Outside model selection, the fit is unchanged.
    clone(estimator).fit(case.X, case.y, tasks=case.tasks)


def test_multitask_predict_without_tasks_says_how_to_route():
    from mvlearn_ext.multitask import ARMULRegressor

    case = MultiTaskCase()
    model = ARMULRegressor().fit(case.X, case.y, tasks=case.tasks)
    with pytest.raises(ValueError, match=r"tasks is required.*enable_metadata_routing"):
        model.predict(case.X)
    X = case.X.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"X contains NaN"):
        model.predict(X, tasks=case.tasks)


def test_low_rank_armul_objective_is_finite_in_the_closed_form_cases():
    """One task, reg_lambda=0 and full rank solve in closed form; objective_ was NaN.
    Oracle: the limit of the iterative route as reg_lambda -> 0."""
    from mvlearn_ext.multitask import LowRankARMULRegressor

    rng = np.random.default_rng(0)
    m, d, n = 6, 4, 30
    tasks = np.repeat(np.arange(m), n)
    X = rng.normal(size=(m * n, d))
    y = np.einsum("ij,ij->i", X, rng.normal(size=(m, d))[tasks]) + 0.1 * rng.normal(size=m * n)
    at_zero = LowRankARMULRegressor(rank=2, reg_lambda=0.0).fit(X, y, tasks=tasks)
    near_zero = LowRankARMULRegressor(rank=2, reg_lambda=1e-10).fit(X, y, tasks=tasks)
    assert at_zero.n_iter_ == 1 and near_zero.n_iter_ > 0  # a closed form counts as one
    np.testing.assert_allclose(at_zero.objective_, near_zero.objective_, rtol=1e-9)
    full = LowRankARMULRegressor(rank=4, reg_lambda=1.0).fit(X, y, tasks=tasks)
    np.testing.assert_allclose(full.objective_, at_zero.objective_, rtol=1e-12)
    one = LowRankARMULRegressor(rank=1, reg_lambda=1.0).fit(X[:n], y[:n])
    # One task at its least-squares fit: -1/2 theta^T Sigma theta (the constant
    # dropped as in the iterative route), with Sigma the centred covariance.
    Xc = X[:n] - X[:n].mean(0)
    theta = np.linalg.lstsq(Xc, y[:n] - y[:n].mean(), rcond=None)[0]
    np.testing.assert_allclose(one.objective_, -0.5 * theta @ (Xc.T @ Xc / n) @ theta, rtol=1e-9)


def test_fpmvscag_warns_or_finds_every_cluster():
    """A graph that separates fewer groups than n_clusters is never silent: the fit
    warns, naming n_clusters and the empty anchors (the authors' code returns labels)."""
    from sklearn.exceptions import ConvergenceWarning

    from mvlearn_ext.cluster import FPMVSCAG

    rng = np.random.default_rng(0)
    Xs = [rng.normal(size=(60, 3)), rng.normal(size=(60, 2))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        labels = FPMVSCAG(n_clusters=60, n_init=1, random_state=0).fit(Xs).labels_
    found = np.unique(labels).size
    if found == 60:
        return
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert any(
        f"separates only {found} groups" in m and "fewer than n_clusters=60" in m for m in messages
    ), messages


@pytest.mark.parametrize("name, cls", ESTIMATORS, ids=[name for name, _ in ESTIMATORS])
def test_invalid_entries_of_container_parameters_are_refused(name, cls):
    """Parameters declared as tuple/list/dict/str pass the declarative check
    whatever they hold; their contents must be refused at fit, naming them."""
    estimator, adapter = _setup(name, cls)
    if name == "ViewSplitter":
        return  # view_sizes/view_columns: tests/compose covers their contents
    params = estimator.get_params(deep=False)
    for param, declared in type(estimator)._parameter_constraints.items():
        if param not in params:
            continue
        bad = []
        if tuple in declared or list in declared:
            bad += [(0,), (-1,), ("a",)]
        if str in declared:
            bad += ["not-a-valid-option"]
        if dict in declared:
            bad += [{"not_a_valid_key": 1}]
        for value in bad:
            est = clone(estimator).set_params(**{param: value})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises((ValueError, TypeError), match=param):
                    adapter.fit(est)


def _predict_params():
    for name, cls in ESTIMATORS:
        if SETUPS[name][1] in (_MV, MultiTaskCase, ConnectomeCase) or name in (
            "LVMOGPRegressor",
            "AESClassifier",
            "TLVMOGPRegressor",
            "GSLVMOGPRegressor",
        ):
            if hasattr(cls, "predict"):
                yield pytest.param(name, cls, id=name)


@pytest.mark.parametrize("name, cls", list(_predict_params()))
def test_predict_refuses_nan_and_huge_values(name, cls):
    """After a clean fit, NaN and values too large at predict time are refused."""
    estimator, adapter = _setup(name, cls)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        adapter.fit(estimator)
    for corrupt, pattern in ((_nan, r"NaN"), (_huge, r"too large")):
        with pytest.raises(ValueError, match=pattern):
            if isinstance(adapter, MultiViewAdapterCase):
                estimator.predict([corrupt(adapter.Xs[0]), adapter.Xs[1]])
            elif isinstance(adapter, MultiTaskCase):
                estimator.predict(corrupt(adapter.X), tasks=adapter.tasks)
            elif isinstance(adapter, ConnectomeCase):
                A = adapter.A.copy()
                if corrupt is _nan:
                    A[0, 0, 1] = A[0, 1, 0] = np.nan
                else:
                    A = _huge(A)
                estimator.predict(A, phenotypes=adapter.P)
            else:
                estimator.predict(corrupt(adapter.X))


# -- small shapes and mixed dtypes ----------------------------------------------


@pytest.mark.parametrize("n_samples", [2, 3, 5, 9])
def test_hagmvc_with_default_neighbours_on_few_samples(n_samples):
    """With n_neighbors >= n_samples - 1 every other sample is a neighbour: the views'
    neighbour sets carry no information, and the fit still finds separated blobs."""
    from mvlearn_ext.cluster import HAGMVC

    case = MultiViewAdapterCase()
    Xs = [X[:n_samples] for X in case.Xs]
    k = min(3, len(np.unique(case.y[:n_samples])))
    labels = HAGMVC(n_clusters=k, random_state=0).fit(Xs).labels_
    assert same_partition(labels, case.y[:n_samples])


@pytest.mark.parametrize(
    "fit_dtype, predict_dtype", [("float64", "float32"), ("float32", "float64")]
)
def test_concat_kmeans_predicts_in_any_float_dtype(fit_dtype, predict_dtype):
    from mvlearn_ext.cluster import ConcatKMeans
    from mvlearn_ext.compose import MultiViewAdapter

    case = MultiViewAdapterCase()
    Xs = [X.astype(fit_dtype) for X in case.Xs]
    other = [X.astype(predict_dtype) for X in case.Xs]
    model = ConcatKMeans(n_clusters=3, n_init=2, random_state=0).fit(Xs)
    np.testing.assert_array_equal(model.predict(other), model.labels_)
    np.testing.assert_allclose(model.score(other), model.score(Xs), rtol=1e-5)
    X = np.hstack(Xs)
    adapter = MultiViewAdapter(ConcatKMeans(n_clusters=3, n_init=2, random_state=0), view_sizes=3)
    adapter.fit(X)
    np.testing.assert_array_equal(adapter.predict(X.astype(predict_dtype)), adapter.labels_)


@pytest.mark.parametrize("n_samples, n_clusters", [(2, 2), (3, 3), (3, 2)])
def test_concat_spectral_with_as_many_samples_as_clusters(n_samples, n_clusters):
    """Every sample its own cluster is the only partition of n samples into n clusters."""
    from mvlearn_ext.cluster import ConcatSpectral

    case = MultiViewAdapterCase()
    Xs = [X[:n_samples] for X in case.Xs]
    labels = ConcatSpectral(n_clusters=n_clusters, random_state=0).fit(Xs).labels_
    if n_samples == n_clusters:
        assert np.unique(labels).size == n_samples
    else:
        assert same_partition(labels, case.y[:n_samples])


# -- sizes, devices, NaN in every array, use before fit --------------------------

#: Size hyperparameters: a value far beyond the data must be refused naming the
#: parameter (or clipped by a documented rule), never reach an allocation.
SIZE_PARAMS = (
    "cv",
    "n_components",
    "batch_size",
    "n_latent",
    "n_inducing",
    "n_inducing_latent",
    "n_anchors",
    "n_neighbors",
    "n_terms",
    "rank",
    "embed_dim",
)
HUGE_SIZE = 10**12


def _size_params():
    for name, cls in ESTIMATORS:
        params = inspect.signature(cls.__init__).parameters
        for param in SIZE_PARAMS:
            if param in params:
                yield pytest.param(name, cls, param, id=f"{name}-{param}")


class _TookTooLong(Exception):
    pass


def _alarm(seconds):
    def handler(signum, frame):
        raise _TookTooLong(f"still running after {seconds} s")

    signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)


@pytest.mark.parametrize("name, cls, param", list(_size_params()))
def test_huge_size_hyperparameters_are_refused_by_name(name, cls, param):
    estimator, adapter = _setup(name, cls)
    est = clone(estimator).set_params(**{param: HUGE_SIZE})
    _alarm(30)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            adapter.fit(est)
    except (ValueError, TypeError) as exc:
        assert param in str(exc), f"{name}: the error does not name {param}: {exc}"
        return
    finally:
        signal.alarm(0)
    # Accepted: only as a documented clip, which leaves a finite, usable fit.
    for attr in ("labels_", "coef_", "embedding_"):
        value = getattr(est, attr, None)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            assert np.all(np.isfinite(value)), f"{name}: {attr} not finite"


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: _anchor_clusterer("SMVSC"), id="SMVSC-code"),
        pytest.param(lambda: _anchor_clusterer("SMVSC", variant="paper"), id="SMVSC-paper"),
        pytest.param(lambda: _anchor_clusterer("EOMSCCA"), id="EOMSCCA"),
    ],
)
def test_n_components_is_refused_when_the_consensus_anchors_would_not_fit(make, monkeypatch):
    """``n_components`` sizes the consensus anchors (``d x n_anchors``) as well as the
    projections (``d x view width``); with many anchors and narrow views the anchors are
    the larger array, and the check must count them."""
    import os

    real_sysconf = os.sysconf
    # 200 KiB of memory: W_v (3 x 1000, 24 KB) fits, A (1000 x 60, 480 KB) does not.
    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 50}
    monkeypatch.setattr(os, "sysconf", lambda name: pages.get(name) or real_sysconf(name))
    rng = np.random.default_rng(0)
    Xs = [rng.normal(size=(60, 3)), rng.normal(size=(60, 2))]
    with pytest.raises(ValueError, match=r"n_components=1000 needs an array"):
        make().fit(Xs)


def _anchor_clusterer(name, **params):
    import mvlearn_ext.cluster as cluster

    return getattr(cluster, name)(
        n_clusters=2, n_anchors=60, n_components=1000, random_state=0, **params
    )


def _device_params():
    for name, cls in ESTIMATORS:
        if "device" in inspect.signature(cls.__init__).parameters:
            yield pytest.param(name, cls, id=name)


@pytest.mark.parametrize("name, cls", list(_device_params()))
def test_a_device_that_does_not_exist_is_refused_by_name(name, cls):
    import torch

    if torch.cuda.device_count() > 7:
        pytest.skip("this machine has a cuda:7")
    estimator, adapter = _setup(name, cls)
    est = clone(estimator).set_params(device="cuda:7")
    with pytest.raises((ValueError, TypeError), match=r"device|cuda:7"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            adapter.fit(est)


def _with_nan(A):
    A = np.array(A, dtype=np.float64, copy=True)
    A.flat[A.size // 2] = np.nan
    return A


#: Per adapter, the data attributes other than the one CASES corrupts: each
#: gets a NaN in its own run.
OTHER_ARRAYS = {
    "SingleArrayCase": ("y",),
    "MultiTaskCase": ("y",),
    "FederatedCase": ("ys",),
    "ConnectomeCase": ("y", "P"),
    "DiffusionCase": ("C",),
    "TwoStageCase": ("C",),
    "TaskLibraryCase": ("tx",),
    "FusionCase": ("y",),
}


#: Estimators for which NaN in an array is data, not an error: the multi-output
#: GPs read NaN in Y as a missing output.
NAN_IS_MISSING = {
    ("LVMOGPRegressor", "y"),
    ("TLVMOGPRegressor", "y"),
    ("GSLVMOGPRegressor", "y"),
}


def _nan_params():
    for name, cls in ESTIMATORS:
        adapter = SETUPS[name][1]()
        kind = type(adapter).__name__
        for attr in OTHER_ARRAYS.get(kind, ()):
            if (name, attr) in NAN_IS_MISSING or getattr(adapter, attr, None) is None:
                continue
            yield pytest.param(name, cls, attr, id=f"{name}-{attr}")


@pytest.mark.parametrize("name, cls, attr", list(_nan_params()))
def test_nan_in_every_input_array_is_refused(name, cls, attr):
    estimator, _ = _setup(name, cls)
    adapter = SETUPS[name][1]()
    value = getattr(adapter, attr)
    if isinstance(value, list):
        setattr(adapter, attr, [_with_nan(value[0]), *value[1:]])
    else:
        setattr(adapter, attr, _with_nan(value))
    with pytest.raises(ValueError, match=r"NaN|nan|finite"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            adapter.fit(clone(estimator))


def _use_before_fit(est, adapter):
    """Call the estimator's prediction or sampling method as a fitted one would be called."""
    if isinstance(adapter, MultiViewAdapterCase):
        return est.predict(adapter.Xs)
    if isinstance(adapter, MultiTaskCase):
        return est.predict(adapter.X, tasks=adapter.tasks)
    if isinstance(adapter, FederatedCase):
        return est.predict(adapter.Xs[0], 0)
    if isinstance(adapter, ConnectomeCase):
        return est.predict(adapter.A, phenotypes=adapter.P)
    if isinstance(adapter, TwoStageCase):
        return est.sample(adapter.C, np.zeros(len(adapter.C), dtype=int))
    if isinstance(adapter, DiffusionCase):
        return est.sample(adapter.C)
    if isinstance(adapter, TaskLibraryCase):
        n_args = len(inspect.signature(est.predict).parameters)
        if n_args == 2:
            return est.predict(adapter.tx[0], adapter.codes[0])
        return est.predict(adapter.tx[0], adapter.tx[1], adapter.ty[1])
    return est.predict(adapter.X)


def _unfitted_params():
    for name, cls in ESTIMATORS:
        if hasattr(cls, "predict") or hasattr(cls, "sample"):
            yield pytest.param(name, cls, id=name)


@pytest.mark.parametrize("name, cls", list(_unfitted_params()))
def test_use_before_fit_raises_not_fitted_error(name, cls):
    estimator, adapter = _setup(name, cls)
    with pytest.raises(NotFittedError):
        _use_before_fit(clone(estimator), adapter)


@pytest.mark.parametrize("name, cls", ESTIMATORS, ids=[name for name, _ in ESTIMATORS])
def test_float32_input_fits_and_gives_finite_results(name, cls):
    estimator, adapter = _setup(name, cls)
    est = clone(estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        adapter.fit(est, corrupt=lambda A: np.asarray(A, dtype=np.float32))
    for attr in ("labels_", "coef_", "embedding_", "loss_curve_"):
        value = getattr(est, attr, None)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            assert np.all(np.isfinite(value)), f"{name}: {attr} not finite"


# -- extreme allowed values of real hyperparameters -------------------------------


def _real_params(cls):
    """The real-valued hyperparameters whose declared constraint admits 1e300."""
    from numbers import Real

    from sklearn.utils._param_validation import Interval

    found = []
    for param, declared in getattr(cls, "_parameter_constraints", {}).items():
        for c in declared if isinstance(declared, list) else ():
            if (
                isinstance(c, Interval)
                and c.type is Real
                and (c.right is None or c.right >= 1e300)
                and param in inspect.signature(cls.__init__).parameters
            ):
                found.append(param)
                break
    return found


def _extreme_params():
    for name, cls in ESTIMATORS:
        for param in _real_params(cls):
            for value in (1e300, np.finfo(np.float64).max):
                yield pytest.param(name, cls, param, value, id=f"{name}-{param}={value:.0e}")


@pytest.mark.parametrize("name, cls, param, value", list(_extreme_params()))
def test_extreme_real_hyperparameters_are_refused_or_finite(name, cls, param, value):
    """A value the constraint admits (up to the largest float) is refused naming the
    parameter, or gives a fit whose fitted arrays and predictions are finite."""
    estimator, adapter = _setup(name, cls)
    est = clone(estimator).set_params(**{param: value})
    _alarm(30)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            adapter.fit(est)
            for attr, value in vars(est).items():
                if (
                    attr.endswith("_")
                    and isinstance(value, np.ndarray)
                    and value.dtype.kind == "f"
                ):
                    assert np.all(np.isfinite(value)), (
                        f"{name}({param}={value}): {attr} not finite"
                    )
            if hasattr(est, "predict") or hasattr(est, "sample"):
                out = _use_before_fit(est, adapter)
                out = np.asarray(out[0] if isinstance(out, tuple) else out)
                if out.dtype.kind == "f":
                    assert np.all(np.isfinite(out)), (
                        f"{name}({param}={value}): predictions not finite"
                    )
    except (ValueError, TypeError) as exc:
        assert param in str(exc), f"{name}: the error does not name {param}: {exc}"
    finally:
        signal.alarm(0)
