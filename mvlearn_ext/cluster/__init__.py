"""Multi-view clustering: the ICML 2026 methods and their baselines.

Every clusterer here takes a list of views ``Xs`` (see
:func:`mvlearn_ext.utils.validate_views`) and follows scikit-learn's
clustering API: ``fit(Xs)``, ``labels_``, ``fit_predict(Xs)`` and, where the
method can assign new samples, ``predict(Xs)``.
"""

from mvlearn_ext.cluster._concat import ConcatKMeans

__all__ = ["ConcatKMeans"]
