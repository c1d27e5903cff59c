"""The RTE demo sections run, and the subpackage stays torch-free."""

import subprocess
import sys

from mvlearn_ext._demo.extrapolate import (
    DISCRETE_COLUMNS,
    PARAM_COLUMNS,
    discrete_scores,
    parameter_scores,
    run_parameter,
)
from mvlearn_ext._demo.registry import DemoContext


def test_parameter_section_rows():
    rows = run_parameter(DemoContext(seeds=(0,), quick=True))
    names = [r.method for r in rows]
    assert names == ["RTE", "RTE, direct output", "inductive", "family refit"]
    for row in rows:
        assert set(PARAM_COLUMNS) <= set(row.scores) and len(row.fit_times) == 1
        assert all(v >= 0 for v in row.scores["MSE out-of-support"])


def test_score_functions_on_a_tiny_configuration():
    res = parameter_scores(0, n_library=20, n_pairs=100, max_iter=10)
    assert set(res) == {"RTE", "RTE, direct output", "inductive", "family refit"}
    assert res["family refit"]["out"] < 0.1  # 5 points pin down the quadratic up to the noise
    res = discrete_scores(0, n_test=3, max_iter=10)
    assert set(res["RTE"]) == {"len4", "len5", "comp", "s"}
    assert len(DISCRETE_COLUMNS) == 3


def test_extrapolate_and_brain_never_import_torch():
    code = (
        "import sys, mvlearn_ext.extrapolate, mvlearn_ext.brain, mvlearn_ext._demo.extrapolate, "
        "mvlearn_ext._demo.brain; assert 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
