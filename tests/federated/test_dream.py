"""DREAM (reconstruction): reductions to SCAFFOLD / MGDA / FMGDA / FedAvg, drift correction."""

import numpy as np
import pytest

from mvlearn_ext.federated import QuadraticFMOL, run_dream
from mvlearn_ext.moo import min_norm_weights


def scaffold_reference(prob, *, rounds, K, lr_l, lr_g):
    """SCAFFOLD option II (Karimireddy et al. 2020), one task, full participation."""
    N, dim = prob.n_clients, prob.dim
    x = np.zeros(dim)
    c = np.zeros(dim)
    ci = np.zeros((N, dim))
    for _ in range(rounds):
        dy, dc = [], []
        for i in range(N):
            y = x.copy()
            for _ in range(K):
                y = y - lr_l * (prob.grad(i, 0, y) - ci[i] + c)
            new = ci[i] - c + (x - y) / (K * lr_l)
            dy.append(y - x)
            dc.append(new - ci[i])
            ci[i] = new
        x = x + lr_g * np.mean(dy, axis=0)
        c = c + np.mean(dc, axis=0)
    return x


def fmgda_reference(prob, *, rounds, K, lr_l, lr_g):
    """FMGDA (Yang et al. 2023): raw per-task local differences, MGDA at the server."""
    x = np.zeros(prob.dim)
    for _ in range(rounds):
        D = np.zeros((prob.n_tasks, prob.dim))
        for s in range(prob.n_tasks):
            for i in range(prob.n_clients):
                y = x.copy()
                for _ in range(K):
                    y = y - lr_l * prob.grad(i, s, y)
                D[s] += (x - y) / prob.n_clients
        lam = min_norm_weights(D)
        x = x - lr_g * lam @ D
    return x


def test_single_task_is_scaffold():
    prob = QuadraticFMOL(n_clients=4, n_tasks=1, dim=3, heterogeneity=1.5, random_state=1)
    K, lr_l, lr_g = 5, 0.02, 0.5
    res = run_dream(
        prob, n_rounds=30, local_steps=K, learning_rate_local=lr_l, learning_rate=lr_g * K * lr_l
    )
    ref = scaffold_reference(prob, rounds=30, K=K, lr_l=lr_l, lr_g=lr_g)
    np.testing.assert_allclose(res.x, ref, rtol=1e-10, atol=1e-12)


def test_no_control_variates_is_fmgda():
    prob = QuadraticFMOL(n_clients=3, n_tasks=3, dim=4, heterogeneity=1.0, random_state=2)
    K, lr_l, lr_g = 4, 0.02, 0.5
    res = run_dream(
        prob,
        n_rounds=20,
        local_steps=K,
        learning_rate_local=lr_l,
        learning_rate=lr_g * K * lr_l,
        control_variates=False,
    )
    ref = fmgda_reference(prob, rounds=20, K=K, lr_l=lr_l, lr_g=lr_g)
    np.testing.assert_allclose(res.x, ref, rtol=1e-8, atol=1e-10)


def test_one_local_step_is_centralised_mgda():
    prob = QuadraticFMOL(n_clients=5, n_tasks=3, dim=4, heterogeneity=2.0, random_state=3)
    res = run_dream(prob, n_rounds=15, local_steps=1, learning_rate_local=0.03, learning_rate=0.1)
    x = np.zeros(prob.dim)
    for _ in range(15):
        G = prob.task_gradients(x)
        x = x - 0.1 * min_norm_weights(G) @ G
    np.testing.assert_allclose(res.x, x, rtol=1e-9, atol=1e-11)


