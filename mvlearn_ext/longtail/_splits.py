"""Long-tailed class profiles, splits and many/medium/few metrics."""

from __future__ import annotations

import numbers

import numpy as np

from mvlearn_ext.utils._validation import check_rng, integer_array, real_array

__all__ = ["class_groups", "group_accuracy", "long_tail_counts", "make_long_tail_indices"]


def long_tail_counts(n_max, n_classes, imbalance_ratio):
    """Exponential profile ``n_c = floor(n_max * IR ** (-c / (C - 1)))``, c = 0..C-1.

    Class 0 keeps ``n_max`` samples and class C-1 ``floor(n_max / IR)``
    (rounding rule: floor, after adding 1e-9 against representation error);
    every class keeps at least one sample.

    Parameters
    ----------
    n_max : int
        The size of the head class (class 0).
    n_classes : int
        The number of classes.
    imbalance_ratio : float
        The ratio of the head class's size to the tail class's, at least 1.

    Returns
    -------
    counts : ndarray of int, shape (n_classes,)
        Non-increasing class sizes.

    See Also
    --------
    make_long_tail_indices : A subsample with these counts.

    Examples
    --------
    >>> from mvlearn_ext.longtail import long_tail_counts
    >>> long_tail_counts(100, 3, 4).tolist()
    [100, 50, 25]
    """
    for name, value in (("n_max", n_max), ("n_classes", n_classes)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if not isinstance(imbalance_ratio, numbers.Real) or not imbalance_ratio >= 1:
        raise ValueError(f"imbalance_ratio must be a real number >= 1, got {imbalance_ratio!r}")
    if n_classes == 1:
        return np.array([n_max])
    c = np.arange(n_classes)
    counts = np.floor(n_max * float(imbalance_ratio) ** (-c / (n_classes - 1)) + 1e-9)
    return np.maximum(counts.astype(int), 1)


def make_long_tail_indices(y, imbalance_ratio, *, n_max=None, class_order=None, random_state=None):
    """Indices of a long-tailed subsample of ``y`` following :func:`long_tail_counts`.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Integer labels.
    imbalance_ratio : float >= 1
    n_max : int, default=None
        Size of the head class (default: the smallest class count in ``y``,
        so every class can supply its quota).
    class_order : array-like, default=None
        Classes from head to tail (default: sorted labels).
    random_state : int, Generator or None

    Returns
    -------
    indices : ndarray of int
        Sorted indices into ``y``.

    See Also
    --------
    long_tail_counts : The class sizes.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.longtail import make_long_tail_indices
    >>> y = np.repeat([0, 1, 2], 100)
    >>> idx = make_long_tail_indices(y, 4, random_state=0)
    >>> np.bincount(y[idx]).tolist()
    [100, 50, 25]
    """
    y = integer_array(y, "y", ndim=1)
    classes = (
        np.unique(y) if class_order is None else integer_array(class_order, "class_order", ndim=1)
    )
    available = np.array([np.sum(y == c) for c in classes])
    if n_max is None:
        n_max = int(available.min())
    counts = long_tail_counts(n_max, classes.size, imbalance_ratio)
    short = [(c, a, n) for c, a, n in zip(classes, available, counts, strict=True) if a < n]
    if short:
        c, a, n = short[0]
        raise ValueError(f"class {c!r} has {a} samples, fewer than its quota {n}; lower n_max")
    rng = check_rng(random_state)
    picked = [
        rng.choice(np.flatnonzero(y == c), n, replace=False)
        for c, n in zip(classes, counts, strict=True)
    ]
    return np.sort(np.concatenate(picked))


def class_groups(counts, *, many_threshold=100, few_threshold=20):
    """Group of each class from its training count: "many" (> many), "few" (< few), else "medium".

    The defaults are the ImageNet-LT convention; small data sets need smaller
    thresholds.

    Parameters
    ----------
    counts : array-like of int, shape (n_classes,)
        Training samples per class.
    many_threshold : int, default=100
        A class with more training samples than this is a "many" class.
    few_threshold : int, default=20
        A class with fewer training samples than this is a "few" class.

    Returns
    -------
    groups : ndarray of str, shape (n_classes,)
        "many", "medium" or "few" for every class.

    See Also
    --------
    group_accuracy : The accuracy within each group.

    Examples
    --------
    >>> from mvlearn_ext.longtail import class_groups
    >>> class_groups([500, 50, 5]).tolist()
    ['many', 'medium', 'few']
    """
    counts = real_array(counts, "counts", ndim=1, allow_empty=True)
    if few_threshold > many_threshold:
        raise ValueError("few_threshold must not exceed many_threshold")
    return np.where(
        counts > many_threshold, "many", np.where(counts < few_threshold, "few", "medium")
    )


def group_accuracy(y_true, y_pred, train_counts, *, many_threshold=100, few_threshold=20):
    """Balanced (mean per-class) accuracy overall and within the many/medium/few groups.

    ``train_counts[c]`` is the number of training samples of class ``c``
    (classes are ``0..C-1``). Groups with no class are reported as NaN.

    Parameters
    ----------
    y_true : array-like of int, shape (n_samples,)
        The true labels.
    y_pred : array-like of int, shape (n_samples,)
        The predicted labels.
    train_counts : array-like of int, shape (n_classes,)
        Training samples per class, which decide the groups.
    many_threshold : int, default=100
        A class with more training samples than this is a "many" class.
    few_threshold : int, default=20
        A class with fewer training samples than this is a "few" class.

    Returns
    -------
    accuracy : dict
        ``{"overall", "many", "medium", "few"}`` to the mean per-class
        accuracy of that group.

    See Also
    --------
    class_groups : The groups.
    sklearn.metrics.balanced_accuracy_score : The overall balanced accuracy.

    Examples
    --------
    >>> from mvlearn_ext.longtail import group_accuracy
    >>> acc = group_accuracy([0, 0, 1, 2], [0, 1, 1, 0], [500, 50, 5])
    >>> acc["overall"], acc["many"], acc["few"]
    (0.5, 0.5, 0.0)
    """
    y_true = integer_array(y_true, "y_true", ndim=1)
    y_pred = integer_array(y_pred, "y_pred", ndim=1)
    if y_true.shape != y_pred.shape:
        raise ValueError("y_true and y_pred must have the same shape")
    counts = real_array(train_counts, "train_counts", ndim=1)
    groups = class_groups(counts, many_threshold=many_threshold, few_threshold=few_threshold)
    per_class = np.array(
        [
            np.mean(y_pred[y_true == c] == c) if np.any(y_true == c) else np.nan
            for c in range(counts.size)
        ]
    )
    out = {"overall": float(np.nanmean(per_class))}
    for g in ("many", "medium", "few"):
        sel = (groups == g) & ~np.isnan(per_class)
        out[g] = float(per_class[sel].mean()) if sel.any() else float("nan")
    return out
