"""Mixins for multi-view estimators, whose ``fit`` takes a list of views.

A multi-view estimator is a scikit-learn estimator whose data argument is
``Xs``, a list of views of shape ``(n_samples, n_features_v)``, rather than a
single array ``X``. It inherits :class:`MultiViewMixin` (or one of the
specialised mixins below, which include it), placed before
:class:`sklearn.base.BaseEstimator`::

    class MyMethod(MultiViewClusterMixin, BaseEstimator): ...

How "multi-view" is marked
--------------------------
scikit-learn's :class:`~sklearn.utils.Tags` is a closed dataclass (with
slots), so a new field such as ``multiview`` cannot be added to it. The
mixin therefore does two things:

* it sets the existing input tags truthfully: ``input_tags.two_d_array`` is
  ``False`` (a multi-view estimator refuses a single 2-D array), and
  ``input_tags.three_d_array`` is ``True`` (a stack of equal-width views of
  shape ``(n_views, n_samples, n_features)`` is accepted). With
  ``two_d_array=False``, scikit-learn's own ``check_estimator`` skips the
  estimator with a ``SkipTestWarning`` instead of failing on inputs it was
  never meant to take; the multi-view contract suite
  (:mod:`mvlearn_ext.utils.estimator_checks`) tests it instead;
* membership in the class is the identity: :func:`is_multiview` (used by
  :func:`mvlearn_ext.utils.discovery.all_estimators`) is an ``issubclass``
  test, which works on classes and instances, survives ``clone`` and
  pickling, and needs no extra attribute.

To give a multi-view estimator to code that passes a single array (a
:class:`~sklearn.pipeline.Pipeline` step after a scaler, a grid search),
wrap it in :class:`mvlearn_ext.compose.MultiViewAdapter`.
"""

from __future__ import annotations

from sklearn.utils import TransformerTags, metadata_routing
from sklearn.utils.validation import check_is_fitted

from mvlearn_ext.utils._progress import VerboseMixin
from mvlearn_ext.utils._validation import (
    _view_feature_names,
    _view_feature_names_consistent,
    _views_consistent,
    validate_views,
)

__all__ = [
    "MultiViewClusterMixin",
    "MultiViewMixin",
    "MultiViewTransformerMixin",
    "is_multiview",
]


class MultiViewMixin:
    """Mark an estimator whose ``fit`` takes a list of views ``Xs``.

    Sets ``input_tags.two_d_array = False`` and
    ``input_tags.three_d_array = True`` (see the module docstring for why),
    and makes :func:`is_multiview` true. Put it before ``BaseEstimator`` in
    the bases.

    See Also
    --------
    is_multiview : Tests for it.

    Examples
    --------
    >>> from sklearn.base import BaseEstimator
    >>> from sklearn.utils import get_tags
    >>> from mvlearn_ext.base import MultiViewMixin, is_multiview
    >>> class Toy(MultiViewMixin, BaseEstimator):
    ...     def fit(self, Xs, y=None):
    ...         return self
    >>> get_tags(Toy()).input_tags.two_d_array, is_multiview(Toy)
    (False, True)
    """

    # The views are the data, not metadata to route (as ``X`` is for scikit-learn).
    __metadata_request__fit = {"Xs": metadata_routing.UNUSED}
    __metadata_request__predict = {"Xs": metadata_routing.UNUSED}
    __metadata_request__transform = {"Xs": metadata_routing.UNUSED}
    __metadata_request__score = {"Xs": metadata_routing.UNUSED}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.three_d_array = True
        return tags

    def _validate_fit_views(self, Xs, **kwargs):
        """Validate ``Xs`` at ``fit``; record ``n_views_``, ``n_features_per_view_`` and names.

        ``kwargs`` go to :func:`~mvlearn_ext.utils.validate_views` (e.g.
        ``n_clusters=``, ``min_views=``).
        """
        names = _view_feature_names(Xs)
        Xs = validate_views(Xs, **kwargs)
        _views_consistent(self, Xs, reset=True)
        _view_feature_names_consistent(self, names, reset=True)
        return Xs

    def _validate_predict_views(self, Xs):
        """Check the estimator is fitted, then validate ``Xs`` (widths, names) against ``fit``."""
        check_is_fitted(self)
        names = _view_feature_names(Xs)
        Xs = validate_views(Xs)
        _views_consistent(self, Xs, reset=False)
        _view_feature_names_consistent(self, names, reset=False)
        return Xs


