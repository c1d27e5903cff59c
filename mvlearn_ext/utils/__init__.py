"""Shared utilities: input validation, compiled kernels, Numba configuration."""

from mvlearn_ext._lib import (
    anchor_graph,
    effective_n_jobs,
    kneighbors_anchors,
    project_simplex,
)
from mvlearn_ext.utils._validation import check_views_consistent, check_Xs, validate_views

__all__ = [
    "anchor_graph",
    "check_Xs",
    "check_views_consistent",
    "effective_n_jobs",
    "kneighbors_anchors",
    "project_simplex",
    "validate_views",
]
