"""Every public function and method refuses an unusable array argument by name.

A function's docstring example gives one valid call of it (a class's example, one
call of each of the public methods the class defines). Each array argument
of that call is then corrupted in turn (one NaN, one infinity, complex values,
strings of digits, no entries, an extra axis, one column of a matrix, every
value times 1e300) and the call replayed:

* NaN, infinity, complex values and strings must raise a ``ValueError`` or
  ``TypeError`` (NaN only where it means "missing" to the function, listed in
  ``ACCEPTS`` with the reason);
* the other corruptions must raise a ``ValueError`` or ``TypeError``, or return
  a result whose numbers are all finite.

Any other exception (an ``IndexError`` from a kernel, an ``OverflowError``),
a hang or a NaN in the result fails.
"""

from __future__ import annotations

import copy
import doctest
import importlib
import importlib.util
import inspect
import pkgutil
import signal
import warnings

import numpy as np
import pytest

import mvlearn_ext

#: Every family (``deep`` where torch is installed).
FAMILIES = sorted(
    m.name
    for m in pkgutil.iter_modules(mvlearn_ext.__path__)
    if not m.name.startswith("_") and (m.name != "deep" or importlib.util.find_spec("torch"))
)

#: (function, argument) -> corruptions it accepts, and why.
ACCEPTS = {
    ("rl.group_advantages", 0): {"nan"},  # NaN marks a missing reward
    ("rl.multi_reward_advantages", 0): {"nan"},  # NaN marks a missing reward
    ("rl.std_filter", 0): {"nan"},  # NaN marks a missing reward
    ("rl.gaussian_reward", 0): {"nan"},  # a NaN prediction is an unparsable answer: 0
    ("rl.accuracy_reward", 0): {"nan"},  # a NaN prediction is an unparsable answer: 0
    ("incomplete.mask_from_nan", 0): {"nan", "[0]-nan"},  # NaN marks a missing row
    ("multitask.robust_multitask_regression", 2): {"str"},  # task labels: any sortable value
    ("deep.as_tensor", 0): {"nan", "inf"},  # a conversion: the values are the caller's
    ("moo.crowding_distance", 0): {"huge"},  # scale-free; the boundary points get inf
    # labels are categories: any hashable value names a cluster
    **{(f"metrics.{f}", i): {"str", "complex"} for f in (
        "clustering_accuracy", "clustering_report", "contingency_table",
        "normalized_mutual_info", "purity") for i in (0, 1)},
}  # fmt: skip

#: (Class.method, argument) -> corruptions it accepts, and why.
METHOD_ACCEPTS = {
    # class labels and task labels are categories: any hashable value names one
    **{(f"{c}.fit", 1): {"str"} for c in (
        "brain.PhenoBrainClassifier", "deep.PhenoBrainClassifier", "deep.AESClassifier",
        "longtail.AESClassifier")},
    ("multitask.RobustMultiTaskRegressor.fit", "tasks"): {"str"},
    ("multitask.WithinTaskKFold.split", "groups"): {"str", "complex"},
    # a splitter reads the number of rows of X, not its values (as scikit-learn's do)
    ("multitask.WithinTaskKFold.split", 0): {"nan", "inf", "str", "complex"},
    # the splitter passes the values on; the multi-view estimator after it checks them
    ("compose.ViewSplitter.fit", 0): {"nan", "inf", "str"},
    ("compose.ViewSplitter.transform", 0): {"nan", "inf", "str"},
    ("gaussian_process.LVMOGPRegressor.fit", 1): {"nan"},  # NaN marks a missing output
}  # fmt: skip

#: Functions whose examples call them through an object, not by name.
NO_DIRECT_CALL = {
    "studies.fit_loglog_slope",
    "studies.format_summary",
    "studies.plot_summary",
    "studies.setting_key",
    "studies.summarize",
    "studies.to_frame",
}

MUST_RAISE = {"nan", "inf", "complex", "str"}


def _public_functions():
    out = {}
    for family in FAMILIES:
        module = importlib.import_module(f"mvlearn_ext.{family}")
        for name in getattr(module, "__all__", []):
            if inspect.isfunction(getattr(module, name, None)):
                out[f"{family}.{name}"] = (module, name)
    return out


FUNCTIONS = _public_functions()


class _Timeout(Exception):
    pass


def _on_alarm(*_):
    raise _Timeout


def _first_call(module, name):
    """The arguments of the first call of ``module.name`` in its docstring example."""
    func = getattr(module, name)
    calls = []

    def recorder(*args, **kwargs):
        calls.append((args, kwargs))
        return func(*args, **kwargs)

    test = doctest.DocTestParser().get_doctest(func.__doc__ or "", {}, name, None, 0)
    namespace = {}
    setattr(module, name, recorder)
    try:
        for example in test.examples:
            if name in namespace:
                namespace[name] = recorder
            try:
                exec(compile(example.source, name, "exec"), namespace)
            except Exception:  # noqa: BLE001 - an example's own output is not under test
                pass
            if calls:
                break
    finally:
        setattr(module, name, func)
    return calls[0] if calls else None


