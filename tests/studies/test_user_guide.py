"""The Python blocks of docs/user_guide/studies.md run, in order, and are ruff-formatted."""

import shutil
import subprocess
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "user_guide" / "studies.md"


def _blocks():
    if not GUIDE.exists():
        pytest.skip("docs/ not present (installed package)")
    text = GUIDE.read_text()
    return [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]


def test_user_guide_examples_run():
    pytest.importorskip("matplotlib")
    pytest.importorskip("distributed")
    blocks = _blocks()
    assert len(blocks) >= 3
    namespace = {}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), namespace)  # noqa: S102
    assert namespace["on_dask"].equals(namespace["frame"])
    assert namespace["path"].with_suffix(".png").exists()


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff not installed")
def test_user_guide_blocks_are_formatted():
    for i, block in enumerate(_blocks()):
        result = subprocess.run(
            ["ruff", "format", "--check", "--line-length", "99", "-"],
            input=block,
            text=True,
            capture_output=True,
        )
        assert result.returncode == 0, f"block {i} is not ruff-formatted:\n{block}"
