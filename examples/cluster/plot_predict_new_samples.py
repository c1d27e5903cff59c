"""
Assigning new samples with ``predict``
======================================

A fitted :class:`~mvlearn_ext.cluster.HAGMVC` assigns new samples without
refitting: :meth:`~mvlearn_ext.cluster.HAGMVC.predict` codes each new sample
on the fitted anchors with the standardisation of the training views and takes
the nearest cluster centre of the embedding. Here a quarter of the Handwritten
digits is held back, the model is fitted on the rest, and the held-back digits
are assigned. The figure is the contingency table of the held-back digits:
true digit against predicted cluster, clusters ordered by their best-matching
digit.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.model_selection import train_test_split

from mvlearn_ext.cluster import HAGMVC
from mvlearn_ext.datasets import load_handwritten
from mvlearn_ext.metrics import clustering_accuracy, contingency_table

Xs, y = load_handwritten()
index_train, index_new = train_test_split(
    np.arange(len(y)), test_size=0.25, stratify=y, random_state=0
)
Xs_train = [X[index_train] for X in Xs]
Xs_new = [X[index_new] for X in Xs]

model = HAGMVC(n_clusters=10, random_state=0).fit(Xs_train)
labels_new = model.predict(Xs_new)
print(
    f"accuracy on the fitted digits:     {clustering_accuracy(y[index_train], model.labels_):.3f}"
)
print(f"accuracy on the held-back digits:  {clustering_accuracy(y[index_new], labels_new):.3f}")

# %%
# Order the clusters by the digit they match best (Hungarian matching).
table = contingency_table(y[index_new], labels_new)
rows, cols = linear_sum_assignment(-table)
table = table[:, cols[np.argsort(rows)]]

fig, ax = plt.subplots(figsize=(5, 4.2))
image = ax.imshow(table, cmap="Blues")
for i, j in zip(*np.nonzero(table), strict=True):
    ax.text(j, i, table[i, j], ha="center", va="center", fontsize=7,
            color="white" if table[i, j] > table.max() / 2 else "black")  # fmt: skip
ax.set_xticks(range(10))
ax.set_yticks(range(10))
ax.set_xlabel("predicted cluster (matched to a digit)")
ax.set_ylabel("true digit")
ax.set_title("HAGMVC.predict on 500 held-back digits")
fig.colorbar(image, ax=ax, shrink=0.8)
fig.tight_layout()
plt.show()
