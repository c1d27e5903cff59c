"""LMVSC with ``n_jobs=1`` on Handwritten: the time of a fit in two source trees.

Usage::

    python benchmarks/bench_lmvsc_threads.py OLD_TREE NEW_TREE [--rounds 3] [--repeats 3]

Each round runs one process per tree, in turn (old, new), so that both see
the same machine load; a process fits once to warm up (Numba compilation),
then times ``--repeats`` fits. Reports the median fit time of each tree over
all rounds and their ratio. Both fits use ``random_state=0``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = """
import json, time
from mvlearn_ext.cluster import LMVSC
from mvlearn_ext.datasets import load_handwritten
Xs, y = load_handwritten()
def fit():
    return LMVSC(n_clusters=10, n_jobs=1, random_state=0).fit(Xs)
fit()
times = []
for _ in range({repeats}):
    t = time.perf_counter(); model = fit(); times.append(time.perf_counter() - t)
print(json.dumps(dict(times=times, labels=model.labels_.tolist()[:50])))
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    times = {"old": [], "new": []}
    for r in range(args.rounds):
        for name in ("old", "new"):
            tree = os.path.abspath(getattr(args, name))
            env = dict(os.environ, PYTHONPATH=tree)
            out = subprocess.run(
                [sys.executable, "-c", CHILD.format(repeats=args.repeats)],
                env=env,
                cwd=tree,
                capture_output=True,
                text=True,
                check=True,
            )
            got = json.loads(out.stdout.strip().splitlines()[-1])
            times[name] += got["times"]
            print(f"round {r} {name}: " + ", ".join(f"{t:.2f}" for t in got["times"]), flush=True)
    old, new = statistics.median(times["old"]), statistics.median(times["new"])
    print(f"median fit: old {old:.2f} s, new {new:.2f} s, old/new = {old / new:.2f}")


if __name__ == "__main__":
    main()
