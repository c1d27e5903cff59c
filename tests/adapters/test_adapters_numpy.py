"""NumPy parts of BADIT (mvlearn_ext.adapters): exact PiSSA-MoE split, balanced regrouping."""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from mvlearn_ext.adapters import (
    balanced_assignment,
    balanced_spherical_kmeans,
    expert_orthogonality,
    gate_permutation,
    intra_inter_cosine,
    pissa_moe_init,
    regroup_permutation,
    should_regroup,
    unit_gradient_vectors,
)


@pytest.mark.parametrize("alpha", [None, 32.0])
def test_pissa_moe_reconstruction_and_orthogonality(alpha):
    rng = np.random.default_rng(0)
    W = rng.normal(size=(20, 16))
    res, B, A, s = pissa_moe_init(W, 3, 4, lora_alpha=alpha)
    assert B.shape == (3, 20, 4) and A.shape == (3, 4, 16)
    assert s == pytest.approx((alpha or 4) / 4)
    np.testing.assert_allclose(res + s * np.einsum("eor,eri->oi", B, A), W, atol=1e-12)
    ortho = expert_orthogonality(B, A)
    assert ortho["A"] < 1e-10 and ortho["B"] < 1e-10
    # the experts carry the top singular values, in order
    S = np.linalg.svd(W, compute_uv=False)
    for e in range(3):
        np.testing.assert_allclose(
            np.linalg.svd(s * B[e] @ A[e], compute_uv=False)[:4], S[4 * e : 4 * e + 4]
        )
    np.testing.assert_allclose(np.linalg.svd(res, compute_uv=False)[:4], S[12:16], atol=1e-10)
    with pytest.raises(ValueError, match="exceeds"):
        pissa_moe_init(W, 5, 4)


def test_balanced_assignment_is_optimal_and_exact():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 3))
    C = rng.normal(size=(3, 3))
    labels = balanced_assignment(X, C, 2, metric="euclidean")
    assert np.bincount(labels).tolist() == [2, 2, 2]
    cost = ((X[:, None] - C[None]) ** 2).sum(axis=2)
    best = min(
        sum(cost[i, lab] for i, lab in enumerate(assign))
        for assign in _balanced_labelings(6, 3, 2)
    )
    assert sum(cost[i, lab] for i, lab in enumerate(labels)) == pytest.approx(best)


def _balanced_labelings(n, k, cap):
    import itertools

    yield from set(itertools.permutations(np.repeat(np.arange(k), cap)))


def test_planted_clusters_are_recovered_exactly():
    rng = np.random.default_rng(2)
    K, r, d = 4, 5, 30
    directions = np.linalg.qr(rng.normal(size=(d, K)))[0].T
    truth = rng.permutation(np.repeat(np.arange(K), r))
    X = directions[truth] + 0.15 * rng.normal(size=(K * r, d))
    labels = balanced_spherical_kmeans(X, K, random_state=0)
    assert adjusted_rand_score(truth, labels) == 1.0
    assert np.bincount(labels).tolist() == [r] * K
    before = intra_inter_cosine(X, np.arange(K * r) // r)
    after = intra_inter_cosine(X, labels)
    assert after["intra"] > before["intra"] and after["inter"] < before["inter"]


def test_regroup_permutation_is_a_permutation_and_rejects_unbalanced_labels():
    labels = np.array([2, 0, 1, 0, 2, 1])
    perm = regroup_permutation(labels, 3, 2)
    assert sorted(perm.tolist()) == list(range(6))
    assert perm.tolist() == [1, 3, 2, 5, 0, 4]
    with pytest.raises(ValueError, match="exactly rank"):
        regroup_permutation(np.array([0, 0, 0, 1, 2, 2]), 3, 2)
    gperm = gate_permutation(perm, 3, 2)
    assert sorted(gperm.tolist()) == [0, 1, 2]


def test_unit_gradient_vectors_layout():
    rng = np.random.default_rng(3)
    gB, gA = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 3, 4))
    vec = unit_gradient_vectors(gB, gA)
    assert vec.shape == (6, 9)
    raw = np.concatenate([gA[1, 2], gB[1, :, 2]])
    np.testing.assert_allclose(vec[1 * 3 + 2], raw / np.linalg.norm(raw))


def test_schedule_skips_the_second_half():
    assert [should_regroup(e, 6) for e in range(1, 7)] == [True, True, True, False, False, False]


_X = np.array([[1.0, 0.0], [0.9, 0.1], [0.8, 0.2], [0.0, 1.0]])
_GB, _GA = np.ones((2, 3, 2)), np.ones((2, 2, 4))


