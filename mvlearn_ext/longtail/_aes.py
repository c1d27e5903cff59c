"""AES for long-tailed recognition (needs torch): ARS loss, entropy-aware PCGrad, fusion.

Reconstruction: no AES paper or repository was available; the three named
components are taken from the same author's public code
(``wangff0101/evo_longtail``) and its TS-MOF pipeline (NeurIPS 2025). Its
constants are defaults, not theory. Three defects of that code are *not*
reproduced: its fusion reads the test label (here :class:`FusionModule` and
:meth:`AESClassifier.predict` take features or logits only), its "PCGrad"
does no projection (here ``combine="pcgrad_entropy"`` projects, and
``"entropy_weighted"`` is the code-faithful mode under its own name), and its
PLA weights are identically 1 (not used here).

Pieces, usable in a user's own training loop:

* :class:`ARSLoss`, :class:`BalancedSoftmaxLoss`, :class:`LogitAdjustedLoss`;
* :class:`EntropyPCGrad`, a gradient combiner over several losses;
* :class:`FusionModule`, label-free conflict-arbitrated fusion of heads;
* :class:`AESClassifier`, a scikit-learn estimator that trains a small MLP
  with the two-stage pipeline.
"""

from __future__ import annotations

import inspect
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from torch import nn
from torch.nn import functional as F

from mvlearn_ext.longtail._combine import combine_gradients as _combine_np
from mvlearn_ext.longtail._fusion import ConflictArbitratedFusion
from mvlearn_ext.longtail._losses import ars_class_weights, ars_static_terms
from mvlearn_ext.utils._progress import VerboseMixin
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT
from mvlearn_ext.utils._torch import (
    LEARNING_RATE_CONSTRAINT,
    check_finite_loss,
    mlp_elements,
    resolve_device,
    seeded_generator,
    with_torch_threads,
)
from mvlearn_ext.utils._validation import check_allocation, check_layer_sizes, check_magnitude

__all__ = [
    "AESClassifier",
    "ARSLoss",
    "BalancedSoftmaxLoss",
    "EntropyPCGrad",
    "FusionModule",
    "LogitAdjustedLoss",
]


def _counts_tensor(class_counts):
    n = torch.as_tensor(np.asarray(class_counts, dtype=np.float64))
    if n.ndim != 1 or n.numel() < 2 or bool((n <= 0).any()):
        raise ValueError("class_counts must be a 1-D array of at least two positive counts")
    return n


class LogitAdjustedLoss(nn.Module):
    """Logit-adjusted CE ``-log softmax(z + tau log pi)_y`` (Menon et al., ICLR 2021).

    Parameters
    ----------
    class_counts : array-like of shape (n_classes,)
        Training samples per class; ``pi`` is their normalisation.
    tau : float, default=1.0
        The scale of the log-prior added to the logits.

    See Also
    --------
    logit_adjusted_loss : The NumPy function with its gradient.
    BalancedSoftmaxLoss : The Balanced Softmax loss.

    Examples
    --------
    >>> import torch
    >>> z, y = torch.tensor([[2.0, 0.0], [0.0, 1.0]]), torch.tensor([0, 1])
    >>> from mvlearn_ext.longtail import LogitAdjustedLoss
    >>> round(float(LogitAdjustedLoss([1, 1])(z, y)), 4)  # equal counts: plain CE
    0.2201
    """

    def __init__(self, class_counts, *, tau=1.0):
        super().__init__()
        n = _counts_tensor(class_counts)
        self.register_buffer("log_prior", torch.log(n / n.sum()))
        self.tau = float(tau)

    def forward(self, logits, y):
        return F.cross_entropy(logits + self.tau * self.log_prior.to(logits.dtype), y)


class BalancedSoftmaxLoss(nn.Module):
    """Balanced Softmax: CE on ``z + log n_c`` (Ren et al., NeurIPS 2020).

    Parameters
    ----------
    class_counts : array-like of shape (n_classes,)
        Training samples per class.

    See Also
    --------
    balanced_softmax_loss : The NumPy function with its gradient.
    LogitAdjustedLoss : The logit-adjusted loss.

    Examples
    --------
    >>> import torch
    >>> z, y = torch.tensor([[2.0, 0.0], [0.0, 1.0]]), torch.tensor([0, 1])
    >>> from mvlearn_ext.longtail import BalancedSoftmaxLoss
    >>> round(float(BalancedSoftmaxLoss([1, 1])(z, y)), 4)  # equal counts: plain CE
    0.2201
    """

    def __init__(self, class_counts):
        super().__init__()
        self.register_buffer("log_counts", torch.log(_counts_tensor(class_counts)))

    def forward(self, logits, y):
        return F.cross_entropy(logits + self.log_counts.to(logits.dtype), y)


