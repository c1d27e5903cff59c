"""The torch modules that hold the LVMOGP bounds' parameters (private drivers).

:class:`_LatentSVGP` holds what T-LVMOGP and GS-LVMOGP share: the output
latents ``q(h_p)`` and their KL, the constant mean, the likelihood and its
expectation, the minibatch bound and the chunked prediction. Its two
subclasses supply the GP: :class:`_TLVMOGP` one SVGP on the embedding of a
Lipschitz network, :class:`_GSLVMOGP` a sum of separable kernels on
Kronecker-structured inducing grids.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from mvlearn_ext.deep.gaussian_process._kernels import _kernel, _tri
from mvlearn_ext.deep.gaussian_process._likelihoods import (
    _gh_nodes,
    _zinb_moments,
    gauss_hermite_expectation,
    zinb_log_prob,
)
from mvlearn_ext.deep.gaussian_process._network import LipschitzResNet
from mvlearn_ext.utils._progress import progress_bar

_LOG_2PI = math.log(2.0 * math.pi)


class _LatentSVGP(nn.Module):
    """Output latents, likelihood and bound shared by the two LVMOGP drivers.

    ``h_p = mu_p + L_p eps`` (``latent``: ``"full"`` lower-triangular
    ``L_p``, ``"meanfield"`` diagonal, ``"point"`` none). A subclass sets
    ``net`` (a module applied to the pairs ``[x; h]``, or ``None``) and
    defines the GP: ``qf`` (marginals of ``q(f)`` at pairs), ``kl_u`` and the
    prediction's ``_predict_chunk``, ``_predict_setup`` and ``_predict_block``.
    """

    def __init__(
        self, n_outputs, d_x, d_h, latent, likelihood, zero_inflation, count_scale, n_quadrature,
        tighter_bound, jitter,
    ):  # fmt: skip
        super().__init__()
        self.d_x, self.d_h, self.n_outputs = d_x, d_h, n_outputs
        self.latent, self.likelihood = latent, likelihood
        self.zero_inflation, self.count_scale = float(zero_inflation), float(count_scale)
        self.n_quadrature, self.tighter_bound, self.jitter = n_quadrature, tighter_bound, jitter
        self.h_mean = nn.Parameter(torch.zeros(n_outputs, d_h))
        if latent == "full":
            self.h_chol = nn.Parameter(torch.zeros(n_outputs, d_h, d_h))
        elif latent == "meanfield":
            self.h_log_std = nn.Parameter(torch.zeros(n_outputs, d_h))
        self.mean_const = nn.Parameter(torch.zeros(()))
        if likelihood == "gaussian":
            self.log_noise = nn.Parameter(torch.tensor(math.log(0.1)))
        else:
            self.log_alpha = nn.Parameter(torch.zeros(n_outputs))

    # -- latent outputs ---------------------------------------------------
    def latent_factor(self, idx):
        if self.latent == "full":
            return _tri(self.h_chol[idx])
        if self.latent == "meanfield":
            return torch.diag_embed(torch.exp(self.h_log_std[idx]))
        return None

    def sample_h(self, idx, eps=None):
        mu = self.h_mean[idx]
        if eps is None or self.latent == "point":
            return mu
        if self.latent == "meanfield":
            return mu + torch.exp(self.h_log_std[idx]) * eps
        return mu + (_tri(self.h_chol[idx]) @ eps.unsqueeze(-1)).squeeze(-1)

    def kl_h(self, idx):
        """``KL(q(h_p) || N(0, I))`` per output (``1/2 |mu_p|^2`` for a point estimate)."""
        mu = self.h_mean[idx]
        quad = 0.5 * (mu * mu).sum(-1)
        if self.latent == "point":
            return quad
        if self.latent == "meanfield":
            ls = self.h_log_std[idx]
            return quad + 0.5 * (torch.exp(2.0 * ls) - 1.0 - 2.0 * ls).sum(-1)
        L = _tri(self.h_chol[idx])
        logdiag = torch.diagonal(self.h_chol[idx], dim1=-2, dim2=-1)
        return quad + 0.5 * ((L * L).sum((-2, -1)) - self.d_h - 2.0 * logdiag.sum(-1))

    # -- the network (none for GS-LVMOGP) -----------------------------------
    def embed(self, pairs):
        return pairs if self.net is None else self.net(pairs)

    def clamp_(self):
        if self.net is not None:
            self.net.clamp_()

    # -- likelihood ---------------------------------------------------------
    def expected_log_lik(self, y, mean, var, d, out):
        if self.likelihood == "gaussian":
            noise = torch.exp(self.log_noise)
            ell = -0.5 * (_LOG_2PI + self.log_noise) - 0.5 * ((y - mean) ** 2 + var) / noise
            if self.tighter_bound:
                ratio = d / noise
                ell = ell + 0.5 * (ratio - torch.log1p(ratio))
            return ell
        alpha = torch.exp(self.log_alpha[out])
        return gauss_hermite_expectation(
            lambda f: zinb_log_prob(
                y, f, alpha, scale=self.count_scale, zero_inflation=self.zero_inflation
            ),
            mean,
            var,
            self.n_quadrature,
        )

    def elbo(self, X, Y, observed, out_idx, scale, eps=None):
        """Minibatch estimate of the bound.

        ``X`` (b, d_x) inputs, ``Y`` (b, p) targets of the outputs
        ``out_idx`` (p,), ``observed`` (b, p) bool, ``scale`` the weight of
        the data term (``N P / (b p)`` for uniform batches, 1 for the full
        data), ``eps`` (p, d_h) the standard normal draw of ``q(H)``
        (``None``: the latent means). Returns the data term minus
        ``KL(q(u)||p(u))`` minus ``(P / p)`` times the batch's latent KL.
        """
        H = self.sample_h(out_idx, eps)
        ni, pi = torch.nonzero(observed, as_tuple=True)
        E = self.embed(torch.cat([X[ni], H[pi]], dim=1))
        mean, var, d = self.qf(E)
        ell = self.expected_log_lik(Y[ni, pi], mean, var, d, out_idx[pi])
        kl_h = self.kl_h(out_idx).sum() * (self.n_outputs / out_idx.shape[0])
        return scale * ell.sum() - self.kl_u() - kl_h

    def forward(self, X, Y, observed, out_idx, scale, eps=None):
        """The minibatch bound (see :meth:`elbo`)."""
        return self.elbo(X, Y, observed, out_idx, scale, eps)

    @torch.no_grad()
    def predict_moments(self, X, eps, max_elements=4_000_000):
        """Predictive mean and variance of ``f`` (Gaussian) or ``y`` (ZINB) at ``X``.

        ``eps`` (S, P, d_h) are the draws of ``q(H)``; the moments over them
        follow the law of total variance.
        """
        n, P = X.shape[0], self.n_outputs
        S = eps.shape[0]
        setup = self._predict_setup(X)
        chunk = self._predict_chunk(n, max_elements)
        mean_out = torch.empty(n, P, dtype=X.dtype, device=X.device)
        var_out = torch.empty_like(mean_out)
        for j0 in range(0, P, chunk):
            idx = torch.arange(j0, min(P, j0 + chunk), device=X.device)
            pc = idx.shape[0]
            m1 = torch.zeros(n, pc, dtype=X.dtype, device=X.device)
            m2 = torch.zeros_like(m1)
            for s in range(S):
                mu, var = self._predict_block(X, self.sample_h(idx, eps[s, idx]), setup)
                mu, var = mu.reshape(-1), var.reshape(-1)
                if self.likelihood == "gaussian":
                    ey, ey2 = mu, var + mu * mu
                else:
                    alpha = torch.exp(self.log_alpha[idx]).repeat(n)
                    f, w = _gh_nodes(mu, var, self.n_quadrature)
                    e1, e2 = _zinb_moments(f, alpha, self.count_scale, self.zero_inflation)
                    ey, ey2 = w @ e1, w @ e2
                m1 += ey.reshape(n, pc)
                m2 += ey2.reshape(n, pc)
            mean = m1 / S
            mean_out[:, idx] = mean
            var_out[:, idx] = (m2 / S - mean * mean).clamp_min(1e-12)
        return mean_out, var_out


class _TLVMOGP(_LatentSVGP):
    """Parameters and per-batch quantities of the T-LVMOGP bound (private driver).

    ``h_p = mu_p + L_p eps`` (``latent``: ``"full"`` lower-triangular
    ``L_p``, ``"meanfield"`` diagonal, ``"point"`` none); embedding
    ``e = g([x; h])``; whitened SVGP ``u = L_uu v``, ``q(v) = N(m, L_S L_S^T)``.
    """

    def __init__(
        self,
        *,
        n_outputs,
        d_x,
        d_h,
        n_inducing,
        network="resnet",
        n_blocks=3,
        spectral_norm_bound=0.9,
        latent="full",
        likelihood="gaussian",
        kernel="rbf",
        zero_inflation=0.1,
        count_scale=1.0,
        n_quadrature=20,
        tighter_bound=False,
        jitter=1e-6,
    ):
        D = d_x + d_h
        super().__init__(
            n_outputs, d_x, d_h, latent, likelihood, zero_inflation, count_scale, n_quadrature,
            tighter_bound, jitter,
        )  # fmt: skip
        self.kernel = kernel
        self.net = (
            LipschitzResNet(D, n_blocks, spectral_norm_bound) if network == "resnet" else None
        )
        self.Z = nn.Parameter(torch.zeros(n_inducing, D))
        self.log_lengthscales = nn.Parameter(torch.zeros(D))
        self.log_outputscale = nn.Parameter(torch.zeros(()))
        self.q_mean = nn.Parameter(torch.zeros(n_inducing))
        self.q_chol = nn.Parameter(torch.zeros(n_inducing, n_inducing))

    def _kuu_chol(self):
        ls, os_ = torch.exp(self.log_lengthscales), torch.exp(self.log_outputscale)
        M = self.Z.shape[0]
        eye = torch.eye(M, dtype=self.Z.dtype, device=self.Z.device)
        Kuu = os_ * (_kernel(self.Z, self.Z, ls, 1.0, self.kernel) + self.jitter * eye)
        return torch.linalg.cholesky(Kuu), ls, os_

    def qf(self, E, chol=None):
        """Marginals of ``q(f)`` at embedded points: mean, variance, ``k_ff - q_ff``."""
        L, ls, os_ = self._kuu_chol() if chol is None else chol
        Kuf = _kernel(self.Z, E, ls, os_, self.kernel)
        W = torch.linalg.solve_triangular(L, Kuf, upper=False)  # (M, n)
        mean = W.T @ self.q_mean + self.mean_const
        LS = _tri(self.q_chol)
        d = (os_ - (W * W).sum(0)).clamp_min(0.0)
        var = d + ((LS.T @ W) ** 2).sum(0)
        return mean, var.clamp_min(1e-12), d

    def kl_u(self):
        LS = _tri(self.q_chol)
        M = LS.shape[0]
        logdet = 2.0 * torch.diagonal(self.q_chol).sum()
        return 0.5 * ((LS * LS).sum() + (self.q_mean**2).sum() - M - logdet)

    def _predict_chunk(self, n, max_elements):
        """Outputs per block of :meth:`predict_moments` (memory ``n M`` each)."""
        return max(1, int(max_elements // max(1, n * self.Z.shape[0])))

    def _predict_setup(self, X):
        """What :meth:`_predict_block` needs, computed once per prediction."""
        # q(f) at new points from k = k(Z, x) alone: mean k^T L^{-T} m + c,
        # variance k_ff + k^T C k with C = L^{-T} (L_S L_S^T - I) L^{-1}.
        L, ls, os_ = self._kuu_chol()
        eye = torch.eye(L.shape[0], dtype=L.dtype, device=L.device)
        Linv = torch.linalg.solve_triangular(L, eye, upper=False)
        LS = _tri(self.q_chol)
        C = Linv.T @ (LS @ LS.T - eye) @ Linv
        return Linv.T @ self.q_mean, 0.5 * (C + C.T), ls, os_

    def _predict_block(self, X, H, setup):
        """Mean and variance of ``q(f)`` (n, pc) at every input of ``X`` for
        the outputs with latents ``H`` (pc, d_h) (no gradients)."""
        a, C, ls, os_ = setup
        n, pc = X.shape[0], H.shape[0]
        pairs = torch.cat(
            [X[:, None, :].expand(n, pc, self.d_x), H[None].expand(n, pc, self.d_h)], 2
        ).reshape(n * pc, -1)
        Kfu = _kernel(self.embed(pairs), self.Z, ls, os_, self.kernel)
        mean = Kfu @ a + self.mean_const
        var = (os_ + ((Kfu @ C) * Kfu).sum(1)).clamp_min(1e-12)
        return mean.reshape(n, pc), var.reshape(n, pc)


class _GSLVMOGP(_LatentSVGP):
    """Parameters and per-batch quantities of the GS-LVMOGP bound (private driver).

    ``Q`` separable terms, ``k((x, h), (x', h')) = sum_q s_q k_X^q(x, x')
    k_H^q(h^q, h'^q)`` (unit ARD-RBF factors, variance ``s_q``). An output's
    latent coordinates are the ``Q`` vectors ``h_p = [h_p^1; ...; h_p^Q]``,
    with one ``q(h_p)`` over all of them. Term ``q`` has its own inducing grid
    ``Z_X^q x Z_H^q``, and the inducing variables are ``u_ij = sum_q
    f_q(Z_X^q[i], Z_H^q[j])``, so that ``K_uu = sum_q K_H^q kron K_X^q``.
    ``u = L v`` with ``L`` the Cholesky factor of ``K_uu`` (``L_H kron L_X``
    for ``Q = 1``), ``q(v) = N(m, S_H kron S_X)``. Vectors over the grid run
    with the input index fastest; ``q_mean`` is the ``M_X x M_H`` matrix of
    ``m``.
    """

    def __init__(
        self,
        *,
        n_outputs,
        d_x,
        d_h,
        n_terms,
        n_inducing,
        n_inducing_latent,
        latent="full",
        likelihood="gaussian",
        zero_inflation=0.1,
        count_scale=1.0,
        n_quadrature=20,
        tighter_bound=False,
        jitter=1e-6,
    ):
        Q, m_x, m_h = n_terms, n_inducing, n_inducing_latent
        super().__init__(
            n_outputs, d_x, Q * d_h, latent, likelihood, zero_inflation, count_scale, n_quadrature,
            tighter_bound, jitter,
        )  # fmt: skip
        self.n_terms, self.d_term = Q, d_h
        self.net = None
        self.Z_x = nn.Parameter(torch.zeros(Q, m_x, d_x))
        self.Z_h = nn.Parameter(torch.zeros(Q, m_h, d_h))
        self.log_variance = nn.Parameter(torch.zeros(Q))
        self.log_ls_x = nn.Parameter(torch.zeros(Q, d_x))
        self.log_ls_h = nn.Parameter(torch.zeros(Q, d_h))
        self.q_mean = nn.Parameter(torch.zeros(m_x, m_h))
        self.q_chol_x = nn.Parameter(torch.zeros(m_x, m_x))
        self.q_chol_h = nn.Parameter(torch.zeros(m_h, m_h))

    def _kx(self, X):
        """Per term, ``s_q k_X^q(Z_X^q, x)`` at the inputs ``X``: (Q, M_X, n)."""
        var, ls_x = torch.exp(self.log_variance), torch.exp(self.log_ls_x)
        return torch.stack(
            [var[q] * _kernel(self.Z_x[q], X, ls_x[q], 1.0, "rbf") for q in range(self.n_terms)]
        )

    def _kh(self, H):
        """Per term, ``k_H^q(Z_H^q, h^q)`` at the stacked latents ``H``: (Q, M_H, n)."""
        ls_h = torch.exp(self.log_ls_h)
        Hq = H.reshape(H.shape[0], self.n_terms, self.d_term)
        return torch.stack(
            [_kernel(self.Z_h[q], Hq[:, q], ls_h[q], 1.0, "rbf") for q in range(self.n_terms)]
        )

    def _kuu_chol(self):
        """``("kron", L_X, L_H)`` for one term, ``("dense", L)`` for several."""
        var, ls_x, ls_h = (
            torch.exp(self.log_variance),
            torch.exp(self.log_ls_x),
            torch.exp(self.log_ls_h),
        )
        m_x, m_h = self.q_mean.shape
        dt, dev = self.q_mean.dtype, self.q_mean.device
        ex, eh = torch.eye(m_x, dtype=dt, device=dev), torch.eye(m_h, dtype=dt, device=dev)
        Kx = [var[q] * (_kernel(self.Z_x[q], self.Z_x[q], ls_x[q], 1.0, "rbf") + self.jitter * ex)
              for q in range(self.n_terms)]  # fmt: skip
        Kh = [_kernel(self.Z_h[q], self.Z_h[q], ls_h[q], 1.0, "rbf") + self.jitter * eh
              for q in range(self.n_terms)]  # fmt: skip
        if self.n_terms == 1:
            return "kron", torch.linalg.cholesky(Kx[0]), torch.linalg.cholesky(Kh[0])
        # A sum of Kronecker products is conditioned like the products of
        # its factors' condition numbers: its diagonal gets a relative jitter
        # of at least sqrt(eps) of the working precision (1.5e-8 in float64,
        # 3.5e-4 in float32, where the factors' 1e-6 is not enough).
        K = sum(torch.kron(Kh[q], Kx[q]) for q in range(self.n_terms))
        j = max(self.jitter, math.sqrt(torch.finfo(dt).eps))
        K = K + j * torch.diagonal(K).mean() * torch.eye(K.shape[0], dtype=dt, device=dev)
        return "dense", torch.linalg.cholesky(K)

    def qf(self, E, chol=None):
        """Marginals of ``q(f)`` at pairs ``E = [x; h]``: mean, variance, ``k_ff - q_ff``."""
        chol = self._kuu_chol() if chol is None else chol
        kx, kh = self._kx(E[:, : self.d_x]), self._kh(E[:, self.d_x :])
        kff = torch.exp(self.log_variance).sum()
        Lsx, Lsh = _tri(self.q_chol_x), _tri(self.q_chol_h)
        if chol[0] == "kron":
            _, Lx, Lh = chol
            b = torch.linalg.solve_triangular(Lx, kx[0], upper=False)  # (M_X, n)
            a = torch.linalg.solve_triangular(Lh, kh[0], upper=False)  # (M_H, n)
            mean = ((self.q_mean.T @ b) * a).sum(0)
            q_ff = (a * a).sum(0) * (b * b).sum(0)
            quad = ((Lsh.T @ a) ** 2).sum(0) * ((Lsx.T @ b) ** 2).sum(0)
        else:
            m_x, m_h = self.q_mean.shape
            n = E.shape[0]
            Kuf = (kh[:, :, None, :] * kx[:, None, :, :]).sum(0).reshape(m_h * m_x, n)
            W = torch.linalg.solve_triangular(chol[1], Kuf, upper=False)
            mean = W.T @ self.q_mean.T.reshape(-1)
            q_ff = (W * W).sum(0)
            T = torch.einsum("ja,ib,jin->abn", Lsh, Lsx, W.reshape(m_h, m_x, n))
            quad = (T * T).sum((0, 1))
        d = (kff - q_ff).clamp_min(0.0)
        return mean + self.mean_const, (d + quad).clamp_min(1e-12), d

    def kl_u(self):
        """The whitened Kronecker KL, ``KL(q(v) || N(0, I))``:
        ``1/2 [tr S_H tr S_X + |m|^2 - M - M_X log|S_H| - M_H log|S_X|]``."""
        m_x, m_h = self.q_mean.shape
        Lsx, Lsh = _tri(self.q_chol_x), _tri(self.q_chol_h)
        logdet_x = 2.0 * torch.diagonal(self.q_chol_x).sum()
        logdet_h = 2.0 * torch.diagonal(self.q_chol_h).sum()
        return 0.5 * (
            (Lsh * Lsh).sum() * (Lsx * Lsx).sum()
            + (self.q_mean**2).sum()
            - m_x * m_h
            - m_x * logdet_h
            - m_h * logdet_x
        )

    def _predict_chunk(self, n, max_elements):
        per_output = n if self.n_terms == 1 else 2 * n * self.q_mean.shape[1] * self.n_terms
        return max(1, int(max_elements // max(1, per_output)))

    def _predict_setup(self, X):
        """The inputs' side of :meth:`qf`'s algebra, once per prediction.

        One term: ``b = L_X^{-1} kx`` per input, so that a pair (input,
        output) costs ``O(1)`` after the outputs' ``a = L_H^{-1} kh`` (the
        whitened ``W`` of a pair is ``a kron b``). Several terms: with ``G =
        L^{-1}`` over the grid, ``T_n[:, (q, j)] = sum_i G[:, (j, i)] kx[q,
        i, n]`` (``M x Q M_H``), so that ``W = T_n k_p`` with ``k_p`` the
        stacked ``kh[q, :, p]``. Then ``|W|^2 = |R_n k_p|^2`` with ``R_n``
        the triangular factor of a QR decomposition of ``T_n`` (as stable
        as forming ``W``, and ``O((Q M_H)^2)`` a pair instead of ``O(M Q
        M_H)``); likewise for ``L_S^T W`` with the factor of ``L_S^T T_n``,
        and ``m^T T_n`` gives the mean. No inverse of ``K_uu`` is formed.
        """
        chol = self._kuu_chol()
        kx = self._kx(X)
        kff = torch.exp(self.log_variance).sum()
        if chol[0] == "kron":
            _, Lx, Lh = chol
            b = torch.linalg.solve_triangular(Lx, kx[0], upper=False)  # (M_X, n)
            bb = (b * b).sum(0)
            sb = ((_tri(self.q_chol_x).T @ b) ** 2).sum(0)
            return "kron", Lh, b.T @ self.q_mean, bb, sb, kff
        L = chol[1]
        m_x, m_h = self.q_mean.shape
        n, Q = X.shape[0], self.n_terms
        eye = torch.eye(L.shape[0], dtype=L.dtype, device=L.device)
        G = torch.linalg.solve_triangular(L, eye, upper=False).reshape(-1, m_h, m_x)
        T = torch.einsum("aji,qin->naqj", G, kx).reshape(n, -1, Q * m_h)  # (n, M, Q M_H)
        LS = torch.kron(_tri(self.q_chol_h), _tri(self.q_chol_x))
        R = torch.cat(
            [torch.linalg.qr(T, mode="r")[1], torch.linalg.qr(LS.T @ T, mode="r")[1]], dim=1
        )  # (n, 2 Q M_H, Q M_H)
        return "dense", R, self.q_mean.T.reshape(-1) @ T, kff

    def _predict_block(self, X, H, setup):
        kh = self._kh(H)
        if setup[0] == "kron":
            _, Lh, bM, bb, sb, kff = setup
            a = torch.linalg.solve_triangular(Lh, kh[0], upper=False)  # (M_H, pc)
            mean = bM @ a
            q_ff = bb[:, None] * (a * a).sum(0)[None]
            quad = sb[:, None] * ((_tri(self.q_chol_h).T @ a) ** 2).sum(0)[None]
        else:
            _, R, mT, kff = setup
            n, two_k, k = R.shape
            kp = kh.reshape(-1, kh.shape[-1])  # (Q M_H, pc), term by term
            mean = mT @ kp
            Rk = (R.reshape(n * two_k, k) @ kp).reshape(n, two_k, -1) ** 2
            q_ff = Rk[:, : two_k // 2].sum(1)  # |W|^2
            quad = Rk[:, two_k // 2 :].sum(1)  # |L_S^T W|^2
        var = (kff - q_ff).clamp_min(0.0) + quad
        return mean + self.mean_const, var.clamp_min(1e-12)


def _train_svi(
    module, X_t, Y_t, O_t, *, n_obs, n_epochs, batch_size, output_batch_size, lr,
    sample_latents, seed, verbose, desc, callback=None,
):  # fmt: skip
    """Maximise ``module``'s bound by Adam on minibatches of inputs times outputs.

    Every epoch visits every (input batch, output batch) pair once, in a
    random order drawn from a generator seeded with ``seed``; a batch
    without an observed entry is skipped. With ``sample_latents`` each step
    draws one ``eps`` of ``q(H)`` for its outputs. The data term of a batch
    of ``b`` inputs and ``p`` outputs is weighted by ``N P / (b p)``, and the
    loss is the negative bound per observed entry (``n_obs``). After every
    step ``module.clamp_()`` restores the network's Lipschitz bound, then
    ``callback(module, n_iter)`` runs. A progress bar over the epochs is
    shown on standard error when ``verbose``.

    Returns ``(loss_curve, n_iter)``: the mean loss of each epoch's steps and
    the number of steps.
    """
    N, P = Y_t.shape
    d_h, dtype, device = module.d_h, X_t.dtype, X_t.device
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    b, p = min(batch_size, N), min(output_batch_size, P)
    loss_curve = []
    n_iter = 0
    bar = progress_bar(range(n_epochs), verbose=verbose, desc=desc, unit="epoch")
    for _ in bar:
        losses = []
        for nb in torch.randperm(N, generator=gen).split(b):
            nb = nb.to(device)
            for pb in torch.randperm(P, generator=gen).split(p):
                eps = None
                if sample_latents:
                    eps = torch.randn(pb.shape[0], d_h, generator=gen, dtype=dtype)
                    eps = eps.to(device)
                pb = pb.to(device)
                obs = O_t[nb[:, None], pb[None, :]]
                if not bool(obs.any()):
                    continue
                scale = N * P / (nb.shape[0] * pb.shape[0])
                try:
                    elbo = module.elbo(X_t[nb], Y_t[nb[:, None], pb[None, :]], obs, pb, scale, eps)
                except torch.linalg.LinAlgError as exc:
                    raise ValueError(
                        "the inducing covariance lost positive definiteness during "
                        "training; try a larger jitter, dtype='float64' or a smaller "
                        "learning_rate"
                    ) from exc
                loss = -elbo / n_obs
                if not torch.isfinite(loss):
                    raise ValueError(
                        f"the bound became {float(loss)} during training; the training "
                        "diverged: lower learning_rate or raise jitter"
                    )
                opt.zero_grad()
                loss.backward()
                opt.step()
                module.clamp_()
                n_iter += 1
                losses.append(float(loss.detach()))
                if callback is not None:
                    callback(module, n_iter)
        loss_curve.append(float(np.mean(losses)) if losses else float("nan"))
        bar.set_postfix(loss=f"{loss_curve[-1]:.4f}")
    bar.close()
    if loss_curve and not np.isfinite(loss_curve[-1]):
        raise ValueError(
            "the bound became non-finite during training; the training diverged: lower "
            "learning_rate or raise jitter"
        )
    return loss_curve, n_iter
