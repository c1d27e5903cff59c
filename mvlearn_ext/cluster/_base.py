"""The plumbing every clusterer of :mod:`mvlearn_ext.cluster` shares.

Estimators (the in-memory and the block path):

* :class:`BaseClusterer` owns ``fit``: it resolves ``n_jobs`` once, sends
  dask, zarr and memmap views (or any view with ``block_size`` set) to the
  estimator's block path, validates in-memory views once and hands them to
  the estimator's ``_fit_views``; :class:`InductiveClusterer` adds ``predict``
  and :class:`EmbeddingClusterer` ``transform`` the same way (``_predict_views``,
  ``_transform_views``, which receive validated views).
* :func:`draw_seeds`, :meth:`BaseClusterer._fit_view_scaling` and
  :meth:`BaseClusterer._scale_views`: the seeds and the standardisation of the
  fit preambles.

Checks: :func:`check_anchors_cover_clusters`. Block paths (``_*_blocks.py``):
:func:`open_blocks` and :func:`labels_like_input` for
the fits, :func:`open_fitted_blocks` and :func:`labels_by_blocks` for ``predict``.

Nothing here computes a result: each piece is code the estimators share, kept in
the order they run it.
"""

from __future__ import annotations

import contextlib

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from mvlearn_ext.base import MultiViewClusterMixin
from mvlearn_ext.cluster._blockwise import (
    RowBlocks,
    _active_client,
    is_dask_array,
    map_labels,
    wants_blocks,
)
from mvlearn_ext.cluster._preprocessing import apply_view_scaling, fit_view_scaling
from mvlearn_ext.utils._threads import fit_threads, single_threaded_pools
from mvlearn_ext.utils._validation import _views_consistent

__all__ = [
    "BaseClusterer",
    "EmbeddingClusterer",
    "InductiveClusterer",
    "check_anchors_cover_clusters",
    "draw_seeds",
    "labels_by_blocks",
    "labels_like_input",
    "open_blocks",
    "open_fitted_blocks",
    "set_projected_anchor_fit",
]


def draw_seeds(random_state, n_seeds):
    """``(rng, seeds)``: the RandomState of ``random_state`` and ``n_seeds`` seeds drawn from it.

    The seeds are one ``randint(2**31 - 1, size=n_seeds)`` draw, as the LMVSC,
    SMVSC and EOMSC-CA fits and their block paths draw them.
    """
    rng = check_random_state(random_state)
    return rng, tuple(int(s) for s in rng.randint(np.iinfo(np.int32).max, size=n_seeds))


def check_anchors_cover_clusters(n_anchors, n_clusters, given):
    """Raise unless ``n_anchors >= n_clusters`` (``given``: the ``n_anchors`` argument)."""
    if n_anchors < n_clusters:
        raise ValueError(
            f"n_anchors={given} is below n_clusters={n_clusters}: the graph needs at "
            f"least as many anchors as components"
        )


