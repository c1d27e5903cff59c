"""Hot paths before and after a change of the route into the compiled core (issue 17).

Times the fits that run on the compiled kernels, for two checkouts of the
package in the same run: HAGMVC and DRMC on Handwritten (defaults,
``random_state=0``, ``n_jobs=1``) and LVMOGP on a synthetic field with
missing entries (fixed ``max_iter``). Each repeat starts one fresh process per
checkout, in alternating order (old first on even repeats, new first on odd
ones); a process imports its checkout, fits every model once to warm up
(Numba compilation, caches), then times ``--fits`` fits of each. The figure is
the ratio of the medians (new / old) over all timed fits, of the wall-clock
time and of the process's CPU time (``time.process_time``; every pool runs on
one thread, so CPU time is the work done and moves far less than wall time
when other jobs share the machine), and the median of the per-repeat ratios
(old and new run back to back). Timings on a shared machine are noisy, so only
ratios are meaningful.

It also times the call a driver makes to project a small block onto the
simplex (64 x 16, as in a FISTA iteration of the batched simplex QP): the
validating ``mvlearn_ext.utils.project_simplex`` in the old checkout, the
unchecked ``mvlearn_ext._lib._kernels.project_simplex`` in the new one
(microseconds per call, median of 7 batches of 2,000 calls). Every process also
returns a SHA-256 digest of each fit's labels or predictions, and the run
checks that the two checkouts agree bit for bit.

Run: ``python benchmarks/bench_core_route.py --old /path/to/old/root
[--new .] [--repeats 7] [--fits 2] [--json PATH]``; a root is a directory
that holds the ``mvlearn_ext`` package with its compiled core built.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

MODELS = ("hagmvc", "drmc", "lvmogp")
METRICS = ("wall", "cpu")


def _field(seed=0, n=150, p=400, frac=0.2):
    """A smooth field over inputs x in [0, 1] and outputs with 2 latent coordinates."""
    import numpy as np

    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(0, 1, (n, 1)), axis=0)
    H = rng.standard_normal((p, 2))
    Y = np.sin(6 * X + H[:, :1].T) * np.cos(H[:, 1:].T) + 0.1 * rng.standard_normal((n, p))
    Y[rng.random((n, p)) < frac] = np.nan
    return X, Y


def _worker(fits):
    import numpy as np

    import mvlearn_ext
    from mvlearn_ext.cluster import DRMC, HAGMVC
    from mvlearn_ext.datasets import load_handwritten
    from mvlearn_ext.gaussian_process import LVMOGPRegressor

    Xs, y = load_handwritten()
    k = len(np.unique(y))
    X, Y = _field()

    def run(name):
        if name == "hagmvc":
            return HAGMVC(n_clusters=k, random_state=0, n_jobs=1).fit(Xs).labels_
        if name == "drmc":
            return DRMC(n_clusters=k, random_state=0, n_jobs=1).fit(Xs).labels_
        model = LVMOGPRegressor(max_iter=60, tol=0.0, n_jobs=1, random_state=0).fit(X, Y)
        mean, std = model.predict(X, return_std=True)
        return np.concatenate([mean.ravel(), std.ravel()])

    out = {"package": mvlearn_ext.__file__, "wall": {}, "cpu": {}, "digest": {}}
    for name in MODELS:
        run(name)  # warm-up
        out["wall"][name], out["cpu"][name] = [], []
        for _ in range(fits):
            t0, c0 = time.perf_counter(), time.process_time()
            result = run(name)
            out["wall"][name].append(time.perf_counter() - t0)
            out["cpu"][name].append(time.process_time() - c0)
        out["digest"][name] = hashlib.sha256(np.ascontiguousarray(result).tobytes()).hexdigest()
    out["projection_us"] = _driver_projection_us()
    print(json.dumps(out))


def _driver_projection_us(calls=2000, batches=7):
    """Microseconds per projection of a 64 x 16 block, as the drivers call it."""
    import numpy as np

    try:
        from mvlearn_ext._lib._kernels import project_simplex  # the new route
    except ImportError:
        from mvlearn_ext.utils import project_simplex  # the old route
    B = np.random.default_rng(0).standard_normal((64, 16))
    per_call = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            project_simplex(B, axis=1, out=B, n_threads=1)
        per_call.append((time.perf_counter() - t0) / calls * 1e6)
    return float(np.median(per_call))


def _spawn(root, fits):
    one = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    env = dict(os.environ, PYTHONPATH=os.path.abspath(root), **one)
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--worker", "--fits", str(fits)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=os.path.abspath(root),
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", help="root of the old checkout (holds mvlearn_ext/)")
    ap.add_argument("--new", default=".", help="root of the new checkout")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--fits", type=int, default=2, help="timed fits per model and process")
    ap.add_argument("--json", help="write the result here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(args.fits)
        return
    if not args.old:
        ap.error("--old is required")
    roots = {"old": args.old, "new": args.new}
    times = {v: {t: {m: [] for m in MODELS} for t in METRICS} for v in roots}
    pairs = {t: {m: [] for m in MODELS} for t in METRICS}  # per-repeat new/old
    projection = {v: [] for v in roots}
    digests = {v: set() for v in roots}
    for r in range(args.repeats):
        order = ("old", "new") if r % 2 == 0 else ("new", "old")
        outs = {}
        for version in order:
            out = outs[version] = _spawn(roots[version], args.fits)
            assert os.path.abspath(out["package"]).startswith(os.path.abspath(roots[version]))
            for t in METRICS:
                for m in MODELS:
                    times[version][t][m] += out[t][m]
            projection[version].append(out["projection_us"])
            digests[version].add(tuple(sorted(out["digest"].items())))
        for t in METRICS:
            for m in MODELS:
                new, old = sum(outs["new"][t][m]), sum(outs["old"][t][m])
                pairs[t][m].append(new / old)
        print(f"repeat {r + 1}/{args.repeats} done", file=sys.stderr)

    import numpy as np

    same = digests["old"] == digests["new"] and len(digests["new"]) == 1
    result = {"repeats": args.repeats, "fits_per_process": args.fits, "bit_identical": same}
    print(f"{'model':8} {'time':5} {'old median s':>13} {'new median s':>13} {'new/old':>8}"
          f" {'median of paired':>17} {'paired range':>13}")  # fmt: skip
    for m in MODELS:
        result[m] = {}
        for t in METRICS:
            old, new = np.median(times["old"][t][m]), np.median(times["new"][t][m])
            paired = pairs[t][m]
            result[m][t] = {
                "old_median_s": float(old),
                "new_median_s": float(new),
                "ratio_new_over_old": float(new / old),
                "median_paired_ratio": float(np.median(paired)),
                "paired_ratios": paired,
                "old_s": times["old"][t][m],
                "new_s": times["new"][t][m],
            }
            print(
                f"{m:8} {t:5} {old:13.3f} {new:13.3f} {new / old:8.3f} "
                f"{np.median(paired):17.3f} {min(paired):6.2f}-{max(paired):.2f}"
            )
    old_us, new_us = np.median(projection["old"]), np.median(projection["new"])
    result["driver_projection_us"] = {
        "old": projection["old"],
        "new": projection["new"],
        "ratio_new_over_old": float(new_us / old_us),
    }
    print(
        f"driver's 64 x 16 projection: old {old_us:.1f} us, new {new_us:.1f} us per call "
        f"({new_us / old_us:.3f}x)"
    )
    print(f"results bit-identical between the checkouts: {same}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
