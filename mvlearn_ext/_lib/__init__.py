"""Validated Python façade over the compiled core ``mvlearn_ext._lib._core``.

The compiled module is private: its functions assume exact dtypes and check
only what memory safety needs. The functions here are the public entry points
(re-exported by :mod:`mvlearn_ext.utils`): they validate their arguments, name
the argument at fault in their errors, choose the dtype and the number of
threads, and call the unchecked entries of :mod:`mvlearn_ext._lib._kernels`
(the one route into the core, which the package's drivers use directly), which
release the GIL inside the kernels.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

try:
    from mvlearn_ext._lib import _core
except ImportError as exc:  # pragma: no cover - a broken install
    raise ImportError(
        "the compiled core mvlearn_ext._lib._core is missing or broken; mvlearn_ext has no "
        "pure-Python fallback. Reinstall from the source tree with a C++17 compiler: "
        "pip install -e .  (or pip install .)"
    ) from exc

from mvlearn_ext._lib import _kernels
from mvlearn_ext._lib._threads import MAX_THREADS, effective_n_jobs

__all__ = [
    "MAX_THREADS",
    "anchor_graph",
    "core_info",
    "effective_n_jobs",
    "kneighbors_anchors",
    "project_simplex",
]


def _as_float_matrix(X, name):
    if sp.issparse(X):
        raise TypeError(f"{name} is a scipy sparse matrix; this kernel needs a dense array")
    if np.iscomplexobj(X):
        raise ValueError(f"{name} holds complex values; only real numbers are supported")
    X = check_array(
        X,
        dtype=None,  # converted below: check_array would parse strings of digits
        order=None,
        copy=False,
        ensure_all_finite=False,  # checked inside the kernel, in the same pass
        ensure_min_samples=0,
        ensure_min_features=1,
        input_name=name,
    )
    if X.dtype.kind in "USV":  # as scikit-learn's dtype="numeric"
        raise TypeError(f"{name} must be a numeric array, got dtype {X.dtype}")
    if X.dtype not in (np.float64, np.float32):
        try:
            X = X.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be a numeric array, got dtype {X.dtype}") from exc
    if not X.flags.aligned:
        X = np.require(X, requirements="A")
    return X


def project_simplex(X, *, scale=1.0, axis=1, out=None, n_jobs=None):
    """Euclidean projection of every row (or column) onto the scaled simplex.

    Solves, for each row ``x`` of ``X`` independently,
    ``argmin_z ||z - x||^2`` subject to ``z >= 0`` and ``sum(z) = scale``,
    with Condat's O(m) expected-time algorithm (Condat, "Fast projection onto
    the simplex and the l1 ball", Math. Programming 158, 2016) in C++, in
    parallel over rows, without the GIL.

    Parameters
    ----------
    X : array-like of shape (n_rows, m)
        Points to project. float32 stays float32 (accumulation is in float64);
        other numeric dtypes are converted to float64. Any memory layout.
    scale : float, default=1.0
        The simplex size ``s > 0``.
    axis : {1, 0}, default=1
        ``1`` projects each row; ``0`` projects each column (the anchor-graph
        convention ``Z`` of shape (n_anchors, n_samples)).
    out : ndarray, optional
        Where to write the result: same shape and dtype as the converted ``X``.
        ``out=X`` projects in place.
    n_jobs : int, default=None
        Threads to use: ``None`` means 1, ``-1`` every available CPU (see
        :func:`~mvlearn_ext.utils.effective_n_jobs`).

    Returns
    -------
    Z : ndarray of the shape of ``X``
        The projections.

    See Also
    --------
    mvlearn_ext.moo.solve_simplex_qp : A quadratic programme over the simplex.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.utils import project_simplex
    >>> project_simplex(np.array([[0.5, 0.5, 2.0], [1.0, 0.2, 0.1]]))
    array([[0. , 0. , 1. ],
           [0.9, 0.1, 0. ]])
    """
    X = _as_float_matrix(X, "X")
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a real number, got {type(scale).__name__}")
    scale = float(scale)
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
    if axis not in (0, 1):
        raise ValueError(f"axis must be 0 or 1, got {axis!r}")
    nt = effective_n_jobs(n_jobs)
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out must be a numpy.ndarray, got {type(out).__name__}")
        if out.shape != X.shape or out.dtype != X.dtype:
            raise ValueError(
                f"out must have shape {X.shape} and dtype {X.dtype}, "
                f"got shape {out.shape} and dtype {out.dtype}"
            )
        if not out.flags.writeable:
            raise ValueError("out is read-only")
        # Each row is read whole before it is written, so only an out that
        # is X itself (same memory, same layout) may overlap it. The bounds
        # test of may_share_memory is O(1); shares_memory can be very slow.
        same_array = (
            out.__array_interface__["data"][0] == X.__array_interface__["data"][0]
            and out.strides == X.strides
        )
        if not same_array and np.may_share_memory(out, X):
            raise ValueError(
                "out overlaps X without being the same array; pass out=X for in place"
            )
    return _kernels.project_simplex(X, scale, axis=axis, out=out, n_threads=nt)


def _check_anchor_inputs(X, anchors, n_neighbors, name_k="n_neighbors"):
    X = _as_float_matrix(X, "X")
    anchors = _as_float_matrix(anchors, "anchors")
    if anchors.shape[0] < 1:
        raise ValueError("anchors must have at least one row (anchor)")
    if anchors.shape[1] != X.shape[1]:
        raise ValueError(
            f"X has {X.shape[1]} features but anchors have {anchors.shape[1]}; they must match"
        )
    dtype = np.float32 if X.dtype == anchors.dtype == np.float32 else np.float64
    X = X.astype(dtype, copy=False)
    anchors = anchors.astype(dtype, copy=False)
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, numbers.Integral):
        raise TypeError(f"{name_k} must be an int, got {type(n_neighbors).__name__}")
    return X, anchors, int(n_neighbors)


def kneighbors_anchors(X, anchors, *, n_neighbors=5, n_jobs=None):
    """The ``n_neighbors`` nearest anchors of every sample, by Euclidean distance.

    Exact search in C++ over tiles of anchors with a bounded heap per sample:
    memory is O(n_samples * n_neighbors), never O(n_samples * n_anchors).
    Squared distances are sums of squared differences (no cancellation). Ties
    are broken towards the lower anchor index. Any finite input is safe: a
    sample whose squared distances would overflow or lose their precision in
    the dtype (beyond about 1e154 or below 1e-146 in float64, 1e19 and 1e-16
    in float32) is searched again with its differences scaled by a power of
    two, an exact scaling.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    anchors : array-like of shape (n_anchors, n_features)
    n_neighbors : int, default=5
        Clipped to ``n_anchors``.
    n_jobs : int, default=None
        Threads to use: ``None`` means 1, ``-1`` every available CPU (see
        :func:`~mvlearn_ext.utils.effective_n_jobs`).

    Returns
    -------
    distances : ndarray of shape (n_samples, n_neighbors)
        Euclidean distances, sorted ascending along each row; float32 only if
        both inputs are. Finite whenever the distance is representable in
        that dtype.
    indices : ndarray of int64, shape (n_samples, n_neighbors)

    See Also
    --------
    anchor_graph : The weighted graph of the nearest anchors.
    sklearn.neighbors.NearestNeighbors : The general search.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.utils import kneighbors_anchors
    >>> X = np.array([[0.0], [1.0], [5.0]])
    >>> dist, index = kneighbors_anchors(X, np.array([[0.0], [4.0]]), n_neighbors=1)
    >>> index.ravel().tolist(), dist.ravel().tolist()
    ([0, 0, 1], [0.0, 1.0, 1.0])
    """
    X, anchors, k = _check_anchor_inputs(X, anchors, n_neighbors)
    if k < 1:
        raise ValueError(f"n_neighbors must be >= 1, got {k}")
    k = min(k, anchors.shape[0])
    return _kernels.kneighbors_anchors(X, anchors, k, n_threads=effective_n_jobs(n_jobs))


def anchor_graph(X, anchors, *, n_neighbors=5, n_jobs=None):
    """Parameter-free kNN anchor graph of Nie, Wang & Huang (KDD 2014).

    For each sample, with the squared distances ``d_1 <= ... <= d_{k+1}`` to
    its ``k + 1`` nearest anchors, the weight of its ``j``-th nearest anchor is

        z_j = (d_{k+1} - d_j) / (k d_{k+1} - sum_{h <= k} d_h),   j <= k,

    and 0 for the other anchors: the closed-form solution of the
    simplex-constrained, adaptively regularised nearest-anchor problem, with
    no bandwidth to tune. Each row is on the probability simplex.

    Edge cases: ``n_neighbors`` is clipped to ``n_anchors - 1`` (the formula
    needs the ``(k+1)``-th distance); with a single anchor every sample gets
    weight 1 on it; when the ``k + 1`` nearest anchors are equidistant the
    denominator is zero and the ``k`` nearest get ``1/k`` each (the limit of
    the formula). Each row stores exactly ``k`` entries, sorted by anchor
    index; an entry may be an explicit zero when anchors tie at the boundary.
    The weights do not depend on the unit of the data, and any finite input
    gives finite weights (distances that overflow or underflow in the dtype
    are recomputed as in :func:`kneighbors_anchors`).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    anchors : array-like of shape (n_anchors, n_features)
    n_neighbors : int, default=5
        ``k``, the number of anchors each sample connects to.
    n_jobs : int, default=None
        Threads to use: ``None`` means 1, ``-1`` every available CPU (see
        :func:`~mvlearn_ext.utils.effective_n_jobs`).

    Returns
    -------
    Z : scipy.sparse.csr_matrix of shape (n_samples, n_anchors)
        Row-stochastic anchor graph, float32 only if both inputs are.

    See Also
    --------
    kneighbors_anchors : The nearest anchors alone.
    mvlearn_ext.cluster.HAGMVC : Clustering on anchor graphs.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.utils import anchor_graph
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> anchors = np.array([[0.0], [2.0], [4.0]])
    >>> anchor_graph(X, anchors, n_neighbors=2).toarray()
    array([[0.57142857, 0.42857143, 0.        ],
           [0.5       , 0.5       , 0.        ],
           [0.        , 0.5       , 0.5       ]])
    """
    X, anchors, k = _check_anchor_inputs(X, anchors, n_neighbors)
    if k < 1:
        raise ValueError(f"n_neighbors must be >= 1, got {k}")
    k = min(k, anchors.shape[0] - 1)
    return _kernels.anchor_graph(X, anchors, k, n_threads=effective_n_jobs(n_jobs))


def core_info() -> dict:
    """Build information of the compiled core (compiler, SIMD level, threads)."""
    return dict(_core.build_info())
