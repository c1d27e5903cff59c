"""Label-free view quality (one-factor rule) and the small-sample graph of HAGMVC and DRMC."""

import numpy as np
import pytest

from mvlearn_ext.cluster import DRMC, HAGMVC
from mvlearn_ext.cluster._view_weights import factor_quality, fit_view_weights
from mvlearn_ext.datasets import make_multiview_blobs
from mvlearn_ext.metrics import clustering_accuracy


def _strong_and_weak(n=400, copies=0, seed=0):
    """View 0 separates 4 clusters; in views 1 and 2 half the rows sit in a random cluster."""
    Xs, y = make_multiview_blobs(
        n,
        n_views=3,
        n_features=[4, 30, 30],
        n_clusters=4,
        cluster_std=[1.5, 3.0, 3.0],
        noise=[0.0, 0.5, 0.5],
        random_state=seed,
    )
    rng = np.random.default_rng(seed)
    for _ in range(copies):
        Xs.append(Xs[2] + 0.05 * Xs[2].std(axis=0) * rng.standard_normal(Xs[2].shape))
    return Xs, y


def test_factor_quality_recovers_a_product_of_qualities():
    q = np.array([0.9, 0.2, 0.5, 0.7])
    np.testing.assert_allclose(factor_quality(np.outer(q, q), np.ones((4, 4), bool)), q)
    # A pair left out (near copies) does not enter the fit; every view keeps two partners.
    S = np.outer(q, q)
    S[1, 2] = S[2, 1] = 1.0
    valid = np.ones((4, 4), bool)
    valid[1, 2] = valid[2, 1] = False
    np.testing.assert_allclose(factor_quality(S, valid), q)
    # Fewer than two partners: not identified.
    assert np.isnan(factor_quality(np.outer(q[:2], q[:2]), np.ones((2, 2), bool))).all()


def test_factor_rule_finds_the_informative_view():
    Xs, y = _strong_and_weak()
    alone = [
        clustering_accuracy(
            y,
            HAGMVC(
                4, random_state=0, view_weights=[1.0 if u == v else 0.0 for u in range(3)]
            ).fit_predict(Xs),
        )
        for v in range(3)
    ]
    assert alone[0] > 0.95 and max(alone[1:]) < 0.8  # the known view qualities
    factor = fit_view_weights(Xs, 4, rule="factor", random_state=0)
    reliability = fit_view_weights(Xs, 4, rule="reliability", random_state=0)
    assert factor.weights_[0] > 0.6
    assert factor.weights_[0] > reliability.weights_[0] + 0.2
    assert factor.reliability_[0] == 1.0


def test_factor_rule_does_not_count_near_copies_twice():
    Xs, _ = _strong_and_weak(copies=2)
    w = fit_view_weights(Xs, 4, rule="factor", random_state=0).weights_
    # The weak view and its two near copies share about one weak view's weight.
    single = fit_view_weights(Xs[:3], 4, rule="factor", random_state=0).weights_
    assert w[2:].sum() == pytest.approx(single[2], abs=0.05)
    assert w[0] > 0.6


def test_factor_rule_with_two_views_is_the_reliability_rule():
    Xs, _ = _strong_and_weak()
    a = fit_view_weights(Xs[:2], 4, rule="factor", random_state=0).weights_
    b = fit_view_weights(Xs[:2], 4, rule="reliability", random_state=0).weights_
    np.testing.assert_array_equal(a, b)


def test_bad_rule_and_tolerance_raise():
    Xs, _ = _strong_and_weak(n=60)
    with pytest.raises(ValueError, match="rule must be"):
        fit_view_weights(Xs, 4, rule="max")
    with pytest.raises(ValueError, match="tolerance must be in"):
        fit_view_weights(Xs, 4, rule="factor", tolerance=0.0)


def test_default_weights_move_toward_the_informative_view():
    Xs, y = _strong_and_weak()
    model = HAGMVC(4, random_state=0).fit(Xs)
    weights = np.atleast_2d(model.view_weights_)[0]
    assert weights[0] > 0.6
    assert clustering_accuracy(y, model.labels_) > 0.95
    old = HAGMVC(4, random_state=0, view_weights="auto").fit(Xs)
    assert np.atleast_2d(old.view_weights_)[0][0] < weights[0]


def test_small_sample_graph_uses_every_sample_as_an_anchor():
    Xs, y = make_multiview_blobs(100, n_views=2, n_clusters=10, random_state=0)
    # 2 * n_neighbors * k = 200 anchors wanted, the budget rule gives n // 2 = 50
    assert HAGMVC(10, random_state=0).fit(Xs).n_anchors_ == (100,)
    assert HAGMVC(10, random_state=0, small_sample_graph=False).fit(Xs).n_anchors_ == (50,)
    assert HAGMVC(10, n_anchors=30, random_state=0).fit(Xs).n_anchors_ == (30,)
    # DRMC: ceil(n / 5) = 20 < 2 * 5 * k = 100; the graph of the samples
    # links each to 10 neighbours, the anchor graph to 5, every column of Z has as
    # many nonzeros and predict links new samples to as many anchors.
    cases = [
        ({}, 100, 10),
        ({"small_sample_graph": False}, 20, 5),
        ({"n_neighbors": 7}, 100, 7),
        ({"n_anchors": 100}, 100, 10),
    ]
    for params, m, nn in cases:
        model = DRMC(10, random_state=0, **params).fit(Xs)
        assert (model.n_anchors_, model.n_neighbors_) == (m, nn)
        assert set(np.diff(model.anchor_graph_.tocsc().indptr)) == {nn}
        np.testing.assert_array_equal(model.predict(Xs), model.labels_)
    # Large enough for the rule: unchanged.
    Xs, _ = make_multiview_blobs(600, n_views=2, n_clusters=3, random_state=0)
    assert HAGMVC(3, random_state=0).fit(Xs).n_anchors_ == (225,)


def test_factor_quality_recovers_the_qualities_of_an_exact_one_factor_model():
    q = np.array([0.9, 0.3, 0.4])
    got = factor_quality(np.outer(q, q), np.ones((3, 3), dtype=bool))
    np.testing.assert_allclose(got, q, atol=1e-6)
