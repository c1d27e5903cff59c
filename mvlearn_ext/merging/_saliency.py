"""SA-Merging: saliency-aware, data-free merging of task vectors.

Reconstruction: SA-Merging (Park, Lee, Sohn, ICML 2026, arXiv 2606.00511) has
no public code and the full paper was not available; the mechanism here
follows a detailed third-party summary that agrees with the abstract. The
points the sources leave open are marked "design choice" in the docstrings:
the sign convention of the saliency, the treatment of biases, the rounding of
the keep counts and the LoRA schedule.
"""

from __future__ import annotations

import numbers

import numpy as np

from mvlearn_ext.merging._baselines import (
    _finish,
    _float_keys,
    _merge_keys,
    _task_vectors,
    _topk_mask,
)
from mvlearn_ext.merging._validation import (
    check_choice,
    check_fraction,
    check_key_names,
    check_scaling,
    check_state_dicts,
)
from mvlearn_ext.utils._validation import real_array

__all__ = [
    "lora_factor_grads",
    "sa_keep_counts",
    "sa_merge",
    "sa_merge_lora",
    "synflow_grad_mlp",
    "synflow_score_mlp",
]

_SALIENCY_SIGNS = {"task", "weight"}


# ---------------------------------------------------------------------------
# Connectivity score and its closed-form gradient


def _check_chain(weights, name="weights"):
    if isinstance(weights, np.ndarray) or not isinstance(weights, (list, tuple)):
        raise TypeError(f"{name} must be a list of 2-D arrays (input layer first)")
    if len(weights) == 0:
        raise ValueError(f"{name} is empty")
    out = []
    for i, w in enumerate(weights):
        arr = real_array(w, f"{name}[{i}]", ndim=2)
        if i > 0 and arr.shape[1] != out[-1].shape[0]:
            raise ValueError(
                f"{name}[{i}] has {arr.shape[1]} inputs but {name}[{i - 1}] has "
                f"{out[-1].shape[0]} outputs; the layers must form a chain"
            )
        out.append(arr)
    return out


def _synflow_grads(abs_weights):
    """Per-layer ``(u_l v_l^T)`` rescaled to max 1, and the log of each scale.

    ``abs_weights[l]`` has shape (n_l, n_{l-1}). v_l = |W^{l-1}| ... |W^1| 1 and
    u_l = |W^{l+1}|^T ... |W^L|^T 1; each vector is renormalised after every
    product and its log scale accumulated, so deep stacks do not overflow.
    """
    n_layers = len(abs_weights)
    v, log_v = [None] * n_layers, np.zeros(n_layers)
    cur, log_cur = np.ones(abs_weights[0].shape[1]), 0.0
    for layer in range(n_layers):
        v[layer], log_v[layer] = cur, log_cur
        cur = abs_weights[layer] @ cur
        top = cur.max(initial=0.0)
        if top > 0:
            cur = cur / top
            log_cur += np.log(top)
    u, log_u = [None] * n_layers, np.zeros(n_layers)
    cur, log_cur = np.ones(abs_weights[-1].shape[0]), 0.0
    for layer in range(n_layers - 1, -1, -1):
        u[layer], log_u[layer] = cur, log_cur
        cur = abs_weights[layer].T @ cur
        top = cur.max(initial=0.0)
        if top > 0:
            cur = cur / top
            log_cur += np.log(top)
    grads = [np.outer(u[layer], v[layer]) for layer in range(n_layers)]
    return grads, log_u + log_v


def synflow_score_mlp(weights):
    """SynFlow connectivity ``R = 1^T |W^L| ··· |W^1| 1`` of a linear/ReLU stack.

    Parameters
    ----------
    weights : list of array-like of shape (n_l, n_{l-1})
        The weight matrices, input layer first, in the ``(out, in)`` layout
        of ``torch.nn.Linear``.

    Returns
    -------
    score : float
        May overflow to inf for deep stacks; :func:`synflow_grad_mlp` does not.

    See Also
    --------
    synflow_grad_mlp : Its gradient.
    sa_merge : The merge that uses its saliency.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.merging import synflow_score_mlp
    >>> synflow_score_mlp([np.array([[1.0, -2.0]]), np.array([[3.0], [1.0]])])
    12.0
    """
    weights = _check_chain(weights)
    cur = np.ones(weights[0].shape[1])
    for w in weights:
        cur = np.abs(w) @ cur
    return float(cur.sum())


