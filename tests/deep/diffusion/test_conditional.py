"""Torch side of the two-stage diffusion: the optimal denoiser is learnt, seeding, errors."""

import numpy as np
import pytest
import torch
from sklearn.exceptions import NotFittedError

from mvlearn_ext.deep.diffusion import (
    ConditionalDiffusion,
    EpsMLP,
    GaussianDSMDiffusion,
    TwoStageDiffusion,
)
from mvlearn_ext.diffusion import make_toy_tasks, mixture_eps, q_sample

torch.set_num_threads(1)


def test_eps_mlp_shapes():
    net = EpsMLP(2, 1, hidden_layer_sizes=(16,), n_tasks=3)
    out = net(torch.zeros(5, 2), torch.rand(5), torch.zeros(5, 1), torch.tensor([0, 1, 2, 0, 1]))
    assert out.shape == (5, 2)


def test_network_approaches_the_analytic_optimal_denoiser():
    # data: a two-component mixture; the DSM minimiser is known in closed form
    rng = np.random.default_rng(0)
    means = np.array([[-1.0, 1.0], [1.0, -1.0]])
    X = means[rng.integers(0, 2, 2000)] + 0.3 * rng.normal(size=(2000, 2))
    C = np.zeros((2000, 1))
    model = ConditionalDiffusion(hidden_layer_sizes=(32, 32), max_iter=2400, random_state=0).fit(
        C, X
    )
    # the oracle in the model's standardised coordinates (equal scales by symmetry)
    mu_s = (means - model.x_mean_) / model.x_scale_
    var_s = 0.09 / model.x_scale_**2
    assert np.allclose(var_s, var_s[0], rtol=0.05)
    oracle = mixture_eps(mu_s, float(var_s.mean()), model.schedule_)
    Z = (X[:500] - model.x_mean_) / model.x_scale_
    cov = np.cov(Z.T)
    # steps where the noised data are still bimodal (the best Gaussian denoiser is off
    # by 20-45% of the signal there). At t = 0 the noise level is sqrt(1 - ab_0) = 0.045
    # and an error of eps enters the last update scaled by beta_0 / sqrt(1 - ab_0) = 0.045.
    gap, gauss_gap = [], []
    for t in (2, 5, 10):
        ab = model.schedule_.alpha_bars[t]
        xt, _ = q_sample(Z, t, model.schedule_, random_state=t)
        opt = oracle(xt, t)
        net = model.eps_fn(C[:500])(xt, t)
        # the best predictor under a Gaussian fit of the data (linear in x_t)
        lin = np.sqrt(1 - ab) * np.linalg.solve(ab * cov + (1 - ab) * np.eye(2), xt.T).T
        gap.append(np.mean((net - opt) ** 2))
        gauss_gap.append(np.mean((lin - opt) ** 2))
    # the network has learnt the bimodal structure: much closer to the optimum than
    # the best Gaussian denoiser
    assert all(g < 0.5 * h for g, h in zip(gap, gauss_gap, strict=True))


def test_fit_and_sampling_are_seeded():
    data = make_toy_tasks(n_pairs=16, random_state=0)
    C, X = data.pairs[0]
    a = ConditionalDiffusion(hidden_layer_sizes=(8,), max_iter=20, random_state=0).fit(C, X)
    b = ConditionalDiffusion(hidden_layer_sizes=(8,), max_iter=20, random_state=0).fit(C, X)
    c = ConditionalDiffusion(hidden_layer_sizes=(8,), max_iter=20, random_state=1).fit(C, X)
    sa = a.sample(C, random_state=0)
    np.testing.assert_array_equal(sa, b.sample(C, random_state=0))
    assert not np.array_equal(sa, c.sample(C, random_state=0))
    assert not np.array_equal(sa, a.sample(C, random_state=1))
    assert a.loss_curve_ == b.loss_curve_
    # the global torch RNG is left alone
    torch.manual_seed(0)
    x1 = torch.rand(1)
    torch.manual_seed(0)
    ConditionalDiffusion(hidden_layer_sizes=(8,), max_iter=5, random_state=0).fit(C, X)
    assert torch.equal(torch.rand(1), x1)


