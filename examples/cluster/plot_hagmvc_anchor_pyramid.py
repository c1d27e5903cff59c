"""
HAGMVC's anchor pyramid, drawn as digits
========================================

:class:`~mvlearn_ext.cluster.HAGMVC` keeps its anchors in each view's own
feature space, at every level of a pyramid that goes from fine to coarse, and
every anchor is a convex combination of training samples. With
``n_levels=2`` the pyramid has a fine level (``n_anchors``, by default up to
75 anchors per cluster) and a coarse one (half as many, ``ratio=0.5``). On the
embedded Handwritten data the "pix" view holds 240 pixel averages of each
digit, stored row by row as a 16 x 15 image, so the anchors of that view can
be looked at directly: ``anchors_[level][view]``.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.cluster import HAGMVC
from mvlearn_ext.datasets import load_handwritten
from mvlearn_ext.metrics import clustering_accuracy

Xs, y = load_handwritten()  # views: fou, fac, kar, pix, zer, mor
model = HAGMVC(n_clusters=10, n_levels=2, random_state=0).fit(Xs)
print("pyramid sizes:", model.n_anchors_)
print(f"ACC {clustering_accuracy(y, model.labels_):.3f}")

# %%
# Each anchor codes a set of samples through the graphs of the levels below
# it (``graphs_[level]``). We label an anchor by the cluster that holds most
# of its mass and show, per level, up to two anchors of every cluster. Each
# anchor reads as a smoothed digit; the coarse level shows the same ten shapes
# with fewer anchors per shape.
PIX = 3
n_levels = len(model.anchors_)
n_shown = 20
fig, axes = plt.subplots(n_levels, n_shown, figsize=(12, 0.75 * n_levels + 0.6), squeeze=False)
onehot = np.eye(model.n_clusters)[model.labels_]
mass = model.graphs_[0]  # (anchors of level 1, samples)
for level in range(n_levels):
    if level > 0:
        mass = model.graphs_[level] @ mass
    votes = np.asarray(mass @ onehot)  # anchor mass per cluster
    cluster = votes.argmax(axis=1)
    strength = votes.max(axis=1)
    shown = []
    for rank in range(2):
        for c in range(model.n_clusters):
            members = np.flatnonzero(cluster == c)
            members = members[np.argsort(-strength[members])]
            if rank < len(members):
                shown.append(members[rank])
    anchors = model.anchors_[level][PIX]
    for col, ax in enumerate(axes[level]):
        ax.axis("off")
        if col < len(shown):
            ax.imshow(anchors[shown[col]].reshape(16, 15), cmap="gray_r", vmin=0, vmax=6)
    axes[level][0].set_title(
        f"level {level + 1}: {model.n_anchors_[level]} anchors", loc="left", fontsize=9
    )
fig.suptitle("HAGMVC pixel-view anchors on Handwritten, two levels")
plt.show()
