"""
Fitting views stored on disk (zarr) by row blocks
=================================================

When the views do not fit in memory, give
:class:`~mvlearn_ext.cluster.HAGMVC` zarr arrays (or NumPy memmaps, or dask
arrays chunked by rows): ``fit`` then reads them by blocks of ``block_size``
rows, each block returns sums over its rows, and the sums are folded in block
order, so only one block of every view is in memory at a time. ``verbose=1``
shows a progress bar over the blocks of every pass. Here 60,000 samples of
three views are written to a temporary zarr store and clustered from it.
"""

import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import zarr

from mvlearn_ext.cluster import HAGMVC
from mvlearn_ext.datasets import make_multiview_blobs
from mvlearn_ext.metrics import clustering_accuracy

Xs, y = make_multiview_blobs(
    60_000, n_views=3, n_features=[16, 12, 8], n_clusters=6, cluster_std=4.0, random_state=0
)
BLOCK = 10_000

with tempfile.TemporaryDirectory() as tmp:
    store_path = str(Path(tmp) / "views.zarr")
    store = zarr.open_group(store_path, mode="w")
    for v, X in enumerate(Xs):
        array = store.create_array(
            f"view{v}", shape=X.shape, chunks=(BLOCK, X.shape[1]), dtype=X.dtype
        )
        array[:] = X
    del Xs  # from here on the views are read from disk only

    store = zarr.open_group(store_path, mode="r")
    views = [store[f"view{v}"] for v in range(3)]
    start = time.perf_counter()
    model = HAGMVC(n_clusters=6, block_size=BLOCK, verbose=1, random_state=0).fit(views)
    seconds = time.perf_counter() - start
    labels = np.asarray(model.labels_)

    # For the figure: the first two features of view 0 for 3,000 random rows.
    rows = np.sort(np.random.default_rng(0).choice(len(labels), 3000, replace=False))
    sample = views[0].get_orthogonal_selection((rows, slice(0, 2)))

print(f"{len(labels)} samples in {seconds:.1f} s, {model.n_anchors_[0]} anchors")
print(f"accuracy {clustering_accuracy(y, labels):.3f}")

# %%
# The 3,000 rows coloured by their cluster, with the fitted anchors of view 0
# (``anchors_[0][0]``, in the view's original units): each anchor is a convex
# combination of samples, so the anchors sit inside the clouds they code.
anchors = model.anchors_[0][0]
fig, ax = plt.subplots(figsize=(5.5, 4.2))
ax.scatter(sample[:, 0], sample[:, 1], c=labels[rows], s=4, cmap="tab10", alpha=0.5)
ax.scatter(anchors[:, 0], anchors[:, 1], marker="x", s=14, c="black", label="anchors")
ax.set_xlabel("view 0, feature 0")
ax.set_ylabel("view 0, feature 1")
ax.set_title(
    f"HAGMVC from zarr, blocks of {BLOCK:,} rows: ACC {clustering_accuracy(y, labels):.2f}"
)
ax.legend(loc="upper right")
fig.tight_layout()
plt.show()
