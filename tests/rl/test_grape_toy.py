"""GRAPE end to end on the toy: data, the clipped surrogate, training improves held-out recall."""

import numpy as np
import pytest

from mvlearn_ext.rl import (
    evaluate_rewriter,
    make_shifted_retrieval,
    recall_at_k,
    retrieval_rank,
    train_rewriter,
)
from mvlearn_ext.rl._grape_toy import (
    REWRITE_PATTERN,
    RewriterPolicy,
    _embed_rewrites,
    _scores,
    render_rewrites,
    surrogate_grad,
)

SMALL = dict(n_native=100, n_stop=10, dim=48)


@pytest.fixture(scope="module")
def data():
    return make_shifted_retrieval(160, random_state=0, **SMALL)


def _oracle_edits(data, Q):
    """Translate every alias into its native token, drop every stop-word."""
    n_native = data.native.shape[0]
    M = data.candidates.shape[1]
    edits = np.full(Q.shape, M + 1)
    for i, j in np.ndindex(Q.shape):
        w = Q[i, j]
        if w < n_native:
            edits[i, j] = 1 + int(np.flatnonzero(data.candidates[w] == w)[0])
    return edits


def test_data_is_deterministic_and_well_formed(data):
    again = make_shifted_retrieval(160, random_state=0, **SMALL)
    other = make_shifted_retrieval(160, random_state=1, **SMALL)
    assert np.array_equal(data.train_queries, again.train_queries)
    assert np.array_equal(data.items, again.items)
    assert not np.array_equal(data.items, other.items)
    assert set(data.train_targets).isdisjoint(set(data.test_targets))
    n_native = data.native.shape[0]
    # every alias has its native token among its dictionary candidates
    assert all(w in data.candidates[w] for w in range(n_native))
    # every query: query_len aliases and one stop-word
    assert ((data.train_queries >= n_native).sum(1) == 1).all()
    # aliases are nearly orthogonal to their native token: cos^2 ~ alias_overlap
    cos = np.sum(data.foreign[:n_native] * data.native, 1)
    assert abs(np.mean(cos**2) - 0.15) < 0.05
    np.testing.assert_allclose(np.linalg.norm(data.items, axis=1), 1.0)


def test_recall_at_k_matches_brute_force():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(40, 25))
    t = rng.integers(0, 25, size=40)
    for k in (1, 5, 10):
        brute = np.mean([np.sum(S[i] >= S[i, t[i]]) <= k for i in range(40)])
        assert recall_at_k(S, t, k) == pytest.approx(brute)


def test_oracle_rewrite_beats_raw_queries(data):
    Q, T = data.test_queries, data.test_targets
    hub = np.zeros(len(Q), dtype=np.intp)
    raw = retrieval_rank(_scores(data, *_embed_rewrites(data, Q, np.zeros_like(Q), hub)), T)
    fixed = retrieval_rank(
        _scores(data, *_embed_rewrites(data, Q, _oracle_edits(data, Q), hub)), T
    )
    assert np.mean(fixed <= 10) > np.mean(raw <= 10) + 0.3


def test_empty_rewrite_fails_the_format_and_scores_last(data):
    Q = data.test_queries[:2]
    M = data.candidates.shape[1]
    edits = np.full(Q.shape, M + 1)  # drop everything
    edits[1, 0] = 0
    hub = np.zeros(2, dtype=np.intp)
    texts = render_rewrites(data, Q, edits, hub)
    assert texts[0] == "<rewrite></rewrite>" and not REWRITE_PATTERN.match(texts[0])
    assert REWRITE_PATTERN.match(texts[1])
    U, nonempty = _embed_rewrites(data, Q, edits, hub)
    assert nonempty.tolist() == [False, True]
    S = _scores(data, U, nonempty)
    assert retrieval_rank(S, data.test_targets[:2])[0] == data.items.shape[0]


def _torch_free_surrogate(logp, old, ref, A, eps, beta):
    rho = np.exp(logp - old)
    per = -np.minimum(rho * A[:, None], np.clip(rho, 1 - eps, 1 + eps) * A[:, None])
    d = ref - logp
    return (per + beta * (np.exp(d) - d - 1)).mean()


def test_surrogate_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    old = rng.normal(size=(6, 5))
    logp = old + rng.normal(scale=0.3, size=old.shape)  # some ratios outside the clip range
    ref = old + rng.normal(scale=0.1, size=old.shape)
    A = rng.normal(size=6)
    loss, g = surrogate_grad(logp, old, ref, A, epsilon=0.2, beta=0.1)
    assert loss == pytest.approx(_torch_free_surrogate(logp, old, ref, A, 0.2, 0.1))
    h = 1e-6
    num = np.zeros_like(logp)
    for idx in np.ndindex(logp.shape):
        e = np.zeros_like(logp)
        e[idx] = h
        num[idx] = (
            _torch_free_surrogate(logp + e, old, ref, A, 0.2, 0.1)
            - _torch_free_surrogate(logp - e, old, ref, A, 0.2, 0.1)
        ) / (2 * h)
    np.testing.assert_allclose(g, num, atol=1e-7)