def test_ddim_sampler_is_deterministic_given_the_seed():
    data = make_toy_tasks(n_pairs=16, random_state=0)
    C, X = data.pairs[0]
    m = ConditionalDiffusion(
        hidden_layer_sizes=(8,), max_iter=10, sampler="ddim", random_state=0
    ).fit(C, X)
    np.testing.assert_array_equal(m.sample(C, random_state=2), m.sample(C, random_state=2))


def test_two_stage_pipeline_wiring():
    data = make_toy_tasks(n_pairs=16, n_unpaired=50, random_state=0)
    model = TwoStageDiffusion(
        hidden_layer_sizes_specialist=(8,),
        hidden_layer_sizes_generalist=(16,),
        max_iter_specialist=20,
        max_iter_generalist=20,
        mix_weight=0.5,
        random_state=0,
    ).fit(data.pairs, data.unpaired)
    Cp, Xp, Tp = model.pseudo_pairs_
    assert np.bincount(Tp).tolist() == [50, 50]
    for k in range(2):
        np.testing.assert_array_equal(np.sort(Cp[Tp == k, 0]), np.sort(data.unpaired[k][:, 0]))
    assert len(model.specialists_) == 2 and model.generalist_.n_tasks == 2
    S = model.sample(data.test[1][:7], 1, random_state=0)
    assert S.shape == (7, 2) and np.isfinite(S).all()
    again = TwoStageDiffusion(
        hidden_layer_sizes_specialist=(8,),
        hidden_layer_sizes_generalist=(16,),
        max_iter_specialist=20,
        max_iter_generalist=20,
        mix_weight=0.5,
        random_state=0,
    ).fit(data.pairs, data.unpaired)
    np.testing.assert_array_equal(again.pseudo_pairs_[1], Xp)


def test_polynomial_specialists_feed_the_generalist():
    from mvlearn_ext.diffusion import PolynomialGaussian

    data = make_toy_tasks(n_pairs=32, n_unpaired=40, random_state=0)
    model = TwoStageDiffusion(
        specialist="polynomial",
        hidden_layer_sizes_generalist=(8,),
        max_iter_generalist=5,
        random_state=0,
    ).fit(data.pairs, data.unpaired)
    assert all(isinstance(s, PolynomialGaussian) for s in model.specialists_)
    Cp, Xp, Tp = model.pseudo_pairs_
    # the pseudo-samples follow the specialists' laws: residuals about their means are small
    for k in range(2):
        r = Xp[Tp == k] - model.specialists_[k].mean(Cp[Tp == k])
        assert r.std() < 3 * data.noise
    with pytest.raises(ValueError, match="'specialist' parameter"):
        TwoStageDiffusion(specialist="gp").fit(data.pairs, data.unpaired)


def test_bad_input_is_named():
    C, X = np.zeros((10, 1)), np.zeros((10, 2))
    with pytest.raises(ValueError, match="tasks is required"):
        ConditionalDiffusion(n_tasks=2, max_iter=1).fit(C, X)
    with pytest.raises(ValueError, match="tasks must lie"):
        ConditionalDiffusion(n_tasks=2, max_iter=1).fit(C, X, tasks=np.full(10, 2))
    with pytest.raises(ValueError, match="X is 1-D"):
        ConditionalDiffusion(max_iter=1).fit(C, np.zeros(10))
    with pytest.raises(ValueError, match="NaN"):
        ConditionalDiffusion(max_iter=1).fit(C, np.full((10, 2), np.nan))
    with pytest.raises(ValueError, match="C has 9 rows"):
        ConditionalDiffusion(max_iter=1).fit(C[:9], X)
    with pytest.raises(ValueError, match="sample_weight"):
        ConditionalDiffusion(max_iter=1).fit(C, X, sample_weight=-np.ones(10))
    with pytest.raises(ValueError, match="hidden"):
        ConditionalDiffusion(hidden_layer_sizes=(0,), max_iter=1).fit(C, X)
    with pytest.raises(ValueError, match="sampler"):
        ConditionalDiffusion(sampler="euler", max_iter=1).fit(C, X)
    with pytest.raises(NotFittedError):
        ConditionalDiffusion().sample(C)
    m = ConditionalDiffusion(hidden_layer_sizes=(4,), max_iter=1).fit(C, X)
    with pytest.raises(ValueError, match="columns"):
        m.sample(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="same tasks"):
        TwoStageDiffusion().fit([(C, X)], [C, C])
    with pytest.raises(TypeError, match="pairs\\[0\\]"):
        TwoStageDiffusion().fit([C], [C])
    with pytest.raises(ValueError, match="mix_weight"):
        TwoStageDiffusion(mix_weight=1.0).fit([(C, X)], [C])