class ARSLoss(nn.Module):
    """Adaptive Residual Supervision loss with precision shielding (reconstruction of AES).

    Per batch, with running (EMA) per-class recall ``a_c`` and precision
    ``P_c`` and the annealing factor ``t = min(epoch / n_epochs_reweight, 1)``:

    * class weights ``w_c`` from :func:`mvlearn_ext.longtail.ars_class_weights`
      (class-balanced x recall x rarity x precision shield, annealed by t);
    * margin ``m_i = min(m_y (1 + 0.9 (1 - a_y)) (1 + 0.5 / sqrt(n_y + 1)), m_max)``;
    * ``z' = (z - scale m_i e_y + t log pi) / tau_y`` with
      ``tau_y = max(T0 (1 - rho_y / 2), 0.05)``;
    * focal exponent ``gamma_y = clip(2 + 2 (1 - a_y), 0, 5)``, label smoothing
      ``eps_y = clip(0.06 (1 - pi_y), 0, 0.2)``;
    * hard-negative term ``h (1 + 2 rho_y) * (sum of the top-3 non-target probabilities)``;
    * loss ``[sum_i w_yi (1 - p_yi)^gamma l_i + sum_i hardneg_i] / sum_i w_yi``.

    The statistics update (in training mode) after each forward, from the
    argmax of the raw logits. Initial state (design choice): recall 0,
    precision 0. Call :meth:`set_epoch` at the start of each epoch.

    Parameters
    ----------
    class_counts : array-like of shape (n_classes,)
    beta : float, default=0.9999
        Class-balanced weighting parameter.
    margin_max : float, default=0.5
    scale : float, default=30.0
        s, the margin's scale.
    base_temperature : float, default=0.1
        T0.
    rarity_temperature : bool, default=True
        Lower the temperature of rare targets (``tau_y``); False: ``tau = T0``.
    focal, label_smoothing : bool, default=True
    hard_negative_weight : float, default=0.5
        h; 0 switches the term off.
    reweight : bool, default=True
        Class weights on (False: uniform).
    n_epochs_reweight : int, default=16
        E_rw of the linear anneal; 0 means no anneal (t = 1).
    prior_scale : float or None, default=None
        Multiplier of ``log pi``; None: the annealing factor t.
    momentum : float, default=0.9
        EMA momentum of the statistics.

    See Also
    --------
    ars_class_weights : Its class weights.
    ars_static_terms : Its static terms.
    LogitAdjustedLoss, BalancedSoftmaxLoss : The other long-tail heads.

    Examples
    --------
    >>> import torch
    >>> z, y = torch.tensor([[2.0, 0.0], [0.0, 1.0]]), torch.tensor([0, 1])
    >>> from mvlearn_ext.longtail import ARSLoss
    >>> loss = ARSLoss([50, 5])
    >>> bool(torch.isfinite(loss(z, y)))
    True
    """

    def __init__(
        self,
        class_counts,
        *,
        beta=0.9999,
        margin_max=0.5,
        scale=30.0,
        base_temperature=0.1,
        rarity_temperature=True,
        focal=True,
        label_smoothing=True,
        hard_negative_weight=0.5,
        reweight=True,
        n_epochs_reweight=16,
        prior_scale=None,
        momentum=0.9,
    ):
        super().__init__()
        n = _counts_tensor(class_counts).numpy()
        static = ars_static_terms(n, beta=beta, margin_max=margin_max)
        self._static = static
        self.register_buffer("counts", torch.as_tensor(n))
        self.register_buffer("log_prior", torch.log(torch.as_tensor(static["priors"])))
        self.register_buffer("rarity", torch.as_tensor(static["rarity"]))
        self.register_buffer("margins", torch.as_tensor(static["margins"]))
        self.register_buffer("recall", torch.zeros(n.size, dtype=torch.float64))
        self.register_buffer("true_count", torch.ones(n.size, dtype=torch.float64))
        self.register_buffer("pred_count", torch.ones(n.size, dtype=torch.float64))
        self.margin_max = float(margin_max)
        self.scale = float(scale)
        self.base_temperature = float(base_temperature)
        self.rarity_temperature = bool(rarity_temperature)
        self.focal = bool(focal)
        self.label_smoothing = bool(label_smoothing)
        self.hard_negative_weight = float(hard_negative_weight)
        self.reweight = bool(reweight)
        self.n_epochs_reweight = int(n_epochs_reweight)
        self.prior_scale = prior_scale
        self.momentum = float(momentum)
        self.epoch = 0

    def set_epoch(self, epoch):
        """Set the epoch that drives the anneal factor t."""
        self.epoch = int(epoch)

    @property
    def anneal(self):
        if self.n_epochs_reweight <= 0:
            return 1.0
        return min(self.epoch / self.n_epochs_reweight, 1.0)

    def precision(self):
        """Running precision estimate ``clip(a_c s_c / q_c, 0, 1)``."""
        return torch.clamp(self.recall * self.true_count / self.pred_count, 0.0, 1.0)

    def class_weights(self):
        """Current class weights ``w_c`` (uniform when ``reweight=False``)."""
        if not self.reweight:
            return torch.ones_like(self.recall)
        w = ars_class_weights(
            self._static["cb_weights"],
            self._static["rarity"],
            self.recall.cpu().numpy(),
            self.precision().cpu().numpy(),
            anneal=self.anneal,
        )
        return torch.as_tensor(w, device=self.recall.device)

    def forward(self, logits, y):
        dtype, dev = logits.dtype, logits.device
        t = self.anneal
        a_y = self.recall.to(dev)[y]
        n_y = self.counts.to(dev)[y]
        m_i = torch.clamp(
            self.margins.to(dev)[y] * (1 + 0.9 * (1 - a_y)) * (1 + 0.5 / torch.sqrt(n_y + 1)),
            max=self.margin_max,
        )
        onehot = F.one_hot(y, logits.shape[1]).to(dtype)
        prior = t if self.prior_scale is None else float(self.prior_scale)
        z = (
            logits
            - self.scale * m_i.to(dtype)[:, None] * onehot
            + prior * self.log_prior.to(dtype)
        )
        rho_y = self.rarity.to(dev)[y]
        if self.rarity_temperature:
            tau = torch.clamp(self.base_temperature * (1 - 0.5 * rho_y), min=0.05)
        else:
            tau = torch.full_like(rho_y, self.base_temperature)
        z = z / tau.to(dtype)[:, None]
        log_p = F.log_softmax(z, dim=1)
        log_p_y = log_p.gather(1, y[:, None])[:, 0]
        p = log_p.exp()
        p_y = log_p_y.exp()
        if self.label_smoothing:
            eps = torch.clamp(0.06 * (1 - self.log_prior.exp().to(dev)[y]), 0.0, 0.2).to(dtype)
        else:
            eps = torch.zeros_like(p_y)
        nll = (1 - eps) * (-log_p_y) + eps * (-log_p).mean(dim=1)
        if self.focal:
            gamma = torch.clamp(2 + 2 * (1 - a_y), 0.0, 5.0).to(dtype)
            nll = (1 - p_y).clamp(min=0) ** gamma * nll
        w_y = self.class_weights().to(device=dev, dtype=dtype)[y]
        total = (w_y * nll).sum()
        if self.hard_negative_weight > 0:
            k = min(3, logits.shape[1] - 1)
            top = p.masked_fill(onehot.bool(), float("-inf")).topk(k, dim=1).values.sum(dim=1)
            total = total + (self.hard_negative_weight * (1 + 2 * rho_y.to(dtype)) * top).sum()
        loss = total / w_y.sum()
        if self.training:
            self._update(logits.detach(), y)
        return loss

    @torch.no_grad()
    def _update(self, logits, y):
        c = self.recall.numel()
        pred = logits.argmax(dim=1)
        true = torch.bincount(y, minlength=c).to(self.recall)
        predicted = torch.bincount(pred, minlength=c).to(self.recall)
        hits = torch.bincount(y[pred == y], minlength=c).to(self.recall)
        present = true > 0
        mu = self.momentum
        batch_recall = torch.where(present, hits / true.clamp(min=1), self.recall)
        self.recall.copy_(
            torch.where(present, mu * self.recall + (1 - mu) * batch_recall, self.recall)
        )
        self.true_count.mul_(mu).add_((1 - mu) * true)
        self.pred_count.mul_(mu).add_((1 - mu) * predicted)
        self.pred_count.clamp_(min=1e-6)


