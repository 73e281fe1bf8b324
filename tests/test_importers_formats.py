"""``automd import`` for every format on fixtures written in each agent's own on-disk format.

Each fixture (tests/fixtures/agent_logs.py) states what it was designed to contain; the tests
check the archive the importer writes against that design and against the source files, and
open every archive with the reader, which must report no problem.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fixtures import agent_logs as al
from typer.testing import CliRunner

from automd_analysis.archive import open_archive
from automd_analysis.cli import app

#: Integration tests (CLI, end to end, demo cohorts): `make test-fast` skips them.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
MANIFESTS = ROOT / "data_manifests"
PATTERN = "node_predictions/{node_id}/submission.csv"
runner = CliRunner()


def automd_import(fmt: str, source: Path, archive: Path, *args: str, data: Path):
    """Run ``automd import`` in-process; return (exit code, parsed --json output)."""
    res = runner.invoke(
        app,
        [
            "import",
            fmt,
            str(source),
            "--archive",
            str(archive),
            "--json",
            "--data",
            str(data),
            "--manifests",
            str(MANIFESTS),
            *args,
        ],  # fmt: skip
    )
    out = res.stdout.strip().splitlines()
    return res.exit_code, (json.loads(out[-1]) if out else None)


def clean_archive(archive: Path):
    arch = open_archive(archive)
    runs = arch.runs()
    assert arch.problems == []
    return runs


def utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


# --- AIDE ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def aide_src(tmp_path_factory, demo_root):
    src = tmp_path_factory.mktemp("aide") / "logs" / "0-exp"
    return src, al.build_aide(src, demo_root)


def test_aide_tree_selection_versions_and_steps(aide_src, demo_root, tmp_path):
    src, exp = aide_src
    code, rep = automd_import("aide", src, tmp_path / "a", "--task", exp["task"], "--agent",
                              "aide", "--predictions", PATTERN, data=demo_root)  # fmt: skip
    assert code == 0, rep
    (r,) = rep["runs"]
    assert r["selection"]["rule"] == "best_reported_val_non_faulty"
    assert r["selection"]["selected_version"] == exp["selected"]
    assert r["files_bound"] == len(exp["files"])
    assert r["tokens"] is None and r["tokens_source"] is None
    codes = {p["code"] for p in r["problems"]}
    assert {"import.selection_incomparable", "import.tokens_absent"} <= codes
    inc = next(p for p in r["problems"] if p["code"] == "import.selection_incomparable")
    assert exp["incomparable"][0] in inc["message"]

    (run,) = clean_archive(tmp_path / "a")
    assert (run.agent, run.task, run.llm, run.search) == ("aide", exp["task"], "gpt-4.1", "tree")
    assert run.selected_version == exp["selected"] and run.reported_val_score == 0.83
    assert run.tokens is None
    assert {v.version_id for v in run.versions} == set(exp["files"])
    assert {v.version_id for v in run.versions if v.faulty} == set(exp["faulty"])
    # the tree: parents from node2parent, 1-based steps, every node in steps
    journal = json.loads((src / "journal.json").read_text())
    n2p = journal["node2parent"]
    assert [s.node for s in run.steps] == exp["nodes"]
    assert [s.step for s in run.steps] == [n["step"] + 1 for n in journal["nodes"]]
    assert [s.parent for s in run.steps] == [n2p.get(n) for n in exp["nodes"]]
    assert [s.ok for s in run.steps] == [not n["is_buggy"] for n in journal["nodes"]]
    node2 = journal["nodes"][2]
    v = run.version(exp["selected"])
    assert v.parent == n2p[exp["selected"]] and v.step == 3
    assert v.created_at == utc(node2["ctime"] + node2["exec_time"])
    assert v.stage == "debug"  # its parent is buggy
    assert run.started_at == utc(journal["nodes"][0]["ctime"])
    # files: the selected node's own file, its code, the raw journal untouched
    assert run.submission_path.read_bytes() == (src / exp["files"][exp["selected"]]).read_bytes()
    assert run.read_text(v.code_files[0]) == node2["code"]
    assert (run.dir / "logs" / "journal.json").read_bytes() == (src / "journal.json").read_bytes()
    assert (run.dir / "logs" / "config.yaml").read_bytes() == (src / "config.yaml").read_bytes()
    text = run.read_text("journal.md")
    assert "best_reported_val_non_faulty" in text and exp["incomparable"][0] in text


def test_aide_without_binding_uses_final_file_and_records_it(aide_src, demo_root, tmp_path):
    src, exp = aide_src
    tok = tmp_path / "tokens.json"
    tok.write_text(json.dumps({"prompt": 900, "completion": 100, "total": 1000}))
    code, rep = automd_import("aide", src, tmp_path / "a", "--task", exp["task"], "--agent",
                              "aide", "--tokens", str(tok), "--llm", "other-llm", data=demo_root)  # fmt: skip
    assert code == 0
    (r,) = rep["runs"]
    assert r["selection"]["rule"] == "final_file" and r["versions"] == ["final"]
    assert r["tokens"] == {"prompt": 900, "completion": 100, "total": 1000}
    assert r["tokens_source"] == "user_file"
    assert "import.predictions_not_bound" in {p["code"] for p in r["problems"]}
    (run,) = clean_archive(tmp_path / "a")
    assert run.llm == "other-llm" and run.tokens["source"] == "user_file"
    assert run.submission_path.read_bytes() == (src / "submission.csv").read_bytes()
    assert [s.version for s in run.steps] == [None] * 6  # the tree is kept, no guessed links
    assert run.version("final").parent is None and run.version("final").node is None


# --- AI-Scientist-v2 -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ais_src(tmp_path_factory, demo_root):
    src = tmp_path_factory.mktemp("ais") / "logs" / "0-run"
    return src, al.build_aiscientist(src, demo_root)


def test_aiscientist_latest_stage_metric_rule_when_saved_best_is_buggy(
    ais_src, demo_root, tmp_path
):
    src, exp = ais_src
    code, rep = automd_import("aiscientist-v2", src, tmp_path / "a", "--task", exp["task"],
                              "--agent", "aiscientist", "--predictions", PATTERN, data=demo_root)  # fmt: skip
    assert code == 0, rep
    (r,) = rep["runs"]
    assert r["selection"]["rule"] == "latest_stage_best_node"
    assert r["selection"]["selected_version"] == exp["selected"]
    codes = [p["code"] for p in r["problems"]]
    assert "import.stage_journal_missing" in codes and "import.best_node_buggy" in codes
    (run,) = clean_archive(tmp_path / "a")
    assert run.llm == exp["llm"]  # from config.yaml, read through its PosixPath tags
    ids = al.AIS
    # the stage-2 copy of n3 is one node; the seed-aggregation node is not a development step
    assert [s.node for s in run.steps] == [ids[k] for k in ("n1", "n2", "n3", "n4", "n7", "n5")]
    assert run.version(ids["n3"]).stage == "stage_1_initial_implementation_1_preliminary"
    assert run.version(ids["n4"]).parent == ids["n3"]
    assert run.version(ids["n4"]).reported_val_score == pytest.approx(0.70)
    assert run.version(ids["n3"]).reported_val_score == pytest.approx((0.64 + 0.66) / 2)
    assert run.version(ids["n2"]).faulty
    logs = sorted(p.relative_to(run.dir / "logs").as_posix() for p in (run.dir / "logs").rglob("*")
                  if p.is_file())  # fmt: skip
    assert not [p for p in logs if p.endswith(".pkl")]  # pickles are never read nor copied
    assert "stage_2_baseline_tuning_1_first_attempt/journal.json" in logs
    assert "stage_1_initial_implementation_1_preliminary/best_node_id.txt" in logs


def test_aiscientist_refuses_step_pattern(ais_src, demo_root, tmp_path):
    src, exp = ais_src
    code, rep = automd_import("aiscientist-v2", src, tmp_path / "a", "--task", exp["task"],
                              "--agent", "ais", "--predictions", "p/{step}.csv", data=demo_root)  # fmt: skip
    assert code == 2 and rep["error"]["code"] == "import.predictions_invalid"
    assert not (tmp_path / "a").exists()


# --- Codex -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def codex_src(tmp_path_factory, demo_root):
    src = tmp_path_factory.mktemp("codex") / "run"
    return src, al.build_codex(src, demo_root)


def test_codex_tokens_times_and_snapshot_binding(codex_src, demo_root, tmp_path):
    src, exp = codex_src
    code, rep = automd_import("codex", src, tmp_path / "a", "--task", exp["task"], "--agent",
                              "codex", "--predictions",
                              "submission_history/{step:04d}/submission.csv", data=demo_root)  # fmt: skip
    assert code == 0, rep
    (r,) = rep["runs"]
    assert r["tokens"] == exp["tokens"] and r["tokens_source"] == "agent_log"
    assert r["selection"] == {
        "rule": "final_file",
        "selected_version": exp["selected"],
        "reasons": r["selection"]["reasons"],
    }
    (run,) = clean_archive(tmp_path / "a")
    assert run.started_at.isoformat() == exp["started_at"]
    assert run.ended_at.isoformat() == exp["ended_at"]
    assert run.llm == exp["llm"] and run.search == "linear" and run.steps is None
    assert [v.version_id for v in run.versions] == ["step-0001", "step-0002"]
    assert run.tokens == {**exp["tokens"], "simulated": False, "source": "agent_log"}
    assert run.submission_path.read_bytes() == (src / "submission.csv").read_bytes()
    assert len(list((run.dir / "logs" / "sessions").rglob("rollout-*.jsonl"))) == 2


def test_codex_single_rollout_option_and_final_version(codex_src, demo_root, tmp_path):
    src, exp = codex_src
    one = next(src.glob("sessions/**/rollout-2026-05-01T11*.jsonl"))
    code, rep = automd_import("codex", src, tmp_path / "a", "--task", exp["task"], "--agent",
                              "codex", "--rollout", str(one), data=demo_root)  # fmt: skip
    assert code == 0, rep
    (r,) = rep["runs"]
    assert r["tokens"] == {"prompt": 5000, "completion": 700, "total": 5700}
    assert r["versions"] == ["final"]
    (run,) = clean_archive(tmp_path / "a")
    assert run.version("final").code_files == ("code/final/train.py",)
    assert (run.dir / "logs" / "sessions" / one.name).read_bytes() == one.read_bytes()


# --- autoresearch ----------------------------------------------------------------------------------


def test_autoresearch_results_tsv_steps_and_final_file(demo_root, tmp_path):
    src = tmp_path / "work"
    exp = al.build_autoresearch(src, demo_root)
    code, rep = automd_import("autoresearch", src, tmp_path / "a", "--task", exp["task"],
                              "--agent", "autoresearch", data=demo_root)  # fmt: skip
    assert code == 0, rep
    (run,) = clean_archive(tmp_path / "a")
    assert run.selection_rule == "final_file" and run.selected_version == "final"
    assert len(run.steps) == exp["steps"]
    assert [s.ok for s in run.steps] == [i + 1 != exp["crash_step"] for i in range(exp["steps"])]
    assert run.steps[0].reported_val_score == 0.786498
    assert run.tokens["total"] == 44_000 and run.llm == exp["llm"]
    # the agent's own journal is copied unparsed; journal.md at the top is generated
    assert (run.dir / "logs" / "journal.md").read_bytes() == (src / "journal.md").read_bytes()
    assert "final_file" in run.read_text("journal.md")


# --- FML-bench -------------------------------------------------------------------------------------


def test_fmlbench_earliest_best_step_tokens_and_tree(demo_root, tmp_path):
    src = tmp_path / "results" / "20260601_101500"
    exp = al.build_fmlbench(src, demo_root)
    code, rep = automd_import("fmlbench", src, tmp_path / "a", "--task", exp["task"], "--agent",
                              "fmlbench", "--predictions", "step_predictions/step_{step:04d}.csv",
                              data=demo_root)  # fmt: skip
    assert code == 0, rep
    (r,) = rep["runs"]
    assert r["selection"]["rule"] == "earliest_best_val_metric_step"
    assert r["selection"]["selected_version"] == exp["selected"]
    assert "import.time_zone_assumed" in {p["code"] for p in r["problems"]}
    (run,) = clean_archive(tmp_path / "a")
    summary = json.loads((src / "summary.json").read_text())
    assert run.tokens == {**exp["tokens"], "simulated": False, "source": "agent_log"}
    assert run.started_at == datetime(2026, 6, 1, 10, 15, tzinfo=UTC)
    assert (run.ended_at - run.started_at).total_seconds() == summary["total_duration_seconds"]
    assert [s.ok for s in run.steps] == [s["val_result"]["success"] for s in summary["val_steps"]]
    assert [v.version_id for v in run.versions] == ["step-0001", "step-0002", "step-0004",
                                                    "step-0005"]  # fmt: skip
    assert run.search == "tree" and run.version("step-0004").parent == "step-0002"
    assert run.version("step-0002").tokens == summary["val_steps"][1]["token_usage"]["total_tokens"]
    snap = json.loads((src / "step_snapshots/step_0002_code.json").read_text())
    assert run.read_text("code/step-0002/algorithm.py") == snap["algorithm.py"]


# --- MLE-bench -------------------------------------------------------------------------------------


def test_mlebench_group_maps_runs_to_tasks_and_reps(demo_root, tmp_path):
    src = tmp_path / "runs" / "2026-05-29T08-00-00-GMT_run-group_aide"
    exp = al.build_mlebench(src, demo_root)
    code, rep = automd_import("mlebench", src, tmp_path / "a", "--agent", "mle-aide",
                              data=demo_root)  # fmt: skip
    assert code == 0, rep
    runs = clean_archive(tmp_path / "a")
    assert {(r.task, r.rep) for r in runs} == {(t, e["rep"]) for t, e in exp["runs"].items()}
    for r in runs:
        assert r.selected_version == exp["runs"][r.task]["selected"]
        assert r.llm == exp["llm"]
        assert (r.dir / "logs" / "run.log").is_file()
    # --task keeps one competition; a second import of it with --rep 1 is another repetition
    task = next(iter(exp["runs"]))
    code, rep = automd_import("mlebench", src, tmp_path / "a", "--agent", "mle-aide", "--task",
                              task, "--rep", "1", data=demo_root)  # fmt: skip
    assert code == 0 and [r["run_id"] for r in rep["runs"]] == [f"main/mle-aide/{task}/rep1"]


def test_mlebench_failed_run_is_recorded(demo_root, tmp_path):
    src = tmp_path / "2026-05-29T08-00-00-GMT_run-group_aide"
    exp = al.build_mlebench(src, demo_root, tasks=(al.CLASSIFICATION,))
    meta = json.loads((src / "metadata.json").read_text())
    (run_id,) = meta["runs"]
    meta["runs"][run_id]["success"] = False
    (src / "metadata.json").write_text(json.dumps(meta))
    code, rep = automd_import("mlebench", src, tmp_path / "a", "--agent", "m", data=demo_root)
    assert code == 0
    assert "import.run_failed" in {p["code"] for p in rep["runs"][0]["problems"]}
    assert exp["runs"][al.CLASSIFICATION]["run_id"] == run_id
