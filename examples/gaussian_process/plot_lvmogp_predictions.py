"""
LVMOGP predictions with their bands
===================================

:class:`~mvlearn_ext.gaussian_process.LVMOGPRegressor` models many outputs
that share one input space through a latent variable per output. Here 40
phase-shifted sine curves are observed at 60 inputs with 30% of the entries
missing (``NaN``), and one output is observed only on the left half. The
predictive mean and a two-standard-deviation band are drawn for four outputs.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.gaussian_process import LVMOGPRegressor

rng = np.random.default_rng(0)
X = np.linspace(0, 1, 60)[:, None]
phases = rng.uniform(0, 1, 40)
F = np.sin(6 * X + 3 * phases)  # noise-free curves, (60, 40)
Y = F + 0.1 * rng.standard_normal(F.shape)
Y[rng.random(Y.shape) < 0.3] = np.nan
Y[30:, 0] = np.nan  # output 0: right half unseen

model = LVMOGPRegressor(n_latent=1, n_inducing=10, random_state=0).fit(X, Y)
X_test = np.linspace(0, 1, 200)[:, None]
mean, std = model.predict(X_test, return_std=True)
F_test = np.sin(6 * X_test + 3 * phases)
rmse = np.sqrt(np.mean((mean - F_test) ** 2))
print(f"RMSE against the noise-free curves, all 40 outputs: {rmse:.3f}")

# %%
fig, axes = plt.subplots(2, 2, figsize=(9, 5), sharex=True, sharey=True)
for ax, j in zip(axes.ravel(), [0, 1, 2, 3], strict=True):
    ax.fill_between(
        X_test[:, 0], mean[:, j] - 2 * std[:, j], mean[:, j] + 2 * std[:, j], alpha=0.3
    )
    ax.plot(X_test[:, 0], mean[:, j], label="predictive mean")
    ax.plot(X_test[:, 0], F_test[:, j], "k--", lw=1, label="truth")
    seen = ~np.isnan(Y[:, j])
    ax.plot(X[seen, 0], Y[seen, j], "k.", ms=4, label="observed")
    ax.set_title(f"output {j}" + (" (right half unseen)" if j == 0 else ""), fontsize=9)
axes[0, 0].legend(fontsize=7, loc="lower left")
fig.tight_layout()
plt.show()
