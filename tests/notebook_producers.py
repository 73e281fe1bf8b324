"""Which functions produce what a report notebook publishes, read from its code (never run).

For every ``report.table(X, "name")`` and ``report.figure(X, "name")`` of a notebook's code cells
(or ``self.table``/``self.figure`` in a module of the report layer), :func:`producers` follows
``X`` back to the calls whose result it is: a name to the assignment, loop or comprehension that
bound it; ``a.b`` and ``a[i]`` to ``a``; ``f(...)`` to ``f`` resolved through the cell's imports
(with a function passed as an argument, ``report.unless_no_baseline("...", f, ...)``, and a call
wrapped around another, ``add_footnote(figure2a(...))``); a method called on a local value
(``curves.items()``) to that value; ``report.<method>(...)`` to the functions that method calls.

Imported as ``import notebook_producers`` (pytest puts ``tests/`` on ``sys.path``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
from collections import defaultdict
from pathlib import Path


def code_cells(path: Path) -> str:
    """The code cells of notebook ``path`` as one module, IPython magics removed."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return re.sub(r"^\s*[%!].*$", "", source, flags=re.M)


class _Source:
    """One module's imports and bindings (name -> the expressions bound to it)."""

    def __init__(self, tree: ast.AST, owner: str, report_class: type | None):
        self.owner, self.report_class = owner, report_class
        self.imports: dict[str, str] = {}
        self.bindings: dict[str, list[ast.expr]] = defaultdict(list)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind(target, node.value)
            elif isinstance(node, ast.For | ast.comprehension):
                self._bind(node.target, node.iter)

    def _bind(self, target: ast.expr, value: ast.expr) -> None:
        for name in ast.walk(target):
            if isinstance(name, ast.Name):
                self.bindings[name.id].append(value)

    def dotted(self, node: ast.expr) -> str | None:
        """``node`` as an imported dotted name (``primary.agent_summary`` ->
        ``automd_analysis.analysis.primary.agent_summary``), or ``None``."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.imports:
            return None
        return ".".join([self.imports[node.id], *reversed(parts)])

    def produced(self, node: ast.expr, seen: frozenset[str] = frozenset()) -> set[str]:
        """The dotted names of the functions whose result ``node`` is."""
        if isinstance(node, ast.Name):
            if node.id in seen:
                return set()
            values = self.bindings.get(node.id, [])
            return set().union(*(self.produced(v, seen | {node.id}) for v in values))
        if isinstance(node, ast.Attribute | ast.Subscript):
            name = self.dotted(node)
            return {name} if name else self.produced(node.value, seen)
        if isinstance(node, ast.IfExp):
            return self.produced(node.body, seen) | self.produced(node.orelse, seen)
        if not isinstance(node, ast.Call):
            return set()
        name = self.dotted(node.func)
        if name is not None:
            wrapped = [a for a in node.args[:1] if isinstance(a, ast.Call)]
            return {name}.union(*(self.produced(a, seen) for a in wrapped))
        func = node.func
        if not isinstance(func, ast.Attribute):
            return set()
        if isinstance(func.value, ast.Name) and func.value.id == self.owner and self.report_class:
            passed = {self.dotted(a) for a in node.args} - {None}
            return passed | method_calls(self.report_class, func.attr)
        return self.produced(func.value, seen)

    def publications(self, tree: ast.AST) -> dict[tuple[str, str], set[str]]:
        """``(kind, name)`` -> producing functions, for every ``<owner>.table/figure`` call."""
        out: dict[tuple[str, str], set[str]] = defaultdict(set)
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == self.owner
                and node.func.attr in ("table", "figure")
                and len(node.args) >= 2
            ):
                continue
            label = node.args[1]
            if isinstance(label, ast.JoinedStr):  # f"calibration_curve_{task}"
                prefix = "".join(v.value for v in label.values if isinstance(v, ast.Constant))
                name = f"{prefix}<task>"
            else:
                name = label.value
            out[(node.func.attr, name)] |= self.produced(node.args[0])
        return out


def method_calls(cls: type, method: str) -> set[str]:
    """The imported functions that method ``cls.method`` calls (its own module's imports)."""
    for owner in cls.__mro__:
        if method not in vars(owner):
            continue
        tree = ast.parse(inspect.getsource(inspect.getmodule(owner)))
        source = _Source(tree, "self", None)
        body = next(
            node
            for klass in ast.walk(tree)
            if isinstance(klass, ast.ClassDef) and klass.name == owner.__name__
            for node in klass.body
            if isinstance(node, ast.FunctionDef) and node.name == method
        )
        return {
            name
            for node in ast.walk(body)
            if isinstance(node, ast.Call) and (name := source.dotted(node.func)) is not None
        }
    raise AttributeError(f"{cls.__name__} has no method {method}")


def notebook_publications(path: Path, report_class: type) -> dict[tuple[str, str], set[str]]:
    """What notebook ``path`` publishes -> the functions that produce it."""
    tree = ast.parse(code_cells(path))
    return _Source(tree, "report", report_class).publications(tree)


def module_publications(module_name: str) -> dict[tuple[str, str], set[str]]:
    """What the methods of module ``module_name`` publish themselves (``self.table(...)``)."""
    tree = ast.parse(inspect.getsource(importlib.import_module(module_name)))
    return _Source(tree, "self", None).publications(tree)
