"""BADIT's LoRA-MoE layer (needs torch): orthogonal PiSSA experts and gradient regrouping.

BADIT (Wang, Li, Li, Chi, Niu, Sugiyama, ICML 2026, arXiv 2605.05676) follows
its authors' code (``wangbing1416/BADIT``, a peft fork), with three defects of
that code fixed: the regroup is a true permutation (exactly r units per
expert by an optimal capacity-constrained assignment; the code's random
filling can drop or duplicate units), the gate can be permuted with the units
(``permute_gate=True``; the code never permutes it), and the regroup
gradients can be accumulated over many batches (the code uses the last
mini-batch only). The optimiser's moment estimates are permuted together
with the parameters when the optimiser is passed to :meth:`LoRAMoELinear.regroup`.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch
from torch import nn

from mvlearn_ext.adapters._badit import (
    balanced_spherical_kmeans,
    gate_permutation,
    intra_inter_cosine,
    pissa_moe_init,
    regroup_permutation,
    unit_gradient_vectors,
)
from mvlearn_ext.utils._torch import seeded_generator
from mvlearn_ext.utils._validation import check_allocation

__all__ = ["LoRAMoELinear"]


class LoRAMoELinear(nn.Module):
    """A frozen linear layer plus a gated mixture of K rank-r LoRA experts.

    ``y = W_res x + b + s sum_{e in TopK(g)} g_e(x) B_e A_e x`` with the gate
    ``g = softmax(W_g x_bar)`` (``x_bar`` the token mean of a
    ``(batch, tokens, in)`` input, or each row of a 2-D input), renormalised
    over the top ``top_k`` experts.

    ``init="pissa_moe"`` splits the top ``K r`` singular triplets of the base
    weight into orthogonal experts over the exact residual
    ``W_res = W - s sum_e B_e A_e`` (:func:`mvlearn_ext.adapters.pissa_moe_init`);
    ``init="random"`` keeps ``W_res = W`` with Gaussian A and zero B (plain
    LoRA-MoE). With ``preserve_init=True`` (design choice) the gate starts at
    zero (uniform) and its renormalised weights are multiplied by ``top_k``,
    so that with ``top_k = K`` the initial layer computes exactly ``W x + b``;
    ``preserve_init=False`` is the code's convention (weights sum to 1, so a
    PiSSA-initialised layer starts near ``W_res + (W - W_res) / K``).

    Parameters
    ----------
    base : nn.Linear
        The pretrained layer (copied; never modified).
    n_experts : int, default=6
    rank : int, default=4
    lora_alpha : float, default=None
        peft's alpha; ``s = lora_alpha / rank`` (default: s = 1).
    top_k : int, default=None
        Experts used per input (default: all).
    init : {"pissa_moe", "random"}, default="pissa_moe"
    preserve_init : bool, default=True
    gate : {"learned", "uniform"}, default="learned"
        ``"uniform"`` fixes ``g_e = 1 / K`` (used to check function preservation).
    random_state : int or None, default=None
        Seeds the random init.

    See Also
    --------
    pissa_moe_init : The initialisation of its experts.
    regroup_permutation : Regroups its rank-1 units between experts.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.adapters import LoRAMoELinear
    >>> base = torch.nn.Linear(8, 6)
    >>> layer = LoRAMoELinear(base, n_experts=2, rank=2)
    >>> x = torch.randn(3, 8)
    >>> bool(torch.allclose(layer(x), base(x), atol=1e-5))
    True
    """

    def __init__(
        self,
        base,
        *,
        n_experts=6,
        rank=4,
        lora_alpha=None,
        top_k=None,
        init="pissa_moe",
        preserve_init=True,
        gate="learned",
        random_state=None,
    ):
        super().__init__()
        if not isinstance(base, nn.Linear):
            raise TypeError(f"base must be an nn.Linear, got {type(base).__name__}")
        if init not in {"pissa_moe", "random"}:
            raise ValueError(f"init must be 'pissa_moe' or 'random', got {init!r}")
        if gate not in {"learned", "uniform"}:
            raise ValueError(f"gate must be 'learned' or 'uniform', got {gate!r}")
        for name, value in (("n_experts", n_experts), ("rank", rank)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        K, r = int(n_experts), int(rank)
        out_features, in_features = base.weight.shape
        check_allocation(
            K * r * (in_features + out_features),
            "n_experts" if K >= r else "rank",
            K if K >= r else r,
            what="the experts (n_experts x rank x (in + out features))",
            itemsize=base.weight.element_size(),
        )
        top_k = K if top_k is None else int(top_k)
        if not 1 <= top_k <= K:
            raise ValueError(f"top_k must lie in [1, n_experts = {K}], got {top_k}")
        dtype = base.weight.dtype
        W = base.weight.detach().to(torch.float64).cpu().numpy()
        self.n_experts, self.rank, self.top_k = K, r, top_k
        self.preserve_init, self.gate_mode = bool(preserve_init), gate
        if init == "pissa_moe":
            residual, B, A, s = pissa_moe_init(W, K, r, lora_alpha=lora_alpha)
        else:
            s = float(r if lora_alpha is None else lora_alpha) / r
            gen = seeded_generator(random_state)
            residual = W
            A = (
                torch.randn(K, r, W.shape[1], generator=gen, dtype=torch.float64)
                / np.sqrt(W.shape[1])
            ).numpy()
            B = np.zeros((K, W.shape[0], r))
        self.scaling = float(s)
        self.register_buffer("weight_res", torch.as_tensor(residual, dtype=dtype))
        bias = (
            base.bias.detach().clone()
            if base.bias is not None
            else torch.zeros(W.shape[0], dtype=dtype)
        )
        self.register_buffer("bias", bias)
        self.lora_A = nn.Parameter(torch.as_tensor(A, dtype=dtype))
        self.lora_B = nn.Parameter(torch.as_tensor(B, dtype=dtype))
        self.gate_weight = nn.Parameter(torch.zeros(K, W.shape[1], dtype=dtype))
        if gate == "uniform":
            self.gate_weight.requires_grad_(False)
        self.register_buffer("_grad_A", torch.zeros_like(self.lora_A), persistent=False)
        self.register_buffer("_grad_B", torch.zeros_like(self.lora_B), persistent=False)
        self._n_accumulated = 0

    def gate_weights(self, x):
        """Per-input expert weights, shape (batch, K) (zeros outside the top-k)."""
        x_bar = x.mean(dim=1) if x.ndim == 3 else x
        K = self.n_experts
        if self.gate_mode == "uniform":
            g = torch.full((x_bar.shape[0], K), 1.0 / K, dtype=x.dtype, device=x.device)
            return g * K if self.preserve_init else g
        probs = torch.softmax(x_bar @ self.gate_weight.T, dim=-1)
        if self.top_k < K:
            top = probs.topk(self.top_k, dim=-1)
            probs = torch.zeros_like(probs).scatter(-1, top.indices, top.values)
        g = probs / probs.sum(dim=-1, keepdim=True)
        return g * self.top_k if self.preserve_init else g

    def delta_weight(self):
        """``s sum_e B_e A_e``, shape (out, in) (the ungated sum of the experts)."""
        return self.scaling * torch.einsum("eor,eri->oi", self.lora_B, self.lora_A)

    def forward(self, x):
        if x.ndim not in (2, 3):
            raise ValueError(
                f"x must be (batch, in) or (batch, tokens, in), got shape {tuple(x.shape)}"
            )
        out = x @ self.weight_res.T + self.bias
        g = self.gate_weights(x)  # (batch, K)
        h = torch.einsum("...i,eri->...er", x, self.lora_A)
        expert_out = torch.einsum("...er,eor->...eo", h, self.lora_B)
        if x.ndim == 3:
            mixed = torch.einsum("bteo,be->bto", expert_out, g)
        else:
            mixed = torch.einsum("beo,be->bo", expert_out, g)
        return out + self.scaling * mixed

    # ------------------------------------------------------------------
    # Regrouping

    @torch.no_grad()
    def accumulate_unit_gradients(self):
        """Add the experts' current ``.grad`` to the regroup accumulators (after backward)."""
        if self.lora_A.grad is None or self.lora_B.grad is None:
            raise RuntimeError("no gradients on the experts: call loss.backward() first")
        self._grad_A += self.lora_A.grad
        self._grad_B += self.lora_B.grad
        self._n_accumulated += 1

    def unit_gradients(self):
        """Unit-normalised accumulated gradient of every rank-1 unit, shape (K r, in + out)."""
        return unit_gradient_vectors(
            self._grad_B.detach().to(torch.float64).cpu().numpy(),
            self._grad_A.detach().to(torch.float64).cpu().numpy(),
        )

    @torch.no_grad()
    def regroup(self, *, optimizer=None, permute_gate=False, random_state=None, n_init=4):
        """Cluster the units by accumulated gradient direction and permute them into experts.

        Balanced spherical k-means with exactly r units per cluster; the units
        (rows of A together with columns of B) are permuted, never copied or
        dropped. With ``optimizer``, its per-parameter state tensors of the
        parameter's shape (Adam's moments) are permuted alike.
        ``permute_gate=True`` also moves each gate row to the new expert that
        inherits most of its units. Resets the accumulators.

        Returns
        -------
        info : dict
            ``perm`` (new flat unit -> old flat unit), ``labels``, and the mean
            intra-/inter-expert gradient cosines ``before`` and ``after``.
        """
        if self._n_accumulated == 0:
            raise RuntimeError(
                "no accumulated gradients: call accumulate_unit_gradients() after backward"
            )
        K, r = self.n_experts, self.rank
        vectors = self.unit_gradients()
        labels = balanced_spherical_kmeans(vectors, K, n_init=n_init, random_state=random_state)
        perm = regroup_permutation(labels, K, r)
        before = intra_inter_cosine(vectors, np.arange(K * r) // r)
        after = intra_inter_cosine(vectors, labels)
        index = torch.as_tensor(perm, device=self.lora_A.device)

        def permute_A(t):
            return t.reshape(K * r, -1)[index].reshape(t.shape)

        def permute_B(t):
            flat = t.permute(0, 2, 1).reshape(K * r, -1)[index]
            return flat.reshape(K, r, -1).permute(0, 2, 1).contiguous()

        moves = [(self.lora_A, permute_A), (self.lora_B, permute_B)]
        if permute_gate and self.gate_mode == "learned":
            gperm = torch.as_tensor(gate_permutation(perm, K, r), device=self.gate_weight.device)
            moves.append((self.gate_weight, lambda t: t[gperm]))
        for param, fn in moves:
            param.copy_(fn(param))
            if optimizer is not None and param in optimizer.state:
                for key, value in optimizer.state[param].items():
                    if torch.is_tensor(value) and value.shape == param.shape:
                        optimizer.state[param][key] = fn(value)
        self._grad_A.zero_()
        self._grad_B.zero_()
        self._n_accumulated = 0
        return {"perm": perm, "labels": labels, "before": before, "after": after}
