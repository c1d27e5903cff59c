"""The built-in demo sections, in the order of ``--all``.

Each family's section lives in ``mvlearn_ext._demo.<family>`` and is named
here by a ``"module:function"`` string, imported only when it runs.
Importing this module registers them in
:data:`mvlearn_ext._demo.registry.DEMO_SECTIONS`.
"""

from __future__ import annotations

import dataclasses
import warnings

from mvlearn_ext._demo.registry import (
    CLUSTERING_COLUMNS,
    FIT_TIME,
    DemoSection,
    evaluate_over_seeds,
    register_demo_section,
)

#: The sections ``demo`` runs without ``--all`` or ``--section``.
DEFAULT_SECTIONS = ("clustering",)


def _baselines_section(ctx):
    """k-means and 10-NN spectral clustering of the balanced concatenation, and the best view.

    ``scaling="balanced"``: every feature z-scored, then each view divided by
    the square root of its number of features, so that every view has the
    same total variance (otherwise the 240 pixel features would outweigh the
    6 morphological ones 40 to 1).
    """
    import numpy as np

    from mvlearn_ext.cluster import ConcatKMeans, ConcatSpectral

    Xs, y, names = ctx.handwritten()
    n_clusters = int(np.unique(y).shape[0])
    n_init = 10
    rows = []

    def kmeans_on(views):
        return lambda seed: ConcatKMeans(
            n_clusters, scaling="balanced", n_init=n_init, random_state=seed
        ).fit_predict(views)

    rows.append(evaluate_over_seeds(ctx, "k-means, concatenated views", kmeans_on(Xs), y))

    def spectral(seed):
        model = ConcatSpectral(
            n_clusters, n_neighbors=10, scaling="balanced", n_init=n_init, random_state=seed
        )
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Graph is not fully connected")
            return model.fit_predict(Xs)

    rows.append(
        evaluate_over_seeds(ctx, "spectral clustering (10-NN graph), concatenated", spectral, y)
    )

    quiet = dataclasses.replace(ctx, progress=lambda message: None)  # one line for all views
    per_view = [
        evaluate_over_seeds(quiet, name, kmeans_on([Xv]), y)
        for name, Xv in zip(names, Xs, strict=True)
    ]
    best = max(range(len(names)), key=lambda v: float(np.mean(per_view[v].scores["ACC"])))
    others = ", ".join(
        f"{name} {np.mean(row.scores['ACC']):.3f}"
        for name, row in zip(names, per_view, strict=True)
    )
    best_row = per_view[best]
    best_row.method = f"k-means, best single view ({names[best]})"
    best_row.note = f"ACC of k-means on each view: {others}; the best is chosen with the labels."
    ctx.progress(
        f"{best_row.method}: ACC {np.mean(best_row.scores['ACC']):.3f} "
        f"(k-means on each of {len(names)} views)"
    )
    rows.append(best_row)
    return rows


_MSE_BY_POPULATION = "population prediction error E[(x^T (b_hat - b))^2] of a task's coefficients"

