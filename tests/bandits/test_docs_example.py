"""The Python blocks of docs/user_guide/bandits.md run."""

from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "user_guide" / "bandits.md"


def test_user_guide_examples_run():
    if not DOC.exists():
        pytest.skip("docs/ not present (installed package)")
    text = DOC.read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    assert blocks
    namespace = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102
    assert namespace["res"].counts.shape == (1000, 4)
