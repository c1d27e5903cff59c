"""Find the public estimators of ``mvlearn_ext``.

The counterpart of :mod:`sklearn.utils.discovery`: the common tests use it so
that every estimator added to a public subpackage is put through the
contract suites without anyone having to register it.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil

from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClusterMixin,
    RegressorMixin,
    TransformerMixin,
)

from mvlearn_ext.base import MultiViewClusterMixin, MultiViewTransformerMixin, is_multiview

__all__ = ["all_estimators"]

_ROOT = "mvlearn_ext"
# Never imported by the walk: the command line, and test helpers if any.
_SKIPPED_MODULES = frozenset({"__main__", "tests", "conftest"})
# Imported only when their optional dependencies can be found (without importing
# them): the torch bridge, and its bridges to TRL, PEFT and transformers (the
# ``llm`` extra), which a torch-only install lacks.
_OPTIONAL_MODULES = {
    "mvlearn_ext.deep": ("torch",),
    "mvlearn_ext.deep.rl_trl": ("trl",),
    "mvlearn_ext.deep.moo_trl": ("transformers", "trl"),
    "mvlearn_ext.deep.adapters_peft": ("peft",),
    "mvlearn_ext.deep.merging_peft": ("peft",),
}

_TYPE_BASES = {
    "classifier": (ClassifierMixin,),
    "regressor": (RegressorMixin,),
    "transformer": (TransformerMixin, MultiViewTransformerMixin),
    "cluster": (ClusterMixin, MultiViewClusterMixin),
}


def _dependency_available(name):
    # find_spec on a top-level name locates the package without importing it.
    return importlib.util.find_spec(name) is not None


def _public_modules(package, include_optional=True):
    """Import and yield ``package`` and its public submodules, depth first.

    A subpackage that needs an optional dependency is walked only when
    ``include_optional`` is true and the dependency can be found.
    """
    yield package
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_") or info.name in _SKIPPED_MODULES:
            continue
        name = f"{package.__name__}.{info.name}"
        dependencies = _OPTIONAL_MODULES.get(name, ())
        if dependencies and not (
            include_optional and all(_dependency_available(d) for d in dependencies)
        ):
            continue
        module = importlib.import_module(name)
        if info.ispkg:
            yield from _public_modules(module, include_optional)
        else:
            yield module


def all_estimators(type_filter=None, *, multiview=None, include_optional=True):
    """The public estimators of ``mvlearn_ext``, as ``(name, class)`` pairs.

    Walks the public subpackages and modules (those whose names do not start
    with an underscore) and collects the classes that derive from
    :class:`sklearn.base.BaseEstimator`, are defined in ``mvlearn_ext``, are
    not abstract and have public names. ``mvlearn_ext.deep`` is walked only
    when torch is installed and ``include_optional`` is true, and torch is
    never imported otherwise; ``mvlearn_ext.__main__`` is never imported.

    Parameters
    ----------
    type_filter : {"classifier", "regressor", "transformer", "cluster"} or list of such str, \
default=None
        Keep only the estimators of these types (of any of them, for a list),
        by their mixins: scikit-learn's ``ClassifierMixin``,
        ``RegressorMixin``, ``TransformerMixin`` and ``ClusterMixin``, and
        for multi-view estimators :class:`~mvlearn_ext.base.MultiViewTransformerMixin`
        and :class:`~mvlearn_ext.base.MultiViewClusterMixin`. Meta-estimators
        whose type is their wrapped estimator's
        (:class:`~mvlearn_ext.compose.MultiViewAdapter`) are in no type.
        ``None`` keeps every estimator.
    multiview : bool or None, default=None
        ``True`` keeps only the multi-view estimators (whose ``fit`` takes a
        list of views, see :func:`mvlearn_ext.base.is_multiview`), ``False``
        only the single-array ones, ``None`` both.
    include_optional : bool, default=True
        Also walk the subpackages that need an optional dependency
        (``mvlearn_ext.deep``, which needs torch) when it is installed.
        ``False`` gives the core estimators only, without importing torch
        (importing it takes seconds).

    Returns
    -------
    estimators : list of (str, type)
        The estimators, sorted by name.

    See Also
    --------
    sklearn.utils.discovery.all_estimators : scikit-learn's equivalent.
    mvlearn_ext.utils.estimator_checks.check_multiview_estimator : The contract suite run on them.

    Examples
    --------
    >>> from mvlearn_ext.utils.discovery import all_estimators
    >>> dict(all_estimators(type_filter="cluster", multiview=True))["ConcatKMeans"]
    <class 'mvlearn_ext.cluster._concat.ConcatKMeans'>
    """
    if type_filter is None:
        types = None
    else:
        types = [type_filter] if isinstance(type_filter, str) else list(type_filter)
        unknown = [kind for kind in types if kind not in _TYPE_BASES]
        if unknown or not types:
            raise ValueError(
                f"type_filter must be None, one of {sorted(_TYPE_BASES)} or a non-empty list "
                f"of them; got {type_filter!r}"
            )
    if multiview not in (None, True, False):
        raise ValueError(f"multiview must be None, True or False, got {multiview!r}")
    if include_optional not in (True, False):
        raise ValueError(f"include_optional must be True or False, got {include_optional!r}")

    found = set()
    for module in _public_modules(importlib.import_module(_ROOT), include_optional):
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (
                name.startswith("_")
                or not issubclass(cls, BaseEstimator)
                or not cls.__module__.startswith(_ROOT + ".")
                or inspect.isabstract(cls)
            ):
                continue
            found.add((name, cls))

    estimators = sorted(found, key=lambda pair: (pair[0], pair[1].__module__))
    if types is not None:
        bases = tuple(base for kind in types for base in _TYPE_BASES[kind])
        estimators = [(name, cls) for name, cls in estimators if issubclass(cls, bases)]
    if multiview is not None:
        estimators = [(name, cls) for name, cls in estimators if is_multiview(cls) == multiview]
    return estimators
