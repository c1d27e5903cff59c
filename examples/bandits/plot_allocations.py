"""
Where the samples go
====================

The oracle allocation for the ``p``-norm objective samples group ``k``
in proportion to ``sigma_k^q`` with ``q = 2p / (p + 1)``
(:func:`~mvlearn_ext.bandits.oracle_allocation`). An adaptive policy does
not know ``sigma``; this example runs
:class:`~mvlearn_ext.bandits.GreedyPlugIn` online, one observation at a
time, with :class:`~mvlearn_ext.bandits.ArmSampler`, and compares its final
counts with the oracle's for ``p = 1`` (Neyman), ``p = 2`` and ``p = inf``.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.bandits import ArmSampler, GreedyPlugIn, oracle_allocation, simulate

sigma = np.array([0.5, 1.0, 1.5, 3.0])
budget = 1000
fig, axes = plt.subplots(1, 3, figsize=(10, 3.2), sharey=True)
for ax, p in zip(axes, [1.0, 2.0, "inf"], strict=True):
    policy = GreedyPlugIn(p=p).reset(n_groups=len(sigma), budget=budget)
    arms = ArmSampler(sigma=sigma, random_state=0)
    for _ in range(budget):
        k = policy.next_group()
        policy.update(k, arms.sample(0, k, policy.counts_[k]))
    # Over many replications the counts vary; show their spread too.
    res = simulate(
        GreedyPlugIn(p=p), sigma=sigma, budget=budget, n_replications=300, random_state=0
    )
    oracle = oracle_allocation(sigma, budget, p)
    pos = np.arange(len(sigma))
    ax.bar(pos - 0.2, oracle, 0.4, label="oracle", color="0.7")
    ax.bar(pos + 0.2, policy.counts_, 0.4, label="greedy (one run)")
    ax.errorbar(
        pos + 0.2, res.counts.mean(axis=0), yerr=res.counts.std(axis=0), fmt="k.", capsize=3
    )
    ax.set_xticks(pos, [f"{s:g}" for s in sigma])
    ax.set_xlabel("group sigma")
    ax.set_title(f"p = {p}")
axes[0].set_ylabel(f"samples (of {budget})")
axes[0].legend(fontsize=8)
fig.tight_layout()
plt.show()
