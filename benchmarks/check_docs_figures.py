"""Do the quality figures recorded in ``docs/`` reproduce with the current code? (issue 17)

The issue-17 restructuring promised "results unchanged: every benchmark figure in
``docs/`` reproduces (bit-identical where it was deterministic)". The parity
scripts (``check_cluster_parity.py``, ``check_cluster_paths.py``,
``check_refactor_parity.py``) compare functions between two checkouts; this script
compares the *recorded* figures themselves: it reruns the exact configuration of a
results file in ``benchmarks/results/`` with the current code, through the benchmark
script's own functions (imported, not re-derived), and compares value by value.

Comparison rule: every value is compared for exact equality (``==`` on the float read
back from the JSON, which round-trips a float64 exactly). Labels-derived scores
(ACC, NMI, ARI of a fixed seed) and simulation means over a fixed order are exact or
wrong. A value that differs is reported with its absolute and relative difference and
counted as a mismatch; a mismatch below ``FLOAT_RTOL`` (1e-9 relative) is flagged
``float-level`` (an order-of-summation change, not a different result), anything
larger as ``different``. Nothing is tuned to pass: the tolerance only labels.

Only figures whose rerun is deterministic (fixed seeds, CPU, no timing) and affordable
on the shared 2-core machine (minutes) have a rerun; the rest are listed with the
reason (``--list``).

Usage::

    python benchmarks/check_docs_figures.py --list
    python benchmarks/check_docs_figures.py --only clustering-handwritten --json OUT
    python benchmarks/check_docs_figures.py --json benchmarks/results/docs_figures_check.json

Each rerun has a small default slice (seeds, data sets, settings) chosen to fit the
machine; ``--full`` reruns the whole recorded configuration where the entry supports
it (costs in ``--list``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
RESULTS = BENCH / "results"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

#: Relative difference under which a mismatch is labelled "float-level".
FLOAT_RTOL = 1e-9


# --------------------------------------------------------------------------- compare
def _compare(values, out):
    """``values``: iterable of (key, recorded, rerun); appends to ``out`` and counts."""
    for key, rec, new in values:
        entry = {"key": key, "recorded": rec, "rerun": new}
        if rec is None and new is None:
            entry["status"] = "equal"
        elif rec is None or new is None:
            entry["status"] = "different"
        elif rec == new or (isinstance(rec, float) and math.isnan(rec) and math.isnan(new)):
            entry["status"] = "equal"
        else:
            diff = abs(float(new) - float(rec))
            rel = diff / max(abs(float(rec)), 1e-300)
            entry.update(abs_diff=diff, rel_diff=rel)
            entry["status"] = "float-level" if rel < FLOAT_RTOL else "different"
        out.append(entry)
    return out


def _summary(comparisons):
    counts = {"equal": 0, "float-level": 0, "different": 0}
    for c in comparisons:
        counts[c["status"]] += 1
    return counts


# --------------------------------------------------------------------------- reruns
def rerun_clustering_handwritten(full=False):
    """``docs/benchmarks.md`` "Multi-view clustering on Handwritten": per-seed scores."""
    import bench_clustering
    from threadpoolctl import threadpool_limits

    recorded = json.loads((RESULTS / "clustering.json").read_text())["handwritten"]
    seeds = 10 if full else 3
    names = ["HAGMVC", "DRMC", "LMVSC", "SMVSC", "FPMVSCAG", "sklearn"]
    with threadpool_limits(1):  # the recorded run: --threads default 1
        rows = bench_clustering.bench_handwritten(seeds, 0, only=names)
    by_name = {r["method"]: r for r in recorded}
    out = []
    for row in rows:
        rec = by_name.get(row["method"])
        if rec is None:
            continue
        for metric in ("ACC", "NMI", "NMI_max", "ARI", "purity"):
            if metric not in row or metric not in rec:
                continue
            _compare(
                (
                    (f"{row['method']}|seed={s}|{metric}", rec[metric][s], row[metric][s])
                    for s in range(min(seeds, len(rec[metric])))
                ),
                out,
            )
    return out, {"seeds": list(range(seeds)), "methods": [r["method"] for r in rows]}


MVC_SLICE = (
    "handwritten",
    "handwritten-weak3",
    "blobs-1inf-2noise",
    "blobs-mixed",
    "wine-groups",
    "iris-sepal-petal",
    "breast-cancer-groups",
)


def rerun_mvc_suite(full=False):
    """``docs/mvc_suite.md``: per (method, data set, seed) ACC/NMI/ARI, every method."""
    import bench_mvc_suite as suite
    from threadpoolctl import threadpool_limits

    payload = json.loads((RESULTS / "mvc_suite.json").read_text())
    cfg = payload["config"]
    datasets = cfg["datasets"] if full else [d for d in MVC_SLICE if d in cfg["datasets"]]
    seeds = cfg["seeds"] if full else cfg["seeds"][:2]
    methods = suite.resolve_methods(cfg["methods"], [])
    with threadpool_limits(cfg["threads"]):
        records = suite.run(methods, datasets, seeds, cfg["data_seed"], verbose=False)
    recorded = {(r["method"], r["dataset"], r["seed"]): r for r in payload["records"]}
    out = []
    for r in records:
        rec = recorded.get((r["method"], r["dataset"], r["seed"]))
        if rec is None:
            continue
        for metric in suite.METRICS:
            _compare(
                [
                    (
                        f"{r['method']}|{r['dataset']}|seed={r['seed']}|{metric}",
                        rec.get(metric),
                        r.get(metric),
                    )
                ],
                out,
            )
    return out, {"datasets": datasets, "seeds": seeds, "methods": cfg["methods"]}


def _jsonl_replications(path, settings_slice, reps):
    """(setting dict, setting key hex, replication, recorded records) from a study JSONL."""
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    from mvlearn_ext.studies._seeding import setting_key

    keys = [f"{setting_key(s):016x}" for s in header["settings"]]
    chosen = [keys[i] for i in settings_slice if i < len(keys)]
    by_key = dict(zip(keys, header["settings"], strict=True))
    out = []
    for line in lines[1:]:
        rec = json.loads(line)
        if rec["setting"] in chosen and rec["replication"] < reps:
            out.append((by_key[rec["setting"]], rec["setting"], rec["replication"], rec))
    return header, out


#: Settings of the multi-task report run (indices into its header): the base point,
#: the largest delta, the largest epsilon, alpha 0, the strongest imbalance.
MTL_SLICE = (0, 4, 9, 10, 18)


def rerun_multitask_study(full=False):
    """``docs/user_guide/multitask.md`` report run of the default (``--report-default``)."""
    import study_multitask as study

    from mvlearn_ext.studies._seeding import replication_rng

    path = RESULTS / "multitask_study_default.jsonl"
    settings_slice = range(100) if full else MTL_SLICE
    header, reps = _jsonl_replications(path, settings_slice, 30 if full else 2)
    out = []
    for setting, key, r, rec in reps:
        rng = replication_rng(header["root_seed"], int(key, 16), r)
        names = [x["method"] for x in rec["records"]]
        new = {x["method"]: x for x in study.replicate(setting, rng, names, use_cache=False)}
        for x in rec["records"]:
            for field in ("mse", "mse_related", "mse_outlier", "selected"):
                _compare(
                    [
                        (
                            f"{x['method']}|{setting.get('sweep')}|{key}|rep={r}|{field}",
                            x.get(field),
                            new[x["method"]].get(field),
                        )
                    ],
                    out,
                )
    return out, {"settings": [k for _, k, _, _ in reps], "root_seed": header["root_seed"]}


def rerun_bandits_side(full=False):
    """``docs/user_guide/bandits.md`` side-information table: regret means per row."""
    import bench_bandits_side as side

    payload = json.loads((RESULTS / "bandits_side.json").read_text())
    cfg = payload["config"]
    horizons = tuple(cfg["horizons"]) if full else (256, 1024)
    rows, _ = side.run(cfg["instances"], cfg["replications_per_instance"], cfg["p"], horizons)
    recorded = {(r["scenario"], str(r["warm_start"]), r["T"]): r for r in payload["rows"]}
    out = []
    for row in rows:
        rec = recorded[(row["scenario"], str(row["warm_start"]), row["T"])]
        for field in sorted(k for k in row if k.endswith(("_mean", "_ratio_vs_greedy"))):
            _compare(
                [
                    (
                        f"{row['scenario']}|ws={row['warm_start']}|T={row['T']}|{field}",
                        rec.get(field),
                        row[field],
                    )
                ],
                out,
            )
    return out, {"horizons": list(horizons), "instances": cfg["instances"]}


def _flatten(obj, prefix=""):
    """(path, number) pairs of a nested JSON value (lists by index, dicts by key)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _flatten(v, f"{prefix}{k}|")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _flatten(v, f"{prefix}{i}|")
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield prefix.rstrip("|"), obj


