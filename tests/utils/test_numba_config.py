"""Every jitted function of the package goes through utils._numba.jit."""

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import numba
import pytest

import mvlearn_ext
from mvlearn_ext.utils import _numba

PACKAGE_DIR = Path(mvlearn_ext.__file__).parent
NUMBA_DECORATORS = {"jit", "njit", "vectorize", "guvectorize", "cfunc", "generated_jit", "stencil"}


def _package_modules():
    for info in pkgutil.walk_packages([str(PACKAGE_DIR)], prefix="mvlearn_ext."):
        if info.name.startswith("mvlearn_ext.deep"):
            continue  # the torch bridge; it has no Numba code
        yield info.name


def test_no_module_uses_numba_decorators_directly():
    offenders = []
    for path in PACKAGE_DIR.rglob("*.py"):
        if path == Path(_numba.__file__):
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        numba_names = set()
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("numba")
            ):
                numba_names |= {
                    a.asname or a.name for a in node.names if a.name in NUMBA_DECORATORS
                }
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id == "numba" and node.attr in NUMBA_DECORATORS:
                    offenders.append(f"{path}:{node.lineno} numba.{node.attr}")
            if isinstance(node, ast.Name) and node.id in numba_names:
                offenders.append(f"{path}:{node.lineno} {node.id} imported from numba")
    assert not offenders, "use mvlearn_ext.utils._numba.jit instead:\n" + "\n".join(offenders)


def test_every_dispatcher_in_the_package_is_registered():
    found = []
    for name in _package_modules():
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if isinstance(obj, numba.core.dispatcher.Dispatcher):
                found.append((name, attr, obj))
    assert found, "expected the package to define Numba kernels"
    registered = {id(d) for d in _numba.registered_kernels()}
    for name, attr, obj in found:
        assert getattr(obj, "__mvlearn_ext_jit__", False), f"{name}.{attr}"
        assert id(obj) in registered, f"{name}.{attr}"
        assert (
            obj.targetoptions.get("fastmath") in (False, None)
            or set(obj.targetoptions["fastmath"]) <= _numba.SAFE_FASTMATH
        )
        assert obj.targetoptions.get("nopython", True)


def test_bare_fastmath_is_refused():
    with pytest.raises(ValueError, match="fastmath=True is not allowed"):
        _numba.jit(lambda x: x, fastmath=True)
    with pytest.raises(ValueError, match="not allowed"):
        _numba.jit(lambda x: x, fastmath={"nnan"})


def test_inline_option_is_checked_and_passed_to_numba():
    with pytest.raises(ValueError, match="inline must be 'never' or 'always'"):
        _numba.jit(lambda x: x, inline="sometimes")

    def twice(x):
        return 2.0 * x

    helper = _numba.jit(twice, inline="always")
    assert helper.targetoptions["inline"] == "always"

    def caller(x):
        return helper(x) + 1.0

    assert _numba.jit(caller)(3.0) == 7.0


def _flags_in_subprocess(env_overrides):
    import os

    env = dict(os.environ, **env_overrides)
    code = (
        "from mvlearn_ext.utils import _numba, _simplex_qp;"
        "k = _simplex_qp._simplex_active_set_parallel;"
        "print(_numba.NUMBA_CACHE, _numba.NUMBA_PARALLEL,"
        " k.targetoptions.get('parallel'),"
        " type(k._cache).__name__ != 'NullCache')"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_environment_switches():
    assert _flags_in_subprocess(
        {"MVLEARN_EXT_NUMBA_CACHE": "0", "MVLEARN_EXT_NUMBA_PARALLEL": "0"}
    ) == ["False", "False", "False", "False"]
    assert _flags_in_subprocess(
        {"MVLEARN_EXT_NUMBA_CACHE": "1", "MVLEARN_EXT_NUMBA_PARALLEL": "yes"}
    ) == ["True", "True", "True", "True"]


def test_bad_environment_value_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("MVLEARN_EXT_NUMBA_CACHE", "maybe")
    with pytest.raises(ValueError, match="MVLEARN_EXT_NUMBA_CACHE='maybe'"):
        _numba._env_flag("MVLEARN_EXT_NUMBA_CACHE", True)
