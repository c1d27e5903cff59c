"""Multi-objective optimisation: Pareto tools, scalarisation and aggregation.

Pareto tools
    :func:`hypervolume`, :func:`hv_contributions`, :func:`is_nondominated`,
    :func:`filter_dominated`, :func:`pareto_rank`, :func:`crowding_distance`
    and the bounded archive :class:`ParetoArchive` (on moocore).
Scalarisation and aggregation
    The simplex QP :func:`solve_simplex_qp` and the min-norm (MGDA) weights
    and direction (:func:`min_norm_weights`, :func:`min_norm_direction`);
    ParetoPO's hypervolume-guided weights (:class:`HVMetaReward`,
    :func:`hvc_gradient`, :class:`HVCGradientWeights`) and Pareto-rank
    advantages (:func:`pareto_rank_advantages`).

Subpackages, imported on use: :mod:`mvlearn_ext.moo.controlg` (the ControlG
scheduler) and :mod:`mvlearn_ext.moo.mopo` (MOPO on finite policies).
Elsewhere: GRPO advantages and the tool-use bandits in :mod:`mvlearn_ext.rl`,
the DREAM server QP beside its client and server in
:mod:`mvlearn_ext.federated`.
"""

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
    HVCGradientWeights,
    HVMetaReward,
    hvc_gradient,
    pareto_rank_advantages,
)
from mvlearn_ext.moo._qp import min_norm_direction, min_norm_weights, solve_simplex_qp

__all__ = [
    "HVCGradientWeights",
    "HVMetaReward",
    "ParetoArchive",
    "crowding_distance",
    "filter_dominated",
    "hv_contributions",
    "hvc_gradient",
    "hypervolume",
    "is_nondominated",
    "min_norm_direction",
    "min_norm_weights",
    "pareto_rank",
    "pareto_rank_advantages",
    "solve_simplex_qp",
]
