"""Multi-view clusterers against concatenation baselines and peers on the real-data suite.

Question: on :func:`mvlearn_ext.datasets.load_mvc_real_suite` (small samples,
redundant views, views of unequal quality), how do HAGMVC and DRMC with their
defaults compare with

* k-means and 10-NN spectral clustering of the concatenated views, z-scored
  (``-z``) and per-view balanced (``-bal``: every view at total variance 1);
  ``concat-spectral-bal`` is scikit-learn's
  ``SpectralClustering(affinity="nearest_neighbors", n_neighbors=10)`` on the
  balanced concatenation;
* EOMSCCA and HAGMVC with ``n_levels=2``;
* mvlearn 0.5.0's ``MultiviewSpectralClustering`` (10-NN affinity) and
  ``MultiviewKMeans`` on z-scored views, when mvlearn imports (optional peers; the
  spectral one builds dense n x n kernels and is skipped above ``--mvlearn-max-n``
  samples; ``MultiviewKMeans`` takes two views only, so it runs on two-view sets);
* the best single view (an ORACLE, not a method: 10-NN spectral clustering of each
  z-scored view alone, and the view with the best mean ACC over the seeds is picked
  with the labels)?

Every method runs with ``n_clusters`` = number of classes and ``random_state`` =
seed; ACC (Hungarian matching), NMI and fit time (median) over seeds. Ablations run
in the same script: ``--variant NAME=HAGMVC:key=value,...``.

``--timing`` also times HAGMVC and DRMC on Handwritten against the 10-NN spectral
clustering of the balanced concatenation (scikit-learn), median of 5 fits each,
interleaved in an order that turns by one method per repeat: once with BLAS on one thread, once with BLAS as installed (there
scikit-learn may use every core; HAGMVC and DRMC keep BLAS on one thread inside
``fit`` in both, so that their labels do not depend on the thread count), each
with the default ``n_jobs=None`` (one thread) and with ``n_jobs=-1`` (every core).

Examples::

    python benchmarks/bench_mvc_real.py --seeds 3 --datasets nutrimouse-diet,handwritten-n100
    python benchmarks/bench_mvc_real.py --seeds 10 --timing \\
        --json benchmarks/results/mvc_real.json --markdown docs/mvc_real.md
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np
from _common import parse_variant, run_header

CONCAT = {
    "concat-kmeans-z": ("ConcatKMeans", {"scaling": "zscore"}),
    "concat-kmeans-bal": ("ConcatKMeans", {"scaling": "balanced"}),
    "concat-spectral-z": ("ConcatSpectral", {"scaling": "zscore", "n_neighbors": 10}),
    "concat-spectral-bal": ("ConcatSpectral", {"scaling": "balanced", "n_neighbors": 10}),
}
PACKAGE = {
    "HAGMVC": ("HAGMVC", {}),
    "DRMC": ("DRMC", {}),
    "HAGMVC[n_levels=2]": ("HAGMVC", {"n_levels": 2}),
    "EOMSCCA": ("EOMSCCA", {}),
}
#: Ablations: each default mechanism switched off or set to its alternative.
ABLATIONS = {
    "HAGMVC[view_weights=auto]": ("HAGMVC", {"view_weights": "auto"}),
    "HAGMVC[view_weights=uniform]": ("HAGMVC", {"view_weights": "uniform"}),
    "HAGMVC[small_sample_graph=False]": ("HAGMVC", {"small_sample_graph": False}),
    "HAGMVC[n_neighbors=8]": ("HAGMVC", {"n_neighbors": 8}),
    "HAGMVC[auto,8,False]": (
        "HAGMVC",
        {"view_weights": "auto", "n_neighbors": 8, "small_sample_graph": False},
    ),
    "DRMC[small_sample_graph=False]": ("DRMC", {"small_sample_graph": False}),
    "DRMC[view_weights=agreement]": ("DRMC", {"view_weights": "agreement"}),
    "DRMC[n_neighbors=5]": ("DRMC", {"n_neighbors": 5}),
    "DRMC[max_iter=0]": ("DRMC", {"max_iter": 0}),
}
PEERS = ("mvlearn-spectral", "mvlearn-kmeans")
ORACLE = "best-single-view (oracle)"
REFERENCE = "concat-spectral-bal"
SMALL_N = 150


def _zscore(Xs):
    from sklearn.preprocessing import StandardScaler

    return [StandardScaler().fit_transform(X) for X in Xs]


def make_estimator(method, table, k, seed):
    """A fitted-by-``fit_predict`` object, or raise ``LookupError`` when unavailable."""
    if method in table:
        import mvlearn_ext.cluster as cluster

        cls_name, params = table[method]
        return getattr(cluster, cls_name)(n_clusters=k, random_state=seed, **params)
    if method == "mvlearn-spectral":
        from mvlearn.cluster import MultiviewSpectralClustering

        return MultiviewSpectralClustering(
            n_clusters=k, random_state=seed, affinity="nearest_neighbors", n_neighbors=10
        )
    if method == "mvlearn-kmeans":
        from mvlearn.cluster import MultiviewKMeans

        return MultiviewKMeans(n_clusters=k, random_state=seed)
    raise LookupError(method)


def _skip_reason(method, Xs, max_n):
    n = Xs[0].shape[0]
    if method in PEERS:
        try:
            import mvlearn.cluster  # noqa: F401
        except Exception as exc:  # noqa: BLE001 (an optional peer)
            return f"mvlearn not importable ({type(exc).__name__})"
    if method == "mvlearn-spectral" and n > max_n:
        return f"dense n x n kernels, n = {n} > {max_n}"
    if method == "mvlearn-kmeans" and len(Xs) != 2:
        return "two views only"
    return None


def _single_view_scores(Xs, y, k, seeds):
    """Mean ACC/NMI of 10-NN spectral clustering of each z-scored view (for the oracle)."""
    from sklearn.cluster import SpectralClustering

    from mvlearn_ext.metrics import clustering_report

    out = []
    for X in _zscore(Xs):
        accs, nmis = [], []
        for seed in seeds:
            sc = SpectralClustering(
                n_clusters=k,
                affinity="nearest_neighbors",
                n_neighbors=min(10, X.shape[0] - 1),
                random_state=seed,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                labels = sc.fit_predict(X)
            report = clustering_report(y, labels)
            accs.append(float(report["ACC"]))
            nmis.append(float(report["NMI"]))
        out.append((accs, nmis))
    return out


def run(methods, table, suite, seeds, max_n, verbose=True):
    from mvlearn_ext.metrics import clustering_report

    records, skipped, weights = [], {}, {}
    for name, Xs, y in suite:
        k = int(y.max()) + 1
        for method in methods:
            reason = _skip_reason(method, Xs, max_n)
            if reason:
                skipped[(method, name)] = reason
                continue
            views = _zscore(Xs) if method in PEERS else Xs
            accs = []
            for seed in seeds:
                est = make_estimator(method, table, k, seed)
                t0 = time.perf_counter()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        labels = est.fit_predict(views)
                except Exception as exc:  # noqa: BLE001 (recorded, the run goes on)
                    records.append(
                        dict(method=method, dataset=name, seed=seed, error=f"{exc}"[:200])
                    )
                    continue
                elapsed = time.perf_counter() - t0
                report = clustering_report(y, labels)
                records.append(
                    dict(
                        method=method,
                        dataset=name,
                        seed=seed,
                        ACC=float(report["ACC"]),
                        NMI=float(report["NMI"]),
                        time_s=elapsed,
                    )
                )
                accs.append(float(report["ACC"]))
                if hasattr(est, "view_weights_"):
                    w = np.atleast_2d(np.asarray(est.view_weights_, dtype=float))[0]
                    weights.setdefault((method, name), []).append(w.tolist())
            if verbose:
                text = f"{np.mean(accs):.3f} ± {np.std(accs):.3f}" if accs else "failed"
                print(f"  {name:26s} {method:28s} {text}", file=sys.stderr, flush=True)
        per_view = _single_view_scores(Xs, y, k, seeds)
        best = int(np.argmax([np.mean(a) for a, _ in per_view]))
        for seed, acc, nmi in zip(seeds, *per_view[best], strict=True):
            records.append(
                dict(method=ORACLE, dataset=name, seed=seed, ACC=acc, NMI=nmi, view=best)
            )
        if verbose:
            accs = [float(np.mean(a)) for a, _ in per_view]
            print(f"  {name:26s} single views {np.round(accs, 3)}", file=sys.stderr, flush=True)
    return records, skipped, weights


def timing(repeats=5):
    """Median fit times on Handwritten, the methods interleaved: BLAS on one thread, then free."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        one = _timing(repeats)
    return {"one BLAS thread": one, "BLAS as installed": _timing(repeats)}


