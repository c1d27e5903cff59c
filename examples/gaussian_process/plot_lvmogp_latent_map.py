"""
LVMOGP's latent output map
==========================

Each output of :class:`~mvlearn_ext.gaussian_process.LVMOGPRegressor` gets
a point in a latent space (``latent_outputs_``); outputs that behave alike
sit close together. The 60 outputs below are sine curves whose phase and
amplitude vary: a two-dimensional latent space should lay them out by those
two factors, which were never given to the model.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.gaussian_process import LVMOGPRegressor

rng = np.random.default_rng(1)
X = np.linspace(0, 1, 40)[:, None]
phase = rng.uniform(0, 1, 60)
amplitude = rng.uniform(0.5, 1.5, 60)
Y = amplitude * np.sin(6 * X + 2 * phase) + 0.05 * rng.standard_normal((40, 60))
Y[rng.random(Y.shape) < 0.2] = np.nan

model = LVMOGPRegressor(n_latent=2, n_inducing=10, random_state=0).fit(X, Y)
H = model.latent_outputs_

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3.8), sharex=True, sharey=True)
for ax, value, name in zip(axes, [phase, amplitude], ["phase", "amplitude"], strict=True):
    points = ax.scatter(H[:, 0], H[:, 1], c=value, cmap="viridis", s=25)
    fig.colorbar(points, ax=ax, label=f"true {name}")
    ax.set_xlabel("latent 1")
    ax.set_title(f"outputs coloured by {name}")
axes[0].set_ylabel("latent 2")
fig.tight_layout()
plt.show()
