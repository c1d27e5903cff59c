"""Progress of the torch estimators goes through VerboseMixin (docs/design.md, "Vocabulary").

``verbose=0``: nothing printed; ``verbose=2``: ``[ClassName] ...`` lines (and the
tqdm bar) on stderr, never on stdout; ``verbose`` does not change the fit.
"""

import numpy as np
import pytest
import torch

from mvlearn_ext.brain import PhenoBrainClassifier, make_phenotype_connectomes
from mvlearn_ext.datasets import make_multiview_blobs
from mvlearn_ext.deep.diffusion import ConditionalDiffusion, TwoStageDiffusion
from mvlearn_ext.deep.gaussian_process import TLVMOGPRegressor
from mvlearn_ext.diffusion import make_toy_tasks
from mvlearn_ext.incomplete import CIMLN


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _brain(verbose):
    A, P, y = make_phenotype_connectomes(60, random_state=0)
    m = PhenoBrainClassifier(embed_dim=8, n_epochs=2, random_state=0, verbose=verbose)
    return m.fit(A, y, phenotypes=P).loss_curve_


def _cimln(verbose):
    Xs, _ = make_multiview_blobs(60, n_views=2, n_features=[4, 3], random_state=0)
    kw = dict(hidden_layer_sizes=(8,), embed_dim=4, n_epochs_pretrain=1, n_epochs=2, n_init=1)
    return CIMLN(n_clusters=3, random_state=0, verbose=verbose, **kw).fit(Xs).embedding_


def _conditional(verbose):
    C, X = make_toy_tasks(n_pairs=16, random_state=0).pairs[0]
    m = ConditionalDiffusion(
        hidden_layer_sizes=(8,), max_iter=120, random_state=0, verbose=verbose
    )
    return m.fit(C, X).loss_curve_


def _two_stage(verbose):
    data = make_toy_tasks(n_pairs=16, n_unpaired=20, random_state=0)
    m = TwoStageDiffusion(
        hidden_layer_sizes_specialist=(8,),
        hidden_layer_sizes_generalist=(8,),
        max_iter_specialist=10,
        max_iter_generalist=10,
        random_state=0,
        verbose=verbose,
    )
    return m.fit(data.pairs, data.unpaired).generalist_.loss_curve_


def _tlvmogp(verbose):
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(30, 1))
    Y = np.sin(X + np.arange(4)[None, :])
    kw = dict(n_inducing=6, n_epochs=2, batch_size=10, output_batch_size=4)
    return TLVMOGPRegressor(random_state=0, verbose=verbose, **kw).fit(X, Y).predict(X)


# (fit returning a result, the name in the prefix, a word of every verbose=2 run)
CASES = [
    (_brain, "PhenoBrainClassifier", "epoch 2/2"),
    (_cimln, "CIMLN", "main epoch 2/2"),
    (_conditional, "ConditionalDiffusion", "step 120/120"),
    (_two_stage, "TwoStageDiffusion", "generalist on"),
    (_tlvmogp, "TLVMOGPRegressor", "final loss"),
]


@pytest.mark.parametrize("fit, name, expected", CASES, ids=[c[1] for c in CASES])
def test_progress_goes_to_stderr_through_verbose(fit, name, expected, capsys):
    quiet = fit(0)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    loud = fit(2)
    out = capsys.readouterr()
    assert out.out == ""
    assert f"[{name}] " in out.err and expected in out.err
    np.testing.assert_array_equal(np.asarray(loud), np.asarray(quiet))
