"""
MGDA and DREAM weights between two gradients
============================================

Given the gradients of several objectives,
:func:`~mvlearn_ext.federated.dream_weights` returns the simplex weights of the
common descent direction: with ``reg_rho=0`` the minimum-norm point of
their convex hull (MGDA), and with ``reg_rho > 0`` a point pulled towards
an anchor weighting. The direction ``d = G^T w`` is drawn for growing
``reg_rho``.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.federated import dream_weights

G = np.array([[2.0, 0.4], [-0.3, 1.0]])  # two objectives' gradients (rows)
anchor = np.array([0.5, 0.5])
rhos = [0.0, 0.5, 2.0, 10.0]
fig, ax = plt.subplots(figsize=(5, 5))
ax.plot(G[:, 0], G[:, 1], "0.6", lw=1, label="convex hull of the gradients")
for g, name in zip(G, ["g1", "g2"], strict=True):
    ax.annotate("", xy=g, xytext=(0, 0), arrowprops={"arrowstyle": "->", "color": "k", "lw": 1.5})
    ax.text(*(g * 1.05), name)
for rho in rhos:
    w = dream_weights(G, reg_rho=rho, anchor=anchor)
    d = w @ G
    ax.plot(*d, "o", label=f"reg_rho={rho:g}: w=({w[0]:.2f}, {w[1]:.2f})")
    print(f"reg_rho={rho:>4}: weights {np.round(w, 3)}, direction {np.round(d, 3)}")
ax.axhline(0, color="0.85", lw=0.8)
ax.axvline(0, color="0.85", lw=0.8)
ax.set_aspect("equal")
ax.legend(fontsize=7, loc="upper left")
ax.set_title("MGDA (reg_rho=0) and DREAM's anchored weights")
fig.tight_layout()
plt.show()