class EntropyPCGrad:
    """Gradient combiner for several losses over shared parameters (AES's "entropy-aware PCGrad").

    ``backward(losses)`` computes each loss's gradient over ``params`` by
    autograd, flattens them, combines them with
    :func:`mvlearn_ext.longtail.combine_gradients` and writes the result into
    ``.grad`` (replacing it), ready for ``optimizer.step()``. The mask of a
    task is the set of parameters its loss reaches, so coordinates owned by
    one head get exactly that head's gradient.

    Parameters
    ----------
    params : iterable of torch.nn.Parameter
    mode : {"pcgrad_entropy", "entropy_weighted", "pcgrad"}, default="pcgrad_entropy"
        ``"pcgrad_entropy"`` projects conflicting gradients (PCGrad) and then
        weights them by gradient entropy; ``"entropy_weighted"`` is the
        code-faithful combiner without projection; ``"pcgrad"`` is plain PCGrad.
    temperature : float, default=0.5
    reduction : {"mean", "sum"}, default="mean"
        For ``"pcgrad"``.
    random_state : int, Generator or None
        Seeds PCGrad's projection orders.

    See Also
    --------
    combine_gradients : The NumPy combiner it applies.
    pcgrad_project : Plain PCGrad's projection.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.longtail import EntropyPCGrad
    >>> w = torch.nn.Parameter(torch.zeros(2))
    >>> combiner = EntropyPCGrad([w], random_state=0)
    >>> losses = [(w[0] - 1.0) ** 2, (w[1] + 1.0) ** 2]
    >>> weights = combiner.backward(losses)
    >>> w.grad.tolist()  # the weighted mean of the two tasks' gradients
    [-1.0, 1.0]
    """

    def __init__(
        self,
        params,
        *,
        mode="pcgrad_entropy",
        temperature=0.5,
        reduction="mean",
        random_state=None,
    ):
        self.params = [p for p in params if p.requires_grad]
        if not self.params:
            raise ValueError("params has no parameter that requires a gradient")
        self.mode = mode
        self.temperature = temperature
        self.reduction = reduction
        self._rng = (
            np.random.default_rng(random_state)
            if not isinstance(random_state, np.random.Generator)
            else random_state
        )
        self.last_weights_ = None

    def backward(self, losses):
        """Write the combined gradient of ``losses`` into ``.grad``; return the task weights."""
        losses = list(losses)
        if not losses:
            raise ValueError("losses is empty")
        flats, masks = [], []
        for i, loss in enumerate(losses):
            grads = torch.autograd.grad(
                loss, self.params, retain_graph=i < len(losses) - 1, allow_unused=True
            )
            flats.append(
                torch.cat(
                    [
                        (torch.zeros_like(p) if g is None else g).reshape(-1)
                        for p, g in zip(self.params, grads, strict=True)
                    ]
                )
            )
            masks.append(
                torch.cat(
                    [
                        torch.full((p.numel(),), g is not None, dtype=torch.bool)
                        for p, g in zip(self.params, grads, strict=True)
                    ]
                )
            )
        G = torch.stack(flats).detach().to(torch.float64).cpu().numpy()
        M = torch.stack(masks).numpy()
        combined, weights = _combine_np(
            G,
            M,
            mode=self.mode,
            temperature=self.temperature,
            reduction=self.reduction,
            random_state=self._rng,
        )
        start = 0
        for p in self.params:
            size = p.numel()
            p.grad = (
                torch.as_tensor(combined[start : start + size])
                .reshape(p.shape)
                .to(dtype=p.dtype, device=p.device)
            )
            start += size
        self.last_weights_ = weights
        return weights


