"""Evaluation metrics.

Clustering (external: against known classes)

:func:`clustering_accuracy`
    Accuracy under the best one-to-one matching of clusters to classes
    (Hungarian algorithm).
:func:`purity`
    Fraction of samples in the majority class of their cluster.
:func:`normalized_mutual_info`
    NMI with the normalisation stated (arithmetic, geometric/sqrt, max, min).
:func:`clustering_report`
    ACC, NMI (arithmetic and max), ARI and purity at once.
:func:`contingency_table`
    Class-by-cluster counts.

Scorers for :class:`~sklearn.model_selection.GridSearchCV` and friends
(they call the estimator's ``predict``): :data:`clustering_accuracy_scorer`,
:data:`purity_scorer`, :data:`nmi_max_scorer`. scikit-learn's own
``"normalized_mutual_info_score"`` and ``"adjusted_rand_score"`` scorer names
cover the arithmetic NMI and the ARI.
"""

from sklearn.metrics import make_scorer as _make_scorer

from mvlearn_ext.metrics._clustering import (
    clustering_accuracy,
    clustering_report,
    contingency_table,
    normalized_mutual_info,
    purity,
)

#: Scorer for :func:`clustering_accuracy` (greater is better).
clustering_accuracy_scorer = _make_scorer(clustering_accuracy)
#: Scorer for :func:`purity` (greater is better).
purity_scorer = _make_scorer(purity)
#: Scorer for :func:`normalized_mutual_info` with ``average_method="max"``.
nmi_max_scorer = _make_scorer(normalized_mutual_info, average_method="max")

__all__ = [
    "clustering_accuracy",
    "clustering_accuracy_scorer",
    "clustering_report",
    "contingency_table",
    "nmi_max_scorer",
    "normalized_mutual_info",
    "purity",
    "purity_scorer",
]