def synflow_grad_mlp(weights, *, normalize=False):
    """Closed-form gradient of the SynFlow score with respect to ``|W^l|``.

    ``G^l = dR / d|W^l| = u_l v_l^T`` with ``v_l = |W^{l-1}| ... |W^1| 1``
    (upstream path mass) and ``u_l = |W^{l+1}|^T ... |W^L|^T 1`` (downstream
    path mass). ``G >= 0`` counts the strong input-output paths through each
    weight; a weight behind a dead unit gets 0. Computed in float64 with
    per-layer rescaling.

    Parameters
    ----------
    weights : list of array-like of shape (n_l, n_{l-1})
        Input layer first; the signs are ignored (the score uses ``|W|``).
    normalize : bool, default=False
        Return each ``G^l`` divided by a positive per-layer constant (its
        maximum), which leaves every within-tensor ranking unchanged and
        never overflows. ``False`` returns the exact gradient.

    Returns
    -------
    grads : list of ndarray
        ``grads[l]`` has the shape of ``weights[l]``.

    See Also
    --------
    synflow_score_mlp : The score itself.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.merging import synflow_grad_mlp
    >>> W1, W2 = np.array([[1.0, -2.0]]), np.array([[3.0], [1.0]])
    >>> [np.round(g, 12).tolist() for g in synflow_grad_mlp([W1, W2])]
    [[[4.0, 4.0]], [[3.0], [3.0]]]
    """
    weights = _check_chain(weights)
    grads, log_scales = _synflow_grads([np.abs(w) for w in weights])
    if normalize:
        return [g / g.max() if g.max() > 0 else g for g in grads]
    return [g * np.exp(s) for g, s in zip(grads, log_scales, strict=True)]


def lora_factor_grads(grad_w, B, A, *, lora_scaling=1.0):
    """Gradients with respect to LoRA factors, without materialising ``Delta W``.

    For ``W = W_0 + s B A`` and ``G_W = dR/dW`` (the gradient with respect to
    the signed weight, ``G * sign(W)`` for the SynFlow score):
    ``dR/dB = s G_W A^T`` and ``dR/dA = s B^T G_W``.

    Parameters
    ----------
    grad_w : array-like of shape (n_out, n_in)
    B : array-like of shape (n_out, r)
    A : array-like of shape (r, n_in)
    lora_scaling : float, default=1.0
        ``s`` (``lora_alpha / r`` in peft).

    Returns
    -------
    grad_B, grad_A : ndarray

    See Also
    --------
    sa_merge_lora : The rank-wise merge that uses them.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.merging import lora_factor_grads
    >>> B, A = np.ones((3, 1)), np.ones((1, 2))
    >>> grad_B, grad_A = lora_factor_grads(np.ones((3, 2)), B, A)  # dL/dB = G A^T, dL/dA = B^T G
    >>> grad_B.ravel().tolist(), grad_A.ravel().tolist()
    ([2.0, 2.0, 2.0], [3.0, 3.0])
    """
    grad_w = real_array(grad_w, "grad_w", ndim=2)
    B, A = real_array(B, "B", ndim=2), real_array(A, "A", ndim=2)
    if B.shape[1] != A.shape[0]:
        raise ValueError(f"B (n_out, r) and A (r, n_in) do not match: {B.shape}, {A.shape}")
    if grad_w.shape != (B.shape[0], A.shape[1]):
        raise ValueError(f"grad_w must have shape {(B.shape[0], A.shape[1])}, got {grad_w.shape}")
    s = check_scaling(lora_scaling, "lora_scaling")
    return s * grad_w @ A.T, s * B.T @ grad_w


# ---------------------------------------------------------------------------
# Iterative saliency pruning


def _next_count(count, p):
    """Design choice: k_{t+1} = floor((1 - p) k_t + 1/2) (round half up)."""
    return int(np.floor((1.0 - p) * count + 0.5))


