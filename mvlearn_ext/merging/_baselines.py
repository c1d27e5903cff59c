"""Task vectors and the data-free merging baselines: task arithmetic, TIES, DARE.

Every public function takes a base state dict ``base`` (a mapping of parameter
names to arrays) and a sequence ``experts`` of state dicts fine-tuned from it,
validates them once, works in float64 and returns a new state dict with the
base's keys, shapes and dtypes. Only floating entries are merged: integer and
boolean entries (step counters such as ``num_batches_tracked``, indices, masks)
are copied from the base, and a base with no floating entry is refused. A merged
value too large for its dtype (float16 saturates at 65504) raises a ValueError
naming its key. The ``_``-prefixed helpers take float64 task vectors that the
public functions have validated.

Conventions of the two reference tools (mergekit, FusionBench) differ; each
switch below says which tool it matches.
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext.merging._validation import (
    check_choice,
    check_fraction,
    check_key_names,
    check_rng,
    check_scaling,
    check_state_dicts,
    check_weights,
)
from mvlearn_ext.utils._validation import real_array

__all__ = [
    "apply_task_vector",
    "dare",
    "dare_ties",
    "magnitude_merge",
    "random_mask_merge",
    "task_arithmetic",
    "task_vectors",
    "ties",
]

_GRANULARITIES = {"tensor", "global"}
_SIGN_RULES = {"zero_positive", "majority"}
_MERGE_FUNCS = {"mean", "sum", "max"}
_RESCALES = {"inverse_p", "l1"}


# ---------------------------------------------------------------------------
# Private helpers (float64 task vectors in, float64 out)


def _float_keys(base):
    return [k for k, v in base.items() if v.dtype.kind == "f"]


def _merge_keys(base):
    """The base's floating keys; a ValueError when there is none (nothing to merge)."""
    keys = _float_keys(base)
    if not keys:
        kinds = sorted({str(v.dtype) for v in base.values()})
        raise ValueError(
            f"base has no floating-point entry to merge (dtypes {kinds}): integer and "
            "boolean entries (counters, indices, masks) are copied from base, not merged. "
            "Cast base and experts to a floating dtype (for example np.float32) to merge them"
        )
    return keys


def _task_vectors(base, experts, keys):
    return [
        {k: e[k].astype(np.float64) - base[k].astype(np.float64) for k in keys} for e in experts
    ]


def overflow_error(key, dtype, values, largest_allowed, wider):
    """The ValueError of a merged entry ``key`` whose ``values`` overflow ``dtype``.

    It names the key, the largest finite magnitude and the dtype's range, and
    advises the ``wider`` dtype (the NumPy and torch merges share it).
    """
    finite = np.abs(values[np.isfinite(values)])
    largest = f"{float(finite.max()):.4g}" if finite.size else "inf"
    return ValueError(
        f"the merged value of {key!r} overflows {dtype} (largest |value| {largest}, max "
        f"{largest_allowed:.4g}); lower scaling or weights, or cast base and experts to a "
        f"wider dtype such as {wider}"
    )


def _finish(base, merged_tv, scaling):
    """``base + scaling * merged_tv`` in the base's dtypes; other entries copied.

    Raises a ValueError naming the key when a merged value is not finite in
    the base's dtype (it overflows, as float16 does beyond 65504).
    """
    out = {}
    for key, value in base.items():
        if key in merged_tv:
            with np.errstate(over="ignore", invalid="ignore"):
                wide = value.astype(np.float64) + scaling * merged_tv[key]
                cast = wide.astype(value.dtype)
            if not np.all(np.isfinite(cast)):
                raise overflow_error(
                    key, value.dtype, wide, float(np.finfo(value.dtype).max), "float32"
                )
            out[key] = cast
        else:
            out[key] = value.copy()
    return out


def _weighted_sum(tvs, weights, keys):
    return {k: sum(w * tv[k] for w, tv in zip(weights, tvs, strict=True)) for k in keys}


def _keep_count(size, density):
    """Coordinates kept at ``density``: ``floor(density * size)``.

    mergekit 0.1.5 keeps ``max(1, int(density * size))``: at least one, and
    ``int`` truncates a product that round-off puts just below an integer.
    """
    return int(np.floor(density * size + 1e-9))