def rerun_federated(full=False):
    """``docs/user_guide/federated.md``: the recorded (non ``--quick``) run, every value."""
    import bench_federated as fed

    recorded = json.loads((RESULTS / "federated.json").read_text())
    seeds = range(10)
    rows, drows = fed.pfl(seeds, [0.0, 0.5, 1.0, 2.0, 5.0, 10.0], [16, 64, 256, 1024])
    res = {
        "personalised_fl": rows,
        "rff_dimension": drows,
        "dream": fed.dream(range(5), [0.0, 1.0, 2.0]),
    }
    new = dict(_flatten(res))
    out = _compare(((k, v, new.get(k)) for k, v in _flatten(recorded)), [])
    return out, {"seeds": 10, "dream_seeds": 5}


# --------------------------------------------------------------------------- inventory
#: Every quality figure of docs/benchmarks.md, docs/mvc_suite.md and the guides:
#: name -> where, results file, script and options, deterministic?, rerun cost, rerun.
INVENTORY = {
    "clustering-handwritten": dict(
        doc="docs/benchmarks.md 'Multi-view clustering on Handwritten' (+ clustering guide)",
        results="clustering.json (handwritten)",
        script="bench_clustering.py --seeds 10 --mvlearn-seeds 1",
        deterministic="yes (fixed seeds; the mvlearn rows take minutes per fit: not rerun)",
        cost="measured 2026-12-04 under load: 3 seeds 26 s, 10 seeds (--full) 108 s",
        rerun=rerun_clustering_handwritten,
    ),
    "mvc-suite": dict(
        doc="docs/mvc_suite.md (and the clustering/HAGMVC guides' overview)",
        results="mvc_suite.json",
        script="bench_mvc_suite.py --seeds 10 --datasets all (every method)",
        deterministic="yes (ACC/NMI/ARI; fit times no)",
        cost="measured: slice 7 sets x 2 seeds 24 s, --full 11 x 10 seeds 520 s",
        rerun=rerun_mvc_suite,
    ),
    "multitask-study-default": dict(
        doc="docs/user_guide/multitask.md report run of the default",
        results="multitask_study_default.json(l)",
        script="study_multitask.py --report-default (root seed 2026, 30/10 draws)",
        deterministic="yes (fixed root seed; fit_seconds no)",
        cost="measured: slice 5 settings x 2 draws 11 s, --full 19 settings x 30 draws 458 s",
        rerun=rerun_multitask_study,
    ),
    "bandits-side": dict(
        doc="docs/user_guide/bandits.md side information per group",
        results="bandits_side.json",
        script="bench_bandits_side.py --instances 4 --reps 200",
        deterministic="yes (regret means; steps/s no)",
        cost="measured: horizons 256, 1024 30 s; --full (all four) about 10 min (recorded 624 s)",
        rerun=rerun_bandits_side,
    ),
    # ---- not rerun: timings, too costly here, or not deterministic
    "clustering-scaling": dict(
        doc="docs/benchmarks.md scaling; hagmvc_anchors guide",
        results="clustering.json (scaling), hagmvc_scaling.json, drmc_scaling.json",
        script="bench_clustering.py --scaling",
        deterministic="ACC 1.0 yes; times and peak RSS no",
        cost="10^6 rows: minutes each, GBs of memory (not on the shared machine)",
    ),
    "clustering-timing": dict(
        doc="docs/benchmarks.md quiet/loaded Handwritten fit times, core route",
        results="clustering_timing_2026-12-04.json, drmc_timing*.json, core_route.json",
        script="bench_clustering.py --timing, bench_core_route.py",
        deterministic="no (timings)",
        cost="-",
    ),
    "clustering-dask": dict(
        doc="docs/benchmarks.md out-of-core sections",
        results="clustering_dask*.json, clustering_dask_*_1e*.json",
        script="bench_clustering_dask.py --method ... --sizes 10^5..10^7",
        deterministic="labels yes at fixed seeds; times/RSS no",
        cost="10^5 minutes, 10^6-10^7 tens of minutes each",
    ),
    "lmvsc-qp": dict(
        doc="docs/benchmarks.md LMVSC graph QPs (issue 19)",
        results="lmvsc_qp.json",
        script="bench_lmvsc_qp.py",
        deterministic="objective gaps yes; times no",
        cost="not wired (mostly a timing comparison)",
    ),
    "anchor-baselines": dict(
        doc="docs/user_guide/clustering.md 'Baselines and the authors' code'",
        results="anchor_baselines.json",
        script="bench_anchor_baselines.py",
        deterministic="yes",
        cost="not wired before the deadline",
    ),
    "hagmvc-dev-rounds": dict(
        doc="docs/user_guide/hagmvc_anchors.md",
        results="hagmvc_*_dev*.json, hagmvc_suite_after_issue16.json, mvc_suite_greedy_seeding",
        script="bench_hagmvc_{ablation,anchor_count,degree,rotation,variance}.py",
        deterministic="yes (development runs of variants)",
        cost="tens of minutes each; the default's rows are covered by mvc-suite",
    ),
    "drmc-dev-eval": dict(
        doc="docs/user_guide/clustering.md DRMC section",
        results="drmc_dev.json, drmc_eval.json",
        script="bench_drmc.py",
        deterministic="yes",
        cost="not wired; DRMC's default rows are covered by mvc-suite",
    ),
    "multitask-other-runs": dict(
        doc="docs/user_guide/multitask.md",
        results="multitask_study{,_ridge,_target_dev,_dev,_run1}.json(l), armul_variants.json, "
        "multitask_bench.json",
        script="study_multitask.py (other modes), bench_armul_variants.py, bench_multitask.py",
        deterministic="yes (multitask_bench: timings, no)",
        cost="20-60 min each in full; the same replicate() is exercised by the default run",
    ),
    "bandits-grid": dict(
        doc="docs/user_guide/bandits.md",
        results="bandits_grid.json, bandits_throughput.json",
        script="bench_bandits.py",
        deterministic="grid yes; throughput no",
        cost="grid ~10 min+ on 2 cores; not wired",
    ),
    "moo": dict(
        doc="docs/user_guide/moo.md",
        results="moo.json, moo_paretopo.json",
        script="bench_moo.py",
        deterministic="HOP/tool-bandit regrets yes; pareto timings no",
        cost="not wired before the deadline",
    ),
    "gp": dict(
        doc="docs/user_guide/gaussian_process.md",
        results="gp.json",
        script="bench_gp.py --problem field|counts",
        deterministic="LVMOGP (CPU, fixed seed) yes in principle; torch LMC/T-LVMOGP not "
        "guaranteed bit-identical; 1000-4000 outputs",
        cost="tens of minutes",
    ),
    "federated": dict(
        doc="docs/user_guide/federated.md",
        results="federated.json",
        script="bench_federated.py (10 seeds, DREAM 5 seeds)",
        deterministic="yes (fixed seeds, NumPy)",
        cost="measured: the whole recorded run, 95 s",
        rerun=rerun_federated,
    ),
    "merging": dict(
        doc="docs/user_guide/merging.md",
        results="merging*.json",
        script="bench_merging.py",
        deterministic="torch CPU; not wired",
        cost="not wired",
    ),
    "deep-cimln-phenobrain-diffusion": dict(
        doc="docs/user_guide/{deep_methods,phenobrain_rte,diffusion_grape}.md",
        results="deep.json, cimln_*.json, brain_rte.json, phenobrain_*.json, diffusion_grape.json",
        script="bench_deep.py, bench_cimln_diagnostic.py, bench_brain_rte.py, "
        "bench_diffusion_grape.py",
        deterministic="torch training: bit-identity across torch builds/threads not guaranteed",
        cost="tens of minutes to hours",
    ),
    "studies-kernels": dict(
        doc="docs/user_guide/studies.md, docs/benchmarks.md foundation kernels",
        results="studies.json, kernels.json",
        script="bench_studies.py, bench_kernels.py",
        deterministic="no (timings)",
        cost="-",
    ),
}


