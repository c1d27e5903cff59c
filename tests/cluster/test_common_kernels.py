"""The shared anchor-graph kernels against NumPy/SciPy references and closed forms."""

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

from mvlearn_ext.cluster import _common
from mvlearn_ext.cluster._common import (
    generalized_power_iteration,
    kmeans_anchors,
    procrustes,
    regularised_projection_from_gram,
    spectral_rotation,
    squared_view_weights,
)
from mvlearn_ext.cluster._kernels import (
    d2_seeds_from_gram,
    indicator_sweeps,
    smallest_in_gram_rows,
    smallest_in_rows,
)

shapes = st.tuples(st.integers(1, 7), st.integers(1, 7))
seeds = st.integers(0, 2**31 - 1)


def _random_orthonormal(rng, p, q):
    return procrustes(rng.normal(size=(p, q)))


def _on_simplex(Z, atol=1e-12):
    return bool(np.all(Z >= 0) and np.allclose(Z.sum(axis=0), 1.0, atol=atol))


# --------------------------------------------------------------------------- procrustes


@settings(max_examples=40)
@given(shape=shapes, seed=seeds)
def test_procrustes_is_the_polar_factor(shape, seed):
    rng = np.random.default_rng(seed)
    M = rng.normal(size=shape)
    W = procrustes(M)
    p, q = shape
    gram = W.T @ W if p >= q else W @ W.T
    np.testing.assert_allclose(gram, np.eye(min(p, q)), atol=1e-12)
    reference, _ = scipy.linalg.polar(M)
    np.testing.assert_allclose(W, reference, atol=1e-10)


def test_procrustes_attains_the_maximum_of_the_trace():
    rng = np.random.default_rng(0)
    for p, q in ((6, 3), (3, 6), (4, 4)):
        M = rng.normal(size=(p, q))
        best = np.sum(procrustes(M) * M)
        candidates = [np.sum(_random_orthonormal(rng, p, q) * M) for _ in range(500)]
        assert best >= max(candidates) - 1e-12
        # The maximum of tr(W^T M) is the nuclear norm of M.
        np.testing.assert_allclose(best, np.linalg.svd(M, compute_uv=False).sum())


def test_generalized_power_iteration_is_monotone_and_beats_random_points():
    rng = np.random.default_rng(1)
    for p, q in ((3, 6), (6, 3)):
        G = rng.normal(size=(p, p))
        Q = G @ G.T
        K = rng.normal(size=(q, q))
        P = K @ K.T
        C = rng.normal(size=(p, q))

        def f(W, Q=Q, P=P, C=C):
            return np.sum((Q @ W @ P) * W) - 2 * np.sum(W * C)

        W = _random_orthonormal(rng, p, q)
        values = [f(W)]
        for _ in range(30):
            W = generalized_power_iteration(C, W, Q=Q, P=P, max_iter=1)
            values.append(f(W))
        assert np.all(np.diff(values) <= 1e-9 * abs(values[0]))
        W = generalized_power_iteration(C, W, Q=Q, P=P, max_iter=500)
        gram = W.T @ W if p >= q else W @ W.T
        np.testing.assert_allclose(gram, np.eye(min(p, q)), atol=1e-10)
        assert f(W) <= min(f(_random_orthonormal(rng, p, q)) for _ in range(300))


def test_generalized_power_iteration_reduces_to_procrustes():
    rng = np.random.default_rng(2)
    C = rng.normal(size=(5, 3))
    W0 = _random_orthonormal(rng, 5, 3)
    P = np.diag([3.0, 2.0, 1.0])
    # Orthonormal columns and Q = I: the quadratic term is tr(P), a constant.
    np.testing.assert_allclose(generalized_power_iteration(C, W0, P=P), procrustes(C))
    Ct = C.T
    np.testing.assert_allclose(
        generalized_power_iteration(Ct, W0.T, Q=P), procrustes(Ct), atol=1e-12
    )


# --------------------------------------------------------------------------- view weights


@settings(max_examples=50)
@given(losses=st.lists(st.floats(1e-6, 1e6), min_size=1, max_size=8), seed=seeds)
def test_squared_view_weights_minimise_the_weighted_loss(losses, seed):
    losses = np.asarray(losses)
    alpha = squared_view_weights(losses)
    np.testing.assert_allclose(alpha, (1 / losses) / np.sum(1 / losses), rtol=1e-12)
    assert np.all(alpha >= 0) and np.isclose(alpha.sum(), 1.0)
    value = np.sum(alpha**2 * losses)
    rng = np.random.default_rng(seed)
    others = rng.dirichlet(np.ones(len(losses)), size=200)
    assert value <= np.min(np.sum(others**2 * losses, axis=1)) * (1 + 1e-12)


