"""MOPO's trl.DPOTrainer against the tabular closed form and dual iterates of mvlearn_ext.moo."""

import numpy as np
import pytest
import torch
import transformers
import trl
from transformers.modeling_outputs import BaseModelOutput, CausalLMOutput

from mvlearn_ext.deep._llm import tiny_causal_lm
from mvlearn_ext.deep.moo_trl import MOPOConfig, MOPOTrainer, sequence_log_probs
from mvlearn_ext.moo.mopo import make_preferences, mopo_policy, preference_values, solve_mopo

ARMS = [f"y{i}" for i in range(6)]
TAU = 0.1
TOL = 1e-6  # float32 log-probabilities of TRL's fused LM head (trl/kernels/chunked_logprob.py)


class TabularConfig(transformers.PretrainedConfig):
    model_type = "mvlearn_ext_tabular_policy"

    def __init__(self, vocab_size=8, **kwargs):
        self.vocab_size = vocab_size
        self.hidden_size = 1
        super().__init__(**kwargs)


class _Ones(torch.nn.Module):
    def forward(self, input_ids, **kwargs):
        B, T = input_ids.shape
        return BaseModelOutput(last_hidden_state=torch.ones(B, T, 1, dtype=torch.float64))


class TabularPolicy(transformers.PreTrainedModel, transformers.GenerationMixin):
    """One logit per token, the same at every position: a tabular policy over answers.

    A transformers model whose backbone outputs the constant hidden state 1 and whose
    LM head (1 -> vocabulary, initially 0) holds the logits, so that TRL's fused LM head
    sees the same model as the plain forward.
    """

    config_class = TabularConfig
    base_model_prefix = "backbone"

    def __init__(self, config):
        super().__init__(config)
        self.backbone = _Ones()
        self.lm_head = torch.nn.Linear(1, config.vocab_size, bias=False, dtype=torch.float64)
        self.post_init()
        with torch.no_grad():
            self.lm_head.weight.zero_()

    def _init_weights(self, module):
        pass

    def get_output_embeddings(self):
        return self.lm_head

    def forward(self, input_ids, attention_mask=None, **kwargs):
        return CausalLMOutput(logits=self.lm_head(self.backbone(input_ids).last_hidden_state))


@pytest.fixture(scope="module")
def problem():
    from datasets import Dataset

    P = make_preferences("conflicting", n_arms=6, n_objectives=2, random_state=0)
    _, tok = tiny_causal_lm(["q"] + ARMS, random_state=0)
    rows = [  # TRL tokenises prompt + completion (then EOS): the completion brings its space
        {
            "prompt": "q",
            "chosen": " " + ARMS[i],
            "rejected": " " + ARMS[j],
            "preferences": P[:, i, j].tolist(),
        }
        for i in range(6)
        for j in range(6)
        if i != j
    ]
    data = Dataset.from_list(rows)
    arm_ids = tok.convert_tokens_to_ids(ARMS)
    return P, tok, data, arm_ids


def _arm_policy(model, tok, arm_ids):
    ids = tok(["q"], add_special_tokens=False, return_tensors="pt").input_ids
    logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0, -1]
    return torch.softmax(logits.double()[arm_ids], dim=0).detach().numpy()


def _config(tmp_path, steps, **kwargs):
    base = dict(
        output_dir=str(tmp_path),
        per_device_train_batch_size=30,
        max_steps=steps,
        optim="sgd",
        learning_rate=1.0,
        lr_scheduler_type="constant",
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        logging_steps=1000,
        gradient_checkpointing=False,
        bf16=False,
        tau=TAU,
        seed=0,
    )
    base.update(kwargs)
    return MOPOConfig(**base)


def test_sequence_log_probs_sums_the_completion_tokens():
    logits = torch.randn(2, 4, 5)
    ids = torch.tensor([[1, 2, 3, 4], [0, 1, 1, 0]])
    mask = torch.tensor([[0, 0, 1, 1], [0, 1, 1, 0]])
    logp = torch.log_softmax(logits, dim=-1)
    expected = torch.stack(
        [logp[0, 1, 3] + logp[0, 2, 4], logp[1, 0, 1] + logp[1, 1, 1]]
    )  # token t is predicted at t - 1
    torch.testing.assert_close(sequence_log_probs(logits, ids, mask), expected)


def test_policy_step_converges_to_the_closed_form(problem, tmp_path):
    P, tok, data, arm_ids = problem
    model = TabularPolicy(TabularConfig(vocab_size=len(tok)))
    args = _config(tmp_path, 40, multipliers=[0.7])
    trainer = MOPOTrainer(model, args, data, tok)
    assert isinstance(trainer, trl.DPOTrainer)
    trainer.train()
    # TRL's fused LM head computes the log-probabilities in float32: agreement to its round-off
    np.testing.assert_allclose(
        _arm_policy(model, tok, arm_ids), mopo_policy(P, [0.7], tau=TAU), atol=TOL
    )


