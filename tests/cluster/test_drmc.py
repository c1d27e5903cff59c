"""DRMC (reconstruction): recovery, view weights, discrete feedback, oracles, contract."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score
from sklearn.utils._param_validation import InvalidParameterError

from mvlearn_ext.cluster import DRMC
from mvlearn_ext.cluster._common import (
    DEGREE_REG,
    regularised_projection_from_gram,
    spectral_rotation,
)
from mvlearn_ext.cluster._drmc_graphs import (
    _align_views,
    _anchor_graphs,
    _kmeans_anchors,
    _knn_rows,
    _partition_candidates,
)
from mvlearn_ext.cluster._drmc_solver import (
    _agreement_weights,
    _feedback,
    _feedback_value,
    _match_labels,
    _partition_agreement,
    _view_redundancy,
)
from mvlearn_ext.cluster._view_weights import fit_view_weights
from mvlearn_ext.datasets import load_handwritten, make_multiview_blobs
from mvlearn_ext.metrics import clustering_accuracy, normalized_mutual_info
from mvlearn_ext.utils import anchor_graph
from mvlearn_ext.utils._threads import row_tiles
from mvlearn_ext.utils.estimator_checks import check_multiview_estimator


def blobs(n=150, k=3, std=1.0, seed=0, n_views=3, noise=0.0):
    return make_multiview_blobs(
        n,
        n_views=n_views,
        n_features=[5, 3, 4][:n_views] if n_views <= 3 else 4,
        n_clusters=k,
        cluster_std=std,
        noise=noise,
        random_state=seed,
    )


def hard_blobs(seed=0):
    """Overlapping clusters and one noisy view."""
    return make_multiview_blobs(
        120,
        n_views=3,
        n_features=[4, 3, 5],
        n_clusters=4,
        cluster_std=[3.0, 3.5, 4.0],
        noise=[0.0, 0.2, 0.4],
        random_state=seed,
    )


def with_noise_view(width, seed=0):
    """Two informative views (10 and 6 features) and one pure-noise view of ``width``."""
    return make_multiview_blobs(
        400,
        n_views=3,
        n_features=[10, 6, width],
        n_clusters=4,
        cluster_std=[4.0, 3.0, 1.0],
        informative=[1.0, 1.0, 0.0],
        random_state=seed,
    )


@pytest.mark.parametrize("align_anchors", [False, True])
def test_separated_blobs_are_recovered_exactly(align_anchors):
    Xs, y = blobs(seed=1)
    model = DRMC(n_clusters=3, align_anchors=align_anchors, random_state=0).fit(Xs)
    assert clustering_accuracy(y, model.labels_) == 1.0
    assert model.labels_.shape == (150,) and model.labels_.dtype.kind == "i"
    m = model.n_anchors_
    assert m == 150 // 5  # one anchor per 5 samples (below the cap of 40 per cluster)
    assert model.anchor_graph_.shape == (m, 150) and sp.issparse(model.anchor_graph_)
    np.testing.assert_allclose(np.asarray(model.anchor_graph_.sum(axis=0)).ravel(), 1.0)
    assert model.embedding_.shape == model.indicator_.shape == (150, 3)
    np.testing.assert_allclose(model.embedding_.T @ model.embedding_, np.eye(3), atol=1e-10)
    np.testing.assert_allclose(model.rotation_ @ model.rotation_.T, np.eye(3), atol=1e-10)
    assert [A.shape for A in model.anchors_] == [(m, 5), (m, 3), (m, 4)]
    assert model.view_weights_.shape == (3,) and model.view_weights_.sum() == pytest.approx(1)


def test_labels_come_from_the_rotated_embedding():
    Xs, _ = hard_blobs()
    model = DRMC(n_clusters=4, random_state=0).fit(Xs)
    np.testing.assert_array_equal(np.argmax(model.indicator_, axis=1), model.labels_)
    counts = np.bincount(model.labels_, minlength=4)
    np.testing.assert_allclose(model.indicator_.max(axis=0), 1.0 / np.sqrt(counts))
    # The rotation is the Procrustes solution for the final labels' clusters
    # up to its own alternation: F R scores the assigned cluster highest for most rows.
    G = model.embedding_ @ model.rotation_
    assert np.mean(np.argmax(G, axis=1) == model.labels_) > 0.9


# --------------------------------------------------------------------------- view weights


@pytest.mark.parametrize("width", [3, 10, 50])
def test_a_pure_noise_view_gets_a_small_weight_whatever_its_width(width):
    Xs, y = with_noise_view(width)
    model = DRMC(n_clusters=4, random_state=0).fit(Xs)
    assert model.view_weights_[2] < 0.1
    assert model.view_agreement_[2] < 0.05 < min(model.view_agreement_[:2])
    assert clustering_accuracy(y, model.labels_) > 0.9


def test_an_informative_narrow_view_is_not_over_weighted():
    # A 2-feature view that sees the clusters through heavy noise next to a
    # clean 10-feature view: the narrow view must weigh less, not more.
    Xs, y = make_multiview_blobs(
        400,
        n_views=2,
        n_features=[10, 2],
        n_clusters=4,
        cluster_std=[2.0, 6.0],
        random_state=1,
    )
    model = DRMC(n_clusters=4, random_state=0).fit(Xs)
    assert model.view_weights_[1] < model.view_weights_[0]
    assert clustering_accuracy(y, model.labels_) > 0.95


def test_permuting_the_views_permutes_the_weights():
    Xs, _ = with_noise_view(10, seed=2)
    order = [2, 0, 1]
    a = DRMC(n_clusters=4, random_state=3).fit(Xs)
    b = DRMC(n_clusters=4, random_state=3).fit([Xs[i] for i in order])
    assert adjusted_rand_score(a.labels_, b.labels_) == 1.0
    np.testing.assert_allclose(b.view_weights_, a.view_weights_[order], atol=1e-10)


def test_duplicating_an_informative_view_does_not_change_the_partition():
    Xs, _ = with_noise_view(10, seed=3)
    a = DRMC(n_clusters=4, random_state=0).fit(Xs)
    b = DRMC(n_clusters=4, random_state=0).fit([Xs[0], Xs[1], Xs[2], Xs[1]])
    assert adjusted_rand_score(a.labels_, b.labels_) == 1.0
    # The copies get equal weights and, together, about what the view had
    # alone (the agreement is divided by the redundancy of the view; without
    # it the two copies would weigh about 2/3 here, not 1/2).
    assert b.view_weights_[1] == pytest.approx(b.view_weights_[3])
    assert b.view_weights_[1] + b.view_weights_[3] == pytest.approx(a.view_weights_[1], abs=0.03)


@pytest.mark.parametrize("align_anchors", [False, True])
def test_duplicating_a_single_view_changes_nothing(align_anchors):
    Xs, _ = hard_blobs(seed=8)
    X = Xs[2]
    one = DRMC(n_clusters=4, align_anchors=align_anchors, random_state=0).fit([X])
    two = DRMC(n_clusters=4, align_anchors=align_anchors, random_state=0).fit([X, X])
    assert adjusted_rand_score(one.labels_, two.labels_) == 1.0
    np.testing.assert_allclose(two.view_weights_, 0.5)


def test_zscore_scaling_makes_the_result_invariant_to_units():
    Xs, _ = hard_blobs(seed=10)
    a = DRMC(n_clusters=4, random_state=0).fit(Xs)
    b = DRMC(n_clusters=4, random_state=0).fit([Xs[0] * 1e3, Xs[1] - 50.0, Xs[2] * 1e-2])
    assert adjusted_rand_score(a.labels_, b.labels_) == 1.0
    np.testing.assert_allclose(a.view_weights_, b.view_weights_, atol=1e-8)
    raw = DRMC(n_clusters=4, scaling=None, random_state=0).fit(Xs)
    assert raw.view_means_ is None and raw.labels_.shape == a.labels_.shape


# --------------------------------------------------------------------------- discrete feedback


def test_the_feedback_changes_the_labels_and_recovers_the_informative_view():
    # One informative view and two narrow noise views: the sqrt(d_v) start of
    # "agreement" gives the noise much of the distance, the feedback removes it.
    gains = []
    for seed in range(3):
        Xs, y = make_multiview_blobs(
            600,
            n_views=3,
            n_features=[10, 3, 3],
            n_clusters=4,
            cluster_std=[6.0, 1.0, 1.0],
            informative=[1.0, 0.0, 0.0],
            random_state=seed,
        )
        model = DRMC(n_clusters=4, view_weights="agreement", random_state=seed).fit(Xs)
        off = DRMC(n_clusters=4, view_weights="agreement", max_iter=0, random_state=seed)
        off.fit(Xs)
        np.testing.assert_array_equal(off.labels_, model.initial_labels_)
        assert model.n_labels_changed_ > 0 and model.n_iter_ >= 1
        assert model.view_weights_[0] > 0.9
        gains.append(clustering_accuracy(y, model.labels_) - clustering_accuracy(y, off.labels_))
    assert np.mean(gains) > 0.1 and min(gains) > 0


def test_feedback_stops_when_labels_settle_and_weights_are_consistent():
    Xs, _ = with_noise_view(3, seed=5)
    model = DRMC(n_clusters=4, random_state=0).fit(Xs)
    assert model.n_iter_ < 20
    assert len(model.view_weights_history_) >= 2
    # The weights of the kept partition's graph are among the weights of the graphs built.
    assert any(np.array_equal(w, model.view_weights_) for w in model.view_weights_history_)


def _block_graph(labels, k, m_per=4, seed=0):
    """An anchor graph (m x n) whose connected components are the clusters of ``labels``."""
    n = labels.size
    cols = labels * m_per + np.random.default_rng(seed).integers(0, m_per, size=n)
    return sp.csr_matrix((np.ones(n), (cols, np.arange(n))), shape=(k * m_per, n))


def _scripted_feedback(partitions, weights, view_graphs, redundancy, max_iter=20):
    """Run :func:`_feedback` with a ``build`` that returns ``partitions`` in turn."""
    calls = []

    def build(w, previous, rotate=True):
        calls.append((w.copy(), rotate))
        if not rotate:
            return None
        labels = partitions[min(sum(r for _, r in calls) - 1, len(partitions) - 1)]
        F = np.eye(2)[labels]
        return F, labels.copy(), np.eye(2)

    result = _feedback(
        build, weights, view_graphs=view_graphs, score_index=None, prior=weights,
        redundancy=redundancy, n_clusters=2, max_iter=max_iter, learn=True, verbose=0,
        start=0.0, header="",
    )  # fmt: skip
    return result, calls


def test_feedback_value_is_the_best_weighted_agreement():
    # sum_v max(a_v, 0)^2 / c_v is the square of max sum_v w_v a_v over w >= 0 with
    # sum_v c_v w_v^2 = 1, attained at the feedback's weights w ∝ max(a, 0) / c.
    rng = np.random.default_rng(0)
    a, c = np.array([0.6, -0.2, 0.3, 0.1]), np.array([1.0, 1.3, 2.0, 1.1])
    w = _agreement_weights(a / c, np.full(4, 0.25))
    w_best = w / np.sqrt(np.sum(c * w**2))
    assert a @ w_best == pytest.approx(np.sqrt(_feedback_value(a, c)), rel=1e-12)
    for _ in range(200):
        u = rng.random(4)
        assert a @ (u / np.sqrt(np.sum(c * u**2))) <= a @ w_best + 1e-12


def test_feedback_undoes_a_round_that_lowers_the_agreement():
    # Both views' graphs have the clusters of `truth` as components. The first graph
    # gives `truth`; the feedback's graph gives a worse partition, which is undone:
    # the partition, the weights and the graph of the first round are kept.
    truth = np.repeat([0, 1], 20)
    worse = truth.copy()
    worse[:6] = 1
    graphs = [_block_graph(truth, 2, seed=v) for v in range(2)]
    start = np.array([0.8, 0.2])
    result, calls = _scripted_feedback([truth, worse], start, graphs, np.ones(2))
    assert _feedback_value(result["scores"], np.ones(2)) == pytest.approx(2.0)
    np.testing.assert_array_equal(result["labels"], truth)
    np.testing.assert_array_equal(result["weights"], start)
    assert [r for _, r in calls] == [True, True, False]
    np.testing.assert_array_equal(calls[-1][0], start)  # the kept graph is rebuilt
    assert result["n_iter"] == 1 and len(result["weight_history"]) == 2


def test_an_undone_round_restores_the_graph_it_replaced():
    # 500 Handwritten samples, seed 1: the feedback's round is undone. In memory the
    # driver restores the kept graph; over two row blocks (no distance cache) it
    # builds it again. Both leave the graph of the kept weights: the same labels,
    # weights and anchor memberships (read from the final graph).
    Xs, _ = load_handwritten(return_Xs_y=True)
    rows = np.sort(np.random.default_rng(0).choice(2000, 500, replace=False))
    Xs = [np.asarray(X, dtype=np.float64)[rows] for X in Xs]
    memory = DRMC(n_clusters=10, random_state=1).fit(Xs)
    blocks = DRMC(n_clusters=10, random_state=1, block_size=250).fit(Xs)
    assert len(memory.view_weights_history_) == 2
    np.testing.assert_array_equal(memory.view_weights_, memory.view_weights_history_[0])
    np.testing.assert_array_equal(memory.labels_, blocks.labels_)
    np.testing.assert_array_equal(memory.view_weights_, blocks.view_weights_)
    np.testing.assert_allclose(memory.anchor_memberships_, blocks.anchor_memberships_, atol=1e-12)


def test_feedback_keeps_a_round_that_raises_the_agreement():
    truth = np.repeat([0, 1], 20)
    worse = truth.copy()
    worse[:6] = 1
    graphs = [_block_graph(truth, 2, seed=v) for v in range(2)]
    result, calls = _scripted_feedback([worse, truth], np.array([0.8, 0.2]), graphs, np.ones(2))
    np.testing.assert_array_equal(result["labels"], truth)
    np.testing.assert_array_equal(result["weights"], result["weight_history"][-1])
    assert all(rotate for _, rotate in calls)


@pytest.mark.parametrize(
    "params", [{"view_weights": "uniform"}, {"view_weights": "agreement", "max_iter": 0}]
)
def test_fixed_weights_run_no_feedback(params):
    # "uniform" weighs the views equally; max_iter=0 keeps the starting weights.
    Xs, _ = with_noise_view(10)
    model = DRMC(n_clusters=4, random_state=0, **params).fit(Xs)
    assert model.n_iter_ == 0 and model.view_agreement_ is None
    np.testing.assert_array_equal(model.labels_, model.initial_labels_)
    if params["view_weights"] == "uniform":
        np.testing.assert_allclose(model.view_weights_, 1.0 / 3.0)
    else:
        w = np.sqrt([10.0, 6.0, 10.0])
        np.testing.assert_allclose(model.view_weights_, w / w.sum())


def test_factor_weights_start_the_feedback():
    # "factor" starts from the label-free factor weights of fit_view_weights (the
    # seed of the starting weights is the first draw of random_state), which
    # max_iter=0 keeps; the feedback then runs from them.
    Xs, _ = with_noise_view(10)
    seed = np.random.RandomState(0).randint(np.iinfo(np.int32).max)
    expected = fit_view_weights(Xs, 4, rule="factor", random_state=seed).weights_
    fixed = DRMC(n_clusters=4, view_weights="factor", max_iter=0, random_state=0).fit(Xs)
    np.testing.assert_allclose(fixed.view_weights_, expected, rtol=1e-12)
    assert fixed.n_iter_ == 0 and fixed.view_agreement_ is None
    learned = DRMC(n_clusters=4, view_weights="factor", random_state=0).fit(Xs)
    np.testing.assert_allclose(learned.view_weights_history_[0], expected, rtol=1e-12)
    np.testing.assert_array_equal(learned.initial_labels_, fixed.labels_)
    assert learned.n_iter_ >= 1 and learned.view_weights_[2] < 0.1


def test_factor_with_two_views_starts_from_the_prior():
    # With two views the factor fit is not identified: the start is sqrt(d_v), as
    # for "agreement", and so is the whole fit.
    Xs, _ = with_noise_view(10)
    factor = DRMC(n_clusters=4, view_weights="factor", random_state=0).fit(Xs[:2])
    agreement = DRMC(n_clusters=4, random_state=0).fit(Xs[:2])
    np.testing.assert_array_equal(factor.labels_, agreement.labels_)
    np.testing.assert_array_equal(factor.view_weights_history_, agreement.view_weights_history_)


def test_partition_agreement_oracles():
    rng = np.random.default_rng(0)
    n, m, k = 300, 12, 3
    labels = np.repeat(np.arange(k), n // k)
    # A graph whose connected components are the clusters: agreement 1.
    cols = labels * (m // k) + rng.integers(0, m // k, size=n)
    block = sp.csr_matrix((np.ones(n), (cols, np.arange(n))), shape=(m, n))
    assert _partition_agreement(block, labels, k) == pytest.approx(1.0)
    # Any graph: the mean over random relabellings (same sizes) is 0 (exact formula).
    X = rng.normal(size=(n, 2))
    A = rng.normal(size=(m, 2))
    Z = anchor_graph(X, A, n_neighbors=4).T.tocsr()
    values = [_partition_agreement(Z, rng.permutation(labels), k) for _ in range(3000)]
    assert abs(np.mean(values)) < 4 * np.std(values) / np.sqrt(len(values))
    # Against the dense definition.
    S = Z.T.toarray() @ np.diag(1.0 / np.asarray(Z.sum(axis=1)).ravel()) @ Z.toarray()
    Y = np.eye(k)[labels] / np.sqrt(n // k)
    assoc = np.trace(Y.T @ S @ Y)
    e = k * np.trace(S) / n + (n - k) * (n - np.trace(S)) / (n * (n - 1))
    assert _partition_agreement(Z, labels, k) == pytest.approx((assoc - e) / (k - e), rel=1e-10)


def test_knn_rows_match_the_reference_anchor_graph():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 4))
    A = rng.normal(size=(20, 4))
    reference = anchor_graph(X, A, n_neighbors=5).toarray()
    D = ((X[:, None, :] - A[None]) ** 2).sum(axis=2)
    cols, weights = _knn_rows(D, 5)
    ours = np.zeros_like(reference)
    np.put_along_axis(ours, cols, weights, axis=1)
    np.testing.assert_allclose(ours, reference, atol=1e-10)
    joint, views = _anchor_graphs(
        [X[:, :2], X[:, 2:]], [A[:, :2], A[:, 2:]], [1.0, 1.0], per_view=True, n_neighbors=5
    )
    np.testing.assert_allclose(joint.T.toarray(), reference, atol=1e-10)
    view0 = anchor_graph(X[:, :2], A[:, :2], n_neighbors=5).toarray()
    np.testing.assert_allclose(views[0].T.toarray(), view0, atol=1e-10)


def test_knn_rows_with_tied_distances_follow_the_partition_rule():
    # Integer distances: ties inside the candidates and at their boundary.
    D = np.random.default_rng(3).integers(0, 4, size=(300, 12)).astype(np.float64)
    cand, dist = _partition_candidates(D, 5)
    last = dist[:, 5:6]
    gap = last - dist[:, :5]
    den = gap.sum(axis=1, keepdims=True)
    expected = np.where(den > 0, gap / np.where(den > 0, den, 1.0), 1.0 / 5)
    cols, weights = _knn_rows(D, 5)
    np.testing.assert_array_equal(cols, cand[:, :5])
    np.testing.assert_array_equal(weights, expected)


def test_redundancy_from_the_neighbourhoods_of_the_factor_scores():
    # fit_view_weights hands over its neighbour lists; on the same rows they are the
    # ones the redundancy scores would compute (a constant view has none to hand over).
    Xs, _ = make_multiview_blobs(300, n_views=3, n_features=5, n_clusters=3, random_state=0)
    rng = np.random.default_rng(0)
    Xs = [*Xs, Xs[0] + 0.05 * rng.normal(size=Xs[0].shape), np.ones((300, 2))]
    keep = {}
    fit_view_weights(Xs, 3, rule="factor", random_state=0, keep=keep)
    assert keep["neighbours"][-1] is None
    reused = _view_redundancy(Xs, 5, known=keep["neighbours"])
    np.testing.assert_array_equal(reused, _view_redundancy(Xs, 5))
    assert reused[0] > 1.5 and reused[3] > 1.5  # the near copy counts twice


def test_match_labels_ignores_renamings():
    labels = np.array([0, 0, 1, 1, 2, 2])
    renamed, _, changed = _match_labels(labels, np.array([2, 2, 0, 0, 1, 1]), 3)
    np.testing.assert_array_equal(renamed, labels) and None
    assert changed == 0
    assert _match_labels(labels, np.array([2, 2, 0, 1, 1, 1]), 3)[2] == 1


# --------------------------------------------------------------------------- other properties


def test_equivariant_to_sample_permutations():
    Xs, y = blobs(std=1.5, seed=4)
    perm = np.random.default_rng(0).permutation(len(y))
    a = DRMC(n_clusters=3, random_state=0).fit(Xs)
    b = DRMC(n_clusters=3, random_state=0).fit([X[perm] for X in Xs])
    assert adjusted_rand_score(a.labels_[perm], b.labels_) == 1.0
    assert clustering_accuracy(y, a.labels_) > 0.95


def test_anchor_route_equals_the_dense_eigendecomposition_of_the_fitted_graph():
    Xs, _ = hard_blobs(seed=7)
    model = DRMC(n_clusters=4, random_state=0).fit(Xs)
    Z = model.anchor_graph_.toarray()
    live = Z.sum(axis=1) > 0
    S = Z[live].T @ np.diag(1.0 / Z[live].sum(axis=1)) @ Z[live]
    np.testing.assert_allclose(S, S.T, atol=1e-12)
    np.testing.assert_allclose(S.sum(axis=1), 1.0, atol=1e-10)
    # The fitted embedding: top eigenvectors of the degree-regularised S_tau.
    tau = DEGREE_REG * Z.shape[1] / live.sum()
    S_tau = Z[live].T @ np.diag(1.0 / (Z[live].sum(axis=1) + tau)) @ Z[live]
    w, U = np.linalg.eigh(S_tau)
    assert w[-4] - w[-5] > 1e-6
    dense = U[:, -4:]
    np.testing.assert_allclose(model.embedding_ @ model.embedding_.T, dense @ dense.T, atol=1e-8)


def test_degree_regularisation_keeps_an_outlier_anchor_from_taking_a_cluster():
    # Oracle graph: two groups of 50 samples, each linked (0.95) to its own 5
    # anchors and (0.05) to the other's, and one sample linked (0.9) to an
    # anchor of its own. Unregularised, that sample's near-isolated component
    # (eigenvalue 0.90) outranks the split of the groups (0.81), so k=2 gives
    # a cluster of one; with tau = 0.1 n/m the groups' split ranks first.
    half, m = 50, 11
    n = 2 * half + 1
    Z = np.zeros((m, n))
    Z[0:5, :half], Z[5:10, :half] = 0.95 / 5, 0.05 / 5
    Z[5:10, half : 2 * half], Z[0:5, half : 2 * half] = 0.95 / 5, 0.05 / 5
    Z[10, -1], Z[0, -1] = 0.9, 0.1
    G = sp.csr_matrix(Z)
    y = np.r_[np.zeros(half), np.ones(half)].astype(int)

    def embedding(reg):
        P = regularised_projection_from_gram((G @ G.T).toarray(), Z.sum(axis=1), n, 2, reg=reg)
        return np.asarray(G.T @ P)

    plain, _ = spectral_rotation(embedding(0.0), random_state=0)
    assert sorted(np.bincount(plain)) == [1, n - 1]
    for seed in range(3):
        labels, _ = spectral_rotation(embedding(0.1), random_state=seed)
        assert adjusted_rand_score(y, labels[:-1]) == 1.0
    # reg=0 is the unregularised embedding: the top eigenvectors of Z^T Delta^{-1} Z.
    _, U = np.linalg.eigh(Z.T @ np.diag(1.0 / Z.sum(axis=1)) @ Z)
    F = embedding(0.0)
    np.testing.assert_allclose(F @ F.T, U[:, -2:] @ U[:, -2:].T, atol=1e-10)


def test_align_views_recovers_a_known_permutation():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    A = rng.normal(size=(12, 2))
    Z = anchor_graph(X, A, n_neighbors=3)
    perm = rng.permutation(12)
    permuted = anchor_graph(X, A[perm], n_neighbors=3)
    reference, perms = _align_views([Z, permuted])
    other = 1 - reference
    anchors = [A, A[perm]]
    np.testing.assert_array_equal(anchors[other][perms[other]], anchors[reference])
    np.testing.assert_array_equal(perms[reference], np.arange(12))


def test_predict_links_new_samples_to_the_anchors():
    Xs, y = blobs(n=200, std=1.5, seed=9)
    train = [X[:150] for X in Xs]
    test = [X[150:] for X in Xs]
    model = DRMC(n_clusters=3, random_state=0).fit(train)
    assert adjusted_rand_score(model.labels_, model.predict(train)) > 0.9
    assert clustering_accuracy(y[150:], model.predict(test)) > 0.95
    np.testing.assert_allclose(model.anchor_memberships_.sum(axis=1), 1.0)


def test_max_iter_zero_gives_the_initial_partition():
    Xs, y = blobs(seed=11)
    model = DRMC(n_clusters=3, max_iter=0, random_state=0).fit(Xs)
    assert model.n_iter_ == 0 and model.n_labels_changed_ == 0
    assert clustering_accuracy(y, model.labels_) == 1.0


def test_verbose_reports_to_stderr(capsys):
    Xs, _ = with_noise_view(3)
    DRMC(n_clusters=4, verbose=1, random_state=0).fit(Xs)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "[DRMC] init" in captured.err and "feedback 1" in captured.err


@pytest.mark.parametrize(
    "params",
    [
        {"n_clusters": 0},
        {"n_anchors": 0},
        {"view_weights": "prior"},
        {"scaling": "balanced"},
        {"align_anchors": "yes"},
        {"max_iter": -1},
        {"random_state": "seed"},
    ],
)
def test_parameter_validation(params):
    Xs, _ = blobs()
    with pytest.raises(InvalidParameterError):
        DRMC(**params).fit(Xs)


def test_too_few_anchors_and_anchor_cap():
    Xs, _ = blobs(n=40)
    with pytest.raises(ValueError, match="n_anchors=2 is smaller than n_clusters=3"):
        DRMC(n_clusters=3, n_anchors=2).fit(Xs)
    model = DRMC(n_clusters=3, n_anchors=500, max_iter=2, random_state=0).fit(Xs)
    assert model.n_anchors_ == 40 and model.anchor_graph_.shape == (40, 40)


def test_multiview_contract():
    check_multiview_estimator(DRMC(max_iter=5))


def test_handwritten_floor():
    # The defaults reach ACC about 0.98 here; the floor sits below, to catch
    # regressions only.
    Xs, y = load_handwritten()
    model = DRMC(n_clusters=10, random_state=0).fit(Xs)
    assert clustering_accuracy(y, model.labels_) >= 0.96
    assert normalized_mutual_info(y, model.labels_) >= 0.9


class _SubsamplingDRMC(DRMC):
    """DRMC that subsamples above 120 rows (20000 by default)."""

    _subsample = 120


def test_subsampled_anchors_and_scores_for_large_n():
    # Above _subsample rows the anchor k-means and the view scores use a random
    # subsample; a subclass shrinks the threshold to exercise that path on small data.
    Xs, y = with_noise_view(10, seed=4)
    model = _SubsamplingDRMC(n_clusters=4, random_state=0).fit(Xs)
    assert clustering_accuracy(y, model.labels_) > 0.9
    assert model.view_weights_[2] < 0.1
    assert model.anchor_graph_.shape == (model.n_anchors_, 400)


def test_wide_rows_get_the_anchors_of_their_principal_coordinates():
    """Rows of rank 8 in 120 features: the anchors of their coordinates in an orthonormal basis.

    The anchor k-means of rows wider than 50 features runs on their principal
    components; on rows of rank at most 50 that is an isometry, so the cells, and
    the anchors (their means), are those of the k-means on the coordinates.
    """
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=10.0, size=(6, 8))
    coords = centres[rng.integers(6, size=400)] + rng.standard_normal((400, 8))
    basis = np.linalg.qr(rng.standard_normal((120, 8)))[0]
    wide = coords @ basis.T + 3.0
    for seed in (0, 5):
        expected = _kmeans_anchors(coords, 6, seed) @ basis.T + 3.0
        np.testing.assert_allclose(_kmeans_anchors(wide, 6, seed), expected, atol=1e-8)


def test_wide_rows_with_fewer_distinct_rows_than_anchors_get_anchors_on_the_data():
    # 10 distinct rows of 60 features, 20 anchors: k-means leaves cells empty; their
    # anchors are the rows nearest their centres, on the data as the others are.
    distinct = np.random.default_rng(0).standard_normal((10, 60))
    X = np.repeat(distinct, 10, axis=0)
    with pytest.warns(UserWarning, match="distinct clusters"):
        anchors = _kmeans_anchors(X, 20, 0)
    assert anchors.shape == (20, 60)
    gaps = ((anchors[:, None] - distinct[None]) ** 2).sum(axis=-1).min(axis=1)
    assert gaps.max() < 1e-20


def test_distance_cache_gives_the_same_graphs():
    rng = np.random.default_rng(1)
    Xs = [rng.standard_normal((300, d)) for d in (4, 6)]
    anchors = [X[:20].copy() for X in Xs]
    cache = {}
    for ratios in ([1.0, 0.5], [0.2, 1.3]):
        plain, _ = _anchor_graphs(Xs, anchors, ratios, per_view=False, n_neighbors=5)
        cached, _ = _anchor_graphs(Xs, anchors, ratios, per_view=False, n_neighbors=5, cache=cache)
        assert (plain != cached).nnz == 0
    assert len(cache) == 2 * len(row_tiles(300))  # one entry per view and tile of rows