def sa_keep_counts(size, p, n_rounds):
    """The keep counts ``k_0 = size, k_{t+1} = floor((1 - p) k_t + 1/2)``, t = 0..n_rounds.

    The number of coordinates of a tensor of ``size`` entries that survive
    ``n_rounds`` rounds of :func:`sa_merge` is ``sa_keep_counts(...)[-1]``,
    about ``(1 - p) ** n_rounds * size``.

    Parameters
    ----------
    size : int
        Number of entries of the tensor, ``k_0``.
    p : float in [0, 1)
        Fraction of the surviving coordinates pruned per round.
    n_rounds : int
        Number of pruning rounds ``T``.

    Returns
    -------
    counts : list of int
        ``[k_0, ..., k_T]``, of length ``n_rounds + 1``.

    See Also
    --------
    sa_merge : The merge whose pruning follows these counts.

    Examples
    --------
    >>> from mvlearn_ext.merging import sa_keep_counts
    >>> sa_keep_counts(100, 0.2, 3)
    [100, 80, 64, 51]
    """
    counts = [int(size)]
    for _ in range(int(n_rounds)):
        counts.append(_next_count(counts[-1], p))
    return counts


def _infer_layers(base, layers, need_chain):
    floats = _float_keys(base)
    if layers is None:
        layers = [k for k in floats if base[k].ndim >= 2]
        if not layers:
            raise ValueError("base has no floating parameter with 2 or more dimensions to prune")
    else:
        layers = check_key_names(layers, floats, "layers")
        if len(set(layers)) != len(layers):
            raise ValueError("layers has repeated names")
    if need_chain:
        bad = [k for k in layers if base[k].ndim != 2]
        if bad:
            raise ValueError(
                f"the closed-form saliency needs 2-D weights (n_out, n_in); {bad} are not. "
                "Pass layers= the weight matrices in input-to-output order, or use the torch "
                "bridge (mvlearn_ext.deep.merging) for convolutions and other modules"
            )
        for a, b in zip(layers[:-1], layers[1:], strict=True):
            if base[b].shape[1] != base[a].shape[0]:
                raise ValueError(
                    f"{b!r} has {base[b].shape[1]} inputs but {a!r} has {base[a].shape[0]} "
                    "outputs: the layers do not form a chain. Pass layers= the weight matrices "
                    "in input-to-output order (e.g. the body without its heads)"
                )
    return layers


def _closed_form_grad_fn(layers):
    def grad_fn(state):
        grads, _ = _synflow_grads([np.abs(state[k]) for k in layers])
        return dict(zip(layers, grads, strict=True))

    return grad_fn


def _check_common(p, n_rounds, scaling, saliency_sign):
    p = check_fraction(p, "p", high_open=True)
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, numbers.Integral) or n_rounds < 0:
        raise ValueError(f"n_rounds must be a non-negative integer, got {n_rounds!r}")
    scaling = check_scaling(scaling)
    check_choice(saliency_sign, "saliency_sign", _SALIENCY_SIGNS)
    return p, int(n_rounds), scaling


def _sa_driver(base64, tvs, layers, grad_fn, p, n_rounds, saliency_sign):
    """Iterative pruning; returns the masks (list over experts of dicts over layers)."""
    masks = [{k: np.ones(base64[k].shape, dtype=bool) for k in layers} for _ in tvs]
    counts = {k: base64[k].size for k in layers}
    for _ in range(n_rounds):
        pruned = [{k: tv[k] * m[k] for k in layers} for tv, m in zip(tvs, masks, strict=True)]
        consensus = {k: sum(pr[k] for pr in pruned) for k in layers}
        nxt = {k: _next_count(counts[k], p) for k in layers}
        new_masks = []
        for n, tv in enumerate(tvs):
            state = dict(base64)
            for k in tv:
                state[k] = base64[k] + (pruned[n][k] if k in pruned[n] else tv[k])
            grads = grad_fn(state)
            mask_n = {}
            for k in layers:
                if saliency_sign == "task":
                    sign = np.sign(tv[k])
                else:  # literal derivative through |theta_0 + tau|
                    sign = np.sign(state[k])
                score = grads[k] * sign * consensus[k]
                score = np.where(masks[n][k], score, -np.inf)
                mask_n[k] = _topk_mask(score, nxt[k]) & masks[n][k]
            new_masks.append(mask_n)
        masks, counts = new_masks, nxt
    return masks


