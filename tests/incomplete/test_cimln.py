"""CIMLN (torch): API, masking invariances, ablation switches, determinism."""

import numpy as np
import pytest
import torch

from mvlearn_ext.datasets import make_multiview_blobs
from mvlearn_ext.incomplete import (
    CIMLN,
    make_unbalanced_mask,
    mask_views,
)
from mvlearn_ext.metrics import clustering_accuracy

SMALL = dict(
    hidden_layer_sizes=(16,), embed_dim=4, n_epochs_pretrain=3, n_epochs=3, n_init=2, batch_size=64
)


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def data():
    Xs, y = make_multiview_blobs(150, n_views=3, n_features=[5, 4, 6], random_state=0)
    mask = make_unbalanced_mask(150, 3, random_state=0)
    return Xs, y, mask


def test_fit_nan_rows_equals_fit_with_mask(data):
    Xs, y, mask = data
    a = CIMLN(n_clusters=3, random_state=0, **SMALL).fit(mask_views(Xs, mask))
    b = CIMLN(n_clusters=3, random_state=0, **SMALL).fit(Xs, mask=mask)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(a.embedding_, b.embedding_)
    np.testing.assert_array_equal(a.mask_, mask)
    assert a.embedding_.shape == (150, 12)
    assert clustering_accuracy(y, a.labels_) > 0.5


def test_values_of_missing_views_do_not_matter(data):
    Xs, _, mask = data
    rng = np.random.default_rng(1)
    garbled = [
        np.where(mask[:, [v]], X, rng.normal(scale=100, size=X.shape)) for v, X in enumerate(Xs)
    ]
    a = CIMLN(n_clusters=3, random_state=0, **SMALL).fit(Xs, mask=mask)
    b = CIMLN(n_clusters=3, random_state=0, **SMALL).fit(garbled, mask=mask)
    np.testing.assert_allclose(a.embedding_, b.embedding_)


def test_seed_determinism_and_global_rng_untouched(data):
    Xs, _, mask = data
    state = torch.random.get_rng_state()
    a = CIMLN(n_clusters=3, random_state=5, **SMALL).fit(Xs, mask=mask)
    assert torch.equal(state, torch.random.get_rng_state())
    b = CIMLN(n_clusters=3, random_state=5, **SMALL).fit(Xs, mask=mask)
    np.testing.assert_allclose(a.embedding_, b.embedding_)
    c = CIMLN(n_clusters=3, random_state=6, **SMALL).fit(Xs, mask=mask)
    assert not np.allclose(a.embedding_, c.embedding_)


def test_beta_zero_gives_zero_causal_loss(data):
    Xs, _, mask = data
    model = CIMLN(n_clusters=3, random_state=0, beta=0.0, causal_weight=1.0, **SMALL)
    model.fit(Xs, mask=mask)
    assert all(h["causal"] == 0.0 for h in model.loss_curve_)
    # and positive with masking on
    m2 = CIMLN(n_clusters=3, random_state=0, causal_weight=1.0, **SMALL)
    m2.fit(Xs, mask=mask)
    assert max(h["causal"] for h in m2.loss_curve_) > 0


def test_view_probs_follow_observation_rates(data):
    Xs, _, mask = data
    model = CIMLN(n_clusters=3, random_state=0, **SMALL).fit(Xs, mask=mask)
    obs = mask.mean(0)
    np.testing.assert_allclose(model.view_probs_, 0.3 * 3 * obs / obs.sum())


