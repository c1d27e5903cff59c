"""The toy GRPO problem of the benchmarks: NumPy GRPO on a multi-task quality-scoring problem.

The same problem as the package demo's ``grpo`` section, written out here so that the
benchmarks use the package through its public API only.

"Images" are scikit-learn digits with a synthetic ground-truth quality on a
1-5 scale per task (a design of this package, not the paper's data):

* ``technical``: Gaussian pixel noise of level ``u ~ U[0, 1]`` is added and
  the quality is ``5 - 4 u``;
* ``aesthetics``: left-right symmetry of the clean digit, ``1 + 4 (1 - p)``
  with ``p`` the percentile of its asymmetry;
* ``alignment``: a prompted class (the true one half of the time) and the
  quality ``1 + 4 c`` with ``c`` the min-max scaled cosine similarity of the
  digit to the prompted class's mean image (a frozen "encoder").

The policy is a tiny softmax model with a task-specific weight block (the
"task embedding") that writes the score as two tokens: an integer in 1..5,
then a quarter step in {0, .25, .5, .75} conditioned on the integer, so that
entropy gating has two tokens to choose from. It sees four features: a
constant, the roughness (mean absolute Laplacian), the asymmetry and the
cosine similarity. Training is GRPO with one on-policy step per batch, so the
PPO ratio is 1 and the clipped loss's gradient is ``A grad log pi``.
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext.rl import accuracy_reward, entropy_mask, group_advantages, std_filter

TASKS = ("technical", "aesthetics", "alignment")
_N1, _N2 = 5, 4


def make_quality_tasks(n_samples=1200, *, random_state=0):
    """Features, tasks and ground-truth quality of the toy IQA problem.

    Returns
    -------
    phi : ndarray of shape (n, 4)
    task : ndarray of int, shape (n,)
    quality : ndarray of shape (n,), in [1, 5]
    """
    from sklearn.datasets import load_digits

    rng = np.random.default_rng(random_state)
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


def _softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


class _Policy:
    def __init__(self, n_features, rng):
        self.W1 = 0.01 * rng.normal(size=(3, _N1, n_features))
        self.W2 = 0.01 * rng.normal(size=(3, _N1, _N2, n_features))

    def probs(self, phi, task):
        p1 = _softmax(np.einsum("nkf,nf->nk", self.W1[task], phi))
        p2 = _softmax(np.einsum("nkjf,nf->nkj", self.W2[task], phi))  # for every token 1
        return p1, p2

    def greedy(self, phi, task):
        p1, p2 = self.probs(phi, task)
        a1 = p1.argmax(1)
        a2 = p2[np.arange(len(a1)), a1].argmax(1)
        return 1 + a1 + 0.25 * a2


def _entropy(p):
    return -(p * np.log(np.clip(p, 1e-300, None))).sum(-1)


def train_scorer(
    phi,
    task,
    quality,
    *,
    reward="gaussian",
    filters=False,
    n_steps=300,
    batch_prompts=16,
    group_size=16,
    learning_rate=0.5,
    sigma=0.8,
    std_threshold=1e-3,
    rho=0.5,
    warmup=0,
    random_state=0,
):
    """Train the toy scorer with NumPy GRPO; return the policy and training stats.

    ``reward``: an :func:`~mvlearn_ext.rl.accuracy_reward` kind. ``filters``
    switches on the std filter (on the accuracy reward) and per-sequence
    entropy gating with share ``rho`` of the two tokens.
    """
    rng = np.random.default_rng(random_state)
    pol = _Policy(phi.shape[1], rng)
    n = phi.shape[0]
    degenerate, used = 0, 0
    for step in range(n_steps):
        idx = rng.integers(0, n, size=batch_prompts)
        P, T, Q = phi[idx], task[idx], quality[idx]
        p1, p2 = pol.probs(P, T)
        # G samples per prompt
        cum1 = p1.cumsum(1)
        u1 = rng.uniform(size=(batch_prompts, group_size, 1))
        a1 = np.minimum((u1 > cum1[:, None, :]).sum(-1), _N1 - 1)
        q2 = p2[np.arange(batch_prompts)[:, None], a1]  # (B, G, N2)
        u2 = rng.uniform(size=(batch_prompts, group_size, 1))
        a2 = np.minimum((u2 > q2.cumsum(-1)).sum(-1), _N2 - 1)
        s_hat = 1 + a1 + 0.25 * a2
        R = accuracy_reward(
            s_hat, np.broadcast_to(Q[:, None], s_hat.shape), kind=reward, sigma=sigma
        )
        A = group_advantages(R)
        keep = std_filter(R, threshold=std_threshold if (filters and step >= warmup) else -1.0)
        zero = np.all(np.abs(A) < 1e-12, axis=1)
        degenerate += int(np.sum(zero & keep))
        used += int(np.sum(keep))
        A = A * keep[:, None]
        # token masks (B*G, 2)
        H = np.stack(
            [np.broadcast_to(_entropy(p1)[:, None], a1.shape), _entropy(q2)], axis=-1
        ).reshape(-1, 2)
        mask = entropy_mask(H, rho=rho) if filters else np.ones_like(H, dtype=bool)
        mask = mask.reshape(batch_prompts, group_size, 2).astype(float)
        # per-sequence masked mean, then batch mean ("grpo" reduction)
        wts = A / (mask.sum(-1).clip(1) * batch_prompts * group_size)
        g1 = (np.eye(_N1)[a1] - p1[:, None, :]) * (wts * mask[..., 0])[..., None]
        g2 = (np.eye(_N2)[a2] - q2) * (wts * mask[..., 1])[..., None]
        G1 = np.einsum("bgk,bf->bkf", g1, P)
        G2 = np.zeros((batch_prompts, _N1, _N2, P.shape[1]))
        for b in range(batch_prompts):
            np.add.at(G2[b], a1[b], g2[b][:, :, None] * P[b][None, None, :])
        np.add.at(pol.W1, T, learning_rate * G1)
        np.add.at(pol.W2, T, learning_rate * G2)
    return pol, {"zero_advantage_share": degenerate / max(used, 1), "groups_used": used}


def evaluate_scorer(policy, phi, task, quality):
    """Held-out SRCC and PLCC per task of the greedy score."""
    from scipy.stats import pearsonr, spearmanr

    s = policy.greedy(phi, task)
    out = {}
    for t, name in enumerate(TASKS):
        sel = task == t
        if np.ptp(s[sel]) == 0:
            out[name] = (0.0, 0.0)
            continue
        out[name] = (
            float(spearmanr(s[sel], quality[sel])[0]),
            float(pearsonr(s[sel], quality[sel])[0]),
        )
    return out
