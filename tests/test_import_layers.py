"""The package's import structure: no import cycle, and no import that climbs the layers.

Every module of ``automd_analysis`` is read with :mod:`ast` (imports at any depth, function-level
ones included; nothing is imported). Layers, lowest first - a module may import its own layer and
lower ones only:

    metrics < base (schema, errors, _atomic, precision, ...) < data (tasks, submissions, archive)
    < inputs (importers, annotate) < scoring < masking < stats < analysis < report < cli
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "automd_analysis"
PKG = PACKAGE.name

#: Layer of each top-level name (subpackage or module); any other top-level module is ``base``.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("metrics", ("metrics",)),
    ("base", ()),
    ("data", ("tasks", "submissions", "archive")),
    ("inputs", ("importers", "annotate")),
    ("scoring", ("scoring",)),
    ("masking", ("masking",)),
    ("stats", ("stats",)),
    ("analysis", ("analysis",)),
    ("report", ("report",)),
    ("cli", ("cli", "__main__")),
)


def layer_of(module: str) -> int:
    parts = module.split(".")
    head = parts[1] if len(parts) > 1 else "__init__"
    for rank, (_, heads) in enumerate(LAYERS):
        if head in heads:
            return rank
    return 1


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def imported(tree: ast.AST, module: str, is_package: bool, known: set[str]) -> set[str]:
    """Modules of the package that ``tree`` imports (the longest known prefix of each name)."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - node.level + 1]
                prefix = ".".join(anchor + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            names = [prefix] + [f"{prefix}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            for k in range(len(parts), 0, -1):
                candidate = ".".join(parts[:k])
                if candidate in known:
                    if candidate != module:
                        out.add(candidate)
                    break
    return out


def import_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    known = set(files)
    return {
        module: imported(
            ast.parse(path.read_text(encoding="utf-8")), module, path.name == "__init__.py", known
        )
        for module, path in files.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected groups of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(frozenset(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_the_graph_sees_function_level_and_relative_imports():
    tree = ast.parse("def f():\n    from automd_analysis.analysis import store\nfrom . import b\n")
    known = {f"{PKG}.analysis", f"{PKG}.analysis.store", f"{PKG}.scoring", f"{PKG}.scoring.b"}
    assert imported(tree, f"{PKG}.scoring.a", False, known) == {
        f"{PKG}.analysis",  # importing a submodule runs its package's __init__
        f"{PKG}.analysis.store",
        f"{PKG}.scoring",
        f"{PKG}.scoring.b",
    }
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]
    assert layer_of(f"{PKG}.schema") == layer_of(f"{PKG}.precision") == 1
    assert layer_of(f"{PKG}.archive.version_pairs") < layer_of(f"{PKG}.annotate.runs")


def test_no_module_imports_a_higher_layer(graph):
    upward = sorted(
        f"{a} imports {b}" for a, deps in graph.items() for b in deps if layer_of(a) < layer_of(b)
    )
    assert upward == []


def test_no_file_cycle(graph):
    assert cycles(graph) == []


def test_no_subpackage_cycle(graph):
    def part(module: str) -> str:
        return module.split(".")[1] if "." in module else module

    subpackages: dict[str, set[str]] = {}
    for a, deps in graph.items():
        subpackages.setdefault(part(a), set()).update(part(b) for b in deps if part(b) != part(a))
    assert cycles(subpackages) == []
