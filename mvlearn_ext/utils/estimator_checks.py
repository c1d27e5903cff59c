"""The contract suite for multi-view estimators.

scikit-learn's :func:`~sklearn.utils.estimator_checks.check_estimator` tests
estimators that take one 2-D array; it skips estimators whose ``fit`` takes a
list of views (their tags say ``two_d_array=False``). This module is the
counterpart for those: a set of checks, each a function of an (unfitted)
estimator instance that raises ``AssertionError`` when the estimator breaks
the contract, on a small seeded multi-view blob dataset built here.

The contract is that of scikit-learn (clone, ``get_params``/``set_params``,
``repr``, pickling, ``fit`` returns ``self``, refitting forgets the previous
fit, the same ``random_state`` gives the same result, ``NotFittedError``
before ``fit``), plus the multi-view input contract of
:func:`mvlearn_ext.utils.validate_views` and
:func:`mvlearn_ext.utils.check_views_consistent`: the errors for views with
different numbers of samples, NaN or infinity, empty views, a single 2-D
array, fewer samples than clusters, and a different number of views or of
features at ``predict``/``transform`` time than at ``fit``, each a
``ValueError``/``TypeError`` that names the view at fault.

Use :func:`parametrize_with_multiview_checks` in a test module (one pytest
test per estimator and check), or :func:`check_multiview_estimator` to run
them all at once. The checks set ``n_clusters`` to the number of clusters of
the check data and ``random_state`` to 0, where the estimator has those
parameters; every other parameter is the instance's.
"""

from __future__ import annotations

import inspect
import pickle
import re

import joblib
import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import adjusted_rand_score
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

from mvlearn_ext.base import MultiViewClusterMixin, is_multiview

__all__ = [
    "check_multiview_estimator",
    "parametrize_with_multiview_checks",
    "yield_multiview_checks",
]

#: Methods that use a fitted estimator on new views, in the order they are tried.
_FITTED_METHODS = (
    "predict",
    "transform",
    "predict_proba",
    "predict_log_proba",
    "decision_function",
    "score",
)
_N_SAMPLES = 60
_N_CLUSTERS = 3
_N_FEATURES = (4, 3)


# --------------------------------------------------------------------------- data and helpers


def _multiview_blobs(
    n_samples=_N_SAMPLES, n_features=_N_FEATURES, n_clusters=_N_CLUSTERS, random_state=0
):
    """Well separated Gaussian blobs seen through ``len(n_features)`` views.

    Every view holds the same clusters (one centre per cluster and view,
    drawn with scale 4, unit noise). Returns ``(Xs, y)``.
    """
    rng = np.random.default_rng(random_state)
    y = rng.permutation(np.arange(n_samples) % n_clusters)
    Xs = []
    for width in n_features:
        centers = rng.normal(scale=4.0, size=(n_clusters, width))
        Xs.append(centers[y] + rng.normal(size=(n_samples, width)))
    return Xs, y


def _prepared(estimator, **params):
    """A clone with ``n_clusters``/``random_state`` set for the check data."""
    estimator = clone(estimator)
    available = estimator.get_params(deep=False)
    defaults = {"n_clusters": _N_CLUSTERS, "random_state": 0}
    defaults.update(params)
    estimator.set_params(**{key: value for key, value in defaults.items() if key in available})
    return estimator


def _supervised(estimator):
    return get_tags(estimator).target_tags.required


def _fit(estimator, Xs, y):
    """Fit and return the estimator (not what ``fit`` returns: one check tests that)."""
    estimator.fit(Xs, y if _supervised(estimator) else None)
    return estimator


def _call(estimator, method, Xs, y):
    if method == "score":
        return estimator.score(Xs, y if _supervised(estimator) else None)
    return getattr(estimator, method)(Xs)


def _fitted_methods(estimator):
    return [method for method in _FITTED_METHODS if hasattr(estimator, method)]


def _outputs(estimator, Xs, y):
    """Everything a fitted estimator says about ``Xs``, by method name."""
    outputs = {}
    if hasattr(estimator, "labels_"):
        outputs["labels_"] = estimator.labels_
    for method in _fitted_methods(estimator):
        outputs[method] = _call(estimator, method, Xs, y)
    return outputs


