"""Data sets: the embedded Handwritten data and synthetic generators.

:func:`load_handwritten`
    The UCI "Multiple Features" handwritten digits, six views, shipped with
    the package (no download).
:func:`make_multiview_blobs`
    Gaussian clusters seen through several views, with per-view
    informativeness and noise.
"""

from mvlearn_ext.datasets._generators import make_multiview_blobs
from mvlearn_ext.datasets._handwritten import load_handwritten

__all__ = ["load_handwritten", "make_multiview_blobs"]
