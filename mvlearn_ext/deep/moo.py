"""MOPO's preference-only regression loss for parametric policies (torch).

Reconstruction (see :mod:`mvlearn_ext.moo.mopo`): for pairs ``(y, y')``
with per-objective preference labels ``I_k`` (1 if ``y`` is preferred to
``y'`` under objective ``k``) and multipliers ``w = (1, lambda_2, ...)``,

    ``l = mean[(h(y, y') - tau^{-1} sum_k w_k (I_k - 1/2))^2]``,
    ``h = (log pi(y) - log pi_ref(y)) - (log pi(y') - log pi_ref(y'))``.

With one objective this is IPO's loss (Azar et al. 2023). In the tabular
case, with pairs drawn from ``mu``, its minimiser is the closed-form MOPO
policy :func:`mvlearn_ext.moo.mopo.mopo_policy`.
"""

from __future__ import annotations

import torch

__all__ = ["mopo_preference_loss"]


def mopo_preference_loss(logp, logp_other, ref_logp, ref_logp_other, labels, weights, *, tau):
    """MOPO/IPO regression loss on a batch of preference pairs.

    Parameters
    ----------
    logp, logp_other : Tensor of shape (batch,)
        Policy log-probabilities of ``y`` and ``y'`` (sequence sums for LMs).
    ref_logp, ref_logp_other : Tensor of shape (batch,)
        Reference-policy log-probabilities (no gradient needed).
    labels : Tensor of shape (batch, n_objectives)
        ``I_k`` in {0, 1} (or preference probabilities in [0, 1]).
    weights : Tensor or sequence of shape (n_objectives,)
        ``(1, lambda_2, ..., lambda_K)``.
    tau : float
        ``> 0``.

    Returns
    -------
    loss : Tensor (scalar)

    See Also
    --------
    mvlearn_ext.moo.mopo.ipo_regression_loss : The tabular loss.
    mvlearn_ext.deep.moo_trl.MOPOTrainer : The trainer that minimises it.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep.moo import mopo_preference_loss
    >>> z = torch.zeros(2)
    >>> labels = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> float(mopo_preference_loss(z, z, z, z, labels, [1.0, 0.5], tau=0.1))
    6.25
    """
    if not tau > 0:
        raise ValueError(f"tau must be > 0, got {tau!r}")
    labels = torch.as_tensor(labels, dtype=logp.dtype, device=logp.device)
    if labels.ndim != 2 or labels.shape[0] != logp.shape[0]:
        raise ValueError(
            f"labels must have shape (batch, n_objectives), got {tuple(labels.shape)}"
        )
    w = torch.as_tensor(weights, dtype=logp.dtype, device=logp.device).reshape(-1)
    if w.shape[0] != labels.shape[1]:
        raise ValueError(f"weights must have {labels.shape[1]} entries, got {w.shape[0]}")
    h = (logp - ref_logp) - (logp_other - ref_logp_other)
    target = ((labels - 0.5) @ w) / tau
    return ((h - target) ** 2).mean()
