"""The docs stay in step with the code."""

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


API_DIR = ROOT / "docs" / "api"
EXAMPLES = ROOT / "examples"


def _autosummary_entries():
    """(module, name) of every entry of the autosummary lists in docs/api/*.rst."""
    entries = []
    for page in sorted(API_DIR.glob("*.rst")):
        module = None
        in_list = False
        for line in page.read_text().splitlines():
            if line.startswith(".. currentmodule::"):
                module = line.split("::", 1)[1].strip()
            elif line.startswith(".. autosummary::"):
                in_list = True
            elif in_list and line.startswith("   ") and not line.strip().startswith(":"):
                entries.append((module, line.strip(), page.name))
            elif in_list and line and not line.startswith(" "):
                in_list = False
    return entries


# The LLM bridges of mvlearn_ext.deep need the llm extra on top of torch.
_LLM_BRIDGES = ("mvlearn_ext.deep.rl_trl", "mvlearn_ext.deep.moo_trl")
_LLM_BRIDGES += ("mvlearn_ext.deep.adapters_peft", "mvlearn_ext.deep.merging_peft")


def _importable(module):
    if module.startswith("mvlearn_ext.deep") and importlib.util.find_spec("torch") is None:
        return False
    if module in _LLM_BRIDGES:
        return all(importlib.util.find_spec(n) for n in ("transformers", "trl", "peft"))
    return True


