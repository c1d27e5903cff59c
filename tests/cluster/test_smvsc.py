"""SMVSC and FPMVS-CAG: contract, monotone blocks, Z-step oracles, invariances, Handwritten."""

import time

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.metrics import adjusted_rand_score

from mvlearn_ext.cluster._common import procrustes, simplex_qp
from mvlearn_ext.cluster._smvsc import FPMVSCAG, SMVSC, smvsc_fit, solve_z, z_problem
from mvlearn_ext.datasets import load_handwritten, make_multiview_blobs
from mvlearn_ext.metrics import clustering_accuracy, normalized_mutual_info
from mvlearn_ext.utils.estimator_checks import check_multiview_estimator


@pytest.fixture(scope="module")
def blobs():
    return make_multiview_blobs(
        150, n_views=3, n_features=[5, 3, 4], n_clusters=3, cluster_std=1.0, random_state=0
    )


def _standardized(Xs):
    return [(X - X.mean(axis=0)) / X.std(axis=0) for X in Xs]


def _direct_objective(views, W, A, Z, alpha, lam):
    return sum(
        a**2 * np.sum((X.T - Wv @ A @ Z) ** 2) for X, Wv, a in zip(views, W, alpha, strict=True)
    ) + lam * np.sum(Z**2)


@pytest.mark.parametrize("estimator", [SMVSC(n_anchors=5, n_init=2), FPMVSCAG(n_init=2)])
def test_multiview_contract(estimator):
    check_multiview_estimator(estimator)


@pytest.mark.parametrize(
    "estimator",
    [
        SMVSC(n_clusters=3, random_state=0),
        # m > d: exact QP and GPI; k singular vectors (with all 9, as the
        # reference code, one blob sample is misplaced: ACC 0.993).
        SMVSC(n_clusters=3, n_anchors=9, n_singular_vectors=3, random_state=0),
        SMVSC(n_clusters=3, n_anchors=6, n_components=4, reg_lambda=0.1, random_state=0),
        FPMVSCAG(n_clusters=3, random_state=0),
    ],
    ids=["m=d=k", "m=3k", "m=6,d=4", "FPMVSCAG"],
)
def test_separated_blobs_are_recovered(blobs, estimator):
    Xs, y = blobs
    model = estimator.fit(Xs)
    assert clustering_accuracy(y, model.labels_) == 1.0
    m, d = model.n_anchors_, model.n_components_
    Z = model.anchor_graph_
    assert Z.shape == (m, 150) and Z.min() >= 0
    np.testing.assert_allclose(Z.sum(axis=0), 1.0, atol=1e-12)
    assert model.consensus_anchors_.shape == (d, m)
    assert [A.shape for A in model.anchors_] == [(m, 5), (m, 3), (m, 4)]
    assert np.all(model.view_weights_ > 0) and np.isclose(model.view_weights_.sum(), 1.0)
    assert len(model.objective_) == model.n_iter_ + 1
    assert np.all(np.diff(model.objective_) <= 1e-10 * model.objective_[0])
    np.testing.assert_array_equal(model.predict(Xs), model.labels_)


def test_predict_labels_held_out_samples():
    Xs, y = make_multiview_blobs(200, n_views=2, n_features=[4, 3], n_clusters=3, random_state=3)
    model = SMVSC(n_clusters=3, n_anchors=6, random_state=0).fit([X[:150] for X in Xs])
    assert clustering_accuracy(y[:150], model.labels_) == 1.0
    predicted = model.predict([X[150:] for X in Xs])
    mapping = {c: np.bincount(model.labels_[y[:150] == c]).argmax() for c in range(3)}
    np.testing.assert_array_equal(predicted, [mapping[c] for c in y[150:]])


