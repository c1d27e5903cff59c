"""The ``phenobrain`` demo section: phenotype-routed synthetic connectomes.

400 subjects, 16 ROIs in 4 modules; the label is the strength of the 2-hop
M1 -> M3 route through M2 (phenotype g = 0) or through M4 (g = 1). Test AUC
of PhenoBrain (reconstruction; needs torch) against late fusion: logistic
regression and an MLP on ``vec(A) + p``, and the same network with the
phenotype only at its head. Without torch only the scikit-learn baselines
run.
"""

from __future__ import annotations

import time

import numpy as np

COLUMNS = ("AUC",)

#: method label -> PhenoBrainClassifier keyword arguments
NETWORKS = {
    "PhenoBrain (reconstruction)": {},
    "same network, late fusion": {"phenotype_path": "head"},
}


#: regime -> (generator in :mod:`mvlearn_ext.brain`, default number of subjects)
REGIMES = {
    "two_routes": ("make_phenotype_connectomes", 400),
    "many_routes": ("make_routed_connectomes", 800),
}


def phenobrain_scores(
    seed,
    *,
    regime="two_routes",
    n_subjects=None,
    n_epochs=150,
    embed_dim=32,
    test_size=0.3,
    networks=NETWORKS,
    n_jobs=1,
    n_iter_no_change=None,
    baselines=None,
):
    """Test AUC and fit time of every method on one seeded draw of the synthetic data.

    ``regime`` picks the data: ``"two_routes"``
    (:func:`~mvlearn_ext.brain.make_phenotype_connectomes`, 400 subjects by
    default) or ``"many_routes"`` (:func:`~mvlearn_ext.brain.make_routed_connectomes`,
    800 subjects, a one-hot phenotype choosing one of 8 routes), split
    ``1 - test_size`` / ``test_size`` (stratified). ``networks`` maps a method
    label to :class:`~mvlearn_ext.brain.PhenoBrainClassifier` keyword arguments
    (empty: the scikit-learn baselines only, no torch); ``n_iter_no_change`` is
    their early-stopping patience (None: the classifier's default);
    ``baselines`` names the late-fusion baselines to run (None: both).

    Returns
    -------
    dict
        ``{method: (auc, seconds)}``.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GridSearchCV, train_test_split
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from mvlearn_ext import brain

    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {sorted(REGIMES)}, got {regime!r}")
    maker, default_n = REGIMES[regime]
    n_subjects = default_n if n_subjects is None else n_subjects
    A, P, y = getattr(brain, maker)(n_subjects, random_state=seed)
    train, test = train_test_split(
        np.arange(n_subjects), test_size=test_size, stratify=y, random_state=seed
    )
    iu = np.triu_indices(A.shape[1], 1)
    flat = np.hstack([A[:, iu[0], iu[1]], P])  # vec(A) + p, for late fusion
    models = {
        "logistic regression, vec(A) + p (late fusion)": make_pipeline(
            StandardScaler(),
            GridSearchCV(
                LogisticRegression(solver="liblinear", max_iter=2000),
                {"C": np.logspace(-3, 2, 6)},
                cv=5,
                scoring="roc_auc",
            ),
        ),
        "MLP, vec(A) + p (late fusion)": make_pipeline(
            StandardScaler(),
            MLPClassifier(hidden_layer_sizes=(64,), alpha=1e-2, max_iter=1000, random_state=seed),
        ),
    }
    if baselines is not None:
        models = {name: model for name, model in models.items() if name in baselines}
    patience = {} if n_iter_no_change is None else {"n_iter_no_change": n_iter_no_change}
    for name, kwargs in networks.items():
        models[name] = brain.PhenoBrainClassifier(
            **kwargs,
            **patience,
            n_epochs=n_epochs,
            embed_dim=embed_dim,
            n_jobs=n_jobs,
            random_state=seed,
        )
    out = {}
    for name, model in models.items():
        start = time.perf_counter()
        if name in networks:
            model.fit(A[train], y[train], phenotypes=P[train])
            score = model.decision_function(A[test], phenotypes=P[test])
        else:
            model.fit(flat[train], y[train])
            score = model.predict_proba(flat[test])[:, 1]
        out[name] = (float(roc_auc_score(y[test], score)), time.perf_counter() - start)
    return out


def run(ctx):
    """Rows of the demo table (one per method), over ``ctx.seeds``."""
    from mvlearn_ext._demo.registry import DemoRow
    from mvlearn_ext.utils._optional import is_available

    has_torch = is_available("torch")
    networks = NETWORKS if has_torch else {}
    epochs = 20 if ctx.quick else 30
    rows = {}
    for seed in ctx.seeds:
        res = phenobrain_scores(
            seed, n_epochs=epochs, embed_dim=16, networks=networks, n_jobs=ctx.n_threads or 1
        )
        for name, (auc, seconds) in res.items():
            row = rows.setdefault(name, DemoRow(method=name, scores={"AUC": []}, fit_times=[]))
            row.scores["AUC"].append(auc)
            row.fit_times.append(seconds)
        ctx.progress(
            f"phenobrain seed {seed}: " + ", ".join(f"{k} {v[0]:.3f}" for k, v in res.items())
        )
    names = [k for k in NETWORKS if k in rows] + [k for k in rows if k not in NETWORKS]
    out = [rows[k] for k in names]
    note = (
        f"synthetic connectomes (400 subjects, 16 ROIs), 30% test split, {epochs} epochs "
        "(the user guide's study trains 150); PhenoBrain is a reconstruction from the "
        "abstract. In the user guide's study it beats logistic late fusion and ties the same "
        "network with the phenotype at its head; where the phenotype picks one of several "
        "routes it beats the head as well"
    )
    if not has_torch:
        ctx.skip_method("PhenoBrain and the same-network late fusion", "torch")
    out[0].note = note
    return out
