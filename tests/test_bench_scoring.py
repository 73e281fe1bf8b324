"""``bench/bench_scoring.py`` and ``bench/_process_tree.py``: the steps cut from the stage lines,
the profile table, the archive folder it reuses or refuses, and that its step markers are the
lines ``automd regenerate`` really logs (so the bench's table cannot silently lose a step)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from notebook_factory import code, markdown, parameters_cell, write_notebook

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "small"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import _process_tree
    import bench_scoring

    return bench_scoring, _process_tree


def test_steps_run_from_each_marker_to_the_next_one_logged(bench):
    _, tree = bench
    lines = [(0.5, 0.4, "scoring a -> b"), (0.7, 0.5, "progress"), (3.0, 6.0, "notebooks: 2"),
             (9.0, 15.0, "rendering html")]  # fmt: skip
    markers = [("score", r"^scoring "), ("pages", r"^run pages"), ("nb", r"^notebooks"),
               ("html", r"^rendering")]  # fmt: skip
    steps = tree.steps_between(lines, markers, wall=10.0, cpu=16.0)
    assert [s[0] for s in steps] == ["start-up", "score", "nb", "html"]  # pages never logged
    numbers = [x for _, wall, cpu in steps for x in (wall, cpu)]
    assert numbers == pytest.approx([0.5, 0.4, 2.5, 5.6, 6.0, 9.0, 1.0, 1.0])
    assert sum(s[1] for s in steps) == pytest.approx(10.0)


def test_profile_table_has_a_row_per_task_totals_and_shares(bench):
    scoring, _ = bench
    profile = {
        "cpu_seconds": {"a": {"validation": 1.0, "replicates": 3.0}, "b": {"validation": 4.0}},
        "files": {"a": {"scored": 5, "selected": 2}, "b": {"scored": 7, "selected": 0}},
    }
    table = scoring.profile_table(profile)
    assert table[0] == "| task | files (selected) | validation | replicates | total CPU s |"
    assert table[2:] == [
        "| a | 5 (2) | 1.0 | 3.0 | 4.0 |",  # ties by total: by task id
        "| b | 7 (0) | 4.0 | 0.0 | 4.0 |",
        "| **all** | 12 (2) | **5** | **3** | **8** |",
        "| share | | 62 % | 38 % | 100 % |",
    ]


def test_a_workdir_is_reused_at_the_same_scales_and_refused_otherwise(bench, tmp_path):
    scoring, _ = bench
    (tmp_path / scoring.BUILT).write_text(json.dumps({"scales": [0.5, 0.1], "stats": {"t": {}}}))
    arch, data, manifests, stats = scoring.built_archive(tmp_path, 0.5, 0.1)
    assert (arch, data, manifests, stats) == (tmp_path / "archive", tmp_path / "data",
                                              tmp_path / "manifests", {"t": {}})  # fmt: skip
    with pytest.raises(SystemExit, match="other scales"):
        scoring.built_archive(tmp_path, 1.0, 1.0)
    half = tmp_path / "half"
    (half / "archive").mkdir(parents=True)
    with pytest.raises(SystemExit, match="did not finish building"):
        scoring.built_archive(half, 1.0, 1.0)


@pytest.mark.slow
def test_the_step_markers_are_the_lines_regenerate_logs(bench, tmp_path):
    from automd_analysis.app.pipeline import RegenerateConfig, regenerate

    scoring, _ = bench
    arch = tmp_path / "arch"
    arch.mkdir()
    shutil.copy(FIXTURE / "archive" / "archive.yaml", arch / "archive.yaml")
    for run in ("main/alpha/fx_cls/rep0", "main/beta/fx_cls/rep0", "main/baseline/fx_cls/rep0"):
        shutil.copytree(FIXTURE / "archive" / run, arch / run)
    write_notebook(tmp_path / "nbs" / "01_runs.ipynb", [
        markdown("# runs"),
        parameters_cell("archive = None\nscores_dir = None\noutput_dir = None"),
        code("from automd_analysis.app.notebook import open_report\n"
             "report = open_report(archive=archive, scores_dir=scores_dir, output_dir=output_dir)\n"
             "report.table(report.store.runs[['run_id', 'agent']], 'runs')"),
    ])  # fmt: skip
    lines: list[str] = []
    config = RegenerateConfig(
        archive=arch, out=tmp_path / "report", scores=tmp_path / "scores", data=FIXTURE / "data",
        manifests=FIXTURE / "manifests", notebooks=tmp_path / "nbs", bootstrap=16,
    )  # fmt: skip
    regenerate(config, log=lines.append)
    found = [next((i for i, line in enumerate(lines) if re.match(pattern, line)), None)
             for _, pattern in scoring.REGENERATE_STEPS]  # fmt: skip
    assert None not in found, lines
    assert found == sorted(found), lines  # the steps are logged in the order the table lists them
