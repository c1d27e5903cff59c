"""
Compositional tasks: primitives, library and a longer target
============================================================

The discrete regime of relational task extrapolation works on compositions of
four primitives that map ``[-1, 1]`` into itself
(``PRIMITIVES``: sin, square, flip, tanh). A task
is a code ``(c_1, ..., c_L)`` and its function is
``g_{c_L}(... g_{c_1}(x))`` (:func:`~mvlearn_ext.extrapolate.compose_primitives`);
the library holds every code of depth 1 to 3
(:func:`~mvlearn_ext.extrapolate.all_codes`), and a length-extrapolation
target has depth 5. The left panel shows the primitives, the middle one a few
library tasks, the right one the depth-5 target ``(1, 3, 0, 2, 1)`` and its
depth-3 prefix, the library task that
:class:`~mvlearn_ext.extrapolate.CompositionalTaskExtrapolator` can use as an
anchor before appending a chain of primitives. This example only draws the
tasks; the user guide reports the extrapolator's errors against its baselines.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvlearn_ext.extrapolate import PRIMITIVES, all_codes, compose_primitives

x = np.linspace(-1, 1, 200)
library = all_codes(len(PRIMITIVES), [1, 2, 3])
names = [name for name, _ in PRIMITIVES]
print(f"library: {len(library)} codes of depth 1-3 over {names}")

# %%
fig, axes = plt.subplots(1, 3, figsize=(12, 3.4), sharey=True)
for i, name in enumerate(names):
    axes[0].plot(x, compose_primitives((i,), x), label=f"{i}: {name}")
axes[0].set(title="primitives", xlabel="x")
axes[0].legend(fontsize=8)
rng = np.random.default_rng(0)
for j in rng.choice(len(library), 6, replace=False):
    code = library[j]
    axes[1].plot(x, compose_primitives(code, x), label=str(code))
axes[1].set(title="library tasks (depth 1-3)", xlabel="x")
axes[1].legend(fontsize=7)
target = (1, 3, 0, 2, 1)
axes[2].plot(x, compose_primitives(target[:3], x), "--", label=f"prefix {target[:3]}")
axes[2].plot(x, compose_primitives(target, x), "k", label=f"target {target}")
axes[2].set(title="a depth-5 target", xlabel="x")
axes[2].legend(fontsize=8)
fig.tight_layout()
plt.show()
