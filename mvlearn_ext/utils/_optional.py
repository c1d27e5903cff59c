"""Optional dependencies: imported on demand, with one clear error naming the extra.

:data:`OPTIONAL_DEPENDENCIES` is the one table of the packages that only an
extra of ``mvlearn_ext`` brings (``pip install "mvlearn_ext[moo]"``): what
each is for and which extras bring it. ``python -m mvlearn_ext info`` lists
it, the demo skips a section whose dependency is missing, and
:func:`import_optional` names the extra when an import fails. A test keeps
the table in step with ``[project.optional-dependencies]`` of
``pyproject.toml``.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import importlib.util

__all__ = [
    "OPTIONAL_DEPENDENCIES",
    "OptionalDependency",
    "import_optional",
    "install_hint",
    "installed_version",
    "is_available",
    "optional_dependency",
]


@dataclasses.dataclass(frozen=True)
class OptionalDependency:
    """A package that only an extra of ``mvlearn_ext`` brings.

    ``module`` is its import name, ``distribution`` its name on PyPI,
    ``extras`` the extras that bring it (the narrowest first; that one is
    the extra named in messages), ``purpose`` what needs it.
    """

    module: str
    distribution: str
    extras: tuple[str, ...]
    purpose: str

    @property
    def extra(self) -> str:
        """The extra named in messages: the narrowest that brings the package."""
        return self.extras[0]


#: Every optional dependency, by import name (threadpoolctl, in the bench
#: extra, is left out: scikit-learn depends on it, so it is always installed).
OPTIONAL_DEPENDENCIES: dict[str, OptionalDependency] = {
    dep.module: dep
    for dep in (
        OptionalDependency("torch", "torch", ("torch",), "mvlearn_ext.deep, the torch bridge"),
        OptionalDependency(
            "moocore",
            "moocore",
            ("moo", "bench", "docs", "test"),
            "hypervolume and Pareto ranking",
        ),
        OptionalDependency(
            "flwr", "flwr", ("federated", "test"), "the Flower adapter of mvlearn_ext.federated"
        ),
        OptionalDependency(
            "ray", "ray", ("federated", "test"), "Flower's simulation engine (via flwr)"
        ),
        OptionalDependency(
            "dask",
            "dask",
            ("dask", "docs", "test"),
            "Monte Carlo studies across machines; HAGMVC on row blocks",
        ),
        OptionalDependency(
            "zarr",
            "zarr",
            ("dask", "docs", "test"),
            "on-disk chunked views of the block clusterers",
        ),
        OptionalDependency(
            "distributed",
            "distributed",
            ("dask", "docs", "test"),
            "the dask scheduler of studies",
        ),
        OptionalDependency(
            "pandas",
            "pandas",
            ("dask", "bench", "docs", "test"),
            "study results and data as DataFrames",
        ),
        OptionalDependency(
            "matplotlib", "matplotlib", ("bench", "docs", "test"), "figures of studies and docs"
        ),
        OptionalDependency("pymoo", "pymoo", ("bench",), "the peer of the moo benchmark"),
        OptionalDependency(
            "transformers", "transformers", ("llm",), "the LLM bridges (models, tokenizers)"
        ),
        OptionalDependency("trl", "trl", ("llm",), "GRPO and MOPO trainers of the LLM bridges"),
        OptionalDependency("peft", "peft", ("llm",), "BADIT and SA-Merging on PEFT adapters"),
        OptionalDependency("mergekit", "mergekit", ("llm",), "the oracle of the merging tests"),
        OptionalDependency("pytest", "pytest", ("test",), "the test suite"),
        OptionalDependency("hypothesis", "hypothesis", ("test",), "property-based tests"),
        OptionalDependency("ruff", "ruff", ("test",), "the linter"),
        OptionalDependency(
            "numpydoc",
            "numpydoc",
            ("test", "docs"),
            "docstring validation and the site's API pages",
        ),
    )
}


def optional_dependency(name: str) -> OptionalDependency | None:
    """The :class:`OptionalDependency` of the import name ``name`` (its top level), or None."""
    return OPTIONAL_DEPENDENCIES.get(name.partition(".")[0])


def install_hint(name: str) -> str:
    """The command that installs the optional dependency ``name`` (an import name)."""
    dep = optional_dependency(name)
    if dep is None:
        return f"pip install {name}"
    if dep.extra == "torch":
        return (
            "pip install torch==2.13.0  (the pinned CPU build; "
            'then pip install "mvlearn_ext[torch]")'
        )
    if dep.extra == "llm":
        return (
            "pip install torch==2.13.0  (the pinned CPU build; "
            'then pip install "mvlearn_ext[llm]")'
        )
    return f'pip install "mvlearn_ext[{dep.extra}]"'


# module name -> (extra, how to install it); kept for the messages' callers.
_EXTRAS = {name: (dep.extra, install_hint(name)) for name, dep in OPTIONAL_DEPENDENCIES.items()}


def is_available(name: str) -> bool:
    """Whether ``name`` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package missing, or sys.modules[name] = None
        return False


def installed_version(name: str) -> str | None:
    """The installed version of the optional dependency ``name``, without importing it.

    ``None`` when it cannot be imported; ``"installed"`` when it can but its
    distribution has no metadata.
    """
    if not is_available(name):
        return None
    dep = optional_dependency(name)
    try:
        return importlib.metadata.version(dep.distribution if dep else name)
    except importlib.metadata.PackageNotFoundError:
        return "installed"


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
        dep = optional_dependency(name)
        extra = dep.extra if dep is not None else name
        what = f"{feature} needs" if feature else "this feature needs"
        raise ImportError(
            f"{what} the optional dependency {name!r} (extra '{extra}'): {install_hint(name)}",
            name=name,
        ) from exc
