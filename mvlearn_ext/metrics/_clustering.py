"""External clustering metrics: accuracy by Hungarian matching, purity, NMI."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from mvlearn_ext.utils._validation import real_array

__all__ = [
    "clustering_accuracy",
    "clustering_report",
    "contingency_table",
    "normalized_mutual_info",
    "purity",
]

_NMI_METHODS = {
    "arithmetic": "arithmetic",
    "geometric": "geometric",
    "sqrt": "geometric",
    "max": "max",
    "min": "min",
}


def _as_label_array(labels, name):
    """A 1-d array of labels; Python sequences of any hashables are accepted.

    A tuple entry is one label (kept whole); an entry that is a list or an
    array makes the labels nested, and nested labels are refused as not 1-d,
    as the same data given as an array is. Float labels must be finite: NaN
    and infinity name no cluster (as in scikit-learn's metrics).
    """
    if isinstance(labels, (str, bytes)):
        raise TypeError(f"{name} must be a 1-d sequence of labels, got a string")
    if hasattr(labels, "__array__") or isinstance(labels, np.ndarray):
        array = np.asarray(labels)
    else:
        try:
            items = list(labels)
        except TypeError as exc:
            raise TypeError(
                f"{name} must be a 1-d sequence of labels, got {type(labels).__name__}"
            ) from exc
        nested = next(
            (i for i, item in enumerate(items) if isinstance(item, (list, np.ndarray))), None
        )
        if nested is not None:
            try:
                got = f"an array of shape {np.asarray(items).shape}"
            except ValueError:  # ragged
                got = f"nested sequences (entry {nested} is a {type(items[nested]).__name__})"
            raise ValueError(f"{name} must be 1-d, got {got}")
        array = np.asarray(items) if items else np.asarray(items, dtype=np.int64)
        if array.ndim != 1:  # tuples as labels: keep each one whole
            array = np.empty(len(items), dtype=object)
            for i, item in enumerate(items):
                array[i] = item
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-d, got an array of shape {array.shape}")
    if array.dtype.kind == "f":
        real_array(array, name, allow_empty=True)  # refuses NaN and infinity
    return array


def _encode(array, name):
    """Integer codes ``0..k-1`` of the labels and ``k``."""
    try:
        classes, codes = np.unique(array, return_inverse=True)
        return codes.reshape(-1).astype(np.int64, copy=False), classes.shape[0]
    except TypeError:
        pass  # labels that cannot be sorted (mixed types): code them in order of appearance
    index = {}
    codes = np.empty(array.shape[0], dtype=np.int64)
    try:
        for i, label in enumerate(array):
            codes[i] = index.setdefault(label, len(index))
    except TypeError as exc:
        raise TypeError(f"{name} contains an unhashable label: {exc}") from exc
    return codes, len(index)


def _check_labelings(labels_true, labels_pred):
    true = _as_label_array(labels_true, "labels_true")
    pred = _as_label_array(labels_pred, "labels_pred")
    if true.shape[0] != pred.shape[0]:
        raise ValueError(
            "labels_true and labels_pred must have the same length, got "
            f"{true.shape[0]} and {pred.shape[0]}"
        )
    if true.shape[0] == 0:
        raise ValueError(
            "labels_true and labels_pred are empty; a metric needs at least one sample"
        )
    codes_true, k_true = _encode(true, "labels_true")
    codes_pred, k_pred = _encode(pred, "labels_pred")
    return codes_true, k_true, codes_pred, k_pred


def _contingency(codes_true, k_true, codes_pred, k_pred):
    counts = np.bincount(codes_true * k_pred + codes_pred, minlength=k_true * k_pred)
    return counts.reshape(k_true, k_pred)


def contingency_table(labels_true, labels_pred):
    """Counts of samples per (true class, predicted cluster) pair.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Ground-truth classes: ints, strings or any hashable values.
    labels_pred : array-like of shape (n_samples,)
        Cluster labels to evaluate.

    Returns
    -------
    table : ndarray of int64 of shape (n_classes, n_clusters)
        ``table[i, j]`` counts the samples of the ``i``-th class in the
        ``j``-th cluster; classes and clusters are in sorted order (in order
        of first appearance for labels that cannot be sorted).

    See Also
    --------
    purity : Computed from the table.
    sklearn.metrics.cluster.contingency_matrix : scikit-learn's equivalent.

    Examples
    --------
    >>> from mvlearn_ext.metrics import contingency_table
    >>> contingency_table(["a", "a", "b", "b"], [1, 0, 0, 0])
    array([[1, 1],
           [2, 0]])
    """
    return _contingency(*_check_labelings(labels_true, labels_pred))


def _accuracy_from_table(table):
    rows, cols = linear_sum_assignment(table, maximize=True)
    return float(table[rows, cols].sum() / table.sum())


def _purity_from_table(table):
    return float(table.max(axis=0).sum() / table.sum())


def clustering_accuracy(labels_true, labels_pred):
    """Clustering accuracy (ACC) under the best one-to-one matching of labels.

    ``ACC = max_m (1/n) sum_i [y_i == m(c_i)]``, where ``m`` ranges over the
    one-to-one maps from predicted clusters to true classes. The best map is
    found with the Hungarian algorithm
    (:func:`scipy.optimize.linear_sum_assignment`) on the contingency table,
    in polynomial time. When there are more clusters than classes, the
    unmatched clusters count as errors; when there are fewer, the unmatched
    classes do. ACC is therefore 1 exactly when the two labelings are equal
    up to renaming.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Ground-truth classes: ints, strings or any hashable values.
    labels_pred : array-like of shape (n_samples,)
        Cluster labels to evaluate; any values, any number of clusters.

    Returns
    -------
    accuracy : float
        In ``(0, 1]``.

    Raises
    ------
    ValueError
        If the labelings are empty, not 1-d or of different lengths, or if
        float labels hold NaN or infinity.

    See Also
    --------
    purity : the majority-class score, which lets several clusters share a class.

    Notes
    -----
    To select hyper-parameters with scikit-learn's search tools, use
    :data:`mvlearn_ext.metrics.clustering_accuracy_scorer` (or
    ``sklearn.metrics.make_scorer(clustering_accuracy)``): it calls the
    estimator's ``predict``.

    Examples
    --------
    >>> from mvlearn_ext.metrics import clustering_accuracy
    >>> clustering_accuracy([0, 0, 1, 1, 2, 2], [2, 2, 0, 0, 1, 1])
    1.0
    >>> clustering_accuracy(["a", "a", "a", "b"], [0, 0, 1, 1])
    0.75

    In a grid search:

    >>> from sklearn.cluster import KMeans
    >>> from sklearn.datasets import make_blobs
    >>> from sklearn.model_selection import GridSearchCV
    >>> from mvlearn_ext.metrics import clustering_accuracy_scorer
    >>> X, y = make_blobs(n_samples=60, centers=3, random_state=0)
    >>> search = GridSearchCV(
    ...     KMeans(n_init=3, random_state=0), {"n_clusters": [2, 3, 4]},
    ...     scoring=clustering_accuracy_scorer, cv=2,
    ... ).fit(X, y)
    >>> search.best_params_
    {'n_clusters': 3}
    """
    return _accuracy_from_table(contingency_table(labels_true, labels_pred))


def purity(labels_true, labels_pred):
    """Purity: the fraction of samples in the majority class of their cluster.

    ``purity = (1/n) sum_j max_i |C_j ∩ Y_i|`` over predicted clusters
    ``C_j`` and true classes ``Y_i``. Unlike :func:`clustering_accuracy`,
    several clusters may take the same class, so ``purity >= ACC``; it rises
    to 1 with one cluster per sample and is only comparable between
    clusterings with the same number of clusters.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Ground-truth classes: ints, strings or any hashable values.
    labels_pred : array-like of shape (n_samples,)
        Cluster labels to evaluate.

    Returns
    -------
    purity : float
        In ``(0, 1]``.

    Raises
    ------
    ValueError
        If the labelings are empty, not 1-d or of different lengths, or if
        float labels hold NaN or infinity.

    See Also
    --------
    clustering_accuracy : Accuracy after a one-to-one matching.
    contingency_table : The counts it is computed from.

    Examples
    --------
    >>> from mvlearn_ext.metrics import purity
    >>> purity([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2])
    0.8333333333333334
    """
    return _purity_from_table(contingency_table(labels_true, labels_pred))


def normalized_mutual_info(labels_true, labels_pred, *, average_method="arithmetic"):
    """Normalised mutual information (NMI) with an explicit normalisation.

    ``NMI = I(Y; C) / mean(H(Y), H(C))`` where the "mean" is chosen by
    ``average_method``. Papers do not agree on it, and the choice moves
    reported figures by a few points, so state it when comparing:

    * ``"arithmetic"``: ``(H(Y) + H(C)) / 2``, scikit-learn's default (since
      0.22), equal to the V-measure;
    * ``"geometric"`` (alias ``"sqrt"``): ``sqrt(H(Y) H(C))``, the definition
      of Strehl & Ghosh (2002);
    * ``"max"``: ``max(H(Y), H(C))``, used by widely copied MATLAB evaluation
      code of the (multi-view) clustering literature (e.g. Deng Cai's
      ``MutualInfo.m``; beware that script also pads the labels when the
      numbers of classes and clusters differ);
    * ``"min"``: ``min(H(Y), H(C))``.

    For a given pair, ``min >= geometric >= arithmetic >= max``. The value
    is computed by :func:`sklearn.metrics.normalized_mutual_info_score`; when
    both labelings have a single cluster it is 1.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Ground-truth classes: ints, strings or any hashable values.
    labels_pred : array-like of shape (n_samples,)
        Cluster labels to evaluate.
    average_method : {"arithmetic", "geometric", "sqrt", "max", "min"}, \
