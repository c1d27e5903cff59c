"""Write the intersphinx inventories of NumPy and PyTorch used by the offline docs build.

The build machines reach no documentation host, and no package registry ships
an ``objects.inv`` of NumPy or PyTorch (Debian 12 has no NumPy or PyTorch
documentation package), so this script writes one for each from the
installed packages: it lists their public names by introspection and gives
each the address it has on the published site, following the page layout of
those sites (the ``.. autosummary:: :toctree: generated`` and ``.. class::``
entries of their ``doc/source`` trees):

NumPy (``https://numpy.org/doc/stable/``)
    * functions, ufuncs and classes of ``numpy`` and ``numpy.linalg``, and the
      methods and attributes of ``numpy.ndarray``:
      ``reference/generated/<name>.html#<name>``;
    * scalar types (``numpy.float64``, ``numpy.intp``, ...):
      ``reference/arrays.scalars.html#<name>``;
    * constants (``numpy.nan``, ``numpy.pi``, ...): ``reference/constants.html#<name>``;
    * ``numpy.random``: ``Generator`` and ``default_rng`` on
      ``reference/random/generator.html``, ``RandomState`` on
      ``reference/random/legacy.html``, their methods and the legacy module
      functions on ``reference/random/generated/<name>.html``, ``SeedSequence``
      on ``reference/random/bit_generators/generated/<name>.html``;
    * ``numpy.typing.ArrayLike``, ``NDArray`` and ``DTypeLike``:
      ``reference/typing.html#<name>``.

PyTorch (``https://docs.pytorch.org/docs/stable/``)
    * ``torch.Tensor``: ``tensors.html#torch.Tensor``; its methods and
      attributes: ``generated/torch.Tensor.<m>.html``;
    * ``torch.dtype``, ``torch.device``, ``torch.layout``, ``torch.memory_format``:
      ``tensor_attributes.html#<name>``;
    * functions of ``torch`` and ``torch.nn.functional``, ``torch.Generator``,
      the optimisers of ``torch.optim``: ``generated/<name>.html#<name>``;
    * the modules of ``torch.nn`` (subclasses of ``torch.nn.Module``):
      ``generated/<name>.html#<name>``, the methods of ``torch.nn.Module``
      on its page;
      ``torch.nn.Parameter`` and ``torch.nn.Buffer`` under their defining
      name ``torch.nn.parameter.*``;
    * ``torch.optim.Optimizer``: ``optim.html#torch.optim.Optimizer``, its
      methods on ``generated/torch.optim.Optimizer.<m>.html``.

Names outside these rules are left out (they do not resolve, as before).
The addresses are derived from the layout, not fetched: a name that the
installed package has but the published site does not document would link
to a missing page. Regenerate after a NumPy or PyTorch upgrade, in an
environment with both installed, from the repository root::

    python docs/_intersphinx/make_inventories.py

which writes ``docs/_intersphinx/numpy-<major.minor>.inv`` and
``torch-<major.minor>.inv`` (the names that ``docs/conf.py`` reads: update
them there when the version changes) and prints the count of each.
"""

from __future__ import annotations

import inspect
import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Documented on reference/arrays.scalars.html (``.. autoclass::`` or ``.. attribute::``).
NUMPY_SCALARS = """
generic number integer signedinteger byte short intc int_ long longlong
unsignedinteger ubyte ushort uintc uint ulong ulonglong inexact floating half
single double longdouble complexfloating csingle cdouble clongdouble bool_ bool
datetime64 timedelta64 object_ flexible character bytes_ str_ void int8 int16
int32 int64 uint8 uint16 uint32 uint64 intp uintp float16 float32 float64
float96 float128 complex64 complex128 complex192 complex256
""".split()
NUMPY_CONSTANTS = ["e", "euler_gamma", "inf", "nan", "newaxis", "pi"]
TORCH_TENSOR_ATTRIBUTES = ["dtype", "device", "layout", "memory_format"]


def _public(names):
    return sorted(n for n in names if not n.startswith("_"))


