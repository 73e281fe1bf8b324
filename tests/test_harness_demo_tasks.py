"""The harness on the real demo task files (built once per session by ``ensure_demo_data``)."""

from __future__ import annotations

import json

import pytest

from automd_analysis.archive import open_archive
from automd_analysis.submissions import validate_submission
from automd_analysis.tasks import get_task
from automd_demo.harness.build import DEMO_TASKS, RunSpec, build_archive
from automd_demo.harness.rerun import rerun_submission
from automd_demo.harness.taskdata import load_profile

pytestmark = pytest.mark.slow


def test_profiles_of_every_demo_task(demo_root):
    profiles = {t: load_profile(get_task(t, demo_root)) for t in DEMO_TASKS}
    assert {p.kind for p in profiles.values()} == {"survival", "classification", "sequential"}
    assert profiles["demo_support"].grid_file == "time_grid.csv"
    assert profiles["demo_rhc_death30"].label_column == "PredictedLabel"
    local, newhosp = profiles["demo_sepsis_local"], profiles["demo_sepsis_newhosp"]
    assert (local.site_column, local.target_site) == ("hospital", "B")
    assert newhosp.target_site is None  # trained on hospital A only: nothing local to validate on
    for p in (local, newhosp, profiles["demo_sepsis"]):
        # trend columns vary within a stay; static columns are not "hourly"
        assert not {"Age", "Gender", "Unit1", "Unit2", "HospAdmTime"} & set(p.hourly_columns)
        assert {"HR", "MAP", "Resp"} <= set(p.hourly_columns)


def test_tiny_archive_on_real_demo_tasks(demo_root, tmp_path):
    specs = [
        RunSpec("main", "codex", "sim-llm-a", "demo_rhc_death30", 0),
        RunSpec("main", "aiscientist", "sim-llm-a", "demo_rotterdam", 0),
        RunSpec("main", "aide", "sim-llm-a", "demo_sepsis_local", 0),
        RunSpec("main", "baseline", "none", "demo_rotterdam", 0),
    ]
    out = tmp_path / "demo"
    build_archive(out, data=demo_root, specs=specs, size="tiny", jobs=1)
    arch = open_archive(out)
    assert not arch.problems and len(arch.runs()) == 4
    for run in arch.runs():
        task = get_task(run.task, demo_root)
        doc = json.loads((run.dir / "run.json").read_text())
        if doc["selection"]["selected_version"] is None:
            continue
        facts = (
            json.loads((run.dir / "logs/harness.json").read_text())
            if run.agent != "baseline"
            else {"expected_valid": True}
        )
        assert (
            validate_submission(task, run.dir / "submission.csv").valid == facts["expected_valid"]
        )
    seq = out / "main/aide/demo_sepsis_local/rep0"
    task = get_task("demo_sepsis_local", demo_root)
    again = rerun_submission(seq, task.path("test_features"), tmp_path / "again.csv", demo_root)
    assert again.read_bytes() == (seq / "submission.csv").read_bytes()
