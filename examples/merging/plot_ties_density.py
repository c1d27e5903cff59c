"""
How much of a task vector do merges need?
=========================================

TIES and DARE keep only a fraction ``density`` of every task vector's
entries (the largest, or a random rescaled subset) before summing. On
synthetic task vectors with a sparse signal and dense small noise, this
example sweeps the density and measures how close each merge comes to the
sum of the signals alone, the merge one would like to recover.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext import merging

rng = np.random.default_rng(0)
shape = (64, 64)
base = {"w": rng.normal(size=shape)}
signals, experts = [], []
for _ in range(4):
    signal = np.zeros(shape)
    idx = rng.choice(signal.size, size=200, replace=False)
    signal.flat[idx] = rng.normal(scale=1.0, size=200)
    signals.append(signal)
    experts.append({"w": base["w"] + signal + 0.05 * rng.normal(size=shape)})
target = sum(signals)

densities = [0.02, 0.05, 0.1, 0.2, 0.4, 0.7, 1.0]
curves = {"TIES": [], "DARE": []}
for density in densities:
    ties = merging.ties(base, experts, density=density, merge_func="sum")
    dare = merging.dare(base, experts, density=density, random_state=0)
    for name, state in [("TIES", ties), ("DARE", dare)]:
        err = np.linalg.norm(state["w"] - base["w"] - target) / np.linalg.norm(target)
        curves[name].append(err)
plain = merging.task_arithmetic(base, experts)
plain_err = np.linalg.norm(plain["w"] - base["w"] - target) / np.linalg.norm(target)

# %%
fig, ax = plt.subplots(figsize=(6, 4))
for name, err in curves.items():
    ax.plot(densities, err, marker="o", label=name)
ax.axhline(plain_err, color="k", ls="--", lw=1, label="task arithmetic (sum)")
ax.set_xscale("log")
ax.set_xlabel("density (fraction of entries kept)")
ax.set_ylabel("relative error to the sum of signals")
ax.set_title("4 task vectors, 5% of entries carry signal")
ax.legend()
fig.tight_layout()
plt.show()
