"""
GRAPE: rank reward against similarity reward
============================================

:func:`~mvlearn_ext.rl.train_rewriter` trains a softmax query rewriter by
NumPy GRPO (group-relative advantages, PPO-clipped surrogate) against a frozen
retriever on the toy shifted-retrieval problem of
:func:`~mvlearn_ext.rl.make_shifted_retrieval`. With GRAPE's normalised rank
reward the policy learns to translate the queries; with the raw similarity of
the target as reward it can also gain by appending generic "hub" tokens that
raise every score (score inflation). The left panel shows the mean training
reward per step (each on its own scale), the middle one the share of sampled
rewrites that append a hub, the right one held-out Recall@10 of the original
queries and of both policies. In this run (seed 0, 60 steps) both policies
raise Recall@1 from 0.13 to about 0.58; the similarity-reward policy appends a
hub to every rewrite, inflates the scores about twice as much and ends lower at
Recall@10 (0.81 against 0.86 for the rank reward). The toy and the policy are package designs; the
reward structure is reconstructed from GRAPE's published reviews.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.rl import evaluate_rewriter, make_shifted_retrieval, train_rewriter

data = make_shifted_retrieval(random_state=0)
results = {"original": (evaluate_rewriter(data), None)}
for reward in ("rank", "similarity"):
    policy, history = train_rewriter(data, reward=reward, n_steps=60, random_state=0)
    results[reward] = (evaluate_rewriter(data, policy), history)
for name, (ev, _) in results.items():
    print(
        f"{name:>10}: R@1 {ev['R@1']:.3f}  R@10 {ev['R@10']:.3f}  "
        f"inflation {ev['inflation']:.3f}  hub rate {ev['hub_rate']:.2f}"
    )

# %%
fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
for reward in ("rank", "similarity"):
    history = results[reward][1]
    r = np.asarray(history["reward"])
    axes[0].plot((r - r.min()) / (np.ptp(r) or 1.0), label=f"{reward} reward")
    axes[1].plot(history["hub_rate"], label=f"{reward} reward")
axes[0].set(xlabel="GRPO step", ylabel="mean reward (min-max scaled)", title="training reward")
axes[1].set(xlabel="GRPO step", ylabel="share of rewrites", title="hub tokens appended")
axes[0].legend()
axes[1].legend()
names = list(results)
axes[2].bar(names, [results[n][0]["R@10"] for n in names], color=["grey", "C0", "C1"])
axes[2].set(ylabel="held-out Recall@10", title="retrieval of the rewrites")
fig.tight_layout()
plt.show()
