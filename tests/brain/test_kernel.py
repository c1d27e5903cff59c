"""PhenoBrain's routing kernel, normalisation and attention regulariser (NumPy)."""

import numpy as np
import pytest
from scipy.linalg import expm

from mvlearn_ext.brain import (
    attention_prior_kl,
    heat_kernel,
    hop_powers,
    normalize_connectome,
    routing_kernel,
    row_normalize,
)


def _path(n):
    return np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)


def _random_fc(rng, n=6, n_subjects=None):
    shape = (n, n) if n_subjects is None else (n_subjects, n, n)
    M = rng.uniform(-0.3, 1.0, size=shape)
    M = (M + np.swapaxes(M, -1, -2)) / 2
    idx = np.arange(n)
    M[..., idx, idx] = 1.0
    return M


def _softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


def test_symmetric_normalisation_matches_its_formula():
    rng = np.random.default_rng(0)
    A = _random_fc(rng)
    W = np.maximum(A, 0)
    np.fill_diagonal(W, 0)
    D = np.diag(1 / np.sqrt(W.sum(1)))
    np.testing.assert_allclose(normalize_connectome(A), D @ W @ D)
    Wa = np.abs(A)
    np.fill_diagonal(Wa, 0)
    np.testing.assert_allclose(
        normalize_connectome(A, mode="random_walk", sign="absolute"), Wa / Wa.sum(1)[:, None]
    )


def test_isolated_node_gets_a_zero_row_and_topk_stays_symmetric():
    rng = np.random.default_rng(1)
    A = _random_fc(rng, 7)
    A[3, :] = A[:, 3] = -0.5
    A[3, 3] = 1.0
    A_hat = normalize_connectome(A)
    assert np.all(A_hat[3] == 0) and np.all(A_hat[:, 3] == 0)
    sparse = normalize_connectome(_random_fc(rng, 8), top_k=2)
    np.testing.assert_allclose(sparse, sparse.T)
    assert ((sparse > 0).sum(1) >= 2).all() and ((sparse > 0).sum(1) < 7).any()


def test_one_hot_alpha_gives_the_power_and_simplex_alpha_keeps_rows_stochastic():
    rng = np.random.default_rng(2)
    P = normalize_connectome(_random_fc(rng), mode="random_walk")
    for h in range(4):
        alpha = np.eye(4)[h]
        np.testing.assert_allclose(routing_kernel(P, alpha), np.linalg.matrix_power(P, h))
    K = routing_kernel(P, _softmax(rng.normal(size=4)))
    np.testing.assert_allclose(K.sum(1), 1.0)
    assert (K >= 0).all()


@pytest.mark.parametrize("H", [1, 2, 3, 5])
def test_support_is_the_h_hop_neighbourhood_on_a_path(H):
    N = 9
    A_hat = normalize_connectome(_path(N) + np.eye(N))  # zero_diagonal drops the loops
    K = routing_kernel(A_hat, _softmax(np.random.default_rng(H).normal(size=H + 1)))
    dist = np.abs(np.subtract.outer(np.arange(N), np.arange(N)))
    np.testing.assert_array_equal(K > 1e-14, dist <= H)


def test_symmetric_graph_gives_a_symmetric_kernel_and_permutations_commute():
    rng = np.random.default_rng(3)
    A = _random_fc(rng, 7)
    alpha = _softmax(rng.normal(size=4))
    K = routing_kernel(normalize_connectome(A), alpha)
    np.testing.assert_allclose(K, K.T, atol=1e-12)
    perm = rng.permutation(7)
    Pm = np.eye(7)[perm]
    Kp = routing_kernel(normalize_connectome(Pm @ A @ Pm.T), alpha)
    np.testing.assert_allclose(Kp, Pm @ K @ Pm.T, atol=1e-12)
    Hp = heat_kernel(normalize_connectome(Pm @ A @ Pm.T), 0.7)
    np.testing.assert_allclose(Hp, Pm @ heat_kernel(normalize_connectome(A), 0.7) @ Pm.T)


