"""FML-bench studies on FML-bench's own tasks, through the CLI (issue 33 item 2).

``automd import fmlbench RESULTS`` on a results tree written as FML-bench's harness writes it
(tests/fixtures/fmlbench_results.py), without ``--agent``/``--task`` or manifests; ``automd
score`` with no data; the process metrics compared with values computed by hand from FML-bench's
App. E formulas; ``automd regenerate`` giving the process tables.
"""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from fixtures.fmlbench_results import EXPECTED, RUNS, FmlRun, build_results, write_run
from typer.testing import CliRunner

from automd_analysis.analysis.process import process_metrics
from automd_analysis.analysis.store import load_store
from automd_analysis.archive import open_archive
from automd_analysis.cli import app

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def automd(*args) -> tuple[int, dict | None, str]:
    """``automd ARGS --json`` in-process: exit code, the parsed JSON and stderr."""
    res = runner.invoke(app, [*map(str, args), "--json"])
    out = res.stdout.strip().splitlines()
    return res.exit_code, (json.loads(out[-1]) if out else None), res.stderr


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> dict[str, Path]:
    """The results tree imported (no --agent, --task, --manifests) and scored without data."""
    base = tmp_path_factory.mktemp("fml")
    results = build_results(base / "results")
    code, report, err = automd("import", "fmlbench", results, "--archive", base / "archive",
                               "--no-progress")  # fmt: skip
    assert code == 0, (report, err)
    res = runner.invoke(app, ["score", str(base / "archive"), "--out", str(base / "scores"),
                              "--data", str(base / "no-data"), "--bootstrap", "0"])  # fmt: skip
    assert res.exit_code == 0, res.output
    return {"base": base, "results": results, "report": report}


def _summary(run: FmlRun, results: Path) -> dict:
    return json.loads((results / run.agent / run.task / run.folder / "summary.json").read_text())


def _rep(run: FmlRun) -> int:
    """The run's position among its task's run folders in name order."""
    return sorted(r.folder for r in RUNS if (r.agent, r.task) == (run.agent, run.task)).index(
        run.folder
    )


def test_every_run_of_the_tree_is_imported_with_agent_task_and_rep_from_the_path(study):
    report = study["report"]
    assert report["ok"] and report["imported"] == len(RUNS) and report["failed"] == 0
    got = {(s["agent"], s["task"], s["rep"]) for s in report["sources"]}
    assert got == {(a, t, str(r)) for a, t, r in EXPECTED}
    # the tree's other folders are passed over, with the reason
    skipped = {s["source"]: s["why"] for s in report["skipped"]}
    assert set(skipped) == {
        "aide/Causality_causalml/_old_deprecated",
        "ai_scientist_v2/Unlearning_open_unlearning/20260601_235959",
        "ai_scientist_v2/Custom_task/20260605_235959",
    }
    assert "no summary.json" in skipped["ai_scientist_v2/Custom_task/20260605_235959"]
    assert "set aside" in skipped["aide/Causality_causalml/_old_deprecated"]


def test_runs_are_process_only_with_steps_as_versions_times_and_absent_tokens(study):
    arch = open_archive(study["base"] / "archive")
    runs = {(r.agent, r.task, r.rep): r for r in arch.runs()}
    assert arch.problems == [] and len(runs) == len(RUNS)
    for run in RUNS:
        got = runs[(run.agent, run.task, _rep(run))]
        summary = _summary(run, study["results"])
        # the start is the folder's time, with or without the uuid suffix
        assert got.started_at == datetime.strptime(run.folder[:15], "%Y%m%d_%H%M%S").replace(
            tzinfo=UTC
        )
        assert (got.ended_at - got.started_at).total_seconds() == run.total_seconds
        # every step is a version with its code and no prediction file; no submission
        assert [v.step for v in got.versions] == list(range(1, len(run.values) + 1))
        assert all(v.submission_path is None and v.code_files for v in got.versions)
        assert got.submission_path is None
        assert [s.version for s in got.steps] == [v.version_id for v in got.versions]
        assert [s.ok for s in got.steps] == [v is not None for v in run.values]
        # token_usage {} is absent, not 0
        if run.tokens:
            assert got.tokens["total"] == summary["token_usage"]["total_tokens"]
        else:
            assert summary["token_usage"] == {} and got.tokens is None
    assert runs[("aide", "Causality_causalml", 0)].search == "tree"
    assert runs[("aide", "Causality_causalml", 0)].version("step-0004").parent == "step-0003"


def test_archive_declares_each_task_with_metric_direction_baseline_and_range(study):
    meta = yaml.safe_load((study["base"] / "archive" / "archive.yaml").read_text())
    tasks = meta["process_tasks"]
    assert set(tasks) == {r.task for r in RUNS}
    assert tasks["Causality_causalml"] == {
        "title": "Causality_causalml", "metric": "mae_mean", "higher_is_better": False,
        "baseline": 0.8, "transform": "none", "best": 0.0, "worst": "baseline",
        "source": "FML-bench App. A/E",
    }  # fmt: skip
    assert (tasks["Fairness_fairlearn"]["best"], tasks["Fairness_fairlearn"]["worst"]) == (0.0, 1.0)
    assert tasks["Unlearning_open_unlearning"]["transform"] == "neg_log10"
    assert tasks["Custom_task"]["best"] is None and tasks["Custom_task"]["worst"] is None
    problems = {
        (s["task"], p["code"]) for s in study["report"]["sources"] for p in s["runs"][0]["problems"]
    }
    assert ("Custom_task", "import.scale_unknown") in problems
    assert ("Causality_causalml", "import.scale_unknown") not in problems