def _corruptions(value):
    A = np.asarray(value)
    if A.dtype.kind not in "fiu" or A.size < 2:
        return []
    F = A.astype(np.float64)
    nan, inf = F.copy(), F.copy()
    nan.flat[1], inf.flat[1] = np.nan, np.inf
    out = [
        ("nan", nan),
        ("inf", inf),
        ("huge", F * 1e300),
        ("empty", A[:0]),
        ("str", A.astype(str)),
        ("complex", F + 1j),
        ("extra-dim", A[..., None]),
    ]
    if A.ndim == 2:
        out.append(("1d", A[:, 0]))
    return out


def _slots(args, kwargs):
    for index, value in [*enumerate(args), *kwargs.items()]:
        if (
            isinstance(value, (list, tuple))
            and value
            and all(isinstance(v, np.ndarray) for v in value)
        ):
            for label, bad in _corruptions(value[0]):
                yield index, f"[0]-{label}", [bad, *value[1:]]
        elif isinstance(value, (np.ndarray, list)):
            try:
                cases = _corruptions(value)
            except (TypeError, ValueError, RuntimeError):  # ragged lists, tensors with grad
                cases = []
            for label, bad in cases:
                yield index, label, bad


def _finite(result):
    parts = result if isinstance(result, (tuple, list)) else (result,)
    for part in parts:
        try:
            arr = np.asarray(part)
        except (TypeError, ValueError):
            continue
        if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
            return False
    return True


def test_every_public_function_has_an_example_that_calls_it():
    missing = [k for k, (m, n) in FUNCTIONS.items() if ">>>" not in (getattr(m, n).__doc__ or "")]
    assert not missing


def _replay(call, args, kwargs, accepts):
    """The failures of ``call`` on every corruption of its array arguments."""
    failures = []
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        for index, label, bad in _slots(args, kwargs):
            bad_args, bad_kwargs = list(args), dict(kwargs)
            if isinstance(index, int):
                bad_args[index] = bad
            else:
                bad_kwargs[index] = bad
            accepted = accepts.get(index, set())
            where = f"argument {index!r}, {label}"
            try:
                signal.alarm(30)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = call(*bad_args, **bad_kwargs)
            except (ValueError, TypeError):
                continue
            except _Timeout:
                failures.append(f"{where}: no answer in 30 s")
                continue
            except Exception as exc:  # noqa: BLE001 - the failure under test
                failures.append(f"{where}: {type(exc).__name__}: {exc}")
                continue
            finally:
                signal.alarm(0)
            if label.split("-")[-1] in MUST_RAISE and label not in accepted:
                failures.append(f"{where}: accepted")
            elif not _finite(result) and label not in accepted:
                failures.append(f"{where}: a result that is not finite")
    finally:
        signal.signal(signal.SIGALRM, previous)
    return failures


@pytest.mark.parametrize("key", sorted(FUNCTIONS))
def test_unusable_array_arguments_are_refused(key):
    module, name = FUNCTIONS[key]
    call = _first_call(module, name)
    if call is None:
        assert key in NO_DIRECT_CALL, f"{key}: its example never calls it"
        return
    args, kwargs = call
    accepts = {i: v for (k, i), v in ACCEPTS.items() if k == key}
    failures = _replay(getattr(module, name), args, kwargs, accepts)
    assert not failures, f"{key}:\n" + "\n".join(failures)


def _public_classes():
    out = {}
    for family in FAMILIES:
        module = importlib.import_module(f"mvlearn_ext.{family}")
        for name in getattr(module, "__all__", []):
            cls = getattr(module, name, None)
            # a mixin hands the arrays to its subclass's methods, which check them
            mixin = name.endswith("Mixin")
            if inspect.isclass(cls) and ">>>" in (cls.__doc__ or "") and not mixin:
                out[f"{family}.{name}"] = cls
    return out


CLASSES = _public_classes()


def _method_calls(cls):
    """``{method: (instance before the call, args, kwargs)}`` of the first call of each
    public method ``cls`` defines, in its docstring example."""
    calls = {}
    methods = {
        name: member
        for name, member in vars(cls).items()
        if not name.startswith("_") and inspect.isfunction(member)
    }

    def recorder(name, method):
        def record(self, *args, **kwargs):
            if name not in calls:
                try:
                    calls[name] = (copy.deepcopy(self), args, kwargs)
                except Exception:  # noqa: BLE001 - an instance that cannot be copied
                    calls[name] = None
            return method(self, *args, **kwargs)

        return record

    test = doctest.DocTestParser().get_doctest(cls.__doc__, {}, cls.__name__, None, 0)
    namespace = {}
    for name, method in methods.items():
        setattr(cls, name, recorder(name, method))
    try:
        for example in test.examples:
            try:
                exec(compile(example.source, cls.__name__, "exec"), namespace)
            except Exception:  # noqa: BLE001 - an example's own output is not under test
                pass
    finally:
        for name, method in methods.items():
            setattr(cls, name, method)
    return {name: call for name, call in calls.items() if call is not None}


@pytest.mark.parametrize("key", sorted(CLASSES))
def test_methods_refuse_unusable_array_arguments(key):
    failures = []
    for method, (instance, args, kwargs) in _method_calls(CLASSES[key]).items():
        accepts = {i: v for (k, i), v in METHOD_ACCEPTS.items() if k == f"{key}.{method}"}

        def call(*bad_args, _instance=instance, _method=method, **bad_kwargs):
            return getattr(copy.deepcopy(_instance), _method)(*bad_args, **bad_kwargs)

        failures += [f"{method}: {f}" for f in _replay(call, args, kwargs, accepts)]
    assert not failures, f"{key}:\n" + "\n".join(failures)
