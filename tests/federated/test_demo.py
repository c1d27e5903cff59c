import numpy as np

from mvlearn_ext._demo.federated import run
from mvlearn_ext._demo.registry import DemoContext


def test_demo_section_runs():
    rows = run(DemoContext(seeds=(0, 1)))
    assert [r.method for r in rows] == ["KME-MTA", "local ridge", "FedAvg (pooled)"]
    for row in rows:
        assert np.all(np.isfinite(row.scores["excess_r0"])) and len(row.scores["excess_r5"]) == 2