def test_mean_fill_completes_missing_views_with_the_mean_embedding_and_skips_the_meta_generator(
    data,
):
    """``missing_view_fill="mean"`` completes a missing view by ``h_agg``; the meta-generator
    gets no loss and no gradient, so its weights stay at their initial values."""
    Xs, _, mask = data
    model = CIMLN(
        n_clusters=3, random_state=0, causal_weight=0.1, missing_view_fill="mean", **SMALL
    ).fit(Xs, mask=mask)
    assert all(h["meta"] == 0.0 for h in model.loss_curve_)
    untrained = CIMLN(
        n_clusters=3, random_state=0, missing_view_fill="mean", **{**SMALL, "n_epochs": 0}
    ).fit(Xs, mask=mask)
    for a, b in zip(
        model.network_.meta.parameters(), untrained.network_.meta.parameters(), strict=True
    ):
        assert torch.equal(a, b)
    assert not torch.equal(model.network_.enc[0][0].weight, untrained.network_.enc[0][0].weight)
    meta = CIMLN(n_clusters=3, random_state=0, causal_weight=0.1, **SMALL).fit(Xs, mask=mask)
    assert not torch.equal(meta.network_.meta.mu.weight, untrained.network_.meta.mu.weight)
    d = SMALL["embed_dim"]
    Z = model.embedding_.reshape(len(mask), len(Xs), d)
    observed = mask[:, :, None]
    h_agg = (Z * observed).sum(1) / observed.sum(1)
    missing = ~mask
    np.testing.assert_allclose(Z[missing], np.broadcast_to(h_agg[:, None], Z.shape)[missing])


def test_errors(data):
    Xs, _, mask = data
    with pytest.raises(ValueError, match="mask has shape"):
        CIMLN(n_clusters=3, **SMALL).fit(Xs, mask=mask[:10])
    bad = mask.copy()
    bad[0] = False
    with pytest.raises(ValueError, match="no observed view"):
        CIMLN(n_clusters=3, **SMALL).fit(Xs, mask=bad)
    partial = mask_views(Xs, mask)
    partial[1][mask[:, 1].argmax(), 0] = np.nan
    with pytest.raises(ValueError, match="partly NaN"):
        CIMLN(n_clusters=3, **SMALL).fit(partial)
    with pytest.raises(ValueError):
        CIMLN(n_clusters=3).fit([Xs[0]], mask=mask[:, :1])
    with pytest.raises(ValueError, match="missing_view_fill"):
        CIMLN(n_clusters=3, missing_view_fill="zero", **SMALL).fit(Xs, mask=mask)


def _kl(p, q):
    return float((p * np.log(p / q)).sum(1).mean())


def test_causal_divergence_closed_form_and_gradient_direction():
    """``KL(q_fact || q_cf)`` with ``q_fact`` fixed: only the counterfactual side is trained."""
    from mvlearn_ext.incomplete._cimln import _causal_divergence

    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])
    q = np.array([[0.5, 0.25, 0.25], [0.2, 0.2, 0.6]])
    qf = torch.tensor(p, dtype=torch.float64, requires_grad=True)
    qc = torch.tensor(q, dtype=torch.float64, requires_grad=True)
    loss = _causal_divergence(qf, qc)
    assert loss.item() == pytest.approx(_kl(p, q), rel=1e-12)
    loss.backward()
    assert qf.grad is None and qc.grad is not None


def test_demo_section_rows_are_the_estimators_own(monkeypatch):
    """The ``cimln`` demo section: the defaults' row, the causal-loss ablation, the baseline."""
    from mvlearn_ext._demo import incomplete as demo
    from mvlearn_ext._demo.registry import DemoContext
    from mvlearn_ext.datasets import load_handwritten

    tiny = dict(
        hidden_layer_sizes=(8,),
        embed_dim=4,
        batch_size=512,
        n_epochs_pretrain=1,
        n_epochs=1,
        n_init=1,
    )
    monkeypatch.setattr(demo, "QUICK", tiny)
    rows = demo.run(DemoContext(seeds=(3,), quick=True))
    assert len(rows) == 3 and rows[2].method == f"mean imputation + {demo.ANCHOR}"
    (default_label, default_kw), (ablation_label, ablation_kw) = demo.variants()
    assert [r.method for r in rows[:2]] == [default_label, ablation_label]
    assert default_kw == {} and "defaults" in default_label
    # the two CIMLN rows differ in the causal loss only: one of them switches it off
    weights = {CIMLN(**kw).causal_weight for kw in (default_kw, ablation_kw)}
    assert 0.0 in weights and len(weights) == 2
    assert "eta = 0.5" in rows[0].note and "skipped" not in rows[0].note
    Xs, y = load_handwritten()
    m = make_unbalanced_mask(len(y), 6, random_state=3)
    for row, kw in zip(rows[:2], (default_kw, ablation_kw), strict=True):
        labels = CIMLN(10, random_state=3, **tiny, **kw).fit_predict(mask_views(Xs, m))
        assert row.scores["ACC"] == [clustering_accuracy(y, labels)]


