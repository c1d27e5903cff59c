"""ConcatKMeans and ConcatSpectral, against scikit-learn's KMeans and SpectralClustering."""

import numpy as np
import pytest
from sklearn.cluster import KMeans, SpectralClustering
from sklearn.datasets import make_circles
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from mvlearn_ext.cluster import ConcatKMeans, ConcatSpectral


def blobs(n_per_cluster=25, n_clusters=3, widths=(4, 3), scale=8.0, random_state=0):
    rng = np.random.default_rng(random_state)
    y = np.repeat(np.arange(n_clusters), n_per_cluster)
    Xs = []
    for view, width in enumerate(widths):
        centers = rng.normal(scale=scale, size=(n_clusters, width))
        # Views in very different units, so that standardising matters.
        Xs.append((10.0**view) * (centers[y] + rng.normal(size=(y.size, width))))
    return Xs, y


def test_recovers_well_separated_blobs():
    Xs, y = blobs()
    model = ConcatKMeans(n_clusters=3, random_state=0).fit(Xs)
    assert adjusted_rand_score(y, model.labels_) == 1.0
    assert model.labels_.shape == (75,) and model.labels_.dtype.kind == "i"
    assert model.cluster_centers_.shape == (3, 7)
    assert (model.n_views_, model.n_features_per_view_) == (2, (4, 3))


def manual_concatenation(Xs, scaling):
    if scaling is None:
        return np.hstack(Xs)
    blocks = [StandardScaler().fit_transform(X) for X in Xs]
    if scaling == "balanced":
        blocks = [B / np.sqrt(B.shape[1]) for B in blocks]
    return np.hstack(blocks)


@pytest.mark.parametrize("scaling", ["zscore", "balanced", None])
def test_equals_kmeans_on_the_manually_concatenated_views(scaling):
    Xs, _ = blobs(random_state=1)
    Z = manual_concatenation(Xs, scaling)
    reference = KMeans(n_clusters=3, n_init=10, random_state=7).fit(Z)
    model = ConcatKMeans(n_clusters=3, scaling=scaling, random_state=7).fit(Xs)
    np.testing.assert_array_equal(model.labels_, reference.labels_)
    np.testing.assert_allclose(model.cluster_centers_, reference.cluster_centers_, rtol=1e-10)
    assert model.inertia_ == pytest.approx(reference.inertia_, rel=1e-10)
    assert model.n_iter_ == reference.n_iter_


def test_equals_kmeans_with_few_iterations_and_one_init():
    # A hard case (overlapping clusters, truncated runs) where any difference
    # in the data handed to k-means, or in the parameters, shows.
    Xs, _ = blobs(n_clusters=5, scale=1.0, random_state=2)
    Z = np.hstack([StandardScaler().fit_transform(X) for X in Xs])
    reference = KMeans(n_clusters=5, n_init=1, max_iter=3, tol=0.0, random_state=3).fit(Z)
    model = ConcatKMeans(n_clusters=5, n_init=1, max_iter=3, tol=0.0, random_state=3).fit(Xs)
    np.testing.assert_array_equal(model.labels_, reference.labels_)
    np.testing.assert_allclose(model.cluster_centers_, reference.cluster_centers_, rtol=1e-10)


def test_predict_reuses_the_training_statistics():
    Xs, _ = blobs(random_state=4)
    model = ConcatKMeans(n_clusters=3, random_state=0).fit(Xs)
    np.testing.assert_array_equal(model.predict(Xs), model.labels_)
    new, _ = blobs(n_per_cluster=4, random_state=5)
    scalers = [StandardScaler().fit(X) for X in Xs]
    Z_new = np.hstack([s.transform(X) for s, X in zip(scalers, new, strict=True)])
    np.testing.assert_array_equal(model.predict(new), model.kmeans_.predict(Z_new))
    np.testing.assert_allclose(model.view_means_[1], Xs[1].mean(axis=0))
    np.testing.assert_allclose(model.view_scales_[1], Xs[1].std(axis=0))


