"""
Unbalanced missing views and counterfactual masks
=================================================

CIMLN's protocol (:func:`~mvlearn_ext.incomplete.make_unbalanced_mask`) makes
half of the samples incomplete, each view ``v`` of an incomplete sample
missing with its own probability ``mu_v``
(:func:`~mvlearn_ext.incomplete.view_miss_probabilities`). During training
CIMLN hides further views at random (counterfactual observation patterns).
:func:`~mvlearn_ext.incomplete.counterfactual_view_probs` gives the
probability ``beta_v`` of hiding each view: the paper's rule
(``mode="observation"``) hides the often-observed views more, the authors'
code (``mode="uniform"``) hides every view with the same ``beta``. The left
panel shows ``mu_v`` and the observed share of each view for 5 views and
2000 samples; the right one the two rules' ``beta_v`` at ``beta = 0.3`` and
the observed share after one counterfactual mask
(:func:`~mvlearn_ext.incomplete.counterfactual_mask`) of each rule. Here the
paper's rule hides view 0 (always observed) with probability 0.39 and the
last view with 0.19, so the observed shares after masking are closer together
(0.64 to 0.42) than under the uniform rule (0.71 to 0.37).
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.incomplete import (
    counterfactual_mask,
    counterfactual_view_probs,
    make_unbalanced_mask,
    view_miss_probabilities,
)

n, V = 2000, 5
mask = make_unbalanced_mask(n, V, missing_rate=0.5, random_state=0)
mu = view_miss_probabilities(V)
observed = mask.mean(axis=0)
print("mu_v:", np.round(mu, 2).tolist(), " observed share:", np.round(observed, 2).tolist())
rules = {}
for mode in ("observation", "uniform"):
    beta_v = counterfactual_view_probs(mask, 0.3, mode=mode)
    cf = counterfactual_mask(mask, beta_v, random_state=0)
    rules[mode] = (beta_v, cf.mean(axis=0))
    kept = np.round(cf.mean(axis=0), 2).tolist()
    print(f"{mode:>11}: beta_v {np.round(beta_v, 2).tolist()}, observed share after {kept}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
views = np.arange(V)
axes[0].bar(views - 0.2, mu, 0.4, label="miss probability mu_v")
axes[0].bar(views + 0.2, observed, 0.4, label="observed share")
axes[0].set(xlabel="view", ylim=(0, 1.05), title="unbalanced protocol (eta = 0.5)")
axes[0].legend(fontsize=8)
for i, (mode, (beta_v, kept)) in enumerate(rules.items()):
    axes[1].bar(views + (i - 0.5) * 0.4, beta_v, 0.4, label=f"beta_v, {mode}")
    axes[1].plot(views, kept, "o-", color=f"C{i}", label=f"observed after masking, {mode}")
axes[1].set(xlabel="view", ylim=(0, 1.05), title="counterfactual masking (beta = 0.3)")
axes[1].legend(fontsize=7)
fig.tight_layout()
plt.show()
