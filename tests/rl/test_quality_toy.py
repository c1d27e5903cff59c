"""The VisualScore toy: the quality each task is built from, GRPO training and its evaluation."""

import numpy as np
import pytest

from mvlearn_ext.rl import (
    QUALITY_TASKS,
    evaluate_scorer,
    make_quality_tasks,
    train_scorer,
)


def test_quality_is_a_monotone_function_of_its_task_feature():
    """Aesthetics quality falls with the asymmetry, alignment quality rises with the cosine."""
    phi, task, quality = make_quality_tasks(300, random_state=0)
    assert phi.shape == (300, 4) and task.shape == quality.shape == (300,)
    np.testing.assert_array_equal(phi[:, 0], 1.0)
    np.testing.assert_allclose(phi[:, 1:].mean(0), 0.0, atol=1e-12)
    assert quality.min() >= 1.0 and quality.max() <= 5.0
    assert set(task.tolist()) == {0, 1, 2}
    for t, column, sign in ((1, 2, -1.0), (2, 3, 1.0)):  # (task, its feature, direction)
        f, q = phi[task == t, column], quality[task == t]
        below = f[:, None] < f[None, :]  # pairs with a strictly larger feature (ties drawn twice)
        assert below.sum() > 1000
        assert (sign * (q[None, :] - q[:, None]) > 0)[below].all()
    again = make_quality_tasks(300, random_state=0)
    for a, b in zip((phi, task, quality), again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_std_filter_leaves_no_group_without_advantage_and_seed_fixes_the_run():
    phi, task, quality = make_quality_tasks(400, random_state=1)
    kw = dict(reward="binary", n_steps=30, random_state=3)
    _, plain = train_scorer(phi, task, quality, **kw)
    pol, filtered = train_scorer(phi, task, quality, filters=True, **kw)
    assert plain["zero_advantage_share"] > 0  # the binary reward gives all-equal groups
    assert filtered["zero_advantage_share"] == 0.0
    assert filtered["groups_used"] < 30 * 16
    again, _ = train_scorer(phi, task, quality, filters=True, **kw)
    np.testing.assert_array_equal(pol.W1, again.W1)
    np.testing.assert_array_equal(pol.W2, again.W2)


def test_training_raises_the_held_out_rank_correlation_on_every_task():
    phi, task, quality = make_quality_tasks(1200, random_state=0)
    tr, te = slice(0, 800), slice(800, None)
    untrained, _ = train_scorer(phi[tr], task[tr], quality[tr], n_steps=0, random_state=0)
    trained, _ = train_scorer(phi[tr], task[tr], quality[tr], random_state=0)
    before = evaluate_scorer(untrained, phi[te], task[te], quality[te])
    after = evaluate_scorer(trained, phi[te], task[te], quality[te])
    assert list(after) == list(QUALITY_TASKS)
    for name in QUALITY_TASKS:
        assert after[name][0] > before[name][0] + 0.3


def test_a_constant_scorer_has_no_correlation():
    phi, task, quality = make_quality_tasks(100, random_state=0)
    policy, _ = train_scorer(phi, task, quality, n_steps=0, random_state=0)
    policy.W1[:] = 0.0
    policy.W2[:] = 0.0
    assert evaluate_scorer(policy, phi, task, quality) == {t: (0.0, 0.0) for t in QUALITY_TASKS}


def test_errors_name_the_argument():
    phi, task, quality = make_quality_tasks(50, random_state=0)
    with pytest.raises(ValueError, match="n_samples"):
        make_quality_tasks(1)
    with pytest.raises(TypeError, match="random_state"):
        make_quality_tasks(10, random_state=1.5)
    for kw, name in (
        ({"reward": "hinge"}, "reward"),
        ({"batch_size": 0}, "batch_size"),
        ({"group_size": 1}, "group_size"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"rho": 1.5}, "rho"),
        ({"sigma": -1.0}, "sigma"),
    ):
        with pytest.raises(ValueError, match=name):
            train_scorer(phi, task, quality, n_steps=1, **kw)
    with pytest.raises(TypeError, match="filters"):
        train_scorer(phi, task, quality, filters="yes")
    with pytest.raises(ValueError, match="task"):
        train_scorer(phi, task + 1, quality)
    with pytest.raises(ValueError, match="quality"):
        train_scorer(phi, task, quality[:-1])
    with pytest.raises(TypeError, match="policy"):
        evaluate_scorer("policy", phi, task, quality)
    policy, _ = train_scorer(phi, task, quality, n_steps=0)
    with pytest.raises(ValueError, match="features"):
        evaluate_scorer(policy, phi[:, :3], task, quality)