def test_dual_steps_follow_solve_mopo(problem, tmp_path):
    P, tok, data, arm_ids = problem
    model = TabularPolicy(TabularConfig(vocab_size=len(tok)))
    s = P.mean(axis=2)  # P_k mu with mu uniform
    sc = s[1:] - s[1:].mean(axis=1, keepdims=True)
    eta = TAU / np.linalg.norm(sc, 2) ** 2  # solve_mopo's default step
    b = [0.55]

    def value_fn(m):
        return preference_values(P, _arm_policy(m, tok, arm_ids))

    args = _config(tmp_path, 100, thresholds=b, learning_rate_dual=eta, dual_every=20)
    trainer = MOPOTrainer(model, args, data, tok, value_fn=value_fn)
    trainer.train()
    assert [h["step"] for h in trainer.dual_history_] == [20, 40, 60, 80, 100]
    for t, h in enumerate(trainer.dual_history_, start=1):
        ref = solve_mopo(P, b, tau=TAU, learning_rate=eta, max_iter=t, tol=0.0)
        np.testing.assert_allclose(h["multipliers"], ref.multipliers, atol=TOL)
    assert trainer.multipliers_[0] > 0  # the constraint binds: the dual moved


def test_tiny_lm_moves_toward_the_mopo_policy(problem, tmp_path):
    """A random-weight transformers model trained a few dozen steps with the MOPO loss."""
    P, tok, data, arm_ids = problem
    model, _ = tiny_causal_lm(["q"] + ARMS, random_state=0)
    target = mopo_policy(P, [0.7], tau=TAU)

    def kl(pi):
        return float(np.sum(target * np.log(target / pi)))

    before = kl(_arm_policy(model, tok, arm_ids))
    args = _config(
        tmp_path, 20, multipliers=[0.7], optim="adamw_torch", learning_rate=3e-2, weight_decay=0.0
    )  # the whole data set per step, 20 steps
    MOPOTrainer(model, args, data, tok).train()
    after = kl(_arm_policy(model, tok, arm_ids))
    print(f"KL to the MOPO policy: {before:.4f} -> {after:.4f}")
    assert after < 0.25 * before, (before, after)


def test_bad_input(problem, tmp_path):
    P, tok, data, _ = problem
    model = TabularPolicy(TabularConfig(vocab_size=len(tok)))
    with pytest.raises(TypeError, match="MOPOConfig"):
        MOPOTrainer(model, object(), data, tok)
    with pytest.raises(ValueError, match="tau must be"):
        MOPOTrainer(model, _config(tmp_path, 1, tau=0.0), data, tok)
    with pytest.raises(ValueError, match="needs value_fn"):
        MOPOTrainer(model, _config(tmp_path, 1, learning_rate_dual=0.1), data, tok)
    with pytest.raises(ValueError, match="lacks the columns"):
        MOPOTrainer(model, _config(tmp_path, 1), data.remove_columns("preferences"), tok)
    with pytest.raises(ValueError, match="MOPO's loss replaces DPO's"):
        MOPOTrainer(model, _config(tmp_path, 1, loss_type="ipo"), data, tok)


def test_the_three_reference_routes_give_the_same_loss(problem, tmp_path):
    """Frozen copy, PEFT base (adapter disabled) and precomputed log-probs: one reference."""
    from peft import LoraConfig

    P, tok, data, _ = problem
    lora = LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj", "v_proj"], lora_dropout=0.0)
    routes = {
        "copy": ({}, {}),
        "peft": ({}, {"peft_config": lora}),  # LoRA's B = 0: the adapted model is the base
        "precomputed": ({"precompute_ref_log_probs": True}, {}),
    }
    losses = {}
    for name, (cfg, kw) in routes.items():
        model, _ = tiny_causal_lm(["q"] + ARMS, random_state=0)
        args = _config(tmp_path / name, 1, multipliers=[0.7], **cfg)
        trainer = MOPOTrainer(model, args, data, tok, **kw)
        batch = next(iter(trainer.get_train_dataloader()))
        with torch.no_grad():
            losses[name] = trainer.compute_loss(trainer.model, batch).item()
            # move the policy away from the reference (trainable weights only)
            gen = torch.Generator().manual_seed(1)
            for p in trainer.model.parameters():
                if p.requires_grad:
                    p.add_(0.5 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
            losses[name + "_moved"] = trainer.compute_loss(trainer.model, batch).item()
    assert losses["copy"] > 1.0  # the policy is the reference: h = 0, the loss is the target's
    assert losses["peft"] == pytest.approx(losses["copy"], rel=1e-6)
    assert losses["precomputed"] == pytest.approx(losses["copy"], rel=1e-6)
    # the reference stays the initial model once the policy moves (same move in both routes)
    assert losses["precomputed_moved"] == pytest.approx(losses["copy_moved"], rel=1e-6)
    assert abs(losses["copy_moved"] - losses["copy"]) > 1e-3 * losses["copy"]
    assert abs(losses["peft_moved"] - losses["peft"]) > 1e-3 * losses["peft"]  # adapter disabled
