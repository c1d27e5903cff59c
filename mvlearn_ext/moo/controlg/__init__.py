"""ControlG: feedback-controlled scheduling of single-objective training blocks.

Sensing (:func:`antagonism_matrix`), planning (:func:`plan_budgets`,
:func:`plan_targets`), the PID executor (:class:`PIDController`), the
scheduler that ties them (:class:`ControlGScheduler`), its audit
(:func:`replay_schedule`) and a toy of block training
(:func:`simulate_block_training`). ``import mvlearn_ext.moo`` does not import
this subpackage (it needs SciPy's linear programming).
"""

from mvlearn_ext.moo.controlg._controlg import (
    ControlGScheduler,
    PIDController,
    antagonism_matrix,
    plan_budgets,
    plan_targets,
    replay_schedule,
    simulate_block_training,
)

__all__ = [
    "ControlGScheduler",
    "PIDController",
    "antagonism_matrix",
    "plan_budgets",
    "plan_targets",
    "replay_schedule",
    "simulate_block_training",
]