class FusionModule(nn.Module):
    """Label-free conflict-arbitrated fusion of K heads as a module.

    ``forward(head_logits)`` takes logits of shape ``(K, n, C)`` (or a list
    of K tensors of shape ``(n, C)``) and returns the predicted classes; it
    has no label argument. Fit the per-class head weights with
    :meth:`fit` on validation logits. Wraps
    :class:`mvlearn_ext.longtail.ConflictArbitratedFusion`.

    Parameters
    ----------
    train_counts : array-like of shape (n_classes,)
        Training samples per class (for rarity and tail status).
    tail_threshold : int, default=20
        A class is a tail class when its training count is below this.
    temperature : float, default=1.0
        Softmax temperature of a head's confidence.

    See Also
    --------
    ConflictArbitratedFusion : The NumPy fusion it wraps.

    Examples
    --------
    >>> import torch
    >>> from mvlearn_ext.longtail import FusionModule
    >>> g = torch.Generator().manual_seed(0)
    >>> fusion = FusionModule([20, 10, 5], tail_threshold=8)
    >>> logits, y = torch.randn(2, 30, 3, generator=g), torch.randint(0, 3, (30,), generator=g)
    >>> fusion = fusion.fit(logits, y)
    >>> fusion(torch.randn(2, 4, 3, generator=g)).shape
    torch.Size([4])
    >>> fusion.predict_proba(torch.randn(2, 4, 3, generator=g)).shape
    torch.Size([4, 3])
    """

    def __init__(self, train_counts, *, tail_threshold=20, temperature=1.0):
        super().__init__()
        self.fusion = ConflictArbitratedFusion(
            train_counts, tail_threshold=tail_threshold, temperature=temperature
        )

    @staticmethod
    def _stack(head_logits):
        if isinstance(head_logits, (list, tuple)):
            head_logits = torch.stack(list(head_logits))
        if not isinstance(head_logits, torch.Tensor):
            raise TypeError(
                "head_logits must be a tensor or a list of tensors, "
                f"got {type(head_logits).__name__}"
            )
        return head_logits.detach().to(torch.float64).cpu().numpy()

    def fit(self, head_logits, y):
        """Fit the per-class head weights on validation logits and labels.

        Parameters
        ----------
        head_logits : tensor of shape (n_heads, n_samples, n_classes) or list of tensors
            The validation logits of every head (a list holds ``n_heads``
            tensors of shape ``(n_samples, n_classes)``).
        y : array-like or tensor of int, shape (n_samples,)
            The validation labels.

        Returns
        -------
        self : FusionModule
            The module with its fusion fitted.
        """
        self.fusion.fit(self._stack(head_logits), torch.as_tensor(y).cpu().numpy())
        return self

    def forward(self, head_logits):
        z = head_logits[0] if isinstance(head_logits, (list, tuple)) else head_logits
        pred = self.fusion.predict(self._stack(head_logits))
        return torch.as_tensor(pred, device=z.device)

    def predict_proba(self, head_logits):
        """Soft fusion of the heads' class probabilities.

        Parameters
        ----------
        head_logits : tensor of shape (n_heads, n_samples, n_classes) or list of tensors
            The logits of every head.

        Returns
        -------
        proba : tensor of shape (n_samples, n_classes)
            Rows summing to one.

        Raises
        ------
        RuntimeError
            If the module is not fitted.
        TypeError
            If ``head_logits`` is not a tensor or a list of tensors.
        ValueError
            If ``head_logits`` is not 3-D, is empty, holds NaN or infinity, or
            has not the heads and classes of the fit.
        """
        return torch.as_tensor(self.fusion.predict_proba(self._stack(head_logits)))


