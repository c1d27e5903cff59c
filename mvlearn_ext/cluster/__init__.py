"""Multi-view clustering: the ICML 2026 methods and their baselines.

Every clusterer here takes a list of views ``Xs`` (see
:func:`mvlearn_ext.utils.validate_views`) and follows scikit-learn's
clustering API: ``fit(Xs)``, ``labels_``, ``fit_predict(Xs)`` and, where the
method can assign new samples, ``predict(Xs)``.

* :class:`HAGMVC` and :class:`DRMC` are reconstructions of two ICML 2026
  methods known only from their abstracts (see their docstrings).
* :class:`LMVSC`, :class:`SMVSC`, :class:`FPMVSCAG` and :class:`EOMSCCA` are
  the anchor-graph baselines; SMVSC, FPMVSCAG and EOMSCCA reproduce their
  authors' code by default.
* :class:`ConcatKMeans` and :class:`ConcatSpectral` are k-means and
  k-nearest-neighbour spectral clustering on the concatenated views,
  z-scored or per-view balanced.
"""

from mvlearn_ext.cluster._concat import ConcatKMeans, ConcatSpectral
from mvlearn_ext.cluster._drmc import DRMC
from mvlearn_ext.cluster._eomsc import EOMSCCA
from mvlearn_ext.cluster._hagmvc import HAGMVC
from mvlearn_ext.cluster._lmvsc import LMVSC
from mvlearn_ext.cluster._smvsc import FPMVSCAG, SMVSC

__all__ = [
    "DRMC",
    "EOMSCCA",
    "FPMVSCAG",
    "HAGMVC",
    "LMVSC",
    "SMVSC",
    "ConcatKMeans",
    "ConcatSpectral",
]
