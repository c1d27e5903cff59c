"""GRAPE end to end on a toy: a query rewriter trained by NumPy GRPO against a frozen retriever.

Reconstruction (GRAPE, arXiv 2509.23370; the full paper was not available):
the reward structure (a collection-relative ranking reward plus a format
reward, combined linearly, against a frozen retriever) follows the published
reviews of its withdrawn ICLR 2026 version and is implemented in
:mod:`mvlearn_ext.rl._rewards`. The retrieval problem, the policy and every
constant below are designs of this package, not the paper's setting (a Qwen3
rewriter against CLIP).

The problem (:func:`make_shifted_retrieval`) imitates a language shift. A
frozen "retriever" embeds a bag of tokens as the normalised sum of its token
embeddings. Items are bags of *native* tokens. Queries arrive in a foreign
vocabulary: each native token of the target item appears as its alias, whose
embedding is nearly orthogonal to the native one, and a foreign stop-word is
added. The native embeddings share a common direction (an anisotropic space,
as real text encoders are), and a few generic *hub* tokens lie along it.

The rewriting policy (:class:`RewriterPolicy`) is a softmax over edits, one
categorical per query token (keep the alias, translate it into one of
``n_candidates`` native dictionary entries, or drop it) and one more for the
whole query (append nothing or one hub token). Its logits are a linear model
on one-hot token ids (a table). A rewrite is rendered as
``<rewrite>...</rewrite>``; the format reward is 1 when the rewrite is not
empty (:data:`REWRITE_PATTERN`).

:func:`train_rewriter` runs GRPO: ``G`` rewrites per query, group-relative
advantages (:func:`~mvlearn_ext.rl.group_advantages`), the PPO-clipped
surrogate per edit with an optional k3 KL to the initial policy, ``n_inner``
Adam steps per sampled batch. ``reward="rank"`` uses GRAPE's ranking reward,
``reward="similarity"`` the raw similarity of the target (the ablation open
to score inflation).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

from mvlearn_ext.rl._advantages import group_advantages
from mvlearn_ext.rl._rewards import (
    format_reward,
    inflation_score,
    rank_reward,
    retrieval_rank,
    retrieval_scores,
    similarity_reward,
)
from mvlearn_ext.utils._progress import log_message
from mvlearn_ext.utils._validation import check_count, check_real

__all__ = [
    "REWRITE_PATTERN",
    "RewriterPolicy",
    "ShiftedRetrieval",
    "evaluate_rewriter",
    "make_shifted_retrieval",
    "recall_at_k",
    "train_rewriter",
]

#: A well-formed rewrite: a non-empty token list inside the rewrite tag.
REWRITE_PATTERN = re.compile(r"^<rewrite>\s*\S.*</rewrite>$", re.S)


def _unit(X):
    return X / np.linalg.norm(X, axis=-1, keepdims=True)


@dataclass(frozen=True)
class ShiftedRetrieval:
    """A frozen toy retrieval problem with shifted queries (see the module docstring).

    Attributes
    ----------
    items : ndarray of shape (n_items, dim)
        Frozen unit item embeddings (the collection).
    native : ndarray of shape (n_native, dim)
        Native token embeddings.
    foreign : ndarray of shape (n_native + n_stop, dim)
        Foreign token embeddings: the alias of native token ``v`` is ``v``,
        stop-words follow.
    hubs : ndarray of shape (n_hubs, dim)
        Generic hub tokens, near the common direction.
    candidates : ndarray of int, shape (n_native + n_stop, n_candidates)
        The native dictionary entries each foreign token may be translated
        into (the right one, for an alias, among distractors).
    train_queries, test_queries : ndarray of int, shape (n, query_len + 1)
        Foreign token ids of each query.
    train_targets, test_targets : ndarray of int, shape (n,)
        The target item of each query; train and test targets are disjoint
        items of the same collection.
    """

    items: np.ndarray
    native: np.ndarray
    foreign: np.ndarray
    hubs: np.ndarray
    candidates: np.ndarray
    train_queries: np.ndarray
    train_targets: np.ndarray
    test_queries: np.ndarray
    test_targets: np.ndarray

    @property
    def n_actions(self):
        """Edits per query token: keep, ``n_candidates`` translations, drop."""
        return self.candidates.shape[1] + 2


def make_shifted_retrieval(
    n_items=400,
    *,
    n_native=300,
    n_stop=20,
    n_hubs=3,
    item_len=5,
    query_len=3,
    n_candidates=4,
    dim=64,
    alias_overlap=0.15,
    anisotropy=1.0,
    test_fraction=0.25,
    queries_per_item=3,
    random_state=None,
):
    """Generate the shifted toy retrieval problem of GRAPE's demo.

    Parameters
    ----------
    n_items : int, default=400
        Items in the collection.
    n_native : int, default=300
        Native vocabulary; each item is a bag of ``item_len`` distinct ones.
    n_stop : int, default=20
        Foreign stop-words (one is added to each query; best dropped).
    n_hubs : int, default=3
        Generic tokens along the common direction of the native space.
    item_len : int, default=5
    query_len : int, default=3
        Native tokens of the target that a query names (as aliases).
    n_candidates : int, default=4
        Dictionary entries per foreign token (one right, the others random).
    dim : int, default=64
    alias_overlap : float in [0, 1), default=0.15
        Squared cosine between an alias and its native token (small: nearly
        orthogonal, so the raw queries retrieve poorly).
    anisotropy : float >= 0, default=1.0
        Scale of the common direction in the native embeddings; 0 gives an
        isotropic space.
    test_fraction : float in (0, 1), default=0.25
        Share of the items whose queries are held out.
    queries_per_item : int, default=3
        Queries drawn per item (random subsets of its tokens).
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    data : ShiftedRetrieval

    See Also
    --------
    train_rewriter : Trains a rewriter on this problem.

    Examples
    --------
    >>> from mvlearn_ext.rl import make_shifted_retrieval
    >>> data = make_shifted_retrieval(60, n_native=50, random_state=0)
    >>> data.items.shape, data.train_queries.shape, data.n_actions
    ((60, 64), (135, 4), 6)
    """
    n_items = check_count(n_items, "n_items", 2)
    n_native = check_count(n_native, "n_native", 2)
    n_stop = check_count(n_stop, "n_stop", 1)
    n_hubs = check_count(n_hubs, "n_hubs", 1)
    item_len = check_count(item_len, "item_len", 1)
    query_len = check_count(query_len, "query_len", 1)
    n_candidates = check_count(n_candidates, "n_candidates", 1)
    dim = check_count(dim, "dim", 2)
    queries_per_item = check_count(queries_per_item, "queries_per_item", 1)
    if item_len > n_native:
        raise ValueError(f"item_len={item_len} exceeds n_native={n_native}")
    if query_len > item_len:
        raise ValueError(f"query_len={query_len} exceeds item_len={item_len}")
    if n_candidates > n_native:
        raise ValueError(f"n_candidates={n_candidates} exceeds n_native={n_native}")
    alias_overlap = check_real(alias_overlap, "alias_overlap", low=0.0, high=1.0)
    if alias_overlap == 1.0:
        raise ValueError("alias_overlap must be below 1 (1 makes aliases native tokens)")
    anisotropy = check_real(anisotropy, "anisotropy", low=0.0)
    test_fraction = check_real(test_fraction, "test_fraction", low=0.0, high=1.0, low_open=True)
    n_test_items = int(round(test_fraction * n_items))
    if not 1 <= n_test_items < n_items:
        raise ValueError(
            f"test_fraction={test_fraction} leaves no train or no test items of {n_items}"
        )
    rng = check_random_state(random_state)

    common = _unit(rng.normal(size=dim))
    z = _unit(rng.normal(size=(n_native, dim)))
    native = _unit(anisotropy * rng.uniform(0.0, 1.0, size=(n_native, 1)) * common + z)
    hubs = _unit(common + 0.1 * _unit(rng.normal(size=(n_hubs, dim))))
    noise = _unit(rng.normal(size=(n_native, dim)))
    alias = _unit(np.sqrt(alias_overlap) * native + np.sqrt(1 - alias_overlap) * noise)
    stop = _unit(rng.normal(size=(n_stop, dim)))
    foreign = np.vstack([alias, stop])

    tokens = np.stack([rng.choice(n_native, size=item_len, replace=False) for _ in range(n_items)])
    items = _unit(native[tokens].sum(axis=1))

    candidates = np.empty((n_native + n_stop, n_candidates), dtype=np.intp)
    for w in range(n_native + n_stop):
        if w < n_native:
            others = rng.choice(n_native - 1, size=n_candidates - 1, replace=False)
            others = others + (others >= w)  # skip w itself
            row = np.concatenate([[w], others])
        else:
            row = rng.choice(n_native, size=n_candidates, replace=False)
        candidates[w] = rng.permutation(row)

    order = rng.permutation(n_items)
    test_items, train_items = order[:n_test_items], order[n_test_items:]

    def queries_for(item_ids):
        Q, T = [], []
        for j in item_ids:
            for _ in range(queries_per_item):
                q = np.concatenate(
                    [
                        rng.choice(tokens[j], size=query_len, replace=False),
                        [n_native + rng.randint(n_stop)],
                    ]
                )
                Q.append(rng.permutation(q))
                T.append(j)
        return np.asarray(Q, dtype=np.intp), np.asarray(T, dtype=np.intp)

    train_q, train_t = queries_for(np.sort(train_items))
    test_q, test_t = queries_for(np.sort(test_items))
    return ShiftedRetrieval(
        items=items,
        native=native,
        foreign=foreign,
        hubs=hubs,
        candidates=candidates,
        train_queries=train_q,
        train_targets=train_t,
        test_queries=test_q,
        test_targets=test_t,
    )


def _softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


class RewriterPolicy:
    """A factorised softmax rewriting policy: edit logits per foreign token id, hub logits.

    Action ``a`` of a query token ``w``: ``0`` keeps the alias, ``1..M``
    translates it into ``candidates[w, a - 1]``, ``M + 1`` drops it. The
    query-level action ``h``: ``0`` appends nothing, ``h >= 1`` appends hub
    ``h - 1``.

    Parameters
    ----------
    data : ShiftedRetrieval
    keep_bias : float, default=2.0
        Initial logit of "keep" (and of "no hub"): the untrained rewriter
        mostly copies the query, as a pretrained language model would.
    """

    def __init__(self, data, *, keep_bias=2.0):
        self.data = data
        n_foreign, n_hubs = data.foreign.shape[0], data.hubs.shape[0]
        self.edit_logits = np.zeros((n_foreign, data.n_actions))
        self.edit_logits[:, 0] = keep_bias
        self.hub_logits = np.zeros(n_hubs + 1)
        self.hub_logits[0] = keep_bias

    def probs(self, queries):
        """Edit probabilities (n, L, n_actions) and hub probabilities (n_hubs + 1,)."""
        return _softmax(self.edit_logits[queries]), _softmax(self.hub_logits)

    def greedy(self, queries):
        """The most likely rewrite: edits (n, L) and hub actions (n,)."""
        P, H = self.probs(queries)
        return P.argmax(-1), np.full(queries.shape[0], H.argmax(), dtype=np.intp)

    def copy(self):
        new = RewriterPolicy.__new__(RewriterPolicy)
        new.data = self.data
        new.edit_logits = self.edit_logits.copy()
        new.hub_logits = self.hub_logits.copy()
        return new


def _embed_rewrites(data, queries, edits, hub):
    """Summed token embeddings of the rewrites (zero when empty) and the non-empty flag."""
    M = data.candidates.shape[1]
    keep = edits == 0
    trans = (edits >= 1) & (edits <= M)
    idx = np.clip(edits - 1, 0, M - 1)
    native_ids = np.take_along_axis(data.candidates[queries], idx[..., None], -1)[..., 0]
    U = (data.foreign[queries] * keep[..., None]).sum(-2)
    U = U + (data.native[native_ids] * trans[..., None]).sum(-2)
    U = U + np.where((hub >= 1)[..., None], data.hubs[np.maximum(hub - 1, 0)], 0.0)
    nonempty = keep.any(-1) | trans.any(-1) | (hub >= 1)
    return U, nonempty


def render_rewrites(data, queries, edits, hub):
    """The rewrites as text, ``<rewrite>f12 n7 h0</rewrite>`` (``f``: foreign, ``n``: native)."""
    M = data.candidates.shape[1]
    out = []
    flat_q = queries.reshape(-1, queries.shape[-1])
    flat_e = edits.reshape(-1, edits.shape[-1])
    flat_h = hub.reshape(-1)
    for q, e, h in zip(flat_q, flat_e, flat_h, strict=True):
        words = []
        for w, a in zip(q, e, strict=True):
            if a == 0:
                words.append(f"f{w}")
            elif a <= M:
                words.append(f"n{data.candidates[w, a - 1]}")
        if h >= 1:
            words.append(f"h{h - 1}")
        out.append("<rewrite>" + " ".join(words) + "</rewrite>")
    return out


def _scores(data, U, nonempty):
    S = np.zeros((U.shape[0], data.items.shape[0]))
    if nonempty.any():
        S[nonempty] = retrieval_scores(U[nonempty], data.items)
    return S


def recall_at_k(scores, targets, k=10):
    """Share of queries whose target ranks in the top ``k`` (ties count against it).

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_items)
        Similarity of every query to every item.
    targets : array-like of int, shape (n_queries,)
        Index of each query's target item.
    k : int, default=10
        The cut-off (at least 1).

    Returns
    -------
    recall : float
        In ``[0, 1]``.

    See Also
    --------
    retrieval_rank : The ranks it thresholds.

    Examples
    --------
    >>> from mvlearn_ext.rl import recall_at_k
    >>> recall_at_k([[0.9, 0.1, 0.5], [0.2, 0.3, 0.1]], [0, 0], k=1)
    0.5
    """
    k = check_count(k, "k", 1)
    return float(np.mean(retrieval_rank(scores, targets) <= k))


def _check_data(data):
    if not isinstance(data, ShiftedRetrieval):
        raise TypeError(f"data must be a ShiftedRetrieval, got {type(data).__name__}")


def evaluate_rewriter(data, policy=None, *, split="test", ks=(1, 10)):
    """Recall@k, inflation and hub use of the greedy rewrites (or of the raw queries).

    Parameters
    ----------
    data : ShiftedRetrieval
    policy : RewriterPolicy or None, default=None
        ``None`` scores the original queries (every token kept, no hub).
    split : {"test", "train"}, default="test"
    ks : tuple of int, default=(1, 10)

    Returns
    -------
    report : dict
        ``"R@k"`` for each k, ``"inflation"`` (mean score of the negatives,
        :func:`~mvlearn_ext.rl.inflation_score`), ``"hub_rate"`` (share of
        rewrites that append a hub) and ``"empty_rate"``.

    See Also
    --------
    train_rewriter : Trains the policy evaluated.
    recall_at_k : The recall it reports.

    Examples
    --------
    >>> from mvlearn_ext.rl import evaluate_rewriter, make_shifted_retrieval
    >>> data = make_shifted_retrieval(60, n_native=50, random_state=0)
    >>> report = evaluate_rewriter(data)  # the raw queries
    >>> sorted(report)
    ['R@1', 'R@10', 'empty_rate', 'hub_rate', 'inflation']
    """
    _check_data(data)
    if split not in ("test", "train"):
        raise ValueError(f"split must be 'test' or 'train', got {split!r}")
    Q = data.test_queries if split == "test" else data.train_queries
    T = data.test_targets if split == "test" else data.train_targets
    if policy is None:
        edits = np.zeros_like(Q)
        hub = np.zeros(Q.shape[0], dtype=np.intp)
    else:
        if not isinstance(policy, RewriterPolicy):
            raise TypeError(
                f"policy must be a RewriterPolicy or None, got {type(policy).__name__}"
            )
        edits, hub = policy.greedy(Q)
    U, nonempty = _embed_rewrites(data, Q, edits, hub)
    S = _scores(data, U, nonempty)
    report = {f"R@{k}": recall_at_k(S, T, k) for k in ks}
    report["inflation"] = float(inflation_score(S, T).mean())
    report["hub_rate"] = float(np.mean(hub >= 1))
    report["empty_rate"] = float(np.mean(~nonempty))
    return report


def _sample(P, rng):
    u = rng.uniform(size=P.shape[:-1] + (1,))
    return np.minimum((u > P.cumsum(-1)).sum(-1), P.shape[-1] - 1)


def _rewards(data, queries, edits, hub, targets, reward, format_weight):
    U, nonempty = _embed_rewrites(data, queries, edits, hub)
    S = _scores(data, U, nonempty)
    if reward == "rank":
        content = rank_reward(S, targets)
    else:
        content = similarity_reward(S, targets)
    fmt = format_reward(render_rewrites(data, queries, edits, hub), pattern=REWRITE_PATTERN)
    return content + format_weight * fmt, S


def _action_logps(pol, Q, edits, hub):
    """Log-probabilities (n, L + 1) of the sampled edits and hub choices, and the probabilities."""
    Pe, Ph = pol.probs(Q)
    le = np.log(np.take_along_axis(Pe, edits[..., None], -1)[..., 0])
    return np.column_stack([le, np.log(Ph[hub])]), Pe, Ph


def surrogate_grad(logp, old_logp, ref_logp, advantages, *, epsilon=0.2, beta=0.0):
    """Loss and its derivative in ``logp`` of GRPO's clipped surrogate, per-sequence mean.

    ``l_it = -min(rho A_i, clip(rho, 1 - eps, 1 + eps) A_i) + beta KL3_it`` with
    ``rho = exp(logp - old_logp)`` and the k3 KL to ``ref_logp``, averaged over
    the tokens of each sequence and then over sequences (the ``"grpo"``
    reduction of :func:`mvlearn_ext.deep.rl.grpo_loss`).

    Parameters
    ----------
    logp, old_logp, ref_logp : ndarray of shape (n_sequences, n_tokens)
    advantages : ndarray of shape (n_sequences,)

    Returns
    -------
    loss : float
    dloss_dlogp : ndarray of shape (n_sequences, n_tokens)
    """
    n, L = logp.shape
    A = advantages[:, None]
    rho = np.exp(logp - old_logp)
    clipped = np.clip(rho, 1.0 - epsilon, 1.0 + epsilon)
    per_token = -np.minimum(rho * A, clipped * A)
    # the unclipped branch carries the gradient unless the ratio left the
    # trust region in the direction the advantage pushes it
    active = ~(((rho > 1.0 + epsilon) & (A > 0)) | ((rho < 1.0 - epsilon) & (A < 0)))
    grad = np.where(active, -rho * A, 0.0)
    if beta > 0:
        d = ref_logp - logp
        per_token = per_token + beta * (np.exp(d) - d - 1.0)
        grad = grad + beta * (1.0 - np.exp(d))
    return float(per_token.mean()), grad / (n * L)


class _Adam:
    def __init__(self, params, lr):
        self.lr, self.t = lr, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, params, grads, b1=0.9, b2=0.999, eps=1e-8):
        self.t += 1
        for p, g, m, v in zip(params, grads, self.m, self.v, strict=True):
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            p -= self.lr * (m / (1 - b1**self.t)) / (np.sqrt(v / (1 - b2**self.t)) + eps)


def train_rewriter(
    data,
    *,
    reward="rank",
    n_steps=150,
    batch_size=32,
    group_size=8,
    n_inner=2,
    learning_rate=0.05,
    epsilon=0.2,
    beta=0.0,
    format_weight=0.5,
    keep_bias=2.0,
    random_state=None,
    verbose=0,
):
    """Train a :class:`RewriterPolicy` with NumPy GRPO against the frozen toy retriever.

    Each step samples ``batch_size`` training queries and ``group_size``
    rewrites of each, scores them (``R = R^content + format_weight * R^f``),
    computes group-relative advantages and takes ``n_inner`` Adam steps on
    the PPO-clipped surrogate (one "token" per edit and one for the hub
    choice), with the k3 KL to the initial policy when ``beta > 0``.

    Parameters
    ----------
    data : ShiftedRetrieval
    reward : {"rank", "similarity"}, default="rank"
        ``"rank"``: GRAPE's normalised ranking reward
        :func:`~mvlearn_ext.rl.rank_reward`; ``"similarity"``: the raw
        similarity of the target :func:`~mvlearn_ext.rl.similarity_reward`.
    n_steps : int, default=150
    batch_size : int, default=32
    group_size : int, default=8
        ``G``, the rewrites sampled per query (GRAPE's K); at least 2.
    n_inner : int, default=2
        Optimisation steps per sampled batch (the ratio leaves 1 after the first).
    learning_rate : float, default=0.05
        Adam step size.
    epsilon : float, default=0.2
        PPO clip range.
    beta : float, default=0.0
        Weight of the k3 KL to the initial (reference) policy.
    format_weight : float, default=0.5
        ``lambda_f``.
    keep_bias : float, default=2.0
        See :class:`RewriterPolicy`.
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0
        Prints the mean reward every 25 steps to stderr.

    Returns
    -------
    policy : RewriterPolicy
    history : dict
        ``"reward"``: mean training reward per step; ``"hub_rate"``: share of
        sampled rewrites with a hub per step.

    See Also
    --------
    make_shifted_retrieval : The problem it is trained on.
    evaluate_rewriter : The recall of its rewrites.

    Examples
    --------
    >>> from mvlearn_ext.rl import evaluate_rewriter, make_shifted_retrieval, train_rewriter
    >>> data = make_shifted_retrieval(100, n_native=60, random_state=0)
    >>> policy, history = train_rewriter(data, n_steps=40, random_state=0)
    >>> after, before = evaluate_rewriter(data, policy), evaluate_rewriter(data)
    >>> bool(after["R@10"] > before["R@10"])
    True
    """
    _check_data(data)
    if reward not in ("rank", "similarity"):
        raise ValueError(f"reward must be 'rank' or 'similarity', got {reward!r}")
    n_steps = check_count(n_steps, "n_steps", 0)
    batch_size = check_count(batch_size, "batch_size", 1)
    group_size = check_count(group_size, "group_size", 2)
    n_inner = check_count(n_inner, "n_inner", 1)
    lr = check_real(learning_rate, "learning_rate", low=0.0, low_open=True)
    epsilon = check_real(epsilon, "epsilon", low=0.0, high=1.0, low_open=True)
    beta = check_real(beta, "beta", low=0.0)
    format_weight = check_real(format_weight, "format_weight", low=0.0)
    keep_bias = check_real(keep_bias, "keep_bias")
    rng = check_random_state(random_state)

    policy = RewriterPolicy(data, keep_bias=keep_bias)
    ref = policy.copy()
    opt = _Adam([policy.edit_logits, policy.hub_logits], lr)
    Qall, Tall = data.train_queries, data.train_targets
    history = {"reward": [], "hub_rate": []}
    start = time.perf_counter()
    B, G, L = batch_size, group_size, Qall.shape[1]
    for step in range(n_steps):
        pick = rng.randint(Qall.shape[0], size=B)
        Q = np.repeat(Qall[pick], G, axis=0)  # (B*G, L)
        T = np.repeat(Tall[pick], G)
        P, H = policy.probs(Q)
        edits = _sample(P, rng)
        hub = _sample(np.broadcast_to(H, (B * G, H.shape[0])), rng)
        R, _ = _rewards(data, Q, edits, hub, T, reward, format_weight)
        A = group_advantages(R.reshape(B, G)).reshape(-1)
        history["reward"].append(float(R.mean()))
        history["hub_rate"].append(float(np.mean(hub >= 1)))

        old, _, _ = _action_logps(policy, Q, edits, hub)
        ref_lp, _, _ = _action_logps(ref, Q, edits, hub)
        for _ in range(n_inner):
            lp, Pe, Ph = _action_logps(policy, Q, edits, hub)
            _, g = surrogate_grad(lp, old, ref_lp, A, epsilon=epsilon, beta=beta)
            # d log pi(a) / d logits = onehot(a) - p
            ge = g[:, :L, None] * (np.eye(data.n_actions)[edits] - Pe)
            gh = g[:, L, None] * (np.eye(H.shape[0])[hub] - Ph[None, :])
            grad_edit = np.zeros_like(policy.edit_logits)
            np.add.at(grad_edit, Q.reshape(-1), ge.reshape(-1, data.n_actions))
            opt.step([policy.edit_logits, policy.hub_logits], [grad_edit, gh.sum(0)])
        if verbose and (step + 1) % 25 == 0:
            log_message(
                "GRAPE toy",
                f"step {step + 1}/{n_steps}: reward {np.mean(history['reward'][-25:]):.3f} "
                f"({time.perf_counter() - start:.1f} s)",
                verbose,
            )
    return policy, history
