"""Shared utilities: input validation, compiled kernels, Numba configuration."""

from mvlearn_ext._lib import (
    anchor_graph,
    effective_n_threads,
    kneighbors_anchors,
    project_simplex,
)

__all__ = [
    "anchor_graph",
    "effective_n_threads",
    "kneighbors_anchors",
    "project_simplex",
]
