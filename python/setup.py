"""Builds libdlroute into the wheel: `pip install ./python` from a dlroute
checkout runs `go build -buildmode=c-shared ./libdlroute` (Go and a C
compiler are needed at install, not after) and installs the library
inside the package, where dlroute/_build.py finds it, and a copy of the
rules (with each version's tests.yaml) as dlroute/_rules, which
`python -m dlroute check` runs against the installed libraries.

What the build needs is checked first, before setuptools starts: a
missing Go or C compiler is one clear message, not a traceback deep in
the build's output. $DLROUTE_LIB, where set, names a built library to put
in the wheel instead of building one.

The wheel is tagged py3-none-<platform>: the package is pure Python over
ctypes, so one wheel serves every CPython 3 of that platform; only the
library inside it is the platform's."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def toolchain_problem(env: "dict[str, str]") -> "str | None":
    """What keeps `go build -buildmode=c-shared` from running here, or
    None: Go older than go.mod's go line, or no C compiler for cgo."""
    want = re.search(r"^go (\d+)\.(\d+)", (ROOT / "go.mod").read_text(), re.M)
    need = f"Go {want[1]}.{want[2]} or newer" if want else "Go"
    go = shutil.which("go", path=env.get("PATH"))
    if go is None:
        return f"{need} is not on PATH"
    try:
        got = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, env=env, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return f"{go} does not run: {e}"
    have = re.match(r"go(\d+)\.(\d+)", got.strip())
    if want and (not have or (int(have[1]), int(have[2])) < (int(want[1]), int(want[2]))):
        return f"{need} is needed; {go} is {got.strip() or 'of an unknown version'}"
    cc = env.get("CC", "").split()
    if cc and shutil.which(cc[0], path=env.get("PATH")) is None:
        return f"$CC names {cc[0]}, which is not on PATH"
    if not cc and not any(shutil.which(c, path=env.get("PATH")) for c in ("cc", "gcc", "clang")):
        return "no C compiler is on PATH (cc, gcc or clang; or name one in $CC): cgo builds the library with it"
    return None


def check_toolchain() -> None:
    if os.environ.get("DLROUTE_LIB"):
        return
    if not (ROOT / "go.mod").is_file():
        raise SystemExit("error: dlroute's Python package builds libdlroute from the checkout around it: "
                         "run pip install ./python from a dlroute clone")
    problem = toolchain_problem(dict(os.environ))
    if problem:
        raise SystemExit(f"error: installing dlroute builds libdlroute, which needs Go 1.26 or newer and a C "
                         f"compiler (gcc or clang): {problem}.\nhint: install both and try again, or set "
                         "DLROUTE_LIB to a built libdlroute.so (go build -trimpath -buildmode=c-shared -o libdlroute.so "
                         "./libdlroute) to put that one in the wheel")


if __name__ == "__main__":
    check_toolchain()

from setuptools import setup  # noqa: E402
from setuptools.command.bdist_wheel import bdist_wheel  # noqa: E402
from setuptools.command.build_py import build_py  # noqa: E402
from setuptools.dist import Distribution  # noqa: E402


class BuildWithLibrary(build_py):
    def run(self) -> None:
        super().run()
        out = Path(self.build_lib).resolve() / "dlroute" / "_lib" / "libdlroute.so"
        out.parent.mkdir(parents=True, exist_ok=True)
        prebuilt = os.environ.get("DLROUTE_LIB")
        if prebuilt:
            shutil.copyfile(prebuilt, out)
        else:
            print("dlroute: building libdlroute with go build (about a minute)", file=sys.stderr, flush=True)
            subprocess.run(["go", "build", "-trimpath", "-buildmode=c-shared", "-o", str(out), "./libdlroute"],
                           cwd=ROOT, env=dict(os.environ, CGO_ENABLED="1"), check=True)
            out.with_suffix(".h").unlink(missing_ok=True)
        rules = Path(self.build_lib).resolve() / "dlroute" / "_rules"
        shutil.rmtree(rules, ignore_errors=True)
        shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("*.go"))


class PlatformWheel(bdist_wheel):
    """py3-none-<platform>: any CPython 3, this platform's library."""

    def get_tag(self) -> "tuple[str, str, str]":
        _, _, platform = super().get_tag()
        return "py3", "none", platform


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: it is for one platform."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel}, distclass=BinaryDistribution)
