"""Multi-group mean estimation: allocation policies and a Monte Carlo engine.

A budget of ``T`` samples is spread over ``K`` groups to estimate every mean
well, measured by ``R_p(n) = (sum_k (sigma_k^2 / n_k)^p)^(1/p)`` (``max`` for
``p = inf``).

* Exploration-free rules, reconstructions of Wei, Zhong & Li (arXiv
  2510.10374, known from its abstract): :class:`TwoStagePlugIn`
  (non-adaptive), :class:`GreedyPlugIn` (adaptive) and
  :class:`ContextualGreedyPlugIn` (linear contexts, side information per
  sample) and :class:`SideInfoGreedyPlugIn` (side information per group: a
  log-linear model of the noise levels in known group features).
* Baselines: :class:`UniformAllocation`, :class:`OracleAllocation`,
  :class:`GAFSMax`, :class:`CHAS`, :class:`BAS`, :class:`VarianceUCB`.
* Two interfaces: online (``reset`` / ``next_group`` / ``update``, state via
  ``get_state``/``set_state`` or pickle) and :func:`simulate`, a Numba
  engine parallel over replications; they agree exactly for the same seed
  (:class:`ArmSampler` gives the online run the same observations).
* Closed forms: :func:`rp_objective`, :func:`oracle_allocation`,
  :func:`oracle_value`, :func:`round_allocation`; regret curves and their
  slopes: :func:`regret_curve` (through :func:`mvlearn_ext.studies.fit_loglog_slope`).
"""

from mvlearn_ext.bandits._contextual import (
    ContextualArmSampler,
    ContextualGreedyPlugIn,
    contextual_oracle_weights,
    simulate_contextual,
)
from mvlearn_ext.bandits._objective import (
    allocation_exponent,
    oracle_allocation,
    oracle_value,
    proxy_regret,
    round_allocation,
    rp_objective,
)
from mvlearn_ext.bandits._policies import (
    BAS,
    CHAS,
    GAFSMax,
    GreedyPlugIn,
    OracleAllocation,
    TwoStagePlugIn,
    UniformAllocation,
    VarianceUCB,
)
from mvlearn_ext.bandits._regret import regret_curve
from mvlearn_ext.bandits._side_info import SideInfoGreedyPlugIn, log_variance_tables
from mvlearn_ext.bandits._simulate import ArmSampler, SimulationResult, simulate

__all__ = [
    "BAS",
    "CHAS",
    "ArmSampler",
    "ContextualArmSampler",
    "ContextualGreedyPlugIn",
    "GAFSMax",
    "GreedyPlugIn",
    "OracleAllocation",
    "SideInfoGreedyPlugIn",
    "SimulationResult",
    "TwoStagePlugIn",
    "UniformAllocation",
    "VarianceUCB",
    "allocation_exponent",
    "contextual_oracle_weights",
    "log_variance_tables",
    "oracle_allocation",
    "oracle_value",
    "proxy_regret",
    "regret_curve",
    "round_allocation",
    "rp_objective",
    "simulate",
    "simulate_contextual",
]
