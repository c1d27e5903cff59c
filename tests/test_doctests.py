"""Run the examples in the docstrings of every public module."""

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import mvlearn_ext

# The examples of the LLM bridges run in tests/llm (with the llm extra), those of
# the torch Gaussian processes in tests/deep/gaussian_process.
SKIP_PREFIXES = (
    "mvlearn_ext.datasets._build_",
    "mvlearn_ext.deep._llm",
    "mvlearn_ext.deep.adapters_peft",
    "mvlearn_ext.deep.gaussian_process",
    "mvlearn_ext.deep.merging_peft",
    "mvlearn_ext.deep.moo_trl",
    "mvlearn_ext.deep.rl_trl",
)
# Modules whose examples need an optional package: skipped (not failed) without it.
NEEDS = {
    "mvlearn_ext.studies._plot": ("matplotlib", "pandas"),
    "mvlearn_ext.utils._torch": ("torch",),
    "mvlearn_ext.incomplete._cimln": ("torch",),
    "mvlearn_ext.longtail._aes": ("torch",),
    "mvlearn_ext.brain._phenobrain": ("torch",),
    "mvlearn_ext.adapters._lora_moe": ("torch",),
}


def _modules():
    for info in pkgutil.walk_packages(mvlearn_ext.__path__, prefix="mvlearn_ext."):
        if not info.name.startswith(SKIP_PREFIXES) and info.name != "mvlearn_ext.__main__":
            yield info.name


@pytest.mark.parametrize("name", sorted(_modules()))
def test_docstring_examples(name):
    needs = ("torch",) if name.startswith("mvlearn_ext.deep") else NEEDS.get(name, ())
    for package in needs:
        pytest.importorskip(package)
    module = importlib.import_module(name)
    with np.printoptions(legacy=False):
        result = doctest.testmod(
            module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
        )
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
