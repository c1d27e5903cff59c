"""Scalarisation, pseudo-pairs, the polynomial-Gaussian oracle, toy tasks and metrics."""

from math import comb

import numpy as np
import pytest

from mvlearn_ext.diffusion import (
    conditional_mean_error,
    energy_distance,
    evaluate_toy_sampler,
    fit_polynomial_gaussian,
    make_pseudo_pairs,
    make_toy_tasks,
    scalarize,
    simplex_weights,
    stack_pairs,
    task_sample_weights,
    toy_task_mean,
    two_stage_polynomial,
)


@pytest.mark.parametrize("K, m", [(2, 11), (3, 5)])
def test_simplex_weights(K, m):
    W = simplex_weights(K, m)
    assert W.shape == (comb(m - 1 + K - 1, K - 1), K)
    np.testing.assert_allclose(W.sum(1), 1.0)
    assert (W >= 0).all()
    assert len({tuple(r) for r in W}) == W.shape[0]


def test_scalarize_and_task_weights_give_the_scalarised_loss():
    assert scalarize([1.0, 3.0], [0.25, 0.75]) == pytest.approx(2.5)
    with pytest.raises(ValueError, match="sum to 1"):
        scalarize([1.0, 3.0], [0.5, 0.6])
    rng = np.random.default_rng(0)
    tasks = np.repeat([0, 1, 2], [5, 20, 75])
    losses = rng.normal(size=100) ** 2
    lam = np.array([0.2, 0.5, 0.3])
    w = task_sample_weights(tasks, lam)
    per_task = [losses[tasks == k].mean() for k in range(3)]
    assert np.mean(w * losses) == pytest.approx(scalarize(per_task, lam))


def test_lambda_sweep_traces_a_monotone_front():
    # one shared model for two linear-Gaussian tasks: the trade-off is real
    rng = np.random.default_rng(0)
    c = rng.uniform(-1, 1, 200)
    tasks = np.repeat([0, 1], 100)
    X = np.where(tasks[:, None] == 0, 2 * c[:, None], -c[:, None] + 0.5)
    X = X + 0.1 * rng.normal(size=X.shape)
    L = []
    for lam in simplex_weights(2, 11):
        m = fit_polynomial_gaussian(c, X, degree=1, sample_weight=task_sample_weights(tasks, lam))
        r = ((m.mean(c) - X) ** 2).sum(1)
        L.append([r[tasks == 0].mean(), r[tasks == 1].mean()])
    L = np.array(L)  # lambda_1 increases along the rows
    assert (np.diff(L[:, 0]) <= 1e-10).all() and (np.diff(L[:, 1]) >= -1e-10).all()
    assert L[0, 0] > L[-1, 0] and L[-1, 1] > L[0, 1]


def test_pseudo_pairs_are_seeded_and_respect_each_pool():
    pools = [np.linspace(0, 1, 7)[:, None], np.linspace(5, 6, 4)[:, None]]
    samplers = [
        lambda C, seed: C + np.random.default_rng(seed).normal(size=C.shape),
        lambda C, seed: -C + np.random.default_rng(seed).normal(size=C.shape),
    ]
    C, X, T = make_pseudo_pairs(samplers, pools, n_per_condition=3, random_state=0)
    C2, X2, T2 = make_pseudo_pairs(samplers, pools, n_per_condition=3, random_state=0)
    _, X3, _ = make_pseudo_pairs(samplers, pools, n_per_condition=3, random_state=1)
    np.testing.assert_array_equal(X, X2)
    assert not np.array_equal(X, X3)
    assert np.bincount(T).tolist() == [21, 12]
    for k in range(2):
        assert set(C[T == k, 0]) == set(pools[k][:, 0])
        assert all(np.sum(C[T == k, 0] == c) == 3 for c in pools[k][:, 0])
    with pytest.raises(ValueError, match="samplers"):
        make_pseudo_pairs(samplers[:1], pools)
    with pytest.raises(ValueError, match="returned shape"):
        make_pseudo_pairs([lambda C, s: C[:1], samplers[1]], pools)


