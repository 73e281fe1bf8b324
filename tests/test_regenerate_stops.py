"""`automd regenerate` stops after scoring when no meaningful report can be built (issue 29 item 1),
and goes on when its runs are only not scorable here (issue 33 item 3) - through the real CLI.

Each bad input must exit 2 with one short message naming the input and the fix, run no notebook
and write nothing of a report (an earlier report in ``--out`` stays as it was).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from notebook_factory import code, markdown, parameters_cell, write_notebook

from automd_analysis.app.pipeline import REPORT_MARKER

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "small"
#: Most lines and characters of the message of a stopped run (issue 29: "at most three lines").
MAX_LINES, MAX_CHARS = 3, 600
IMPORTED_NOTE = (
    "Imported by automd import aide from 'log' (automd-analysis 0.1.0); prediction files bound "
    "by none; no token counts. Problems: import.final_file_missing, import.predictions_not_bound, "
    "import.tokens_absent (see journal.md)."
)


def _automd(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "automd_analysis", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def _regenerate(archive: Path, tmp: Path, *args) -> subprocess.CompletedProcess:
    return _automd("regenerate", archive, "--manifests", FIXTURE / "manifests",
                   "--scores", tmp / "scores", "--bootstrap", 0, *args)  # fmt: skip


def _error(result: subprocess.CompletedProcess) -> str:
    """The error message (from ``automd: error:`` to the end), checked for its form."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "notebook" not in result.stderr
    message = result.stderr[result.stderr.index("automd: error: ") :].strip()
    assert len(message.splitlines()) <= MAX_LINES, message
    assert len(message) <= MAX_CHARS, message
    return message


def _previous_report(out: Path) -> Path:
    out.mkdir(parents=True)
    (out / REPORT_MARKER).write_text("written by automd regenerate\n")
    (out / "index.html").write_text("the previous report\n")
    return out


def _unchanged(out: Path) -> None:
    assert sorted(p.name for p in out.iterdir()) == [REPORT_MARKER, "index.html"]
    assert (out / "index.html").read_text() == "the previous report\n"


def _archive(tmp: Path, experiments: dict, runs: list[tuple[str, str]]) -> Path:
    """A copy of the fixture archive holding only ``runs`` ((experiment, agent) pairs, task
    ``fx_cls``, rep 0) and the ``experiments`` of ``archive.yaml``."""
    target = tmp / "archive"
    target.mkdir()
    meta = yaml.safe_load((FIXTURE / "archive" / "archive.yaml").read_text())
    meta["experiments"] = experiments
    (target / "archive.yaml").write_text(yaml.safe_dump(meta))
    for experiment, agent in runs:
        rel = Path(experiment) / agent / "fx_cls" / "rep0"
        shutil.copytree(FIXTURE / "archive" / "main" / "alpha" / "fx_cls" / "rep0", target / rel)
        run_json = target / rel / "run.json"
        doc = json.loads(run_json.read_text()) | {"experiment": experiment, "agent": agent}
        run_json.write_text(json.dumps(doc))
    return target


def test_empty_data_folder_stops_with_the_scorers_message(tmp_path):
    """The headline case of issue 29: every task's data is missing, so nothing can be scored."""
    empty = tmp_path / "empty"
    empty.mkdir()
    out = _previous_report(tmp_path / "report")
    result = _regenerate(FIXTURE / "archive", tmp_path, "--data", empty, "--out", out)
    message = _error(result)
    assert "nothing to report" in message and "5 task(s) could not be used" in message
    assert str(empty) in message  # the input at fault
    assert "Fix: prepare it under" in message and "--data" in message  # and what to do
    _unchanged(out)
    # the same words as `automd score` on the same input
    score = _automd("score", FIXTURE / "archive", "--data", empty, "--manifests",
                    FIXTURE / "manifests", "--out", tmp_path / "s2", "--no-progress",
                    "--bootstrap", 0)  # fmt: skip
    assert score.returncode == 2
    reason = re.search(r"\): (task 'fx_cls': .*?) in ", message).group(1)
    fix = message.split(". Fix: ")[1]
    assert reason in score.stderr and fix in score.stderr, (message, score.stderr)


