"""T-LVMOGP and GS-LVMOGP: multi-output GP regression for many outputs (torch bridge).

:class:`TLVMOGPRegressor` (transformed LVMOGP): every output ``p`` has a
latent vector ``h_p``; every (input, output) pair ``[x_n; h_p]`` is mapped
by a Lipschitz-regularised residual network into an embedding space, where
one sparse variational GP (SVGP) with a single scalar kernel models all
outputs. :class:`GSLVMOGPRegressor` (generalised, scalable LVMOGP), its
closest baseline, puts a sum of separable kernels on ``[x; h]`` instead.
Both train by stochastic variational inference, minibatched over inputs and
over outputs, so a step costs the same for ten or ten thousand outputs. The
framework-free count likelihood (zero-inflated negative binomial) and its
Gauss-Hermite expectation have a NumPy reference in
:mod:`mvlearn_ext.gaussian_process._likelihoods`; the target check and the
latent initialisation are those of
:class:`mvlearn_ext.gaussian_process.LVMOGPRegressor`.

The code is split along estimator / driver / kernel lines: ``_base`` (the
two estimators' shared plumbing), ``_tlvmogp`` and ``_gslvmogp`` (the
estimators), ``_drivers`` (the torch modules of the bounds and the training
loop), ``_kernels``, ``_likelihoods`` and ``_network``.
"""

from mvlearn_ext.deep.gaussian_process._gslvmogp import GSLVMOGPRegressor
from mvlearn_ext.deep.gaussian_process._likelihoods import (
    gauss_hermite_expectation,
    zinb_log_prob,
)
from mvlearn_ext.deep.gaussian_process._network import LipschitzResNet
from mvlearn_ext.deep.gaussian_process._tlvmogp import TLVMOGPRegressor

__all__ = [
    "GSLVMOGPRegressor",
    "LipschitzResNet",
    "TLVMOGPRegressor",
    "gauss_hermite_expectation",
    "zinb_log_prob",
]
