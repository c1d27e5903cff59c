"""The demo section runs, and SA-Merging beats the pruning baselines on the digits toy (slow)."""

import subprocess
import sys

import numpy as np
import pytest

from mvlearn_ext import merging
from mvlearn_ext._demo.merging import COLUMNS, _methods, run
from mvlearn_ext._demo.registry import DemoContext
from mvlearn_ext.datasets import make_digit_experts


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
        problem = make_digit_experts(random_state=seed)
        base, experts = problem.base, problem.experts
        layers = [k for k in base if k.endswith("weight")]
        size = base[layers[0]].size
        sa_density = (merging.sa_keep_counts(size, 0.2, 10)[-1] + 0.5) / size
        for method, (merge, _) in _methods(
            merging, base, experts, layers, sa_density, seed
        ).items():
            acc.setdefault(method.split(" (")[0], []).append(problem.accuracy(merge()))
    mean = {k: float(np.mean(v)) for k, v in acc.items()}
    assert mean["SA-Merging"] >= mean["magnitude top-k"] - 0.005
    assert mean["SA-Merging"] > mean["random mask"]