def test_empty_archive_stops(tmp_path):
    archive = _archive(tmp_path, {"main": "nothing yet"}, [])
    out = tmp_path / "report"
    message = _error(_regenerate(archive, tmp_path, "--data", FIXTURE / "data", "--out", out))
    assert "the archive holds no readable run" in message and str(archive) in message
    assert "automd import" in message
    assert not out.exists()


def test_no_run_of_the_main_experiment_stops(tmp_path):
    archive = _archive(tmp_path, {"main": "m", "llm": "l"}, [("llm", "alpha")])
    out = tmp_path / "report"
    message = _error(_regenerate(archive, tmp_path, "--data", FIXTURE / "data", "--out", out))
    assert "no run of experiment 'main'" in message and "runs of llm" in message
    assert "roles: {main: llm}" in message and "archive.yaml" in message
    assert not out.exists()


def _tiny_notebook(directory: Path) -> Path:
    write_notebook(
        directory / "01_runs.ipynb",
        [
            markdown("# Runs"),
            parameters_cell("archive = None\nscores_dir = None\noutput_dir = None"),
            code(
                "from automd_analysis.analysis import primary\n"
                "from automd_analysis.app.notebook import open_report\n"
                "report = open_report(archive=archive, scores_dir=scores_dir, "
                "output_dir=output_dir)\n"
                "report.table(primary.coverage_by_run(report.store), 'run_coverage_runs')"
            ),
        ],
    )
    return directory


@pytest.mark.parametrize("with_data", [True, False])
def test_runs_without_predictions_are_reported_not_stopped(tmp_path, with_data):
    """An archive of imported runs that kept no prediction file has nothing to score but its
    process to report: it must not stop, even without the task data."""
    archive = _archive(tmp_path, {"main": "imported"}, [("main", "aide")])
    run = archive / "main" / "aide" / "fx_cls" / "rep0"
    shutil.rmtree(run / "versions")
    (run / "submission.csv").unlink()
    (run / "annotations.json").unlink()  # it names the removed versions
    doc = json.loads((run / "run.json").read_text())
    doc |= {"notes": IMPORTED_NOTE, "selection": {"rule": "final file", "selected_version": None}}
    (run / "run.json").write_text(json.dumps(doc))
    data = FIXTURE / "data" if with_data else tmp_path / "no-data"
    out = tmp_path / "report"
    result = _regenerate(
        archive, tmp_path, "--data", data, "--out", out, "--notebooks", _tiny_notebook(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    assert "1 not scorable here" in result.stdout
    index = (out / "index.html").read_text()
    assert "All 1 runs are not scorable here:" in index
    listed = (out / "tables" / "run_coverage_runs.csv").read_text().splitlines()
    assert listed[0] == "task,agent,rep,status,problems"
    assert listed[1] == (
        'fx_cls,aide,0,not_scorable,"import.final_file_missing, import.predictions_not_bound, '
        'import.tokens_absent, scoring.no_predictions"'
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--bootstrap", 100, "--version-bootstrap", 200), "between 2 and --bootstrap (100)"),
        (("--no-score", "--version-bootstrap", 200), "--no-score uses the store as it is"),
    ],
)
def test_bad_version_bootstrap_stops_before_any_work(tmp_path, args, says):
    """A --version-bootstrap that scoring would refuse (or that --no-score would ignore) stops
    the run at once: exit 2, nothing scored, the earlier report untouched."""
    out = _previous_report(tmp_path / "out")
    before = sorted(p.name for p in out.iterdir())
    result = _automd("regenerate", FIXTURE / "archive", "--data", FIXTURE / "data",
                     "--manifests", FIXTURE / "manifests", "--scores", tmp_path / "scores",
                     "--out", out, *args)  # fmt: skip
    message = _error(result)
    assert says in message and "--version-bootstrap" in message
    assert not (tmp_path / "scores").exists()
    assert sorted(p.name for p in out.iterdir()) == before
