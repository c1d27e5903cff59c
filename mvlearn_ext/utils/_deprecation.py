"""Renamed parameters kept for one release (scikit-learn's pattern).

The new name is a regular ``__init__`` parameter; the old one stays in the
signature with the default ``"deprecated"`` and the constraint
``Hidden(StrOptions({"deprecated"}))``. At fit, :func:`renamed_param` gives
the value to use: the old one's if it was set (with a ``FutureWarning`` naming
both), else the new one's.
"""

from sklearn.utils._param_validation import Hidden, StrOptions

from mvlearn_ext.utils._warnings import warn as _warn

__all__ = ["DEPRECATED", "deprecated_constraint", "renamed_param"]

DEPRECATED = "deprecated"


def deprecated_constraint(constraints):
    """``constraints`` of the new name, plus the hidden ``"deprecated"`` marker."""
    return [*constraints, Hidden(StrOptions({DEPRECATED}))]


def _is_unset(value):
    return isinstance(value, str) and value == DEPRECATED


def renamed_param(estimator, new, old, *, warn=True):
    """The value of parameter ``new`` of ``estimator``, honouring the old name ``old``.

    If ``old`` was set (is not ``"deprecated"``), warn (``FutureWarning``,
    unless ``warn=False``) and return its value; otherwise return ``new``'s.
    """
    old_value = getattr(estimator, old, DEPRECATED)
    if _is_unset(old_value):
        return getattr(estimator, new)
    if warn:
        _warn(
            f"{type(estimator).__name__}: the parameter `{old}` was renamed `{new}` "
            f"in 0.1 and will be removed in 0.2; pass `{new}` instead.",
            FutureWarning,
        )
    return old_value