def test_different_alpha_give_different_kernels_unless_the_graph_is_idempotent():
    A_hat = normalize_connectome(_path(6))  # N > H: I, A, A^2, A^3 linearly independent
    a1, a2 = _softmax(np.array([0.0, 1.0, 0.0, 0.0])), _softmax(np.array([0.0, 0.0, 1.0, 0.0]))
    assert np.abs(routing_kernel(A_hat, a1) - routing_kernel(A_hat, a2)).max() > 1e-3
    # complete graph with self-loops: A_hat = J / N is idempotent, so only alpha_0 matters
    J = normalize_connectome(np.ones((5, 5)), zero_diagonal=False)
    np.testing.assert_allclose(J @ J, J)
    np.testing.assert_allclose(routing_kernel(J, a1), routing_kernel(J, a2))


def test_batched_kernels_equal_per_subject_kernels():
    rng = np.random.default_rng(4)
    A = _random_fc(rng, 5, n_subjects=3)
    alpha = np.vstack([_softmax(rng.normal(size=3)) for _ in range(3)])
    A_hat = normalize_connectome(A)
    K = routing_kernel(A_hat, alpha)
    for s in range(3):
        np.testing.assert_allclose(K[s], routing_kernel(normalize_connectome(A[s]), alpha[s]))
    P = hop_powers(A_hat, 2)
    assert P.shape == (3, 3, 5, 5)
    np.testing.assert_allclose(P[1, 2], A_hat[1] @ A_hat[1])


def test_heat_kernel_matches_expm():
    rng = np.random.default_rng(5)
    A_hat = normalize_connectome(_random_fc(rng, 6))
    L = np.eye(6) - A_hat
    for t in (0.0, 0.3, 2.0):
        np.testing.assert_allclose(heat_kernel(A_hat, t), expm(-t * L), atol=1e-12)
    stack = np.stack([A_hat, A_hat])
    out = heat_kernel(stack, [0.5, 1.5])
    np.testing.assert_allclose(out[1], expm(-1.5 * L), atol=1e-12)


