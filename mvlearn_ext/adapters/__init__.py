"""LoRA adapters for multi-task tuning: BADIT's orthogonal LoRA experts (NumPy parts).

PiSSA-MoE initialisation (orthogonal high-singular-value experts over an exact
residual), balanced spherical clustering of rank-1 units by their gradients,
and the regrouping permutation, which is always a true permutation (the
public BADIT code can drop or duplicate units). The layer and the training
hooks are in ``mvlearn_ext.deep.adapters``.
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

__all__ = [
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