def test_polynomial_gaussian_recovers_a_polynomial_and_its_noise():
    rng = np.random.default_rng(0)
    c = rng.uniform(-2, 2, 4000)
    mean = np.column_stack([1 - c + 0.5 * c**3, c**2])
    cov = np.array([[0.04, 0.01], [0.01, 0.09]])
    X = mean + rng.multivariate_normal([0, 0], cov, size=c.size)
    m = fit_polynomial_gaussian(c, X, degree=3)
    grid = np.linspace(-2, 2, 9)
    truth = np.column_stack([1 - grid + 0.5 * grid**3, grid**2])
    np.testing.assert_allclose(m.mean(grid), truth, atol=0.03)
    np.testing.assert_allclose(m.cov[0], cov, atol=0.008)
    S = m.sample(np.zeros(20000), random_state=0)
    np.testing.assert_allclose(np.cov(S.T), cov, atol=0.005)


def _error(data, mean_of_task):
    return np.mean(
        [
            ((mean_of_task(k, data.test[k]) - data.mean(k, data.test[k])) ** 2).sum(1).mean()
            for k in range(len(data.names))
        ]
    )


def _pooled(data):
    C = np.vstack([C for C, _ in data.pairs])
    X = np.vstack([X for _, X in data.pairs])
    T = np.concatenate([np.full(len(C), k) for k, (C, _) in enumerate(data.pairs)])
    return C, X, T


def test_two_stage_oracle_beats_the_labelled_only_generalist():
    errs = {"two-stage": [], "labelled-only": [], "specialists": []}
    for seed in range(5):
        data = make_toy_tasks(random_state=seed)
        g, specs = two_stage_polynomial(data.pairs, data.unpaired, random_state=seed)
        C, X, T = _pooled(data)
        base = fit_polynomial_gaussian(C, X, degree=g.degree, tasks=T, domain=g.domain)
        errs["two-stage"].append(_error(data, lambda k, c, g=g: g.mean(c, k)))
        errs["labelled-only"].append(_error(data, lambda k, c, b=base: b.mean(c, k)))
        errs["specialists"].append(_error(data, lambda k, c, s=specs: s[k].mean(c)))
    m = {k: np.mean(v) for k, v in errs.items()}
    assert m["two-stage"] < m["labelled-only"]
    assert m["two-stage"] < 1.5 * m["specialists"]
    # with enough pairs the generalist needs no specialists: the advantage is a small-n effect
    data = make_toy_tasks(n_pairs=2000, random_state=0)
    big = fit_polynomial_gaussian(*_pooled(data)[:2], degree=12, tasks=_pooled(data)[2])
    assert _error(data, lambda k, c: big.mean(c, k)) < m["specialists"]


def test_toy_tasks_are_seeded_and_follow_their_means():
    a = make_toy_tasks(n_pairs=500, random_state=0)
    b = make_toy_tasks(n_pairs=500, random_state=0)
    np.testing.assert_array_equal(a.pairs[1][1], b.pairs[1][1])
    for k, name in enumerate(a.names):
        C, X = a.pairs[k]
        R = X - toy_task_mean(name, C)
        assert abs(R.std() / 0.05 - 1) < 0.1
        assert (C >= -1.5).all() and (C <= 1.5).all()
    with pytest.raises(ValueError, match="unknown task"):
        make_toy_tasks(tasks=("sine", "circle"))
    with pytest.raises(TypeError, match="sequence"):
        make_toy_tasks(tasks="sine")
    with pytest.raises(ValueError, match="n_pairs"):
        make_toy_tasks(n_pairs=0)
    with pytest.raises(ValueError, match="noise"):
        make_toy_tasks(noise=0.0)


def test_metrics():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(50, 2))
    assert conditional_mean_error(np.repeat(M[:, None], 4, 1), M) == 0.0
    assert conditional_mean_error(np.repeat(M[:, None] + 0.1, 4, 1), M) == pytest.approx(0.02)
    A, B = rng.normal(size=(400, 2)), rng.normal(size=(400, 2))
    assert abs(energy_distance(A, B)) < 0.05
    assert energy_distance(A, B + 1.0) > 0.5
    with pytest.raises(ValueError, match="3-D"):
        conditional_mean_error(M, M)
    with pytest.raises(ValueError, match="equal width"):
        energy_distance(A, B[:, :1])


