"""The epsilon-network of the diffusion estimators."""

from __future__ import annotations

import torch
from torch import nn


class EpsMLP(nn.Module):
    """The noise predictor ``eps_theta(x_t, t, c, k)``: an MLP with SiLU activations.

    Its input is the noised sample, ``2 n_freq`` sine and cosine features of
    ``t / T``, the condition and (for several tasks) a learned task embedding.

    Parameters
    ----------
    dim : int
        Dimension of the samples.
    cond_dim : int
        Dimension of the conditions (0: unconditional).
    hidden_layer_sizes : tuple of int, default=(32, 32)
    n_tasks : int, default=1
    task_dim : int, default=8
        Width of the task embedding (unused with one task).
    n_freq : int, default=8

    See Also
    --------
    ConditionalDiffusion : The model that trains it.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep import EpsMLP
    >>> net = EpsMLP(2, 1, hidden_layer_sizes=(16,))
    >>> net(torch.zeros(4, 2), torch.rand(4), torch.zeros(4, 1)).shape
    torch.Size([4, 2])
    """

    def __init__(
        self, dim, cond_dim, *, hidden_layer_sizes=(32, 32), n_tasks=1, task_dim=8, n_freq=8
    ):
        super().__init__()
        self.n_tasks = int(n_tasks)
        self.register_buffer("freqs", torch.pi * 2.0 ** torch.arange(n_freq, dtype=torch.float32))
        self.task = nn.Embedding(n_tasks, task_dim) if n_tasks > 1 else None
        width = dim + 2 * n_freq + cond_dim + (task_dim if n_tasks > 1 else 0)
        layers = []
        for h in hidden_layer_sizes:
            layers += [nn.Linear(width, h), nn.SiLU()]
            width = h
        layers.append(nn.Linear(width, dim))
        self.net = nn.Sequential(*layers)

    def forward(self, x, t_frac, c, tasks=None):
        """``x`` (n, d), ``t_frac`` (n,) in [0, 1], ``c`` (n, cond_dim), ``tasks`` (n,) long."""
        ang = t_frac[:, None] * self.freqs[None, :]
        parts = [x, torch.sin(ang), torch.cos(ang), c]
        if self.task is not None:
            parts.append(self.task(tasks))
        return self.net(torch.cat(parts, dim=1))