def _topk_mask(values, k):
    """Boolean mask of the ``k`` largest entries of ``values`` (ties broken by position)."""
    flat = values.ravel()
    mask = np.zeros(flat.size, dtype=bool)
    if k > 0:
        order = np.argsort(-flat, kind="stable")[:k]
        mask[order] = True
    return mask.reshape(values.shape)


def _trim(tv, density, granularity, keys):
    """TIES trim: keep the top ``density`` fraction of |tau| per tensor or over all ``keys``."""
    out = dict(tv)
    if granularity == "tensor":
        for k in keys:
            out[k] = tv[k] * _topk_mask(np.abs(tv[k]), _keep_count(tv[k].size, density))
        return out
    if not keys:
        return out
    flat = np.concatenate([tv[k].ravel() for k in keys])
    mask = _topk_mask(np.abs(flat), _keep_count(flat.size, density))
    start = 0
    for k in keys:
        size = tv[k].size
        out[k] = tv[k] * mask[start : start + size].reshape(tv[k].shape)
        start += size
    return out


def _elect_sign(tvs, weights, keys, sign_rule):
    """TIES elect: gamma = sign(sum_n w_n tau_n), with the zero-sign rule."""
    gamma = {k: np.sign(sum(w * tv[k] for w, tv in zip(weights, tvs, strict=True))) for k in keys}
    if sign_rule == "zero_positive":  # mergekit: a zero sum counts as +
        fill = 1.0
    else:  # FusionBench: zeros take the overall majority sign (over the whole state dict)
        total = sum(float(g.sum()) for g in gamma.values())
        fill = 1.0 if total >= 0 else -1.0
    for k in keys:
        gamma[k] = np.where(gamma[k] == 0, fill, gamma[k])
    return gamma


def _disjoint_merge(tvs, weights, gamma, keys, merge_func):
    """TIES disjoint merge over the experts whose nonzero entry agrees with gamma."""
    out = {}
    for k in keys:
        stack = np.stack([w * tv[k] for w, tv in zip(weights, tvs, strict=True)])
        raw = np.stack([tv[k] for tv in tvs])
        agree = (raw != 0) & (np.sign(raw) == gamma[k])
        if merge_func == "sum":
            out[k] = np.where(agree, stack, 0.0).sum(axis=0)
        elif merge_func == "mean":
            w_b = weights.reshape((-1,) + (1,) * (raw.ndim - 1))
            denom = np.where(agree, w_b, 0.0).sum(axis=0)
            num = np.where(agree, stack, 0.0).sum(axis=0)
            safe = np.where(denom == 0, 1.0, denom)
            out[k] = np.where(denom == 0, 0.0, num / safe)
        else:  # max: the largest-magnitude agreeing entry, with sign gamma
            out[k] = gamma[k] * np.where(agree, np.abs(stack), 0.0).max(axis=0)
    return out


def _dare_drop(tv, density, rescale, rng, keys):
    """DARE: keep each coordinate with probability ``density``, then rescale."""
    out = dict(tv)
    for k in keys:
        mask = rng.random(tv[k].shape) < density
        kept = tv[k] * mask
        if rescale == "inverse_p":  # FusionBench: exactly 1 / (1 - p)
            kept = kept / density
        else:  # mergekit: match the L1 norm of the tensor
            org, new = np.abs(tv[k]).sum(), np.abs(kept).sum()
            if org >= 1e-8 and new >= 1e-8:
                kept = kept * (org / new)
        out[k] = kept
    return out


def _check_prune_keys(prune_keys, float_keys):
    if prune_keys is None:
        return list(float_keys)
    prune_keys = check_key_names(prune_keys, float_keys, "prune_keys")
    return [k for k in float_keys if k in set(prune_keys)]


