"""Fixtures of the Python tests. They run on real arrays (jax, numpy,
torch) and the real library: `go test ./libdlroute -run TestPython` runs
them with $DLROUTE_LIB set to the library built from the checkout, or run
them by hand with `PYTHONPATH=python python -m pytest python/tests`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from dlroute import check

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "python"))


@pytest.fixture(scope="session")
def dlroute_cli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dlroute command built from the checkout, for bundles and for
    comparing answers: $DLROUTE_CLI where it names one (the e2e tier's
    TestPython builds it once for every stack), else built here."""
    given = os.environ.get("DLROUTE_CLI")
    if given:
        return Path(given)
    if shutil.which("go") is None:
        pytest.fail("go is not installed: the tests build the dlroute command from the checkout")
    out = tmp_path_factory.mktemp("cli") / "dlroute"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/dlroute"], cwd=ROOT, check=True)
    return out


@pytest.fixture(scope="session")
def report() -> check.Report:
    """The conformance runner's one run of the session (`python -m dlroute
    check`, every installed library it knows, every case of the version
    that covers each release, and the exchanges of every pair): made once
    for test_real_libraries.py, which checks that it agrees, and for
    test_check.py's tests that read its rows, each of which ran the
    runner again. The e2e tier's TestPython checks it too (the plugin
    e2e/python/dlroute_e2e.py hands it over)."""
    from dlroute import check

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return check.run([lib for lib in check.LIBRARIES if check.installed(lib)])


def run_python(code: str, *, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs code in a fresh interpreter (this one) with the package on its
    path, under a timeout: a hang is a failure."""
    full = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    if env:
        full.update(env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=timeout)
