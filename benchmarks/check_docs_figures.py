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
it (costs in ``--list``). ``--merge`` updates the figures run now inside an existing
``--json`` file (``benchmarks/results/docs_figures_check.json`` holds every run so far).

Every entry compares through two helpers: ``_compare_tree`` (every number of two nested
JSON values, matched by path, timings left out) and ``_compare_records`` (named fields of
two flat records).
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


#: Key parts that name a timing (or a machine description): never compared.
TIMING_KEYS = frozenset(
    {"time", "fit_s", "seconds", "median_s", "wall_s", "wall_seconds", "data_s", "machine"}
)


def _flatten(obj, prefix=""):
    """(path, number) pairs of a nested JSON value (lists by index, dicts by key)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _flatten(v, f"{prefix}{k}|")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _flatten(v, f"{prefix}{i}|")
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield prefix.rstrip("|"), obj


def _is_timing(key, skip=TIMING_KEYS):
    return any(
        part in skip or part.endswith("_s") or "_s_" in part or "time" in part or "second" in part
        for part in key.split("|")
    )


def _compare_tree(recorded, rerun, out=None, prefix="", skip=TIMING_KEYS, side="rerun"):
    """Every number of two nested JSON values, matched by path; timings left out.

    ``side="rerun"`` compares the paths the rerun produced (a slice of the record) that
    the record holds (a field the script gained after the record was made is not a
    difference); ``side="recorded"`` every path of the record (a full rerun: a missing
    value counts as different). Paths whose parts name a timing (``skip``, ending in
    ``_s`` or holding ``_s_``, ``time``, ``second``) are not compared: timings are not
    deterministic.
    """
    out = [] if out is None else out
    rec = dict(_flatten(recorded, prefix))
    new = dict(_flatten(rerun, prefix))
    keys = [k for k in new if k in rec] if side == "rerun" else rec
    return _compare(((k, rec.get(k), new.get(k)) for k in keys if not _is_timing(k, skip)), out)


def _compare_records(rec, new, fields, prefix, out):
    """``fields`` of two flat records (dicts), keyed ``prefix|field``."""
    return _compare(((f"{prefix}|{f}", rec.get(f), new.get(f)) for f in fields), out)


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
        metrics = [m for m in ("ACC", "NMI", "NMI_max", "ARI", "purity") if m in row and m in rec]
        _compare_tree(
            {m: rec[m][:seeds] for m in metrics},
            {m: row[m] for m in metrics},
            out,
            prefix=row["method"] + "|",
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
        _compare_records(
            rec, r, suite.METRICS, f"{r['method']}|{r['dataset']}|seed={r['seed']}", out
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
            _compare_records(
                x,
                new[x["method"]],
                ("mse", "mse_related", "mse_outlier", "selected"),
                f"{x['method']}|{setting.get('sweep')}|{key}|rep={r}",
                out,
            )
    return out, {"settings": [k for _, k, _, _ in reps], "root_seed": header["root_seed"]}


def rerun_bandits_side(full=False, horizons=(256, 1024)):
    """``docs/user_guide/bandits.md`` side-information table: regret means per row."""
    import bench_bandits_side as side

    payload = json.loads((RESULTS / "bandits_side.json").read_text())
    cfg = payload["config"]
    horizons = tuple(cfg["horizons"]) if full else tuple(horizons)
    rows, _ = side.run(cfg["instances"], cfg["replications_per_instance"], cfg["p"], horizons)
    recorded = {(r["scenario"], str(r["warm_start"]), r["T"]): r for r in payload["rows"]}
    out = []
    for row in rows:
        rec = recorded[(row["scenario"], str(row["warm_start"]), row["T"])]
        fields = sorted(k for k in row if k.endswith(("_mean", "_ratio_vs_greedy")))
        _compare_records(
            rec, row, fields, f"{row['scenario']}|ws={row['warm_start']}|T={row['T']}", out
        )
    return out, {"horizons": list(horizons), "instances": cfg["instances"]}


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
    out = _compare_tree(recorded, res, side="recorded")
    return out, {"seeds": 10, "dream_seeds": 5}


def rerun_anchor_baselines(full=False):
    """``docs/user_guide/clustering.md`` "Baselines and the authors' code": every score.

    The recorded run: ``bench_anchor_baselines.py`` (10 seeds, BLAS pinned as in the
    script). Per configuration: ACC/NMI of ``labels_`` per seed, the best-of-50 k-means
    ACC/NMI per seed, ``n_iter`` of the seed-0 fit; fit times are not compared.
    """
    import warnings

    import bench_anchor_baselines as anchor
    from sklearn.exceptions import ConvergenceWarning

    from mvlearn_ext.datasets import load_handwritten

    recorded = json.loads((RESULTS / "anchor_baselines.json").read_text())["rows"]
    seeds = range(10)
    Xs, y = load_handwritten()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # as the script
        rows = anchor.run(Xs, y, 10, seeds)
    rec = {r["method"]: r for r in recorded}
    out = []
    for row in rows:
        _compare_tree(rec[row["method"]], row, out, prefix=row["method"] + "|", side="recorded")
    return out, {"seeds": list(seeds), "methods": [r["method"] for r in rows]}


#: DRMC development/held-out data sets rerun by default (the small ones, every seed);
#: ``--full`` adds the four Handwritten sets (DRMC fits of seconds each).
DRMC_SLICE = {
    "dev": ("blobs-1inf-2noise", "blobs-mixed", "wine-groups", "iris-sepal-petal"),
    "eval": ("breast-cancer-groups",),
}


def rerun_drmc(full=False):
    """``docs/user_guide/clustering.md`` DRMC section: ``drmc_dev.json``, ``drmc_eval.json``.

    ``bench_drmc.run(split, seeds)`` over seeds 0-9 (the recorded ``--seeds 10``); per
    (data set, method): ACC per seed, and for the DRMC rows ACC before feedback, labels
    changed, iterations per seed and the last seed's rounded view weights. Times not.
    """
    import bench_drmc

    out, scope = [], {}
    for split in ("dev", "eval"):
        recorded = json.loads((RESULTS / f"drmc_{split}.json").read_text())
        names = list(recorded) if full else [d for d in DRMC_SLICE[split] if d in recorded]
        results = bench_drmc.run(split, range(10), datasets=names)
        _compare_tree({d: recorded[d] for d in names}, results, out, side="recorded")
        scope[split] = names
    return out, {"seeds": list(range(10)), "datasets": scope}


#: Slice of the tool-bandit w-sweep and of the multi-hop bandit's development block rerun
#: by default (the cheapest methods; recorded seconds 36 and 46); ``--full`` adds
#: the tool bandit's ParetoPO sweeps (144 s recorded) and every multi-hop method (dev
#: block, 253 s recorded). The report blocks of the multi-hop bandit are not rerun.
MOO_SWEEP = {
    False: ("fixed", "hvc_stage1"),
    True: ("fixed", "paretopo", "hvc_stage1", "paretopo_hvc"),
}
MOO_HOP = {False: ("fixed", "fixed_norm"), True: None}


def rerun_moo(full=False):
    """``docs/user_guide/moo.md`` quality values (``moo.json``, ``moo_paretopo.json``).

    MOPO front recovery (``bench_mopo``: errors against the exact constrained optimum),
    the ControlG block simulator (``bench_sims``), the tool bandit's w = 0.5 points
    (``simulate_tool_bandit`` over the held-out seeds, as ``bench_tool_bandit``), a
    slice of its w-sweep (per seed and per w) and of the multi-hop development block
    (``_hop_block``: per-method values only; the shares between methods need every
    method). The Pareto timings are not compared.
    """
    import bench_moo as bm
    import numpy as np

    rec = json.loads((RESULTS / "moo.json").read_text())
    tb = json.loads((RESULTS / "moo_paretopo.json").read_text())
    out = []
    _compare_tree(rec["mopo"], bm.bench_mopo(False), out, prefix="mopo|", side="recorded")
    sims = bm.bench_sims(False)
    _compare_tree(rec["simulators"]["controlg"], sims["controlg"], out, prefix="controlg|")
    point_methods = {
        "fixed": ("fixed", {}),
        "stage1": ("stage1", {}),
        "lu2025": ("lu2025", {}),
        "paretopo": ("paretopo", {}),
        "hvc_stage1": ("stage1", {"stage1": "hvc_gradient"}),
        "paretopo_hvc": ("paretopo", {"stage1": "hvc_gradient"}),
    }
    keys = ("accuracy", "mean_calls", "hv", "front_gap")
    for m, (method, extra) in point_methods.items():
        r = [bm.simulate_tool_bandit(method, random_state=s, **extra) for s in bm.HELD_OUT_SEEDS]
        new = {k: float(np.mean([x[k] for x in r])) for k in keys}
        _compare_records(tb["point"][m], new, keys, f"tool point|{m}", out)
        if m in rec["simulators"]["tool_bandit"]:  # the copy in moo.json
            _compare_records(rec["simulators"]["tool_bandit"][m], new, keys, f"moo.json|{m}", out)
    extra = {m: e for m, _, e in bm.SWEEP_METHODS}
    method = {m: x for m, x, _ in bm.SWEEP_METHODS}
    for m in MOO_SWEEP[full]:
        r = bm.sweep_tool_bandit(
            method[m], bm.WEIGHT_GRID, random_states=bm.HELD_OUT_SEEDS, **extra[m]
        )
        new = {
            "point_hv_by_w": r["point_hv"].mean(0).tolist(),
            "hv_per_seed": r["hv"].tolist(),
            "accuracy_by_w": r["accuracy"].mean(0).tolist(),
            "efficiency_by_w": r["efficiency"].mean(0).tolist(),
            "front_gap_per_seed": r["front_gap"].mean(1).tolist(),
            "front_gap_max": float(r["front_gap"].max()),
        }
        _compare_tree(tb["sweep"][m], new, out, prefix=f"tool sweep|{m}|")
    names = MOO_HOP[full]
    methods = [x for x in bm.HOP_METHODS if names is None or x[0] in names]
    hop = bm._hop_block(bm.HOP_DEV_SEEDS, methods)
    per_method = ("hv_ratio_per_seed", "unsupported_points", "n_points", "accuracy_by_w")
    per_method += ("mean_calls_by_w", "mu_by_w", "beats_fixed_norm")
    if names is None:
        per_method += ("hv_ratio", "best_share", "best_or_tied", "beats_fixed")
    for m, v in hop["methods"].items():
        new = {k: v[k] for k in per_method}
        recm = {k: tb["hop_bandit"]["dev"]["methods"][m][k] for k in per_method}
        _compare_tree(recm, new, out, prefix=f"hop dev|{m}|", side="recorded")
    return out, {
        "mopo": "all 4 structures",
        "controlg": "10 seeds",
        "tool_points": list(point_methods),
        "tool_sweep": list(MOO_SWEEP[full]),
        "hop_dev": [m for m, _, _ in methods],
        "not_rerun": "beta sweep, hvc_dev_sensitivity, hop report blocks, pareto timings",
    }


#: Horizons of the bandit grid rerun by default (every K, distribution, p and policy);
#: the simulation cost grows with T, these three are about 6 % of the recorded 1935 s.
GRID_T_SLICE = (256, 512, 1024)


def rerun_bandits_grid(full=False):
    """``docs/user_guide/bandits.md`` regret grid (``bandits_grid.json``): the table rows.

    ``bench_bandits.grid`` (a seeded ``Study``: each setting's stream comes from the root
    seed 2026 and the setting itself, so a subset of settings gives the same values) with
    the recorded ``--n-batches 10 --batch 100``, one process; per setting the mean, se,
    std, n, true loss and deviation of the regret. The fitted slopes need every T: only
    compared under ``--full``.
    """
    import tempfile

    import bench_bandits as bb

    payload = json.loads((RESULTS / "bandits_grid.json").read_text())
    g = dict(payload["grid"])
    if not full:
        g["T"] = [t for t in g["T"] if t in GRID_T_SLICE]
    with tempfile.TemporaryDirectory() as tmp:
        table, _, _ = bb.grid(
            payload["n_batches"], payload["batch"], Path(tmp) / "r.jsonl", n_jobs=1, grid=g
        )
    by = ("K", "distribution", "p", "policy", "T")
    rec = {tuple(str(r[k]) for k in by): r for r in payload["table"]}
    fields = ("mean", "se", "n", "std", "true_loss", "deviation")
    out = []
    for row in table.to_dict(orient="records"):
        key = tuple(str(row[k]) for k in by)
        new = {f: (float(row[f]) if f != "n" else int(row[f])) for f in fields}
        _compare_records(rec[key], new, fields, "|".join(key), out)
    if full:
        srows = bb.slopes(table)
        _compare_tree(payload["slopes"], srows, out, prefix="slopes|", side="recorded")
    return out, {"grid": g, "n_batches": payload["n_batches"], "batch": payload["batch"]}


def _bandits_side_horizons(horizons):
    def rerun(full=False):
        return rerun_bandits_side(full=full, horizons=horizons)

    rerun.__doc__ = f"``docs/user_guide/bandits.md`` side information, horizons {horizons}."
    return rerun


def rerun_merging(full=False):
    """``docs/user_guide/merging.md``: ``merging.json`` (5 seeds), ``merging_longtail.json``
    and ``merging_badit.json`` (3 seeds each), the recorded ``bench_merging.py --part all``.

    Every accuracy / MSE / interference value (per seed where recorded); merge and fit
    times and their ratios are not compared. Torch on the CPU (AES, BADIT).
    """
    import bench_merging as bm

    out = []
    rec = json.loads((RESULTS / "merging.json").read_text())
    _compare_tree(rec["results"], bm.run(list(range(rec["seeds"]))), out, side="recorded")
    rec = json.loads((RESULTS / "merging_longtail.json").read_text())
    new = bm.run_longtail(list(range(rec["seeds"])))
    _compare_tree(rec["results"], new, out, prefix="longtail|", side="recorded")
    rec = json.loads((RESULTS / "merging_badit.json").read_text())
    new = bm.run_badit(list(range(rec["seeds"])))
    _compare_tree(rec["results"], new, out, prefix="badit|", side="recorded")
    return out, {"merging_seeds": 5, "longtail_seeds": 3, "badit_seeds": 3}


#: (tag of gp.json, models) rerun by default: the 1000-output row of each, LVMOGP
#: (NumPy/C++) and the torch T-LVMOGP / GS-LVMOGP; the 10000-output rows and LMC
#: (thousands of Adam steps) only under ``--full`` (tens of minutes).
GP_SLICE = (
    ("field_500_mh12", ("lvmogp", "tlvmogp")),
    ("field_500_mh12_gs_q1", ("gslvmogp",)),
    ("counts_200_mh12", ("lvmogp", "tlvmogp", "independent")),
    ("field_500_lvmogp_mh8", ("lvmogp",)),
)


def rerun_gp(full=False):
    """``docs/user_guide/gaussian_process.md`` (``gp.json``): recorded runs by their argv.

    Each tag's recorded ``argv`` is parsed by ``bench_gp.build_parser`` and run through
    ``bench_gp.run_problem`` (every model in its own spawned process, as recorded);
    the data generator, n_iter, bound evaluations, RMSE and NLPD are compared; fit
    times and memory growth are not.
    """
    import bench_gp

    recorded = json.loads((RESULTS / "gp.json").read_text())
    plan = [(tag, None) for tag in recorded] if full else [(t, m) for t, m in GP_SLICE]
    out = []
    for tag, models in plan:
        args = bench_gp.build_parser().parse_args(recorded[tag]["argv"])
        if args.peer_at is None:
            args.peer_at = args.outputs
        outputs = args.outputs if full else [args.outputs[0]]
        if models is not None:
            args.models = [m for m in args.models if m in models]
        for i, P in enumerate(outputs):
            row = bench_gp.run_problem(args, P, lambda msg: None)
            rec = recorded[tag]["rows"][i]
            _compare_tree(rec, row, out, prefix=f"{tag}|P={P}|", skip=GP_SKIP)
    return out, {"runs": [[t, list(m) if m else "all"] for t, m in plan]}


#: gp.json keys that are timings or memory figures.
GP_SKIP = TIMING_KEYS | {"peak_rss_growth_mib", "peak_heap_mib", "traced"}


#: The other multi-task runs (JSONL of ``study_multitask.py``, all through its
#: ``replicate``): file -> (setting indices, draws) rerun by default.
MTL_OTHER = {
    "multitask_study.jsonl": ((0, 18), 1),
    "multitask_study_run1.jsonl": ((0, 18), 1),
    "multitask_study_reduced.jsonl": ((0,), 1),
    "multitask_study_dev.jsonl": ((0, 23), 1),
    "multitask_study_ridge.jsonl": ((0, 23), 1),
    "multitask_study_ridge_dev.jsonl": ((0,), 1),
    "multitask_study_target_dev.jsonl": ((0, 23), 1),
    "multitask_study_extra.jsonl": ((0, 4), 1),
    "multitask_study_default_extra.jsonl": ((0, 4), 1),
}


def rerun_multitask_other(full=False):
    """``docs/user_guide/multitask.md``: the other runs' records, a slice of each file.

    Each chosen (setting, draw) is redrawn from the file's root seed and refitted by
    ``study_multitask.replicate`` with ``use_cache=False``: records that a run copied
    from run 1 (``cached``) are refitted, so they are checked against a fresh fit too.
    Methods no longer in ``METHODS`` (run 1's "robust (ours, CV)", renamed since) and
    the ``units`` design's standardised refits are counted as not rerun.
    """
    import study_multitask as study

    from mvlearn_ext.studies._seeding import replication_rng

    out, scope, skipped = [], {}, {}
    for name, (settings_slice, reps) in MTL_OTHER.items():
        path = RESULTS / name
        n = len(json.loads(path.read_text().splitlines()[0])["settings"])
        settings_slice, reps = (range(n), 10**6) if full else (settings_slice, reps)
        header, chosen = _jsonl_replications(path, settings_slice, reps)
        for setting, key, r, rec in chosen:
            rng = replication_rng(header["root_seed"], int(key, 16), r)
            names = [x["method"] for x in rec["records"] if x["method"] in study.METHODS]
            skipped[name] = sorted(
                {x["method"] for x in rec["records"] if x["method"] not in study.METHODS}
            )
            new = {x["method"]: x for x in study.replicate(setting, rng, names, use_cache=False)}
            for x in rec["records"]:
                if x["method"] in new:
                    _compare_records(
                        x,
                        new[x["method"]],
                        ("mse", "mse_related", "mse_outlier", "selected"),
                        f"{name}|{x['method']}|{setting.get('sweep')}|{key}|rep={r}",
                        out,
                    )
        scope[name] = [f"{k} rep {r}" for _, k, r, _ in chosen]
    return out, {"draws": scope, "methods_not_rerun": {k: v for k, v in skipped.items() if v}}


#: Key parts of the deep benchmarks' rows that are timings (``s``: seconds per row).
DEEP_SKIP = TIMING_KEYS | {"s", "elapsed_s"}


def rerun_deep(full=False):
    """Torch / deep figures: ``diffusion_grape.json`` and ``brain_rte.json``, by seed.

    Through the scripts' own functions, per seed (the recorded lists are in seed
    order, so seed i of the rerun is row i of the record): the diffusion oracle
    block (NumPy, all 10 seeds), the GRAPE toy (seed 0; ``--full`` 0-4), the torch
    diffusion block (seed 2000 of 2000-2007, the recorded ``kw``, one thread; ``--full``
    all), RTE parameter and discrete (seed 0; ``--full`` 0-2) and PhenoBrain (seed 0;
    ``--full`` 0-2). Per-seed values only (summaries need every seed); timings not.
    CIMLN (``cimln_*.json``) is not rerun here.
    """
    import bench_brain_rte as br
    import bench_diffusion_grape as dg

    from mvlearn_ext._demo.diffusion import oracle_models

    rec = json.loads((RESULTS / "diffusion_grape.json").read_text())
    out = []
    new = dg.diffusion(range(10), oracle_models)
    _compare_tree(rec["diffusion_oracle"], new, out, "oracle|", DEEP_SKIP, side="recorded")
    grape_seeds = range(5) if full else range(1)
    new = dg.grape(grape_seeds, 150)
    _compare_tree(rec["grape_toy"]["per_seed"], new["per_seed"], out, "grape|", DEEP_SKIP)
    kw = dict(spec_iter=6000, gen_iter=3000, dsm_iter=1500, mix_weight=0.5)
    seeds = rec["diffusion_torch"]["config"]["seeds"]
    seeds = seeds if full else seeds[:1]
    per_seed = [dg._torch_seed((seed, kw)) for seed in seeds]
    new = dg.diffusion(seeds, per_seed=per_seed)
    _compare_tree(rec["diffusion_torch"]["per_seed"], new["per_seed"], out, "torch|", DEEP_SKIP)
    rec = json.loads((RESULTS / "brain_rte.json").read_text())
    seeds = rec["seeds"] if full else rec["seeds"][:1]
    for name, fn in (
        ("rte_parameter", br.rte_parameter_rows),
        ("rte_discrete", br.rte_discrete_rows),
        ("phenobrain", br.brain_rows),
    ):
        _compare_tree(rec[name], fn(seeds), out, f"{name}|", DEEP_SKIP)
    return out, {
        "diffusion_oracle": "seeds 0-9",
        "grape_seeds": list(grape_seeds),
        "diffusion_torch_seeds": seeds if full else [2000],
        "brain_rte_seeds": list(seeds),
    }


#: HAGMVC development rounds rerun by default: the two smallest dev sets, two seeds of each
#: round (the budget round: C1 at target seeds 0-1, C0 and C1 at decision seeds 20-21).
HAG_SLICE = dict(
    sets=("iris-sepal-petal", "wine-groups"),
    seeds=(0, 1),
    budget_seeds=(0, 1, 20, 21),
    third_seeds=(0, 1, 40, 41),
    tau_seeds=(0, 1, 60, 61),
)


def rerun_hagmvc_rounds(full=False):
    """``docs/user_guide/hagmvc_anchors.md`` dev rounds: per (set, seed) ACC of every variant.

    Through each script's own ``one_fit`` / ``fit_rules`` / ``fit_acc`` with the module
    switches as the script sets them (``hag.KMeans`` replaced by the capturing stand-in
    for the rounds that reuse the fit's random state; restored afterwards): round 1
    ``hagmvc_degree_dev.json`` (reg 0, 0.1, 1), round 2 ``hagmvc_anchor_count_dev.json``
    (A0, A1 and their m_1), round 3 ``hagmvc_rotation_dev.json``, round 4
    ``hagmvc_anchor_budget_dev.json`` (C0, C1 and m_1), round 5
    ``hagmvc_anchor_third_dev.json`` (the same with the cap ``n // 3``) and its
    exploration ``hagmvc_sharpness_dev.json`` (every variant's ACC per seed; the
    label-free criteria are not compared), and the variance study
    ``hagmvc_variance_dev.json`` (kpp and greedy anchors x three discretisations; that
    file stores the scores rounded to 5 decimals, so the rerun's are rounded alike).
    Fit times are not compared; the summaries need every seed (``--full`` only).
    """
    import _hagmvc_rounds as rounds
    import bench_hagmvc_anchor_budget as budget
    import bench_hagmvc_anchor_count as count
    import bench_hagmvc_degree as degree
    import bench_hagmvc_rotation as rotation
    import bench_hagmvc_sharpness as sharpness
    import bench_hagmvc_variance as variance
    import numpy as np

    import mvlearn_ext.cluster._hagmvc as hag
    from mvlearn_ext.datasets import load_mvc_dataset, mvc_suite_names
    from mvlearn_ext.metrics import clustering_accuracy

    sets = list(mvc_suite_names("dev")) if full else list(HAG_SLICE["sets"])
    seeds = range(20) if full else HAG_SLICE["seeds"]
    bseeds = [*range(10), *range(20, 40)] if full else HAG_SLICE["budget_seeds"]
    tseeds = [*range(10), *range(40, 60)] if full else HAG_SLICE["third_seeds"]
    useeds = [*range(10), *range(60, 80)] if full else HAG_SLICE["tau_seeds"]
    sharp = json.loads((RESULTS / "hagmvc_sharpness_dev.json").read_text())
    sharp = {(r["set"], r["variant"]): r["accs"] for r in sharp["variants"]}

    def recorded(name, *by):
        rows = json.loads((RESULTS / name).read_text())["rows"]
        return {tuple(r[k] for k in by): r for r in rows}

    rec = {
        "degree": recorded("hagmvc_degree_dev.json", "set", "seed"),
        "count": recorded("hagmvc_anchor_count_dev.json", "set", "seed"),
        "rotation": recorded("hagmvc_rotation_dev.json", "set", "seed"),
        "budget": recorded("hagmvc_anchor_budget_dev.json", "set", "seed"),
        "third": recorded("hagmvc_anchor_third_dev.json", "set", "seed"),
        "tau": recorded("hagmvc_anchor_tau_dev.json", "set", "seed"),
        "variance": recorded("hagmvc_variance_dev.json", "set", "anchors", "seed"),
    }
    saved = (hag.KMeans, hag._SEED_LOCAL_TRIALS, hag._ANCHOR_RULE, hag._DEGREE_REG,
             hag._BUDGET_DIVISOR)  # fmt: skip
    out = []
    try:
        rounds.pin_reference_defaults()  # every round's reference: the pre-round-6 defaults
        for name in sets:
            data = load_mvc_dataset(name)
            Xs, y = load_mvc_dataset(name, return_Xs_y=True)
            k = int(np.unique(y).size)
            for seed in seeds:
                hag.KMeans = rounds.CapturingKMeans
                new = degree.one_fit(Xs, y, k, seed, check=seed < 2)
                _compare_tree(rec["degree"][(name, seed)], new, out, f"degree|{name}|{seed}|")
                new = rotation.one_fit(Xs, y, k, seed)
                _compare_tree(rec["rotation"][(name, seed)], new, out, f"rotation|{name}|{seed}|")
                for rule, trials in variance.ANCHOR_RULES.items():
                    new = variance.one_fit(Xs, y, k, seed, trials)
                    hag._SEED_LOCAL_TRIALS = saved[1]
                    # The file holds every score rounded to 5 decimals (per-restart
                    # arrays dropped when it was committed): compare at that precision.
                    new = {f: round(new[f], 5) for f in variance.FINALS}
                    r = rec["variance"][(name, rule, seed)]
                    _compare_tree(r, new, out, f"variance|{name}|{rule}|{seed}|")
                hag.KMeans = saved[0]
                new = count.fit_rules(Xs, y, k, seed)
                _compare_tree(rec["count"][(name, seed)], new, out, f"anchor_count|{name}|{seed}|")
            # Rounds 4-6: the budget rule with the cap n // 2, then n // 3, then n // 2 with
            # the degree regularisation 0.1 for C1 (C0 is the reference: rule, 0, 2).
            for divisor, tau, tag, round_seeds in (
                (2, 0.0, "budget", bseeds),
                (3, 0.0, "third", tseeds),
                (2, 0.1, "tau", useeds),
            ):
                hag._BUDGET_DIVISOR = divisor
                for seed in round_seeds:
                    new = {}
                    for key, rule in budget.RULES.items():
                        if key == "C0" and seed in budget.TARGET_SEEDS:
                            continue  # as the script: C0's seeds 0-9 are the suite's records
                        acc, _, m1 = budget.fit_candidate(data, seed, rule, key, tau)
                        new.update({key: acc, f"{key}_m1": m1})
                    _compare_tree(rec[tag][(name, seed)], new, out, f"anchor_{tag}|{name}|{seed}|")
                hag._BUDGET_DIVISOR = rounds.REFERENCE_DEFAULTS["_BUDGET_DIVISOR"]
            for variant, spec in sharpness.VARIANTS.items():
                for seed in range(10) if full else seeds:
                    acc = float(clustering_accuracy(y, sharpness._fit(Xs, k, seed, *spec).labels_))
                    key = f"sharpness|{name}|{variant}|{seed}"
                    _compare([(key, sharp[(name, variant)][seed], acc)], out)
    finally:
        (hag.KMeans, hag._SEED_LOCAL_TRIALS, hag._ANCHOR_RULE, hag._DEGREE_REG,
         hag._BUDGET_DIVISOR) = saved  # fmt: skip
    return out, {
        "sets": sets,
        "seeds (degree, anchor count, rotation, variance)": list(seeds),
        "seeds (anchor budget)": list(bseeds),
        "seeds (round 5, cap n // 3)": list(tseeds),
        "seeds (round 6, degree regularisation)": list(useeds),
        "seeds (round 5 exploration)": list(range(10) if full else seeds),
        "not_compared": "summaries and decisions (need every seed), fit times",
    }


def rerun_armul_variants(full=False):
    """``docs/user_guide/multitask.md`` ARMUL variants (``armul_variants.jsonl``), by draw.

    Each chosen (setting, draw) is redrawn from the file's root seed (2023) and refitted
    by ``bench_armul_variants.replicate`` (all five methods, as recorded); per method the
    largest and mean inlier error and the selected ``C`` are compared, fit times not.
    Default: draw 0 of each of the 12 settings; ``--full``: all 10 draws. The summary rows
    of ``armul_variants.json`` (means over the draws) are not compared.
    """
    import bench_armul_variants as bav

    from mvlearn_ext.studies._seeding import replication_rng

    path = RESULTS / "armul_variants.jsonl"
    header, chosen = _jsonl_replications(path, range(12), 10 if full else 1)
    out = []
    for setting, key, r, rec in chosen:
        new = bav.replicate(setting, replication_rng(header["root_seed"], int(key, 16), r))
        by = {x["method"]: x for x in new}
        for x in rec["records"]:
            _compare_records(
                x,
                by[x["method"]],
                ("max_error", "mean_error", "selected"),
                f"{x['method']}|{setting['structure']}|d={setting['delta']}|"
                f"e={setting['epsilon']}|rep={r}",
                out,
            )
    return out, {
        "settings": [
            f"{s['structure']} delta={s['delta']} eps={s['epsilon']}" for s in header["settings"]
        ],
        "draws": sorted({r for _, _, r, _ in chosen}),
        "root_seed": header["root_seed"],
    }


def _cimln_part(part, seed):
    """A rerun of one ``bench_deep.py --cimln PART`` file at one seed (``--full``: all)."""

    def rerun(full=False):
        import bench_deep as bd
        from threadpoolctl import threadpool_limits

        rec = json.loads((RESULTS / f"cimln_{part}.json").read_text())
        if part == "dev_decision":
            seeds = list(rec["dev_seeds"]) if full else [seed]
            with threadpool_limits(limits=1):  # as main_cimln
                new = bd.cimln_dev_decision(seeds=seeds)
            recorded = {
                bed: {n: [r for r in rows if r["seed"] in seeds] for n, rows in block.items()}
                for bed, block in rec["rows"].items()
            }
        else:
            seeds = list(rec["seeds"]) if full else [seed]
            run = bd.CIMLN_PARTS[part]
            with threadpool_limits(limits=1):  # as main_cimln
                new = run(seeds)
            recorded = {
                n: [r for r in rows if r["seed"] in seeds] for n, rows in rec["rows"].items()
            }
        out = _compare_tree(recorded, new, skip=DEEP_SKIP | {"seed"}, side="recorded")
        return out, {"file": f"cimln_{part}.json", "seeds": seeds, "rows": "every method"}

    rerun.__doc__ = (
        f"``docs/user_guide/deep_methods.md`` CIMLN study, ``cimln_{part}.json``: every row "
        f"(ACC, NMI where recorded) of seed {seed} through ``bench_deep``'s own function, "
        "torch on one CPU thread and BLAS at one thread as ``main_cimln``; ``--full``: every "
        "recorded seed. Times (``s``) and summaries (need every seed) are not compared."
    )
    return rerun


def rerun_cimln_diagnostic(full=False):
    """``docs/user_guide/deep_methods.md`` CIMLN diagnostic (``cimln_diagnostic_*.json``).

    ``bench_cimln_diagnostic``'s own functions, BLAS at one thread as its ``run``: the
    exact Bayes ceiling (NumPy) for all 10 seeds, and the probe (five CIMLN variants,
    torch one CPU thread, and the k-means peer; ACC by group, NMI, linear read-outs,
    final losses) for seed 0 (``--full``: seeds 0-9). Times and summaries not compared.
    """
    import bench_cimln_diagnostic as diag
    from threadpoolctl import threadpool_limits

    out = []
    seeds = list(diag.SEEDS) if full else [0]
    with threadpool_limits(limits=1):
        # The probe first: the record ran each part in its own process, and on this
        # machine the torch fits of the probe give other bits (12 values, up to 1e-2)
        # when the NumPy ceiling has run before them in the same process.
        probe = diag.probe_rows(seeds)
        ceiling = diag.ceiling_rows(diag.SEEDS)
    skip = DEEP_SKIP | {"seed"}
    for part, new, chosen in (("ceiling", ceiling, diag.SEEDS), ("probe", probe, seeds)):
        rec = json.loads((RESULTS / f"cimln_diagnostic_{part}.json").read_text())["rows"]
        rec = {n: [r for r in rows if r["seed"] in chosen] for n, rows in rec.items()}
        _compare_tree(rec, new, out, prefix=f"{part}|", skip=skip, side="recorded")
    return out, {"ceiling_seeds": list(diag.SEEDS), "probe_seeds": seeds}


def rerun_deep_visualscore(full=False):
    """``docs/user_guide/deep_methods.md`` VisualScore toy (``deep.json``): per-seed SRCC.

    The loop of ``bench_deep.main`` (it has no function of its own) over the recorded
    five reward/filter settings, with the script's functions ``make_quality_tasks``,
    ``train_scorer`` and ``evaluate_scorer`` (1600 rows, the first 1000 to train);
    seed 0 of 0-2 (``--full``: all three). Per task SRCC and the zero-advantage share.
    """
    from mvlearn_ext.rl._toy import TASKS, evaluate_scorer, make_quality_tasks, train_scorer

    rec = json.loads((RESULTS / "deep.json").read_text())["visualscore_toy_srcc"]
    seeds = (0, 1, 2) if full else (0,)
    settings = (
        ("gaussian", True),
        ("gaussian", False),
        ("binary", True),
        ("binary", False),
        ("mae", False),
    )
    new = {}
    for reward, filters in settings:
        for seed in seeds:
            phi, task, q = make_quality_tasks(1600, random_state=seed)
            pol, st = train_scorer(
                phi[:1000], task[:1000], q[:1000], reward=reward, filters=filters,
                random_state=seed,
            )  # fmt: skip
            ev = evaluate_scorer(pol, phi[1000:], task[1000:], q[1000:])
            new.setdefault(f"{reward} filters={filters}", []).append(
                {**{k: ev[k][0] for k in TASKS}, "zero_adv": st["zero_advantage_share"]}
            )
    recorded = {n: [r for r in rows if r["seed"] in seeds] for n, rows in rec.items()}
    out = _compare_tree(recorded, new, skip=DEEP_SKIP | {"seed"}, side="recorded")
    return out, {"settings": [f"{r} filters={f}" for r, f in settings], "seeds": list(seeds)}


def _phenobrain_part(part, seed):
    """A rerun of one PhenoBrain ablation file of ``bench_brain_rte.py --ablation`` at one seed."""

    def rerun(full=False):
        import bench_brain_rte as br
        from threadpoolctl import threadpool_limits

        rec = json.loads((RESULTS / f"phenobrain_{part}.json").read_text())
        seeds = list(rec["seeds"]) if full else [seed]
        with threadpool_limits(limits=1):  # as the script's --ablation
            if part == "ablation":
                new = br.brain_ablation_rows(seeds)["rows"]
            else:
                new = br.brain_ablation_rows(
                    seeds, regimes=(("many_routes", 8),), n_subjects=2400
                )["rows"]

        def pick(block):
            if isinstance(block, list):
                return [r for r in block if r["seed"] in seeds]
            return {k: pick(v) for k, v in block.items()}

        out = _compare_tree(pick(rec["rows"]), new, skip=DEEP_SKIP | {"seed"}, side="recorded")
        return out, {"file": f"phenobrain_{part}.json", "seeds": seeds, "rows": "every network"}

    rerun.__doc__ = (
        f"``docs/user_guide/phenobrain_rte.md``, ``phenobrain_{part}.json``: every AUC of seed "
        f"{seed} through ``bench_brain_rte``'s own functions (torch one CPU thread, BLAS one "
        "thread, as recorded); ``--full``: every recorded seed. Times and summaries not compared."
    )
    return rerun


#: The multi-task diagnoses (``study_multitask.py --diagnose`` on the reduced points,
#: ``--diagnose-target --dev``): file -> (replicate function, setting indices) rerun
#: by default, draw 0 of each.
MTL_DIAGNOSES = {
    "multitask_diagnosis_reduced.jsonl": ("diagnose", (0, 1)),
    "multitask_target_diagnosis_dev.jsonl": ("diagnose_target", (0, 2)),
}


def rerun_multitask_diagnoses(full=False):
    """``docs/user_guide/multitask.md`` diagnoses: every number of a draw's record.

    Each chosen (setting, draw) is redrawn from the file's root seed and rerun through
    the script's own ``diagnose`` / ``diagnose_target`` (as its ``Study`` did); every
    value of the record (CV and oracle errors, chosen ``q``/``C``, the paper solver's
    values) is compared; times not. ``--full``: every setting and draw.
    """
    import study_multitask as study

    from mvlearn_ext.studies._seeding import replication_rng

    out, scope = [], {}
    for name, (fn, settings_slice) in MTL_DIAGNOSES.items():
        path = RESULTS / name
        n = len(json.loads(path.read_text().splitlines()[0])["settings"])
        settings_slice, reps = (range(n), 10**6) if full else (settings_slice, 1)
        header, chosen = _jsonl_replications(path, settings_slice, reps)
        for setting, key, r, rec in chosen:
            rng = replication_rng(header["root_seed"], int(key, 16), r)
            new = getattr(study, fn)(setting, rng)
            prefix = f"{name}|{setting.get('sweep')}|{key}|rep={r}|"
            _compare_tree(rec["records"], new, out, prefix=prefix, side="recorded")
        scope[name] = [f"{k} rep {r}" for _, k, r, _ in chosen]
    return out, {"draws": scope}


def rerun_phenobrain_many_routes_dev(full=False):
    """``docs/user_guide/phenobrain_rte.md``: ``phenobrain_many_routes_dev.json``, by seed.

    ``bench_brain_rte.many_routes_dev`` itself (written to a temporary file), BLAS at one
    thread as recorded, on dev seed 100 only: the rule then stops at 1600 subjects
    (seed 100 alone reaches 0.70), so the slice is the 1600-subject rows of seed 100
    (full PhenoBrain and logistic late fusion); ``--full``: seeds 100-101, as recorded
    (1600 and 2400 subjects, and the chosen size).
    """
    import tempfile

    import bench_brain_rte as br
    from threadpoolctl import threadpool_limits

    rec = json.loads((RESULTS / "phenobrain_many_routes_dev.json").read_text())
    seeds = tuple(rec["dev_seeds"]) if full else (100,)
    with tempfile.TemporaryDirectory() as tmp, threadpool_limits(limits=1):
        path = Path(tmp) / "dev.json"
        chosen = br.many_routes_dev(path, seeds=seeds)
        new = json.loads(path.read_text())
    recorded = {
        n: {k: [r for r in v if r["seed"] in seeds] for k, v in block.items()}
        for n, block in rec["rows"].items()
        if n in new["rows"]
    }
    out = _compare_tree(recorded, new["rows"], skip=DEEP_SKIP | {"seed"}, side="recorded")
    if full:
        _compare(
            [("mean_full_auc|" + n, v, new["mean_full_auc"].get(n))
             for n, v in rec["mean_full_auc"].items()]
            + [("chosen_size", rec["chosen_size"], chosen)],
            out,
        )  # fmt: skip
    return out, {"dev_seeds": list(seeds), "sizes": list(new["rows"])}


def rerun_phenobrain_many_routes_report(full=False):
    """``docs/user_guide/phenobrain_rte.md``: ``phenobrain_many_routes_report.json``, by seed.

    ``bench_brain_rte.many_routes_report`` itself at the recorded 2400 subjects (written
    to a temporary file), BLAS at one thread as recorded; seed 0 of 0-9 (``--full``:
    all ten). Every network's AUC; times and summaries not compared.
    """
    import tempfile

    import bench_brain_rte as br
    from threadpoolctl import threadpool_limits

    rec = json.loads((RESULTS / "phenobrain_many_routes_report.json").read_text())
    seeds = list(rec["seeds"]) if full else [0]
    with tempfile.TemporaryDirectory() as tmp, threadpool_limits(limits=1):
        new = br.many_routes_report(rec["n_subjects"], seeds, Path(tmp) / "report.json")
    recorded = {k: [r for r in v if r["seed"] in seeds] for k, v in rec["rows"].items()}
    out = _compare_tree(recorded, new["rows"], skip=DEEP_SKIP | {"seed"}, side="recorded")
    return out, {"seeds": seeds, "n_subjects": rec["n_subjects"]}


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
    "anchor-baselines": dict(
        doc="docs/user_guide/clustering.md 'Baselines and the authors' code'",
        results="anchor_baselines.json",
        script="bench_anchor_baselines.py (10 seeds)",
        deterministic="yes (ACC/NMI, n_iter; fit times no)",
        cost="measured 2026-12-04: the whole recorded run (8 configurations, 10 seeds) 50 s",
        rerun=rerun_anchor_baselines,
    ),
    "drmc-dev-eval": dict(
        doc="docs/user_guide/clustering.md DRMC section",
        results="drmc_dev.json, drmc_eval.json",
        script="bench_drmc.py --split dev|eval --seeds 10",
        deterministic="yes (ACC, feedback counts, weights; times no)",
        cost=(
            "measured: slice (4 small dev sets + breast-cancer-groups, 10 seeds, 8 methods) "
            "11-28 s; --full (all 11 sets) 127 s"
        ),
        rerun=rerun_drmc,
    ),
    "moo": dict(
        doc="docs/user_guide/moo.md",
        results="moo.json, moo_paretopo.json",
        script="bench_moo.py (bench_mopo, bench_sims, the tool and multi-hop bandits)",
        deterministic="quality values yes (fixed seeds); pareto timings no",
        cost=(
            "measured: slice 70 s (MOPO, ControlG, 6 tool points, 2 of 4 sweeps, 2 of 8 "
            "multi-hop dev methods); --full (4 sweeps, 8 dev methods) 161 s"
        ),
        rerun=rerun_moo,
    ),
    "bandits-grid": dict(
        doc="docs/user_guide/bandits.md",
        results="bandits_grid.json (bandits_throughput.json: timings, not rerun)",
        script="bench_bandits.py --part grid (10 batches x 100, root seed 2026)",
        deterministic="grid yes; throughput no",
        cost=(
            "measured: slice T = 256, 512, 1024 (1485 of 3465 settings) 75 s; --full (all 7 "
            "horizons, slopes) 901 s, run 2026-12-04 (recorded 1935 s of simulation)"
        ),
        rerun=rerun_bandits_grid,
    ),
    "bandits-side-4096": dict(
        doc="docs/user_guide/bandits.md side information per group, T = 4096",
        results="bandits_side.json",
        script="bench_bandits_side.py --instances 4 --reps 200",
        deterministic="yes (regret means)",
        cost="measured: 88 s (4 instances x 200 reps, every scenario and warm start)",
        rerun=_bandits_side_horizons((4096,)),
    ),
    "bandits-side-16384": dict(
        doc="docs/user_guide/bandits.md side information per group, T = 16384",
        results="bandits_side.json",
        script="bench_bandits_side.py --instances 4 --reps 200",
        deterministic="yes (regret means)",
        cost="measured: 109 s (4 instances x 200 reps, every scenario and warm start)",
        rerun=_bandits_side_horizons((16384,)),
    ),
    "merging": dict(
        doc="docs/user_guide/merging.md",
        results="merging.json, merging_longtail.json, merging_badit.json",
        script="bench_merging.py --part all --seeds 5 (long tail and BADIT: 3 seeds)",
        deterministic="merging NumPy yes; AES and BADIT torch CPU (see the rerun)",
        cost="measured: the whole recorded run (merging 5 seeds, long tail and BADIT 3) 112 s",
        rerun=rerun_merging,
    ),
    "gp": dict(
        doc="docs/user_guide/gaussian_process.md",
        results="gp.json (19 tagged runs)",
        script="bench_gp.py with each tag's recorded argv",
        deterministic="LVMOGP (NumPy/C++, fixed seed) yes; torch rows: see the rerun",
        cost=(
            "measured: slice (4 tags at 1000 outputs, LVMOGP, T-/GS-LVMOGP, GPR peer) 131 s; "
            "--full (19 tags, 10000 outputs, LMC to 4000 steps) not run: tens of minutes"
        ),
        rerun=rerun_gp,
    ),
    "multitask-other-runs": dict(
        doc="docs/user_guide/multitask.md",
        results="multitask_study{,_run1,_reduced,_dev,_ridge,_ridge_dev,_target_dev,_extra,"
        "_default_extra}.jsonl",
        script="study_multitask.py (other modes; replicate())",
        deterministic="yes (fit_seconds no)",
        cost=(
            "measured: slice (1-2 settings x 1 draw of each of 9 files) 51 s; --full "
            "(every setting and draw) not run: hours"
        ),
        rerun=rerun_multitask_other,
    ),
    "armul-variants": dict(
        doc="docs/user_guide/multitask.md ARMUL variants",
        results="armul_variants.jsonl (per draw; armul_variants.json's means not compared)",
        script="bench_armul_variants.py --replications 10 (root seed 2023)",
        deterministic="yes (errors, selected C; fit_seconds no)",
        cost=(
            "slice: draw 0 of each of the 12 settings, all 5 methods, measured 147 s; "
            "--full (10 draws): not run, about 10x the slice"
        ),
        rerun=rerun_armul_variants,
    ),
    "multitask-diagnoses": dict(
        doc="docs/user_guide/multitask.md diagnoses (CV against oracle, where the target "
        "is missed)",
        results="multitask_diagnosis_reduced.jsonl, multitask_target_diagnosis_dev.jsonl",
        script="study_multitask.py --diagnose --points reduced, --diagnose-target --dev",
        deterministic="yes (fixed root seeds; times no)",
        cost="measured: slice draw 0 of 2 settings of each file 15 s; --full: every "
        "setting and draw (28 + 24 draws)",
        rerun=rerun_multitask_diagnoses,
    ),
    "multitask-not-rerun": dict(
        doc="docs/user_guide/multitask.md",
        results="multitask_bench.json",
        script="bench_multitask.py",
        deterministic="no (timings)",
        cost="-",
    ),
    "deep-diffusion-brain": dict(
        doc="docs/user_guide/{diffusion_grape,phenobrain_rte}.md",
        results="diffusion_grape.json, brain_rte.json",
        script="bench_diffusion_grape.py, bench_brain_rte.py --seeds 3",
        deterministic="NumPy blocks yes; torch CPU training: see the rerun",
        cost=(
            "measured: slice (oracle 10 seeds, GRAPE seed 0, torch diffusion seed 2000, RTE and "
            "PhenoBrain seed 0) 121 s; --full 1101 s, run 2026-12-04 (recorded 480 s + 364 s)"
        ),
        rerun=rerun_deep,
    ),
    "cimln-handwritten-hagmvc": dict(
        doc="docs/user_guide/deep_methods.md CIMLN: mean imputation + HAGMVC on Handwritten",
        results="cimln_handwritten_hagmvc.json",
        script="bench_deep.py --cimln handwritten_hagmvc (seeds 0-9)",
        deterministic="yes (HAGMVC, NumPy; times no)",
        cost="measured: slice seed 0 of 10 (both rows) 4 s; --full (10 seeds) 15 s",
        rerun=_cimln_part("handwritten_hagmvc", 0),
    ),
    "cimln-default-nocausal": dict(
        doc="docs/user_guide/deep_methods.md CIMLN default configuration, causal_weight=0",
        results="cimln_handwritten_default_nocausal.json",
        script="bench_deep.py --cimln handwritten_default_nocausal (seeds 0-9)",
        deterministic="torch CPU, one thread: see the rerun",
        cost="measured: slice seed 0 of 10 28-34 s; --full: not run (recorded 739 s)",
        rerun=_cimln_part("handwritten_default_nocausal", 0),
    ),
    "cimln-unbalanced": dict(
        doc="docs/user_guide/deep_methods.md CIMLN on make_unbalanced_views",
        results="cimln_unbalanced_views.json",
        script="bench_deep.py --cimln unbalanced_views (seeds 0-9)",
        deterministic="torch CPU, one thread: see the rerun",
        cost="measured: slice seed 0 of 10 (all 11 rows) 7-21 s; --full (10 seeds) 72 s",
        rerun=_cimln_part("unbalanced_views", 0),
    ),
    "cimln-unbalanced-baselines": dict(
        doc="docs/user_guide/deep_methods.md CIMLN on make_unbalanced_views: the anchor rows",
        results="cimln_unbalanced_views_baselines.json",
        script="bench_deep.py --cimln unbalanced_views_baselines (seeds 0-9)",
        deterministic="yes (k-means, HAGMVC, LMVSC; times no)",
        cost="slice seed 0 of 10 (the 6 baseline rows): seconds; --full (10 seeds) about 30 s",
        rerun=_cimln_part("unbalanced_views_baselines", 0),
    ),
    "cimln-handwritten-eta0.5": dict(
        doc="docs/user_guide/deep_methods.md CIMLN ablation on Handwritten (eta = 0.5)",
        results="cimln_handwritten_eta0.5.json",
        script="bench_deep.py --cimln handwritten_eta0.5 (seeds 0-9)",
        deterministic="torch CPU, one thread: see the rerun",
        cost="measured: slice seed 0 of 10 (all 8 rows) 29-32 s; --full recorded 1902 s",
        rerun=_cimln_part("handwritten_eta0.5", 0),
    ),
    "cimln-dev-decision": dict(
        doc="docs/user_guide/deep_methods.md CIMLN default's decision (dev seeds 100-103)",
        results="cimln_dev_decision.json",
        script="bench_deep.py --cimln dev_decision",
        deterministic="torch CPU, one thread: see the rerun",
        cost="measured: slice dev seed 100 of 4 (both beds) 18-19 s; --full (4 seeds) 62 s",
        rerun=_cimln_part("dev_decision", 100),
    ),
    "cimln-default-config": dict(
        doc="docs/user_guide/deep_methods.md CIMLN default configuration on Handwritten",
        results="cimln_handwritten_default_config.json",
        script="bench_deep.py --cimln handwritten_default_config (seeds 0-9)",
        deterministic="torch CPU, one thread: see the rerun",
        cost="measured: slice seed 0 of 10 30 s; --full recorded 1062 s",
        rerun=_cimln_part("handwritten_default_config", 0),
    ),
    "cimln-diagnostic": dict(
        doc="docs/user_guide/deep_methods.md CIMLN diagnostic (Bayes ceiling, probe)",
        results="cimln_diagnostic_ceiling.json, cimln_diagnostic_probe.json",
        script="bench_cimln_diagnostic.py ceiling|probe (seeds 0-9)",
        deterministic="ceiling NumPy yes; probe torch CPU one thread: see the rerun",
        cost="measured: ceiling all 10 seeds + probe seed 0 14 s; --full probe recorded 496 s",
        rerun=rerun_cimln_diagnostic,
    ),
    "deep-visualscore": dict(
        doc="docs/user_guide/deep_methods.md VisualScore toy (GRPO rewards)",
        results="deep.json (visualscore_toy_srcc; its CIMLN entry points to cimln_*.json)",
        script="bench_deep.py (no options; seeds 0-2)",
        deterministic="torch CPU: see the rerun",
        cost="measured: slice seed 0 of 3, all 5 settings 3 s; --full (3 seeds) 5 s",
        rerun=rerun_deep_visualscore,
    ),
    "phenobrain-ablation": dict(
        doc="docs/user_guide/phenobrain_rte.md mechanism ablation (both regimes)",
        results="phenobrain_ablation.json",
        script="bench_brain_rte.py --ablation --seeds 10",
        deterministic="torch CPU, one thread: see the rerun",
        cost="measured: slice seed 0 of 10, both regimes, all 6 networks 17 s; --full "
        "recorded 2636 s",
        rerun=_phenobrain_part("ablation", 0),
    ),
    "phenobrain-ablation-2400": dict(
        doc="docs/user_guide/phenobrain_rte.md ablation, many routes at 2400 subjects",
        results="phenobrain_ablation_many_routes_2400.json",
        script="bench_brain_rte.py --ablation --many-routes-subjects 2400 --seeds 3",
        deterministic="torch CPU, one thread: see the rerun",
        cost="measured: slice seed 2 of 3 (cheapest recorded) 45 s; --full recorded 1028 s",
        rerun=_phenobrain_part("ablation_many_routes_2400", 2),
    ),
    "phenobrain-many-routes-dev": dict(
        doc="docs/user_guide/phenobrain_rte.md many routes: the size rule (dev seeds)",
        results="phenobrain_many_routes_dev.json",
        script="bench_brain_rte.py --many-routes-dev",
        deterministic="torch CPU, one thread: see the rerun",
        cost="measured: slice dev seed 100 at 1600 subjects 9 s; --full (seeds 100-101, "
        "1600 and 2400 subjects) not run",
        rerun=rerun_phenobrain_many_routes_dev,
    ),
    "phenobrain-many-routes-report": dict(
        doc="docs/user_guide/phenobrain_rte.md many routes at 2400 subjects (report)",
        results="phenobrain_many_routes_report.json",
        script="bench_brain_rte.py --many-routes-report 2400 (seeds 0-9, 5 processes)",
        deterministic="torch CPU, one thread: see the rerun",
        cost="measured: slice seed 0 of 10 (4 networks) 22 s; --full not run (recorded "
        "9111 s over 5 processes)",
        rerun=rerun_phenobrain_many_routes_report,
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
    "hagmvc-dev-rounds": dict(
        doc="docs/user_guide/hagmvc_anchors.md",
        results="hagmvc_{degree,anchor_count,rotation,variance}_dev.json, "
        "hagmvc_anchor_{budget,third,tau}_dev.json, hagmvc_sharpness_dev.json (rerun); "
        "hagmvc_ablation_dev_*.json, "
        "hagmvc_suite_after_issue16.json, mvc_suite_greedy_seeding (not rerun)",
        script="bench_hagmvc_{degree,anchor_count,rotation,anchor_budget,variance,sharpness}.py",
        deterministic="yes (ACC per set and seed; fit times no)",
        cost=(
            "slice: iris-sepal-petal, wine-groups, seeds 0-1 of each round (budget: 0, 1, 20, 21; "
            "round 5: 0, 1, 40, 41; round 6: 0, 1, 60, 61), "
            "measured 5 s; --full (8 dev sets, 20 seeds; budget 30): not run, tens of "
            "minutes per round (recorded fit times)"
        ),
        rerun=rerun_hagmvc_rounds,
    ),
    "federated": dict(
        doc="docs/user_guide/federated.md",
        results="federated.json",
        script="bench_federated.py (10 seeds, DREAM 5 seeds)",
        deterministic="yes (fixed seeds, NumPy)",
        cost="measured: the whole recorded run, 95 s",
        rerun=rerun_federated,
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
    p.add_argument(
        "--merge",
        action="store_true",
        help="update the figures run now inside the existing --json file (each with its own "
        "command and run config; equal values counted, the others listed)",
    )
    argv = sys.argv[1:] if argv is None else list(argv)
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
        if args.json and args.merge:
            _merge_figure(Path(args.json), name, report, argv)
        elif args.json:  # written after every figure, so a cut-short run keeps what it has
            os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
            Path(args.json).write_text(json.dumps(report, indent=1, default=str))
    return report


def _merge_figure(path, name, report, argv):
    """Put one figure of ``report`` into the merged file at ``path`` (compact form)."""
    merged = json.loads(path.read_text()) if path.exists() else {"figures": {}}
    fig = report["figures"][name]
    merged["figures"][name] = {
        "command": "python benchmarks/check_docs_figures.py " + " ".join(argv),
        "run_config": report["config"],
        "scope": fig["scope"],
        "counts": fig["counts"],
        "n_values": len(fig["comparisons"]),
        "wall_s": fig["wall_s"],
        "not_equal": [c for c in fig["comparisons"] if c["status"] != "equal"],
    }
    text = json.dumps(merged, separators=(",", ":"), default=str)
    path.write_text(text.replace('},{"key"', '},\n{"key"'))  # one comparison a line


if __name__ == "__main__":
    main()