_NOT_REAL = [
    pytest.param(lambda A: A.astype(str), (TypeError, ValueError), "numeric", id="digit-strings"),
    pytest.param(lambda A: A + 1j, ValueError, "complex", id="complex"),
]


@pytest.mark.parametrize("corrupt, error, problem", _NOT_REAL)
def test_strings_and_complex_values_are_refused_by_name(corrupt, error, problem):
    from mvlearn_ext.deep.diffusion import GaussianDSMDiffusion

    rng = np.random.default_rng(0)
    C, X = rng.uniform(-1, 1, (10, 1)), rng.normal(size=(10, 2))
    for est in (ConditionalDiffusion(max_iter=1), GaussianDSMDiffusion(max_iter=1)):
        with pytest.raises(error, match=rf"^C .*{problem}"):
            est.fit(corrupt(C), X)
        with pytest.raises(error, match=rf"^X .*{problem}"):
            est.fit(C, corrupt(X))
    m = ConditionalDiffusion(hidden_layer_sizes=(4,), max_iter=1).fit(C, X)
    with pytest.raises(error, match=rf"^C .*{problem}"):
        m.sample(corrupt(C))
    with pytest.raises(error, match=rf"^C .*{problem}"):
        m.eps_fn(corrupt(C))
    with pytest.raises(error, match=rf"^sample_weight .*{problem}"):
        ConditionalDiffusion(max_iter=1).fit(C, X, sample_weight=corrupt(np.ones(10)))
    with pytest.raises(error, match=rf"^C of pairs\[0\] .*{problem}"):
        TwoStageDiffusion().fit([(corrupt(C), X)], [C])
    with pytest.raises(error, match=rf"^unpaired\[0\] .*{problem}"):
        TwoStageDiffusion().fit([(C, X)], [corrupt(C)])
    two = TwoStageDiffusion(
        specialist="polynomial",
        specialist_degree=1,
        hidden_layer_sizes_generalist=(4,),
        max_iter_generalist=1,
        n_steps=5,
        random_state=0,
    ).fit([(C, X)], [C])
    with pytest.raises(error, match=rf"^C .*{problem}"):
        two.sample(corrupt(C), 0)


def test_infinity_in_the_conditions_is_refused_by_name():
    C, X = np.zeros((10, 1)), np.zeros((10, 2))
    C[3, 0] = np.inf
    with pytest.raises(ValueError, match="C holds NaN or infinite"):
        ConditionalDiffusion(max_iter=1).fit(C, X)
    with pytest.raises(ValueError, match=r"unpaired\[0\] holds NaN or infinite"):
        TwoStageDiffusion().fit([(np.zeros((10, 1)), X)], [C])


