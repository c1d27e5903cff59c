"""MOPO for language models: a trainer on pairwise preferences of several objectives.

Needs the ``llm`` extra; ``import mvlearn_ext.deep`` does not import this
module. Reconstruction (see :mod:`mvlearn_ext.moo._mopo`): maximise the
primary preference objective subject to lower bounds ``b_k`` on the
secondary ones, KL-regularised towards a reference policy. For multipliers
``lambda`` the policy step minimises MOPO's preference regression loss
(:func:`mvlearn_ext.deep.moo.mopo_preference_loss`: IPO's loss with the
target ``tau^{-1} sum_k w_k (p_k - 1/2)``, ``w = (1, lambda)``) on pairs
``(chosen, rejected)`` labelled per objective; every ``dual_every`` steps
the multipliers take MOPO's projected dual step
``lambda_k <- [lambda_k - dual_step (P_k(pi) - b_k)]_+``, with ``P_k(pi)``
from the user's ``value_fn`` (an estimate of each objective's preference
value of the current policy, e.g. win rates of samples against the
reference under each objective's judge).

The data set is TRL's preference format (``prompt``, ``chosen``,
``rejected``) plus a column ``preferences``: for each objective, the
probability (or 0/1 label) that ``chosen`` is preferred to ``rejected``;
objective 0 is the primary one. With a tabular policy and all pairs of a
finite set of answers, the policy step converges to the closed form
:func:`mvlearn_ext.moo.mopo_policy` and the dual steps follow
:func:`mvlearn_ext.moo.solve_mopo` (tests check both).
"""

from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
import torch

from mvlearn_ext.deep._llm import require_llm
from mvlearn_ext.deep.moo import mopo_preference_loss

transformers = require_llm("transformers", feature="mvlearn_ext.deep.moo_trl")

__all__ = ["MOPOConfig", "MOPOTrainer", "sequence_log_probs"]


@dataclasses.dataclass
class MOPOConfig(transformers.TrainingArguments):
    """``transformers.TrainingArguments`` plus MOPO's parameters.

    Parameters
    ----------
    tau : float, default=0.1
        KL strength ``tau > 0``.
    multipliers : list of float, optional
        Initial ``lambda`` (``K - 1`` values, default zeros).
    thresholds : list of float, optional
        Lower bounds ``b_k`` of the secondary objectives; needed for the
        dual steps.
    dual_step : float, default=0.0
        The dual step size; 0 keeps the multipliers fixed.
    dual_every : int, default=1
        Optimiser steps between two dual steps.
    """

    tau: float = 0.1
    multipliers: list[float] | None = None
    thresholds: list[float] | None = None
    dual_step: float = 0.0
    dual_every: int = 1
    remove_unused_columns: bool = False


def sequence_log_probs(logits, input_ids, completion_mask):
    """Sum of ``log pi(token)`` over the completion tokens of each sequence.

    ``logits`` (B, T, V) predict token ``t + 1`` at position ``t``;
    ``completion_mask`` (B, T) marks the completion tokens of ``input_ids``.
    """
    logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    tok = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    return (tok * completion_mask[:, 1:].to(tok.dtype)).sum(dim=1)


class _Collator:
    def __init__(self, pad_id):
        self.pad_id = pad_id

    def __call__(self, examples):
        seqs, masks = [], []
        for side in ("chosen_ids", "rejected_ids"):
            for ex in examples:
                seqs.append(ex["prompt_ids"] + ex[side])
                masks.append([0] * len(ex["prompt_ids"]) + [1] * len(ex[side]))
        T = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), T), self.pad_id, dtype=torch.long)
        att = torch.zeros((len(seqs), T), dtype=torch.long)
        comp = torch.zeros((len(seqs), T), dtype=torch.long)
        for i, (s, m) in enumerate(zip(seqs, masks, strict=True)):
            ids[i, : len(s)] = torch.as_tensor(s)
            att[i, : len(s)] = 1
            comp[i, : len(m)] = torch.as_tensor(m)
        prefs = torch.as_tensor([ex["preferences"] for ex in examples], dtype=torch.float32)
        return {"input_ids": ids, "attention_mask": att, "completion_mask": comp, "prefs": prefs}


