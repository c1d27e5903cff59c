"""The torch-bridge tests skip as a whole without torch, unless CI requires it.

CI sets MVLEARN_EXT_REQUIRE_TORCH=1 so that a missing torch is an error, not
a silent skip of every deep test.
"""

import os

import pytest

if os.environ.get("MVLEARN_EXT_REQUIRE_TORCH", "0") == "1":
    import torch  # noqa: F401  (fails loudly)
else:
    pytest.importorskip("torch", reason="the torch extra is not installed")
