"""Long-tail losses on logits (NumPy): logit-adjusted CE, Balanced Softmax, ARS class statistics.

The ARS (Adaptive Residual Supervision) pieces follow the public code of
``wangff0101/evo_longtail``, identified with AES as a reconstruction (no AES
paper or code was available). The torch loss ``mvlearn_ext.longtail.ARSLoss``
uses :func:`ars_class_weights` and :func:`ars_static_terms` each batch.
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext.utils._validation import integer_array, real_array

__all__ = [
    "ars_class_weights",
    "ars_static_terms",
    "balanced_softmax_loss",
    "logit_adjusted_loss",
    "softmax_cross_entropy",
]


def _check_logits(logits, y):
    z = real_array(logits, "logits", ndim=2)
    y = integer_array(y, "y", ndim=1, low=0, high=z.shape[1] - 1)
    if y.shape != (z.shape[0],):
        raise ValueError(f"y must have shape ({z.shape[0]},), got {y.shape}")
    return z, y


def _check_counts(class_counts, n_classes):
    n = real_array(class_counts, "class_counts", ndim=1)
    if n.shape != (n_classes,) or np.any(n <= 0):
        raise ValueError(f"class_counts must be {n_classes} positive counts, got {class_counts!r}")
    return n


def softmax_cross_entropy(logits, y, *, return_grad=False):
    """Mean cross-entropy ``-log softmax(z)_y`` and, optionally, its gradient in ``z``.

    Parameters
    ----------
    logits : array-like of shape (n_samples, n_classes)
        The logits ``z``.
    y : array-like of int, shape (n_samples,)
        The labels, in ``0 .. n_classes - 1``.
    return_grad : bool, default=False
        Also return the gradient with respect to ``logits``.

    Returns
    -------
    loss : float
        The mean loss.
    grad : ndarray of shape (n_samples, n_classes)
        Its gradient; only with ``return_grad=True``.

    See Also
    --------
    logit_adjusted_loss, balanced_softmax_loss : The long-tail losses.

    Examples
    --------
    >>> import numpy as np
    >>> z, y = np.array([[2.0, 0.0], [0.0, 1.0]]), np.array([0, 1])
    >>> from mvlearn_ext.longtail import softmax_cross_entropy
    >>> round(softmax_cross_entropy(z, y), 4)
    0.2201
    """
    z, y = _check_logits(logits, y)
    return _xent(z, y, return_grad)


def _xent(z, y, return_grad):
    zs = z - z.max(axis=1, keepdims=True)
    log_p = zs - np.log(np.exp(zs).sum(axis=1, keepdims=True))
    loss = float(-log_p[np.arange(y.size), y].mean())
    if not return_grad:
        return loss
    grad = np.exp(log_p)
    grad[np.arange(y.size), y] -= 1.0
    return loss, grad / y.size


def logit_adjusted_loss(logits, y, class_counts, *, tau=1.0, return_grad=False):
    """Logit-adjusted CE ``-log softmax(z + tau log pi)_y`` (Menon et al., ICLR 2021).

    ``pi_c = n_c / N``. The gradient (``return_grad=True``) is with respect to
    the unadjusted logits ``z``.

    Parameters
    ----------
    logits : array-like of shape (n_samples, n_classes)
        The logits ``z``.
    y : array-like of int, shape (n_samples,)
        The labels, in ``0 .. n_classes - 1``.
    class_counts : array-like of shape (n_classes,)
        Training samples per class.
    tau : float, default=1.0
        The scale of the log-prior added to the logits.
    return_grad : bool, default=False
        Also return the gradient with respect to ``logits``.

    Returns
    -------
    loss : float
        The mean loss.
    grad : ndarray of shape (n_samples, n_classes)
        Its gradient; only with ``return_grad=True``.

    See Also
    --------
    balanced_softmax_loss : The Balanced Softmax loss.
    LogitAdjustedLoss : The torch module.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.longtail import logit_adjusted_loss, softmax_cross_entropy
    >>> z, y = np.array([[1.0, 0.0]]), np.array([0])
    >>> bool(np.isclose(logit_adjusted_loss(z, y, [1, 1]), softmax_cross_entropy(z, y)))
    True
    """
    z, y = _check_logits(logits, y)
    n = _check_counts(class_counts, z.shape[1])
    return _xent(z + float(tau) * np.log(n / n.sum()), y, return_grad)


def balanced_softmax_loss(logits, y, class_counts, *, return_grad=False):
    """Balanced Softmax: the CE of ``softmax(z + log n_c)`` (Ren et al., NeurIPS 2020).

    Parameters
    ----------
    logits : array-like of shape (n_samples, n_classes)
        The logits ``z``.
    y : array-like of int, shape (n_samples,)
        The labels, in ``0 .. n_classes - 1``.
    class_counts : array-like of shape (n_classes,)
        Training samples per class.
    return_grad : bool, default=False
        Also return the gradient with respect to ``logits``.

    Returns
    -------
    loss : float
        The mean loss.
    grad : ndarray of shape (n_samples, n_classes)
        Its gradient; only with ``return_grad=True``.

    See Also
    --------
    logit_adjusted_loss : The logit-adjusted loss.
    BalancedSoftmaxLoss : The torch module.

    Examples
    --------
    >>> import numpy as np
    >>> z, y = np.array([[2.0, 0.0], [0.0, 1.0]]), np.array([0, 1])
    >>> from mvlearn_ext.longtail import balanced_softmax_loss, softmax_cross_entropy
    >>> bool(balanced_softmax_loss(z, y, [1, 1]) == softmax_cross_entropy(z, y))
    True
    """
    z, y = _check_logits(logits, y)
    n = _check_counts(class_counts, z.shape[1])
    return _xent(z + np.log(n), y, return_grad)


def ars_static_terms(class_counts, *, beta=0.9999, margin_max=0.5):
    """Static ARS quantities: priors, class-balanced weights, rarity and base margins.

    * ``priors`` pi_c = n_c / N;
    * ``cb_weights`` proportional to ``(1 - beta) / (1 - beta ** n_c)``,
      mean-normalised (Cui et al., CVPR 2019);
    * ``rarity`` rho_c = 1 - sqrt(n_c / n_max);
    * ``margins`` m_c = rho_c * margin_max.

    Parameters
    ----------
    class_counts : array-like of shape (n_classes,)
        Training samples per class.
    beta : float, default=0.9999
        The effective-number parameter of the class-balanced weights, in [0, 1).
    margin_max : float, default=0.5
        The margin of a class of rarity one.

    Returns
    -------
    terms : dict of str to ndarray of shape (n_classes,)

    See Also
    --------
    ars_class_weights : The class weights built on them.

    Examples
    --------
    >>> from mvlearn_ext.longtail import ars_static_terms
    >>> terms = ars_static_terms([100, 25])
    >>> terms["priors"].tolist(), terms["rarity"].tolist()
    ([0.8, 0.2], [0.0, 0.5])
    """
    n = real_array(class_counts, "class_counts", ndim=1)
    if n.size < 2 or np.any(n <= 0):
        raise ValueError("class_counts must be a 1-D array of at least two positive counts")
    cb = (1.0 - beta) / (1.0 - beta**n)
    cb = cb / cb.mean()
    rarity = 1.0 - np.sqrt(n / n.max())
    return {
        "priors": n / n.sum(),
        "cb_weights": cb,
        "rarity": rarity,
        "margins": rarity * margin_max,
    }


def ars_class_weights(cb_weights, rarity, recall, precision, *, anneal=1.0, normalize=True):
    """ARS class weights with precision shielding.

    ``w_c = w_c^CB (1 + (1 - a_c)) min(1 + 2 rho_c, 3) (1 - P_c / 2)``, then
    annealed from uniform, ``(1 - t) + t w_c`` with ``t = anneal``, and
    mean-normalised. The factor ``(1 - P_c / 2)`` is the precision shield: a
    class already predicted precisely loses up to half its boost. (The cap 3
    never binds, since rho_c < 1; it is kept for fidelity to the code.)

    Parameters
    ----------
    cb_weights, rarity : ndarray of shape (n_classes,)
        From :func:`ars_static_terms`.
    recall, precision : ndarray of shape (n_classes,)
        Running (EMA) per-class recall a_c and precision P_c, in [0, 1].
    anneal : float in [0, 1], default=1.0
        t; 0 gives uniform weights.
    normalize : bool, default=True
        Mean-normalise after annealing.

    See Also
    --------
    ars_static_terms : The static inputs of the weights.
    ARSLoss : The loss that uses them.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.longtail import ars_class_weights, ars_static_terms
    >>> terms = ars_static_terms([100, 10])
    >>> w = ars_class_weights(terms["cb_weights"], terms["rarity"], recall=np.array([0.9, 0.3]),
    ...                       precision=np.array([0.8, 0.5]))
    >>> bool(w[1] > w[0])  # the rare, poorly recalled class weighs more
    True
    """
    cb, rho, a, p = (
        real_array(value, name, ndim=1)
        for value, name in (
            (cb_weights, "cb_weights"),
            (rarity, "rarity"),
            (recall, "recall"),
            (precision, "precision"),
        )
    )
    if not cb.shape == rho.shape == a.shape == p.shape:
        raise ValueError(
            "cb_weights, rarity, recall and precision must have one entry per class, got "
            f"shapes {cb.shape}, {rho.shape}, {a.shape} and {p.shape}"
        )
    a, p = np.clip(a, 0.0, 1.0), np.clip(p, 0.0, 1.0)
    raw = cb * (2.0 - a) * np.minimum(1.0 + 2.0 * rho, 3.0) * (1.0 - 0.5 * p)
    w = (1.0 - anneal) + anneal * raw
    return w / w.mean() if normalize else w
