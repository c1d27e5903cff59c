"""The grpo demo section runs and the Gaussian reward's filters remove degenerate groups."""

import numpy as np

from mvlearn_ext._demo.registry import DemoContext
from mvlearn_ext._demo.rl import COLUMNS, run


def test_demo_section_runs():
    rows = run(DemoContext(seeds=(0,), quick=True))
    assert [r.method for r in rows][0].startswith("Gaussian")
    for r in rows:
        assert set(r.scores) == set(COLUMNS)
        assert all(np.isfinite(v).all() for v in r.scores.values())
    assert rows[0].scores["zero-adv share"] == [0.0]  # std filter drops degenerate groups
