"""k-means on the concatenated views: the standard multi-view baseline."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.cluster import KMeans
from sklearn.utils._param_validation import Interval

from mvlearn_ext.base import MultiViewClusterMixin
from mvlearn_ext.cluster._preprocessing import fit_view_scaling

__all__ = ["ConcatKMeans"]


class ConcatKMeans(MultiViewClusterMixin, BaseEstimator):
    """k-means on the column-concatenation of the (standardised) views.

    The views are optionally standardised feature by feature (centred and
    scaled to unit variance with statistics learned at ``fit``), put side by
    side into one matrix of shape ``(n_samples, sum_v n_features_v)``, and
    clustered by k-means (Lloyd's algorithm with k-means++ seeding,
    scikit-learn's :class:`~sklearn.cluster.KMeans`). This is the
    feature-concatenation baseline that multi-view clustering methods are
    measured against (Bickel & Scheffer, 2004; Kumar, Rai & Daumé, 2011): a
    method that does not beat it does not use the views.

    Parameters
    ----------
    n_clusters : int, default=8
        The number of clusters.
    standardize : bool, default=True
        Centre every feature and scale it to unit variance (per view, with the
        statistics of the training views, reused by :meth:`predict`) before
        concatenating; constant features are centred only. Without it, the
        views enter in their own units, so a view with a larger spread or
        more features weighs more.
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

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The cluster of each training sample.
    cluster_centers_ : ndarray of shape (n_clusters, sum_v n_features_v)
        The centres, in the concatenated (standardised, if ``standardize``)
        space, view after view.
    inertia_ : float
        Sum of squared distances of the training samples to their centre,
        in that space.
    n_iter_ : int
        Lloyd iterations of the retained run.
    view_means_ : list of ndarray of shape (n_features_v,) or None
        Per-view feature means used to standardise (``None`` if
        ``standardize=False``).
    view_scales_ : list of ndarray of shape (n_features_v,) or None
        Per-view feature standard deviations used to standardise (1 for
        constant features; ``None`` if ``standardize=False``).
    kmeans_ : sklearn.cluster.KMeans
        The fitted k-means on the concatenated views.
    n_views_ : int
        Number of views seen at ``fit``.
    n_features_per_view_ : tuple of int
        Number of features of each view seen at ``fit``.

    See Also
    --------
    sklearn.cluster.KMeans : The single-view algorithm used on the concatenation.
    mvlearn_ext.compose.MultiViewAdapter : Use it on one array split into views.

    Notes
    -----
    Views that are float32 throughout are clustered in float32; otherwise in
    float64. Standardising every feature gives each view a weight
    proportional to its number of features; rescale the views beforehand if
    they should weigh equally.

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

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "standardize": ["boolean"],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        standardize=True,
        n_init=10,
        max_iter=300,
        tol=1e-4,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.standardize = standardize
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _concatenate(self, Xs):
        """The (standardised) views side by side, in their common dtype."""
        dtype = np.result_type(*Xs)
        if self.view_means_ is None:
            return np.hstack(Xs).astype(dtype, copy=False)
        blocks = [
            (X - mean.astype(dtype)) / scale.astype(dtype)
            for X, mean, scale in zip(Xs, self.view_means_, self.view_scales_, strict=True)
        ]
        return np.hstack(blocks).astype(dtype, copy=False)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, Xs, y=None):
        """Standardise, concatenate and cluster the views.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views (see :func:`mvlearn_ext.utils.validate_views`), with
            at least ``n_clusters`` samples.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : ConcatKMeans
            The fitted estimator.
        """
        Xs = self._validate_fit_views(Xs, n_clusters=self.n_clusters)
        self.view_means_, self.view_scales_ = (
            fit_view_scaling(Xs) if self.standardize else (None, None)
        )
        kmeans = KMeans(
            n_clusters=self.n_clusters,
            init="k-means++",
            n_init=self.n_init,
            max_iter=self.max_iter,
            tol=self.tol,
            random_state=self.random_state,
            algorithm="lloyd",
        )
        self.kmeans_ = kmeans.fit(self._concatenate(Xs))
        self.labels_ = self.kmeans_.labels_
        self.cluster_centers_ = self.kmeans_.cluster_centers_
        self.inertia_ = float(self.kmeans_.inertia_)
        self.n_iter_ = int(self.kmeans_.n_iter_)
        return self

    def _embed(self, Xs):
        Xs = self._validate_predict_views(Xs)
        return self._concatenate(Xs)

    def predict(self, Xs):
        """Assign each sample to the nearest centre.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            Views with the number and widths of the training views.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            The cluster of each sample; ``predict`` on the training views
            returns ``labels_``.
        """
        Z = self._embed(Xs)
        return self.kmeans_.predict(Z)

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
        Z = self._embed(Xs)
        return float(self.kmeans_.score(Z))
