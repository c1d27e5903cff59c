"""Renamed parameters of the torch estimators: the old name still works for one release.

``n_threads`` -> ``n_jobs``, ``lr`` -> ``learning_rate``, ``epochs`` -> ``n_epochs``
(docs/design.md, "Vocabulary"). Passing the old name warns a ``FutureWarning``
naming both and gives the same fit as the new name (same seed).
"""

import numpy as np
import pytest
import torch

from mvlearn_ext.brain import make_phenotype_connectomes
from mvlearn_ext.datasets import make_multiview_blobs
from mvlearn_ext.deep.brain import PhenoBrainClassifier
from mvlearn_ext.deep.diffusion import (
    ConditionalDiffusion,
    GaussianDSMDiffusion,
    TwoStageDiffusion,
)
from mvlearn_ext.deep.gaussian_process import GSLVMOGPRegressor, TLVMOGPRegressor
from mvlearn_ext.deep.incomplete import CIMLN
from mvlearn_ext.deep.longtail import AESClassifier


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _gp_data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(30, 1))
    Y = np.sin(X + np.arange(4)[None, :]) + 0.05 * rng.normal(size=(30, 4))
    return (X, Y), {}


def _aes_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 5))
    return (X, (X[:, 0] > 0.5).astype(int)), {}


def _brain_data():
    A, P, y = make_phenotype_connectomes(60, random_state=0)
    return (A, y), {"phenotypes": P}


def _mv_data():
    Xs, _ = make_multiview_blobs(60, n_views=2, n_features=[4, 3], random_state=0)
    return (Xs,), {}


def _diffusion_data():
    rng = np.random.default_rng(0)
    C = rng.uniform(-1, 1, (40, 1))
    return (C, np.hstack([C, 2 * C]) + 0.05 * rng.normal(size=(40, 2))), {}


def _two_stage_data():
    rng = np.random.default_rng(0)
    C = [rng.uniform(-1, 1, (20, 1)) for _ in range(2)]
    pairs = [(c, np.hstack([c, (k + 1) * c]) + 0.05 * rng.normal(size=(20, 2)))
             for k, c in enumerate(C)]  # fmt: skip
    return (pairs, [rng.uniform(-1, 1, (10, 1)) for _ in range(2)]), {}


def _weights(net):
    return torch.cat([p.detach().flatten() for p in net.parameters()]).numpy()


def _gp_out(m, args, kw):
    return m.predict(args[0])


def _aes_out(m, args, kw):
    return m.decision_function_heads(args[0])


def _brain_out(m, args, kw):
    return m.decision_function(args[0], phenotypes=kw["phenotypes"])


def _mv_out(m, args, kw):
    return m.embedding_


_COND = dict(hidden=(8,), n_iter=20, random_state=0)
_DSM = dict(degree=2, n_iter=20, random_state=0)
_TWO = dict(specialist_hidden=(8,), generalist_hidden=(8,), specialist_iter=10,
            generalist_iter=10, random_state=0)  # fmt: skip
_TGP = dict(n_inducing=6, n_epochs=2, batch_size=10, output_batch_size=4, random_state=0)
_GSGP = dict(n_terms=1, n_inducing=4, n_epochs=2, batch_size=10, output_batch_size=4)
_AES = dict(stage1_epochs=2, stage2_epochs=1, random_state=0)
_BRAIN = dict(hidden=8, batch_size=32, random_state=0)
_CIMLN = dict(n_clusters=3, hidden=(8,), embed_dim=4, pretrain_epochs=1, n_init=1, random_state=0)

# (class, base keywords, old name, new name, a value other than the default, data, output)
CASES = [
    (TLVMOGPRegressor, _TGP, "lr", "learning_rate", 0.05, _gp_data, _gp_out),
    (TLVMOGPRegressor, _TGP, "n_threads", "n_jobs", 2, _gp_data, _gp_out),
    (GSLVMOGPRegressor, {**_GSGP, "random_state": 0}, "lr", "learning_rate", 0.05, _gp_data,
     _gp_out),
    (GSLVMOGPRegressor, {**_GSGP, "random_state": 0}, "n_threads", "n_jobs", 2, _gp_data,
     _gp_out),
    (AESClassifier, _AES, "n_threads", "n_jobs", 2, _aes_data, _aes_out),
    (PhenoBrainClassifier, {**_BRAIN, "n_epochs": 2}, "n_threads", "n_jobs", 2, _brain_data,
     _brain_out),
    (PhenoBrainClassifier, _BRAIN, "epochs", "n_epochs", 3, _brain_data, _brain_out),
    (CIMLN, {**_CIMLN, "n_epochs": 2}, "lr", "learning_rate", 1e-3, _mv_data, _mv_out),
    (CIMLN, _CIMLN, "epochs", "n_epochs", 2, _mv_data, _mv_out),
    (ConditionalDiffusion, _COND, "lr", "learning_rate", 5e-3, _diffusion_data,
     lambda m, args, kw: _weights(m.network_)),
    (GaussianDSMDiffusion, _DSM, "lr", "learning_rate", 5e-2, _diffusion_data,
     lambda m, args, kw: np.append(m.coef_, m.var_)),
    (TwoStageDiffusion, _TWO, "lr", "learning_rate", 5e-3, _two_stage_data,
     lambda m, args, kw: np.concatenate([_weights(s.network_) for s in m.specialists_]
                                        + [_weights(m.generalist_.network_)])),
]  # fmt: skip


@pytest.mark.parametrize(
    "cls, base, old, new, value, data, output",
    CASES,
    ids=[f"{c[0].__name__}-{c[2]}" for c in CASES],
)
def test_old_name_warns_and_fits_like_the_new_name(
    cls, base, old, new, value, data, output, monkeypatch
):
    assert value != cls().get_params()[new]  # else the test could not tell the two apart
    args, kw = data()
    seen = []
    set_threads = torch.set_num_threads

    def record(n):
        seen.append(n)
        set_threads(n)

    monkeypatch.setattr(torch, "set_num_threads", record)
    new_fit = cls(**base, **{new: value}).fit(*args, **kw)
    threads_new = list(seen)
    seen.clear()
    with pytest.warns(FutureWarning, match=rf"`{old}` was renamed `{new}`.*removed in 0\.2") as w:
        old_fit = cls(**base, **{old: value}).fit(*args, **kw)
    renamed = [r for r in w if "was renamed" in str(r.message)]
    assert {r.filename for r in renamed} == {__file__}  # the user's line, not the package's
    threads_old = list(seen)
    np.testing.assert_array_equal(output(old_fit, args, kw), output(new_fit, args, kw))
    if new == "n_jobs":  # the thread count reached torch under both names
        assert value in threads_new and threads_old == threads_new
    if new == "n_epochs":
        assert len(old_fit.loss_history_) == len(new_fit.loss_history_)
    assert (
        old_fit.get_params()[old] == value and old_fit.get_params()[new] == cls().get_params()[new]
    )


@pytest.mark.parametrize("cls", [TLVMOGPRegressor, GSLVMOGPRegressor, AESClassifier,
                                 PhenoBrainClassifier, CIMLN, ConditionalDiffusion,
                                 GaussianDSMDiffusion, TwoStageDiffusion])  # fmt: skip
def test_new_names_do_not_warn(cls, recwarn):
    params = cls().get_params()
    for old in ("n_threads", "lr", "epochs"):
        if old in params:
            assert params[old] == "deprecated"
    assert not [w for w in recwarn if issubclass(w.category, FutureWarning)]