@pytest.mark.parametrize(
    ("func", "args", "error", "match"),
    [
        (pissa_moe_init, ([["1", "2"], ["3", "4"]], 1, 1), TypeError, "weight must be a numeric"),
        (pissa_moe_init, (np.eye(3) + 1j, 1, 1), ValueError, "weight holds complex"),
        (expert_orthogonality, (np.nan * _GB, _GA), ValueError, "B contains NaN"),
        (expert_orthogonality, (_GA, _GB), ValueError, "do not match"),
        (expert_orthogonality, (_GB, _GA[:0]), ValueError, "A is empty"),
        (expert_orthogonality, (1e300 * _GB, _GA), ValueError, "B holds values too large"),
        (unit_gradient_vectors, (_GB, np.inf * _GA), ValueError, "grad_A contains infinity"),
        (balanced_assignment, (_X, [[1.0, np.nan], [0, 1]], 2), ValueError, "centroids contains"),
        (balanced_assignment, (_X.astype(str), _X[:2], 2), TypeError, "vectors must be a numeric"),
        (balanced_spherical_kmeans, (np.zeros((0, 2)), 2), ValueError, "vectors is empty"),
        (regroup_permutation, ([0.5, 0, 1, 1], 2, 2), ValueError, "labels must hold whole"),
        (regroup_permutation, ([0, 0, 1, 2], 2, 2), ValueError, "labels must be <= 1"),
        (gate_permutation, ([0, np.nan, 1, 2], 2, 2), ValueError, "perm contains NaN"),
        (gate_permutation, ([0, 0, 1, 2], 2, 2), ValueError, "perm must be a permutation"),
        (intra_inter_cosine, (_X[:, 0], [0, 0, 1, 1]), ValueError, "vectors must be 2-D"),
        (intra_inter_cosine, (_X, [[0], [0], [1], [1]]), ValueError, "labels must be 1-D"),
        (intra_inter_cosine, (_X, [0, 0, 1]), ValueError, "one entry per row of vectors"),
    ],
)
def test_bad_arrays_are_refused_by_name(func, args, error, match):
    with pytest.raises(error, match=match):
        func(*args)


@pytest.mark.parametrize(
    ("alpha", "error"),
    [
        (np.inf, ValueError),
        (np.nan, ValueError),
        (0.0, ValueError),
        ("8", TypeError),
        (True, TypeError),
    ],
)
def test_pissa_refuses_bad_lora_alpha_by_name(alpha, error):
    with pytest.raises(error, match="lora_alpha"):
        pissa_moe_init(np.eye(3), 1, 1, lora_alpha=alpha)


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e200, 1e300])
def test_cosine_functions_do_not_depend_on_units(scale):
    vectors = np.array([[1.0, 0.1], [0.1, 1.0], [0.9, 0.0], [0.0, 0.8]])
    centroids = np.array([[0.0, 1.0], [1.0, 0.0]])
    expected = balanced_assignment(vectors, centroids, 2)
    np.testing.assert_array_equal(expected, [1, 0, 1, 0])
    np.testing.assert_array_equal(balanced_assignment(scale * vectors, centroids, 2), expected)
    np.testing.assert_array_equal(
        balanced_assignment(scale * vectors, scale * centroids, 2, metric="euclidean"), expected
    )
    labels = balanced_spherical_kmeans(vectors, 2, random_state=0)
    np.testing.assert_array_equal(
        balanced_spherical_kmeans(scale * vectors, 2, random_state=0), labels
    )
    assert intra_inter_cosine(scale * vectors, [0, 1, 0, 1]) == pytest.approx(
        intra_inter_cosine(vectors, [0, 1, 0, 1])
    )
    gB = np.random.default_rng(0).normal(size=(2, 3, 2))
    gA = np.random.default_rng(1).normal(size=(2, 2, 4))
    np.testing.assert_allclose(
        unit_gradient_vectors(scale * gB, scale * gA), unit_gradient_vectors(gB, gA), rtol=1e-12
    )


@pytest.mark.parametrize(
    ("epoch", "n_epochs", "error", "match"),
    [
        ("1", 4, TypeError, "epoch"),
        (1.5, 4, TypeError, "epoch"),
        (True, 4, TypeError, "epoch"),
        (0, 4, ValueError, "epoch"),
        (1, None, TypeError, "n_epochs"),
        (1, 0, ValueError, "n_epochs"),
    ],
)
def test_should_regroup_refuses_bad_arguments_by_name(epoch, n_epochs, error, match):
    with pytest.raises(error, match=match):
        should_regroup(epoch, n_epochs)
