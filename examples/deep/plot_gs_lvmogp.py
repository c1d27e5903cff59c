"""
GS-LVMOGP: a sum of separable kernels
=====================================

:class:`~mvlearn_ext.deep.GSLVMOGPRegressor` (in :mod:`mvlearn_ext.deep`,
which needs ``torch``) gives every output one latent vector per term of a
sum of separable kernels, ``k = sum_q s_q k_X^q(x, x') k_H^q(h^q, h'^q)``,
and trains by minibatch stochastic variational inference; ``n_terms=1`` is
the LVMOGP model. Here 30 outputs mix a slow and a fast sine with
output-specific weights, ``y_p(x) = a_p sin(2 pi x) + b_p sin(6 pi x)`` plus
noise, and 40% of the entries are missing. The figure shows the predictions
of the two-term model with two-standard-deviation bands for three outputs,
and the printed RMSE against the noise-free curves compares it with the
one-term model fitted the same way (60 epochs, a short run for the gallery):
in this run (seed 0) 0.23 for two terms against 0.59 for one. After this
short run the two-term model's bands are much wider than the noise
(standard deviation 0.1) around a mean that follows the curves.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.deep import GSLVMOGPRegressor

rng = np.random.default_rng(0)
X = np.linspace(0, 1, 60)[:, None]
a, b = rng.normal(size=30), rng.normal(size=30)


def curves(x):
    return a * np.sin(2 * np.pi * x) + b * np.sin(6 * np.pi * x)


Y = curves(X) + 0.1 * rng.standard_normal((60, 30))
Y[rng.random(Y.shape) < 0.4] = np.nan
X_test = np.linspace(0, 1, 200)[:, None]
truth = curves(X_test)

models = {}
for n_terms in (1, 2):
    model = GSLVMOGPRegressor(
        n_terms=n_terms, n_latent=1, n_inducing=15, n_epochs=60, batch_size=60,
        learning_rate=0.05, n_jobs=1, random_state=0,
    ).fit(X, Y)  # fmt: skip
    models[n_terms] = model
    rmse = np.sqrt(np.mean((model.predict(X_test) - truth) ** 2))
    print(f"n_terms={n_terms}: RMSE against the noise-free curves {rmse:.3f}")

# %%
mean, std = models[2].predict(X_test, return_std=True)
fig, axes = plt.subplots(1, 3, figsize=(11, 3.2), sharey=True)
for ax, p in zip(axes, [0, 1, 2], strict=True):
    ax.fill_between(
        X_test[:, 0], mean[:, p] - 2 * std[:, p], mean[:, p] + 2 * std[:, p], alpha=0.3
    )
    ax.plot(X_test[:, 0], mean[:, p], label="two-term mean")
    ax.plot(X_test[:, 0], truth[:, p], "k--", lw=1, label="noise-free")
    seen = ~np.isnan(Y[:, p])
    ax.plot(X[seen, 0], Y[seen, p], "k.", ms=4)
    ax.set_title(f"output {p}")
axes[0].legend(fontsize=8)
fig.tight_layout()
plt.show()