def test_fit_bad_input_is_named():
    with pytest.raises(ValueError, match="scalar conditions"):
        fit_polynomial_gaussian(np.zeros((5, 2)), np.zeros((5, 2)))
    with pytest.raises(ValueError, match="X must have shape"):
        fit_polynomial_gaussian(np.zeros(5), np.zeros((4, 2)))
    with pytest.raises(ValueError, match="degree"):
        fit_polynomial_gaussian(np.arange(5.0), np.zeros((5, 2)), degree=-1)
    with pytest.raises(ValueError, match="task 1"):
        fit_polynomial_gaussian(
            np.arange(5.0), np.zeros((5, 2)), tasks=np.zeros(5, int), n_tasks=2
        )
    m = fit_polynomial_gaussian(np.arange(5.0), np.ones((5, 2)), tasks=[0, 1, 0, 1, 0])
    with pytest.raises(ValueError, match="tasks is required"):
        m.mean(np.arange(3.0))
    with pytest.raises(ValueError, match="mix_weight"):
        two_stage_polynomial([(np.zeros(3), np.zeros((3, 2)))], [np.zeros(3)], mix_weight=1.0)


def test_evaluate_toy_sampler_covers_every_held_out_condition():
    """A model exact on the first quarter of the held-out conditions and shifted by 0.5 on the
    rest scores 3/4 * 0.25 on the mean error and far worse than the exact model on the energy
    distance, which therefore sees every condition (its rows are grouped by condition)."""
    data = make_toy_tasks(n_pairs=4, n_unpaired=1, n_test=256, random_state=0)
    first = {k: {float(c) for c in data.test[k][:64, 0]} for k in range(2)}

    def exact(k, C, seed):
        return data.sample(k, C, random_state=seed)

    def wrong_after_first_quarter(k, C, seed):
        shift = np.array([0.0 if float(c) in first[k] else 1.0 for c in C[:, 0]])
        return data.sample(k, C, random_state=seed) + shift[:, None] * np.array([0.0, 0.5])

    err0, ed0 = evaluate_toy_sampler(data, exact, random_state=0)
    err1, ed1 = evaluate_toy_sampler(data, wrong_after_first_quarter, random_state=0)
    noise = 2 * data.noise**2 / 16  # Monte Carlo variance of a 16-draw mean
    assert err0 == pytest.approx(noise, rel=0.3)
    assert err1 == pytest.approx(0.75 * 0.25 + noise, rel=0.05)
    assert ed1 > 10 * max(ed0, 1e-3)
    # an exact mean replaces the Monte Carlo one
    assert evaluate_toy_sampler(data, exact, data.mean, random_state=0)[0] == 0.0


def test_evaluate_toy_sampler_bad_input_is_named():
    data = make_toy_tasks(n_pairs=4, n_unpaired=1, n_test=8, random_state=0)

    def exact(k, C, seed):
        return data.sample(k, C, random_state=seed)

    with pytest.raises(TypeError, match="data"):
        evaluate_toy_sampler(data.pairs, exact)
    with pytest.raises(TypeError, match="sample"):
        evaluate_toy_sampler(data, None)
    with pytest.raises(TypeError, match="mean"):
        evaluate_toy_sampler(data, exact, mean=1.0)
    with pytest.raises(ValueError, match="n_draws"):
        evaluate_toy_sampler(data, exact, n_draws=0)
    with pytest.raises(TypeError, match="random_state"):
        evaluate_toy_sampler(data, exact, random_state=None)
    with pytest.raises(ValueError, match="sample returned shape"):
        evaluate_toy_sampler(data, lambda k, C, seed: exact(k, C, seed)[:, :1])


