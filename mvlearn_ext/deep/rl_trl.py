"""GRAPE, VisualScore and ParetoPO in TRL: reward functions, advantages and a ``GRPOTrainer``.

Needs the ``llm`` extra (``pip install torch==2.13.0`` first, then
``pip install "mvlearn_ext[llm]"``); ``import mvlearn_ext.deep`` does not
import this module.

Reward functions (TRL's calling convention)
    Each is a callable ``f(completions, **columns) -> list[float]``, one
    float per completion, where ``columns`` are the data set's columns
    repeated per completion (TRL passes them by name), and has a
    ``__name__`` that TRL logs. :class:`GrapeRankReward` (GRAPE's
    corpus-relative rank reward through the user's frozen retriever, an
    embedding callable), :class:`GaussianScoreReward` (VisualScore's
    Gaussian accuracy reward of the number in ``<answer>``) and
    :class:`FormatReward` (``<think>...</think><answer>...</answer>``).
Advantages
    Stateful NumPy callables ``f(rewards_per_func, group_size, reward_weights) -> A``
    that the trainer applies to TRL's ``(n_completions, n_reward_funcs)``
    reward matrix and ``reward_weights``: :class:`GroupAdvantages` (TRL's
    own GRPO advantages, every ``multi_objective_aggregation`` and
    ``scale_rewards``, computed by
    :func:`mvlearn_ext.rl.multi_reward_advantages`),
    :class:`VisualScoreAdvantages` (GRPO plus VisualScore's std filter of
    degenerate groups) and :class:`ParetoPOAdvantages` (ParetoPO's
    hypervolume-guided weights, then Pareto-rank advantages). Each weighs
    the rewards as TRL does (:func:`weighted_reward`), so the reward TRL
    logs is the reward the loss uses.
Trainer
    :class:`MVGRPOTrainer`, a ``trl.GRPOTrainer`` whose advantages come from
    one of the callables above and whose entropy gating can be
    per-sequence (VisualScore) as well as batch-global (TRL's
    ``top_entropy_quantile``).

The numbers are those of :mod:`mvlearn_ext.rl` and :mod:`mvlearn_ext.moo`:
the trainer hands them TRL's rewards and takes their advantages back.
"""

from __future__ import annotations

import math
import re
from numbers import Real

import numpy as np
import torch

from mvlearn_ext.deep._llm import completion_texts, require_llm, tiny_causal_lm
from mvlearn_ext.moo import HVCGradientWeights, pareto_rank_advantages
from mvlearn_ext.rl import (
    format_reward,
    gaussian_reward,
    group_advantages,
    multi_reward_advantages,
    parse_answer,
    rank_reward,
    retrieval_scores,
    std_filter,
)
from mvlearn_ext.rl._rewards import THINK_ANSWER_PATTERN

trl = require_llm("trl", feature="mvlearn_ext.deep.rl_trl")

__all__ = [
    "FormatReward",
    "GaussianScoreReward",
    "GrapeRankReward",
    "GroupAdvantages",
    "MVGRPOTrainer",
    "ParetoPOAdvantages",
    "VisualScoreAdvantages",
    "sequence_entropy_mask",
    "tiny_causal_lm",
    "weighted_reward",
]


# ---------------------------------------------------------------------------
# Reward functions


def _column(columns, name, n):
    if name not in columns:
        raise KeyError(
            f"the reward needs the data set column {name!r} (TRL passes columns by name); "
            f"got columns {sorted(k for k in columns if not k.startswith('trainer'))}"
        )
    values = columns[name]
    if len(values) != n:
        raise ValueError(f"column {name!r} has {len(values)} values for {n} completions")
    return values


