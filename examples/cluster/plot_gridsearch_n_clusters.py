"""
Choosing the number of clusters with a grid search
===================================================

scikit-learn's model selection passes one array, so a multi-view clusterer is
wrapped in :class:`~mvlearn_ext.compose.MultiViewAdapter`, which splits the
columns into views and delegates. :class:`~sklearn.model_selection.GridSearchCV`
then tries every ``n_clusters`` without labels, scored by the silhouette of
the held-out fold's predicted clusters. A second, stability criterion fits the
model on two random halves and measures how much their predictions on all
samples agree (adjusted Rand index): the true number of clusters is the one
that different samples of the data reproduce.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import adjusted_rand_score, silhouette_score
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mvlearn_ext.cluster import HAGMVC
from mvlearn_ext.compose import MultiViewAdapter
from mvlearn_ext.datasets import make_multiview_blobs

Xs, y = make_multiview_blobs(
    600, n_views=3, n_features=[6, 5, 4], n_clusters=4, cluster_std=2.0, random_state=0
)
X = np.hstack(Xs)
view_sizes = [X_v.shape[1] for X_v in Xs]


def silhouette(estimator, X, y=None):
    """Silhouette of the predicted clusters, on the standardised features."""
    labels = estimator.predict(X)
    if len(np.unique(labels)) < 2:
        return -1.0
    return silhouette_score(estimator[0].transform(X), labels)


pipe = make_pipeline(
    StandardScaler(), MultiViewAdapter(HAGMVC(random_state=0), view_sizes=view_sizes)
)
candidates = list(range(2, 8))
search = GridSearchCV(
    pipe,
    {"multiviewadapter__estimator__n_clusters": candidates},
    scoring=silhouette,
    cv=KFold(3, shuffle=True, random_state=0),
)
search.fit(X)
best_k = search.best_params_["multiviewadapter__estimator__n_clusters"]
print(f"silhouette picks n_clusters = {best_k}")

# %%
# Stability: three pairs of random halves per candidate.
rng = np.random.default_rng(0)
stability = []
for k in candidates:
    scores = []
    for _ in range(3):
        order = rng.permutation(len(X))
        halves = order[: len(X) // 2], order[len(X) // 2 :]
        labels = [
            MultiViewAdapter(HAGMVC(n_clusters=k, random_state=0), view_sizes=view_sizes)
            .fit(X[half])
            .predict(X)
            for half in halves
        ]
        scores.append(adjusted_rand_score(*labels))
    stability.append(np.mean(scores))
stable_k = candidates[int(np.argmax(stability))]
print(f"stability picks n_clusters = {stable_k} (the data have {len(np.unique(y))} clusters)")

# %%
# Both criteria peak at the true number of clusters.
cv = search.cv_results_
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.errorbar(
    candidates, cv["mean_test_score"], yerr=cv["std_test_score"], marker="o",
    capsize=3, label="silhouette (held-out folds)",
)  # fmt: skip
ax.plot(candidates, stability, marker="s", label="stability (ARI between halves)")
ax.axvline(len(np.unique(y)), color="grey", linestyle=":", label="true number")
ax.set_xlabel("n_clusters")
ax.set_ylabel("score")
ax.set_title("HAGMVC: choosing n_clusters without labels")
ax.legend(loc="upper right", fontsize=8)
fig.tight_layout()
plt.show()
