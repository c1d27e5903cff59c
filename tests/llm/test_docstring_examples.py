"""The examples in the docstrings of the TRL and PEFT bridges run."""

import doctest
import importlib

import numpy as np
import pytest


@pytest.mark.parametrize(
    "name",
    [
        "mvlearn_ext.deep._llm",
        "mvlearn_ext.deep.adapters_peft",
        "mvlearn_ext.deep.merging_peft",
        "mvlearn_ext.deep.moo_trl",
    ],
)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    with np.printoptions(legacy=False):
        result = doctest.testmod(
            module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
        )
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
