"""Expert networks to merge: small NumPy MLPs fine-tuned on subsets of scikit-learn's digits."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import Bunch, check_random_state

from mvlearn_ext.utils._validation import check_count

__all__ = ["make_digit_experts"]


def _init_layer(rng, n_out, n_in):
    return rng.normal(scale=np.sqrt(2.0 / n_in), size=(n_out, n_in)), np.zeros(n_out)


def _body_forward(body, X):
    """Hidden activations of every layer; ``body`` has l{i}.weight / l{i}.bias."""
    acts = [X]
    n_layers = len(body) // 2
    for i in range(n_layers):
        acts.append(np.maximum(acts[-1] @ body[f"l{i}.weight"].T + body[f"l{i}.bias"], 0.0))
    return acts


def _softmax_xent_grad(logits, y):
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(y.size), y] -= 1.0
    return p / y.size


def _train(body, head, X, y, *, n_steps, lr, train_body=True):
    """Full-batch Adam on cross-entropy; returns new (body, head)."""
    params = {
        **{k: v.copy() for k, v in body.items()},
        **{f"head.{k}": v.copy() for k, v in head.items()},
    }
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v2 = {k: np.zeros_like(v) for k, v in params.items()}
    n_layers = len(body) // 2
    b1, b2, eps = 0.9, 0.999, 1e-8
    for step in range(1, n_steps + 1):
        cur_body = {k: params[k] for k in body}
        acts = _body_forward(cur_body, X)
        logits = acts[-1] @ params["head.weight"].T + params["head.bias"]
        d = _softmax_xent_grad(logits, y)
        grads = {"head.weight": d.T @ acts[-1], "head.bias": d.sum(axis=0)}
        d = d @ params["head.weight"]
        if train_body:
            for i in range(n_layers - 1, -1, -1):
                d = d * (acts[i + 1] > 0)
                grads[f"l{i}.weight"] = d.T @ acts[i]
                grads[f"l{i}.bias"] = d.sum(axis=0)
                d = d @ params[f"l{i}.weight"]
        for k, g in grads.items():
            m[k] = b1 * m[k] + (1 - b1) * g
            v2[k] = b2 * v2[k] + (1 - b2) * g * g
            mhat = m[k] / (1 - b1**step)
            vhat = v2[k] / (1 - b2**step)
            params[k] -= lr * mhat / (np.sqrt(vhat) + eps)
    new_body = {k: params[k] for k in body}
    new_head = {"weight": params["head.weight"], "bias": params["head.bias"]}
    return new_body, new_head


def _task_accuracy(body, head, X, y):
    logits = _body_forward(body, X)[-1] @ head["weight"].T + head["bias"]
    return float(np.mean(np.argmax(logits, axis=1) == y))


def _check_tasks(tasks):
    try:
        tasks = tuple(tuple(int(c) for c in classes) for classes in tasks)
    except TypeError:
        raise TypeError("tasks must be a sequence of sequences of digit classes") from None
    flat = [c for classes in tasks for c in classes]
    if not tasks or any(len(classes) < 2 for classes in tasks):
        raise ValueError(f"tasks must hold at least one task of at least 2 classes, got {tasks}")
    if any(not 0 <= c <= 9 for c in flat):
        raise ValueError(f"tasks must hold digit classes 0-9, got {tasks}")
    if len(set(flat)) != len(flat):
        raise ValueError(f"tasks must be disjoint (no class in two tasks), got {tasks}")
    return tasks


def _check_count(value, name, minimum):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def make_digit_experts(
    tasks=((0, 1, 2, 3), (4, 5, 6), (7, 8, 9)),
    *,
    width=64,
    n_layers=2,
    pretrain_steps=300,
    probe_steps=200,
    finetune_steps=100,
    learning_rate=1e-3,
    random_state=None,
):
    """Expert networks fine-tuned from one pre-trained network, to try model merging on.

    A ReLU MLP body (``64 -> width -> ... -> width``, ``n_layers`` layers) is
    pre-trained on a pretext task of scikit-learn's bundled digits (the parity
    of the digit), then copied once per task and fine-tuned on that task's
    classes: first a fresh linear head on the frozen body (a linear probe),
    then body and head together (LP-FT). Merging the expert bodies and scoring
    each task with its own head on the merged body measures how much of every
    expert a merge keeps. Full-batch Adam in NumPy: seconds on a CPU, no
    download. 60% of the digits (stratified) train, 40% test.

    Parameters
    ----------
    tasks : sequence of sequences of int, default=((0, 1, 2, 3), (4, 5, 6), (7, 8, 9))
        The digit classes of every task: disjoint, at least 2 per task.
    width : int, default=64
        Units of every hidden layer.
    n_layers : int, default=2
        Hidden layers of the body.
    pretrain_steps, probe_steps, finetune_steps : int, default=300, 200, 100
        Adam steps of the pre-training, of the linear probe and of the
        fine-tuning of body and head.
    learning_rate : float, default=1e-3
        Adam's step size in every stage.
    random_state : int, RandomState instance or None, default=None
        Seeds the train/test split, the initialisations and the heads.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``base`` (dict ``"l{i}.weight"``, ``"l{i}.bias"`` -> array, the
        pre-trained body), ``experts`` (one such dict per task), ``heads``
        (per task, dict ``"weight"``, ``"bias"``), ``test`` (per task, the
        test ``(X, y)`` with ``y`` the index of the class in the task),
        ``accuracy`` (a callable: a body -> the mean over tasks of each
        task's test accuracy with its own head on that body) and
        ``expert_accuracy`` (the same for every expert on its own task,
        the reference a merge is compared with).

    See Also
    --------
    mvlearn_ext.merging.task_arithmetic : The dense baseline merge.
    mvlearn_ext.merging.sa_merge : Merging with sparse, reconstructed task vectors.

    Examples
    --------
    >>> from mvlearn_ext.datasets import make_digit_experts
    >>> from mvlearn_ext.merging import task_arithmetic
    >>> data = make_digit_experts(width=16, pretrain_steps=20, probe_steps=20,
    ...                           finetune_steps=20, random_state=0)
    >>> len(data.experts), sorted(data.base)
    (3, ['l0.bias', 'l0.weight', 'l1.bias', 'l1.weight'])
    >>> merged = task_arithmetic(data.base, data.experts, scaling=0.4)
    >>> 0.0 <= data.accuracy(merged) <= 1.0
    True
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from threadpoolctl import threadpool_limits

    tasks = _check_tasks(tasks)
    width = check_count(width, "width", 1)
    n_layers = check_count(n_layers, "n_layers", 1)
    pretrain_steps = check_count(pretrain_steps, "pretrain_steps", 0)
    probe_steps = check_count(probe_steps, "probe_steps", 0)
    finetune_steps = check_count(finetune_steps, "finetune_steps", 0)
    if not isinstance(learning_rate, numbers.Real) or not learning_rate > 0:
        raise ValueError(f"learning_rate must be a positive number, got {learning_rate!r}")
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        seed = int(random_state)  # an int seeds the split and the generator itself
    else:
        seed = check_random_state(random_state).randint(2**31 - 1)
    rng = np.random.default_rng(seed)
    digits = load_digits()
    X, y = digits.data / 16.0, digits.target
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.4, stratify=y, random_state=seed)
    # These matrices are tiny: a threaded BLAS costs more than it saves on them.
    with threadpool_limits(limits=1):
        body = {}
        n_in = X.shape[1]
        for i in range(n_layers):
            body[f"l{i}.weight"], body[f"l{i}.bias"] = _init_layer(rng, width, n_in)
            n_in = width
        w, b = _init_layer(rng, 2, width)
        head = {"weight": w, "bias": b}
        base, _ = _train(body, head, Xtr, ytr % 2, n_steps=pretrain_steps, lr=learning_rate)
        experts, heads, test = [], [], []
        for classes in tasks:
            classes = np.asarray(classes)
            local = {c: i for i, c in enumerate(classes)}
            sel_tr, sel_te = np.isin(ytr, classes), np.isin(yte, classes)
            y_local = np.array([local[c] for c in ytr[sel_tr]])
            w, b = _init_layer(rng, classes.size, width)
            _, head_t = _train(
                base,
                {"weight": w, "bias": b},
                Xtr[sel_tr],
                y_local,
                n_steps=probe_steps,
                lr=learning_rate,
                train_body=False,
            )
            body_t, head_t = _train(
                base, head_t, Xtr[sel_tr], y_local, n_steps=finetune_steps, lr=learning_rate
            )
            experts.append(body_t)
            heads.append(head_t)
            test.append((Xte[sel_te], np.array([local[c] for c in yte[sel_te]])))

    def accuracy(body):
        scores = [_task_accuracy(body, h, Xt, yt) for h, (Xt, yt) in zip(heads, test, strict=True)]
        return float(np.mean(scores))

    expert_accuracy = float(
        np.mean([_task_accuracy(e, h, *t) for e, h, t in zip(experts, heads, test, strict=True)])
    )
    return Bunch(
        base=base,
        experts=experts,
        heads=heads,
        test=test,
        accuracy=accuracy,
        expert_accuracy=expert_accuracy,
    )