def test_fixed_weights_one_step_is_fedavg_on_scalarised_loss():
    prob = QuadraticFMOL(n_clients=4, n_tasks=2, dim=3, heterogeneity=1.0, random_state=4)
    w = np.array([0.3, 0.7])
    res = run_dream(
        prob,
        n_rounds=25,
        local_steps=1,
        learning_rate_local=0.05,
        learning_rate=0.2,
        control_variates=False,
        aggregation="fixed",
        anchor=w,
    )
    x = np.zeros(prob.dim)
    for _ in range(25):
        x = x - 0.2 * w @ prob.task_gradients(x)
    np.testing.assert_allclose(res.x, x, rtol=1e-10, atol=1e-12)
    # and it converges to the closed-form Pareto point x(w)
    long = run_dream(
        prob,
        n_rounds=3000,
        local_steps=1,
        learning_rate_local=0.05,
        learning_rate=0.1,
        control_variates=False,
        aggregation="fixed",
        anchor=w,
    )
    np.testing.assert_allclose(long.x, prob.pareto_point(w), atol=1e-6)


def test_converges_to_pareto_set_with_one_step():
    prob = QuadraticFMOL(n_clients=4, n_tasks=3, dim=4, heterogeneity=1.0, random_state=5)
    res = run_dream(prob, n_rounds=400, local_steps=1, learning_rate_local=0.05, learning_rate=0.1)
    assert res.stationarity[-1] < 1e-8
    for lam in res.weights:
        assert min(lam) >= 0 and sum(lam) == pytest.approx(1)


def test_drift_correction_removes_heterogeneity_bias():
    # with K > 1, per-task local runs carry a K-dependent bias even without heterogeneity;
    # control variates keep DREAM at that homogeneous level, FMGDA grows with heterogeneity
    K, lr = 10, 0.02
    dist = {}
    for h in (0.0, 2.0):
        prob = QuadraticFMOL(n_clients=8, n_tasks=3, dim=5, heterogeneity=h, random_state=0)
        for name, kw in (("dream", {}), ("fmgda", {"control_variates": False})):
            r = run_dream(
                prob, n_rounds=300, local_steps=K, learning_rate_local=lr, learning_rate=0.1, **kw
            )
            dist[name, h] = np.linalg.norm(r.x - prob.pareto_point(np.array(r.weights[-1])))
    assert dist["dream", 2.0] < 2 * dist["dream", 0.0]
    assert dist["fmgda", 2.0] > 2 * dist["fmgda", 0.0]
    assert dist["dream", 2.0] < dist["fmgda", 2.0]


def test_partial_participation_and_noise_are_seeded():
    prob = QuadraticFMOL(n_clients=6, n_tasks=2, dim=3, noise=0.1, random_state=6)
    a = run_dream(prob, n_rounds=20, participation=0.5, momentum=0.5, random_state=3)
    b = run_dream(prob, n_rounds=20, participation=0.5, momentum=0.5, random_state=3)
    np.testing.assert_array_equal(a.x, b.x)
    c = run_dream(prob, n_rounds=20, participation=0.5, momentum=0.5, random_state=4)
    assert not np.array_equal(a.x, c.x)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda p: p.pareto_point([0.5, np.nan]), ValueError, "^w .*NaN"),
        (lambda p: p.pareto_point(["0.5", "0.5"]), TypeError, "^w .*numeric"),
        (lambda p: p.pareto_point([0.5, 0.5, 0.0]), ValueError, r"^w must have shape \(2,\)"),
        (lambda p: p.task_gradients([0.0, np.inf, 0.0]), ValueError, "^x .*infinity"),
        (lambda p: p.task_gradients([0.0, 1j, 0.0]), ValueError, "^x .*complex"),
        (lambda p: p.pareto_stationarity([0.0, 0.0]), ValueError, r"^x must have shape \(3,\)"),
    ],
)
def test_quadratic_fmol_refuses_unusable_points_and_weights(call, exc, match):
    prob = QuadraticFMOL(n_clients=2, n_tasks=2, dim=3, random_state=0)
    with pytest.raises(exc, match=match):
        call(prob)


# ---- argument checks at entry: errors that name the argument -------------------------


