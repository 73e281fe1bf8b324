"""The executed copies nbval checks (tests/nbval/*.ipynb) match the report notebooks (notebooks/).

If a notebook in notebooks/ changed and its copy was not regenerated, nbval would keep checking
the old code; this test fails instead and says how to fix it (run tests/nbval/update.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "nbval"))
from nbval_params import COPIES, PARAMETERS, SOURCES, parameters_for  # noqa: E402

from automd_analysis.app.run_notebooks import INJECTED_TAG, PARAMETERS_TAG  # noqa: E402

FIX = "regenerate the executed copies: python tests/nbval/update.py (then review and commit them)"
SOURCE_NAMES = sorted(p.name for p in SOURCES.glob("*.ipynb") if not p.name.startswith((".", "_")))


def _cells(path: Path) -> list[tuple[str, str]]:
    """(cell type, source) of every cell except papermill's injected-parameters cell."""
    nb = nbformat.read(path, as_version=4)
    return [
        (cell.cell_type, cell.source)
        for cell in nb.cells
        if INJECTED_TAG not in cell.get("metadata", {}).get("tags", [])
    ]


def _injected(path: Path) -> dict:
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if INJECTED_TAG in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"{path.name}: expected one injected-parameters cell. Fix: {FIX}"
    namespace: dict = {}
    exec(cells[0].source, {}, namespace)  # our own committed file: plain assignments
    return namespace


def test_every_notebook_has_a_copy_and_no_copy_is_stale():
    copies = sorted(p.name for p in COPIES.glob("*.ipynb"))
    assert SOURCE_NAMES, "no report notebooks found"
    assert copies == SOURCE_NAMES, f"copies {copies} != notebooks {SOURCE_NAMES}. Fix: {FIX}"


@pytest.mark.parametrize("name", SOURCE_NAMES)
def test_copy_has_the_source_cells(name):
    source, copy = _cells(SOURCES / name), _cells(COPIES / name)
    assert len(copy) == len(source), f"{name}: cell count differs. Fix: {FIX}"
    for index, (want, got) in enumerate(zip(source, copy, strict=True)):
        assert got == want, f"{name}: cell {index} differs from notebooks/{name}. Fix: {FIX}"


@pytest.mark.parametrize("name", SOURCE_NAMES)
def test_copy_is_parameterised_for_the_fixture(name):
    injected = _injected(COPIES / name)
    assert injected == parameters_for(SOURCES / name), f"{name}: wrong parameters. Fix: {FIX}"
    # every injected value comes from the fixture parameters and the shared ones are all there
    assert injected.items() <= PARAMETERS.items()
    assert {"archive", "scores_dir", "output_dir", "seed"} <= set(injected), name


def test_notebook_07_pins_the_deterministic_embedding_backend():
    """CI has no MiniLM; a development machine may: the stored outputs must not depend on it."""
    [name] = [n for n in SOURCE_NAMES if n.startswith("07_")]
    injected = _injected(COPIES / name)
    assert injected["embedding_backend"] == "hashing"
    assert str(injected["embedding_cache"]).startswith("build/")


@pytest.mark.parametrize("name", SOURCE_NAMES)
def test_copy_was_executed_without_errors(name):
    nb = nbformat.read(COPIES / name, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), f"{name}: not executed. Fix: {FIX}"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{name}: the stored copy holds an error output. Fix: {FIX}"


@pytest.mark.parametrize("name", SOURCE_NAMES)
def test_source_notebook_is_stored_without_outputs(name):
    nb = nbformat.read(SOURCES / name, as_version=4)
    tagged = [c for c in nb.cells if PARAMETERS_TAG in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1 and nb.cells.index(tagged[0]) == 1, "parameters must be cell 1"
    assert nb.metadata["kernelspec"]["name"] == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"notebooks/{name} is stored with outputs; clear them (Edit > Clear Outputs of "
                "All Cells) before committing"
            )
