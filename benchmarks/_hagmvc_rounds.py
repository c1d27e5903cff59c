"""The plumbing the HAGMVC development rounds share (``bench_hagmvc_{degree,anchor_count,rotation}``).

Each round fits HAGMVC variants on the 8 ``dev`` sets of
:func:`mvlearn_ext.datasets.mvc_suite_names` (data seed 0) over model seeds
``0 .. --seeds - 1``, one row of accuracies per (set, seed), summarises every
variant per set and over the split, and applies the decision rule written
before the runs (see ``bench_hagmvc_degree.py``): a candidate must raise the dev
mean by 0.001 over the reference, drop no set's mean by more than 0.01, stay
within 0.03 of the best concatenation baseline on every set (seeds 0-9), and keep
Handwritten (seeds 0-9) at mean >= 0.975 with std < 0.01. The held-out sets are
never read here.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys

import numpy as np
from sklearn.cluster import KMeans

import mvlearn_ext.cluster._hagmvc as hag
from mvlearn_ext.datasets import load_mvc_dataset, mvc_suite_names

#: HAGMVC's module switches before round 6 made the budget anchors and the degree
#: regularisation the default: the reference configuration ("C0", "default") of every
#: round, so that a round's script reproduces its records after the defaults moved on.
REFERENCE_DEFAULTS = {"_ANCHOR_RULE": "per_cluster", "_DEGREE_REG": 0.0, "_BUDGET_DIVISOR": 2}


def pin_reference_defaults():
    """Set HAGMVC's module switches to :data:`REFERENCE_DEFAULTS`."""
    for name, value in REFERENCE_DEFAULTS.items():
        setattr(hag, name, value)


BASELINES = ("concat-kmeans-z", "concat-kmeans-bal", "concat-spectral-z", "concat-spectral-bal")
_KMEANS = KMeans


class CapturingKMeans:
    """Stands in for KMeans inside ``_hagmvc``: keeps a copy of the random state."""

    captured = None

    def __init__(self, n_clusters, n_init, random_state):
        CapturingKMeans.captured = copy.deepcopy(random_state)
        self._model = _KMEANS(n_clusters=n_clusters, n_init=n_init, random_state=random_state)

    def fit(self, X):
        return self._model.fit(X)


def parse_args(doc, argv=None):
    """``--seeds`` (default 20), ``--sets`` (dev set names; default all) and ``--json``.

    Also pins HAGMVC's switches to :data:`REFERENCE_DEFAULTS` for the rest of the
    process (every round script calls this first).
    """
    pin_reference_defaults()
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--sets", nargs="*")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    dev = mvc_suite_names("dev")
    unknown = sorted(set(args.sets or ()) - set(dev))
    if unknown:
        p.error(f"--sets: {unknown} are not dev sets; choose from {list(dev)}")
    args.sets = [s for s in dev if not args.sets or s in args.sets]
    return args


def run_rounds(sets, n_seeds, fit_seed, report):
    """One row ``dict(set, seed, **fit_seed(Xs, y, k, seed))`` per set and seed.

    After each set, ``report(rows_of_the_set)`` is printed to stderr after the
    set's name.
    """
    rows = []
    for name in sets:
        Xs, y = load_mvc_dataset(name, return_Xs_y=True)
        k = int(np.unique(y).size)
        for seed in range(n_seeds):
            rows.append(dict(set=name, seed=seed, **fit_seed(Xs, y, k, seed)))
        last = [r for r in rows if r["set"] == name]
        print(f"{name:22s} " + report(last), file=sys.stderr, flush=True)
    return rows


def best_baselines(path="benchmarks/results/mvc_suite.json"):
    """The best concatenation baseline's mean dev ACC per set (``mvc_suite.json``)."""
    with open(path) as f:
        records = json.load(f)["records"]
    best = {}
    for r in records:
        if r["method"] in BASELINES and r["split"] == "dev":
            best.setdefault(r["dataset"], {}).setdefault(r["method"], []).append(r["ACC"])
    return {s: max(float(np.mean(v)) for v in per.values()) for s, per in best.items()}


def summarise(rows, key, sets, extra=None):
    """Variant ``key``'s summary: dev mean, spread, Handwritten 0-9 and per-set statistics.

    ``extra(s, set_rows)`` adds entries to set ``s``'s statistics.
    """
    per_set = {}
    for s in sets:
        accs = np.array([r[key] for r in rows if r["set"] == s])
        first = np.array([r[key] for r in rows if r["set"] == s and r["seed"] < 10])
        per_set[s] = dict(mean=float(accs.mean()), std=float(accs.std()),
                          mean_0_9=float(first.mean()))  # fmt: skip
        if extra is not None:
            per_set[s].update(extra(s, [r for r in rows if r["set"] == s]))
    hw = [r[key] for r in rows if r["set"] == "handwritten" and r["seed"] < 10]
    return dict(
        dev_mean=float(np.mean([p["mean"] for p in per_set.values()])),
        spread=float(np.mean([p["std"] for p in per_set.values()])),
        handwritten_0_9=(float(np.mean(hw)), float(np.std(hw))) if hw else None,
        per_set=per_set,
    )


def rule_failures(entry, sets, baselines, base=None):
    """Why the summary ``entry`` fails the rule (empty: it passes).

    Against the reference summary ``base`` (``None``: ``entry`` is the
    reference): the dev mean's rise and every set's drop; then the gap to the
    best baseline per set and the Handwritten floor.
    """
    why = []
    if base is not None:
        if entry["dev_mean"] < base["dev_mean"] + 0.001:
            why.append("dev mean does not rise by 0.001")
        for s in sets:
            drop = base["per_set"][s]["mean"] - entry["per_set"][s]["mean"]
            if drop > 0.01:
                why.append(f"{s} drops by {drop:.3f}")
    for s in sets:
        gap = baselines.get(s, 0.0) - entry["per_set"][s]["mean_0_9"]
        if gap > 0.03:
            why.append(f"{s} {gap:.3f} below the best baseline")
    hw = entry["handwritten_0_9"]
    if hw is not None and (hw[0] < 0.975 or hw[1] >= 0.01):
        why.append(f"handwritten {hw[0]:.3f} ± {hw[1]:.3f}")
    return why


def summary_line(key, entry, width=0):
    """One printed line of a variant's summary: dev mean, spread, Handwritten, failures."""
    hw = entry["handwritten_0_9"]
    return (
        f"{key.ljust(width)} dev mean {entry['dev_mean']:.4f} spread {entry['spread']:.4f}"
        + (f"  handwritten 0-9 {hw[0]:.3f}±{hw[1]:.3f}" if hw else "")
        + (f"  fails: {'; '.join(entry['fails'])}" if entry.get("fails") else "")
    )


def mean_std(rows, key):
    """``"mean±std"`` of ``key`` over ``rows`` (3 decimals), for the progress lines."""
    values = [r[key] for r in rows]
    return f"{np.mean(values):.3f}±{np.std(values):.3f}"


def write_json(path, **payload):
    """Write the round's record (``indent=1``) if ``path`` is given."""
    if path:
        with open(path, "w") as f:
            json.dump(payload, f, indent=1)
