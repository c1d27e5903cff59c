"""MOPO for finite policies: closed-form tilted policies and projected dual descent.

Preference models (:func:`make_preferences`, :func:`preference_values`), the
policy of given multipliers (:func:`mopo_policy`), the dual descent
(:func:`solve_mopo`, :class:`MOPOResult`), the exact constrained optimum it
is checked against (:func:`exact_constrained_policy`) and IPO's regression
loss (:func:`ipo_regression_loss`). The language-model trainer is
:mod:`mvlearn_ext.deep.moo_trl`. ``import mvlearn_ext.moo`` does not import
this subpackage (it needs SciPy's optimisers).
"""

from mvlearn_ext.moo.mopo._mopo import (
    MOPOResult,
    exact_constrained_policy,
    ipo_regression_loss,
    make_preferences,
    mopo_policy,
    preference_values,
    solve_mopo,
)

__all__ = [
    "MOPOResult",
    "exact_constrained_policy",
    "ipo_regression_loss",
    "make_preferences",
    "mopo_policy",
    "preference_values",
    "solve_mopo",
]
