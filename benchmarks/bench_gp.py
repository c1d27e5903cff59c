"""Benchmark: LVMOGP on many outputs vs GPyTorch's LMC, independent GPs and T-LVMOGP.

Questions.

1. Smooth fields observed at a 2-D grid of output locations, 20% of the
   entries missing and scored: how does LVMOGPRegressor (one GP over
   (input, output-latent) pairs, Kronecker bound) compare in held-out RMSE /
   NLPD, fit time and peak memory with GPyTorch's LMC model (the same
   number of inducing variables: ``M_H`` latent GPs with ``M_X`` inducing
   inputs each, against LVMOGP's ``M_X x M_H`` grid), with independent GPs
   (scikit-learn ``GaussianProcessRegressor``, one per output, fitted on a
   subset of the outputs), with T-LVMOGP and with GS-LVMOGP (LVMOGP's
   model, or a sum of separable terms, trained by SVI; both
   ``mvlearn_ext.deep``, when it is there)? At the target scale,
   10,000 outputs x 500 inputs.
2. How does each model's peak memory grow from 1,000 to 10,000 outputs?
3. Zero-inflated counts (negative-binomial counts of a latent field with
   structural zeros): the same comparison, scored by RMSE of the predictive
   mean and by the negative log predictive probability of the held-out
   counts (Gaussian predictives discretised to the integers, see
   :func:`count_nlpd`).

Every model fits in its own fresh process (``multiprocessing`` spawn), so
that peak memory is measured per model: the growth of the process's peak
resident set size during ``fit`` (the kernel's high-water mark, reset at the
start of the fit, see :func:`_start_peak`; counts NumPy, C++ and torch
allocations alike) and, with ``--heap``, for LVMOGP also the Python
heap peak (``tracemalloc``, whose allocation hooks slowed LVMOGP's fit by
30-65% in a same-process comparison; its fit time is then not comparable
and is flagged ``"traced": true``). Everything of one problem is timed in
the same run, one model after the other on the same machine; repeated
figures are medians.

Usage::

    python benchmarks/bench_gp.py --problem field --outputs 1000 10000 --inputs 500
    python benchmarks/bench_gp.py --problem counts --outputs 1000 --inputs 200

T-LVMOGP's and GS-LVMOGP's costs are set by their step budgets (epochs x
input batches x output batches), passed as JSON, e.g. ``--tlvmogp-params
'{"n_epochs": 2, "dtype": "float32"}'`` (``--gslvmogp-params`` likewise);
state them with the results.

Each invocation merges its rows into ``benchmarks/results/gp.json`` under
the problem's key. GPyTorch (``pip install gpytorch==1.15.2``, CPU torch) and
``mvlearn_ext.deep.gaussian_process`` (the ``torch`` extra) are optional: a missing one
is reported as skipped.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
import tracemalloc

import numpy as np
from scipy.special import gammaln, ndtr

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "gp.json")


# ------------------------------------------------------------------- data


def smooth_field(n_inputs, n_outputs, seed, ls_x=0.2, ls_s=0.5, noise=0.1, n_features=300):
    """A GP draw (random Fourier features of the product RBF kernel) over
    inputs x in [0, 1] and output locations on a 2-D grid in [0, 1]^2.

    Returns ``X, Ytr, Y, missing, F``: the noisy targets with 20% of the
    entries set to NaN, the complete noisy targets, the mask of the missing
    (held-out) entries, and the noise-free field.
    """
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(0, 1, n_inputs))[:, None]
    g = int(np.ceil(np.sqrt(n_outputs)))
    grid = np.stack(np.meshgrid(np.linspace(0, 1, g), np.linspace(0, 1, g)), -1).reshape(-1, 2)
    s = grid[:n_outputs]
    w = rng.standard_normal((n_features, 1)) / ls_x
    v = rng.standard_normal((n_features, 2)) / ls_s
    b = rng.uniform(0, 2 * np.pi, n_features)
    a = rng.standard_normal(n_features) * np.sqrt(2.0 / n_features)
    # sum_j a_j cos(x w_j + b_j + s v_j), by cos(u + t) = cos u cos t - sin u sin t
    u = X @ w.T + b  # (N, J)
    t = s @ v.T  # (P, J)
    F = (np.cos(u) * a) @ np.cos(t).T - (np.sin(u) * a) @ np.sin(t).T
    Y = F + noise * rng.standard_normal(F.shape)
    missing = rng.random(Y.shape) < 0.2
    Ytr = np.where(missing, np.nan, Y)
    return X, Ytr, Y, missing, F


def zi_counts(n_inputs, n_outputs, seed, dispersion=5.0, k_zero=1.0):
    """Zero-inflated negative-binomial counts of a latent smooth field.

    The latent field ``f`` is :func:`smooth_field`'s noise-free draw; the
    mean of the counts is ``m = 3 softplus(1.5 f - 0.5)``; a count is a
    structural zero with probability ``psi = k_zero / (k_zero + m)`` (more
    dropout where expression is low) and otherwise negative-binomial with
    mean ``m`` and dispersion ``r = dispersion`` (variance ``m + m^2 / r``).
    20% of the entries are held out (NaN). Returns ``X, Ytr, Y, missing,
    m``, with ``m`` the negative-binomial mean (the mean of a count is
    ``(1 - psi) m``).
    """
    X, _, _, _, F = smooth_field(n_inputs, n_outputs, seed, noise=0.0)
    rng = np.random.default_rng(seed + 1)
    m = 3.0 * np.logaddexp(0.0, 1.5 * F - 0.5)
    psi = k_zero / (k_zero + m)
    lam = rng.gamma(dispersion, m / dispersion)  # NB as a gamma-Poisson mixture
    Y = rng.poisson(lam).astype(np.float64)
    Y[rng.random(Y.shape) < psi] = 0.0
    missing = rng.random(Y.shape) < 0.2
    Ytr = np.where(missing, np.nan, Y)
    return X, Ytr, Y, missing, m


# ---------------------------------------------------------------- scoring


def gaussian_scores(mean, std, y):
    r = mean - y
    rmse = float(np.sqrt(np.mean(r**2)))
    nlpd = float(np.mean(0.5 * np.log(2 * np.pi * std**2) + 0.5 * r**2 / std**2))
    return rmse, nlpd


def count_nlpd(mean, std, y):
    """Mean negative log probability of integer counts ``y`` under a Gaussian
    predictive discretised to the non-negative integers: ``P(y) = Phi((y +
    1/2 - mean) / std) - Phi((y - 1/2 - mean) / std)`` for ``y > 0`` and
    ``P(0) = Phi((1/2 - mean) / std)``: a proper probability mass function,
    comparable with a count likelihood's."""
    hi = ndtr((y + 0.5 - mean) / std)
    lo = np.where(y > 0, ndtr((y - 0.5 - mean) / std), 0.0)
    return float(np.mean(-np.log(np.maximum(hi - lo, 1e-300))))


