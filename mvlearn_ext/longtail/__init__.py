"""Long-tailed recognition: AES pieces (a reconstruction) and standard anchors, in NumPy.

AES (Adaptive Residual Supervision, entropy-aware PCGrad, sample-level
conflict-arbitrated fusion) is reconstructed from the public code of
``wangff0101/evo_longtail`` (no AES paper or repository was available), with
its defects fixed: the fusion never reads labels at inference, and the
"PCGrad" mode really projects conflicting gradients. Also: logit-adjusted CE,
Balanced Softmax, long-tail splits and many/medium/few metrics. The torch
loss, combiner and estimator are in ``mvlearn_ext.deep.longtail``.
"""

from mvlearn_ext.longtail._combine import (
    combine_gradients,
    entropy_task_weights,
    gradient_entropy,
    pcgrad_project,
)
from mvlearn_ext.longtail._fusion import ConflictArbitratedFusion
from mvlearn_ext.longtail._losses import (
    ars_class_weights,
    ars_static_terms,
    balanced_softmax_loss,
    logit_adjusted_loss,
    softmax_cross_entropy,
)
from mvlearn_ext.longtail._splits import (
    class_groups,
    group_accuracy,
    long_tail_counts,
    make_long_tail_indices,
)

__all__ = [
    "ConflictArbitratedFusion",
    "ars_class_weights",
    "ars_static_terms",
    "balanced_softmax_loss",
    "class_groups",
    "combine_gradients",
    "entropy_task_weights",
    "gradient_entropy",
    "group_accuracy",
    "logit_adjusted_loss",
    "long_tail_counts",
    "make_long_tail_indices",
    "pcgrad_project",
    "softmax_cross_entropy",
]
