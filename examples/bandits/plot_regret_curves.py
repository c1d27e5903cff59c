"""
Regret curves against the theory slope
======================================

Estimating the means of several groups with a sampling budget ``T``: the
proxy regret ``R_p(n_T) - R_p(n*)`` of an adaptive allocation decays like a
power of ``T``. The theory for exploration-free greedy plug-in allocation
(:class:`~mvlearn_ext.bandits.GreedyPlugIn`, a reconstruction) gives the
slope -2 on log-log axes for finite ``p``. Uniform allocation's risk stays a
constant factor above the oracle's, so its regret only falls like the risk
itself, ``1 / T`` (slope -1). :func:`~mvlearn_ext.bandits.regret_curve`
runs the compiled Monte Carlo engine with common random numbers across
horizons and policies.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.bandits import GreedyPlugIn, UniformAllocation, VarianceUCB, regret_curve

sigma = np.sqrt([0.25, 1.0, 2.0, 4.0])
budgets = [2**k for k in range(7, 13)]
policies = {
    "greedy plug-in": GreedyPlugIn(p=2),
    "variance-UCB": VarianceUCB(p=2),
    "uniform": UniformAllocation(p=2),
}
curves = {
    name: regret_curve(policy, sigma=sigma, budgets=budgets, n_replications=400, random_state=0)
    for name, policy in policies.items()
}

# %%
fig, ax = plt.subplots(figsize=(6, 4))
for name, curve in curves.items():
    mean, se = np.asarray(curve["mean"]), np.asarray(curve["se"])
    label = name
    if curve["fit"] is not None:
        label += f" (slope {curve['fit'].slope:.2f})"
    ax.errorbar(budgets, mean, yerr=2 * se, marker="o", capsize=2, label=label)
# The theory slope -2, drawn through the greedy curve's first point.
greedy = np.asarray(curves["greedy plug-in"]["mean"])
T = np.asarray(budgets, dtype=float)
ax.plot(T, greedy[0] * (T / T[0]) ** -2.0, "k--", lw=1, label="slope -2 (theory)")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("budget T")
ax.set_ylabel("mean proxy regret (p = 2)")
ax.set_title("4 Gaussian groups, 400 replications")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
