"""The Python examples of README.md and python/README.md, run as pasted:
each ```python block in a fresh interpreter, in an empty directory, with
nothing on the path but the package. They use only the top level
(``dlroute.<name>`` for a name in ``dlroute.__all__``) and
``dlroute.testing``, the GPU stand-in that ships with the package."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dlroute
from conftest import ROOT

DOCS = ["docs/embedding.md", "python/README.md"]  # the README links the embedding page


def blocks(doc: str) -> list[tuple[int, str]]:
    text = (ROOT / doc).read_text()
    out = []
    for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
        out.append((text.count("\n", 0, m.start()) + 2, m.group(1)))
    return out


CASES = [(doc, line, code) for doc in DOCS for line, code in blocks(doc)]


def test_each_readme_has_python_examples() -> None:
    assert {doc for doc, _, _ in CASES} == set(DOCS)


@pytest.mark.parametrize("doc,line,code", CASES, ids=[f"{d}:{n}" for d, n, _ in CASES])
def test_readme_python_block(doc: str, line: int, code: str, tmp_path: Path) -> None:
    for m in re.finditer(r"\b(?:from|import)\s+dlroute\.(\w+)|\bdlroute\.(\w+)", code):
        name = m.group(1) or m.group(2)
        assert name in dlroute.__all__ or name == "testing", f"{doc}:{line} uses dlroute.{name}, not the top level"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT / "python")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"{doc}:{line}:\n{done.stderr}"
