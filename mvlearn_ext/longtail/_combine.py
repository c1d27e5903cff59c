"""Gradient combination on flattened per-task gradients: PCGrad and entropy weighting (NumPy)."""

from __future__ import annotations

import numpy as np

from mvlearn_ext.utils._validation import check_magnitude, check_rng, real_array

__all__ = ["combine_gradients", "entropy_task_weights", "gradient_entropy", "pcgrad_project"]


def _check_grads(grads):
    """``grads`` as a float64 array of shape (n_tasks, n_params) that can be squared."""
    g = real_array(grads, "grads", ndim=2)
    check_magnitude(g, "grads")
    return g


def pcgrad_project(grads, *, random_state=None):
    """PCGrad: project each task gradient off the others it conflicts with.

    For each i, start from ``g_i``; over ``j != i`` in a random order, if
    ``g_i^PC . g_j < 0`` then ``g_i^PC -= (g_i^PC . g_j / |g_j|^2) g_j``, with
    ``g_j`` the *original* gradient (Yu et al., NeurIPS 2020). Sum or average
    the rows for the update.

    Parameters
    ----------
    grads : array-like of shape (n_tasks, n_params)
    random_state : int, Generator or None
        Seeds the projection orders.

    Returns
    -------
    projected : ndarray of shape (n_tasks, n_params)

    See Also
    --------
    combine_gradients : Combines the projected gradients.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.longtail import pcgrad_project
    >>> pcgrad_project([[1.0, 0.0], [-1.0, 1.0]], random_state=0).tolist()
    [[0.5, 0.5], [0.0, 1.0]]
    """
    return _pcgrad(_check_grads(grads), check_rng(random_state))


def _pcgrad(g, rng):
    """:func:`pcgrad_project` of validated gradients."""
    out = g.copy()
    norms2 = np.einsum("ij,ij->i", g, g)
    for i in range(g.shape[0]):
        for j in rng.permutation(g.shape[0]):
            if j == i or norms2[j] == 0:
                continue
            dot = out[i] @ g[j]
            if dot < 0:
                out[i] -= dot / norms2[j] * g[j]
    return out


def gradient_entropy(grads, masks=None):
    """Entropy ``H_k = -sum p log p`` of ``p = |g_k| / |g_k|_1`` over each task's coordinates.

    Low entropy: a concentrated, task-specific gradient. A zero gradient has
    entropy 0.

    Parameters
    ----------
    grads : array-like of shape (n_tasks, n_params)
        The flattened gradient of every task.
    masks : array-like of bool, shape (n_tasks, n_params), default=None
        The coordinates each task touches; None counts every coordinate.

    Returns
    -------
    entropy : ndarray of shape (n_tasks,)
        The entropy of every task's normalised gradient magnitudes.

    See Also
    --------
    entropy_task_weights : The task weights built on it.

    Examples
    --------
    >>> from mvlearn_ext.longtail import gradient_entropy
    >>> (gradient_entropy([[1.0, 0.0], [1.0, 1.0]]) + 0.0).round(4).tolist()  # 0 and log 2
    [0.0, 0.6931]
    """
    g = _check_grads(grads)
    if masks is not None:
        g = g * np.asarray(masks, dtype=bool)
    return _entropy(g)


def _entropy(g):
    """:func:`gradient_entropy` of validated (masked) gradients."""
    g = np.abs(g)
    total = g.sum(axis=1, keepdims=True)
    p = np.divide(g, total, out=np.zeros_like(g), where=total > 0)
    logp = np.log(p, out=np.zeros_like(p), where=p > 0)
    return -(p * logp).sum(axis=1)


def entropy_task_weights(grads, masks=None, *, temperature=0.5):
    """Task weights ``omega = softmax(I / T)`` of the entropy-aware combiner.

    ``I_k = H_k sqrt(1 + c_k) |g_k|^(-1/2)`` with ``c_k`` the mean over
    ``l != k`` of ``max(0, -cos(g_k, g_l))`` (the conflict of task k). From
    the code of ``wangff0101/evo_longtail`` (reconstruction of AES).

    Parameters
    ----------
    grads : array-like of shape (n_tasks, n_params)
        The flattened gradient of every task.
    masks : array-like of bool, shape (n_tasks, n_params), default=None
        The coordinates each task touches; None counts every coordinate.
    temperature : float, default=0.5
        The softmax temperature of the task weights; lower is sharper.

    Returns
    -------
    omega : ndarray of shape (n_tasks,)
        Task weights summing to one.

    See Also
    --------
    gradient_entropy : The entropies they are built on.
    combine_gradients : The combination that uses them.

    Examples
    --------
    >>> from mvlearn_ext.longtail import entropy_task_weights
    >>> entropy_task_weights([[1.0, 1.0], [1.0, 1.0]]).tolist()
    [0.5, 0.5]
    """
    g = _check_grads(grads)
    if masks is not None:
        g = g * np.asarray(masks, dtype=bool)
    return _task_weights(g, temperature)


