"""GRAPE, VisualScore and ParetoPO in TRL: rewards, advantages and GRPO runs of a tiny LM."""

import subprocess
import sys

import numpy as np
import pytest
import torch

from mvlearn_ext.deep._llm import tiny_causal_lm
from mvlearn_ext.deep.rl_trl import (
    FormatReward,
    GaussianScoreReward,
    GrapeRankReward,
    GroupAdvantages,
    MVGRPOTrainer,
    ParetoPOAdvantages,
    VisualScoreAdvantages,
    sequence_entropy_mask,
    weighted_reward,
)
from mvlearn_ext.moo import HVCGradientWeights, pareto_rank_advantages
from mvlearn_ext.rl import (
    entropy_mask,
    format_reward,
    gaussian_reward,
    group_advantages,
    multi_reward_advantages,
    parse_answer,
    rank_reward,
    retrieval_scores,
    std_filter,
)

VOCAB = ["cat", "dog", "fish", "bird"]


def bag_of_words(texts):
    return np.array([[t.split().count(w) + 1e-3 for w in VOCAB] for t in texts])


def test_bridges_import_only_on_use_and_name_the_llm_extra():
    """``import mvlearn_ext.deep`` loads no bridge; a missing TRL names the llm extra."""
    code = (
        "import sys, mvlearn_ext.deep\n"
        "heavy = {'trl', 'peft', 'transformers', 'mergekit'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
        "bridges = [m for m in sys.modules if m.endswith(('_trl', '_peft'))]\n"
        "assert not bridges, bridges\n"
        "sys.modules['trl'] = None  # what a missing TRL looks like to import\n"
        "try:\n"
        "    import mvlearn_ext.deep.rl_trl\n"
        "except ImportError as e:\n"
        "    assert \"extra 'llm'\" in str(e) and 'torch==2.13.0' in str(e), str(e)\n"
        "else:\n"
        "    raise SystemExit('no ImportError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_grape_rank_reward_equals_the_numpy_reward():
    items = ["cat cat", "dog", "fish fish", "bird dog"]
    reward = GrapeRankReward(bag_of_words, items, kind="literal")
    completions = ["dog dog", "cat fish", "bird", "", "fish"]
    targets = [1, 1, 3, 0, 2]
    expected = rank_reward(
        retrieval_scores(bag_of_words(completions), bag_of_words(items)), targets, kind="literal"
    )
    got = reward(completions, target=targets, trainer_state=None)
    np.testing.assert_allclose(got, expected)
    assert isinstance(got, list) and all(isinstance(x, float) for x in got)
    # chat-format completions (TRL's conversational layout) give the same rewards
    chat = [[{"role": "assistant", "content": c}] for c in completions]
    np.testing.assert_allclose(reward(chat, target=targets), expected)
    assert reward.__name__ == "grape_rank_literal"


def test_grape_rank_reward_bad_input():
    with pytest.raises(TypeError, match="embed must be callable"):
        GrapeRankReward("retriever", [[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="kind must be"):
        GrapeRankReward(bag_of_words, ["cat", "dog"], kind="best")
    reward = GrapeRankReward(bag_of_words, ["cat", "dog"])
    with pytest.raises(KeyError, match="column 'target'"):
        reward(["cat"], score=[1.0])
    with pytest.raises(TypeError, match="not a single string"):
        reward("cat", target=[0])


def test_visualscore_rewards_equal_the_numpy_rewards():
    completions = [
        "<think>sharp</think><answer>3.5</answer>",
        "<think>blurry</think><answer>1</answer>",
        "no format 4.0",
        "<think>x</think><answer>five</answer>",
    ]
    scores = [3.0, 2.0, 4.0, 5.0]
    gauss = GaussianScoreReward(sigma=0.8)(completions, score=scores)
    expected = gaussian_reward(parse_answer(completions), scores, sigma=0.8)
    np.testing.assert_allclose(gauss, expected)
    assert gauss[2] == 0.0 and gauss[3] == 0.0
    fmt = FormatReward(value=0.5)(completions)
    np.testing.assert_allclose(fmt, format_reward(completions, value=0.5))
    with pytest.raises(ValueError, match="sigma must be"):
        GaussianScoreReward(sigma=0.0)


def test_group_advantages_follow_trl_layout():
    rng = np.random.default_rng(0)
    R = rng.random((12, 2))
    A = GroupAdvantages()(R, 4, [1.0, 0.5])
    np.testing.assert_allclose(A, group_advantages((R @ [1.0, 0.5]).reshape(3, 4)).ravel())
    A = GroupAdvantages(aggregation="normalize_then_sum")(R, 4, [1.0, 0.5])
    expected = multi_reward_advantages(
        R, weights=[1.0, 0.5], group_size=4, aggregation="normalize_then_sum"
    )
    np.testing.assert_allclose(A, expected)
    R[5] = np.nan  # an unscorable completion: advantage 0, left out of its group's baseline
    A = GroupAdvantages()(R, 4)
    assert A[5] == 0.0
    np.testing.assert_allclose(A[4:8].sum(), 0.0, atol=1e-12)
    with pytest.raises(ValueError, match="multiple of group_size"):
        GroupAdvantages()(R[:10], 4)
    with pytest.raises(ValueError, match="reward_weights must be 2 finite"):
        GroupAdvantages()(R, 4, [1.0])


def test_weighted_reward_is_trls_nansum():
    R = np.array([[1.0, np.nan], [np.nan, np.nan], [2.0, 4.0]])
    got = weighted_reward(R, [2.0, 0.5])
    np.testing.assert_array_equal(got[[0, 2]], [2.0, 6.0])
    assert np.isnan(got[1])


def test_visualscore_advantages_drop_degenerate_groups():
    watched = np.array([0.5, 0.5, 0.5, 0.5, 0.1, 0.9, 0.4, 0.7])
    fmt = np.array([0.5, 0.0, 0.5, 0.5, 0.5, 0.5, 0.0, 0.5])
    R = np.stack([watched, fmt], axis=1)
    A, keep = VisualScoreAdvantages(watch=0)(R, 4)
    np.testing.assert_array_equal(keep, np.repeat(std_filter(watched, group_size=4), 4))
    assert keep.tolist() == [False] * 4 + [True] * 4
    np.testing.assert_array_equal(A[:4], 0.0)
    expected = group_advantages((watched + fmt)[4:], group_size=4, eps=1e-9)
    np.testing.assert_allclose(A[4:], expected)
    # TRL's reward weights weigh the total (the reward TRL logs), not the watched reward
    A, keep_w = VisualScoreAdvantages(watch=0)(R, 4, [1.0, 3.0])
    np.testing.assert_array_equal(keep_w, keep)
    expected = group_advantages((watched + 3.0 * fmt)[4:], group_size=4, eps=1e-9)
    np.testing.assert_allclose(A[4:], expected)


def test_paretopo_advantages_equal_the_numpy_functions():
    rng = np.random.default_rng(1)
    batches = [rng.random((8, 2)).round(1) for _ in range(5)]
    fn = ParetoPOAdvantages([0.5, 0.5], stage1_steps=2, beta=0.5)
    hw = HVCGradientWeights([0.5, 0.5])
    reward_weights = np.array([1.0, 2.0])
    for step, R in enumerate(batches):
        got = fn(R, 4, reward_weights)
        groups = (R * reward_weights).reshape(2, 4, 2)  # the objectives are TRL's weighted terms
        w = hw.weights_.copy()
        if step < 2:
            expected = group_advantages(groups @ w).ravel()
            hw.update((R * reward_weights).mean(axis=0))
        else:
            expected = np.concatenate([pareto_rank_advantages(g, g @ w, beta=0.5) for g in groups])
        np.testing.assert_allclose(got, expected)
        np.testing.assert_allclose(fn.weights_path_[-1], w)
    assert not np.allclose(fn.weights_path_[0], fn.weights_path_[2])  # stage 1 moved the weights


def test_sequence_entropy_mask_equals_numpy():
    rng = np.random.default_rng(2)
    H = rng.random((6, 9))
    H[1, :4] = 0.5  # ties
    valid = rng.random((6, 9)) < 0.8
    valid[3] = False  # an empty sequence
    for rho in (0.2, 0.5, 1.0):
        got = sequence_entropy_mask(torch.as_tensor(H), torch.as_tensor(valid), rho).numpy()
        np.testing.assert_array_equal(got, entropy_mask(H, valid, rho=rho, scope="sequence"))
    with pytest.raises(ValueError, match="rho must be"):
        sequence_entropy_mask(torch.as_tensor(H), torch.as_tensor(valid), 0.0)


# ---------------------------------------------------------------------------
# GRPO on a tiny random-weight model (no download): the effect must be visible

DIGITS = [str(i) for i in range(10)]


def _config(tmp_path, steps, **kwargs):
    from trl import GRPOConfig

    options = dict(
        output_dir=str(tmp_path),
        per_device_train_batch_size=8,
        num_generations=8,
        max_completion_length=4,
        learning_rate=3e-2,
        max_steps=steps,
        logging_steps=steps,
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        beta=0.0,
        seed=0,
        disable_tqdm=True,
    )
    options.update(kwargs)
    return GRPOConfig(**options)


@pytest.fixture(scope="module")
def visualscore_run(tmp_path_factory):
    """VisualScore's Gaussian reward of the first word against a target score of 7."""
    from datasets import Dataset

    model, tok = tiny_causal_lm(DIGITS + ["q"], random_state=0)
    data = Dataset.from_dict({"prompt": ["q"] * 128, "score": [7.0] * 128})
    gauss = GaussianScoreReward(sigma=2.0, pattern=r"^\s*(\S+)")
    fmt = FormatReward(value=0.1, pattern=r"^\s*\d")  # a digit first
    trainer = MVGRPOTrainer(
        model=model,
        reward_funcs=[gauss, fmt],
        args=_config(tmp_path_factory.mktemp("grpo"), 12, reward_weights=[1.0, 0.5]),
        train_dataset=data,
        processing_class=tok,
    )
    trainer.train()
    return trainer


def test_grpo_run_raises_the_mean_reward(visualscore_run):
    R = np.stack(visualscore_run.reward_history_)  # (steps, 8, 2)
    assert R.shape == (12, 8, 2)
    gauss = R[:, :, 0].mean(axis=1)
    print(f"Gaussian reward, steps 1-2: {gauss[:2].mean():.3f}, 11-12: {gauss[-2:].mean():.3f}")
    # the first two steps against the last two (seed 0): a large, visible rise
    assert gauss[-2:].mean() > gauss[:2].mean() + 0.2, gauss.round(3)


def test_trainer_advantages_equal_trl_and_numpy(visualscore_run):
    """Parity: the loss's advantages equal TRL's and the NumPy functions' on the same rewards."""
    for R, ours, trl_a in zip(
        visualscore_run.reward_history_,
        visualscore_run.advantage_history_,
        visualscore_run.trl_advantage_history_,
        strict=True,
    ):
        expected = group_advantages((R @ [1.0, 0.5]).reshape(-1, 8), eps=1e-4).ravel()
        np.testing.assert_allclose(ours, expected, atol=1e-5)
        np.testing.assert_allclose(ours, trl_a, atol=1e-4)


@pytest.fixture(scope="module")
def paretopo_run(tmp_path_factory):
    """Two conflicting objectives: the share of 'a' and the share of 'b' in the completion.

    Every completion has ``share_a + share_b <= 1``, with equality on the
    Pareto front (completions of 'a' and 'b' only).
    """
    from datasets import Dataset

    words = ["a", "b", "c", "d", "e", "f", "q"]
    model, tok = tiny_causal_lm(words, random_state=1)
    data = Dataset.from_dict({"prompt": ["q"] * 128})

    def share(word):
        def reward(completions, **kwargs):
            return [c.split().count(word) / max(len(c.split()), 1) for c in completions]

        reward.__name__ = f"share_{word}"
        return reward

    fn = ParetoPOAdvantages([0.5, 0.5], stage1_steps=3, beta=0.5)
    trainer = MVGRPOTrainer(
        model=model,
        reward_funcs=[share("a"), share("b")],
        args=_config(tmp_path_factory.mktemp("paretopo"), 12),
        train_dataset=data,
        processing_class=tok,
        advantage_fn=fn,
    )
    trainer.train()
    return trainer, fn


def test_paretopo_moves_the_objective_vector_toward_the_front(paretopo_run):
    trainer, _ = paretopo_run
    R = np.stack(trainer.reward_history_)  # (steps, 8, 2)
    gap = 1.0 - R.sum(axis=2).mean(axis=1)  # mean distance to the front share_a + share_b = 1
    mean = R.mean(axis=1)
    for name, steps in (("1-2", slice(0, 2)), ("11-12", slice(-2, None))):
        vector, g = mean[steps].mean(axis=0).round(3), gap[steps].mean()
        print(f"objective vector, steps {name}: {vector}, gap {g:.3f}")
    assert gap[-2:].mean() < gap[:2].mean() - 0.3, gap.round(3)


def test_trainer_paretopo_advantages_equal_numpy_replay(paretopo_run):
    trainer, fn = paretopo_run
    replay = ParetoPOAdvantages([0.5, 0.5], stage1_steps=3, beta=0.5)
    for R, ours in zip(trainer.reward_history_, trainer.advantage_history_, strict=True):
        np.testing.assert_allclose(ours, replay(R, 8, [1.0, 1.0]), atol=1e-5)
    assert fn.n_calls_ == 12


def test_docstring_examples():
    import doctest

    import mvlearn_ext.deep.rl_trl as module

    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_std_filter_removes_degenerate_groups_from_the_loss(tmp_path):
    """VisualScore's filter in the trainer: a constant-reward group leaves the loss."""
    from datasets import Dataset

    model, tok = tiny_causal_lm(DIGITS + ["q", "r"], random_state=2)
    data = Dataset.from_dict({"prompt": ["q", "r"] * 32})

    def watched(completions, prompts, **kwargs):  # constant for the prompt "q"
        pairs = zip(prompts, completions, strict=True)
        return [0.5 if p == "q" else len(c.split()) / 4 for p, c in pairs]

    outputs = []

    class Recording(MVGRPOTrainer):
        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            outputs.append(out)
            return out

    trainer = Recording(
        model=model,
        reward_funcs=[watched],
        args=_config(tmp_path, 2, per_device_train_batch_size=16),
        train_dataset=data,
        processing_class=tok,
        advantage_fn=VisualScoreAdvantages(watch=0),
    )
    trainer.train()
    n_dropped = 0
    for out, R in zip(outputs, trainer.reward_history_, strict=True):
        keep = np.repeat(std_filter(R[:, 0], group_size=8), 8)
        rows = out["completion_mask"].sum(dim=1).numpy()
        assert (rows[~keep] == 0).all() and (out["advantages"].numpy()[~keep] == 0).all()
        assert (rows[keep] > 0).all()
        assert int(out["num_items_in_batch"]) == int(rows.sum())
        n_dropped += int((~keep).sum())
    assert n_dropped > 0  # the "q" groups were dropped


# ---------------------------------------------------------------------------
# Parity with TRL's own advantages on every aggregation x scaling x weighting


@pytest.fixture(scope="module")
def scoring_trainer(tmp_path_factory):
    """A trainer whose two reward functions decline some completions (None, as TRL allows)."""
    from datasets import Dataset

    model, tok = tiny_causal_lm(DIGITS + ["q", "r"], random_state=3)

    def length(completions, **kwargs):
        return [None if "3" in c else len(c.split()) / 4 for c in completions]

    def ones(completions, **kwargs):
        return [None if "3" in c or "2" in c else float(c.count("1")) for c in completions]

    trainer = MVGRPOTrainer(
        model=model,
        reward_funcs=[length, ones],
        args=_config(
            tmp_path_factory.mktemp("parity"), 1, per_device_train_batch_size=16, num_generations=4
        ),
        train_dataset=Dataset.from_dict({"prompt": ["q", "r"] * 16}),
        processing_class=tok,
    )
    trainer.model.train()
    return trainer


PROMPTS = [{"prompt": p} for p in ["q"] * 4 + ["r"] * 4 + ["q"] * 4 + ["r"] * 4]
WEIGHTINGS = [None, [1.0, 0.5], [2.0, -0.3]]


@pytest.mark.filterwarnings("ignore:All reward functions returned None")
@pytest.mark.parametrize("weights", WEIGHTINGS)
@pytest.mark.parametrize("scale_rewards", ["group", "batch", "none"])
@pytest.mark.parametrize("aggregation", ["sum_then_normalize", "normalize_then_sum"])
def test_default_advantages_equal_trl(scoring_trainer, aggregation, scale_rewards, weights):
    """The loss's advantages are TRL's, NaN rewards and unscorable completions included."""
    trainer = scoring_trainer
    trainer.multi_objective_aggregation = aggregation
    trainer.scale_rewards = scale_rewards
    trainer.reward_weights = torch.ones(2) if weights is None else torch.tensor(weights)
    trainer.advantage_fn = None
    trainer._generate_and_score_completions(PROMPTS)
    R = trainer.reward_history_[-1]
    ours, trl_a = trainer.advantage_history_[-1], trainer.trl_advantage_history_[-1]
    np.testing.assert_allclose(ours, trl_a, atol=1e-5)
    expected = multi_reward_advantages(
        R,
        weights=weights,
        group_size=4,
        aggregation=aggregation,
        scale_rewards=scale_rewards,
    )
    np.testing.assert_allclose(ours, expected, atol=1e-5)
    # TRL's logged reward is the weighted reward the advantages were computed from
    logged = trainer._metrics["train"]["reward"][-1]
    np.testing.assert_allclose(logged, np.nanmean(weighted_reward(R, weights)), rtol=1e-5)


@pytest.mark.filterwarnings("ignore:All reward functions returned None")
def test_explicit_advantage_fn_receives_trls_reward_weights(scoring_trainer):
    trainer = scoring_trainer
    trainer.multi_objective_aggregation = "sum_then_normalize"
    trainer.scale_rewards = "group"
    trainer.reward_weights = torch.tensor([2.0, -0.3])
    seen = []

    def advantage_fn(rewards_per_func, group_size, reward_weights):
        seen.append(reward_weights)
        return GroupAdvantages()(rewards_per_func, group_size, reward_weights)

    trainer.advantage_fn = advantage_fn
    try:
        trainer._generate_and_score_completions(PROMPTS)
    finally:
        trainer.advantage_fn = None
    np.testing.assert_allclose(seen[-1], [2.0, -0.3], rtol=1e-6)
    np.testing.assert_allclose(
        trainer.advantage_history_[-1], trainer.trl_advantage_history_[-1], atol=1e-5
    )
