"""Draw the pixel-view anchors of a HAGMVC pyramid fitted on Handwritten.

Question: are the anchors inspectable, i.e. do the anchors of the "pix" view,
drawn as 16 x 15 images, look like digits at every level of the pyramid?

The "pix" view holds 240 pixel averages (values 0-6) over 2 x 3 windows of the
original 30 x 48 images, stored row by row as 16 rows of 15 values (``reshape(16,
15)``; checked by drawing samples of known class). Since every anchor is a convex
combination of training samples, the anchors are drawn on the same 0-6 scale.

Run ``python benchmarks/plot_hagmvc_anchors.py [--out PATH] [--seed S]``; it
writes ``docs/img/hagmvc_pix_anchors.png`` by default. Needs matplotlib.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from mvlearn_ext.cluster import HAGMVC
from mvlearn_ext.datasets import load_handwritten
from mvlearn_ext.metrics import clustering_accuracy

PIX_SHAPE = (16, 15)
N_SHOWN = 20  # anchors drawn per level


def _order_by_cluster(model, level):
    """Anchors of one level, ordered by the cluster that holds most of their mass.

    An anchor's mass on the samples is its row of the composite graph up to that
    level; the anchor is listed under the majority label of the samples it codes.
    """
    G = model.graphs_[0]
    for Z in model.graphs_[1 : level + 1]:
        G = Z @ G
    G = G.toarray()
    onehot = np.eye(model.n_clusters)[model.labels_]
    votes = G @ onehot  # (m_l, k): anchor mass per cluster
    cluster = votes.argmax(axis=1)
    strength = votes.max(axis=1)
    return np.lexsort((-strength, cluster)), cluster


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/img/hagmvc_pix_anchors.png")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    Xs, y = load_handwritten()
    pix = 3  # view order: fou, fac, kar, pix, zer, mor
    model = HAGMVC(n_clusters=10, n_levels=2, random_state=args.seed).fit(Xs)
    acc = clustering_accuracy(y, model.labels_)

    n_levels = len(model.anchors_)
    fig, axes = plt.subplots(
        n_levels, N_SHOWN, figsize=(N_SHOWN * 0.7, n_levels * 1.1 + 0.5), squeeze=False
    )
    for level in range(n_levels):
        anchors = model.anchors_[level][pix]
        order, cluster = _order_by_cluster(model, level)
        # Round robin over the clusters: the strongest anchor of every cluster,
        # then the second strongest of every cluster, and so on.
        by_cluster = [order[cluster[order] == c].tolist() for c in np.unique(cluster)]
        shown = [
            members[rank]
            for rank in range(max(len(members) for members in by_cluster))
            for members in by_cluster
            if rank < len(members)
        ][:N_SHOWN]
        for col, ax in enumerate(axes[level]):
            ax.axis("off")
            if col < len(shown):
                ax.imshow(anchors[shown[col]].reshape(PIX_SHAPE), cmap="gray_r", vmin=0, vmax=6)
        axes[level][0].set_title(
            f"level {level + 1}: {model.n_anchors_[level]} anchors", loc="left", fontsize=9
        )
    fig.suptitle(
        f"HAGMVC pixel-view anchors on Handwritten, seed {args.seed}, ACC {acc:.3f}",
        fontsize=10,
    )
    fig.tight_layout()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"wrote {out} (ACC {acc:.3f}, pyramid {model.n_anchors_})")


if __name__ == "__main__":
    main()
