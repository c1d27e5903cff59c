"""
Mean or median under heavy tails
================================

The same study design as the previous example, with the grid extended over
the noise distribution: Student-t noise with 2.5 degrees of freedom has a
finite variance but heavy tails, and the median overtakes the mean. The
summary table (:func:`~mvlearn_ext.studies.summarize`) carries a standard
error for every cell.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.studies import Study, format_summary, summarize


def replicate(setting, rng):
    n = setting["n_samples"]
    if setting["noise"] == "gaussian":
        x = rng.normal(size=n)
    else:
        x = rng.standard_t(2.5, size=n)
    return [
        {"method": "mean", "sq_err": float(np.mean(x) ** 2)},
        {"method": "median", "sq_err": float(np.median(x) ** 2)},
    ]


study = Study.from_grid(
    replicate,
    {"n_samples": [20, 80, 320], "noise": ["gaussian", "student-t(2.5)"]},
    n_replications=300,
    root_seed=1,
)
frame = study.run(progress=False)
table = summarize(frame, by=["noise", "n_samples", "method"], value="sq_err")
print(format_summary(table[table.noise != "gaussian"], index="n_samples", columns="method"))

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
for ax, noise in zip(axes, ["gaussian", "student-t(2.5)"], strict=True):
    part = table[table.noise == noise]
    for method in ["mean", "median"]:
        rows = part[part.method == method]
        ax.errorbar(rows.n_samples, rows["mean"], yerr=2 * rows["se"], marker="o", label=method)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n")
    ax.set_title(noise)
axes[0].set_ylabel("mean squared error")
axes[0].legend()
fig.tight_layout()
plt.show()
