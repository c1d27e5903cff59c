"""The LLM-bridge tests skip as a whole without the llm extra, unless CI requires it.

CI sets MVLEARN_EXT_REQUIRE_LLM=1 so that a missing transformers, TRL, PEFT
or mergekit is an error, not a silent skip. Nothing here reaches a hub:
HF_HUB_OFFLINE=1 is set before transformers is imported.
"""

import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

_PACKAGES = ("torch", "transformers", "trl", "peft", "mergekit")

if os.environ.get("MVLEARN_EXT_REQUIRE_LLM", "0") == "1":
    import importlib

    for _name in _PACKAGES:
        importlib.import_module(_name)  # fails loudly
else:
    for _name in _PACKAGES:
        pytest.importorskip(_name, reason="the llm extra is not installed")