def _assert_close(actual, desired, what):
    if isinstance(desired, (list, tuple)):
        assert isinstance(actual, (list, tuple)) and len(actual) == len(desired), (
            f"{what}: got {type(actual).__name__} of length {len(actual)}, expected "
            f"{type(desired).__name__} of length {len(desired)}"
        )
        for index, (a, d) in enumerate(zip(actual, desired, strict=True)):
            _assert_close(a, d, f"{what}[{index}]")
        return
    if sp.issparse(desired):
        desired, actual = desired.toarray(), actual.toarray()
    np.testing.assert_allclose(actual, desired, rtol=1e-7, atol=1e-9, err_msg=what)


def _assert_same_outputs(actual, desired, what):
    assert actual.keys() == desired.keys(), (
        f"{what}: outputs {sorted(actual)} differ from {sorted(desired)}"
    )
    for key in desired:
        _assert_close(actual[key], desired[key], f"{what}: {key}")


def _assert_raises(exc_type, pattern, func, *args, what):
    """Assert that ``func(*args)`` raises ``exc_type`` with a message matching ``pattern``."""
    try:
        func(*args)
    except exc_type as exc:
        if pattern is not None and not re.search(pattern, str(exc)):
            raise AssertionError(
                f"{what}: raised {type(exc).__name__}({str(exc)!r}), whose message does not "
                f"match {pattern!r}"
            ) from exc
        return
    except Exception as exc:
        raise AssertionError(
            f"{what}: expected {exc_type.__name__} matching {pattern!r}, got "
            f"{type(exc).__name__}({str(exc)!r})"
        ) from exc
    raise AssertionError(f"{what}: no {exc_type.__name__} was raised")


def _assert_fitted_methods_raise(fitted, pattern, Xs, y, *, case):
    """Every method of the fitted estimator refuses ``Xs`` with a ValueError matching ``pattern``.

    A failure is reported as ``<Class>.<method>, <case>``.
    """
    for method in _fitted_methods(fitted):
        what = f"{_name(fitted)}.{method}, {case}"
        _assert_raises(ValueError, pattern, _call, fitted, method, Xs, y, what=what)


def _params_hash(estimator):
    return joblib.hash(estimator.get_params(deep=False))


def _name(estimator):
    return type(estimator).__name__


# --------------------------------------------------------------------------- API checks


def check_multiview_tags(estimator):
    """The estimator is marked multi-view, and its tags say so.

    It inherits :class:`~mvlearn_ext.base.MultiViewMixin` before
    ``BaseEstimator`` (so that the mixin's tags are not overridden): the
    input tags refuse a 2-D array and accept a stack of views; a multi-view
    clusterer has the estimator type ``"clusterer"``.
    """
    name = _name(estimator)
    assert is_multiview(estimator), f"{name} does not inherit mvlearn_ext.base.MultiViewMixin"
    tags = get_tags(estimator)
    assert tags.input_tags.two_d_array is False, (
        f"{name}: input_tags.two_d_array is True; put MultiViewMixin before BaseEstimator "
        "in the bases"
    )
    assert tags.input_tags.three_d_array is True, f"{name}: input_tags.three_d_array is False"
    if isinstance(estimator, MultiViewClusterMixin):
        assert tags.estimator_type == "clusterer", (
            f"{name}: estimator_type is {tags.estimator_type!r}, expected 'clusterer'"
        )


