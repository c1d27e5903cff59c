"""The torch estimators' shared rules: threads bounded by ``n_jobs``, devices, sizes."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.base import clone

torch = pytest.importorskip("torch")

from mvlearn_ext.utils import effective_n_jobs, project_simplex  # noqa: E402
from mvlearn_ext.utils._torch import (  # noqa: E402
    as_numpy,
    as_tensor,
    resolve_device,
    seeded_generator,
    torch_threads,
)
from mvlearn_ext.utils._validation import check_allocation  # noqa: E402

CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _estimators():
    """(name, unfitted instance, fit(est), predict(est)) for every torch estimator."""
    from mvlearn_ext.brain import PhenoBrainClassifier, make_phenotype_connectomes
    from mvlearn_ext.datasets import make_multiview_blobs
    from mvlearn_ext.deep.diffusion import (
        ConditionalDiffusion,
        GaussianDSMDiffusion,
        TwoStageDiffusion,
    )
    from mvlearn_ext.deep.gaussian_process import GSLVMOGPRegressor, TLVMOGPRegressor
    from mvlearn_ext.diffusion import make_toy_tasks
    from mvlearn_ext.incomplete import CIMLN
    from mvlearn_ext.longtail import AESClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    Y = np.sin(X[:, :1] + np.arange(3))
    Xs, _ = make_multiview_blobs(40, n_views=2, n_features=[3, 3], random_state=0)
    A, P, yb = make_phenotype_connectomes(24, random_state=0)
    C, Xc = make_toy_tasks(n_pairs=16, random_state=0).pairs[0]
    toy = make_toy_tasks(n_pairs=16, n_unpaired=8, random_state=0)
    gp = dict(n_inducing=4, n_epochs=1, batch_size=20, random_state=0)
    return [
        (
            "AESClassifier",
            AESClassifier(n_epochs_stage1=1, n_epochs_stage2=1, random_state=0),
            lambda e: e.fit(X, y),
            lambda e: e.predict(X),
        ),
        (
            "TLVMOGPRegressor",
            TLVMOGPRegressor(**gp),
            lambda e: e.fit(X, Y),
            lambda e: e.predict(X),
        ),
        (
            "GSLVMOGPRegressor",
            GSLVMOGPRegressor(n_terms=1, **gp),
            lambda e: e.fit(X, Y),
            lambda e: e.predict(X),
        ),
        (
            "PhenoBrainClassifier",
            PhenoBrainClassifier(n_epochs=1, embed_dim=4, random_state=0),
            lambda e: e.fit(A, yb, phenotypes=P),
            lambda e: e.predict(A, phenotypes=P),
        ),
        (
            "CIMLN",
            CIMLN(
                n_clusters=2,
                hidden_layer_sizes=(4,),
                embed_dim=2,
                n_epochs_pretrain=1,
                n_epochs=1,
                n_init=1,
                random_state=0,
            ),
            lambda e: e.fit(Xs),
            None,
        ),
        (
            "ConditionalDiffusion",
            ConditionalDiffusion(hidden_layer_sizes=(4,), max_iter=2, random_state=0),
            lambda e: e.fit(C, Xc),
            lambda e: e.sample(C[:3], random_state=0),
        ),
        (
            "GaussianDSMDiffusion",
            GaussianDSMDiffusion(degree=1, max_iter=2, random_state=0),
            lambda e: e.fit(C, Xc),
            lambda e: e.sample(C[:3], random_state=0),
        ),
        (
            "TwoStageDiffusion",
            TwoStageDiffusion(
                hidden_layer_sizes_specialist=(4,),
                hidden_layer_sizes_generalist=(4,),
                max_iter_specialist=2,
                max_iter_generalist=2,
                random_state=0,
            ),
            lambda e: e.fit(toy.pairs, toy.unpaired),
            lambda e: e.sample(C[:3], np.zeros(3, dtype=int), random_state=0),
        ),
    ]


ESTIMATORS = _estimators()
IDS = [case[0] for case in ESTIMATORS]


def test_torch_threads_sets_the_resolved_count_and_restores():
    before = torch.get_num_threads()
    for n_jobs, expected in ((None, 1), (-1, CPUS), (10**6, CPUS), (1, 1)):
        with torch_threads(n_jobs) as n:
            assert n == expected == torch.get_num_threads()
        assert torch.get_num_threads() == before
    for bad in (0, -(CPUS + 1)):
        with pytest.raises(ValueError, match="n_jobs"):
            with torch_threads(bad):
                pass
    assert torch.get_num_interop_threads() <= max(CPUS, 1)


@pytest.mark.parametrize("name, est, fit, predict", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("n_jobs", [None, -1, 10**6])
def test_fit_and_predict_use_the_resolved_n_jobs(name, est, fit, predict, n_jobs, monkeypatch):
    """torch runs on effective_n_jobs(n_jobs) threads inside fit and predict, then is restored."""
    seen = []
    original = torch.set_num_threads

    def record(n):
        seen.append(n)
        original(n)

    before = torch.get_num_threads()
    monkeypatch.setattr(torch, "set_num_threads", record)
    est = clone(est).set_params(n_jobs=n_jobs)
    fit(est)
    if predict is not None:
        predict(est)
    assert seen, "torch.set_num_threads was never called"
    expected = effective_n_jobs(n_jobs)
    # each call sets the resolved count first and restores torch's setting last
    assert seen[0] == expected and seen[-1] == before
    assert set(seen) <= {expected, before}
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("name, est, fit, predict", ESTIMATORS[:1], ids=IDS[:1])
def test_n_jobs_zero_is_refused_by_name(name, est, fit, predict):
    with pytest.raises(ValueError, match="n_jobs"):
        fit(clone(est).set_params(n_jobs=0))


def test_a_huge_n_jobs_starts_no_more_threads_than_cpus():
    """AESClassifier(n_jobs=10**6): the process's threads grow by at most the CPU count."""
    code = textwrap.dedent(
        """
        import os, threading, time
        import numpy as np
        import torch
        from mvlearn_ext.longtail import AESClassifier

        def count():
            return len(os.listdir("/proc/self/task"))

        rng = np.random.default_rng(0)
        X = rng.normal(size=(42, 5)); y = (X[:, 0] > 0).astype(int)
        # warm up the libraries' own pools (BLAS, torch's) on one thread
        AESClassifier(n_epochs_stage1=1, n_epochs_stage2=1, random_state=0).fit(X, y)
        base = count()
        peak = [base]
        done = threading.Event()

        def watch():
            while not done.is_set():
                peak[0] = max(peak[0], count())
                time.sleep(0.001)

        watcher = threading.Thread(target=watch)
        watcher.start()
        AESClassifier(n_epochs_stage1=3, n_epochs_stage2=2, n_jobs=10**6, random_state=0).fit(X, y)
        done.set()
        watcher.join()
        print(base, peak[0])
        """
    )
    if not os.path.isdir("/proc/self/task"):
        pytest.skip("counts threads through /proc")
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=300
    ).stdout.split()
    base, peak = int(out[-2]), int(out[-1])
    # the watcher thread itself, and at most one new torch worker per CPU
    assert peak - base <= CPUS + 1


