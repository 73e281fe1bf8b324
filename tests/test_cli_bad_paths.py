"""Every ``automd`` command, given a missing input, a file where a directory belongs and an output
it may not write, answers in one line with exit code 2 - never a traceback, never after work.

The commands are enumerated from the Typer application (plugins included), so a new command
without its cases here fails :func:`test_every_command_has_its_bad_path_cases`. The cases run as an
ordinary user (``tests/ordinary_user.py``): root would write into the read-only directory.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import importer_sources as S
import pytest
from cli_tree import command_paths

from automd_analysis.cli import main

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "tests" / "fixtures" / "small"
SCENARIOS = ("missing", "file", "unwritable")

# Placeholders: {A} archive, {D} data, {M} manifests (fixture tasks), {R} the repository's
# manifests (demo tasks), {C} a Codex source, {F} a regular file, {X} a path that does not exist,
# {W} a directory the user may write, {L} a directory the user may not write.
# None: the command writes nothing, so it has no output to refuse.
CASES: dict[str, dict[str, list[str] | None]] = {
    "import": {
        "missing": ["import", "aide", "{X}", "--archive", "{W}/arch", "--agent", "a"],
        "file": ["import", "aide", "{F}", "--archive", "{W}/arch", "--agent", "a"],
        "unwritable": ["import", "codex", "{C}", "--archive", "{L}/arch", "--agent", "a",
                       "--task", S.TASK, "--manifests", "{R}", "--no-progress"],
    },
    "regenerate": {
        "missing": ["regenerate", "{X}", "--out", "{W}/report", "--scores", "{W}/scores"],
        "file": ["regenerate", "{F}", "--out", "{W}/report", "--scores", "{W}/scores"],
        "unwritable": ["regenerate", "{A}", "--data", "{D}", "--manifests", "{M}",
                       "--out", "{L}/report", "--scores", "{W}/scores"],
    },
    "score": {
        "missing": ["score", "{X}", "--out", "{W}/scores"],
        "file": ["score", "{F}", "--out", "{W}/scores"],
        "unwritable": ["score", "{A}", "--data", "{D}", "--manifests", "{M}", "--out",
                       "{L}/scores", "--no-progress"],
    },
    "validate": {
        "missing": ["validate", "demo_rhc_death30", "{F}", "--data", "{X}", "--manifests", "{R}"],
        "file": ["validate", "demo_rhc_death30", "{F}", "--data", "{F}", "--manifests", "{R}"],
        "unwritable": None,
    },
    "tasks": {
        "missing": ["tasks", "--manifests", "{X}"],
        "file": ["tasks", "--manifests", "{F}"],
        "unwritable": ["tasks", "--pin", "fx_cls", "--force", "--data", "{D}",
                       "--manifests", "{L}/manifests"],
    },
    "baselines": {
        "missing": ["baselines", "demo_rhc_death30", "--data", "{X}", "--manifests", "{R}",
                    "--archive", "{W}/baselines"],
        "file": ["baselines", "demo_rhc_death30", "--manifests", "{R}", "--archive", "{F}"],
        "unwritable": ["baselines", "demo_rhc_death30", "--manifests", "{R}", "--archive",
                       "{L}/baselines"],
    },
    "masking make": {
        "missing": ["masking", "make", "demo_sepsis", "--seed", "0", "--data", "{X}",
                    "--manifests", "{R}", "--out", "{W}/masked.csv"],
        "file": ["masking", "make", "demo_sepsis", "--seed", "0", "--data", "{X}",
                 "--manifests", "{R}", "--out", "{F}/masked.csv"],
        "unwritable": ["masking", "make", "demo_sepsis", "--seed", "0", "--data", "{X}",
                       "--manifests", "{R}", "--out", "{L}/masked.csv"],
    },
    "masking compare": {
        "missing": ["masking", "compare", "fx_seq", "{X}", "{X}", "--manifests", "{M}"],
        "file": ["masking", "compare", "fx_seq", "{F}", "{F}", "--manifests", "{F}"],
        "unwritable": None,
    },
    "masking run": {
        "missing": ["masking", "run", "{X}", "--allow-code-execution"],
        "file": ["masking", "run", "{F}", "--allow-code-execution"],
        "unwritable": ["masking", "run", "{A}", "--allow-code-execution", "--data", "{D}",
                       "--manifests", "{M}", "--scores", "{L}/scores"],
    },
    "annotate archive": {
        "missing": ["annotate", "{X}", "--out", "{W}/annotations"],
        "file": ["annotate", "{F}", "--out", "{W}/annotations"],
        "unwritable": ["annotate", "{A}", "--out", "{L}/annotations", "--data", "{D}",
                       "--manifests", "{M}", "--no-progress"],
    },
    "annotate code": {
        "missing": ["annotate", "code", "{X}"],
        "file": ["annotate", "code", "{F}", "--task", "fx_cls", "--manifests", "{F}"],
        "unwritable": None,
    },
    "annotate agreement": {
        "missing": ["annotate", "agreement", "{X}", "--generated", "{W}"],
        "file": ["annotate", "agreement", "{A}", "--generated", "{F}"],
        "unwritable": ["annotate", "agreement", "{A}", "--generated", "{W}", "--out", "{L}/o"],
    },
    "demo archive": {
        "missing": ["demo", "archive", "--archive", "{W}/demo", "--data", "{X}", "--task",
                    "demo_rhc_death30", "--manifests", "{R}"],
        "file": ["demo", "archive", "--archive", "{F}"],
        "unwritable": ["demo", "archive", "--archive", "{L}/demo"],
    },
    "demo data": {
        "missing": ["demo", "data", "--data", "{W}/data", "--manifests", "{X}"],
        "file": ["demo", "data", "--data", "{F}"],
        "unwritable": ["demo", "data", "--data", "{L}/data"],
    },
}  # fmt: skip


def test_every_command_has_its_bad_path_cases():
    commands = command_paths()
    assert len(commands) >= 14
    assert sorted(commands) == sorted(CASES)
    for name, cases in CASES.items():
        assert set(cases) == set(SCENARIOS), name
        assert cases["missing"] is not None and cases["file"] is not None, name


@pytest.fixture(scope="module")
def places():
    from ordinary_user import readable, shared_dir

    base = shared_dir()
    for part in ("archive", "data", "manifests"):
        shutil.copytree(SMALL / part, base / part)
    shutil.copytree(ROOT / "data_manifests", base / "repo_manifests")
    S.build_codex(base / "codex")
    (base / "plain.txt").write_text("not a directory\n")
    locked = base / "locked"
    shutil.copytree(SMALL / "manifests", locked / "manifests")
    readable(base)
    for folder in (locked, locked / "manifests"):
        os.chmod(folder, 0o555)
    yield {
        "A": base / "archive", "D": base / "data", "M": base / "manifests",
        "R": base / "repo_manifests", "C": base / "codex", "F": base / "plain.txt",
        "X": base / "does-not-exist", "L": locked,
    }  # fmt: skip
    os.chmod(locked, 0o755)
    os.chmod(locked / "manifests", 0o755)
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def writable():
    """A new directory the ordinary user may write into."""
    from ordinary_user import shared_dir

    path = shared_dir()
    os.chmod(path, 0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _run(args: list[str], *, as_user: bool, capsys) -> tuple[int, str, str]:
    """``automd ARGS`` through :func:`automd_analysis.cli.main`: in this process, or as an
    ordinary user (permissions apply) in a child."""
    if as_user:
        from ordinary_user import run_cli

        proc = run_cli(*args)
        return proc.returncode, proc.stdout, proc.stderr
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(args)
    out = capsys.readouterr()
    return stop.value.code, out.out, out.err


def _tree(path: Path) -> list[str]:
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*"))


@pytest.mark.parametrize(
    ("command", "scenario"),
    [
        pytest.param(c, s, marks=[pytest.mark.slow] if s == "unwritable" else [])
        for c, cases in CASES.items()
        for s in SCENARIOS
        if cases[s] is not None
    ],
)
def test_bad_path_is_one_line_and_exit_2(places, writable, capsys, command, scenario):
    values = {**places, "W": writable}
    args = [a.format(**{k: str(v) for k, v in values.items()}) for a in CASES[command][scenario]]
    before = _tree(places["A"].parent)
    code, stdout, stderr = _run(args, as_user=scenario == "unwritable", capsys=capsys)
    output = stdout + stderr
    assert "Traceback" not in output, output
    lines = stderr.strip().splitlines()
    assert code == 2, output
    assert len(lines) == 1 and lines[0].startswith("automd: error:"), output
    assert "Fix:" in lines[0] or "fix:" in lines[0], output
    # refused before any work: nothing was written anywhere
    assert _tree(writable) == [], _tree(writable)
    assert _tree(places["A"].parent) == before


def test_validate_with_data_missing_suggests_the_command_with_that_data(places):
    from ordinary_user import run_cli

    args = [
        a.format(**{k: str(v) for k, v in places.items()}) for a in CASES["validate"]["missing"]
    ]
    proc = run_cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert f"`automd demo data --data {places['X']}`" in proc.stderr, proc.stderr


def test_score_names_a_file_given_for_the_archive(places):
    from ordinary_user import run_cli

    proc = run_cli("score", places["F"], "--out", places["X"])
    assert proc.returncode == 2
    assert "is a file, not an archive directory" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_regenerate_refuses_an_unwritable_out_before_scoring(places, writable):
    from ordinary_user import run_cli

    scores = writable / "scores"
    proc = run_cli("regenerate", places["A"], "--data", places["D"], "--manifests", places["M"],
                   "--out", places["L"] / "report", "--scores", scores)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "--out cannot be created in" in proc.stderr and "scoring" not in proc.stderr
    assert not scores.exists()