def _task_weights(g, temperature):
    """:func:`entropy_task_weights` of validated (masked) gradients."""
    k = g.shape[0]
    norms = np.linalg.norm(g, axis=1)
    safe = np.where(norms > 0, norms, 1.0)
    cos = (g @ g.T) / np.outer(safe, safe)
    conflict = np.maximum(0.0, -cos)
    np.fill_diagonal(conflict, 0.0)
    c = conflict.sum(axis=1) / max(k - 1, 1)
    importance = _entropy(g) * np.sqrt(1.0 + c) / np.sqrt(np.maximum(norms, 1e-12))
    importance = np.where(norms > 0, importance, -np.inf) if np.any(norms > 0) else np.zeros(k)
    x = importance / float(temperature)
    x = np.exp(x - x.max())
    return x / x.sum()


def combine_gradients(
    grads,
    masks=None,
    *,
    mode="entropy_weighted",
    temperature=0.5,
    reduction="mean",
    random_state=None,
):
    """Combine per-task gradients into one update.

    ``mode`` is one of:

    ``"entropy_weighted"``
        The code-faithful combiner: ``g = sum_k omega_k m_k g_k / sum_k omega_k m_k``
        per coordinate (``m_k`` the coordinates task k touches, default
        ``g_k != 0``; 0 where no task does). No projection: a coordinate
        owned by one task receives exactly that task's gradient.
    ``"pcgrad_entropy"``
        Entropy-aware PCGrad: project with :func:`pcgrad_project` first, then
        combine the projected gradients with the same per-coordinate
        weighted mean; ``omega`` is computed from the original gradients.
    ``"pcgrad"``
        Plain PCGrad: the projected gradients summed (``reduction="sum"``,
        LibMTL) or averaged (``"mean"``, the ``pc_backward`` wrapper).

    Parameters
    ----------
    grads : array-like of shape (n_tasks, n_params)
        The flattened gradient of every task.
    masks : array-like of bool, shape (n_tasks, n_params), default=None
        The coordinates each task touches; None counts every coordinate.
    mode : {"entropy_weighted", "pcgrad_entropy", "pcgrad"}, default="entropy_weighted"
        The combiner, as above.
    temperature : float, default=0.5
        The softmax temperature of the task weights; lower is sharper.
    reduction : {"mean", "sum"}, default="mean"
        How ``"pcgrad"`` reduces the projected gradients.
    random_state : int, Generator or None, default=None
        Seeds the projection orders of the PCGrad modes.

    Returns
    -------
    g : ndarray of shape (n_params,)
    weights : ndarray of shape (n_tasks,)
        omega (uniform for ``"pcgrad"``).

    See Also
    --------
    pcgrad_project : PCGrad's projection.
    entropy_task_weights : The task weights.
    EntropyPCGrad : The combiner for torch parameters.

    Examples
    --------
    >>> from mvlearn_ext.longtail import combine_gradients
    >>> g, weights = combine_gradients([[1.0, 0.0], [0.0, 2.0]])
    >>> g.tolist()  # a coordinate owned by one task gets that task's gradient
    [1.0, 2.0]
    """
    g = _check_grads(grads)
    if mode not in {"entropy_weighted", "pcgrad_entropy", "pcgrad"}:
        raise ValueError(
            f"mode must be 'entropy_weighted', 'pcgrad_entropy' or 'pcgrad', got {mode!r}"
        )
    if reduction not in {"mean", "sum"}:
        raise ValueError(f"reduction must be 'mean' or 'sum', got {reduction!r}")
    m = (g != 0) if masks is None else np.asarray(masks, dtype=bool)
    if m.shape != g.shape:
        raise ValueError(f"masks must have the shape of grads {g.shape}, got {m.shape}")
    if mode == "pcgrad":
        proj = _pcgrad(g, check_rng(random_state))
        k = g.shape[0]
        return (proj.sum(axis=0) if reduction == "sum" else proj.mean(axis=0)), np.full(k, 1.0 / k)
    omega = _task_weights(g * m, temperature)
    src = _pcgrad(g, check_rng(random_state)) if mode == "pcgrad_entropy" else g
    wm = omega[:, None] * m
    denom = wm.sum(axis=0)
    num = (wm * src).sum(axis=0)
    return np.divide(num, denom, out=np.zeros_like(num), where=denom > 0), omega
