"""LoRA adapters for multi-task tuning: BADIT's orthogonal LoRA experts (NumPy parts).

PiSSA-MoE initialisation (orthogonal high-singular-value experts over an exact
residual), balanced spherical clustering of rank-1 units by their gradients,
and the regrouping permutation, which is always a true permutation (the
public BADIT code can drop or duplicate units). The torch layer,
:class:`LoRAMoELinear`, is imported with torch when first used.
"""

from mvlearn_ext.adapters._badit import (
    balanced_assignment,
    balanced_spherical_kmeans,
    expert_orthogonality,
    gate_permutation,
    intra_inter_cosine,
    pissa_moe_init,
    regroup_permutation,
    should_regroup,
    unit_gradient_vectors,
)
from mvlearn_ext.utils._optional import import_optional

__all__ = [
    "LoRAMoELinear",
    "balanced_assignment",
    "balanced_spherical_kmeans",
    "expert_orthogonality",
    "gate_permutation",
    "intra_inter_cosine",
    "pissa_moe_init",
    "regroup_permutation",
    "should_regroup",
    "unit_gradient_vectors",
]


#: The torch layer: imported on each use (never bound here), so
#: that importing the family never imports torch.
_TORCH_NAMES = frozenset({"LoRAMoELinear"})


def __getattr__(name):
    if name in _TORCH_NAMES:
        import_optional("torch", feature=f"mvlearn_ext.adapters.{name}")
        from mvlearn_ext.adapters import _lora_moe

        return getattr(_lora_moe, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
