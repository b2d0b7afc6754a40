"""The package's modules import in one direction: the graph of every
import between dlroute's modules, those inside functions included, has no
circle, so no function-local import holds one apart (issue 40)."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "python" / "dlroute"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """The dlroute modules path imports, anywhere in it but under
    ``if TYPE_CHECKING:`` (never run)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
               for child in node.body for n in ast.walk(child)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "dlroute")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "dlroute":
                continue
            for a in node.names:  # `from . import check` names a module
                sub = f"{target}.{a.name}"
                out.add(sub if (PACKAGE.parent / sub.replace(".", "/")).with_suffix(".py").exists()
                        or (PACKAGE.parent / sub.replace(".", "/") / "__init__.py").exists() else target)
    out.discard(name)
    return out


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports(p) for p in PACKAGE.rglob("*.py")}


def cycle(g: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(g.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(g):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_no_import_circle() -> None:
    g = graph()
    assert "dlroute.check._base" in g and "dlroute._memo" in g
    # the package's own __init__ is imported by every submodule's import; a
    # submodule importing the top level back is a circle too, so it stays in
    found = cycle(g)
    assert found is None, "an import circle: " + " -> ".join(found or [])


def test_the_check_finds_a_circle() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
