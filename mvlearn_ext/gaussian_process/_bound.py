"""The LVMOGP variational bound with missing data and its exact gradient (private driver).

Model (Dai, Alvarez & Lawrence, NeurIPS 2017): ``f(x, h) ~ GP(0, k_X(x, x')
k_H(h, h'))`` with ARD-RBF factors (``k_X`` carries the variance, ``k_H`` has
unit variance), ``y_np = f(x_n, h_p) + eps``, ``eps ~ N(0, noise)``. Each
output ``p`` has ``q(h_p) = N(mu_p, diag S_p)`` (or a point ``mu_p``), prior
``N(0, I)``. Inducing variables ``U`` (``M_X x M_H``) live on the grid
``Z_X x Z_H``, whitened: ``U = L_X U~ L_H^T`` with ``K_X = L_X L_X^T``,
``K_H = L_H L_H^T`` and ``q(vec U~) = N(vec M~, S~_H kron S~_X)``.

For an observed entry, with ``a_n = L_X^{-1} k_X(Z_X, x_n)`` and
``g_n = (M~ L_H^{-1})^T a_n``:

* ``E f_np = g_n^T psi1_p``,
* ``E f_np^2 = g_n^T Psi2_p g_n + (a_n^T S~_X a_n) <Psi2_p, L_H^{-T} S~_H L_H^{-1}>
  + k_X(x_n, x_n) - |a_n|^2 <Psi2_p, K_H^{-1}>``,

with the per-output Psi-statistics of ``q(h_p)``. Summed over the observed
entries only, the data term depends on the data through the per-output
statistics ``sum g g^T``, ``sum y g`` and ``sum (a^T S~_X a, |a|^2)`` (the
compiled :func:`~mvlearn_ext._lib._kernels.masked_output_stats`;
:func:`elbo_and_grad`, the reference route), or equivalently through the
per-input statistics ``R_n = sum_{p observed at n} Psi2_p`` and
``sum_p y_np psi1_p`` (:func:`profiled_elbo_and_grad`, the route of the fit,
which also puts ``M~`` at its optimum in the same pass). Either way the cost
is linear in the observed entries, never (n_outputs)^2. The KL of the
whitened Kronecker ``q(U)`` is ``1/2 [tr S~_H tr S~_X + |M~|^2 - M_X M_H
- M_X log|S~_H| - M_H log|S~_X|]``.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from scipy.linalg import solve_triangular

from mvlearn_ext._lib import _kernels as kern

LOG_2PI = np.log(2.0 * np.pi)


# ------------------------------------------------------------ parameters


class Packer:
    """Flat vector <-> named parameter arrays; ``tri`` entries store a lower triangle."""

    def __init__(self, spec):
        self.spec = spec  # list of (name, shape, kind) with kind in {"full", "tri"}
        self.slices, start = {}, 0
        for name, shape, kind in spec:
            size = shape[0] * (shape[0] + 1) // 2 if kind == "tri" else int(np.prod(shape))
            self.slices[name] = slice(start, start + size)
            start += size
        self.size = start

    def unpack(self, theta):
        out = {}
        for name, shape, kind in self.spec:
            v = theta[self.slices[name]]
            if kind == "tri":
                T = np.zeros(shape)
                T[np.tril_indices(shape[0])] = v
                out[name] = T
            else:
                out[name] = v.reshape(shape)
        return out

    def pack(self, params):
        theta = np.empty(self.size)
        for name, shape, kind in self.spec:
            v = np.asarray(params[name], dtype=np.float64)
            theta[self.slices[name]] = v[np.tril_indices(shape[0])] if kind == "tri" else v.ravel()
        return theta


def make_packer(n_outputs, d_x, d_h, m_x, m_h, gaussian_latent):
    spec = [
        ("log_variance", (1,), "full"),
        ("log_ls_x", (d_x,), "full"),
        ("log_ls_h", (d_h,), "full"),
        ("log_noise", (1,), "full"),
        ("Z_x", (m_x, d_x), "full"),
        ("Z_h", (m_h, d_h), "full"),
        ("M", (m_x, m_h), "full"),
        ("L_sx", (m_x, m_x), "tri"),
        ("L_sh", (m_h, m_h), "tri"),
        ("mu", (n_outputs, d_h), "full"),
    ]
    if gaussian_latent:
        spec.append(("log_S", (n_outputs, d_h), "full"))
    return Packer(spec)


#: Names of the hyper-parameters and inducing inputs (held fixed in the
#: first, variational-only phase of the optimisation, as GPy's optimize_auto).
HYPER = ("log_variance", "log_ls_x", "log_ls_h", "Z_x", "Z_h", "mu", "log_S")


# ---------------------------------------------------------------- kernels


def rbf(Z1, Z2, ls):
    d = (Z1[:, None, :] - Z2[None, :, :]) / ls
    return np.exp(-0.5 * np.einsum("ijq,ijq->ij", d, d))


def rbf_vjp(Kbar, K, Z1, Z2, ls):
    """Gradients of ``<Kbar, K>`` for ``K = c rbf(Z1, Z2, ls)``: (Z1bar, Z2bar, log-ls bar)."""
    W = Kbar * K
    diff = Z1[:, None, :] - Z2[None, :, :]
    common = W[:, :, None] * diff / ls**2
    lsbar = np.einsum("ij,ijq->q", W, diff**2) / ls**2  # d/d log ls
    return -common.sum(axis=1), common.sum(axis=0), lsbar


def chol_vjp(L, Lbar):
    """Symmetric gradient wrt ``K`` of a function of ``L = chol(K)`` (Murray, 2016)."""
    Phi = np.tril(L.T @ Lbar)
    Phi[np.diag_indices_from(Phi)] *= 0.5
    X1 = solve_triangular(L, Phi, lower=True, trans="T")  # L^{-T} Phi
    Kbar = solve_triangular(L, X1.T, lower=True, trans="T").T  # L^{-T} Phi L^{-1}
    return 0.5 * (Kbar + Kbar.T)


def tri_factor(raw):
    """Lower-triangular factor with a positive (exponentiated) diagonal."""
    L = np.tril(raw, -1)
    L[np.diag_indices_from(L)] = np.exp(np.diag(raw))
    return L


# ------------------------------------------------------------------ bound


class Data:
    """What the bound needs from the (standardised) data.

    ``Y0`` holds the data with 0 at the missing entries, ``missing`` the
    mask. The per-input statistics of :func:`profiled_elbo_and_grad` are
    sums over the outputs observed at an input; with fewer missing than
    observed entries they are full sums (BLAS) minus sums over the
    *missing* entries (``complement``), so the sparse loops visit only
    those. ``by_output`` and ``by_input`` are the CSR index of the visited
    entries (the missing ones under the complement route, else the observed
    ones) grouped by output and by input: ``(indptr, indices)``, computed
    once, since they do not depend on the parameters. ``complement=False``
    forces the direct route (the tests compare the two).
    """

    def __init__(self, X, Yt, complement=None):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        Yt = np.asarray(Yt, dtype=np.float64)  # (P, N), NaN = missing
        self.missing = np.isnan(Yt)
        self.n_obs = int(Yt.size - np.count_nonzero(self.missing))
        if complement is None:
            complement = 2 * self.n_obs > Yt.size
        self.complement = bool(complement)
        self.Y0 = np.where(self.missing, 0.0, Yt)
        self.count = Yt.shape[1] - np.count_nonzero(self.missing, axis=1).astype(np.float64)
        self.ysq = np.einsum("pn,pn->p", self.Y0, self.Y0)
        rows, cols = np.nonzero(self.missing if self.complement else ~self.missing)
        P, N = Yt.shape
        self.by_output = (_indptr(rows, P), cols.astype(np.int64))
        order = np.argsort(cols, kind="stable")
        self.by_input = (_indptr(cols, N), rows[order].astype(np.int64))

    @cached_property
    def Yt(self):
        """The targets (P, N) with NaN at the missing entries (old route, tests)."""
        return np.ascontiguousarray(np.where(self.missing, np.nan, self.Y0))

    @cached_property
    def Ymiss(self):
        """0 at a missing entry, NaN at an observed one (old complement route)."""
        return np.ascontiguousarray(np.where(self.missing, 0.0, np.nan))


def _indptr(keys, n):
    out = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=out[1:])
    return out


def _stats(data, G, W, n_threads):
    """The compiled ``masked_output_stats`` over the observed entries (either route)."""
    if not data.complement:
        return kern.masked_output_stats(data.Yt, G, W, n_threads=n_threads)
    Dm, _, Cm, _, _ = kern.masked_output_stats(data.Ymiss, G, W, n_threads=n_threads)
    D = (G.T @ G)[None, :, :] - Dm
    C = W.sum(axis=0)[None, :] - Cm
    return D, data.Y0 @ G, C, data.count, data.ysq


def _stats_vjp(data, G, J, Dbar, Ebar, Cbar, n_threads):
    """VJP of :func:`_stats` wrt ``(G, W)``."""
    if not data.complement:
        return kern.masked_output_stats_vjp(data.Yt, G, J, Dbar, Ebar, Cbar, n_threads=n_threads)
    Gm, Wm = kern.masked_output_stats_vjp(data.Ymiss, G, J, Dbar, None, Cbar, n_threads=n_threads)
    Ds = Dbar.sum(axis=0)
    Gbar = G @ (Ds + Ds.T) - Gm + data.Y0.T @ Ebar
    Wbar = np.broadcast_to(Cbar.sum(axis=0), (G.shape[0], J)) - Wm
    return Gbar, Wbar


def _state(p, data, jitter):
    """Forward quantities shared by the bound and the predictions."""
    s = {}
    s["var"] = float(np.exp(p["log_variance"][0]))
    s["ls_x"], s["ls_h"] = np.exp(p["log_ls_x"]), np.exp(p["log_ls_h"])
    s["Kx_unit"] = rbf(p["Z_x"], p["Z_x"], s["ls_x"])
    m_x, m_h = p["M"].shape
    s["Kuu_x"] = s["var"] * (s["Kx_unit"] + jitter * np.eye(m_x))
    s["Lx"] = np.linalg.cholesky(s["Kuu_x"])
    s["Kh_unit"] = rbf(p["Z_h"], p["Z_h"], s["ls_h"])
    s["Kh"] = s["Kh_unit"] + jitter * np.eye(m_h)
    s["Lh"] = np.linalg.cholesky(s["Kh"])
    s["Lhinv"] = solve_triangular(s["Lh"], np.eye(m_h), lower=True)
    s["Lsx"], s["Lsh"] = tri_factor(p["L_sx"]), tri_factor(p["L_sh"])
    s["Sx"], s["Sh"] = s["Lsx"] @ s["Lsx"].T, s["Lsh"] @ s["Lsh"].T
    s["Hm"] = p["M"] @ s["Lhinv"]  # (M_X, M_H)
    s["BS"] = s["Lhinv"].T @ s["Sh"] @ s["Lhinv"]
    s["Khinv"] = s["Lhinv"].T @ s["Lhinv"]
    return s


def _input_side(p, s, X):
    Kzx = s["var"] * rbf(p["Z_x"], X, s["ls_x"])
    At = solve_triangular(s["Lx"], Kzx, lower=True)  # (M_X, N)
    A = np.ascontiguousarray(At.T)
    G = A @ s["Hm"]
    AS = A @ s["Sx"]
    W = np.stack([np.einsum("nk,nk->n", AS, A), np.einsum("nk,nk->n", A, A)], axis=1)
    return Kzx, At, A, G, AS, W


def _latent_variances(p, gaussian):
    return np.exp(p["log_S"]) if gaussian else np.zeros_like(p["mu"])


def _psi(p, s, n_threads):
    """``S`` (the latent variances) and the Psi-statistics of ``q(H)``."""
    S = _latent_variances(p, "log_S" in p)
    psi1, psi2 = kern.rbf_psi_stats(p["mu"], S, p["Z_h"], s["ls_h"], n_threads=n_threads)
    return S, psi1, psi2


def _backprop(g, p, s, X, inputs, S, cot, n_threads):
    """Accumulate into ``g`` the gradient below the cotangents of ``G = A Hm``,
    ``W = (a^T S~_X a, |a|^2)``, the Psi-statistics, ``BS`` and ``K_H^{-1}``
    (``cot``: ``Gbar, Wbar, psi1bar, psi2bar, BSbar, Khinvbar``)."""
    Kzx, A, AS = inputs
    Gbar, Wbar, psi1bar, psi2bar, BSbar, Khinvbar = cot
    m_x, m_h = p["M"].shape
    tr_sx, tr_sh = np.trace(s["Sx"]), np.trace(s["Sh"])
    rbar, qbar = Wbar[:, 0], Wbar[:, 1]
    Abar = Gbar @ s["Hm"].T + 2.0 * rbar[:, None] * AS + 2.0 * qbar[:, None] * A
    Hmbar = A.T @ Gbar
    Sxbar = A.T @ (rbar[:, None] * A)
    Lhinv = s["Lhinv"]
    g["M"] = Hmbar @ Lhinv.T - p["M"]
    Lhinvbar = (
        p["M"].T @ Hmbar + s["Sh"] @ Lhinv @ (BSbar + BSbar.T) + Lhinv @ (Khinvbar + Khinvbar.T)
    )
    Shbar = Lhinv @ BSbar @ Lhinv.T
    for key, Sbar_, L, other_tr, m_other in (
        ("L_sx", Sxbar, s["Lsx"], tr_sh, m_h),
        ("L_sh", Shbar, s["Lsh"], tr_sx, m_x),
    ):
        Lbar = np.tril((Sbar_ + Sbar_.T) @ L - other_tr * L)
        Lbar[np.diag_indices_from(Lbar)] = np.diag(Lbar) * np.diag(L) + m_other
        g[key] = Lbar
    # Lhinv = Lh^{-1}:  Lhbar = -Lhinv^T Lhinvbar Lhinv^T  (lower part)
    Lhbar = np.tril(-Lhinv.T @ Lhinvbar @ Lhinv.T)
    Khbar = chol_vjp(s["Lh"], Lhbar)
    # A^T = Lx^{-1} Kzx
    Kzxbar = solve_triangular(s["Lx"], Abar.T, lower=True, trans="T")
    Lxbar = np.tril(-Kzxbar @ A)
    Kuuxbar = chol_vjp(s["Lx"], Lxbar)
    # kernels
    z1, _, l1 = rbf_vjp(Kzxbar, Kzx, p["Z_x"], X, s["ls_x"])
    z2a, z2b, l2 = rbf_vjp(Kuuxbar, s["var"] * s["Kx_unit"], p["Z_x"], p["Z_x"], s["ls_x"])
    g["Z_x"] += z1 + z2a + z2b
    g["log_ls_x"] += l1 + l2
    g["log_variance"][0] += np.sum(Kzxbar * Kzx) + np.sum(Kuuxbar * s["Kuu_x"])
    z3a, z3b, l3 = rbf_vjp(Khbar, s["Kh_unit"], p["Z_h"], p["Z_h"], s["ls_h"])
    mubar, Sbar, Zhbar, lshbar = kern.rbf_psi_stats_vjp(
        p["mu"], S, p["Z_h"], s["ls_h"], psi1bar, psi2bar, n_threads=n_threads
    )
    g["Z_h"] += z3a + z3b + Zhbar
    g["log_ls_h"] += l3 + lshbar * s["ls_h"]
    g["mu"] = mubar - p["mu"]
    if "log_S" in p:
        g["log_S"] = Sbar * S - 0.5 * (S - 1.0)


def _flatten(g, packer):
    out = np.empty(packer.size)
    for name, shape, kind in packer.spec:
        v = g[name]
        out[packer.slices[name]] = v[np.tril_indices(shape[0])] if kind == "tri" else v.ravel()
    return out


def elbo_and_grad(theta, packer, data, *, jitter=1e-6, n_threads=1, grad=True):
    """The bound (sum over observed entries) and its gradient wrt ``theta``."""
    p = packer.unpack(theta)
    gaussian = "log_S" in p
    s = _state(p, data, jitter)
    Kzx, At, A, G, AS, W = _input_side(p, s, data.X)
    Dst, E, C, cnt, ysq = _stats(data, G, W, n_threads)
    S, psi1, psi2 = _psi(p, s, n_threads)
    P2 = psi2.reshape(psi2.shape[0], -1)
    a_p = P2 @ s["BS"].ravel()
    b_p = P2 @ s["Khinv"].ravel()
    n_obs = data.n_obs
    var, noise = s["var"], float(np.exp(p["log_noise"][0]))
    beta = 1.0 / noise
    T1, T2 = ysq.sum(), np.sum(psi1 * E)
    T3 = float(P2.ravel() @ Dst.ravel())
    T4, T6 = C[:, 0] @ a_p, C[:, 1] @ b_p
    quad = T1 - 2.0 * T2 + T3 + T4 + var * n_obs - T6
    ll = -0.5 * n_obs * (LOG_2PI + np.log(noise)) - 0.5 * beta * quad

    m_x, m_h = p["M"].shape
    tr_sx, tr_sh = np.trace(s["Sx"]), np.trace(s["Sh"])
    ld_sx, ld_sh = 2.0 * np.sum(np.diag(p["L_sx"])), 2.0 * np.sum(np.diag(p["L_sh"]))
    kl_u = 0.5 * (tr_sh * tr_sx + np.sum(p["M"] ** 2) - m_x * m_h - m_x * ld_sh - m_h * ld_sx)
    if gaussian:
        kl_h = 0.5 * np.sum(S + p["mu"] ** 2 - 1.0 - p["log_S"])
    else:  # point estimate: the (negative) log prior, up to a constant
        kl_h = 0.5 * np.sum(p["mu"] ** 2)
    elbo = float(ll - kl_u - kl_h)
    if not grad:
        return elbo

    g = {name: np.zeros(shape) for name, shape, _ in packer.spec}
    c = -0.5 * beta
    g["log_noise"][0] = -0.5 * n_obs + 0.5 * beta * quad
    g["log_variance"][0] += c * n_obs * var
    Ebar = beta * psi1
    psi1bar = beta * E
    Dbar = c * psi2
    psi2bar = c * (Dst + C[:, 0, None, None] * s["BS"] - C[:, 1, None, None] * s["Khinv"])
    Cbar = np.stack([c * a_p, -c * b_p], axis=1)
    BSbar = c * (C[:, 0] @ P2).reshape(m_h, m_h)
    Khinvbar = -c * (C[:, 1] @ P2).reshape(m_h, m_h)

    Gbar, Wbar = _stats_vjp(data, G, 2, Dbar, Ebar, Cbar, n_threads)
    cot = (Gbar, Wbar, psi1bar, psi2bar, BSbar, Khinvbar)
    _backprop(g, p, s, data.X, (Kzx, A, AS), S, cot, n_threads)
    gflat = _flatten(g, packer)
    return elbo, gflat


def optimal_mean(theta, packer, data, *, jitter=1e-6, n_threads=1):
    """The whitened ``q(U)`` mean ``M~`` that maximises the bound, all else fixed.

    The bound is quadratic in ``M~``. With ``a_n = L_X^{-1} k_X(Z_X, x_n)``,
    ``b_p = L_H^{-1} psi1_p``, ``B_p = L_H^{-1} Psi2_p L_H^{-T}`` and
    ``A_p = sum_{n observed in p} a_n a_n^T``, its stationarity condition is

        beta sum_p A_p M~ B_p + M~ = beta sum_p sum_{n observed} y_np a_n b_p^T,

    a linear system of size ``M_X M_H`` with matrix
    ``beta sum_p B_p kron A_p + I`` (symmetric positive definite). Building
    it costs O(n_observed M_X^2 + P M_X^2 M_H^2) (minus-the-missing route as
    in :class:`Data`), solving it O((M_X M_H)^3). At ``M~ = optimal_mean``
    the gradient of the bound wrt ``M~`` vanishes, so the gradient of the
    bound maximised over ``M~`` wrt the other parameters is the partial
    gradient of :func:`elbo_and_grad` there (envelope theorem).
    """
    p = packer.unpack(theta)
    s = _state(p, data, jitter)
    _, _, A, _, _, _ = _input_side(p, s, data.X)
    S, psi1, psi2 = _psi(p, s, n_threads)
    Lhinv = s["Lhinv"]
    m_x, m_h = p["M"].shape
    Bv = psi1 @ Lhinv.T  # (P, M_H) rows b_p
    Bp = np.einsum("ij,pjk,lk->pil", Lhinv, psi2, Lhinv, optimize=True)  # (P, M_H, M_H)
    Ap, Ea, _, _, _ = _stats(data, A, np.zeros((A.shape[0], 1)), n_threads)
    beta = float(np.exp(-p["log_noise"][0]))
    # H[(i, j), (k, l)] = sum_p A_p[i, k] B_p[j, l], vec column-major: index i + M_X j
    Hs = Ap.reshape(-1, m_x * m_x).T @ Bp.reshape(-1, m_h * m_h)  # [(i, k), (j, l)]
    H = Hs.reshape(m_x, m_x, m_h, m_h).transpose(2, 0, 3, 1).reshape(m_x * m_h, m_x * m_h)
    H = beta * (0.5 * (H + H.T))
    H[np.diag_indices_from(H)] += 1.0
    R = beta * (Ea.T @ Bv)  # (M_X, M_H)
    x = np.linalg.solve(H, R.T.ravel())
    return x.reshape(m_h, m_x).T


def _sym_maps(m):
    """Column maps between flattened symmetric ``m x m`` matrices and their
    upper triangles: ``full[:, upper]`` packs, ``packed[:, to_full]`` unpacks."""
    iu = np.triu_indices(m)
    pos = np.zeros((m, m), dtype=np.intp)
    pos[iu] = np.arange(iu[0].size)
    return iu[0] * m + iu[1], np.maximum(pos, pos.T).ravel()


def _sym_pack(V, m):
    """Rows of flattened symmetric ``m x m`` matrices -> their upper triangles."""
    return np.take(V, _sym_maps(m)[0], axis=1)


def _sym_unpack(T, m):
    return np.take(T, _sym_maps(m)[1], axis=1)


def _masked_sum(data, V, by, n_threads):
    """Sums of the rows of ``V`` over the observed entries, grouped by ``by``.

    ``by="input"``: ``out[n] = sum_{p observed at n} V[p]``; ``by="output"``:
    ``out[p] = sum_{n observed in p} V[n]``. Under the complement route the
    full sum minus the sum over the missing entries.
    """
    index = data.by_input if by == "input" else data.by_output
    part = kern.pattern_sum(*index, V, n_threads=n_threads)
    return V.sum(axis=0)[None, :] - part if data.complement else part


def _input_stats(data, psi1, P2, n_threads):
    """Per-input statistics over the outputs observed at each input.

    ``R[n] = sum_{p observed at n} Psi2_p`` (flattened, N x M_H^2; summed on
    the upper triangles, the matrices are symmetric) and
    ``Yp1[n] = sum_p y_np psi1_p`` (N x M_H; ``Y0`` is 0 at a missing entry).
    """
    m_h = psi1.shape[1]
    R = _sym_unpack(_masked_sum(data, _sym_pack(P2, m_h), "input", n_threads), m_h)
    return R, data.Y0.T @ psi1


def _output_sums(data, Rbar, m_h, n_threads):
    """``out[p] = sum_{n observed in p} Rbar[n]`` for symmetric ``Rbar`` rows
    (the transpose of :func:`_input_stats`)."""
    return _sym_unpack(_masked_sum(data, _sym_pack(Rbar, m_h), "output", n_threads), m_h)


def profiled_elbo_and_grad(theta, packer, data, *, jitter=1e-6, n_threads=1, grad=True):
    """The bound maximised over the ``q(U)`` mean, its gradient, and that mean.

    Equal to :func:`elbo_and_grad` at ``M~ =`` :func:`optimal_mean` (the
    ``M`` entries of ``theta`` are ignored), computed in one pass from
    per-*input* statistics: the data term touches the data only through
    ``R_n = sum_{p observed at n} Psi2_p`` and ``sum_p y_np psi1_p``
    (:func:`_input_stats`), so that with ``a_n``, ``g_n = Hm^T a_n``

        sum_{(n, p) observed} E f_np^2 = sum_n [ g_n^T R_n g_n
            + (a_n^T S~_X a_n) <R_n, BS> + k_X(x_n, x_n) c_n - |a_n|^2 <R_n, K_H^{-1}> ],

    with ``c_n`` the number of outputs observed at input ``n``, and the
    linear system of :func:`optimal_mean` has the matrix
    ``beta sum_n (L_H^{-1} R_n L_H^{-T}) kron a_n a_n^T + I``. The gradient
    wrt ``Psi2_p`` is the sum of the cotangents of ``R_n`` over the inputs
    observed in ``p`` (:func:`_output_sums`). Per evaluation this costs
    O(n_visited M_H^2) in the sparse loops (the missing entries under the
    complement route), O(N P M_H) in two dense products with ``Y0``, and
    O(N M_X^2 M_H^2 + P M_H^2 D_H + (M_X M_H)^3): no per-output statistic of
    size ``M_X^2`` and no loop over all ``N P`` entries. The gradient wrt
    ``M~`` is the partial gradient at the optimum, zero up to round-off
    (envelope theorem); it is returned as computed.

    Returns
    -------
    elbo : float
    grad : ndarray of shape (packer.size,), only if ``grad``
    M : ndarray of shape (M_X, M_H)
        The optimal whitened mean (``(elbo, M)`` when ``grad=False``).
    """
    p = packer.unpack(theta)
    gaussian = "log_S" in p
    s = _state(p, data, jitter)
    Kzx, _, A, _, AS, W = _input_side(p, s, data.X)
    S, psi1, psi2 = _psi(p, s, n_threads)
    P_, m_h = psi1.shape
    m_x = A.shape[1]
    N = A.shape[0]
    P2 = psi2.reshape(P_, -1)
    R, Yp1 = _input_stats(data, psi1, P2, n_threads)
    noise = float(np.exp(p["log_noise"][0]))
    beta = 1.0 / noise
    Lhinv = s["Lhinv"]
    # optimal mean: beta sum_n B_n kron a_n a_n^T + I, B_n = Lhinv R_n Lhinv^T
    Bn = (Lhinv @ R.reshape(N, m_h, m_h) @ Lhinv.T).reshape(N, -1)
    AA = (A[:, :, None] * A[:, None, :]).reshape(N, -1)
    Hs = AA.T @ Bn  # [(i, k), (j, l)]
    H = Hs.reshape(m_x, m_x, m_h, m_h).transpose(2, 0, 3, 1).reshape(m_x * m_h, m_x * m_h)
    H = beta * (0.5 * (H + H.T))
    H[np.diag_indices_from(H)] += 1.0
    rhs = beta * (A.T @ (Yp1 @ Lhinv.T))  # (M_X, M_H)
    M = np.linalg.solve(H, rhs.T.ravel()).reshape(m_h, m_x).T
    p["M"] = M
    s["Hm"] = M @ Lhinv
    G = A @ s["Hm"]
    RG = np.einsum("nij,nj->ni", R.reshape(N, m_h, m_h), G)
    alpha = R @ s["BS"].ravel()
    gam = R @ s["Khinv"].ravel()
    n_obs = data.n_obs
    var = s["var"]
    T1, T2 = data.ysq.sum(), np.sum(G * Yp1)
    T3 = np.sum(G * RG)
    T4, T6 = W[:, 0] @ alpha, W[:, 1] @ gam
    quad = T1 - 2.0 * T2 + T3 + T4 + var * n_obs - T6
    ll = -0.5 * n_obs * (LOG_2PI + np.log(noise)) - 0.5 * beta * quad
    tr_sx, tr_sh = np.trace(s["Sx"]), np.trace(s["Sh"])
    ld_sx, ld_sh = 2.0 * np.sum(np.diag(p["L_sx"])), 2.0 * np.sum(np.diag(p["L_sh"]))
    kl_u = 0.5 * (tr_sh * tr_sx + np.sum(M**2) - m_x * m_h - m_x * ld_sh - m_h * ld_sx)
    if gaussian:
        kl_h = 0.5 * np.sum(S + p["mu"] ** 2 - 1.0 - p["log_S"])
    else:
        kl_h = 0.5 * np.sum(p["mu"] ** 2)
    elbo = float(ll - kl_u - kl_h)
    if not grad:
        return elbo, M

    g = {name: np.zeros(shape) for name, shape, _ in packer.spec}
    c = -0.5 * beta
    g["log_noise"][0] = -0.5 * n_obs + 0.5 * beta * quad
    g["log_variance"][0] += c * n_obs * var
    Gbar = 2.0 * c * (RG - Yp1)
    Wbar = np.stack([c * alpha, -c * gam], axis=1)
    Rbar = c * (
        (G[:, :, None] * G[:, None, :]).reshape(N, -1)
        + W[:, :1] * s["BS"].ravel()[None, :]
        - W[:, 1:] * s["Khinv"].ravel()[None, :]
    )
    psi2bar = _output_sums(data, Rbar, m_h, n_threads).reshape(P_, m_h, m_h)
    psi1bar = beta * (data.Y0 @ G)
    BSbar = c * (W[:, 0] @ R).reshape(m_h, m_h)
    Khinvbar = -c * (W[:, 1] @ R).reshape(m_h, m_h)
    cot = (Gbar, Wbar, psi1bar, psi2bar, BSbar, Khinvbar)
    _backprop(g, p, s, data.X, (Kzx, A, AS), S, cot, n_threads)
    gflat = _flatten(g, packer)
    return elbo, gflat, M


def predict_moments(theta, packer, X, *, jitter=1e-6, outputs=None, n_threads=1):
    """Mean and variance of ``f(x, h_p)`` under q, shape (n, P) each."""
    p = packer.unpack(theta)
    gaussian = "log_S" in p
    s = _state(p, None, jitter)
    _, _, A, G, _, W = _input_side(p, s, np.ascontiguousarray(X, dtype=np.float64))
    mu, S = p["mu"], _latent_variances(p, gaussian)
    if outputs is not None:
        mu, S = mu[outputs], S[outputs]
    psi1, psi2 = kern.rbf_psi_stats(mu, S, p["Z_h"], s["ls_h"], n_threads=n_threads)
    P2 = psi2.reshape(psi2.shape[0], -1)
    mean = G @ psi1.T
    GG = (G[:, :, None] * G[:, None, :]).reshape(G.shape[0], -1)
    ef2 = GG @ P2.T
    var = (
        ef2
        - mean**2
        + W[:, :1] * (P2 @ s["BS"].ravel())[None, :]
        + s["var"]
        - W[:, 1:] * (P2 @ s["Khinv"].ravel())[None, :]
    )
    return mean, np.maximum(var, 1e-12)
