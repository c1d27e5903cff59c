"""Split the columns of one 2-D array into views."""

from __future__ import annotations

import numbers
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["ViewSplitter"]


def _sizes_to_slices(sizes):
    stops = np.cumsum(sizes)
    return [slice(int(stop - size), int(stop), 1) for size, stop in zip(sizes, stops, strict=True)]


def _columns_from_sizes(view_sizes, n_features):
    if isinstance(view_sizes, numbers.Integral) and not isinstance(view_sizes, bool):
        n_views = int(view_sizes)
        if n_views > n_features:
            raise ValueError(
                f"view_sizes={n_views} splits the columns into {n_views} views, but X has "
                f"n_features={n_features}; every view needs at least one column"
            )
        base, extra = divmod(n_features, n_views)
        return _sizes_to_slices([base + 1] * extra + [base] * (n_views - extra))
    if isinstance(view_sizes, str):
        raise TypeError(f"view_sizes must be an int or a sequence of ints, got {view_sizes!r}")
    sizes = list(view_sizes)
    if not sizes:
        raise ValueError("view_sizes is empty; give the number of columns of each view")
    for index, size in enumerate(sizes):
        if isinstance(size, bool) or not isinstance(size, numbers.Integral):
            raise TypeError(
                f"view_sizes[{index}] must be an int (a number of columns), got {size!r}"
            )
        if size < 1:
            raise ValueError(f"view_sizes[{index}]={size}; every view needs at least one column")
    total = int(sum(sizes))
    if total != n_features:
        raise ValueError(
            f"view_sizes sum to {total} but X has n_features={n_features}; the views must "
            "cover the columns of X exactly (use view_columns to select a subset)"
        )
    return _sizes_to_slices([int(size) for size in sizes])


def _columns_from_selectors(view_columns, n_features):
    if isinstance(view_columns, str) or not hasattr(view_columns, "__len__"):
        raise TypeError(
            "view_columns must be a sequence with one column selector per view, "
            f"got {type(view_columns).__name__}"
        )
    if len(view_columns) == 0:
        raise ValueError("view_columns is empty; give one column selector per view")
    columns = []
    for index, selector in enumerate(view_columns):
        where = f"view_columns[{index}]"
        if isinstance(selector, slice):
            start, stop, step = selector.indices(n_features)
            if len(range(start, stop, step)) == 0:
                raise ValueError(
                    f"{where}={selector!r} selects no column of X (n_features={n_features})"
                )
            # Forward slices stay slices (no copy when splitting); others become indices.
            columns.append(slice(start, stop, step) if step > 0 else np.arange(start, stop, step))
            continue
        if isinstance(selector, str) or np.isscalar(selector):
            raise TypeError(
                f"{where} must be a slice, a sequence of column indices or a boolean mask, "
                f"got {selector!r} (use [{selector!r}] for a single column; column names "
                "are not supported, select columns by position)"
            )
        indices = np.asarray(selector)
        if indices.ndim != 1:
            raise ValueError(f"{where} must be 1-D, got an array of shape {indices.shape}")
        if indices.dtype == bool:
            if indices.shape[0] != n_features:
                raise ValueError(
                    f"{where} is a boolean mask of length {indices.shape[0]} but X has "
                    f"n_features={n_features}"
                )
            indices = np.flatnonzero(indices)
        elif indices.size and indices.dtype.kind not in "iu":
            raise TypeError(
                f"{where} must be a slice, a sequence of integer column indices or a "
                f"boolean mask, got an array of dtype {indices.dtype} (column names are "
                "not supported, select columns by position)"
            )
        indices = indices.astype(np.intp, copy=False)
        if indices.size == 0:
            raise ValueError(f"{where} selects no column of X (n_features={n_features})")
        out_of_range = (indices < -n_features) | (indices >= n_features)
        if out_of_range.any():
            bad = int(indices[np.flatnonzero(out_of_range)[0]])
            raise ValueError(f"{where} has column index {bad} but X has n_features={n_features}")
        columns.append(np.where(indices < 0, indices + n_features, indices))
    return columns