def test_inverse_square_root_weights_are_worse_unless_losses_are_equal():
    losses = np.array([1.0, 4.0, 9.0])
    alpha = squared_view_weights(losses)
    awmvc = (1 / np.sqrt(losses)) / np.sum(1 / np.sqrt(losses))
    assert np.sum(awmvc**2 * losses) > np.sum(alpha**2 * losses) + 1e-3
    equal = np.full(3, 2.0)
    np.testing.assert_allclose(squared_view_weights(equal), np.full(3, 1 / 3))


def test_squared_view_weights_zero_losses_and_errors():
    np.testing.assert_array_equal(squared_view_weights([0.0, 1.0, 0.0]), [0.5, 0.0, 0.5])
    np.testing.assert_array_equal(squared_view_weights([0.0]), [1.0])
    # Tiny losses do not overflow.
    np.testing.assert_allclose(squared_view_weights([1e-320, 2e-320]), [2 / 3, 1 / 3])
    for bad in ([], [[1.0]], [1.0, -1.0], [1.0, np.nan], [np.inf, 1.0]):
        with pytest.raises(ValueError):
            squared_view_weights(bad)


# --------------------------------------------------------------------------- spectral embedding


def _projector(F):
    return F @ F.T


def _random_graph(rng, m, n, zero_rows=0):
    Z = rng.random((m, n)) ** 3
    Z[:zero_rows] = 0.0
    return Z / Z.sum(axis=0)


def _dense_regularised_embedding(Z, k, reg):
    """Reference: the top ``k`` eigenpairs of ``Z^T (Delta + tau I)^{-1} Z``, formed densely."""
    degree = Z.sum(axis=1)
    live = degree > 0
    tau = reg * Z.shape[1] / live.sum()
    S = Z[live].T @ np.diag(1.0 / (degree[live] + tau)) @ Z[live]
    w, U = np.linalg.eigh(S)
    return w[::-1], U[:, ::-1][:, :k]


@settings(max_examples=40)
@given(
    m=st.integers(2, 8),
    n=st.integers(9, 30),
    zero_rows=st.integers(0, 1),
    reg=st.sampled_from([0.0, 0.1, 1.0]),
    seed=seeds,
)
def test_regularised_projection_matches_the_dense_eigendecomposition(m, n, zero_rows, reg, seed):
    rng = np.random.default_rng(seed)
    Z = _random_graph(rng, m, n, zero_rows=zero_rows)
    k = min(3, m - zero_rows)
    degree = Z.sum(axis=1)
    P = regularised_projection_from_gram(Z @ Z.T, degree, n, k, reg=reg)
    F = Z.T @ P
    w, reference = _dense_regularised_embedding(Z, k, reg)
    np.testing.assert_allclose(F.T @ F, np.eye(k), atol=1e-8)
    # An anchor of zero degree gets weight 0, never a division.
    assert np.all(np.isfinite(P)) and np.all(P[:zero_rows] == 0)
    # F holds eigenvectors of S with its top eigenvalues, in decreasing order.
    SF = Z.T @ (
        (Z @ F) / np.where(degree > 0, degree + reg * n / (degree > 0).sum(), 1.0)[:, None]
    )
    np.testing.assert_allclose(SF, F * np.diag(F.T @ SF), atol=1e-8)
    np.testing.assert_allclose(np.diag(F.T @ SF), w[:k], atol=1e-10)
    # Without regularisation the graph's columns on the simplex give eigenvalue 1 on top.
    if reg == 0.0:
        np.testing.assert_allclose(w[0], 1.0, atol=1e-10)
    # The subspaces agree when the k-th eigenvalue is separated from the next.
    if w[k - 1] - w[k] > 1e-6:
        np.testing.assert_allclose(_projector(F), _projector(reference), atol=1e-6)


def test_regularised_projection_beyond_the_rank_is_zero():
    rng = np.random.default_rng(5)
    Z = _random_graph(rng, 7, 25, zero_rows=2)
    P = regularised_projection_from_gram(Z @ Z.T, Z.sum(axis=1), 25, 7)
    F = Z.T @ P
    np.testing.assert_array_equal(P[:, 5:], 0.0)
    np.testing.assert_allclose(F[:, :5].T @ F[:, :5], np.eye(5), atol=1e-8)