@pytest.mark.parametrize(
    "n_anchors, n_components, widths, lam",
    [
        (3, 3, (5, 4), 1.0),  # closed-form Z step, Procrustes W and A
        (6, 3, (5, 4), 0.5),  # m > d: orthonormal rows of A, exact QP
        (4, 4, (5, 2), 0.0),  # d_v < d in view 1: W_1 has orthonormal rows
    ],
)
def test_every_block_update_decreases_the_objective(n_anchors, n_components, widths, lam):
    Xs, _ = make_multiview_blobs(
        80, n_views=2, n_features=list(widths), n_clusters=3, noise=0.3, random_state=1
    )
    views = _standardized(Xs)
    trace = []
    state, history, n_iter = smvsc_fit(
        views,
        n_anchors=n_anchors,
        n_components=n_components,
        lam=lam,
        max_iter=15,
        tol=0.0,
        seed=0,
        n_threads=1,
        log=lambda message: None,
        callback=lambda it, block, value: trace.append((it, block, value)),
    )
    assert n_iter == 15 and len(trace) == 4 * 15 + 1
    values = np.array([value for _, _, value in trace])
    assert np.all(np.diff(values) <= 1e-9 * values[0]), trace
    # The expanded objective equals the direct one.
    direct = _direct_objective(views, state.W, state.A, state.Z, state.alpha, lam)
    np.testing.assert_allclose(history[-1], direct, rtol=1e-10)
    # The constraints hold: orthonormal columns or rows.
    for M in [state.A, *state.W]:
        p, q = M.shape
        gram = M.T @ M if p >= q else M @ M.T
        np.testing.assert_allclose(gram, np.eye(min(p, q)), atol=1e-10)


def test_blocks_are_minimisers_against_random_candidates():
    Xs, _ = make_multiview_blobs(60, n_views=2, n_features=[5, 4], n_clusters=3, random_state=2)
    views = _standardized(Xs)
    lam = 0.3
    state, _, _ = smvsc_fit(
        views,
        n_anchors=3,
        n_components=3,
        lam=lam,
        max_iter=5,
        tol=0.0,
        seed=0,
        n_threads=1,
        log=lambda message: None,
    )
    rng = np.random.default_rng(0)
    base = _direct_objective(views, state.W, state.A, state.Z, state.alpha, lam)
    state.update_A()  # A is a Procrustes minimiser here (m = d <= d_v)
    best_A = _direct_objective(views, state.W, state.A, state.Z, state.alpha, lam)
    assert best_A <= base + 1e-9 * base
    for _ in range(100):
        A = procrustes(rng.normal(size=state.A.shape))
        assert _direct_objective(views, state.W, A, state.Z, state.alpha, lam) >= best_A - 1e-9
    # The Z step (alpha^2 in both terms) beats random simplex points per column.
    state.update_Z(n_threads=1)
    best_Z = _direct_objective(views, state.W, state.A, state.Z, state.alpha, lam)
    for _ in range(50):
        Z = state.Z.copy()
        Z[:, :10] = rng.dirichlet(np.ones(3), size=10).T
        assert _direct_objective(views, state.W, state.A, Z, state.alpha, lam) >= best_Z
    # Alpha is the minimiser of sum alpha_v^2 loss_v.
    losses = state.view_losses()
    state.update_alpha()
    np.testing.assert_allclose(state.alpha, (1 / losses) / np.sum(1 / losses))


def _slsqp_column(H, b):
    m = len(b)
    return minimize(
        lambda z: 0.5 * z @ H @ z - b @ z,
        np.full(m, 1 / m),
        jac=lambda z: H @ z - b,
        bounds=[(0, None)] * m,
        constraints=[{"type": "eq", "fun": lambda z: z.sum() - 1, "jac": lambda z: np.ones(m)}],
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 1000},
    ).x


def test_closed_form_z_step_is_exact_only_when_a_is_orthonormal():
    rng = np.random.default_rng(3)
    views = [rng.normal(size=(20, 6)), rng.normal(size=(20, 5))]
    alpha = np.array([0.7, 0.3])
    W = [procrustes(rng.normal(size=(6, 4))), procrustes(rng.normal(size=(5, 4)))]
    for m, closed_form_exact in ((3, True), (7, False)):
        A = procrustes(rng.normal(size=(4, m)))
        H, B = z_problem(views, W, A, alpha, lam=0.2)
        c = np.sum(alpha**2) + 0.2
        naive = np.column_stack(
            [simplex_qp(c * np.eye(m), B[:, [i]])[0][:, 0] for i in range(B.shape[1])]
        )
        exact = solve_z(H, B)
        reference = np.column_stack([_slsqp_column(H, B[:, i]) for i in range(B.shape[1])])
        np.testing.assert_allclose(exact, reference, atol=1e-5)
        if closed_form_exact:
            np.testing.assert_allclose(H, c * np.eye(m), atol=1e-12)
            np.testing.assert_allclose(naive, exact, atol=1e-12)
        else:
            assert np.abs(naive - exact).max() > 1e-3