default="arithmetic"
        The normalisation.

    Returns
    -------
    nmi : float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        If the labelings are empty, not 1-d or of different lengths, if
        float labels hold NaN or infinity, or if ``average_method`` is
        unknown.

    See Also
    --------
    sklearn.metrics.normalized_mutual_info_score : scikit-learn's NMI.
    clustering_report : All scores at once.

    References
    ----------
    .. [1] Strehl, A. and Ghosh, J. (2002). Cluster ensembles: a knowledge
       reuse framework for combining multiple partitions. JMLR 3, 583-617.
    .. [2] Vinh, N. X., Epps, J. and Bailey, J. (2010). Information theoretic
       measures for clusterings comparison. JMLR 11, 2837-2854.

    Examples
    --------
    >>> from mvlearn_ext.metrics import normalized_mutual_info
    >>> y, c = [0, 0, 1, 1], [0, 0, 1, 2]
    >>> round(normalized_mutual_info(y, c), 4)
    0.8
    >>> round(normalized_mutual_info(y, c, average_method="max"), 4)
    0.6667
    """
    if not isinstance(average_method, str) or average_method not in _NMI_METHODS:
        raise ValueError(
            f"average_method must be one of {sorted(_NMI_METHODS)}, got {average_method!r}"
        )
    codes_true, _, codes_pred, _ = _check_labelings(labels_true, labels_pred)
    return float(
        normalized_mutual_info_score(
            codes_true, codes_pred, average_method=_NMI_METHODS[average_method]
        )
    )


def clustering_report(labels_true, labels_pred):
    """The usual external clustering scores, computed together.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Ground-truth classes: ints, strings or any hashable values.
    labels_pred : array-like of shape (n_samples,)
        Cluster labels to evaluate.

    Returns
    -------
    report : dict of str to float
        ``"ACC"`` (:func:`clustering_accuracy`), ``"NMI"``
        (:func:`normalized_mutual_info`, arithmetic normalisation),
        ``"NMI_max"`` (max normalisation), ``"ARI"``
        (:func:`sklearn.metrics.adjusted_rand_score`) and ``"purity"``
        (:func:`purity`), in this order.

    Raises
    ------
    ValueError
        If the labelings are empty, not 1-d or of different lengths, or if
        float labels hold NaN or infinity.

    See Also
    --------
    clustering_accuracy : Accuracy after the best matching of clusters to classes.
    normalized_mutual_info, purity : The other scores it reports.

    Examples
    --------
    >>> from mvlearn_ext.metrics import clustering_report
    >>> report = clustering_report([0, 0, 1, 1], [1, 1, 0, 0])
    >>> report
    {'ACC': 1.0, 'NMI': 1.0, 'NMI_max': 1.0, 'ARI': 1.0, 'purity': 1.0}
    """
    codes_true, k_true, codes_pred, k_pred = _check_labelings(labels_true, labels_pred)
    table = _contingency(codes_true, k_true, codes_pred, k_pred)
    return {
        "ACC": _accuracy_from_table(table),
        "NMI": float(normalized_mutual_info_score(codes_true, codes_pred)),
        "NMI_max": float(
            normalized_mutual_info_score(codes_true, codes_pred, average_method="max")
        ),
        "ARI": float(adjusted_rand_score(codes_true, codes_pred)),
        "purity": _purity_from_table(table),
    }
