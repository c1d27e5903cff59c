"""
Long-tailed class profiles
==========================

:func:`~mvlearn_ext.longtail.long_tail_counts` gives the exponential profile
``n_c = floor(n_max * IR ** (-c / (C - 1)))`` used by long-tailed benchmarks,
and :func:`~mvlearn_ext.longtail.class_groups` splits the classes into "many"
(more than 100 training samples), "medium" and "few" (fewer than 20) by their
counts. The figure shows the profile of 100 classes with a head class of 500
samples for three imbalance ratios, with the group thresholds.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.longtail import class_groups, long_tail_counts

fig, ax = plt.subplots(figsize=(6.5, 3.8))
for ir in (10, 50, 100):
    counts = long_tail_counts(500, 100, ir)
    groups = np.asarray(class_groups(counts))
    shares = {g: int((groups == g).sum()) for g in ("many", "medium", "few")}
    print(f"IR = {ir:>3}: {counts.sum()} samples, classes per group {shares}")
    ax.plot(counts, label=f"imbalance ratio {ir}")
for threshold in (100, 20):
    ax.axhline(threshold, color="k", ls=":", lw=1)
ax.set(yscale="log", xlabel="class (sorted by size)", ylabel="training samples")
ax.set_title("many: above 100, few: below 20 (dotted)")
ax.legend()
fig.tight_layout()
plt.show()
