"""The package's layers, checked over its import graph (docs/design.md, "Layers").

Every ``import`` and ``from ... import`` statement of ``mvlearn_ext/`` is read
with :mod:`ast` (imports inside functions included, so a lazy import cannot
hide a dependency) and checked against four rules:

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
4. **No import cycles.** No two modules import each other, directly or
   through others: the module import graph has no strongly connected
   component of more than one module. An import names the module it reads
   (``from a.b import c`` reads the module ``a.b.c`` if there is one, else
   ``a.b``); the implicit import of a parent package is not an edge, since a
   package's ``__init__`` that gathers its modules' public names is not a
   cycle with them.
"""

import ast
import importlib.machinery
import itertools
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


def compiled_modules():
    """The package's modules without Python source: compiled extensions and their stubs.

    The stub (``_core.pyi``) names the compiled module even where it is not
    built, so that ``from mvlearn_ext._lib import _core`` reads ``_core``
    rather than the ``_lib`` package.
    """
    suffixes = (".pyi", *importlib.machinery.EXTENSION_SUFFIXES)
    return {
        ".".join(("mvlearn_ext", *path.relative_to(ROOT).parent.parts, path.name.split(".")[0]))
        for path in ROOT.rglob("*")
        if path.name.endswith(suffixes)
    }


def import_graph(modules, extra_modules=()):
    """``{module: {imported module: first line}}`` of ``{module: source}`` (rule 4).

    Each import is resolved to the longest prefix of its target that is a
    module of ``modules`` or ``extra_modules``; imports of a module by itself
    (``from . import name`` in an ``__init__``) are dropped.
    """
    known = {name.removesuffix(".__init__") for name in modules} | set(extra_modules)
    graph = {}
    for name, source in sorted(modules.items()):
        module, found = imports_of(name, source)
        edges = graph.setdefault(module, {})
        for line, target in found:
            parts = target.split(".")
            while parts and ".".join(parts) not in known:
                parts.pop()
            imported = ".".join(parts)
            if imported and imported != module:
                edges.setdefault(imported, line)
    return graph


def import_cycles(graph):
    """The strongly connected components of ``graph`` with more than one module, sorted."""
    reach = {}
    for start in graph:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        reach[start] = seen
    components = {
        tuple(sorted({v, *(w for w in reach[v] if v in reach.get(w, ()))})) for v in graph
    }
    return sorted(c for c in components if len(c) > 1)


def cycle_pairs(components):
    """``{(a, b): component}``: each pair of modules that lie on a common import cycle."""
    return {pair: c for c in components for pair in itertools.combinations(c, 2)}


def describe_cycle(graph, component):
    """The imports that close ``component``, one ``"module:line imports module"`` per line."""
    return "\n".join(
        f"  {a}:{graph[a][b]} imports {b}"
        for a in component
        for b in sorted(graph.get(a, {}), key=graph[a].get)
        if b in component
    )


def test_layers_hold():
    layer_breaks, _ = violations(package_sources())
    assert not layer_breaks, "imports against the layers:\n" + "\n".join(layer_breaks)


def test_no_private_import_across_packages():
    _, private = violations(package_sources())
    assert not private, "private modules imported from another package:\n" + "\n".join(
        f"{where}: {pkg} imports {target}" for (pkg, target), where in sorted(private.items())
    )


def test_no_import_cycles():
    graph = import_graph(package_sources(), compiled_modules())
    pairs = cycle_pairs(import_cycles(graph))
    cycles = sorted(set(pairs.values()))
    assert not cycles, "modules that import each other:\n" + "\n".join(
        f"{', '.join(c)}:\n{describe_cycle(graph, c)}" for c in cycles
    )


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        # two modules importing each other, one of them inside a function
        (
            {
                "mvlearn_ext.cluster._a": "from mvlearn_ext.cluster._b import f",
                "mvlearn_ext.cluster._b": "def f():\n    from ._a import g",
            },
            [("mvlearn_ext.cluster._a", "mvlearn_ext.cluster._b")],
        ),
        # a cycle through a third module, across packages, by `from package import module`
        (
            {
                "mvlearn_ext.cluster._a": "from mvlearn_ext.moo import _c",
                "mvlearn_ext.cluster._b": "import mvlearn_ext.cluster._a",
                "mvlearn_ext.moo._c": "def f():\n    from ..cluster._b import g",
            },
            [("mvlearn_ext.cluster._a", "mvlearn_ext.cluster._b", "mvlearn_ext.moo._c")],
        ),
        # a module importing its package's public name, which the package imports from it
        (
            {
                "mvlearn_ext.cluster.__init__": "from ._a import A",
                "mvlearn_ext.cluster._a": "from mvlearn_ext.cluster import B",
            },
            [("mvlearn_ext.cluster", "mvlearn_ext.cluster._a")],
        ),
        # one-way imports, an __init__ gathering its modules, a module that imports itself
        (
            {
                "mvlearn_ext.cluster.__init__": "from ._a import A\nfrom . import _b",
                "mvlearn_ext.cluster._a": "from ._b import f\nfrom mvlearn_ext.utils import g",
                "mvlearn_ext.cluster._b": "from mvlearn_ext.cluster._b import h",
                # `_core` is a compiled module of `_lib`, not a name of its __init__
                "mvlearn_ext._lib.__init__": "from mvlearn_ext._lib._kernels import k",
                "mvlearn_ext._lib._kernels": "from mvlearn_ext._lib import _core",
            },
            [],
        ),
    ],
)
def test_cycle_checker_finds_modules_that_import_each_other(sources, expected):
    """The checker itself: rule 4 fails exactly on modules that import each other."""
    assert import_cycles(import_graph(sources, {"mvlearn_ext._lib._core"})) == expected


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
