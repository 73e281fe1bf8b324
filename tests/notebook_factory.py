"""Throwaway report notebooks for the execute / site / regenerate tests.

Imported by the test modules as ``import notebook_factory`` (pytest puts ``tests/`` on ``sys.path``).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def parameters_cell(source: str) -> nbformat.NotebookNode:
    cell = new_code_cell(source)
    cell.metadata["tags"] = ["parameters"]
    return cell


def code(source: str) -> nbformat.NotebookNode:
    return new_code_cell(source)


def markdown(source: str) -> nbformat.NotebookNode:
    return new_markdown_cell(source)


def write_notebook(path: str | Path, cells: list, *, kernelspec: dict | None = KERNELSPEC) -> Path:
    """Write a notebook with ``cells`` (and the python3 kernelspec unless ``kernelspec=None``)."""
    nb = new_notebook(cells=cells)
    if kernelspec is not None:
        nb.metadata["kernelspec"] = dict(kernelspec)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path
