"""Multi-view clustering: fit time, peak memory and accuracy on Handwritten.

Handwritten (2,000 samples, six views) is shipped with the package. Every
estimator runs on its defaults with ``n_jobs=1``, so the figures do not depend
on the machine's core count; scikit-learn's 10-NN spectral clustering of the
per-view balanced concatenation is the peer.
"""

import numpy as np
from sklearn.cluster import SpectralClustering

from mvlearn_ext.cluster import DRMC, HAGMVC, LMVSC, ConcatKMeans, ConcatSpectral
from mvlearn_ext.datasets import load_handwritten
from mvlearn_ext.metrics import clustering_accuracy


def _balanced(Xs):
    """Each view z-scored and divided by the square root of its width, side by side."""
    blocks = []
    for X in Xs:
        std = X.std(axis=0)
        std[std == 0] = 1.0
        blocks.append((X - X.mean(axis=0)) / std / np.sqrt(X.shape[1]))
    return np.hstack(blocks)


class _Spectral10NN:
    def __init__(self, n_clusters, random_state):
        self.model = SpectralClustering(
            n_clusters=n_clusters,
            affinity="nearest_neighbors",
            n_neighbors=10,
            random_state=random_state,
        )

    def fit_predict(self, Xs):
        return self.model.fit_predict(_balanced(Xs))


MAKERS = {
    "HAGMVC": lambda: HAGMVC(n_clusters=10, random_state=0, n_jobs=1),
    "DRMC": lambda: DRMC(n_clusters=10, random_state=0, n_jobs=1),
    "LMVSC": lambda: LMVSC(n_clusters=10, random_state=0, n_jobs=1),
    "ConcatSpectral": lambda: ConcatSpectral(n_clusters=10, random_state=0, n_jobs=1),
    "ConcatKMeans": lambda: ConcatKMeans(n_clusters=10, random_state=0),
    "sklearn 10-NN spectral (balanced)": lambda: _Spectral10NN(10, 0),
}


class HandwrittenFit:
    params = list(MAKERS)
    param_names = ["estimator"]
    timeout = 300

    def setup(self, name):
        self.Xs, self.y = load_handwritten()
        MAKERS[name]().fit_predict(self.Xs)  # compile the Numba kernels before timing

    def time_fit_predict(self, name):
        MAKERS[name]().fit_predict(self.Xs)

    def peakmem_fit_predict(self, name):
        MAKERS[name]().fit_predict(self.Xs)

    def track_accuracy(self, name):
        return clustering_accuracy(self.y, MAKERS[name]().fit_predict(self.Xs))

    track_accuracy.unit = "ACC"
