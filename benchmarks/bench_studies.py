"""Benchmark: what does mvlearn_ext.studies cost per replication over a bare joblib loop?

Question: for a replicate function that does almost nothing (one normal draw),
how many microseconds per replication does ``Study.run`` add (seed derivation,
JSON records, results file, progress bar), compared with the loop a user
would write by hand (``joblib.Parallel`` over ``SeedSequence(root).spawn(n)``
children, records collected into a ``pandas.DataFrame``) in the same run?

Writes benchmarks/results/studies.json. Medians of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from mvlearn_ext.studies import Study


def replicate(setting, rng):
    return {"x": float(rng.normal())}


def heavy(setting, rng):
    x = rng.standard_normal(200_000)
    x.sort()
    return {"x": float(x[100])}


def _peer_one(fn, setting, seed):
    return {**setting, **fn(setting, np.random.default_rng(seed))}


def peer(settings, n_replications, root_seed, fn=replicate, **parallel):
    children = np.random.SeedSequence(root_seed).spawn(len(settings))
    tasks = [
        (s, child)
        for s, parent in zip(settings, children, strict=True)
        for child in parent.spawn(n_replications)
    ]
    rows = Parallel(**(parallel or {"n_jobs": 1}))(delayed(_peer_one)(fn, s, c) for s, c in tasks)
    return pd.DataFrame.from_records(rows)


def _time(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", type=int, default=10)
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results/studies.json")
    args = parser.parse_args(argv)
    settings = [{"a": i} for i in range(args.settings)]
    n = args.settings * args.replications
    study = Study(replicate, settings, n_replications=args.replications, root_seed=0)
    study.run(progress=False)  # warm-up (imports)
    peer(settings, 2, 0)
    folder = tempfile.mkdtemp()
    counter = iter(range(10**6))

    def with_file():
        Study(
            replicate,
            settings,
            n_replications=args.replications,
            path=os.path.join(folder, f"r{next(counter)}.jsonl"),
        ).run(progress=True)

    resumable = Study(
        replicate, settings, n_replications=args.replications, path=os.path.join(folder, "f.jsonl")
    )
    resumable.run(progress=False)
    us = {
        "peer_bare_joblib": _time(lambda: peer(settings, args.replications, 0), args.repeats),
        "study_in_memory": _time(lambda: study.run(progress=False), args.repeats),
        "study_file_and_bar": _time(with_file, args.repeats),
        "study_resume_finished_file": _time(lambda: resumable.run(progress=False), args.repeats),
    }
    us = {k: v / n * 1e6 for k, v in us.items()}
    # Parallel: ~5 ms replications, loky with 2 workers, ours vs the peer, same run.
    n_heavy = 200
    heavy_study = Study(heavy, [{"a": 0}], n_replications=n_heavy)
    heavy_study.run(backend="loky", n_jobs=2, progress=False)  # start the workers
    par = {
        "peer_sequential": _time(lambda: peer([{"a": 0}], n_heavy, 0, heavy), args.repeats),
        "peer_loky_2": _time(
            lambda: peer([{"a": 0}], n_heavy, 0, heavy, n_jobs=2, backend="loky"), args.repeats
        ),
        "study_sequential": _time(lambda: heavy_study.run(progress=False), args.repeats),
        "study_loky_2": _time(
            lambda: heavy_study.run(backend="loky", n_jobs=2, progress=False), args.repeats
        ),
    }
    par = {k: v / n_heavy * 1e3 for k, v in par.items()}
    result = {
        "question": "runner overhead per replication, microseconds (median)",
        "n_replications_total": n,
        "us_per_replication": us,
        "ratio_vs_peer": {k: v / us["peer_bare_joblib"] for k, v in us.items()},
        "heavy_ms_per_replication": par,
        "heavy_ratio_ours_vs_peer": {
            "sequential": par["study_sequential"] / par["peer_sequential"],
            "loky_2": par["study_loky_2"] / par["peer_loky_2"],
        },
        "heavy_speedup_loky_2": {
            "ours": par["study_sequential"] / par["study_loky_2"],
            "peer": par["peer_sequential"] / par["peer_loky_2"],
        },
    }
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
