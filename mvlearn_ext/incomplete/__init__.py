"""Incomplete multi-view learning: missing-view patterns and masking rules (NumPy).

The framework-free parts of CIMLN (causal-invariant meta-learning for
unbalanced incomplete multi-view clustering, ICML 2026):

:func:`make_unbalanced_mask`, :func:`view_miss_probabilities`
    The unbalanced missing-view protocol of the authors' code.
:func:`counterfactual_view_probs`, :func:`counterfactual_mask`
    Counterfactual observation patterns that mask the low-missing-rate
    views (the paper's rule; the authors' code's uniform rule as ``mode="uniform"``).
:func:`make_rate_mask`, :func:`make_unbalanced_views`
    Per-view observation rates, and a test bed whose label signal sits in
    the poorly observed view.
:func:`context_statistic`
    The context vector that conditions the meta-generator.
:func:`mask_views`, :func:`mask_from_nan`, :func:`mean_impute`
    Conversions between masks and NaN rows; the mean-imputation baseline.

:class:`CIMLN`
    The estimator (needs torch, imported when ``CIMLN`` is first used).
"""

from mvlearn_ext.incomplete._masks import (
    context_statistic,
    counterfactual_mask,
    counterfactual_view_probs,
    make_unbalanced_mask,
    mask_from_nan,
    mask_views,
    mean_impute,
    view_miss_probabilities,
)
from mvlearn_ext.incomplete._synthetic import make_rate_mask, make_unbalanced_views
from mvlearn_ext.utils._optional import import_optional

__all__ = [
    "CIMLN",
    "context_statistic",
    "counterfactual_mask",
    "counterfactual_view_probs",
    "make_rate_mask",
    "make_unbalanced_mask",
    "make_unbalanced_views",
    "mask_from_nan",
    "mask_views",
    "mean_impute",
    "view_miss_probabilities",
]


#: The estimator that needs torch: imported on each use (never bound here), so
#: that importing the family never imports torch.
_TORCH_NAMES = frozenset({"CIMLN"})


def __getattr__(name):
    if name in _TORCH_NAMES:
        import_optional("torch", feature=f"mvlearn_ext.incomplete.{name}")
        from mvlearn_ext.incomplete import _cimln

        return getattr(_cimln, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
