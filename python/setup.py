"""Builds libdlroute into the wheel: `pip install ./python` from a dlroute
checkout runs `go build -buildmode=c-shared ./libdlroute` (Go and a C
compiler are needed at install, not after) and installs the library
inside the package, where dlroute/_build.py finds it, and a copy of the
rules (with each version's tests.yaml) as dlroute/_rules, which
`python -m dlroute check` runs against the installed libraries."""

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = Path(__file__).resolve().parent.parent


class BuildWithLibrary(build_py):
    def run(self) -> None:
        super().run()
        if not (ROOT / "go.mod").is_file():
            raise SystemExit("dlroute's Python package builds libdlroute from the checkout around it: "
                             "run pip install ./python from a dlroute clone")
        out = Path(self.build_lib).resolve() / "dlroute" / "_lib" / "libdlroute.so"
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["go", "build", "-trimpath", "-buildmode=c-shared", "-o", str(out), "./libdlroute"],
                       cwd=ROOT, env=dict(os.environ, CGO_ENABLED="1"), check=True)
        out.with_suffix(".h").unlink(missing_ok=True)
        rules = Path(self.build_lib).resolve() / "dlroute" / "_rules"
        shutil.rmtree(rules, ignore_errors=True)
        shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("*.go"))


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: it is for one platform."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
