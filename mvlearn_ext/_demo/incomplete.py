"""The ``cimln`` demo section: Handwritten with missing views (CIMLN's protocol).

All six views of Handwritten, with CIMLN's unbalanced missing-view protocol
(:func:`~mvlearn_ext.incomplete.make_unbalanced_mask`, eta = 0.5: half of the
samples lose views, at rates that differ by view; a new mask per seed).
Rows: CIMLN with its defaults, CIMLN with the other setting of the causal
loss (the ablation), and mean imputation followed by the anchor multi-view
clustering that did best on the development seeds (:data:`ANCHOR`). CIMLN
runs the benchmarks' small configuration (``bench_deep.py``; with
``--quick`` a shorter one); without torch only the baseline runs.
"""

from __future__ import annotations

#: The benchmarks' small CIMLN configuration (``bench_deep.py``), with the same masks per seed.
SMALL = dict(
    hidden_layer_sizes=(128,),
    embed_dim=32,
    batch_size=256,
    n_epochs_pretrain=15,
    n_epochs=10,
    n_init=5,
)
#: ``--quick``: a shorter configuration than the benchmark's (6 + 4 epochs).
QUICK = dict(
    hidden_layer_sizes=(64,),
    embed_dim=16,
    batch_size=256,
    n_epochs_pretrain=6,
    n_epochs=4,
    n_init=3,
)
#: The paper's (the authors' code's) causal loss: ``causal_weight=0.1`` on the factual target.
CODE_CAUSAL = {"causal_weight": 0.1, "temperature": 1.0}
#: Anchor clustering after mean imputation: of HAGMVC and LMVSC, the one with the higher mean
#: development ACC on Handwritten (``bench_deep.py --cimln dev_decision``, seeds 100-103).
ANCHOR = "HAGMVC"

OUTCOME = (
    "Honest outcome (bench_deep.py --cimln, the small configuration, seeds 0-9): CIMLN "
    "without the causal loss 0.850 +- 0.046 ACC, with the paper's causal loss 0.777 +- 0.063; "
    "mean imputation + HAGMVC 0.944 +- 0.007 beats both on all 10 seeds. At the default sizes "
    "CIMLN() scores 0.900 +- 0.049 and the paper's configuration 0.894 +- 0.064 (a tie); "
    "HAGMVC is higher than them on 10/10 and 9/10 seeds. The "
    "default leaves the causal loss out: a rule fixed before the runs chose it on development "
    "seeds 100-103, where it was a near tie. The loss can only remove structure from the "
    "clusters (its exact minimum ignores every view; bench_cimln_diagnostic.py)"
)


def variants():
    """``[(row label, CIMLN keyword arguments)]``: the defaults first, then the ablation."""
    from mvlearn_ext.incomplete import CIMLN

    if CIMLN().causal_weight == 0:
        return [
            ("CIMLN (defaults: no causal loss)", {}),
            ("CIMLN with the paper's causal loss (causal_weight=0.1)", CODE_CAUSAL),
        ]
    return [
        ("CIMLN (defaults: the paper's causal loss)", {}),
        ("CIMLN without the causal loss (causal_weight=0)", {"causal_weight": 0.0}),
    ]


def run(ctx):
    """Rows of the demo table (one per method), over ``ctx.seeds``."""
    from mvlearn_ext import cluster
    from mvlearn_ext._demo.registry import evaluate_over_seeds
    from mvlearn_ext.datasets import load_handwritten
    from mvlearn_ext.incomplete import make_unbalanced_mask, mask_views, mean_impute
    from mvlearn_ext.utils._optional import is_available

    Xs, y = load_handwritten()
    n_clusters = 10
    masks = {s: make_unbalanced_mask(len(y), len(Xs), random_state=s) for s in ctx.seeds}
    rows = []
    has_torch = is_available("torch")
    if has_torch:
        import torch

        from mvlearn_ext.incomplete import CIMLN

        config = QUICK if ctx.quick else SMALL
        previous = torch.get_num_threads()
        torch.set_num_threads(ctx.n_threads or 1)
        try:
            for label, extra in variants():

                def fit_predict(seed, extra=extra):
                    model = CIMLN(n_clusters, random_state=seed, **config, **extra)
                    return model.fit_predict(mask_views(Xs, masks[seed]))

                rows.append(evaluate_over_seeds(ctx, label, fit_predict, y))
        finally:
            torch.set_num_threads(previous)
    anchor = getattr(cluster, ANCHOR)
    rows.append(
        evaluate_over_seeds(
            ctx,
            f"mean imputation + {ANCHOR}",
            lambda seed: anchor(n_clusters=n_clusters, random_state=seed).fit_predict(
                mean_impute(Xs, masks[seed])
            ),
            y,
        )
    )
    config_note = (
        "6 + 4 epochs, hidden 64, d = 16 (--quick; not the benchmark's configuration)"
        if ctx.quick
        else "15 + 10 epochs, hidden 128, d = 32 (the benchmark's small configuration)"
    )
    note = (
        f"Handwritten, 6 views, CIMLN's unbalanced missing views (eta = 0.5, a mask per seed); "
        f"CIMLN {config_note}. {OUTCOME}"
    )
    if not has_torch:
        note += "; the CIMLN rows need the torch extra (pip install torch==2.13.0): skipped"
    rows[0].note = note
    return rows
