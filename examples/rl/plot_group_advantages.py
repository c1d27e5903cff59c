"""
Group-relative advantages and the std filter
============================================

GRPO scores ``G`` completions of each prompt and uses the group-relative
advantage ``A_i = (R_i - mean_G R) / (std_G R + eps)``
(:func:`~mvlearn_ext.rl.group_advantages`) instead of a learned critic. Here
six groups of eight rewards come from VisualScore's Gaussian reward
(:func:`~mvlearn_ext.rl.gaussian_reward`) of predicted scores around a true
score, and from a binary exact-match reward; the groups whose rewards are all
equal carry no signal and are dropped by VisualScore's std filter
(:func:`~mvlearn_ext.rl.std_filter`). The panels show the rewards and the
advantages of each group (rows), with the dropped groups set to zero. In this
draw groups 3 and 5 predict one score eight times and are dropped under both
rewards; the Gaussian reward still ranks near misses above far misses where
the binary reward gives them all 0.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.rl import gaussian_reward, group_advantages, std_filter

rng = np.random.default_rng(0)
truth = rng.uniform(1, 5, 6)
spread = np.array([0.1, 0.5, 1.0, 0.5, 2.0, 0.05])
pred = np.clip(np.round(truth[:, None] + spread[:, None] * rng.standard_normal((6, 8))), 1, 5)
rewards = {
    "Gaussian reward": gaussian_reward(pred, truth[:, None]),
    "binary reward": (pred == np.round(truth)[:, None]).astype(float),
}
panels = []
for name, R in rewards.items():
    keep = std_filter(R)
    A = group_advantages(R) * keep[:, None]
    print(f"{name}: groups kept by the std filter {keep.astype(int).tolist()}")
    panels.append((name, R, A))

# %%
fig, axes = plt.subplots(2, 2, figsize=(9, 5.5))
for row, (name, R, A) in zip(axes, panels, strict=True):
    im = row[0].imshow(R, cmap="viridis", aspect="auto")
    fig.colorbar(im, ax=row[0])
    row[0].set(title=f"{name}", xlabel="completion", ylabel="group")
    lim = np.abs(A).max() or 1.0
    im = row[1].imshow(A, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
    fig.colorbar(im, ax=row[1])
    row[1].set(title="advantage (dropped groups 0)", xlabel="completion", ylabel="group")
fig.tight_layout()
plt.show()