def test_stack_pairs_keeps_every_row_with_its_task():
    rng = np.random.default_rng(0)
    pairs = [
        (rng.normal(size=3), rng.normal(size=(3, 2))),
        (rng.normal(size=(2, 1)), rng.normal(size=(2, 2))),
    ]
    C, X, tasks = stack_pairs(pairs)
    np.testing.assert_array_equal(C[:, 0], np.concatenate([pairs[0][0], pairs[1][0][:, 0]]))
    np.testing.assert_array_equal(X, np.vstack([pairs[0][1], pairs[1][1]]))
    assert tasks.tolist() == [0, 0, 0, 1, 1] and C.shape == (5, 1)
    with pytest.raises(ValueError, match="3 conditions but 2 samples"):
        stack_pairs([(np.zeros(3), np.zeros((2, 2)))])
    with pytest.raises(ValueError, match="non-empty list"):
        stack_pairs([])


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda bad: scalarize(bad[0], [0.5, 0.5]), "losses"),
        (lambda bad: scalarize([1.0, 3.0], bad[0]), "weights"),
        (lambda bad: fit_polynomial_gaussian(bad[:, 0], np.ones((2, 1))), "C"),
        (lambda bad: fit_polynomial_gaussian([0.0, 1.0], bad), "X"),
        (lambda bad: make_pseudo_pairs([np.asarray], [bad]), r"condition_pools\[0\]"),
        (lambda bad: toy_task_mean("sine", bad[0]), "c"),
        (lambda bad: conditional_mean_error(bad[None], np.ones((1, 2))), "samples"),
        (lambda bad: conditional_mean_error(np.ones((2, 2, 2)), bad), "true_means"),
        (lambda bad: energy_distance(bad, np.ones((2, 2))), "X"),
        (lambda bad: energy_distance(np.ones((2, 2)), bad), "Y"),
    ],
)
@pytest.mark.parametrize(
    "corrupt, exc",
    [(lambda A: A.astype(str), TypeError), (lambda A: A + 1j, ValueError)],
    ids=["str", "complex"],
)
def test_unusable_arrays_are_refused_by_name(call, name, corrupt, exc):
    with pytest.raises(exc, match=rf"^{name} "):
        call(corrupt(np.ones((2, 2))))


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda big: energy_distance(big, np.ones((3, 2))), "X"),
        (lambda big: conditional_mean_error(big[None], np.ones((1, 2))), "samples"),
        (lambda big: toy_task_mean("parabola", big[:, 0]), "c"),
        (lambda big: fit_polynomial_gaussian([0.0, 1.0, 2.0], big), "X"),
    ],
)
def test_values_too_large_to_square_are_refused(call, name):
    with pytest.raises(ValueError, match=f"{name} holds values too large"):
        call(np.full((3, 2), 1e300))


def test_task_ids_are_checked_by_name():
    with pytest.raises(ValueError, match="tasks must hold whole numbers"):
        task_sample_weights([0.0, 1.5])
    with pytest.raises(ValueError, match="tasks must be >= 0"):
        task_sample_weights([0, -1])
    with pytest.raises(TypeError, match="tasks must be an array of integers"):
        task_sample_weights([[0], [1, 2]])


def test_toy_task_mean_refuses_conditions_whose_mean_overflows():
    assert np.all(np.isfinite(toy_task_mean("cubic", [1e100, -1.0])))
    with pytest.raises(ValueError, match=r"the cubic mean overflows float64 .* rescale c"):
        toy_task_mean("cubic", [1e120, 0.0])


@pytest.mark.parametrize("unit", [1e-200, 2.0**-700, 1e-3, 1e150])
def test_energy_distance_is_in_the_units_of_the_data(unit):
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(40, 2)), rng.normal(size=(30, 2)) + 0.5
    ref = energy_distance(A, B)
    assert ref > 0.1
    assert energy_distance(A * unit, B * unit) == pytest.approx(ref * unit, rel=1e-12, abs=0)


@pytest.mark.parametrize("unit", [1e-10, 1e10, 2.0**-300])
def test_polynomial_gaussian_samples_scale_with_the_data(unit):
    # The same draws in any unit of X: the factorisation's jitter is relative to the
    # task's variance (an absolute one swamped covariances of order 1e-20).
    rng = np.random.default_rng(0)
    C = rng.uniform(0.0, 1.0, 300)
    X = np.column_stack([np.sin(3 * C), C**2]) + 0.1 * rng.standard_normal((300, 2))
    plain = fit_polynomial_gaussian(C, X)
    scaled = fit_polynomial_gaussian(C, X * unit)
    noise = plain.sample(C, random_state=0) - plain.mean(C)
    np.testing.assert_allclose(
        (scaled.sample(C, random_state=0) - scaled.mean(C)) / unit, noise, rtol=1e-9, atol=1e-12
    )


def test_polynomial_gaussian_task_without_variance_samples_its_mean():
    C = np.linspace(0.0, 1.0, 50)
    model = fit_polynomial_gaussian(C, np.column_stack([C, np.sin(C)]))
    model.cov[:] = 0.0  # a task whose samples are exactly its mean
    np.testing.assert_array_equal(model.sample(C, random_state=0), model.mean(C))