def _timing(repeats):
    """Median fit times on Handwritten, the methods interleaved, in the current thread setting."""
    from sklearn.cluster import SpectralClustering

    from mvlearn_ext.cluster import DRMC, HAGMVC
    from mvlearn_ext.datasets import load_handwritten

    Xs, _ = load_handwritten(return_Xs_y=True)
    Xs = [np.asarray(X, dtype=np.float64) for X in Xs]

    def spectral(seed):
        # the balanced concatenation: every view centred, at total variance 1
        Z = np.hstack([(X - X.mean(0)) / (X.std(0).clip(1e-12) * np.sqrt(X.shape[1])) for X in Xs])
        SpectralClustering(
            n_clusters=10, affinity="nearest_neighbors", n_neighbors=10, random_state=seed
        ).fit(Z)

    fits = {
        "HAGMVC": lambda seed: HAGMVC(10, random_state=seed).fit(Xs),
        "DRMC": lambda seed: DRMC(10, random_state=seed).fit(Xs),
        "HAGMVC n_jobs=-1": lambda seed: HAGMVC(10, random_state=seed, n_jobs=-1).fit(Xs),
        "DRMC n_jobs=-1": lambda seed: DRMC(10, random_state=seed, n_jobs=-1).fit(Xs),
        REFERENCE: spectral,
    }
    times = {name: [] for name in fits}
    for fit in fits.values():  # warm-up (imports, Numba compilation)
        fit(0)
    names = list(fits)
    for seed in range(repeats):
        # The order turns by one method per repeat, so that no method always runs right
        # after the same one (a fit can be slower right after another's threads ran).
        for name in names[seed % len(names) :] + names[: seed % len(names)]:
            t0 = time.perf_counter()
            fits[name](seed)
            times[name].append(time.perf_counter() - t0)
    medians = {name: float(np.median(t)) for name, t in times.items()}
    return dict(
        repeats=repeats,
        times=times,
        median_s=medians,
        ratio_to_spectral={
            name: medians[name] / medians[REFERENCE] for name in fits if name != REFERENCE
        },
    )


