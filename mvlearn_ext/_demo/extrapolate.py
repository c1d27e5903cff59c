"""The ``rte_parameter`` and ``rte_discrete`` demo sections (RTE).

Parameter extrapolation: library tasks with ``theta`` in ``[0.5, 1.5]^p``,
targets with ``theta`` in ``[1.9, 2.3]^p`` known through 5 noisy context
points; query MSE of RTE against the inductive MLP ``(x, theta_hat) -> y``
and the family refit (a reference that knows the family's formula).
Length and compositional extrapolation: compositions of four primitives;
RTE against a direct MLP given the target's true code and a context-only
fit.
"""

from __future__ import annotations

import time

import numpy as np

PARAM_COLUMNS = ("MSE out-of-support", "MSE in-support")
DISCRETE_COLUMNS = ("MSE length 4", "MSE length 5", "MSE held-out pairs")


#: family -> RelationalTaskExtrapolator keyword arguments beyond the shared ones
FAMILY_SETUP = {
    "quadratic": {},
    "sin_trend": {"anchor_features": "grid"},
    "exp": {},
}


def parameter_scores(
    seed,
    *,
    family="quadratic",
    n_library=200,
    n_points=50,
    n_test=50,
    n_context=5,
    noise=0.05,
    train_range=(0.5, 1.5),
    test_range=(1.9, 2.3),
    in_range=(0.6, 1.4),
    n_pairs=3000,
    hidden_layer_sizes=(64, 64),
    max_iter=200,
):
    """Query MSE per method on out-of-support and in-support targets (one seed).

    The library has ``n_library`` tasks of ``family`` with every parameter
    uniform in ``train_range``, each seen at ``n_points`` noisy points; the
    targets are ``n_test`` tasks with parameters in ``test_range`` (``"out"``)
    or ``in_range`` (``"in"``), each known from ``n_context`` noisy context
    points and scored on 50 query points.

    Returns
    -------
    dict
        ``{method: {"out": mse, "in": mse, "s": fit seconds}}``.
    """
    from mvlearn_ext.extrapolate import (
        InductiveTaskRegressor,
        RelationalTaskExtrapolator,
        get_family,
        make_function_tasks,
    )

    fam = get_family(family)
    p = fam.n_params
    rng = np.random.default_rng(seed)
    thetas = rng.uniform(*train_range, size=(n_library, p))
    X, Y = make_function_tasks(fam, thetas, n_points=n_points, noise=noise, random_state=seed)
    xq = np.linspace(-1.0, 1.0, 50)
    splits = {}
    for key, (low, high) in (("out", test_range), ("in", in_range)):
        T = rng.uniform(low, high, size=(n_test, p))
        Xc, Yc = make_function_tasks(
            fam, T, n_points=n_context, noise=noise, random_state=seed + 1000
        )
        splits[key] = (Xc, Yc, fam.evaluate(xq[None, :], T))
    mlp = dict(hidden_layer_sizes=hidden_layer_sizes, max_iter=max_iter, random_state=seed)
    rte = dict(n_pairs=n_pairs, **FAMILY_SETUP[fam.name], **mlp)
    models = {
        "RTE": RelationalTaskExtrapolator(fam, **rte),
        "RTE, direct output": RelationalTaskExtrapolator(fam, residual=False, **rte),
        "inductive": InductiveTaskRegressor(fam, **mlp),
    }
    out = {}
    for name, model in models.items():
        start = time.perf_counter()
        model.fit(X, Y)
        out[name] = {"s": time.perf_counter() - start}
        for key, (Xc, Yc, F) in splits.items():
            pred = model.predict_tasks(np.tile(xq, (len(F), 1)), Xc, Yc)
            out[name][key] = float(np.mean((pred - F) ** 2))
    out["family refit"] = {"s": 0.0}  # knows the family's formula: a reference, not a peer
    for key, (Xc, Yc, F) in splits.items():
        T_hat = np.vstack([fam.estimate(x, y) for x, y in zip(Xc, Yc, strict=True)])
        out["family refit"][key] = float(np.mean((fam.evaluate(xq[None, :], T_hat) - F) ** 2))
    return out


def _context_cubic(xc, yc, xq, ridge=1e-3):
    B = np.vander(xc, 4)
    coef = np.linalg.solve(B.T @ B + ridge * np.eye(4), B.T @ yc)
    return np.vander(xq, 4) @ coef


