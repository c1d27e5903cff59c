"""
A Pareto front and its hypervolume
==================================

For points to be minimised in two objectives,
:func:`~mvlearn_ext.moo.pareto_rank` peels the non-dominated fronts,
:func:`~mvlearn_ext.moo.hypervolume` measures the region the first front
dominates up to a reference point, and
:func:`~mvlearn_ext.moo.hv_contributions` tells how much of it each front
point alone contributes.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.moo import hv_contributions, hypervolume, pareto_rank

rng = np.random.default_rng(0)
angle = rng.uniform(0, np.pi / 2, 60)
radius = 1 + 0.6 * rng.random(60)
P = np.column_stack([1 - radius * np.cos(angle), 1 - radius * np.sin(angle)]) + 1.6
ref = np.array([3.0, 3.0])

rank = pareto_rank(P)
front = P[rank == 0]
front = front[np.argsort(front[:, 0])]
hv = hypervolume(front, ref=ref)
contrib = hv_contributions(front, ref=ref)
print(f"{len(front)} points on the first front, hypervolume {hv:.3f}")

# %%
fig, ax = plt.subplots(figsize=(5.5, 5))
# The dominated region: a staircase from the front to the reference point.
xs = np.concatenate([[front[0, 0]], np.repeat(front[1:, 0], 2), [ref[0]]])
ys = np.concatenate([np.repeat(front[:, 1], 2)])
ax.fill_between(xs, ys, ref[1], step=None, alpha=0.2, label=f"hypervolume {hv:.2f}")
others = ax.scatter(P[rank > 0, 0], P[rank > 0, 1], c=rank[rank > 0], cmap="Greys", vmin=-1, s=15)
sizes = 30 + 600 * contrib / contrib.max()
ax.scatter(front[:, 0], front[:, 1], s=sizes, c="tab:red", label="front (size: HV contribution)")
ax.plot(*ref, "kx")
ax.annotate("reference", ref, textcoords="offset points", xytext=(-50, -12))
fig.colorbar(others, ax=ax, label="Pareto rank")
ax.set_xlabel("objective 1 (minimise)")
ax.set_ylabel("objective 2 (minimise)")
ax.legend(loc="lower left", fontsize=8)
fig.tight_layout()
plt.show()
