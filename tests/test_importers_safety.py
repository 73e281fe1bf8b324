"""Hostile and broken sources for ``automd import``: exit 2 with a reason code (or a recorded
problem) and nothing written; atomic, byte-identical, replace-only-when-asked archive updates."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
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
TASK = al.CLASSIFICATION
runner = CliRunner()


def run(fmt: str, source: Path, archive: Path, *args: str, data: Path, task: str | None = TASK):
    argv = ["import", fmt, str(source), "--archive", str(archive), "--agent", "agent", "--json",
            "--data", str(data), "--manifests", str(MANIFESTS), *args]  # fmt: skip
    if task:
        argv += ["--task", task]
    res = runner.invoke(app, argv)
    lines = res.stdout.strip().splitlines()
    return res.exit_code, (json.loads(lines[-1]) if lines else None)


def tree(path: Path) -> dict[str, bytes]:
    """Every file below ``path`` (relative path -> bytes); hidden entries included."""
    if not path.exists():
        return {}
    return {
        p.relative_to(path).as_posix(): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def aide(tmp_path, demo_root):
    src = tmp_path / "logs" / "0-exp"
    al.build_aide(src, demo_root)
    return src


def fails(code_rep, code: str, archive: Path, before: dict | None = None):
    exit_code, rep = code_rep
    assert exit_code == 2, rep
    assert rep["ok"] is False and rep["error"]["code"] == code, rep
    assert rep["error"]["fix"]
    assert tree(archive) == (before or {})
    return rep["error"]


# --- unsafe paths ----------------------------------------------------------------------------------


def test_symlinked_journal_leaving_source_is_refused(aide, tmp_path, demo_root):
    outside = tmp_path / "elsewhere.json"
    outside.write_bytes((aide / "journal.json").read_bytes())
    (aide / "journal.json").unlink()
    (aide / "journal.json").symlink_to(outside)
    err = fails(run("aide", aide, tmp_path / "a", data=demo_root), "import.unsafe_path",
                tmp_path / "a")  # fmt: skip
    assert "journal.json" in err["path"]


def test_symlinked_prediction_file_is_refused(aide, tmp_path, demo_root):
    target = next(aide.glob("node_predictions/*/submission.csv"))
    secret = tmp_path / "secret.csv"
    secret.write_text("patient_id,PredictedProbability\n")
    target.unlink()
    target.symlink_to(secret)
    fails(run("aide", aide, tmp_path / "a", "--predictions", PATTERN, data=demo_root),
          "import.unsafe_path", tmp_path / "a")  # fmt: skip


def test_symlink_in_sessions_is_skipped_and_recorded(tmp_path, demo_root):
    src = tmp_path / "codex"
    exp = al.build_codex(src, demo_root)
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"not": "a rollout"}\n')
    (src / "sessions" / "rollout-evil.jsonl").symlink_to(secret)
    code, rep = run("codex", src, tmp_path / "a", data=demo_root, task=exp["task"])
    assert code == 0
    (r,) = rep["runs"]
    assert "import.symlink_skipped" in {p["code"] for p in r["problems"]}
    assert r["tokens"] == exp["tokens"]  # the linked file was not read
    assert not list((tmp_path / "a").rglob("rollout-evil.jsonl"))


def test_map_file_paths_may_not_leave_source(aide, tmp_path, demo_root):
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps({al.AIDE_TREE[0][0]: "../../../etc/passwd"}))
    fails(run("aide", aide, tmp_path / "a", "--predictions", str(mapping), data=demo_root),
          "import.unsafe_path", tmp_path / "a")  # fmt: skip


@pytest.mark.parametrize("bad_id", ["../../evil", "a/b", ".hidden", "", "x" * 300])
def test_path_traversal_in_node_ids_is_refused(aide, tmp_path, demo_root, bad_id):
    journal = json.loads((aide / "journal.json").read_text())
    journal["nodes"][1]["id"] = bad_id
    (aide / "journal.json").write_text(json.dumps(journal, separators=(",", ":")))
    fails(run("aide", aide, tmp_path / "a", "--predictions", PATTERN, data=demo_root),
          "import.bad_node_id", tmp_path / "a")  # fmt: skip


def test_traversal_in_node2parent_and_best_node_id(aide, tmp_path, demo_root):
    journal = json.loads((aide / "journal.json").read_text())
    journal["node2parent"][al.AIDE_TREE[1][0]] = "../up"
    (aide / "journal.json").write_text(json.dumps(journal))
    fails(run("aide", aide, tmp_path / "a", data=demo_root), "import.bad_node_id", tmp_path / "a")
    src = tmp_path / "ais"
    al.build_aiscientist(src, demo_root)
    next(src.glob("stage_2*/best_node_id.txt")).write_text("../../etc/passwd\n")
    fails(run("aiscientist-v2", src, tmp_path / "b", data=demo_root, task=al.SURVIVAL),
          "import.bad_node_id", tmp_path / "b")  # fmt: skip


# --- size caps, non-regular files ------------------------------------------------------------------


def test_huge_journal_is_refused_before_reading(aide, tmp_path, demo_root):
    with open(aide / "journal.json", "r+b") as fh:  # sparse: 300 MB without writing them
        fh.truncate(300 << 20)
    err = fails(run("aide", aide, tmp_path / "a", data=demo_root), "import.too_large",
                tmp_path / "a")  # fmt: skip
    assert err["details"]["limit"] == 256 << 20


def test_huge_optional_log_is_not_copied_but_recorded(aide, tmp_path, demo_root):
    with open(aide / "tree_plot.html", "wb") as fh:
        fh.truncate(300 << 20)
    code, rep = run("aide", aide, tmp_path / "a", data=demo_root)
    assert code == 0
    assert "import.optional_file_skipped" in {p["code"] for p in rep["runs"][0]["problems"]}
    assert not list((tmp_path / "a").rglob("tree_plot.html"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_instead_of_journal_is_refused(aide, tmp_path, demo_root):
    (aide / "journal.json").unlink()
    os.mkfifo(aide / "journal.json")
    fails(run("aide", aide, tmp_path / "a", data=demo_root), "import.not_a_file", tmp_path / "a")


# --- data, never code ------------------------------------------------------------------------------


class _Boom:
    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def test_unsafe_yaml_tag_is_a_recorded_problem_and_never_executed(aide, tmp_path, demo_root):
    marker = tmp_path / "pwned"
    (aide / "config.yaml").write_text(
        f"agent:\n  code:\n    model: !!python/object/apply:os.system ['touch {marker}']\n"
    )
    # the LLM was in that file: without --llm the import stops (nothing written) ...
    fails(run("aide", aide, tmp_path / "a", data=demo_root), "import.llm_unknown", tmp_path / "a")
    # ... with --llm it goes on and records the unreadable file
    code, rep = run("aide", aide, tmp_path / "a", "--llm", "gpt-4.1", data=demo_root)
    assert code == 0
    probs = [p for p in rep["runs"][0]["problems"] if p["code"] == "import.yaml_unsafe"]
    assert probs and "os.system" in probs[0]["message"]
    assert not marker.exists()
    (r,) = open_archive(tmp_path / "a").runs()
    assert (r.dir / "logs" / "config.yaml").read_bytes() == (aide / "config.yaml").read_bytes()


def test_pickles_in_source_are_never_loaded(tmp_path, demo_root):
    src = tmp_path / "ais"
    al.build_aiscientist(src, demo_root)
    marker = tmp_path / "unpickled"
    for pkl in src.rglob("*.pkl"):
        pkl.write_bytes(pickle.dumps(_Boom(str(marker))))
    code, _ = run("aiscientist-v2", src, tmp_path / "a", "--predictions", PATTERN,
                  data=demo_root, task=al.SURVIVAL)  # fmt: skip
    assert code == 0
    assert not marker.exists()
    assert not list((tmp_path / "a").rglob("*.pkl"))


# --- malformed and missing logs --------------------------------------------------------------------


def test_truncated_journal_is_malformed_with_location(aide, tmp_path, demo_root):
    text = (aide / "journal.json").read_text()
    (aide / "journal.json").write_text(text[: len(text) // 2])
    err = fails(run("aide", aide, tmp_path / "a", data=demo_root), "import.malformed",
                tmp_path / "a")  # fmt: skip
    assert err["location"].startswith("line 1, column")


@pytest.mark.parametrize(
    "mutate",
    [
        lambda j: j.update(nodes={}),
        lambda j: j.update(__version="3"),
        lambda j: j["nodes"][0].update(step="0"),
        lambda j: j["nodes"][0].update(ctime=None),
        lambda j: j["nodes"][0].update(is_buggy="no"),
        lambda j: j["nodes"].append(dict(j["nodes"][0])),  # duplicate id
    ],
)
def test_journal_with_the_wrong_shape_is_malformed(aide, tmp_path, demo_root, mutate):
    journal = json.loads((aide / "journal.json").read_text())
    mutate(journal)
    (aide / "journal.json").write_text(json.dumps(journal))
    fails(run("aide", aide, tmp_path / "a", data=demo_root), "import.malformed", tmp_path / "a")


def test_missing_journals(tmp_path, demo_root):
    (tmp_path / "empty").mkdir()
    for fmt in ("aide", "aiscientist-v2", "fmlbench", "mlebench", "autoresearch"):
        fails(run(fmt, tmp_path / "empty", tmp_path / "a", data=demo_root),
              "import.journal_missing", tmp_path / "a")  # fmt: skip
    fails(run("aide", tmp_path / "nope", tmp_path / "a", data=demo_root), "import.source_missing",
          tmp_path / "a")  # fmt: skip


def test_malformed_rollout_line_names_the_line(tmp_path, demo_root):
    src = tmp_path / "codex"
    exp = al.build_codex(src, demo_root)
    rollout = next(src.glob("sessions/**/rollout-*.jsonl"))
    lines = rollout.read_text().splitlines()
    lines[3] = '{"timestamp": "2026-05-01T09:00:00Z", "type": "bogus", "payload": {}}'
    rollout.write_text("\n".join(lines) + "\n")
    err = fails(run("codex", src, tmp_path / "a", data=demo_root, task=exp["task"]),
                "import.malformed", tmp_path / "a")  # fmt: skip
    assert err["location"] == "line 4"


def test_bad_options(aide, tmp_path, demo_root):
    fails(run("aide", aide, tmp_path / "a", data=demo_root, task="no_such_task"),
          "import.task_unknown", tmp_path / "a")  # fmt: skip
    fails(run("aide", aide, tmp_path / "a", data=demo_root, task=None), "import.task_required",
          tmp_path / "a")  # fmt: skip
    tok = tmp_path / "t.json"
    for bad in ('{"prompt": 1, "completion": 2}', '{"prompt": "1", "completion": 2, "total": 3}',
                '{"prompt": 1, "completion": 2, "total": 3, "cost": 1}', "not json"):  # fmt: skip
        tok.write_text(bad)
        fails(run("aide", aide, tmp_path / "a", "--tokens", str(tok), data=demo_root),
              "import.tokens_invalid", tmp_path / "a")  # fmt: skip
    for bad in ("p/{other}.csv", "p/{node_id!r}.csv", "no_placeholder.csv", "/abs/{node_id}.csv"):
        code, rep = run("aide", aide, tmp_path / "a", "--predictions", bad, data=demo_root)
        assert code == 2 and rep["error"]["code"] in ("import.predictions_invalid",
                                                      "import.unsafe_path")  # fmt: skip
    assert not (tmp_path / "a").exists()


def test_invalid_archive_yaml_in_dest(aide, tmp_path, demo_root):
    dest = tmp_path / "a"
    dest.mkdir()
    (dest / "archive.yaml").write_text("schema_version: 1\nname: x\n")  # no experiments
    before = tree(dest)
    fails(run("aide", aide, dest, data=demo_root), "import.archive_invalid", dest, before)


# --- atomic, byte-identical, --replace -------------------------------------------------------------


def test_reimport_is_byte_identical_and_replace_is_required(aide, tmp_path, demo_root):
    args = ("--predictions", PATTERN)
    first, second = tmp_path / "one" / "archive", tmp_path / "two" / "archive"
    assert run("aide", aide, first, *args, data=demo_root)[0] == 0
    assert run("aide", aide, second, *args, data=demo_root)[0] == 0
    snap = tree(first)
    assert snap == tree(second) and len(snap) > 10
    # the same run again without --replace: exit 2, nothing changes
    err = fails(run("aide", aide, first, *args, data=demo_root), "import.run_exists", first, snap)
    assert "--replace" in err["fix"]
    # with --replace: the same bytes, no staging directory left behind
    code, rep = run("aide", aide, first, *args, "--replace", data=demo_root)
    assert code == 0 and rep["runs"][0]["replaced"] is True
    assert tree(first) == snap
    assert not [p for p in first.iterdir() if p.name.startswith(".")]


def test_failed_import_leaves_an_existing_archive_untouched(aide, tmp_path, demo_root):
    dest = tmp_path / "a"
    assert run("aide", aide, dest, "--predictions", PATTERN, data=demo_root)[0] == 0
    before = tree(dest)
    src = tmp_path / "codex"
    al.build_codex(src, demo_root)
    rollout = next(src.glob("sessions/**/rollout-*.jsonl"))
    rollout.write_text(rollout.read_text() + "{broken\n")
    fails(run("codex", src, dest, "--experiment", "other", data=demo_root, task=al.SEQUENTIAL),
          "import.malformed", dest, before)  # fmt: skip
    assert not [p for p in dest.iterdir() if p.name.startswith(".")]
    assert open_archive(dest).meta.experiments == {"main": "Imported agent runs (automd import)"}


def test_new_experiment_is_declared_in_existing_archive(aide, tmp_path, demo_root):
    dest = tmp_path / "a"
    assert run("aide", aide, dest, data=demo_root)[0] == 0
    assert run("aide", aide, dest, "--experiment", "llm", "--llm", "other", data=demo_root)[0] == 0
    arch = open_archive(dest)
    assert set(arch.meta.experiments) == {"main", "llm"}
    assert [r.run_id for r in arch.runs()] == [f"llm/agent/{TASK}/rep0", f"main/agent/{TASK}/rep0"]
    assert arch.problems == []


def test_real_entry_point_exit_code_and_message(aide, tmp_path):
    (aide / "journal.json").write_text("{")
    proc = subprocess.run(
        [sys.executable, "-m", "automd_analysis", "import", "aide", str(aide), "--archive",
         str(tmp_path / "a"), "--agent", "aide", "--task", TASK, "--manifests", str(MANIFESTS)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "[import.malformed]" in proc.stderr and "journal.json" in proc.stderr
    assert not (tmp_path / "a").exists()


def test_run_json_above_the_reader_limit_is_compacted_then_refused(aide, tmp_path, demo_root,
                                                                   monkeypatch):  # fmt: skip
    from automd_analysis.importers import writer

    assert run("aide", aide, tmp_path / "a", data=demo_root)[0] == 0
    (r,) = open_archive(tmp_path / "a").runs()
    full = (r.dir / "run.json").stat().st_size
    compact = len(json.dumps(json.loads((r.dir / "run.json").read_text()), sort_keys=True,
                             separators=(",", ":"))) + 1  # fmt: skip
    monkeypatch.setattr(writer, "MAX_JSON_BYTES", compact)  # only the compact form fits
    assert run("aide", aide, tmp_path / "b", data=demo_root)[0] == 0
    (r,) = open_archive(tmp_path / "b").runs()
    assert (r.dir / "run.json").stat().st_size == compact < full
    monkeypatch.setattr(writer, "MAX_JSON_BYTES", compact - 1)
    fails(run("aide", aide, tmp_path / "c", data=demo_root), "import.too_large", tmp_path / "c")
