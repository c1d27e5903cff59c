"""MOPO for language models: a ``trl.DPOTrainer`` on pairwise preferences of several objectives.

Needs the ``llm`` extra; ``import mvlearn_ext.deep`` does not import this
module. Reconstruction (see :mod:`mvlearn_ext.moo.mopo`): maximise the
primary preference objective subject to lower bounds ``b_k`` on the
secondary ones, KL-regularised towards a reference policy. For multipliers
``lambda`` the policy step minimises MOPO's preference regression loss
(:func:`mvlearn_ext.deep.moo.mopo_preference_loss`: IPO's loss with the
target ``tau^{-1} sum_k w_k (p_k - 1/2)``, ``w = (1, lambda)``) on pairs
``(chosen, rejected)`` labelled per objective; every ``dual_every`` steps
the multipliers take MOPO's projected dual step
``lambda_k <- [lambda_k - learning_rate_dual (P_k(pi) - b_k)]_+``, with ``P_k(pi)``
from the user's ``value_fn`` (an estimate of each objective's preference
value of the current policy, e.g. win rates of samples against the
reference under each objective's judge).

:class:`MOPOTrainer` subclasses ``trl.DPOTrainer`` (TRL 1.16): TRL prepares
the data (prompt extraction, chat templates, the EOS token, truncation),
pads the batches, computes the sequence log-probabilities with its fused LM
head, and supplies the reference (a frozen model, the PEFT base with the
adapter disabled, or precomputed log-probabilities); only the loss is
MOPO's. The data set is TRL's preference format (``prompt``, ``chosen``,
``rejected``, standard or conversational) plus a column ``preferences``:
for each objective, the probability (or 0/1 label) that ``chosen`` is
preferred to ``rejected``; objective 0 is the primary one. As in TRL, the
tokenised text is ``prompt + chosen``, so a plain-text completion starts
with its own separator (``" y3"``). With a tabular policy and all pairs of
a finite set of answers, the policy step converges to the closed form
:func:`mvlearn_ext.moo.mopo.mopo_policy` and the dual steps follow
:func:`mvlearn_ext.moo.mopo.solve_mopo` (tests check both).
"""

from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
import torch

from mvlearn_ext.deep._llm import require_llm
from mvlearn_ext.deep.moo import mopo_preference_loss

transformers, trl = require_llm("transformers", "trl", feature="mvlearn_ext.deep.moo_trl")

__all__ = ["MOPOConfig", "MOPOTrainer", "sequence_log_probs"]


def _is_peft(model):
    try:
        import peft
    except ImportError:
        return False
    return isinstance(model, peft.PeftModel)


@dataclasses.dataclass
class MOPOConfig(trl.DPOConfig):
    """``trl.DPOConfig`` plus MOPO's parameters.

    DPO's ``beta`` is set to ``tau`` (it only scales TRL's logged rewards);
    DPO's loss options (``loss_type``, ``loss_weights``, ``f_divergence_type``,
    ``ld_alpha``, ``use_weighting``) do not apply: MOPO's loss replaces them,
    and :class:`MOPOTrainer` refuses changed values. The other fields,
    including TRL's defaults (``gradient_checkpointing=True``,
    ``learning_rate=1e-6``), are TRL's, except ``bf16``: left unset, it is
    on only where a CUDA device supports bfloat16 (TRL turns it on
    everywhere, which fails on a machine without a GPU).

    Parameters
    ----------
    tau : float, default=0.1
        KL strength ``tau > 0``.
    multipliers : list of float, optional
        Initial ``lambda`` (``K - 1`` values, default zeros).
    thresholds : list of float, optional
        Lower bounds ``b_k`` of the secondary objectives; needed for the
        dual steps.
    learning_rate_dual : float, default=0.0
        The dual step size; 0 keeps the multipliers fixed.
    dual_every : int, default=1
        Optimiser steps between two dual steps.

    See Also
    --------
    MOPOTrainer : The trainer it configures.
    mvlearn_ext.moo.mopo.solve_mopo : The tabular programme.

    Examples
    --------
    >>> import tempfile
    >>> from mvlearn_ext.deep.moo_trl import MOPOConfig
    >>> config = MOPOConfig(output_dir=tempfile.mkdtemp(), tau=0.1, thresholds=[0.55],
    ...                     report_to="none")
    >>> config.tau, config.thresholds
    (0.1, [0.55])
    """

    tau: float = 0.1
    multipliers: list[float] | None = None
    thresholds: list[float] | None = None
    learning_rate_dual: float = 0.0
    dual_every: int = 1

    def __post_init__(self):
        if self.bf16 is None and not self.fp16 and not self.use_cpu:
            self.bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
        elif self.bf16 is None:
            self.bf16 = False
        super().__post_init__()
        if isinstance(self.tau, (int, float)) and not isinstance(self.tau, bool):
            self.beta = float(self.tau)


