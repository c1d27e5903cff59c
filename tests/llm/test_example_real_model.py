"""The real-model example, end to end on a model loaded by path through ``from_pretrained``.

A user points ``examples/deep/llm_grpo_trl.py --model`` at a hub name; TRL then loads the
model with ``AutoModelForCausalLM.from_pretrained`` and the tokenizer with
``AutoProcessor.from_pretrained``. Here a tiny random-weight model and a word-level tokenizer
(with a chat template, since the example's prompts are conversational) are saved with
``save_pretrained`` and passed by path, which takes the same code path without a download.
"""

import importlib.util
from pathlib import Path

import numpy as np

from mvlearn_ext.deep._llm import tiny_causal_lm

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "deep" / "llm_grpo_trl.py"

CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} <eos> {% endfor %}"
    "{% if add_generation_prompt %}assistant : {% endif %}"
)


def _example():
    spec = importlib.util.spec_from_file_location("llm_grpo_trl_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_runs_on_a_model_saved_with_save_pretrained(tmp_path):
    words = ["user", "assistant", ":", "<think>", "</think>", "<answer>", "</answer>"]
    words += [str(i) for i in range(1, 6)]
    model, tok = tiny_causal_lm(words, random_state=0)
    tok.chat_template = CHAT_TEMPLATE
    path = tmp_path / "tiny-model"
    model.save_pretrained(path)
    tok.save_pretrained(path)

    trainer = _example().main(
        ["--model", str(path), "--steps", "2", "--max-completion-length", "6", "--batch-size",
         "4", "--output-dir", str(tmp_path / "out")]
    )  # fmt: skip
    assert trainer.model.config._name_or_path == str(path)  # loaded from the path
    assert trainer.state.global_step == 2
    assert len(trainer.reward_history_) == 2
    for R in trainer.reward_history_:
        assert R.shape == (4, 2) and np.isfinite(R).all()