@pytest.mark.parametrize("name, est, fit, predict", ESTIMATORS, ids=IDS)
def test_a_device_this_machine_lacks_is_refused_by_name(name, est, fit, predict):
    if torch.cuda.is_available() and torch.cuda.device_count() > 7:
        pytest.skip("this machine has a cuda:7")
    for device in ("cuda:7", "tpu", "meta"):
        with pytest.raises(ValueError, match="device"):
            fit(clone(est).set_params(device=device))


def test_resolve_device():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device(None).type in ("cpu", "cuda")
    assert resolve_device("auto").type in ("cpu", "cuda")
    with pytest.raises(ValueError, match="device must be"):
        resolve_device("toaster")
    with pytest.raises(TypeError, match="device"):
        resolve_device(3.5)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            resolve_device("cuda")


def test_check_allocation_names_the_parameter():
    check_allocation(10, "n_latent", 10, what="the latents")
    with pytest.raises(ValueError, match=r"n_latent=1000000000000 is too large: the latents"):
        check_allocation(10**12 * 10**3, "n_latent", 10**12, what="the latents")


def test_round_trip_keeps_dtype_and_shares_memory():
    X = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = as_tensor(X)
    assert t.dtype == torch.float32
    t[0, 0] = 42.0
    assert X[0, 0] == 42.0  # a view, no copy
    assert as_tensor(np.arange(3)).dtype == torch.float64
    np.testing.assert_array_equal(as_numpy(t * 2), X * 2)
    with pytest.raises(TypeError, match="numeric"):
        as_tensor(np.array(["a"]))


