"""Every multi-view clusterer and four concatenation baselines on the clustering suite.

Question: on the data sets of :func:`mvlearn_ext.datasets.load_mvc_suite`
(development split, and the held-out evaluation split reported apart), how do
the multi-view clusterers of :mod:`mvlearn_ext.cluster` (HAGMVC, DRMC, LMVSC,
SMVSC, FPMVSCAG, and EOMSCCA or any other class named with ``--methods`` once
it exists) compare with k-means and 10-NN spectral clustering of the
concatenated views, z-scored (``-z``) and per-view balanced (``-bal``)? Every
method runs with its defaults, ``n_clusters`` set to the number of classes and
``random_state`` to the seed; ACC, NMI and ARI are mean ± std over seeds (never
a max over runs), fit time is the median; methods are ranked on each data set
by mean score and the ranks averaged, separately per split.

``--n-samples N`` clusters, at every seed, a stratified random subsample of N
rows of each set (drawn from the seed, the same for every method): the small-sample
regime. Ablations run in the same script: ``--variant HAGMVC:n_levels=2`` adds a row
``HAGMVC[n_levels=2]``; ``--variant flat=HAGMVC:n_levels=1,n_anchors=100`` names it
``flat``. Values are Python literals (strings may be bare).

Examples::

    python benchmarks/bench_mvc_suite.py --methods HAGMVC,concat-kmeans-z --datasets dev \\
        --seeds 3
    # the page of the documentation and its figure
    python benchmarks/bench_mvc_suite.py --seeds 10 --datasets all --markdown docs/mvc_suite.md \\
        --plot docs/img/mvc_suite.png --json benchmarks/results/mvc_suite.json -q
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
import traceback
import warnings

import numpy as np
from _common import parse_variant, run_header

#: The multi-view clusterers, by class name in mvlearn_ext.cluster, in table order.
CLUSTERERS = ("HAGMVC", "DRMC", "LMVSC", "SMVSC", "FPMVSCAG", "EOMSCCA")

#: The concatenation baselines: name -> (class name, fixed parameters).
BASELINES = {
    "concat-kmeans-z": ("ConcatKMeans", {"scaling": "zscore"}),
    "concat-kmeans-bal": ("ConcatKMeans", {"scaling": "balanced"}),
    "concat-spectral-z": ("ConcatSpectral", {"scaling": "zscore", "n_neighbors": 10}),
    "concat-spectral-bal": ("ConcatSpectral", {"scaling": "balanced", "n_neighbors": 10}),
}

METRICS = ("ACC", "NMI", "ARI")


def resolve_methods(method_names, variants):
    """[(row name, class or None, fixed params, note)] in table order."""
    import mvlearn_ext.cluster as cluster

    def lookup(base):
        if base in BASELINES:
            cls_name, params = BASELINES[base]
            return getattr(cluster, cls_name, None), dict(params), cls_name
        return getattr(cluster, base, None), {}, base

    rows = []
    for name in method_names:
        cls, params, cls_name = lookup(name)
        rows.append((name, cls, params, None if cls else f"{cls_name} not in mvlearn_ext.cluster"))
    for spec in variants:
        name, base, extra = parse_variant(spec)
        cls, params, cls_name = lookup(base)
        if cls is not None:
            try:
                cls(**{**params, **extra})
            except TypeError as exc:
                raise SystemExit(f"--variant {spec!r}: {exc}") from None
        rows.append(
            (
                name,
                cls,
                {**params, **extra},
                None if cls else f"{cls_name} not in mvlearn_ext.cluster",
            )
        )
    return rows


def resolve_datasets(text):
    from mvlearn_ext.datasets import mvc_suite_names

    if text in ("dev", "eval", "all"):
        return list(mvc_suite_names(text))
    names = [n.strip() for n in text.split(",") if n.strip()]
    known = mvc_suite_names("all")
    for name in names:
        if name not in known:
            raise SystemExit(f"--datasets: unknown data set {name!r}; known: {', '.join(known)}")
    return names


def stratified_rows(y, n_samples, seed):
    """Sorted rows of a stratified random subsample (scikit-learn's ``train_test_split``)."""
    from sklearn.model_selection import train_test_split

    if n_samples > y.size:
        raise ValueError(f"--n-samples {n_samples} exceeds the {y.size} rows of a data set")
    if n_samples == y.size:
        return np.arange(y.size)
    rows, _ = train_test_split(
        np.arange(y.size), train_size=n_samples, stratify=y, random_state=seed
    )
    return np.sort(rows)


def run(methods, dataset_names, seeds, data_seed, verbose=True, n_samples=None):
    """One record per (method, data set, seed)."""
    from mvlearn_ext.datasets import load_mvc_dataset
    from mvlearn_ext.metrics import clustering_report

    records = []
    for ds_name in dataset_names:
        data = load_mvc_dataset(ds_name, random_state=data_seed)
        for name, cls, params, missing in methods:
            if missing:
                continue
            scores, times, error = [], [], None
            for seed in seeds:
                Xs, y = data.Xs, data.y
                if n_samples is not None:
                    rows = stratified_rows(data.y, n_samples, seed)
                    Xs, y = [X[rows] for X in data.Xs], data.y[rows]
                est = cls(**{"n_clusters": data.n_clusters, **params, "random_state": seed})
                t0 = time.perf_counter()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        labels = est.fit_predict(Xs)
                except Exception as exc:  # noqa: BLE001 (recorded, the run goes on)
                    error = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
                    if verbose > 1:
                        traceback.print_exc()
                    records.append(
                        dict(
                            method=name, dataset=ds_name, split=data.split, seed=seed, error=error
                        )
                    )
                    continue
                elapsed = time.perf_counter() - t0
                report = clustering_report(y, labels)
                rec = dict(method=name, dataset=ds_name, split=data.split, seed=seed)
                rec.update({m: float(report[m]) for m in METRICS})
                rec["time_s"] = elapsed
                records.append(rec)
                scores.append(rec["ACC"])
                times.append(elapsed)
            if verbose:
                acc = (
                    f"ACC {np.mean(scores):.3f} ± {np.std(scores):.3f}" if scores else "no result"
                )
                fail = f", {len(seeds) - len(scores)} failed ({error})" if error else ""
                tm = f", {np.median(times):.2f} s" if times else ""
                print(f"  {ds_name:22s} {name:24s} {acc}{tm}{fail}", file=sys.stderr, flush=True)
    return records


def summarise(records, method_names, dataset_names):
    """{(method, dataset): {metric: (mean, std), time_s: median, n: runs, error: str|None}}."""
    out = {}
    for m in method_names:
        for d in dataset_names:
            recs = [r for r in records if r["method"] == m and r["dataset"] == d]
            if not recs:
                continue
            ok = [r for r in recs if "error" not in r]
            cell = dict(n=len(ok), n_failed=len(recs) - len(ok), error=None)
            if len(ok) < len(recs):
                cell["error"] = next(r["error"] for r in recs if "error" in r)
            for metric in METRICS:
                vals = [r[metric] for r in ok]
                cell[metric] = (float(np.mean(vals)), float(np.std(vals))) if ok else None
            cell["time_s"] = float(np.median([r["time_s"] for r in ok])) if ok else None
            out[(m, d)] = cell
    return out


def mean_ranks(summary, method_names, dataset_names, metric):
    """Mean over data sets of each method's rank by mean ``metric`` (1 best, ties averaged).

    A method without a result on a data set (failed) gets the last rank there.
    """
    from scipy.stats import rankdata

    ranks = {m: [] for m in method_names}
    for d in dataset_names:
        vals = []
        for m in method_names:
            cell = summary.get((m, d))
            mean = cell[metric][0] if cell and cell[metric] is not None else -np.inf
            vals.append(mean)
        r = rankdata([-v for v in vals], method="average")
        for m, rank in zip(method_names, r, strict=True):
            ranks[m].append(float(rank))
    return {m: float(np.mean(v)) if v else float("nan") for m, v in ranks.items()}


def _fmt(cell, metric):
    if cell is None:
        return "–"
    if cell[metric] is None:
        return "failed"
    mean, std = cell[metric]
    text = f"{mean:.3f} ± {std:.3f}"
    if cell["n_failed"]:
        text += f" ({cell['n_failed']} failed)"
    return text


def markdown(payload):
    config = payload["config"]
    records = payload["records"]
    methods = [m for m in config["methods"] if any(r["method"] == m for r in records)]
    missing = config.get("missing", {})
    lines = [
        "# Multi-view clustering suite",
        "",
        f"Generated by `benchmarks/bench_mvc_suite.py` on {config['date']} "
        f"(mvlearn_ext {config.get('version', '?')}), {len(config['seeds'])} seeds "
        f"({config['seeds'][0]}–{config['seeds'][-1]}), data seed {config['data_seed']}, "
        f"{config['threads']} BLAS/OpenMP thread(s), Python {config['python']}."
        + (
            f" Every seed clusters a stratified subsample of {config['n_samples']} rows "
            "of each set, drawn from the seed."
            if config.get("n_samples")
            else ""
        ),
        "",
        "Command: `" + config["command"] + "`",
        "",
        "Every method with its defaults, `n_clusters` = number of classes, `random_state` = "
        "seed. Cells: mean ± std over seeds; fit time: median seconds. Mean rank: each "
        "data set ranks the methods by their mean score (1 best, ties averaged, a failure "
        "last); the ranks are averaged over the data sets of the split. The `eval` split "
        "(digits, breast cancer) was held out when the suite was built; the real-data "
        "suite that chose HAGMVC's and DRMC's defaults holds views of the same data. "
        "Data sets: `mvlearn_ext.datasets.load_mvc_dataset` (table in its docstring).",
        "",
    ]
    if missing:
        lines.append(
            "Not run (not in `mvlearn_ext.cluster`): "
            + ", ".join(f"{m} ({why})" for m, why in missing.items())
            + "."
        )
        lines.append("")
    for split in ("dev", "eval"):
        datasets = [d for d in config["datasets"] if payload["splits"][d] == split]
        if not datasets:
            continue
        summary = summarise(records, methods, datasets)
        lines += [
            f"## {split} split ({len(datasets)} data set{'s' if len(datasets) > 1 else ''})",
            "",
        ]
        ranks = {metric: mean_ranks(summary, methods, datasets, metric) for metric in METRICS}
        order = sorted(methods, key=lambda m: ranks["ACC"][m])
        header = "| method | mean rank ACC | mean rank NMI | mean rank ARI | mean ACC | "
        header += "median fit time (s), summed over data sets |"
        lines += [header, "|---" * (header.count("|") - 1) + "|"]
        for m in order:
            accs = [summary[(m, d)]["ACC"][0] for d in datasets if summary[(m, d)]["ACC"]]
            mean_acc = f"{np.mean(accs):.3f}" if len(accs) == len(datasets) else "(failures)"
            tsum = sum(summary[(m, d)]["time_s"] or 0.0 for d in datasets)
            row = (
                f"| {m} | {ranks['ACC'][m]:.2f} | {ranks['NMI'][m]:.2f} | "
                f"{ranks['ARI'][m]:.2f} | {mean_acc} | {tsum:.2f} |"
            )
            lines.append(row)
        lines.append("")
        for metric in (*METRICS, "time_s"):
            title = "fit time (s, median)" if metric == "time_s" else metric
            lines += [f"### {split}: {title}", ""]
            lines.append("| data set | " + " | ".join(order) + " |")
            lines.append("|---" * (len(order) + 1) + "|")
            for d in datasets:
                cells = []
                for m in order:
                    cell = summary.get((m, d))
                    if metric == "time_s":
                        cells.append(
                            "failed" if cell["time_s"] is None else f"{cell['time_s']:.2f}"
                        )
                    else:
                        cells.append(_fmt(cell, metric))
                lines.append(f"| {d} | " + " | ".join(cells) + " |")
            lines.append("")
        errors = {
            (m, d): summary[(m, d)]["error"]
            for m in methods
            for d in datasets
            if summary[(m, d)]["error"]
        }
        if errors:
            lines += [f"Failures ({split}):", ""]
            lines += [f"* {m} on {d}: {e}" for (m, d), e in errors.items()]
            lines.append("")
    return "\n".join(lines).replace("\n\n\n", "\n\n")


def plot(payload, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    config, records = payload["config"], payload["records"]
    methods = [m for m in config["methods"] if any(r["method"] == m for r in records)]
    splits = [
        s for s in ("dev", "eval") if any(payload["splits"][d] == s for d in config["datasets"])
    ]
    widths = [sum(payload["splits"][d] == s for d in config["datasets"]) for s in splits]
    fig, axes = plt.subplots(
        1,
        len(splits),
        figsize=(2.2 + 0.9 * sum(widths) + 1.5 * len(splits), 0.9 + 0.42 * len(methods)),
        gridspec_kw={"width_ratios": widths},
        squeeze=False,
    )
    for ax, split in zip(axes[0], splits, strict=True):
        datasets = [d for d in config["datasets"] if payload["splits"][d] == split]
        summary = summarise(records, methods, datasets)
        ranks = mean_ranks(summary, methods, datasets, "ACC")
        order = sorted(methods, key=lambda m: ranks[m])
        grid = np.full((len(order), len(datasets)), np.nan)
        for i, m in enumerate(order):
            for j, d in enumerate(datasets):
                cell = summary.get((m, d))
                if cell and cell["ACC"]:
                    grid[i, j] = cell["ACC"][0]
        ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                text = "fail" if np.isnan(grid[i, j]) else f"{grid[i, j]:.2f}"
                colour = "black" if not np.isnan(grid[i, j]) and grid[i, j] > 0.6 else "white"
                ax.text(j, i, text, ha="center", va="center", fontsize=7, color=colour)
        ax.set_xticks(range(len(datasets)), datasets, rotation=40, ha="right", fontsize=7)
        ax.set_yticks(range(len(order)), [f"{m} ({ranks[m]:.1f})" for m in order], fontsize=7)
        ax.set_title(f"{split}: mean ACC (method, mean rank)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def write_csv(records, path):
    keys = ["method", "dataset", "split", "seed", *METRICS, "time_s", "error"]
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        for r in records:
            writer.writerow({k: r.get(k, "") for k in keys})


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--methods",
        default=None,
        help="comma-separated method names (clusterer class names of mvlearn_ext.cluster, "
        f"or baselines {', '.join(BASELINES)}); default: all",
    )
    p.add_argument(
        "--datasets", default="all", help="dev, eval, all, or comma-separated data set names"
    )
    p.add_argument("--seeds", type=int, default=10, help="number of seeds 0..S-1 (default 10)")
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--data-seed", type=int, default=0, help="random_state of the data sets")
    p.add_argument(
        "--n-samples",
        type=int,
        default=None,
        help="cluster a stratified subsample of this many rows of each set, drawn per seed",
    )
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        help="[NAME=]METHOD:key=value[,key=value] (repeatable)",
    )
    p.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (default 1)")
    p.add_argument("--json", default=None, help="write every run and the config as JSON")
    p.add_argument("--csv", default=None, help="write every run as CSV")
    p.add_argument("--markdown", default=None, help="write the tables as Markdown")
    p.add_argument("--plot", default=None, help="write the figure (PNG)")
    p.add_argument("-q", "--quiet", action="store_true")
    args = p.parse_args(argv)

    if args.methods:
        method_names = [m.strip() for m in args.methods.split(",") if m.strip()]
    elif args.variant:
        method_names = []
    else:
        method_names = [*CLUSTERERS, *BASELINES]
    methods = resolve_methods(method_names, args.variant)
    dataset_names = resolve_datasets(args.datasets)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    missing = {name: why for name, _, _, why in methods if why}
    for name, why in missing.items():
        print(f"  skipping {name}: {why}", file=sys.stderr)

    from threadpoolctl import threadpool_limits

    from mvlearn_ext.datasets import mvc_suite_names

    t0 = time.perf_counter()
    with threadpool_limits(args.threads):
        records = run(
            methods, dataset_names, seeds, args.data_seed, not args.quiet, args.n_samples
        )
    wall = time.perf_counter() - t0
    eval_names = set(mvc_suite_names("eval"))
    payload = dict(
        config=dict(
            **run_header("benchmarks/bench_mvc_suite.py", argv),
            threads=args.threads,
            seeds=seeds,
            data_seed=args.data_seed,
            n_samples=args.n_samples,
            methods=[name for name, _, _, why in methods if not why],
            missing=missing,
            params={name: params for name, _, params, why in methods if not why},
            datasets=dataset_names,
            wall_s=wall,
        ),
        splits={d: ("eval" if d in eval_names else "dev") for d in dataset_names},
        records=records,
    )
    print(f"  total {wall:.0f} s", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(payload, fh, indent=1, default=str)
    if args.csv:
        write_csv(records, args.csv)
    text = markdown(payload)
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(text + "\n")
    else:
        print(text)
    if args.plot:
        plot(payload, args.plot)
    return payload


if __name__ == "__main__":
    main()
