"""The compiled core: simplex projection and the anchor graph, one thread."""

import numpy as np

from mvlearn_ext.utils import anchor_graph, project_simplex


class SimplexProjection:
    params = [[1_000, 100_000], [10, 100]]
    param_names = ["n_rows", "n_columns"]

    def setup(self, n_rows, n_columns):
        self.X = np.random.default_rng(0).normal(size=(n_rows, n_columns))

    def time_project_simplex(self, n_rows, n_columns):
        project_simplex(self.X, n_jobs=1)


class AnchorGraph:
    params = [[10_000, 100_000], [5, 10]]
    param_names = ["n_samples", "n_neighbors"]

    def setup(self, n_samples, n_neighbors):
        rng = np.random.default_rng(0)
        self.X = rng.normal(size=(n_samples, 32))
        self.anchors = rng.normal(size=(256, 32))

    def time_anchor_graph(self, n_samples, n_neighbors):
        anchor_graph(self.X, self.anchors, n_neighbors=n_neighbors, n_jobs=1)
