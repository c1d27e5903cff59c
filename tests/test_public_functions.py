"""Every public function refuses an unusable array argument by name, or gives a finite result.

A function's docstring example gives one valid call of it. Each array argument
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
    # labels are categories: any hashable value names a cluster
    **{(f"metrics.{f}", i): {"str", "complex"} for f in (
        "clustering_accuracy", "clustering_report", "contingency_table",
        "normalized_mutual_info", "purity") for i in (0, 1)},
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
            except (TypeError, ValueError):  # ragged lists of lists: not a numeric array
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


@pytest.mark.parametrize("key", sorted(FUNCTIONS))
def test_unusable_array_arguments_are_refused(key):
    module, name = FUNCTIONS[key]
    call = _first_call(module, name)
    if call is None:
        assert key in NO_DIRECT_CALL, f"{key}: its example never calls it"
        return
    func = getattr(module, name)
    args, kwargs = call
    failures = []
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        for index, label, bad in _slots(args, kwargs):
            bad_args, bad_kwargs = list(args), dict(kwargs)
            if isinstance(index, int):
                bad_args[index] = bad
            else:
                bad_kwargs[index] = bad
            accepted = ACCEPTS.get((key, index), set())
            where = f"argument {index!r}, {label}"
            try:
                signal.alarm(30)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = func(*bad_args, **bad_kwargs)
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
    assert not failures, f"{key}:\n" + "\n".join(failures)