def _prepare(base, experts, scaling, weights, prune_keys=None):
    """Validate the arguments every merge shares; return what the merge needs.

    Returns ``(base, keys, prune, tvs, scaling, weights)``: the checked base, its
    floating keys (a ValueError when there is none), the keys to prune (all
    floating keys when ``prune_keys`` is None), the task vectors, the checked
    scaling and expert weights.
    """
    base, experts = check_state_dicts(base, experts)
    scaling = check_scaling(scaling)
    weights = check_weights(weights, len(experts))
    keys = _merge_keys(base)
    prune = _check_prune_keys(prune_keys, keys)
    return base, keys, prune, _task_vectors(base, experts, keys), scaling, weights


# ---------------------------------------------------------------------------
# Public API


def task_vectors(base, experts):
    """Task vectors ``tau_n = theta_n - theta_0`` of each expert.

    Parameters
    ----------
    base : mapping of str to array-like
        The shared base model's state dict.
    experts : sequence of mappings
        The fine-tuned experts' state dicts (same keys, shapes and dtypes).

    Returns
    -------
    taus : list of dict
        One float64 dict per expert, over the base's floating keys only:
        integer and boolean entries (counters, indices, masks) have no task
        vector.

    Raises
    ------
    ValueError
        If ``base`` has no floating entry (nothing to take a difference of).

    See Also
    --------
    task_arithmetic : Sums them onto the base.
    apply_task_vector : Adds one back.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.merging import task_vectors
    >>> taus = task_vectors({"w": np.zeros(2)}, [{"w": np.array([1.0, -2.0])}])
    >>> taus[0]["w"].tolist()
    [1.0, -2.0]
    """
    base, experts = check_state_dicts(base, experts)
    return _task_vectors(base, experts, _merge_keys(base))


def apply_task_vector(base, task_vector, *, scaling=1.0):
    """``theta_0 + scaling * tau`` in the base's dtypes.

    Parameters
    ----------
    base : mapping of str to array-like
    task_vector : mapping of str to array-like
        A (merged) task vector over some of the base's floating keys; the
        other entries of ``base`` (integer and boolean ones included) are
        copied.
    scaling : float, default=1.0
        The factor lambda.

    Returns
    -------
    merged : dict of str to ndarray

    Raises
    ------
    ValueError
        If a key of ``task_vector`` is not a floating entry of ``base``, or a
        result overflows the base's dtype (float16 beyond 65504).

    See Also
    --------
    task_vectors : The task vectors of experts.
    task_arithmetic : Adds several task vectors at once.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.merging import apply_task_vector
    >>> merged = apply_task_vector({"w": np.zeros(2)}, {"w": np.array([1.0, 2.0])}, scaling=0.5)
    >>> merged["w"].tolist()
    [0.5, 1.0]
    """
    base, _ = check_state_dicts(base, [base])
    scaling = check_scaling(scaling)
    if not hasattr(task_vector, "items"):
        raise TypeError(f"task_vector must be a mapping, got {type(task_vector).__name__}")
    tv = {}
    for key, value in task_vector.items():
        if key not in base or base[key].dtype.kind != "f":
            raise ValueError(f"task_vector[{key!r}] is not a floating parameter of base")
        arr = real_array(value, f"task_vector[{key!r}]", allow_empty=True)
        if arr.shape != base[key].shape:
            raise ValueError(
                f"task_vector[{key!r}] has shape {arr.shape}, base has {base[key].shape}"
            )
        tv[key] = arr
    return _finish(base, tv, scaling)


