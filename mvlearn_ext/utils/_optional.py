"""Optional dependencies: imported on demand, with one clear error naming the extra."""

from __future__ import annotations

import importlib
import importlib.util

__all__ = ["import_optional", "is_available"]

# module name -> (extra, how to install it)
_EXTRAS = {
    "torch": (
        "torch",
        "pip install torch==2.13.0  (the pinned CPU build; then pip install 'mvlearn_ext[torch]')",
    ),
    "matplotlib": ("bench", "pip install 'mvlearn_ext[bench]'"),
    "dask": ("dask", "pip install 'mvlearn_ext[dask]'"),
    "distributed": ("dask", "pip install 'mvlearn_ext[dask]'"),
    "flwr": ("federated", "pip install 'mvlearn_ext[federated]'"),
    "ray": ("federated", "pip install 'mvlearn_ext[federated]'"),
    "moocore": ("moo", "pip install 'mvlearn_ext[moo]'"),
}


def is_available(name: str) -> bool:
    """Whether ``name`` can be imported, without importing it."""
    return importlib.util.find_spec(name) is not None


def import_optional(name: str, *, feature: str | None = None):
    """Import an optional dependency or raise an ``ImportError`` naming its extra.

    Parameters
    ----------
    name : str
        Top-level module name, e.g. ``"torch"``.
    feature : str, optional
        What needs it, for the message (e.g. ``"mvlearn_ext.deep"``).
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        extra, how = _EXTRAS.get(name, (name, f"pip install {name}"))
        what = f"{feature} needs" if feature else "this feature needs"
        raise ImportError(
            f"{what} the optional dependency {name!r} (extra '{extra}'): {how}"
        ) from exc
