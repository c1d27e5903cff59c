"""Type stubs of the private compiled core ``mvlearn_ext._lib._core``.

Only ``mvlearn_ext._lib`` imports it: the package calls it through the
unchecked entries of ``mvlearn_ext._lib._kernels``, users through the
validating façade (``mvlearn_ext._lib``, re-exported by ``mvlearn_ext.utils``).
Bindings: ``csrc/bindings/bind_<family>.cpp``, one array convention
(``csrc/bindings/bindings.hpp``).

Every array argument must already have the exact dtype (float32 or float64,
the same for all arrays of one call); the core does not convert (a wrong
dtype is a ``TypeError``). A wrong number of dimensions, mismatched shapes or
an unaligned or (where required) non-C-contiguous array is a ``ValueError``
that names the argument.
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

# Sparse multi-output GP algebra (csrc/src/gp.cpp): float64, C-contiguous only;
# an empty cotangent (size 0) stands for zero.
_D = npt.NDArray[np.float64]

def gp_kron_mv(A: _D, B: _D, X: _D, n_threads: int) -> _D: ...
def gp_kron_mv_vjp(A: _D, B: _D, X: _D, Ybar: _D, n_threads: int) -> tuple[_D, _D, _D]: ...
def gp_kron_solve(A: _D, B: _D, X: _D) -> tuple[bool, _D]: ...
def gp_kron_solve_vjp(A: _D, B: _D, Z: _D, Zbar: _D) -> tuple[bool, _D, _D, _D]: ...
def gp_kron_logdet(A: _D, B: _D) -> tuple[bool, float, _D, _D]: ...
def gp_pattern_sum(
    indptr: npt.NDArray[np.int64], indices: npt.NDArray[np.int64], V: _D, n_threads: int
) -> _D: ...
def gp_rbf_psi_stats(
    mu: _D, S: _D, Z: _D, lengthscales: _D, with_psi2: bool, n_threads: int
) -> tuple[_D, _D]: ...
def gp_rbf_psi_stats_vjp(
    mu: _D, S: _D, Z: _D, lengthscales: _D, psi1bar: _D, psi2bar: _D, n_threads: int
) -> tuple[_D, _D, _D, _D]: ...
def gp_masked_output_stats(
    Yt: _D, G: _D, W: _D, n_threads: int
) -> tuple[bool, _D, _D, _D, _D, _D]: ...
def gp_masked_output_stats_vjp(
    Yt: _D, G: _D, J: int, Dbar: _D, Ebar: _D, Cbar: _D, n_threads: int
) -> tuple[_D, _D]: ...
