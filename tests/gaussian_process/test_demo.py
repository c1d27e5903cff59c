"""The demo section runs and LVMOGP is competitive on it."""

import numpy as np

from mvlearn_ext._demo.gaussian_process import run
from mvlearn_ext._demo.registry import DemoContext


def test_demo_section_runs():
    rows = run(DemoContext(seeds=(0, 1)))
    assert [r.method for r in rows] == ["LVMOGP", "independent GPs"]
    for r in rows:
        assert set(r.scores) == {"RMSE", "NLPD"}
        assert len(r.fit_times) == 2 and all(np.isfinite(r.scores["RMSE"]))
    # The fields are low rank across the 100 outputs: sharing helps.
    assert np.mean(rows[0].scores["RMSE"]) < 1.5 * np.mean(rows[1].scores["RMSE"])
