"""Data-free model merging on dicts of NumPy arrays (state-dict layout).

Task vectors relative to a shared base, task arithmetic, TIES (per-tensor or
global top-k), DARE (seeded drop and rescale), magnitude and random pruning
controls, and SA-Merging (Park, Lee, Sohn, ICML 2026; a reconstruction):
connectivity-saliency pruning of task vectors with a closed-form SynFlow
gradient for linear/ReLU stacks, and its rank-wise LoRA variant. No function
looks at task data. ``mvlearn_ext.deep.merging`` takes torch state dicts
and modules (``nn.Module``) and returns the same types.
"""

from mvlearn_ext.merging._baselines import (
    apply_task_vector,
    dare,
    dare_ties,
    magnitude_merge,
    random_mask_merge,
    task_arithmetic,
    task_vectors,
    ties,
)
from mvlearn_ext.merging._saliency import (
    lora_factor_grads,
    sa_keep_counts,
    sa_merge,
    sa_merge_lora,
    synflow_grad_mlp,
    synflow_score_mlp,
)

__all__ = [
    "apply_task_vector",
    "dare",
    "dare_ties",
    "lora_factor_grads",
    "magnitude_merge",
    "random_mask_merge",
    "sa_keep_counts",
    "sa_merge",
    "sa_merge_lora",
    "synflow_grad_mlp",
    "synflow_score_mlp",
    "task_arithmetic",
    "task_vectors",
    "ties",
]
