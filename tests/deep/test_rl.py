"""The torch GRPO loss: hand-computed values, autograd vs finite differences."""

import math

import numpy as np
import pytest
import torch

from mvlearn_ext.deep.rl import grpo_loss, kl_k3, token_entropy, token_log_probs
from mvlearn_ext.rl import entropy_mask, group_advantages


def test_token_entropy_and_log_probs():
    logits = torch.tensor([[[0.0, 0.0, 0.0, 0.0], [100.0, 0.0, 0.0, 0.0]]], dtype=torch.float64)
    H = token_entropy(logits)
    np.testing.assert_allclose(H.numpy(), [[math.log(4), 0.0]], atol=1e-12)
    lp = token_log_probs(logits, torch.tensor([[1, 0]]))
    np.testing.assert_allclose(lp.numpy(), [[-math.log(4), 0.0]], atol=1e-12)


def test_kl_k3_nonnegative_zero_at_equality_and_unbiased():
    a = torch.linspace(-3, 0, 7, dtype=torch.float64)
    assert (kl_k3(a, a) == 0).all()
    assert (kl_k3(a, a.flip(0)) >= 0).all()
    # unbiased estimate of KL(p || q) when tokens are drawn from p
    p = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64)
    q = torch.tensor([0.2, 0.2, 0.6], dtype=torch.float64)
    expected = float((p * (p / q).log()).sum())
    est = float((p * kl_k3(p.log(), q.log())).sum())
    assert est == pytest.approx(expected, rel=1e-12)


def test_loss_equals_hand_computation():
    # two sequences of two tokens; ratios chosen to hit each clip branch
    lp = torch.log(torch.tensor([[1.5, 0.9], [0.5, 1.1]], dtype=torch.float64))
    old = torch.zeros(2, 2, dtype=torch.float64)
    A = torch.tensor([1.0, -2.0], dtype=torch.float64)
    mask = torch.tensor([[True, True], [True, False]])
    # token losses: -min(rho A, clip(rho) A)
    # seq0 A=1: rho=1.5 -> min(1.5, 1.2)=1.2; rho=0.9 -> 0.9
    # seq1 A=-2: rho=0.5 -> min(-1.0, -1.6)=-1.6; (masked token ignored)
    t = {"00": -1.2, "01": -0.9, "10": 1.6}
    dapo = grpo_loss(lp, old, A, mask, loss_type="dapo")
    assert float(dapo) == pytest.approx((t["00"] + t["01"] + t["10"]) / 3)
    grpo = grpo_loss(lp, old, A, mask, loss_type="grpo")
    assert float(grpo) == pytest.approx(((t["00"] + t["01"]) / 2 + t["10"]) / 2)
    # KL term: beta * ((r - 1) - log r), r = pi_ref / pi, with pi_ref = 1
    ref = torch.zeros(2, 2, dtype=torch.float64)
    pi = torch.tensor([[1.5, 0.9], [0.5, 1.1]], dtype=torch.float64)
    k3 = (1 / pi - 1) - torch.log(1 / pi)
    with_kl, stats = grpo_loss(
        lp, old, A, mask, ref_log_probs=ref, beta=0.1, loss_type="dapo", return_stats=True
    )
    expected = float(dapo) + 0.1 * float((k3[0, 0] + k3[0, 1] + k3[1, 0]) / 3)
    assert float(with_kl) == pytest.approx(expected)
    assert stats["clip_fraction"] == pytest.approx(2 / 3)
    # clip-higher and the ratio clamp
    hi = grpo_loss(lp, old, A, mask, epsilon_high=0.6)
    assert float(hi) == pytest.approx((-1.5 - 0.9 + 1.6) / 3)
    capped = grpo_loss(lp, old, A, mask, epsilon_high=10.0, ratio_max=1.3)
    assert float(capped) == pytest.approx((-1.3 - 0.9 + 1.6) / 3)


