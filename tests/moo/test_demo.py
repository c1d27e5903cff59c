import numpy as np

from mvlearn_ext._demo.moo import run_controlg, run_hop_bandit, run_tool_bandit
from mvlearn_ext._demo.registry import DemoContext


def test_demo_sections_run():
    for fn, cols in (
        (run_tool_bandit, ("accuracy", "mean_calls", "HV", "front_gap")),
        (run_controlg, ("log_HV", "min_share")),
        (run_hop_bandit, ("front_HV", "calls_w0.9")),
    ):
        rows = fn(DemoContext(seeds=(0, 1)))
        assert rows
        for row in rows:
            for c in cols:
                assert len(row.scores[c]) == 2 and np.all(np.isfinite(row.scores[c]))
