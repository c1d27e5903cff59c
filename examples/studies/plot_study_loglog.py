"""
A Monte Carlo study with a log-log fit
======================================

:class:`~mvlearn_ext.studies.Study` runs a replication function over a grid
of settings with independent, reproducible seeds, and writes every result
to a file as it goes (a rerun resumes). Here: the squared error of the mean
and of the median of ``n`` Gaussian samples, whose risks are
``sigma^2 / n`` and about ``(pi / 2) sigma^2 / n``; both have slope -1 on
log-log axes.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.studies import Study, fit_loglog_slope, plot_summary, summarize


def replicate(setting, rng):
    x = rng.normal(0.0, 1.0, size=setting["n_samples"])
    return [
        {"method": "mean", "sq_err": float(np.mean(x) ** 2)},
        {"method": "median", "sq_err": float(np.median(x) ** 2)},
    ]


path = Path(tempfile.mkdtemp()) / "location.jsonl"
study = Study.from_grid(
    replicate, {"n_samples": [10, 40, 160, 640]}, n_replications=300, root_seed=0, path=path
)
frame = study.run(progress=False)
table = summarize(frame, by=["n_samples", "method"], value="sq_err")
for method in ["mean", "median"]:
    part = table[table.method == method]
    fit = fit_loglog_slope(part.n_samples, part["mean"])
    print(f"{method}: slope {fit.slope:.3f} +- {fit.slope_se:.3f}")

# %%
ax = plot_summary(table, x="n_samples", hue="method", err="se", logx=True, logy=True)
n = np.array([10, 640], dtype=float)
ax.plot(n, 1 / n, "k--", lw=1, label="1 / n")
ax.plot(n, np.pi / 2 / n, "k:", lw=1, label="(pi / 2) / n")
ax.legend()
ax.set_title("squared error, 300 replications per point")
plt.show()
