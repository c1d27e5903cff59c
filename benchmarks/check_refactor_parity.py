"""Fingerprints of the results the issue-17 de-duplication touched, to check it changes none.

Families outside ``cluster`` (see ``check_cluster_parity.py`` for the clusterers):
the merges' parameter-name checks (``prune_keys``, ``layers``; values and error
messages), the multi-view check suite's reports on defective estimators, the
bandit simulators and online policies (side information, contextual, the online
checks and state), the torch diffusion estimators, T-LVMOGP and GS-LVMOGP, and the
RTE demo rows (on stub benchmarks). Every case is run with fixed seeds and one
thread; each result (or the error's type and message) is recorded as a SHA-256
of its arrays' bytes, so a refactor that changes nothing numerical gives the same
file, byte for byte.

Run: ``PYTHONPATH=<checkout> python benchmarks/check_refactor_parity.py --json OUT``
(optionally ``--only merging bandits ...``); ``python
benchmarks/check_refactor_parity.py --compare A.json B.json`` lists the keys that
differ (exit status 1 if any). The torch cases are skipped without torch.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import sys

import numpy as np


def _checkout():
    """The root of the checkout whose ``mvlearn_ext`` is imported."""
    import mvlearn_ext

    return pathlib.Path(mvlearn_ext.__file__).resolve().parents[1]


def _run(f, *args, **kwargs):
    """``("ok", f(*args, **kwargs))``, or ``("err", type, message)`` if it raises."""
    try:
        return ("ok", f(*args, **kwargs))
    except Exception as exc:  # the message is part of the behaviour
        return ("err", type(exc).__name__, str(exc))


def merging_cases():
    from mvlearn_ext import merging as M

    rng = np.random.default_rng(0)
    base = {
        "w1": rng.normal(size=(6, 4)),
        "w2": rng.normal(size=(3, 6)),
        "b": rng.normal(size=3),
        "step": np.array(3),
    }
    experts = [
        {k: (v + rng.normal(size=v.shape) if v.dtype.kind == "f" else v) for k, v in base.items()}
        for _ in range(3)
    ]
    out = {}
    for pk in (None, ["w1"], ["w2", "w1"], "w1", ["nope"], ["step"], ("b",)):
        out[f"ties {pk}"] = _run(M.ties, base, experts, prune_keys=pk, density=0.3)
        out[f"dare {pk}"] = _run(M.dare, base, experts, prune_keys=pk, density=0.5, random_state=1)
        out[f"mag {pk}"] = _run(M.magnitude_merge, base, experts, prune_keys=pk)
    names = [n for n in dir(M) if n.startswith("sa_") or "saliency" in n]
    out["names"] = names
    for layers in (None, ["w1", "w2"], "w1", ["nope"], ["w1", "w1"], ["b"]):
        for n in names:
            f = getattr(M, n)
            if not callable(f):
                continue
            out[f"{n} {layers}"] = _run(f, base, experts, layers=layers)
    return out


def estimator_checks_cases():
    import importlib.util

    from mvlearn_ext.cluster import ConcatKMeans
    from mvlearn_ext.utils import estimator_checks as ec

    spec = importlib.util.spec_from_file_location(
        "tec", _checkout() / "tests" / "utils" / "test_estimator_checks.py"
    )
    tec = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tec)

    class LaxPredict(ConcatKMeans):
        def predict(self, Xs):
            return np.zeros(len(Xs[0]), dtype=int)

    out = {}
    for est, name in (
        tec.BROKEN
        + [
            (LaxPredict(n_init=2), "check_error_nan_inf"),
            (LaxPredict(n_init=2), "check_error_views_differ_from_fit"),
        ]
        + [
            (ConcatKMeans(n_init=2), "check_error_nan_inf"),
            (ConcatKMeans(n_init=2), "check_error_views_differ_from_fit"),
        ]
    ):
        if "nan_inf" in name or "views_differ" in name:
            out[f"{type(est).__name__} {name}"] = _run(getattr(ec, name), est)
    return out


def _update_and_count(upd, pol, group):
    upd(pol, group)
    return pol.counts_


def bandits_cases():
    from mvlearn_ext import bandits as B

    out = {}
    K = 6
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(K, 2))
    sigma = np.exp(0.5 * (-0.5 + Z @ np.array([0.8, -0.4]) + rng.normal(0, 0.3, K)))
    for kw in (
        {},
        {"deviation_sd": 0.0},
        {"deviation_sd": 0.7},
        {"fit_intercept": False},
        {"coef": np.array([-0.5, 0.8, -0.4]), "deviation_sd": 0.3},
    ):
        pol = B.SideInfoGreedyPlugIn(group_features=Z, **kw)
        for seed in (0, 1):
            res = B.simulate(
                pol, sigma=sigma, budget=300, n_replications=20, seed=seed, n_threads=1
            )
            out[f"side {kw} {seed}"] = (
                {k: v for k, v in vars(res).items()} if hasattr(res, "__dict__") else res._asdict()
            )
        pol.reset(K, 200)
        arms = B.ArmSampler(sigma=sigma, seed=4)
        for _ in range(200):
            k = pol.next_group()
            pol.update(k, arms.sample(0, k, pol.counts_[k]))
        out[f"side online {kw}"] = (pol.counts_, pol.coef_, pol.get_state())
    MEAN = np.array([[1.0, 0.0], [1.0, 0.5], [1.0, -1.0]])
    COV = np.array([np.diag([0.0, v]) for v in (1.0, 0.25, 4.0)])
    BETA = np.array([[0.0, 1.0], [1.0, -1.0], [2.0, 0.5]])
    NOISE = np.array([0.5, 1.0, 2.0])
    MODEL = dict(context_mean=MEAN, context_cov=COV, beta=BETA, sigma=NOISE)
    for p in (2, 1.0, "inf"):
        for seed in (8, 9):
            pol = B.ContextualGreedyPlugIn(p=p, warm_start=6)
            out[f"ctx sim {p} {seed}"] = B.simulate_contextual(
                pol, budget=150, n_replications=10, seed=seed, n_threads=1, **MODEL
            )
            pol.reset(3, 150, 2)
            arms = B.ContextualArmSampler(seed=seed, **MODEL)
            for _ in range(150):
                k = pol.next_group()
                x, y = arms.sample(0, k, pol.counts_[k])
                pol.update(k, x, y)
            out[f"ctx online {p} {seed}"] = (pol.counts_, pol.coef_, pol.get_state())
    import pickle

    for pol, args, upd in (
        (B.GreedyPlugIn(p=2), (3, 50), lambda pol, g: pol.update(g, 1.0)),
        (B.VarianceUCB(), (3, 50), lambda pol, g: pol.update(g, 1.0)),
        (B.ContextualGreedyPlugIn(p=2), (3, 50, 2), lambda pol, g: pol.update(g, [1.0, 0.5], 1.0)),
    ):
        name = type(pol).__name__
        out[f"{name} before reset"] = [
            _run(getattr, pol, "counts_"),
            _run(pol.next_group),
            _run(upd, pol, 0),
            _run(pol.get_state),
        ]
        pol.reset(*args)
        for g in (0, 2, 3, -1, True, 1.0, np.int64(1), "a"):
            out[f"{name} update {g!r}"] = _run(_update_and_count, upd, pol, g)
        st = pol.get_state()
        out[f"{name} state"] = st
        pol2 = pickle.loads(pickle.dumps(pol))
        pol2.set_state(st)
        out[f"{name} restored"] = (pol2.counts_, pol2.get_state(), pol2.next_group())
    return out


def diffusion_cases():
    import torch

    torch.set_num_threads(1)
    from mvlearn_ext.deep.diffusion import (
        ConditionalDiffusion,
        GaussianDSMDiffusion,
        TwoStageDiffusion,
    )
    from mvlearn_ext.diffusion import make_toy_tasks

    out = {}
    rng = np.random.default_rng(0)
    C = rng.uniform(-1, 1, (64, 1))
    X = np.hstack([C, 2 * C]) + 0.05 * rng.normal(size=(64, 2))
    w = rng.uniform(0.1, 2, 64)
    for seed in (0, 1):
        for kw in ({}, {"sampler": "ddim"}, {"lr_schedule": "cosine"}):
            m = ConditionalDiffusion(hidden=(8,), n_iter=60, random_state=seed, **kw).fit(C, X)
            out[f"cond {seed} {kw}"] = (
                m.loss_history_,
                m.x_mean_,
                m.x_scale_,
                m.c_mean_,
                m.n_features_,
                str(m.device_),
                m.sample(C[:10], random_state=3),
            )
        m = ConditionalDiffusion(hidden=(8,), n_iter=60, random_state=seed).fit(
            C, X, sample_weight=w
        )
        out[f"cond w {seed}"] = (m.loss_history_, m.sample(C[:10], random_state=3))
        X2 = np.hstack([C, C**2]) + 0.05 * rng.normal(size=(64, 2))
        g = GaussianDSMDiffusion(n_iter=80, random_state=seed).fit(C, X2)
        out[f"gdsm {seed}"] = (
            g.loss_history_,
            g.coef_,
            g.var_,
            g.n_features_,
            g.sample(C[:10], random_state=3),
        )
        data = make_toy_tasks(n_pairs=16, n_unpaired=50, random_state=seed)
        t = TwoStageDiffusion(
            specialist_hidden=(8,),
            generalist_hidden=(16,),
            specialist_iter=20,
            generalist_iter=20,
            mix_weight=0.5,
            random_state=seed,
        ).fit(data.pairs, data.unpaired)
        out[f"two {seed}"] = (
            t.pseudo_pairs_,
            t.generalist_.loss_history_,
            t.sample(data.test[1][:7], 1, random_state=0),
        )
    out["errors"] = _run(lambda: ConditionalDiffusion(n_iter=1).fit(C, X[:5]))
    return out


def lvmogp_cases():
    import torch

    torch.set_num_threads(1)
    from mvlearn_ext.deep.gaussian_process import GSLVMOGPRegressor, TLVMOGPRegressor

    out = {}
    rng = np.random.default_rng(0)
    X = np.linspace(0, 1, 30)[:, None]
    Y = np.sin(6 * X + rng.uniform(0, 1, 6)) + 0.05 * rng.standard_normal((30, 6))
    Y[rng.random(Y.shape) < 0.2] = np.nan
    Yc = np.floor(np.exp(np.nan_to_num(Y, nan=0.0)))
    for seed in (0, 1):
        for kw in ({}, {"latent_posterior": "point"}, {"tighter_bound": True, "jitter": 1e-5}):
            m = TLVMOGPRegressor(n_inducing=12, n_epochs=3, random_state=seed, n_jobs=1, **kw)
            m.fit(X, Y)
            out[f"t {seed} {kw}"] = (
                m.loss_curve_,
                m.predict(X, return_std=True),
                m.latent_outputs_,
                m.lengthscales_,
            )
            g = GSLVMOGPRegressor(n_terms=2, n_epochs=3, random_state=seed, n_jobs=1, **kw)
            g.fit(X, Y)
            out[f"gs {seed} {kw}"] = (
                g.loss_curve_,
                g.predict(X, return_std=True),
                g.latent_outputs_,
                g.lengthscales_,
            )
        for cls in (TLVMOGPRegressor, GSLVMOGPRegressor):
            m = cls(
                likelihood="zinb",
                k_m=0.2,
                count_scale=2.0,
                n_quadrature=10,
                n_epochs=2,
                random_state=seed,
                n_jobs=1,
            ).fit(X, Yc)
            out[f"zinb {cls.__name__} {seed}"] = (m.loss_curve_, m.predict(X), m.dispersion_)
    return out


def demo_extrapolate_cases():
    import dataclasses

    from mvlearn_ext._demo import extrapolate as E
    from mvlearn_ext._demo.registry import DemoContext

    calls = []

    def fake_param(family, seed, **kw):
        calls.append(("p", family, seed, sorted(kw.items())))
        r = np.random.default_rng(seed)
        return {
            m: {"out": r.random(), "in": r.random(), "s": r.random()}
            for m in ("RTE", "MLP", "family refit")
        }

    def fake_disc(seed, **kw):
        calls.append(("d", seed, sorted(kw.items())))
        r = np.random.default_rng(100 + seed)
        return {
            m: {"len4": r.random(), "len5": r.random(), "comp": r.random(), "s": r.random()}
            for m in ("RTE", "IRR", "direct")
        }

    E.parameter_benchmark, E.discrete_benchmark = fake_param, fake_disc
    out = {}
    for quick in (True, False):
        msgs = []
        ctx = DemoContext(seeds=(0, 1, 2), quick=quick, progress=msgs.append)
        out[f"param {quick}"] = ([dataclasses.asdict(r) for r in E.run_parameter(ctx)], msgs)
        msgs2 = []
        ctx = DemoContext(seeds=(3, 4), quick=quick, progress=msgs2.append)
        out[f"disc {quick}"] = ([dataclasses.asdict(r) for r in E.run_discrete(ctx)], msgs2)
    out["calls"] = calls
    return out


CASES = {
    "merging": merging_cases,
    "estimator_checks": estimator_checks_cases,
    "bandits": bandits_cases,
    "diffusion": diffusion_cases,
    "lvmogp": lvmogp_cases,
    "demo_extrapolate": demo_extrapolate_cases,
}
NEEDS_TORCH = {"diffusion", "lvmogp"}


def _update(h, obj):
    """Feed a canonical encoding of ``obj`` (arrays, numbers, strings, containers) to ``h``."""
    if isinstance(obj, np.ndarray):
        h.update(f"array {obj.dtype.str} {obj.shape}".encode())
        h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, dict):
        h.update(f"dict {len(obj)}".encode())
        for key in obj:
            _update(h, key)
            _update(h, obj[key])
    elif isinstance(obj, (list, tuple)):
        h.update(f"{type(obj).__name__} {len(obj)}".encode())
        for item in obj:
            _update(h, item)
    elif isinstance(obj, (float, np.floating)):
        h.update(f"float {float(obj).hex()}".encode())
    elif isinstance(obj, (bool, int, np.integer, str, type(None))):
        h.update(f"{type(obj).__name__} {obj!r}".encode())
    elif hasattr(obj, "_asdict"):
        _update(h, obj._asdict())
    elif hasattr(obj, "__dict__"):
        _update(h, vars(obj))
    else:
        raise TypeError(f"cannot fingerprint a {type(obj).__name__}")


def _digest(obj):
    h = hashlib.sha256()
    _update(h, obj)
    return h.hexdigest()


def fingerprints(only=None):
    out = {}
    for family, cases in CASES.items():
        if only and family not in only:
            continue
        if family in NEEDS_TORCH:
            try:
                import torch  # noqa: F401
            except ImportError:
                print(f"skipped {family}: torch is not installed", file=sys.stderr)
                continue
        for key, value in cases().items():
            out[f"{family}: {key}"] = _digest(value)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the fingerprints of this checkout here")
    parser.add_argument("--only", nargs="*", choices=sorted(CASES), help="families to run")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two files")
    args = parser.parse_args(argv)
    if args.compare:
        a, b = (json.loads(pathlib.Path(p).read_text()) for p in args.compare)
        differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        for key in differ:
            print(f"differs: {key}")
        print(f"{len(a.keys() & b.keys())} common keys, {len(differ)} differ")
        return 1 if differ else 0
    result = fingerprints(args.only)
    text = json.dumps(result, indent=1, sort_keys=True)
    if args.json:
        pathlib.Path(args.json).write_text(text + "\n")
    else:
        print(text)
    print(f"{len(result)} fingerprints ({_checkout()})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