def _is_routine(obj):
    # Plain and builtin functions, ufuncs and NumPy's array-function dispatchers.
    return inspect.isroutine(obj) or type(obj).__name__ in ("ufunc", "_ArrayFunctionDispatcher")


def numpy_entries():
    """(name, role, uri) of the NumPy names, by the rules of the module docstring."""
    import numpy as np
    import numpy.linalg
    import numpy.random

    gen = "reference/generated/{}.html#{}"
    out = [
        ("numpy", "py:module", "reference/index.html"),
        ("numpy.linalg", "py:module", "reference/routines.linalg.html#module-numpy.linalg"),
        ("numpy.random", "py:module", "reference/random/index.html#module-numpy.random"),
    ]
    for name in _public(dir(np)):
        obj = getattr(np, name)
        full = f"numpy.{name}"
        if name in NUMPY_SCALARS:
            out.append((full, "py:class", f"reference/arrays.scalars.html#{full}"))
        elif name in NUMPY_CONSTANTS:
            out.append((full, "py:data", f"reference/constants.html#{full}"))
        elif inspect.isclass(obj):
            out.append((full, "py:class", gen.format(full, full)))
        elif _is_routine(obj):
            out.append((full, "py:function", gen.format(full, full)))
    for name in _public(dir(np.ndarray)):
        full = f"numpy.ndarray.{name}"
        role = "py:method" if callable(getattr(np.ndarray, name)) else "py:attribute"
        out.append((full, role, gen.format(full, full)))
    for name in _public(numpy.linalg.__all__):
        obj = getattr(numpy.linalg, name)
        full = f"numpy.linalg.{name}"
        role = "py:exception" if inspect.isclass(obj) else "py:function"
        out.append((full, role, gen.format(full, full)))
    rgen = "reference/random/generated/{}.html#{}"
    out += [
        ("numpy.random.Generator", "py:class",
         "reference/random/generator.html#numpy.random.Generator"),
        ("numpy.random.default_rng", "py:function",
         "reference/random/generator.html#numpy.random.default_rng"),
        ("numpy.random.RandomState", "py:class",
         "reference/random/legacy.html#numpy.random.RandomState"),
        ("numpy.random.SeedSequence", "py:class",
         "reference/random/bit_generators/generated/numpy.random.SeedSequence.html"
         "#numpy.random.SeedSequence"),
    ]  # fmt: skip
    for cls in (numpy.random.Generator, numpy.random.RandomState):
        for name in _public(dir(cls)):
            full = f"numpy.random.{cls.__name__}.{name}"
            role = "py:method" if callable(getattr(cls, name)) else "py:attribute"
            out.append((full, role, rgen.format(full, full)))
    legacy = set(dir(numpy.random.RandomState))
    for name in _public(numpy.random.__all__):
        if name in legacy and _is_routine(getattr(numpy.random, name)):
            full = f"numpy.random.{name}"
            out.append((full, "py:function", rgen.format(full, full)))
    for name in ("ArrayLike", "NDArray", "DTypeLike"):
        full = f"numpy.typing.{name}"
        out.append((full, "py:data", f"reference/typing.html#{full}"))
    return np.__version__, out


