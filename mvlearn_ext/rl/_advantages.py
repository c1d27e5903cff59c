"""Group-relative advantages, the std filter and entropy gating masks (GRPO).

Framework-free: every function takes and returns NumPy arrays. The torch
losses that consume them are in :mod:`mvlearn_ext.deep.rl`.
"""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np

from mvlearn_ext.utils._validation import check_magnitude, real_array

__all__ = [
    "entropy_mask",
    "group_advantages",
    "multi_reward_advantages",
    "std_filter",
]

_SCALES = ("group", "batch", "none")
_AGGREGATIONS = ("sum_then_normalize", "normalize_then_sum")


def _as_groups(rewards, group_size, name="rewards"):
    """``rewards`` as a float array of shape (n_groups, G) and its original shape.

    NaN (or ``None`` in a list) marks a missing reward; infinity, values too
    large to standardise, complex values and strings are refused.
    """
    R = real_array(rewards, name, allow_nan=True)
    if R.ndim == 2:
        if group_size is not None and group_size != R.shape[1]:
            raise ValueError(
                f"group_size={group_size} does not match {name}.shape[1]={R.shape[1]}"
            )
        shape = R.shape
    elif R.ndim == 1:
        if group_size is None:
            raise ValueError(f"a 1-D {name} needs group_size (completions per prompt)")
        _check_group_size(group_size)
        if R.shape[0] % group_size:
            raise ValueError(
                f"len({name})={R.shape[0]} is not a multiple of group_size={group_size}"
            )
        shape = R.shape
        R = R.reshape(-1, group_size)
    else:
        raise ValueError(
            f"{name} must be 1-D (with group_size) or 2-D (n_groups, group_size), got {R.ndim}-D"
        )
    check_magnitude(R, name, allow_nan=True)
    return R, shape


def _check_group_size(group_size):
    if (
        not isinstance(group_size, (int, np.integer))
        or isinstance(group_size, bool)
        or group_size < 1
    ):
        raise ValueError(f"group_size must be a positive int, got {group_size!r}")


def _check_eps(eps):
    if not isinstance(eps, Real) or isinstance(eps, bool) or not 0 <= eps < np.inf:
        raise ValueError(f"eps must be a finite non-negative float, got {eps!r}")
    return float(eps)