class GrapeRankReward:
    """GRAPE's rank reward as a TRL reward function (reconstruction, see :mod:`mvlearn_ext.rl`).

    The completion is a rewritten query. The user's frozen retriever embeds
    it (``embed``: a list of strings in, an array ``(n, d)`` out); its
    cosine scores against the embedded collection rank the target item of
    the example (the data set column ``target_column``, an item index), and
    :func:`mvlearn_ext.rl.rank_reward` turns the rank into the reward.

    Parameters
    ----------
    embed : callable
        ``embed(list_of_str) -> array-like (n, d)``: the frozen retriever's
        query encoder (a sentence-transformers ``encode``, a bag of words...).
    items : array-like of shape (n_items, d), or list of str
        The collection: its embeddings, or its texts (embedded once, here,
        with ``item_embed`` or else ``embed``).
    target_column : str, default="target"
        The data set column that holds each example's target item index.
    kind : {"normalized", "literal", "reciprocal", "hit"}, default="normalized"
    k : int, default=10
        Cut-off of ``kind="hit"``.
    item_embed : callable, optional
        The document encoder, when it differs from the query encoder.

    See Also
    --------
    mvlearn_ext.rl.rank_reward : The NumPy reward it wraps.
    MVGRPOTrainer : The trainer that calls it.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.deep.rl_trl import GrapeRankReward
    >>> vocab = ["cat", "dog", "fish"]
    >>> def embed(texts):
    ...     return np.array([[t.split().count(w) + 1e-3 for w in vocab] for t in texts])
    >>> reward = GrapeRankReward(embed, ["cat cat", "dog", "fish fish"])
    >>> reward(["dog dog", "cat fish"], target=[1, 1])
    [1.0, 0.0]
    """

    def __init__(
        self,
        embed,
        items,
        *,
        target_column="target",
        kind="normalized",
        k=10,
        item_embed=None,
    ):
        if not callable(embed):
            raise TypeError(f"embed must be callable (texts -> embeddings), got {embed!r}")
        if isinstance(items, (list, tuple)) and items and isinstance(items[0], str):
            items = (item_embed or embed)(list(items))
        E = np.asarray(items, dtype=np.float64)
        if E.ndim != 2 or E.shape[0] < 2:
            raise ValueError(f"items must be (n_items >= 2, d) embeddings, got shape {E.shape}")
        rank_reward(np.zeros((1, E.shape[0])), [0], kind=kind, k=k)  # checks kind
        self.embed = embed
        self.items_ = E
        self.target_column = target_column
        self.kind = kind
        self.k = k
        self.__name__ = f"grape_rank_{kind}"

    def __call__(self, completions, **columns):
        texts = completion_texts(completions)
        targets = np.asarray(_column(columns, self.target_column, len(texts)), dtype=np.int64)
        Q = np.asarray(self.embed(texts), dtype=np.float64)
        if Q.shape != (len(texts), self.items_.shape[1]):
            raise ValueError(
                f"embed returned shape {Q.shape}, expected ({len(texts)}, {self.items_.shape[1]})"
            )
        # An empty rewrite may embed to zero: it ranks last rather than failing.
        zero = np.linalg.norm(Q, axis=1) == 0
        Q[zero] = 1.0
        S = retrieval_scores(Q, self.items_)
        r = rank_reward(S, targets, kind=self.kind, k=self.k)
        r[zero] = rank_reward(np.zeros((1, S.shape[1])), [0], kind=self.kind, k=self.k)[0]
        return r.tolist()


