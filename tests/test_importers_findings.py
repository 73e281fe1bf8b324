"""Issue 20, importer side: each finding on real runs is fixed, shown on its reproduction
(``tests/fixtures/issue20_findings.py``), fast and without demo data."""

from __future__ import annotations

import json
from pathlib import Path

import importer_sources as S
from fixtures import issue20_findings as F
from importer_sources import check_outcome, try_import

from automd_analysis.archive import open_archive
from automd_analysis.importers import parse_predictions

PATTERN = parse_predictions("node_predictions/{node_id}/submission.csv")


def subm(_quality, _seed):
    return S.SUBMISSION


def imported(fmt, src: Path, dest: Path, **opts):
    report, error = try_import(fmt, src, dest, **opts)
    check_outcome(report, error, dest)
    assert error is None, error
    (run,) = report.runs
    (read,) = open_archive(dest).runs()
    return run, read


def test_f1_python_313_config_names_the_llm(tmp_path):
    exp = F.f1_f3_aide_as_found(tmp_path / "src", subm)
    run, read = imported("aide", tmp_path / "src", tmp_path / "dest")
    assert read.llm == exp["llm"]
    assert not {p.code for p in run.problems} & {"import.yaml_unsafe", "import.yaml_invalid"}


def test_f1_unreadable_config_is_named_in_llm_unknown(tmp_path):
    F.f1_f3_aide_as_found(tmp_path / "src", subm)
    cfg = tmp_path / "src" / "config.yaml"
    cfg.write_text(cfg.read_text().replace("pathlib._local.PosixPath", "os.system"))
    _report, error = try_import("aide", tmp_path / "src", tmp_path / "dest")
    assert error.code == "import.llm_unknown"
    assert "config.yaml could not be read" in error.message and "os.system" in error.message


def test_f2_selected_version_lists_the_torch_code(tmp_path):
    exp = F.f2_f4_f8_ais_torch(tmp_path / "src", subm)
    run, read = imported("aiscientist-v2", tmp_path / "src", tmp_path / "dest",
                         predictions=PATTERN)  # fmt: skip
    v = read.version(read.selected_version)
    assert v.code_files[0] == f"code/{exp['selected']}/experiment_code.py"
    assert read.read_text(v.code_files[0]) == F.TORCH_LOOP


def test_f3_final_file_only_run_is_bound_to_the_best_solution(tmp_path):
    exp = F.f1_f3_aide_as_found(tmp_path / "src", subm)
    run, read = imported("aide", tmp_path / "src", tmp_path / "dest")
    assert read.selected_version == "final"
    (code,) = read.version("final").code_files
    assert read.read_text(code) == exp["code"]
    assert any(exp["best"] in r for r in run.selection.reasons)  # where the code came from


def test_f3_without_best_solution_the_rules_best_node_gives_the_code(tmp_path):
    exp = F.f1_f3_aide_as_found(tmp_path / "src", subm)
    (tmp_path / "src" / "best_solution.py").unlink()
    run, read = imported("aide", tmp_path / "src", tmp_path / "dest")
    assert read.version("final").code_files == ("code/final/runfile.py",)
    assert read.read_text("code/final/runfile.py") == exp["code"]


def test_f4_primary_metric_and_ties_within_12_digits(tmp_path):
    exp = F.f2_f4_f8_ais_torch(tmp_path / "src", subm)
    run, read = imported("aiscientist-v2", tmp_path / "src", tmp_path / "dest",
                         predictions=PATTERN)  # fmt: skip
    assert read.selected_version == exp["selected"] != exp["tie_loser"]
    assert read.reported_val_score == exp["reported"]  # not the mean over three metrics (0.107)
    assert read.version(exp["tie_loser"]).reported_val_score < exp["reported"]


def test_f5_truncated_stage_journal_keeps_the_rest_and_flags_the_run(tmp_path):
    exp = F.f5_ais_truncated(tmp_path / "src", subm)
    run, read = imported("aiscientist-v2", tmp_path / "src", tmp_path / "dest",
                         predictions=PATTERN)  # fmt: skip
    assert [n.node_id for n in run.nodes] == exp["kept"]
    assert read.selected_version == exp["selected"] and read.incomplete
    incomplete = [p for p in run.problems if p.code == "run.incomplete"]
    assert {p.details["stage"] for p in incomplete} == {exp["skipped"], exp["stopped"]}
    assert json.loads((read.dir / "run.json").read_text())["incomplete"] is True


def test_f6_messages_say_what_was_looked_for_and_where(tmp_path):
    F.f1_f3_aide_as_found(tmp_path / "src", subm)
    run, _read = imported("aide", tmp_path / "src", tmp_path / "dest")
    reasons = " ".join(run.selection.reasons)
    assert "no candidate reports a finite metric" not in reasons
    assert (
        "no non-buggy node has a prediction file (9 non-buggy node(s) report a metric)" in reasons
    )
    (tmp_path / "src" / "submission.csv").unlink()
    run, _read = imported("aide", tmp_path / "src", tmp_path / "dest2")
    reasons = " ".join(run.selection.reasons)
    assert "present when the run ended is used" not in reasons
    assert "the run left no final submission file" in reasons
    empty = tmp_path / "empty"
    empty.mkdir()
    for fmt in ("aide", "aiscientist-v2"):
        _report, error = try_import(fmt, empty, tmp_path / "dest3")
        assert error.code == "import.journal_missing" and "looked for" in error.message
        assert str(error.path) == str(empty.resolve()) and " in .." not in str(error)


def test_f7_autoresearch_program_md_src_code_and_file_times(tmp_path):
    exp = F.f7_autoresearch_as_found(tmp_path / "src", subm)
    run, read = imported("autoresearch", tmp_path / "src", tmp_path / "dest", llm="gpt-5")
    assert (read.dir / "logs" / exp["program"]).is_file()
    assert [f.removeprefix("code/final/") for f in read.version("final").code_files] == exp["code"]
    assert (read.ended_at - read.started_at).total_seconds() / 60 == exp["minutes"]


def test_f8_seed_aggregation_version_has_a_step_of_steps(tmp_path):
    exp = F.f2_f4_f8_ais_torch(tmp_path / "src", subm)
    _run, read = imported("aiscientist-v2", tmp_path / "src", tmp_path / "dest",
                          predictions=PATTERN)  # fmt: skip
    steps = {s.step for s in read.steps}
    assert steps == set(range(1, len(read.steps) + 1))
    assert {v.step for v in read.versions} <= steps
    assert exp["agg"] not in {s.node for s in read.steps}
