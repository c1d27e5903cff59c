"""Composition: multi-view estimators in single-array pipelines.

:class:`ViewSplitter` splits the columns of one array into a list of views,
as a pipeline step; :class:`MultiViewAdapter` wraps a multi-view estimator so
that it takes one array, splits it and delegates, which makes it an ordinary
scikit-learn estimator (``Pipeline``, ``GridSearchCV``, ``cross_val_score``).
"""

from mvlearn_ext.compose._adapter import MultiViewAdapter
from mvlearn_ext.compose._split import ViewSplitter

__all__ = ["MultiViewAdapter", "ViewSplitter"]