class MOPOTrainer(transformers.Trainer):
    """MOPO's policy and dual steps as a ``transformers.Trainer`` (reconstruction).

    Parameters
    ----------
    model : transformers model (or any module whose output has ``.logits``)
    args : MOPOConfig
    train_dataset : datasets.Dataset
        Columns ``prompt``, ``chosen``, ``rejected`` (strings) and
        ``preferences`` (K floats in [0, 1] per row).
    processing_class : tokenizer
    ref_model : model, optional
        The frozen reference; default a frozen copy of ``model`` at the start.
    value_fn : callable, optional
        ``value_fn(model) -> array (K,)``: the preference values
        ``P_k(pi)`` of the current policy; needed when ``dual_step > 0``.
    **kwargs
        Passed to ``transformers.Trainer``.

    Attributes
    ----------
    multipliers_ : ndarray of shape (K - 1,)
    dual_history_ : list of dict
        ``step``, ``values`` and ``multipliers`` after every dual step.
    """

    def __init__(
        self,
        model,
        args,
        train_dataset,
        processing_class,
        *,
        ref_model=None,
        value_fn=None,
        **kwargs,
    ):
        if not isinstance(args, MOPOConfig):
            raise TypeError(f"args must be a MOPOConfig, got {type(args).__name__}")
        if not (isinstance(args.tau, (int, float)) and math.isfinite(args.tau) and args.tau > 0):
            raise ValueError(f"tau must be a finite number > 0, got {args.tau!r}")
        missing = {"prompt", "chosen", "rejected", "preferences"} - set(train_dataset.column_names)
        if missing:
            raise ValueError(f"train_dataset lacks the columns {sorted(missing)}")
        K = len(train_dataset[0]["preferences"])
        lam = np.zeros(K - 1) if args.multipliers is None else np.asarray(args.multipliers, float)
        if lam.shape != (K - 1,) or (lam < 0).any() or not np.isfinite(lam).all():
            raise ValueError(f"multipliers must be {K - 1} finite non-negative numbers")
        if args.dual_step > 0:
            if value_fn is None or args.thresholds is None:
                raise ValueError("dual_step > 0 needs value_fn and thresholds")
            b = np.asarray(args.thresholds, dtype=float)
            if b.shape != (K - 1,):
                raise ValueError(f"thresholds must have {K - 1} entries, got {b.shape}")
        self.multipliers_ = lam
        self.value_fn = value_fn
        self.dual_history_ = []

        def tokenize(ex):
            enc = processing_class
            return {
                "prompt_ids": enc(ex["prompt"], add_special_tokens=False)["input_ids"],
                "chosen_ids": enc(ex["chosen"], add_special_tokens=False)["input_ids"],
                "rejected_ids": enc(ex["rejected"], add_special_tokens=False)["input_ids"],
            }

        train_dataset = train_dataset.map(tokenize)
        if ref_model is None:
            ref_model = copy.deepcopy(model)
        ref_model.eval()
        for p in ref_model.parameters():
            p.requires_grad_(False)
        self.ref_model = ref_model
        pad = getattr(processing_class, "pad_token_id", None)
        super().__init__(
            model=model,
            args=args,
            train_dataset=train_dataset,
            processing_class=processing_class,
            data_collator=_Collator(0 if pad is None else pad),
            **kwargs,
        )
        self.add_callback(_DualCallback(self))

    def _logps(self, model, inputs):
        out = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        return sequence_log_probs(out.logits, inputs["input_ids"], inputs["completion_mask"])

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        """MOPO's preference regression loss of a batch of (chosen, rejected) pairs.

        :func:`mvlearn_ext.deep.moo.mopo_preference_loss` of the sequence
        log-probabilities of the completions under the model and the frozen
        reference, with the weights ``(1, multipliers_)``.
        """
        logps = self._logps(model, inputs)
        with torch.no_grad():
            self.ref_model.to(logps.device)
            ref = self._logps(self.ref_model, inputs)
        chosen, rejected = logps.chunk(2)
        ref_chosen, ref_rejected = ref.chunk(2)
        w = torch.as_tensor(np.concatenate([[1.0], self.multipliers_]), dtype=chosen.dtype)
        loss = mopo_preference_loss(
            chosen, rejected, ref_chosen, ref_rejected, inputs["prefs"], w, tau=self.args.tau
        )
        return (loss, {"logps": logps}) if return_outputs else loss

    def _dual_step(self, step):
        """MOPO's projected dual step with the current policy's preference values."""
        was_training = self.model.training
        self.model.eval()
        with torch.no_grad():
            vals = np.asarray(self.value_fn(self.model), dtype=float).reshape(-1)
        self.model.train(was_training)
        b = np.asarray(self.args.thresholds, dtype=float)
        step_size = self.args.dual_step
        self.multipliers_ = np.maximum(self.multipliers_ - step_size * (vals[1:] - b), 0.0)
        self.dual_history_.append(
            {"step": step, "values": vals, "multipliers": self.multipliers_.copy()}
        )


class _DualCallback(transformers.TrainerCallback):
    def __init__(self, trainer):
        self.trainer = trainer

    def on_step_end(self, args, state, control, **kwargs):
        if args.dual_step > 0 and state.global_step % args.dual_every == 0:
            self.trainer._dual_step(state.global_step)