def discrete_scores(
    seed,
    *,
    n_test=10,
    n_context=10,
    noise=0.02,
    n_held_out=4,
    hidden_layer_sizes=(32, 32),
    max_iter=80,
):
    """Length (library lengths 1-3; targets 4 and 5) and compositional extrapolation.

    Compositional split: ``n_held_out`` ordered pairs of primitives are
    removed, as adjacent steps, from every library code (lengths 1-3); the targets are
    codes of length 2-3 that contain one of them.

    Returns
    -------
    dict
        ``{method: {"len4": mse, "len5": mse, "comp": mse, "s": fit seconds}}``.
    """
    from mvlearn_ext.extrapolate import (
        CompositionalTaskExtrapolator,
        InductiveCompositionRegressor,
        all_codes,
        compose_primitives,
        make_composition_tasks,
    )

    rng = np.random.default_rng(seed)
    xq = np.linspace(-1.0, 1.0, 50)
    mlp = dict(hidden_layer_sizes=hidden_layer_sizes, max_iter=max_iter, random_state=seed)

    def targets(codes):
        rows = []
        for code in codes:
            xc = np.sort(rng.uniform(-1.0, 1.0, n_context))
            yc = compose_primitives(code, xc) + noise * rng.normal(size=n_context)
            rows.append((code, xc, yc, compose_primitives(code, xq)))
        return rows

    def evaluate(rte, ind, rows):
        mse = {"RTE": [], "direct MLP (true code)": [], "context-only cubic fit": []}
        for code, xc, yc, truth in rows:
            mse["RTE"].append(np.mean((rte.predict(xq, xc, yc) - truth) ** 2))
            mse["direct MLP (true code)"].append(np.mean((ind.predict(xq, code) - truth) ** 2))
            mse["context-only cubic fit"].append(
                np.mean((_context_cubic(xc, yc, xq) - truth) ** 2)
            )
        return {k: float(np.mean(v)) for k, v in mse.items()}

    out = {k: {} for k in ("RTE", "direct MLP (true code)", "context-only cubic fit")}
    for k in out:
        out[k]["s"] = 0.0

    def fit_pair(codes):
        X, Y = make_composition_tasks(codes, noise=noise, random_state=seed)
        t = time.perf_counter()
        rte = CompositionalTaskExtrapolator(**mlp).fit(codes, X, Y)
        out["RTE"]["s"] += time.perf_counter() - t
        t = time.perf_counter()
        ind = InductiveCompositionRegressor(**mlp).fit(codes, X, Y)
        out["direct MLP (true code)"]["s"] += time.perf_counter() - t
        return rte, ind

    # length extrapolation
    rte, ind = fit_pair(all_codes(4, [1, 2, 3]))
    for L in (4, 5):
        codes = [tuple(int(v) for v in rng.integers(0, 4, size=L)) for _ in range(n_test)]
        for k, v in evaluate(rte, ind, targets(codes)).items():
            out[k][f"len{L}"] = v
    # compositional extrapolation
    bigrams = [(a, b) for a in range(4) for b in range(4)]
    held = {bigrams[i] for i in rng.choice(len(bigrams), n_held_out, replace=False)}

    def has_held(code):
        return any((code[i], code[i + 1]) in held for i in range(len(code) - 1))

    codes = all_codes(4, [1, 2, 3])
    library = [c for c in codes if not has_held(c)]
    pool = [c for c in codes if has_held(c)]
    pick = rng.choice(len(pool), min(n_test, len(pool)), replace=False)
    rte, ind = fit_pair(library)
    for k, v in evaluate(rte, ind, targets([pool[i] for i in pick])).items():
        out[k]["comp"] = v
    return out


def _rows_over_seeds(ctx, benchmark, columns, keys, progress, note):
    """One row per method of ``benchmark(seed)`` (``{method: {key: value, "s": seconds}}``)
    over ``ctx.seeds``: column ``columns[i]`` collects ``keys[i]``; ``progress(seed, result)``
    is the line reported after each seed; ``note`` goes on the first row."""
    from mvlearn_ext._demo.registry import DemoRow

    rows = {}
    for seed in ctx.seeds:
        res = benchmark(seed)
        for name, r in res.items():
            row = rows.setdefault(
                name, DemoRow(method=name, scores={c: [] for c in columns}, fit_times=[])
            )
            for col, key in zip(columns, keys, strict=True):
                row.scores[col].append(r[key])
            row.fit_times.append(r["s"])
        ctx.progress(progress(seed, res))
    out = list(rows.values())
    out[0].note = note
    return out


def run_parameter(ctx):
    """Rows of the ``rte_parameter`` section (quadratic family), over ``ctx.seeds``."""
    if ctx.quick:
        kw = dict(n_library=100, n_pairs=800, max_iter=60)
    else:
        kw = dict(n_library=100, n_pairs=1000, max_iter=80)
    return _rows_over_seeds(
        ctx,
        lambda seed: parameter_scores(seed, **kw),
        PARAM_COLUMNS,
        ("out", "in"),
        lambda seed, res: f"rte_parameter seed {seed}: RTE {res['RTE']['out']:.3f}",
        "f = t1 x^2 + t2 x; library t in [0.5, 1.5]^2, targets t in [1.9, 2.3]^2 from 5 "
        "noisy points; 'family refit' knows the formula (a reference, not a peer); a smaller "
        "training budget than the user guide's study",
    )


def run_discrete(ctx):
    """Rows of the ``rte_discrete`` section (length and compositional), over ``ctx.seeds``."""
    max_iter = 40 if ctx.quick else 80
    return _rows_over_seeds(
        ctx,
        lambda seed: discrete_scores(seed, max_iter=max_iter),
        DISCRETE_COLUMNS,
        ("len4", "len5", "comp"),
        lambda seed, res: f"rte_discrete seed {seed}: RTE length-5 {res['RTE']['len5']:.3f}",
        "compositions of 4 primitives; library lengths 1-3; 10 noisy context points; the "
        "direct MLP is given the target's true code",
    )
