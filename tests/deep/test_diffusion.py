"""Torch side of the two-stage diffusion: the optimal denoiser is learnt, seeding, errors."""

import numpy as np
import pytest
import torch

from mvlearn_ext.deep.diffusion import ConditionalDiffusion, EpsMLP, TwoStageDiffusion
from mvlearn_ext.diffusion import make_toy_tasks, mixture_eps, q_sample

torch.set_num_threads(1)


def test_eps_mlp_shapes():
    net = EpsMLP(2, 1, hidden=(16,), n_tasks=3)
    out = net(torch.zeros(5, 2), torch.rand(5), torch.zeros(5, 1), torch.tensor([0, 1, 2, 0, 1]))
    assert out.shape == (5, 2)


def test_network_approaches_the_analytic_optimal_denoiser():
    # data: a two-component mixture; the DSM minimiser is known in closed form
    rng = np.random.default_rng(0)
    means = np.array([[-1.0, 1.0], [1.0, -1.0]])
    X = means[rng.integers(0, 2, 2000)] + 0.3 * rng.normal(size=(2000, 2))
    C = np.zeros((2000, 1))
    model = ConditionalDiffusion(hidden=(32, 32), n_iter=2400, random_state=0).fit(C, X)
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
    a = ConditionalDiffusion(hidden=(8,), n_iter=20, random_state=0).fit(C, X)
    b = ConditionalDiffusion(hidden=(8,), n_iter=20, random_state=0).fit(C, X)
    c = ConditionalDiffusion(hidden=(8,), n_iter=20, random_state=1).fit(C, X)
    sa = a.sample(C, random_state=0)
    np.testing.assert_array_equal(sa, b.sample(C, random_state=0))
    assert not np.array_equal(sa, c.sample(C, random_state=0))
    assert not np.array_equal(sa, a.sample(C, random_state=1))
    assert a.loss_history_ == b.loss_history_
    # the global torch RNG is left alone
    torch.manual_seed(0)
    x1 = torch.rand(1)
    torch.manual_seed(0)
    ConditionalDiffusion(hidden=(8,), n_iter=5, random_state=0).fit(C, X)
    assert torch.equal(torch.rand(1), x1)


def test_ddim_sampler_is_deterministic_given_the_seed():
    data = make_toy_tasks(n_pairs=16, random_state=0)
    C, X = data.pairs[0]
    m = ConditionalDiffusion(hidden=(8,), n_iter=10, sampler="ddim", random_state=0).fit(C, X)
    np.testing.assert_array_equal(m.sample(C, random_state=2), m.sample(C, random_state=2))


def test_two_stage_pipeline_wiring():
    data = make_toy_tasks(n_pairs=16, n_unpaired=50, random_state=0)
    model = TwoStageDiffusion(
        specialist_hidden=(8,),
        generalist_hidden=(16,),
        specialist_iter=20,
        generalist_iter=20,
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
        specialist_hidden=(8,),
        generalist_hidden=(16,),
        specialist_iter=20,
        generalist_iter=20,
        mix_weight=0.5,
        random_state=0,
    ).fit(data.pairs, data.unpaired)
    np.testing.assert_array_equal(again.pseudo_pairs_[1], Xp)


def test_polynomial_specialists_feed_the_generalist():
    from mvlearn_ext.diffusion import PolynomialGaussian

    data = make_toy_tasks(n_pairs=32, n_unpaired=40, random_state=0)
    model = TwoStageDiffusion(
        specialist="polynomial", generalist_hidden=(8,), generalist_iter=5, random_state=0
    ).fit(data.pairs, data.unpaired)
    assert all(isinstance(s, PolynomialGaussian) for s in model.specialists_)
    Cp, Xp, Tp = model.pseudo_pairs_
    # the pseudo-samples follow the specialists' laws: residuals about their means are small
    for k in range(2):
        r = Xp[Tp == k] - model.specialists_[k].mean(Cp[Tp == k])
        assert r.std() < 3 * data.noise
    with pytest.raises(ValueError, match="specialist must be"):
        TwoStageDiffusion(specialist="gp").fit(data.pairs, data.unpaired)


def test_bad_input_is_named():
    C, X = np.zeros((10, 1)), np.zeros((10, 2))
    with pytest.raises(ValueError, match="tasks is required"):
        ConditionalDiffusion(n_tasks=2, n_iter=1).fit(C, X)
    with pytest.raises(ValueError, match="tasks must lie"):
        ConditionalDiffusion(n_tasks=2, n_iter=1).fit(C, X, tasks=np.full(10, 2))
    with pytest.raises(ValueError, match="X must be"):
        ConditionalDiffusion(n_iter=1).fit(C, np.zeros(10))
    with pytest.raises(ValueError, match="NaN"):
        ConditionalDiffusion(n_iter=1).fit(C, np.full((10, 2), np.nan))
    with pytest.raises(ValueError, match="C has 9 rows"):
        ConditionalDiffusion(n_iter=1).fit(C[:9], X)
    with pytest.raises(ValueError, match="sample_weight"):
        ConditionalDiffusion(n_iter=1).fit(C, X, sample_weight=-np.ones(10))
    with pytest.raises(ValueError, match="hidden"):
        ConditionalDiffusion(hidden=(0,), n_iter=1).fit(C, X)
    with pytest.raises(ValueError, match="sampler"):
        ConditionalDiffusion(sampler="euler", n_iter=1).fit(C, X)
    with pytest.raises(RuntimeError, match="not fitted"):
        ConditionalDiffusion().sample(C)
    m = ConditionalDiffusion(hidden=(4,), n_iter=1).fit(C, X)
    with pytest.raises(ValueError, match="columns"):
        m.sample(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="same tasks"):
        TwoStageDiffusion().fit([(C, X)], [C, C])
    with pytest.raises(TypeError, match="pairs\\[0\\]"):
        TwoStageDiffusion().fit([C], [C])
    with pytest.raises(ValueError, match="mix_weight"):
        TwoStageDiffusion(mix_weight=1.0).fit([(C, X)], [C])


def test_unequal_weights_draw_rows_at_their_share():
    # regression: with mix_weight the 64 real pairs carried ~30x the weight of each of the
    # 4000 pseudo-pairs but were drawn uniformly, so most mini-batches held none of them and
    # the few that did had a huge weighted loss (mu = 0.5 made the generalist ~2x worse
    # than mu = 0). Rows must now be drawn with probability w_i / sum(w).
    from mvlearn_ext.deep.diffusion import _batch_rows, _unequal

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
        generalist_hidden=(8,),
        generalist_iter=1,
        mix_weight=0.25,
        random_state=0,
    ).fit(data.pairs, data.unpaired)
    w = np.asarray(seen["w"])
    assert seen["n"] == 60 + 16  # pseudo-pairs first, then the real pairs
    np.testing.assert_allclose(w[60:].sum() / w.sum(), 0.25)
    np.testing.assert_allclose(w[:30].sum(), w[30:60].sum())  # lambda = (1/2, 1/2)
