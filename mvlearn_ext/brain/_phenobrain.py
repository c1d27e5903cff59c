"""PhenoBrain (needs torch): phenotype-conditioned routing and attention regulation.

**Reconstruction.** PhenoBrain (L. Meng, K. Liang, H. Li, M. Liu, W. Shi,
M. Li, Y. Gao, X. Liu, ICML 2026 spotlight, OpenReview 9NqKL9QQ4a) is known
here only from its abstract; neither the paper nor code was available. The
abstract states that phenotypes are injected "at the mechanism level rather
than only at the classifier level", through (i) a phenotype-conditioned
long-range routing mechanism that learns a subject-specific multi-hop
communication kernel, and (ii) a phenotype-guided regulation of attention
that uses the phenotype as a conditional prior. Everything below the level
of those two sentences is this package's design: the polynomial kernel
``K(p) = sum_h alpha_h(p) A_hat^h`` with ``alpha(p) = softmax(MLP(p))``,
FiLM modulation of the messages, an additive ``log K_tilde(p)`` attention bias and a KL
regulariser. The paper's datasets (built from public imaging data) are not
reproduced.

The kernel, the normalisation and the regulariser have NumPy references in
:mod:`mvlearn_ext.brain`.
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.metrics import accuracy_score
from sklearn.utils import check_random_state, metadata_routing
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _get_feature_names, check_is_fitted, column_or_1d
from torch import nn
from torch.nn import functional as F

from mvlearn_ext.brain._kernel import _check_symmetric, hop_powers, normalize_connectome
from mvlearn_ext.utils._progress import VerboseMixin
from mvlearn_ext.utils._threads import N_JOBS_CONSTRAINT
from mvlearn_ext.utils._torch import (
    LEARNING_RATE_CONSTRAINT,
    WEIGHT_DECAY_CONSTRAINT,
    check_finite_loss,
    resolve_device,
    with_torch_threads,
)
from mvlearn_ext.utils._validation import (
    _names_difference,
    as_real_array,
    check_allocation,
    check_magnitude,
)
from mvlearn_ext.utils._warnings import warn

__all__ = ["PhenoBrainClassifier"]

_EPS = 1e-6


class _PhenoBrainNet(nn.Module):
    """Routing layer, one regulated attention layer, attention pooling, MLP head.

    ``mode`` says where the phenotype enters: ``"routing"`` (hop weights,
    FiLM when ``film``, attention prior, head), ``"head"`` (the head only;
    hop weights shared by all subjects) or ``"none"``.
    """

    def __init__(self, n_rois, n_pheno, hidden, n_hops, n_classes, *, mode, prior_bias, film):
        super().__init__()
        self.mode = mode
        self.use_film = film and mode == "routing"
        if mode == "routing":
            self.alpha_mlp = nn.Sequential(
                nn.Linear(n_pheno, hidden), nn.ReLU(), nn.Linear(hidden, n_hops + 1)
            )
            if self.use_film:
                self.film = nn.Linear(n_pheno, 2 * hidden)
                nn.init.zeros_(self.film.weight)
                nn.init.zeros_(self.film.bias)
        else:  # the same kernel, with hop weights shared by all subjects
            self.alpha_logits = nn.Parameter(torch.zeros(n_hops + 1))
        self.embed = nn.Linear(n_rois, hidden)
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.pool = nn.Linear(hidden, 1)
        n_in = hidden + (n_pheno if mode in ("routing", "head") else 0)
        self.head = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_classes))
        self.prior_bias = float(prior_bias)

    def hop_weights(self, p):
        if self.mode == "routing":
            logits = self.alpha_mlp(p)
        else:
            logits = self.alpha_logits.expand(p.shape[0], -1)
        return torch.softmax(logits, dim=1)

    def routing(self, powers, p):
        """``K(p) = sum_h alpha_h(p) A_hat^h`` from the hop-power stack ``powers``."""
        alpha = self.hop_weights(p)
        return torch.einsum("bh,bhij->bij", alpha, powers), alpha

    def forward(self, powers, X, p):
        K, alpha = self.routing(powers, p)
        H = torch.relu(K @ self.embed(X))
        if self.use_film:
            gamma, beta = self.film(p).chunk(2, dim=1)
            H = H * (1.0 + gamma[:, None, :]) + beta[:, None, :]
        Kp = K.clamp_min(0.0) + _EPS
        log_prior = (Kp / Kp.sum(dim=2, keepdim=True)).log()
        d = H.shape[-1]
        scores = self.q(H) @ self.k(H).transpose(1, 2) / d**0.5
        log_attn = torch.log_softmax(scores + self.prior_bias * log_prior, dim=2)
        attn = log_attn.exp()
        H = self.norm(H + attn @ self.v(H))
        w = torch.softmax(self.pool(H).squeeze(-1), dim=1)
        z = (w[:, :, None] * H).sum(1)
        if self.mode in ("routing", "head"):
            z = torch.cat([z, p], dim=1)
        reg = (attn * (log_attn - log_prior)).sum(2).mean()
        return self.head(z), reg, K, alpha, attn


class PhenoBrainClassifier(VerboseMixin, ClassifierMixin, BaseEstimator):
    """Connectome classifier with phenotype-conditioned routing (PhenoBrain, reconstruction).

    For each subject, with FC matrix ``A`` (``N x N``), node features ``X``
    (the rows of ``A``) and standardised phenotype ``p``:

    1. ``A_hat = D^{-1/2} max(A, 0) D^{-1/2}``
       (:func:`mvlearn_ext.brain.normalize_connectome`);
    2. routing kernel ``K(p) = sum_{h=0}^{H} alpha_h(p) A_hat^h`` with
       ``alpha(p) = softmax(MLP_alpha(p))``;
    3. messages ``H = relu(K(p) X W)``, FiLM-modulated:
       ``H * (1 + gamma(p)) + beta(p)``;
    4. one ROI self-attention layer whose scores get the additive prior
       ``prior_bias * log(eps + K_tilde(p))`` (``K_tilde`` row-normalised),
       with the regulariser ``L_reg = mean_i KL(Attn_i || K_tilde(p)_i)``;
    5. attention pooling over ROIs, concatenation with ``p``, MLP head; loss
       ``CE + reg_weight * L_reg``.

    All forms beyond the abstract's two sentences are design choices (see
    the module docstring). ``phenotype_path`` and ``film`` take the
    phenotype out of steps 2-4: the same network with the phenotype at its
    head only (late fusion), without FiLM, or without phenotype.

    Parameters
    ----------
    phenotype_path : {"routing", "head", "none"}, default="routing"
        Where the phenotype enters. ``"routing"``: it sets the hop weights
        ``alpha(p)`` (hence the kernel and the attention prior), modulates
        the messages (FiLM, see ``film``) and is concatenated at the head.
        ``"head"``: the hop weights are learned but shared by all subjects
        and ``p`` is only concatenated at the head (late fusion), the
        simpler model, as good when the phenotype selects among few
        patterns. ``"none"``: the phenotype is ignored, a reference for
        what it adds; ``phenotypes`` are still required and checked, so that
        the three settings are interchangeable in a pipeline or a grid search.
    film : bool, default=True
        FiLM-modulate the messages by the phenotype (step 3); ``False``
        keeps only the phenotype's routing and attention prior. Used only
        with ``phenotype_path="routing"``.
    n_hops : int, default=3
        ``H`` of the polynomial kernel.
    embed_dim : int, default=32
        Width of the ROI embeddings, of the attention and of the head.
    prior_bias : float in [0, 1e6], default=1.0
        ``lambda_b``, weight of the log-prior in the attention scores (far
        below 1e6 the attention already follows the prior alone; larger
        values overflow float32).
    reg_weight : float in [0, 1e6], default=0.1
        ``lambda`` of ``L_reg`` (bounded for the same reason).
    top_k : int or None, default=None
        Edges kept per ROI before normalising (``None``: all positive ones).
    n_epochs : int, default=150
    batch_size : int, default=64
    learning_rate : float, default=3e-3
        Adam learning rate.
    weight_decay : float in [0, 1e6], default=1e-4
        Adam's L2 penalty; larger values shrink every weight to zero
        whatever the data.
    early_stopping : bool, default=False
        Hold out a stratified ``validation_fraction`` of the training
        subjects, stop when their cross-entropy has not improved for
        ``n_iter_no_change`` epochs and keep the best epoch's weights.
    validation_fraction : float in (0, 1), default=0.2
    n_iter_no_change : int, default=20
    device : str or None, default="cpu"
        ``None`` picks CUDA when available.
    n_jobs : int or None, default=None
        Threads of torch's intra-op pool during ``fit`` and prediction
        (restored afterwards): ``None`` means 1, ``-1`` every available CPU;
        never more than the available CPUs.
    random_state : int, RandomState instance or None, default=None
        Seeds the weights and batches; the global torch RNG is left as it was.
    verbose : int, default=0

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_rois_ : int
    n_phenotypes_ : int
    phenotype_mean_, phenotype_scale_ : ndarray of shape (n_phenotypes,)
        The standardisation of the phenotypes learned at ``fit``.
    phenotype_names_in_ : ndarray of shape (n_phenotypes,)
        The column names of ``phenotypes`` at ``fit``, when it had string
        column names (a pandas DataFrame). Defined only then; prediction
        refuses phenotypes with other names or in another order.
    network_ : torch.nn.Module
    loss_curve_ : list of dict
        Mean ``ce`` and ``reg`` per epoch (and ``val_ce`` with early stopping).
    best_epoch_ : int
        The epoch whose weights were kept (the last one without early stopping).

    See Also
    --------
    make_phenotype_connectomes : Synthetic data with a phenotype-routed signal.
    routing_kernel : The multi-hop kernel it learns.
    sklearn.linear_model.LogisticRegression : A baseline on the vectorised connectomes.

    References
    ----------
    L. Meng et al., "PhenoBrain" (phenotype-conditioned long-range routing
    for multi-modal brain network analysis), ICML 2026, OpenReview
    9NqKL9QQ4a (abstract only).

    Examples
    --------
    >>> from mvlearn_ext.brain import make_phenotype_connectomes
    >>> from mvlearn_ext.brain import PhenoBrainClassifier
    >>> A, P, y = make_phenotype_connectomes(60, random_state=0)
    >>> clf = PhenoBrainClassifier(n_epochs=2, embed_dim=8, random_state=0)
    >>> clf.fit(A, y, phenotypes=P).predict_proba(A[:3], phenotypes=P[:3]).shape
    (3, 2)
    >>> clf.hop_weights(A[:3], phenotypes=P[:3]).shape
    (3, 4)
    >>> clf.routing_kernels(A[:3], phenotypes=P[:3]).shape
    (3, 16, 16)
    >>> clf.attention(A[:3], phenotypes=P[:3]).shape
    (3, 16, 16)
    """

    # The data arguments are not metadata to route.
    __metadata_request__fit = {"connectomes": metadata_routing.UNUSED}
    __metadata_request__predict = {"connectomes": metadata_routing.UNUSED}
    __metadata_request__predict_proba = {"connectomes": metadata_routing.UNUSED}
    __metadata_request__decision_function = {"connectomes": metadata_routing.UNUSED}
    __metadata_request__score = {"connectomes": metadata_routing.UNUSED}

    _parameter_constraints: dict = {
        "phenotype_path": [StrOptions({"routing", "head", "none"})],
        "film": ["boolean"],
        "n_hops": [Interval(Integral, 0, None, closed="left")],
        "embed_dim": [Interval(Integral, 1, None, closed="left")],
        "prior_bias": [Interval(Real, 0, 1e6, closed="both")],
        "reg_weight": [Interval(Real, 0, 1e6, closed="both")],
        "top_k": [Interval(Integral, 1, None, closed="left"), None],
        "n_epochs": [Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": LEARNING_RATE_CONSTRAINT,
        "weight_decay": WEIGHT_DECAY_CONSTRAINT,
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "device": [str, None],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        phenotype_path="routing",
        film=True,
        n_hops=3,
        embed_dim=32,
        prior_bias=1.0,
        reg_weight=0.1,
        top_k=None,
        n_epochs=150,
        batch_size=64,
        learning_rate=3e-3,
        weight_decay=1e-4,
        early_stopping=False,
        validation_fraction=0.2,
        n_iter_no_change=20,
        device="cpu",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.phenotype_path = phenotype_path
        self.film = film
        self.n_hops = n_hops
        self.embed_dim = embed_dim
        self.prior_bias = prior_bias
        self.reg_weight = reg_weight
        self.top_k = top_k
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # -- input ---------------------------------------------------------------
    def _check_inputs(self, connectomes, phenotypes, *, reset):
        A = as_real_array(connectomes, "connectomes")
        if A.ndim != 3 or A.shape[1] != A.shape[2]:
            raise ValueError(
                f"connectomes must have shape (n_subjects, N, N), got shape {A.shape}"
            )
        if A.shape[0] < 1 or A.shape[1] < 1:
            raise ValueError(f"connectomes is empty (shape {A.shape})")
        if not np.isfinite(A).all():
            raise ValueError("connectomes holds NaN or infinite values")
        check_magnitude(A, "connectomes", compute_dtype=np.float32)  # torch runs in float32
        _check_symmetric(A, "connectomes", was_2d=False)
        if phenotypes is None:
            raise TypeError("phenotypes is required: pass phenotypes=array (n_subjects, q)")
        self._check_phenotype_names(_get_feature_names(phenotypes), reset=reset)
        P = as_real_array(phenotypes, "phenotypes")
        if P.ndim == 1:
            P = P[:, None]
        if P.ndim != 2 or P.shape[1] < 1:
            raise ValueError(f"phenotypes must have shape (n_subjects, q), got {P.shape}")
        if P.shape[0] != A.shape[0]:
            raise ValueError(
                f"phenotypes has {P.shape[0]} rows but connectomes has {A.shape[0]} subjects"
            )
        if not np.isfinite(P).all():
            raise ValueError("phenotypes holds NaN or infinite values")
        check_magnitude(P, "phenotypes")
        if not reset:
            if A.shape[1] != self.n_rois_:
                raise ValueError(
                    f"connectomes has {A.shape[1]} ROIs, the model was fitted on {self.n_rois_}"
                )
            if P.shape[1] != self.n_phenotypes_:
                raise ValueError(
                    f"phenotypes has {P.shape[1]} columns, the model was fitted on "
                    f"{self.n_phenotypes_}"
                )
        return A, P

    def _check_phenotype_names(self, names, *, reset):
        """Record (``reset``) or check the column names of ``phenotypes``, as scikit-learn
        does for the names of ``X``: other names or another order raise a ValueError;
        names where the fit had none, or the converse, warn."""
        if reset:
            if names is None:
                self.__dict__.pop("phenotype_names_in_", None)
            else:
                self.phenotype_names_in_ = names
            return
        fitted = getattr(self, "phenotype_names_in_", None)
        if fitted is None and names is None:
            return
        owner = type(self).__name__
        if fitted is None:
            warn(f"phenotypes has feature names, but {owner} was fitted without feature names")
        elif names is None:
            warn(f"phenotypes has no feature names, but {owner} was fitted with feature names")
        elif not np.array_equal(fitted, names):
            raise ValueError(
                f"the feature names of phenotypes differ from those {owner} was fitted with "
                f"({_names_difference(fitted, names)}): pass the columns in the order of "
                "phenotype_names_in_"
            )

    def _tensors(self, A, P, device):
        A_hat = normalize_connectome(A, mode="symmetric", top_k=self.top_k)
        powers = torch.as_tensor(hop_powers(A_hat, self.n_hops), dtype=torch.float32)
        powers = powers.to(device)
        X = torch.as_tensor(A, dtype=torch.float32, device=device)
        Pz = (P - self.phenotype_mean_) / self.phenotype_scale_
        Pt = torch.as_tensor(Pz, dtype=torch.float32, device=device)
        return powers, X, Pt

    # -- fit -----------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    @with_torch_threads
    def fit(self, connectomes, y, *, phenotypes=None):
        """Train the network.

        Parameters
        ----------
        connectomes : array-like of shape (n_subjects, N, N)
            Symmetric functional-connectivity matrices.
        y : array-like of shape (n_subjects,)
        phenotypes : array-like of shape (n_subjects, q)
            Required.

        Returns
        -------
        self : PhenoBrainClassifier
        """
        return self._fit(connectomes, y, phenotypes)

    def _fit(self, connectomes, y, phenotypes):
        A, P = self._check_inputs(connectomes, phenotypes, reset=True)
        y = column_or_1d(y, warn=True)
        if y.shape[0] != A.shape[0]:
            raise ValueError(
                f"y has {y.shape[0]} labels but connectomes has {A.shape[0]} subjects"
            )
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError("PhenoBrainClassifier needs at least two classes in y")
        self.n_rois_, self.n_phenotypes_ = A.shape[1], P.shape[1]
        n, N = A.shape[:2]
        check_allocation(
            n * (self.n_hops + 1) * N * N,
            "n_hops",
            self.n_hops,
            what="the hop powers (n_subjects x (n_hops + 1) x n_rois^2)",
        )
        e = self.embed_dim
        check_allocation(
            e * (N + 5 * e + 3 * P.shape[1] + self.n_hops + 8) + n * N * e,
            "embed_dim",
            e,
            what="the network's weights and ROI embeddings",
            itemsize=4,
        )
        self.phenotype_mean_ = P.mean(axis=0)
        scale = P.std(axis=0)
        self.phenotype_scale_ = np.where(scale > 0, scale, 1.0)
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(2**31 - 1))
        device = resolve_device(self.device)
        powers, X, Pt = self._tensors(A, P, device)
        yt = torch.as_tensor(y_idx, dtype=torch.long, device=device)
        train = np.arange(A.shape[0])
        val = None
        if self.early_stopping:
            from sklearn.model_selection import train_test_split

            try:
                train, val = train_test_split(
                    train,
                    test_size=self.validation_fraction,
                    stratify=y_idx,
                    random_state=seed,
                )
            except ValueError as exc:
                raise ValueError(
                    f"early_stopping: cannot split off validation_fraction="
                    f"{self.validation_fraction} of {A.shape[0]} subjects with every class "
                    f"on both sides ({exc})"
                ) from exc
            val_t = torch.from_numpy(val).to(device)
        n = train.size
        train_t = torch.from_numpy(train).to(device)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            net = _PhenoBrainNet(
                self.n_rois_,
                self.n_phenotypes_,
                self.embed_dim,
                self.n_hops,
                self.classes_.size,
                mode=self.phenotype_path,
                prior_bias=self.prior_bias,
                film=self.film,
            ).to(device)
        opt = torch.optim.Adam(
            net.parameters(), lr=self.learning_rate, weight_decay=self.weight_decay
        )
        self.loss_curve_ = []
        best_val, best_state, stale = np.inf, None, 0
        n_epochs = self.n_epochs
        self.best_epoch_ = n_epochs
        start = time.perf_counter()
        for epoch in self._progress(range(n_epochs), desc="fit", unit="epoch"):
            net.train()
            order = train_t[torch.from_numpy(rng.permutation(n)).to(device)]
            ce_sum = reg_sum = 0.0
            for b in range(0, n, self.batch_size):
                idx = order[b : b + self.batch_size]
                logits, reg, *_ = net(powers[idx], X[idx], Pt[idx])
                ce = F.cross_entropy(logits, yt[idx])
                loss = ce + self.reg_weight * reg
                check_finite_loss(
                    loss,
                    self,
                    ("learning_rate", "prior_bias", "reg_weight"),
                    where=f" at epoch {epoch + 1}",
                )
                opt.zero_grad()
                loss.backward()
                opt.step()
                ce_sum += float(ce.detach()) * idx.numel()
                reg_sum += float(reg.detach()) * idx.numel()
            record = {"ce": ce_sum / n, "reg": reg_sum / n}
            if val is not None:
                with torch.no_grad():
                    logits = net(powers[val_t], X[val_t], Pt[val_t])[0]
                    record["val_ce"] = float(F.cross_entropy(logits, yt[val_t]))
                if record["val_ce"] < best_val - 1e-4:
                    best_val, stale, self.best_epoch_ = record["val_ce"], 0, epoch + 1
                    best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
                else:
                    stale += 1
            self.loss_curve_.append(record)
            self._log(
                f"epoch {epoch + 1}/{n_epochs}: ce {ce_sum / n:.4f} reg {reg_sum / n:.4f}"
                + (f" val_ce {record['val_ce']:.4f}" if val is not None else "")
                + f" ({time.perf_counter() - start:.1f} s)",
                level=2,
            )
            if val is not None and stale >= self.n_iter_no_change:
                break
        if best_state is not None:
            net.load_state_dict(best_state)
        net.eval()
        self.network_ = net
        return self

    # -- inference -----------------------------------------------------------
    @with_torch_threads
    def _forward(self, connectomes, phenotypes):
        check_is_fitted(self)
        A, P = self._check_inputs(connectomes, phenotypes, reset=False)
        device = next(self.network_.parameters()).device
        powers, X, Pt = self._tensors(A, P, device)
        with torch.no_grad():
            logits, _, K, alpha, attn = self.network_(powers, X, Pt)
        return logits.cpu(), K.cpu().numpy(), alpha.cpu().numpy(), attn.cpu().numpy()

    def predict_proba(self, connectomes, *, phenotypes=None):
        """Class probabilities of every subject.

        Parameters
        ----------
        connectomes : array-like of shape (n_subjects, N, N)
            Symmetric functional-connectivity matrices.
        phenotypes : array-like of shape (n_subjects, q)
            The subjects' phenotypes; required.

        Returns
        -------
        proba : ndarray of shape (n_subjects, n_classes)
            Columns in the order of ``classes_``.
        """
        logits = self._forward(connectomes, phenotypes)[0]
        return torch.softmax(logits.double(), dim=1).numpy()

    def decision_function(self, connectomes, *, phenotypes=None):
        """Logits; for two classes the log-odds of ``classes_[1]``.

        Parameters
        ----------
        connectomes : array-like of shape (n_subjects, N, N)
            Symmetric functional-connectivity matrices.
        phenotypes : array-like of shape (n_subjects, q)
            The subjects' phenotypes; required.

        Returns
        -------
        scores : ndarray of shape (n_subjects,) or (n_subjects, n_classes)
            The log-odds of ``classes_[1]`` for two classes, else the logits.
        """
        logits = self._forward(connectomes, phenotypes)[0].double().numpy()
        if logits.shape[1] == 2:
            return logits[:, 1] - logits[:, 0]
        return logits

    def predict(self, connectomes, *, phenotypes=None):
        """The most probable class of each subject.

        Parameters
        ----------
        connectomes : array-like of shape (n_subjects, N, N)
            Symmetric functional-connectivity matrices.
        phenotypes : array-like of shape (n_subjects, q)
            The subjects' phenotypes; required.

        Returns
        -------
        y_pred : ndarray of shape (n_subjects,)
            Labels from ``classes_``.
        """
        proba = self.predict_proba(connectomes, phenotypes=phenotypes)
        return self.classes_[proba.argmax(1)]

    def score(self, connectomes, y, *, phenotypes=None, sample_weight=None):
        """Accuracy of :meth:`predict` on ``(connectomes, phenotypes)``.

        Parameters
        ----------
        connectomes : array-like of shape (n_subjects, N, N)
            Symmetric functional-connectivity matrices.
        y : array-like of shape (n_subjects,)
            The true labels.
        phenotypes : array-like of shape (n_subjects, q)
            The subjects' phenotypes; required.
        sample_weight : array-like of shape (n_subjects,), default=None
            Weights of the subjects in the accuracy.

        Returns
        -------
        score : float
            The (weighted) fraction of subjects classified correctly.
        """
        pred = self.predict(connectomes, phenotypes=phenotypes)
        return accuracy_score(y, pred, sample_weight=sample_weight)

    def hop_weights(self, connectomes, *, phenotypes=None):
        """``alpha(p)`` per subject, shape (n_subjects, H + 1)."""
        return self._forward(connectomes, phenotypes)[2].astype(np.float64)

    def routing_kernels(self, connectomes, *, phenotypes=None):
        """The subject-specific kernels ``K(p)``, shape (n_subjects, N, N)."""
        return self._forward(connectomes, phenotypes)[1].astype(np.float64)

    def attention(self, connectomes, *, phenotypes=None):
        """The regulated ROI attention matrices, shape (n_subjects, N, N)."""
        return self._forward(connectomes, phenotypes)[3].astype(np.float64)
