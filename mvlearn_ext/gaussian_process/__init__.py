"""Sparse multi-output Gaussian processes for many outputs.

:class:`LVMOGPRegressor` is the latent variable multi-output GP of Dai,
Alvarez & Lawrence (NeurIPS 2017): every output has a latent vector, the
kernel is separable between inputs and output latents, and the inducing
variables live on a grid, so the variational bound has an exact Kronecker
form. The Kronecker and Psi-statistic algebra (with vector-Jacobian
products) is in the compiled core, reached through the unchecked entries
of ``mvlearn_ext._lib._kernels``; ``mvlearn_ext._lib._reference`` holds its
NumPy references, which the tests compare with it.

The target check, the inducing-point placement and the latent
initialisation (``check_targets``, ``kmeans_or_distinct``,
``initial_latents``) are published here for the torch half of the family,
:mod:`mvlearn_ext.deep.gaussian_process`; they are not part of the user API
(not in ``__all__``).
"""

from mvlearn_ext.gaussian_process._common import check_targets as check_targets
from mvlearn_ext.gaussian_process._common import initial_latents as initial_latents
from mvlearn_ext.gaussian_process._common import kmeans_or_distinct as kmeans_or_distinct
from mvlearn_ext.gaussian_process._lvmogp import LVMOGPRegressor

__all__ = ["LVMOGPRegressor"]