_HEAD_NAMES = ("ce", "balanced_softmax", "logit_adjusted", "ars")


class _Backbone(nn.Module):
    """The first hidden layer (the stem, frozen in stage 2), the rest (the shared block), heads."""

    def __init__(self, n_in, hidden_layer_sizes, n_classes, n_heads):
        super().__init__()
        first, *rest = hidden_layer_sizes
        self.stem = nn.Sequential(nn.Linear(n_in, first), nn.ReLU())
        layers, width = [], first
        for h in rest:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.block = nn.Sequential(*layers)
        self.heads = nn.ModuleList(nn.Linear(width, n_classes) for _ in range(n_heads))

    def forward(self, x):
        h = self.block(self.stem(x))
        return torch.stack([head(h) for head in self.heads])


def _check_validation_split(y_idx, classes, validation_fraction):
    """Refuse, naming ``y`` or ``validation_fraction``, a stratified split that cannot be made.

    The split of :func:`sklearn.model_selection.train_test_split` puts
    ``ceil(validation_fraction * n)`` samples in the validation part; both
    parts need one sample of every class, so every class needs two.
    """
    counts = np.bincount(y_idx, minlength=len(classes))
    rare = int(np.argmin(counts))
    if counts[rare] < 2:
        raise ValueError(
            f"y: class {classes[rare].tolist()!r} has {counts[rare]} sample; the stratified "
            "validation split (validation_fraction) needs at least 2 samples of every class"
        )
    n, n_classes = len(y_idx), len(classes)
    n_val = int(np.ceil(validation_fraction * n))
    if min(n_val, n - n_val) < n_classes:
        raise ValueError(
            f"validation_fraction={validation_fraction!r} puts {n_val} of the {n} samples in "
            f"the validation split and {n - n_val} in training; each part needs at least "
            f"{n_classes} (one per class)"
        )


