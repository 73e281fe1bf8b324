"""CLI integration: ``automd demo archive`` and ``automd baselines``."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from automd_analysis.archive import open_archive
from automd_analysis.cli import app
from automd_demo.cli import parse_seeds
from automd_demo.harness.build import BASELINE_REPS
from automd_demo.harness.toy import make_toy_tasks

#: Integration tests (CLI, end to end, demo cohorts): `make test-fast` skips them.
pytestmark = pytest.mark.slow

runner = CliRunner()


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return make_toy_tasks(tmp_path_factory.mktemp("toy_cli"))


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


def _digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_parse_seeds():
    assert parse_seeds("0-4") == [0, 1, 2, 3, 4]
    assert parse_seeds("3, 1,1") == [1, 3]
    for bad in ("", "a", "4-2", "1-"):
        with pytest.raises(ValueError):
            parse_seeds(bad)


def test_demo_archive_command_builds_a_readable_reproducible_archive(toy, tmp_path):
    root, man = toy
    out = tmp_path / "demo"
    args = ("demo", "archive", "--archive", out, "--data", root, "--manifests", man,
            "--size", "tiny", "--task", "toy_label", "--jobs", "1")  # fmt: skip
    res = _run(*args)
    assert res.exit_code == 0, res.output
    assert "built" in res.output and "runs" in res.output
    arch = open_archive(out)
    runs = arch.runs()
    assert not arch.problems
    agents = sorted({r.agent for r in runs})
    assert agents == ["aide", "aiscientist", "autoresearch", "baseline", "codex"]
    assert sorted(r.rep for r in runs if r.agent == "baseline") == list(range(BASELINE_REPS))
    assert {r.llm for r in runs if r.experiment == "llm"} == {"sim-llm-b", "sim-llm-c"}
    meta = yaml.safe_load((out / "archive.yaml").read_text())
    assert meta["provenance"]["built_by"] == "automd demo archive"
    first = _digests(out)
    assert ".build-stamp" in first and not any(r.run_id.startswith(".") for r in runs)
    res = _run(*args)  # same command again, same inputs: nothing to do
    assert res.exit_code == 0 and "up to date" in res.output and "built" not in res.output
    assert _digests(out) == first
    res = _run(*args, "--force")  # forced: rebuilt, with identical bytes
    assert res.exit_code == 0 and "built" in res.output, res.output
    assert _digests(out) == first
    res = _run(*args[:-2], "--jobs", "1", "--seed", "7")  # another input: rebuilt
    assert res.exit_code == 0 and "built" in res.output, res.output
    assert _digests(out)[".build-stamp"] != first[".build-stamp"]


def test_demo_archive_command_errors_are_clear(toy, tmp_path):
    root, man = toy
    res = _run("demo", "archive", "--archive", tmp_path / "a", "--size", "huge")
    assert res.exit_code == 2 and "unknown size" in res.output
    res = _run("demo", "archive", "--archive", tmp_path / "b", "--data", tmp_path / "nodata",
               "--manifests", man, "--size", "tiny", "--task", "toy_label")  # fmt: skip
    assert res.exit_code == 2
    assert "not found" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "b").exists()  # nothing half-built is left behind


def test_baselines_command_writes_reference_runs(toy, tmp_path):
    root, man = toy
    arch = tmp_path / "base"
    res = _run("baselines", "toy_hourly", "--seeds", "0-1", "--archive", arch,
               "--data", root, "--manifests", man)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "threshold" in res.output  # the sequential baseline reports its holdout threshold
    runs = open_archive(arch).runs()
    assert [r.run_id for r in runs] == [
        "main/baseline/toy_hourly/rep0",
        "main/baseline/toy_hourly/rep1",
    ]
    assert all(r.reference and r.search == "none" and r.llm == "none" for r in runs)
    ann = json.loads((arch / "main/baseline/toy_hourly/rep0/annotations.json").read_text())
    assert ann["run"]["model_families"]["value"] == ["gbdt"]
    assert ann["run"]["validation_design"]["value"] == ["single_holdout"]
    code = (arch / "main/baseline/toy_hourly/rep0/code/v0001/baseline.py").read_text().split("\n")
    line = int(ann["run"]["model_families"]["evidence"][0].rsplit(":", 1)[1])
    assert "HistGradientBoostingClassifier(" in code[line - 1]
    before = (arch / "main/baseline/toy_hourly/rep1/submission.csv").read_bytes()
    res = _run("baselines", "toy_hourly", "--seeds", "1", "--archive", arch,
               "--data", root, "--manifests", man)  # fmt: skip
    assert res.exit_code == 0 and "kept" in res.output
    res = _run("baselines", "toy_hourly", "--seeds", "1", "--archive", arch, "--force",
               "--data", root, "--manifests", man)  # fmt: skip
    assert res.exit_code == 0 and "wrote" in res.output
    assert (arch / "main/baseline/toy_hourly/rep1/submission.csv").read_bytes() == before
    # another experiment is declared in the existing archive.yaml
    res = _run("baselines", "toy_label", "--seeds", "0", "--archive", arch, "--experiment",
               "extra", "--data", root, "--manifests", man)  # fmt: skip
    assert res.exit_code == 0, res.output
    meta = yaml.safe_load((arch / "archive.yaml").read_text())
    assert set(meta["experiments"]) == {"main", "extra"}
    assert len(open_archive(arch).runs()) == 3


def test_baselines_command_usage_errors(toy, tmp_path):
    root, man = toy
    res = _run("baselines", "toy_label", "--seeds", "x", "--archive", tmp_path / "a",
               "--data", root, "--manifests", man)  # fmt: skip
    assert res.exit_code == 2 and "seed" in res.output
    res = _run("baselines", "toy_label", "--experiment", "../up", "--archive", tmp_path / "a",
               "--data", root, "--manifests", man)  # fmt: skip
    assert res.exit_code == 2 and "experiment" in res.output


def test_unknown_task_exits_2_without_traceback(toy, tmp_path):
    root, man = toy
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "automd_analysis",
            "baselines",
            "no_such_task",
            "--manifests",
            str(man),
            "--data",
            str(root),
            "--archive",
            str(tmp_path / "x"),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert "automd: error" in proc.stderr and "Traceback" not in proc.stderr
    assert "no task 'no_such_task'" in proc.stderr
    assert "known tasks: toy_auroc" in proc.stderr
