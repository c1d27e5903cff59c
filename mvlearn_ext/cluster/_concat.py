"""Clustering of the concatenated views: the standard multi-view baselines.

:class:`ConcatKMeans` (k-means) and :class:`ConcatSpectral` (spectral
clustering on a k-nearest-neighbour graph) put the views side by side, after
one of two scalings: ``"zscore"`` (every feature centred and scaled to unit
variance) or ``"balanced"`` (the same, then every view divided by the square
root of its width, so that each view has total variance 1 and weighs the
same whatever its number of features).
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.cluster import KMeans, SpectralClustering
from sklearn.neighbors import kneighbors_graph
from sklearn.utils._param_validation import Interval, StrOptions
from threadpoolctl import threadpool_limits

from mvlearn_ext.cluster._base import BaseClusterer, InductiveClusterer
from mvlearn_ext.cluster._preprocessing import (
    distinct_samples,
    fit_view_scaling,
    warn_if_few_distinct,
)
from mvlearn_ext.utils._progress import log_message
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT

__all__ = ["ConcatKMeans", "ConcatSpectral"]

_SCALINGS = ("zscore", "balanced")


def _fit_scaling(Xs, scaling):
    """``(means, scales)`` of the views for ``scaling``, or ``(None, None)`` for None."""
    if scaling is None:
        return None, None
    return fit_view_scaling(Xs, unit_view_variance=scaling == "balanced")


def _concatenate(Xs, means, scales):
    """The scaled views side by side, in their common dtype."""
    dtype = np.result_type(*Xs)
    if means is None:
        return np.hstack(Xs).astype(dtype, copy=False)
    blocks = [
        (X - mean.astype(dtype)) / scale.astype(dtype)
        for X, mean, scale in zip(Xs, means, scales, strict=True)
    ]
    return np.hstack(blocks).astype(dtype, copy=False)


class ConcatKMeans(InductiveClusterer):
    """K-means on the column-concatenation of the (standardised) views.

    The views are optionally scaled (every feature centred and scaled to
    unit variance with statistics learned at ``fit``, and with
    ``scaling="balanced"`` every view further divided by the square root of
    its width), put side by side into one matrix of shape ``(n_samples, sum_v n_features_v)``, and
    clustered by k-means (Lloyd's algorithm with k-means++ seeding,
    scikit-learn's :class:`~sklearn.cluster.KMeans`). This is the
    feature-concatenation baseline that multi-view clustering methods are
    measured against (Bickel & Scheffer, 2004; Kumar, Rai & Daumé, 2011): a
    method that does not beat it does not use the views.

    Parameters
    ----------
    n_clusters : int, default=8
        The number of clusters.
    scaling : {"zscore", "balanced"} or None, default="zscore"
        How the views are scaled before they are concatenated, with the
        statistics of the training views (reused by :meth:`predict`).
        ``"zscore"``: every feature is centred and scaled to unit variance
        (constant features are centred only), so a view weighs in proportion
        to its number of features. ``"balanced"``: the same, then every view
        is divided by ``sqrt(n_features_v)``, so that every view has total
        variance 1 and weighs the same. ``None``: the views enter in their
        own units, so a view with a larger spread or more features weighs
        more.
    n_init : int, default=10
        Number of k-means runs from different k-means++ seeds; the run with
        the smallest inertia is kept.
    max_iter : int, default=300
        Maximum number of Lloyd iterations per run.
    tol : float, default=1e-4
        Convergence tolerance on the change of the centres, relative to the
        mean variance of the concatenated data (as in ``KMeans``).
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means++ initialisations; an int gives the same result at
        every call. Passed to :class:`~sklearn.cluster.KMeans`, which
        converts it once per ``fit``.
    verbose : int, default=0
        Print the progress of ``fit`` to standard error: a line per fit, and
        with 2 or more scikit-learn's k-means iterations.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The cluster of each training sample.
    cluster_centers_ : ndarray of shape (n_clusters, sum_v n_features_v)
        The centres, in the concatenated (scaled) space, view after view.
    inertia_ : float
        Sum of squared distances of the training samples to their centre,
        in that space.
    n_iter_ : int
        Lloyd iterations of the retained run.
    view_means_ : list of ndarray of shape (n_features_v,) or None
        Per-view feature means used to scale (``None`` if ``scaling=None``).
    view_scales_ : list of ndarray of shape (n_features_v,) or None
        Per-view feature divisors: the standard deviations (1 for constant
        features), times ``sqrt(n_features_v)`` if ``scaling="balanced"``;
        ``None`` if ``scaling=None``.
    kmeans_ : sklearn.cluster.KMeans
        The fitted k-means on the concatenated views.
    n_views_ : int
        Number of views seen at ``fit``.
    n_features_per_view_ : tuple of int
        Number of features of each view seen at ``fit``.

    See Also
    --------
    sklearn.cluster.KMeans : The single-view algorithm used on the concatenation.
    ConcatSpectral : Spectral clustering of the concatenation.
    mvlearn_ext.compose.MultiViewAdapter : Use it on one array split into views.

    Notes
    -----
    Views that are float32 throughout are clustered in float32; otherwise in
    float64. With ``scaling="zscore"`` each view weighs in proportion to its
    number of features (on Handwritten, the 240-feature pixel view 40 times
    the 6-feature morphological one); ``scaling="balanced"`` makes them
    weigh equally, which also gives a pure-noise view as much weight as an
    informative one.

    References
    ----------
    S. Bickel and T. Scheffer, "Multi-view clustering", in Proc. IEEE
    International Conference on Data Mining (ICDM), 2004.

    A. Kumar, P. Rai and H. Daumé III, "Co-regularized multi-view spectral
    clustering", in Advances in Neural Information Processing Systems 24, 2011.

    D. Arthur and S. Vassilvitskii, "k-means++: the advantages of careful
    seeding", in Proc. ACM-SIAM Symposium on Discrete Algorithms (SODA), 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics import adjusted_rand_score
    >>> from mvlearn_ext.cluster import ConcatKMeans
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1, 2], 20)
    >>> centers_0, centers_1 = rng.normal(scale=8, size=(3, 4)), rng.normal(scale=8, size=(3, 2))
    >>> Xs = [centers_0[y] + rng.normal(size=(60, 4)), centers_1[y] + rng.normal(size=(60, 2))]
    >>> model = ConcatKMeans(n_clusters=3, random_state=0).fit(Xs)
    >>> model.n_views_, model.n_features_per_view_, model.cluster_centers_.shape
    (2, (4, 2), (3, 6))
    >>> float(adjusted_rand_score(y, model.labels_))
    1.0
    """

    _single_threaded = True

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "scaling": [StrOptions(set(_SCALINGS)), None],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        scaling="zscore",
        n_init=10,
        max_iter=300,
        tol=1e-4,
        random_state=None,
        verbose=0,
    ):
        self.n_clusters = n_clusters
        self.scaling = scaling
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    def _concatenate(self, Xs):
        """The scaled views side by side, in their common dtype."""
        return _concatenate(Xs, self.view_means_, self.view_scales_)

    def _fit_views(self, Xs):
        n_distinct = distinct_samples(Xs, self.n_clusters).shape[0]
        warn_if_few_distinct(type(self).__name__, n_distinct, self.n_clusters)
        self.view_means_, self.view_scales_ = _fit_scaling(Xs, self.scaling)
        kmeans = KMeans(
            n_clusters=self.n_clusters,
            init="k-means++",
            n_init=self.n_init,
            max_iter=self.max_iter,
            tol=self.tol,
            random_state=self.random_state,
            algorithm="lloyd",
            verbose=max(int(self.verbose) - 1, 0),
        )
        start = time.perf_counter()
        Z = self._concatenate(Xs)
        self.kmeans_ = kmeans.fit(Z)
        self.labels_ = self.kmeans_.labels_.astype(np.intp)
        self.cluster_centers_ = self.kmeans_.cluster_centers_
        self.inertia_ = float(self.kmeans_.inertia_)
        self.n_iter_ = int(self.kmeans_.n_iter_)
        log_message(
            type(self).__name__,
            f"k-means of {Z.shape[0]} samples x {Z.shape[1]} features: inertia "
            f"{self.inertia_:.6g} after {self.n_iter_} iterations "
            f"({time.perf_counter() - start:.2f} s)",
            self.verbose,
        )
        return self

    def _predict_views(self, Xs):
        return self.kmeans_.predict(self._concatenate_as_fitted(Xs)).astype(np.intp)

    def _concatenate_as_fitted(self, Xs):
        """The scaled views in the dtype of the fit (the centres' dtype), whatever theirs."""
        return self._concatenate(Xs).astype(self.cluster_centers_.dtype, copy=False)

    def score(self, Xs, y=None):
        """Opposite of the k-means objective of ``Xs`` for the fitted centres.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            Views with the number and widths of the training views.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        score : float
            Minus the sum of squared distances of the samples to their
            nearest centre, in the concatenated space (larger is better).
        """
        Z = self._concatenate_as_fitted(self._validate_predict_views(Xs))
        return float(self.kmeans_.score(Z))


class ConcatSpectral(BaseClusterer):
    """Spectral clustering of the concatenated views on a k-nearest-neighbour graph.

    The views are scaled as in :class:`ConcatKMeans` (``"zscore"`` or
    ``"balanced"``), put side by side, and clustered by scikit-learn's
    :class:`~sklearn.cluster.SpectralClustering` with
    ``affinity="nearest_neighbors"``: the symmetrised ``n_neighbors``-nearest-
    neighbour connectivity graph of the samples (Euclidean distance in the
    concatenated space, ``(A + A^T) / 2``), the leading eigenvectors of its
    normalised Laplacian, and k-means (or another assignment) on them (Ng,
    Jordan & Weiss, 2001; von Luxburg, 2007). It is the graph-based
    concatenation baseline next to :class:`ConcatKMeans`. The method is
    transductive: it labels the training samples and has no ``predict``.

    Parameters
    ----------
    n_clusters : int, default=8
        The number of clusters, and of eigenvectors of the embedding.
    n_neighbors : int, default=10
        Neighbours of each sample in the graph (the sample itself counts as
        one, as in scikit-learn). Capped at ``n_samples - 1`` (``n_neighbors_``
        holds the value used).
    scaling : {"zscore", "balanced"} or None, default="zscore"
        How the views are scaled before they are concatenated; see
        :class:`ConcatKMeans`. ``"balanced"`` gives every view the same total
        variance, so the same weight in the distances of the graph.
    assign_labels : {"kmeans", "discretize", "cluster_qr"}, default="kmeans"
        How the spectral embedding is turned into labels (see
        :class:`~sklearn.cluster.SpectralClustering`).
    n_init : int, default=10
        k-means runs on the embedding when ``assign_labels="kmeans"``.
    random_state : int, RandomState instance or None, default=None
        Seeds the start vector of the ARPACK eigensolver and the k-means
        initialisations; an int gives the same labels at every call.
    n_jobs : int or None, default=None
        Parallel jobs of the neighbour search: ``None`` is 1 (or the ``n_jobs``
        of an enclosing ``joblib.parallel_config``), ``-1`` every CPU, a
        positive count is capped at the CPUs available.
    verbose : int, default=0
        Print the progress of ``fit`` to standard error: a line per fit, and
        with 2 or more scikit-learn's spectral clustering messages.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The cluster of each training sample.
    affinity_matrix_ : scipy.sparse matrix of shape (n_samples, n_samples)
        The symmetrised connectivity graph.
    n_neighbors_ : int
        The number of neighbours used (``n_neighbors`` capped at
        ``n_samples - 1``).
    view_means_ : list of ndarray of shape (n_features_v,) or None
        Per-view feature means used to scale (``None`` if ``scaling=None``).
    view_scales_ : list of ndarray of shape (n_features_v,) or None
        Per-view feature divisors (see :class:`ConcatKMeans`).
    spectral_ : sklearn.cluster.SpectralClustering
        The fitted spectral clustering of the concatenated views.
    n_views_ : int
        Number of views seen at ``fit``.
    n_features_per_view_ : tuple of int
        Number of features of each view seen at ``fit``.

    See Also
    --------
    ConcatKMeans : k-means on the concatenation.
    sklearn.cluster.SpectralClustering : The single-view algorithm used.

    Notes
    -----
    The graph costs ``O(n^2 d)`` time for the neighbour search (brute force
    or a tree, as scikit-learn chooses) and ``O(n k)`` memory; the embedding
    is a sparse eigenproblem. A graph that is not connected gets a warning
    from scikit-learn and may produce unbalanced clusters.

    References
    ----------
    A. Y. Ng, M. I. Jordan and Y. Weiss, "On spectral clustering: analysis and
    an algorithm", in Advances in Neural Information Processing Systems 14, 2001.

    U. von Luxburg, "A tutorial on spectral clustering", Statistics and
    Computing 17(4), 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics import adjusted_rand_score
    >>> from mvlearn_ext.cluster import ConcatSpectral
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1, 2], 20)
    >>> centers_0, centers_1 = rng.normal(scale=2, size=(3, 4)), rng.normal(scale=2, size=(3, 2))
    >>> Xs = [centers_0[y] + rng.normal(size=(60, 4)), centers_1[y] + rng.normal(size=(60, 2))]
    >>> model = ConcatSpectral(n_clusters=3, random_state=0).fit(Xs)
    >>> model.affinity_matrix_.shape, model.n_neighbors_
    ((60, 60), 10)
    >>> float(adjusted_rand_score(y, model.labels_))
    1.0
    """

    _single_threaded = True

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "scaling": [StrOptions(set(_SCALINGS)), None],
        "assign_labels": [StrOptions({"kmeans", "discretize", "cluster_qr"})],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS_CONSTRAINT,
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        n_neighbors=10,
        scaling="zscore",
        assign_labels="kmeans",
        n_init=10,
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.scaling = scaling
        self.assign_labels = assign_labels
        self.n_init = n_init
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _fit_views(self, Xs):
        start = time.perf_counter()
        if Xs[0].shape[0] < 2:
            raise ValueError(
                f"Xs has {Xs[0].shape[0]} sample; ConcatSpectral needs at least 2 for a graph"
            )
        n_distinct = distinct_samples(Xs, self.n_clusters).shape[0]
        warn_if_few_distinct(type(self).__name__, n_distinct, self.n_clusters)
        self.view_means_, self.view_scales_ = _fit_scaling(Xs, self.scaling)
        Z = _concatenate(Xs, self.view_means_, self.view_scales_).astype(np.float64, copy=False)
        self.n_neighbors_ = int(min(self.n_neighbors, Z.shape[0] - 1))
        # scikit-learn's nearest-neighbour affinity, with the neighbour search
        # (exact, row by row: the same graph on any thread count) on the
        # OpenMP pool of n_jobs threads; joblib's threads would each start a
        # pool of every CPU.
        with threadpool_limits(limits=self._n_threads, user_api="openmp"):
            connectivity = kneighbors_graph(Z, n_neighbors=self.n_neighbors_, include_self=True)
        affinity = 0.5 * (connectivity + connectivity.T)
        spectral = SpectralClustering(
            n_clusters=self.n_clusters,
            # ARPACK needs more samples than eigenvectors; on so small a graph
            # scikit-learn's lobpcg route solves the dense eigenproblem exactly.
            eigen_solver="lobpcg" if Z.shape[0] <= self.n_clusters else None,
            affinity="precomputed",
            assign_labels=self.assign_labels,
            n_init=self.n_init,
            random_state=self.random_state,
            verbose=int(self.verbose) >= 2,
        )
        self.spectral_ = spectral.fit(affinity)
        self.labels_ = np.asarray(self.spectral_.labels_, dtype=np.intp)
        self.affinity_matrix_ = self.spectral_.affinity_matrix_
        log_message(
            type(self).__name__,
            f"{self.n_neighbors_}-NN spectral clustering of {Z.shape[0]} samples x "
            f"{Z.shape[1]} features ({time.perf_counter() - start:.2f} s)",
            self.verbose,
        )
        return self