# --------------------------------------------------------------------------- spectral rotation


def _indicator_objective(G, labels, k, scaled):
    counts = np.bincount(labels, minlength=k)
    sums = np.bincount(labels, weights=G[np.arange(len(labels)), labels], minlength=k)
    return np.sum(sums / np.sqrt(counts)) if scaled else np.sum(sums)


@pytest.mark.parametrize("scaled", [True, False])
def test_indicator_sweeps_end_at_a_local_optimum(scaled):
    rng = np.random.default_rng(6)
    n, k = 30, 4
    G = rng.normal(size=(n, k))
    labels = np.arange(n) % k
    before = _indicator_objective(G, labels, k, scaled)
    indicator_sweeps(G, labels, scaled, 100)
    after = _indicator_objective(G, labels, k, scaled)
    assert after >= before and np.bincount(labels, minlength=k).min() >= 1
    # Brute force: no single move that keeps every cluster non-empty improves.
    for i in range(n):
        if np.sum(labels == labels[i]) == 1:
            continue
        for b in range(k):
            moved = labels.copy()
            moved[i] = b
            assert _indicator_objective(G, moved, k, scaled) <= after + 1e-10
    if not scaled:  # without singletons, this is the row-wise argmax
        np.testing.assert_array_equal(labels, G.argmax(axis=1))


# --------------------------------------------------------------------------- row selection


@settings(max_examples=60)
@given(n=st.integers(1, 30), m=st.integers(1, 12), levels=st.integers(2, 50), seed=seeds)
def test_smallest_in_rows_is_the_head_of_a_sort_by_value_then_column(n, m, levels, seed):
    # Few distinct values: ties at and across the boundary are frequent.
    rng = np.random.default_rng(seed)
    D = rng.integers(0, levels, size=(n, m)).astype(np.float64)
    count = int(rng.integers(1, m + 1))
    columns, values, tied = smallest_in_rows(D, count)
    for i in range(n):
        order = np.lexsort((np.arange(m), D[i]))
        np.testing.assert_array_equal(columns[i], order[:count])
        np.testing.assert_array_equal(values[i], D[i, order[:count]])
        assert tied[i] == (count < m and D[i, order[count - 1]] == D[i, order[count]])


@settings(max_examples=40)
@given(n=st.integers(2, 25), d=st.integers(1, 4), seed=seeds)
def test_smallest_in_gram_rows_are_the_nearest_other_rows(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, d)).astype(np.float64)  # duplicate rows: ties
    count = int(rng.integers(1, n))
    sq = np.einsum("ij,ij->i", X, X)
    gram = X @ X.T
    columns, tied = smallest_in_gram_rows(gram, sq, count)
    D = sq[:, None] + sq[None, :] - 2.0 * gram
    np.fill_diagonal(D, np.inf)
    expected, _, expected_tied = smallest_in_rows(D, count)
    np.testing.assert_array_equal(columns, expected)
    np.testing.assert_array_equal(tied, expected_tied)
    assert not np.any(columns == np.arange(n)[:, None])  # never a row itself


def _d2_seeds_reference(G, norms, first, uniforms):
    """D^2 sampling written plainly over the full distance matrix."""
    D = np.maximum((norms[None, :] - 2.0 * G) + norms[:, None], 0.0)
    chosen = [first]
    closest = D[first].copy()
    closest[first] = 0.0
    for u in uniforms:
        cumulative = np.cumsum(closest)
        if cumulative[-1] <= 0.0:
            break
        index = min(int(np.searchsorted(cumulative, u * cumulative[-1])), len(norms) - 1)
        while closest[index] <= 0.0:
            index = (index + 1) % len(norms)
        closest = np.minimum(closest, D[index])
        closest[index] = 0.0
        chosen.append(index)
    return chosen


@settings(max_examples=40)
@given(n=st.integers(2, 30), d=st.integers(1, 4), seed=seeds)
def test_d2_seeds_from_gram_follow_the_plain_rule(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, d)).astype(np.float64)  # repeated rows: early stops
    G = X @ X.T
    first = int(rng.integers(n))
    uniforms = rng.uniform(size=int(rng.integers(0, n)))
    chosen = d2_seeds_from_gram(G, G.diagonal().copy(), first, uniforms)
    assert chosen.tolist() == _d2_seeds_reference(G, G.diagonal().copy(), first, uniforms)
    assert np.unique(X[chosen], axis=0).shape[0] == chosen.size  # never a repeated point


