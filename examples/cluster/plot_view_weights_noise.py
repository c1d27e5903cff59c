"""
Learned view weights with pure-noise views
==========================================

:class:`~mvlearn_ext.cluster.HAGMVC` learns one weight per view without
labels (``view_weights="auto"``, the default): a view whose neighbourhoods
agree with the clusters of the other views, or that has more cluster
structure than Gaussian noise of its own covariance, gets a large weight; a
view that agrees with nothing gets a weight near 0, whatever its width. The
learned weights are in ``view_weights_`` (one row per pyramid level).

The data set ``blobs-1inf-2noise`` of the clustering suite has 600 samples in
4 clusters, seen through one informative 10-feature view and two 3-feature
views of pure noise. With ``view_weights="uniform"`` every standardised view
has the same total weight, so the two noise views outweigh the informative
one.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.cluster import HAGMVC
from mvlearn_ext.datasets import load_mvc_dataset
from mvlearn_ext.metrics import clustering_accuracy

Xs, y = load_mvc_dataset("blobs-1inf-2noise", return_Xs_y=True)
names = ["informative (10)", "noise (3)", "noise (3)"]

models = {
    "learned (auto)": HAGMVC(n_clusters=4, random_state=0).fit(Xs),
    "uniform": HAGMVC(n_clusters=4, view_weights="uniform", random_state=0).fit(Xs),
}
accuracy = {}
for label, model in models.items():
    accuracy[label] = clustering_accuracy(y, model.labels_)
    print(f"{label:>15}: weights {np.round(model.view_weights_[0], 3)}, ACC {accuracy[label]:.3f}")

# %%
# The learned weights put almost everything on the informative view, and the
# clusters are found; equal weights let the noise views decide.
fig, ax = plt.subplots(figsize=(6, 3.4))
pos = np.arange(len(Xs))
for offset, (label, model) in zip((-0.2, 0.2), models.items(), strict=True):
    weights = model.view_weights_[0]
    ax.bar(pos + offset, weights, 0.4, label=f"{label}: ACC {accuracy[label]:.2f}")
    for x, w in zip(pos + offset, weights, strict=True):
        ax.text(x, w + 0.01, f"{w:.2f}", ha="center", fontsize=8)
ax.set_xticks(pos, names)
ax.set_ylabel("view weight")
ax.set_ylim(0, 1.1)
ax.set_title("HAGMVC view weights on blobs-1inf-2noise")
ax.legend(loc="upper right", fontsize=8)
fig.tight_layout()
plt.show()