def task_arithmetic(base, experts, *, scaling=1.0, weights=None):
    """Task arithmetic: ``theta = theta_0 + scaling * sum_n w_n tau_n``.

    mergekit's ``task_arithmetic`` (``lambda`` = ``scaling``; checked against
    mergekit 0.1.5 by the test suite) and FusionBench's
    ``TaskArithmeticAlgorithm`` (``scaling_factor``) both compute this.

    Parameters
    ----------
    base : mapping of str to array-like
        The base state dict theta_0. Its floating entries are merged in
        float64 and returned in their dtype; its integer and boolean entries
        (counters such as ``num_batches_tracked``, indices, masks) are copied
        unmerged, and at least one entry must be floating.
    experts : sequence of mappings
        The experts theta_n (same keys, shapes and dtypes as ``base``).
    scaling : float, default=1.0
        lambda.
    weights : array-like of shape (n_experts,), default=None
        Per-expert weights w_n (default all ones).

    Returns
    -------
    merged : dict of str to ndarray

    Raises
    ------
    ValueError
        If ``base`` has no floating entry, or a merged value overflows its
        dtype (float16 beyond 65504); the message names the key.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.merging import task_arithmetic
    >>> base = {"w": np.zeros(2)}
    >>> experts = [{"w": np.array([1.0, 0.0])}, {"w": np.array([0.0, 2.0])}]
    >>> task_arithmetic(base, experts, scaling=0.5)["w"].tolist()
    [0.5, 1.0]

    See Also
    --------
    task_vectors : The task vectors it sums.
    ties : Trimming with sign election.
    dare : Random drop and rescale first.

    References
    ----------
    Ilharco et al., "Editing models with task arithmetic", ICLR 2023.
    """
    base, keys, _, tvs, scaling, weights = _prepare(base, experts, scaling, weights)
    return _finish(base, _weighted_sum(tvs, weights, keys), scaling)


def _ties_core(tvs, weights, keys, prune, density, granularity, sign_rule, merge_func):
    trimmed = [_trim(tv, density, granularity, prune) for tv in tvs] if density < 1 else tvs
    gamma = _elect_sign(trimmed, weights, prune, sign_rule)
    merged = _disjoint_merge(trimmed, weights, gamma, prune, merge_func)
    rest = [k for k in keys if k not in set(prune)]
    merged.update(_weighted_sum(tvs, weights, rest))
    return merged


def _check_ties_args(density, granularity, sign_rule, merge_func):
    density = check_fraction(density, "density", low_open=True)
    check_choice(granularity, "granularity", _GRANULARITIES)
    check_choice(sign_rule, "sign_rule", _SIGN_RULES)
    check_choice(merge_func, "merge_func", _MERGE_FUNCS)
    return density


def ties(
    base,
    experts,
    *,
    density=0.2,
    scaling=1.0,
    weights=None,
    granularity="tensor",
    sign_rule="zero_positive",
    merge_func="mean",
    prune_keys=None,
):
    """TIES merging: trim, elect sign, disjoint merge.

    1. Trim: keep the top ``density`` fraction of each task vector by
       magnitude (``floor(density * size)`` coordinates, ties broken by
       position), per tensor or globally over the flattened state dict.
    2. Elect: ``gamma = sign(sum_n w_n tau_hat_n)`` per coordinate.
    3. Disjoint merge over the experts whose nonzero trimmed entry has sign
       ``gamma``: weighted mean, sum, or the largest-magnitude entry.
    4. ``theta = theta_0 + scaling * tau_m``.

    The defaults (``granularity="tensor"``, ``sign_rule="zero_positive"``,
    ``merge_func="mean"``, ``scaling=1``) match mergekit's ``ties`` with
    ``normalize=True`` and the original paper's mean merge with lambda = 1.
    Where they differ from mergekit's (checked against mergekit 0.1.5 by
    the test suite): mergekit keeps ``max(1, int(density * size))``
    coordinates per tensor, we keep ``floor(density * size)`` (none when
    ``density * size < 1``); its default ``density`` is 1 (no trim), ours
    0.2; ties among equal magnitudes may be broken differently.
    FusionBench's ``TiesMergingAlgorithm`` is ``granularity="global"``,
    ``sign_rule="majority"``, ``merge_func="sum"`` and ``scaling=0.3``, with
    its ``threshold`` (a percent *kept*) as ``density = threshold / 100``.

    Parameters
    ----------
    base, experts : state dicts
        See :func:`task_arithmetic`: floating entries are merged, integer and
        boolean ones copied from ``base``, and overflow is an error.
    density : float in (0, 1], default=0.2
        Fraction of coordinates kept by the trim step.
    scaling : float, default=1.0
        lambda.
    weights : array-like of shape (n_experts,), default=None
        Per-expert weights (all ones by default).
    granularity : {"tensor", "global"}, default="tensor"
        Top-k per tensor (mergekit) or over the whole state dict (FusionBench).
    sign_rule : {"zero_positive", "majority"}, default="zero_positive"
        What an elected sign of 0 becomes: + (mergekit), or the sign of the
        sum of all elected signs over the state dict (FusionBench; + if that
        is 0 too).
    merge_func : {"mean", "sum", "max"}, default="mean"
        Disjoint merge rule; "mean" divides by the sum of the agreeing weights.
    prune_keys : list of str, default=None
        The keys TIES applies to (default: every floating key); the others
        are merged by task arithmetic.

    Returns
    -------
    merged : dict of str to ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.merging import ties
    >>> base = {"w": np.zeros(3)}
    >>> experts = [{"w": np.array([2.0, -1.0, 0.1])}, {"w": np.array([1.0, 3.0, -0.2])}]
    >>> ties(base, experts, density=2 / 3)["w"].tolist()
    [1.5, 3.0, 0.0]

    See Also
    --------
    dare_ties : A random drop instead of the magnitude trim.
    task_arithmetic : The untrimmed sum.

    References
    ----------
    Yadav et al., "TIES-Merging: Resolving interference when merging
    models", NeurIPS 2023.
    """
    density = _check_ties_args(density, granularity, sign_rule, merge_func)
    base, keys, prune, tvs, scaling, weights = _prepare(
        base, experts, scaling, weights, prune_keys
    )
    merged = _ties_core(tvs, weights, keys, prune, density, granularity, sign_rule, merge_func)
    return _finish(base, merged, scaling)