class GaussianScoreReward:
    """VisualScore's Gaussian accuracy reward as a TRL reward function.

    The number in ``<answer>...</answer>`` of each completion
    (:func:`mvlearn_ext.rl.parse_answer`) against the data set column
    ``score_column``: ``exp(-(s_hat - s)^2 / (2 sigma^2))``, 0 for an
    unparsable answer (:func:`mvlearn_ext.rl.gaussian_reward`).

    Parameters
    ----------
    sigma : float, default=0.8
        VisualScore's ``sigma_0``.
    score_column : str, default="score"
    pattern : str or compiled regex, optional
        Where the answer is (default: the ``<think>``/``<answer>`` format).

    See Also
    --------
    mvlearn_ext.rl.gaussian_reward : The NumPy reward it wraps.
    MVGRPOTrainer : The trainer that calls it.

    Examples
    --------
    >>> from mvlearn_ext.deep.rl_trl import GaussianScoreReward
    >>> reward = GaussianScoreReward(sigma=0.8)
    >>> out = reward(["<think>ok</think><answer>3.8</answer>", "3.8"], score=[3.0, 3.0])
    >>> [round(x, 4) for x in out]
    [0.6065, 0.0]
    """

    def __init__(self, *, sigma=0.8, score_column="score", pattern=THINK_ANSWER_PATTERN):
        if not isinstance(sigma, Real) or not math.isfinite(sigma) or sigma <= 0:
            raise ValueError(f"sigma must be a positive float, got {sigma!r}")
        self.sigma = float(sigma)
        self.score_column = score_column
        self.pattern = re.compile(pattern) if isinstance(pattern, str) else pattern
        self.__name__ = "visualscore_gaussian"

    def __call__(self, completions, **columns):
        texts = completion_texts(completions)
        scores = np.asarray(_column(columns, self.score_column, len(texts)), dtype=np.float64)
        pred = parse_answer(texts, pattern=self.pattern)
        return gaussian_reward(pred, scores, sigma=self.sigma).tolist()


class FormatReward:
    """``value`` for a completion in the expected format, else 0 (a TRL reward function).

    :func:`mvlearn_ext.rl.format_reward`; VisualScore uses ``value=0.5``,
    GRAPE ``value=1``.

    See Also
    --------
    mvlearn_ext.rl.format_reward : The NumPy function it wraps.
    MVGRPOTrainer : The trainer that calls it.

    Examples
    --------
    >>> from mvlearn_ext.deep.rl_trl import FormatReward
    >>> FormatReward(value=0.5)(["<think>a</think><answer>1</answer>", "1"])
    [0.5, 0.0]
    """

    def __init__(self, *, value=1.0, pattern=THINK_ANSWER_PATTERN):
        if not isinstance(value, Real) or not math.isfinite(value):
            raise ValueError(f"value must be a finite float, got {value!r}")
        self.value = float(value)
        self.pattern = re.compile(pattern) if isinstance(pattern, str) else pattern
        self.__name__ = "format"

    def __call__(self, completions, **columns):
        texts = completion_texts(completions)
        return format_reward(texts, pattern=self.pattern, value=self.value).tolist()


# ---------------------------------------------------------------------------
# Advantages: NumPy callables on TRL's reward matrix


def _reward_matrix(rewards_per_func, group_size, reward_weights):
    R = np.asarray(rewards_per_func, dtype=np.float64)
    if R.ndim != 2:
        raise ValueError(f"rewards_per_func must be 2-D (n, n_funcs), got shape {R.shape}")
    if (
        not isinstance(group_size, (int, np.integer))
        or isinstance(group_size, bool)
        or group_size < 1
    ):
        raise ValueError(f"group_size must be a positive int, got {group_size!r}")
    if R.shape[0] % group_size:
        raise ValueError(f"{R.shape[0]} completions are not a multiple of group_size={group_size}")
    if reward_weights is None:
        w = np.ones(R.shape[1])
    else:
        w = np.asarray(reward_weights, dtype=np.float64).reshape(-1)
    if w.shape != (R.shape[1],) or not np.isfinite(w).all():
        raise ValueError(
            f"reward_weights must be {R.shape[1]} finite numbers (one per reward function), "
            f"got {reward_weights!r}"
        )
    return R, w


def weighted_reward(rewards_per_func, reward_weights=None):
    """TRL's scalar reward: ``nansum`` of the weighted rewards, NaN where every reward is NaN.

    The reward ``trl.GRPOTrainer`` logs (``reward``) and, with
    ``multi_objective_aggregation="sum_then_normalize"``, normalises.

    Parameters
    ----------
    rewards_per_func : array-like of shape (n_completions, n_reward_funcs)
    reward_weights : array-like of shape (n_reward_funcs,), optional
        TRL's ``reward_weights`` (default all ones).

    Returns
    -------
    reward : ndarray of shape (n_completions,)

    See Also
    --------
    GroupAdvantages : Advantages of the same reward matrix.

    Examples
    --------
    >>> from mvlearn_ext.deep.rl_trl import weighted_reward
    >>> weighted_reward([[1.0, float("nan")], [1.0, 2.0]], [1.0, 0.5]).tolist()
    [1.0, 2.0]
    """
    R, w = _reward_matrix(rewards_per_func, 1, reward_weights)
    total = np.nansum(R * w, axis=1)
    total[np.isnan(R).all(axis=1)] = np.nan
    return total