def sa_merge(
    base,
    experts,
    *,
    p=0.2,
    n_rounds=10,
    scaling=1.0,
    saliency_sign="task",
    layers=None,
    grad_fn=None,
    return_masks=False,
):
    """SA-Merging: prune each task vector by consensus connectivity saliency, then sum.

    Reconstruction (from a third-party summary of the paper; no public code).
    For each expert n the saliency of a coordinate of ``tau_n`` is

    ``S_n = G_n * sign(tau_n) * tau_star``

    with ``G_n = dR/d|W|`` the SynFlow connectivity gradient of
    ``theta_0 + tau_n`` (all-ones input, absolute weights; closed form for a
    chain of linear layers) and ``tau_star = sum_i tau_i`` the current
    consensus. An update behind a dead unit (``G = 0``) scores 0 and one
    whose sign opposes the consensus scores below 0, so both are pruned
    before any live agreeing update. In each of ``n_rounds`` rounds every
    expert keeps, per tensor, the ``k_{t+1} = floor((1 - p) k_t + 1/2)``
    surviving coordinates of highest saliency (masks only shrink), and
    ``G`` and ``tau_star`` are recomputed. Finally
    ``theta = theta_0 + scaling * sum_n tau_n^(T)``.

    Design choices (not in the sources): ``saliency_sign="task"`` reads the
    stated intent (``"weight"``, the literal derivative through
    ``|theta_0 + tau|``, uses ``sign(theta_0 + tau_n)``); floating entries
    outside ``layers`` (biases, norms) are merged by task arithmetic, not
    pruned; the keep counts round half up. The method never looks at data.
    Integer and boolean entries (counters, indices, masks) are copied from
    the base, not merged.

    Parameters
    ----------
    base, experts : state dicts
        See :func:`task_arithmetic`: floating entries are merged, integer and
        boolean ones copied from ``base``, and overflow is an error.
    p : float in [0, 1), default=0.2
        Fraction of the surviving coordinates pruned per round.
    n_rounds : int, default=10
        T; about ``(1 - p) ** T`` of each tensor survives (10.7% by default).
    scaling : float, default=1.0
        lambda.
    saliency_sign : {"task", "weight"}, default="task"
    layers : list of str, default=None
        The weight matrices to prune, input layer first (shape ``(n_out, n_in)``
        each, forming a chain, when ``grad_fn`` is None). Default: every
        floating parameter with 2 or more dimensions, in the base's order.
    grad_fn : callable, default=None
        ``grad_fn(state) -> {key: G}`` returning ``dR/d|W|`` for the keys of
        ``layers`` given a float64 state dict; the torch bridge passes an
        autograd version for general modules. Default: the closed form.
    return_masks : bool, default=False
        Also return the final boolean masks, one dict per expert.

    Returns
    -------
    merged : dict of str to ndarray
    masks : list of dict, only when ``return_masks=True``

    Raises
    ------
    ValueError
        If ``base`` has no floating entry, or a merged value overflows its
        dtype (float16 beyond 65504); the message names the key.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.merging import sa_merge
    >>> rng = np.random.default_rng(0)
    >>> base = {"w1": rng.normal(size=(8, 4)), "w2": rng.normal(size=(3, 8))}
    >>> def perturb(state):
    ...     return {k: v + 0.1 * rng.normal(size=v.shape) for k, v in state.items()}
    >>> experts = [perturb(base), perturb(base)]
    >>> merged, masks = sa_merge(base, experts, p=0.5, n_rounds=2, return_masks=True)
    >>> int(masks[0]["w1"].sum()), int(masks[0]["w2"].sum())
    (8, 6)

    See Also
    --------
    sa_merge_lora : The rank-wise version for LoRA adapters.
    task_arithmetic : The unpruned sum of task vectors.
    ties : Trimming by magnitude with sign election.

    References
    ----------
    Park, Lee, Sohn, "SA-Merging", ICML 2026, arXiv 2606.00511.
    Tanaka et al., "Pruning neural networks without any data by iteratively
    conserving synaptic flow", NeurIPS 2020 (SynFlow).
    """
    base, experts = check_state_dicts(base, experts)
    p, n_rounds, scaling = _check_common(p, n_rounds, scaling, saliency_sign)
    if grad_fn is not None and not callable(grad_fn):
        raise TypeError("grad_fn must be callable or None")
    keys = _merge_keys(base)
    layers = _infer_layers(base, layers, need_chain=grad_fn is None)
    if grad_fn is None:
        grad_fn = _closed_form_grad_fn(layers)
    tvs = _task_vectors(base, experts, keys)
    base64 = {k: base[k].astype(np.float64) for k in keys}
    masks = _sa_driver(base64, tvs, layers, grad_fn, p, n_rounds, saliency_sign)
    merged = {k: sum(tv[k] for tv in tvs) for k in keys}
    for k in layers:
        merged[k] = sum(tv[k] * m[k] for tv, m in zip(tvs, masks, strict=True))
    out = _finish(base, merged, scaling)
    return (out, masks) if return_masks else out