@pytest.mark.parametrize("scaled", [True, False])
def test_spectral_rotation_is_monotone_and_recovers_a_rotated_indicator(scaled):
    rng = np.random.default_rng(7)
    n, k = 90, 3
    y = rng.permutation(np.arange(n) % k)
    Y = np.eye(k)[y]
    Y_hat = Y / np.sqrt(Y.sum(axis=0)) if scaled else Y
    R_true = _random_orthonormal(rng, k, k)
    F = Y_hat @ R_true.T + 0.01 * rng.normal(size=(n, k))
    labels, R, history = spectral_rotation(F, scaled=scaled, random_state=0, return_objective=True)
    assert adjusted_rand_score(y, labels) == 1.0
    np.testing.assert_allclose(R.T @ R, np.eye(k), atol=1e-12)
    assert np.all(np.diff(history) <= 1e-12 * max(1.0, abs(history[0])))
    # The recorded objective is ||F R - Y_hat||^2.
    Yl = np.eye(k)[labels]
    Yl_hat = Yl / np.sqrt(Yl.sum(axis=0)) if scaled else Yl
    np.testing.assert_allclose(history[-1], np.sum((F @ R - Yl_hat) ** 2), rtol=1e-10)


def test_spectral_rotation_is_monotone_on_noise_and_deterministic():
    rng = np.random.default_rng(8)
    F = np.linalg.qr(rng.normal(size=(200, 5)))[0]
    for scaled in (True, False):
        labels, R, history = spectral_rotation(
            F, scaled=scaled, random_state=3, return_objective=True
        )
        assert np.all(np.diff(history) <= 1e-12 * abs(history[0]))
        assert np.bincount(labels, minlength=5).min() >= 1
        again, R_again = spectral_rotation(F, scaled=scaled, random_state=3)
        np.testing.assert_array_equal(again, labels)
        np.testing.assert_array_equal(R_again, R)
    with pytest.raises(ValueError, match="n_samples >= n_clusters"):
        spectral_rotation(F[:3])


def test_empty_clusters_are_reseeded_with_the_farthest_sample():
    G = np.array([[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.2, 0.8, 0.0], [0.5, 0.4, 0.1]])
    labels = G.argmax(axis=1)
    filled = _common._fill_empty_clusters(G, labels.copy(), 3, False)
    # Cluster 2 was empty; sample 3 has the largest residual ||g_i - e_{label}||.
    np.testing.assert_array_equal(filled, [0, 0, 1, 2])


# --------------------------------------------------------------------------- anchors


def test_kmeans_anchors_are_the_kmeans_centres():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(200, 3))
    anchors = kmeans_anchors(X, 7, random_state=0)
    expected = KMeans(7, n_init=1, max_iter=100, random_state=0).fit(X).cluster_centers_
    np.testing.assert_allclose(anchors, expected)
    # Below MINIBATCH_THRESHOLD rows the default is Lloyd; the choice can be forced
    # either way (a block path passes its full data's size).
    mini = kmeans_anchors(X, 7, random_state=0, minibatch=True)
    assert mini.shape == (7, 3) and not np.allclose(mini, anchors)
    np.testing.assert_array_equal(kmeans_anchors(X, 7, random_state=0, minibatch=False), anchors)
    with pytest.raises(ValueError, match="n_anchors"):
        kmeans_anchors(X, 201, random_state=0)


@pytest.mark.parametrize("standardize", [True, False])
def test_stack_scaled_views_equals_the_scaled_views_side_by_side(standardize):
    from mvlearn_ext.cluster._preprocessing import (
        apply_view_scaling,
        fit_view_scaling,
        stack_scaled_views,
    )

    rng = np.random.default_rng(7)
    Xs = [rng.normal(size=(20, 3)), rng.normal(size=(20, 5)).astype(np.float32)]
    means, scales = fit_view_scaling(Xs) if standardize else (None, None)
    joint, views = stack_scaled_views(Xs, means, scales)
    expected = apply_view_scaling(Xs, means, scales)
    assert joint.flags.c_contiguous and joint.dtype == np.float64
    np.testing.assert_allclose(joint, np.hstack(expected), rtol=1e-15, atol=0)
    for view, ref in zip(views, expected, strict=True):
        assert np.shares_memory(view, joint)
        np.testing.assert_allclose(view, ref, rtol=1e-15, atol=0)