class GroupAdvantages:
    """TRL's GRPO advantages, for every aggregation and scaling TRL offers.

    :func:`mvlearn_ext.rl.multi_reward_advantages` of the reward matrix with
    the trainer's ``reward_weights``: on the same rewards these equal the
    advantages of ``trl.GRPOTrainer`` with the same
    ``multi_objective_aggregation``, ``scale_rewards`` and
    ``reward_weights`` (tests check every combination).
    :class:`MVGRPOTrainer` uses this with its config's values by default.

    Parameters
    ----------
    aggregation : {"sum_then_normalize", "normalize_then_sum"}, default="sum_then_normalize"
        TRL's ``multi_objective_aggregation``.
    scale_rewards : {"group", "batch", "none"}, default="group"
        TRL's ``scale_rewards``.

    See Also
    --------
    mvlearn_ext.rl.multi_reward_advantages : The NumPy function it applies.
    ParetoPOAdvantages : Pareto-rank advantages instead.

    Examples
    --------
    >>> import numpy as np
    >>> rewards = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])  # 2 groups of 2
    >>> from mvlearn_ext.deep.rl_trl import GroupAdvantages
    >>> GroupAdvantages()(rewards, group_size=2).round(3).tolist()
    [0.0, 0.0, 0.707, -0.707]
    """

    def __init__(self, *, aggregation="sum_then_normalize", scale_rewards="group"):
        self.aggregation = aggregation
        self.scale_rewards = scale_rewards

    def __call__(self, rewards_per_func, group_size, reward_weights=None):
        R, w = _reward_matrix(rewards_per_func, group_size, reward_weights)
        return multi_reward_advantages(
            R,
            weights=w,
            group_size=group_size,
            aggregation=self.aggregation,
            scale_rewards=self.scale_rewards,
        )


class VisualScoreAdvantages:
    """GRPO advantages with VisualScore's std filter (stage-2 RL of VisualScore).

    The group advantages of TRL's weighted reward (:func:`weighted_reward`,
    the reward TRL logs) with OpenRLHF's ``eps=1e-9``, as VisualScore
    trains, for the groups whose *watched* reward (the Gaussian accuracy
    reward, unweighted) has a standard deviation above ``threshold``
    (:func:`mvlearn_ext.rl.std_filter`); the other groups are dropped:
    :class:`MVGRPOTrainer` removes their tokens from the loss.

    Parameters
    ----------
    watch : int, default=0
        Index of the watched reward function (in the trainer's order).
    threshold : float, default=1e-3

    See Also
    --------
    mvlearn_ext.rl.std_filter : The filter it applies.
    GroupAdvantages : TRL's advantages, unfiltered.

    Examples
    --------
    >>> import numpy as np
    >>> rewards = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0]])  # 2 groups of 2
    >>> from mvlearn_ext.deep.rl_trl import VisualScoreAdvantages
    >>> A, keep = VisualScoreAdvantages(watch=0)(rewards, group_size=2)
    >>> keep.tolist()  # only the first group's watched reward varies
    [True, True, False, False]
    """

    def __init__(self, *, watch=0, threshold=1e-3):
        self.watch = watch
        self.threshold = threshold

    def __call__(self, rewards_per_func, group_size, reward_weights=None):
        R, w = _reward_matrix(rewards_per_func, group_size, reward_weights)
        if not 0 <= self.watch < R.shape[1]:
            raise ValueError(f"watch={self.watch} is not a reward function index < {R.shape[1]}")
        total = weighted_reward(R, w)
        A = group_advantages(total, group_size=group_size, eps=1e-9)
        keep = std_filter(R[:, self.watch], group_size=group_size, threshold=self.threshold)
        keep = np.repeat(keep, group_size)
        return np.where(keep, A, 0.0), keep


