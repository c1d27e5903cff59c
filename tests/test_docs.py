"""The docs stay in step with the code."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_api_reference_is_up_to_date():
    script = ROOT / "docs" / "gen_api.py"
    if not script.exists():
        pytest.skip("docs/ not present (installed package)")
    result = subprocess.run([sys.executable, str(script), "--check"], cwd=ROOT)
    assert result.returncode == 0, "docs/api.md is stale: run python docs/gen_api.py"


def test_readme_opens_with_the_two_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    commands = [ln for ln in lines[:20] if ln.startswith("python -m pip install")]
    assert len(commands) == 2
    assert commands[0].endswith("python -m mvlearn_ext demo")
    assert "torch==2.13.0" in commands[1] and commands[1].endswith("python -m pytest")


def test_readme_examples_run():
    """The Python blocks of the README run, in order, in one namespace."""
    text = (ROOT / "README.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    assert blocks
    namespace = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["search"].best_params_["estimator__n_clusters"] in (8, 10, 12)
    assert namespace["G"].shape == (2000, 500)