def summarise(records):
    """{(method, dataset): dict(ACC=(mean, std), NMI=(mean, std), time_s, n_failed)}."""
    cells = {}
    for r in records:
        cells.setdefault((r["method"], r["dataset"]), []).append(r)
    out = {}
    for key, recs in cells.items():
        ok = [r for r in recs if "error" not in r]
        cell = dict(n_failed=len(recs) - len(ok))
        for metric in ("ACC", "NMI"):
            vals = [r[metric] for r in ok]
            cell[metric] = (float(np.mean(vals)), float(np.std(vals))) if vals else None
        times = [r["time_s"] for r in ok if "time_s" in r]
        cell["time_s"] = float(np.median(times)) if times else None
        cell["view"] = ok[0].get("view") if ok else None
        out[key] = cell
    return out


def targets(summary, datasets, sizes, methods=("HAGMVC", "DRMC")):
    """The checks of the targets, per method: mean margins and per-set gaps."""
    concat = [m for m in CONCAT if any((m, d) in summary for d in datasets)]

    def acc(m, d):
        cell = summary.get((m, d))
        return cell["ACC"][0] if cell and cell["ACC"] else np.nan

    out = {}
    if not concat:  # a partial run without the baselines (to be merged)
        return out
    for m in methods:
        if not any((m, d) in summary for d in datasets):
            continue
        mean = float(np.nanmean([acc(m, d) for d in datasets]))
        base_means = {b: float(np.nanmean([acc(b, d) for d in datasets])) for b in concat}
        gaps = {d: acc(m, d) - max(acc(b, d) for b in concat) for d in datasets}
        small = {d: acc(m, d) - acc(REFERENCE, d) for d in datasets if sizes[d] <= SMALL_N}
        out[m] = dict(
            mean=mean,
            above_every_concat_mean=bool(all(mean > v for v in base_means.values())),
            worst_gap_to_best_concat=float(min(gaps.values())),
            sets_more_than_0_03_below_best_concat=[d for d, g in gaps.items() if g < -0.03],
            worst_small_n_gap_to_reference=float(min(small.values())) if small else None,
            small_n_sets_more_than_0_01_below_reference=[d for d, g in small.items() if g < -0.01],
        )
    return out


