"""The package's layers, checked over its import graph (docs/design.md, "Layers").

Every ``import`` and ``from ... import`` statement of ``mvlearn_ext/`` is read
with :mod:`ast` (imports inside functions included, so a lazy import cannot
hide a dependency) and checked against two rules:

1. **Layers.** A module imports only from its own layer or from a lower one:
   the compiled core (``_lib``) < the shared infrastructure (``utils``,
   ``base``) < the method families (``cluster``, ``multitask``, ...) < the
   torch bridge (``deep``) < the demo (``_demo``) < the command line
   (``_cli``, ``__main__``). So no family imports the CLI, the demo or
   ``deep``, and the bridge never imports the demo.
2. **Private stays private.** Outside its own family, no module imports a
   private module or private name (a leading underscore) of another package,
   except those of the infrastructure (``_lib``, ``utils``), which are the
   package's internal toolkit. The torch half of a family,
   ``deep/<family>.py``, and its bridges to other libraries,
   ``deep/<family>_<library>.py`` (``deep/rl_trl.py``), belong to the family
   of that name (they extend the NumPy half, whose internals they may use).
3. **One route into the compiled core.** Only ``_lib`` imports
   ``mvlearn_ext._lib._core``; the package's drivers call the unchecked
   entries of ``mvlearn_ext._lib._kernels`` and never import the validating
   wrappers (``project_simplex``, ``anchor_graph``, ``kneighbors_anchors``
   of ``mvlearn_ext.utils`` or ``mvlearn_ext._lib``), which are for users.

``KNOWN_PRIVATE_IMPORTS`` lists the exceptions to rule 2 that remain on main,
as (importing package, private module) pairs. The list may only shrink: a new
pair fails the test, and so does a listed pair that no longer occurs.
"""

import ast
import pathlib
import subprocess
import sys
import textwrap

import pytest

import mvlearn_ext

ROOT = pathlib.Path(mvlearn_ext.__file__).parent

CORE, INFRASTRUCTURE, FAMILY, BRIDGE, DEMO, CLI = range(6)
LAYER_NAMES = ("compiled core", "infrastructure", "method family", "torch bridge", "demo", "CLI")
LAYERS = {
    "_lib": CORE,
    "utils": INFRASTRUCTURE,
    "base": INFRASTRUCTURE,
    "deep": BRIDGE,
    "_demo": DEMO,
    "_cli": CLI,
    "__main__": CLI,
}
#: Packages whose private modules every layer above may use.
SHARED_PRIVATE = {"_lib", "utils"}

#: Rule 2's exceptions still on main: (importing package, private module).
KNOWN_PRIVATE_IMPORTS = {
    # the demo's toy problems are private to their families
    ("_demo", "mvlearn_ext.merging._toy"),
    ("_demo", "mvlearn_ext.rl._grape_toy"),
    ("_demo", "mvlearn_ext.rl._toy"),
    # the CLI resolves view names of the embedded data set
    ("_cli", "mvlearn_ext.datasets._handwritten"),
}