def test_score_publishes_the_runs_with_nothing_to_score(study):
    store = load_store(study["base"] / "scores")
    assert len(store.runs) == len(RUNS) and store.scores.empty
    assert set(store.runs["task_kind"]) == {"process"}
    tasks = store.tasks.set_index("task")
    assert tasks.loc["Causality_causalml", "worst_value"] == 0.8
    assert not tasks.loc["Causality_causalml", "higher_is_better"]
    # -log10 reverses the forget-quality p-value's direction; the baseline is read the same way
    assert not tasks.loc["Unlearning_open_unlearning", "higher_is_better"]
    assert tasks.loc["Unlearning_open_unlearning", "baseline_value"] == pytest.approx(10.0)
    assert math.isnan(tasks.loc["Custom_task", "best_value"])


def test_process_metrics_equal_app_e_computed_by_hand(study):
    per_run = process_metrics(load_store(study["base"] / "scores"), backend="hashing")
    per_run = per_run.set_index(["agent", "task", "rep"])
    for key, expected in EXPECTED.items():
        row = per_run.loc[key]
        for metric, value in expected.items():
            assert row[metric] == pytest.approx(value, rel=1e-9, abs=1e-12, nan_ok=True), (
                key, metric, row[metric], value)  # fmt: skip
    for run in RUNS:  # token cost: summary token_usage.total_tokens / 1e6; NaN when absent
        total = _summary(run, study["results"])["token_usage"].get("total_tokens")
        want = math.nan if total is None else total / 1e6
        got = per_run.loc[(run.agent, run.task, _rep(run)), "token_cost_m"]
        assert got == pytest.approx(want, nan_ok=True), run
    # nothing is scored: no final score, no val-test gap; the code of every step is embedded
    assert per_run["final_score"].isna().all() and per_run["val_test_gap_abs"].isna().all()
    assert (per_run["n_versions_embedded"] == per_run["n_steps"]).all()
    assert per_run["exploration_reach"].notna().all()
    assert per_run.loc[("aide", "Causality_causalml", 0), "opportunity_density"] > 0


def test_filters_first_rep_and_a_single_run_folder(tmp_path):
    results = build_results(tmp_path / "results")
    code, report, _ = automd("import", "fmlbench", results, "--archive", tmp_path / "a",
                             "--task", "Causality_causalml", "--rep", "3", "--no-progress")  # fmt: skip
    assert code == 0
    assert [(s["agent"], s["rep"]) for s in report["sources"]] == [("aide", "3"), ("aide", "4")]
    code, report, _ = automd("import", "fmlbench", results, "--archive", tmp_path / "b",
                             "--agent", "autoresearch", "--no-progress")  # fmt: skip
    assert code == 0 and {s["agent"] for s in report["sources"]} == {"autoresearch"}
    # one run folder (summary.json in SOURCE) is one run, with --agent and --task as before
    one = results / "aide" / "Causality_causalml" / "20260601_101500"
    code, report, _ = automd("import", "fmlbench", one, "--archive", tmp_path / "c",
                             "--agent", "fml-aide", "--task", "Causality_causalml", "--rep", "2")  # fmt: skip
    assert code == 0
    (run,) = report["runs"]
    assert run["run_id"] == "main/fml-aide/Causality_causalml/rep2"
    assert run["process_task"]["metric"] == "mae_mean" and run["files_bound"] == 0


def test_a_run_that_declares_its_task_otherwise_keeps_the_archive_declaration(tmp_path):
    first = FmlRun("aide", "Causality_causalml", "20260601_101500", 0.80, (0.7, 0.6))
    other = FmlRun("aide", "Causality_causalml", "20260602_101500", 0.75, (0.7,))
    for run in (first, other):
        write_run(tmp_path / "results", run)
    code, report, _ = automd("import", "fmlbench", tmp_path / "results", "--archive",
                             tmp_path / "a", "--no-progress")  # fmt: skip
    assert code == 0
    later = report["sources"][1]["runs"][0]
    assert "import.process_task_kept" in {p["code"] for p in later["problems"]}
    meta = yaml.safe_load((tmp_path / "a" / "archive.yaml").read_text())
    assert meta["process_tasks"]["Causality_causalml"]["baseline"] == 0.8


