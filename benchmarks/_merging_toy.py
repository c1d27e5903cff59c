"""The toy merging problem of the benchmarks: small NumPy MLP experts on scikit-learn's digits.

The same problem as the package demo's ``merging`` section, written out here so that
the benchmarks use the package through its public API only.

A ReLU body (64 -> width -> width) is pre-trained on a pretext task (digit
parity), then copied and fine-tuned, body and a fresh head, on disjoint class
subsets; the bodies are merged and each task is scored with its own head on
the merged body. Everything is full-batch Adam in NumPy, seconds on a CPU,
no download (``load_digits`` ships with scikit-learn).
"""

from __future__ import annotations

import dataclasses

import numpy as np

TASKS_3 = ((0, 1, 2, 3), (4, 5, 6), (7, 8, 9))
TASKS_5 = ((0, 1), (2, 3), (4, 5), (6, 7), (8, 9))


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


def _accuracy(body, head, X, y):
    logits = _body_forward(body, X)[-1] @ head["weight"].T + head["bias"]
    return float(np.mean(np.argmax(logits, axis=1) == y))


@dataclasses.dataclass
class ToyMergingProblem:
    """A pre-trained body, fine-tuned expert bodies and heads, and held-out data per task."""

    base: dict
    experts: list
    heads: list
    test: list  # (X, y_local) per task

    def accuracy(self, body):
        """Mean over tasks of each task's accuracy with its own head on ``body``."""
        return float(
            np.mean(
                [_accuracy(body, h, X, y) for h, (X, y) in zip(self.heads, self.test, strict=True)]
            )
        )

    def expert_accuracy(self):
        """Mean accuracy of each expert body with its own head (the upper reference)."""
        return float(
            np.mean(
                [
                    _accuracy(b, h, X, y)
                    for b, h, (X, y) in zip(self.experts, self.heads, self.test, strict=True)
                ]
            )
        )


def make_digit_experts(
    random_state,
    *,
    tasks=TASKS_3,
    width=64,
    n_layers=2,
    pretrain_steps=300,
    probe_steps=200,
    finetune_steps=100,
    learning_rate=1e-3,
):
    """Build a :class:`ToyMergingProblem` on ``load_digits`` (seconds, offline).

    BLAS runs single-threaded here: these matrices are tiny, and a threaded
    BLAS on a busy machine is many times slower on them.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _make_digit_experts(
            random_state,
            tasks,
            width,
            n_layers,
            pretrain_steps,
            probe_steps,
            finetune_steps,
            learning_rate,
        )


def _make_digit_experts(
    seed, tasks, width, n_layers, pretrain_steps, probe_steps, finetune_steps, lr
):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    rng = np.random.default_rng(seed)
    digits = load_digits()
    X, y = digits.data / 16.0, digits.target
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.4, stratify=y, random_state=seed)
    body = {}
    n_in = X.shape[1]
    for i in range(n_layers):
        body[f"l{i}.weight"], body[f"l{i}.bias"] = _init_layer(rng, width, n_in)
        n_in = width
    w, b = _init_layer(rng, 2, width)
    base, _ = _train(body, {"weight": w, "bias": b}, Xtr, ytr % 2, n_steps=pretrain_steps, lr=lr)
    experts, heads, test = [], [], []
    for classes in tasks:
        classes = np.asarray(classes)
        local = {c: i for i, c in enumerate(classes)}
        sel_tr, sel_te = np.isin(ytr, classes), np.isin(yte, classes)
        w, b = _init_layer(rng, classes.size, width)
        y_local = np.array([local[c] for c in ytr[sel_tr]])
        _, head_t = _train(  # linear probe on the frozen base first (LP-FT)
            base,
            {"weight": w, "bias": b},
            Xtr[sel_tr],
            y_local,
            n_steps=probe_steps,
            lr=lr,
            train_body=False,
        )
        body_t, head_t = _train(base, head_t, Xtr[sel_tr], y_local, n_steps=finetune_steps, lr=lr)
        experts.append(body_t)
        heads.append(head_t)
        test.append((Xte[sel_te], np.array([local[c] for c in yte[sel_te]])))
    return ToyMergingProblem(base=base, experts=experts, heads=heads, test=test)


def merge_methods(problem, *, scaling=0.4, p=0.2, n_rounds=10, density=0.1, random_state=0):
    """``{method: merged body}`` for every merging method at the given settings."""
    from mvlearn_ext import merging

    base, experts = problem.base, problem.experts
    weights = [k for k in base if k.endswith("weight")]
    size = base[weights[0]].size
    sa_density = (merging.sa_keep_counts(size, p, n_rounds)[-1] + 0.5) / size
    return {
        "task arithmetic (dense)": merging.task_arithmetic(base, experts, scaling=scaling),
        f"TIES ({density:.0%})": merging.ties(
            base, experts, density=density, scaling=scaling, prune_keys=weights
        ),
        f"DARE ({density:.0%})": merging.dare(
            base,
            experts,
            density=density,
            scaling=scaling,
            prune_keys=weights,
            random_state=random_state,
        ),
        f"SA-Merging ({sa_density:.1%})": merging.sa_merge(
            base, experts, p=p, n_rounds=n_rounds, scaling=scaling
        ),
        f"magnitude top-k ({sa_density:.1%})": merging.magnitude_merge(
            base, experts, density=sa_density, scaling=scaling, prune_keys=weights
        ),
        f"random mask ({sa_density:.1%})": merging.random_mask_merge(
            base,
            experts,
            density=sa_density,
            scaling=scaling,
            prune_keys=weights,
            random_state=random_state,
        ),
    }
