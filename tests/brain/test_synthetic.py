"""The synthetic phenotype-routed connectomes: structure, label mechanism, determinism."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from mvlearn_ext.brain import make_phenotype_connectomes


def test_shapes_symmetry_range_and_determinism():
    A, P, y = make_phenotype_connectomes(50, random_state=0)
    assert A.shape == (50, 16, 16) and P.shape == (50, 2) and y.shape == (50,)
    np.testing.assert_array_equal(A, A.transpose(0, 2, 1))
    assert np.all(A[:, np.arange(16), np.arange(16)] == 1.0) and np.abs(A).max() <= 1.0
    assert set(np.unique(P[:, 0])) <= {0.0, 1.0} and set(np.unique(y)) == {0, 1}
    A2, P2, y2 = make_phenotype_connectomes(50, random_state=0)
    np.testing.assert_array_equal(A, A2)
    np.testing.assert_array_equal(y, y2)
    A3, _, _ = make_phenotype_connectomes(50, random_state=1)
    assert not np.allclose(A, A3)


def test_label_reads_the_route_the_phenotype_selects():
    A, P, y, paths, score = make_phenotype_connectomes(
        3000, label_noise=0.0, random_state=0, return_paths=True
    )
    g = P[:, 0].astype(int)
    np.testing.assert_array_equal(y, (score > np.median(score)).astype(int))
    other = np.where(g == 0, paths[:, 2] * paths[:, 3], paths[:, 0] * paths[:, 1])
    assert roc_auc_score(y, score) == 1.0
    assert abs(roc_auc_score(y, other) - 0.5) < 0.05
    # the same M1-M2-M3 route predicts the label under g = 0 and is noise under g = 1
    s2 = paths[:, 0] * paths[:, 1]
    assert roc_auc_score(y[g == 0], s2[g == 0]) > 0.95
    assert abs(roc_auc_score(y[g == 1], s2[g == 1]) - 0.5) < 0.05
    # neither the group nor the direct M1-M3 block carries the label
    assert abs(y[g == 0].mean() - y[g == 1].mean()) < 0.05
    direct = A[:, 0:4, 8:12].mean(axis=(1, 2))
    assert abs(roc_auc_score(y, direct) - 0.5) < 0.05


def test_block_means_recover_the_latent_strengths():
    A, _, _, paths, _ = make_phenotype_connectomes(300, random_state=2, return_paths=True)
    blocks = [(0, 1), (1, 2), (0, 3), (3, 2)]
    for k, (u, v) in enumerate(blocks):
        mean = A[:, 4 * u : 4 * u + 4, 4 * v : 4 * v + 4].mean(axis=(1, 2))
        assert np.corrcoef(mean, paths[:, k])[0, 1] > 0.95


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_subjects": 1}, "n_subjects"),
        ({"n_modules": 3}, "n_modules"),
        ({"noise": -0.1}, "noise"),
        ({"label_noise": 0.7}, "label_noise"),
        ({"path_range": (0.6, 0.1)}, "path_range"),
        ({"within": float("nan")}, "within"),
    ],
)
def test_bad_parameters_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_phenotype_connectomes(**{"n_subjects": 20, **kwargs})


def test_routed_connectomes_label_reads_the_selected_route():
    from mvlearn_ext.brain import make_routed_connectomes

    A, P, y, a, b, score = make_routed_connectomes(
        2000, label_noise=0.0, random_state=0, return_paths=True
    )
    assert A.shape == (2000, 20, 20) and P.shape == (2000, 8)
    np.testing.assert_array_equal(A, A.transpose(0, 2, 1))
    np.testing.assert_array_equal(P.sum(axis=1), 1.0)
    g = P.argmax(axis=1)
    np.testing.assert_array_equal(y, (score > np.median(score)).astype(int))
    rows = np.arange(2000)
    np.testing.assert_allclose(score, a[rows, g] * b[rows, g])
    # route 0 predicts the label for g = 0 subjects and is noise for the others
    s0 = a[:, 0] * b[:, 0]
    assert roc_auc_score(y[g == 0], s0[g == 0]) > 0.95
    assert abs(roc_auc_score(y[g != 0], s0[g != 0]) - 0.5) < 0.05
    # neither the category nor the direct S-T block carries the label
    assert max(abs(y[g == k].mean() - 0.5) for k in range(8)) < 0.12
    assert abs(roc_auc_score(y, A[:, 0:2, 2:4].mean(axis=(1, 2))) - 0.5) < 0.05
    # the S-R_k and R_k-T blocks recover the strengths
    for k in range(8):
        r = slice(2 * (k + 2), 2 * (k + 3))
        assert np.corrcoef(A[:, 0:2, r].mean(axis=(1, 2)), a[:, k])[0, 1] > 0.95
        assert np.corrcoef(A[:, 2:4, r].mean(axis=(1, 2)), b[:, k])[0, 1] > 0.95
    A2, P2, y2 = make_routed_connectomes(2000, label_noise=0.0, random_state=0)
    np.testing.assert_array_equal(A, A2)
    np.testing.assert_array_equal(y, y2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_routes": 1}, "n_routes"),
        ({"noise": -1.0}, "noise"),
        ({"path_range": (1, 0)}, "path_range"),
    ],
)
def test_routed_connectomes_refuse_bad_parameters(kwargs, match):
    from mvlearn_ext.brain import make_routed_connectomes

    with pytest.raises(ValueError, match=match):
        make_routed_connectomes(**{"n_subjects": 20, **kwargs})