def test_causal_loss_on_a_known_case_charges_the_nuisance_more_but_is_minimised_by_no_clusters():
    """Two independent views, both observed: view 0 holds only a nuisance grouping, view 1 only
    the label. At the meta-generator's optimum a missing view is filled with its mean (0). The
    causal loss of a partition by the nuisance, by the label and of one constant assignment,
    averaged over the counterfactual patterns (a sample whose two views are both drawn for
    masking keeps one of them at random): the paper's masking (view 0 observed 95%, view 1 30%)
    charges the nuisance partition more than the label partition, the code's uniform masking
    charges them alike, and the constant assignment, which holds neither, costs nothing."""
    from mvlearn_ext.incomplete import counterfactual_view_probs
    from mvlearn_ext.incomplete._cimln import _causal_divergence, _Net

    torch.manual_seed(0)
    net = _Net((1, 1), [], 1, 2).double()
    with torch.no_grad():
        net.meta.mu.weight.zero_()
        net.meta.mu.bias.zero_()
    signs = torch.tensor([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]], dtype=torch.float64)
    H = torch.stack([2.0 * signs[:, 1:], 2.0 * signs[:, :1]])  # view 0: nuisance, view 1: label
    full = torch.ones(4, 2, dtype=torch.bool)
    context = net.context(H, full)

    def completed(m):
        return net.complete(H, m, context, "meta").permute(1, 0, 2).reshape(4, -1)

    dropped = []
    for v in range(2):
        m = full.clone()
        m[:, v] = False
        dropped.append(completed(m))
    np.testing.assert_array_equal(dropped[0][:, 0].detach(), 0.0)  # the fill carries nothing
    rates = np.zeros((20, 2), dtype=bool)
    rates[:19, 0] = True
    rates[[0, 1, 2, 3, 4, 19], 1] = True  # observation rates 0.95 and 0.3
    centers = {
        "nuisance": [[2.0, 0.0], [-2.0, 0.0]],
        "label": [[0.0, 2.0], [0.0, -2.0]],
        "constant": [[0.0, 0.0], [0.0, 0.0]],
    }
    expected = {}
    for mode in ("observation", "uniform"):
        b = counterfactual_view_probs(rates, 0.3, mode=mode)
        p_drop = [b[0] * (1 - b[1]) + b[0] * b[1] / 2, b[1] * (1 - b[0]) + b[0] * b[1] / 2]
        for name, c in centers.items():
            with torch.no_grad():
                net.centers.copy_(torch.tensor(c, dtype=torch.float64))
                qf = net.assign(completed(full), 1.0)
                losses = [float(_causal_divergence(qf, net.assign(z, 1.0))) for z in dropped]
            expected[mode, name] = sum(p * loss for p, loss in zip(p_drop, losses, strict=True))
    assert expected["observation", "constant"] == 0.0 == expected["uniform", "constant"]
    assert expected["observation", "nuisance"] > expected["observation", "label"] > 0
    assert expected["uniform", "nuisance"] == pytest.approx(
        expected["uniform", "label"], rel=1e-12
    )


def test_a_diverged_fit_leaves_no_private_state_and_names_the_causes(data):
    Xs, _, mask = data
    model = CIMLN(n_clusters=3, learning_rate=1e6, random_state=0, **SMALL)
    with pytest.raises(ValueError, match="diverged") as info:
        model.fit(Xs, mask=mask)
    # a lower temperature sharpens the assignments: it is no cure for a divergence
    assert "temperature" not in str(info.value)
    assert not hasattr(model, "_stage")
