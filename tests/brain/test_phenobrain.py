"""PhenoBrain (torch): kernel against the NumPy reference, equivariance, modes, errors."""

import numpy as np
import pytest
import torch
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from mvlearn_ext.brain import (
    PhenoBrainClassifier,
    make_phenotype_connectomes,
    normalize_connectome,
    routing_kernel,
    row_normalize,
)

TINY = dict(embed_dim=8, n_epochs=3, batch_size=32)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    with threadpool_limits(limits=1):
        yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def data():
    return make_phenotype_connectomes(80, random_state=0)


@pytest.fixture(scope="module")
def fitted(data):
    A, P, y = data
    return PhenoBrainClassifier(random_state=0, **TINY).fit(A, y, phenotypes=P)


def test_kernel_matches_the_numpy_reference_and_hop_weights_are_on_the_simplex(data, fitted):
    A, P, _ = data
    alpha = fitted.hop_weights(A[:10], phenotypes=P[:10])
    assert alpha.shape == (10, 4)
    np.testing.assert_allclose(alpha.sum(1), 1.0, atol=1e-6)
    assert (alpha > 0).all()
    K = fitted.routing_kernels(A[:10], phenotypes=P[:10])
    ref = routing_kernel(normalize_connectome(A[:10]), alpha)
    np.testing.assert_allclose(K, ref, atol=1e-5)


def test_kernel_is_permutation_equivariant(data, fitted):
    A, P, _ = data
    perm = np.random.default_rng(0).permutation(16)
    Pm = np.eye(16)[perm]
    Ap = Pm @ A[:5] @ Pm.T
    K = fitted.routing_kernels(A[:5], phenotypes=P[:5])
    # hop weights come from p only, so the kernel of the relabelled graph is the relabelled kernel
    Kp = fitted.routing_kernels(Ap, phenotypes=P[:5])
    np.testing.assert_allclose(Kp, Pm @ K @ Pm.T, atol=1e-5)


def test_routing_path_makes_the_kernel_depend_on_the_phenotype(data, fitted):
    A, P, _ = data
    g0, g1 = np.flatnonzero(P[:, 0] == 0)[:3], np.flatnonzero(P[:, 0] == 1)[:3]
    alpha = fitted.hop_weights(A, phenotypes=P)
    assert np.abs(alpha[g0].mean(0) - alpha[g1].mean(0)).max() > 1e-4
    # same connectome, different phenotype: a different kernel (path-like graph, N > H)
    same = np.repeat(A[:1], 2, axis=0)
    Ks = fitted.routing_kernels(same, phenotypes=np.array([[0.0, 0.0], [1.0, 0.0]]))
    assert np.abs(Ks[0] - Ks[1]).max() > 1e-5
    assert hasattr(fitted.network_, "film")


@pytest.mark.parametrize("path", ["head", "none"])
def test_head_and_none_paths_share_the_hop_weights_across_subjects(data, path):
    A, P, y = data
    clf = PhenoBrainClassifier(phenotype_path=path, random_state=0, **TINY)
    clf.fit(A, y, phenotypes=P)
    alpha = clf.hop_weights(A, phenotypes=P)
    np.testing.assert_array_equal(alpha, np.repeat(alpha[:1], len(A), axis=0))
    assert np.abs(alpha[0] - 1.0 / alpha.shape[1]).max() > 1e-4  # learned, not left uniform
    same = np.repeat(A[:1], 2, axis=0)
    Ks = clf.routing_kernels(same, phenotypes=np.array([[0.0, 0.0], [1.0, 0.0]]))
    np.testing.assert_array_equal(Ks[0], Ks[1])
    # the head sees the phenotype under "head", nothing does under "none"
    other = np.random.default_rng(1).normal(size=(10, 2))
    d1 = clf.decision_function(A[:10], phenotypes=P[:10])
    d2 = clf.decision_function(A[:10], phenotypes=other)
    if path == "none":
        np.testing.assert_array_equal(d1, d2)
    else:
        assert np.abs(d1 - d2).max() > 1e-4


