"""One vocabulary over every public estimator and public function, found by discovery.

The names are those of ``docs/design.md`` ("Vocabulary"): threads ``n_jobs``
(with one constraint, default ``None``), iterations ``max_iter`` beside
``tol``, torch passes ``n_epochs``, step sizes ``learning_rate[_<role>]``,
seeds ``random_state``, training losses ``loss_curve_``, counts ``n_*``, MLP
widths ``hidden_layer_sizes``; no parameter defaults to a "deprecated"
placeholder.
"""

import importlib
import inspect
import re

import pytest

from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT
from mvlearn_ext.utils.discovery import _public_modules, all_estimators

#: name -> {rule: why it still breaks the rule}; strict xfails, so a fix shows.
KNOWN_VIOLATIONS = {}

#: Parameter names that the vocabulary replaces, with the name to use.
FORBIDDEN = {
    r"n_threads|num_threads": "n_jobs",
    r"num_\w+": "n_*",
    r"seed": "random_state",
    r"lr|lr_\w+|\w+_lr": "learning_rate or learning_rate_<role>",
    r"max_sweeps|n_iter|n_iters|max_iters": "max_iter (a solver) or n_epochs (torch passes)",
    r"epochs": "n_epochs",
    r"\w+_(max_iter|n_epochs|learning_rate)|(?!max_)\w+_iter|(?!n_)\w+_epochs": (
        "max_iter_<role>, n_epochs_<role> or learning_rate_<role>"
    ),
    r"hidden|\w+_hidden|hidden_sizes|hidden_dims": "hidden_layer_sizes",
    r"k_m|sn_ub": "a descriptive n_* or named bound",
    r"standardize": "scaling",
    r"view_weighting": "view_weights",
}

#: Attribute names that the vocabulary replaces.
FORBIDDEN_ATTRIBUTES = {r"loss_history_": "loss_curve_"}


def _public_functions():
    found = {}
    for module in _public_modules(importlib.import_module("mvlearn_ext")):
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if (
                inspect.isfunction(obj)
                and obj.__module__.startswith("mvlearn_ext")
                and not name.startswith("_")
            ):
                found.setdefault(name, obj)
    return sorted(found.items())


ESTIMATORS = all_estimators()
FUNCTIONS = _public_functions()


def _params(objects, rules):
    for name, obj in objects:
        for rule in rules:
            reason = KNOWN_VIOLATIONS.get(name, {}).get(rule)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(obj, rule, id=f"{name}-{rule}", marks=marks)


def _signature(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    return {
        p.name: p
        for p in inspect.signature(target).parameters.values()
        if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }


def check_names(obj):
    bad = []
    for name in _signature(obj):
        for pattern, use in FORBIDDEN.items():
            if re.fullmatch(pattern, name):
                bad.append(f"{name} (use {use})")
    return bad


def check_attributes(obj):
    source = inspect.getsource(obj)
    return [
        f"{match} (use {use})"
        for pattern, use in FORBIDDEN_ATTRIBUTES.items()
        for match in re.findall(rf"\b{pattern}", source)
    ]


def check_n_jobs(obj):
    params = _signature(obj)
    if "n_jobs" not in params:
        return []
    bad = []
    default = params["n_jobs"].default
    if default is not params["n_jobs"].empty and default is not None:
        bad.append(f"n_jobs defaults to {default!r}, not None")
    if inspect.isclass(obj):
        declared = getattr(obj, "_parameter_constraints", {}).get("n_jobs")
        if declared is not N_JOBS_CONSTRAINT and [str(c) for c in declared or ()] != [
            str(c) for c in N_JOBS_CONSTRAINT
        ]:
            shown = [str(c) for c in declared or ()]
            bad.append(f"n_jobs is constrained by {shown}, not N_JOBS_CONSTRAINT")
    return bad


def check_tol_has_max_iter(obj):
    params = _signature(obj)
    return ["tol without max_iter"] if "tol" in params and "max_iter" not in params else []


def check_no_deprecated_default(obj):
    return [
        f"{name} defaults to 'deprecated'"
        for name, p in _signature(obj).items()
        if isinstance(p.default, str) and p.default == "deprecated"
    ]


RULES = {
    "names": check_names,
    "attributes": check_attributes,
    "n_jobs": check_n_jobs,
    "tol_max_iter": check_tol_has_max_iter,
    "no_deprecated_default": check_no_deprecated_default,
}


def test_discovery_finds_estimators_and_functions():
    names = {name for name, _ in FUNCTIONS}
    assert {"anchor_graph", "kneighbors_anchors", "project_simplex", "effective_n_jobs"} <= names
    assert len(ESTIMATORS) > 20


@pytest.mark.parametrize("obj, rule", list(_params(ESTIMATORS, RULES)))
def test_estimator_vocabulary(obj, rule):
    assert RULES[rule](obj) == [], obj.__name__


@pytest.mark.parametrize(
    "obj, rule", list(_params(FUNCTIONS, ["names", "n_jobs", "no_deprecated_default"]))
)
def test_function_vocabulary(obj, rule):
    assert RULES[rule](obj) == [], obj.__name__


def test_the_rules_catch_what_they_forbid():
    """Each rule flags a made-up offender (so that no rule passes vacuously)."""

    class Offender:
        _parameter_constraints = {"n_jobs": [None]}

        def __init__(
            self,
            n_threads=1,
            seed=0,
            lr=0.1,
            num_blocks=2,
            hidden=(8,),
            inner_max_iter=5,
            warmup_epochs=2,
            tol=1e-3,
            n_jobs=-1,
            scaling="deprecated",
        ):
            self.loss_history_ = []

    assert len(check_names(Offender)) == 7
    assert check_attributes(Offender) == ["loss_history_ (use loss_curve_)"]
    assert len(check_n_jobs(Offender)) == 2
    assert check_tol_has_max_iter(Offender) == ["tol without max_iter"]
    assert check_no_deprecated_default(Offender) == ["scaling defaults to 'deprecated'"]