class AESClassifier(VerboseMixin, ClassifierMixin, BaseEstimator):
    """Two-stage long-tail classifier: CE backbone, then AES heads with entropy-aware PCGrad.

    Reconstruction of AES from ``wangff0101/evo_longtail`` (see the module
    docstring). Stage 1 trains an MLP (hidden widths
    ``hidden_layer_sizes``) and a CE head. Stage 2 freezes the first layer,
    keeps the other hidden layers shared and trains one linear head per
    loss in ``heads`` (initialised from the CE head), combining the per-loss gradients with
    :class:`EntropyPCGrad`. A stratified validation split fits the
    label-free :class:`FusionModule`; :meth:`predict` never sees labels;
    :meth:`soft_fusion_proba` gives the soft fusion.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(64, 64)
        Widths of the hidden layers; the first is frozen in stage 2.
    heads : tuple of str, default=("ce", "balanced_softmax", "logit_adjusted", "ars")
    n_epochs_stage1, n_epochs_stage2 : int, default=40, 20
        Epochs of the two stages.
    combine : {"pcgrad_entropy", "entropy_weighted", "pcgrad"}, default="pcgrad_entropy"
    validation_fraction : float, default=0.2
        Share of the samples in the stratified validation split that fits the
        fusion; both parts need a sample of every class (so every class needs
        two).
    tail_threshold : int or None, default=None
        Tail classes for the fusion: training count below this (default: the
        lower third of the count range, ``n_min + (n_max - n_min) / 3``).
    ars_params : dict or None, default=None
        Keyword arguments of :class:`ARSLoss` (default: ``scale=1`` and
        ``base_temperature=1``, since these heads output raw linear logits,
        not the cosine logits the code's s = 30 and T0 = 0.1 are meant for).
    batch_size : int, default=64
    learning_rate : float, default=1e-3
    device : str or None, default="cpu"
    n_jobs : int or None, default=None
        Threads of torch's intra-op pool during ``fit`` and prediction
        (restored afterwards): ``None`` means 1, ``-1`` every available CPU;
        never more than the available CPUs.
    random_state : int or None, default=None
    verbose : bool, default=False

    Attributes
    ----------
    classes_ : ndarray
    class_counts_ : ndarray
        Training counts per class (after the validation split).
    model_ : torch.nn.Module
    fusion_ : FusionModule
    combiner_weights_ : ndarray
        Mean task weights omega of stage 2.

    See Also
    --------
    ConflictArbitratedFusion : The fusion of its heads.
    EntropyPCGrad : The gradient combiner of its second stage.
    sklearn.neural_network.MLPClassifier : A single-head baseline without long-tail losses.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.longtail import AESClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(120, 5)); y = (X[:, 0] > 0.5).astype(int)
    >>> clf = AESClassifier(n_epochs_stage1=2, n_epochs_stage2=1, random_state=0).fit(X, y)
    >>> clf.predict(X[:3]).shape
    (3,)
    >>> clf.decision_function_heads(X[:3]).shape
    (4, 3, 2)
    >>> clf.soft_fusion_proba(X[:3]).shape
    (3, 2)
    >>> clf.predict_head(X[:3], "ce").shape
    (3,)
    """

    _parameter_constraints: dict = {
        "hidden_layer_sizes": [tuple, list],
        "heads": [tuple, list],
        "n_epochs_stage1": [Interval(Integral, 1, None, closed="left")],
        "n_epochs_stage2": [Interval(Integral, 0, None, closed="left")],
        "combine": [StrOptions({"pcgrad_entropy", "entropy_weighted", "pcgrad"})],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "tail_threshold": [Interval(Real, 0, None, closed="left"), None],
        "ars_params": [dict, None],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": LEARNING_RATE_CONSTRAINT,
        "device": [str, None],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        hidden_layer_sizes=(64, 64),
        heads=_HEAD_NAMES,
        n_epochs_stage1=40,
        n_epochs_stage2=20,
        combine="pcgrad_entropy",
        validation_fraction=0.2,
        tail_threshold=None,
        ars_params=None,
        batch_size=64,
        learning_rate=1e-3,
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=False,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.heads = heads
        self.n_epochs_stage1 = n_epochs_stage1
        self.n_epochs_stage2 = n_epochs_stage2
        self.combine = combine
        self.validation_fraction = validation_fraction
        self.tail_threshold = tail_threshold
        self.ars_params = ars_params
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _losses(self, counts):
        out = []
        for name in self.heads:
            if name == "ce":
                out.append(nn.CrossEntropyLoss())
            elif name == "balanced_softmax":
                out.append(BalancedSoftmaxLoss(counts))
            elif name == "logit_adjusted":
                out.append(LogitAdjustedLoss(counts))
            elif name == "ars":
                params = {
                    "scale": 1.0,
                    "base_temperature": 1.0,
                    "n_epochs_reweight": max(self.n_epochs_stage2 // 2, 1),
                }
                params.update(self.ars_params or {})
                out.append(ARSLoss(counts, **params))
            else:
                raise ValueError(f"heads entries must be among {_HEAD_NAMES}, got {name!r}")
        return out

    @_fit_context(prefer_skip_nested_validation=True)
    @with_torch_threads
    def fit(self, X, y):
        """Train the two stages on ``(X, y)`` and fit the fusion on a validation split.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training features.
        y : array-like of shape (n_samples,)
            The class labels (long-tailed counts expected).

        Returns
        -------
        self : AESClassifier
            The fitted classifier.
        """
        if not self.heads:
            raise ValueError("heads must name at least one loss")
        unknown = [name for name in self.heads if name not in _HEAD_NAMES]
        if unknown:
            raise ValueError(f"heads entries must be among {_HEAD_NAMES}, got {unknown[0]!r}")
        if self.ars_params:
            accepted = set(inspect.signature(ARSLoss).parameters) - {"class_counts", "counts"}
            unknown = sorted(set(self.ars_params) - accepted)
            if unknown:
                raise ValueError(
                    f"ars_params has unknown keys {unknown}; ARSLoss accepts {sorted(accepted)}"
                )
        return self._fit(X, y)

    def _fit(self, X, y):
        X, y = validate_data(self, X, y, ensure_min_samples=2)
        check_magnitude(X, "X", compute_dtype=np.float32)  # the networks run in float32
        check_classification_targets(y)
        hidden = check_layer_sizes(self.hidden_layer_sizes, "hidden_layer_sizes")
        if not hidden:
            raise ValueError("hidden_layer_sizes must hold at least one width")
        check_allocation(
            mlp_elements([X.shape[1], *hidden]) + hidden[-1] * len(self.heads) * np.unique(y).size,
            "hidden_layer_sizes",
            self.hidden_layer_sizes,
            what="the network's weights",
            itemsize=4,
        )
        if not self.heads:
            raise ValueError("heads must name at least one loss")
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        n_classes = self.classes_.size
        if n_classes < 2:
            raise ValueError("AESClassifier needs at least two classes in y")
        rs = (
            np.random.RandomState(self.random_state)
            if not isinstance(self.random_state, np.random.RandomState)
            else self.random_state
        )
        seed = int(rs.randint(2**31 - 1))
        _check_validation_split(y_idx, self.classes_, self.validation_fraction)
        X_tr, X_val, y_tr, y_val = train_test_split(
            X, y_idx, test_size=self.validation_fraction, stratify=y_idx, random_state=seed
        )
        counts = np.bincount(y_tr, minlength=n_classes)
        if np.any(counts == 0):
            raise ValueError(
                "every class needs at least one training sample after the validation split"
            )
        self.class_counts_ = counts
        dev = resolve_device(self.device)
        gen = seeded_generator(seed)
        torch_seed = int(torch.randint(2**31 - 1, (1,), generator=gen))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(torch_seed)
            model = _Backbone(X.shape[1], hidden, n_classes, len(self.heads)).to(dev)
        Xt = torch.as_tensor(X_tr, dtype=torch.float32, device=dev)
        yt = torch.as_tensor(y_tr, dtype=torch.long, device=dev)
        n = Xt.shape[0]

        def batches():
            perm = torch.randperm(n, generator=gen)
            for i in range(0, n, self.batch_size):
                yield perm[i : i + self.batch_size]

        # stage 1: CE on the whole backbone through head 0
        opt = torch.optim.Adam(
            list(model.stem.parameters())
            + list(model.block.parameters())
            + list(model.heads[0].parameters()),
            lr=self.learning_rate,
        )
        for _ in self._progress(range(self.n_epochs_stage1), desc="stage 1", unit="epoch"):
            for idx in batches():
                opt.zero_grad()
                h = model.block(model.stem(Xt[idx]))
                loss = F.cross_entropy(model.heads[0](h), yt[idx])
                check_finite_loss(loss, self, where=" in stage 1")
                loss.backward()
                opt.step()
        with torch.no_grad():
            for head in model.heads[1:]:
                head.load_state_dict(model.heads[0].state_dict())
        # stage 2: frozen stem, shared block, one head per loss
        for p in model.stem.parameters():
            p.requires_grad_(False)
        losses = [loss.to(dev) for loss in self._losses(counts)]
        params = list(model.block.parameters()) + list(model.heads.parameters())
        opt = torch.optim.Adam(params, lr=self.learning_rate)
        combiner = EntropyPCGrad(params, mode=self.combine, random_state=seed)
        weights = []
        for epoch in self._progress(range(self.n_epochs_stage2), desc="stage 2", unit="epoch"):
            for loss in losses:
                if isinstance(loss, ARSLoss):
                    loss.set_epoch(epoch)
            for idx in batches():
                opt.zero_grad()
                logits = model(Xt[idx])
                head_losses = [fn(logits[k], yt[idx]) for k, fn in enumerate(losses)]
                check_finite_loss(sum(head_losses), self, where=" in stage 2")
                weights.append(combiner.backward(head_losses))
                opt.step()
        model.eval()
        self.model_ = model
        self.combiner_weights_ = (
            np.mean(weights, axis=0) if weights else np.full(len(losses), 1 / len(losses))
        )
        if self.tail_threshold is None:
            tail_threshold = counts.min() + (counts.max() - counts.min()) / 3
        else:
            tail_threshold = self.tail_threshold
        self.fusion_ = FusionModule(counts, tail_threshold=tail_threshold)
        self.fusion_.fit(self._head_logits(X_val), y_val)
        return self

    def _head_logits(self, X):
        dev = next(self.model_.parameters()).device
        with torch.no_grad():
            return self.model_(
                torch.as_tensor(np.asarray(X), dtype=torch.float32, device=dev)
            ).cpu()

    @with_torch_threads
    def decision_function_heads(self, X):
        """Logits of every head.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        logits : ndarray of float32, shape (n_heads, n_samples, n_classes)
            One row of logits per head and sample, heads in the order of ``heads``.

        Raises
        ------
        ValueError
            If ``X`` is empty, not numeric (strings of digits included), holds
            NaN, infinity or complex values, values too large for float32
            arithmetic, or not the features of the fit.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        check_magnitude(X, "X", compute_dtype=np.float32)
        return self._head_logits(X).numpy()

    @with_torch_threads
    def soft_fusion_proba(self, X):
        """Soft fusion ``sum_k W[k, c] softmax(z_k)_c`` of the heads (no labels involved).

        Not named ``predict_proba``: :meth:`predict` is the sample-level
        arbitration, whose output is not the argmax of these probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows summing to one, columns in the order of ``classes_``.

        Raises
        ------
        ValueError
            If ``X`` is empty, not numeric (strings of digits included), holds
            NaN, infinity or complex values, values too large for float32
            arithmetic, or not the features of the fit.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        check_magnitude(X, "X", compute_dtype=np.float32)
        return self.fusion_.predict_proba(self._head_logits(X)).numpy()

    @with_torch_threads
    def predict(self, X):
        """Label-free conflict-arbitrated fusion of the heads.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples to classify.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        check_magnitude(X, "X", compute_dtype=np.float32)
        return self.classes_[self.fusion_(self._head_logits(X)).numpy()]

    def predict_head(self, X, head):
        """Predictions of one head.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples to classify.
        head : int or str
            The head: its index in ``heads`` or its name.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The head's most probable class of every sample, from ``classes_``.

        Raises
        ------
        NotFittedError
            If the classifier is not fitted.
        TypeError
            If ``head`` is neither a string nor an int (a bool or a float included).
        ValueError
            If ``head`` names no head or its index is out of range; if ``X`` is
            empty, not numeric (strings of digits included), holds NaN,
            infinity or complex values, values too large for float32
            arithmetic, or not the features of the fit.
        """
        check_is_fitted(self)
        n_heads = len(self.heads)
        if isinstance(head, str):
            if head not in self.heads:
                raise ValueError(f"head must be one of {tuple(self.heads)}, got {head!r}")
            k = list(self.heads).index(head)
        elif isinstance(head, (bool, np.bool_)) or not isinstance(head, Integral):
            raise TypeError(
                f"head must be a head's name or an int index, got {type(head).__name__} {head!r}"
            )
        else:
            k = int(head)
            if not -n_heads <= k < n_heads:
                raise ValueError(
                    f"head must be the index of one of the {n_heads} heads, got {head!r}"
                )
        return self.classes_[self.decision_function_heads(X)[k].argmax(axis=1)]
