"""Diffusion models for several tasks with few pairs: schedules, samplers, the two-stage pipeline.

NumPy parts of the semi-supervised multi-objective diffusion method
(arXiv 2605.25210, ICML 2026; a reconstruction from its abstract, see
:mod:`mvlearn_ext.diffusion._two_stage`):

Schedules and samplers
    :func:`make_schedule` (linear rescaled to ``T`` steps, cosine),
    :func:`forward_marginal`, :func:`q_sample`, :func:`ddpm_sample`,
    :func:`ddim_sample`.
Analytic optimal denoisers
    :func:`gaussian_eps`, :func:`mixture_eps`, and
    :func:`gaussian_chain_moments`, the exact law of a DDPM/DDIM chain driven
    by the Gaussian optimum.
Two-stage pipeline
    :func:`simplex_weights`, :func:`scalarize`, :func:`task_sample_weights`,
    :func:`make_pseudo_pairs`, :func:`stack_pairs`, and the linear-Gaussian oracle
    :func:`fit_polynomial_gaussian` / :func:`two_stage_polynomial`.
Toy tasks and metrics
    :func:`make_toy_tasks`, :func:`toy_task_mean`,
    :func:`conditional_mean_error`, :func:`energy_distance`,
    :func:`evaluate_toy_sampler`.

The tiny epsilon-networks (specialists, generalist, distillation) are in
:mod:`mvlearn_ext.deep.diffusion` and need torch. Nothing here imports torch.
"""

from mvlearn_ext.diffusion._sampling import (
    ddim_sample,
    ddpm_sample,
    gaussian_chain_moments,
    gaussian_eps,
    mixture_eps,
)
from mvlearn_ext.diffusion._schedule import (
    DiffusionSchedule,
    forward_marginal,
    make_schedule,
    q_sample,
)
from mvlearn_ext.diffusion._tasks import (
    TOY_TASKS,
    ToyTasks,
    conditional_mean_error,
    energy_distance,
    evaluate_toy_sampler,
    make_toy_tasks,
    toy_task_mean,
)
from mvlearn_ext.diffusion._two_stage import (
    PolynomialGaussian,
    fit_polynomial_gaussian,
    make_pseudo_pairs,
    scalarize,
    simplex_weights,
    stack_pairs,
    task_sample_weights,
    two_stage_polynomial,
)

__all__ = [
    "TOY_TASKS",
    "DiffusionSchedule",
    "PolynomialGaussian",
    "ToyTasks",
    "conditional_mean_error",
    "ddim_sample",
    "ddpm_sample",
    "energy_distance",
    "evaluate_toy_sampler",
    "fit_polynomial_gaussian",
    "forward_marginal",
    "gaussian_chain_moments",
    "gaussian_eps",
    "make_pseudo_pairs",
    "make_schedule",
    "make_toy_tasks",
    "mixture_eps",
    "q_sample",
    "scalarize",
    "simplex_weights",
    "stack_pairs",
    "task_sample_weights",
    "toy_task_mean",
    "two_stage_polynomial",
]