def _public_modules():
    """Every importable public module of the package that declares ``__all__``."""
    import mvlearn_ext

    names = []
    for info in pkgutil.walk_packages(mvlearn_ext.__path__, "mvlearn_ext."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        if not _importable(info.name):
            continue
        module = importlib.import_module(info.name)
        if hasattr(module, "__all__"):
            names.append(module)
    return names


def test_every_public_object_is_in_the_api_reference():
    """Each name of every public ``__all__`` has an autosummary entry (its own page)."""
    if not API_DIR.exists():
        pytest.skip("docs/ not present (installed package)")
    entries = _autosummary_entries()
    assert len(entries) > 200
    documented = {}
    for module, name, page in entries:
        assert module is not None, f"{page}: autosummary entry {name} before any currentmodule"
        if not _importable(module):
            continue
        mod = importlib.import_module(module)
        # No stale entry: every listed name is public in its module.
        assert name in mod.__all__, f"docs/api/{page}: {module}.{name} is not in __all__"
        documented[(module, name)] = getattr(mod, name)
    ids = {id(obj) for obj in documented.values()}
    missing = []
    for module in _public_modules():
        for name in module.__all__:
            obj = getattr(module, name)
            if (module.__name__, name) in documented:
                continue
            # A re-export is covered by the page of the object it re-exports
            # (classes and functions only: equal ints or tuples are not the same name).
            if (inspect.isclass(obj) or inspect.isroutine(obj)) and id(obj) in ids:
                continue
            missing.append(f"{module.__name__}.{name}")
    assert not missing, "public names without an API page (add them to docs/api/*.rst): " + (
        ", ".join(missing)
    )


def test_gallery_has_an_example_per_family_using_public_api_only():
    if not EXAMPLES.exists():
        pytest.skip("examples/ not present (installed package)")
    families = [d for d in sorted(EXAMPLES.iterdir()) if d.is_dir() and d.name != "__pycache__"]
    names = {d.name for d in families}
    assert {"cluster", "multitask", "bandits", "studies", "gaussian_process"} <= names
    assert {"moo", "federated", "merging", "deep"} <= names
    for family in families:
        assert (family / "GALLERY_HEADER.rst").exists(), family
        scripts = sorted(family.glob("plot_*.py"))
        assert len(scripts) >= (1 if family.name == "deep" else 2), family
        for script in scripts:
            tree = ast.parse(script.read_text())
            assert ast.get_docstring(tree), f"{script}: the gallery needs a title docstring"
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module:
                    modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                elif isinstance(node, ast.Import):
                    modules = [a.name for a in node.names]
                else:
                    continue
                for module in modules:
                    if module.startswith("mvlearn_ext"):
                        parts = module.split(".")
                        assert not any(p.startswith("_") for p in parts), (
                            f"{script.name} imports a private name: {module}"
                        )
            assert "plt.show()" in script.read_text() or "savefig" in script.read_text(), script


def test_readme_opens_with_the_two_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    commands = [ln for ln in lines[:20] if ln.startswith("python -m pip install")]
    assert len(commands) == 2
    assert commands[0].endswith("python -m mvlearn_ext demo")
    assert "torch==2.13.0" in commands[1] and commands[1].endswith("python -m pytest")


def _python_blocks(path):
    text = path.read_text(encoding="utf-8")
    return [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]


@pytest.mark.slow
@pytest.mark.parametrize("page", ["README.md", "docs/getting_started.md"])
def test_python_examples_run_and_print(page, capsys):
    """The Python blocks of the README and of the tutorial run, in order, in one
    namespace, and each prints its result."""
    path = ROOT / page
    if not path.exists():
        pytest.skip(f"{page} not present (installed package)")
    blocks = _python_blocks(path)
    assert len(blocks) >= 4
    namespace = {"__name__": "__main__"}
    for block in blocks:
        exec(compile(block, page, "exec"), namespace)  # noqa: S102
        if "print(" in block:
            assert capsys.readouterr().out.strip(), f"{page}: a block printed nothing:\n{block}"


def _words(text):
    return len(re.findall(r"[\w`'.,;:()/=-]+", text))


def test_readme_paragraphs_and_table_cells_are_short():
    """No paragraph or table cell of the README over 80 words; every family's
    estimator is named in the task table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    long = []
    for block in re.split(r"\n\s*\n", prose):
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if lines and all(ln.lstrip().startswith("|") for ln in lines):
            cells = [c for ln in lines for c in ln.strip().strip("|").split("|")]
            long += [c.strip() for c in cells if _words(c) > 80]
        elif _words(block) > 80:
            long.append(block)
    assert not long, "README paragraphs or cells over 80 words:\n" + "\n---\n".join(long)
    families = ["cluster", "multitask", "studies", "bandits", "gaussian_process", "moo"]
    families += ["federated", "merging", "longtail", "adapters", "rl", "incomplete"]
    families += ["diffusion", "brain", "extrapolate"]
    for family in families:
        module = importlib.import_module(f"mvlearn_ext.{family}")
        named = [name for name in module.__all__ if f"`{name}`" in text]
        assert named, f"the README names no estimator or function of mvlearn_ext.{family}"


def _read_inventory(path):
    """{name: (role, uri)} of a Sphinx inventory (format version 2), read without Sphinx."""
    import zlib

    raw = path.read_bytes()
    header = raw.split(b"\n", 4)
    assert header[0] == b"# Sphinx inventory version 2", path
    entries = {}
    for line in zlib.decompress(header[4]).decode().splitlines():
        name, role, _prio, uri, _disp = line.split(" ", 4)
        entries[name] = (role, uri[:-1] + name if uri.endswith("$") else uri)
    return entries


def test_intersphinx_inventories_cover_the_names_the_docstrings_cite():
    """NumPy and PyTorch resolve offline: every numpy./torch. name that a docstring
    cites (a role or a parameter type) is in the committed inventory, at the address
    the published sites' layout gives it."""
    import re

    inv_dir = ROOT / "docs" / "_intersphinx"
    if not inv_dir.exists():
        pytest.skip("docs/ not present (installed package)")
    conf = (ROOT / "docs" / "conf.py").read_text()
    inventories = {}
    for key in ("numpy", "torch"):
        match = re.search(rf'"{key}": \("(https://[^"]+)", str\(_INV / "([^"]+)"\)\)', conf)
        assert match, f"docs/conf.py maps no local inventory for {key}"
        inventories[key] = _read_inventory(inv_dir / match.group(2))
    numpy_inv, torch_inv = inventories["numpy"], inventories["torch"]
    assert numpy_inv["numpy.ndarray"][1] == (
        "reference/generated/numpy.ndarray.html#numpy.ndarray"
    )
    assert numpy_inv["numpy.random.Generator"][1] == (
        "reference/random/generator.html#numpy.random.Generator"
    )
    assert numpy_inv["numpy.float64"][1] == "reference/arrays.scalars.html#numpy.float64"
    assert numpy_inv["numpy.nan"] == ("py:data", "reference/constants.html#numpy.nan")
    assert torch_inv["torch.Tensor"] == ("py:class", "tensors.html#torch.Tensor")
    assert torch_inv["torch.nn.Module"] == (
        "py:class",
        "generated/torch.nn.Module.html#torch.nn.Module",
    )
    assert torch_inv["torch.device"][1] == "tensor_attributes.html#torch.device"
    # Every numpy./torch. name in a role or in a numpydoc "name : type" line.
    role = re.compile(r":(?:class|func|meth|attr|obj|data|mod):`~?((?:numpy|torch)\.[\w.]+)`")
    typed = re.compile(r"^\s+\w[\w, ]* : (.*)$", re.MULTILINE)
    dotted = re.compile(r"(?<![\w.])((?:numpy|torch)\.[A-Za-z_][\w.]*\w)")
    cited = set()
    for path in (ROOT / "mvlearn_ext").rglob("*.py"):
        text = path.read_text()
        cited.update(role.findall(text))
        for types in typed.findall(text):
            cited.update(dotted.findall(types))
    assert {"numpy.random.Generator", "torch.nn.Module"} <= cited
    missing = sorted(name for name in cited if name not in inventories[name.split(".", 1)[0]])
    assert not missing, f"cited but not in the docs/_intersphinx inventories: {missing}"


# ---------------------------------------------------------------------------
# The built site (docs/_build/html, from `make -C docs html`): skipped where
# there is no build.

HTML = ROOT / "docs" / "_build" / "html"


def _built_html():
    if not (HTML / "index.html").exists():
        pytest.skip("no built site in docs/_build/html (make -C docs html)")
    return HTML


def _estimator_pages():
    """(module, name, class) of every class of the API reference that has ``fit``."""
    out = []
    for module, name, _page in _autosummary_entries():
        if not _importable(module):
            continue
        obj = getattr(importlib.import_module(module), name, None)
        if inspect.isclass(obj) and callable(getattr(obj, "fit", None)):
            out.append((module, name, obj))
    return out


def _excluded_bases():
    """The base classes whose members the class template leaves out (torch's
    ``Module``, transformers' ``Trainer``, ...): its ``:inherited-members:``."""
    template = (ROOT / "docs" / "_templates" / "class.rst").read_text()
    match = re.search(r":inherited-members: *(.*)", template)
    assert match, "docs/_templates/class.rst lists no inherited members"
    return {name.strip() for name in match.group(1).split(",") if name.strip()}


def _public_methods(cls):
    """Public methods a reader calls: every method not starting with "_", less
    scikit-learn's metadata-routing methods (documented by scikit-learn) and
    those of the bases the class template leaves out."""
    excluded = _excluded_bases()
    names = []
    for name in dir(cls):
        if name.startswith("_") or name == "get_metadata_routing":
            continue
        if name.startswith("set_") and name.endswith("_request"):
            continue
        owner = next(c for c in cls.__mro__ if name in c.__dict__)
        if owner.__name__ in excluded:
            continue
        attr = inspect.getattr_static(cls, name, None)
        if isinstance(attr, (staticmethod, classmethod)) or inspect.isfunction(attr):
            names.append(name)
    return names


def test_every_estimator_page_lists_fit_and_its_public_methods():
    """Inherited methods (``fit_predict`` of a mixin, ``get_params``) are on the page too."""
    html = _built_html()
    pages = _estimator_pages()
    assert len(pages) > 30
    missing = []
    for module, name, cls in pages:
        page = html / "api" / "generated" / f"{module}.{name}.html"
        if not page.exists():
            missing.append(f"{page.name}: no page")
            continue
        text = page.read_text(encoding="utf-8")
        for method in _public_methods(cls):
            if f'id="{module}.{name}.{method}"' not in text:
                missing.append(f"{module}.{name}.{method}")
    assert "fit" in _public_methods(pages[0][2])
    assert not missing, "methods missing from the API pages: " + ", ".join(missing[:40])


# Words of a development record, not of a user's page: issue numbers,
# development rounds (not a federated protocol's "round 1"), sessions,
# helpers (the people, not helper functions), pre-registration, commit
# hashes and sections of unpublished specifications.
_PROCESS_PATTERNS = [
    r"\bissues?[- ]#?[0-9]+\b",
    r"\b(?:development|decision|dev)[- ]rounds?\b",
    r"\b(?:until|since|before|after|from|of|in) round [0-9]+(?:'s)?(?![:\w])"
    r"(?<!in round 0)(?<!in round 1)(?<!in round 2)",
    r"\bround [0-9]+'s\b",
    r"\(round [0-9]+\b",
    r"\brounds? [0-9]+ ?(?:and|/|-|–|to) ?[0-9]+\b",
    r"\bsessions?\b",
    r"\bhelpers'|\bhelper's\b|\banother helper\b",
    r"\bpre-?regist",
    r"\b(?:committed|fixed|decided) before (?:the|a|each|any) run\b",
    r"\bcommit(?:ted)? (?:at |as )?[0-9a-f]{7,40}\b",
    r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-df](?:[0-9a-f]*[a-df]))[0-9a-f]{7,40}(?:\+dirty)?\b",
    r"\bspec(?:ification)?(?:'s)?,? *\(?§",
    r"§ *[0-9]",
]
_PROCESS_RE = re.compile("|".join(f"(?:{p})" for p in _PROCESS_PATTERNS), re.IGNORECASE)


