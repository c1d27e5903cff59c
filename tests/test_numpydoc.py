"""numpydoc's validation of every public class, function and estimator method.

The checks kept are those a reader trips over: an object without a docstring,
a parameter missing from or unknown to the docstring, parameters out of order,
and malformed sections. Every class and function of the API reference also
needs a See Also and an Examples section. numpydoc must be installed (the
``test`` extra has it).
"""

import importlib
import importlib.util
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")
from numpydoc.docscrape import NumpyDocString  # noqa: E402

import mvlearn_ext  # noqa: E402

#: numpydoc error codes enforced (numpydoc.validate.ERROR_MSGS has their texts).
CHECKS = {
    "GL02",  # closing quotes on their own line
    "GL03",  # double blank lines
    "GL08",  # no docstring
    "PR01",  # a parameter is not documented
    "PR02",  # an unknown parameter is documented
    "PR03",  # parameters in the wrong order
    "PR10",  # "param : type" needs spaces around the colon
    "SS02",  # the summary starts with a capital letter
}
#: Methods of estimators that are validated when a class defines them.
METHODS = (
    "fit",
    "partial_fit",
    "predict",
    "predict_proba",
    "predict_log_proba",
    "decision_function",
    "transform",
    "inverse_transform",
    "fit_predict",
    "fit_transform",
    "score",
    "score_samples",
    "sample",
)
#: Subpackages that need an optional dependency: skipped without it.
OPTIONAL = {"deep": "torch"}


def _public_packages():
    """Yield the public (sub)packages of mvlearn_ext, ``deep`` included."""
    top = sorted({*mvlearn_ext.__all__, "deep"} - {"__version__"})
    for name in top:
        yield name
        spec = importlib.util.find_spec(f"mvlearn_ext.{name}")
        for info in pkgutil.iter_modules(spec.submodule_search_locations or []):
            if info.ispkg and not info.name.startswith("_"):
                yield f"{name}.{info.name}"


def _public_objects(package):
    module = importlib.import_module(f"mvlearn_ext.{package}")
    for attr in getattr(module, "__all__", []):
        obj = getattr(module, attr)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        yield f"mvlearn_ext.{package}.{attr}"
        if inspect.isclass(obj):
            for method in METHODS:
                if method in vars(obj):
                    yield f"mvlearn_ext.{package}.{attr}.{method}"


def _cases():
    for package in _public_packages():
        top = package.split(".")[0]
        if top in OPTIONAL and importlib.util.find_spec(OPTIONAL[top]) is None:
            reason = f"mvlearn_ext.{top} needs {OPTIONAL[top]}"
            yield pytest.param(f"mvlearn_ext.{package}", marks=pytest.mark.skip(reason=reason))
            continue
        yield from _public_objects(package)


CASES = list(_cases())


def test_there_are_objects_to_validate():
    assert sum(isinstance(case, str) for case in CASES) > 100


def test_every_public_package_is_covered():
    """A new top-level subpackage is validated by default."""
    covered = {(case if isinstance(case, str) else case.values[0]).split(".")[1] for case in CASES}
    assert covered >= {*mvlearn_ext.__all__} - {"__version__"}


@pytest.mark.parametrize("name", CASES)
def test_docstring(name):
    report = numpydoc_validate.validate(name)
    errors = [f"{code}: {msg}" for code, msg in report["errors"] if code in CHECKS]
    assert not errors, "\n".join(errors)


# ---------------------------------------------------------------------------
# API pages: every public estimator and function has See Also and Examples

_API_DIR = Path(__file__).resolve().parents[1] / "docs" / "api"
#: Optional dependencies of the API modules that need more than the test extra.
_API_NEEDS = {
    "mvlearn_ext.deep": ("torch",),
    "mvlearn_ext.deep.rl_trl": ("torch", "trl"),
    "mvlearn_ext.deep.moo_trl": ("torch", "trl", "transformers"),
    "mvlearn_ext.deep.adapters_peft": ("torch", "peft"),
    "mvlearn_ext.deep.merging_peft": ("torch", "peft"),
}


def _api_reference():
    """``(module, name)`` of every class and function the API reference documents."""
    entries = []
    for page in sorted(_API_DIR.glob("*.rst")):
        module = template = None
        for line in page.read_text().splitlines():
            if match := re.match(r"\.\. currentmodule:: (\S+)", line):
                module = match.group(1)
            elif match := re.match(r"\s+:template: (\S+)", line):
                template = match.group(1)
            elif (match := re.match(r"^   ([A-Za-z_]\w*)\s*$", line)) and module:
                if template in ("class.rst", "function.rst"):
                    entries.append((module, match.group(1)))
    return entries


API_ENTRIES = _api_reference()


def test_the_api_reference_lists_every_public_estimator():
    from mvlearn_ext.utils.discovery import all_estimators

    listed = {name for _, name in API_ENTRIES}
    missing = sorted(name for name, _ in all_estimators() if name not in listed)
    assert len(API_ENTRIES) > 250
    assert not missing, f"estimators missing from docs/api: {missing}"


@pytest.mark.parametrize(("module", "name"), API_ENTRIES, ids=[".".join(e) for e in API_ENTRIES])
def test_api_page_has_see_also_and_examples(module, name):
    for dependency in _API_NEEDS.get(module, ()):
        pytest.importorskip(dependency)
    obj = getattr(importlib.import_module(module), name)
    doc = NumpyDocString(inspect.getdoc(obj) or "")
    lacking = [
        section
        for section, present in (
            ("See Also", bool(doc["See Also"])),
            ("Examples", any(">>>" in line for line in doc["Examples"])),
        )
        if not present
    ]
    assert not lacking, f"{module}.{name} has no {' and no '.join(lacking)} section"