def test_gradcheck_against_finite_differences():
    gen = torch.Generator().manual_seed(0)
    old = torch.randn(3, 4, generator=gen, dtype=torch.float64) * 0.1 - 1.0
    ref = torch.randn(3, 4, generator=gen, dtype=torch.float64) * 0.1 - 1.0
    A = torch.tensor([0.7, -1.2, 0.4], dtype=torch.float64)
    mask = torch.rand(3, 4, generator=gen) > 0.2
    # keep ratios away from the clip kinks so the loss is smooth at the point
    lp = (old + torch.tensor([0.05, -0.07, 0.03, 0.5]).to(torch.float64)).requires_grad_(True)
    for loss_type in ("grpo", "dapo"):

        def f(x, loss_type=loss_type):
            return grpo_loss(x, old, A, mask, ref_log_probs=ref, beta=0.05, loss_type=loss_type)

        assert torch.autograd.gradcheck(f, (lp,), eps=1e-6, atol=1e-6)


def test_gradcheck_through_logits():
    gen = torch.Generator().manual_seed(1)
    logits = torch.randn(2, 3, 5, generator=gen, dtype=torch.float64, requires_grad=True)
    tokens = torch.randint(0, 5, (2, 3), generator=gen)
    old = token_log_probs(logits, tokens).detach() + 0.01
    A = torch.tensor([1.0, -1.0], dtype=torch.float64)

    def f(z):
        return grpo_loss(token_log_probs(z, tokens), old, A) + 0.1 * token_entropy(z).mean()

    assert torch.autograd.gradcheck(f, (logits,), eps=1e-6, atol=1e-6)


def test_rho_one_entropy_mask_reproduces_ungated_loss():
    gen = torch.Generator().manual_seed(2)
    logits = torch.randn(4, 6, 7, generator=gen, dtype=torch.float64)
    tokens = torch.randint(0, 7, (4, 6), generator=gen)
    valid = torch.ones(4, 6, dtype=torch.bool)
    valid[1, 4:] = False
    lp = token_log_probs(logits, tokens)
    A = torch.from_numpy(group_advantages(np.array([[1.0, 0.0, 2.0, 0.5]]))[0])
    H = token_entropy(logits).numpy()
    old = lp.detach() - 0.1 * torch.rand(4, 6, generator=gen, dtype=torch.float64)
    full = entropy_mask(H, valid.numpy(), rho=1.0)
    l_full = grpo_loss(lp, old, A, torch.from_numpy(full), loss_type="grpo")
    l_valid = grpo_loss(lp, old, A, valid, loss_type="grpo")
    assert float(l_full) == pytest.approx(float(l_valid))
    gated = entropy_mask(H, valid.numpy(), rho=0.2)
    l_gated = grpo_loss(lp, old, A, torch.from_numpy(gated), loss_type="grpo")
    assert float(l_gated) != pytest.approx(float(l_full))


def test_zero_advantage_zero_gradient():
    lp = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    grpo_loss(lp, lp.detach(), torch.zeros(2, dtype=torch.float64)).backward()
    assert (lp.grad == 0).all()


def test_errors():
    lp = torch.zeros(2, 3)
    with pytest.raises(ValueError, match="loss_type"):
        grpo_loss(lp, lp, torch.zeros(2), loss_type="ppo")
    with pytest.raises(ValueError, match="ref_log_probs"):
        grpo_loss(lp, lp, torch.zeros(2), beta=0.1)
    with pytest.raises(ValueError, match="advantages"):
        grpo_loss(lp, lp, torch.zeros(3))
    with pytest.raises(ValueError, match="old_log_probs"):
        grpo_loss(lp, torch.zeros(2, 4), torch.zeros(2))
    with pytest.raises(ValueError, match="mask"):
        grpo_loss(lp, lp, torch.zeros(2), torch.ones(3, 3, dtype=torch.bool))
