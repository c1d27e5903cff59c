import numpy as np

from mvlearn_ext._demo.bandits import COLUMNS, run
from mvlearn_ext._demo.registry import DemoContext, DemoRow


def test_demo_section_runs():
    rows = run(DemoContext(seeds=(0, 1), quick=True))
    assert rows and all(isinstance(r, DemoRow) for r in rows)
    for row in rows:
        assert set(row.scores) == set(COLUMNS) and len(row.fit_times) == 2
    by_name = {r.method: r for r in rows}
    # Uniform decays as 1/T exactly; the greedy rule is much faster.
    np.testing.assert_allclose(by_name["uniform"].scores["slope"], -1.0, atol=0.02)
    assert np.mean(by_name["greedy plug-in, n0=sqrt(T)"].scores["slope"]) < -1.2