#: The built-in sections, in the order of ``--all``.
_BUILTIN_SECTIONS = (
    DemoSection(
        name="clustering",
        handwritten=True,
        title="multi-view clustering of Handwritten (defaults, raw views) beside the "
        "concatenation baselines",
        run="mvlearn_ext._demo.cluster:run_section",
        legend={
            FIT_TIME: "wall-clock seconds of one fit_predict, mean ± std over seeds, after one "
            "untimed warm-up fit per method on 200 samples (Numba compilation not counted)",
        },
    ),
    DemoSection(
        name="baselines",
        handwritten=True,
        title="scikit-learn baselines (each view z-scored and scaled to unit total variance, "
        "then concatenated; and the best single view)",
        run=_baselines_section,
        columns=(*CLUSTERING_COLUMNS, "purity"),
        legend={"purity": "share of samples in the majority class of their cluster"},
    ),
    DemoSection(
        name="multitask",
        title="robust multi-task regression (20 tasks, 20% outlier tasks, 10 features, isotropic)",
        run="mvlearn_ext._demo.multitask:run",
        columns=("MSE", "MSE related"),
        legend={
            "MSE": f"{_MSE_BY_POPULATION}, averaged over all 20 tasks (lower is better)",
            "MSE related": "the same, averaged over the 16 related tasks only (the outlier "
            "tasks left out)",
            FIT_TIME: "seconds of one fit on all 20 tasks, mean ± std over seeds, after an "
            "untimed warm-up fit on a small draw (Numba compilation not counted)",
        },
    ),
    DemoSection(
        name="bandits",
        title="multi-group mean estimation: regret-curve summary (K=4 Gaussian groups, "
        "worst-group objective R_inf, T=256..4096)",
        run="mvlearn_ext._demo.bandits:run",
        columns=("slope", "regret@4096 (1e-4)"),
        legend={
            "slope": "log-log slope of the mean proxy regret against the budget T (more "
            "negative learns faster; theory -1.5 for the fast rules, -1 for uniform)",
            "regret@4096 (1e-4)": "mean proxy regret R_inf(n_T) - R_inf(n*) at T = 4096, in "
            "units of 1e-4; R_inf = max over groups of sigma_k^2 / n_k",
            FIT_TIME: "seconds of the whole curve (3 budgets x 500 replications; 200 with "
            "--quick), after an untimed warm-up at T = 32, 64 (Numba compilation not counted)",
        },
    ),
    DemoSection(
        name="moo_toolbandit",
        title="ParetoPO (reconstruction) vs static scalarisation, tool-use bandit",
        run="mvlearn_ext._demo.moo:run_tool_bandit",
        columns=("accuracy", "mean_calls", "HV", "front_gap"),
        legend={
            "accuracy": "probability that the final policy solves a prompt (exact, over the "
            "three difficulties)",
            "mean_calls": "expected tool calls per prompt (out of at most 4; fewer is cheaper)",
            "HV": "hypervolume of (accuracy, 1 - mean_calls / 4) against (0, 0) (higher is "
            "better)",
            "front_gap": "accuracy of the exact Pareto front at the same efficiency minus the "
            "policy's (0 = on the front; lower is better)",
            FIT_TIME: "seconds of one training run (150 GRPO steps)",
        },
        requires=("moocore",),
    ),
    DemoSection(
        name="moo_hopbandit",
        title="ParetoPO (reconstruction) vs static scalarisation where scalarisation is weak: "
        "multi-hop bandit (non-convex front, drifting reward scales)",
        run="mvlearn_ext._demo.moo:run_hop_bandit",
        columns=("front_HV", "calls_w0.9"),
        legend={
            "front_HV": "hypervolume of the final (accuracy, 1 - calls / 12) points at accuracy "
            "weights 0.1, 0.5, 0.9, over the exact front's (1 = the whole front; its points "
            "that maximise some weighted sum hold 0.763)",
            "calls_w0.9": "expected tool calls of the final policy at accuracy weight 0.9 "
            "(0 calls: accuracy 0.1, a guess; 3 facts must be retrieved to answer)",
            FIT_TIME: "seconds of the three training runs (150 GRPO steps each)",
        },
        requires=("moocore",),
    ),
    DemoSection(
        name="moo_controlg",
        title="ControlG (reconstruction) block scheduling simulator (3 objectives, 60 blocks)",
        run="mvlearn_ext._demo.moo:run_controlg",
        columns=("log_HV", "min_share"),
        legend={
            "log_HV": "sum over the objectives of log(L_k(0) - L_k(T)): log-hypervolume of the "
            "final losses against the start (higher is better)",
            "min_share": "share of the blocks given to the least-trained objective (1/3 = "
            "balanced; uniform_mix trains all three in every block)",
            FIT_TIME: "seconds of one simulation",
        },
    ),
    DemoSection(
        name="federated",
        title="personalised FL by KME multi-task averaging (reconstruction), excess risk",
        run="mvlearn_ext._demo.federated:run",
        columns=("excess_r0", "excess_r5"),
        legend={
            "excess_r0": "squared error of the personalised coefficients and intercept, mean "
            "over 10 agents, when all agents share one truth (lower is better)",
            "excess_r5": "the same when the agents' truths form two groups 5 apart "
            "(heterogeneous agents)",
            FIT_TIME: "seconds of both fits (r = 0 and r = 5)",
        },
    ),
    DemoSection(
        name="merging",
        title="data-free model merging of three digit experts (NumPy, lambda = 0.4)",
        run="mvlearn_ext._demo.merging:run",
        columns=("accuracy", "kept"),
        legend={
            "accuracy": "test accuracy of the merged body, each task with its own head, mean "
            "over the three tasks",
            "kept": "fraction of each expert's weight-matrix updates the merge keeps (1 = all)",
            FIT_TIME: "seconds of the merge (0 for the individual experts)",
        },
    ),
    DemoSection(
        name="gaussian_process",
        title="multi-output GPs (LVMOGP, 100 outputs, 20% of entries missing)",
        run="mvlearn_ext._demo.gaussian_process:run",
        columns=("RMSE", "NLPD"),
        legend={
            "RMSE": "root-mean-squared error of the predictive mean on the missing entries",
            "NLPD": "negative log predictive density of the missing entries under the Gaussian "
            "predictive (lower is better)",
            FIT_TIME: "seconds of one fit of all 100 outputs (independent GPs: 20 fitted, the "
            "time scaled to 100)",
        },
    ),
    DemoSection(
        name="grpo",
        title="VisualScore rewards: toy GRPO quality scorer (held-out SRCC)",
        run="mvlearn_ext._demo.rl:run",
        columns=("SRCC technical", "SRCC aesthetics", "SRCC alignment", "zero-adv share"),
        legend={
            "SRCC technical": "Spearman rank correlation of the predicted and true quality on "
            "held-out items of the technical task (1 = perfect ranking)",
            "SRCC aesthetics": "the same on the aesthetics task",
            "SRCC alignment": "the same on the alignment task",
            "zero-adv share": "share of the training groups whose rewards were all equal (zero "
            "advantage: no learning signal)",
            FIT_TIME: "seconds of one training run",
        },
    ),
    DemoSection(
        name="grape",
        title="GRAPE (reconstruction): GRPO query rewriter vs original queries, toy retriever",
        run="mvlearn_ext._demo.grape:run",
        columns=("R@1", "R@10", "inflation", "hub rate"),
        legend={
            "R@1": "share of held-out queries whose target the retriever ranks first",
            "R@10": "share whose target is in the retriever's top 10",
            "inflation": "mean retrieval score of the non-target items (a reward open to "
            "gaming raises it)",
            "hub rate": "share of rewrites that append a hub token (a token that raises every "
            "item's score)",
            FIT_TIME: "seconds of one training run (0 without rewriting)",
        },
    ),
    DemoSection(
        name="diffusion",
        title="two-stage diffusion distillation (reconstruction), NumPy polynomial-Gaussian "
        "oracle",
        run="mvlearn_ext._demo.diffusion:run",
        columns=("mean err", "energy"),
        legend={
            "mean err": "squared error of the model's conditional mean against the true one, "
            "mean over held-out conditions and the two tasks",
            "energy": "energy distance of model samples of (c, x) to fresh samples of the true "
            "law (0 = the same law)",
            FIT_TIME: "seconds to fit the models of one seed",
        },
    ),
    DemoSection(
        name="cimln",
        handwritten=True,
        title="CIMLN vs mean imputation, Handwritten with missing views (CIMLN's unbalanced "
        "protocol, eta = 0.5)",
        run="mvlearn_ext._demo.incomplete:run",
        legend={
            FIT_TIME: "seconds of one fit_predict on the 2000 samples (CIMLN: pretraining, "
            "training and k-means)",
        },
    ),
    DemoSection(
        name="phenobrain",
        title="PhenoBrain (reconstruction) vs late fusion, phenotype-routed synthetic connectomes",
        run="mvlearn_ext._demo.brain:run",
        columns=("AUC",),
        legend={
            "AUC": "area under the ROC curve on the 30% test split (0.5 = chance, 1 = perfect)",
            FIT_TIME: "seconds of one fit",
        },
    ),
    DemoSection(
        name="rte_parameter",
        title="RTE parameter extrapolation, quadratic family (query MSE)",
        run="mvlearn_ext._demo.extrapolate:run_parameter",
        columns=("MSE out-of-support", "MSE in-support"),
        legend={
            "MSE out-of-support": "query mean-squared error on target tasks whose parameters "
            "lie outside the library's range ([1.9, 2.3]^2 against [0.5, 1.5]^2)",
            "MSE in-support": "the same on target tasks inside the library's range",
            FIT_TIME: "seconds of one fit",
        },
    ),
    DemoSection(
        name="rte_discrete",
        title="RTE length and compositional extrapolation, compositions of 4 primitives "
        "(query MSE)",
        run="mvlearn_ext._demo.extrapolate:run_discrete",
        columns=("MSE length 4", "MSE length 5", "MSE held-out pairs"),
        legend={
            "MSE length 4": "query mean-squared error on compositions of length 4 (the "
            "library has lengths 1 to 3)",
            "MSE length 5": "the same on compositions of length 5",
            "MSE held-out pairs": "the same on compositions with pairs of primitives never "
            "seen together",
            FIT_TIME: "seconds of one fit",
        },
    ),
)

for _section in _BUILTIN_SECTIONS:
    register_demo_section(_section)