def sequence_log_probs(logits, input_ids, completion_mask):
    """Sum of ``log pi(token)`` over the completion tokens of each sequence.

    ``logits`` (B, T, V) predict token ``t + 1`` at position ``t``;
    ``completion_mask`` (B, T) marks the completion tokens of ``input_ids``.
    A helper for models outside TRL; :class:`MOPOTrainer` takes the same
    sums from TRL's fused LM head.

    See Also
    --------
    MOPOTrainer : Takes the same sums from TRL.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep.moo_trl import sequence_log_probs
    >>> ids = torch.tensor([[0, 1, 2]])
    >>> lp = sequence_log_probs(torch.zeros(1, 3, 4), ids, torch.tensor([[0, 1, 1]]))
    >>> round(float(lp), 4)  # two completion tokens, each log(1 / 4)
    -2.7726
    """
    logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    tok = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    return (tok * completion_mask[:, 1:].to(tok.dtype)).sum(dim=1)


class _WithPreferences:
    """TRL's preference collator, plus the ``preferences`` of each pair as a (B, K) tensor."""

    def __init__(self, collator):
        self.collator = collator

    def __call__(self, examples):
        batch = self.collator(examples)
        batch["preferences"] = torch.as_tensor(
            [ex["preferences"] for ex in examples], dtype=torch.float32
        )
        return batch


_DPO_LOSS_DEFAULTS = {
    "loss_type": ["sigmoid"],
    "loss_weights": None,
    "f_divergence_type": "reverse_kl",
    "ld_alpha": None,
    "use_weighting": False,
}


