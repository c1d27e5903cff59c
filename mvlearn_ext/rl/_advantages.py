"""Group-relative advantages, the std filter and entropy gating masks (GRPO).

Framework-free: every function takes and returns NumPy arrays. The torch
losses that consume them are in :mod:`mvlearn_ext.deep.rl`.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

__all__ = [
    "entropy_mask",
    "group_advantages",
    "multi_reward_advantages",
    "std_filter",
]

_SEMANTICS = {
    # name: (default eps, NaN handling)
    "default": (1e-4, "exclude"),
    "trl": (1e-4, "zero"),
    "openrlhf": (1e-9, "exclude"),
}
_SCALES = ("group", "batch", "none")


def _as_groups(rewards, group_size, name="rewards"):
    """``rewards`` as a float array of shape (n_groups, G) and its original shape."""
    R = np.asarray(rewards, dtype=np.float64)
    if R.ndim == 2:
        if group_size is not None and group_size != R.shape[1]:
            raise ValueError(
                f"group_size={group_size} does not match {name}.shape[1]={R.shape[1]}"
            )
        shape = R.shape
    elif R.ndim == 1:
        if group_size is None:
            raise ValueError(f"a 1-D {name} needs group_size (completions per prompt)")
        if not isinstance(group_size, (int, np.integer)) or group_size < 1:
            raise ValueError(f"group_size must be a positive int, got {group_size!r}")
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
    if R.size == 0:
        raise ValueError(f"{name} is empty")
    if np.isinf(R).any():
        raise ValueError(f"{name} holds infinite values")
    return R, shape


def _check_eps(eps, semantics):
    if semantics not in _SEMANTICS:
        raise ValueError(f"semantics must be one of {sorted(_SEMANTICS)}, got {semantics!r}")
    if eps is None:
        return _SEMANTICS[semantics][0]
    if not isinstance(eps, Real) or eps < 0:
        raise ValueError(f"eps must be a non-negative float, got {eps!r}")
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


def group_advantages(
    rewards, *, group_size=None, scale_rewards="group", eps=None, semantics="default"
):
    """Group-relative advantages ``A_i = (R_i - mean_G R) / (std_G R + eps)``.

    The ``G`` completions sampled for one prompt form a group; each reward is
    centred on its group's mean and divided by a standard deviation
    (GRPO; Shao et al., 2024, DeepSeekMath). The standard deviation is the
    unbiased (Bessel-corrected) one, as in TRL and OpenRLHF.

    Parameters
    ----------
    rewards : array-like of shape (n_groups, G), or (n_groups * G,) with ``group_size``
        Scalar rewards; a flat array lists the groups one after the other
        (TRL's layout). NaN marks an unscorable completion.
    group_size : int, optional
        ``G``, required for a flat ``rewards``.
    scale_rewards : {"group", "batch", "none"}, default="group"
        Divide by each group's std, by the std of the whole batch (centring
        stays per group), or not at all (TRL's ``scale_rewards``).
    eps : float, optional
        Added to the std. Default: ``1e-4`` (``"default"`` and ``"trl"``
        semantics, TRL's value), ``1e-9`` (``"openrlhf"``, OpenRLHF's
        ``group_norm`` used by VisualScore).
    semantics : {"default", "trl", "openrlhf"}, default="default"
        NaN handling. ``"default"`` and ``"openrlhf"``: a NaN reward gets
        advantage 0 and is left out of its group's mean and std.
        ``"trl"``: a NaN reward counts as 0 (TRL sums reward functions with
        ``nansum``, so a completion every function refuses scores 0) and gets
        an ordinary advantage.

    Returns
    -------
    advantages : ndarray of the shape of ``rewards``
        Each group's finite advantages sum to zero; with ``"group"`` scaling
        their unbiased std is ``std / (std + eps)``, i.e. 1 up to ``eps``. An
        all-equal group gets zeros.

    Examples
    --------
    >>> from mvlearn_ext.rl import group_advantages
    >>> A = group_advantages([[1.0, 0.0, 0.0, 1.0], [2.0, 2.0, 2.0, 2.0]])
    >>> A.round(3).tolist()
    [[0.866, -0.866, -0.866, 0.866], [0.0, 0.0, 0.0, 0.0]]
    """
    if scale_rewards not in _SCALES:
        raise ValueError(f"scale_rewards must be one of {_SCALES}, got {scale_rewards!r}")
    eps = _check_eps(eps, semantics)
    R, shape = _as_groups(rewards, group_size)
    nan = ~np.isfinite(R)
    if _SEMANTICS[semantics][1] == "zero":
        R = np.where(nan, 0.0, R)
        nan = np.zeros_like(nan)
    all_nan = nan.all(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        mean = np.where(all_nan, 0.0, np.nanmean(np.where(all_nan, 0.0, R), axis=1, keepdims=True))
    centred = np.where(nan, 0.0, R - mean)
    if scale_rewards == "group":
        std = _nan_std(np.where(all_nan, 0.0, R), axis=1)[:, None]
        std = np.where(all_nan, 0.0, std)
        A = centred / (std + eps)
    elif scale_rewards == "batch":
        A = centred / (_nan_std(R) + eps)
    else:
        A = centred
    return np.where(nan, 0.0, A).reshape(shape)


def multi_reward_advantages(
    rewards,
    *,
    weights=None,
    group_size=None,
    aggregation="sum_then_normalize",
    scale_rewards="group",
    eps=None,
    semantics="default",
):
    """Advantages from several reward functions (TRL's ``multi_objective_aggregation``).

    Parameters
    ----------
    rewards : array-like of shape (n_groups, G, n_rewards), or (n_groups * G, n_rewards)
        One column per reward function.
    weights : array-like of shape (n_rewards,), optional
        Reward weights (TRL's ``reward_weights``); default all ones.
    group_size : int, optional
        ``G``, required for the 2-D layout.
    aggregation : {"sum_then_normalize", "normalize_then_sum"}
        ``"sum_then_normalize"``: weighted sum of the rewards (``nansum`` under
        ``"trl"`` semantics), then :func:`group_advantages`.
        ``"normalize_then_sum"`` (GDPO): each reward normalised within its
        group, the weighted sum, then normalised again over the whole batch.
    scale_rewards, eps, semantics
        As in :func:`group_advantages`.

    Returns
    -------
    advantages : ndarray of shape (n_groups, G) or (n_groups * G,)
    """
    R = np.asarray(rewards, dtype=np.float64)
    if R.ndim == 2:
        if group_size is None:
            raise ValueError("a 2-D rewards array (n_samples, n_rewards) needs group_size")
        n_rewards = R.shape[1]
        R3 = R.reshape(-1, group_size, n_rewards) if R.shape[0] % group_size == 0 else None
        if R3 is None:
            raise ValueError(
                f"rewards.shape[0]={R.shape[0]} is not a multiple of group_size={group_size}"
            )
        flat = True
    elif R.ndim == 3:
        R3, flat = R, False
    else:
        raise ValueError(
            f"rewards must be (n_groups, G, n_rewards) or (n_samples, n_rewards), got {R.ndim}-D"
        )
    n_rewards = R3.shape[2]
    w = np.ones(n_rewards) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (n_rewards,):
        raise ValueError(f"weights must have shape ({n_rewards},), got {w.shape}")
    if aggregation == "sum_then_normalize":
        if semantics == "trl":
            total = np.nansum(R3 * w, axis=2)
        else:
            total = np.sum(R3 * w, axis=2)
        A = group_advantages(total, scale_rewards=scale_rewards, eps=eps, semantics=semantics)
    elif aggregation == "normalize_then_sum":
        parts = [
            group_advantages(R3[:, :, r], scale_rewards="group", eps=eps, semantics=semantics)
            for r in range(n_rewards)
        ]
        total = np.tensordot(np.stack(parts, axis=2), w, axes=([2], [0]))
        eps_ = _check_eps(eps, semantics)
        A = (total - total.mean()) / (total.std(ddof=1) + eps_) if total.size > 1 else total * 0
    else:
        raise ValueError(
            "aggregation must be 'sum_then_normalize' or 'normalize_then_sum', "
            f"got {aggregation!r}"
        )
    return A.reshape(-1) if flat else A


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
        :func:`mvlearn_ext.deep.rl.token_entropy`).
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
        ``k`` tokens.

    Examples
    --------
    >>> from mvlearn_ext.rl import entropy_mask
    >>> entropy_mask([[0.1, 0.9, 0.5, 0.3]], rho=0.5).tolist()
    [[False, True, True, False]]
    """
    H = np.asarray(entropies, dtype=np.float64)
    if H.ndim != 2:
        raise ValueError(f"entropies must be 2-D (n_sequences, n_tokens), got {H.ndim}-D")
    if action_mask is None:
        valid = np.ones(H.shape, dtype=bool)
    else:
        valid = np.asarray(action_mask)
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
