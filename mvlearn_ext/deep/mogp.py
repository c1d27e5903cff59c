"""Deprecated alias of :mod:`mvlearn_ext.deep.gaussian_process` (removed in 0.2).

The torch half of the multi-output GP family now has the family's name. Every
name is still found here, with a ``DeprecationWarning``.
"""

import warnings

from mvlearn_ext.deep import gaussian_process as _new


def __getattr__(name):
    if name.startswith("__"):  # no module attributes (``__all__``): not a public module
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_new, name)  # AttributeError for an unknown name, as usual
    warnings.warn(
        f"mvlearn_ext.deep.mogp is deprecated and will be removed in 0.2: import {name} from "
        "mvlearn_ext.deep.gaussian_process",
        DeprecationWarning,
        stacklevel=2,
    )
    return value
