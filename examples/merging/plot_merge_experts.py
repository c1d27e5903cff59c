"""
Merging three experts without their data
========================================

A small ReLU network (NumPy state dict) is fine-tuned separately on three
regression tasks, giving three experts. The merging operators of
:mod:`mvlearn_ext.merging` combine the experts' task vectors (expert minus
base) into one model without looking at any task data: task arithmetic,
TIES, DARE and SA-Merging (a reconstruction). Each merged model is then
scored on every task, beside the base model and the task's own expert.
On this toy problem no merge keeps all three experts' gains: the merged
updates for tasks 0 and 2 hurt task 1, on which the base was already good.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext import merging

rng = np.random.default_rng(0)
d_in, d_hidden = 6, 32


def forward(state, X):
    H = np.maximum(X @ state["l0.weight"].T + state["l0.bias"], 0.0)
    return H @ state["l1.weight"].T[:, 0]


def fine_tune(state, X, y, steps=300, lr=0.05):
    """Full-batch gradient descent on the mean squared error."""
    state = {k: v.copy() for k, v in state.items()}
    for _ in range(steps):
        pre = X @ state["l0.weight"].T + state["l0.bias"]
        H = np.maximum(pre, 0.0)
        r = H @ state["l1.weight"][0] - y
        grad_h = np.outer(r, state["l1.weight"][0]) * (pre > 0) * 2 / len(y)
        state["l1.weight"] -= lr * (2 / len(y)) * (r @ H)[None, :]
        state["l0.weight"] -= lr * grad_h.T @ X
        state["l0.bias"] -= lr * grad_h.sum(axis=0)
    return state


base = {
    "l0.weight": rng.normal(size=(d_hidden, d_in)) / np.sqrt(d_in),
    "l0.bias": np.full(d_hidden, 0.1),
    "l1.weight": rng.normal(size=(1, d_hidden)) / np.sqrt(d_hidden),
}
# Task t depends on its own pair of inputs.
tasks = []
for t in range(3):
    X = rng.normal(size=(400, d_in))
    y = np.sin(X[:, 2 * t]) + 0.5 * X[:, 2 * t + 1]
    tasks.append((X, y))
experts = [fine_tune(base, X, y) for X, y in tasks]


def mse(state, t):
    X, y = tasks[t]
    return np.mean((forward(state, X) - y) ** 2)


merged = {
    "task arithmetic": merging.task_arithmetic(base, experts, scaling=0.5),
    "TIES": merging.ties(base, experts, density=0.2, scaling=0.8),
    "DARE": merging.dare(base, experts, density=0.2, scaling=0.5, random_state=0),
    "SA-Merging": merging.sa_merge(base, experts, p=0.2, n_rounds=10, scaling=0.8),
}
models = {"base": [base] * 3, **{k: [v] * 3 for k, v in merged.items()}, "expert": experts}
errors = {name: [mse(states[t], t) for t in range(3)] for name, states in models.items()}
for name, err in errors.items():
    print(f"{name:>16}: " + "  ".join(f"{e:.3f}" for e in err))

# %%
fig, ax = plt.subplots(figsize=(7, 3.8))
pos = np.arange(3)
width = 0.8 / len(errors)
for i, (name, err) in enumerate(errors.items()):
    color = {"base": "0.75", "expert": "0.3"}.get(name)
    ax.bar(pos + (i - (len(errors) - 1) / 2) * width, err, width, label=name, color=color)
ax.set_yscale("log")
ax.set_xticks(pos, [f"task {t}" for t in range(3)])
ax.set_ylabel("test MSE")
ax.set_title("one merged model, scored on each task")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
