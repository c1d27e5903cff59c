"""CIMLN (torch): API, masking invariances, ablation switches, determinism."""

import numpy as np
import pytest
import torch

from mvlearn_ext.datasets import make_multiview_blobs
from mvlearn_ext.deep.incomplete import CIMLN
from mvlearn_ext.incomplete import make_unbalanced_mask, mask_views
from mvlearn_ext.metrics import clustering_accuracy

SMALL = dict(hidden=(16,), embed_dim=4, pretrain_epochs=3, epochs=3, n_init=2, batch_size=64)


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
    assert all(h["causal"] == 0.0 for h in model.loss_history_)
    # and positive with masking on, in both masking modes and both KL variants
    for kw in ({}, {"cf_view_probs": "uniform"}, {"causal_kl": "double_softmax"}):
        m2 = CIMLN(n_clusters=3, random_state=0, causal_weight=1.0, **SMALL, **kw)
        m2.fit(Xs, mask=mask)
        assert max(h["causal"] for h in m2.loss_history_) > 0


def test_view_probs_follow_observation_rates(data):
    Xs, _, mask = data
    model = CIMLN(n_clusters=3, random_state=0, **SMALL).fit(Xs, mask=mask)
    obs = mask.mean(0)
    np.testing.assert_allclose(model.view_probs_, 0.3 * 3 * obs / obs.sum())


def test_ablation_switches_run(data):
    Xs, _, mask = data
    for kw in ({"use_meta": False}, {"causal_weight": 0.0}, {"meta_loss": "code"}):
        model = CIMLN(n_clusters=3, random_state=0, **SMALL, **kw).fit(Xs, mask=mask)
        assert np.isfinite(model.embedding_).all()


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
    with pytest.raises(ValueError, match="cf_view_probs"):
        CIMLN(n_clusters=3, cf_view_probs="random").fit(Xs, mask=mask)
    with pytest.raises(ValueError):
        CIMLN(n_clusters=3).fit([Xs[0]], mask=mask[:, :1])