@pytest.mark.parametrize("scaling", ["zscore", "balanced"])
def test_scaling_makes_the_result_invariant_to_view_units(scaling):
    Xs, y = blobs(random_state=6)
    rescaled = [Xs[0] * 1e-3, Xs[1] * 1e4 + 50.0]
    a = ConcatKMeans(n_clusters=3, scaling=scaling, random_state=0).fit(Xs)
    b = ConcatKMeans(n_clusters=3, scaling=scaling, random_state=0).fit(rescaled)
    np.testing.assert_array_equal(a.labels_, b.labels_)


def test_without_scaling_the_widest_spread_view_dominates():
    rng = np.random.default_rng(0)
    informative, y = blobs(widths=(6,), random_state=7)
    noise = 1e3 * rng.normal(size=(y.size, 2))
    Xs = [informative[0], noise]
    raw = ConcatKMeans(n_clusters=3, scaling=None, random_state=0).fit(Xs)
    scaled = ConcatKMeans(n_clusters=3, scaling="zscore", random_state=0).fit(Xs)
    assert adjusted_rand_score(y, raw.labels_) < 0.2
    assert adjusted_rand_score(y, scaled.labels_) == 1.0
    assert raw.view_means_ is None and raw.view_scales_ is None


def test_balanced_scaling_gives_every_view_unit_total_variance():
    Xs, _ = blobs(widths=(6, 2), random_state=14)
    model = ConcatKMeans(n_clusters=3, scaling="balanced", random_state=0).fit(Xs)
    for v, X in enumerate(Xs):
        np.testing.assert_allclose(model.view_scales_[v], X.std(axis=0) * np.sqrt(X.shape[1]))
    Z = model._concatenate(Xs)
    np.testing.assert_allclose(Z[:, :6].var(axis=0).sum(), 1.0)
    np.testing.assert_allclose(Z[:, 6:].var(axis=0).sum(), 1.0)


def test_balanced_scaling_keeps_a_narrow_view_from_being_drowned():
    # One informative 2-feature view and a 100-feature pure-noise view: z-scored,
    # the noise has 100/102 of the variance and the clusters are lost; balanced,
    # each view has half, and the clusters are found. (The reverse cost of
    # "balanced", a narrow noise view weighing as much as a wide informative
    # one, is why both scalings are offered.)
    rng = np.random.default_rng(15)
    informative, y = blobs(widths=(2,), scale=10.0, random_state=15)
    Xs = [informative[0], rng.normal(size=(y.size, 100))]
    zscore = ConcatKMeans(n_clusters=3, scaling="zscore", random_state=0).fit(Xs)
    balanced = ConcatKMeans(n_clusters=3, scaling="balanced", random_state=0).fit(Xs)
    assert adjusted_rand_score(y, zscore.labels_) < 0.2
    assert adjusted_rand_score(y, balanced.labels_) > 0.9


def test_constant_feature_is_centred_not_scaled():
    Xs, y = blobs(random_state=8)
    Xs[1] = np.hstack([Xs[1], np.full((y.size, 1), 5.0)])
    model = ConcatKMeans(n_clusters=3, random_state=0).fit(Xs)
    assert model.view_scales_[1][-1] == 1.0
    assert np.all(np.isfinite(model.cluster_centers_))
    np.testing.assert_allclose(model.cluster_centers_[:, -1], 0.0, atol=1e-12)
    assert adjusted_rand_score(y, model.labels_) == 1.0


def test_float32_views_are_clustered_in_float32():
    Xs, y = blobs(random_state=9)
    model = ConcatKMeans(n_clusters=3, random_state=0).fit([X.astype(np.float32) for X in Xs])
    assert model.cluster_centers_.dtype == np.float32
    assert adjusted_rand_score(y, model.labels_) == 1.0
    mixed = ConcatKMeans(n_clusters=3, random_state=0).fit([Xs[0].astype(np.float32), Xs[1]])
    assert mixed.cluster_centers_.dtype == np.float64