def _dare_tvs(tvs, keys, density, rescale, random_state):
    rng = check_rng(random_state)
    children = rng.spawn(len(tvs))
    return [
        _dare_drop(tv, density, rescale, child, keys)
        for tv, child in zip(tvs, children, strict=True)
    ]


def dare(
    base,
    experts,
    *,
    density=0.1,
    scaling=1.0,
    weights=None,
    rescale="inverse_p",
    prune_keys=None,
    random_state=None,
):
    """DARE (drop and rescale), then task arithmetic (``dare_linear``).

    Each coordinate of each task vector is kept independently with
    probability ``density`` (dropped with p = 1 - density), then rescaled:
    ``rescale="inverse_p"`` multiplies the survivors by exactly
    ``1 / density`` (FusionBench's ``DareTaskArithmetic``, whose
    ``sparsity_ratio`` is p), so that ``E[tau_tilde] = tau``;
    ``rescale="l1"`` scales each tensor so that its L1 norm is unchanged
    (mergekit's ``dare_linear``). Given the same drop masks, ``rescale="l1"``
    equals mergekit 0.1.5's ``dare_linear`` (checked by the test suite); the
    masks differ (a NumPy generator here, ``torch.bernoulli`` there), the
    default rescale differs (``"inverse_p"`` here), mergekit computes DARE in
    float32 on the CPU and skips the rescale below an L1 norm of 1e-7 (1e-8
    here), and its default ``density`` is 1 (ours 0.1).

    Parameters
    ----------
    base, experts : state dicts
        See :func:`task_arithmetic`: floating entries are merged, integer and
        boolean ones copied from ``base``, and overflow is an error.
    density : float in (0, 1], default=0.1
        Keep probability 1 - p.
    scaling : float, default=1.0
    weights : array-like of shape (n_experts,), default=None
    rescale : {"inverse_p", "l1"}, default="inverse_p"
    prune_keys : list of str, default=None
        Keys to drop from (default: all floating keys); the others are merged
        by task arithmetic.
    random_state : int, numpy Generator or None, default=None
        Seeds the masks: expert n draws from the n-th child of the generator,
        key by key in the base's order.

    Returns
    -------
    merged : dict of str to ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.merging import dare
    >>> base = {"w": np.zeros(4)}
    >>> experts = [{"w": np.ones(4)}]
    >>> dare(base, experts, density=1.0, random_state=0)["w"].tolist()
    [1.0, 1.0, 1.0, 1.0]

    See Also
    --------
    dare_ties : DARE followed by TIES.
    task_arithmetic : The unpruned sum of task vectors.
    ties : Trimming with sign election.
    sa_merge : Pruning by connectivity saliency.

    References
    ----------
    Yu et al., "Language models are Super Mario: absorbing abilities from
    homologous models as a free lunch", ICML 2024.
    """
    density = check_fraction(density, "density", low_open=True)
    check_choice(rescale, "rescale", _RESCALES)
    base, keys, prune, tvs, scaling, weights = _prepare(
        base, experts, scaling, weights, prune_keys
    )
    dropped = _dare_tvs(tvs, prune, density, rescale, random_state)
    return _finish(base, _weighted_sum(dropped, weights, keys), scaling)


