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