def process_words(text):
    """Each match of a process word in ``text``, with a little context."""
    return [
        text[max(0, m.start() - 40) : m.end() + 40].replace("\n", " ")
        for m in _PROCESS_RE.finditer(text)
    ]


@pytest.mark.parametrize(
    "text",
    [
        "as decided in issue 16",
        "the default since round 6",
        "a sixth development round",
        "(round 4, 10 seeds)",
        "rounds 5/6 margins",
        "the next session",
        "another helper's tests",
        "a pre-registered rule",
        "a rule committed before the run",
        "at c91cb0b+dirty",
        "commit 4f2f1c0",
        "spec §9.4",
        "the spec's §2.4",
    ],
)
def test_process_words_are_caught(text):
    assert process_words(text), text


@pytest.mark.parametrize(
    "text",
    [
        "in round 2 each agent reports its training error",
        "round 1: mean features must have 3 entries",
        "the Numba helper calls",
        "a private helper function",
        "1e10000 samples",
        "#1f77b4",
        "the first round of communication",
        "a decade of 2026 results: 0.853",
    ],
)
def test_process_words_spare_ordinary_text(text):
    assert not process_words(text), process_words(text)


def _visible_text(page):
    """The text a reader sees on a built page (no script, style or tags)."""
    from html.parser import HTMLParser

    class Text(HTMLParser):
        def __init__(self):
            super().__init__()
            self.skip, self.parts = 0, []

        def handle_starttag(self, tag, attrs):
            self.skip += tag in ("script", "style")

        def handle_endtag(self, tag):
            self.skip -= tag in ("script", "style") and self.skip > 0

        def handle_data(self, data):
            if not self.skip:
                self.parts.append(data)

    parser = Text()
    parser.feed(page.read_text(encoding="utf-8", errors="replace"))
    return " ".join(parser.parts)


