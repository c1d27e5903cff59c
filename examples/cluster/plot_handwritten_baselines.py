"""
Clustering Handwritten: HAG-MVC and DRMC beside a concatenation baseline
========================================================================

The six views of the embedded UCI Handwritten data (2,000 digits) are
clustered by :class:`~mvlearn_ext.cluster.HAGMVC` and
:class:`~mvlearn_ext.cluster.DRMC` (both reconstructions from their papers'
abstracts) and by :class:`~mvlearn_ext.cluster.ConcatKMeans`, k-means on the
standardised, concatenated views. The scores are whatever the fits give on
seed 0; the benchmark page reports them over several seeds.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.cluster import DRMC, HAGMVC, ConcatKMeans
from mvlearn_ext.datasets import load_handwritten
from mvlearn_ext.metrics import clustering_accuracy, normalized_mutual_info

Xs, y = load_handwritten()
models = {
    "ConcatKMeans": ConcatKMeans(n_clusters=10, random_state=0),
    "HAG-MVC": HAGMVC(n_clusters=10, random_state=0),
    "DRMC": DRMC(n_clusters=10, random_state=0),
}
scores = {}
for name, model in models.items():
    start = time.perf_counter()
    labels = model.fit_predict(Xs)
    seconds = time.perf_counter() - start
    scores[name] = (clustering_accuracy(y, labels), normalized_mutual_info(y, labels))
    print(f"{name:>12}: ACC {scores[name][0]:.3f}  NMI {scores[name][1]:.3f}  ({seconds:.1f} s)")

# %%
# Accuracy (after the best matching of clusters to classes) and NMI.
fig, ax = plt.subplots(figsize=(6, 3.5))
width = 0.38
pos = np.arange(len(scores))
acc = [s[0] for s in scores.values()]
nmi = [s[1] for s in scores.values()]
ax.bar(pos - width / 2, acc, width, label="ACC")
ax.bar(pos + width / 2, nmi, width, label="NMI")
for x, a, b in zip(pos, acc, nmi, strict=True):
    ax.text(x - width / 2, a + 0.01, f"{a:.2f}", ha="center", fontsize=8)
    ax.text(x + width / 2, b + 0.01, f"{b:.2f}", ha="center", fontsize=8)
ax.set_xticks(pos, list(scores))
ax.set_ylim(0, 1.08)
ax.set_ylabel("score")
ax.set_title("Handwritten, 6 views, seed 0")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
