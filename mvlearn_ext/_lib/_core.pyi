"""Type stubs of the private compiled core (see mvlearn_ext/_lib/__init__.py).

Every array argument must already have the exact dtype (float32 or float64,
the same for all arrays of one call); the core does not convert.
"""

from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

_F = TypeVar("_F", np.float32, np.float64)

def project_simplex(
    x: npt.NDArray[_F], out: npt.NDArray[_F], scale: float, n_threads: int
) -> bool: ...
def knn_anchors(
    X: npt.NDArray[_F], anchors: npt.NDArray[_F], n_neighbors: int, n_threads: int
) -> tuple[bool, npt.NDArray[_F], npt.NDArray[np.int64]]: ...
def knn_anchor_graph(
    X: npt.NDArray[_F], anchors: npt.NDArray[_F], n_neighbors: int, n_threads: int
) -> tuple[bool, npt.NDArray[_F], npt.NDArray[np.int64]]: ...
def hardware_threads() -> int: ...
def build_info() -> dict[str, Any]: ...
