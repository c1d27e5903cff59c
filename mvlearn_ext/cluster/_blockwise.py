"""Row-block map-reduce for the anchor clusterers: dask arrays, zarr arrays, memmaps.

The anchor methods only ever need a few rows at a time: statistics of the
views, the graph of a block of samples on the anchors, sums of small
(``m x m``, ``m x d``) matrices over blocks, and an assignment of each block.
This module is the driver that runs such a pass over row blocks:

* :func:`wants_blocks` tells whether a list of views asks for the block path
  (a view is a dask array, a zarr array or a NumPy memmap);
* :class:`RowBlocks` holds the views split into row blocks (dask arrays with the
  same row chunks in every view, or NumPy arrays cut every ``block_size`` rows);
* :meth:`RowBlocks.map` runs a function on every block, on the dask scheduler in
  use (a ``dask.distributed.Client`` if one is active, else a local thread pool)
  or in the calling thread for NumPy views, and yields the results **in block
  order**, whatever the order in which the blocks finish. Callers fold them in
  that order, so a reduction does not depend on the number of workers or on
  where the blocks ran;
* :func:`moments_of_block`, :func:`merge_moments`: per-feature means and variances by
  blocks (Chan, Golub & LeVeque's pairwise update, folded in block order).

dask is imported only inside the functions that need it: importing
:mod:`mvlearn_ext` (or this module) never imports dask.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor, as_completed
from numbers import Integral

import numpy as np

from mvlearn_ext.cluster._preprocessing import (
    constant_columns,
    distinct_samples,
    merge_distinct,
    warn_if_few_distinct,
)

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "RowBlocks",
    "draw_rows",
    "is_dask_array",
    "merge_moments",
    "moments_of_block",
    "wants_blocks",
]

#: Rows per block of on-disk views (zarr, memmap) when no ``block_size`` is given.
DEFAULT_BLOCK_SIZE = 65_536


def is_dask_array(X):
    """Whether ``X`` is a dask array (checked without importing dask)."""
    return type(X).__module__.startswith("dask.") and hasattr(X, "chunks")


def _is_zarr_array(X):
    return type(X).__module__.split(".")[0] == "zarr" and hasattr(X, "shape")


def wants_blocks(Xs, block_size=None):
    """Whether the views ``Xs`` go through the block path.

    True when any view is a dask array, a zarr array or a NumPy memmap, or when
    ``block_size`` is an int (the block algorithm on NumPy views).
    """
    if block_size is not None:
        return True
    if isinstance(Xs, np.ndarray) or not hasattr(Xs, "__iter__"):
        return False
    return any(is_dask_array(X) or _is_zarr_array(X) or isinstance(X, np.memmap) for X in Xs)


def _check_block_size(block_size):
    if block_size is None:
        return DEFAULT_BLOCK_SIZE
    if not isinstance(block_size, Integral) or isinstance(block_size, bool) or block_size < 1:
        raise ValueError(f"block_size must be a positive int or None, got {block_size!r}")
    return int(block_size)


def _bounds_from_sizes(sizes):
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


class RowBlocks:
    """Views split into row blocks, with a map over blocks in a fixed order.

    Parameters
    ----------
    Xs : list of array-like of shape (n_samples, n_features_v)
        NumPy arrays, NumPy memmaps, zarr arrays or dask arrays (mixed is allowed
        as long as the dask arrays share their row chunks).
    block_size : int or None
        Rows per block for the views that are not dask arrays (NumPy, memmap,
        zarr); ``None`` means :data:`DEFAULT_BLOCK_SIZE`. Dask arrays keep their
        own row chunks; the other views are then cut like them.
    name : str, default="Xs"
        The argument name used in error messages.

    Raises
    ------
    ValueError
        If the views are not a non-empty list of 2-D arrays with the same number
        of rows, if two dask views have different row chunks, or if a view is
        empty or not numeric.
    """

    def __init__(self, Xs, block_size=None, *, name="Xs"):
        if isinstance(Xs, np.ndarray) or is_dask_array(Xs) or not hasattr(Xs, "__len__"):
            raise ValueError(f"{name} must be a list of views (2-D arrays), got {type(Xs)!r}")
        if len(Xs) == 0:
            raise ValueError(f"{name} must hold at least one view")
        size = _check_block_size(block_size)
        views = list(Xs)
        for v, X in enumerate(views):
            shape = getattr(X, "shape", None)
            if shape is None:
                views[v] = X = np.asarray(X)
                shape = X.shape
            if len(shape) != 2:
                raise ValueError(f"{name}[{v}] must be 2-D, got shape {tuple(shape)}")
            if is_dask_array(X) and any(np.isnan(c) for c in X.chunks[0]):
                raise ValueError(
                    f"{name}[{v}] has unknown row chunk sizes; call X.compute_chunk_sizes() first"
                )
            if shape[0] == 0 or shape[1] == 0:
                raise ValueError(f"{name}[{v}] is empty (shape {tuple(shape)})")
            kind = np.dtype(X.dtype).kind
            if kind not in "biuf":
                raise ValueError(f"{name}[{v}] must be numeric, got dtype {X.dtype}")
        n = int(views[0].shape[0])
        for v, X in enumerate(views):
            if int(X.shape[0]) != n:
                raise ValueError(
                    f"all views must have the same number of samples: {name}[0] has {n}, "
                    f"{name}[{v}] has {X.shape[0]}"
                )
        row_chunks = None
        first_dask = None
        for v, X in enumerate(views):
            if is_dask_array(X):
                if row_chunks is None:
                    row_chunks, first_dask = tuple(X.chunks[0]), v
                elif tuple(X.chunks[0]) != row_chunks:
                    raise ValueError(
                        f"{name}[{v}] has row chunks {_short(X.chunks[0])} but "
                        f"{name}[{first_dask}] has {_short(row_chunks)}: every view must be "
                        "chunked the same way along the rows (rechunk them, e.g. "
                        "X.rechunk({0: n_rows_per_chunk, 1: -1}))"
                    )
        if row_chunks is None:
            row_chunks = tuple(min(size, n - s) for s in range(0, n, size))
        # Memmaps run on dask's threads when dask is installed, else block after
        # block in the calling thread (slicing a memmap reads only that block).
        self.uses_dask = any(is_dask_array(X) or _is_zarr_array(X) for X in views) or (
            any(isinstance(X, np.memmap) for X in views) and _dask_installed()
        )
        self.n_samples = n
        self.widths = tuple(int(X.shape[1]) for X in views)
        self.bounds = _bounds_from_sizes(row_chunks)
        self.n_blocks = len(row_chunks)
        self.row_chunks = row_chunks
        if self.uses_dask:
            import dask.array as da

            wrapped = []
            for X in views:
                if not is_dask_array(X):
                    X = da.from_array(_file_of(X), chunks=(row_chunks, -1), asarray=True)
                elif len(X.chunks[1]) > 1:
                    X = X.rechunk({1: -1})
                wrapped.append(X)
            self.views = wrapped
        else:
            self.views = [np.asarray(X) for X in views]

    def local_rows(self, rows):
        """Split sorted global row indices into ``[(block, local indices), ...]``."""
        rows = np.asarray(rows, dtype=np.int64)
        block_of = np.searchsorted(self.bounds, rows, side="right") - 1
        out = [np.empty(0, dtype=np.int64) for _ in range(self.n_blocks)]
        for b in np.unique(block_of):
            out[b] = rows[block_of == b] - self.bounds[b]
        return out

    def map(self, func, shared=None, per_block=None, *, progress=False, desc="blocks"):
        """Yield ``func(shared, per_block[b], *views_block_b)`` for every block ``b``, in order.

        ``shared`` is sent once to the scheduler (a large constant such as the
        anchors); ``per_block`` is a list with one small argument per block (or
        None). The results arrive in any order and are yielded in block order, so
        a fold over them is the same whatever the scheduler did.
        """
        per_block = [None] * self.n_blocks if per_block is None else per_block
        bar = _progress_bar(self.n_blocks, desc) if progress else None
        try:
            if not self.uses_dask:
                for b in range(self.n_blocks):
                    rows = slice(int(self.bounds[b]), int(self.bounds[b + 1]))
                    result = func(shared, per_block[b], *(X[rows] for X in self.views))
                    if bar is not None:
                        bar.update(1)
                    yield result
                return
            yield from self._map_dask(func, shared, per_block, bar)
        finally:
            if bar is not None:
                bar.close()

    def _map_dask(self, func, shared, per_block, bar):
        import dask

        client = _active_client()
        blocks = [X.to_delayed().ravel() for X in self.views]
        shared_d = dask.delayed(shared, pure=True) if shared is not None else None
        fn = dask.delayed(func, pure=True)
        tasks = [
            fn(shared_d, per_block[b], *(blk[b] for blk in blocks)) for b in range(self.n_blocks)
        ]
        pending, next_block = {}, 0
        if client is not None:
            from distributed import as_completed as completed

            futures = client.compute(tasks)
            index = {f.key: b for b, f in enumerate(futures)}
            for future in completed(futures):
                pending[index[future.key]] = future
                if bar is not None:
                    bar.update(1)
                while next_block in pending:
                    result = pending.pop(next_block).result()
                    next_block += 1
                    yield result
            return
        workers = dask.config.get("num_workers", None) or os.cpu_count() or 1
        with ThreadPoolExecutor(max_workers=int(workers)) as pool:
            futures = {
                pool.submit(dask.compute, task, scheduler="synchronous"): b
                for b, task in enumerate(tasks)
            }
            for future in as_completed(futures):
                pending[futures[future]] = future
                if bar is not None:
                    bar.update(1)
                while next_block in pending:
                    (result,) = pending.pop(next_block).result()
                    next_block += 1
                    yield result


class _MemmapFile:
    """A memmap's file, opened again where a block is read.

    ``da.from_array`` of a memmap puts the memmap in the graph, and a memmap pickles
    with all its data: on a ``dask.distributed`` client every pass sent the views
    whole. This reader pickles as its path, offset, shape and dtype; the workers
    read their rows from the file (as they read a zarr store), so they must see it.
    """

    def __init__(self, X):
        self.filename = os.fspath(X.filename)
        self.offset = int(X.offset)
        self.shape = tuple(X.shape)
        self.dtype = X.dtype
        self.ndim = X.ndim
        self.order = "C" if X.flags.c_contiguous else "F"
        self.mtime = os.path.getmtime(self.filename)

    def __dask_tokenize__(self):
        return (type(self).__name__, self.filename, self.mtime, self.offset, self.shape,
                self.dtype.str, self.order)  # fmt: skip

    def __getitem__(self, key):
        mapped = np.memmap(
            self.filename, dtype=self.dtype, mode="r", offset=self.offset, shape=self.shape,
            order=self.order,
        )  # fmt: skip
        return np.array(mapped[key])


def _file_of(X):
    """A :class:`_MemmapFile` for a memmap over its whole mapping, else ``X`` itself.

    Only an array whose base is the ``mmap`` object starts at ``X.offset`` (a slice of
    a memmap keeps its parent's offset), and only a contiguous one is read back as it
    was laid out.
    """
    import mmap

    if (
        isinstance(X, np.memmap)
        and isinstance(X.base, mmap.mmap)
        and X.filename is not None
        and (X.flags.c_contiguous or X.flags.f_contiguous)
    ):
        return _MemmapFile(X)
    return X


def _dask_installed():
    from importlib.util import find_spec

    try:
        return find_spec("dask") is not None
    except ValueError:  # sys.modules["dask"] is None: reported missing
        return False


def _short(chunks):
    chunks = tuple(chunks)
    return str(chunks) if len(chunks) <= 4 else f"({chunks[0]}, {chunks[1]}, ..., {chunks[-1]})"


def _active_client():
    """The default ``dask.distributed`` client, or None (never imports distributed itself)."""
    import sys

    if "distributed" not in sys.modules:
        return None
    from distributed import default_client

    try:
        return default_client()
    except ValueError:
        return None


def _progress_bar(total, desc):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="block", leave=False)


# --------------------------------------------------------------------------- moments


def draw_rows(random_state, n, size):
    """``size`` sorted random rows of ``n``, or every row when ``size`` is None or ``>= n``.

    ``random_state`` (a ``RandomState``) is drawn from only in the first case.
    """
    if size is None or n <= size:
        return np.arange(n)
    return np.sort(random_state.choice(n, size=size, replace=False))


def moments_of_block(X):
    """``(count, mean, M2)`` of the columns of one block, in float64."""
    X = np.asarray(X, dtype=np.float64)
    mean = X.mean(axis=0)
    centred = X - mean
    return X.shape[0], mean, np.einsum("ij,ij->j", centred, centred)


def merge_moments(a, b):
    """Merge two ``(count, mean, M2)`` triples (Chan, Golub & LeVeque, 1979)."""
    if a is None:
        return b
    na, ma, sa = a
    nb, mb, sb = b
    n = na + nb
    delta = mb - ma
    mean = ma + delta * (nb / n)
    m2 = sa + sb + delta * delta * (na * nb / n)
    return n, mean, m2


def scaling_from_moments(moments, *, unit_view_variance, dtype):
    """The ``(mean, scale)`` of :func:`~mvlearn_ext.cluster._preprocessing.view_statistics`."""
    n, mean, m2 = moments
    scale = np.sqrt(np.maximum(m2, 0.0) / n)
    scale[constant_columns(mean, scale, dtype)] = 1.0
    if unit_view_variance:
        scale = scale * np.sqrt(mean.shape[0])
    return mean, scale


def _stats_task(n_clusters, rows, *views):
    """Per-view finiteness and moments, the rows ``rows`` and the distinct samples of a block.

    The distinct samples are at most ``n_clusters`` of them (see
    :func:`~mvlearn_ext.cluster._preprocessing.distinct_samples`).
    """
    finite = [np.dtype(X.dtype).kind not in "fc" or bool(np.isfinite(X).all()) for X in views]
    # A block with NaN or infinity makes the driver raise; its moments are never used, and
    # computing them would only warn (inf - inf) before the clear error.
    moments = [moments_of_block(X) if ok else None for X, ok in zip(views, finite, strict=True)]
    distinct = distinct_samples(views, n_clusters) if all(finite) else None
    return finite, moments, [np.asarray(X)[rows] for X in views], distinct


def statistics_pass(blocks, wanted, *, n_clusters, progress, name):
    """The first pass of every block fit: finiteness, column moments and chosen rows.

    Reads every block once; raises ``ValueError`` naming the view if one holds NaN or
    infinity; folds the per-block column moments in block order (Chan, Golub &
    LeVeque), so the result does not depend on where the blocks ran. Warns
    (``ConvergenceWarning``) when the views hold fewer distinct samples than
    ``n_clusters`` (:func:`~mvlearn_ext.cluster._preprocessing.warn_if_few_distinct`).

    Parameters
    ----------
    blocks : RowBlocks
    wanted : ndarray of int
        Sorted global row indices to bring back (random rows, the first ``m`` rows...).
    n_clusters : int
        The number of clusters of the fit.
    progress : bool
        Show a progress bar over the blocks.
    name : str
        The estimator's name, for the progress bar and the warning.

    Returns
    -------
    moments : list of tuple
        Per view, the merged ``(count, mean, M2)`` (see :func:`moments_of_block`).
    picked : list of ndarray
        Per view, the rows ``wanted`` in their original order and dtype.
    """
    n_views = len(blocks.widths)
    moments = [None] * n_views
    picked = [[] for _ in range(n_views)]
    distinct = None  # up to n_clusters distinct samples of the blocks so far
    for finite, block_moments, rows, block_distinct in blocks.map(
        _stats_task, n_clusters, blocks.local_rows(wanted), progress=progress,
        desc=f"{name} statistics",
    ):  # fmt: skip
        for v, ok in enumerate(finite):
            if not ok:
                raise ValueError(f"Xs[{v}] contains NaN or infinity")
        for v in range(n_views):
            moments[v] = merge_moments(moments[v], block_moments[v])
            picked[v].append(rows[v])
        if distinct is None:
            distinct = block_distinct
        elif distinct.shape[0] < n_clusters:
            distinct = merge_distinct(distinct, block_distinct, n_clusters)
    warn_if_few_distinct(name, distinct.shape[0], n_clusters)
    return moments, [np.concatenate(rows) for rows in picked]


def map_labels(blocks, task, params, *, lazy, progress, desc):
    """Labels of every row block by ``task(params, None, *block_views)``.

    With ``lazy`` (the user gave dask arrays), a dask array with the blocks'
    row chunks (``params`` is shared once through the graph); otherwise the
    blocks run now through ``blocks.map`` (with a progress bar when
    ``progress``) and the labels come back as one NumPy array.
    """
    if lazy:
        import dask
        import dask.array as da

        shared = dask.delayed(params, pure=True)
        delayed_task = dask.delayed(task, pure=True)
        parts = [X.to_delayed().ravel() for X in blocks.views]
        return da.concatenate(
            [
                da.from_delayed(
                    delayed_task(shared, None, *(p[b] for p in parts)),
                    shape=(size,),
                    dtype=np.intp,
                )
                for b, size in enumerate(blocks.row_chunks)
            ]
        )
    return np.concatenate(list(blocks.map(task, params, progress=progress, desc=desc)))
