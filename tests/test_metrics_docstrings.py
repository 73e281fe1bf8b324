"""Every public function of ``automd_analysis.metrics`` documents itself the numpydoc way.

A newcomer learns a metric from its docstring: what goes in and out, worked examples (run as
doctests by ``make test``), where to look next and which paper defines it. This test keeps the
sections present; the doctests themselves run through ``--doctest-modules`` (Makefile).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

METRICS = Path(__file__).resolve().parent.parent / "automd_analysis" / "metrics"
SECTIONS = ("Parameters", "Returns", "See Also", "References", "Examples")


def _public_functions() -> list[tuple[str, ast.FunctionDef]]:
    out = []
    for path in sorted(METRICS.glob("*.py")):
        if path.name.startswith("_"):
            continue  # private modules (_validation, _loess, ...) hold no public API
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out.extend(
            (f"{path.stem}.{node.name}", node)
            for node in tree.body
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
        )
    return out


FUNCTIONS = _public_functions()


def test_the_metric_modules_have_public_functions():
    assert len(FUNCTIONS) >= 40  # guards the collection itself


@pytest.mark.parametrize("name,node", FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_public_metric_function_has_the_numpydoc_sections(name, node):
    doc = ast.get_docstring(node) or ""
    missing = [s for s in SECTIONS if not re.search(rf"^{s}\n-{{{len(s)}}}$", doc, re.M)]
    assert not missing, f"{name}: docstring lacks {', '.join(missing)}"
    examples = doc.split("Examples\n--------", 1)[1]
    assert ">>> " in examples, f"{name}: the Examples section has no doctest"
    references = doc.split("References\n----------", 1)[1].split("\n\n", 1)[0]
    assert re.search(r"\(\d{4}\)", references), f"{name}: References cite no dated source"
