"""Every report notebook completes on degenerate archives (issue 33 item 4), through the real CLI.

Constant predictions, one outcome class, a calibration measure undefined for every run, a single
valid run, a single agent, runs that are not scorable here: ``automd regenerate`` must build the
report, every notebook that is not skipped must run without an error output, and the skipped ones
must say why. The archives come from :mod:`degenerate_archives`; the two explicit examples hold
every named case, hypothesis adds a few combinations of its own (derandomised in CI).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
from degenerate_archives import CASES, Case, build
from hypothesis import HealthCheck, example, given, settings

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9]*.ipynb"))


def _errors(executed: Path) -> list[str]:
    nb = nbformat.read(executed, as_version=4)
    return [
        f"{executed.name}: {o.ename}: {o.evalue}"
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.outputs
        if o.output_type == "error"
    ]


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@example(  # constant predictions, one outcome class, one agent; notebooks 03, 04, 06 run too
    Case(
        agents=1,
        reps=1,
        tasks=("cls", "surv", "seq"),
        one_class=True,
        predictions="constant",
        external=True,
        others=True,
    )  # fmt: skip
)
@example(  # slope and intercept undefined on every run (0/1 probabilities), one valid run,
    # no baseline, and a run imported without predictions
    Case(
        agents=2, reps=2, predictions="extreme", valid_runs="one", baseline=False, unscorable=True
    )  # fmt: skip
)
@given(case=CASES)
def test_every_notebook_completes_on_degenerate_data(case):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        built = build(case, root)
        out = root / "report"
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "automd_analysis",
                "regenerate",
                str(built.archive),
                "--data",
                str(built.data),
                "--manifests",
                str(built.manifests),
                "--scores",
                str(root / "scores"),
                "--out",
                str(out),
                "--bootstrap",
                "20",
                "--embedding-backend",
                "hashing",
                "--jobs",
                "2",
            ],  # fmt: skip
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert result.returncode == 0, (case, result.stderr[-3000:])
        assert "Traceback" not in result.stderr
        index = (out / "index.html").read_text()
        for name in NOTEBOOKS:
            executed = out / "notebooks" / f"{name}.ipynb"
            if executed.exists():
                assert not _errors(executed), (case, _errors(executed))
                assert (out / "html" / f"{name}.html").is_file(), (case, name)
            else:
                assert f"{name}: skipped &mdash; " in index, (case, name)
        assert (out / "tables" / "run_coverage.csv").is_file()
        if case.unscorable:
            assert "not scorable here" in index
            runs = (out / "tables" / "run_coverage_runs.csv").read_text()
            assert 'imported,0,not_scorable,"import.final_file_missing' in runs
