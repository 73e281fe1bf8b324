"""Regenerate the executed copies of the report notebooks that nbval checks in CI.

Run after changing a notebook in ``notebooks/`` (or an analysis whose numbers it shows)::

    .venv/bin/python tests/nbval/update.py    # from the repository root, in the project's venv

It scores the small fixture archive into ``build/nbval/scores``, executes every notebook of
``notebooks/`` with papermill and the fixture parameters (``nbval_params.PARAMETERS``), strips the
run-specific metadata (timings, absolute paths) so that the diff shows only real changes, formats
the injected cell like the rest of the code (ruff) and writes the copies next to this file. Copies
of notebooks that no longer exist are removed. Review the diff of the outputs before committing:
every changed number is a changed result.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbval_params import COPIES, PARAMETERS, SOURCES, score_fixture

from automd_analysis.app.run_notebooks import INJECTED_TAG, execute_notebooks, raise_for_failures


def strip_run_metadata(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop what differs between two runs with the same results: papermill's timings, input and
    output paths and environment, per-cell execution metadata and the injected cell's random id."""
    papermill = nb.metadata.get("papermill", {})
    nb.metadata["papermill"] = {"parameters": papermill.get("parameters", {})}
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if INJECTED_TAG in cell.metadata.get("tags", []):
            cell["id"] = "injected-parameters"  # papermill draws a random id
    return nb


def main(jobs: int = 2) -> int:
    summary = score_fixture(jobs=jobs)
    print(f"scored the fixture: {summary.n_runs} runs into {summary.out_dir}")
    with tempfile.TemporaryDirectory() as tmp:
        results = execute_notebooks(SOURCES, Path(tmp), PARAMETERS, jobs=jobs)
        raise_for_failures(results)
        written = []
        for result in results:
            nb = strip_run_metadata(nbformat.read(result.output, as_version=4))
            target = COPIES / result.source.name
            nbformat.write(nb, target)
            written.append(target)
    subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--quiet", *map(str, written)], check=True
    )
    keep = {p.name for p in written}
    for stale in sorted(COPIES.glob("*.ipynb")):
        if stale.name not in keep:
            stale.unlink()
            print(f"removed {stale.name} (no such notebook in {SOURCES})")
    for path in written:
        print(f"wrote {path.relative_to(COPIES.parents[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
