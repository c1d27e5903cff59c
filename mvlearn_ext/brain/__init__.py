"""Brain-network analysis: PhenoBrain's routing kernel and regulariser (NumPy).

The framework-free parts of PhenoBrain (phenotype-conditioned long-range
routing for connectome classification, ICML 2026; a **reconstruction** from
the abstract, the paper was not available):

:func:`normalize_connectome`
    ``A_hat = D^{-1/2} max(A, 0) D^{-1/2}`` (or the random-walk form), with
    optional top-k sparsification.
:func:`hop_powers`, :func:`routing_kernel`, :func:`heat_kernel`
    The multi-hop communication kernel ``K = sum_h alpha_h A_hat^h`` (hop
    weights ``alpha`` from the phenotype in the model) and the heat-kernel
    alternative.
:func:`row_normalize`, :func:`attention_prior_kl`
    The kernel as a prior for ROI attention, and the KL regulariser.
:func:`make_phenotype_connectomes`
    Synthetic connectomes on which the meaning of a 2-hop path depends on
    the phenotype; :func:`make_routed_connectomes`, where a categorical
    phenotype picks one of many 2-hop routes.

:class:`PhenoBrainClassifier`
    The model (needs torch, imported when it is first used).
"""

from mvlearn_ext.brain._kernel import (
    attention_prior_kl,
    heat_kernel,
    hop_powers,
    normalize_connectome,
    routing_kernel,
    row_normalize,
)
from mvlearn_ext.brain._synthetic import make_phenotype_connectomes, make_routed_connectomes
from mvlearn_ext.utils._optional import import_optional

__all__ = [
    "PhenoBrainClassifier",
    "attention_prior_kl",
    "heat_kernel",
    "hop_powers",
    "make_phenotype_connectomes",
    "make_routed_connectomes",
    "normalize_connectome",
    "routing_kernel",
    "row_normalize",
]


#: The estimator that needs torch: imported on each use (never bound here), so
#: that importing the family never imports torch.
_TORCH_NAMES = frozenset({"PhenoBrainClassifier"})


def __getattr__(name):
    if name in _TORCH_NAMES:
        import_optional("torch", feature=f"mvlearn_ext.brain.{name}")
        from mvlearn_ext.brain import _phenobrain

        return getattr(_phenobrain, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