def test_built_site_has_no_process_words():
    html = _built_html()
    found = []
    for page in sorted(html.rglob("*.html")):
        if page.relative_to(html).parts[0] in ("_static", "_sources", "_modules"):
            continue
        found += [
            f"{page.relative_to(html)}: ...{hit}..." for hit in process_words(_visible_text(page))
        ]
    assert not found, f"{len(found)} process words on the site:\n" + "\n".join(found[:60])


def test_readme_has_no_process_words():
    found = process_words((ROOT / "README.md").read_text(encoding="utf-8"))
    assert not found, found


def test_demo_text_has_no_process_words():
    """Titles, column explanations and notes the demo prints, read without running it."""
    from mvlearn_ext._demo.registry import DEMO_SECTIONS

    texts = []
    for section in DEMO_SECTIONS:
        texts.append(section.title)
        texts += [f"{column}: {text}" for column, text in section.explanations()]
    demo_sources = (ROOT / "mvlearn_ext" / "_demo").glob("*.py")
    strings = []
    for path in demo_sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.append(node.value)
    found = [hit for text in texts + strings for hit in process_words(text)]
    assert not found, found


@pytest.mark.slow
def test_demo_output_has_no_process_words():
    """Every section's printed output (``demo --all --quick``, a few minutes)."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "mvlearn_ext", "demo", "--all", "--quick"],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    found = process_words(out.stdout + out.stderr)
    assert not found, found