class ParetoPOAdvantages:
    """ParetoPO's two stages on TRL's reward matrix (reconstruction, see :mod:`mvlearn_ext.moo`).

    Each weighted reward function ``reward_weights[k] * r_k`` (the terms of
    the reward TRL logs) is one objective, maximised. Stage 1 (the first
    ``stage1_steps`` calls): GRPO advantages
    (:func:`mvlearn_ext.rl.group_advantages`) of ``w_t . r``, with ``w_t``
    adapted from the hypervolume-contribution gradient of each step's mean
    objective vector (:class:`mvlearn_ext.moo.HVCGradientWeights`). Stage 2:
    Pareto-rank advantages within each group
    (:func:`mvlearn_ext.moo.pareto_rank_advantages`), ties broken by
    ``w . r`` with the weights stage 1 ended with. A NaN reward counts as 0.

    Parameters
    ----------
    weights : array-like of shape (n_objectives,)
        The initial scalarisation weights ``w_0`` of the objectives.
    stage1_steps : int, default=0
        ``0`` runs stage 2 from the start (with ``weights``).
    beta : float in [0, 1], default=0.5
    margin, ema, floor : float
        Of :class:`~mvlearn_ext.moo.HVCGradientWeights`.

    Attributes
    ----------
    n_calls_ : int
    weights_path_ : list of ndarray
        The scalarisation weights of each call.

    See Also
    --------
    mvlearn_ext.moo.pareto_rank_advantages : Its stage 2.
    mvlearn_ext.moo.HVCGradientWeights : Its stage 1 weights.

    Examples
    --------
    >>> import numpy as np
    >>> rewards = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])  # 2 groups of 2
    >>> from mvlearn_ext.deep.rl_trl import ParetoPOAdvantages
    >>> A = ParetoPOAdvantages([0.5, 0.5])(rewards, group_size=2)
    >>> np.asarray(A).shape
    (4,)
    """

    def __init__(self, weights, *, stage1_steps=0, beta=0.5, margin=0.1, ema=0.9, floor=0.05):
        self.hvc_ = HVCGradientWeights(weights, margin=margin, ema=ema, floor=floor)
        if not isinstance(stage1_steps, (int, np.integer)) or stage1_steps < 0:
            raise ValueError(f"stage1_steps must be a non-negative int, got {stage1_steps!r}")
        self.stage1_steps = int(stage1_steps)
        self.beta = beta
        self.n_calls_ = 0
        self.weights_path_ = []

    def __call__(self, rewards_per_func, group_size, reward_weights=None):
        R, weights = _reward_matrix(rewards_per_func, group_size, reward_weights)
        R = np.nan_to_num(R, nan=0.0) * weights
        if R.shape[1] != self.hvc_.weights_.size:
            raise ValueError(
                f"{R.shape[1]} reward functions for {self.hvc_.weights_.size} objective weights"
            )
        w = self.hvc_.weights_.copy()
        self.weights_path_.append(w)
        groups = R.reshape(-1, group_size, R.shape[1])
        if self.n_calls_ < self.stage1_steps:
            A = group_advantages(groups @ w)
            self.hvc_.update(R.mean(axis=0))
        else:
            A = np.stack([pareto_rank_advantages(g, g @ w, beta=self.beta) for g in groups])
        self.n_calls_ += 1
        return A.reshape(-1)


# ---------------------------------------------------------------------------
# Entropy gating per sequence


