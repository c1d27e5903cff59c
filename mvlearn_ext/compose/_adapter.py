"""A multi-view estimator behind the single-array scikit-learn API."""

from __future__ import annotations

from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils import TransformerTags, get_tags
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    _routing_enabled,
    process_routing,
)
from sklearn.utils.validation import check_is_fitted, validate_data

from mvlearn_ext.base import is_multiview
from mvlearn_ext.compose._split import _SPLIT_CONSTRAINTS, _resolve_view_columns, _split_columns

__all__ = ["MultiViewAdapter"]


def _wrapped_has(attr):
    """``available_if`` test: the fitted (else the given) estimator has ``attr``."""

    def check(self):
        wrapped = self.estimator_ if hasattr(self, "estimator_") else self.estimator
        getattr(wrapped, attr)  # raises AttributeError, which hides the method
        return True

    return check


class MultiViewAdapter(MetaEstimatorMixin, BaseEstimator):
    """Give a multi-view estimator a single 2-D array, split into views.

    A meta-estimator: it takes one array ``X`` of shape ``(n_samples,
    n_features)``, splits its columns into views as :class:`ViewSplitter`
    does, and hands the list of views to a clone of ``estimator``. The result
    is an ordinary single-array estimator, so a multi-view method can follow
    a scaler in a :class:`~sklearn.pipeline.Pipeline`, be cross-validated, and
    be tuned by :class:`~sklearn.model_selection.GridSearchCV` through nested
    parameters (``estimator__n_clusters``).

    ``fit_predict``, ``predict``, ``transform``, ``fit_transform``,
    ``predict_proba``, ``predict_log_proba``, ``decision_function`` and
    ``score`` exist exactly when the wrapped estimator has them. The
    estimator type (clusterer, classifier, ...) and the tags that describe
    the values accepted (NaN, sparse) are the wrapped estimator's.

    Parameters
    ----------
    estimator : estimator object
        The multi-view estimator; it is cloned at ``fit``, never modified. An
        estimator that fails on a list of views and is not multi-view
        (:func:`~mvlearn_ext.base.is_multiview`) makes ``fit`` raise a
        ``TypeError`` that says so.
    view_sizes : int or sequence of int, default=None
        The number of columns of each view, side by side from the left
        (summing to ``n_features``), or an int ``k`` for ``k`` consecutive
        views of near-equal width. See :class:`ViewSplitter`.
    view_columns : sequence of column selectors, default=None
        One slice, sequence of integer column indices, or boolean mask per
        view. Exactly one of ``view_sizes`` and ``view_columns`` must be
        given.

    Attributes
    ----------
    estimator_ : estimator object
        The fitted clone of ``estimator``; its own fitted attributes
        (``cluster_centers_``, ...) are read there.
    labels_ : ndarray of shape (n_samples,)
        The wrapped estimator's ``labels_``, when it has them (clusterers).
    view_columns_ : list of slice or ndarray of int
        The columns of each view (see :class:`ViewSplitter`).
    n_features_in_ : int
        Number of columns of ``X`` seen at ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of ``X``, when it is a DataFrame with string column names.

    See Also
    --------
    ViewSplitter : The splitting step on its own, as a transformer.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics import adjusted_rand_score
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from mvlearn_ext.cluster import ConcatKMeans
    >>> from mvlearn_ext.compose import MultiViewAdapter
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 10)
    >>> X = np.hstack([10.0 * y[:, None] + rng.normal(size=(20, 3)), rng.normal(size=(20, 2))])
    >>> model = make_pipeline(
    ...     StandardScaler(),
    ...     MultiViewAdapter(ConcatKMeans(n_clusters=2, random_state=0), view_sizes=[3, 2]),
    ... )
    >>> float(adjusted_rand_score(y, model.fit_predict(X)))
    1.0
    >>> model[-1].estimator_.n_features_per_view_
    (3, 2)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"])],
        **_SPLIT_CONSTRAINTS,
    }

    def __init__(self, estimator, *, view_sizes=None, view_columns=None):
        self.estimator = estimator
        self.view_sizes = view_sizes
        self.view_columns = view_columns

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        wrapped = get_tags(self.estimator)
        tags.estimator_type = wrapped.estimator_type
        tags.target_tags = wrapped.target_tags
        tags.classifier_tags = wrapped.classifier_tags
        tags.regressor_tags = wrapped.regressor_tags
        tags.non_deterministic = wrapped.non_deterministic
        tags.input_tags.allow_nan = wrapped.input_tags.allow_nan
        tags.input_tags.sparse = wrapped.input_tags.sparse
        if hasattr(self.estimator, "transform"):
            tags.transformer_tags = wrapped.transformer_tags or TransformerTags(preserves_dtype=[])
        return tags

    def _split(self, X, *, reset):
        """Validate the shape of ``X`` and split it into views.

        The values are validated by the wrapped estimator, view by view.
        """
        accept_sparse = ("csr", "csc") if get_tags(self.estimator).input_tags.sparse else False
        X = validate_data(
            self, X, reset=reset, accept_sparse=accept_sparse, dtype=None, ensure_all_finite=False
        )
        if reset:
            self.view_columns_ = _resolve_view_columns(
                self.view_sizes, self.view_columns, X.shape[1], type(self).__name__
            )
        return _split_columns(X, self.view_columns_)

    def _fitted_split(self, X):
        check_is_fitted(self)
        return self._split(X, reset=False)

    def _fit_and_call(self, method, X, y, fit_params):
        """Split ``X``, call a clone's ``method`` (a fit) on the views, keep its ``labels_``."""
        Xs = self._split(X, reset=True)
        if _routing_enabled():
            fit_params = process_routing(self, method, **fit_params)["estimator"][method]
        self.estimator_ = clone(self.estimator)
        try:
            out = getattr(self.estimator_, method)(Xs, y, **fit_params)
        except (TypeError, ValueError) as exc:
            if is_multiview(self.estimator_):
                raise
            # A single-array estimator fails deep inside NumPy on a list of views.
            raise TypeError(
                f"estimator {type(self.estimator_).__name__} failed on the list of "
                f"{len(Xs)} views that MultiViewAdapter gives it ({type(exc).__name__}: "
                f"{exc}); the estimator must take a list of views, as the multi-view "
                f"estimators of mvlearn_ext do (see mvlearn_ext.base.is_multiview)"
            ) from exc
        if hasattr(self.estimator_, "labels_"):
            self.labels_ = self.estimator_.labels_
        return out

    def get_metadata_routing(self):
        """Route the metadata of the fit methods to the wrapped estimator.

        With scikit-learn's metadata routing enabled, the keyword arguments of
        ``fit``, ``fit_predict`` and ``fit_transform`` reach the estimator's
        method of the same name once it requests them (``set_fit_request``);
        without routing they are passed on as given.

        Returns
        -------
        routing : MetadataRouter
            The routing information.
        """
        mapping = MethodMapping()
        for method in ("fit", "fit_predict", "fit_transform"):
            mapping.add(caller=method, callee=method)
        return MetadataRouter(owner=self).add(estimator=self.estimator, method_mapping=mapping)

    def _call_fitted(self, method, X):
        """The fitted clone's ``method`` on the views of ``X``."""
        Xs = self._fitted_split(X)
        return getattr(self.estimator_, method)(Xs)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, **fit_params):
        """Split ``X`` into views and fit a clone of the estimator on them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data, views side by side.
        y : array-like of shape (n_samples,), default=None
            Targets, passed to the estimator's ``fit`` (ignored by
            unsupervised estimators).
        **fit_params : dict
            Passed to the estimator's ``fit`` (routed, when scikit-learn's
            metadata routing is enabled, to the arguments it requests).

        Returns
        -------
        self : MultiViewAdapter
            The fitted adapter.
        """
        self._fit_and_call("fit", X, y, fit_params)
        return self

    @available_if(_wrapped_has("fit_predict"))
    @_fit_context(prefer_skip_nested_validation=False)
    def fit_predict(self, X, y=None, **fit_params):
        """Fit on ``X`` and return the estimator's ``fit_predict`` output.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data, views side by side.
        y : array-like of shape (n_samples,), default=None
            Passed to the estimator.
        **fit_params : dict
            Passed to the estimator's ``fit_predict``.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            For a clusterer, the cluster of each sample.
        """
        return self._fit_and_call("fit_predict", X, y, fit_params)

    @available_if(_wrapped_has("fit_transform"))
    @_fit_context(prefer_skip_nested_validation=False)
    def fit_transform(self, X, y=None, **fit_params):
        """Fit on ``X`` and return the estimator's ``fit_transform`` output.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data, views side by side.
        y : array-like of shape (n_samples,), default=None
            Passed to the estimator.
        **fit_params : dict
            Passed to the estimator's ``fit_transform``.

        Returns
        -------
        Xt : ndarray or list of ndarray
            The transformed data.
        """
        return self._fit_and_call("fit_transform", X, y, fit_params)

    @available_if(_wrapped_has("predict"))
    def predict(self, X):
        """The estimator's ``predict`` on the views of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            The data, views side by side as at ``fit``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predictions (cluster labels for a clusterer).
        """
        return self._call_fitted("predict", X)

    @available_if(_wrapped_has("transform"))
    def transform(self, X):
        """The estimator's ``transform`` on the views of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            The data, views side by side as at ``fit``.

        Returns
        -------
        Xt : ndarray or list of ndarray
            The transformed data.
        """
        return self._call_fitted("transform", X)

    @available_if(_wrapped_has("predict_proba"))
    def predict_proba(self, X):
        """The estimator's ``predict_proba`` on the views of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            The data, views side by side as at ``fit``.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Class probabilities.
        """
        return self._call_fitted("predict_proba", X)

    @available_if(_wrapped_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """The estimator's ``predict_log_proba`` on the views of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            The data, views side by side as at ``fit``.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Logarithms of the class probabilities.
        """
        return self._call_fitted("predict_log_proba", X)

    @available_if(_wrapped_has("decision_function"))
    def decision_function(self, X):
        """The estimator's ``decision_function`` on the views of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            The data, views side by side as at ``fit``.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Decision scores.
        """
        return self._call_fitted("decision_function", X)

    @available_if(_wrapped_has("score"))
    def score(self, X, y=None):
        """The estimator's ``score`` on the views of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            The data, views side by side as at ``fit``.
        y : array-like of shape (n_samples,), default=None
            Passed to the estimator's ``score``.

        Returns
        -------
        score : float
            The estimator's score (for :class:`~mvlearn_ext.cluster.ConcatKMeans`,
            minus the k-means objective).
        """
        Xs = self._fitted_split(X)
        return self.estimator_.score(Xs, y)