def dare_ties(
    base,
    experts,
    *,
    density=0.1,
    scaling=1.0,
    weights=None,
    rescale="inverse_p",
    sign_rule="zero_positive",
    merge_func="mean",
    prune_keys=None,
    random_state=None,
):
    """DARE drop-and-rescale, then TIES sign election and disjoint merge.

    mergekit 0.1.5's ``dare_ties`` is ``rescale="l1"``, ``merge_func="sum"``
    (its default ``normalize=False``; ``"mean"``, our default, is its
    ``normalize=True``), ``sign_rule="zero_positive"`` (checked given the
    same drop masks by the test suite; see :func:`dare` for the masks and
    precision); FusionBench's ``DareTiesMerging`` is
    ``rescale="inverse_p"``, ``merge_func="sum"``, ``sign_rule="majority"``.
    There is no trim step (DARE's random drop replaces it).

    Parameters
    ----------
    base, experts : state dicts
        See :func:`task_arithmetic`: floating entries are merged, integer and
        boolean ones copied from ``base``, and overflow is an error.
    density : float in (0, 1], default=0.1
        Keep probability of every coordinate (as in :func:`dare`).
    scaling : float, default=1.0
        lambda.
    weights : array-like of shape (n_experts,), default=None
        Per-expert weights (all ones by default).
    rescale : {"inverse_p", "l1"}, default="inverse_p"
        Rescaling of the survivors (as in :func:`dare`).
    sign_rule : {"zero_positive", "majority"}, default="zero_positive"
        What an elected sign of 0 becomes (as in :func:`ties`).
    merge_func : {"mean", "sum", "max"}, default="mean"
        Disjoint merge rule (as in :func:`ties`).
    prune_keys : list of str, default=None
        The keys dropped from and merged by TIES (default: every floating
        key); the others are merged by task arithmetic.
    random_state : int, numpy Generator or None, default=None
        Seeds the drop masks (as in :func:`dare`).

    Returns
    -------
    merged : dict of str to ndarray

    See Also
    --------
    dare : DARE followed by task arithmetic.
    ties : TIES without the random drop.

    Examples
    --------
    >>> import numpy as np
    >>> base = {"w": np.zeros(4)}
    >>> experts = [{"w": np.array([4.0, -1.0, 0.5, 0.0])}, {"w": np.array([0.0, 2.0, 0.0, -3.0])}]
    >>> from mvlearn_ext.merging import dare_ties
    >>> dare_ties(base, experts, density=1.0, random_state=0)["w"].tolist()  # nothing dropped
    [4.0, 2.0, 0.5, -3.0]
    """
    density = check_fraction(density, "density", low_open=True)
    check_choice(rescale, "rescale", _RESCALES)
    check_choice(sign_rule, "sign_rule", _SIGN_RULES)
    check_choice(merge_func, "merge_func", _MERGE_FUNCS)
    base, keys, prune, tvs, scaling, weights = _prepare(
        base, experts, scaling, weights, prune_keys
    )
    dropped = _dare_tvs(tvs, prune, density, rescale, random_state)
    merged = _ties_core(dropped, weights, keys, prune, 1.0, "tensor", sign_rule, merge_func)
    rest = [k for k in keys if k not in set(prune)]
    merged.update(_weighted_sum(tvs, weights, rest))
    return _finish(base, merged, scaling)