def torch_entries():
    """(name, role, uri) of the PyTorch names, by the rules of the module docstring."""
    import torch
    import torch.nn
    import torch.nn.functional
    import torch.optim

    gen = "generated/{}.html#{}"
    out = [
        ("torch", "py:module", "torch.html#module-torch"),
        ("torch.nn", "py:module", "nn.html#module-torch.nn"),
        ("torch.nn.functional", "py:module", "nn.functional.html"),
        ("torch.optim", "py:module", "optim.html#module-torch.optim"),
        ("torch.Tensor", "py:class", "tensors.html#torch.Tensor"),
        ("torch.Generator", "py:class", gen.format("torch.Generator", "torch.Generator")),
    ]
    for name in TORCH_TENSOR_ATTRIBUTES:
        out.append((f"torch.{name}", "py:class", f"tensor_attributes.html#torch.{name}"))
    for name in _public(dir(torch.Tensor)):
        full = f"torch.Tensor.{name}"
        if name in ("T", "H", "mT", "mH"):  # ``.. autoattribute::`` on the tensors page
            out.append((full, "py:attribute", f"tensors.html#{full}"))
            continue
        role = "py:method" if inspect.isroutine(getattr(torch.Tensor, name)) else "py:attribute"
        out.append((full, role, gen.format(full, full)))
    for name in _public(getattr(torch, "__all__", dir(torch))):
        obj = getattr(torch, name, None)
        if inspect.isroutine(obj) and not inspect.isclass(obj):
            full = f"torch.{name}"
            out.append((full, "py:function", gen.format(full, full)))
    for name in ("no_grad", "enable_grad"):  # context managers documented as functions
        out.append((f"torch.{name}", "py:class", gen.format(f"torch.{name}", f"torch.{name}")))
    for name in _public(dir(torch.nn.functional)):
        obj = getattr(torch.nn.functional, name)
        if inspect.isroutine(obj) and getattr(obj, "__module__", "").startswith("torch"):
            full = f"torch.nn.functional.{name}"
            out.append((full, "py:function", gen.format(full, full)))
    module_methods = _public(
        n for n in dir(torch.nn.Module) if callable(getattr(torch.nn.Module, n))
    )
    for name in _public(dir(torch.nn)):
        obj = getattr(torch.nn, name)
        if not (inspect.isclass(obj) and issubclass(obj, torch.nn.Module)):
            continue
        full = f"torch.nn.{name}"
        page = f"generated/{full}.html"
        out.append((full, "py:class", f"{page}#{full}"))
    for method in module_methods:  # only those of the base class (the others are inherited)
        full = f"torch.nn.Module.{method}"
        out.append((full, "py:method", f"generated/torch.nn.Module.html#{full}"))
    for name in ("Parameter", "Buffer"):
        full = f"torch.nn.parameter.{name}"
        out.append((f"torch.nn.{name}", "py:class", gen.format(full, full)))
    out.append(("torch.optim.Optimizer", "py:class", "optim.html#torch.optim.Optimizer"))
    for name in _public(dir(torch.optim.Optimizer)):
        if inspect.isroutine(getattr(torch.optim.Optimizer, name)):
            full = f"torch.optim.Optimizer.{name}"
            out.append((full, "py:method", gen.format(full, full)))
    for name in _public(dir(torch.optim)):
        obj = getattr(torch.optim, name)
        if inspect.isclass(obj) and issubclass(obj, torch.optim.Optimizer) and name != "Optimizer":
            full = f"torch.optim.{name}"
            out.append((full, "py:class", gen.format(full, full)))
    return torch.__version__.split("+")[0], out


def write_inventory(path, project, version, entries):
    """Write ``entries`` as a Sphinx inventory (format version 2) at ``path``."""
    seen, lines = set(), []
    for name, role, uri in entries:
        if name in seen:
            continue
        seen.add(name)
        # "$" at the end of a URI stands for the name; "-" for a display name equal to it.
        if uri.endswith("#" + name):
            uri = uri[: -len(name)] + "$"
        lines.append(f"{name} {role} 1 {uri} -")
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n"
        f"# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    body = "".join(line + "\n" for line in sorted(lines)).encode()
    path.write_bytes(header.encode() + zlib.compress(body, 9))
    return len(lines)


def main(out_dir=HERE):
    for project, entries_of in (("NumPy", numpy_entries), ("PyTorch", torch_entries)):
        version, entries = entries_of()
        short = ".".join(version.split(".")[:2])
        stem = "numpy" if project == "NumPy" else "torch"
        path = Path(out_dir) / f"{stem}-{short}.inv"
        n = write_inventory(path, project, short, entries)
        print(f"{path}: {n} names of {project} {version}")


if __name__ == "__main__":
    main(*sys.argv[1:])
