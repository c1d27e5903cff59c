"""Every anchor-graph clusterer works in a Pipeline and a GridSearchCV."""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score, make_scorer
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mvlearn_ext.cluster import DRMC, HAGMVC, LMVSC, SMVSC
from mvlearn_ext.compose import MultiViewAdapter
from mvlearn_ext.datasets import make_multiview_blobs


@pytest.mark.parametrize(
    "estimator",
    [
        HAGMVC(n_anchors=30, random_state=0),
        DRMC(n_anchors=30, random_state=0),
        LMVSC(n_anchors=20, n_init=2, random_state=0),
        SMVSC(random_state=0),
    ],
    ids=lambda est: type(est).__name__,
)
def test_grid_search_picks_the_true_number_of_clusters(estimator):
    Xs, y = make_multiview_blobs(
        240, n_views=2, n_features=[5, 4], n_clusters=3, cluster_std=0.5, random_state=1
    )
    X = np.hstack(Xs)
    pipe = make_pipeline(StandardScaler(), MultiViewAdapter(estimator, view_sizes=[5, 4]))
    search = GridSearchCV(
        pipe,
        {"multiviewadapter__estimator__n_clusters": [2, 3, 5]},
        scoring=make_scorer(adjusted_rand_score),
        cv=KFold(3, shuffle=True, random_state=0),
    )
    search.fit(X, y)
    assert search.best_params_ == {"multiviewadapter__estimator__n_clusters": 3}
    assert search.best_score_ > 0.95
    labels = search.best_estimator_.predict(X)
    assert adjusted_rand_score(y, labels) > 0.95