def test_regulariser_is_zero_at_the_prior_and_its_gradient_points_to_it():
    rng = np.random.default_rng(6)
    prior = row_normalize(routing_kernel(normalize_connectome(_random_fc(rng)), [0.2, 0.5, 0.3]))
    assert attention_prior_kl(prior, prior) == pytest.approx(0.0, abs=1e-12)
    attn = rng.dirichlet(np.ones(6), size=6)
    loss, grad = attention_prior_kl(attn, prior, return_grad=True)
    kl_ap = (attn * np.log(attn / prior)).sum(1)
    kl_pa = (prior * np.log(prior / attn)).sum(1)
    assert loss == pytest.approx(kl_ap.mean())
    np.testing.assert_allclose((-grad * (prior - attn)).sum(1), (kl_ap + kl_pa) / 6)
    assert ((-grad * (prior - attn)).sum(1) >= 0).all()
    # the gradient is the derivative of the loss (finite differences, off the simplex)
    E = np.zeros_like(attn)
    E[2, 4] = 1e-6
    fd = (attention_prior_kl(attn + E, prior, eps=1e-12) - loss) / 1e-6
    # attn + E leaves the simplex by 1e-6 (allclose tolerance accepts it)
    assert fd == pytest.approx(grad[2, 4], rel=1e-4)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: normalize_connectome(np.ones((3, 4))), "shape"),
        (lambda: normalize_connectome(np.full((3, 3), np.nan)), "NaN"),
        (lambda: normalize_connectome(np.eye(3), mode="laplacian"), "mode"),
        (lambda: normalize_connectome(np.eye(3), sign="neg"), "sign"),
        (lambda: normalize_connectome(np.eye(3), top_k=0), "top_k"),
        (lambda: hop_powers(np.eye(3), -1), "n_hops"),
        (lambda: routing_kernel(np.eye(3), np.ones((2, 3))), "alpha"),
        (lambda: routing_kernel(np.eye(3), [np.inf, 1.0]), "alpha"),
        (lambda: heat_kernel(np.triu(np.ones((3, 3))), 1.0), "symmetric"),
        (lambda: heat_kernel(np.eye(3), -1.0), "t must"),
        (lambda: row_normalize(-np.eye(3)), "non-negative"),
        (lambda: row_normalize(np.zeros((3, 3))), "all-zero row"),
        (lambda: attention_prior_kl(np.eye(3), np.eye(4)), "same shape"),
        (lambda: attention_prior_kl(np.ones((3, 3)), np.eye(3)), "attention"),
    ],
)
def test_bad_input_is_refused_clearly(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_non_numeric_input_is_a_type_error():
    with pytest.raises(TypeError, match="A must be a numeric array"):
        normalize_connectome([["a", "b"], ["c", "d"]])


_PATH3 = np.diag([1.0, 1.0], 1) + np.diag([1.0, 1.0], -1)
_UNIFORM3 = np.full((3, 3), 1 / 3)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda bad: normalize_connectome(bad), "A"),
        (lambda bad: hop_powers(bad, 2), "A_hat"),
        (lambda bad: routing_kernel(bad, [0.0, 1.0]), "A_hat"),
        (lambda bad: routing_kernel(_PATH3, bad[0, :2]), "alpha"),
        (lambda bad: heat_kernel(bad, 1.0), "A_hat"),
        (lambda bad: row_normalize(bad), "K"),
        (lambda bad: attention_prior_kl(bad, _UNIFORM3), "attention"),
        (lambda bad: attention_prior_kl(_UNIFORM3, bad), "prior"),
    ],
)
@pytest.mark.parametrize(
    "corrupt, exc",
    [
        (lambda A: A.astype(str), TypeError),
        (lambda A: A + 1j, ValueError),
        (lambda A: np.where(np.eye(3, dtype=bool), np.nan, A), ValueError),
    ],
    ids=["str", "complex", "nan"],
)
def test_unusable_arrays_are_refused_by_name(call, name, corrupt, exc):
    with pytest.raises(exc, match=rf"^{name} "):
        call(corrupt(_UNIFORM3))


@pytest.mark.parametrize(
    "call",
    [
        lambda A: hop_powers(A, 2),
        lambda A: routing_kernel(A, [0.0, 1.0, 1.0]),
        lambda A: heat_kernel(A, 1.0),
    ],
    ids=["hop_powers", "routing_kernel", "heat_kernel"],
)
def test_values_too_large_to_multiply_are_refused(call):
    with pytest.raises(ValueError, match="A_hat holds values too large"):
        call(_PATH3 * 1e300)


def test_normalize_connectome_refuses_an_asymmetric_matrix_by_name():
    A = np.array([[1.0, 0.5, -0.2], [0.5, 1.0, 0.3], [-0.2, 0.3, 1.0]])
    with pytest.raises(ValueError, match=r"^A must be symmetric \(largest"):
        normalize_connectome(np.triu(A))
    stack = np.stack([A, np.triu(A)])
    with pytest.raises(ValueError, match=r"^A must be symmetric; subject 1 is not"):
        normalize_connectome(stack)
    # the tolerance is relative: the same matrix in tiny units is still accepted
    out = normalize_connectome(A * 1e-200)
    np.testing.assert_allclose(out, normalize_connectome(A), rtol=1e-12)


def test_routing_kernel_of_a_raw_matrix_over_many_hops_is_refused_by_name():
    rng = np.random.default_rng(0)
    A = np.abs(rng.normal(size=(8, 8)))
    A = A + A.T  # spectral radius about 14: A^h overflows near h = 270
    alpha = np.full(400, 1 / 400)
    for call in (lambda: routing_kernel(A, alpha), lambda: hop_powers(A, 399)):
        with pytest.raises(ValueError, match=r"^A_hat is too large .*normalize_connectome"):
            call()
    K = routing_kernel(normalize_connectome(A), alpha)
    assert np.isfinite(K).all()