def test_film_false_builds_no_film_layer_and_keeps_the_routing(data):
    A, P, y = data
    clf = PhenoBrainClassifier(film=False, random_state=0, **TINY).fit(A, y, phenotypes=P)
    assert not hasattr(clf.network_, "film")
    alpha = clf.hop_weights(A, phenotypes=P)
    assert np.abs(alpha[P[:, 0] == 0].mean(0) - alpha[P[:, 0] == 1].mean(0)).max() > 1e-4
    # without phenotype routing there is nothing for FiLM to modulate: film is not used
    kw = dict(phenotype_path="head", random_state=0, **TINY)
    a = PhenoBrainClassifier(film=True, **kw).fit(A, y, phenotypes=P)
    b = PhenoBrainClassifier(film=False, **kw).fit(A, y, phenotypes=P)
    np.testing.assert_array_equal(
        a.decision_function(A, phenotypes=P), b.decision_function(A, phenotypes=P)
    )


def test_attention_equals_the_prior_without_learned_scores(data):
    A, P, y = data
    clf = PhenoBrainClassifier(random_state=0, **TINY).fit(A, y, phenotypes=P)
    with torch.no_grad():
        clf.network_.q.weight.zero_()
        clf.network_.q.bias.zero_()
    attn = clf.attention(A[:4], phenotypes=P[:4])
    K = clf.routing_kernels(A[:4], phenotypes=P[:4])
    prior = row_normalize(np.maximum(K, 0.0), eps=1e-6)
    np.testing.assert_allclose(attn, prior, atol=1e-5)
    np.testing.assert_allclose(attn.sum(2), 1.0, atol=1e-5)


def test_regulariser_weight_pulls_attention_towards_the_prior(data):
    A, P, y = data
    kw = dict(TINY, n_epochs=15, prior_bias=0.0)
    kls = []
    for w in (0.0, 20.0):
        clf = PhenoBrainClassifier(reg_weight=w, random_state=0, **kw).fit(A, y, phenotypes=P)
        kls.append(clf.loss_curve_[-1]["reg"])
    assert kls[1] < kls[0]


def test_seed_determinism_clone_and_global_rng_untouched(data):
    A, P, y = data
    state = torch.random.get_rng_state()
    a = PhenoBrainClassifier(random_state=5, **TINY).fit(A, y, phenotypes=P)
    assert torch.equal(state, torch.random.get_rng_state())
    b = clone(a).fit(A, y, phenotypes=P)
    c = PhenoBrainClassifier(random_state=6, **TINY).fit(A, y, phenotypes=P)
    pa = a.predict_proba(A, phenotypes=P)
    np.testing.assert_array_equal(pa, b.predict_proba(A, phenotypes=P))
    assert not np.allclose(pa, c.predict_proba(A, phenotypes=P))
    assert a.decision_function(A, phenotypes=P).shape == (80,)
    assert set(a.predict(A, phenotypes=P)) <= {0, 1}
    assert 0.0 <= a.score(A, y, phenotypes=P) <= 1.0


def test_learns_the_phenotype_routed_label_on_its_training_set():
    A, P, y = make_phenotype_connectomes(200, label_noise=0.0, random_state=1)
    clf = PhenoBrainClassifier(random_state=0, n_epochs=60, embed_dim=16).fit(A, y, phenotypes=P)
    assert clf.loss_curve_[-1]["ce"] < 0.5 * clf.loss_curve_[0]["ce"]
    assert clf.score(A, y, phenotypes=P) > 0.85


def test_early_stopping_keeps_the_best_validation_epoch(data):
    A, P, y = data
    kw = {**TINY, "n_epochs": 40}
    clf = PhenoBrainClassifier(early_stopping=True, n_iter_no_change=3, random_state=0, **kw)
    clf.fit(A, y, phenotypes=P)
    val = [h["val_ce"] for h in clf.loss_curve_]
    assert val[clf.best_epoch_ - 1] <= min(val) + 1e-4
    assert len(val) <= clf.best_epoch_ + 3
    # the kept weights are the best epoch's: refitting for exactly best_epoch_ epochs agrees
    again = PhenoBrainClassifier(
        early_stopping=True,
        n_iter_no_change=100,
        random_state=0,
        **{**kw, "n_epochs": clf.best_epoch_},
    ).fit(A, y, phenotypes=P)
    np.testing.assert_allclose(
        clf.predict_proba(A, phenotypes=P), again.predict_proba(A, phenotypes=P), atol=1e-6
    )
    with pytest.raises(ValueError, match="validation_fraction"):
        PhenoBrainClassifier(early_stopping=True, validation_fraction=0.99, **TINY).fit(
            A, y, phenotypes=P
        )


