"""Multi-objective machinery: Pareto tools, scalarisation, schedulers, MOPO, QPs."""

from mvlearn_ext.moo._controlg import (
    ControlGScheduler,
    PIDController,
    antagonism_matrix,
    plan_budgets,
    plan_targets,
    replay_schedule,
    simulate_block_training,
)
from mvlearn_ext.moo._mopo import (
    MOPOResult,
    exact_constrained_policy,
    ipo_regression_loss,
    make_preferences,
    mopo_policy,
    preference_values,
    solve_mopo,
)
from mvlearn_ext.moo._pareto import (
    ParetoArchive,
    crowding_distance,
    filter_dominated,
    hv_contributions,
    hypervolume,
    is_nondominated,
    pareto_rank,
)
from mvlearn_ext.moo._paretopo import (
    HVMetaReward,
    OptimalCallsTracker,
    grpo_advantages,
    pareto_rank_advantages,
    simulate_tool_bandit,
    tool_efficiency_reward,
)
from mvlearn_ext.moo._qp import (
    dream_direction,
    dream_weights,
    min_norm_direction,
    min_norm_weights,
    solve_simplex_qp,
)

__all__ = [
    "ControlGScheduler",
    "HVMetaReward",
    "MOPOResult",
    "OptimalCallsTracker",
    "PIDController",
    "ParetoArchive",
    "antagonism_matrix",
    "crowding_distance",
    "dream_direction",
    "dream_weights",
    "exact_constrained_policy",
    "filter_dominated",
    "grpo_advantages",
    "hv_contributions",
    "hypervolume",
    "ipo_regression_loss",
    "is_nondominated",
    "make_preferences",
    "min_norm_direction",
    "min_norm_weights",
    "mopo_policy",
    "pareto_rank",
    "pareto_rank_advantages",
    "plan_budgets",
    "plan_targets",
    "preference_values",
    "replay_schedule",
    "simulate_block_training",
    "simulate_tool_bandit",
    "solve_mopo",
    "solve_simplex_qp",
    "tool_efficiency_reward",
]
