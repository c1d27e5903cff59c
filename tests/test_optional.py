import subprocess
import sys

import pytest

from mvlearn_ext.utils._optional import import_optional, is_available


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
