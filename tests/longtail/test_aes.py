"""AES (torch): ARS reductions, real PCGrad projection, label-free fusion, the estimator."""

import inspect

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from mvlearn_ext.longtail import (
    AESClassifier,
    ARSLoss,
    BalancedSoftmaxLoss,
    EntropyPCGrad,
    FusionModule,
    LogitAdjustedLoss,
    combine_gradients,
    pcgrad_project,
)

COUNTS = np.array([60, 30, 12, 5])


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """Tiny models: one intra-op thread is much faster on a shared machine."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def _batch(seed=0, n=32, c=4):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, c, generator=gen, dtype=torch.float64), torch.randint(
        0, c, (n,), generator=gen
    )


PLAIN = dict(
    n_epochs_reweight=1,
    focal=False,
    label_smoothing=False,
    margin_max=0.0,
    base_temperature=1.0,
    rarity_temperature=False,
    hard_negative_weight=0.0,
)


def test_ars_reduces_to_cross_entropy_exactly():
    z, y = _batch()
    loss = ARSLoss(COUNTS, **PLAIN)
    loss.set_epoch(0)  # anneal t = 0: uniform weights, no prior term
    torch.testing.assert_close(loss(z, y), F.cross_entropy(z, y), rtol=1e-12, atol=1e-12)
    # a second call after the statistics update still equals CE (t = 0)
    torch.testing.assert_close(loss(z, y), F.cross_entropy(z, y), rtol=1e-12, atol=1e-12)


def test_ars_with_the_prior_term_and_uniform_weights_is_la_ce():
    z, y = _batch(1)
    loss = ARSLoss(COUNTS, reweight=False, prior_scale=1.0, **PLAIN)
    torch.testing.assert_close(loss(z, y), LogitAdjustedLoss(COUNTS)(z, y), rtol=1e-12, atol=1e-12)
    log_prior = torch.log(torch.as_tensor(COUNTS / COUNTS.sum()))
    torch.testing.assert_close(loss(z, y), F.cross_entropy(z + log_prior, y))


def test_balanced_softmax_is_ce_on_shifted_logits():
    z, y = _batch(2)
    torch.testing.assert_close(
        BalancedSoftmaxLoss(COUNTS)(z, y),
        F.cross_entropy(z + torch.log(torch.as_tensor(COUNTS, dtype=z.dtype)), y),
    )


def test_ars_full_loss_is_finite_differentiable_and_updates_statistics():
    z, y = _batch(3)
    z.requires_grad_(True)
    loss = ARSLoss(COUNTS)
    loss.set_epoch(8)
    value = loss(z, y)
    value.backward()
    assert torch.isfinite(value) and torch.isfinite(z.grad).all()
    assert (loss.recall > 0).any() and torch.all(loss.precision() <= 1)
    loss.eval()
    before = loss.recall.clone()
    loss(z.detach(), y)
    torch.testing.assert_close(loss.recall, before)  # no update in eval mode
    w = loss.class_weights()
    assert w.mean().item() == pytest.approx(1.0)


def _two_task_problem():
    torch.manual_seed(0)
    shared = torch.nn.Parameter(0.1 * torch.randn(5, dtype=torch.float64))
    head_a = torch.nn.Parameter(torch.randn(3, dtype=torch.float64))
    head_b = torch.nn.Parameter(torch.randn(3, dtype=torch.float64))
    target_a = torch.randn(5, dtype=torch.float64)
    target_b = -target_a + 0.5 * torch.randn(5, dtype=torch.float64)  # mostly opposed

    def losses():
        la = ((shared - target_a) ** 2).sum() + 0.1 * (head_a**2).sum() * shared.sum()
        lb = ((shared - target_b) ** 2).sum() + (head_b**3).sum()
        return [la, lb]

    return [shared, head_a, head_b], losses


def _flat_grads(params, loss):
    grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
    return torch.cat(
        [
            (torch.zeros_like(p) if g is None else g).reshape(-1)
            for p, g in zip(params, grads, strict=True)
        ]
    )


def test_pcgrad_mode_really_projects():
    params, losses = _two_task_problem()
    la, lb = losses()
    G = torch.stack([_flat_grads(params, la), _flat_grads(params, lb)]).numpy()
    assert G[0] @ G[1] < 0  # the tasks conflict
    combiner = EntropyPCGrad(params, mode="pcgrad", reduction="sum", random_state=0)
    combiner.backward(losses())
    got = torch.cat([p.grad.reshape(-1) for p in params]).numpy()
    proj = pcgrad_project(G, random_state=np.random.default_rng(0))
    np.testing.assert_allclose(got, proj.sum(axis=0), rtol=1e-10)
    np.testing.assert_allclose(proj[0] @ G[1], 0.0, atol=1e-10)  # conflicting component removed
    assert not np.allclose(got, G.sum(axis=0))  # a plain sum would differ


def test_entropy_weighted_mode_gives_single_owner_coordinates_their_own_gradient():
    params, losses = _two_task_problem()
    la, lb = losses()
    ga, gb = _flat_grads(params, la).numpy(), _flat_grads(params, lb).numpy()
    combiner = EntropyPCGrad(params, mode="entropy_weighted")
    weights = combiner.backward(losses())
    assert weights.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(params[1].grad.numpy(), ga[5:8])  # head_a: task a only
    np.testing.assert_allclose(params[2].grad.numpy(), gb[8:11])  # head_b: task b only
    masks = np.zeros((2, 11), dtype=bool)
    masks[:, :5] = True
    masks[0, 5:8] = True
    masks[1, 8:11] = True
    ref, _ = combine_gradients(np.stack([ga, gb]), masks, mode="entropy_weighted")
    np.testing.assert_allclose(torch.cat([p.grad.reshape(-1) for p in params]).numpy(), ref)


def test_fusion_module_is_label_free():
    assert list(inspect.signature(FusionModule.forward).parameters) == ["self", "head_logits"]
    assert list(inspect.signature(AESClassifier.predict).parameters) == ["self", "X"]
    rng = np.random.default_rng(0)
    val = torch.as_tensor(rng.normal(size=(3, 40, 4)))
    module = FusionModule(COUNTS, tail_threshold=10).fit(val, rng.integers(0, 4, 40))
    test = torch.as_tensor(rng.normal(size=(3, 20, 4)))
    pred = module(test)
    np.testing.assert_array_equal(pred.numpy(), module.fusion.predict(test.numpy()))
    np.testing.assert_array_equal(module(list(test)).numpy(), pred.numpy())


def _long_tail_data(seed=0):
    from sklearn.datasets import load_digits

    from mvlearn_ext.longtail import make_long_tail_indices

    X, y = load_digits(return_X_y=True)
    idx = make_long_tail_indices(y, 10, n_max=60, random_state=seed)
    return X[idx] / 16.0, y[idx]


def test_aes_classifier_fits_predicts_and_is_reproducible():
    X, y = _long_tail_data()
    params = dict(n_epochs_stage1=3, n_epochs_stage2=2, random_state=0)
    a = AESClassifier(**params).fit(X, y + 10)
    b = AESClassifier(**params).fit(X, y + 10)
    pred = a.predict(X[:30])
    assert set(pred) <= set(range(10, 20))
    np.testing.assert_array_equal(pred, b.predict(X[:30]))
    assert a.decision_function_heads(X[:5]).shape == (4, 5, 10)
    np.testing.assert_allclose(a.soft_fusion_proba(X[:5]).sum(axis=1), 1.0, rtol=1e-6)
    assert a.combiner_weights_.sum() == pytest.approx(1.0)
    assert a.predict_head(X[:5], "ars").shape == (5,)
    np.testing.assert_array_equal(a.predict_head(X[:5], -1), a.predict_head(X[:5], "ars"))
    with pytest.raises(ValueError, match="head must be one of"):
        a.predict_head(X[:5], "focal")
    with pytest.raises(ValueError, match="head must be the index"):
        a.predict_head(X[:5], 4)
    with pytest.raises(TypeError, match="head_logits must be a tensor"):
        a.fusion_.predict_proba(a.decision_function_heads(X[:5]))
    with pytest.raises(ValueError, match="heads entries"):
        AESClassifier(heads=("ce", "focal"), n_epochs_stage1=1, n_epochs_stage2=1).fit(X, y)


def test_aes_predict_before_fit_raises():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        AESClassifier().predict(np.zeros((2, 64)))


@pytest.mark.slow
def test_long_tail_digits_demo_acceptance():
    """AES raises the few-class accuracy above its CE head's (imbalance 20, balanced test set)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    from mvlearn_ext.longtail import group_accuracy, make_long_tail_indices

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    few_aes, few_ce = [], []
    for seed in range(2):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.4, stratify=y, random_state=seed)
        idx = make_long_tail_indices(ytr, 20, n_max=100, random_state=seed)
        clf = AESClassifier(random_state=seed).fit(Xtr[idx], ytr[idx])
        counts = np.bincount(ytr[idx])
        few_aes.append(
            group_accuracy(yte, clf.predict(Xte), counts, many_threshold=40, few_threshold=12)[
                "few"
            ]
        )
        few_ce.append(
            group_accuracy(
                yte, clf.predict_head(Xte, "ce"), counts, many_threshold=40, few_threshold=12
            )["few"]
        )
    assert np.mean(few_aes) > np.mean(few_ce)


def test_aes_predict_head_refuses_non_integer_indices_and_unfitted_use():
    from sklearn.exceptions import NotFittedError

    X, y = _long_tail_data()
    with pytest.raises(NotFittedError):
        AESClassifier().predict_head(X[:5], "ce")
    a = AESClassifier(n_epochs_stage1=1, n_epochs_stage2=1, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.predict_head(X[:5], np.int64(1)), a.predict_head(X[:5], 1))
    for head in (1.5, True, None):
        with pytest.raises(TypeError, match="head must be"):
            a.predict_head(X[:5], head)


def test_aes_refuses_an_impossible_validation_split_naming_the_cause():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    params = dict(n_epochs_stage1=1, n_epochs_stage2=1, random_state=0)
    for fraction in (0.01, 0.99):
        with pytest.raises(ValueError, match="validation_fraction"):
            AESClassifier(validation_fraction=fraction, **params).fit(X, y)
    y_rare = np.r_[np.zeros(39, dtype=int), 1]
    with pytest.raises(ValueError, match=r"y: class 1 has 1 sample"):
        AESClassifier(**params).fit(X, y_rare)
