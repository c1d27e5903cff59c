"""Label-free view weights (mvlearn_ext.cluster._view_weights)."""

import numpy as np
import pytest

from mvlearn_ext.cluster._view_weights import _neighbours, fit_view_weights
from mvlearn_ext.datasets import make_multiview_blobs


def _two_informative(n=600, k=4, seed=0):
    # Two informative 10-feature views, overlapping clusters, 20% of rows flipped.
    return make_multiview_blobs(
        n, n_views=2, n_features=10, n_clusters=k, cluster_std=4.0, noise=0.2, random_state=seed
    )


@pytest.mark.parametrize("width", [3, 10, 50])
@pytest.mark.parametrize("kind", ["gaussian", "uniform", "shuffled"])
def test_a_noise_view_gets_a_small_weight_whatever_its_width(width, kind):
    Xs, y = _two_informative()
    rng = np.random.default_rng(width)
    if kind == "gaussian":
        noise = rng.normal(scale=5.0, size=(len(y), width)) @ rng.normal(size=(width, width))
    elif kind == "uniform":
        noise = rng.uniform(size=(len(y), width))
    else:  # a real, structured view, but of other samples: agrees with nothing
        other, _ = make_multiview_blobs(
            len(y), n_views=1, n_features=width, n_clusters=4, random_state=99
        )
        noise = other[0][rng.permutation(len(y))]
    for position in (0, 2):
        views = list(Xs)
        views.insert(position, noise)
        weights = fit_view_weights(views, 4, random_state=0).weights_
        assert weights[position] < 0.1, (kind, width, weights)
        np.testing.assert_allclose(weights.sum(), 1.0)


@pytest.mark.parametrize("width", [3, 10, 50])
def test_one_informative_view_among_gaussian_noise_views(width):
    # No pair of views agrees: the weights come from the structure score alone.
    Xs, _ = make_multiview_blobs(
        800,
        n_views=3,
        n_features=[10, width, 3],
        n_clusters=5,
        informative=[1, 0, 0],
        cluster_std=3.0,
        random_state=1,
    )
    result = fit_view_weights(Xs, 5, random_state=0)
    assert np.all(result.reliability_ == 1.0)
    assert result.weights_[1] < 0.1 and result.weights_[2] < 0.1, result.weights_


def test_low_dimensional_informative_view_is_not_overweighted():
    # A 2-feature view as informative as a 20-feature one gets no more weight.
    Xs, _ = make_multiview_blobs(
        600, n_views=3, n_features=[20, 20, 2], n_clusters=4, cluster_std=3.0, random_state=0
    )
    weights = fit_view_weights(Xs, 4, random_state=0).weights_
    assert weights[2] <= max(weights[0], weights[1]) + 1e-12
    assert weights[2] > 0.15  # ... and is not discarded either


def test_permuting_views_permutes_the_weights():
    Xs, y = _two_informative(seed=2)
    Xs = Xs + [np.random.default_rng(0).normal(size=(len(y), 5))]
    base = fit_view_weights(Xs, 4, random_state=3)
    for order in ([2, 0, 1], [1, 2, 0]):
        permuted = fit_view_weights([Xs[v] for v in order], 4, random_state=3)
        # Equal up to the order of a sum over views.
        np.testing.assert_allclose(permuted.weights_, base.weights_[order], rtol=1e-12)
        np.testing.assert_array_equal(permuted.structure_, base.structure_[order])


def test_copies_of_a_view_share_its_weight():
    Xs, _ = _two_informative(seed=4)
    single = fit_view_weights(Xs, 4, random_state=0).weights_
    double = fit_view_weights([Xs[0], Xs[1], Xs[0].copy()], 4, random_state=0)
    np.testing.assert_allclose(double.redundancy_[[0, 2]], 2.0, atol=0.05)
    np.testing.assert_allclose(double.weights_[0], double.weights_[2])
    # The two copies together weigh (nearly) what the view weighed alone.
    np.testing.assert_allclose(double.weights_[0] + double.weights_[2], single[0], atol=0.05)


def test_invariant_to_the_units_of_each_feature():
    Xs, _ = _two_informative(seed=5)
    scaled = [Xs[0] * np.linspace(0.1, 100.0, Xs[0].shape[1]) + 7.0, Xs[1] * 1e-3]
    np.testing.assert_allclose(
        fit_view_weights(scaled, 4, random_state=0).weights_,
        fit_view_weights(Xs, 4, random_state=0).weights_,
        atol=1e-8,
    )


def test_same_seed_same_weights_and_subsampling():
    Xs, _ = make_multiview_blobs(3000, n_views=3, n_clusters=3, noise=0.3, random_state=6)
    a = fit_view_weights(Xs, 3, max_samples=500, random_state=1)
    b = fit_view_weights(Xs, 3, max_samples=500, random_state=1)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    assert a.sample_indices_.shape == (500,)


def test_degenerate_cases():
    X = np.random.default_rng(0).normal(size=(50, 3))
    np.testing.assert_array_equal(fit_view_weights([X], 1).weights_, [1.0])
    # A constant view has no structure and gets no weight.
    Xs, _ = _two_informative(n=200)
    weights = fit_view_weights(Xs + [np.ones((200, 4))], 4, random_state=0).weights_
    assert weights[2] == 0.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_clusters=0), "n_clusters"),
        (dict(n_clusters=3, n_neighbors=0), "n_neighbors"),
        (dict(n_clusters=3, max_samples=1), "max_samples"),
    ],
)
def test_bad_arguments(kwargs, match):
    X = np.zeros((10, 2))
    with pytest.raises(ValueError, match=match):
        fit_view_weights([X], **kwargs)
    with pytest.raises(ValueError, match="at least one view"):
        fit_view_weights([], 3)


@pytest.mark.parametrize("unit", [1e-150, 1e-20, 1e20])
def test_the_weights_do_not_depend_on_the_unit_of_the_views(unit):
    """A constant column is judged relative to its own magnitude, never to an absolute floor."""
    Xs, _ = _two_informative()
    Xs = [*Xs, np.random.default_rng(3).normal(size=(Xs[0].shape[0], 5))]
    ref = fit_view_weights(Xs, 4, random_state=0).weights_
    scaled = fit_view_weights([X * unit for X in Xs], 4, random_state=0).weights_
    np.testing.assert_allclose(scaled, ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n_neighbors", [1, 5, 10, 39])
def test_neighbour_sets_are_those_of_a_partition_of_the_distance_matrix(n_neighbors):
    # Rows on a coarse grid: many tied distances, at the boundary of the sets too.
    X = np.random.default_rng(n_neighbors).integers(0, 3, size=(40, 3)).astype(np.float64)
    sq = np.einsum("ij,ij->i", X, X)
    D = sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)
    np.fill_diagonal(D, np.inf)
    expected = np.argpartition(D, n_neighbors - 1, axis=1)[:, :n_neighbors]
    found = _neighbours(X, n_neighbors)
    assert found.shape == expected.shape
    for mine, theirs in zip(found, expected, strict=True):
        assert set(mine.tolist()) == set(theirs.tolist())