def test_unequal_weights_draw_rows_at_their_share():
    # regression: with mix_weight the 64 real pairs carried ~30x the weight of each of the
    # 4000 pseudo-pairs but were drawn uniformly, so most mini-batches held none of them and
    # the few that did had a huge weighted loss (mu = 0.5 made the generalist ~2x worse
    # than mu = 0). Rows must now be drawn with probability w_i / sum(w).
    from mvlearn_ext.deep.diffusion._training import _batch_rows, _unequal

    w = np.r_[np.full(4, 0.5 / 4), np.full(396, 0.5 / 396), np.zeros(100)]
    w = w * (len(w) / w.sum())
    assert _unequal(w) and not _unequal(np.ones(7))
    gen = torch.Generator().manual_seed(0)
    idx = _batch_rows(torch.as_tensor(w, dtype=torch.float32), 20000, gen, True).numpy()
    assert (idx < 400).all()  # zero-weight rows are never drawn
    share = np.mean(idx < 4)
    assert abs(share - 0.5) < 4 * np.sqrt(0.25 / 20000)
    counts = np.bincount(idx[idx < 4], minlength=4)
    assert counts.min() > 0.2 * 20000 / 4
    # equal weights keep uniform draws over all rows
    idx = _batch_rows(torch.ones(10), 5000, gen, False).numpy()
    assert set(idx.tolist()) == set(range(10))


def test_mixed_real_pairs_take_their_share_of_the_loss(monkeypatch):
    import mvlearn_ext.deep.diffusion as mod

    seen = {}
    fit = mod.ConditionalDiffusion.fit

    def spy(self, C, X, tasks=None, sample_weight=None):
        seen["n"], seen["w"] = len(X), sample_weight
        return fit(self, C, X, tasks, sample_weight)

    monkeypatch.setattr(mod.ConditionalDiffusion, "fit", spy)
    data = make_toy_tasks(n_pairs=8, n_unpaired=30, random_state=0)
    TwoStageDiffusion(
        specialist="polynomial",
        specialist_degree=2,
        hidden_layer_sizes_generalist=(8,),
        max_iter_generalist=1,
        mix_weight=0.25,
        random_state=0,
    ).fit(data.pairs, data.unpaired)
    w = np.asarray(seen["w"])
    assert seen["n"] == 60 + 16  # pseudo-pairs first, then the real pairs
    np.testing.assert_allclose(w[60:].sum() / w.sum(), 0.25)
    np.testing.assert_allclose(w[:30].sum(), w[30:60].sum())  # lambda = (1/2, 1/2)


# -- the Gaussian-posterior DSM specialist -----------------------------------------------------


def _poly_gaussian_data(seed, n=400, degree=3):
    from numpy.polynomial import legendre

    rng = np.random.default_rng(seed)
    c = rng.uniform(-1, 1, n)
    Phi = legendre.legvander(c, degree)
    A = rng.normal(size=(degree + 1, 2))
    s2 = np.array([0.05**2, 0.1**2])
    X = Phi @ A + np.sqrt(s2) * rng.normal(size=(n, 2))
    # standard errors of the least-squares coefficients under the true noise
    se = np.sqrt(np.outer(np.diag(np.linalg.inv(Phi.T @ Phi)), s2))
    return c, X, A, s2, se