class BaseClusterer(MultiViewClusterMixin, BaseEstimator):
    """``fit`` of the package's clusterers: checks, block dispatch, validation.

    A subclass implements ``_fit_views(Xs)`` on validated in-memory views and,
    when it has a block path, ``_fit_blocks(Xs)`` (imported on use: the block
    thread. Class settings: ``_min_views``, the number of views ``fit`` needs;
    ``_single_threaded``, whether ``fit`` and ``predict`` run with one
    BLAS/OpenMP thread throughout (both paths).

    Threads: an estimator with an ``n_jobs`` parameter runs ``fit``, ``predict``
    and ``transform`` inside :func:`~mvlearn_ext.utils._threads.fit_threads`
    (``n_jobs`` resolved once, one BLAS/OpenMP thread, Numba bounded by it); the
    resolved count is ``self._n_threads`` for its kernels, as scikit-learn's
    k-means keeps ``_n_threads``.
    """

    _min_views = 1
    _single_threaded = False
    _fit_blocks = None
    _predict_blocks = None

    def __sklearn_is_fitted__(self):
        # Fitted means labelled: the fitted attributes are set together at the end of fit.
        return hasattr(self, "labels_")

    def _wants_blocks(self, Xs, entry):
        return entry is not None and wants_blocks(Xs, getattr(self, "block_size", None))

    @contextlib.contextmanager
    def _pools(self):
        """The thread context of a call: ``n_jobs`` resolved (see the class docstring)."""
        if "n_jobs" in self._parameter_constraints:
            with fit_threads(self.n_jobs) as n_threads:
                self._n_threads = n_threads
                yield
        elif self._single_threaded:
            with single_threaded_pools():
                yield
        else:
            yield

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, Xs, y=None):
        """Fit the clusterer on the views and label the training samples.

        What is learned, and the fitted attributes, are described in the class
        docstring.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views (see :func:`mvlearn_ext.utils.validate_views`), with at
            least ``n_clusters`` samples; the anchor-graph subspace clusterers
            need at least two views. Clusterers with ``block_size`` also take
            dask arrays, zarr arrays and NumPy memmaps (their block path).
            With fewer distinct samples than ``n_clusters`` (every sample the
            same, for instance), no partition fills every cluster without
            splitting identical samples: ``fit`` warns (``ConvergenceWarning``)
            and the labels depend on how the method breaks the tie.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        with self._pools():
            if self._wants_blocks(Xs, self._fit_blocks):
                # The blocks are the parallelism and the driver's matrices are small:
                # BLAS and OpenMP run on one thread throughout a block fit.
                with single_threaded_pools():
                    return self._fit_blocks(Xs)
            Xs = self._validate_fit_views(
                Xs, min_views=self._min_views, n_clusters=self.n_clusters
            )
            return self._fit_views(Xs)

    def _fit_view_scaling(self, Xs, statistics=fit_view_scaling):
        """Set ``view_means_`` and ``view_scales_`` (None for ``scaling=None``)."""
        scale = self.scaling is not None
        self.view_means_, self.view_scales_ = statistics(Xs) if scale else (None, None)

    def _scale_views(self, Xs):
        """The views standardised by the fitted ``view_means_`` and ``view_scales_``."""
        return apply_view_scaling(Xs, self.view_means_, self.view_scales_)


class InductiveClusterer(BaseClusterer):
    """A :class:`BaseClusterer` that labels new samples (``_predict_views``)."""

    def predict(self, Xs):
        """Assign new samples to the fitted clusters.

        How a new sample is assigned is described in the class docstring.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            Views with the number and widths of the training views.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            The cluster of each sample; a lazy dask array for dask views on a
            block path.
        """
        with self._pools():
            if self._wants_blocks(Xs, self._predict_blocks):
                return self._predict_blocks(Xs)
            return self._predict_views(self._validate_predict_views(Xs))


class EmbeddingClusterer(InductiveClusterer):
    """An :class:`InductiveClusterer` that also embeds new samples (``_transform_views``)."""

    def transform(self, Xs):
        """Embed samples through the fitted model (the out-of-sample ``embedding_``).

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            Views with the number and widths of the training views.

        Returns
        -------
        F : ndarray of shape (n_samples, n_embedding)
            The embedding of each sample; on the training views it is
            ``embedding_`` (to the tolerance of the solver that codes them; see
            the class docstring).
        """
        with self._pools():
            return self._transform_views(self._validate_predict_views(Xs))

    def fit_transform(self, Xs, y=None, **fit_params):
        """Fit the clusterer, then embed the training samples: ``fit(Xs).transform(Xs)``.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views.
        y : None
            Ignored; present for API consistency.
        **fit_params : dict
            Passed to ``fit``.

        Returns
        -------
        F : ndarray of shape (n_samples, n_embedding)
            What :meth:`transform` returns on the training views.
        """
        return self.fit(Xs, y, **fit_params).transform(Xs)


# --------------------------------------------------------------------------- block paths


def open_blocks(est, Xs, *, min_views=1, name=None):
    """The :class:`RowBlocks` of ``Xs`` for ``est``'s block path, checked.

    Raises (as the in-memory validation does) when there are fewer than
    ``min_views`` views (``name`` names the estimator) or fewer samples than
    ``n_clusters``; sets ``n_views_`` and ``n_features_per_view_``.
    """
    blocks = RowBlocks(Xs, est.block_size)
    n, n_views, k = blocks.n_samples, len(blocks.widths), est.n_clusters
    if n_views < min_views:
        raise ValueError(f"Xs has {n_views} view; {name} needs at least {min_views} views")
    if n < k:
        raise ValueError(f"Xs has {n} samples but n_clusters={k}; need n_samples >= n_clusters")
    est.n_views_, est.n_features_per_view_ = n_views, blocks.widths
    return blocks


def set_projected_anchor_fit(est, fitted, n_anchors, n_components):
    """Set the attributes shared by the projected-anchor clusterers (SMVSC, EOMSCCA).

    ``fitted`` is their driver's result: per-view projections ``W`` and consensus
    anchors ``A`` (view ``v``'s anchors are ``(W_v A)^T``), the z-scoring, the
    graph and embedding (None by blocks), the view weights and the objective.
    """
    W, A = fitted.W, fitted.A
    est.view_means_, est.view_scales_ = fitted.view_means, fitted.view_scales
    est.n_anchors_, est.n_components_ = n_anchors, n_components
    est.projections_ = W
    est.consensus_anchors_ = A
    est.anchors_ = [(Wv @ A).T for Wv in W]
    est.anchor_graph_ = fitted.graph
    est.embedding_ = fitted.embedding
    est.view_weights_ = fitted.alpha
    est.objective_ = np.asarray(fitted.history)
    est.n_iter_ = fitted.n_iter


def labels_like_input(labels, Xs, blocks):
    """Labels as a dask array (chunked like the rows) when any view was a dask array.

    With a ``dask.distributed`` client, the row chunks are scattered to its workers and
    the array refers to them (one small task per chunk), as ``client.persist`` would
    leave it: ``da.from_array`` would put all ``n`` labels in the graph that every
    ``compute`` sends to the scheduler (76 MiB at ``n = 10^7``). Such labels live as long
    as the client. Without a client they stay in this process (``da.from_array``).
    """
    if not any(is_dask_array(X) for X in Xs):
        return labels
    import dask.array as da

    client = _active_client()
    if client is None:
        return da.from_array(labels, chunks=(blocks.row_chunks,))
    bounds = blocks.bounds
    chunks = [labels[bounds[b] : bounds[b + 1]] for b in range(blocks.n_blocks)]
    futures = client.scatter(chunks)
    return da.concatenate(
        [
            da.from_delayed(future, shape=chunk.shape, dtype=labels.dtype)
            for future, chunk in zip(futures, chunks, strict=True)
        ]
    )


def open_fitted_blocks(est, Xs):
    """The :class:`RowBlocks` of new views for ``est``'s block ``predict``, checked.

    Raises unless ``est`` is fitted and the views have the training views' number
    and widths.
    """
    check_is_fitted(est)
    blocks = RowBlocks(Xs, est.block_size)
    _views_consistent(est, blocks.views, reset=False)
    return blocks


def labels_by_blocks(est, Xs, blocks, task, params, name):
    """Labels of every block by ``task(params, None, *views)``, with one BLAS/OpenMP thread.

    Lazy (a dask array chunked like the rows) when any view of ``Xs`` is a dask
    array; ``name`` labels the progress bar (shown when ``est.verbose``).
    """
    with single_threaded_pools():
        return map_labels(
            blocks,
            task,
            params,
            lazy=any(is_dask_array(X) for X in Xs),
            progress=bool(est.verbose),
            desc=f"{name} predict",
        )