def test_score_is_minus_the_inertia_on_the_training_views():
    Xs, _ = blobs(random_state=10)
    model = ConcatKMeans(n_clusters=3, random_state=0).fit(Xs)
    assert model.score(Xs) == pytest.approx(-model.inertia_, rel=1e-10)
    assert model.score([X[:10] for X in Xs]) > model.score(Xs)  # fewer samples, less loss


def test_random_state_changes_the_initialisation():
    Xs, _ = blobs(n_clusters=6, scale=1.0, random_state=11)
    runs = {
        seed: ConcatKMeans(n_clusters=6, n_init=1, random_state=seed).fit(Xs).inertia_
        for seed in range(4)
    }
    assert len(set(runs.values())) > 1


def test_fit_predict_equals_labels():
    Xs, _ = blobs(random_state=12)
    labels = ConcatKMeans(n_clusters=3, random_state=0).fit_predict(Xs)
    np.testing.assert_array_equal(
        labels, ConcatKMeans(n_clusters=3, random_state=0).fit(Xs).labels_
    )


@pytest.mark.parametrize(
    "params",
    [
        {"n_clusters": 0},
        {"n_clusters": 2.5},
        {"scaling": "unit"},
        {"scaling": True},
        {"n_init": 0},
        {"max_iter": 0},
        {"tol": -1.0},
        {"random_state": "seed"},
    ],
)
def test_parameter_validation(params):
    Xs, _ = blobs()
    with pytest.raises(InvalidParameterError):
        ConcatKMeans(**params).fit(Xs)


def test_too_few_samples_for_the_clusters():
    Xs, _ = blobs(n_per_cluster=1)
    with pytest.raises(ValueError, match="Xs has 3 samples but n_clusters=4"):
        ConcatKMeans(n_clusters=4).fit(Xs)


def test_predict_checks_the_views_against_fit():
    Xs, _ = blobs()
    model = ConcatKMeans(n_clusters=3, random_state=0).fit(Xs)
    with pytest.raises(ValueError, match="Xs has 3 views but ConcatKMeans was fitted with 2"):
        model.predict(Xs + [Xs[0]])
    with pytest.raises(
        ValueError, match="view 0 of Xs has 3 features but ConcatKMeans was fitted with 4"
    ):
        model.predict([Xs[0][:, :3], Xs[1]])


def test_parameters_reach_kmeans_and_all_inits_are_run():
    Xs, _ = blobs(n_clusters=6, scale=1.0, random_state=13)
    Z = np.hstack([StandardScaler().fit_transform(X) for X in Xs])
    model = ConcatKMeans(n_clusters=6, n_init=4, max_iter=7, tol=1e-3, random_state=5).fit(Xs)
    params = model.kmeans_.get_params()
    assert (params["n_init"], params["max_iter"], params["tol"]) == (4, 7, 1e-3)
    reference = KMeans(n_clusters=6, n_init=4, max_iter=7, tol=1e-3, random_state=5).fit(Z)
    single = KMeans(n_clusters=6, n_init=1, max_iter=7, tol=1e-3, random_state=5).fit(Z)
    assert model.inertia_ == pytest.approx(reference.inertia_, rel=1e-10)
    assert model.inertia_ < single.inertia_  # the best of 4 runs, not the first


# --------------------------------------------------------------------------- ConcatSpectral


@pytest.mark.parametrize("scaling", ["zscore", "balanced", None])
def test_spectral_equals_scikit_learn_on_the_manual_concatenation(scaling):
    Xs, _ = blobs(n_clusters=4, scale=2.0, random_state=20)
    Z = manual_concatenation(Xs, scaling)
    reference = SpectralClustering(
        n_clusters=4, affinity="nearest_neighbors", n_neighbors=10, random_state=3
    ).fit(Z)
    model = ConcatSpectral(n_clusters=4, scaling=scaling, random_state=3).fit(Xs)
    np.testing.assert_array_equal(model.labels_, reference.labels_)
    assert (model.affinity_matrix_ != reference.affinity_matrix_).nnz == 0
    assert model.n_neighbors_ == 10
    assert model.labels_.shape == (100,) and model.labels_.dtype.kind == "i"