def _check_adapters(base, adapters, layers):
    if isinstance(adapters, dict) or not isinstance(adapters, (list, tuple)) or not adapters:
        raise TypeError(
            "adapters must be a non-empty list of mappings {key: (B, A)}, one per expert"
        )
    keys = None
    out = []
    for n, ad in enumerate(adapters):
        if not hasattr(ad, "items"):
            raise TypeError(f"adapters[{n}] must be a mapping {{key: (B, A)}}")
        if keys is None:
            keys = list(ad)
        elif set(ad) != set(keys):
            raise ValueError(
                f"adapters[{n}] adapts keys {sorted(ad)}, adapters[0] adapts {sorted(keys)}"
            )
        checked = {}
        for key in keys:
            if key not in layers:
                raise ValueError(
                    f"adapters[{n}] adapts {key!r}, which is not one of the layers {layers}"
                )
            try:
                B, A = ad[key]
            except (TypeError, ValueError) as exc:
                raise TypeError(f"adapters[{n}][{key!r}] must be a pair (B, A)") from exc
            where = f"adapters[{n}][{key!r}]"
            B = real_array(B, f"the B of {where}", ndim=2)
            A = real_array(A, f"the A of {where}", ndim=2)
            shape = base[key].shape
            if B.shape[1] != A.shape[0] or (B.shape[0], A.shape[1]) != shape:
                raise ValueError(
                    f"{where}: B {B.shape} and A {A.shape} must be (n_out, r) and "
                    f"(r, n_in) with (n_out, n_in) = {shape}"
                )
            checked[key] = (B, A)
        out.append(checked)
    return out, keys


