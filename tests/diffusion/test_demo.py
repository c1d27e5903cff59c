"""The diffusion demo section (NumPy oracle) runs and the two-stage row beats its baseline."""

import numpy as np

from mvlearn_ext._demo.diffusion import COLUMNS, run
from mvlearn_ext._demo.registry import DemoContext


def test_oracle_demo_section_runs():
    rows = run(DemoContext(seeds=(0, 1), quick=True))
    assert [r.method.split()[0] for r in rows] == ["labelled-only", "specialists", "two-stage"]
    for r in rows:
        assert set(r.scores) == set(COLUMNS) and len(r.fit_times) == 2
        assert all(np.isfinite(v).all() for v in r.scores.values())
    base, _, two = rows
    assert np.mean(two.scores["mean err"]) < np.mean(base.scores["mean err"])
