"""The shape of the thin package: automd_analysis never imports the demo generator, keeps its
functions short, and its modules use each other's public names only."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "automd_analysis"
MAX_BODY_LINES = 100


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _imported(tree: ast.AST) -> list[tuple[str, int, list[str]]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, node.lineno, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, node.lineno, [a.name for a in node.names]))
    return out


def test_the_package_never_imports_the_demo_generator():
    offenders = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for module, line, _ in _imported(tree):
            if module == "automd_demo" or module.startswith("automd_demo."):
                offenders.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
        for node in ast.walk(tree):  # importlib.import_module("automd_demo...") counts too
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and text.startswith("automd_demo") and " " not in text:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} names {text}")
    assert not offenders, "\n".join(offenders)


def _body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = fn.body
    first = body[0].value if body and isinstance(body[0], ast.Expr) else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        body = body[1:]  # the docstring does not count
    if not body:
        return 0
    return body[-1].end_lineno - body[0].lineno + 1


def test_no_function_body_is_longer_than_100_lines():
    long = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = _body_lines(node)
                if n > MAX_BODY_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {n} lines")
    assert not long, "split these functions:\n" + "\n".join(long)


def test_modules_use_each_others_public_names_only():
    """No module imports a ``_private`` name of another module; private modules (``_atomic``,
    ``_numba``, ...) are used only inside the sub-package that holds them (or, at the top level,
    by the whole package)."""
    private = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for module, line, names in _imported(tree):
            if not module.startswith("automd_analysis"):
                continue
            parts = module.split(".")
            for i, part in enumerate(parts):
                if part.startswith("_") and part != "__init__":
                    home = ".".join(parts[:i])  # the package the private module belongs to
                    if not own.startswith(home + "."):
                        private.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
            for name in names:
                if name.startswith("_") and name != "__version__":
                    private.append(f"{path.relative_to(ROOT)}:{line} imports {module}.{name}")
    assert not private, "make these public or move them:\n" + "\n".join(private)


def test_every_column_the_analyses_read_is_in_the_store_schema():
    from automd_analysis.schema import (
        NOT_NULL,
        REQUIRED_COLUMNS,
        RUN_KEY,
        SCHEMAS,
        SORT_KEYS,
        key_columns,
    )

    assert set(REQUIRED_COLUMNS) == set(SCHEMAS) == set(SORT_KEYS) | {"problems"}
    for table, names in REQUIRED_COLUMNS.items():
        declared = set(SCHEMAS[table].names)
        missing = (set(names) | set(key_columns(table)) | set(SORT_KEYS.get(table, ()))) - declared
        assert not missing, (table, missing)
        assert NOT_NULL.get(table, frozenset()) <= set(names) | set(key_columns(table)), table
        if key_columns(table) == RUN_KEY:
            assert SCHEMAS[table].names[: len(RUN_KEY)] == list(RUN_KEY), table
