"""One BLAS thread for these tests: the small MLPs run several times faster on a busy machine.

The tests of the torch estimator skip without torch (the NumPy tests always run),
unless CI requires torch (MVLEARN_EXT_REQUIRE_TORCH=1, as in ``tests/deep``).
"""

import importlib.util
import os

import pytest
from threadpoolctl import threadpool_limits

_HAS_TORCH = importlib.util.find_spec("torch") is not None
_REQUIRED = os.environ.get("MVLEARN_EXT_REQUIRE_TORCH", "0") == "1"
collect_ignore = [] if _HAS_TORCH or _REQUIRED else ["test_phenobrain.py"]


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1):
        yield