def nb_logpmf(y, m, r):
    return (
        gammaln(y + r)
        - gammaln(r)
        - gammaln(y + 1)
        + r * np.log(r / (r + m))
        + y * np.log(np.maximum(m, 1e-300) / (r + m))
    )


def oracle_count_nlpd(y, m, dispersion=5.0, k_zero=1.0):
    """NLPD of the true generating ZINB (the floor no model can beat on average)."""
    psi = k_zero / (k_zero + m)
    p = (1 - psi) * np.exp(nb_logpmf(y, m, dispersion)) + psi * (y == 0)
    return float(np.mean(-np.log(p)))


# ------------------------------------------------------ models (workers)


def _maxrss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def _status_mib(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0  # kB
    raise OSError(f"no {key} in /proc/self/status")


def _start_peak():
    """Open a peak-memory window; returns its baseline.

    ``ru_maxrss`` never goes down, so a fit whose peak stays under an
    earlier transient (torch's import, the data load) reads as a growth of
    0. On Linux the kernel's high-water mark of the resident set
    (``VmHWM``) is reset to the current resident set instead (writing 5 to
    ``/proc/self/clear_refs``), and the window's growth is its peak minus
    the resident set at the start. Elsewhere: ``ru_maxrss``.
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return ("hwm", _status_mib("VmRSS"))
    except OSError:
        return ("maxrss", _maxrss_mib())


def _peak_growth(start):
    """Peak resident-set growth (MiB) since :func:`_start_peak`."""
    kind, base = start
    return (_status_mib("VmHWM") if kind == "hwm" else _maxrss_mib()) - base


def _load(path):
    d = np.load(path)
    return d["X"], d["Ytr"]


def fit_lvmogp(path, cfg):
    from mvlearn_ext.gaussian_process import LVMOGPRegressor

    X, Ytr = _load(path)
    # warm-up of the compiled kernels and of the imports on a tiny problem
    LVMOGPRegressor(n_inducing=3, n_inducing_latent=2, max_iter=2).fit(X[:10], Ytr[:10, :8])
    rss0 = _start_peak()
    if cfg.get("heap"):
        tracemalloc.start()
    t0 = time.perf_counter()
    model = LVMOGPRegressor(
        n_inducing=cfg["m_x"],
        n_inducing_latent=cfg["m_h"],
        max_iter=cfg["max_iter"],
        random_state=0,
        n_jobs=cfg["threads"],
    ).fit(X, Ytr)
    fit_s = time.perf_counter() - t0
    out = {}
    if cfg.get("heap"):
        out = {"traced": True, "peak_heap_mib": tracemalloc.get_traced_memory()[1] / 2**20}
        tracemalloc.stop()
    rss = _peak_growth(rss0)
    mean, std = model.predict(X, return_std=True)
    return {
        "fit_s": fit_s,
        "n_iter": int(model.n_iter_),
        "peak_rss_growth_mib": rss,
        **out,
        "pred": (mean, std),
    }


def fit_independent(path, cfg):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    X, Ytr = _load(path)
    cols = np.random.default_rng(0).choice(Ytr.shape[1], cfg["n_sub"], replace=False)
    rss0 = _start_peak()
    t0 = time.perf_counter()
    mean, std = np.zeros((X.shape[0], cols.size)), np.ones((X.shape[0], cols.size))
    for k, j in enumerate(cols):
        o = ~np.isnan(Ytr[:, j])
        kern = ConstantKernel() * RBF(0.2) + WhiteKernel(0.01)
        gp = GaussianProcessRegressor(kern, normalize_y=True).fit(X[o], Ytr[o, j])
        mean[:, k], std[:, k] = gp.predict(X, return_std=True)
    fit_s = time.perf_counter() - t0
    return {
        "fit_s_subset": fit_s,
        "fit_s_per_output": fit_s / cols.size,
        "fit_s_all_outputs_extrapolated": fit_s / cols.size * Ytr.shape[1],
        "peak_rss_growth_mib": _peak_growth(rss0),
        "cols": cols,
        "pred": (mean, std),
    }


def fit_lmc(path, cfg):
    """GPyTorch LMC: ``L = m_h`` latent SVGPs with ``m_x`` inducing inputs each
    (the same ``m_x * m_h`` inducing variables as LVMOGP), mixed by a learned
    ``L x P`` matrix (``LMCVariationalStrategy``), Gaussian likelihood.

    Adam on an unbiased minibatch estimate of the variational bound
    (``batch`` observed entries a step, drawn uniformly): the latent SVGPs'
    marginals at the N distinct inputs (``base_variational_strategy(X)``)
    are mixed per entry, ``mean = sum_l W_lp mu_l(x_n)``, ``var = sum_l
    W_lp^2 s_l(x_n)`` (the latents are independent), which is exactly what
    ``model(x, task_indices=p)`` gives on the diagonal, without its dense
    batch x batch covariance (about 1 s a step at a batch of 1,024 on this
    machine)."""
    import torch

    torch.set_num_threads(cfg["threads"])
    import gpytorch
    from sklearn.cluster import KMeans

    X, Ytr = _load(path)
    N, P = Ytr.shape
    L, M = cfg["m_h"], cfg["m_x"]
    obs_n, obs_p = np.nonzero(~np.isnan(Ytr))
    yv = Ytr[obs_n, obs_p]
    y_mean, y_std = yv.mean(), yv.std()
    torch.manual_seed(0)
    rss0 = _start_peak()
    t0 = time.perf_counter()
    Z = KMeans(M, n_init=1, random_state=0).fit(X).cluster_centers_
    kmeans_s = time.perf_counter() - t0
    Xt = torch.as_tensor(X, dtype=torch.float32)
    ni, pi = torch.as_tensor(obs_n), torch.as_tensor(obs_p)
    yt = torch.as_tensor((yv - y_mean) / y_std, dtype=torch.float32)
    batch = torch.Size([L])

    class LMC(gpytorch.models.ApproximateGP):
        def __init__(self):
            Zt = torch.as_tensor(np.tile(Z, (L, 1, 1)), dtype=torch.float32)
            vd = gpytorch.variational.CholeskyVariationalDistribution(M, batch_shape=batch)
            base = gpytorch.variational.VariationalStrategy(
                self, Zt, vd, learn_inducing_locations=True
            )
            vs = gpytorch.variational.LMCVariationalStrategy(
                base, num_tasks=P, num_latents=L, latent_dim=-1
            )
            super().__init__(vs)
            self.mean_module = gpytorch.means.ZeroMean(batch_shape=batch)
            self.covar_module = gpytorch.kernels.ScaleKernel(
                gpytorch.kernels.RBFKernel(batch_shape=batch), batch_shape=batch
            )

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(
                self.mean_module(x), self.covar_module(x)
            )

    def marginals():
        lat = vs.base_variational_strategy(Xt)  # batch L x N
        mu, var = lat.mean, lat.variance  # (L, N)
        W = vs.lmc_coefficients  # (L, P)
        return mu, var, W

    for warm_up in (True, False):  # 3 untimed steps first: torch's one-off costs
        if not warm_up:
            t0 = time.perf_counter()
        model, lik = LMC(), gpytorch.likelihoods.GaussianLikelihood()
        vs = model.variational_strategy
        opt = torch.optim.Adam([*model.parameters(), *lik.parameters()], lr=cfg["lr"])
        if warm_up:
            for _ in range(3):
                mu, var, W = marginals()
                (mu[:, ni] * W[:, pi]).sum().backward()
    checkpoints = sorted(cfg["steps"])
    trace, train_s, step, preds = [], 0.0, 0, {}
    gen = torch.Generator().manual_seed(0)
    B = min(cfg["batch"], yv.size)
    for stop in checkpoints:
        t1 = time.perf_counter()
        while step < stop:
            opt.zero_grad()
            mu, var, W = marginals()
            idx = torch.randint(0, yv.size, (B,), generator=gen)
            bn, bp = ni[idx], pi[idx]
            m = (mu[:, bn] * W[:, bp]).sum(0)
            v = (var[:, bn] * W[:, bp] ** 2).sum(0)
            noise = lik.noise.squeeze()
            r2 = (yt[idx] - m) ** 2 + v
            ell = -0.5 * (torch.log(2 * torch.pi * noise) + r2 / noise).mean() * yv.size
            loss = -(ell - vs.kl_divergence().sum()) / yv.size
            loss.backward()
            opt.step()
            step += 1
        train_s += time.perf_counter() - t1
        if stop == checkpoints[0]:
            train_s += t1 - t0 + kmeans_s  # set-up (k-means, model) once
        with torch.no_grad():
            mu, var, W = marginals()
            mean = (mu.T @ W).numpy() * y_std + y_mean
            sd = np.sqrt((var.T @ W**2).numpy() + float(lik.noise)) * y_std
        preds[stop] = (train_s, (mean, sd))
        trace.append({"steps": stop, "fit_s": train_s, "loss": float(loss.detach())})
    return {
        "peak_rss_growth_mib": _peak_growth(rss0),
        "trace": trace,
        "pred_by_steps": preds,
        "batch": B,
        "lr": cfg["lr"],
    }


def _fit_torch_mogp(cls_name, path, cfg, params):
    """Fit and predict with T-LVMOGP or GS-LVMOGP (``mvlearn_ext.deep``)."""
    import torch

    torch.set_num_threads(cfg["threads"])
    from mvlearn_ext import deep

    X, Ytr = _load(path)
    rss0 = _start_peak()
    t0 = time.perf_counter()
    model = getattr(deep, cls_name)(**params).fit(X, Ytr)
    fit_s = time.perf_counter() - t0
    out = {"fit_s": fit_s, "peak_rss_growth_mib": _peak_growth(rss0), "n_iter": model.n_iter_}
    out["pred"] = model.predict(X, return_std=True)
    return out


def fit_tlvmogp(path, cfg):
    return _fit_torch_mogp("TLVMOGPRegressor", path, cfg, cfg["params"])


def fit_gslvmogp(path, cfg):
    """GS-LVMOGP, with the benchmark's ``m_x x m_h`` inducing grid per term
    unless the parameters say otherwise."""
    params = {"n_inducing": cfg["m_x"], "n_inducing_latent": cfg["m_h"], **cfg["params"]}
    return _fit_torch_mogp("GSLVMOGPRegressor", path, cfg, params)


WORKERS = {
    "lvmogp": fit_lvmogp,
    "independent": fit_independent,
    "lmc": fit_lmc,
    "tlvmogp": fit_tlvmogp,
    "gslvmogp": fit_gslvmogp,
}


def _worker(name, path, cfg, q):
    try:
        q.put(("ok", WORKERS[name](path, cfg)))
    except Exception as exc:  # reported as a skipped row, never silently
        q.put(("error", f"{type(exc).__name__}: {exc}"))


def run_isolated(name, path, cfg, timeout):
    """Fit one model in a fresh spawned process; returns (status, result)."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    proc = ctx.Process(target=_worker, args=(name, path, cfg, q))
    proc.start()
    try:
        status, res = q.get(timeout=timeout)
    except Exception:
        status, res = "error", f"no result within {timeout} s"
    proc.join(5)
    if proc.is_alive():
        proc.kill()
    return status, res


# ----------------------------------------------------------------- driver


def score_row(pred, Y, missing, counts, cols=None):
    mean, std = pred
    if cols is not None:
        Y, missing = Y[:, cols], missing[:, cols]
    y, m, s = Y[missing], mean[missing], std[missing]
    rmse, nlpd = gaussian_scores(m, s, y)
    out = {"rmse": rmse}
    if counts:
        out["nlpd_discretised"] = count_nlpd(m, s, y)
    else:
        out["nlpd"] = nlpd
    return out


def run_problem(args, P, log):
    N = args.inputs
    counts = args.problem == "counts"
    t0 = time.perf_counter()
    if counts:
        X, Ytr, Y, missing, truth = zi_counts(N, P, seed=args.seed)
    else:
        X, Ytr, Y, missing, truth = smooth_field(N, P, seed=args.seed)
    gen_s = time.perf_counter() - t0
    tmp = tempfile.mkdtemp(prefix="bench_gp_")
    path = os.path.join(tmp, "data.npz")
    np.savez(path, X=X, Ytr=Ytr, Y=Y, missing=missing)
    row = {
        "n_inputs": N,
        "n_outputs": P,
        "n_observed": int((~missing).sum()),
        "data_s": gen_s,
        "seed": args.seed,
        "m_x": args.m_x,
        "m_h": args.m_h,
    }
    if counts:
        row["zero_fraction"] = float(np.mean(Y == 0))
        row["oracle_zinb_nlpd"] = oracle_count_nlpd(Y[missing], truth[missing])
        mean_count = truth**2 / (1.0 + truth)  # (1 - psi) m with k_zero = 1
        row["oracle_mean_rmse"] = float(np.sqrt(np.mean((mean_count - Y)[missing] ** 2)))
    else:
        row["noise_floor_rmse"] = float(np.sqrt(np.mean((truth - Y)[missing] ** 2)))
    models = [m for m in args.models if not (m == "independent" and P not in args.peer_at)]
    for name in models:
        cfg = {"threads": args.threads, "m_x": args.m_x, "m_h": args.m_h}
        if name == "lvmogp":
            cfg["max_iter"] = args.max_iter
            cfg["heap"] = args.heap
        elif name == "independent":
            cfg["n_sub"] = args.independent
        elif name == "lmc":
            if P not in args.peer_at:
                continue
            cfg.update(steps=args.lmc_steps, batch=args.lmc_batch, lr=args.lmc_lr)
        elif name in ("tlvmogp", "gslvmogp"):
            if P not in (args.tlvmogp_at or args.peer_at):
                continue
            cfg["params"] = json.loads(getattr(args, f"{name}_params"))
            cfg["counts"] = counts
        log(f"[{P} x {N}] {name} ...")
        status, res = run_isolated(name, path, cfg, args.timeout)
        if status != "ok":
            row[name] = {"skipped": res}
            log(f"  skipped: {res}")
            continue
        if name == "lmc":
            preds = res.pop("pred_by_steps")
            for tr in res["trace"]:
                tr.update(score_row(preds[tr["steps"]][1], Y, missing, counts))
        else:
            pred = res.pop("pred")
            cols = res.pop("cols", None)
            res.update(score_row(pred, Y, missing, counts, cols))
        row[name] = res
        log("  " + json.dumps(res))
    os.remove(path)
    os.rmdir(tmp)
    return row


def build_parser():
    """The command line of this script (also used to rerun a recorded ``argv``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", choices=("field", "counts"), default="field")
    ap.add_argument("--outputs", type=int, nargs="+", default=[1000, 4000])
    ap.add_argument("--inputs", type=int, default=200)
    ap.add_argument(
        "--models", nargs="+", default=["lvmogp", "lmc", "independent", "tlvmogp", "gslvmogp"]
    )
    ap.add_argument(
        "--peer-at",
        type=int,
        nargs="+",
        default=None,
        help="output counts at which the peers run (default: all)",
    )
    ap.add_argument("--seed", type=int, default=0, help="seed of the data (0: evaluation)")
    ap.add_argument("--m-x", type=int, default=15)
    ap.add_argument("--m-h", type=int, default=8)
    ap.add_argument("--max-iter", type=int, default=1000)
    ap.add_argument("--independent", type=int, default=40, help="outputs for the GPR peer")
    ap.add_argument("--lmc-steps", type=int, nargs="+", default=[250, 500, 1000])
    ap.add_argument("--lmc-batch", type=int, default=8192, help="entries per Adam step")
    ap.add_argument("--lmc-lr", type=float, default=0.05)
    ap.add_argument(
        "--tlvmogp-at",
        type=int,
        nargs="+",
        default=None,
        help="output counts at which T-LVMOGP and GS-LVMOGP run (default: --peer-at)",
    )
    ap.add_argument("--tlvmogp-params", default="{}", help="JSON keyword arguments")
    ap.add_argument(
        "--gslvmogp-params", default="{}", help="JSON keyword arguments of GSLVMOGPRegressor"
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--heap", action="store_true", help="trace LVMOGP's Python heap (slows its fit)"
    )
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--tag", default=None, help="key of this run in the results file")
    return ap


def main():
    args = build_parser().parse_args()
    if args.peer_at is None:
        args.peer_at = args.outputs

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    rows = [run_problem(args, P, log) for P in args.outputs]
    growth = {}
    if len(rows) > 1:
        for name in ("lvmogp", "lmc", "tlvmogp", "gslvmogp"):
            a, b = rows[0].get(name, {}), rows[-1].get(name, {})
            if "peak_rss_growth_mib" in a and "peak_rss_growth_mib" in b:
                growth[name] = {
                    "outputs": [rows[0]["n_outputs"], rows[-1]["n_outputs"]],
                    "peak_rss_growth_ratio": b["peak_rss_growth_mib"] / a["peak_rss_growth_mib"],
                }
                if "peak_heap_mib" in a:
                    growth[name]["peak_heap_ratio"] = b["peak_heap_mib"] / a["peak_heap_mib"]
    results = {}
    if os.path.exists(RESULTS):
        with open(RESULTS) as f:
            results = json.load(f)
        if "rows" in results:  # the old single-problem layout
            results = {}
    key = args.tag or f"{args.problem}_{args.inputs}"
    results[key] = {
        "problem": args.problem,
        "argv": sys.argv[1:],
        "cpu_count": os.cpu_count(),
        "threads": args.threads,
        "rows": rows,
        "memory_growth": growth,
    }
    with open(RESULTS, "w") as f:
        json.dump(results, f, indent=1)
    print(json.dumps(results[key], indent=1))


if __name__ == "__main__":
    main()
