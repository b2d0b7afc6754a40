"""`mypy --strict` over the package and a user's program
(tests/typed_program.py): the decisions are typed (TypedDicts, Literal
steps and device names) and from_dlpack's result is the consumer's array
type. The configuration is python/pyproject.toml's [tool.mypy]."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_python

pytest.importorskip("mypy", reason="mypy is pinned in python/requirements-py3*.txt")


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for this file's runs, made by the first: the second
    reads numpy's, jax's and the package's types from it, as a user's
    second run of mypy does, instead of analysing them again."""
    return tmp_path_factory.mktemp("mypy-cache")


def test_mypy_strict(mypy_cache: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "--cache-dir",
                           str(mypy_cache), "dlroute", "tests/typed_program.py"],
                          cwd=ROOT / "python", capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found")


def test_mypy_catches_a_wrong_step(tmp_path: Path, mypy_cache: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy as np, dlroute\n"
                   "if dlroute.decide(np.arange(2.0)).step == 'copy':\n    pass\n"
                   "n: int = dlroute.from_dlpack(np.arange(2.0), 'numpy')\n")
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "--cache-dir",
                           str(mypy_cache), str(bad)], cwd=ROOT / "python", capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 1
    assert 'Non-overlapping equality check (left operand type: "Literal[' in done.stdout
    assert 'Incompatible types in assignment (expression has type "ndarray[' in done.stdout


def test_the_typed_program_runs() -> None:
    done = run_python((ROOT / "python" / "tests" / "typed_program.py").read_text())
    assert done.returncode == 0, done.stderr
