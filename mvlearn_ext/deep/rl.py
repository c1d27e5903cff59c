"""Torch side of GRPO: token entropies, the k3 KL estimator and the clipped policy loss.

The advantages, the std filter and the entropy masks are NumPy functions in
:mod:`mvlearn_ext.rl`; this module holds what needs autograd. Tensors are
laid out ``(n_sequences, n_tokens)`` with a boolean or 0/1 ``mask`` of the
generated (non-padding) tokens.
"""

from __future__ import annotations

from numbers import Real

import torch

__all__ = ["grpo_loss", "kl_k3", "token_entropy", "token_log_probs"]

_LOSS_TYPES = ("grpo", "dapo", "bnpo")


def token_entropy(logits):
    """``H_t = -sum_v p_v log p_v`` of each token's distribution.

    Parameters
    ----------
    logits : Tensor of shape (..., vocab)

    Returns
    -------
    entropy : Tensor of shape (...)

    See Also
    --------
    mvlearn_ext.rl.entropy_mask : Keeps the high-entropy tokens.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep import token_entropy
    >>> round(float(token_entropy(torch.zeros(1, 1, 4))), 4)  # uniform over 4 tokens: log 4
    1.3863
    """
    logp = torch.log_softmax(logits, dim=-1)
    return -(logp.exp() * logp).sum(dim=-1)


def token_log_probs(logits, tokens):
    """``log pi(token_t | ...)`` of every token under its logits.

    Parameters
    ----------
    logits : tensor of shape (batch, seq_len, vocab_size)
        The model's logits at every position.
    tokens : tensor of int, shape (batch, seq_len)
        The tokens whose log-probabilities are taken.

    Returns
    -------
    log_probs : tensor of shape (batch, seq_len)
        The log-probability of every token.

    See Also
    --------
    grpo_loss : The loss that takes them.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep import token_log_probs
    >>> token_log_probs(torch.zeros(1, 2, 4), torch.tensor([[0, 3]])).exp().tolist()
    [[0.25, 0.25]]
    """
    logp = torch.log_softmax(logits, dim=-1)
    return logp.gather(-1, tokens.long().unsqueeze(-1)).squeeze(-1)


def kl_k3(log_probs, ref_log_probs):
    """The k3 estimator of ``KL(pi || pi_ref)`` per token: ``(r - 1) - log r``, ``r = pi_ref/pi``.

    Non-negative, zero exactly when the two log-probabilities agree, and an
    unbiased estimate of the KL when the tokens are sampled from ``pi``
    (Schulman, "Approximating KL divergence", 2020).

    Parameters
    ----------
    log_probs : tensor
        Per-token log-probabilities under the policy ``pi``.
    ref_log_probs : tensor of the shape of ``log_probs``
        Per-token log-probabilities under the reference policy.

    Returns
    -------
    kl : tensor of the shape of ``log_probs``
        The per-token estimate, non-negative.

    See Also
    --------
    grpo_loss : The loss that adds it.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep import kl_k3
    >>> kl = kl_k3(torch.tensor([-1.0, -2.0]), torch.tensor([-1.0, -1.0]))
    >>> [round(float(v), 4) for v in kl]  # 0 where the policies agree, e - 2 for r = e
    [0.0, 0.7183]
    """
    d = ref_log_probs - log_probs
    return torch.exp(d) - d - 1.0


def _reduce(per_token, mask, loss_type):
    m = mask.to(per_token.dtype)
    if loss_type == "grpo":
        per_seq = (per_token * m).sum(-1) / m.sum(-1).clamp(min=1.0)
        return per_seq.mean()
    if loss_type == "bnpo":
        return (per_token * m).sum() / m.sum().clamp(min=1.0)
    # dapo: a global token mean; TRL normalises by the active tokens of the
    # whole (multi-process) batch, which on one process equals bnpo.
    return (per_token * m).sum() / m.sum().clamp(min=1.0)