@pytest.fixture
def small_problem():
    return QuadraticFMOL(n_clients=2, n_tasks=2, dim=3, random_state=0)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n_rounds": -1}, ValueError, "n_rounds must be >= 1"),
        ({"n_rounds": 0}, ValueError, "n_rounds must be >= 1"),
        ({"n_rounds": 2.5}, TypeError, "n_rounds must be an int"),
        ({"local_steps": 0}, ValueError, "local_steps must be >= 1"),
        ({"local_steps": 1.5}, TypeError, "local_steps must be an int"),
        ({"x0": np.zeros(2)}, ValueError, r"x0 must have shape \(3,\)"),
        ({"x0": np.zeros((3, 1))}, ValueError, "x0 must be 1-D"),
        ({"x0": [0.0, np.nan, 0.0]}, ValueError, "x0 contains NaN"),
        ({"learning_rate": -1}, ValueError, "learning_rate must be > 0"),
        ({"learning_rate": 0}, ValueError, "learning_rate must be > 0"),
        ({"learning_rate_local": -0.1}, ValueError, "learning_rate_local must be > 0"),
        ({"momentum": 1.5}, ValueError, r"momentum must be in \[0, 1\)"),
        ({"momentum": 1.0}, ValueError, r"momentum must be in \[0, 1\)"),
        ({"momentum": -0.1}, ValueError, r"momentum must be in \[0, 1\)"),
        ({"participation": 0.0}, ValueError, "participation must be > 0"),
        ({"participation": 1.5}, ValueError, "participation must be <= 1"),
        ({"reg_rho": -1.0}, ValueError, "reg_rho must be >= 0"),
        ({"anchor": [1.0, 0.0, 0.0]}, ValueError, r"anchor must have shape \(2,\)"),
        ({"correction": np.eye(3)}, ValueError, r"correction must have shape \(2, 2\)"),
        ({"random_state": -1}, ValueError, "random_state must be >= 0"),
        ({"random_state": "seed"}, TypeError, "random_state must be"),
    ],
)
def test_run_dream_checks_arguments(small_problem, kwargs, error, match):
    kwargs = {"n_rounds": 2, **kwargs}
    with pytest.raises(error, match=match):
        run_dream(small_problem, **kwargs)


def test_run_dream_refuses_other_problems():
    with pytest.raises(TypeError, match="problem must be a QuadraticFMOL"):
        run_dream(object(), n_rounds=2)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n_clients": 0}, ValueError, "n_clients must be >= 1"),
        ({"n_tasks": 0}, ValueError, "n_tasks must be >= 1"),
        ({"dim": 0}, ValueError, "dim must be >= 1"),
        ({"n_clients": 2.5}, TypeError, "n_clients must be an int"),
        ({"noise": -1.0}, ValueError, "noise must be >= 0"),
        ({"heterogeneity": np.inf}, ValueError, "heterogeneity must be finite"),
        ({"random_state": "seed"}, TypeError, "random_state must be"),
    ],
)
def test_quadratic_fmol_checks_arguments(kwargs, error, match):
    kwargs = {"n_clients": 2, "n_tasks": 2, "dim": 3, **kwargs}
    with pytest.raises(error, match=match):
        QuadraticFMOL(**kwargs)


def test_random_state_none_and_generator(small_problem):
    for random_state in (None, np.random.default_rng(0), np.random.RandomState(0)):
        res = run_dream(small_problem, n_rounds=3, random_state=random_state)
        assert res.stationarity.shape == (3,)
        assert np.all(np.isfinite(res.x))
    a = QuadraticFMOL(n_clients=2, n_tasks=2, dim=3, random_state=np.random.default_rng(1))
    b = QuadraticFMOL(n_clients=2, n_tasks=2, dim=3, random_state=1)
    np.testing.assert_array_equal(a.A, b.A)
    assert QuadraticFMOL(n_clients=2, n_tasks=2, dim=3).A.shape == (2, 2, 5, 3)


def test_generator_random_state_is_reproducible():
    prob = QuadraticFMOL(n_clients=4, n_tasks=2, dim=3, noise=0.1, random_state=0)
    kw = {"n_rounds": 5, "participation": 0.5}
    a = run_dream(prob, random_state=np.random.default_rng(7), **kw)
    b = run_dream(prob, random_state=np.random.default_rng(7), **kw)
    np.testing.assert_array_equal(a.x, b.x)