def sequence_entropy_mask(entropies, mask, rho):
    """VisualScore's per-sequence entropy gate in torch (:func:`mvlearn_ext.rl.entropy_mask`).

    In each sequence keep the valid tokens whose entropy is at least the
    ``k``-th largest, ``k = ceil(rho * n_valid)`` (ties kept).

    Parameters
    ----------
    entropies : Tensor of shape (B, T)
    mask : Tensor of bool or 0/1, shape (B, T)
    rho : float in (0, 1]

    Returns
    -------
    keep : Tensor of bool, shape (B, T)

    See Also
    --------
    mvlearn_ext.rl.entropy_mask : The NumPy mask.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep.rl_trl import sequence_entropy_mask
    >>> H = torch.tensor([[0.1, 0.9, 0.5, 0.3]])
    >>> sequence_entropy_mask(H, torch.ones(1, 4, dtype=torch.bool), 0.5).tolist()
    [[False, True, True, False]]
    """
    if not isinstance(rho, Real) or not 0 < rho <= 1:
        raise ValueError(f"rho must be in (0, 1], got {rho!r}")
    valid = mask.bool()
    n_valid = valid.sum(dim=1)
    k = torch.ceil(rho * n_valid.to(torch.float64) - 1e-9).long().clamp(min=1)
    ordered = torch.sort(torch.where(valid, entropies, -torch.inf), dim=1, descending=True).values
    thr = ordered.gather(1, (k - 1).clamp(max=entropies.shape[1] - 1)[:, None])
    return valid & (entropies >= thr) & (n_valid > 0)[:, None]


# ---------------------------------------------------------------------------
# The trainer