def _git_revision():
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--list", action="store_true", help="print the inventory and exit")
    p.add_argument("--only", nargs="*", default=None, help="names of figures to rerun")
    p.add_argument("--full", action="store_true", help="the whole recorded configuration")
    p.add_argument("--json", default=None, help="write the comparison as JSON")
    args = p.parse_args(argv)

    if args.list:
        for name, item in INVENTORY.items():
            tag = "RERUN" if "rerun" in item else "listed"
            print(f"{name} [{tag}]")
            for field in ("doc", "results", "script", "deterministic", "cost"):
                print(f"    {field:13s} {item[field]}")
        return None
    names = args.only or [n for n, item in INVENTORY.items() if "rerun" in item]
    for name in names:
        if name not in INVENTORY:
            raise SystemExit(f"--only: unknown figure {name!r}; known: {', '.join(INVENTORY)}")
        if "rerun" not in INVENTORY[name]:
            raise SystemExit(f"--only: {name!r} has no rerun ({INVENTORY[name]['cost']})")
    report = {
        "config": dict(
            date=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            git=_git_revision(),
            python=platform.python_version(),
            full=args.full,
            float_rtol_label=FLOAT_RTOL,
        ),
        "figures": {},
    }
    for name in names:
        t0 = time.perf_counter()
        comparisons, scope = INVENTORY[name]["rerun"](full=args.full)
        counts = _summary(comparisons)
        wall = time.perf_counter() - t0
        report["figures"][name] = dict(
            scope=scope, counts=counts, wall_s=wall, comparisons=comparisons
        )
        print(
            f"{name}: {len(comparisons)} values, {counts['equal']} equal, "
            f"{counts['float-level']} float-level, {counts['different']} different "
            f"({wall:.0f} s)",
            flush=True,
        )
        for c in comparisons:
            if c["status"] != "equal":
                print(f"    {c['status']:11s} {c['key']}: {c['recorded']} -> {c['rerun']}")
        if args.json:  # written after every figure, so a cut-short run keeps what it has
            os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
            Path(args.json).write_text(json.dumps(report, indent=1, default=str))
    return report


if __name__ == "__main__":
    main()
