"""Small Numba blocks shared by the families' kernels.

:func:`cholesky_solve` is the triangular solve pair of the families' small
dense systems.
"""

from __future__ import annotations

from mvlearn_ext.utils._numba import jit


@jit
def cholesky_solve(L, s, rhs, out):
    """``out[:s] = (L L^T)^{-1} rhs[:s]`` for the lower factor ``L[:s, :s]``.

    Forward then back substitution; ``out`` may be ``rhs``.
    """
    for a in range(s):
        acc = rhs[a]
        for e in range(a):
            acc -= L[a, e] * out[e]
        out[a] = acc / L[a, a]
    for a in range(s - 1, -1, -1):
        acc = out[a]
        for e in range(a + 1, s):
            acc -= L[e, a] * out[e]
        out[a] = acc / L[a, a]