def test_a_run_without_metric_direction_fails_alone(tmp_path):
    good = write_run(tmp_path / "results", RUNS[2])
    bad = write_run(tmp_path / "results", RUNS[3])
    summary = json.loads((bad / "summary.json").read_text())
    summary["task_config"]["metric_direction"] = ""
    (bad / "summary.json").write_text(json.dumps(summary))
    code, report, _ = automd("import", "fmlbench", tmp_path / "results", "--archive",
                             tmp_path / "a", "--no-progress")  # fmt: skip
    assert code == 1 and report["imported"] == 1
    failed = next(s for s in report["sources"] if not s["ok"])
    assert failed["source"].endswith(bad.name)
    assert failed["error"]["code"] == "import.malformed"
    assert failed["error"]["location"] == "task_config"
    assert open_archive(tmp_path / "a").runs()[0].task == good.parent.name


def test_prediction_files_for_a_task_without_manifest_is_still_task_unknown(tmp_path):
    one = write_run(tmp_path / "results", RUNS[0])
    code, report, err = automd("import", "fmlbench", one, "--archive", tmp_path / "a", "--agent",
                               "aide", "--task", "Causality_causalml", "--predictions",
                               "preds/{step}.csv")  # fmt: skip
    assert code == 2 and report["error"]["code"] == "import.task_unknown"


@pytest.mark.slow
def test_regenerate_gives_the_process_tables(study, tmp_path):
    """``automd regenerate DEST``: notebook 07 publishes one row per run with agent, task,
    best-improvement step and token cost (the score notebooks have no score rows to show)."""
    base = study["base"]
    res = subprocess.run(
        [sys.executable, "-m", "automd_analysis", "regenerate", str(base / "archive"), "--scores",
         str(base / "scores"), "--out", str(tmp_path / "report"), "--data", str(base / "no-data"),
         "--jobs", "1", "--bootstrap", "0", "--embedding-backend", "hashing"],
        capture_output=True, text=True, cwd=ROOT, env=dict(os.environ),
    )  # fmt: skip
    assert "notebook 07_methods_and_development: ok" in res.stderr, res.stderr[-3000:]
    with open(tmp_path / "report" / "tables" / "process_metrics_runs.csv") as fh:
        rows = list(csv.DictReader(fh))
    got = {(r["agent"], r["task"], int(r["rep"])): r for r in rows}
    assert set(got) == set(EXPECTED)
    for key, expected in EXPECTED.items():
        best = float(got[key]["best_improvement_step"])
        assert best == expected["best_improvement_step"]
    assert got[("aide", "Causality_causalml", 1)]["token_cost_m"] == ""  # absent tokens
    assert float(got[("aide", "Causality_causalml", 0)]["token_cost_m"]) > 0
    assert (tmp_path / "report" / "tables" / "process_metrics_table4.csv").is_file()


def test_hostile_tree_entries_are_skipped_or_fail_alone(tmp_path):
    """Symlinks are never followed, names an archive cannot hold are skipped, and a run whose
    summary.json is a link or a FIFO fails alone with its reason code."""
    results = tmp_path / "results"
    good = write_run(results, RUNS[2])
    task_dir = good.parent
    (task_dir / "20990101_000000").symlink_to(good, target_is_directory=True)
    write_run(results, FmlRun("bad agent", "Fairness_fairlearn", "20260601_101500", 0.2, (0.1,)))
    linked = task_dir / "20260602_000000"
    linked.mkdir()
    (linked / "summary.json").symlink_to(good / "summary.json")
    fifo = task_dir / "20260603_000000"
    fifo.mkdir()
    os.mkfifo(fifo / "summary.json")
    code, report, _ = automd("import", "fmlbench", results, "--archive", tmp_path / "a",
                             "--no-progress")  # fmt: skip
    assert code == 1 and report["imported"] == 1
    skipped = {s["source"]: s["why"] for s in report["skipped"]}
    assert skipped["autoresearch/Fairness_fairlearn/20990101_000000"] == "a symlink"
    assert "not allowed" in skipped["bad agent"]
    failed = {s["source"]: s["error"]["code"] for s in report["sources"] if not s["ok"]}
    assert failed == {
        "autoresearch/Fairness_fairlearn/20260602_000000": "import.unsafe_path",
        "autoresearch/Fairness_fairlearn/20260603_000000": "import.not_a_file",
    }
    (run,) = open_archive(tmp_path / "a").runs()
    assert run.rep == 0 and run.task == "Fairness_fairlearn"


def test_a_run_whose_every_step_failed_selects_nothing_and_says_why(tmp_path):
    run = write_run(tmp_path / "results", FmlRun("aide", "Causality_causalml", "20260601_101500",
                                                 0.8, (None, None)))  # fmt: skip
    code, report, _ = automd("import", "fmlbench", run, "--archive", tmp_path / "a", "--agent",
                             "aide", "--task", "Causality_causalml")  # fmt: skip
    assert code == 0
    (got,) = report["runs"]
    assert got["selection"]["selected_version"] is None
    assert got["selection"]["reasons"] == [
        "the run has no finite best_val_metric",
        "a process-only run has no final file: nothing is selected",
    ]
    assert "import.final_file_missing" not in {p["code"] for p in got["problems"]}
    (arch_run,) = open_archive(tmp_path / "a").runs()
    assert [s.ok for s in arch_run.steps] == [False, False] and len(arch_run.versions) == 2
