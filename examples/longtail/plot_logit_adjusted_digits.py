"""
Logit-adjusted loss on long-tailed digits
=========================================

A long-tailed subsample of scikit-learn's digits (imbalance ratio 20, head
class of 100 images, :func:`~mvlearn_ext.longtail.make_long_tail_indices`) is
used to train a linear softmax classifier by full-batch gradient descent,
once with plain cross-entropy (:func:`~mvlearn_ext.longtail.softmax_cross_entropy`)
and once with the logit-adjusted loss of Menon et al.
(:func:`~mvlearn_ext.longtail.logit_adjusted_loss`, ``tau = 1``), which adds
``log pi_c`` to the logits during training only. The figure shows the
per-class accuracy on the balanced held-out images against the class's
training count. In this run (seed 0) the balanced accuracy
(:func:`~mvlearn_ext.longtail.group_accuracy`; groups here: many above 50,
few below 15 training images) rises from 0.81 to 0.91 with the adjustment,
0.60 to 0.89 on the few-shot classes, at a cost on the head classes (0.98
to 0.95) and the medium ones (0.91 to 0.90).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from mvlearn_ext.longtail import (
    group_accuracy,
    logit_adjusted_loss,
    make_long_tail_indices,
    softmax_cross_entropy,
)

X, y = load_digits(return_X_y=True)
X = X / 16.0
X_pool, X_test, y_pool, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
idx = make_long_tail_indices(y_pool, 20, n_max=100, random_state=0)
X_train, y_train = X_pool[idx], y_pool[idx]
counts = np.bincount(y_train, minlength=10)
print("training counts per class:", counts.tolist())


def train(loss):
    W, b = np.zeros((64, 10)), np.zeros(10)
    for _ in range(300):
        _, grad = loss(X_train @ W + b, y_train)
        W -= 0.5 * X_train.T @ grad
        b -= 0.5 * grad.sum(axis=0)
    return (X_test @ W + b).argmax(axis=1)


losses = {
    "cross-entropy": lambda z, t: softmax_cross_entropy(z, t, return_grad=True),
    "logit-adjusted": lambda z, t: logit_adjusted_loss(z, t, counts, return_grad=True),
}
per_class = {}
for name, loss in losses.items():
    pred = train(loss)
    acc = group_accuracy(y_test, pred, counts, many_threshold=50, few_threshold=15)
    print(f"{name:>15}: " + ", ".join(f"{k} {v:.3f}" for k, v in acc.items()))
    per_class[name] = [np.mean(pred[y_test == c] == c) for c in range(10)]

# %%
fig, ax = plt.subplots(figsize=(6.5, 3.8))
for name, acc in per_class.items():
    ax.plot(counts, acc, "o", label=name)
ax.set(xscale="log", xlabel="training images of the class", ylabel="held-out accuracy")
ax.legend()
fig.tight_layout()
plt.show()