def test_z_step_uses_squared_weights_in_both_terms():
    rng = np.random.default_rng(4)
    views = [rng.normal(size=(10, 4)), rng.normal(size=(10, 4))]
    W = [np.eye(4, 3), procrustes(rng.normal(size=(4, 3)))]
    A = np.eye(3)
    alpha = np.array([0.9, 0.1])
    H, B = z_problem(views, W, A, alpha, lam=0.0)
    expected = sum(a**2 * (X @ Wv @ A).T for a, X, Wv in zip(alpha, views, W, strict=True))
    np.testing.assert_allclose(B, expected)
    np.testing.assert_allclose(H, np.sum(alpha**2) * np.eye(3), atol=1e-12)


def test_fpmvscag_is_smvsc_without_lambda_and_with_m_d_k(blobs):
    Xs, _ = blobs
    fp = FPMVSCAG(n_clusters=3, random_state=0).fit(Xs)
    sm = SMVSC(n_clusters=3, n_anchors=3, n_components=3, reg_lambda=0.0, random_state=0).fit(Xs)
    np.testing.assert_array_equal(fp.labels_, sm.labels_)
    np.testing.assert_allclose(fp.objective_, sm.objective_)
    assert "reg_lambda" not in fp.get_params() and fp.n_anchors_ == 3


def test_invariant_to_the_order_of_the_views(blobs):
    Xs, _ = blobs
    params = dict(n_clusters=3, n_anchors=6, random_state=0)
    reference = SMVSC(**params).fit(Xs)
    permuted = SMVSC(**params).fit([Xs[1], Xs[2], Xs[0]])
    assert adjusted_rand_score(reference.labels_, permuted.labels_) == 1.0
    np.testing.assert_allclose(
        permuted.view_weights_, reference.view_weights_[[1, 2, 0]], rtol=1e-6
    )


def test_equivariant_to_sample_permutations(blobs):
    Xs, _ = blobs
    perm = np.random.default_rng(5).permutation(len(Xs[0]))
    params = dict(n_clusters=3, n_anchors=6, random_state=0)
    labels = SMVSC(**params).fit_predict(Xs)
    permuted = SMVSC(**params).fit_predict([X[perm] for X in Xs])
    assert adjusted_rand_score(labels[perm], permuted) == 1.0


def test_verbose_reports_the_objective(blobs, capsys):
    SMVSC(n_clusters=3, max_iter=2, verbose=1, random_state=0).fit(blobs[0])
    assert "[SMVSC] iteration 2: objective" in capsys.readouterr().err


@pytest.mark.parametrize(
    "estimator, acc_floor, nmi_floor",
    [
        # All six views, z-scored (standardize=True), random_state=0, n_init=10.
        # Measured: SMVSC(m=d=k=10, lambda=1) ACC 0.685, NMI 0.630 (seeds 0-2:
        # ACC 0.697 +- 0.010); the 6-feature "mor" view gets view weight ~0.8,
        # its reconstruction loss being the smallest.
        (SMVSC(n_clusters=10, random_state=0), 0.5, 0.45),
        # Measured: FPMVSCAG ACC 0.367, NMI 0.487 (seeds 0-2: ACC 0.413 +-
        # 0.064), with the same view-weight effect.
        (FPMVSCAG(n_clusters=10, random_state=0), 0.25, 0.3),
    ],
    ids=["SMVSC", "FPMVSCAG"],
)
def test_handwritten_accuracy(estimator, acc_floor, nmi_floor):
    Xs, y = load_handwritten()
    start = time.perf_counter()
    model = estimator.fit(Xs)
    elapsed = time.perf_counter() - start
    acc = clustering_accuracy(y, model.labels_)
    nmi = normalized_mutual_info(y, model.labels_)
    print(f"{type(estimator).__name__} Handwritten: ACC {acc:.3f} NMI {nmi:.3f} {elapsed:.1f} s")
    assert acc > acc_floor and nmi > nmi_floor
    assert np.all(np.diff(model.objective_) <= 1e-10 * model.objective_[0])
