"""mvlearn_ext: multi-view, multi-task and multi-objective learning.

The methods of the ICML 2026 papers on multi-view clustering, robust
multi-task regression, multi-group mean-estimation bandits, multi-output
Gaussian processes, multi-objective and federated learning and model merging,
with their strongest baselines, behind scikit-learn compatible estimators and
a compiled core (C++ via pybind11, and Numba).

Subpackages are imported on first use (``mvlearn_ext.cluster``,
``mvlearn_ext.datasets``, ...). Importing ``mvlearn_ext`` never imports torch;
the deep methods live in ``mvlearn_ext.deep`` behind the ``torch`` extra.
"""

import importlib as _importlib

__version__ = "0.1.0.dev0"

_SUBPACKAGES = (
    "adapters",
    "bandits",
    "base",
    "brain",
    "cluster",
    "compose",
    "datasets",
    "diffusion",
    "extrapolate",
    "federated",
    "gaussian_process",
    "incomplete",
    "longtail",
    "merging",
    "metrics",
    "moo",
    "multitask",
    "rl",
    "studies",
    "utils",
)

__all__ = ["__version__", *_SUBPACKAGES]


def __getattr__(name):
    if name in _SUBPACKAGES:
        return _importlib.import_module(f"mvlearn_ext.{name}")
    raise AttributeError(f"module 'mvlearn_ext' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