def sa_merge_lora(
    base,
    adapters,
    *,
    lora_scaling=1.0,
    p=0.2,
    n_rounds=10,
    scaling=1.0,
    layers=None,
    grad_fn=None,
    return_masks=False,
):
    """Rank-wise SA-Merging of LoRA adapters: prune whole rank-1 components.

    Reconstruction (third-party summary; no public code). Expert n adapts
    layer l by ``Delta W_n = s B_n A_n``; its k-th rank-1 component is
    ``s b_k a_k^T``. With ``G_W = G * sign(W_n)`` the SynFlow gradient with
    respect to the signed weight ``W_n = theta_0 + Delta W_n``:

    * sensitivity ``gamma_k = s b_k^T G_W a_k`` (design choice: the exact
      derivative of R with respect to a multiplier of component k, i.e.
      ``b_k^T G a_k`` up to the factor s and the sign of W);
    * consensus ``eta_k = b_k^T Delta W_bar a_k``, ``Delta W_bar = sum_i s B_i A_i``;
    * saliency ``|gamma_k eta_k|``.

    Each round keeps the ``floor((1 - p) k_t + 1/2)`` surviving ranks of
    highest saliency per layer and expert (``B <- B Diag(m)``,
    ``A <- Diag(m) A``), recomputing ``G`` and ``Delta W_bar``. Design
    choice: the same ``p`` and ``n_rounds`` schedule as :func:`sa_merge`,
    per layer. The merged model is ``theta_0 + scaling * sum_n s B_n Diag(m_n) A_n``.

    Parameters
    ----------
    base : state dict
        Dense base weights; ``layers`` (default: every floating 2-D key in
        order) must form a chain of ``(n_out, n_in)`` matrices. Integer and
        boolean entries (counters, indices, masks) are copied unchanged; at
        least one entry must be floating.
    adapters : list of mappings ``{key: (B, A)}``
        One per expert, all adapting the same keys; B of shape (n_out, r),
        A of shape (r, n_in).
    lora_scaling : float, default=1.0
        s (``lora_alpha / r`` in peft).
    p, n_rounds, scaling, layers : see :func:`sa_merge`.
    grad_fn : callable, default=None
        ``grad_fn(state) -> {key: G}``, ``dR/d|W|`` for the adapted keys
        given a float64 state dict (base weights with each expert's update
        added); the PEFT bridge passes an autograd version for transformers
        models. Default: the closed form, which needs ``layers`` to chain.
    return_masks : bool, default=False
        Also return the rank masks: one dict per expert of boolean vectors of
        length r.

    Returns
    -------
    merged : dict of str to ndarray
    masks : list of dict, only when ``return_masks=True``

    Raises
    ------
    ValueError
        If ``base`` has no floating entry, or a merged value overflows its
        dtype (float16 beyond 65504); the message names the key.

    See Also
    --------
    sa_merge : The merge of dense experts.
    lora_factor_grads : The factor gradients it uses.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.merging import sa_merge_lora
    >>> rng = np.random.default_rng(0)
    >>> base = {"w1": rng.normal(size=(6, 4)), "w2": rng.normal(size=(3, 6))}
    >>> def adapter():
    ...     return {k: (rng.normal(size=(v.shape[0], 2)), rng.normal(size=(2, v.shape[1])))
    ...             for k, v in base.items()}
    >>> merged, masks = sa_merge_lora(base, [adapter(), adapter()], p=0.5, n_rounds=1,
    ...                               return_masks=True)
    >>> merged["w1"].shape, masks[0]["w1"].tolist()
    ((6, 4), [...])
    """
    base, _ = check_state_dicts(base, [base])
    p, n_rounds, scaling = _check_common(p, n_rounds, scaling, "task")
    s = check_scaling(lora_scaling, "lora_scaling")
    if grad_fn is not None and not callable(grad_fn):
        raise TypeError("grad_fn must be callable or None")
    float_keys = _merge_keys(base)
    layers = _infer_layers(base, layers, need_chain=grad_fn is None)
    adapters, keys = _check_adapters(base, adapters, layers)
    base64 = {k: base[k].astype(np.float64) for k in float_keys}
    masks = [{k: np.ones(ad[k][0].shape[1], dtype=bool) for k in keys} for ad in adapters]
    counts = [{k: ad[k][0].shape[1] for k in keys} for ad in adapters]

    def delta(ad, m, k):
        B, A = ad[k]
        return s * (B * m[k]) @ A

    for _ in range(n_rounds):
        deltas = [
            {k: delta(ad, m, k) for k in keys} for ad, m in zip(adapters, masks, strict=True)
        ]
        bar = {k: sum(d[k] for d in deltas) for k in keys}
        new_masks = []
        for n, ad in enumerate(adapters):
            weight_of = {k: base64[k] + deltas[n].get(k, 0.0) for k in layers}
            if grad_fn is None:
                grads, _ = _synflow_grads([np.abs(weight_of[k]) for k in layers])
                grad_of = dict(zip(layers, grads, strict=True))
            else:
                grad_of = grad_fn({**base64, **weight_of})
            mask_n = {}
            for k in keys:
                B, A = ad[k]
                grad_w = grad_of[k] * np.sign(weight_of[k])
                gamma = s * np.einsum("ik,ij,kj->k", B, grad_w, A)
                eta = np.einsum("ik,ij,kj->k", B, bar[k], A)
                score = np.where(masks[n][k], np.abs(gamma * eta), -np.inf)
                nxt = _next_count(counts[n][k], p)
                mask_n[k] = _topk_mask(score, nxt) & masks[n][k]
                counts[n][k] = nxt
            new_masks.append(mask_n)
        masks = new_masks
    merged = {k: sum(delta(ad, m, k) for ad, m in zip(adapters, masks, strict=True)) for k in keys}
    out = _finish(base, merged, scaling)
    return (out, masks) if return_masks else out
