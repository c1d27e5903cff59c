"""Regret studies on :mod:`mvlearn_ext.studies`: one runner replication = one simulate() batch.

The study runner distributes *replications* (joblib/dask) and seeds each with
its own ``numpy.random.Generator``. For throughput, one runner replication
here is a batch of ``setting["batch"]`` Monte Carlo replications run by
:func:`mvlearn_ext.bandits.simulate` (compiled, one Numba thread inside a
runner worker); its record holds the batch mean of the proxy regret, so that
:func:`mvlearn_ext.studies.summarize` over batches gives the grand mean and a
standard error from the between-batch spread.
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext.bandits._policies import (
    BAS,
    CHAS,
    GAFSMax,
    GreedyPlugIn,
    OracleAllocation,
    TwoStagePlugIn,
    UniformAllocation,
    VarianceUCB,
)
from mvlearn_ext.bandits._simulate import simulate

__all__ = ["POLICIES", "make_policy", "replicate_regret", "study_sigma"]

#: Policy names of the studies and benchmark, and how each is built for a given p.
POLICIES = {
    "greedy_sqrt": lambda p: GreedyPlugIn(p=p, warm_start="sqrt"),
    "greedy_linear": lambda p: GreedyPlugIn(p=p, warm_start="linear"),
    "greedy_2": lambda p: GreedyPlugIn(p=p, warm_start=2),
    "two_stage_sqrt": lambda p: TwoStagePlugIn(p=p, warm_start="sqrt"),
    "two_stage_linear": lambda p: TwoStagePlugIn(p=p, warm_start="linear"),
    "gafs_max": lambda p: GAFSMax(p=p),
    "ch_as": lambda p: CHAS(p=p),
    "b_as": lambda p: BAS(p=p),
    "variance_ucb": lambda p: VarianceUCB(p=p),
    "uniform": lambda p: UniformAllocation(p=p),
    "oracle": lambda p: OracleAllocation(p=p),
}


def _p_value(p):
    return np.inf if p in ("inf", float("inf")) else float(p)


def make_policy(name, p):
    """The policy called ``name`` (a key of :data:`POLICIES`) for objective ``R_p``."""
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; expected one of {sorted(POLICIES)}")
    return POLICIES[name](_p_value(p))


def study_sigma(n_groups, spacing="log"):
    """Standard deviations of the grid: ``sigma^2`` log-spaced on [0.25, 4] (or ``1..K``)."""
    if spacing == "log":
        return np.sqrt(np.geomspace(0.25, 4.0, n_groups))
    if spacing == "linear":
        return np.sqrt(np.arange(1.0, n_groups + 1.0))
    raise ValueError(f"spacing must be 'log' or 'linear', got {spacing!r}")


def replicate_regret(setting, rng):
    """One runner replication: a batch of simulate() replications of one setting.

    ``setting`` keys: ``policy`` (a :data:`POLICIES` name), ``p`` (number or
    ``"inf"``), ``K``, ``T``, ``distribution``, ``batch`` (replications per
    record) and optionally ``spacing``. The seed of the batch is drawn from
    ``rng`` (so it depends only on the runner's (setting, replication) key).

    Returns
    -------
    record : dict
        ``regret`` (batch mean of the proxy regret), ``regret_sd`` (its
        within-batch standard deviation), ``true_loss`` (Monte Carlo true
        loss of the batch), ``deviation`` (mean ``max_k |n_k - n_k*| /
        sqrt(T)``) and ``seconds`` (time of the batch).
    """
    import time

    sigma = study_sigma(int(setting["K"]), setting.get("spacing", "log"))
    policy = make_policy(setting["policy"], setting["p"])
    seed = int(rng.integers(2**63 - 1))
    start = time.perf_counter()
    res = simulate(
        policy,
        sigma=sigma,
        budget=int(setting["T"]),
        n_replications=int(setting["batch"]),
        distribution=setting["distribution"],
        random_state=seed,
        n_jobs=1,
    )
    seconds = time.perf_counter() - start
    reg = res.regret
    return {
        "regret": float(reg.mean()),
        "regret_sd": float(reg.std(ddof=1)) if reg.shape[0] > 1 else float("nan"),
        "true_loss": res.true_loss()[0],
        "deviation": float(res.allocation_deviation().mean()),
        "seconds": seconds,
    }
