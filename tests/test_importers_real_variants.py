"""Issue 33, importer side: what real agent runs still broke, each shown through the CLI on a
faithful minimal source (``tests/importer_sources.py``), fast and without demo data.

Free-text AI-Scientist-v2 sub-stage names, the autoresearch ``git_commit`` variant, durations
bounded by what the log proves, hints that name existing paths for packed sources, hostile-source
verdicts and the messages (``llm_unknown``, cut-short journals, the summary's unit).
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from datetime import datetime
from pathlib import Path

import importer_sources as S
import pytest
from typer.testing import CliRunner

from automd_analysis.archive import NAME_PATTERN, open_archive
from automd_analysis.cli import app
from automd_analysis.importers.labels import display_label
from automd_analysis.importers.problems import FATAL, RECORDED

ROOT = Path(__file__).resolve().parent.parent
MANIFESTS = ROOT / "data_manifests"
runner = CliRunner()


def cli_import(fmt: str, source: Path, dest: Path, *args: str, as_json: bool = True):
    """``automd import`` in-process; ``(exit code, parsed --json object or the text output)``."""
    argv = ["import", fmt, str(source), "--archive", str(dest), "--agent", "agent",
            "--task", S.TASK, "--manifests", str(MANIFESTS), *args]  # fmt: skip
    res = runner.invoke(app, argv + (["--json"] if as_json else []))
    if not as_json:
        return res.exit_code, res.stdout + res.stderr
    lines = res.stdout.strip().splitlines()
    return res.exit_code, (json.loads(lines[-1]) if lines else None)


def imported(fmt: str, source: Path, dest: Path, *args: str):
    """A successful import: its ``--json`` run entry and the run as the archive reader reads it."""
    code, out = cli_import(fmt, source, dest, *args)
    assert code == 0, out
    (run,) = out["runs"]
    arch = open_archive(dest)
    assert arch.problems == []
    assert {p["code"] for p in run["problems"]} <= set(RECORDED)
    (read,) = arch.runs()
    return run, read


def codes(run: dict) -> list[str]:
    return [p["code"] for p in run["problems"]]


# --- 1. AI-Scientist-v2 sub-stage names are free-text labels -------------------------------------


def test_free_text_sub_stage_imports_as_a_label(tmp_path):
    src = S.build_ais_free_text(tmp_path / "0-run")
    run, read = imported("aiscientist-v2", src, tmp_path / "dest")
    assert "import.bad_node_id" not in codes(run) and not run["incomplete"]
    stages = {json.loads((read.dir / "versions" / "final" / "meta.json").read_text()).get("stage")}
    journal = (read.dir / "journal.md").read_text()
    assert f"stage {S.AIS_FREE_TEXT_STAGE})" in journal  # the label, as the agent wrote it
    logs = sorted(p.name for p in (read.dir / "logs").iterdir())
    assert S.AIS_FREE_TEXT_STAGE not in logs  # never an archive path as it is
    (safe,) = [n for n in logs if n.startswith("stage_2_baseline_tuning_2_Hyperparameter_Fine-")]
    assert (read.dir / "logs" / safe / "journal.json").read_bytes() == (
        src / S.AIS_FREE_TEXT_STAGE / "journal.json"
    ).read_bytes()
    assert f"`logs/{safe}/`" in journal
    assert stages == {None}  # the final file has no stage of its own


def test_free_text_stage_label_is_the_version_stage(tmp_path):
    src = S.build_ais_free_text(tmp_path / "0-run")
    node = S.ais_node(2)["id"]
    S.write(src / "node_predictions" / node / "submission.csv", S.SUBMISSION + "\n")
    _run, read = imported("aiscientist-v2", src, tmp_path / "dest", "--predictions",
                          "node_predictions/{node_id}/submission.csv")  # fmt: skip
    meta = json.loads((read.dir / "versions" / node / "meta.json").read_text())
    assert meta["stage"] == S.AIS_FREE_TEXT_STAGE


def test_sub_stage_name_with_a_slash_is_found_in_its_nested_folders(tmp_path):
    src = S.build_ais_free_text(tmp_path / "0-run", sub_name="Learning rate/batch size sweep")
    run, read = imported("aiscientist-v2", src, tmp_path / "dest")
    assert not run["incomplete"], run["problems"]
    assert (
        "stage stage_2_baseline_tuning_2_Learning rate/batch size sweep)"
        in (read.dir / "journal.md").read_text()
    )
    assert run["nodes"] == 5


@pytest.mark.parametrize("name", ["stage_2_x_2_a\nb", "stage_2_x_2_" + "é" * 120, "stage_2_x_2_.."])
def test_odd_sub_stage_names_are_stored_safely(tmp_path, name):
    src = S.build_ais_free_text(tmp_path / "0-run")
    (src / S.AIS_FREE_TEXT_STAGE).rename(src / name)
    _run, read = imported("aiscientist-v2", src, tmp_path / "dest")
    folders = [p.name for p in (read.dir / "logs").iterdir()]
    assert len(folders) == 3  # every sub-stage's logs, each in a folder of a safe name
    assert all(len(f.encode()) <= 200 and NAME_PATTERN.match(f) for f in folders)
    node2 = [ln for ln in (read.dir / "journal.md").read_text().splitlines()
             if f"node {S.ais_node(2)['id']} " in ln]  # fmt: skip
    assert len(node2) == 1 and f"stage {display_label(name)})" in node2[0]


# --- 2. autoresearch: the git_commit variant -------------------------------------------------------


def test_git_commit_variant_maps_statuses_to_ok_and_failed_steps(tmp_path):
    src = S.build_autoresearch(tmp_path / "work", S.RESULTS_TSV_GIT_COMMIT)
    _run, read = imported("autoresearch", src, tmp_path / "dest", "--llm", "gpt-5")
    steps = [(s.step, s.ok, s.reported_val_score) for s in read.steps]
    assert steps == [(1, True, 0.781), (2, False, None), (3, False, 0.779), (4, True, 0.79)]
    journal = (read.dir / "journal.md").read_text()
    assert "226390c FAILED: OOM" in journal and "fc3c800 PARTIAL: hit the time limit" in journal


def test_unknown_status_names_the_row_and_the_statuses(tmp_path):
    tsv = S.RESULTS_TSV_GIT_COMMIT.replace("\tpartial\t", "\tskipped\t")
    code, out = cli_import("autoresearch", S.build_autoresearch(tmp_path / "w", tsv),
                           tmp_path / "dest", "--llm", "m")  # fmt: skip
    assert code == 2 and out["error"]["code"] == "import.malformed"
    assert out["error"]["location"] == "row 4" and "ok, failed, partial" in out["error"]["message"]


# --- 7. messages -----------------------------------------------------------------------------------


def test_llm_unknown_names_the_files_it_looked_in(tmp_path):
    src = S.build_aide(tmp_path / "aide")
    (src / "config.yaml").write_text("agent:\n  code:\n    temp: 0.5\n")
    code, out = cli_import("aide", src, tmp_path / "dest")
    err = out["error"]
    assert code == 2 and err["code"] == "import.llm_unknown"
    assert "agent.code.model of config.yaml" in err["message"] and "journal.json" not in str(err)
    assert err["path"] == "config.yaml"
    (src / "config.yaml").unlink()
    _code, out = cli_import("aide", src, tmp_path / "dest")
    assert "config.yaml, which is absent" in out["error"]["message"]
    ais = S.build_ais(tmp_path / "ais")
    for cfg in ais.glob("*/config.yaml"):
        cfg.write_text("agent: {}\n")
    _code, out = cli_import("aiscientist-v2", ais, tmp_path / "dest")
    assert all(f"{stage}/config.yaml" in out["error"]["message"] for stage in S.AIS_STAGES)


def _cut_short_latest_stage(root: Path) -> Path:
    whole = S.aide_journal([S.ais_node(2), S.ais_node(3, is_seed_agg_node=True)])
    return S.build_ais(root, {
        S.AIS_STAGES[0]: [S.ais_node(0), S.ais_node(1)],
        "stage_3_creative_research_1_first_attempt": [S.ais_node(1)],
        S.AIS_STAGES[1]: whole[: len(whole) // 2],
    })  # fmt: skip


def test_cut_short_stage_journal_says_so_and_claims_nothing_more(tmp_path):
    run, read = imported("aiscientist-v2", _cut_short_latest_stage(tmp_path / "0-run"),
                         tmp_path / "dest")  # fmt: skip
    (invalid,) = [p for p in run["problems"] if p["code"] == "import.stage_journal_invalid"]
    assert "is cut short" in invalid["message"] and "Unterminated" not in invalid["message"]
    incomplete = [p for p in run["problems"] if p["code"] == "run.incomplete"]
    assert [p["details"]["stage"] for p in incomplete] == [
        S.AIS_STAGES[1]
    ]  # not "stopped in stage 3"
    assert "cut short" in incomplete[0]["message"] and read.incomplete


def test_summary_counts_what_run_json_counts(tmp_path):
    src = S.build_ais(tmp_path / "0-run")  # 4 nodes, one a seed-aggregation node
    code, text = cli_import("aiscientist-v2", src, tmp_path / "dest", as_json=False)
    assert code == 0
    (read,) = open_archive(tmp_path / "dest").runs()
    assert len(read.steps) == 3
    assert "3 step(s) in run.json (+1 seed-aggregation node, not a step)" in text
    _code, out = cli_import("aiscientist-v2", src, tmp_path / "d2")
    assert out["runs"][0]["steps"] == 3 and out["runs"][0]["nodes"] == 4


def test_every_variant_is_covered_by_the_fatal_and_recorded_catalogue(tmp_path):
    for i, (fmt, build) in enumerate(S.VARIANTS.values()):
        code, out = cli_import(fmt, build(tmp_path / f"src{i}"), tmp_path / f"d{i}", "--llm", "m")
        assert code == 0, out
        assert {p["code"] for p in out["runs"][0]["problems"]} <= set(RECORDED)
    assert not set(FATAL) & set(RECORDED)


# --- 3. durations bounded by what the log proves ---------------------------------------------------


def _touch(path: Path, minutes: float) -> None:
    os.utime(path, (S.T0 + 60 * minutes, S.T0 + 60 * minutes))


def _autoresearch_without_rollout(root: Path) -> Path:
    src = S.build_autoresearch(root)
    S.write(src / "program.md", "keep or revert\n")
    S.write(src / "data" / "train.csv", "a,b\n1,2\n")
    for rel, minutes in [("program.md", -20_000), ("data/train.csv", -150_000), ("train.py", 0),
                         ("journal.md", 100), ("results.tsv", 170), ("submission.csv", 180)]:  # fmt: skip
        _touch(src / rel, minutes)
    return src


def test_file_times_come_only_from_what_the_run_wrote(tmp_path):
    src = _autoresearch_without_rollout(tmp_path / "work")
    run, read = imported("autoresearch", src, tmp_path / "dest", "--llm", "m")
    assert (read.ended_at - read.started_at).total_seconds() / 60 == 180  # not 150,180
    (flag,) = [p for p in run["problems"] if p["code"] == "import.time_from_mtime"]
    assert "files the run wrote (train.py, submission.csv)" in flag["message"]


def test_file_times_spanning_more_than_the_budget_do_not_time_the_run(tmp_path):
    src = _autoresearch_without_rollout(tmp_path / "work")
    _touch(src / "submission.csv", 150_294)
    run, read = imported("autoresearch", src, tmp_path / "dest", "--llm", "m",
                         "--budget-minutes", "720")  # fmt: skip
    assert read.ended_at.timestamp() == S.T0 + 60 * 150_294
    assert (read.ended_at - read.started_at).total_seconds() / 60 == 720
    (flag,) = [p for p in run["problems"] if p["code"] == "import.time_from_mtime"]
    assert "they span 150,294 min, more than the 720 min budget" in flag["message"]


def test_snapshot_times_stay_inside_the_rollouts_span_and_are_flagged(tmp_path):
    src = S.build_codex(tmp_path / "run")  # the rollout spans 09:00 - 10:00 on 2026-05-01
    for step, when in [(1, "2026-05-01T09:30:00+00:00"), (2, "2027-01-01T00:00:00+00:00")]:
        snap = S.write(src / "submission_history" / f"{step:04d}" / "submission.csv", S.SUBMISSION)
        stamp = datetime.fromisoformat(when).timestamp()
        os.utime(snap, (stamp, stamp))
    run, read = imported("codex", src, tmp_path / "dest", "--predictions",
                         "submission_history/{step:04d}/submission.csv")  # fmt: skip
    created = [read.version(v).created_at.isoformat() for v in ("step-0001", "step-0002")]
    assert created == ["2026-05-01T09:30:00+00:00", "2026-05-01T10:00:00+00:00"]
    (flag,) = [p for p in run["problems"] if p["code"] == "import.time_from_mtime"]
    assert "2 prediction file(s)" in flag["message"] and "1 lay outside it" in flag["message"]


# --- 4. hints name paths that exist ----------------------------------------------------------------


@pytest.mark.parametrize("variant", sorted(S.ALL_SOURCES))
def test_packed_source_hint_names_the_file_and_its_member_folder(tmp_path, variant):
    fmt, build = S.ALL_SOURCES[variant]
    run_dir = build(tmp_path / "rep0" / "logs")
    packed = tmp_path / "rep0.tar.gz"
    with tarfile.open(packed, "w:gz") as tf:
        tf.add(tmp_path / "rep0", arcname="rep0")
    shutil.rmtree(run_dir.parent)
    code, out = cli_import(fmt, packed, tmp_path / "dest", "--llm", "m")
    err = out["error"]
    assert code == 2 and err["code"] == "import.journal_missing", err
    assert err["path"] == str(packed) and Path(err["path"]).is_file()
    assert "1 folder(s) inside rep0.tar.gz" in err["message"] and "rep0/logs" in err["message"]
    assert err["fix"].startswith(f"extract {packed} and pass its folder rep0/logs as SOURCE")
    assert "automd-import-" not in json.dumps(out)  # the deleted temporary folder is never named


# --- 6. hostile sources: the verdict blames the source ---------------------------------------------


@pytest.mark.parametrize("key", ["/".join(["d" * 199] * 30) + "/algo.py", "a/" * 2100 + "b.py"])
def test_snapshot_key_too_long_for_a_path_is_the_sources_fault(tmp_path, key):
    src = S.build_fmlbench(tmp_path / "20260601_101500", snapshots={1: {key: "x = 1\n",
                                                                        "algo.py": "y = 2\n"}})  # fmt: skip
    run, read = imported("fmlbench", src, tmp_path / "dest")
    (skipped,) = [p for p in run["problems"] if p["code"] == "import.code_file_skipped"]
    assert "longer than 1024 bytes" in skipped["message"]
    assert read.read_text("code/step-0001/algo.py") == "y = 2\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name", ["results.tsv", "RESULTS.tsv", "journal.md"])
def test_fifo_loop_log_is_not_a_file(tmp_path, name):
    src = S.build_autoresearch(tmp_path / "work")
    (src / "results.tsv").unlink()
    (src / "journal.md").unlink()
    os.mkfifo(src / name)
    code, out = cli_import("autoresearch", src, tmp_path / "dest", "--llm", "m")
    assert code == 2 and out["error"]["code"] == "import.not_a_file"
    assert out["error"]["path"] == name and not (tmp_path / "dest").exists()


# --- 7. every command takes --data and --manifests (README) ----------------------------------------


def test_every_command_takes_data_and_manifests():
    from cli_tree import command_at, command_paths

    for path in command_paths():
        opts = {o for p in command_at(path).params for o in getattr(p, "opts", [])}
        assert {"--data", "--manifests"} <= opts, path


def test_annotate_code_accepts_data(tmp_path):
    script = S.write(tmp_path / "train.py", "from sklearn.linear_model import LogisticRegression\n")
    res = runner.invoke(app, ["annotate", "code", str(script), "--json", "--data",
                              str(tmp_path / "data"), "--manifests", str(MANIFESTS)])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert str(script.as_posix()) in json.loads(res.stdout)


def test_sub_stage_folder_name_that_is_not_utf8_is_recorded_not_dropped(tmp_path):
    src = S.build_ais_free_text(tmp_path / "0-run")
    odd = os.fsencode(src) + b"/stage_2_baseline_tuning_2_Fine \xff Tuning"
    os.rename(os.fsencode(src / S.AIS_FREE_TEXT_STAGE), odd)
    run, _read = imported("aiscientist-v2", src, tmp_path / "dest")
    assert run["incomplete"] and "import.stage_journal_invalid" in codes(run)
    (inc,) = [p for p in run["problems"] if p["code"] == "run.incomplete"]
    assert "not valid Unicode" in inc["message"] and "\ufffd" in inc["details"]["stage"]