def test_bad_input_is_refused_clearly(data, fitted):
    A, P, y = data
    est = PhenoBrainClassifier(**TINY)
    with pytest.raises(ValueError, match=r"shape \(n_subjects, N, N\)"):
        est.fit(A[:, :, :5], y, phenotypes=P)
    bad = A.copy()
    bad[3, 0, 1] += 0.5
    with pytest.raises(ValueError, match="symmetric; subject 3"):
        est.fit(bad, y, phenotypes=P)
    nan = A.copy()
    nan[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(nan, y, phenotypes=P)
    with pytest.raises(TypeError, match="phenotypes is required"):
        est.fit(A, y)
    with pytest.raises(ValueError, match="phenotypes has 79 rows"):
        est.fit(A, y, phenotypes=P[:-1])
    with pytest.raises(ValueError, match="y has 79 labels"):
        est.fit(A, y[:-1], phenotypes=P)
    with pytest.raises(ValueError, match="two classes"):
        est.fit(A, np.zeros(80), phenotypes=P)
    with pytest.raises(ValueError, match="n_hops"):
        PhenoBrainClassifier(n_hops=-1).fit(A, y, phenotypes=P)
    with pytest.raises(ValueError, match="'phenotype_path' parameter .* Got 'late'"):
        PhenoBrainClassifier(phenotype_path="late").fit(A, y, phenotypes=P)
    with pytest.raises(ValueError, match="'film' parameter"):
        PhenoBrainClassifier(film="no").fit(A, y, phenotypes=P)
    with pytest.raises(ValueError, match="fitted on 16"):
        fitted.predict(A[:, :8, :8], phenotypes=P)
    with pytest.raises(ValueError, match="fitted on 2"):
        fitted.predict(A, phenotypes=P[:, :1])
    with pytest.raises(TypeError, match="connectomes must be a numeric array"):
        fitted.predict([["x"]], phenotypes=P)


def test_demo_scores_every_method_on_a_tiny_configuration():
    from mvlearn_ext._demo.brain import NETWORKS, phenobrain_scores

    res = phenobrain_scores(0, n_subjects=80, n_epochs=2, embed_dim=8)
    assert set(NETWORKS) <= set(res) and len(res) == len(NETWORKS) + 2
    assert all(0.0 <= auc <= 1.0 and s >= 0 for auc, s in res.values())


@pytest.mark.slow
def test_demo_acceptance_phenobrain_beats_late_fusion():
    """On the phenotype-dependent connectomes, PhenoBrain beats late fusion by 0.05 AUC."""
    from mvlearn_ext._demo.brain import NETWORKS, phenobrain_scores

    only = {name: NETWORKS[name] for name in ("PhenoBrain (reconstruction)",)}
    res = [phenobrain_scores(seed, networks=only) for seed in range(3)]
    pb = np.mean([r["PhenoBrain (reconstruction)"][0] for r in res])
    lr = np.mean([r["logistic regression, vec(A) + p (late fusion)"][0] for r in res])
    assert pb >= lr + 0.05


def test_phenotype_column_names_are_recorded_and_checked(data):
    pd = pytest.importorskip("pandas")
    A, P, y = data
    frame = pd.DataFrame(P, columns=["g", "age"])
    est = PhenoBrainClassifier(random_state=0, **TINY).fit(A, y, phenotypes=frame)
    assert est.phenotype_names_in_.tolist() == ["g", "age"]
    est.predict(A[:4], phenotypes=frame[:4])  # same names, same order
    with pytest.raises(ValueError, match="feature names of phenotypes .* another order"):
        est.predict(A[:4], phenotypes=frame[["age", "g"]][:4])
    renamed = frame.rename(columns={"g": "sex"})
    with pytest.raises(ValueError, match=r"unseen at fit: \['sex'\]"):
        est.predict(A[:4], phenotypes=renamed[:4])
    with pytest.warns(UserWarning, match="phenotypes has no feature names"):
        est.predict(A[:4], phenotypes=P[:4])
    plain = PhenoBrainClassifier(random_state=0, **TINY).fit(A, y, phenotypes=P)
    assert not hasattr(plain, "phenotype_names_in_")
    with pytest.warns(UserWarning, match="phenotypes has feature names, but"):
        plain.predict(A[:4], phenotypes=frame[:4])
    # refitting on an array forgets the names
    assert not hasattr(est.fit(A, y, phenotypes=P), "phenotype_names_in_")
