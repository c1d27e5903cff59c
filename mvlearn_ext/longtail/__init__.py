"""Long-tailed recognition: AES pieces (a reconstruction) and standard anchors, in NumPy.

AES (Adaptive Residual Supervision, entropy-aware PCGrad, sample-level
conflict-arbitrated fusion) is reconstructed from the public code of
``wangff0101/evo_longtail`` (no AES paper or repository was available), with
its defects fixed: the fusion never reads labels at inference, and the
"PCGrad" mode really projects conflicting gradients. Also: logit-adjusted CE,
Balanced Softmax, long-tail splits and many/medium/few metrics. The torch
losses, combiner, fusion module and estimator (:class:`AESClassifier`) are imported
with torch when first used.
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
from mvlearn_ext.utils._optional import import_optional

__all__ = [
    "AESClassifier",
    "ARSLoss",
    "BalancedSoftmaxLoss",
    "ConflictArbitratedFusion",
    "EntropyPCGrad",
    "FusionModule",
    "LogitAdjustedLoss",
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


#: The torch modules and estimator: imported on each use (never bound here), so
#: that importing the family never imports torch.
_TORCH_NAMES = frozenset(
    {
        "AESClassifier",
        "ARSLoss",
        "BalancedSoftmaxLoss",
        "EntropyPCGrad",
        "FusionModule",
        "LogitAdjustedLoss",
    }
)


def __getattr__(name):
    if name in _TORCH_NAMES:
        import_optional("torch", feature=f"mvlearn_ext.longtail.{name}")
        from mvlearn_ext.longtail import _aes

        return getattr(_aes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
