"""Warnings that point at the user's line, whatever the depth of the call inside the package.

A fixed ``stacklevel`` counts the frames between ``warnings.warn`` and the
user's call, and silently goes wrong when a refactor adds or removes one (a
helper, a shared ``fit`` in a base class, scikit-learn's ``_fit_context``
wrapper). :func:`find_stack_level` counts them at run time instead: it walks
out of the frames of this package and of scikit-learn and returns the level of
the first frame outside both, the approach of scikit-learn's and pandas'
helpers of the same name.
"""

from __future__ import annotations

import os
import sys
import warnings

import sklearn

import mvlearn_ext

__all__ = ["find_stack_level", "warn"]

#: Directories whose frames are never the user's line (trailing separator included,
#: so that a sibling such as ``mvlearn_ext_demo/`` is not taken for the package).
_INTERNAL_DIRS = tuple(
    os.path.join(os.path.dirname(os.path.abspath(module.__file__)), "")
    for module in (mvlearn_ext, sklearn)
)


def _is_internal(filename):
    return os.path.abspath(filename).startswith(_INTERNAL_DIRS)


def find_stack_level() -> int:
    """The ``stacklevel`` that makes ``warnings.warn`` name the first frame outside the package.

    Call it in the function that calls ``warnings.warn`` (or in a helper of this
    package that does both, such as :func:`warn`): frames of ``mvlearn_ext`` and of
    scikit-learn (its ``_fit_context`` and ``set_output`` wrappers) are skipped.
    When every frame is internal (a call from a worker thread, say), the outermost
    one is named.

    Returns
    -------
    stacklevel : int
        1 names the function that called this one, 2 its caller, and so on.
    """
    frame = sys._getframe(1)  # the caller of find_stack_level: stacklevel 1
    level = 1
    try:
        while frame.f_back is not None and _is_internal(frame.f_code.co_filename):
            frame = frame.f_back
            level += 1
    finally:
        del frame
    return level


def warn(message, category=UserWarning):
    """``warnings.warn(message, category)``, naming the user's line (:func:`find_stack_level`)."""
    warnings.warn(message, category, stacklevel=find_stack_level())