def test_surrogate_matches_torch_grpo_loss():
    torch = pytest.importorskip("torch")
    from mvlearn_ext.deep.rl import grpo_loss

    rng = np.random.default_rng(1)
    old = rng.normal(size=(8, 4))
    logp = old + rng.normal(scale=0.3, size=old.shape)
    ref = old + rng.normal(scale=0.1, size=old.shape)
    A = rng.normal(size=8)
    loss, g = surrogate_grad(logp, old, ref, A, epsilon=0.2, beta=0.05)
    lp = torch.tensor(logp, requires_grad=True)
    tl = grpo_loss(
        lp,
        torch.tensor(old),
        torch.tensor(A),
        ref_log_probs=torch.tensor(ref),
        beta=0.05,
        epsilon=0.2,
        loss_type="grpo",
    )
    tl.backward()
    assert loss == pytest.approx(float(tl.detach()))
    np.testing.assert_allclose(g, lp.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_rank_reward_training_improves_held_out_recall(seed):
    data = make_shifted_retrieval(160, random_state=seed, **SMALL)
    before = evaluate_rewriter(data)
    policy, history = train_rewriter(data, n_steps=60, random_state=seed)
    after = evaluate_rewriter(data, policy)
    assert after["R@10"] > before["R@10"] + 0.2
    assert after["R@1"] > before["R@1"] + 0.2
    assert np.mean(history["reward"][-10:]) > np.mean(history["reward"][:10])


def test_similarity_reward_learns_to_inflate(data):
    rank_pol, _ = train_rewriter(data, reward="rank", n_steps=40, random_state=0)
    sim_pol, _ = train_rewriter(data, reward="similarity", n_steps=40, random_state=0)
    rank_ev, sim_ev = evaluate_rewriter(data, rank_pol), evaluate_rewriter(data, sim_pol)
    assert sim_ev["hub_rate"] == 1.0 and rank_ev["hub_rate"] == 0.0
    assert sim_ev["inflation"] > rank_ev["inflation"] + 0.05


def test_training_is_deterministic(data):
    a, ha = train_rewriter(data, n_steps=5, random_state=3)
    b, hb = train_rewriter(data, n_steps=5, random_state=3)
    c, _ = train_rewriter(data, n_steps=5, random_state=4)
    assert np.array_equal(a.edit_logits, b.edit_logits) and ha == hb
    assert not np.array_equal(a.edit_logits, c.edit_logits)


def test_kl_to_the_reference_keeps_the_policy_closer():
    data = make_shifted_retrieval(100, random_state=0, **SMALL)
    free, _ = train_rewriter(data, n_steps=20, random_state=0)
    tied, _ = train_rewriter(data, n_steps=20, beta=1.0, random_state=0)
    init = RewriterPolicy(data)
    dist = [np.abs(p.edit_logits - init.edit_logits).sum() for p in (free, tied)]
    assert dist[1] < dist[0]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_items=1), "n_items"),
        (dict(query_len=6), "query_len"),
        (dict(alias_overlap=1.0), "alias_overlap"),
        (dict(test_fraction=1.0), "test_fraction"),
        (dict(n_candidates=0), "n_candidates"),
        (dict(anisotropy=-1.0), "anisotropy"),
    ],
)
def test_bad_data_parameters_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_shifted_retrieval(**{"random_state": 0, **kwargs})


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_items=60.0), "n_items must be an int"),
        (dict(dim=True), "dim must be an int"),
        (dict(anisotropy="1"), "anisotropy must be a real number"),
    ],
)
def test_wrong_types_raise_type_error(kwargs, match):
    with pytest.raises(TypeError, match=match):
        make_shifted_retrieval(**{"random_state": 0, **kwargs})


def test_bad_training_input_is_named(data):
    with pytest.raises(TypeError, match="ShiftedRetrieval"):
        train_rewriter({"items": 1})
    with pytest.raises(ValueError, match="reward"):
        train_rewriter(data, reward="recall")
    with pytest.raises(ValueError, match="group_size"):
        train_rewriter(data, group_size=1)
    with pytest.raises(ValueError, match="epsilon"):
        train_rewriter(data, epsilon=0.0)
    with pytest.raises(ValueError, match="split"):
        evaluate_rewriter(data, split="valid")
    with pytest.raises(TypeError, match="policy"):
        evaluate_rewriter(data, "greedy")
    with pytest.raises(ValueError, match="k must"):
        recall_at_k([[0.0, 1.0]], [0], k=0)