def markdown(payload):
    config, records = payload["config"], payload["records"]
    datasets, sizes = config["datasets"], payload["sizes"]
    summary = summarise(records)
    methods = [m for m in [*config["methods"], ORACLE] if any(r["method"] == m for r in records)]
    full = [m for m in methods if all((m, d) in summary for d in datasets)]

    def mean_acc(m, ds):
        vals = [summary[(m, d)]["ACC"][0] for d in ds if summary.get((m, d), {}).get("ACC")]
        return float(np.mean(vals)) if ds and len(vals) == len(ds) else None

    lines = [
        "# Multi-view clustering on the real-data development suite",
        "",
        *([config["label"], ""] if config.get("label") else []),
        f"Generated by `benchmarks/bench_mvc_real.py` on {config['date']} "
        f"(mvlearn_ext {config.get('version', '?')}), "
        f"{len(config['seeds'])} seeds, data seed 0, one BLAS thread, Python {config['python']}.",
        "",
        "Command: `" + config["command"] + "`",
        "",
        "Data: `mvlearn_ext.datasets.load_mvc_real_suite` (its docstring describes the sets). "
        "Every method with `n_clusters` = number of classes and `random_state` = seed; "
        "ACC (Hungarian matching) and NMI are mean ± std over seeds, fit time the median. "
        f"`{REFERENCE}` is scikit-learn's `SpectralClustering(affinity='nearest_neighbors', "
        "n_neighbors=10)` on the per-view balanced concatenation. "
        f"`{ORACLE}` is NOT a method: the view whose 10-NN spectral clustering has the best "
        "mean ACC, picked with the labels. mvlearn's methods run on z-scored views.",
        "",
        "## Mean ACC over the suite",
        "",
        f"Over all {len(datasets)} sets (methods with a result on every set), and over "
        f"the sets with n <= {SMALL_N}.",
        "",
        "| method | mean ACC | mean NMI | mean ACC, n <= 150 |",
        "|---|---|---|---|",
    ]
    small = [d for d in datasets if sizes[d] <= SMALL_N]
    for m in sorted(full, key=lambda m: -mean_acc(m, datasets)):
        nmi = np.mean([summary[(m, d)]["NMI"][0] for d in datasets])
        sm = mean_acc(m, small)
        lines.append(
            f"| {m} | {mean_acc(m, datasets):.3f} | {nmi:.3f} | "
            f"{'–' if sm is None else f'{sm:.3f}'} |"
        )
    partial = [m for m in methods if m not in full]
    for m in partial:
        ds = [d for d in datasets if summary.get((m, d), {}).get("ACC")]
        if not ds:
            continue
        ref = mean_acc("HAGMVC", ds) if "HAGMVC" in full else None
        lines.append(
            f"| {m} ({len(ds)} sets{'' if ref is None else f'; HAGMVC {ref:.3f} on them'}) "
            f"| {mean_acc(m, ds):.3f} | – | – |"
        )
    lines.append("")
    skipped = payload.get("skipped", {})
    if skipped:
        lines += ["Not run: " + "; ".join(f"{k} ({v})" for k, v in skipped.items()) + ".", ""]
    lines += ["## Targets", ""]
    for m, t in payload["targets"].items():
        if t["worst_small_n_gap_to_reference"] is None:
            continue
        lines.append(
            f"* **{m}**: mean {t['mean']:.3f}; above every concatenation baseline's mean: "
            f"{'yes' if t['above_every_concat_mean'] else 'NO'}; worst gap to the best "
            f"concatenation baseline on a set {t['worst_gap_to_best_concat']:+.3f} (sets more "
            f"than 0.03 below: {', '.join(t['sets_more_than_0_03_below_best_concat']) or 'none'}"
            f"); worst gap to `{REFERENCE}` at n <= {SMALL_N} "
            f"{t['worst_small_n_gap_to_reference']:+.3f} (sets more than 0.01 below: "
            f"{', '.join(t['small_n_sets_more_than_0_01_below_reference']) or 'none'})."
        )
    lines.append("")
    if payload.get("timing"):
        settings = payload["timing"]
        first = next(iter(settings.values()))
        lines += [
            f"## Fit time on Handwritten (n = 2000, six views), median of {first['repeats']}",
            "",
            "Interleaved in the same run; the reference includes the scaling. HAGMVC and "
            "DRMC keep BLAS on one thread inside `fit` in both settings, so that their "
            "labels do not depend on the thread count; `n_jobs=-1` runs their tiles of "
            "rows and their views on every core (the same labels).",
            "",
            "| method | " + " | ".join(f"{name}: median (s), ratio" for name in settings) + " |",
            "|---|" + "---|" * len(settings),
        ]
        for method in [REFERENCE, *(m for m in first["median_s"] if m != REFERENCE)]:
            cells = []
            for t in settings.values():
                ratio = 1.0 if method == REFERENCE else t["ratio_to_spectral"][method]
                cells.append(f"{t['median_s'][method]:.3f}, {ratio:.2f}x")
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        lines.append("")
    for metric, title in (("ACC", "ACC per set"), ("NMI", "NMI per set"), ("time_s", "fit time")):
        lines += [f"## {title}", "", "| data set (n) | " + " | ".join(methods) + " |"]
        lines.append("|---" * (len(methods) + 1) + "|")
        for d in datasets:
            cells = []
            for m in methods:
                cell = summary.get((m, d))
                if cell is None:
                    cells.append("–")
                elif metric == "time_s":
                    cells.append("–" if cell["time_s"] is None else f"{cell['time_s']:.2f}")
                elif cell[metric] is None:
                    cells.append("failed")
                else:
                    text = f"{cell[metric][0]:.3f} ± {cell[metric][1]:.3f}"
                    if m == ORACLE:
                        text += f" (view {cell['view']})"
                    if cell["n_failed"]:
                        text += f" ({cell['n_failed']} failed)"
                    cells.append(text)
            lines.append(f"| {d} ({sizes[d]}) | " + " | ".join(cells) + " |")
        lines.append("")
    if payload.get("view_weights"):
        lines += [
            "## Learned view weights (mean over seeds, finest level)",
            "",
            "| method | data set | weights |",
            "|---|---|---|",
        ]
        for key, ws in payload["view_weights"].items():
            m, d = key.split(" @ ")
            lines.append(f"| {m} | {d} | {np.round(np.mean(ws, axis=0), 3).tolist()} |")
        lines.append("")
    return "\n".join(lines)