class MVGRPOTrainer(trl.GRPOTrainer):
    """``trl.GRPOTrainer`` with mvlearn_ext's advantages and per-sequence entropy gating.

    Everything else is TRL's: generation, the reward functions, the clipped
    loss, logging. After TRL has scored a generation batch, the whole
    gathered reward matrix ``(n_completions, n_reward_funcs)`` goes to
    ``advantage_fn`` (laid out as TRL lays it: ``num_generations``
    consecutive completions per prompt), and its advantages replace TRL's
    for this process's slice. When ``advantage_fn`` returns
    ``(advantages, keep)``, the completions with ``keep=False`` leave the
    loss (their completion mask is zeroed and the token count behind
    ``loss_type="dapo"`` recomputed): VisualScore's std filter.

    Parameters
    ----------
    *args, **kwargs
        Those of ``trl.GRPOTrainer``.
    advantage_fn : callable, optional
        ``advantage_fn(rewards_per_func, group_size, reward_weights)``
        returning the advantages ``(n_completions,)`` or
        ``(advantages, keep)``; ``reward_weights`` are the config's (TRL's
        weights, all ones by default), to weigh the rewards as TRL's logged
        reward does. E.g. :class:`GroupAdvantages`,
        :class:`VisualScoreAdvantages`, :class:`ParetoPOAdvantages`.
        Default: :class:`GroupAdvantages` with the config's
        ``multi_objective_aggregation`` and ``scale_rewards``, i.e. TRL's own
        advantages.
    entropy_scope : {"batch", "sequence"}, default="batch"
        With ``top_entropy_quantile = rho < 1`` in the config, keep the top
        ``rho`` share of token entropies over the batch (TRL) or in every
        sequence (VisualScore, :func:`sequence_entropy_mask`).

    Attributes
    ----------
    reward_history_ : list of ndarray
        The gathered reward matrix of every training generation batch.
    advantage_history_ : list of ndarray
        The advantages this process's loss used (``advantage_fn``'s, float32).
    trl_advantage_history_ : list of ndarray
        The advantages TRL itself computed for the same completions (kept to
        compare; the loss does not use them).

    See Also
    --------
    GroupAdvantages : Its default advantages, TRL's.
    ParetoPOAdvantages, VisualScoreAdvantages : The other advantage rules.
    mvlearn_ext.deep.grpo_loss : The loss it optimises.

    Examples
    --------
    >>> import tempfile
    >>> from datasets import Dataset
    >>> from transformers import PrinterCallback
    >>> from trl import GRPOConfig
    >>> from mvlearn_ext.deep.rl_trl import FormatReward, MVGRPOTrainer, tiny_causal_lm
    >>> model, tokenizer = tiny_causal_lm(["1", "2", "q"], random_state=0)
    >>> args = GRPOConfig(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=4,
    ...                   num_generations=4, max_completion_length=2, max_steps=1,
    ...                   report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True)
    >>> trainer = MVGRPOTrainer(model=model, reward_funcs=[FormatReward(pattern="^1")],
    ...                         args=args, train_dataset=Dataset.from_dict({"prompt": ["q"] * 4}),
    ...                         processing_class=tokenizer)
    >>> trainer.remove_callback(PrinterCallback)  # no log lines
    >>> _ = trainer.train()
    >>> len(trainer.reward_history_)  # one step, its group's rewards
    1
    """

    def __init__(self, *args, advantage_fn=None, entropy_scope="batch", **kwargs):
        if entropy_scope not in ("batch", "sequence"):
            raise ValueError(f"entropy_scope must be 'batch' or 'sequence', got {entropy_scope!r}")
        if advantage_fn is not None and not callable(advantage_fn):
            raise TypeError(f"advantage_fn must be callable, got {advantage_fn!r}")
        super().__init__(*args, **kwargs)
        self.advantage_fn = advantage_fn
        self.entropy_scope = entropy_scope
        self.reward_history_ = []
        self.advantage_history_ = []
        self.trl_advantage_history_ = []
        self._last_rewards = None

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        self._last_rewards = rewards
        return rewards

    def _generate_and_score_completions(self, inputs):
        output = super()._generate_and_score_completions(inputs)
        mode = "train" if self.model.training else "eval"
        G = self.num_generations if mode == "train" else self.num_generations_eval
        R = self._last_rewards.detach().to(torch.float64).cpu().numpy()
        advantage_fn = self.advantage_fn
        if advantage_fn is None:  # read at each call: the trainer's settings may change
            advantage_fn = GroupAdvantages(
                aggregation=self.multi_objective_aggregation, scale_rewards=self.scale_rewards
            )
        weights = self.reward_weights.detach().to(torch.float64).cpu().numpy()
        result = advantage_fn(R, G, weights)
        A, keep = result if isinstance(result, tuple) else (result, None)
        A = np.asarray(A, dtype=np.float64).reshape(-1)
        if A.shape != (R.shape[0],):
            raise ValueError(f"advantage_fn returned shape {A.shape}, expected ({R.shape[0]},)")
        n_local = output["completion_ids"].shape[0]
        start = self.accelerator.process_index * n_local
        local = slice(start, start + n_local)
        device = output["advantages"].device
        trl_advantages = output["advantages"].detach().to(torch.float64).cpu().numpy()
        output["advantages"] = torch.as_tensor(A[local], dtype=torch.float32, device=device)
        if keep is not None:
            keep = np.asarray(keep, dtype=bool).reshape(-1)
            rows = torch.as_tensor(keep[local], device=device)
            output["completion_mask"] = output["completion_mask"] * rows[:, None].to(
                output["completion_mask"].dtype
            )
            loss_mask = output["completion_mask"]
            if "tool_mask" in output:
                loss_mask = loss_mask * output["tool_mask"]
            output["num_items_in_batch"] = self.accelerator.gather(loss_mask.sum()).sum()
            self._metrics[mode]["mv/kept_fraction"].append(float(keep.mean()))
        if mode == "train":
            self.reward_history_.append(R)
            self.advantage_history_.append(output["advantages"].detach().cpu().numpy())
            self.trl_advantage_history_.append(trl_advantages)
        return output

    def get_high_entropy_mask(self, entropies, mask, threshold):
        """The tokens that enter the loss: TRL's batch quantile or the per-sequence gate.

        ``threshold`` is TRL's ``1 - top_entropy_quantile``; with
        ``entropy_scope="sequence"`` the gate is :func:`sequence_entropy_mask`
        with ``rho = 1 - threshold``.
        """
        if self.entropy_scope == "batch":
            return super().get_high_entropy_mask(entropies, mask, threshold)
        return sequence_entropy_mask(entropies, mask, 1.0 - threshold)
