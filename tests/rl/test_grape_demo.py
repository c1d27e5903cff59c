"""The grape demo section runs; the rank-reward rewriter beats the original queries."""

import numpy as np

from mvlearn_ext._demo.grape import COLUMNS, run
from mvlearn_ext._demo.registry import DemoContext


def test_grape_demo_section_runs():
    rows = run(DemoContext(seeds=(0,), quick=True))
    assert [r.method.split()[0] for r in rows] == ["original", "GRPO,", "GRPO,"]
    for r in rows:
        assert set(r.scores) == set(COLUMNS)
        assert all(np.isfinite(v).all() for v in r.scores.values())
    assert rows[1].scores["R@10"][0] > rows[0].scores["R@10"][0]
    assert rows[2].scores["hub rate"] == [1.0]
