"""EOMSC-CA: contract, the authors' code on Handwritten, graph-step oracles, threads."""

import time
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.metrics import adjusted_rand_score
from threadpoolctl import threadpool_limits

from mvlearn_ext.cluster import EOMSCCA
from mvlearn_ext.cluster._blockwise import RowBlocks
from mvlearn_ext.cluster._eomsc_blocks import block_bipartite_graph
from mvlearn_ext.cluster._eomsc_solver import lambda_step, project_simplex_masked
from mvlearn_ext.datasets import load_handwritten, make_multiview_blobs
from mvlearn_ext.metrics import clustering_accuracy, normalized_mutual_info
from mvlearn_ext.utils.estimator_checks import check_multiview_estimator

#: Outputs of the authors' code (Tracesource/EOMSC-CA @ 08670c1) under GNU
#: Octave 7.3 on Handwritten (six CSV views, unshuffled), m = k = 10, d = 3k:
#: the recorded objective per iteration and the final view weights
#: (shared/reference/mvc_octave/eomsc_labels_m10_d30.mat); labels ACC 0.7600,
#: NMI 0.8208 (arithmetic), 10 components, 11 iterations.
EOMSC_OBJECTIVE = [
    13812.713182418427, 12768.05810090098, 12502.59851480565, 12409.740398473865,
    12382.553266081723, 12371.670030398047, 12365.754050291769, 12361.490438107705,
    12358.002852527521, 12355.002574210788, 12354.023584187973,
]  # fmt: skip
EOMSC_ALPHA = [
    0.11856128606073492, 0.07031812491409835, 0.12992633506969486,
    0.06650477032652102, 0.1528872280004662, 0.46180225562848454,
]  # fmt: skip

REFERENCE_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "mvc_octave"


def test_multiview_contract():
    check_multiview_estimator(EOMSCCA())


def test_separated_blobs_give_the_clusters_as_components():
    Xs, y = make_multiview_blobs(
        150, n_views=3, n_features=[5, 3, 4], n_clusters=3, cluster_std=1.0, random_state=0
    )
    model = EOMSCCA(n_clusters=3, n_anchors=6).fit(Xs)
    assert model.n_graph_components_ == 3
    assert clustering_accuracy(y, model.labels_) == 1.0
    assert model.anchor_graph_.shape == (6, 150) and model.anchor_graph_.min() >= 0
    assert model.embedding_.shape == (150, 3)
    assert [A.shape for A in model.anchors_] == [(6, 5), (6, 3), (6, 4)]
    assert np.isclose(model.view_weights_.sum(), 1.0) and np.all(model.view_weights_ > 0)
    assert len(model.objective_) == model.n_iter_ == len(model.n_inner_iter_)
    # Labels are the components of the bipartite graph: no edge joins two clusters.
    S = model.anchor_graph_.T
    anchor_cluster = np.array(
        [np.unique(model.labels_[S[:, j] > 0]) for j in range(6)], dtype=object
    )
    assert all(len(c) <= 1 for c in anchor_cluster)


def test_fewer_anchors_than_clusters_is_refused():
    Xs, _ = make_multiview_blobs(30, n_views=2, n_features=[3, 3], n_clusters=3, random_state=0)
    with pytest.raises(ValueError, match=r"n_anchors=2 is below n_clusters=3"):
        EOMSCCA(n_clusters=3, n_anchors=2).fit(Xs)


def _masked_reference(v, mask):
    m = len(v)
    if not mask.any():
        return np.zeros(m)
    result = minimize(
        lambda x: 0.5 * np.sum((x - v) ** 2),
        np.where(mask, 1.0 / mask.sum(), 0.0),
        jac=lambda x: x - v,
        bounds=[(0, None) if keep else (0, 0) for keep in mask],
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1, "jac": lambda x: np.ones(m)}],
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    return result.x


def test_masked_simplex_projection_matches_a_qp_solver():
    rng = np.random.default_rng(0)
    V = rng.normal(scale=2.0, size=(40, 7))
    mask = rng.random((40, 7)) < 0.6
    mask[0] = False  # empty support: a zero row
    mask[1] = True
    out = project_simplex_masked(V, mask)
    assert np.all(out[~mask] == 0) and np.all(out >= 0)
    np.testing.assert_array_equal(out[0], 0.0)
    np.testing.assert_allclose(out[1:].sum(axis=1), 1.0, atol=1e-12)
    reference = np.array([_masked_reference(v, k) for v, k in zip(V, mask, strict=True)])
    np.testing.assert_allclose(out, reference, atol=1e-7)


