"""CLI integration: ``automd validate``, ``automd tasks`` and ``automd demo data``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from test_tasks_tiny import make_tiny_task
from typer.testing import CliRunner

from automd_analysis.cli import app
from automd_analysis.tasks import DEFAULT_MANIFEST_DIR, get_task, load_manifest

#: Integration tests (CLI, end to end, demo cohorts): `make test-fast` skips them.
pytestmark = pytest.mark.slow

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


# --------------------------------------------------------------------------------------------
# automd validate


def test_validate_valid_and_invalid(demo_root, tmp_path):
    task = get_task("demo_rhc_death30", data=demo_root)
    sample = task.path("sample_submission")
    ok = _run("validate", "demo_rhc_death30", sample, "--data", demo_root)
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.startswith("valid:")

    bad = tmp_path / "bad.csv"
    lines = sample.read_text().splitlines()
    bad.write_text("\n".join([lines[0], *lines[2:]]).replace(",0\n", ",2\n", 1) + "\n")
    res = _run("validate", "demo_rhc_death30", bad, "--data", demo_root)
    assert res.exit_code == 1
    assert "[ids.missing]" in res.stdout and "[label.not_binary]" in res.stdout

    res = _run("validate", "demo_rhc_death30", bad, "--data", demo_root, "--json")
    assert res.exit_code == 1
    payload = json.loads(res.stdout)
    assert set(payload) == {"valid", "reasons"}
    assert payload["valid"] is False
    assert [r["code"] for r in payload["reasons"]] == ["ids.missing", "label.not_binary"]
    assert all(set(r) == {"code", "message", "examples"} for r in payload["reasons"])

    res = _run("validate", "demo_rhc_death30", sample, "--data", demo_root, "--json")
    assert res.exit_code == 0 and json.loads(res.stdout) == {"valid": True, "reasons": []}


def test_validate_root_option(demo_root, tmp_path):
    sample = get_task("demo_support", data=demo_root).path("sample_submission")
    link = tmp_path / "link.csv"
    link.symlink_to(sample)
    res = _run("validate", "demo_support", link, "--data", demo_root, "--root", tmp_path, "--json")
    assert res.exit_code == 1
    assert json.loads(res.stdout)["reasons"][0]["code"] == "file.outside_root"


def test_validate_errors_exit_2_without_traceback(demo_root, tmp_path):
    res = _run("validate", "no_such_task", tmp_path / "x.csv", "--data", demo_root)
    assert res.exit_code == 2
    assert "no task 'no_such_task'" in res.stderr and "Traceback" not in res.output

    # the task's own data is missing: a data error, not an invalid submission
    res = _run("validate", "demo_support", tmp_path / "x.csv", "--data", tmp_path / "empty")
    assert res.exit_code == 2  # the submission does not exist: a usage error
    sample = get_task("demo_support", data=demo_root).path("sample_submission")
    res = _run("validate", "demo_support", sample, "--data", tmp_path / "empty")
    assert res.exit_code == 2
    assert "not found" in res.stderr and "automd demo data" in res.stderr

    res = _run("validate", "demo_support")  # usage error
    assert res.exit_code == 2


def test_validate_through_the_console_script(demo_root, tmp_path):
    sample = get_task("demo_sepsis_local", data=demo_root).path("sample_submission")
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\x00\x01garbage")
    cmd = [sys.executable, "-m", "automd_analysis", "validate", "demo_sepsis_local"]
    out = subprocess.run([*cmd, str(bad), "--data", str(demo_root), "--json"], capture_output=True)
    assert out.returncode == 1
    assert json.loads(out.stdout)["reasons"][0]["code"] == "file.binary"
    err = subprocess.run(
        [*cmd, str(sample), "--data", str(tmp_path)], capture_output=True, text=True
    )
    assert err.returncode == 2
    assert "Traceback" not in err.stderr and "automd: error:" in err.stderr


# --------------------------------------------------------------------------------------------
# automd tasks


def test_tasks_lists_statuses(tmp_path):
    base = tmp_path / "x"
    make_tiny_task(base, "survival", task_id="t_present")
    make_tiny_task(base, "auroc", task_id="t_missing")
    make_tiny_task(base, "binary", task_id="t_modified")
    make_tiny_task(base, "sequential", task_id="t_unpinned")
    data, manifests = base / "data", base / "manifests"
    (data / "labels" / "t_missing" / "test_labels.csv").unlink()
    modified = data / "labels" / "t_modified" / "test_labels.csv"
    modified.write_text(modified.read_text() + "\n")
    path = manifests / "t_unpinned.yaml"
    doc = yaml.safe_load(path.read_text())
    for spec in doc["files"].values():
        spec["sha256"] = None
    path.write_text(yaml.safe_dump(doc, sort_keys=False, default_flow_style=None))

    res = _run("tasks", "--data", data, "--manifests", manifests, "--json")
    assert res.exit_code == 0, res.output
    rows = {r["id"]: r for r in json.loads(res.stdout)["tasks"]}
    assert {k: r["status"] for k, r in rows.items()} == {
        "t_present": "present",
        "t_missing": "missing",
        "t_modified": "checksum mismatch",
        "t_unpinned": "unpinned",
    }
    assert rows["t_present"]["kind"] == "survival"
    assert rows["t_modified"]["metric"] == "min_se_ppv"
    assert rows["t_unpinned"]["files"] == {"labels": "unpinned"}

    res = _run("tasks", "--data", data, "--manifests", manifests)
    assert res.exit_code == 0
    table = {line.split()[0]: line for line in res.stdout.splitlines()[2:]}
    assert table["t_modified"].endswith("checksum mismatch")
    assert "sequential" in table["t_unpinned"] and table["t_unpinned"].endswith("unpinned")

    # pin the unpinned task, after which it is present
    res = _run("tasks", "--data", data, "--manifests", manifests, "--pin", "t_unpinned")
    assert res.exit_code == 0, res.output
    assert load_manifest(path).files["labels"].sha256 is not None
    res = _run("tasks", "--data", data, "--manifests", manifests, "--json")
    statuses = {r["id"]: r["status"] for r in json.loads(res.stdout)["tasks"]}
    assert statuses["t_unpinned"] == "present"
    # a modified file is not silently re-pinned
    res = _run("tasks", "--data", data, "--manifests", manifests, "--pin", "t_modified")
    assert res.exit_code == 2 and "differs from its pinned sha256" in res.stderr


def test_tasks_lists_the_shipped_manifests(tmp_path):
    res = _run("tasks", "--data", tmp_path, "--no-verify", "--json")
    assert res.exit_code == 0
    rows = {r["id"]: r for r in json.loads(res.stdout)["tasks"]}
    assert sum(r["origin"] == "paper" for r in rows.values()) == 15
    assert sum(r["origin"] == "demo" for r in rows.values()) == 9
    assert rows["seer"]["train"] == 232625 and rows["seer"]["status"] == "missing"
    assert rows["sepsis_local"]["extra_train"] == 500
    assert rows["eicu_newhosp"]["validation"] == "external (hospital)"


# --------------------------------------------------------------------------------------------
# automd demo data


def test_demo_data_builds_into_a_tmp_dir(tmp_path):
    out = tmp_path / "data"
    res = _run(
        "demo", "data", "--data", out, "--task", "demo_rotterdam", "--task", "demo_rhc_death30"
    )
    assert res.exit_code == 0, res.output
    assert "built 2 demo tasks" in res.stdout
    res = _run("tasks", "--data", out, "--json")
    statuses = {r["id"]: r["status"] for r in json.loads(res.stdout)["tasks"]}
    assert statuses["demo_rotterdam"] == statuses["demo_rhc_death30"] == "present"
    assert statuses["demo_support"] == "missing"
    task = get_task("demo_rotterdam", data=out)
    res = _run("validate", "demo_rotterdam", task.path("sample_submission"), "--data", out)
    assert res.exit_code == 0


def test_demo_data_reports_unreproducible_builds(tmp_path):
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    text = (DEFAULT_MANIFEST_DIR / "demo_rhc_death30.yaml").read_text()
    sha = load_manifest(DEFAULT_MANIFEST_DIR / "demo_rhc_death30.yaml").files["train"].sha256
    (manifests / "demo_rhc_death30.yaml").write_text(text.replace(sha, "ab" * 32))
    args = ("demo", "data", "--data", tmp_path / "d", "--manifests", manifests)
    res = _run(*args)
    assert res.exit_code == 2
    assert "sha256 mismatch: demo_rhc_death30/train" in res.stderr
    res = _run(*args, "--repin")
    assert res.exit_code == 0 and "re-pinned demo_rhc_death30" in res.stdout
    assert load_manifest(manifests / "demo_rhc_death30.yaml").files["train"].sha256 == sha
    assert _run(*args).exit_code == 0

    res = _run("demo", "data", "--data", tmp_path / "d", "--task", "support")
    assert res.exit_code == 2 and "not demo tasks" in res.stderr


def test_validate_usage_errors_exit_2_and_list_the_known_tasks(tmp_path):
    res = runner.invoke(app, ["validate", "no_such_task", str(tmp_path / "x.csv")])
    assert res.exit_code == 2
    assert "no task 'no_such_task'" in res.output and "demo_support" in res.output
    res = runner.invoke(app, ["validate", "../../etc/passwd", str(tmp_path / "x.csv")])
    assert res.exit_code == 2 and "is not a task id" in res.output
    res = runner.invoke(app, ["validate", "demo_support", str(tmp_path / "absent.csv")])
    assert res.exit_code == 2 and "submission file not found" in res.output