def write_outputs(payload, args):
    """Write ``payload`` as JSON (``--json``) and its tables as Markdown (``--markdown``,
    else standard output); return it."""
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(payload, fh, indent=1)
    text = markdown(payload)
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(text + "\n")
    else:
        print(text)
    return payload


def merge(args):
    """One payload (and its tables) from several runs with the same seeds.

    A later run replaces the records of the (method, data set) pairs it holds, so a
    rerun of some rows on some sets overrides the earlier run there.
    """
    parts = []
    for path in args.merge:
        with open(path) as fh:
            parts.append(json.load(fh))
    config = dict(parts[0]["config"])
    config["command"] = " ; ".join(part["config"]["command"] for part in parts)
    config["datasets"] = list(dict.fromkeys(d for p in parts for d in p["config"]["datasets"]))
    config["methods"] = list(dict.fromkeys(m for p in parts for m in p["config"]["methods"]))
    config["wall_s"] = sum(part["config"]["wall_s"] for part in parts)
    config["label"] = args.label
    records = []
    for part in parts:
        keys = {(r["method"], r["dataset"]) for r in part["records"]}
        records = [r for r in records if (r["method"], r["dataset"]) not in keys]
        records += part["records"]
    payload = dict(
        config=config,
        sizes={k: v for part in parts for k, v in part["sizes"].items()},
        skipped={k: v for part in parts for k, v in part["skipped"].items()},
        records=records,
        view_weights={k: v for part in parts for k, v in part["view_weights"].items()},
        timing=next((part["timing"] for part in parts if part.get("timing")), None),
    )
    payload["targets"] = targets(
        summarise(payload["records"]),
        config["datasets"],
        payload["sizes"],
        [m for m in config["methods"] if m.startswith(("HAG", "DR"))],
    )
    return write_outputs(payload, args)


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--seeds", type=int, default=10, help="seeds 0..S-1 (default 10)")
    p.add_argument("--datasets", default=None, help="comma-separated set names (default: all)")
    p.add_argument("--methods", default=None, help="comma-separated method rows (default: all)")
    p.add_argument("--variant", action="append", default=[], help="[NAME=]CLASS:key=value,...")
    p.add_argument("--mvlearn-max-n", type=int, default=1500)
    p.add_argument("--timing", action="store_true", help="time HAGMVC and DRMC on Handwritten")
    p.add_argument("--label", default="", help="a paragraph naming the code state of the run")
    p.add_argument("--json", default=None)
    p.add_argument("--markdown", default=None)
    p.add_argument(
        "--merge",
        nargs="+",
        default=None,
        help="combine the JSON outputs of runs on disjoint sets (same seeds and methods)",
    )
    p.add_argument("-q", "--quiet", action="store_true")
    args = p.parse_args(argv)

    from threadpoolctl import threadpool_limits

    from mvlearn_ext.datasets import load_mvc_real_suite, mvc_real_suite_names

    if args.merge:
        return merge(args)
    table = {**PACKAGE, **CONCAT, **ABLATIONS}
    variants = []
    for spec in args.variant:
        name, base, params = parse_variant(spec)
        table[name] = (base, params)
        variants.append(name)
    default_methods = [*PACKAGE, *CONCAT, *PEERS, *ABLATIONS, *variants]
    methods = (
        [m.strip() for m in args.methods.split(",") if m.strip()] + variants
        if args.methods
        else default_methods
    )
    for m in methods:
        if m not in table and m not in PEERS:
            raise SystemExit(f"--methods: unknown row {m!r}")
    names = args.datasets.split(",") if args.datasets else list(mvc_real_suite_names())
    suite = load_mvc_real_suite(names)
    seeds = list(range(args.seeds))
    t0 = time.perf_counter()
    with threadpool_limits(1):
        records, skipped, weights = run(
            methods, table, suite, seeds, args.mvlearn_max_n, verbose=not args.quiet
        )
    timed = timing() if args.timing else None
    datasets = [name for name, _, _ in suite]
    sizes = {name: int(y.size) for name, _, y in suite}
    summary = summarise(records)
    payload = dict(
        config=dict(
            **run_header("benchmarks/bench_mvc_real.py", argv),
            seeds=seeds,
            methods=methods,
            params={m: table[m][1] for m in methods if m in table},
            datasets=datasets,
            wall_s=time.perf_counter() - t0,
            label=args.label,
        ),
        sizes=sizes,
        skipped={f"{m} @ {d}": why for (m, d), why in skipped.items()},
        records=records,
        view_weights={f"{m} @ {d}": w for (m, d), w in weights.items()},
        timing=timed,
        targets=targets(
            summary, datasets, sizes, [m for m in methods if m.startswith(("HAG", "DR"))]
        ),
    )
    return write_outputs(payload, args)


if __name__ == "__main__":
    main()
