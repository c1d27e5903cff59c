"""all_estimators walks the public subpackages and flags multi-view estimators."""

import subprocess
import sys
import textwrap

import pytest

from mvlearn_ext.cluster import ConcatKMeans
from mvlearn_ext.compose import MultiViewAdapter, ViewSplitter
from mvlearn_ext.utils import discovery
from mvlearn_ext.utils.discovery import all_estimators


def test_finds_the_public_estimators_once_each_sorted():
    found = all_estimators()
    names = [name for name, _ in found]
    assert names == sorted(names) and len(names) == len(set(found))
    assert {("ConcatKMeans", ConcatKMeans), ("MultiViewAdapter", MultiViewAdapter)} <= set(found)
    assert ("ViewSplitter", ViewSplitter) in found


def test_only_public_mvlearn_ext_classes():
    for name, cls in all_estimators():
        assert not name.startswith("_")
        assert cls.__module__.startswith("mvlearn_ext.")
        assert not any(part.startswith("_") for part in name.split("."))


def test_multiview_flag():
    multiview = dict(all_estimators(multiview=True))
    single = dict(all_estimators(multiview=False))
    assert "ConcatKMeans" in multiview and "ConcatKMeans" not in single
    assert {"MultiViewAdapter", "ViewSplitter"} <= set(single) and not set(single) & set(multiview)
    assert sorted({**multiview, **single}) == [name for name, _ in all_estimators()]


def test_type_filter():
    assert ("ConcatKMeans", ConcatKMeans) in all_estimators(type_filter="cluster")
    transformers = dict(all_estimators(type_filter="transformer"))
    assert "ViewSplitter" in transformers and "ConcatKMeans" not in transformers
    union = dict(all_estimators(type_filter=["cluster", "transformer"]))
    assert {"ConcatKMeans", "ViewSplitter"} <= set(union)
    # The adapter takes the type of what it wraps, so it is in none.
    assert "MultiViewAdapter" not in union
    assert all(name != "ConcatKMeans" for name, _ in all_estimators(type_filter="classifier"))


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"type_filter": "clusterer"}, "type_filter must be None, one of"),
        ({"type_filter": []}, "type_filter must be None, one of"),
        ({"multiview": "yes"}, "multiview must be None, True or False"),
    ],
)
def test_invalid_arguments(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        all_estimators(**kwargs)


def test_walk_imports_only_public_modules(monkeypatch):
    imported = []
    real_import = discovery.importlib.import_module

    def recording_import(name, *args, **kwargs):
        imported.append(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(discovery.importlib, "import_module", recording_import)
    all_estimators()
    assert "mvlearn_ext.cluster" in imported and "mvlearn_ext.utils.discovery" in imported
    private = [name for name in imported if any(p.startswith("_") for p in name.split("."))]
    assert not private, f"the walk imported private modules {private}"


def test_torch_is_never_imported_when_it_is_missing():
    # Pretend torch is not installed: the deep subpackage must be skipped
    # without importing torch (find_spec locates, it does not import).
    code = textwrap.dedent(
        """
        import sys
        from mvlearn_ext.utils import discovery
        discovery._dependency_available = lambda name: False
        names = [name for name, _ in discovery.all_estimators()]
        assert "ConcatKMeans" in names
        assert "torch" not in sys.modules, "torch was imported"
        assert "mvlearn_ext.deep" not in sys.modules, "mvlearn_ext.deep was imported"
        print("ok")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_llm_bridges_are_skipped_without_the_llm_extra():
    # torch installed, TRL/PEFT/transformers not (a torch-only install): the
    # walk covers mvlearn_ext.deep but not its bridges, instead of failing.
    pytest.importorskip("torch")
    code = textwrap.dedent(
        """
        import sys
        from mvlearn_ext.utils import discovery
        llm = {"trl", "peft", "transformers"}
        discovery._dependency_available = lambda name: name not in llm
        names = [name for name, _ in discovery.all_estimators()]
        assert "GSLVMOGPRegressor" in names and "ConcatKMeans" in names
        bridges = sorted(m for m in sys.modules if m.endswith(("_trl", "_peft")))
        assert not bridges, bridges
        print("ok")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_core_estimators_only_never_import_torch():
    # torch may well be installed here: include_optional=False must not walk
    # mvlearn_ext.deep (importing torch takes seconds) and must still find the core.
    code = textwrap.dedent(
        """
        import sys
        from mvlearn_ext.utils.discovery import all_estimators
        names = [name for name, _ in all_estimators(include_optional=False)]
        assert "ConcatKMeans" in names and "HAGMVC" in names
        assert "torch" not in sys.modules, "torch was imported"
        assert "mvlearn_ext.deep" not in sys.modules, "mvlearn_ext.deep was imported"
        print(len(names))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    core = {name for name, _ in all_estimators(include_optional=False)}
    assert len(core) == int(result.stdout)
    assert core <= {name for name, _ in all_estimators()}
    with pytest.raises(ValueError, match="include_optional must be True or False"):
        all_estimators(include_optional="no")


def test_dependency_probe_does_not_import(monkeypatch):
    monkeypatch.delitem(sys.modules, "json", raising=False)
    assert discovery._dependency_available("json")
    assert "json" not in sys.modules
    assert not discovery._dependency_available("surely_not_an_installed_package_name")


def test_filter_keeps_concrete_public_classes_defined_in_the_package(monkeypatch):
    import abc
    import types

    from sklearn.base import BaseEstimator
    from sklearn.cluster import KMeans

    module = types.ModuleType("mvlearn_ext.fake")

    class Concrete(BaseEstimator):
        pass

    class Abstract(BaseEstimator, metaclass=abc.ABCMeta):
        @abc.abstractmethod
        def fit(self, X, y=None): ...

    class _Private(BaseEstimator):
        pass

    class NotAnEstimator:
        pass

    for cls in (Concrete, Abstract, _Private, NotAnEstimator):
        cls.__module__ = "mvlearn_ext.fake"
        setattr(module, cls.__name__, cls)
    module.KMeans = KMeans  # imported from elsewhere: not ours
    monkeypatch.setattr(discovery, "_public_modules", lambda package, *args: iter([module]))
    assert all_estimators() == [("Concrete", Concrete)]
