"""The unbalanced-observation test bed: rates, label placement, nuisance, determinism."""

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

from mvlearn_ext.incomplete import make_rate_mask, make_unbalanced_views


def test_rate_mask_rates_and_rows():
    rates = [0.95, 0.6, 0.3]
    m = make_rate_mask(40000, rates, random_state=0)
    assert m.shape == (40000, 3) and m.dtype == bool and m.any(axis=1).all()
    # independent Bernoulli(r_v), raised by at most prod(1 - r) = 0.014 by the refill
    obs = m.mean(axis=0)
    assert (obs >= np.array(rates) - 0.01).all() and (obs <= np.array(rates) + 0.015).all()
    np.testing.assert_allclose(m.all(axis=1).mean(), 0.95 * 0.6 * 0.3, atol=0.01)
    np.testing.assert_array_equal(m, make_rate_mask(40000, rates, random_state=0))
    assert make_rate_mask(10, [1.0, 1.0], random_state=0).all()


@pytest.mark.parametrize(
    "rates", [[0.5], [0.0, 0.5], [1.2, 0.5], [[0.5, 0.5]], [np.nan, 0.5], [0.5 + 1j, 0.5]]
)
def test_rate_mask_refuses_bad_rates(rates):
    with pytest.raises(ValueError, match="observation_rates"):
        make_rate_mask(10, rates)


@pytest.mark.parametrize("rates", ["ab", ["0.5", "0.5"]])
def test_rate_mask_refuses_rates_that_are_not_numbers(rates):
    with pytest.raises(TypeError, match="observation_rates"):
        make_rate_mask(10, rates)


def test_label_sits_in_the_poorly_observed_view_and_nuisance_in_the_well_observed():
    Xs, y, m, z = make_unbalanced_views(1000, random_state=0, return_nuisance=True)
    assert [X.shape for X in Xs] == [(1000, 10)] * 3 and m.shape == (1000, 3)
    np.testing.assert_allclose(m.mean(axis=0), [0.95, 0.6, 0.3], atol=0.05)
    assert adjusted_rand_score(y, z) < 0.01  # label and nuisance independent
    ari = {}
    for v, X in enumerate(Xs):
        lab = KMeans(5, n_init=2, random_state=0).fit_predict(X)
        ari[v] = (adjusted_rand_score(y, lab), adjusted_rand_score(z, lab))
    assert ari[0][1] > 0.8 and ari[0][0] < 0.05  # view 0 clusters by the nuisance
    assert ari[2][0] > 0.8 and ari[2][1] < 0.05  # view 2 by the label
    assert ari[1][0] > ari[1][1]  # view 1: moderate label signal, weaker nuisance


def test_unbalanced_views_seeded_and_zero_separation():
    a = make_unbalanced_views(200, random_state=3)
    b = make_unbalanced_views(200, random_state=3)
    for Xa, Xb in zip(a[0], b[0], strict=True):
        np.testing.assert_array_equal(Xa, Xb)
    np.testing.assert_array_equal(a[2], b[2])
    # no separation: every view is pure noise, mean 0 and unit variance
    Xs, _, _ = make_unbalanced_views(
        5000, label_separation=[0, 0, 0], nuisance_separation=[0, 0, 0], random_state=0
    )
    for X in Xs:
        np.testing.assert_allclose(X.mean(0), 0.0, atol=0.06)
        np.testing.assert_allclose(X.std(0), 1.0, atol=0.04)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_clusters": 1}, "n_clusters"),
        ({"label_separation": [1.0, 1.0]}, "label_separation"),
        ({"nuisance_separation": [1.0, -1.0, 0.0]}, "nuisance_separation"),
        ({"n_features": 0}, "n_features"),
        ({"n_samples": 1}, "n_samples"),
    ],
)
def test_unbalanced_views_refuses_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_unbalanced_views(**{"n_samples": 50, **kwargs})


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": 50.0}, "n_samples must be an int"),
        ({"n_clusters": True}, "n_clusters must be an int"),
        ({"return_nuisance": "no"}, "return_nuisance must be a bool"),
    ],
)
def test_unbalanced_views_refuses_wrong_types_by_name(kwargs, match):
    with pytest.raises(TypeError, match=match):
        make_unbalanced_views(**{"n_samples": 50, **kwargs})
