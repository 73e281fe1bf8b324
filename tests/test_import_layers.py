"""The package's import structure: no import cycle, no import that climbs the layers, and the
boundaries of the three top layers.

Every module of ``automd_analysis`` is read with :mod:`ast` (imports at any depth, function-level
ones included; nothing is imported). Layers, lowest first - a module may import its own layer and
lower ones only:

    metrics < base (schema, errors, _atomic, precision, codebook, version_pairs, ...)
    < data (tasks, submissions, archive) < inputs (importers, annotate) < scoring < masking
    < stats < analysis < report < app < cli

Beyond the order (docs/architecture.md):

- ``analysis`` reads only the score store: it imports ``analysis``, ``stats`` and the base layer,
  nothing of the archive, the tasks, the submissions, the importers, the scorer or the masking
  test (what it needs of them is published into the store or lives in a base module);
- ``report`` only turns tables and figures into pages: it imports ``report``, ``analysis``,
  ``stats`` and the base layer;
- ``app`` is the one place that wires scoring, masking, embeddings and notebooks: above the masking
  layer only ``app`` imports the scorer or the masking test, and only ``app`` runs notebooks
  (papermill);
- ``cli`` only parses, calls ``app`` and prints: it imports ``cli``, ``app`` and the base layer.
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
    ("app", ("app",)),
    ("cli", ("cli", "__main__")),
)
RANK = {name: rank for rank, (name, _) in enumerate(LAYERS)}


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
    assert layer_of(f"{PKG}.version_pairs") < layer_of(f"{PKG}.annotate.runs")
    assert layer_of(f"{PKG}.report.site") < layer_of(f"{PKG}.app.pipeline") < layer_of(f"{PKG}.cli")


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


def _imports_outside(graph, layer: str, allowed: set[str]) -> list[str]:
    """``a imports b`` for every module ``a`` of ``layer`` importing a module of a layer not in
    ``allowed``."""
    return sorted(
        f"{a} imports {b}"
        for a, deps in graph.items()
        if layer_of(a) == RANK[layer]
        for b in deps
        if LAYERS[layer_of(b)][0] not in allowed
    )


def test_analysis_reads_only_the_store_the_statistics_layer_and_base_modules(graph):
    assert _imports_outside(graph, "analysis", {"analysis", "stats", "base"}) == []


def test_report_only_presents(graph):
    assert _imports_outside(graph, "report", {"report", "analysis", "stats", "base"}) == []


def test_the_command_line_only_calls_the_application_layer(graph):
    assert _imports_outside(graph, "cli", {"cli", "app", "base"}) == []


def test_only_the_application_layer_wires_scoring_masking_and_notebooks(graph):
    wiring = {RANK["scoring"], RANK["masking"]}
    above = [m for m in graph if layer_of(m) > RANK["masking"]]
    assert (
        sorted(
            f"{a} imports {b}"
            for a in above
            for b in graph[a]
            if layer_of(b) in wiring and layer_of(a) != RANK["app"]
        )
        == []
    )
    runs_notebooks = sorted(
        module_name(path)
        for path in PACKAGE.rglob("*.py")
        if any(
            isinstance(node, ast.Import | ast.ImportFrom)
            and any(
                (alias.name if isinstance(node, ast.Import) else node.module or "").split(".")[0]
                == "papermill"
                for alias in node.names
            )
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    )
    assert runs_notebooks and all(layer_of(m) == RANK["app"] for m in runs_notebooks)


def test_the_boundary_rules_catch_a_violation():
    known = {f"{PKG}.analysis.x", f"{PKG}.archive.reader", f"{PKG}.scoring", f"{PKG}.app.y"}
    graph = {
        f"{PKG}.analysis.x": {f"{PKG}.archive.reader"},
        f"{PKG}.cli.c": {f"{PKG}.scoring"},
        f"{PKG}.report.r": {f"{PKG}.app.y"},
    }
    assert known >= set().union(*graph.values())
    assert _imports_outside(graph, "analysis", {"analysis", "stats", "base"}) == [
        f"{PKG}.analysis.x imports {PKG}.archive.reader"
    ]
    assert _imports_outside(graph, "cli", {"cli", "app", "base"}) == [
        f"{PKG}.cli.c imports {PKG}.scoring"
    ]
    assert _imports_outside(graph, "report", {"report", "analysis", "stats", "base"}) == [
        f"{PKG}.report.r imports {PKG}.app.y"
    ]
