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
    60_000, n_views=3, n_features=[16, 12, 8], n_clusters=6, cluster_std=2.5, random_state=0
)
BLOCK = 10_000

with tempfile.TemporaryDirectory() as tmp:
    store = zarr.open_group(str(Path(tmp) / "views.zarr"), mode="w")
    for v, X in enumerate(Xs):
        array = store.create_array(
            f"view{v}", shape=X.shape, chunks=(BLOCK, X.shape[1]), dtype=X.dtype
        )
        array[:] = X
    del Xs  # from here on the views are read from disk only

    views = [
        zarr.open_group(str(Path(tmp) / "views.zarr"), mode="r")[f"view{v}"] for v in range(3)
    ]
    start = time.perf_counter()
    model = HAGMVC(n_clusters=6, block_size=BLOCK, verbose=1, random_state=0).fit(views)
    seconds = time.perf_counter() - start
    labels = np.asarray(model.labels_)

print(f"{len(labels)} samples in {seconds:.1f} s, {model.n_anchors_[0]} anchors")
print(f"accuracy {clustering_accuracy(y, labels):.3f}")

# %%
# Cluster sizes against class sizes: with views read block by block the fit
# still recovers the six groups.
classes, class_sizes = np.unique(y, return_counts=True)
cluster_sizes = np.sort(np.bincount(labels, minlength=6))[::-1]
fig, ax = plt.subplots(figsize=(5.5, 3.2))
pos = np.arange(6)
ax.bar(pos - 0.2, np.sort(class_sizes)[::-1], 0.4, label="classes")
ax.bar(pos + 0.2, cluster_sizes, 0.4, label="HAGMVC clusters")
ax.set_xticks(pos, [f"#{i + 1}" for i in pos])
ax.set_xlabel("group, largest first")
ax.set_ylabel("samples")
ax.set_title(f"60,000 samples fitted from zarr in blocks of {BLOCK:,} rows")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()
