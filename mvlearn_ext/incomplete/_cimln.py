"""CIMLN: causal-invariant meta-learning for unbalanced incomplete multi-view clustering.

The torch part: per-view autoencoders, the context-aware meta-generator of
missing view embeddings, and the causal-invariance loss between the factual
and a counterfactual observation pattern. The masks, the context statistic
and the masking rule are NumPy functions in :mod:`mvlearn_ext.incomplete`.
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, _fit_context
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from torch import nn

from mvlearn_ext.base import MultiViewClusterMixin
from mvlearn_ext.incomplete._masks import _check_mask, _mask_from_nan, counterfactual_view_probs
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT
from mvlearn_ext.utils._torch import (
    LEARNING_RATE_CONSTRAINT,
    check_finite_loss,
    mlp_elements,
    resolve_device,
    with_torch_threads,
)
from mvlearn_ext.utils._validation import (
    _view_feature_names,
    _view_feature_names_consistent,
    check_allocation,
    check_layer_sizes,
    validate_views,
)

__all__ = ["CIMLN"]


def _mlp(sizes, *, last_act=False):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or last_act:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class _MetaGen(nn.Module):
    """``(mu, sigma^2) = MetaGen([h_agg, c_v])``: MLP with LayerNorm and ReLU."""

    def __init__(self, d, hidden):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(2 * d, hidden),
            nn.LayerNorm(hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.LayerNorm(hidden),
            nn.ReLU(),
        )
        self.mu = nn.Linear(hidden, d)
        self.var = nn.Sequential(nn.Linear(hidden, d), nn.Softplus())

    def forward(self, agg, context):
        h = self.body(torch.cat([agg, context.expand_as(agg)], dim=-1))
        return self.mu(h), self.var(h) + 1e-6


class _Net(nn.Module):
    def __init__(self, dims, hidden, d, n_clusters):
        super().__init__()
        self.enc = nn.ModuleList(_mlp([dv, *hidden, d]) for dv in dims)
        self.dec = nn.ModuleList(_mlp([d, *reversed(hidden), dv]) for dv in dims)
        self.meta = _MetaGen(d, hidden[-1] if hidden else d)
        self.centers = nn.Parameter(torch.zeros(n_clusters, len(dims) * d))

    def encode(self, X):
        return torch.stack([enc(x) for enc, x in zip(self.enc, X, strict=True)])  # (V, b, d)

    @staticmethod
    def context(H, m):
        complete = m.all(dim=1)
        if not bool(complete.any()):
            return torch.zeros(H.shape[0], H.shape[2], dtype=H.dtype, device=H.device)
        Hc = H[:, complete]
        return (Hc.mean(0, keepdim=True) * Hc).mean(1)  # (V, d)

    def complete(self, H, m, C, fill):
        mf = m.T.unsqueeze(-1).to(H.dtype)  # (V, b, 1)
        agg = (H * mf).sum(0) / mf.sum(0).clamp(min=1.0)
        out = []
        for v in range(H.shape[0]):
            fill_v = self.meta(agg, C[v])[0] if fill == "meta" else agg
            out.append(torch.where(mf[v] > 0, H[v], fill_v))
        return torch.stack(out)

    def assign(self, Z, temperature):
        dist = torch.cdist(Z, self.centers)
        return torch.softmax(-dist / temperature, dim=1)


def _kl(p, q):
    return (p * (p.clamp_min(1e-12).log() - q.clamp_min(1e-12).log())).sum(1).mean()


def _causal_divergence(qf, qc):
    """``KL(q_fact || q_cf)`` with ``q_fact`` fixed: the counterfactual side is trained."""
    return _kl(qf.detach(), qc)


class CIMLN(MultiViewClusterMixin, BaseEstimator):
    """Causal-invariant meta-learning network for incomplete multi-view clustering.

    Each view ``v`` has an encoder ``f_v`` to ``R^d`` and a mirrored decoder.
    A missing view embedding is generated from the mean ``h_agg`` of the
    sample's observed view embeddings and a context ``c_v`` (the mean over
    complete samples of ``h_bar_i * h_{i,v}``, see
    :func:`mvlearn_ext.incomplete.context_statistic`) by a meta-generator
    ``(mu, sigma^2) = MetaGen([h_agg, c_v])``, trained to regress observed
    view embeddings from the other views. Causal-invariant structure
    learning re-completes each batch under a counterfactual observation
    pattern ``m' = m * Bernoulli(1 - beta_v)`` and penalises
    ``KL(q_fact || q_cf)`` between the soft cluster assignments
    ``q_ik = softmax_k(-||z_i - mu_k|| / T)`` of the factual and the
    counterfactual completions; ``beta_v`` targets the *low-missing-rate*
    views (the paper's statement). The
    objective is ``L_rec + meta_weight L_meta + causal_weight L_causal``
    after a reconstruction-only pretraining; the clusters are k-means on the
    completed concatenation ``z = [h_1, ..., h_V]``.

    **The default switches the causal loss off** (``causal_weight=0``):
    ``CIMLN()`` is the autoencoders with the meta-generator. The loss can
    only remove structure from the clusters (its exact minimum is an
    assignment that ignores every view), so it is opt-in. **The paper's
    configuration** (the authors' code) is ``CIMLN(causal_weight=0.1)``.

    Follows the authors' code (``jinjiaqi1998/CIMLN``) except where marked:

    * view ``v`` is masked with probability ``min(1, beta V o_v / sum_u o_u)``,
      ``o_v`` its observation rate, as the paper states (the code masks every
      view with ``beta``; both rules are
      :func:`mvlearn_ext.incomplete.counterfactual_view_probs`);
    * a sample's last observed view is never masked (the code has no guard);
    * the meta-generator is trained by the Gaussian likelihood of the
      observed embeddings under ``N(mu, sigma^2)`` (the code only
      regularises ``mean log sigma^2``);
    * the causal KL takes the softmax assignments once (the code applies a
      second softmax);
    * each view is standardised on its observed rows.

    As in the code, ``q_fact`` is held fixed in the KL, so the loss trains
    the counterfactual completion toward the factual assignment.

    Parameters
    ----------
    n_clusters : int, default=8
    embed_dim : int, default=64
        ``d``.
    hidden_layer_sizes : tuple of int, default=(256, 128)
        Hidden widths of the encoders (the decoders mirror them; the code
        uses 500-500-300).
    n_epochs_pretrain : int, default=30
        Reconstruction-only epochs (the code: 100).
    n_epochs : int, default=20
        Epochs of the full objective (the code: 50).
    batch_size : int, default=128
    learning_rate : float, default=3e-4
        Adam learning rate.
    beta : float in [0, 1], default=0.3
        Mean counterfactual masking probability.
    temperature : float, default=1.0
        ``T`` of the soft assignments.
    meta_weight : float in [0, 1e6], default=0.01
        Weight of the meta-generator's loss.
    causal_weight : float in [0, 1e6], default=0.0
        Weight of the causal-invariance loss; ``0`` (the default, see above)
        switches it off. The paper's configuration is ``0.1``.
    missing_view_fill : {"meta", "mean"}, default="meta"
        What fills a missing view's embedding: ``"meta"`` the meta-generator's
        mean ``mu``, ``"mean"`` the sample's mean observed embedding ``h_agg``
        (the meta-generator and its loss are then unused, so ``meta_weight``
        has no effect). ``"mean"`` is the ablation that measures what the
        meta-generator adds over the simplest fill of the same embeddings.
    n_init : int, default=10
        Restarts of the k-means runs.
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, batches, masks and k-means (the global torch RNG
        is restored after ``fit``).
    device : str or None, default=None
        ``None`` picks CUDA when available.
    n_jobs : int or None, default=None
        Threads of torch's intra-op pool during ``fit`` (restored
        afterwards): ``None`` means 1, ``-1`` every available CPU; never
        more than the available CPUs.
    verbose : int, default=0

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    embedding_ : ndarray of shape (n_samples, n_views * embed_dim)
        The completed concatenation ``z``.
    mask_ : ndarray of bool, shape (n_samples, n_views)
        The observed views used at ``fit``.
    view_probs_ : ndarray of shape (n_views,)
        The counterfactual masking probabilities ``beta_v``.
    loss_curve_ : list of dict
        Mean losses per epoch (``stage``, ``rec``, ``meta``, ``causal``).
    n_views_ : int
    n_features_per_view_ : tuple of int

    See Also
    --------
    make_unbalanced_mask : CIMLN's missing-view protocol.
    mean_impute : The imputation baseline.
    mvlearn_ext.cluster.HAGMVC : Clustering of complete views.

    References
    ----------
    J. Jin et al., "Causal-invariant meta-learning for unbalanced incomplete
    multi-view clustering", ICML 2026 (OpenReview FlIaRXdJ1b).

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.datasets import make_multiview_blobs
    >>> from mvlearn_ext.incomplete import CIMLN
    >>> from mvlearn_ext.incomplete import make_unbalanced_mask, mask_views
    >>> Xs, y = make_multiview_blobs(90, n_views=3, n_features=[4, 4, 4], random_state=0)
    >>> mask = make_unbalanced_mask(90, 3, random_state=0)
    >>> model = CIMLN(n_clusters=3, hidden_layer_sizes=(16,), embed_dim=4, n_epochs_pretrain=2,
    ...               n_epochs=2, n_init=2, random_state=0).fit(mask_views(Xs, mask))
    >>> model.labels_.shape, model.embedding_.shape
    ((90,), (90, 12))
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "embed_dim": [Interval(Integral, 1, None, closed="left")],
        "hidden_layer_sizes": [tuple, list],
        "n_epochs_pretrain": [Interval(Integral, 0, None, closed="left")],
        "n_epochs": [Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": LEARNING_RATE_CONSTRAINT,
        "beta": [Interval(Real, 0, 1, closed="both")],
        "temperature": [Interval(Real, 0, None, closed="neither")],
        "meta_weight": [Interval(Real, 0, 1e6, closed="both")],
        "causal_weight": [Interval(Real, 0, 1e6, closed="both")],
        "missing_view_fill": [StrOptions({"meta", "mean"})],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "device": [str, None],
        "n_jobs": N_JOBS_CONSTRAINT,
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        embed_dim=64,
        hidden_layer_sizes=(256, 128),
        n_epochs_pretrain=30,
        n_epochs=20,
        batch_size=128,
        learning_rate=3e-4,
        beta=0.3,
        temperature=1.0,
        meta_weight=0.01,
        causal_weight=0.0,
        missing_view_fill="meta",
        n_init=10,
        random_state=None,
        device=None,
        n_jobs=None,
        verbose=0,
    ):
        self.n_clusters = n_clusters
        self.embed_dim = embed_dim
        self.hidden_layer_sizes = hidden_layer_sizes
        self.n_epochs_pretrain = n_epochs_pretrain
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.beta = beta
        self.temperature = temperature
        self.meta_weight = meta_weight
        self.causal_weight = causal_weight
        self.missing_view_fill = missing_view_fill
        self.n_init = n_init
        self.random_state = random_state
        self.device = device
        self.n_jobs = n_jobs
        self.verbose = verbose

    # -- input ---------------------------------------------------------------
    def _prepare(self, Xs, mask):
        Xs = validate_views(Xs, min_views=2, n_clusters=self.n_clusters, ensure_all_finite=False)
        for v, X in enumerate(Xs):
            if np.isinf(X).any():
                raise ValueError(f"view {v} of Xs holds infinite values")
        if mask is None:
            m = _mask_from_nan(Xs)
        else:
            m = _check_mask(mask, shape=(Xs[0].shape[0], len(Xs)))
        for v, X in enumerate(Xs):
            if np.isnan(X[m[:, v]]).any():
                raise ValueError(f"view {v} of Xs holds NaN in rows the mask marks observed")
            if m[:, v].sum() < 2:
                raise ValueError(f"view {v} of Xs has fewer than 2 observed samples")
        if not m.any(axis=1).all():
            raise ValueError("every sample must have at least one observed view")
        out = []
        for v, X in enumerate(Xs):
            obs = m[:, v]
            mean = X[obs].mean(0)
            std = X[obs].std(0)
            std[std == 0] = 1.0
            Z = np.where(obs[:, None], (np.nan_to_num(X) - mean) / std, 0.0)
            out.append(Z.astype(np.float32))
        return Xs, out, m

    def _losses(self, net, X, m, gen, probs, stage):
        H = net.encode([x * mv[:, None] for x, mv in zip(X, m.T, strict=True)])
        V = H.shape[0]
        mf = m.to(H.dtype)
        rec = 0.0
        for v in range(V):
            obs = mf[:, v]
            err = ((net.dec[v](H[v]) - X[v]) ** 2).mean(1)
            rec = rec + (err * obs).sum() / obs.sum().clamp(min=1.0)
        rec = rec / V
        C = net.context(H, m)
        meta = torch.zeros((), dtype=H.dtype, device=H.device)
        causal = torch.zeros((), dtype=H.dtype, device=H.device)
        if stage == "main":
            if self.missing_view_fill == "meta" and self.meta_weight > 0:
                terms = []
                for v in range(V):
                    others = mf.clone()
                    others[:, v] = 0
                    sel = (mf[:, v] > 0) & (others.sum(1) > 0)
                    if not bool(sel.any()):
                        continue
                    o = others[sel].T.unsqueeze(-1)
                    agg = (H[:, sel] * o).sum(0) / o.sum(0)
                    mu, var = net.meta(agg, C[v])
                    target = H[v, sel]
                    terms.append(0.5 * (var.log() + (mu - target) ** 2 / var).mean())
                if terms:
                    meta = torch.stack(terms).mean()
            if self.causal_weight > 0 and self.beta > 0:
                Z = net.complete(H, m, C, self.missing_view_fill)
                Z = Z.permute(1, 0, 2).reshape(H.shape[1], -1)
                keep = torch.rand(m.shape, generator=gen, device=m.device) >= probs
                cf = m & keep
                empty = ~cf.any(1)
                if bool(empty.any()):
                    score = torch.rand(m.shape, generator=gen, device=m.device) * m
                    pick = score.argmax(1)
                    cf[empty, pick[empty]] = True
                Zc = net.complete(H, cf, C, self.missing_view_fill)
                Zc = Zc.permute(1, 0, 2).reshape(H.shape[1], -1)
                qf = net.assign(Z, self.temperature)
                qc = net.assign(Zc, self.temperature)
                causal = _causal_divergence(qf, qc)
        return rec, meta, causal

    def _embed(self, net, X, m):
        with torch.no_grad():
            H = net.encode([x * mv[:, None] for x, mv in zip(X, m.T, strict=True)])
            C = net.context(H, m)
            Z = net.complete(H, m, C, self.missing_view_fill)
            return Z.permute(1, 0, 2).reshape(H.shape[1], -1)

    @_fit_context(prefer_skip_nested_validation=True)
    @with_torch_threads
    def fit(self, Xs, y=None, *, mask=None):
        """Fit the network and cluster the completed embeddings.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views; a missing view of a sample is an all-NaN row (or any
            values, when ``mask`` says it is missing).
        y : None
            Ignored.
        mask : array-like of bool, shape (n_samples, n_views), optional
            ``True`` where a view is observed; default: from the NaN rows.

        Returns
        -------
        self : CIMLN
        """
        names = _view_feature_names(Xs)
        raw, Xn, m = self._prepare(Xs, mask)
        self.n_views_ = len(raw)
        self.n_features_per_view_ = tuple(X.shape[1] for X in raw)
        _view_feature_names_consistent(self, names, reset=True)
        hidden = check_layer_sizes(self.hidden_layer_sizes, "hidden_layer_sizes")
        d, V, n = self.embed_dim, len(raw), m.shape[0]
        for name, value, size in (
            (
                "hidden_layer_sizes",
                hidden,
                2 * max(mlp_elements([p, *hidden, 1]) for p in self.n_features_per_view_),
            ),
            (
                "embed_dim",
                d,
                d
                * (
                    2 * max(hidden, default=d)
                    + 4
                    + V * (self.n_clusters + n)
                    + 2 * sum(self.n_features_per_view_)
                ),
            ),
            ("batch_size", self.batch_size, min(self.batch_size, n) * V * max(hidden, default=d)),
        ):
            check_allocation(
                size, name, value, what="the networks' weights and embeddings", itemsize=4
            )
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(2**31 - 1))
        device = resolve_device(self.device)
        n = m.shape[0]
        self.view_probs_ = counterfactual_view_probs(m, self.beta, mode="observation")
        self.mask_ = m
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            gen = torch.Generator(device=device)
            gen.manual_seed(seed)
            net = _Net(self.n_features_per_view_, hidden, self.embed_dim, self.n_clusters)
            net = net.to(device)
            X = [torch.from_numpy(x).to(device) for x in Xn]
            M = torch.from_numpy(m).to(device)
            probs = torch.as_tensor(self.view_probs_, dtype=torch.float32, device=device)
            opt = torch.optim.Adam(net.parameters(), lr=self.learning_rate)
            self.loss_curve_ = []
            start = time.perf_counter()
            main_epochs = self.n_epochs
            for stage, n_epochs in (("pretrain", self.n_epochs_pretrain), ("main", main_epochs)):
                if stage == "main":
                    Z = self._embed(net, X, M).cpu().numpy()
                    complete = m.all(1)
                    init_on = Z[complete] if complete.sum() >= self.n_clusters else Z
                    km = KMeans(self.n_clusters, n_init=self.n_init, random_state=seed)
                    km.fit(init_on)
                    with torch.no_grad():
                        net.centers.copy_(torch.from_numpy(km.cluster_centers_).to(net.centers))
                epochs = self._progress(range(n_epochs), desc=stage, unit="epoch")
                for epoch in epochs:
                    order = torch.from_numpy(rng.permutation(n)).to(device)
                    sums = np.zeros(3)
                    for b in range(0, n, self.batch_size):
                        idx = order[b : b + self.batch_size]
                        rec, meta, causal = self._losses(
                            net, [x[idx] for x in X], M[idx], gen, probs, stage
                        )
                        loss = rec + self.meta_weight * meta + self.causal_weight * causal
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
                        sums += [float(rec.detach()), float(meta.detach()), float(causal.detach())]
                    n_batches = -(-n // self.batch_size)
                    rec_m, meta_m, causal_m = sums / n_batches
                    check_finite_loss(
                        rec_m + meta_m + causal_m,
                        self,
                        ("learning_rate", "meta_weight", "causal_weight"),
                        where=f" at {stage} epoch {epoch + 1}",
                    )
                    self.loss_curve_.append(
                        {"stage": stage, "rec": rec_m, "meta": meta_m, "causal": causal_m}
                    )
                    self._log(
                        f"{stage} epoch {epoch + 1}/{n_epochs}: rec {rec_m:.4f} "
                        f"meta {meta_m:.4f} causal {causal_m:.4f} "
                        f"({time.perf_counter() - start:.1f} s)",
                        level=2,
                    )
            Z = self._embed(net, X, M).cpu().numpy()
        km = KMeans(self.n_clusters, n_init=self.n_init, random_state=seed).fit(Z)
        self.embedding_ = Z
        self.labels_ = km.labels_.astype(np.intp)
        self.kmeans_ = km
        self.network_ = net.cpu()
        return self
