"""Fast path to the compiled simplex projection for tiny, already-valid vectors.

:func:`mvlearn_ext.utils.project_simplex` validates with scikit-learn's
``check_array`` (about 0.3 ms a call); the inner loops of the planners and
QPs here project vectors of a handful of entries thousands of times, with
inputs they built themselves, so they take the unchecked entry of the
compiled kernel (:mod:`mvlearn_ext._lib._kernels`).
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext._lib import _kernels


def project_simplex_1d(v, scale=1.0):
    """Euclidean projection of a finite 1-D float64 vector onto the scaled simplex."""
    src = np.ascontiguousarray(v, dtype=np.float64).reshape(1, -1)
    try:
        return _kernels.project_simplex(src, float(scale))[0]
    except ValueError:
        raise ValueError("non-finite vector in a simplex projection") from None