def test_compiled_kernels_take_tensor_memory():
    """Tensors from the bridge go through the compiled core without a copy."""
    t = torch.randn(50, 7, dtype=torch.float64, generator=seeded_generator(0))
    Z = project_simplex(as_numpy(t))
    np.testing.assert_allclose(Z.sum(axis=1), 1.0)


def test_seeded_generator_is_reproducible_and_leaves_global_state():
    state = torch.random.get_rng_state()
    a = torch.rand(5, generator=seeded_generator(123))
    b = torch.rand(5, generator=seeded_generator(123))
    assert torch.equal(a, b)
    assert torch.equal(state, torch.random.get_rng_state())
    c = torch.rand(5, generator=seeded_generator(np.random.default_rng(1)))
    d = torch.rand(5, generator=seeded_generator(np.random.default_rng(1)))
    assert torch.equal(c, d)
    with pytest.raises(TypeError, match="random_state"):
        seeded_generator("seed")


def test_root_import_does_not_import_torch():
    code = "import sys, mvlearn_ext, mvlearn_ext.utils; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    "family, name",
    [
        ("incomplete", "CIMLN"),
        ("longtail", "AESClassifier"),
        ("longtail", "ARSLoss"),
        ("brain", "PhenoBrainClassifier"),
        ("adapters", "LoRAMoELinear"),
    ],
)
def test_torch_estimators_come_from_their_family_and_import_torch_on_use(family, name):
    code = textwrap.dedent(
        f"""
        import sys
        import mvlearn_ext.{family} as family
        assert "torch" not in sys.modules
        assert "{name}" in family.__all__
        cls = getattr(family, "{name}")
        assert "torch" in sys.modules and cls.__name__ == "{name}"
        from mvlearn_ext.{family} import {name} as again
        assert again is cls
        try:
            family.no_such_name
        except AttributeError as exc:
            assert "no_such_name" in str(exc)
        else:
            raise AssertionError("no AttributeError")
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name, est, fit, predict", ESTIMATORS, ids=IDS)
def test_predict_before_fit_raises_not_fitted_error(name, est, fit, predict):
    from sklearn.exceptions import NotFittedError

    if predict is None:
        pytest.skip(f"{name} has no predict or sample")
    with pytest.raises(NotFittedError):
        predict(clone(est))


@pytest.mark.parametrize("name, est, fit, predict", ESTIMATORS, ids=IDS)
def test_a_learning_rate_beyond_the_bound_is_refused_by_name(name, est, fit, predict):
    with pytest.raises(ValueError, match="learning_rate"):
        fit(clone(est).set_params(learning_rate=1e300))


#: (estimator, size parameter, value): each would need terabytes.
HUGE = [
    ("AESClassifier", "hidden_layer_sizes", (10**12,)),
    ("TLVMOGPRegressor", "n_latent", 10**12),
    ("TLVMOGPRegressor", "n_blocks", 10**12),
    ("TLVMOGPRegressor", "n_predict_samples", 10**12),
    ("GSLVMOGPRegressor", "n_latent", 10**12),
    ("GSLVMOGPRegressor", "n_terms", 10**12),
    ("PhenoBrainClassifier", "n_hops", 10**12),
    ("PhenoBrainClassifier", "embed_dim", 10**12),
    ("CIMLN", "embed_dim", 10**12),
    ("CIMLN", "hidden_layer_sizes", (10**12,)),
    ("ConditionalDiffusion", "n_steps", 10**12),
    ("ConditionalDiffusion", "n_tasks", 10**12),
    ("ConditionalDiffusion", "hidden_layer_sizes", (10**12,)),
    ("GaussianDSMDiffusion", "batch_size", 10**12),
    ("GaussianDSMDiffusion", "n_steps", 10**12),
    ("TwoStageDiffusion", "n_per_condition", 10**12),
    ("TwoStageDiffusion", "hidden_layer_sizes_generalist", (10**12,)),
]


@pytest.mark.parametrize("name, param, value", HUGE, ids=[f"{n}-{p}" for n, p, _ in HUGE])
def test_a_huge_size_is_refused_by_name_before_allocation(name, param, value):
    _, est, fit, _ = ESTIMATORS[IDS.index(name)]
    est = clone(est).set_params(**{param: value})
    if name == "ConditionalDiffusion" and param == "n_tasks":
        with pytest.raises(ValueError, match=rf"{param}=.* is too large"):
            rng = np.random.default_rng(0)
            C, X = rng.normal(size=(8, 1)), rng.normal(size=(8, 2))
            est.fit(C, X, tasks=np.zeros(8, dtype=int))
        return
    with pytest.raises(ValueError, match=rf"{param}=.* is too large"):
        fit(est)


def test_phenobrain_weights_beyond_the_bound_are_refused_and_the_bound_is_finite():
    """prior_bias and reg_weight above 1e6 are refused; at 1e6 the probabilities are finite."""
    _, est, fit, _ = ESTIMATORS[IDS.index("PhenoBrainClassifier")]
    from mvlearn_ext.brain import make_phenotype_connectomes

    for param in ("prior_bias", "reg_weight"):
        with pytest.raises(ValueError, match=param):
            fit(clone(est).set_params(**{param: 1e300}))
    A, P, y = make_phenotype_connectomes(24, random_state=0)
    model = clone(est).set_params(prior_bias=1e6, reg_weight=1e6, n_epochs=3)
    try:
        model.fit(A, y, phenotypes=P)
    except ValueError as exc:  # a diverged training names what to lower
        assert "prior_bias" in str(exc) and "reg_weight" in str(exc)
    else:
        proba = model.predict_proba(A, phenotypes=P)
        assert np.isfinite(proba).all()
        np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-6)


def test_a_diverging_training_stops_with_an_error_naming_the_step_size():
    """A huge step size makes the weights overflow: fit says so instead of fitting NaN."""
    from mvlearn_ext.longtail import AESClassifier

    X, y = np.random.default_rng(0).normal(size=(60, 4)), np.tile([0, 1, 2], 20)
    X = X * 1e3
    est = AESClassifier(n_epochs_stage1=5, n_epochs_stage2=2, learning_rate=1e6, random_state=0)
    try:
        est.fit(X, y)
    except ValueError as exc:
        assert "learning_rate=1000000.0" in str(exc) and "diverged" in str(exc)
    else:
        assert np.isfinite(est.soft_fusion_proba(X)).all()


def test_nan_conditions_are_refused_by_name():
    _, est, _, _ = ESTIMATORS[IDS.index("TwoStageDiffusion")]
    from mvlearn_ext.diffusion import make_toy_tasks

    toy = make_toy_tasks(n_pairs=16, n_unpaired=8, random_state=0)
    unpaired = [np.array(U, dtype=float) for U in toy.unpaired]
    unpaired[1][0] = np.nan
    with pytest.raises(ValueError, match=r"unpaired\[1\] holds NaN"):
        clone(est).fit(toy.pairs, unpaired)
    (C, X), *rest = toy.pairs
    C = np.array(C, dtype=float)
    C[2] = np.nan
    with pytest.raises(ValueError, match=r"C of pairs\[0\] holds NaN"):
        clone(est).fit([(C, X), *rest], toy.unpaired)
    _, cond, fit, _ = ESTIMATORS[IDS.index("ConditionalDiffusion")]
    cond = clone(cond)
    fit(cond)
    with pytest.raises(ValueError, match="C holds NaN"):
        cond.sample(np.array([[np.nan]]), random_state=0)
