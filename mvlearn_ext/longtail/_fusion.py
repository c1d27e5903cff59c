"""Conflict-arbitrated fusion of several classifier heads, label-free at inference (NumPy).

From the code of ``wangff0101/evo_longtail`` (reconstruction of AES), with its
label leak removed: the public code's sample-level arbitration reads the
*test label* (the probability and class weight of the true class, and whether
the true class is a tail class, with the tail test inverted and counts taken
from the evaluation split). Here each head is judged at its *own* predicted
class, tail status comes from the *training* counts (tail = few samples), and
no function that predicts takes labels.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils import metadata_routing
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from mvlearn_ext.utils._validation import integer_array, real_array

__all__ = ["ConflictArbitratedFusion"]


def _softmax(z, axis=-1):
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def _head_confidence(z, cand, temperature):
    """``softmax(z / temperature)`` at the argmax ``cand`` of every head and sample.

    Computed as ``1 / sum_j exp((z_j - max z) / temperature)``, which stays in
    ``[1 / n_classes, 1]`` for every positive temperature (a tiny one gives
    its limit, 1 for a head with a unique argmax, without overflow).
    """
    with np.errstate(over="ignore", under="ignore"):
        shifted = (z - np.take_along_axis(z, cand[..., None], axis=2)) / temperature
        return 1.0 / np.exp(shifted).sum(axis=2)


def _check_train_counts(train_counts):
    """``train_counts`` as a float64 vector of at least two positive counts."""
    n = real_array(train_counts, "train_counts", ndim=1)
    if n.size < 2:
        raise ValueError(f"train_counts must hold one count per class (at least 2), got {n.size}")
    if np.any(n <= 0):
        raise ValueError(f"train_counts must be positive, got a minimum of {n.min():g}")
    return n


def _check_head_logits(head_logits, n_classes=None):
    """``head_logits`` as a finite float64 array of shape (n_heads, n_samples, n_classes)."""
    z = real_array(head_logits, "head_logits", ndim=3)
    if n_classes is not None and z.shape[2] != n_classes:
        raise ValueError(
            f"head_logits has {z.shape[2]} classes, the fusion was fit with {n_classes}"
        )
    return z


class ConflictArbitratedFusion(BaseEstimator):
    """Per-class head weights fit on a validation split; label-free arbitration at inference.

    Fit (validation logits and labels):

    * ``A[k, c]`` recall of head k on class c, ``F[k, c]`` its prediction frequency;
    * ``score = A + 0.5 max(0, A - mean_k A) + 0.9 clip(F - mean_c F[k], -0.05, 0.2)``;
    * tail classes (training count below ``tail_threshold``) boosted by
      ``1 + 2.2 rarity_c difficulty_c`` (rarity ``1 - sqrt(n_c / n_max)``,
      difficulty ``1 - mean_k A[k, c]``);
    * per class, softmax over heads at temperature 0.9 (0.54 for tail classes);
    * EMA-blended with the previous weights (uniform at the first fit;
      momentum 0.94 for head classes, 0.38 for tail), renormalised per class.

    Predict (logits only): if every head's argmax agrees, that class;
    otherwise the candidate ``c_k = argmax z_k`` of the head with the best
    ``conf_k (1 + 1.05 W[k, c_k]) + 0.55 margin_k``, times 1.25 when ``c_k`` is
    a tail class, where ``conf_k = softmax(z_k / temperature)[c_k]`` and
    ``margin_k = (p1 - p2) / (|p1| + |p2|)`` of head k's top two
    probabilities. :meth:`predict_proba` is the soft fusion
    ``sum_k W[k, c] softmax(z_k)_c`` (renormalised).

    A scikit-learn estimator: the parameters are stored as given and
    validated by :meth:`fit`, and :func:`sklearn.base.clone` gives an unfitted
    copy. Its inputs are 3-D (one slice of logits per head), so its tags say
    that it takes no single 2-D array.

    Parameters
    ----------
    train_counts : array-like of shape (n_classes,) or None, default=None
        Training samples per class (for rarity and tail status): at least two
        positive, finite counts. ``None`` takes the class counts of the
        labels ``y`` given to :meth:`fit` (every class must occur there), for
        a validation split drawn like the training data; ``tail_threshold``
        is then compared with those counts.
    tail_threshold : float, default=20
        A class is a tail class when its training count is below this; at
        least 0 and finite.
    temperature : float, default=1.0
        Softmax temperature of ``conf_k``; positive and finite.

    Attributes
    ----------
    weights_ : ndarray of shape (n_heads, n_classes)
        The per-class head weights; every column sums to one.
    recall_ : ndarray of shape (n_heads, n_classes)
        The recall ``A`` of every head on every class, on the last fit.
    tail_ : ndarray of bool, shape (n_classes,)
        Which classes are tail classes.
    n_heads_ : int
        The number of heads seen at fit.

    See Also
    --------
    FusionModule : The same fusion as a torch module.
    AESClassifier : The classifier whose heads it fuses.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.longtail import ConflictArbitratedFusion
    >>> rng = np.random.default_rng(0)
    >>> val = rng.normal(size=(2, 30, 3))
    >>> fusion = ConflictArbitratedFusion([20, 10, 5], tail_threshold=8)
    >>> fusion = fusion.fit(val, rng.integers(0, 3, 30))
    >>> fusion.predict(rng.normal(size=(2, 4, 3))).shape
    (4,)
    >>> fusion.predict_proba(rng.normal(size=(2, 4, 3))).sum(axis=1).round(6)
    array([1., 1., 1., 1.])
    """

    _parameter_constraints: dict = {
        "train_counts": ["array-like", None],
        "tail_threshold": [Interval(Real, 0, None, closed="left")],
        "temperature": [Interval(Real, 0, None, closed="neither")],
    }

    # head_logits is the data (scikit-learn's X), not metadata to route
    __metadata_request__fit = {"head_logits": metadata_routing.UNUSED}
    __metadata_request__predict = {"head_logits": metadata_routing.UNUSED}
    __metadata_request__predict_proba = {"head_logits": metadata_routing.UNUSED}

    def __init__(self, train_counts=None, *, tail_threshold=20, temperature=1.0):
        self.train_counts = train_counts
        self.tail_threshold = tail_threshold
        self.temperature = temperature

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.three_d_array = True
        return tags

    def _statics(self, y, n_classes):
        if self.train_counts is None:
            n = np.bincount(y, minlength=n_classes).astype(np.float64)
            if np.any(n == 0):
                raise ValueError(
                    f"y has no sample of class {int(np.argmin(n))}; with train_counts=None "
                    "the class counts come from y, so pass train_counts"
                )
        else:
            n = _check_train_counts(self.train_counts)
        return n, 1.0 - np.sqrt(n / n.max()), n < self.tail_threshold

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, head_logits, y):
        """Fit the per-class head weights on validation logits and labels.

        Parameters
        ----------
        head_logits : array-like of shape (n_heads, n_samples, n_classes)
            The logits of every head.
        y : array-like of int, shape (n_samples,)
            The validation labels, in ``0 .. n_classes - 1``.

        Returns
        -------
        self : ConflictArbitratedFusion
            The fitted fusion; a refit blends the new weights with the
            previous ones.

        Raises
        ------
        sklearn.utils._param_validation.InvalidParameterError
            If ``train_counts`` is not array-like, ``tail_threshold`` not a
            finite real number at least 0, or ``temperature`` not a positive,
            finite real number.
        TypeError
            If ``head_logits``, ``y`` or ``train_counts`` is not numeric
            (strings of digits included), or ``y`` holds booleans.
        ValueError
            If ``train_counts`` is not 1-D, has fewer than two entries or
            holds a count that is not positive, NaN or infinity; if
            ``head_logits`` is not 3-D, is empty, holds complex values, NaN
            or infinity, or has not one class per entry of ``train_counts``;
            if ``y`` holds fractions, NaN, infinity or a label outside
            ``0 .. n_classes - 1``, or not one label per sample, or (with
            ``train_counts=None``) lacks a class.
        """
        if self.train_counts is None:
            z = _check_head_logits(head_logits)
        else:
            z = _check_head_logits(head_logits, _check_train_counts(self.train_counts).size)
        y = integer_array(y, "y", low=0, high=z.shape[2] - 1, allow_empty=True)
        if y.shape != (z.shape[1],):
            raise ValueError(f"y must have shape ({z.shape[1]},), got {y.shape}")
        n, rarity, tail = self._statics(y, z.shape[2])
        n_heads, _, n_classes = z.shape
        pred = z.argmax(axis=2)
        A = np.zeros((n_heads, n_classes))
        F = np.zeros((n_heads, n_classes))
        for c in range(n_classes):
            if np.any(y == c):
                A[:, c] = (pred[:, y == c] == c).mean(axis=1)
            F[:, c] = (pred == c).mean(axis=1)
        score = (
            A
            + 0.5 * np.maximum(0.0, A - A.mean(axis=0))
            + 0.9 * np.clip(F - F.mean(axis=1, keepdims=True), -0.05, 0.2)
        )
        difficulty = 1.0 - A.mean(axis=0)
        score = score * np.where(tail, 1.0 + 2.2 * rarity * difficulty, 1.0)
        temp = np.where(tail, 0.54, 0.9)
        soft = _softmax(score / temp, axis=0)
        prev = getattr(self, "weights_", np.full((n_heads, n_classes), 1.0 / n_heads))
        if prev.shape != soft.shape:
            prev = np.full((n_heads, n_classes), 1.0 / n_heads)
        momentum = np.where(tail, 0.38, 0.94)
        W = momentum * prev + (1.0 - momentum) * soft
        self.weights_ = W / W.sum(axis=0, keepdims=True)
        self.recall_ = A
        self.tail_ = tail
        self.n_heads_ = n_heads
        return self

    def _check_fitted(self, head_logits):
        check_is_fitted(self, "weights_")
        z = _check_head_logits(head_logits, self.weights_.shape[1])
        if z.shape[0] != self.n_heads_:
            raise ValueError(
                f"head_logits has {z.shape[0]} heads, the fusion was fit with {self.n_heads_}"
            )
        return z

    def predict_proba(self, head_logits):
        """Soft fusion ``sum_k W[k, c] softmax(z_k)_c``, renormalised.

        Parameters
        ----------
        head_logits : array-like of shape (n_heads, n_samples, n_classes)
            The logits of every head.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows summing to one.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the fusion is not fitted.
        TypeError
            If ``head_logits`` is not numeric (strings of digits included).
        ValueError
            If ``head_logits`` is not 3-D, is empty, holds complex values, NaN
            or infinity, or has not the heads and classes of the fit.
        """
        z = self._check_fitted(head_logits)
        p = np.einsum("kc,knc->nc", self.weights_, _softmax(z, axis=2))
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, head_logits):
        """Label-free sample-level arbitration.

        Parameters
        ----------
        head_logits : array-like of shape (n_heads, n_samples, n_classes)
            The logits of every head.

        Returns
        -------
        y_pred : ndarray of int, shape (n_samples,)
            The arbitrated class of every sample.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the fusion is not fitted.
        TypeError
            If ``head_logits`` is not numeric (strings of digits included).
        ValueError
            If ``head_logits`` is not 3-D, is empty, holds complex values, NaN
            or infinity, or has not the heads and classes of the fit.
        """
        z = self._check_fitted(head_logits)
        n_heads, n_samples, _ = z.shape
        cand = z.argmax(axis=2)  # (K, n)
        agree = np.all(cand == cand[0], axis=0)
        conf = _head_confidence(z, cand, float(self.temperature))
        p_sorted = np.sort(_softmax(z, axis=2), axis=2)
        p1, p2 = p_sorted[..., -1], p_sorted[..., -2]
        margin = (p1 - p2) / (np.abs(p1) + np.abs(p2))
        w_cand = self.weights_[np.arange(n_heads)[:, None], cand]
        score = conf * (1.0 + 1.05 * w_cand) + 0.55 * margin
        score = score * np.where(self.tail_[cand], 1.25, 1.0)
        best = score.argmax(axis=0)
        arbitrated = cand[best, np.arange(n_samples)]
        return np.where(agree, cand[0], arbitrated)
