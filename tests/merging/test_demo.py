"""The demo section runs, and SA-Merging beats the pruning baselines on the digits toy (slow)."""

import subprocess
import sys

import numpy as np
import pytest

from mvlearn_ext._demo._merging_toy import make_digit_experts, merge_methods
from mvlearn_ext._demo.merging import COLUMNS, run
from mvlearn_ext._demo.registry import DemoContext


def test_demo_section_rows():
    rows = run(DemoContext(seeds=(0,), quick=True))
    names = [r.method for r in rows]
    assert names[0] == "individual experts" and "SA-Merging (reconstruction)" in names
    for row in rows:
        assert set(COLUMNS) <= set(row.scores)
        assert all(0.0 <= a <= 1.0 for a in row.scores["accuracy"])
        assert len(row.fit_times) == 1
    kept = {r.method: r.scores["kept"][0] for r in rows}
    assert kept["task arithmetic"] == 1.0 and 0.1 < kept["SA-Merging (reconstruction)"] < 0.12


def test_merging_never_imports_torch():
    code = "import mvlearn_ext.merging, sys; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_digits_demo_acceptance():
    """SA(10%) >= magnitude(10%) - 0.5 points and > random(10%), mean of 3 seeds."""
    acc = {}
    for seed in range(3):
        problem = make_digit_experts(seed)
        for method, body in merge_methods(problem, scaling=0.4, random_state=seed).items():
            acc.setdefault(method.split(" (")[0], []).append(problem.accuracy(body))
    mean = {k: float(np.mean(v)) for k, v in acc.items()}
    assert mean["SA-Merging"] >= mean["magnitude top-k"] - 0.005
    assert mean["SA-Merging"] > mean["random mask"]
