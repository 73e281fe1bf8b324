"""The report notebooks as committed open clean in JupyterLab: saving them unchanged changes no byte.

JupyterLab (nbformat 4.5, ipykernel) writes complete ``kernelspec``/``language_info`` metadata, a
stable ``id`` for every cell and the JSON layout of :func:`nbformat.writes`; a notebook stored
differently shows a diff as soon as someone opens and saves it. Outputs are checked by
``tests/test_nbval_sync.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

SOURCES = Path(__file__).resolve().parent.parent / "notebooks"
NAMES = sorted(p.name for p in SOURCES.glob("[0-9]*.ipynb"))
FIX = "open it in JupyterLab, Edit > Clear Outputs of All Cells, save (or nbformat.write it)"
#: What ipykernel's python3 kernel writes (the Python version aside).
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}
#: Cell metadata a committed notebook may carry (papermill's parameters tag).
#: ``automd``: what a cell needs to run (``requires``, read by the pipeline; not editor state).
CELL_METADATA = {"tags", "automd"}


def test_there_are_notebooks():
    assert len(NAMES) >= 7


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_stored_as_jupyterlab_writes_it(name):
    path = SOURCES / name
    text = path.read_text(encoding="utf-8")
    raw = json.loads(text)
    assert (raw["nbformat"], raw["nbformat_minor"]) == (4, 5), f"{name}: not nbformat 4.5"
    nb = nbformat.reads(text, as_version=4)
    nbformat.validate(nb)
    expected = nbformat.writes(nb)
    expected += "" if expected.endswith("\n") else "\n"
    assert text == expected, f"{name}: JSON layout differs from what Jupyter writes. Fix: {FIX}"


@pytest.mark.parametrize("name", NAMES)
def test_notebook_metadata_is_complete(name):
    nb = nbformat.read(SOURCES / name, as_version=4)
    assert nb.metadata.get("kernelspec") == KERNELSPEC, f"{name}: kernelspec. Fix: {FIX}"
    info = dict(nb.metadata.get("language_info", {}))
    version = str(info.pop("version", ""))
    assert info == LANGUAGE_INFO, f"{name}: language_info. Fix: {FIX}"
    assert re.fullmatch(r"3\.11\.\d+", version), f"{name}: language_info.version {version!r}"
    assert set(nb.metadata) <= {"kernelspec", "language_info", "automd"}, set(nb.metadata)


@pytest.mark.parametrize("name", NAMES)
def test_every_cell_has_a_stable_id_and_no_editor_state(name):
    nb = nbformat.read(SOURCES / name, as_version=4)
    ids = [cell.get("id") for cell in nb.cells]
    assert all(i and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", i) for i in ids), ids
    assert len(set(ids)) == len(ids), f"{name}: duplicate cell ids"
    for cell in nb.cells:
        extra = set(cell.metadata) - CELL_METADATA
        assert not extra, f"{name}: cell {cell.id} stores editor state {sorted(extra)}. Fix: {FIX}"
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{name}: {cell.id}"
