"""
Connectomes and their two-hop routes
====================================

In the data of :func:`~mvlearn_ext.brain.make_phenotype_connectomes` (16
regions in 4 modules of 4) the label is the strength of the 2-hop route from
module M1 to module M3, which passes through M2 when the phenotype ``g`` is 0
and through M4 when it is 1. The panels show, for the mean connectome of each
phenotype group, the normalised adjacency
(:func:`~mvlearn_ext.brain.normalize_connectome`) and its second power
(:func:`~mvlearn_ext.brain.hop_powers`), whose M1-M3 block holds the 2-hop
routes that a routing kernel with a large weight on hop 2 passes on. The two
group means look alike (the mean M1-M3 entry of ``A_hat^2`` is 0.055 for
``g = 0`` and 0.054 for ``g = 1``): the label is carried by how the route
strength varies across subjects within a group, not by a difference of the
group means, which is why a classifier needs the phenotype to read it.
"""

import matplotlib.pyplot as plt

from mvlearn_ext.brain import hop_powers, make_phenotype_connectomes, normalize_connectome

A, P, y = make_phenotype_connectomes(400, random_state=0)
fig, axes = plt.subplots(2, 2, figsize=(8, 7))
for row, g in zip(axes, (0, 1), strict=True):
    A_hat = normalize_connectome(A[P[:, 0] == g].mean(axis=0))
    powers = hop_powers(A_hat, 2)
    block = powers[2][:4, 8:12].mean()
    print(
        f"g = {g}: mean M1-M3 entry of A_hat^2 {block:.4f}, of A_hat {A_hat[:4, 8:12].mean():.4f}"
    )
    for ax, M, title in zip(row, (A_hat, powers[2]), ("A_hat", "A_hat^2"), strict=True):
        ax.imshow(M, cmap="magma")
        ax.set_title(f"g = {g}: {title}")
        ax.set_xticks([1.5, 5.5, 9.5, 13.5], ["M1", "M2", "M3", "M4"])
        ax.set_yticks([1.5, 5.5, 9.5, 13.5], ["M1", "M2", "M3", "M4"])
fig.tight_layout()
plt.show()
