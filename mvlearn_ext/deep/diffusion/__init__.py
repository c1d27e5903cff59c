"""Semi-supervised multi-objective diffusion (torch bridge): tiny epsilon-networks, distillation.

Reconstruction (the full paper was not available): "Semi-supervised
multi-objective learning for diffusion models" (arXiv 2605.25210, ICML 2026)
is known from its abstract only. Its abstract describes several target
distributions (tasks) with scarce paired ``(condition, sample)`` data and
abundant unpaired conditions; lightweight *specialists* fitted on the pairs
of each task; and a *generalist* obtained by distilling them with
pseudo-samples they generate for the unpaired conditions. Everything else
here is a design of this package: the specialists and the
generalist are conditional DDPMs trained with the denoising loss
``E w(t) ||eps_theta(sqrt(ab_t) x + sqrt(1 - ab_t) eps, t, c, k) - eps||^2``
(``w = 1``), the multi-objective loss of the generalist is the linear
scalarisation ``sum_k lambda_k L_k`` (per-sample weights
:func:`mvlearn_ext.diffusion.task_sample_weights`), pseudo-samples come from
DDPM ancestral sampling, and the real pairs may be mixed in with a share
``mu`` (``mix_weight``, default 0). The paper's bounds, its on-policy-shift
extension to diffusion policies, and its architectures are not reproduced.

* :class:`EpsMLP`: the epsilon-network (an MLP on the noised sample, sine
  features of the step, the condition and a task embedding);
* :class:`ConditionalDiffusion`: trains one by denoising score matching and
  samples with the NumPy samplers of :mod:`mvlearn_ext.diffusion`;
* :class:`GaussianDSMDiffusion`: a lightweight specialist that is still a
  diffusion model, the Gaussian-posterior denoiser with a polynomial mean,
  fitted by the same loss and sampled by the same samplers (a design
  choice of this package; the abstract leaves the specialist class open);
* :class:`TwoStageDiffusion`: specialists on the pairs, pseudo-pairs, the
  generalist.

All three are scikit-learn estimators (``get_params``/``set_params``,
``clone``, declared parameter constraints checked at ``fit``, ``fit``
returns the estimator), but not predictors: ``fit`` takes conditions and
samples (``fit(C, X)``, a conditional generative model of ``X`` given
``C``) or, for :class:`TwoStageDiffusion`, lists of them per task, and
``sample`` is stochastic. Of scikit-learn's own contract checks, which assume
``fit(X, y)`` and a deterministic ``predict``, the test suite runs those
that apply.

The code is split along estimator / driver lines: ``_conditional``,
``_gaussian_dsm`` and ``_two_stage`` (the estimators), ``_training`` (the
validation and the training loop they share) and ``_network``
(:class:`EpsMLP`).
"""

from mvlearn_ext.deep.diffusion._conditional import ConditionalDiffusion
from mvlearn_ext.deep.diffusion._gaussian_dsm import GaussianDSMDiffusion
from mvlearn_ext.deep.diffusion._network import EpsMLP
from mvlearn_ext.deep.diffusion._two_stage import TwoStageDiffusion

__all__ = ["ConditionalDiffusion", "EpsMLP", "GaussianDSMDiffusion", "TwoStageDiffusion"]