def package_of(module):
    """The top-level package of ``mvlearn_ext.<package>...`` ('' for the root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def family_of(module):
    """The family a module belongs to for rule 2.

    ``deep.<family>`` (the family's torch module) and ``deep.<family>_<bridge>``
    (its bridge to another library: ``deep.rl_trl``, ``deep.adapters_peft``)
    belong to ``<family>``.
    """
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "deep":
        for family in sorted((p.name for p in ROOT.iterdir() if p.is_dir()), key=len)[::-1]:
            if parts[2] == family or parts[2].startswith(family + "_"):
                return family
    return package_of(module)


def layer_of(package):
    return LAYERS.get(package, FAMILY)


def imports_of(module, source):
    """``[(line, imported)]``: every mvlearn_ext module or name that ``source`` imports.

    ``from a.b import c`` yields ``a.b.c`` (a module or a name, which rule 2
    treats alike); relative imports are resolved against ``module``.
    """
    is_package = module.endswith(".__init__")
    module = module.removesuffix(".__init__")
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            targets = [f"{prefix}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [(node.lineno, t) for t in targets if t.split(".")[0] == "mvlearn_ext"]
    return module, found


def violations(modules):
    """Rule breaks of ``{module: source}``: ``(layer_breaks, private_pairs)``.

    ``layer_breaks`` lists ``"module:line imports target (layer a < b)"``;
    ``private_pairs`` maps ``(package, private module)`` to its first use.
    """
    layer_breaks, private = [], {}
    for name, source in sorted(modules.items()):
        module, found = imports_of(name, source)
        importer, family = package_of(module), family_of(module)
        for line, target in found:
            imported = package_of(target)
            if imported in ("", importer):
                continue
            if layer_of(imported) > layer_of(importer):
                layer_breaks.append(
                    f"{module}:{line} imports {target} "
                    f"({LAYER_NAMES[layer_of(importer)]} below {LAYER_NAMES[layer_of(imported)]})"
                )
            if imported in SHARED_PRIVATE or imported == family:
                continue
            parts = target.split(".")
            for depth in range(2, len(parts)):
                if parts[depth].startswith("_") and not parts[depth].startswith("__"):
                    key = (importer, ".".join(parts[: depth + 1]))
                    private.setdefault(key, f"{module}:{line}")
                    break
    return layer_breaks, private


#: The validating public wrappers of the compiled kernels: for users, not for drivers.
VALIDATING_WRAPPERS = {"project_simplex", "anchor_graph", "kneighbors_anchors"}
#: Where those wrappers live (the façade) and are re-exported.
WRAPPER_HOMES = {"mvlearn_ext._lib", "mvlearn_ext.utils"}


def core_route_breaks(modules):
    """Imports of ``{module: source}`` against rule 3 (one route into the core)."""
    breaks = []
    for name, source in sorted(modules.items()):
        module, found = imports_of(name, source)
        for line, target in found:
            if target.split(".")[:3] == ["mvlearn_ext", "_lib", "_core"]:
                if package_of(module) != "_lib":
                    breaks.append(f"{module}:{line} imports the compiled core {target}")
                continue
            home, _, leaf = target.rpartition(".")
            wrapper = leaf in VALIDATING_WRAPPERS and home in WRAPPER_HOMES
            if wrapper and module not in WRAPPER_HOMES:
                breaks.append(
                    f"{module}:{line} imports the validating wrapper {target}; "
                    f"drivers use mvlearn_ext._lib._kernels.{leaf}"
                )
    return breaks


def package_sources():
    sources = {}
    for path in ROOT.rglob("*.py"):
        module = ".".join(("mvlearn_ext", *path.relative_to(ROOT).with_suffix("").parts))
        sources[module] = path.read_text(encoding="utf-8")
    return sources


def test_layers_hold():
    layer_breaks, _ = violations(package_sources())
    assert not layer_breaks, "imports against the layers:\n" + "\n".join(layer_breaks)


def test_no_new_private_import_across_packages():
    _, private = violations(package_sources())
    new = {k: v for k, v in private.items() if k not in KNOWN_PRIVATE_IMPORTS}
    assert not new, "private modules imported from another package:\n" + "\n".join(
        f"{where}: {pkg} imports {target}" for (pkg, target), where in sorted(new.items())
    )
    stale = KNOWN_PRIVATE_IMPORTS - set(private)
    assert not stale, f"fixed, remove from KNOWN_PRIVATE_IMPORTS: {sorted(stale)}"


def test_one_route_into_the_compiled_core():
    breaks = core_route_breaks(package_sources())
    assert not breaks, "imports against the one route into the compiled core:\n" + "\n".join(
        breaks
    )


@pytest.mark.parametrize(
    ("module", "source", "broken"),
    [
        # only _lib imports the compiled module, however it is spelled
        ("mvlearn_ext.cluster._x", "from mvlearn_ext._lib import _core", True),
        ("mvlearn_ext.gaussian_process._x", "import mvlearn_ext._lib._core", True),
        ("mvlearn_ext.moo._x", "def f():\n    from .._lib._core import gp_kron_mv", True),
        ("mvlearn_ext._lib._kernels", "from mvlearn_ext._lib import _core", False),
        ("mvlearn_ext._lib.__init__", "from . import _core", False),
        # drivers take the unchecked entries, not the validating wrappers
        ("mvlearn_ext.cluster._x", "from mvlearn_ext.utils import project_simplex", True),
        ("mvlearn_ext.cluster._x", "from mvlearn_ext._lib import anchor_graph", True),
        ("mvlearn_ext.cluster._x", "from ..utils import kneighbors_anchors", True),
        ("mvlearn_ext.cluster._x", "from mvlearn_ext._lib._kernels import project_simplex", False),
        ("mvlearn_ext.cluster._x", "from mvlearn_ext.utils import effective_n_jobs", False),
        ("mvlearn_ext.utils.__init__", "from mvlearn_ext._lib import project_simplex", False),
    ],
)
def test_core_route_checker_catches_rule_breaks(module, source, broken):
    assert bool(core_route_breaks({module: source})) == broken


def test_core_stub_declares_every_binding():
    """``_core.pyi`` lists exactly the functions the compiled module binds."""
    from mvlearn_ext._lib import _core

    stub = ast.parse((ROOT / "_lib" / "_core.pyi").read_text(encoding="utf-8"))
    declared = {node.name for node in stub.body if isinstance(node, ast.FunctionDef)}
    bound = {name for name in dir(_core) if not name.startswith("_")}
    assert declared == bound


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        # a family importing the CLI, the demo or the bridge: a layer break
        ("mvlearn_ext.cluster._x", "from mvlearn_ext._cli import main", "layer"),
        ("mvlearn_ext.multitask._x", "def f():\n    import mvlearn_ext.deep.rl", "layer"),
        ("mvlearn_ext.moo.__init__", "from .._demo.registry import DemoRow", "layer"),
        ("mvlearn_ext.utils._x", "from mvlearn_ext.cluster import HAGMVC", "layer"),
        ("mvlearn_ext.deep.rl", "from mvlearn_ext._demo import sections", "layer"),
        # another family's private module or name, at any depth, relative or not
        ("mvlearn_ext.cluster._x", "from mvlearn_ext.moo._qp import solve", "private"),
        ("mvlearn_ext.cluster._x", "from ..moo import _qp", "private"),
        ("mvlearn_ext.cluster._x", "from mvlearn_ext.moo import _helper", "private"),
        # allowed: own package, public names, the infrastructure's private modules
        ("mvlearn_ext.cluster._x", "from ._common import f\nfrom mvlearn_ext.moo import a", ""),
        ("mvlearn_ext.cluster._x", "from mvlearn_ext.utils._threads import fit_threads", ""),
        ("mvlearn_ext.deep.rl", "from mvlearn_ext.rl import group_advantages", ""),
        # the torch half of a family may use its NumPy half's internals, not another's
        ("mvlearn_ext.deep.brain", "from mvlearn_ext.brain._kernel import k", ""),
        ("mvlearn_ext.deep.brain", "from mvlearn_ext.moo._qp import solve", "private"),
        ("mvlearn_ext.deep._bridge", "from mvlearn_ext.brain._kernel import k", "private"),
        ("mvlearn_ext.deep.rl_trl", "from mvlearn_ext.rl._rewards import PATTERN", ""),
        ("mvlearn_ext.deep.rl_trl", "from mvlearn_ext.moo._qp import solve", "private"),
        ("mvlearn_ext._cli", "from mvlearn_ext._demo.registry import DemoRow", ""),
    ],
)
def test_checker_catches_rule_breaks(module, source, expected):
    """The checker itself: each rule fails on a module that breaks it."""
    layer_breaks, private = violations({module: source})
    assert bool(layer_breaks) == (expected == "layer")
    assert bool(private) == (expected == "private")


def test_root_and_families_do_not_import_torch_or_the_cli():
    """Importing the root and every NumPy family loads neither torch nor the CLI/demo."""
    code = textwrap.dedent(
        """
        import importlib, sys
        import mvlearn_ext
        for name in mvlearn_ext.__all__[1:]:
            importlib.import_module(f"mvlearn_ext.{name}")
        loaded = {"torch", "mvlearn_ext.deep", "mvlearn_ext._cli", "mvlearn_ext._demo"}
        print(sorted(loaded & set(sys.modules)))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