@pytest.mark.filterwarnings("ignore:Graph is not fully connected")
def test_spectral_separates_rings_that_kmeans_cannot():
    # Two concentric circles, x and y coordinates as two views: not linearly
    # separable, so k-means fails; the 10-NN graph has one component per ring.
    X, y = make_circles(300, factor=0.3, noise=0.05, random_state=0)
    Xs = [X[:, :1], X[:, 1:]]
    spectral = ConcatSpectral(n_clusters=2, random_state=0).fit(Xs)
    kmeans = ConcatKMeans(n_clusters=2, random_state=0).fit(Xs)
    assert adjusted_rand_score(y, spectral.labels_) == 1.0
    assert adjusted_rand_score(y, kmeans.labels_) < 0.1


def test_spectral_is_deterministic_for_a_seed_and_seeded_by_it():
    Xs, _ = blobs(n_clusters=6, scale=1.0, random_state=21)
    runs = [ConcatSpectral(n_clusters=6, n_init=1, random_state=s).fit(Xs).labels_ for s in (0, 0)]
    np.testing.assert_array_equal(runs[0], runs[1])
    labels = {
        seed: tuple(ConcatSpectral(n_clusters=6, n_init=1, random_state=seed).fit(Xs).labels_)
        for seed in range(4)
    }
    assert len(set(labels.values())) > 1


def test_spectral_caps_the_neighbours_at_the_sample_size():
    Xs, y = blobs(n_per_cluster=3, random_state=22)
    model = ConcatSpectral(n_clusters=3, n_neighbors=50, random_state=0).fit(Xs)
    assert model.n_neighbors_ == 8
    assert model.labels_.shape == (9,)


@pytest.mark.parametrize("assign_labels", ["discretize", "cluster_qr"])
def test_spectral_assign_labels_reaches_scikit_learn(assign_labels):
    Xs, y = blobs(scale=2.0, random_state=23)
    model = ConcatSpectral(n_clusters=3, assign_labels=assign_labels, random_state=0).fit(Xs)
    assert model.spectral_.get_params()["assign_labels"] == assign_labels
    assert adjusted_rand_score(y, model.labels_) > 0.9


@pytest.mark.parametrize(
    "params",
    [
        {"n_clusters": 0},
        {"n_neighbors": 0},
        {"n_neighbors": 2.5},
        {"scaling": "unit"},
        {"assign_labels": "agglomerative"},
        {"n_init": 0},
        {"random_state": "seed"},
    ],
)
def test_spectral_parameter_validation(params):
    Xs, _ = blobs()
    with pytest.raises(InvalidParameterError):
        ConcatSpectral(**params).fit(Xs)


def test_spectral_needs_two_samples_and_enough_for_the_clusters():
    Xs, _ = blobs(n_per_cluster=1)
    with pytest.raises(ValueError, match="Xs has 3 samples but n_clusters=4"):
        ConcatSpectral(n_clusters=4).fit(Xs)
    with pytest.raises(ValueError, match="at least 2"):
        ConcatSpectral(n_clusters=1).fit([X[:1] for X in Xs])


def test_spectral_is_transductive():
    assert not hasattr(ConcatSpectral(), "predict")


@pytest.mark.parametrize("cls", [ConcatKMeans, ConcatSpectral])
def test_verbose_reports_the_fit_and_changes_nothing(cls, capsys):
    Xs, _ = blobs()
    quiet = cls(3, random_state=0).fit(Xs)
    assert capsys.readouterr().err == ""
    loud = cls(3, random_state=0, verbose=1).fit(Xs)
    err = capsys.readouterr().err
    assert err.startswith(f"[{cls.__name__}]") and "75 samples x 7 features" in err
    np.testing.assert_array_equal(loud.labels_, quiet.labels_)
