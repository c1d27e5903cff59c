"""The tests of the torch estimator skip without torch (the NumPy tests always run),
unless CI requires torch (MVLEARN_EXT_REQUIRE_TORCH=1, as in ``tests/deep``)."""

import importlib.util
import os

_HAS_TORCH = importlib.util.find_spec("torch") is not None
_REQUIRED = os.environ.get("MVLEARN_EXT_REQUIRE_TORCH", "0") == "1"
collect_ignore = [] if _HAS_TORCH or _REQUIRED else ["test_aes.py"]