def test_graph_step_on_block_data_finds_the_blocks():
    # Two groups of samples that each prefer their own anchors: the graph has
    # two components, the groups.
    rng = np.random.default_rng(1)
    n, m = 40, 4
    groups = np.repeat([0, 1], n // 2)
    B = rng.random((n, m)) * 0.1
    B[groups == 0, :2] += 1.0
    B[groups == 1, 2:] += 1.0
    B[groups == 0, 2:] -= 1.0
    B[groups == 1, :2] -= 1.0
    # One view X = B with W = A = I and weight 1: the graph step's linear term is B.
    core = dict(means=None, scales=None, W=[np.eye(m)], A=np.eye(m), a2=np.ones(1), scale=1.0)
    start = np.where(np.arange(n) < m, np.arange(n), -1)  # G_0 = I_{n x m}
    labels, _, _, n_iter, _, _, _, Z = block_bipartite_graph(
        RowBlocks([B], n), core, m, 2, starts=[start], inv2=np.ones(m), reg_init=0.1,
        max_iter=50, verbose=False, desc="graph", keep=True,
    )  # fmt: skip
    S = Z.T
    assert adjusted_rand_score(groups, labels) == 1.0 and n_iter <= 50
    assert np.all(S[groups == 0][:, 2:] == 0) and np.all(S[groups == 1][:, :2] == 0)


@pytest.fixture(scope="module")
def handwritten():
    return load_handwritten()


@pytest.fixture(scope="module")
def eomsc_handwritten(handwritten):
    Xs, _ = handwritten
    start = time.perf_counter()
    model = EOMSCCA(n_clusters=10, n_anchors=10, n_components=30).fit(Xs)
    return model, time.perf_counter() - start


def test_reproduces_the_authors_code_on_handwritten(handwritten, eomsc_handwritten):
    _, y = handwritten
    model, elapsed = eomsc_handwritten
    assert model.n_iter_ == len(EOMSC_OBJECTIVE) and model.n_graph_components_ == 10
    np.testing.assert_allclose(model.objective_, EOMSC_OBJECTIVE, rtol=1e-9)
    np.testing.assert_allclose(model.view_weights_, EOMSC_ALPHA, rtol=1e-9)
    acc = clustering_accuracy(y, model.labels_)
    nmi = normalized_mutual_info(y, model.labels_)
    print(f"EOMSCCA Handwritten m=k, d=3k: ACC {acc:.4f} NMI {nmi:.4f} {elapsed:.1f} s")
    assert abs(acc - 0.760) <= 0.02 and abs(nmi - 0.8208) <= 0.02


def test_labels_equal_the_authors_labels(eomsc_handwritten):
    path = REFERENCE_DIR / "eomsc_labels_m10_d30.mat"
    if not path.is_file():
        pytest.skip(f"the authors' reference output {path} is not present (shared/ not beside)")
    from scipy.io import loadmat

    reference = loadmat(path)["lab"].ravel()
    assert adjusted_rand_score(reference, eomsc_handwritten[0].labels_) == 1.0


def test_results_do_not_depend_on_the_thread_counts(handwritten):
    Xs, _ = handwritten
    Xs = [X[::4] for X in Xs]  # 500 samples, every digit
    fits = []
    for threads in (1, 4):
        with threadpool_limits(limits=threads):
            fits.append(EOMSCCA(n_clusters=10, n_components=30).fit(Xs))
    one, many = fits
    for name in ("anchor_graph_", "embedding_", "view_weights_", "objective_", "labels_"):
        np.testing.assert_array_equal(getattr(one, name), getattr(many, name), err_msg=name)


def test_lambda_step_doubles_halves_or_settles():
    """Fewer than ``c`` unit eigenvalues: double; ``c + 1`` of them (only when ``m > c``):
    halve; exactly ``c``: settled, ``lambda`` unchanged."""
    assert lambda_step(np.array([1.0, 1.0, 0.5, 0.1]), 3, 4, 0.3) == (0.6, False)
    assert lambda_step(np.array([1.0, 1.0, 1.0, 1.0]), 3, 4, 0.3) == (0.15, False)
    assert lambda_step(np.array([1.0, 1.0, 1.0]), 3, 3, 0.3) == (0.3, True)
    assert lambda_step(np.array([1.0, 1.0, 1.0, 0.9]), 3, 4, 0.3) == (0.3, True)
    # within the component test's tolerance 1e-7 of 1 counts as 1
    assert lambda_step(np.array([1.0, 1.0, 1.0 - 1e-8, 0.2]), 3, 4, 0.3) == (0.3, True)


def test_the_largest_reg_init_settles_within_the_default_passes():
    """From ``reg_init`` at its bound the search halves ``lambda`` back to a graph with
    ``n_clusters`` components within ``max_iter_inner`` passes; above it, it is refused."""
    Xs, _ = make_multiview_blobs(
        150, n_views=3, n_features=[5, 3, 4], n_clusters=3, cluster_std=1.0, random_state=0
    )
    model = EOMSCCA(n_clusters=3, n_anchors=6, reg_init=1e6).fit(Xs)
    assert model.n_graph_components_ == 3
    assert np.all(model.n_inner_iter_ < model.max_iter_inner)
    with pytest.raises(ValueError, match=r"'reg_init' parameter"):
        EOMSCCA(n_clusters=3, reg_init=2e6).fit(Xs)
