"""Build the private compiled core ``mvlearn_ext._lib._core`` from ``csrc/``.

Everything else about the package lives in ``pyproject.toml``. A failing C++
build fails the install: there is no pure-Python fallback.
"""

import os
import re
from glob import glob

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup

ParallelCompile("MVLEARN_EXT_BUILD_JOBS", default=0).install()

# -ffp-contract=off: no FMA contraction, so results do not depend on the
# instruction set a function-multiversioned kernel picks at load time.
extra_compile_args = ["-O3", "-fno-math-errno", "-ffp-contract=off"]
if os.environ.get("MVLEARN_EXT_NATIVE", "0") == "1":
    # Opt-in: tune for the build machine (not portable to other CPUs).
    extra_compile_args.append("-march=native")

# One source of truth for the version: mvlearn_ext/__init__.py.
with open(os.path.join("mvlearn_ext", "__init__.py")) as f:
    VERSION = re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)

sources = sorted(glob("csrc/src/*.cpp")) + sorted(glob("csrc/bindings/*.cpp"))
if not sources:
    raise SystemExit("setup.py: no C++ sources under csrc/; the compiled core cannot be built")

ext_modules = [
    Pybind11Extension(
        "mvlearn_ext._lib._core",
        sources=sources,
        include_dirs=["csrc/include"],
        cxx_std=17,
        extra_compile_args=extra_compile_args,
        extra_link_args=["-pthread"],
        define_macros=[("MVLEARN_EXT_VERSION_INFO", f'"{VERSION}"')],
    )
]

setup(ext_modules=ext_modules, cmdclass={"build_ext": build_ext})