def check_init_params(estimator):
    """``__init__`` stores its parameters verbatim and does nothing else.

    Every parameter is an attribute holding the very object passed (no
    conversion, no copy), ``__init__`` sets no other public attribute, takes
    no ``*args``/``**kwargs``, and at most its first parameter is
    positional (the others are keyword-only).
    """
    name = _name(estimator)
    cls = type(estimator)
    signature = inspect.signature(cls.__init__)
    parameters = [p for p in signature.parameters.values() if p.name != "self"]
    variadic = [p.name for p in parameters if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    assert not variadic, f"{name}.__init__ takes variadic arguments {variadic}"
    positional = [p.name for p in parameters if p.kind == p.POSITIONAL_OR_KEYWORD]
    assert len(positional) <= 1, (
        f"{name}.__init__ has positional parameters {positional}; only the first may be "
        "positional, the others must be keyword-only"
    )
    params = estimator.get_params(deep=False)
    assert set(params) == {p.name for p in parameters}, (
        f"{name}.get_params() keys {sorted(params)} differ from the __init__ parameters"
    )
    # Pass fresh objects, so that identity tells whether they were stored verbatim.
    fresh = {
        key: (list(value) if isinstance(value, list) else value) for key, value in params.items()
    }
    instance = cls(**fresh)
    for key, value in fresh.items():
        assert getattr(instance, key) is value, (
            f"{name}.__init__ does not store parameter {key!r} as given"
        )
    extra = [key for key in vars(instance) if not key.startswith("_") and key not in fresh]
    assert not extra, f"{name}.__init__ sets attributes {extra} that are not parameters"


def check_clone(estimator):
    """``clone`` gives an equal, unfitted estimator, from a fitted one too."""
    name = _name(estimator)
    copy = clone(estimator)
    assert type(copy) is type(estimator) and copy is not estimator
    assert _params_hash(copy) == _params_hash(estimator), f"clone({name}) changed its parameters"
    Xs, y = _multiview_blobs()
    fitted = _fit(_prepared(estimator), Xs, y)
    unfitted = clone(fitted)
    _assert_raises(
        NotFittedError,
        None,
        check_is_fitted,
        unfitted,
        what=f"the clone of a fitted {name} should be unfitted",
    )


def check_get_set_params(estimator):
    """``set_params(**get_params())`` is the identity and returns ``self``."""
    name = _name(estimator)
    params = estimator.get_params(deep=False)
    copy = clone(estimator)
    assert copy.set_params(**params) is copy, f"{name}.set_params does not return self"
    assert _params_hash(copy) == joblib.hash(params), f"{name}: get/set_params round trip"
    deep = estimator.get_params(deep=True)
    copy.set_params(**deep)
    assert joblib.hash(copy.get_params(deep=True)) == joblib.hash(deep), (
        f"{name}: get/set_params(deep=True) round trip"
    )
    for key, value in params.items():
        marker = object()
        copy.set_params(**{key: marker})
        assert copy.get_params(deep=False)[key] is marker, (
            f"{name}.set_params({key}=...) is not reflected by get_params"
        )
        copy.set_params(**{key: value})


def check_repr(estimator):
    """``repr`` works before and after ``fit`` and starts with the class name."""
    name = _name(estimator)
    text = repr(estimator)
    assert isinstance(text, str) and text.startswith(f"{name}("), f"repr: {text!r}"
    Xs, y = _multiview_blobs()
    fitted = _fit(_prepared(estimator), Xs, y)
    assert repr(fitted).startswith(f"{name}(")


def check_fit_returns_self(estimator):
    """``fit`` returns the estimator itself."""
    Xs, y = _multiview_blobs()
    prepared = _prepared(estimator)
    returned = prepared.fit(Xs, y if _supervised(prepared) else None)
    assert returned is prepared, f"{_name(estimator)}.fit returns {returned!r}, not self"


def check_not_fitted(estimator):
    """``predict``/``transform``/... raise ``NotFittedError`` before ``fit``."""
    Xs, y = _multiview_blobs()
    prepared = _prepared(estimator)
    for method in _fitted_methods(prepared):
        _assert_raises(
            NotFittedError,
            None,
            _call,
            prepared,
            method,
            Xs,
            y,
            what=f"{_name(estimator)}.{method} before fit",
        )


def check_fitted_attributes(estimator):
    """``fit`` records the views' shape, keeps its parameters, adds only ``*_`` attributes.

    After ``fit``: ``n_views_`` and ``n_features_per_view_`` (a tuple of
    ints) describe the training views; ``get_params()`` is unchanged; every
    public attribute that ``fit`` added ends with an underscore; a
    clusterer has integer ``labels_`` of shape ``(n_samples,)``.
    """
    name = _name(estimator)
    Xs, y = _multiview_blobs()
    prepared = _prepared(estimator)
    before = _params_hash(prepared)
    attributes_before = set(vars(prepared))
    _fit(prepared, Xs, y)
    assert _params_hash(prepared) == before, f"{name}.fit changed its parameters"
    added = [
        key
        for key in set(vars(prepared)) - attributes_before
        if not key.startswith("_") and not key.endswith("_")
    ]
    assert not added, f"{name}.fit set public attributes {sorted(added)} without a trailing _"
    assert getattr(prepared, "n_views_", None) == len(Xs), (
        f"{name}.fit did not set n_views_={len(Xs)} (call check_views_consistent(reset=True))"
    )
    widths = getattr(prepared, "n_features_per_view_", None)
    assert isinstance(widths, tuple) and widths == tuple(X.shape[1] for X in Xs), (
        f"{name}.n_features_per_view_ is {widths!r}, expected {tuple(X.shape[1] for X in Xs)}"
    )
    assert all(type(width) is int for width in widths), f"{name}: n_features_per_view_ types"
    if isinstance(prepared, MultiViewClusterMixin):
        labels = np.asarray(prepared.labels_)
        assert labels.shape == (len(y),), f"{name}.labels_ has shape {labels.shape}"
        assert labels.dtype.kind in "iu", f"{name}.labels_ has dtype {labels.dtype}"


def check_fit_does_not_modify_input(estimator):
    """Neither the list of views nor the views are modified by any method."""
    name = _name(estimator)
    Xs, y = _multiview_blobs()
    originals = [X.copy() for X in Xs]
    views = list(Xs)
    prepared = _fit(_prepared(estimator), views, y)
    _outputs(prepared, views, y)
    assert len(views) == len(Xs) and all(a is b for a, b in zip(views, Xs, strict=True)), (
        f"{name} modified the list of views"
    )
    for index, (X, original) in enumerate(zip(Xs, originals, strict=True)):
        np.testing.assert_array_equal(X, original, err_msg=f"{name} modified view {index}")


def check_pickle(estimator):
    """A fitted estimator pickles, and the unpickled one gives the same outputs."""
    name = _name(estimator)
    Xs, y = _multiview_blobs()
    Xs_new, y_new = _multiview_blobs(n_samples=20, random_state=1)
    fitted = _fit(_prepared(estimator), Xs, y)
    restored = pickle.loads(pickle.dumps(fitted))
    assert type(restored) is type(fitted)
    _assert_same_outputs(_outputs(restored, Xs, y), _outputs(fitted, Xs, y), f"{name} unpickled")
    _assert_same_outputs(
        _outputs(restored, Xs_new, y_new),
        _outputs(fitted, Xs_new, y_new),
        f"{name} unpickled, on new views",
    )


def check_input_containers(estimator):
    """Lists, tuples, nested lists, float32, int and 3-D stacks of views all work.

    A tuple of views and views given as nested lists give exactly the
    outputs of a list of arrays; a 3-D array gives the outputs of the list
    of its slices; float32 and integer views are accepted.
    """
    name = _name(estimator)
    Xs, y = _multiview_blobs()
    reference = _outputs(_fit(_prepared(estimator), Xs, y), Xs, y)
    for label, container in (
        ("a tuple of views", tuple(Xs)),
        ("views as nested lists", [X.tolist() for X in Xs]),
    ):
        outputs = _outputs(_fit(_prepared(estimator), container, y), container, y)
        _assert_same_outputs(outputs, reference, f"{name} fitted on {label}")

    square, y_square = _multiview_blobs(n_features=(3, 3))
    stacked = np.stack(square)
    _assert_same_outputs(
        _outputs(_fit(_prepared(estimator), stacked, y_square), stacked, y_square),
        _outputs(_fit(_prepared(estimator), square, y_square), square, y_square),
        f"{name} fitted on a 3-D array of views",
    )

    for dtype in (np.float32, np.int64):
        converted = [X.astype(dtype) for X in Xs]
        fitted = _fit(_prepared(estimator), converted, y)
        for method, output in _outputs(fitted, converted, y).items():
            if method != "score" and not isinstance(output, (list, tuple)):
                assert np.shape(output)[0] == len(y), (
                    f"{name}.{method} on {np.dtype(dtype).name} views has shape {np.shape(output)}"
                )


def check_fit_idempotent(estimator):
    """Refitting forgets the previous fit: ``fit(A); fit(B)`` equals ``fit(B)``.

    Fitting first on other data, with another number of views and other
    widths, then on the check data must give the outputs (and the
    ``n_views_``/``n_features_per_view_``) of a single fit on the check data.
    """
    name = _name(estimator)
    if get_tags(estimator).non_deterministic:
        return
    Xs, y = _multiview_blobs()
    Xs_new, y_new = _multiview_blobs(n_samples=20, random_state=1)
    once = _fit(_prepared(estimator), Xs, y)
    twice = _prepared(estimator)
    other, y_other = _multiview_blobs(n_samples=40, n_features=(2, 5, 3), random_state=2)
    _fit(twice, other, y_other)
    _fit(twice, Xs, y)
    assert (twice.n_views_, twice.n_features_per_view_) == (
        once.n_views_,
        once.n_features_per_view_,
    )
    _assert_same_outputs(_outputs(twice, Xs, y), _outputs(once, Xs, y), f"{name} refitted")
    _assert_same_outputs(
        _outputs(twice, Xs_new, y_new), _outputs(once, Xs_new, y_new), f"{name} refitted"
    )


def check_random_state(estimator):
    """The same ``random_state`` gives the same result; the global state is untouched.

    Two fits with ``random_state=0``, and two with fresh
    ``numpy.random.RandomState(0)`` instances, agree. No method reads or
    advances NumPy's global random state.
    """
    name = _name(estimator)
    Xs, y = _multiview_blobs()
    before = np.random.get_state()  # noqa: NPY002 (the global state is what is checked)
    fitted = _fit(_prepared(estimator), Xs, y)
    _outputs(fitted, Xs, y)
    after = np.random.get_state()  # noqa: NPY002
    assert before[0] == after[0] and np.array_equal(before[1], after[1]), (
        f"{name} used NumPy's global random state"
    )
    assert before[2:] == after[2:], f"{name} used NumPy's global random state"
    if "random_state" not in estimator.get_params() or get_tags(estimator).non_deterministic:
        return
    for label, seed in (
        ("random_state=0", lambda: 0),
        ("RandomState(0)", lambda: np.random.RandomState(0)),
    ):
        first = _outputs(_fit(_prepared(estimator, random_state=seed()), Xs, y), Xs, y)
        second = _outputs(_fit(_prepared(estimator, random_state=seed()), Xs, y), Xs, y)
        _assert_same_outputs(second, first, f"{name} with {label} twice")


def check_clusterer(estimator):
    """A multi-view clusterer's labels are consistent and find obvious clusters.

    ``labels_`` are integers in ``[0, n_clusters)`` (``-1`` allowed for
    noise), ``fit_predict`` returns the ``labels_`` of ``fit``, and the
    adjusted Rand index on the well separated check blobs exceeds 0.4 (the
    bar of scikit-learn's ``check_clustering``).
    """
    name = _name(estimator)
    if not isinstance(estimator, MultiViewClusterMixin):
        return
    Xs, y = _multiview_blobs()
    fitted = _fit(_prepared(estimator), Xs, None)
    labels = np.asarray(fitted.labels_)
    assert labels.shape == (len(y),) and labels.dtype.kind in "iu", f"{name}.labels_"
    assert labels.min() >= -1, f"{name}.labels_ has values below -1"
    n_clusters = fitted.get_params().get("n_clusters")
    if n_clusters is not None:
        assert labels.max() < n_clusters, f"{name}.labels_ has values >= n_clusters"
    score = adjusted_rand_score(y, labels)
    assert score > 0.4, f"{name} reaches an adjusted Rand index of {score:.3f} on easy blobs"
    if not get_tags(estimator).non_deterministic:
        predicted = _prepared(estimator).fit_predict(Xs)
        np.testing.assert_array_equal(
            predicted, labels, err_msg=f"{name}.fit_predict differs from fit().labels_"
        )


# --------------------------------------------------------------------------- input errors


def check_error_not_a_list_of_views(estimator):
    """A single 2-D array is refused with a ``TypeError``; no views with a ``ValueError``."""
    name = _name(estimator)
    Xs, y = _multiview_blobs()
    prepared = _prepared(estimator)
    _assert_raises(
        TypeError,
        r"list of views",
        _fit,
        prepared,
        np.hstack(Xs),
        y,
        what=f"{name}.fit(2-D array)",
    )
    _assert_raises(
        ValueError, r"empty|no view|0 views", _fit, prepared, [], y, what=f"{name}.fit([])"
    )


def check_error_n_samples_mismatch(estimator):
    """Views with different numbers of samples are refused, naming the view."""
    Xs, y = _multiview_blobs()
    Xs[1] = Xs[1][:-1]
    _assert_raises(
        ValueError,
        rf"view 1\b.*\b{_N_SAMPLES - 1} samples\b.*\b{_N_SAMPLES}\b",
        _fit,
        _prepared(estimator),
        Xs,
        y,
        what=f"{_name(estimator)}.fit with {_N_SAMPLES - 1} samples in view 1",
    )


def check_error_empty_view(estimator):
    """A view without features is refused, naming the view."""
    Xs, y = _multiview_blobs()
    Xs[1] = Xs[1][:, :0]
    _assert_raises(
        ValueError,
        r"view 1\b.*\b0 features\b",
        _fit,
        _prepared(estimator),
        Xs,
        y,
        what=f"{_name(estimator)}.fit with an empty view 1",
    )


def check_error_nan_inf(estimator):
    """NaN and infinity are refused at fit and after, naming the view.

    Skipped for NaN when the estimator's ``input_tags.allow_nan`` is set.
    """
    name = _name(estimator)
    allow_nan = get_tags(estimator).input_tags.allow_nan
    Xs, y = _multiview_blobs()
    fitted = _fit(_prepared(estimator), Xs, y)
    for value, pattern in ((np.nan, r"view 1\b.*NaN"), (np.inf, r"view 1\b.*inf")):
        if allow_nan and np.isnan(value):
            continue
        bad = [X.copy() for X in Xs]
        bad[1][3, 1] = value
        _assert_raises(
            ValueError, pattern, _fit, _prepared(estimator), bad, y, what=f"{name}.fit, {value}"
        )
        _assert_fitted_methods_raise(fitted, pattern, bad, y, case=value)


def check_error_views_differ_from_fit(estimator):
    """After ``fit``, other numbers of views or of features are refused.

    Every method that uses the fitted estimator refuses one view more, one
    view fewer, and a view with one feature more than at ``fit``, with a
    message that gives both numbers (and the view).
    """
    Xs, y = _multiview_blobs()
    fitted = _fit(_prepared(estimator), Xs, y)
    n_views = len(Xs)
    wider = [X.copy() for X in Xs]
    wider[1] = np.hstack([wider[1], wider[1][:, :1]])
    cases = (
        (Xs + [Xs[0]], rf"\b{n_views + 1} views\b.*\b{n_views}\b", "one view more"),
        (Xs[:-1], rf"\b{n_views - 1} views?\b.*\b{n_views}\b", "one view fewer"),
        (
            wider,
            rf"view 1\b.*\b{_N_FEATURES[1] + 1} features\b.*\b{_N_FEATURES[1]}\b",
            "one feature more in view 1",
        ),
    )
    for views, pattern, label in cases:
        _assert_fitted_methods_raise(fitted, pattern, views, y, case=label)


def check_error_too_few_samples(estimator):
    """Fewer samples than ``n_clusters`` are refused with a message that says so."""
    if "n_clusters" not in estimator.get_params(deep=False):
        return
    Xs, y = _multiview_blobs(n_samples=5)
    _assert_raises(
        ValueError,
        r"\b5 samples\b.*n_clusters=6\b",
        _fit,
        _prepared(estimator, n_clusters=6),
        Xs,
        y,
        what=f"{_name(estimator)}.fit with 5 samples and n_clusters=6",
    )


_CHECKS = (
    check_multiview_tags,
    check_init_params,
    check_clone,
    check_get_set_params,
    check_repr,
    check_fit_returns_self,
    check_not_fitted,
    check_fitted_attributes,
    check_fit_does_not_modify_input,
    check_pickle,
    check_input_containers,
    check_fit_idempotent,
    check_random_state,
    check_clusterer,
    check_error_not_a_list_of_views,
    check_error_n_samples_mismatch,
    check_error_empty_view,
    check_error_nan_inf,
    check_error_views_differ_from_fit,
    check_error_too_few_samples,
)


# --------------------------------------------------------------------------- runners


def yield_multiview_checks(estimator):
    """Yield ``(estimator, check)`` for every check of the multi-view contract.

    Each ``check`` is a function of one argument, the estimator, which it
    does not modify (it works on clones); it raises ``AssertionError`` on a
    breach of the contract and returns ``None`` otherwise. Its name is
    ``check.__name__``.

    Parameters
    ----------
    estimator : estimator instance
        A multi-view estimator, unfitted, configured as it should be tested.

    Yields
    ------
    estimator : estimator instance
        The estimator given.
    check : callable
        The check.

    See Also
    --------
    check_multiview_estimator : Runs them all.

    Examples
    --------
    >>> from mvlearn_ext.cluster import ConcatKMeans
    >>> from mvlearn_ext.utils.estimator_checks import yield_multiview_checks
    >>> checks = list(yield_multiview_checks(ConcatKMeans(n_clusters=2)))
    >>> len(checks) > 5
    True
    """
    for check in _CHECKS:
        yield estimator, check


def check_multiview_estimator(estimator):
    """Run the whole multi-view contract suite on an estimator.

    Parameters
    ----------
    estimator : estimator instance
        A multi-view estimator, unfitted, configured as it should be tested.

    Raises
    ------
    AssertionError
        At the first check that fails (by an assertion or any other
        exception, which is chained), naming it.

    See Also
    --------
    parametrize_with_multiview_checks : The checks as pytest cases.
    sklearn.utils.estimator_checks.check_estimator : scikit-learn's suite.

    Examples
    --------
    >>> from mvlearn_ext.cluster import ConcatKMeans
    >>> from mvlearn_ext.utils.estimator_checks import check_multiview_estimator
    >>> check_multiview_estimator(ConcatKMeans(n_init=2))
    """
    for est, check in yield_multiview_checks(estimator):
        try:
            check(est)
        except Exception as exc:
            raise AssertionError(
                f"{check.__name__} failed for {est!r}: {type(exc).__name__}: {exc}"
            ) from exc


def _estimator_id(estimator):
    return re.sub(r"\s+", "", repr(estimator))


def parametrize_with_multiview_checks(estimators, *, expected_failed_checks=None):
    """A ``pytest.mark.parametrize`` decorator over estimators and checks.

    The decorated test takes two arguments, ``estimator`` and ``check``, and
    should call ``check(estimator)``.

    Parameters
    ----------
    estimators : list of estimator instances
        The multi-view estimators to test.
    expected_failed_checks : callable, optional
        Called with each estimator, returns a dict mapping the names of the
        checks expected to fail to the reason; those are marked as strict
        ``xfail``.

    Returns
    -------
    decorator : pytest.mark.parametrize
        The parametrisation, with ids ``"<estimator repr>-<check name>"``.

    See Also
    --------
    check_multiview_estimator : Runs every check in one call.
    yield_multiview_checks : The checks themselves.

    Examples
    --------
    >>> from mvlearn_ext.cluster import ConcatKMeans
    >>> from mvlearn_ext.utils.estimator_checks import parametrize_with_multiview_checks
    >>> @parametrize_with_multiview_checks([ConcatKMeans(n_init=2)])
    ... def test_contract(estimator, check):
    ...     check(estimator)
    """
    import pytest  # only the test runner needs it

    params = []
    for estimator in estimators:
        failing = expected_failed_checks(estimator) if expected_failed_checks else {}
        for est, check in yield_multiview_checks(estimator):
            marks = ()
            if check.__name__ in failing:
                marks = pytest.mark.xfail(reason=failing[check.__name__], strict=True)
            params.append(
                pytest.param(est, check, marks=marks, id=f"{_estimator_id(est)}-{check.__name__}")
            )
    return pytest.mark.parametrize("estimator, check", params)
