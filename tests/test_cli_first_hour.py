"""What a new user meets in the first minutes with ``automd``: ``--version``, every form of a
command in its help, a mistyped task id, a directory given as a submission, and Ctrl-C during
``automd score`` (exit 130, the store intact and what was kept said)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import automd_analysis
from automd_analysis.cli import INTERRUPTED, main
from automd_analysis.tasks import closest_task_ids

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "tests" / "fixtures" / "small"
FIXTURE = ["--data", str(SMALL / "data"), "--manifests", str(SMALL / "manifests")]


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(argv)
    out, err = capsys.readouterr()
    return stop.value.code, out, err


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_version_prints_the_package_version_and_exits_0(capsys):
    code, out, err = run(["--version"], capsys)
    assert code == 0, err
    assert out.strip() == (
        f"automd {automd_analysis.__version__} (automd-analysis; Python "
        f"{'.'.join(map(str, sys.version_info[:3]))})"
    )


#: Commands with more than one form, and every form as their help must show it.
FORMS = {
    "annotate": [
        "automd annotate ARCHIVE --out DIR [--jobs N] [OPTIONS]",
        "automd annotate [OPTIONS] COMMAND [ARGS]...",
    ],
    "tasks": ["automd tasks [--json] [--no-verify]", "automd tasks --pin TASK [--force]"],
    "import": [
        "automd import FORMAT SOURCE --archive DEST --agent NAME [OPTIONS]",
        "automd import FORMAT ROOT --layout PATTERN --archive DEST [OPTIONS]",
    ],
}


@pytest.mark.parametrize("command", sorted(FORMS))
def test_help_shows_every_form_of_the_command(command, capsys, monkeypatch):
    code, out, _ = run([command, "--help"], capsys)
    assert code == 0
    text = one_line(out)
    for form in FORMS[command]:
        assert one_line(form) in text, (form, out)


def test_annotate_main_form_is_the_first_usage_line_and_its_command_is_listed(capsys, monkeypatch):
    code, out, _ = run(["annotate", "--help"], capsys)
    assert code == 0
    assert out.startswith("Usage: automd annotate ARCHIVE --out DIR"), out
    commands = out[out.index("Commands:") :]
    assert re.search(r"^\s+archive\s+Annotate every run of ARCHIVE", commands, re.M), commands
    # the main form really is that command: the same options
    code, sub, _ = run(["annotate", "archive", "--help"], capsys)
    assert code == 0 and "--out" in sub and "--jobs" in sub


def test_closest_task_ids_by_similarity():
    known = ["demo_rhc_death30", "demo_support", "demo_support_death30", "seer", "seer_later"]
    assert closest_task_ids("demo_rhc_deat30", known)[0] == "demo_rhc_death30"
    assert closest_task_ids("demo_suport", known)[0] == "demo_support"
    assert closest_task_ids("serr", known) == ["seer"]
    assert closest_task_ids("uci_diabetes", known) == []


def paths_named(message: str) -> list[Path]:
    return [Path(p.rstrip(".,;:)")) for p in re.findall(r"(/[^\s'\"`]+)", message)]


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "fx_clss", "{file}", *FIXTURE],
        ["tasks", "--pin", "fx_clss", *FIXTURE],
        ["annotate", "code", "{file}", "--task", "fx_clss", "--manifests", "{manifests}"],
    ],
    ids=["validate", "tasks --pin", "annotate code --task"],
)
def test_a_mistyped_task_id_suggests_the_closest_and_names_no_missing_file(argv, tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_text("print(1)\n")
    places = {"{file}": str(script), "{manifests}": str(SMALL / "manifests")}
    code, out, err = run([places.get(a, a) for a in argv], capsys)
    assert code == 2, (out, err)
    message = one_line(err)
    assert "no task 'fx_clss'" in message
    assert "did you mean fx_cls " in message  # the closest first
    assert "fx_clss.yaml" not in message
    assert all(p.exists() for p in paths_named(message)), message
    assert "Traceback" not in err and len(err.splitlines()) == 1


def test_a_task_id_like_no_other_lists_the_known_tasks(tmp_path, capsys):
    code, _, err = run(["validate", "uci_diabetes", str(tmp_path / "x.csv"), *FIXTURE], capsys)
    assert code == 2
    assert "known tasks: fx_cls, fx_icu, fx_seq, fx_surv, fx_surv_ext" in err
    assert "did you mean" not in err


def test_a_directory_given_as_submission_exits_2_like_a_missing_file(tmp_path, capsys):
    folder = tmp_path / "run"
    folder.mkdir()
    missing_code, _, missing = run(["validate", "fx_cls", str(tmp_path / "no.csv"), *FIXTURE],
                                   capsys)  # fmt: skip
    code, out, err = run(["validate", "fx_cls", str(folder), *FIXTURE], capsys)
    assert missing_code == code == 2, (out, err)
    assert "INVALID" not in out
    assert "is a directory" in err and str(folder / "submission.csv") in err
    assert len(err.splitlines()) == len(missing.splitlines()) == 1


def test_ctrl_c_during_score_exits_130_keeps_the_store_and_says_what_was_kept(
    tmp_path, capsys, monkeypatch
):
    """In process, deterministically: the second chunk of scoring is interrupted."""
    from automd_analysis.scoring import engine

    out = tmp_path / "store"
    base = ["score", str(SMALL / "archive"), *FIXTURE, "--out", str(out), "--jobs", "1"]
    code, _, err = run([*base, "--bootstrap", "0", "--no-progress"], capsys)
    assert code == 0, err
    published = {p.name: p.read_bytes() for p in out.glob("*.parquet")}
    assert published

    real, calls = engine.run_chunk, []

    def interrupted_chunk(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "run_chunk", interrupted_chunk)
    code, stdout, err = run([*base, "--bootstrap", "20", "--no-progress"], capsys)
    assert code == INTERRUPTED, err
    assert stdout == ""
    message = one_line(err)
    match = re.search(r"(\d+) of the (\d+) files to score were scored and are kept", message)
    assert match, message
    kept, todo = map(int, match.groups())
    assert 0 < kept < todo
    assert "the score store is intact" in message and str(out) in message
    assert f"scores only the remaining {todo - kept}" in message
    assert {p.name: p.read_bytes() for p in out.glob("*.parquet")} == published

    monkeypatch.setattr(engine, "run_chunk", real)  # the next run scores only the remainder
    code, stdout, err = run([*base, "--bootstrap", "20", "--no-progress"], capsys)
    assert code == 0, err
    assert f"{todo - kept} scored now, {kept} from cache" in stdout


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="sends SIGINT to a process group")
def test_ctrl_c_in_a_terminal_stops_the_workers_and_exits_130(tmp_path):
    """A real Ctrl-C (SIGINT to the whole process group) while two worker processes score."""
    out = tmp_path / "store"
    cache = out / "cache"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "automd_analysis",
            "score",
            str(SMALL / "archive"),
            *FIXTURE,
            "--out",
            str(out),
            "--jobs",
            "2",
            "--no-progress",
        ],  # fmt: skip
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if cache.is_dir() and sum(1 for _ in cache.rglob("*.json")) >= 2:
            break
        time.sleep(0.2)
    if proc.poll() is not None:
        shutil.rmtree(out, ignore_errors=True)
        pytest.fail(f"scoring ended before it could be interrupted: {proc.communicate()}")
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == INTERRUPTED, stderr
    assert "Traceback" not in stderr, stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert "the score store is intact" in stderr and "kept in its cache" in stderr
    assert not (out / "scores.parquet").exists()  # nothing half-published
    # the worker processes ended with it (at most dead entries wait to be reaped)
    group = subprocess.run(["ps", "-o", "stat=", "-g", str(proc.pid)], capture_output=True,
                           text=True).stdout.split()  # fmt: skip
    assert all(state.startswith("Z") for state in group), group
