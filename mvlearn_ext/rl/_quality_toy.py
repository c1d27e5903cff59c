"""VisualScore's rewards end to end on a toy: a quality scorer trained by NumPy GRPO.

"Images" are scikit-learn digits with a synthetic ground-truth quality on a
1-5 scale per task (a design of this package, not the paper's data), drawn by
:func:`make_quality_tasks`:

* ``technical``: Gaussian pixel noise of level ``u ~ U[0, 1]`` is added and
  the quality is ``5 - 4 u``;
* ``aesthetics``: left-right symmetry of the clean digit, ``1 + 4 (1 - p)``
  with ``p`` the percentile of its asymmetry;
* ``alignment``: a prompted class (the true one half of the time) and the
  quality ``1 + 4 c`` with ``c`` the min-max scaled cosine similarity of the
  digit to the prompted class's mean image (a frozen "encoder").

The policy (:class:`ScorerPolicy`) is a tiny softmax model with a
task-specific weight block (the "task embedding") that writes the score as
two tokens: an integer in 1..5, then a quarter step in {0, .25, .5, .75}
conditioned on the integer, so that entropy gating has two tokens to choose
from. It sees four features: a constant, the roughness (mean absolute
Laplacian), the asymmetry and the cosine similarity. :func:`train_scorer`
runs GRPO with one on-policy step per batch, so the PPO ratio is 1 and the
clipped loss's gradient is ``A grad log pi``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import entr, softmax

from mvlearn_ext.rl._advantages import entropy_mask, group_advantages, std_filter
from mvlearn_ext.rl._rewards import accuracy_reward
from mvlearn_ext.utils._validation import (
    check_count,
    check_magnitude,
    check_real,
    check_rng,
    integer_array,
    real_array,
)

__all__ = [
    "QUALITY_TASKS",
    "ScorerPolicy",
    "evaluate_scorer",
    "make_quality_tasks",
    "train_scorer",
]

#: The tasks of :func:`make_quality_tasks`, in the order of their codes.
QUALITY_TASKS = ("technical", "aesthetics", "alignment")
_N1, _N2 = 5, 4
_REWARDS = ("gaussian", "mae", "mse", "bounded", "binary")


def _check_problem(phi, task, quality):
    phi = real_array(phi, "phi", ndim=2)
    task = integer_array(task, "task", ndim=1, low=0, high=len(QUALITY_TASKS) - 1)
    quality = real_array(quality, "quality", ndim=1)
    n = phi.shape[0]
    if task.shape != (n,) or quality.shape != (n,):
        raise ValueError(
            f"task and quality must have shape ({n},), got {task.shape} and {quality.shape}"
        )
    # the logits are products of weights learnt from phi with phi; the rewards square errors
    check_magnitude(phi, "phi")
    check_magnitude(quality, "quality")
    return phi, task, quality


def make_quality_tasks(n_samples=1200, *, random_state=None):
    """Features, task codes and ground-truth quality of the toy quality-scoring problem.

    Each sample is a scikit-learn digit drawn with replacement and given one of
    the three tasks of :data:`QUALITY_TASKS` at random: ``technical`` (the digit
    gets pixel noise of a random level, quality ``5 - 4 u``), ``aesthetics``
    (quality from the percentile of its left-right asymmetry) or ``alignment``
    (quality from its cosine similarity to a prompted class's mean image).

    Parameters
    ----------
    n_samples : int, default=1200
        Number of samples; at least 2.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds NumPy's ``default_rng`` (a Generator is used as it is).

    Returns
    -------
    phi : ndarray of shape (n_samples, 4)
        The scorer's features: a constant, then the standardised roughness
        (mean absolute Laplacian), asymmetry and cosine similarity.
    task : ndarray of int, shape (n_samples,)
        Task codes, indices into :data:`QUALITY_TASKS`.
    quality : ndarray of shape (n_samples,)
        Ground-truth quality in [1, 5].

    See Also
    --------
    train_scorer : The GRPO scorer trained on them.
    evaluate_scorer : Its held-out rank correlation per task.

    Examples
    --------
    >>> from mvlearn_ext.rl import make_quality_tasks
    >>> phi, task, quality = make_quality_tasks(100, random_state=0)
    >>> phi.shape, sorted(set(task.tolist())), bool(quality.min() >= 1 and quality.max() <= 5)
    ((100, 4), [0, 1, 2], True)
    """
    from sklearn.datasets import load_digits

    n_samples = check_count(n_samples, "n_samples", 2)
    rng = check_rng(random_state)
    digits = load_digits()
    X, y = digits.images / 16.0, digits.target
    idx = rng.integers(0, X.shape[0], size=n_samples)
    task = rng.integers(0, 3, size=n_samples)
    imgs = X[idx].copy()
    quality = np.empty(n_samples)
    # technical: noise
    u = rng.uniform(0, 1, size=n_samples)
    noisy = (
        imgs + (0.35 * u)[:, None, None] * rng.normal(size=imgs.shape) * (task == 0)[:, None, None]
    )
    quality[task == 0] = 5 - 4 * u[task == 0]
    lap = (
        4 * noisy[:, 1:-1, 1:-1]
        - noisy[:, :-2, 1:-1]
        - noisy[:, 2:, 1:-1]
        - noisy[:, 1:-1, :-2]
        - noisy[:, 1:-1, 2:]
    )
    rough = np.abs(lap).mean(axis=(1, 2))
    asym = np.abs(noisy - noisy[:, :, ::-1]).mean(axis=(1, 2))
    pct = np.argsort(np.argsort(asym)) / (n_samples - 1)
    quality[task == 1] = 1 + 4 * (1 - pct[task == 1])
    # alignment: cosine to the prompted class's mean image
    means = np.stack([X[y == c].reshape(-1, 64).mean(0) for c in range(10)])
    prompt = np.where(rng.uniform(size=n_samples) < 0.5, y[idx], rng.integers(0, 10, n_samples))
    flat = noisy.reshape(n_samples, -1)
    cos = np.sum(flat * means[prompt], 1) / (
        np.linalg.norm(flat, axis=1) * np.linalg.norm(means[prompt], axis=1) + 1e-12
    )
    c = (cos - cos.min()) / (cos.max() - cos.min())
    quality[task == 2] = 1 + 4 * c[task == 2]
    feats = np.column_stack([rough, asym, cos])
    feats = (feats - feats.mean(0)) / feats.std(0)
    phi = np.column_stack([np.ones(n_samples), feats])
    return phi, task, quality


class ScorerPolicy:
    """The toy's two-token softmax scorer, one weight block per task.

    The first token is the integer part of the score (1..5), the second a
    quarter step (0, .25, .5, .75) drawn from a softmax conditioned on the
    first; both are linear in the features.

    Parameters
    ----------
    n_features : int
        Width of the features ``phi``.
    rng : numpy.random.Generator
        Draws the initial weights (normal, scale 0.01).

    Attributes
    ----------
    W1 : ndarray of shape (3, 5, n_features)
        Logit weights of the first token, per task.
    W2 : ndarray of shape (3, 5, 4, n_features)
        Logit weights of the second token, per task and first token.
    """

    def __init__(self, n_features, rng):
        self.W1 = 0.01 * rng.normal(size=(3, _N1, n_features))
        self.W2 = 0.01 * rng.normal(size=(3, _N1, _N2, n_features))

    def probs(self, phi, task):
        """Probabilities of the first token (n, 5) and of the second given each first (n, 5, 4)."""
        p1 = softmax(np.einsum("nkf,nf->nk", self.W1[task], phi), axis=-1)
        p2 = softmax(np.einsum("nkjf,nf->nkj", self.W2[task], phi), axis=-1)  # for every token 1
        return p1, p2

    def greedy(self, phi, task):
        """The most likely score of each sample, in {1, 1.25, ..., 5.75}."""
        p1, p2 = self.probs(phi, task)
        a1 = p1.argmax(1)
        a2 = p2[np.arange(len(a1)), a1].argmax(1)
        return 1 + a1 + 0.25 * a2


def train_scorer(
    phi,
    task,
    quality,
    *,
    reward="gaussian",
    filters=False,
    n_steps=300,
    batch_size=16,
    group_size=16,
    learning_rate=0.5,
    sigma=0.8,
    std_threshold=1e-3,
    rho=0.5,
    random_state=None,
):
    """Train the toy's :class:`ScorerPolicy` with NumPy GRPO on a VisualScore reward.

    Each step samples ``batch_size`` training samples and ``group_size``
    scores of each, rewards them with :func:`~mvlearn_ext.rl.accuracy_reward`
    against the true quality, computes group-relative advantages
    (:func:`~mvlearn_ext.rl.group_advantages`) and takes one on-policy
    gradient step on the per-sequence token mean (the PPO ratio is 1).

    Parameters
    ----------
    phi : array-like of shape (n_samples, n_features)
        Features, as :func:`make_quality_tasks` returns them.
    task : array-like of int, shape (n_samples,)
        Task codes in 0..2.
    quality : array-like of shape (n_samples,)
        True quality.
    reward : {"gaussian", "mae", "mse", "bounded", "binary"}, default="gaussian"
        The ``kind`` of :func:`~mvlearn_ext.rl.accuracy_reward`.
    filters : bool, default=False
        VisualScore's two filters: the std filter of groups whose rewards are
        all alike (:func:`~mvlearn_ext.rl.std_filter`, threshold
        ``std_threshold``) and per-sequence entropy gating of the two tokens
        (:func:`~mvlearn_ext.rl.entropy_mask`, share ``rho``).
    n_steps : int, default=300
        GRPO steps.
    batch_size : int, default=16
        Samples (prompts) per step.
    group_size : int, default=16
        ``G``, the scores sampled per prompt; at least 2.
    learning_rate : float, default=0.5
        Step size of the plain gradient step.
    sigma : float, default=0.8
        Width of the Gaussian reward.
    std_threshold : float, default=1e-3
        Groups whose reward standard deviation is at most this are dropped
        when ``filters`` is on.
    rho : float in (0, 1], default=0.5
        Share of the tokens of a sequence kept by entropy gating (the
        higher-entropy ones) when ``filters`` is on.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds NumPy's ``default_rng`` (initial weights, batches, samples; a
        Generator is used as it is).

    Returns
    -------
    policy : ScorerPolicy
    stats : dict
        ``"zero_advantage_share"``: share of the groups used whose advantages
        were all zero (no learning signal); ``"groups_used"``: the number of
        groups that passed the std filter.

    See Also
    --------
    make_quality_tasks : The problem it is trained on.
    evaluate_scorer : The held-out rank correlation of its scores.

    Examples
    --------
    >>> from mvlearn_ext.rl import evaluate_scorer, make_quality_tasks, train_scorer
    >>> phi, task, quality = make_quality_tasks(600, random_state=0)
    >>> policy, stats = train_scorer(phi[:400], task[:400], quality[:400], random_state=0)
    >>> srcc = {name: r[0] for name, r in evaluate_scorer(policy, phi[400:], task[400:],
    ...                                                      quality[400:]).items()}
    >>> bool(srcc["technical"] > 0.5)
    True
    """
    phi, task, quality = _check_problem(phi, task, quality)
    if reward not in _REWARDS:
        raise ValueError(f"reward must be one of {_REWARDS}, got {reward!r}")
    if not isinstance(filters, bool | np.bool_):
        raise TypeError(f"filters must be a bool, got {filters!r}")
    n_steps = check_count(n_steps, "n_steps", 0)
    batch_size = check_count(batch_size, "batch_size", 1)
    group_size = check_count(group_size, "group_size", 2)
    learning_rate = check_real(learning_rate, "learning_rate", low=0.0, low_open=True)
    sigma = check_real(sigma, "sigma", low=0.0, low_open=True)
    std_threshold = check_real(std_threshold, "std_threshold", low=0.0)
    rho = check_real(rho, "rho", low=0.0, low_open=True, high=1.0)
    rng = check_rng(random_state)
    pol = ScorerPolicy(phi.shape[1], rng)
    n = phi.shape[0]
    degenerate, used = 0, 0
    for _ in range(n_steps):
        idx = rng.integers(0, n, size=batch_size)
        P, T, Q = phi[idx], task[idx], quality[idx]
        p1, p2 = pol.probs(P, T)
        # G samples per prompt
        cum1 = p1.cumsum(1)
        u1 = rng.uniform(size=(batch_size, group_size, 1))
        a1 = np.minimum((u1 > cum1[:, None, :]).sum(-1), _N1 - 1)
        q2 = p2[np.arange(batch_size)[:, None], a1]  # (B, G, N2)
        u2 = rng.uniform(size=(batch_size, group_size, 1))
        a2 = np.minimum((u2 > q2.cumsum(-1)).sum(-1), _N2 - 1)
        s_hat = 1 + a1 + 0.25 * a2
        R = accuracy_reward(
            s_hat, np.broadcast_to(Q[:, None], s_hat.shape), kind=reward, sigma=sigma
        )
        A = group_advantages(R)
        keep = std_filter(R, threshold=std_threshold if filters else -1.0)
        zero = np.all(np.abs(A) < 1e-12, axis=1)
        degenerate += int(np.sum(zero & keep))
        used += int(np.sum(keep))
        A = A * keep[:, None]
        # token masks (B*G, 2)
        H = np.stack(
            [np.broadcast_to(entr(p1).sum(-1)[:, None], a1.shape), entr(q2).sum(-1)], axis=-1
        ).reshape(-1, 2)
        mask = entropy_mask(H, rho=rho) if filters else np.ones_like(H, dtype=bool)
        mask = mask.reshape(batch_size, group_size, 2).astype(float)
        # per-sequence masked mean, then batch mean ("grpo" reduction)
        wts = A / (mask.sum(-1).clip(1) * batch_size * group_size)
        g1 = (np.eye(_N1)[a1] - p1[:, None, :]) * (wts * mask[..., 0])[..., None]
        g2 = (np.eye(_N2)[a2] - q2) * (wts * mask[..., 1])[..., None]
        G1 = np.einsum("bgk,bf->bkf", g1, P)
        G2 = np.zeros((batch_size, _N1, _N2, P.shape[1]))
        for b in range(batch_size):
            np.add.at(G2[b], a1[b], g2[b][:, :, None] * P[b][None, None, :])
        np.add.at(pol.W1, T, learning_rate * G1)
        np.add.at(pol.W2, T, learning_rate * G2)
    return pol, {"zero_advantage_share": degenerate / max(used, 1), "groups_used": used}


def evaluate_scorer(policy, phi, task, quality):
    """Rank and linear correlation per task of the greedy scores with the true quality.

    Parameters
    ----------
    policy : ScorerPolicy
        As :func:`train_scorer` returns it.
    phi : array-like of shape (n_samples, n_features)
    task : array-like of int, shape (n_samples,)
        Task codes in 0..2.
    quality : array-like of shape (n_samples,)

    Returns
    -------
    report : dict
        For each name of :data:`QUALITY_TASKS`, in that order, ``(SRCC, PLCC)``:
        Spearman's and Pearson's correlation of the greedy score with the
        quality on that task's samples; ``(0.0, 0.0)`` where the greedy score
        is constant there (no ranking).

    See Also
    --------
    train_scorer : Trains the policy evaluated.

    Examples
    --------
    >>> from mvlearn_ext.rl import evaluate_scorer, make_quality_tasks, train_scorer
    >>> phi, task, quality = make_quality_tasks(200, random_state=0)
    >>> policy, _ = train_scorer(phi, task, quality, n_steps=0, random_state=0)  # untrained
    >>> list(evaluate_scorer(policy, phi, task, quality))
    ['technical', 'aesthetics', 'alignment']
    """
    from scipy.stats import pearsonr, spearmanr

    if not isinstance(policy, ScorerPolicy):
        raise TypeError(f"policy must be a ScorerPolicy, got {type(policy).__name__}")
    phi, task, quality = _check_problem(phi, task, quality)
    if phi.shape[1] != policy.W1.shape[2]:
        raise ValueError(
            f"phi has {phi.shape[1]} features, the policy was built for {policy.W1.shape[2]}"
        )
    s = policy.greedy(phi, task)
    out = {}
    for t, name in enumerate(QUALITY_TASKS):
        sel = task == t
        if sel.sum() < 2 or np.ptp(s[sel]) == 0:
            out[name] = (0.0, 0.0)
            continue
        out[name] = (
            float(spearmanr(s[sel], quality[sel])[0]),
            float(pearsonr(s[sel], quality[sel])[0]),
        )
    return out
