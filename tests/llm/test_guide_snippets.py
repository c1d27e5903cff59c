"""The trainer snippets of docs/user_guide/llm.md, run as written, on a CPU as well.

Each snippet is taken from the guide and executed with its hub model name replaced by a tiny
random-weight model saved with ``save_pretrained`` (no download), its data by a few rows and
its run cut to two short steps:
what is tested is that the configuration and the calls run, also where no GPU is present
(TRL turns bf16 on by default, which fails there).
"""

import re
from pathlib import Path

import numpy as np
import pytest

from mvlearn_ext.deep._llm import tiny_causal_lm

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "user_guide" / "llm.md"
HUB_NAME = '"Qwen/Qwen2.5-0.5B-Instruct"'


def _snippet(marker):
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, f"expected one guide snippet with {marker!r}, found {len(found)}"
    assert HUB_NAME in found[0]
    return found[0]


def _saved_tiny_model(path, words):
    model, tok = tiny_causal_lm(words, random_state=0)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return repr(str(path))


def _bf16_expected():
    import torch

    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


@pytest.fixture()
def workdir(monkeypatch, tmp_path):
    """A fresh working directory: the snippets write to ``out/``."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_grpo_snippet_runs_on_cpu(workdir):
    from datasets import Dataset

    from mvlearn_ext.deep.rl_trl import FormatReward, GaussianScoreReward

    code = _snippet("GRPOConfig(")
    path = _saved_tiny_model(workdir / "model", [str(i) for i in range(10)] + ["q"])
    namespace = {
        "visualscore": [GaussianScoreReward(sigma=0.8), FormatReward(value=0.5)],
        "data": Dataset.from_dict({"prompt": ["q"], "score": [3.0]}),
    }
    code = code.replace(HUB_NAME, path)
    code = code.replace("GRPOConfig(", "GRPOConfig(max_completion_length=8, max_steps=2, ")
    exec(compile(code, str(GUIDE), "exec"), namespace)
    trainer = namespace["trainer"]
    assert trainer.args.bf16 == _bf16_expected()
    assert trainer.state.global_step == 2
    assert np.isfinite(np.stack(trainer.reward_history_)).all()


def test_mopo_snippet_runs_on_cpu(workdir):
    from datasets import Dataset

    code = _snippet("MOPOConfig(")
    arms = ["a", "b", "c"]
    path = _saved_tiny_model(workdir / "model", ["q"] + arms)
    rows = [
        {"prompt": "q", "chosen": " " + x, "rejected": " " + y, "preferences": [0.7, 0.4]}
        for x in arms
        for y in arms
        if x != y
    ]
    namespace = {
        "preference_data": Dataset.from_list(rows),
        "win_rates": lambda model: np.array([0.5, 0.5]),
    }
    code = code.replace(HUB_NAME, path).replace("MOPOConfig(", "MOPOConfig(max_steps=2, ")
    exec(compile(code, str(GUIDE), "exec"), namespace)
    trainer = namespace["trainer"]
    assert trainer.args.bf16 == _bf16_expected()
    assert trainer.state.global_step == 2
    assert len(trainer.multipliers_) == 1