def test_expected_dsm_loss_is_minimised_by_the_closed_form_fit():
    # For eps(x_t) = sqrt(1-a)(x_t - sqrt(a) mu)/(a v + 1 - a) the per-row loss is quadratic
    # in each noise coordinate, so averaging over eps = +1 and eps = -1 (all coordinates
    # alike) gives the exact expectation over eps ~ N(0, I). Averaged over every step and
    # row, its minimiser must be the least-squares A and the mean squared residual v.
    from numpy.polynomial import legendre

    from mvlearn_ext.deep.diffusion._training import _gaussian_form_eps
    from mvlearn_ext.diffusion import fit_polynomial_gaussian, make_schedule

    c, X, _, _, _ = _poly_gaussian_data(3, n=60, degree=2)
    ref = fit_polynomial_gaussian(c, X, degree=2, domain=(-1, 1), alpha=0.0)
    Phi = torch.as_tensor(legendre.legvander(c, 2))
    Xt = torch.as_tensor(X)
    ab = torch.as_tensor(make_schedule(50).alpha_bars)

    def expected_loss(A, log_v):
        total = 0.0
        for sign in (1.0, -1.0):
            eps = torch.full_like(Xt, sign)
            for a in ab:
                xt = a.sqrt() * Xt + (1 - a).sqrt() * eps
                pred = _gaussian_form_eps(xt, a, Phi @ A, log_v.exp())
                total = total + ((pred - eps) ** 2).mean()
        return total / (2 * len(ab))

    def grad_at(A0, v0):
        A = torch.tensor(A0, requires_grad=True)
        log_v = torch.tensor(np.log(v0), requires_grad=True)
        loss = expected_loss(A, log_v)
        loss.backward()
        return float(loss.detach()), A.grad.numpy(), log_v.grad.numpy()

    v_ref = np.diag(ref.cov[0]).copy()
    loss0, gA, gv = grad_at(ref.coef[0], v_ref)
    _, gA1, gv1 = grad_at(ref.coef[0] + 0.01, 1.2 * v_ref)
    assert np.abs(gA).max() < 1e-8 * np.abs(gA1).max()
    assert np.abs(gv).max() < 1e-8 * np.abs(gv1).max()
    rng = np.random.default_rng(0)
    for _ in range(5):  # and it is a minimum, not a saddle
        dA, dv = 0.02 * rng.normal(size=ref.coef[0].shape), np.exp(0.2 * rng.normal(size=2))
        assert grad_at(ref.coef[0] + dA, v_ref * dv)[0] > loss0


@pytest.fixture(scope="module")
def gaussian_dsm_fit():
    from mvlearn_ext.deep.diffusion import GaussianDSMDiffusion

    c, X, A, s2, se = _poly_gaussian_data(1)
    # large batches and 3000 decayed steps make the optimisation error small next to the
    # statistical error (checked on 6 data x 2 model seeds: at most 0.56 standard errors
    # on A and 3% on s^2 against the closed form; 1500 steps of 128 rows reach 1.15 and 13%)
    m = GaussianDSMDiffusion(
        degree=3, domain=(-1, 1), max_iter=3000, batch_size=1024, random_state=0
    ).fit(c, X)
    return m, c, X, A, s2, se


def test_gaussian_dsm_recovers_mean_and_variance(gaussian_dsm_fit):
    from mvlearn_ext.diffusion import fit_polynomial_gaussian

    m, c, X, A, s2, se = gaussian_dsm_fit
    n = len(c)
    ref = fit_polynomial_gaussian(c, X, degree=3, domain=(-1, 1))
    # the truth within Monte Carlo error of n = 400 samples (|z| < 5 per coefficient)
    assert np.all(np.abs(m.coef_ - A) < 5 * se)
    assert np.all(np.abs(m.var_ / s2 - 1) < 5 * np.sqrt(2 / n))
    # and Adam on the stochastic DSM loss lands at its optimum, the closed-form fit, up to
    # less than one standard error of that fit
    assert np.all(np.abs(m.coef_ - ref.coef[0]) < se)
    assert np.all(np.abs(m.var_ / np.diag(ref.cov[0]) - 1) < np.sqrt(2 / n))
    np.testing.assert_allclose(m.mean(c[:5]), m.polynomial_.mean(c[:5]))


def test_gaussian_dsm_samples_by_reverse_diffusion(gaussian_dsm_fit):
    # the sampler is the DDPM chain driven by the fitted Gaussian-form predictor, so its
    # output law is the propagated chain law (biased at T = 50), not the fitted Gaussian
    from mvlearn_ext.diffusion import gaussian_chain_moments

    m = gaussian_dsm_fit[0]
    N = 20000
    S = m.sample(np.full(N, 0.3), random_state=1)
    mu_std = (m.mean([0.3])[0] - m.x_mean_) / m.x_scale_
    mean0, var0 = gaussian_chain_moments(mu_std, m.var_std_, m.schedule_)
    mean0, var0 = mean0 * m.x_scale_ + m.x_mean_, var0 * m.x_scale_**2
    assert np.all(np.abs(S.mean(0) - mean0) < 5 * np.sqrt(var0 / N))
    assert np.all(np.abs(S.var(0) / var0 - 1) < 5 * np.sqrt(2 / N))
    # the chain's bias is visible at this noise level: not direct draws of N(mu, s^2)
    assert np.all(np.abs(S.var(0) / m.var_ - 1) > 10 * np.sqrt(2 / N))


