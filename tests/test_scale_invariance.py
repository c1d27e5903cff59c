"""Results do not depend on the unit of the data.

Every discovered clusterer finds the same partition when every view is
multiplied by ``c``, and every discovered regressor fitted on ``X * c``
predicts on ``X_test * c`` what it predicts at ``c = 1``, for ``c`` from
1e-150 to 1e150: a relative test of degeneracy, never an absolute floor.
The estimators fitted on a library of tasks predict, with ``x`` and ``y`` of
every task, context and query in new units, the same values in the unit of
``y``.
"""

import importlib.util
import inspect
import pathlib
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from mvlearn_ext.utils.discovery import all_estimators

_spec = importlib.util.spec_from_file_location(
    "_bad_input_cases", pathlib.Path(__file__).with_name("test_bad_input.py")
)
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

SCALES = (1e-150, 1e-16, 1e16, 1e150)

#: name -> (scales, why it still fails there); strict xfails, so a fix shows.
KNOWN_FAILURES: dict = {}


def _params(kind):
    for name, cls in all_estimators(type_filter=kind):
        if name not in cases.SETUPS:
            continue
        for scale in SCALES:
            scales, reason = KNOWN_FAILURES.get(name, ((), None))
            reason = reason if scale in scales else None
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(name, cls, scale, id=f"{name}-{scale:g}", marks=marks)


def _fit(adapter, est, scale):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        adapter.fit(est, corrupt=None if scale == 1.0 else (lambda A: A * scale))
    return est


class _ScaledViews(cases.MultiViewAdapterCase):
    """Every view scaled, not only the first."""

    def fit(self, est, corrupt=None, rows=None):
        Xs = list(self.Xs) if corrupt is None else [corrupt(X) for X in self.Xs]
        est.fit(Xs)


_REFERENCES = {}


def _seeded(estimator):
    """The estimator with a fixed seed: both fits must draw the same folds and starts."""
    if estimator.get_params().get("random_state", 0) is None:
        estimator.set_params(random_state=0)
    return estimator


def _reference(key, make):
    if key not in _REFERENCES:
        _REFERENCES[key] = make()
    return _REFERENCES[key]


@pytest.mark.parametrize("name, cls, scale", list(_params("cluster")))
def test_clusterers_are_invariant_to_the_unit(name, cls, scale):
    estimator = _seeded(cases.SETUPS[name][0](cls))
    adapter = _ScaledViews()
    ref = _reference(name, lambda: _fit(adapter, clone(estimator), 1.0).labels_)
    labels = _fit(adapter, clone(estimator), scale).labels_
    assert cases.same_partition(labels, ref)


def _predict(adapter, est, scale):
    if isinstance(adapter, cases.MultiTaskCase):
        return est.predict(adapter.X * scale, tasks=adapter.tasks)
    if isinstance(adapter, cases.FederatedCase):
        return np.concatenate([est.predict(X * scale, i) for i, X in enumerate(adapter.Xs)])
    return est.predict(adapter.X * scale)


@pytest.mark.parametrize("name, cls, scale", list(_params("regressor")))
def test_regressors_are_invariant_to_the_unit(name, cls, scale):
    estimator, adapter = _seeded(cases.SETUPS[name][0](cls)), cases.SETUPS[name][1]()
    if isinstance(adapter, cases.FederatedCase):
        # every agent's X, not only the first
        adapter.fit = lambda est, corrupt=None, rows=None: est.fit(
            [X if corrupt is None else corrupt(X) for X in adapter.Xs], adapter.ys
        )
    ref = _reference(name, lambda: _predict(adapter, _fit(adapter, clone(estimator), 1.0), 1.0))
    pred = _predict(adapter, _fit(adapter, clone(estimator), scale), scale)
    assert np.all(np.isfinite(pred))
    # Predictions depend on X: a constant prediction is not the fit at c = 1.
    np.testing.assert_allclose(pred, ref, rtol=1e-6, atol=1e-6 * np.std(ref))


