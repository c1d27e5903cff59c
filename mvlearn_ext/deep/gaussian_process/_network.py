"""The Lipschitz-regularised residual network of T-LVMOGP."""

from __future__ import annotations

import torch
from torch import nn


class LipschitzResNet(nn.Module):
    """Residual network ``z <- z + ReLU(W_b z + c_b)`` with ``||W_b||_2 <= spectral_norm_bound``.

    Every block keeps the dimension, so with ``spectral_norm_bound = c < 1`` it is
    bi-Lipschitz: ``(1 - c) |a - b| <= |g(a) - g(b)| <= (1 + c) |a - b|``
    (ReLU is 1-Lipschitz), and distinct inputs cannot collapse; over ``B``
    blocks the constants are ``(1 - c)^B`` and ``(1 + c)^B``. The bound is
    kept by :meth:`clamp_`, a projection called after every optimiser step:
    a weight whose spectral norm exceeds ``c`` is rescaled to norm ``c``,
    any other weight is left unchanged. The spectral norm is the exact
    largest singular value (the weights are ``dim x dim`` with ``dim`` the
    small input-plus-latent dimension), not the single power-iteration
    estimate of the T-LVMOGP authors' code, which never exceeds the true
    norm and so can leave it above ``c`` until the iteration converges.

    Parameters
    ----------
    dim : int
        Input (and output) dimension.
    n_blocks : int, default=3
    spectral_norm_bound : float, default=0.9
        The bound ``c`` on every block's spectral norm.

    See Also
    --------
    TLVMOGPRegressor : Uses it as the latent transformation.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.deep import LipschitzResNet
    >>> net = LipschitzResNet(3, n_blocks=2)
    >>> net(torch.zeros(5, 3)).shape
    torch.Size([5, 3])
    """

    def __init__(self, dim, n_blocks=3, spectral_norm_bound=0.9):
        super().__init__()
        self.spectral_norm_bound = float(spectral_norm_bound)
        self.blocks = nn.ModuleList(nn.Linear(dim, dim) for _ in range(n_blocks))
        self.clamp_()

    def forward(self, z):
        for block in self.blocks:
            z = z + torch.relu(block(z))
        return z

    @torch.no_grad()
    def clamp_(self):
        """Rescale every block weight with a spectral norm above ``spectral_norm_bound`` to it."""
        for block in self.blocks:
            W = block.weight
            sigma = torch.linalg.matrix_norm(W, ord=2)
            if sigma > self.spectral_norm_bound:
                W.mul_(self.spectral_norm_bound / sigma)
        return self

    def spectral_norms(self):
        """Exact spectral norm of every block weight (a tensor of shape (n_blocks,))."""
        with torch.no_grad():
            return torch.stack([torch.linalg.matrix_norm(b.weight, ord=2) for b in self.blocks])