def test_gaussian_dsm_is_seeded_and_leaves_the_global_rng():
    from mvlearn_ext.deep.diffusion import GaussianDSMDiffusion

    c, X, _, _, _ = _poly_gaussian_data(0, n=50)
    a = GaussianDSMDiffusion(degree=2, max_iter=30, random_state=0).fit(c, X)
    b = GaussianDSMDiffusion(degree=2, max_iter=30, random_state=0).fit(c, X)
    d = GaussianDSMDiffusion(degree=2, max_iter=30, random_state=1).fit(c, X)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, d.coef_)
    np.testing.assert_array_equal(a.sample(c, random_state=0), b.sample(c, random_state=0))
    torch.manual_seed(0)
    x1 = torch.rand(1)
    torch.manual_seed(0)
    GaussianDSMDiffusion(degree=2, max_iter=5, random_state=0).fit(c, X)
    assert torch.equal(torch.rand(1), x1)


def test_gaussian_dsm_bad_input_is_named():
    from mvlearn_ext.deep.diffusion import GaussianDSMDiffusion

    c, X = np.linspace(-1, 1, 10), np.zeros((10, 2))
    with pytest.raises(ValueError, match="degree"):
        GaussianDSMDiffusion(degree=-1).fit(c, X)
    with pytest.raises(ValueError, match="'learning_rate' parameter"):
        GaussianDSMDiffusion(learning_rate=0.0).fit(c, X)
    with pytest.raises(ValueError, match="learning_rate_schedule"):
        GaussianDSMDiffusion(learning_rate_schedule="step").fit(c, X)
    with pytest.raises(ValueError, match="domain"):
        GaussianDSMDiffusion(domain=(1, -1)).fit(c, X)
    with pytest.raises(ValueError, match="C must have shape"):
        GaussianDSMDiffusion().fit(np.zeros((10, 2)), X)
    with pytest.raises(ValueError, match="X contains NaN"):
        GaussianDSMDiffusion().fit(c, np.full((10, 2), np.nan))
    with pytest.raises(NotFittedError):
        GaussianDSMDiffusion().sample(c)
    m = GaussianDSMDiffusion(degree=1, max_iter=2).fit(c, X)
    with pytest.raises(ValueError, match="scalar conditions"):
        m.sample(np.zeros((3, 2)))


def test_gaussian_dsm_specialists_in_the_two_stage_pipeline():
    from mvlearn_ext.deep.diffusion import GaussianDSMDiffusion

    data = make_toy_tasks(n_pairs=32, n_unpaired=40, random_state=0)
    model = TwoStageDiffusion(
        specialist="gaussian_dsm",
        specialist_degree=2,
        max_iter_specialist=300,
        hidden_layer_sizes_generalist=(8,),
        max_iter_generalist=5,
        random_state=0,
    ).fit(data.pairs, data.unpaired)
    assert all(isinstance(s, GaussianDSMDiffusion) for s in model.specialists_)
    assert all(s.degree == 2 and s.max_iter == 300 for s in model.specialists_)
    # one domain for every task: that of all conditions, paired and unpaired
    allc = np.concatenate([c for c, _ in data.pairs] + data.unpaired)[:, 0]
    assert model.specialists_[0].polynomial_.domain == (allc.min(), allc.max())
    Cp, Xp, Tp = model.pseudo_pairs_
    for k in range(2):  # pseudo-samples scatter about the specialist's fitted mean
        spec = model.specialists_[k]
        r = Xp[Tp == k] - spec.mean(Cp[Tp == k])
        assert np.all(np.abs(r.mean(0)) < 5 * np.sqrt(spec.var_ / 40))
        assert np.all((r.std(0) > 0.5 * np.sqrt(spec.var_)) & (r.std(0) < 2 * np.sqrt(spec.var_)))
    with pytest.raises(ValueError, match="scalar conditions"):
        C2 = np.zeros((4, 2))
        TwoStageDiffusion(specialist="gaussian_dsm").fit([(C2, np.zeros((4, 2)))], [C2])