class MultiViewClusterMixin(VerboseMixin, MultiViewMixin):
    """Mixin for multi-view clusterers.

    Sets the estimator type to ``"clusterer"`` and provides
    :meth:`fit_predict`, which returns ``labels_`` after ``fit``. The
    estimator's ``fit(Xs, y=None)`` must set ``labels_``, an integer array
    of shape ``(n_samples,)``.

    See Also
    --------
    MultiViewMixin : The marker of multi-view estimators.
    sklearn.base.ClusterMixin : The single-view mixin.

    Examples
    --------
    >>> from mvlearn_ext.base import MultiViewClusterMixin, is_multiview
    >>> from mvlearn_ext.cluster import HAGMVC
    >>> issubclass(HAGMVC, MultiViewClusterMixin), is_multiview(HAGMVC)
    (True, True)
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "clusterer"
        if tags.transformer_tags is not None:
            tags.transformer_tags.preserves_dtype = []
        return tags

    def fit_predict(self, Xs, y=None, **kwargs):
        """Fit the clusterer on ``Xs`` and return the cluster labels.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views.
        y : None
            Ignored; present for API consistency.
        **kwargs : dict
            Passed to ``fit``.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            The cluster of each sample (``labels_``).
        """
        self.fit(Xs, y, **kwargs)
        return self.labels_


class MultiViewTransformerMixin(MultiViewMixin):
    """Mixin for multi-view transformers.

    Sets ``transformer_tags`` and provides :meth:`fit_transform` as
    ``fit(Xs, y).transform(Xs)``; estimators with a cheaper joint
    computation override it. ``transform`` may return a single array (a
    joint embedding) or a list of arrays (one per view).

    See Also
    --------
    MultiViewMixin : The marker of multi-view estimators.
    sklearn.base.TransformerMixin : The single-view mixin.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator
    >>> from mvlearn_ext.base import MultiViewTransformerMixin
    >>> class Concat(MultiViewTransformerMixin, BaseEstimator):
    ...     def fit(self, Xs, y=None):
    ...         return self
    ...     def transform(self, Xs):
    ...         return np.hstack(Xs)
    >>> Concat().fit_transform([np.ones((2, 1)), np.zeros((2, 2))]).shape
    (2, 3)
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags()
        return tags

    def fit_transform(self, Xs, y=None, **fit_params):
        """Fit to ``Xs``, then transform it.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views.
        y : array-like of shape (n_samples,), default=None
            Targets, for supervised transformers; passed to ``fit``.
        **fit_params : dict
            Passed to ``fit``.

        Returns
        -------
        Xt : ndarray or list of ndarray
            What ``transform(Xs)`` returns.
        """
        return self.fit(Xs, y, **fit_params).transform(Xs)


def is_multiview(estimator) -> bool:
    """Whether an estimator (class or instance) takes a list of views.

    Parameters
    ----------
    estimator : estimator instance or class

    Returns
    -------
    bool
        ``True`` if it inherits :class:`MultiViewMixin`.

    See Also
    --------
    MultiViewMixin : The marker it looks for.

    Examples
    --------
    >>> from sklearn.cluster import KMeans
    >>> from mvlearn_ext.base import is_multiview
    >>> from mvlearn_ext.cluster import ConcatKMeans
    >>> is_multiview(ConcatKMeans()), is_multiview(KMeans)
    (True, False)
    """
    cls = estimator if isinstance(estimator, type) else type(estimator)
    return issubclass(cls, MultiViewMixin)