def _resolve_view_columns(view_sizes, view_columns, n_features, owner):
    """The column selector (a slice or an index array) of every view."""
    if view_sizes is None and view_columns is None:
        raise ValueError(
            f"{owner} needs view_sizes (the number of columns of each view, or the number "
            "of views of equal width) or view_columns (the columns of each view); both "
            "are None"
        )
    if view_sizes is not None and view_columns is not None:
        raise ValueError(f"{owner} takes view_sizes or view_columns, not both")
    if view_sizes is not None:
        return _columns_from_sizes(view_sizes, n_features)
    return _columns_from_selectors(view_columns, n_features)


def _split_columns(X, view_columns):
    return [X[:, columns] for columns in view_columns]


_SPLIT_CONSTRAINTS = {
    "view_sizes": [Interval(Integral, 1, None, closed="left"), "array-like", None],
    "view_columns": ["array-like", None],
}


class ViewSplitter(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """Split the columns of a 2-D array into a list of views.

    The transformer that turns a single-array dataset into the input of a
    multi-view estimator: ``transform(X)`` returns ``[X[:, c_0], X[:, c_1],
    ...]``. It can sit in a :class:`~sklearn.pipeline.Pipeline` right before
    a multi-view estimator, after single-array steps (a scaler, an imputer).
    It does not convert or check the values (the multi-view estimator does,
    and names the view at fault); it checks the shape of ``X``.

    Parameters
    ----------
    view_sizes : int or sequence of int, default=None
        A sequence gives the number of columns of each view, taken side by
        side from the left; it must sum to ``n_features``. An int ``k``
        splits the columns into ``k`` consecutive views of near-equal width
        (the first ``n_features % k`` views get one column more, as
        :func:`numpy.array_split`).
    view_columns : sequence of column selectors, default=None
        One selector per view: a slice, a sequence of integer column indices
        (negative ones count from the end), or a boolean mask of length
        ``n_features``. Views may overlap and need not cover every column.
        Exactly one of ``view_sizes`` and ``view_columns`` must be given.

    Attributes
    ----------
    view_columns_ : list of slice or ndarray of int
        The columns of each view, resolved against ``n_features_in_``: a
        forward slice (the view is then a NumPy view of ``X``, not a copy) or
        an array of non-negative column indices.
    n_views_ : int
        Number of views produced.
    n_features_in_ : int
        Number of columns of ``X`` seen at ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of ``X``, when it is a DataFrame with string column names.

    See Also
    --------
    MultiViewAdapter : A multi-view estimator made into a single-array one.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.compose import ViewSplitter
    >>> X = np.arange(10).reshape(2, 5)
    >>> [V.shape for V in ViewSplitter(view_sizes=[2, 3]).fit_transform(X)]
    [(2, 2), (2, 3)]
    >>> ViewSplitter(view_columns=[[0, 4], slice(1, 3)]).fit_transform(X)
    [array([[0, 4],
           [5, 9]]), array([[1, 2],
           [6, 7]])]
    """

    _parameter_constraints: dict = dict(_SPLIT_CONSTRAINTS)

    def __init__(self, *, view_sizes=None, view_columns=None):
        self.view_sizes = view_sizes
        self.view_columns = view_columns

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _validate_X(self, X, reset):
        return validate_data(
            self,
            X,
            reset=reset,
            accept_sparse=("csr", "csc"),
            dtype=None,
            ensure_all_finite=False,
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Resolve the columns of each view against the width of ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The data to split.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : ViewSplitter
            The fitted splitter.
        """
        X = self._validate_X(X, reset=True)
        self.view_columns_ = _resolve_view_columns(
            self.view_sizes, self.view_columns, X.shape[1], type(self).__name__
        )
        self.n_views_ = len(self.view_columns_)
        return self

    def transform(self, X):
        """Split ``X`` into its views.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features_in_)
            The data to split.

        Returns
        -------
        Xs : list of ndarray or sparse matrix
            ``n_views_`` arrays of shape ``(n_samples, n_features_v)``, in
            the dtype of ``X``.
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return _split_columns(X, self.view_columns_)
