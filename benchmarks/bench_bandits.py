"""Benchmark of the mean-estimation bandits: simulation throughput and the regret grid.

Questions
---------
1. Throughput: how many policy steps per second does ``simulate`` (Numba,
   ``prange`` over replications) run, against a plain Python loop of the same
   policy (:func:`greedy_python_loop` below, observations drawn with NumPy)
   and against the online interface driven from Python, in the same run? Target: 10,000 replications x T = 2^14 x K = 10 of one adaptive
   policy (greedy plug-in, p = 2, Gaussian) in under 20 s on 2 cores, and at
   least 100x the plain loop.
2. Regret grid: K in {2, 5, 10}, T = 2^8 .. 2^14, Gaussian,
   Rademacher, uniform, Bernoulli(0.2), exponential groups, p in {1, 2, inf},
   sigma^2 log-spaced on [0.25, 4]; mean proxy regret +- SE per policy and
   horizon, log-log slopes with 95% intervals, the true loss, the
   allocation deviation. Run on :mod:`mvlearn_ext.studies` (loky, 2 workers);
   one runner replication is a batch of ``--batch`` simulate() replications
   (:func:`replicate_regret`), so that :func:`mvlearn_ext.studies.summarize`
   over batches gives the grand mean and a standard error from the
   between-batch spread.

Usage::

    python benchmarks/bench_bandits.py --part throughput
    python benchmarks/bench_bandits.py --part grid [--n-batches 10 --batch 100]
    python benchmarks/bench_bandits.py --part plots

Writes ``benchmarks/results/bandits_throughput.json`` and
``benchmarks/results/bandits_grid.json`` (and the figures
``docs/img/bandits_*.png``). Timings on a shared machine are noisy: medians
of repeats, and ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
IMG = ROOT / "docs" / "img"

GRID = {
    "K": [2, 5, 10],
    "T": [2**k for k in range(8, 15)],
    "distribution": ["gaussian", "rademacher", "uniform", "bernoulli", "gamma"],
    "p": [1, 2, "inf"],
    "policy": [
        "greedy_sqrt",
        "greedy_linear",
        "greedy_2",
        "two_stage_sqrt",
        "two_stage_linear",
        "gafs_max",
        "ch_as",
        "b_as",
        "variance_ucb",
        "uniform",
        "oracle",
    ],
}
THEORY = {"1": -2.0, "2": -2.0, "inf": -1.5}


def make_policy(name, p):
    """The policy called ``name`` (an entry of ``GRID["policy"]``) for the objective ``R_p``."""
    from mvlearn_ext.bandits import (
        BAS,
        CHAS,
        GAFSMax,
        GreedyPlugIn,
        OracleAllocation,
        TwoStagePlugIn,
        UniformAllocation,
        VarianceUCB,
    )

    p = np.inf if p in ("inf", float("inf")) else float(p)
    policies = {
        "greedy_sqrt": lambda: GreedyPlugIn(p=p, warm_start="sqrt"),
        "greedy_linear": lambda: GreedyPlugIn(p=p, warm_start="linear"),
        "greedy_2": lambda: GreedyPlugIn(p=p, warm_start=2),
        "two_stage_sqrt": lambda: TwoStagePlugIn(p=p, warm_start="sqrt"),
        "two_stage_linear": lambda: TwoStagePlugIn(p=p, warm_start="linear"),
        "gafs_max": lambda: GAFSMax(p=p),
        "ch_as": lambda: CHAS(p=p),
        "b_as": lambda: BAS(p=p),
        "variance_ucb": lambda: VarianceUCB(p=p),
        "uniform": lambda: UniformAllocation(p=p),
        "oracle": lambda: OracleAllocation(p=p),
    }
    return policies[name]()


def study_sigma(n_groups):
    """Standard deviations of the grid: ``sigma^2`` log-spaced on [0.25, 4]."""
    return np.sqrt(np.geomspace(0.25, 4.0, n_groups))


def replicate_regret(setting, rng):
    """One runner replication: a batch of ``setting["batch"]`` simulate() replications.

    The batch's seed is drawn from ``rng``, so it depends only on the runner's
    (setting, replication) key. Returns the batch mean of the proxy regret, its
    within-batch standard deviation, the Monte Carlo true loss, the mean
    allocation deviation ``max_k |n_k - n_k*| / sqrt(T)`` and the batch's time.
    """
    from mvlearn_ext.bandits import simulate

    policy = make_policy(setting["policy"], setting["p"])
    seed = int(rng.integers(2**63 - 1))
    start = time.perf_counter()
    res = simulate(
        policy,
        sigma=study_sigma(int(setting["K"])),
        budget=int(setting["T"]),
        n_replications=int(setting["batch"]),
        distribution=setting["distribution"],
        random_state=seed,
        n_jobs=1,
    )
    seconds = time.perf_counter() - start
    reg = res.regret
    return {
        "regret": float(reg.mean()),
        "regret_sd": float(reg.std(ddof=1)) if reg.shape[0] > 1 else float("nan"),
        "true_loss": res.true_loss()[0],
        "deviation": float(res.allocation_deviation().mean()),
        "seconds": seconds,
    }


def greedy_python_loop(samples, *, p, n0):
    """The greedy plug-in rule in plain Python on ``samples[k, j]`` (observation j of group k).

    Every group is sampled round robin until it has ``n0`` observations; then
    the group with the largest ``s_k^q / n_k`` is pulled (``q = 2p / (p + 1)``,
    ``s_k^2`` the running sample variance, ties to the lower index). Returns
    the counts and the means.
    """
    K, T = samples.shape
    q = 2.0 if math.isinf(p) else 2.0 * p / (p + 1.0)
    n, mean, m2 = [0] * K, [0.0] * K, [0.0] * K
    for _ in range(T):
        k = min(range(K), key=lambda j: (n[j], j))
        if n[k] >= n0:
            k = max(range(K), key=lambda j: ((m2[j] / (n[j] - 1)) ** (0.5 * q) / n[j], -j))
        x = float(samples[k, n[k]])
        n[k] += 1
        delta = x - mean[k]
        mean[k] += delta / n[k]
        m2[k] += delta * (x - mean[k])
    return n, mean


def _machine():
    import numba

    return {
        "python": platform.python_version(),
        "numba": numba.__version__,
        "cpus": os.cpu_count(),
        "load_avg_at_start": os.getloadavg(),
        "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
    }


def throughput(repeats=3, n_rep=10_000, budget=2**14, n_groups=10, python_reps=4):
    import numba

    from mvlearn_ext.bandits import ArmSampler, GreedyPlugIn, simulate

    sigma = study_sigma(n_groups)
    n0 = math.ceil(math.sqrt(budget))  # GreedyPlugIn's default warm start, "sqrt"
    policy = GreedyPlugIn(p=2, warm_start="sqrt")
    simulate(policy, sigma=sigma, budget=256, n_replications=4)  # compile / load cache
    out = {
        "config": {"policy": repr(policy), "K": n_groups, "T": budget, "distribution": "gaussian"}
    }
    for threads in (1, 2):
        reps = n_rep if threads == 2 else n_rep // 5
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            simulate(
                policy,
                sigma=sigma,
                budget=budget,
                n_replications=reps,
                random_state=1,
                n_jobs=min(threads, numba.config.NUMBA_NUM_THREADS),
            )
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        out[f"simulate_{threads}thread"] = {
            "replications": reps,
            "seconds_median": med,
            "seconds_all": times,
            "steps_per_second": reps * budget / med,
        }
    # Plain Python loop of the same rule (pre-drawn NumPy observations; drawing is timed).
    times = []
    for r in range(python_reps):
        t0 = time.perf_counter()
        rng = np.random.default_rng(r)
        samples = sigma[:, None] * rng.standard_normal((n_groups, budget))
        greedy_python_loop(samples, p=2.0, n0=n0)
        times.append(time.perf_counter() - t0)
    py = statistics.median(times)
    out["python_loop"] = {
        "replications": python_reps,
        "seconds_per_replication_median": py,
        "steps_per_second": budget / py,
    }
    # The online interface driven from Python (a compiled step per call).
    arms = ArmSampler(sigma=sigma, random_state=0)
    times = []
    for r in range(2):
        t0 = time.perf_counter()
        policy.reset(n_groups, budget)
        for _ in range(budget):
            k = policy.next_group()
            policy.update(k, arms.sample(r, k, policy.counts_[k]))
        times.append(time.perf_counter() - t0)
    on = statistics.median(times)
    out["online_interface"] = {
        "seconds_per_replication_median": on,
        "steps_per_second": budget / on,
    }
    for threads in (1, 2):
        s = out[f"simulate_{threads}thread"]["steps_per_second"]
        out[f"ratio_simulate_{threads}thread_vs_python_loop"] = (
            s / out["python_loop"]["steps_per_second"]
        )
        out[f"ratio_simulate_{threads}thread_vs_online"] = (
            s / out["online_interface"]["steps_per_second"]
        )
    full = n_rep * budget / out["simulate_2thread"]["steps_per_second"]
    out["seconds_for_10000x2^14x10_2threads"] = full
    out["machine"] = _machine()
    return out


def grid(n_batches, batch, records, n_jobs=2, grid=GRID):
    from mvlearn_ext.studies import Study, summarize

    settings = []
    for K in grid["K"]:
        for dist in grid["distribution"]:
            for p in grid["p"]:
                for pol in grid["policy"]:
                    for T in grid["T"]:
                        fixed = pol in ("uniform", "oracle")  # deterministic counts
                        settings.append(
                            {
                                "K": K,
                                "distribution": dist,
                                "p": p,
                                "policy": pol,
                                "T": T,
                                "batch": 2 if fixed else batch,
                            }
                        )
    study = Study(
        replicate_regret, settings, n_replications=n_batches, root_seed=2026, path=str(records)
    )
    t0 = time.perf_counter()
    frame = study.run(n_jobs=n_jobs, backend="loky", progress=True)
    wall = time.perf_counter() - t0
    frame["p"] = frame["p"].astype(str)
    by = ["K", "distribution", "p", "policy", "T"]
    table = summarize(frame, by=by, value="regret")
    loss = summarize(frame, by=by, value="true_loss").rename(columns={"mean": "true_loss"})
    dev = summarize(frame, by=by, value="deviation").rename(columns={"mean": "deviation"})
    table = table.merge(loss[by + ["true_loss"]], on=by).merge(dev[by + ["deviation"]], on=by)
    return table, wall, int(frame["seconds"].sum())


def slopes(table):
    from mvlearn_ext.studies import fit_loglog_slope

    rows = []
    for (K, dist, p, pol), g in table.groupby(["K", "distribution", "p", "policy"]):
        g = g.sort_values("T")
        entry = {
            "K": int(K),
            "distribution": dist,
            "p": p,
            "policy": pol,
            "regret_T16384": float(g["mean"].iloc[-1]),
            "se_T16384": float(g["se"].iloc[-1]),
        }
        if (g["mean"] > 0).all():
            se = g["se"].fillna(0).to_numpy()
            fit = fit_loglog_slope(g["T"].to_numpy(), g["mean"].to_numpy(), se)
            entry.update(slope=fit.slope, ci_low=fit.ci_low, ci_high=fit.ci_high)
        rows.append(entry)
    return rows


def checks(slope_rows):
    """Checks: greedy slope vs theory (Gaussian); greedy <= GAFS-MAX, CH-AS at T=2^14."""
    idx = {(r["K"], r["distribution"], r["p"], r["policy"]): r for r in slope_rows}
    out = {"slope_vs_theory_gaussian": [], "no_worse_than_peers_T16384": []}
    for (K, dist, p, pol), r in idx.items():
        if pol != "greedy_sqrt":
            continue
        if dist == "gaussian" and "slope" in r:
            out["slope_vs_theory_gaussian"].append(
                {
                    "K": K,
                    "p": p,
                    "slope": r["slope"],
                    "theory": THEORY[p],
                    "within_0.15": abs(r["slope"] - THEORY[p]) <= 0.15,
                }
            )
        for peer in ("gafs_max", "ch_as"):
            q = idx.get((K, dist, p, peer))
            if q is None:
                continue
            diff = r["regret_T16384"] - q["regret_T16384"]
            se = float(np.hypot(r["se_T16384"], q["se_T16384"]))
            out["no_worse_than_peers_T16384"].append(
                {
                    "K": K,
                    "distribution": dist,
                    "p": p,
                    "peer": peer,
                    "greedy": r["regret_T16384"],
                    "peer_regret": q["regret_T16384"],
                    "ratio": r["regret_T16384"] / q["regret_T16384"]
                    if q["regret_T16384"]
                    else None,
                    "no_worse": diff <= 2 * se,
                }
            )
    return out


def plots(payload):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from mvlearn_ext.studies import plot_summary

    table = pd.DataFrame(payload["table"])
    show = [
        "greedy_sqrt",
        "greedy_2",
        "two_stage_linear",
        "gafs_max",
        "ch_as",
        "variance_ucb",
        "uniform",
    ]
    for K in sorted(table["K"].unique()):
        fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
        for ax, p in zip(axes, ["1", "2", "inf"], strict=True):
            sub = table[
                (table["K"] == K)
                & (table["distribution"] == "gaussian")
                & (table["p"] == p)
                & table["policy"].isin(show)
                & (table["mean"] > 0)
            ]
            plot_summary(
                sub,
                x="T",
                hue="policy",
                err="se",
                err_scale=1.96,
                logx=True,
                logy=True,
                ax=ax,
                title=f"Gaussian, K={K}, p={p}",
            )
            ax.set_ylabel("proxy regret R_p(n_T) - R_p(n*)")
        fig.tight_layout()
        fig.savefig(IMG / f"bandits_regret_K{K}.png", dpi=110)
        plt.close(fig)
    # Regret at T = 2^14 relative to GAFS-MAX, per family (K = 5, p = inf and 2).
    srows = pd.DataFrame(payload["slopes"])
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.2))
    for ax, p in zip(axes, ["2", "inf"], strict=True):
        sub = srows[(srows["K"] == 5) & (srows["p"] == p)]
        base = sub[sub["policy"] == "gafs_max"].set_index("distribution")["regret_T16384"]
        for pol in ["greedy_sqrt", "two_stage_linear", "ch_as", "b_as", "variance_ucb", "uniform"]:
            s = sub[sub["policy"] == pol].set_index("distribution")["regret_T16384"]
            ax.plot(base.index, (s / base).reindex(base.index), "o-", label=pol)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_yscale("log")
        ax.set_title(f"K=5, p={p}: regret at T=2^14 / GAFS-MAX's")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(IMG / "bandits_families.png", dpi=110)
    plt.close(fig)


def report(payload, through=None):
    """Markdown tables of the grid (slopes per policy, targets) for the user guide."""
    import pandas as pd

    srows = pd.DataFrame(payload["slopes"])
    table = pd.DataFrame(payload["table"])
    lines = []
    pols = GRID["policy"]
    for dist in ["gaussian"]:
        lines.append(
            f"Log-log slope of the mean proxy regret over T = 2^8..2^14, {dist} groups "
            "(95% interval half-width in brackets; theory: -2 finite p, -1.5 p = inf):\n"
        )
        head = (
            "| policy | "
            + " | ".join(f"K={K}, p={p}" for K in GRID["K"] for p in GRID["p"])
            + " |"
        )
        lines += [head, "|---" * (1 + len(GRID["K"]) * len(GRID["p"])) + "|"]
        for pol in pols:
            cells = []
            for K in GRID["K"]:
                for p in GRID["p"]:
                    r = srows[
                        (srows.K == K)
                        & (srows.p == str(p))
                        & (srows.distribution == dist)
                        & (srows.policy == pol)
                    ]
                    if r.empty or pd.isna(r.iloc[0].get("slope")):
                        cells.append("n/a")
                    else:
                        r = r.iloc[0]
                        cells.append(f"{r.slope:.2f} [{(r.ci_high - r.ci_low) / 2:.2f}]")
            lines.append(f"| {pol} | " + " | ".join(cells) + " |")
        lines.append("")
    # Upper-range slopes (T >= 2^11), where the sqrt(T) floor no longer binds at K = 10.
    from mvlearn_ext.studies import fit_loglog_slope

    lines.append("Slope over T = 2^11..2^14 only (greedy_sqrt, gafs_max, ch_as; Gaussian):\n")
    lines += [
        "| policy | " + " | ".join(f"K={K}, p={p}" for K in GRID["K"] for p in GRID["p"]) + " |",
        "|---" * (1 + len(GRID["K"]) * len(GRID["p"])) + "|",
    ]
    for pol in ["greedy_sqrt", "two_stage_linear", "gafs_max", "ch_as", "variance_ucb"]:
        cells = []
        for K in GRID["K"]:
            for p in GRID["p"]:
                g = table[
                    (table.K == K)
                    & (table.p == str(p))
                    & (table.distribution == "gaussian")
                    & (table.policy == pol)
                    & (table["T"] >= 2**11)
                ].sort_values("T")
                if len(g) < 2 or (g["mean"] <= 0).any():
                    cells.append("n/a")
                    continue
                fit = fit_loglog_slope(g["T"], g["mean"], g["se"].fillna(0))
                cells.append(f"{fit.slope:.2f}")
        lines.append(f"| {pol} | " + " | ".join(cells) + " |")
    lines.append("")
    chk = payload["checks"]["no_worse_than_peers_T16384"]
    bad = [c for c in chk if not c["no_worse"]]
    lines.append(
        f"greedy_sqrt vs GAFS-MAX / CH-AS at T = 2^14: {len(chk) - len(bad)} of {len(chk)} "
        "(K, family, p, peer) cells no worse (difference <= 2 SE)."
    )
    for c in bad:
        lines.append(
            f"* worse: K={c['K']}, {c['distribution']}, p={c['p']}, vs {c['peer']}: "
            f"ratio {c['ratio']:.2f}"
        )
    lines.append("")
    lines.append(
        "Median ratio of regret at T = 2^14, greedy_sqrt / peer, per family (all K, p):\n"
    )
    df = pd.DataFrame(chk)
    lines += ["| family | vs GAFS-MAX | vs CH-AS |", "|---|---|---|"]
    for dist, g in df.groupby("distribution"):
        a = g[g.peer == "gafs_max"]["ratio"].median()
        b = g[g.peer == "ch_as"]["ratio"].median()
        lines.append(f"| {dist} | {a:.2f} | {b:.2f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--part", choices=["throughput", "grid", "plots", "report", "all"], default="all"
    )
    ap.add_argument("--n-batches", type=int, default=10)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--records", default="/tmp/bandits_grid_records.jsonl")
    ap.add_argument("--K", type=int, nargs="*", default=GRID["K"])
    ap.add_argument("--results", default=str(RESULTS), help="folder of the JSON results")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="small sizes and a small grid (K = 2, T = 2^8, 2^9, Gaussian, p = 2), "
        "to check the script runs",
    )
    args = ap.parse_args()
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    if args.part in ("throughput", "all"):
        small = dict(repeats=1, n_rep=200, budget=2**10, python_reps=1)
        res = throughput(**small) if args.quick else throughput()
        (results / "bandits_throughput.json").write_text(json.dumps(res, indent=2))
        print(json.dumps(res, indent=2))
    if args.part in ("grid", "all"):
        g = dict(GRID, K=args.K)
        if args.quick:
            g.update(K=[2], T=[2**8, 2**9], distribution=["gaussian"], p=[2])
        table, wall, cpu = grid(args.n_batches, args.batch, args.records, args.n_jobs, g)
        srows = slopes(table)
        payload = {
            "grid": g,
            "n_batches": args.n_batches,
            "batch": args.batch,
            "replications_per_setting": args.n_batches * args.batch,
            "sigma2": "log-spaced on [0.25, 4] (numpy.geomspace)",
            "wall_seconds": wall,
            "simulate_seconds_total": cpu,
            "machine": _machine(),
            "table": table.to_dict(orient="records"),
            "slopes": srows,
            "checks": checks(srows),
        }
        (results / "bandits_grid.json").write_text(json.dumps(payload, indent=1, default=float))
        print(json.dumps(payload["checks"], indent=1, default=float))
    if args.part in ("plots", "all"):
        plots(json.loads((results / "bandits_grid.json").read_text()))
    if args.part in ("report", "all"):
        print(report(json.loads((results / "bandits_grid.json").read_text())))


if __name__ == "__main__":
    main()