class MOPOTrainer(trl.DPOTrainer):
    """MOPO's policy and dual steps as a ``trl.DPOTrainer`` (reconstruction).

    Parameters
    ----------
    model : str, transformers model or PeftModel
        As in ``trl.DPOTrainer``: a hub name or local path is loaded with
        ``from_pretrained``.
    args : MOPOConfig
    train_dataset : datasets.Dataset
        TRL's preference columns (``prompt``, ``chosen``, ``rejected``) and
        ``preferences`` (K floats in [0, 1] per row).
    processing_class : tokenizer, optional
        Loaded from ``model``'s name when omitted, as in TRL.
    ref_model : model, optional
        The frozen reference. Default: for a model object (not PEFT, no
        precomputed reference), a frozen copy of ``model`` at the start;
        otherwise TRL's choice (the PEFT base with the adapter disabled, or
        the model reloaded from its name).
    value_fn : callable, optional
        ``value_fn(model) -> array (K,)``: the preference values
        ``P_k(pi)`` of the current policy; needed when ``learning_rate_dual > 0``.
    **kwargs
        Passed to ``trl.DPOTrainer`` (``eval_dataset``, ``peft_config``,
        ``callbacks``, ...).

    Attributes
    ----------
    multipliers_ : ndarray of shape (K - 1,)
    dual_history_ : list of dict
        ``step``, ``values`` and ``multipliers`` after every dual step.

    See Also
    --------
    MOPOConfig : Its configuration.
    mvlearn_ext.deep.moo.mopo_preference_loss : The loss it minimises.

    Examples
    --------
    >>> import tempfile
    >>> from datasets import Dataset
    >>> from transformers import PrinterCallback
    >>> from mvlearn_ext.deep.moo_trl import MOPOConfig, MOPOTrainer
    >>> from mvlearn_ext.deep.rl_trl import tiny_causal_lm
    >>> from mvlearn_ext.moo.mopo import make_preferences
    >>> arms = ["a", "b", "c"]
    >>> P = make_preferences("conflicting", n_arms=3, n_objectives=2, random_state=0)
    >>> model, tokenizer = tiny_causal_lm(["q"] + arms, random_state=0)
    >>> data = Dataset.from_list([
    ...     {"prompt": "q", "chosen": " " + arms[i], "rejected": " " + arms[j],
    ...      "preferences": P[:, i, j].tolist()}
    ...     for i in range(3) for j in range(3) if i != j])
    >>> args = MOPOConfig(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=6,
    ...                   max_steps=2, multipliers=[0.5], tau=0.1, report_to="none",
    ...                   save_strategy="no", use_cpu=True, disable_tqdm=True,
    ...                   gradient_checkpointing=False)
    >>> trainer = MOPOTrainer(model, args, data, tokenizer)
    >>> trainer.remove_callback(PrinterCallback)  # no log lines
    >>> _ = trainer.train()
    >>> trainer.state.global_step
    2
    """

    _tag_names = ["trl", "dpo", "mopo", "mvlearn_ext"]
    _name = "MOPO"
    _paper = {
        "title": "Multi-Objective Preference Optimization",
        "id": "2505.10892",
    }

    def __init__(
        self,
        model,
        args=None,
        train_dataset=None,
        processing_class=None,
        *,
        ref_model=None,
        value_fn=None,
        **kwargs,
    ):
        if not isinstance(args, MOPOConfig):
            raise TypeError(f"args must be a MOPOConfig, got {type(args).__name__}")
        if not (isinstance(args.tau, (int, float)) and math.isfinite(args.tau) and args.tau > 0):
            raise ValueError(f"tau must be a finite number > 0, got {args.tau!r}")
        for name, default in _DPO_LOSS_DEFAULTS.items():
            if getattr(args, name) != default:
                raise ValueError(
                    f"args.{name}={getattr(args, name)!r}: MOPO's loss replaces DPO's, leave "
                    f"{name} at {default!r}"
                )
        if train_dataset is None:
            raise ValueError("train_dataset is required")
        if "preferences" not in train_dataset.column_names:
            raise ValueError(
                "train_dataset lacks the columns ['preferences'] (K preference probabilities "
                "per row, objective 0 first)"
            )
        K = len(train_dataset[0]["preferences"])
        if K < 1:
            raise ValueError("preferences must hold at least one objective")
        lam = np.zeros(K - 1) if args.multipliers is None else np.asarray(args.multipliers, float)
        if lam.shape != (K - 1,) or (lam < 0).any() or not np.isfinite(lam).all():
            raise ValueError(f"multipliers must be {K - 1} finite non-negative numbers")
        if args.learning_rate_dual > 0:
            if value_fn is None or args.thresholds is None:
                raise ValueError("learning_rate_dual > 0 needs value_fn and thresholds")
            b = np.asarray(args.thresholds, dtype=float)
            if b.shape != (K - 1,):
                raise ValueError(f"thresholds must have {K - 1} entries, got {b.shape}")
        self.multipliers_ = lam
        self.value_fn = value_fn
        self.dual_history_ = []
        if (
            ref_model is None
            and isinstance(model, transformers.PreTrainedModel)
            and not _is_peft(model)
            and kwargs.get("peft_config") is None
            and not args.precompute_ref_log_probs
        ):
            ref_model = copy.deepcopy(model)
        if ref_model is not None:
            ref_model.eval()
            for p in ref_model.parameters():
                p.requires_grad_(False)
        super().__init__(
            model=model,
            ref_model=ref_model,
            args=args,
            train_dataset=train_dataset,
            processing_class=processing_class,
            **kwargs,
        )
        self.data_collator = _WithPreferences(self.data_collator)
        self.add_callback(_DualCallback(self))

    def _set_signature_columns_if_needed(self):
        super()._set_signature_columns_if_needed()
        if "preferences" not in self._signature_columns:
            self._signature_columns = [*self._signature_columns, "preferences"]

    def compute_ref_log_probs(self, model, inputs):
        inputs = {k: v for k, v in inputs.items() if k != "preferences"}
        return super().compute_ref_log_probs(model, inputs)

    def _pair_logps(self, model, inputs):
        """Policy and reference log-probabilities of the chosen and rejected completions."""
        skip = {"completion_mask", "ref_chosen_logps", "ref_rejected_logps", "preferences"}
        model_kwargs = {k: v for k, v in inputs.items() if k not in skip}
        model_kwargs["use_cache"] = False
        completion_mask = inputs["completion_mask"]
        labels = inputs["input_ids"].masked_fill(completion_mask == 0, -100)
        outputs = model(**model_kwargs, labels=labels, fused_lm_head=True)
        seq_len = completion_mask.size(1) - 1
        logps = outputs.log_probs[:, -seq_len:].sum(dim=1)
        chosen, rejected = logps.chunk(2, dim=0)
        if self.precompute_ref_logps:
            ref_chosen, ref_rejected = inputs["ref_chosen_logps"], inputs["ref_rejected_logps"]
        else:
            ref = self.ref_model if self.ref_model is not None else self.model
            ref_chosen, ref_rejected = self.compute_ref_log_probs(ref, inputs)
        return chosen, rejected, ref_chosen.to(chosen), ref_rejected.to(chosen)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        """MOPO's preference regression loss of a batch of (chosen, rejected) pairs.

        :func:`mvlearn_ext.deep.moo.mopo_preference_loss` of the sequence
        log-probabilities of the completions under the model and the
        reference, with the weights ``(1, multipliers_)``.
        """
        chosen, rejected, ref_chosen, ref_rejected = self._pair_logps(model, inputs)
        w = torch.as_tensor(np.concatenate([[1.0], self.multipliers_]), dtype=chosen.dtype)
        prefs = inputs["preferences"].to(chosen)
        loss = mopo_preference_loss(
            chosen, rejected, ref_chosen, ref_rejected, prefs, w, tau=self.args.tau
        )
        mode = "train" if self.model.training else "eval"
        with torch.no_grad():
            margin = (chosen - ref_chosen) - (rejected - ref_rejected)
            self._metrics[mode]["rewards/margins"].append(self.args.tau * margin.mean().item())
            self._metrics[mode]["logps/chosen"].append(chosen.mean().item())
            self._metrics[mode]["logps/rejected"].append(rejected.mean().item())
            for k, lam in enumerate(self.multipliers_, start=1):
                self._metrics[mode][f"mopo/lambda_{k}"].append(float(lam))
        if return_outputs:
            return loss, {"chosen_logps": chosen, "rejected_logps": rejected}
        return loss

    def _dual_step(self, step):
        """MOPO's projected dual step with the current policy's preference values."""
        was_training = self.model.training
        self.model.eval()
        with torch.no_grad():
            vals = np.asarray(self.value_fn(self.model), dtype=float).reshape(-1)
        self.model.train(was_training)
        b = np.asarray(self.args.thresholds, dtype=float)
        step_size = self.args.learning_rate_dual
        self.multipliers_ = np.maximum(self.multipliers_ - step_size * (vals[1:] - b), 0.0)
        self.dual_history_.append(
            {"step": step, "values": vals, "multipliers": self.multipliers_.copy()}
        )


class _DualCallback(transformers.TrainerCallback):
    def __init__(self, trainer):
        self.trainer = trainer

    def on_step_end(self, args, state, control, **kwargs):
        if args.learning_rate_dual > 0 and state.global_step % args.dual_every == 0:
            self.trainer._dual_step(state.global_step)