def magnitude_merge(base, experts, *, density=0.1, scaling=1.0, weights=None, prune_keys=None):
    """Keep the top ``density`` fraction of each task vector by magnitude, per tensor, then sum.

    ``floor(density * size)`` coordinates per tensor, ties broken by position;
    no rescaling; ``theta = theta_0 + scaling * sum_n w_n tau_hat_n``.

    Parameters
    ----------
    base, experts : state dicts
        See :func:`task_arithmetic`: floating entries are merged, integer and
        boolean ones copied from ``base``, and overflow is an error.
    density : float in (0, 1], default=0.1
        Fraction of the coordinates of each tensor kept.
    scaling : float, default=1.0
        lambda.
    weights : array-like of shape (n_experts,), default=None
        Per-expert weights (all ones by default).
    prune_keys : list of str, default=None
        The keys pruned (default: every floating key); the others are merged
        by task arithmetic.

    Returns
    -------
    merged : dict of str to ndarray

    See Also
    --------
    task_arithmetic : The unpruned sum of task vectors.
    ties : Trimming with sign election.
    sa_merge : Pruning by connectivity saliency.
    random_mask_merge : The same budget kept at random.

    Examples
    --------
    >>> import numpy as np
    >>> base = {"w": np.zeros(4)}
    >>> experts = [{"w": np.array([4.0, -1.0, 0.5, 0.0])}, {"w": np.array([0.0, 2.0, 0.0, -3.0])}]
    >>> from mvlearn_ext.merging import magnitude_merge
    >>> magnitude_merge(base, experts, density=0.25)["w"].tolist()  # each expert keeps its largest
    [4.0, 0.0, 0.0, -3.0]
    """
    density = check_fraction(density, "density", low_open=True)
    base, keys, prune, tvs, scaling, weights = _prepare(
        base, experts, scaling, weights, prune_keys
    )
    trimmed = [_trim(tv, density, "tensor", prune) for tv in tvs]
    return _finish(base, _weighted_sum(trimmed, weights, keys), scaling)


def random_mask_merge(
    base, experts, *, density=0.1, scaling=1.0, weights=None, prune_keys=None, random_state=None
):
    """Keep a uniformly random ``floor(density * size)`` coordinates per tensor, then sum.

    The control for saliency-based pruning at equal density (no rescaling).
    ``random_state`` seeds the subsets (expert n uses the n-th child
    generator).

    Parameters
    ----------
    base, experts : state dicts
        See :func:`task_arithmetic`: floating entries are merged, integer and
        boolean ones copied from ``base``, and overflow is an error.
    density : float in (0, 1], default=0.1
        Fraction of the coordinates of each tensor kept.
    scaling : float, default=1.0
        lambda.
    weights : array-like of shape (n_experts,), default=None
        Per-expert weights (all ones by default).
    prune_keys : list of str, default=None
        The keys pruned (default: every floating key); the others are merged
        by task arithmetic.
    random_state : int, numpy Generator or None, default=None
        Seeds the random subsets.

    Returns
    -------
    merged : dict of str to ndarray

    See Also
    --------
    magnitude_merge : The same budget kept by magnitude.

    Examples
    --------
    >>> import numpy as np
    >>> base = {"w": np.zeros(4)}
    >>> experts = [{"w": np.array([4.0, -1.0, 0.5, 0.0])}, {"w": np.array([0.0, 2.0, 0.0, -3.0])}]
    >>> from mvlearn_ext.merging import random_mask_merge
    >>> merged = random_mask_merge(base, experts, density=0.5, random_state=0)
    >>> merged["w"].shape
    (4,)
    """
    density = check_fraction(density, "density", low_open=True)
    base, keys, prune, tvs, scaling, weights = _prepare(
        base, experts, scaling, weights, prune_keys
    )
    children = check_rng(random_state).spawn(len(tvs))
    masked = []
    for tv, rng in zip(tvs, children, strict=True):
        out = dict(tv)
        for k in prune:
            size = tv[k].size
            mask = np.zeros(size, dtype=bool)
            mask[rng.choice(size, _keep_count(size, density), replace=False)] = True
            out[k] = tv[k] * mask.reshape(tv[k].shape)
        masked.append(out)
    return _finish(base, _weighted_sum(masked, weights, keys), scaling)