def grpo_loss(
    log_probs,
    old_log_probs,
    advantages,
    mask=None,
    *,
    ref_log_probs=None,
    beta=0.0,
    epsilon=0.2,
    epsilon_high=None,
    ratio_max=None,
    loss_type="dapo",
    return_stats=False,
):
    """The PPO-clipped token loss of GRPO, with a k3 KL term to a reference policy.

    Per token ``t`` of sequence ``i``, with the importance ratio
    ``rho = exp(log_probs - old_log_probs)``::

        l_it = -min(rho A_i, clip(rho, 1 - epsilon, 1 + epsilon_high) A_i) + beta KL_it

    with ``KL_it`` the k3 estimator :func:`kl_k3` against ``ref_log_probs``,
    reduced over the tokens of ``mask`` by ``loss_type``.

    Parameters
    ----------
    log_probs : Tensor of shape (B, T)
        Log-probabilities of the sampled tokens under the current policy
        (carries the gradient).
    old_log_probs : Tensor of shape (B, T)
        The same under the sampling policy (detached here).
    advantages : Tensor of shape (B,) or (B, T)
        Group-relative advantages (:func:`mvlearn_ext.rl.group_advantages`);
        a per-sequence advantage is broadcast over its tokens.
    mask : Tensor of bool or 0/1, shape (B, T), optional
        Tokens that enter the loss: the action mask, possibly narrowed by an
        entropy mask (:func:`mvlearn_ext.rl.entropy_mask`) or by the std
        filter (zero rows). Default all tokens.
    ref_log_probs : Tensor of shape (B, T), optional
        Reference policy; required when ``beta > 0``.
    beta : float, default=0.0
        KL coefficient (TRL's default 0; VisualScore 0.001).
    epsilon : float, default=0.2
        Lower clip range; also the upper one unless ``epsilon_high`` is set
        (DAPO's clip-higher).
    epsilon_high : float, optional
    ratio_max : float, optional
        Clamp the ratio from above before the loss (VisualScore clamps at 3).
    loss_type : {"dapo", "grpo", "bnpo"}, default="dapo"
        ``"grpo"``: masked mean per sequence, then mean over sequences.
        ``"dapo"`` and ``"bnpo"``: one mean over all active tokens of the
        batch (TRL's default is ``"dapo"``).
    return_stats : bool, default=False
        Also return a dict with ``clip_fraction`` and ``kl`` (token means).

    Returns
    -------
    loss : Tensor (scalar)
    stats : dict, only with ``return_stats``

    See Also
    --------
    kl_k3 : The KL estimator of its penalty.
    token_log_probs : The per-token log-probabilities it takes.
    mvlearn_ext.rl.group_advantages : The advantages it takes.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep.rl import grpo_loss
    >>> lp = torch.zeros(2, 3, requires_grad=True)
    >>> loss = grpo_loss(lp, torch.zeros(2, 3), torch.tensor([1.0, -1.0]))
    >>> float(loss)
    0.0
    """
    if loss_type not in _LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {_LOSS_TYPES}, got {loss_type!r}")
    for name, value in (("epsilon", epsilon), ("beta", beta)):
        if not isinstance(value, Real) or value < 0:
            raise ValueError(f"{name} must be a non-negative float, got {value!r}")
    eps_hi = epsilon if epsilon_high is None else epsilon_high
    if not isinstance(eps_hi, Real) or eps_hi < 0:
        raise ValueError(f"epsilon_high must be a non-negative float, got {epsilon_high!r}")
    if log_probs.ndim != 2:
        raise ValueError(f"log_probs must be 2-D (B, T), got shape {tuple(log_probs.shape)}")
    if old_log_probs.shape != log_probs.shape:
        raise ValueError(
            f"old_log_probs has shape {tuple(old_log_probs.shape)}, "
            f"log_probs has shape {tuple(log_probs.shape)}"
        )
    A = advantages.to(log_probs.dtype)
    if A.ndim == 1:
        if A.shape[0] != log_probs.shape[0]:
            raise ValueError(
                f"advantages has {A.shape[0]} entries for {log_probs.shape[0]} sequences"
            )
        A = A[:, None]
    elif A.shape != log_probs.shape:
        raise ValueError(
            f"advantages must have shape (B,) or (B, T), got {tuple(advantages.shape)}"
        )
    if mask is None:
        mask = torch.ones_like(log_probs, dtype=torch.bool)
    elif mask.shape != log_probs.shape:
        raise ValueError(f"mask has shape {tuple(mask.shape)}, expected {tuple(log_probs.shape)}")
    ratio = torch.exp(log_probs - old_log_probs.detach())
    if ratio_max is not None:
        ratio = torch.clamp(ratio, max=float(ratio_max))
    clipped = torch.clamp(ratio, 1.0 - epsilon, 1.0 + eps_hi)
    per_token = -torch.minimum(ratio * A, clipped * A)
    kl = None
    if beta > 0:
        if ref_log_probs is None:
            raise ValueError("beta > 0 needs ref_log_probs")
        kl = kl_k3(log_probs, ref_log_probs.detach())
        per_token = per_token + beta * kl
    loss = _reduce(per_token, mask, loss_type)
    if not return_stats:
        return loss
    with torch.no_grad():
        m = mask.to(log_probs.dtype)
        n = m.sum().clamp(min=1.0)
        is_clipped = ((ratio < 1.0 - epsilon) & (A < 0)) | ((ratio > 1.0 + eps_hi) & (A > 0))
        stats = {
            "clip_fraction": float((is_clipped.to(m.dtype) * m).sum() / n),
            "kl": float((kl * m).sum() / n) if kl is not None else 0.0,
        }
    return loss, stats
