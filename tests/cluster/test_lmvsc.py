"""LMVSC: contract, oracles of its graph step, invariances, and the Handwritten data."""

import time

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from mvlearn_ext.cluster import LMVSC
from mvlearn_ext.datasets import load_handwritten, make_multiview_blobs
from mvlearn_ext.metrics import clustering_accuracy, normalized_mutual_info
from mvlearn_ext.utils.estimator_checks import check_multiview_estimator


@pytest.fixture(scope="module")
def blobs():
    return make_multiview_blobs(
        150, n_views=3, n_features=[5, 3, 4], n_clusters=3, cluster_std=1.0, random_state=0
    )


def test_multiview_contract():
    check_multiview_estimator(LMVSC(n_anchors=15, n_init=2))


def test_separated_blobs_are_recovered(blobs):
    Xs, y = blobs
    model = LMVSC(n_clusters=3, n_anchors=20, random_state=0).fit(Xs)
    assert clustering_accuracy(y, model.labels_) == 1.0
    assert model.n_views_ == 3 and model.n_features_per_view_ == (5, 3, 4)
    assert model.n_anchors_ == 20 and model.embedding_.shape == (150, 3)
    assert [A.shape for A in model.anchors_] == [(20, 5), (20, 3), (20, 4)]
    np.testing.assert_allclose(model.view_weights_, np.full(3, 1 / 3))
    for Z in model.anchor_graph_:
        assert Z.shape == (20, 150) and Z.min() >= 0
        np.testing.assert_allclose(Z.sum(axis=0), 1.0, atol=1e-12)
    # predict reproduces the training labels and labels new samples of the blobs.
    np.testing.assert_array_equal(model.predict(Xs), model.labels_)
    np.testing.assert_allclose(model.transform(Xs), model.embedding_, atol=1e-6)


def test_predict_labels_held_out_samples():
    Xs, y = make_multiview_blobs(200, n_views=2, n_features=[4, 3], n_clusters=3, random_state=3)
    model = LMVSC(n_clusters=3, n_anchors=20, random_state=0).fit([X[:150] for X in Xs])
    assert clustering_accuracy(y[:150], model.labels_) == 1.0
    predicted = model.predict([X[150:] for X in Xs])
    # The held-out labels match the training clusters, not just some partition.
    mapping = {c: np.bincount(model.labels_[y[:150] == c]).argmax() for c in range(3)}
    np.testing.assert_array_equal(predicted, [mapping[c] for c in y[150:]])


def test_graph_columns_solve_their_qp_and_objective_is_exact(blobs):
    Xs, _ = blobs
    alpha = 0.5
    model = LMVSC(n_clusters=3, n_anchors=10, reg_lambda=alpha, tol=1e-10, max_iter=5000)
    model.fit(Xs)
    for v, (X, A, Z) in enumerate(zip(Xs, model.anchors_, model.anchor_graph_, strict=True)):
        Xv = (X - model.view_means_[v]) / model.view_scales_[v]
        # KKT of min ||x - A^T z||^2 + alpha ||z||^2 on the simplex.
        G = A @ (A.T @ Z - Xv.T) + alpha * Z
        for i in range(Z.shape[1]):
            support = Z[:, i] > 1e-8
            spread = G[support, i].max() - G[:, i].min()
            assert spread <= 1e-6 * (1 + np.abs(G[:, i]).max())
        direct = np.sum((Xv - Z.T @ A) ** 2) + alpha * np.sum(Z**2)
        np.testing.assert_allclose(model.objective_[v], direct, rtol=1e-9)


def test_scaling_none_uses_raw_views(blobs):
    Xs, _ = blobs
    model = LMVSC(n_clusters=3, n_anchors=10, scaling=None, random_state=0).fit(Xs)
    assert model.view_means_ is None
    # Raw-space anchors lie among the raw samples' range.
    assert model.anchors_[0].min() >= Xs[0].min() and model.anchors_[0].max() <= Xs[0].max()


def test_invariant_to_the_order_of_the_views(blobs):
    Xs, _ = blobs
    noisy = [X + np.random.default_rng(1).normal(scale=3.0, size=X.shape) for X in Xs]
    params = dict(n_clusters=3, n_anchors=12, random_state=0)
    reference = LMVSC(**params).fit(noisy)
    permuted = LMVSC(**params).fit([noisy[2], noisy[0], noisy[1]])
    np.testing.assert_array_equal(permuted.labels_, reference.labels_)
    np.testing.assert_allclose(permuted.anchors_[0], reference.anchors_[2])


def test_equivariant_to_sample_permutations(blobs):
    Xs, _ = blobs
    perm = np.random.default_rng(2).permutation(len(Xs[0]))
    params = dict(n_clusters=3, n_anchors=12, random_state=0)
    labels = LMVSC(**params).fit_predict(Xs)
    permuted = LMVSC(**params).fit_predict([X[perm] for X in Xs])
    assert adjusted_rand_score(labels[perm], permuted) == 1.0


def test_anchors_are_capped_at_the_number_of_samples():
    Xs, y = make_multiview_blobs(12, n_views=2, n_features=3, n_clusters=2, random_state=0)
    model = LMVSC(n_clusters=2, n_anchors=50, random_state=0).fit(Xs)
    assert model.n_anchors_ == 12 and model.anchor_graph_[0].shape == (12, 12)


def test_fewer_anchor_columns_than_clusters_are_refused(blobs):
    """The embedding takes n_clusters singular vectors of the n_views * m graph columns."""
    Xs, _ = blobs
    with pytest.raises(ValueError, match=r"n_anchors=1 gives 3 views x 1 anchors = 3 columns"):
        LMVSC(n_clusters=4, n_anchors=1).fit(Xs)
    with pytest.raises(ValueError, match=r"n_anchors=1 .* fewer than n_clusters=4"):
        LMVSC(n_clusters=4, n_anchors=1, block_size=50).fit(Xs)
    assert LMVSC(n_clusters=3, n_anchors=1, random_state=0).fit(Xs).n_anchors_ == 1


def test_one_view_is_refused():
    Xs, _ = make_multiview_blobs(30, n_views=1, random_state=0)
    with pytest.raises(ValueError, match="1 view but at least 2"):
        LMVSC(n_clusters=3).fit(Xs)


def test_verbose_reports_progress(blobs, capsys):
    LMVSC(n_clusters=3, n_anchors=10, n_init=1, verbose=1, random_state=0).fit(blobs[0])
    err = capsys.readouterr().err
    assert "[LMVSC] view 2" in err and "k-means done" in err


def test_handwritten_accuracy():
    # All six views, features z-scored, m = 50, reg_lambda = 1.
    # The paper reports ACC 0.820 and NMI 0.875 on these data; the floors sit well
    # below, to catch a broken fit only (chance is ACC 0.1).
    Xs, y = load_handwritten()
    start = time.perf_counter()
    model = LMVSC(n_clusters=10, n_anchors=50, reg_lambda=1.0, n_init=1, random_state=0).fit(Xs)
    elapsed = time.perf_counter() - start
    acc = clustering_accuracy(y, model.labels_)
    nmi = normalized_mutual_info(y, model.labels_)
    print(f"LMVSC Handwritten: ACC {acc:.3f} NMI {nmi:.3f} in {elapsed:.1f} s")
    assert acc > 0.7
    assert nmi > 0.75