def _nan_std(R, axis=None):
    """Unbiased std ignoring NaN; 0 where fewer than two values are finite."""
    n = np.sum(np.isfinite(R), axis=axis)
    mean = np.nanmean(R, axis=axis, keepdims=True) if axis is not None else np.nanmean(R)
    dev = np.where(np.isfinite(R), R - mean, 0.0)
    ss = np.sum(dev * dev, axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where(n > 1, ss / np.maximum(n - 1, 1), 0.0)
    return np.sqrt(var)


def group_advantages(rewards, *, group_size=None, scale_rewards="group", eps=1e-4):
    """Group-relative advantages ``A_i = (R_i - mean_G R) / (std_G R + eps)``.

    The ``G`` completions sampled for one prompt form a group; each reward is
    centred on its group's mean and divided by a standard deviation
    (GRPO; Shao et al., 2024, DeepSeekMath). The standard deviation is the
    unbiased (Bessel-corrected) one, as in TRL and OpenRLHF.

    Parameters
    ----------
    rewards : array-like of shape (n_groups, G), or (n_groups * G,) with ``group_size``
        Scalar rewards; a flat array lists the groups one after the other
        (TRL's layout). NaN marks an unscorable completion: its advantage is
        0 and it is left out of its group's mean and std (as in TRL).
    group_size : int, optional
        ``G``, required for a flat ``rewards``.
    scale_rewards : {"group", "batch", "none"}, default="group"
        Divide by each group's std, by the std of the whole batch (centring
        stays per group), or not at all (TRL's ``scale_rewards``).
    eps : float, default=1e-4
        Added to the std: TRL's value; OpenRLHF's ``group_norm`` (which
        VisualScore trains with) uses ``1e-9``.

    Returns
    -------
    advantages : ndarray of the shape of ``rewards``
        Each group's finite advantages sum to zero; with ``"group"`` scaling
        their unbiased std is ``std / (std + eps)``, i.e. 1 up to ``eps``. An
        all-equal group gets exact zeros.

    See Also
    --------
    multi_reward_advantages : The advantages of several rewards.
    std_filter : Which groups have a non-degenerate reward spread.

    Examples
    --------
    >>> from mvlearn_ext.rl import group_advantages
    >>> A = group_advantages([[1.0, 0.0, 0.0, 1.0], [2.0, 2.0, 2.0, 2.0]])
    >>> A.round(3).tolist()
    [[0.866, -0.866, -0.866, 0.866], [0.0, 0.0, 0.0, 0.0]]
    """
    if scale_rewards not in _SCALES:
        raise ValueError(f"scale_rewards must be one of {_SCALES}, got {scale_rewards!r}")
    eps = _check_eps(eps)
    R, shape = _as_groups(rewards, group_size)
    nan = np.isnan(R)
    all_nan = nan.all(axis=1, keepdims=True)
    R0 = np.where(all_nan, 0.0, R)
    with np.errstate(invalid="ignore"):
        mean = np.nanmean(R0, axis=1, keepdims=True)
    centred = np.where(nan, 0.0, R - mean)
    # An all-equal group carries no signal: exact zeros, not round-off / eps.
    const = np.nanmax(R0, axis=1, keepdims=True) == np.nanmin(R0, axis=1, keepdims=True)
    centred = np.where(const, 0.0, centred)
    if scale_rewards == "group":
        std = _nan_std(R0, axis=1)[:, None]
    elif scale_rewards == "batch":
        std = _nan_std(R)
    else:
        std = 0.0
    scale = 1.0 if scale_rewards == "none" else std + eps
    with np.errstate(invalid="ignore", divide="ignore"):  # 0 / 0 only in constant groups
        A = centred / scale
    return np.where(nan | const, 0.0, A).reshape(shape)


def multi_reward_advantages(
    rewards,
    *,
    weights=None,
    group_size=None,
    aggregation="sum_then_normalize",
    scale_rewards="group",
    eps=1e-4,
):
    """Advantages from several reward functions, as ``trl.GRPOTrainer`` computes them.

    TRL's ``multi_objective_aggregation`` with its ``reward_weights`` and
    ``scale_rewards``. A NaN reward is a reward function that declined the
    completion: it adds nothing to the weighted sum; a completion every
    function declines is unscorable (advantage 0, left out of the
    statistics).

    Parameters
    ----------
    rewards : array-like of shape (n_groups, G, n_rewards), or (n_groups * G, n_rewards)
        One column per reward function.
    weights : array-like of shape (n_rewards,), optional
        Reward weights (TRL's ``reward_weights``); default all ones.
    group_size : int, optional
        ``G``, required for the 2-D layout.
    aggregation : {"sum_then_normalize", "normalize_then_sum"}, default="sum_then_normalize"
        ``"sum_then_normalize"``: the weighted sum of the rewards, then
        :func:`group_advantages` with ``scale_rewards``.
        ``"normalize_then_sum"`` (GDPO): each reward
        normalised within its group, the weighted sum, then normalised over
        the whole batch (``scale_rewards`` does not apply, as in TRL).
    scale_rewards : {"group", "batch", "none"}, default="group"
        As in :func:`group_advantages`.
    eps : float, default=1e-4
        Added to every std (TRL's value).

    Returns
    -------
    advantages : ndarray of shape (n_groups, G) or (n_groups * G,)

    See Also
    --------
    group_advantages : The advantages of one reward.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.rl import multi_reward_advantages
    >>> R = np.array([[1.0, 0.0], [0.0, 10.0], [0.0, 0.0], [1.0, 10.0]])
    >>> multi_reward_advantages(R, weights=[1.0, 0.1], group_size=4).round(3).tolist()
    [0.0, 0.0, -1.225, 1.225]
    >>> A = multi_reward_advantages(
    ...     R, weights=[1.0, 0.1], group_size=4, aggregation="normalize_then_sum"
    ... )
    >>> A.round(3).tolist()
    [0.775, -0.775, -0.948, 0.948]
    """
    R = real_array(rewards, "rewards", allow_nan=True)
    if R.ndim == 2:
        if group_size is None:
            raise ValueError("a 2-D rewards array (n_samples, n_rewards) needs group_size")
        _check_group_size(group_size)
        if R.shape[0] % group_size:
            raise ValueError(
                f"rewards.shape[0]={R.shape[0]} is not a multiple of group_size={group_size}"
            )
        R3, flat = R.reshape(-1, group_size, R.shape[1]), True
    elif R.ndim == 3:
        R3, flat = R, False
    else:
        raise ValueError(
            f"rewards must be (n_groups, G, n_rewards) or (n_samples, n_rewards), got {R.ndim}-D"
        )
    check_magnitude(R3, "rewards", allow_nan=True)
    n_rewards = R3.shape[2]
    w = np.ones(n_rewards) if weights is None else real_array(weights, "weights")
    if w.shape != (n_rewards,):
        raise ValueError(f"weights must be {n_rewards} finite numbers, got {weights!r}")
    check_magnitude(w, "weights")
    if scale_rewards not in _SCALES:
        raise ValueError(f"scale_rewards must be one of {_SCALES}, got {scale_rewards!r}")
    eps = _check_eps(eps)
    unscorable = np.isnan(R3).all(axis=2)
    if aggregation == "sum_then_normalize":
        total = np.nansum(R3 * w, axis=2)
        total[unscorable] = np.nan
        A = group_advantages(total, scale_rewards=scale_rewards, eps=eps)
    elif aggregation == "normalize_then_sum":
        G = R3.shape[1]
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices give NaN, as in TRL
            mean_k = np.nanmean(R3, axis=1, keepdims=True)
            std_k = _bessel_nanstd(R3, axis=1) if G > 1 else np.zeros_like(mean_k)
            total = np.nansum((R3 - mean_k) / (std_k + eps) * w, axis=2)
            total[unscorable] = np.nan
            std = _bessel_nanstd(total, axis=None) if total.size > 1 else 0.0
            A = (total - np.nanmean(total)) / (std + eps)
        A = np.nan_to_num(A, nan=0.0)
    else:
        raise ValueError(f"aggregation must be one of {_AGGREGATIONS}, got {aggregation!r}")
    return A.reshape(-1) if flat else A


def _bessel_nanstd(R, axis):
    """TRL's ``nanstd``: Bessel-corrected, NaN ignored, NaN with fewer than two values."""
    n = np.sum(~np.isnan(R), axis=axis, keepdims=axis is not None)
    var = np.nanmean((R - np.nanmean(R, axis=axis, keepdims=True)) ** 2, axis=axis, keepdims=True)
    if axis is None:
        var = var.reshape(())
    return np.sqrt(np.where(n > 1, var * n / np.maximum(n - 1, 1), np.nan))


def std_filter(rewards, *, group_size=None, threshold=1e-3):
    """Which groups survive VisualScore's std filter.

    A group whose rewards have unbiased standard deviation ``<= threshold``
    carries (almost) no advantage signal; VisualScore drops it (stage-2
    RL). ``rewards`` is the reward the filter watches (the accuracy reward
    in VisualScore, not the total).

    Parameters
    ----------
    rewards : array-like of shape (n_groups, G), or flat with ``group_size``
    group_size : int, optional
    threshold : float, default=1e-3
        A negative threshold turns the filter off (every group kept).

    Returns
    -------
    keep : ndarray of bool, shape (n_groups,)
        ``True`` for the groups to keep. Multiply the advantages by
        ``keep[:, None]`` to zero the dropped groups instead of removing them.

    See Also
    --------
    group_advantages : The advantages of the groups kept.

    Examples
    --------
    >>> from mvlearn_ext.rl import std_filter
    >>> std_filter([[0.5, 0.5, 0.5], [0.0, 1.0, 0.5]]).tolist()
    [False, True]
    """
    if not isinstance(threshold, Real):
        raise TypeError(f"threshold must be a float, got {type(threshold).__name__}")
    R, _ = _as_groups(rewards, group_size)
    if threshold < 0:
        return np.ones(R.shape[0], dtype=bool)
    return _nan_std(R, axis=1) > threshold


def entropy_mask(entropies, action_mask=None, *, rho=0.2, scope="sequence"):
    """Keep the high-entropy tokens (entropy gating of the policy loss).

    Parameters
    ----------
    entropies : array-like of shape (n_sequences, n_tokens)
        Token entropies ``H_t = -sum_v p_v log p_v`` (see
        :func:`mvlearn_ext.deep.rl.token_entropy`). NaN is allowed outside
        ``action_mask`` (padding) only.
    action_mask : array-like of bool, shape (n_sequences, n_tokens), optional
        The valid (non-padding, generated) tokens; default all valid.
    rho : float in (0, 1], default=0.2
        Share of tokens to keep.
    scope : {"sequence", "batch"}, default="sequence"
        ``"sequence"`` (VisualScore's code): in each sequence keep the tokens
        with ``H_t >=`` the ``k``-th largest entropy among its valid tokens,
        ``k = ceil(rho * n_valid)``. ``"batch"`` (TRL's
        ``top_entropy_quantile``): keep ``H_t >=`` the ``1 - rho`` quantile
        (linear interpolation, as ``torch.quantile``) of all valid entropies
        of the batch.

    Returns
    -------
    mask : ndarray of bool, shape (n_sequences, n_tokens)
        Always inside ``action_mask``; ``rho=1`` returns ``action_mask``.
        Ties at the threshold are all kept, so a sequence may keep more than
        ``k`` tokens. Empty when ``entropies`` is.

    See Also
    --------
    group_advantages : The advantages the mask gates.
    mvlearn_ext.deep.token_entropy : The per-token entropies of a model's logits.

    Examples
    --------
    >>> from mvlearn_ext.rl import entropy_mask
    >>> entropy_mask([[0.1, 0.9, 0.5, 0.3]], rho=0.5).tolist()
    [[False, True, True, False]]
    """
    H = real_array(entropies, "entropies", allow_nan=True, allow_empty=True)
    if H.ndim != 2:
        raise ValueError(f"entropies must be 2-D (n_sequences, n_tokens), got {H.ndim}-D")
    if action_mask is None:
        valid = np.ones(H.shape, dtype=bool)
    else:
        valid = real_array(action_mask, "action_mask", allow_empty=True)
        if valid.shape != H.shape:
            raise ValueError(f"action_mask has shape {valid.shape}, entropies has shape {H.shape}")
        valid = valid.astype(bool)
    if not isinstance(rho, Real) or not 0 < rho <= 1:
        raise ValueError(f"rho must be in (0, 1], got {rho!r}")
    if np.isnan(H[valid]).any():
        raise ValueError("entropies hold NaN at valid tokens")
    if scope == "sequence":
        n_valid = valid.sum(axis=1)
        k = np.ceil(rho * n_valid - 1e-9).astype(np.intp)
        ordered = -np.sort(np.where(valid, -H, np.inf), axis=1)  # descending, padding last
        thr = ordered[np.arange(H.shape[0]), np.maximum(k - 1, 0)]
        return valid & (H >= thr[:, None]) & (n_valid > 0)[:, None]
    if scope == "batch":
        h = H[valid]
        if h.size == 0:
            return valid.copy()
        thr = np.quantile(h, 1.0 - rho)
        return valid & (H >= thr)
    raise ValueError(f"scope must be 'sequence' or 'batch', got {scope!r}")
