"""MOPO's torch loss: its tabular minimiser is the closed-form MOPO policy."""

import numpy as np
import torch

from mvlearn_ext.deep.moo import mopo_preference_loss
from mvlearn_ext.moo.mopo import make_preferences, mopo_policy


def test_tabular_minimiser_is_closed_form():
    torch.manual_seed(0)
    P = make_preferences("conflicting", n_arms=5, n_objectives=2, random_state=1)
    rng = np.random.default_rng(1)
    mu = rng.dirichlet(np.ones(5) * 3)
    ref = rng.dirichlet(np.ones(5) * 3)
    lam, tau = 0.6, 0.5
    # every ordered pair, weighted by mu(y) mu(y'), with expected labels p_k(y > y')
    yy, zz = np.meshgrid(np.arange(5), np.arange(5), indexing="ij")
    yy, zz = yy.ravel(), zz.ravel()
    pair_w = torch.tensor(mu[yy] * mu[zz])
    labels = torch.tensor(np.stack([P[0][yy, zz], P[1][yy, zz]], 1))
    logits = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    ref_lp = torch.tensor(np.log(ref))
    opt = torch.optim.LBFGS([logits], max_iter=500, tolerance_grad=1e-12, tolerance_change=1e-14)

    def closure():
        opt.zero_grad()
        lp = torch.log_softmax(logits, 0)
        # weighted mean = loss on pairs drawn from mu x mu
        per = [
            mopo_preference_loss(
                lp[yy[i : i + 1]],
                lp[zz[i : i + 1]],
                ref_lp[yy[i : i + 1]],
                ref_lp[zz[i : i + 1]],
                labels[i : i + 1],
                [1.0, lam],
                tau=tau,
            )
            for i in range(len(yy))
        ]
        loss = (torch.stack(per) * pair_w).sum()
        loss.backward()
        return loss

    opt.step(closure)
    pi = torch.softmax(logits, 0).detach().numpy()
    np.testing.assert_allclose(pi, mopo_policy(P, [lam], tau=tau, mu=mu, pi_ref=ref), atol=1e-6)


def test_k1_is_ipo_and_errors():
    lp, lo = torch.tensor([0.3]), torch.tensor([-0.2])
    z = torch.zeros(1)
    loss = mopo_preference_loss(lp, lo, z, z, torch.ones(1, 1), [1.0], tau=0.25)
    assert torch.isclose(loss, (0.5 - 1 / (2 * 0.25)) ** 2 * torch.ones(()))
    import pytest

    with pytest.raises(ValueError, match="tau"):
        mopo_preference_loss(lp, lo, z, z, torch.ones(1, 1), [1.0], tau=0.0)
    with pytest.raises(ValueError, match="weights must have"):
        mopo_preference_loss(lp, lo, z, z, torch.ones(1, 2), [1.0], tau=1.0)