@pytest.mark.parametrize("name", ["SMVSC", "FPMVSCAG", "EOMSCCA"])
@pytest.mark.parametrize("scale", [1e-150, 1e-16])
def test_block_paths_are_invariant_to_the_unit(name, scale):
    """The block paths standardise from merged moments: the same relative rule."""
    from mvlearn_ext import cluster

    estimator = cases.SETUPS[name][0](getattr(cluster, name)).set_params(block_size=7)
    adapter = _ScaledViews()
    ref = _reference(f"{name}-blocks", lambda: _fit(adapter, clone(estimator), 1.0).labels_)
    labels = _fit(adapter, clone(estimator), scale).labels_
    assert cases.same_partition(labels, ref)


def _task_library_params():
    """The estimators fitted on a library of tasks (not tagged as regressors)."""
    for name, cls in all_estimators():
        setup = cases.SETUPS.get(name)
        if setup is None or not isinstance(setup[1](), cases.TaskLibraryCase):
            continue
        for scale in SCALES:
            yield pytest.param(name, cls, scale, id=f"{name}-{scale:g}")


def _library_predict(est, case, x_unit, y_unit):
    """Predictions, in the unit of y, for a target task outside the library."""
    from mvlearn_ext.extrapolate import compose_primitives

    xq = np.linspace(-1.0, 1.0, 7) * x_unit
    if case.compositional:
        if len(inspect.signature(est.predict).parameters) == 2:  # told the target's code
            return est.predict(xq, code=(1, 0))
        xc = np.linspace(-0.8, 0.8, 6)
        return est.predict(xq, xc * x_unit, compose_primitives((1, 0), xc) * y_unit)
    xc = np.array([-0.9, -0.3, 0.2, 0.7])
    return est.predict(xq, xc * x_unit, (1.1 * xc**2 + 0.9 * xc) * y_unit)


def _library_fit_predict(estimator, x_unit=1.0, y_unit=1.0):
    case = cases.SETUPS[type(estimator).__name__][1]()
    tx = [x * x_unit for x in case.tx]
    ty = [y * y_unit for y in case.ty]
    est = clone(estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case.compositional:
            est.fit(case.codes, tx, ty)
        else:
            est.fit(tx, ty)
    return _library_predict(est, case, x_unit, y_unit)


@pytest.mark.parametrize("name, cls, scale", list(_task_library_params()))
def test_task_extrapolators_are_invariant_to_the_units(name, cls, scale):
    """Every input (tasks, context, query points) in new units: predictions in the unit of y."""
    estimator = _seeded(cases.SETUPS[name][0](cls))
    ref = _reference(f"{name}-library", lambda: _library_fit_predict(estimator))
    pred = _library_fit_predict(estimator, scale, scale)
    assert np.all(np.isfinite(pred))
    np.testing.assert_allclose(pred / scale, ref, rtol=1e-6, atol=1e-6 * np.std(ref))


@pytest.mark.parametrize("name, cls, scale", list(_task_library_params()))
def test_task_extrapolators_are_invariant_to_the_unit_of_x(name, cls, scale):
    """Only x in a new unit (the task parameters change unit, y does not)."""
    estimator = _seeded(cases.SETUPS[name][0](cls))
    if not cases.SETUPS[name][1]().compositional and scale == 1e-150:
        # the quadratic coefficient becomes 1e300 per unit of x**2: its square overflows
        with pytest.raises(ValueError, match="parameters estimated from .* too large"):
            _library_fit_predict(estimator, x_unit=scale)
        return
    ref = _reference(f"{name}-library", lambda: _library_fit_predict(estimator))
    pred = _library_fit_predict(estimator, x_unit=scale)
    assert np.all(np.isfinite(pred))
    np.testing.assert_allclose(pred, ref, rtol=1e-6, atol=1e-6 * np.std(ref))
