"""
Regrouping LoRA units by their gradients
========================================

BADIT periodically regroups the rank-one units of its LoRA experts so that
units whose gradients point the same way share an expert.
:func:`~mvlearn_ext.adapters.balanced_spherical_kmeans` clusters the unit
gradient vectors with exactly ``n / K`` units per cluster (each expert keeps
its rank). Here 24 units whose gradients follow 4 hidden directions (plus
noise) start in experts that mix the directions; the figure shows the cosine
matrix of their gradients ordered by the initial experts and by the regrouped
ones, and the printed mean cosines within and across experts
(:func:`~mvlearn_ext.adapters.intra_inter_cosine`) compare the two groupings:
0.17 within and 0.13 across before, 0.71 within and -0.02 across after, with
6 units in every regrouped expert. The data are generated so that such
groups exist; the user guide's benchmark finds that regrouping changes little
in a full BADIT run.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.adapters import balanced_spherical_kmeans, intra_inter_cosine

rng = np.random.default_rng(0)
directions = rng.standard_normal((4, 40))
hidden = rng.permutation(np.repeat(np.arange(4), 6))
G = directions[hidden] + 0.6 * rng.standard_normal((24, 40))
G /= np.linalg.norm(G, axis=1, keepdims=True)
initial = np.repeat(np.arange(4), 6)  # units 0-5 in expert 0, and so on
regrouped = balanced_spherical_kmeans(G, 4, random_state=0)
print("units per regrouped expert:", np.bincount(regrouped).tolist())
for name, labels in (("initial", initial), ("regrouped", regrouped)):
    cos = intra_inter_cosine(G, labels)
    print(f"{name:>9}: mean cosine within experts {cos['intra']:.3f}, across {cos['inter']:.3f}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 4))
for ax, (name, labels) in zip(axes, (("initial", initial), ("regrouped", regrouped)), strict=True):
    order = np.argsort(labels, kind="stable")
    im = ax.imshow(G[order] @ G[order].T, cmap="RdBu", vmin=-1, vmax=1)
    ax.set_title(f"gradient cosines, {name} experts")
    ax.set_xticks([2.5, 8.5, 14.5, 20.5], [f"E{e}" for e in range(4)])
    ax.set_yticks([2.5, 8.5, 14.5, 20.5], [f"E{e}" for e in range(4)])
fig.colorbar(im, ax=axes, shrink=0.8)
plt.show()
