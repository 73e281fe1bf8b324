"""The masking sandbox: archived code runs only in a limited child process (docs/security.md).

The re-runners of ``tests/sandbox_probe.py`` play hostile archive code and report what they can see
and do; the sandbox must give them a scrubbed environment, copies of the run's code and the task's
public files only (never the hidden labels), no network where the machine allows it, and resource
limits that stop memory hogs, endless loops, sleepers and huge files with a structured error.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import pytest
from test_archive_reader import kit

from automd_analysis.errors import AutomdError
from automd_analysis.masking.sandbox import (
    SandboxedRerun,
    SandboxLimits,
    available_rerunners,
    network_isolation_command,
)
from automd_demo.harness.toy import make_toy_tasks

#: Integration tests (CLI, end to end, demo cohorts): `make test-fast` skips them.
pytestmark = pytest.mark.slow

TASK = "toy_hourly_local"


@pytest.fixture
def toy_run(tmp_path):
    data, manifests = make_toy_tasks(tmp_path / "toy")
    root = tmp_path / "arch"
    kit.write_archive_yaml(root, experiments={"main": "m"})
    run_dir = kit.write_run(
        root, "main", "probe", TASK, 0, selection={"rule": "final", "selected_version": "v0001"}
    )
    code = run_dir / "code" / "v0001"
    code.mkdir(parents=True)
    (code / "train.py").write_text("print('hello')\n")
    (run_dir / "notes.txt").write_text("not copied: only run.json and the selected code are\n")
    return run_dir, data, manifests


@pytest.fixture
def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    accepted = []

    def serve():
        try:
            while True:
                conn, _ = server.accept()
                accepted.append(1)
                conn.close()
        except OSError:
            pass

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], accepted
    server.close()


def _probe(toy_run, listener, tmp_path, limits=None) -> dict:
    run_dir, data, manifests = toy_run
    port, _ = listener
    (run_dir / "code" / "v0001" / "port.txt").write_text(str(port))
    rerun = SandboxedRerun("sandbox_probe:report", data=str(data), manifests=str(manifests),
                           limits=limits or SandboxLimits())  # fmt: skip
    out = rerun(run_dir, data / "tasks" / TASK / "test_features.csv", tmp_path / "out.json")
    return json.loads(out.read_text())


def test_child_sees_a_scrubbed_environment_and_only_copies(
    toy_run, listener, tmp_path, monkeypatch
):
    monkeypatch.setenv("AUTOMD_TEST_SECRET_TOKEN", "do-not-leak")
    info = _probe(toy_run, listener, tmp_path)
    assert "AUTOMD_TEST_SECRET_TOKEN" not in info["env"]
    assert not any(
        k.startswith(("AWS", "GITHUB", "SSH", "PYTEST", "HYPOTHESIS")) for k in info["env"]
    )
    run_dir, data, _ = toy_run
    assert info["cwd"] != str(run_dir) and not info["cwd"].startswith(str(run_dir.parents[4]))
    files = info["files"]
    # the run: run.json and the selected version's code only
    assert "run/run.json" in files and "run/code/v0001/train.py" in files
    assert not any("notes.txt" in f for f in files)
    # the task: public files only, never the hidden labels
    assert any(f.endswith(f"tasks/{TASK}/train.csv") for f in files)
    assert not any("labels" in f for f in files), files
    assert info["data"].startswith(info["cwd"])
    assert Path(info["test"]).parent == Path(info["cwd"]) / "input"


def test_child_runs_under_the_limits(toy_run, listener, tmp_path):
    limits = SandboxLimits(cpu_seconds=77, memory_bytes=3 << 30, file_bytes=123 << 20,
                           open_files=200)  # fmt: skip
    info = _probe(toy_run, listener, tmp_path, limits)
    assert info["limits"] == {"RLIMIT_CPU": 77, "RLIMIT_AS": 3 << 30,
                              "RLIMIT_FSIZE": 123 << 20, "RLIMIT_NOFILE": 200}  # fmt: skip


def test_child_has_no_network(toy_run, listener, tmp_path):
    if network_isolation_command() is None:
        why = "this machine cannot create network namespaces (recorded as isolation=process)"
        if os.environ.get("CI"):  # CI must prove the isolation, not skip it
            pytest.fail(f"{why}: CI cannot test that re-runs have no network")
        pytest.skip(why)
    info = _probe(toy_run, listener, tmp_path)
    assert info["network"].startswith("blocked"), info["network"]
    assert listener[1] == []  # nothing ever connected
    rerun = SandboxedRerun("sandbox_probe:report")
    assert rerun.isolation == "process+netns"


@pytest.mark.parametrize(
    ("target", "limits", "expect"),
    [
        ("sandbox_probe:hog_memory", SandboxLimits(memory_bytes=2 << 30), "MemoryError"),
        ("sandbox_probe:sleep_forever", SandboxLimits(wall_seconds=3), "killed"),
        ("sandbox_probe:spin", SandboxLimits(cpu_seconds=2, wall_seconds=60), "signal"),
        ("sandbox_probe:write_huge", SandboxLimits(file_bytes=4 << 20), "File too large"),
        ("sandbox_probe:symlink_out", SandboxLimits(), "cannot be used"),
        ("sandbox_probe:no_such_function", SandboxLimits(), "not a callable"),
    ],
)
def test_hostile_code_is_stopped_with_a_structured_error(toy_run, tmp_path, target, limits, expect):
    run_dir, data, manifests = toy_run
    rerun = SandboxedRerun(target, data=str(data), manifests=str(manifests), limits=limits)
    with pytest.raises(AutomdError) as info:
        rerun(run_dir, data / "tasks" / TASK / "test_features.csv", tmp_path / "out.csv")
    assert info.value.code in ("masking.sandbox_failed", "masking.sandbox_output")
    assert expect in str(info.value), str(info.value)
    assert not (tmp_path / "out.csv").exists()


def test_unknown_rerunner_names_the_installed_ones():
    with pytest.raises(AutomdError) as info:
        SandboxedRerun("nope")._target()
    assert info.value.code == "masking.no_rerunner" and "demo" in info.value.fix
    assert available_rerunners()["demo"] == "automd_demo.harness.rerun:rerun_submission"


def test_a_run_whose_code_leaves_the_archive_is_not_staged(toy_run, tmp_path):
    run_dir, data, manifests = toy_run
    secret = tmp_path / "secret.py"
    secret.write_text("secret = 1\n")
    (run_dir / "code" / "v0001" / "leak.py").symlink_to(secret)
    rerun = SandboxedRerun("sandbox_probe:report", data=str(data), manifests=str(manifests))
    (run_dir / "code" / "v0001" / "port.txt").write_text("1")
    out = rerun(run_dir, data / "tasks" / TASK / "test_features.csv", tmp_path / "o.json")
    assert not any("leak.py" in f for f in json.loads(out.read_text())["files"])