def test_cosine_schedule_and_its_validation():
    from mvlearn_ext.deep.diffusion._training import _cosine_lr

    lrs = [_cosine_lr(1.0, it, 10) for it in range(10)]
    assert lrs[0] == 1.0 and abs(lrs[5] - 0.5) < 1e-12 and 0 < lrs[-1] < 0.03
    assert all(a > b for a, b in zip(lrs, lrs[1:], strict=False))
    C, X = np.zeros((10, 1)), np.zeros((10, 2))
    with pytest.raises(ValueError, match="learning_rate_schedule"):
        ConditionalDiffusion(learning_rate_schedule="linear", max_iter=1).fit(C, X)


def test_reusing_fitted_specialists_equals_a_full_fit():
    data = make_toy_tasks(n_pairs=16, n_unpaired=30, random_state=0)
    kw = dict(
        specialist="gaussian_dsm",
        specialist_degree=2,
        max_iter_specialist=40,
        hidden_layer_sizes_generalist=(8,),
        max_iter_generalist=10,
        mix_weight=0.5,
        random_state=3,
    )
    full = TwoStageDiffusion(**kw).fit(data.pairs, data.unpaired)
    first = TwoStageDiffusion(**{**kw, "mix_weight": 0.0}).fit(data.pairs, data.unpaired)
    reuse = TwoStageDiffusion(**kw).fit(data.pairs, data.unpaired, specialists=first.specialists_)
    assert reuse.specialists_[0] is first.specialists_[0]
    for a, b in zip(full.pseudo_pairs_, reuse.pseudo_pairs_, strict=True):
        np.testing.assert_array_equal(a, b)
    C = data.test[0][:5]
    np.testing.assert_array_equal(
        full.sample(C, 0, random_state=0), reuse.sample(C, 0, random_state=0)
    )
    with pytest.raises(ValueError, match="specialists must be a list of 2"):
        TwoStageDiffusion(**kw).fit(data.pairs, data.unpaired, specialists=first.specialists_[:1])
    with pytest.raises(TypeError, match="sample"):
        TwoStageDiffusion(**kw).fit(data.pairs, data.unpaired, specialists=[1, 2])


# -- scikit-learn estimator contract (the checks that apply to fit(C, X)) -------

_CONTRACT = [
    "check_estimator_cloneable",
    "check_estimator_repr",
    "check_no_attributes_set_in_init",
    "check_parameters_default_constructible",
    "check_get_params_invariance",
    "check_set_params",
    "check_do_not_raise_errors_in_init_or_set_params",
]


def _diffusion_classes():
    from mvlearn_ext.deep.diffusion import GaussianDSMDiffusion

    return [ConditionalDiffusion, GaussianDSMDiffusion, TwoStageDiffusion]


@pytest.mark.parametrize("cls", _diffusion_classes(), ids=lambda c: c.__name__)
@pytest.mark.parametrize("check", _CONTRACT)
def test_sklearn_contract_checks_that_apply(cls, check):
    from sklearn.utils import estimator_checks

    getattr(estimator_checks, check)(cls.__name__, cls())


@pytest.mark.parametrize("cls", _diffusion_classes(), ids=lambda c: c.__name__)
def test_every_parameter_is_constrained_and_clone_keeps_it(cls):
    from sklearn.base import clone

    est = cls(random_state=3)
    assert set(est.get_params()) == set(cls._parameter_constraints)
    assert clone(est).get_params() == est.get_params()
    assert est.set_params(random_state=4) is est and est.random_state == 4


