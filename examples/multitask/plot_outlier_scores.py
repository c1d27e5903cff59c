"""
Which tasks are outliers?
=========================

:class:`~mvlearn_ext.multitask.RobustMultiTaskRegressorCV` shrinks every task
towards a shared centre; a task whose distance to the centre, in its own
covariance geometry, exceeds the penalty ``reg_lambda_`` is not fused.
Its ``outlier_scores_`` show which tasks those are. Here 5 of 25 tasks are
planted outliers.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.datasets import make_contaminated_tasks
from mvlearn_ext.multitask import RobustMultiTaskRegressorCV

data = make_contaminated_tasks(
    n_tasks=25, n_samples=40, n_features=10, epsilon=0.2, alpha=0.0, random_state=0
)
# ridges=(0,): the paper's estimator (the default also chooses a ridge term by CV)
model = RobustMultiTaskRegressorCV(fit_intercept=False, cv=3, random_state=0, ridges=(0.0,))
model.fit(data.X, data.y, tasks=data.tasks)
print(f"reg_lambda_ = {model.reg_lambda_:.3g}; {int(model.fused_.sum())} of 25 tasks fused")

# %%
fig, ax = plt.subplots(figsize=(7, 3.5))
idx = np.arange(model.n_tasks_)
colors = np.where(data.outliers, "tab:red", "tab:blue")
ax.bar(idx, model.outlier_scores_, color=colors)
ax.axhline(model.reg_lambda_, color="k", ls="--", lw=1, label="reg_lambda_")
ax.set_yscale("log")
ax.set_xlabel("task")
ax.set_ylabel("outlier score")
ax.set_title("planted outliers in red")
ax.legend()
fig.tight_layout()
plt.show()
