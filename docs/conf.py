"""Sphinx configuration of the mvlearn_ext documentation site.

Build with ``make -C docs html`` (gallery examples run) or
``make -C docs html-noplot`` (examples shown, not run); warnings are errors.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import warnings
from pathlib import Path

from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer
from sphinx_gallery.sorting import ExplicitOrder

import mvlearn_ext

DOCS = Path(__file__).resolve().parent

project = "mvlearn_ext"
author = "The mvlearn_ext developers"
copyright = "The mvlearn_ext developers, BSD 3-Clause"  # noqa: A001
release = mvlearn_ext.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    # MathJax shipped with the site: formulas render without a network connection.
    "sphinx-mathjax-offline",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "_intersphinx",
    "Thumbs.db",
    ".DS_Store",
    "auto_examples/*.ipynb",
    "auto_examples/*/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*/*.py",
]

# -- API reference: autosummary writes one page per public object ------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc "Parameters" sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# Parameter types become cross-references; names that resolve nowhere (such as
# ``n_features_in_`` in a shape) render as code instead of breaking reST.
numpydoc_xref_param_type = True
numpydoc_xref_aliases = {
    "ndarray": "numpy.ndarray",
    "array-like": ":term:`sklearn:array-like`",
    "array_like": ":term:`sklearn:array-like`",
    "BaseEstimator": "sklearn.base.BaseEstimator",
    "csr_matrix": "scipy.sparse.csr_matrix",
    "csr_array": "scipy.sparse.csr_array",
    "sparse matrix": "scipy.sparse.spmatrix",
    "Generator": "numpy.random.Generator",
    "RandomState": "numpy.random.RandomState",
    "DataFrame": "pandas.DataFrame",
    "Tensor": "torch.Tensor",
    "Module": "torch.nn.Module",
    "nn.Module": "torch.nn.Module",
    "nn.Linear": "torch.nn.Linear",
    "int64": "numpy.int64",
    "scalar": "numbers.Number",
}
numpydoc_xref_ignore = {
    "of", "or", "and", "shape", "optional", "default", "the", "a", "an", "with",
    "same", "as", "in", "to", "for", "each", "one", "per", "object",
    "length", "positive", "non-negative",
}  # fmt: skip
numpydoc_validation_checks: set[str] = set()
numpydoc_attributes_as_param_list = True

# -- Markdown pages (user guides, benchmarks, design) via MyST ---------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# -- Cross-links to the packages this one sits beside ------------------------
# The build machine reaches no documentation host, so the inventories are
# read from docs/_intersphinx/ (Python, SciPy and scikit-learn: taken from
# Debian 12's python3.11-doc, python-scipy-doc 1.10.1 and python-sklearn-doc
# 1.2.1 packages; NumPy and PyTorch, which no package ships an inventory of:
# written by docs/_intersphinx/make_inventories.py from the installed
# packages, with the addresses of their sites' page layout); the links point
# at the live sites. Names added since those versions do not resolve.
_INV = DOCS / "_intersphinx"
intersphinx_mapping = {
    "python": ("https://docs.python.org/3/", str(_INV / "python-3.11.inv")),
    "numpy": ("https://numpy.org/doc/stable/", str(_INV / "numpy-2.4.inv")),
    "scipy": ("https://docs.scipy.org/doc/scipy/", str(_INV / "scipy-1.10.inv")),
    "sklearn": ("https://scikit-learn.org/stable/", str(_INV / "sklearn-1.2.inv")),
    "torch": ("https://docs.pytorch.org/docs/stable/", str(_INV / "torch-2.13.inv")),
}
intersphinx_timeout = 10

# -- Gallery -----------------------------------------------------------------
_FAMILIES = [
    "cluster",
    "multitask",
    "bandits",
    "studies",
    "gaussian_process",
    "moo",
    "federated",
    "merging",
    "longtail",
    "adapters",
    "rl",
    "incomplete",
    "diffusion",
    "brain",
    "extrapolate",
    "deep",
]
# The examples of the torch bridge (those importing torch or mvlearn_ext.deep)
# run only where torch is installed; elsewhere they are shown without being
# run (sphinx-gallery runs the files that match "filename_pattern"), and the
# build says so, and the API pages of the torch bridge are written from a
# mocked torch. MVLEARN_EXT_DOCS_REQUIRE_TORCH=1 (.ci/docs) makes a missing
# torch an error instead.
_NEEDS_TORCH = re.compile(r"^\s*(from|import)\s+(torch|mvlearn_ext\.deep)\b", re.MULTILINE)
_TORCH_EXAMPLES = sorted(
    p.relative_to(DOCS.parent / "examples").as_posix()
    for p in (DOCS.parent / "examples").glob("*/plot_*.py")
    if _NEEDS_TORCH.search(p.read_text(encoding="utf-8"))
)
_HAVE_TORCH = importlib.util.find_spec("torch") is not None
if not _HAVE_TORCH and os.environ.get("MVLEARN_EXT_DOCS_REQUIRE_TORCH") == "1":
    raise RuntimeError(
        "MVLEARN_EXT_DOCS_REQUIRE_TORCH=1 but torch is not installed: the gallery examples "
        f"{', '.join(_TORCH_EXAMPLES)} need it (pip install torch==2.13.0)"
    )
# The API pages of mvlearn_ext.deep are written from mocked packages where
# torch (the pinned CPU build) or the ``llm`` extra's TRL, PEFT and
# transformers are not installed: the ``docs`` extra brings neither, and the
# site is built in an environment with only torch and that extra (.ci/run).
_MOCKABLE = ("torch", "transformers", "trl", "peft", "tokenizers")
autodoc_mock_imports = [name for name in _MOCKABLE if importlib.util.find_spec(name) is None]
_RUN_PATTERN = r"/plot_"
if not _HAVE_TORCH and _TORCH_EXAMPLES:
    _skip = "|".join(re.escape(name) for name in _TORCH_EXAMPLES)
    _RUN_PATTERN = rf"^(?!.*/(?:{_skip})$).*/plot_"
sphinx_gallery_conf = {
    "examples_dirs": ["../examples"],
    "gallery_dirs": ["auto_examples"],
    "subsection_order": ExplicitOrder([f"../examples/{f}" for f in _FAMILIES]),
    "within_subsection_order": "FileNameSortKey",
    "filename_pattern": _RUN_PATTERN,
    "ignore_pattern": r"__init__\.py",
    "doc_module": ("mvlearn_ext",),
    "reference_url": {"mvlearn_ext": None},
    "backreferences_dir": "api/generated/backreferences",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "min_reported_time": 1,
    # No sg_execution_times pages: index.md's glob would list them as pages.
    "write_computation_times": False,
}

# Matplotlib runs headless; examples must not try to open a window.
os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings(
    "ignore", message="Matplotlib is currently using agg", category=UserWarning
)

# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"mvlearn_ext {release}"
html_static_path: list[str] = []
# The repository's address, linked from the header; set it where the
# repository is published under another address.
REPOSITORY_URL = os.environ.get(
    "MVLEARN_EXT_REPOSITORY_URL", "https://github.com/mvlearn-ext/mvlearn_ext"
)
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
    "navbar_align": "left",
    # A search button rather than a field, so that the top bar stays one line.
    "navbar_persistent": ["search-button"],
    # Install, Getting started, User guide, API reference, Gallery,
    # Benchmarks, Release notes; the rest under "More".
    "header_links_before_dropdown": 7,
    "icon_links": [
        {
            "name": "Source repository",
            "url": REPOSITORY_URL,
            "icon": "fa-brands fa-github",
            "type": "fontawesome",
        }
    ],
    "footer_start": ["copyright"],
    "footer_center": ["footer-links"],
    "footer_end": ["sphinx-version"],
}
# The landing page has no sidebar; a section's pages list its own pages.
html_sidebars = {"index": []}
html_context = {"repository_url": REPOSITORY_URL}
html_show_sourcelink = False
html_copy_source = False


# -- Docstring touch-up -------------------------------------------------------
# In a numpydoc type such as ``ndarray of shape (n_features_in_,)`` a fitted
# attribute's name ends with "_", which reST reads as a hyperlink reference.
# After numpydoc has rendered the docstring, escape those trailing
# underscores on the parameter lines (the lines ``**name** : type``) only.
_TRAILING_UNDERSCORE = re.compile(r"(?<![\w`*\\])([A-Za-z]\w*)_(?=[\s,)\]])")


def _escape_attribute_names(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if "** : " in line:
            head, sep, typ = line.partition("** : ")
            parts = re.split(r"(`[^`]*`)", typ)
            parts = [
                p if p.startswith("`") else _TRAILING_UNDERSCORE.sub(r"\1\\_", p) for p in parts
            ]
            lines[i] = head + sep + "".join(parts)


def _constant_docstrings(app, what, name, obj, options, lines):
    # A re-exported module constant (a tuple, say) would show the docstring of
    # its type: use its ``#:`` comment in the submodule that defines it instead.
    if what != "data" or type(obj).__module__ != "builtins":
        return
    type_doc = (type(obj).__doc__ or "").strip()
    if not type_doc or type_doc.splitlines()[0].strip() not in " ".join(lines):
        return  # numpydoc has reformatted the lines already: compare a sentence
    package, attr = name.rsplit(".", 1)
    lines[:] = []
    for modname, module in sorted(sys.modules.items()):
        if not modname.startswith(package + ".") or getattr(module, attr, None) is not obj:
            continue
        try:
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except PycodeError:
            continue
        if ("", attr) in docs:
            lines[:] = list(docs[("", attr)])
            return


_SKLEARN_REF = re.compile(r":ref:`(?:([^`<]*?)\s*<[^`>]+>|([^`]+))`")


def _unlink_sklearn_refs(app, what, name, obj, options, lines):
    # A method inherited from scikit-learn (set_output, score, ...) cites labels
    # of scikit-learn's own user guide, which its 1.2 inventory may lack: keep
    # the text, drop the link.
    if not getattr(obj, "__module__", "").startswith("sklearn"):
        return
    for i, line in enumerate(lines):
        lines[i] = _SKLEARN_REF.sub(lambda m: m.group(1) or "the scikit-learn user guide", line)


def _skip_metadata_request_methods(app, what, name, obj, skip, options):
    # scikit-learn generates set_fit_request & co. on every estimator, and
    # get_metadata_routing; their docstrings belong to scikit-learn's metadata
    # routing (and cite a label its 1.2 inventory lacks).
    if name.startswith("set_") and name.endswith("_request"):
        return True
    if name == "get_metadata_routing":
        return True
    return None


def _say_which_examples_are_not_run(app):
    run = str(app.config.plot_gallery).strip().lower() not in ("0", "false", "no", "off")
    if _HAVE_TORCH or not _TORCH_EXAMPLES or not run:
        return
    from sphinx.util import logging

    logging.getLogger(__name__).info(
        "torch is not installed: %d gallery examples of the torch bridge are shown without "
        "being run, and without their figures (%s); install torch==2.13.0 to run them",
        len(_TORCH_EXAMPLES),
        ", ".join(_TORCH_EXAMPLES),
    )


def setup(app):
    app.connect("builder-inited", _say_which_examples_are_not_run, priority=100)
    app.connect("autodoc-process-docstring", _escape_attribute_names, priority=900)
    app.connect("autodoc-skip-member", _skip_metadata_request_methods)
    app.connect("autodoc-process-docstring", _unlink_sklearn_refs, priority=100)
    app.connect("autodoc-process-docstring", _constant_docstrings, priority=950)