def test_fit_returns_self_and_refit_after_set_params_is_the_fresh_fit():
    from sklearn.base import clone

    from mvlearn_ext.deep.diffusion import GaussianDSMDiffusion

    rng = np.random.default_rng(0)
    C = rng.uniform(-1, 1, (40, 1))
    X = np.hstack([C, C**2]) + 0.05 * rng.normal(size=(40, 2))
    data = make_toy_tasks(n_pairs=8, n_unpaired=10, random_state=0)
    fits = [
        (
            ConditionalDiffusion(hidden_layer_sizes=(4,), max_iter=3, random_state=0),
            (C, X),
            "network_",
        ),
        (GaussianDSMDiffusion(degree=1, max_iter=3, random_state=0), (C, X), "coef_"),
        (
            TwoStageDiffusion(
                specialist="polynomial",
                hidden_layer_sizes_generalist=(4,),
                max_iter_generalist=2,
                random_state=0,
            ),  # fmt: skip
            (data.pairs, data.unpaired),
            "generalist_",
        ),
    ]
    for est, args, attr in fits:
        assert est.fit(*args) is est and hasattr(est, attr)
        fresh = clone(est).set_params(random_state=1).fit(*args)
        again = est.set_params(random_state=1).fit(*args)
        a = fresh.sample(*_sample_args(est, args), random_state=0)
        b = again.sample(*_sample_args(est, args), random_state=0)
        np.testing.assert_array_equal(a, b)


def _sample_args(est, args):
    if isinstance(est, TwoStageDiffusion):
        return (args[1][0], 0)
    return (args[0][:5],)


def test_gaussian_dsm_mean_refuses_conditions_that_overflow():
    from mvlearn_ext.deep.diffusion import GaussianDSMDiffusion

    c, X, _, _, _ = _poly_gaussian_data(0, n=50)
    m = GaussianDSMDiffusion(degree=2, max_iter=5, random_state=0).fit(c, X)
    np.testing.assert_allclose(m.mean(c), m.polynomial_.mean(c), rtol=1e-12)
    with pytest.raises(ValueError, match="C holds conditions too far outside"):
        m.mean(np.asarray(c) * 1e300)
    with pytest.raises(ValueError, match="C"):
        m.mean(np.full(3, np.nan))


@pytest.mark.parametrize("cls", [ConditionalDiffusion, GaussianDSMDiffusion])
def test_sample_takes_the_documented_random_states(cls):
    rng = np.random.default_rng(0)
    C = rng.uniform(-1, 1, (32, 1))
    X = np.hstack([C, 2 * C]) + 0.05 * rng.normal(size=(32, 2))
    extra = dict(degree=1) if cls is GaussianDSMDiffusion else dict(hidden_layer_sizes=(8,))
    model = cls(max_iter=2, n_steps=5, random_state=0, **extra).fit(C, X)
    first = model.sample(C[:3], random_state=np.random.default_rng(1))
    np.testing.assert_array_equal(
        first, model.sample(C[:3], random_state=np.random.default_rng(1))
    )
    gen = np.random.default_rng(1)
    np.testing.assert_array_equal(first, model.sample(C[:3], random_state=gen))
    assert not np.array_equal(first, model.sample(C[:3], random_state=gen))  # advanced
    for bad in (True, 1.5, "0"):
        with pytest.raises(TypeError, match="random_state"):
            model.sample(C[:3], random_state=bad)


def test_eps_fn_refuses_samples_of_another_width():
    rng = np.random.default_rng(0)
    C = rng.uniform(-1, 1, (32, 1))
    X = np.hstack([C, 2 * C])
    model = ConditionalDiffusion(hidden_layer_sizes=(8,), max_iter=1, n_steps=5, random_state=0)
    eps = model.fit(C, X).eps_fn(C[:2])
    assert eps(np.zeros((2, 2)), 0).shape == (2, 2)
    for x in (np.zeros((2, 5)), np.zeros((3, 2)), np.zeros(2)):
        with pytest.raises(ValueError, match=r"x must have shape \(2, 2\)"):
            eps(x, 0)
