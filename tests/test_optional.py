import re
import subprocess
import sys
from pathlib import Path

import pytest

from mvlearn_ext.utils._optional import (
    OPTIONAL_DEPENDENCIES,
    import_optional,
    install_hint,
    installed_version,
    is_available,
)


def test_missing_optional_dependency_names_the_extra():
    with pytest.raises(ImportError, match="extra 'no_such_module_xyz'"):
        import_optional("no_such_module_xyz")


def test_deep_without_torch_raises_one_clear_error():
    """Simulate a missing torch: the error names the extra and the pinned build."""
    code = (
        "import sys, mvlearn_ext.utils\n"
        "sys.modules['torch'] = None  # what a missing torch looks like to import\n"
        "try:\n"
        "    import mvlearn_ext.deep\n"
        "except ImportError as e:\n"
        "    assert \"extra 'torch'\" in str(e) and 'torch==2.13.0' in str(e), str(e)\n"
        "else:\n"
        "    raise SystemExit('no ImportError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_root_import_is_light():
    code = (
        "import sys, mvlearn_ext\n"
        "heavy = {'torch', 'matplotlib', 'pandas', 'dask'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert is_available("numpy") and not is_available("no_such_module_xyz")


def test_table_matches_the_extras_of_pyproject():
    """Every package of every extra is in the table, with exactly the extras that bring it."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("pyproject.toml not present (installed package)")
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    brought = {}
    for extra, requirements in extras.items():
        for requirement in requirements:
            name = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower()
            brought.setdefault(name, []).append(extra)
    brought.pop("threadpoolctl")  # a dependency of scikit-learn: always installed
    # The site's build tools (the docs extra alone) are never imported by the package.
    for name in [n for n, its in brought.items() if its == ["docs"]]:
        brought.pop(name)
    by_distribution = {dep.distribution: dep for dep in OPTIONAL_DEPENDENCIES.values()}
    for name, its_extras in brought.items():
        assert name in by_distribution, f"{name} (extras {its_extras}) is not in the table"
        assert sorted(by_distribution[name].extras) == sorted(its_extras), name
    # Packages that come with an extra's package (ray with flwr[simulation],
    # distributed with dask[distributed]) list the extras of the package they come with.
    assert set(by_distribution) - set(brought) == {"ray", "distributed"}
    assert by_distribution["ray"].extras == by_distribution["flwr"].extras
    assert by_distribution["distributed"].extras == by_distribution["dask"].extras


def test_install_hint_and_message_name_the_narrowest_extra(monkeypatch):
    assert install_hint("moocore") == 'pip install "mvlearn_ext[moo]"'
    assert install_hint("pandas") == 'pip install "mvlearn_ext[dask]"'
    assert "torch==2.13.0" in install_hint("torch")
    monkeypatch.setitem(sys.modules, "moocore", None)
    assert not is_available("moocore")  # find_spec raises on a None entry: reported missing
    expected = r"extra 'moo'\): pip install \"mvlearn_ext\[moo\]\""
    with pytest.raises(ImportError, match=expected) as e:
        import_optional("moocore", feature="mvlearn_ext.moo")
    assert e.value.name == "moocore"


def test_installed_version_does_not_import():
    assert installed_version("no_such_module_xyz") is None
    assert installed_version("pytest") == pytest.__version__
    code = (
        "import sys\n"
        "from mvlearn_ext.utils._optional import installed_version\n"
        "before = set(sys.modules)\n"
        "installed_version('torch'), installed_version('moocore')\n"
        "assert not {'torch', 'moocore'} & (set(sys.modules) - before)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
