"""make_digit_experts: the split, the experts, the accuracy callable, seeding, validation."""

import numpy as np
import pytest
from sklearn.datasets import load_digits

from mvlearn_ext.datasets import make_digit_experts
from mvlearn_ext.merging import task_arithmetic

SMALL = dict(width=16, pretrain_steps=30, probe_steps=30, finetune_steps=30)


def test_defaults_give_experts_far_above_chance():
    data = make_digit_experts(random_state=0)
    assert len(data.experts) == len(data.heads) == len(data.test) == 3
    # Chance is 1/4 to 1/3 on these tasks; fine-tuned experts on digits are near perfect.
    assert data.expert_accuracy > 0.9
    for expert in data.experts:
        assert set(expert) == set(data.base)
        assert any(not np.array_equal(expert[k], data.base[k]) for k in expert)


def test_test_split_covers_each_task_with_local_labels():
    tasks = ((0, 1), (2, 3, 4), (5, 6, 7, 8, 9))
    data = make_digit_experts(tasks, random_state=1, **SMALL)
    counts = np.bincount(load_digits().target)
    for classes, (X, y) in zip(tasks, data.test, strict=True):
        assert X.shape[1] == 64 and X.min() >= 0.0 and X.max() <= 1.0
        assert set(np.unique(y)) == set(range(len(classes)))
        # 40% of every class is held out (stratified split).
        assert abs(y.size - 0.4 * counts[list(classes)].sum()) <= len(classes)
    assert sum(y.size for _, y in data.test) == int(np.ceil(0.4 * counts.sum()))


def test_accuracy_of_an_expert_on_its_own_task_is_the_expert_accuracy():
    data = make_digit_experts(((3, 8),), random_state=2, **SMALL)
    assert data.accuracy(data.experts[0]) == data.expert_accuracy
    # Merging one expert with scaling 1 gives that expert back.
    merged = task_arithmetic(data.base, data.experts, scaling=1.0)
    assert data.accuracy(merged) == pytest.approx(data.expert_accuracy)


def test_seeding():
    a = make_digit_experts(random_state=3, **SMALL)
    b = make_digit_experts(random_state=3, **SMALL)
    c = make_digit_experts(random_state=4, **SMALL)
    for k in a.base:
        np.testing.assert_array_equal(a.base[k], b.base[k])
    assert any(not np.array_equal(a.base[k], c.base[k]) for k in a.base)
    rng = np.random.RandomState(0)
    assert make_digit_experts(random_state=rng, **SMALL).base.keys() == a.base.keys()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(tasks=((0, 1), (1, 2))), "disjoint"),
        (dict(tasks=((0, 10),)), "digit classes 0-9"),
        (dict(tasks=((0,),)), "at least 2 classes"),
        (dict(tasks=()), "at least one task"),
        (dict(tasks=5), "sequence of sequences"),
        (dict(width=0), "width must be >= 1"),
        (dict(n_layers=1.5), "n_layers"),
        (dict(finetune_steps=-1), "finetune_steps"),
        (dict(learning_rate=0.0), "learning_rate must be a positive number"),
    ],
)
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make_digit_experts(**kwargs)
