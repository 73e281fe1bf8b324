"""Every class of hostile or broken import input ends in a reason code, never a traceback (issue 21).

One regression test per class and format: deep nesting, out-of-range numbers, text that is not
valid Unicode, odd names and clashes, permissions (as an ordinary user), races, scale, a symlinked
DEST folder, FIFOs, symlinked code files, packed sources. Each goes through
:func:`importer_sources.check_outcome`: a fatal error is a documented fatal code (never
``import.internal_*``) and writes no run; a success reads back cleanly and records only documented
codes. The sources are the minimal ones of ``tests/importer_sources.py`` (no demo data needed).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import threading
import zipfile
from pathlib import Path

import importer_sources as S
import pytest
from importer_sources import TASK, check_outcome, try_import

from automd_analysis.archive import open_archive
from automd_analysis.importers import Limits
from automd_analysis.importers.destination import STAGING_PREFIX, locked_dest

DEEP = 100_000
ROOT = Path(__file__).resolve().parent.parent


def deep_json(depth: int = DEEP) -> str:
    return "[" * depth + "]" * depth


def outcome(fmt, src, dest, **opts) -> set[str]:
    report, error = try_import(fmt, src, dest, **opts)
    return check_outcome(report, error, dest)


def error_of(fmt, src, dest, **opts):
    report, error = try_import(fmt, src, dest, **opts)
    check_outcome(report, error, dest)
    assert error is not None, "expected a fatal error"
    return error


def report_of(fmt, src, dest, **opts):
    report, error = try_import(fmt, src, dest, **opts)
    check_outcome(report, error, dest)
    assert error is None, error
    return report


def codes(report) -> set[str]:
    return {p.code for r in report.runs for p in r.problems}


# --- deep nesting ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "build"),
    [
        ("aide", lambda d: S.build_aide(d, journal='{"nodes":[' + deep_json() + "]}")),
        ("codex", lambda d: S.build_codex(d, S.rollout() + '{"timestamp":' + deep_json() + "}\n")),
        ("autoresearch", lambda d: S.build_autoresearch(d, rollout_text=deep_json() + "\n")),
        ("fmlbench", lambda d: S.build_fmlbench(d, '{"val_steps":' + deep_json() + "}")),
        ("mlebench", lambda d: S.build_mlebench(d, metadata='{"runs":' + deep_json() + "}")),
        ("aiscientist-v2", lambda d: S.build_ais(d, {S.AIS_STAGES[0]: deep_json()})),
    ],
)
def test_deep_nesting_is_refused_before_parsing(tmp_path, fmt, build):
    err = error_of(fmt, build(tmp_path / "src"), tmp_path / "dest", llm="m")
    assert err.code == "import.too_large" and "levels deep" in err.message


def test_deep_stage_journal_skips_only_that_stage(tmp_path):
    src = S.build_ais(tmp_path / "src")
    (src / S.AIS_STAGES[0] / "journal.json").write_text(deep_json())
    report = report_of("aiscientist-v2", src, tmp_path / "dest")
    (run,) = report.runs
    assert {"import.stage_journal_invalid", "run.incomplete"} <= codes(report)
    assert {n.stage for n in run.nodes} == {S.AIS_STAGES[1]}
    (read,) = open_archive(tmp_path / "dest").runs()
    assert read.incomplete is True


def test_deep_yaml_config_is_recorded_not_parsed(tmp_path):
    src = S.build_aide(tmp_path / "src", config="agent: " + deep_json() + "\n")
    err = error_of("aide", src, tmp_path / "a")
    assert err.code == "import.llm_unknown" and "config.yaml could not be read" in err.message
    report = report_of("aide", src, tmp_path / "b", llm="gpt-4.1")
    assert "import.yaml_invalid" in codes(report)


def test_deep_tokens_and_map_files(tmp_path):
    from automd_analysis.importers import SourceError, parse_predictions, read_tokens_file

    bad = tmp_path / "deep.json"
    bad.write_text('{"prompt":' + deep_json() + "}")
    with pytest.raises(SourceError) as tok:
        read_tokens_file(bad)
    assert tok.value.code == "import.tokens_invalid" and "levels deep" in tok.value.message
    with pytest.raises(SourceError) as pred:
        parse_predictions(str(bad))
    assert pred.value.code == "import.predictions_invalid"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_tokens_and_map_files_that_are_fifos_or_name_the_impossible(tmp_path):
    from automd_analysis.importers import SourceError, parse_predictions, read_tokens_file

    fifo = tmp_path / "tokens.json"
    os.mkfifo(fifo)
    for read, code in ((read_tokens_file, "import.tokens_invalid"),
                       (lambda p: parse_predictions(str(p)), "import.predictions_invalid")):  # fmt: skip
        for path in (fifo, tmp_path / ("x" * 300 + ".json")):
            with pytest.raises(SourceError) as exc:
                read(path)
            assert exc.value.code == code
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps({"a": "preds/\udcff.csv"}))
    with pytest.raises(SourceError) as exc:
        parse_predictions(str(mapping))
    assert exc.value.code == "import.unsafe_path"


# --- out-of-range numbers ---------------------------------------------------------------------------


@pytest.mark.parametrize("ctime", ["1e309", "NaN", "-Infinity", "253402300800", "-1", "7.3e9"])
def test_aide_ctime_outside_1970_2200(tmp_path, ctime):
    text = S.aide_journal([S.aide_node(0, ctime=123.0)]).replace(
        '"ctime":123.0', f'"ctime":{ctime}'
    )
    err = error_of("aide", S.build_aide(tmp_path / "src", journal=text), tmp_path / "dest")
    assert err.code == "import.out_of_range" and err.location == "nodes[0].ctime"


@pytest.mark.parametrize("exec_time", ["1e300", "NaN", "-5", "Infinity"])
def test_aide_exec_time_out_of_range_is_dropped(tmp_path, exec_time):
    text = S.aide_journal([S.aide_node(0, exec_time=1.5)]).replace(
        '"exec_time":1.5', f'"exec_time":{exec_time}'
    )
    report = report_of("aide", S.build_aide(tmp_path / "src", journal=text), tmp_path / "dest")
    assert "import.value_dropped" in codes(report)
    (run,) = report.runs
    assert run.nodes[0].created_at == run.started_at  # ctime, without the dropped exec_time


def test_ais_out_of_range_stage_is_skipped_and_all_out_of_range_is_fatal(tmp_path):
    src = S.build_ais(tmp_path / "src")
    stage1 = src / S.AIS_STAGES[0] / "journal.json"
    stage1.write_text(stage1.read_text().replace(f'"ctime":{S.T0}', '"ctime":1e309', 1))
    report = report_of("aiscientist-v2", src, tmp_path / "a")
    assert {"import.stage_journal_invalid", "run.incomplete"} <= codes(report)
    stage4 = src / S.AIS_STAGES[1] / "journal.json"
    stage4.write_text(stage4.read_text().replace('"ctime":', '"ctime":-', 1))
    assert error_of("aiscientist-v2", src, tmp_path / "b").code == "import.out_of_range"


@pytest.mark.parametrize(
    "change",
    [
        {"total_duration_seconds": 1e20},
        {"total_duration_seconds": float("inf")},
        {"val_steps": [S.fml_step(1, step_duration_seconds=-5.0)]},
        {"val_steps": [S.fml_step(1, step_duration_seconds=9e15)] * 1},
        {"token_usage": {"prompt_tokens": 10**30, "completion_tokens": 1, "total_tokens": 2}},
        {
            "val_steps": [
                S.fml_step(
                    1,
                    token_usage={
                        "prompt_tokens": 1,
                        "completion_tokens": 1,
                        "total_tokens": 10**30,
                    },
                )
            ]
        },  # fmt: skip
    ],
)
def test_fmlbench_optional_numbers_out_of_range_are_dropped(tmp_path, change):
    summary = json.dumps(S.fml_summary(**change))  # Infinity as Python writes it
    src = S.build_fmlbench(tmp_path / "20260601_101500", summary)
    report = report_of("fmlbench", src, tmp_path / "dest")
    assert "import.value_dropped" in codes(report)


def test_fmlbench_step_id_above_2_53_is_out_of_range(tmp_path):
    src = S.build_fmlbench(tmp_path / "src", S.fml_summary([S.fml_step(10**20)]))
    err = error_of("fmlbench", src, tmp_path / "dest")
    assert err.code == "import.out_of_range" and err.location == "val_steps[0].step_id"


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00",
                                   "1969-12-31T23:59:59Z", "2300-01-01T00:00:00Z"])  # fmt: skip
def test_codex_timestamps_outside_1970_2200(tmp_path, stamp):
    text = S.rollout() + S.rollout_line(stamp, "event_msg", {"type": "agent_message"}) + "\n"
    err = error_of("codex", S.build_codex(tmp_path / "src", text), tmp_path / "dest")
    assert err.code == "import.out_of_range" and "line 4" in err.path


@pytest.mark.parametrize("fmt", ["codex", "autoresearch"])
def test_rollout_tokens_above_2_53_are_dropped(tmp_path, fmt):
    text = S.rollout(total=10**30)
    src = (S.build_codex(tmp_path / "src", text) if fmt == "codex"
           else S.build_autoresearch(tmp_path / "src", rollout_text=text))  # fmt: skip
    report = report_of(fmt, src, tmp_path / "dest")
    assert "import.value_dropped" in codes(report) and report.runs[0].tokens is None


def test_tokens_file_above_2_53_is_invalid(tmp_path):
    from automd_analysis.importers import SourceError, read_tokens_file

    tok = tmp_path / "tokens.json"
    tok.write_text(json.dumps({"prompt": 10**30, "completion": 1, "total": 10**30}))
    with pytest.raises(SourceError) as exc:
        read_tokens_file(tok)
    assert exc.value.code == "import.tokens_invalid"


@pytest.mark.parametrize("node_id", ["selected", "final"])
def test_reserved_node_ids(tmp_path, node_id):
    src = S.build_aide(tmp_path / "src", [S.aide_node(0, id=node_id)])
    S.write(src / f"node_predictions/{node_id}/submission.csv", S.SUBMISSION)
    from automd_analysis.importers import parse_predictions

    spec = parse_predictions("node_predictions/{node_id}/submission.csv")
    err = error_of("aide", src, tmp_path / "dest", predictions=spec)
    assert err.code == "import.bad_node_id" and "reserved" in err.message


@pytest.mark.parametrize("kind", ["[]", "{}", "1", "null"])
def test_rollout_type_that_is_not_a_string(tmp_path, kind):
    text = S.rollout() + '{"timestamp":"2026-05-01T09:30:00Z","type":' + kind + ',"payload":{}}\n'
    err = error_of("codex", S.build_codex(tmp_path / "src", text), tmp_path / "dest")
    assert err.code == "import.malformed" and err.location == "line 4"


def test_map_keys_with_thousands_of_digits(tmp_path):
    from automd_analysis.importers import parse_predictions

    src = S.build_codex(tmp_path / "src")
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps({"9" * 5000: "submission.csv", "1": "submission.csv"}))
    report = report_of("codex", src, tmp_path / "dest", predictions=parse_predictions(str(mapping)))
    assert [n.log_step for n in report.runs[0].nodes] == [1]


# --- text that is not valid Unicode -------------------------------------------------------------


def test_lone_surrogates_in_aide_code_and_plan(tmp_path):
    node = S.aide_node(0, code="x = '\udcff'\n", plan="plan \ud800")
    report = report_of("aide", S.build_aide(tmp_path / "src", [node]), tmp_path / "dest")
    assert "import.text_repaired" in codes(report)
    (run,) = open_archive(tmp_path / "dest").runs()
    code = (run.dir / f"code/{0:032x}/runfile.py").read_bytes().decode("utf-8")
    assert code == "x = '\ufffd'\n"
    assert "plan \ufffd" in (run.dir / "journal.md").read_bytes().decode("utf-8")


def test_lone_surrogates_in_llm_names_and_snapshots(tmp_path):
    report = report_of("codex", S.build_codex(tmp_path / "c", S.rollout(model="gpt-\udcff")),
                       tmp_path / "d1")  # fmt: skip
    assert report.runs[0].llm == "gpt-\ufffd"
    (run,) = open_archive(tmp_path / "d1").runs()
    assert run.llm == "gpt-\ufffd"
    src = S.build_fmlbench(tmp_path / "f", snapshots={1: {"algo.py": "s = '\udcff'"}})
    report = report_of("fmlbench", src, tmp_path / "d2")
    assert "import.text_repaired" in codes(report)
    (run,) = open_archive(tmp_path / "d2").runs()
    assert run.read_text("code/step-0001/algo.py") == "s = '\ufffd'"


def test_script_that_is_not_utf8(tmp_path):
    src = S.build_codex(tmp_path / "src")
    (src / "train.py").write_bytes(b"x = '\xff\xfe'\n")
    report = report_of("codex", src, tmp_path / "dest")
    assert "import.text_repaired" in codes(report)
    (run,) = open_archive(tmp_path / "dest").runs()
    assert run.read_text("code/final/train.py") == "x = '\ufffd\ufffd'\n"


# --- names: clashes, lengths ------------------------------------------------------------------------


def test_snapshot_names_that_clash_or_are_too_long(tmp_path):
    files = {"a.py": "1", "a.py/b.py": "2", "x" * 300 + ".py": "3", "../../etc/c.py": "4"}
    src = S.build_fmlbench(tmp_path / "src", snapshots={1: files})
    report = report_of("fmlbench", src, tmp_path / "dest")
    skipped = [p for p in report.runs[0].problems if p.code == "import.code_file_skipped"]
    assert len(skipped) == 2
    (run,) = open_archive(tmp_path / "dest").runs()
    assert sorted(p.name for p in (run.dir / "code/step-0001").iterdir()) == ["a.py", "c.py"]


@pytest.mark.parametrize("option", ["agent", "experiment"])
def test_names_too_long_for_the_archive(tmp_path, option):
    err = error_of("aide", S.build_aide(tmp_path / "src"), tmp_path / "dest", **{option: "a" * 300})
    assert err.code == "import.options_invalid"


def test_pattern_rendering_a_name_too_long_binds_nothing(tmp_path):
    from automd_analysis.importers import parse_predictions

    spec = parse_predictions("p/{node_id}" + "x" * 300 + ".csv")
    report = report_of("aide", S.build_aide(tmp_path / "src"), tmp_path / "dest", predictions=spec)
    assert "import.predictions_not_bound" in codes(report)


def test_script_names_that_are_not_plain(tmp_path):
    src = S.build_codex(tmp_path / "src")
    S.write(src / ("y" * 250 + ".py"), "print(2)\n")
    S.write(src / "src" / "model.py", "print(3)\n")
    report = report_of("codex", src, tmp_path / "dest")
    skipped = [p.path for p in report.runs[0].problems if p.code == "import.code_file_skipped"]
    assert skipped == ["y" * 250 + ".py"]
    (run,) = open_archive(tmp_path / "dest").runs()
    assert run.version("final").code_files == ("code/final/train.py", "code/final/src/model.py")


def test_huge_working_directory_keeps_its_top_level_scripts(tmp_path):
    src = S.build_codex(tmp_path / "src")
    for i in range(30):
        S.write(src / "stuff" / f"f{i}.txt", "x")
    for i in range(3):
        S.write(src / "pkg" / f"m{i}.py", "print(1)\n")
    report = report_of("codex", src, tmp_path / "dest", limits=Limits(max_entries=25))
    assert "import.optional_file_skipped" in codes(report)
    (run,) = open_archive(tmp_path / "dest").runs()
    assert run.version("final").code_files == ("code/final/train.py",)


def test_scripts_beyond_the_cap_are_one_problem(tmp_path, monkeypatch):
    from automd_analysis.importers import workdir

    monkeypatch.setattr(workdir, "MAX_SCRIPTS", 2)
    src = S.build_codex(tmp_path / "src")
    for i in range(5):
        S.write(src / f"s{i}.py", "print(1)\n")
    report = report_of("codex", src, tmp_path / "dest")
    (skipped,) = [p for p in report.runs[0].problems if p.code == "import.code_file_skipped"]
    assert "3 more are beyond the first 2 scripts" in skipped.message


# --- permissions, as an ordinary user -----------------------------------------------------------------


@pytest.fixture
def shared(tmp_path):
    from ordinary_user import shared_dir

    path = shared_dir()
    manifests = path / "manifests"
    manifests.mkdir()
    shutil.copy(ROOT / "data_manifests" / f"{TASK}.yaml", manifests)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _as_user(fmt, src: Path, dest: Path, shared: Path, *args):
    from ordinary_user import run_cli

    proc = run_cli("import", fmt, src, "--archive", dest, "--agent", "a", "--task", TASK,
                   "--manifests", shared / "manifests", "--json", *args)  # fmt: skip
    lines = proc.stdout.strip().splitlines()
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(lines[-1]) if lines else None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fmt", "build", "locked"),
    [
        ("aide", S.build_aide, "journal.json"),
        ("codex", S.build_codex, "sessions"),
        ("aide", S.build_aide, "node_predictions"),
        ("fmlbench", S.build_fmlbench, "summary.json"),
        ("mlebench", S.build_mlebench, "metadata.json"),
        ("autoresearch", S.build_autoresearch, "results.tsv"),
    ],
)
def test_unreadable_parts_of_a_source(shared, fmt, build, locked):
    from ordinary_user import readable

    src = build(shared / "src")
    if locked == "node_predictions":
        S.write(src / "node_predictions" / f"{0:032x}" / "submission.csv", S.SUBMISSION)
    readable(shared)
    os.chmod(src / locked, 0)
    extra = ["--predictions", "node_predictions/{node_id}/submission.csv"] * (
        locked == "node_predictions")  # fmt: skip
    code, rep = _as_user(fmt, src, shared / "dest", shared, *extra)
    assert code == 2 and rep["error"]["code"] == "import.unreadable", rep
    assert locked.split("/")[0] in rep["error"]["message"]
    assert not (shared / "dest").exists()


@pytest.mark.slow
def test_unreadable_stage_makes_the_run_incomplete(shared):
    from ordinary_user import readable

    src = S.build_ais(shared / "src")
    readable(shared)
    (shared / "out").mkdir(mode=0o777)
    os.chmod(shared / "out", 0o777)
    os.chmod(src / S.AIS_STAGES[0], 0)
    code, rep = _as_user("aiscientist-v2", src, shared / "out" / "dest", shared)
    assert code == 0, rep
    (run,) = rep["runs"]
    got = {p["code"] for p in run["problems"]}
    assert run["incomplete"] and {"import.stage_journal_invalid", "run.incomplete"} <= got


@pytest.mark.slow
def test_unreadable_tokens_and_map_files(shared):
    from ordinary_user import readable

    src = S.build_aide(shared / "src")
    (shared / "tokens.json").write_text('{"prompt": 1, "completion": 1, "total": 2}')
    (shared / "map.json").write_text('{"final": "submission.csv"}')
    readable(shared)
    for option, name, code in (("--tokens", "tokens.json", "import.tokens_invalid"),
                               ("--predictions", "map.json", "import.predictions_invalid")):  # fmt: skip
        os.chmod(shared / name, 0)
        rc, rep = _as_user("aide", src, shared / "dest", shared, option, str(shared / name))
        assert rc == 2 and rep["error"]["code"] == code, rep
        assert "Permission denied" in rep["error"]["message"]


@pytest.mark.slow
def test_read_only_dest_and_dest_parent(shared):
    from ordinary_user import readable

    src = S.build_aide(shared / "src")
    (shared / "ro").mkdir()
    (shared / "ro" / "dest").mkdir()
    readable(shared)
    for dest in (shared / "ro" / "dest", shared / "ro" / "new"):
        code, rep = _as_user("aide", src, dest, shared)
        assert code == 2 and rep["error"]["code"] == "import.dest_unwritable", rep
    assert list((shared / "ro").iterdir()) == [shared / "ro" / "dest"]
    assert list((shared / "ro" / "dest").iterdir()) == []


# --- races and kills ---------------------------------------------------------------------------------


def test_two_concurrent_imports_of_one_run(tmp_path):
    src = S.build_aide(tmp_path / "src")
    results = []
    barrier = threading.Barrier(2)

    def one():
        barrier.wait()
        results.append(try_import("aide", src, tmp_path / "dest"))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    errors = sorted(str(e.code) for _r, e in results if e is not None)
    assert errors == ["import.run_exists"]
    (run,) = open_archive(tmp_path / "dest").runs()
    assert not list((tmp_path / "dest").glob(f"{STAGING_PREFIX}*"))


def test_replace_beside_another_import(tmp_path):
    src = S.build_aide(tmp_path / "src")
    assert try_import("aide", src, tmp_path / "dest")[1] is None
    results = []
    barrier = threading.Barrier(2)

    def one(replace_it):
        barrier.wait()
        results.append(try_import("aide", src, tmp_path / "dest", replace=replace_it))

    threads = [threading.Thread(target=one, args=(r,)) for r in (True, False)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(str(e.code) for _r, e in results if e is not None) == ["import.run_exists"]
    assert len(open_archive(tmp_path / "dest").runs()) == 1


def test_fallback_without_exchange_restores_the_old_run_after_a_kill(tmp_path):
    src = S.build_aide(tmp_path / "src")
    dest = tmp_path / "dest"
    assert try_import("aide", src, dest)[1] is None
    (old,) = open_archive(dest).runs()
    before = (old.dir / "run.json").read_bytes()
    # what a kill between the two renames leaves: the run moved aside, with its intent record
    staging = dest / f"{STAGING_PREFIX}killed"
    staging.mkdir()
    os.rename(old.dir, staging / ".old-0")
    target = ["main", "agent", TASK, "rep0"]
    (staging / "intent.json").write_text(json.dumps([{"target": target, "old": ".old-0"}]))
    assert open_archive(dest).runs() == []
    with locked_dest(dest):
        pass  # taking the lock recovers
    (back,) = open_archive(dest).runs()
    assert (back.dir / "run.json").read_bytes() == before
    assert not list(dest.glob(f"{STAGING_PREFIX}*"))


def test_fallback_without_exchange_replaces(tmp_path, monkeypatch):
    from automd_analysis.importers import destination

    src = S.build_aide(tmp_path / "src")
    dest = tmp_path / "dest"
    assert try_import("aide", src, dest)[1] is None
    monkeypatch.setattr(destination, "_renameat2", lambda *a: False)
    report, error = try_import("aide", src, dest, replace=True, llm="other")
    assert error is None and report.written[0].replaced
    (run,) = open_archive(dest).runs()
    assert run.llm == "other" and not list(dest.glob(f"{STAGING_PREFIX}*"))


def test_stale_staging_directories_are_removed(tmp_path):
    dest = tmp_path / "dest"
    assert try_import("aide", S.build_aide(tmp_path / "src"), dest)[1] is None
    (dest / f"{STAGING_PREFIX}stale" / "main").mkdir(parents=True)
    assert try_import("aide", S.build_aide(tmp_path / "src"), dest, rep=1)[1] is None
    assert not list(dest.glob(f"{STAGING_PREFIX}*"))


# --- scale ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limit", "fmt", "build"),
    [
        ({"max_values": 50}, "aide", lambda d: S.build_aide(d, [S.aide_node(i) for i in range(5)])),
        ({"max_nodes": 3}, "aide", lambda d: S.build_aide(d, [S.aide_node(i) for i in range(5)])),
        ({"max_nodes": 3}, "fmlbench",
         lambda d: S.build_fmlbench(d, S.fml_summary([S.fml_step(i) for i in range(1, 6)]))),
        ({"max_lines": 2}, "codex", S.build_codex),
        ({"run_log_bytes": 100}, "codex", S.build_codex),
        ({"max_nodes": 1}, "autoresearch", S.build_autoresearch),
        ({"output_bytes": 10}, "aide", S.build_aide),
    ],
)  # fmt: skip
def test_sources_over_a_limit_are_refused_before_work(tmp_path, limit, fmt, build):
    err = error_of(fmt, build(tmp_path / "src"), tmp_path / "dest", limits=Limits(**limit))
    assert err.code == "import.too_large"
    assert not (tmp_path / "dest").exists()


def test_run_json_too_large_is_refused_before_dest_is_touched(tmp_path, monkeypatch):
    from automd_analysis.importers import writer

    monkeypatch.setattr(writer, "MAX_JSON_BYTES", 200)
    err = error_of("aide", S.build_aide(tmp_path / "src"), tmp_path / "dest")
    assert err.code == "import.too_large" and not (tmp_path / "dest").exists()


# --- escape through DEST, FIFOs, symlinked code --------------------------------------------------


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_symlinked_folder_on_the_way_to_the_run(tmp_path, depth):
    dest, outside = tmp_path / "dest", tmp_path / "outside"
    assert try_import("aide", S.build_aide(tmp_path / "src"), dest, rep=1)[1] is None
    parts = ["main", "agent", TASK, "rep0"][:depth]
    link = dest.joinpath(*parts)
    if link.exists():
        shutil.move(str(link), str(outside))
    else:
        outside.mkdir()
    link.symlink_to(outside, target_is_directory=True)
    before = sorted(p.relative_to(outside) for p in outside.rglob("*"))
    _report, error = try_import("aide", S.build_aide(tmp_path / "src"), dest, replace=True)
    assert error is not None and error.code == "import.dest_unsafe", error
    assert sorted(p.relative_to(outside) for p in outside.rglob("*")) == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("where", ["rollout", "prediction", "script"])
def test_fifos(tmp_path, where):
    from automd_analysis.importers import parse_predictions

    src = S.build_codex(tmp_path / "src")
    opts = {}
    if where == "rollout":
        os.mkfifo(src / "sessions/2026/05/01/rollout-2026-05-01T11-00-00-z.jsonl")
    elif where == "prediction":
        (src / "snap").mkdir()
        os.mkfifo(src / "snap/0001.csv")
        S.write(src / "snap/0002.csv", S.SUBMISSION)
        opts["predictions"] = parse_predictions("snap/{step:04d}.csv")
    else:
        os.mkfifo(src / "helper.py")
    report, error = try_import("codex", src, tmp_path / "dest", **opts)
    got = check_outcome(report, error, tmp_path / "dest")
    if where == "script":
        assert "import.code_file_skipped" in got
    else:
        assert got == {"import.not_a_file"}


def test_symlinked_code_file_is_recorded_and_not_archived(tmp_path):
    src = S.build_codex(tmp_path / "src")
    (src / "secret.py").symlink_to("/etc/passwd")
    report = report_of("codex", src, tmp_path / "dest")
    skipped = [p for p in report.runs[0].problems if p.code == "import.code_file_skipped"]
    assert skipped and skipped[0].path == "secret.py" and "symlink" in skipped[0].message
    (run,) = open_archive(tmp_path / "dest").runs()
    assert run.version("final").code_files == ("code/final/train.py",)
    assert not list(run.dir.rglob("secret.py"))


# --- packed sources ---------------------------------------------------------------------------------


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(S.T0)
    return info, data


def test_packed_source_is_read_and_keeps_file_times(tmp_path):
    src = S.build_autoresearch(tmp_path / "rep0")
    packed = tmp_path / "rep0.tar.gz"
    with tarfile.open(packed, "w:gz") as tf:
        tf.add(src, arcname="rep0")
    report = report_of("autoresearch", packed, tmp_path / "dest", llm="m")
    (run,) = report.runs
    assert run.source_name == "rep0"
    assert abs(run.started_at.timestamp() - src.stat().st_mtime) < 5  # the files' own times
    zipped = tmp_path / "rep0.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        for p in sorted(src.rglob("*")):
            zf.write(p, p.relative_to(src).as_posix())
    report = report_of("autoresearch", zipped, tmp_path / "dest2", llm="m")
    assert report.runs[0].source_name == "rep0"


def _link(name: str, target: str, kind=tarfile.SYMTYPE) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


@pytest.mark.parametrize(
    "members",
    [
        [_file("../evil.json", b"{}")],
        [_file("/abs/journal.json", b"{}")],
        [_file("ok/journal.json", b"{}"), _link("ok/config.yaml", "/etc/passwd")],
        [_file("ok/journal.json", b"{}"), _link("ok/x", "ok/journal.json", tarfile.LNKTYPE)],
        [_file("a", b"1"), _file("a/b", b"2")],
        [_file("a", b"1"), _file("a", b"2")],
        [_file("x" * 300, b"1")],
    ],
)
def test_packed_source_members_that_are_refused(tmp_path, members):
    packed = _tar(tmp_path / "run.tar.gz", members)
    err = error_of("aide", packed, tmp_path / "dest")
    assert err.code == "import.packed_unsafe" and "extract it first" in err.fix


def test_packed_source_caps_and_corruption(tmp_path):
    many = _tar(tmp_path / "many.tar.gz", [_file(f"f{i}", b"x") for i in range(20)])
    err = error_of("aide", many, tmp_path / "d1", limits=Limits(max_entries=10))
    assert err.code == "import.packed_unsafe" and "members" in err.message
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("journal.json", b"0" * 200_000)
    err = error_of("aide", bomb, tmp_path / "d2", limits=Limits(packed_bytes=100_000))
    assert err.code == "import.packed_unsafe"
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    assert error_of("aide", broken, tmp_path / "d3").code == "import.packed_unsafe"


# --- SOURCE one level off ----------------------------------------------------------------------------


@pytest.mark.parametrize("variant", sorted(S.ALL_SOURCES))
@pytest.mark.parametrize("off", ["above", "below"])
def test_source_one_level_off_names_the_log_directory(tmp_path, variant, off):
    fmt, build = S.ALL_SOURCES[variant]
    run_dir = build(tmp_path / "study" / "run1")
    if off == "above":
        given = tmp_path / "study"
    else:
        given = run_dir / "extra"
        given.mkdir()
    err = error_of(fmt, given, tmp_path / "dest", llm="m")
    assert err.code == "import.journal_missing"
    assert err.details["log_directories"] == [str(run_dir.resolve())]
    assert str(run_dir.resolve()) in err.fix or "one of them" in err.fix


@pytest.mark.slow
def test_kill_9_during_replace_never_leaves_dest_without_the_run(tmp_path):
    import random
    import signal
    import subprocess
    import sys
    import time

    src = S.build_aide(tmp_path / "src", [S.aide_node(i) for i in range(40)])
    dest = tmp_path / "dest"
    assert try_import("aide", src, dest, llm="llm-0")[1] is None
    base = [sys.executable, "-m", "automd_analysis", "import", "aide", str(src), "--archive",
            str(dest), "--agent", "agent", "--task", TASK, "--replace"]  # fmt: skip
    rng = random.Random(0)
    for i in range(1, 13):
        proc = subprocess.Popen([*base, "--llm", f"llm-{i}"], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        time.sleep(rng.uniform(0.3, 4.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        arch = open_archive(dest)
        (run,) = arch.runs()
        assert arch.problems == [] and run.submission_path is not None
        assert run.llm in {f"llm-{k}" for k in range(i + 1)}  # the old run or a complete new one
    assert try_import("aide", src, dest, replace=True, llm="last")[1] is None
    assert open_archive(dest).runs()[0].llm == "last"
    assert not list(dest.glob(f"{STAGING_PREFIX}*"))  # what the kills left was cleaned up


@pytest.mark.slow
def test_five_million_node_journal_is_refused_in_bounded_memory(tmp_path):
    """The memory bound is enforced with ``RLIMIT_DATA`` on the child (1 GiB of heap); the time
    is measured in bench/bench_import_limits.py, not here."""
    import resource
    import subprocess
    import sys

    src = tmp_path / "src"
    with open(S.write(src / "submission.csv", S.SUBMISSION).parent / "journal.json", "w") as fh:
        fh.write('{"nodes":[')
        for start in range(0, 5_000_000, 100_000):
            fh.write(("," if start else "") + ",".join(
                f'{{"id":"{i:08x}","step":{i},"ctime":1.78e9}}'
                for i in range(start, start + 100_000)))  # fmt: skip
        fh.write('],"node2parent":{},"__version":"2"}')
    assert (src / "journal.json").stat().st_size < 256 << 20

    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (1 << 30, 1 << 30))

    proc = subprocess.run(
        [sys.executable, "-m", "automd_analysis", "import", "aide", str(src), "--archive",
         str(tmp_path / "dest"), "--agent", "a", "--task", TASK, "--llm", "m", "--json"],
        capture_output=True, text=True, cwd=ROOT, preexec_fn=limit,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["error"]["code"] == "import.too_large"
    assert not (tmp_path / "dest").exists()
