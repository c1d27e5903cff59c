"""GRPO building blocks and rewards, framework-free (NumPy).

Group-relative advantages
    :func:`group_advantages` (GRPO, with TRL / OpenRLHF semantics),
    :func:`multi_reward_advantages` (TRL's ``sum_then_normalize`` and GDPO's
    ``normalize_then_sum``), :func:`std_filter` (VisualScore's filter of
    degenerate groups), :func:`entropy_mask` (entropy gating of tokens,
    per-sequence or batch-global).
GRAPE rewards (reconstruction from the published reviews)
    :func:`retrieval_scores`, :func:`retrieval_rank`, :func:`rank_reward`,
    :func:`similarity_reward`, :func:`inflation_score`,
    :func:`make_score_inflation_case`, :func:`format_reward`.
GRAPE end to end on a toy (package design)
    :func:`make_shifted_retrieval`, :func:`train_rewriter` (NumPy GRPO of a
    softmax rewriting policy against a frozen retriever),
    :func:`evaluate_rewriter`, :func:`recall_at_k`.
VisualScore rewards (authors' code)
    :func:`gaussian_reward`, :func:`accuracy_reward`, :func:`parse_answer`,
    :func:`format_reward` with ``value=0.5``.
VisualScore end to end on a toy (package design)
    :func:`make_quality_tasks` (digits with a synthetic quality per task,
    :data:`QUALITY_TASKS`), :func:`train_scorer` (NumPy GRPO of a two-token
    softmax scorer), :func:`evaluate_scorer`.

Tool-use bandits (ParetoPO's setting, exact fronts known)
    :func:`simulate_tool_bandit`, :func:`sweep_tool_bandit`,
    :func:`tool_bandit_front`, :func:`tool_efficiency_reward`,
    :class:`OptimalCallsTracker`; the multi-hop bandit with a non-convex front
    and drifting reward scales: :func:`simulate_hop_bandit`,
    :func:`sweep_hop_bandit`, :func:`hop_bandit_front`, :func:`hop_success`,
    :func:`hull_gap`.

The torch losses (PPO-clipped token loss, k3 KL, token entropies) are in
:mod:`mvlearn_ext.deep.rl`. Nothing here imports torch.
"""

from mvlearn_ext.rl._advantages import (
    entropy_mask,
    group_advantages,
    multi_reward_advantages,
    std_filter,
)
from mvlearn_ext.rl._grape_toy import (
    evaluate_rewriter,
    make_shifted_retrieval,
    recall_at_k,
    train_rewriter,
)
from mvlearn_ext.rl._hop_bandit import (
    hop_bandit_front,
    hop_success,
    hull_gap,
    simulate_hop_bandit,
    sweep_hop_bandit,
)
from mvlearn_ext.rl._quality_toy import (
    QUALITY_TASKS,
    evaluate_scorer,
    make_quality_tasks,
    train_scorer,
)
from mvlearn_ext.rl._rewards import (
    accuracy_reward,
    format_reward,
    gaussian_reward,
    inflation_score,
    make_score_inflation_case,
    parse_answer,
    rank_reward,
    retrieval_rank,
    retrieval_scores,
    similarity_reward,
)
from mvlearn_ext.rl._tool_bandit import (
    OptimalCallsTracker,
    simulate_tool_bandit,
    sweep_tool_bandit,
    tool_bandit_front,
    tool_efficiency_reward,
)

__all__ = [
    "QUALITY_TASKS",
    "OptimalCallsTracker",
    "accuracy_reward",
    "entropy_mask",
    "evaluate_rewriter",
    "evaluate_scorer",
    "format_reward",
    "gaussian_reward",
    "group_advantages",
    "hop_bandit_front",
    "hop_success",
    "hull_gap",
    "inflation_score",
    "make_quality_tasks",
    "make_score_inflation_case",
    "make_shifted_retrieval",
    "multi_reward_advantages",
    "parse_answer",
    "rank_reward",
    "recall_at_k",
    "retrieval_rank",
    "retrieval_scores",
    "similarity_reward",
    "simulate_hop_bandit",
    "simulate_tool_bandit",
    "std_filter",
    "sweep_hop_bandit",
    "sweep_tool_bandit",
    "tool_bandit_front",
    "tool_efficiency_reward",
    "train_rewriter",
    "train_scorer",
]
