"""Archive reader: the committed fixture, every schema error, mismatches and dangling references."""

from __future__ import annotations

import importlib.util
import json
import sys
from datetime import UTC, timedelta
from pathlib import Path

import pytest

from automd_analysis.archive import MAX_JSON_BYTES, open_archive
from automd_analysis.errors import ArchiveError

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SMALL = FIXTURES / "small"


def _kit():
    name = "automd_test_fixture_kit"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, FIXTURES / "make_small_fixture.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


kit = _kit()


@pytest.fixture
def arch(tmp_path: Path) -> Path:
    """A one-run archive: main/alpha/t1/rep0 with two versions."""
    root = tmp_path / "arch"
    kit.write_archive_yaml(root, experiments={"main": "main experiment"})
    run_dir = kit.write_run(root, "main", "alpha", "t1", 0)
    kit.write_version(run_dir, "v1", kit.T0 + timedelta(minutes=5), 1, b"id,p\n1,0.5\n")
    kit.write_version(run_dir, "v2", kit.T0 + timedelta(minutes=9), 2, b"id,p\n1,0.6\n")
    (run_dir / "submission.csv").write_bytes(b"id,p\n1,0.6\n")
    (run_dir / "code").mkdir()
    (run_dir / "code" / "train.py").write_text("a = 1\nb = 2\nc = 3\n")
    return root


def _run_dir(root: Path) -> Path:
    return root / "main" / "alpha" / "t1" / "rep0"


def _rewrite(path: Path, **changes) -> None:
    doc = json.loads(path.read_text())
    for k, v in changes.items():
        if v is _DELETE:
            doc.pop(k)
        else:
            doc[k] = v
    path.write_text(json.dumps(doc))


_DELETE = object()


def _only_problem(root: Path) -> ArchiveError:
    archive = open_archive(root)
    archive.runs()
    assert len(archive.problems) == 1, [str(p) for p in archive.problems]
    return archive.problems[0]


# ---------------------------------------------------------------------------------------------
# the committed fixture
# ---------------------------------------------------------------------------------------------


def test_fixture_archive_reads_cleanly():
    archive = open_archive(SMALL / "archive")
    runs = archive.runs()
    expected = json.loads((SMALL / "expected.json").read_text())
    assert archive.problems == []
    assert sorted(r.run_id for r in runs) == sorted(expected)
    assert [r.key for r in runs] == sorted(r.key for r in runs)
    assert archive.meta.name == "small"
    assert archive.meta.roles == {"main": "main", "objectives": "objectives", "llm": "llm"}
    baseline = [r for r in runs if r.agent == "baseline"]
    assert baseline and all(r.reference and r.search == "none" for r in baseline)
    assert {r.rep for r in baseline} == {0, 1, 2, 3, 4}
    assert not any(r.reference for r in runs if r.agent != "baseline")
    for r in runs:
        assert r.started_at.tzinfo is UTC and r.ended_at >= r.started_at
        assert [(v.created_at, v.version_id) for v in r.versions] == sorted(
            (v.created_at, v.version_id) for v in r.versions
        )
        assert set(expected[r.run_id]) == {"selected"} | {v.version_id for v in r.versions}
        assert (r.submission_path is None) == (expected[r.run_id]["selected"] == "missing")


def test_fixture_tree_agent_has_parents_and_failed_steps():
    run = open_archive(SMALL / "archive").run("main/beta/fx_icu/rep0")
    assert run.search == "tree"
    parents = {v.version_id: v.parent for v in run.versions}
    assert parents == {"n1": None, "n2": "n1", "n3": "n1", "n4": "n2"}
    assert run.steps is not None and len(run.steps) == 8
    failed = [s for s in run.steps if not s.ok]
    assert all(s.version is None and s.parent is not None for s in failed)
    assert run.selected_version == "n3"
    # version pairs follow paper App. H: n2 is invalid by design, so n3 and n4 (whose parent n2
    # saved only an invalid file) both pair with their nearest valid ancestor n1
    design = json.loads((SMALL / "expected.json").read_text())[run.run_id]
    assert design["n2"] != "valid" and design["n1"] == design["n3"] == design["n4"] == "valid"
    assert run.annotations is not None
    assert [(p.earlier, p.later) for p in run.annotations.pairs] == [("n1", "n3"), ("n1", "n4")]


def test_fixture_objectives_and_llm_experiments():
    runs = open_archive(SMALL / "archive").runs()
    objectives = {r.objective for r in runs if r.experiment == "objectives"}
    assert objectives == {"brier", "auroc+ece"}
    assert all(r.objective is None for r in runs if r.experiment == "main")
    assert {r.llm for r in runs if r.experiment == "llm"} == {"llm-b", "llm-c"}


def test_run_lookup_and_unknown_run(arch):
    archive = open_archive(arch)
    run = archive.run("main/alpha/t1/rep0")
    assert run.version("v2").step == 2
    with pytest.raises(KeyError):
        run.version("v9")
    with pytest.raises(ArchiveError) as exc:
        archive.run("main/alpha/t1/rep7")
    assert exc.value.code == "archive.run_unknown"


# ---------------------------------------------------------------------------------------------
# archive.yaml
# ---------------------------------------------------------------------------------------------


def test_missing_archive_dir_and_yaml(tmp_path):
    with pytest.raises(ArchiveError) as exc:
        open_archive(tmp_path / "nope")
    assert exc.value.code == "archive.missing" and exc.value.fix
    with pytest.raises(ArchiveError) as exc:
        open_archive(tmp_path)
    assert exc.value.code == "archive.missing"
    assert exc.value.path == tmp_path.resolve() / "archive.yaml"


@pytest.mark.parametrize(
    ("text", "code", "location"),
    [
        ("name: [unclosed", "archive.unreadable", None),
        ("- a\n- b\n", "archive.invalid", None),
        (
            "schema_version: 2\nname: x\nexperiments: {main: m}\n",
            "archive.invalid",
            "schema_version",
        ),
        ("schema_version: 1\nname: x\n", "archive.invalid", "experiments"),
        (
            "schema_version: 1\nname: 'bad name'\nexperiments: {main: m}\n",
            "archive.invalid",
            "name",
        ),
        (
            "schema_version: 1\nname: x\nexperiments: {main: m}\nextra: 1\n",
            "archive.invalid",
            "extra",
        ),
        (
            "schema_version: 1\nname: x\nexperiments: {main: m}\nroles: {main: other}\n",
            "archive.invalid",
            "roles.main",
        ),
        ("schema_version: 1\nname: x\nexperiments: {'../x': m}\n", "archive.bad_name", None),
        (
            "schema_version: 1\nname: x\nexperiments: {main: m}\n"
            "process_tasks: {t: {metric: m, higher_is_better: maybe}}\n",
            "archive.invalid",
            "process_tasks.t.higher_is_better",
        ),
        (
            "schema_version: 1\nname: x\nexperiments: {main: m}\n"
            "process_tasks: {t: {metric: m, higher_is_better: true, worst: .nan}}\n",
            "archive.invalid",
            "process_tasks.t.worst.float",
        ),
        (
            "schema_version: 1\nname: x\nexperiments: {main: m}\n"
            "process_tasks: {t: {id: u, metric: m, higher_is_better: true}}\n",
            "archive.invalid",
            "process_tasks.t",
        ),
        (
            "schema_version: 1\nname: x\nexperiments: {main: m}\n"
            "process_tasks: {'../t': {metric: m, higher_is_better: true}}\n",
            "archive.bad_name",
            None,
        ),
        ("!!python/object/apply:os.system ['true']\n", "archive.unreadable", None),
    ],
)
def test_bad_archive_yaml(tmp_path, text, code, location):
    (tmp_path / "archive.yaml").write_text(text)
    with pytest.raises(ArchiveError) as exc:
        open_archive(tmp_path)
    assert exc.value.code == code
    if location:
        assert exc.value.location == location
    assert "archive.yaml" in str(exc.value.path)


def test_oversized_archive_yaml(tmp_path):
    (tmp_path / "archive.yaml").write_text("# " + "x" * MAX_JSON_BYTES)
    with pytest.raises(ArchiveError) as exc:
        open_archive(tmp_path)
    assert exc.value.code == "archive.too_large"


def test_process_tasks_are_declared_in_archive_yaml(tmp_path):
    (tmp_path / "archive.yaml").write_text(
        "schema_version: 1\nname: x\nexperiments: {main: m}\nprocess_tasks:\n"
        "  Causality_causalml: {metric: mae_mean, higher_is_better: false, baseline: 0.8,\n"
        "                       best: 0.0, worst: baseline}\n"
    )
    (task,) = open_archive(tmp_path).meta.process_tasks.values()
    assert (task.id, task.metric, task.higher_is_better, task.span) == (
        "Causality_causalml", "mae_mean", False, 0.8)  # fmt: skip


def test_roles_mapping(tmp_path):
    (tmp_path / "archive.yaml").write_text(
        "schema_version: 1\nname: x\nexperiments: {exp1: a, exp2: b}\nroles: {main: exp1}\n"
    )
    archive = open_archive(tmp_path)
    assert archive.meta.roles == {"main": "exp1", "objectives": "objectives", "llm": "llm"}
    assert archive.runs() == [] and archive.problems == []


# ---------------------------------------------------------------------------------------------
# run.json
# ---------------------------------------------------------------------------------------------


def test_minimal_run_reads(arch):
    archive = open_archive(arch)
    (run,) = archive.runs()
    assert archive.problems == []
    assert run.run_id == "main/alpha/t1/rep0"
    assert (run.experiment, run.agent, run.task, run.rep) == ("main", "alpha", "t1", 0)
    assert [v.version_id for v in run.versions] == ["v1", "v2"]
    assert run.submission_path == _run_dir(arch) / "submission.csv"
    assert run.tokens == {"prompt": 1000, "completion": 200, "total": 1200, "simulated": False}
    assert run.steps is None and run.annotations is None


def test_versions_sorted_by_created_at_not_name(arch):
    run_dir = _run_dir(arch)
    kit.write_version(run_dir, "a0", kit.T0 + timedelta(minutes=30), 3, b"id,p\n1,0.1\n")
    kit.write_version(run_dir, "z9", kit.T0 + timedelta(minutes=1), 4, b"id,p\n1,0.1\n")
    kit.write_version(run_dir, "b1", kit.T0 + timedelta(minutes=30), 5, None)
    (run,) = open_archive(arch).runs()
    assert [v.version_id for v in run.versions] == ["z9", "v1", "v2", "a0", "b1"]
    assert run.version("b1").submission_path is None


@pytest.mark.parametrize(
    ("change", "location"),
    [
        ({"llm": _DELETE}, "llm"),
        ({"rep": "0"}, "rep"),
        ({"rep": 0.0}, "rep"),
        ({"reference": "yes"}, "reference"),
        ({"search": "greedy"}, "search"),
        ({"started_at": "2026-01-01T00:00:00"}, "started_at"),
        ({"started_at": "yesterday"}, "started_at"),
        ({"budget_minutes": -5}, "budget_minutes"),
        ({"tokens": {"prompt": 1, "completion": 2}}, "tokens.total"),
        ({"selection": {"rule": "x"}}, "selection.selected_version"),
        ({"selection": {"rule": "x", "selected_version": "../v1"}}, "selection.selected_version"),
        ({"schema_version": 3}, "schema_version"),
        ({"surprise": 1}, "surprise"),
        ({"steps": [{"step": 0, "ok": True}]}, "steps.0.step"),
    ],
)
def test_run_json_schema_errors(arch, change, location):
    _rewrite(_run_dir(arch) / "run.json", **change)
    problem = _only_problem(arch)
    assert problem.code == "archive.run_invalid"
    assert problem.location == location
    assert problem.details["run_id"] == "main/alpha/t1/rep0"
    assert problem.details["effect"] == "run skipped"
    assert problem.fix and "run.json" in str(problem.path)


def test_run_json_non_finite_and_garbage(arch):
    path = _run_dir(arch) / "run.json"
    path.write_text(
        path.read_text().replace('"reported_val_score": null', '"reported_val_score": NaN')
    )
    assert _only_problem(arch).code == "archive.run_invalid"
    path.write_bytes(b"\xff\xfe not json")
    assert _only_problem(arch).code == "archive.run_invalid"


def test_run_json_missing(arch):
    (_run_dir(arch) / "run.json").unlink()
    problem = _only_problem(arch)
    assert problem.code == "archive.run_json_missing"
    assert open_archive(arch).runs() == []


def test_run_json_too_large(arch):
    path = _run_dir(arch) / "run.json"
    doc = json.loads(path.read_text())
    doc["notes"] = "x" * MAX_JSON_BYTES
    path.write_text(json.dumps(doc))
    assert _only_problem(arch).code == "archive.too_large"


@pytest.mark.parametrize(
    ("key", "value"),
    [("experiment", "objectives"), ("agent", "beta"), ("task", "t2"), ("rep", 3)],
)
def test_run_json_mismatching_directory(arch, key, value):
    _rewrite(_run_dir(arch) / "run.json", **{key: value})
    problem = _only_problem(arch)
    assert problem.code == "archive.run_mismatch"
    assert problem.location == key
    assert repr(value) in problem.message


def test_ended_before_started(arch):
    _rewrite(_run_dir(arch) / "run.json", ended_at="2025-12-31T00:00:00Z")
    assert _only_problem(arch).location == "ended_at"


def test_timestamps_converted_to_utc(arch):
    _rewrite(_run_dir(arch) / "run.json", started_at="2026-01-01T02:00:00+02:00")
    (run,) = open_archive(arch).runs()
    assert run.started_at == kit.T0 and run.started_at.tzinfo is UTC


@pytest.mark.parametrize("bad", ["repX", "rep01", "rep-1", "replica0"])
def test_bad_rep_directory(arch, bad):
    _run_dir(arch).rename(_run_dir(arch).parent / bad)
    problem = _only_problem(arch)
    assert problem.code == "archive.bad_name"


@pytest.mark.parametrize("bad", ["bad name", "-lead", "x;rm"])
def test_bad_agent_name(arch, bad):
    agent_dir = arch / "main" / "alpha"
    agent_dir.rename(arch / "main" / bad)
    problem = _only_problem(arch)
    assert problem.code == "archive.bad_name"
    assert problem.details["effect"] == "run skipped"


def test_undeclared_experiment_directory(arch):
    (arch / "main").rename(arch / "stray")
    problem = _only_problem(arch)
    assert problem.code == "archive.undeclared_experiment"
    assert problem.details["effect"] == "directory skipped"


def test_hidden_entries_and_stray_files_are_ignored(arch):
    (arch / ".git").mkdir()
    (arch / "README.md").write_text("hello")
    (arch / "main" / "alpha" / "notes.txt").write_text("hello")
    archive = open_archive(arch)
    assert len(archive.runs()) == 1 and archive.problems == []


def test_one_bad_run_does_not_hide_the_others(arch):
    kit.write_run(arch, "main", "alpha", "t1", 1)
    kit.write_run(arch, "main", "alpha", "t1", 2)
    (arch / "main" / "alpha" / "t1" / "rep1" / "run.json").write_text("{")
    archive = open_archive(arch)
    assert [r.rep for r in archive.runs()] == [0, 2]
    assert [p.details["run_id"] for p in archive.problems] == ["main/alpha/t1/rep1"]


# ---------------------------------------------------------------------------------------------
# versions
# ---------------------------------------------------------------------------------------------


def test_version_meta_missing(arch):
    (_run_dir(arch) / "versions" / "v1" / "meta.json").unlink()
    problem = _only_problem(arch)
    assert problem.code == "archive.version_meta_missing"
    assert problem.details["effect"] == "version skipped"
    (run,) = open_archive(arch).runs()
    assert [v.version_id for v in run.versions] == ["v2"]


@pytest.mark.parametrize(
    ("change", "code", "location"),
    [
        ({"version": "v7"}, "archive.version_mismatch", "version"),
        ({"step": 0}, "archive.version_invalid", "step"),
        ({"created_at": "2026-01-01T00:00:00"}, "archive.version_invalid", "created_at"),
        ({"faulty": 1}, "archive.version_invalid", "faulty"),
        ({"parent": "a/b"}, "archive.version_invalid", "parent"),
        ({"code_files": ["../../../../etc/passwd"]}, "archive.unsafe_path", "code_files[0]"),
        ({"code_files": ["/etc/passwd"]}, "archive.unsafe_path", "code_files[0]"),
        ({"code_files": ["code\\train.py"]}, "archive.unsafe_path", "code_files[0]"),
    ],
)
def test_version_meta_errors(arch, change, code, location):
    _rewrite(_run_dir(arch) / "versions" / "v1" / "meta.json", **change)
    problem = _only_problem(arch)
    assert (problem.code, problem.location) == (code, location)
    assert problem.details["effect"] == "version skipped"


def test_bad_version_directory_name(arch):
    (_run_dir(arch) / "versions" / "v1").rename(_run_dir(arch) / "versions" / "v 1")
    assert _only_problem(arch).code == "archive.bad_name"


def test_dangling_references_are_reported_but_kept(arch):
    run_json = _run_dir(arch) / "run.json"
    _rewrite(
        run_json,
        selection={"rule": "best", "selected_version": "v9"},
        steps=[{"step": 1, "ok": True, "version": "v8", "node": "v8"}],
    )
    _rewrite(_run_dir(arch) / "versions" / "v2" / "meta.json", parent="ghost")
    archive = open_archive(arch)
    assert len(archive.runs()) == 1
    codes = sorted(p.code for p in archive.problems)
    assert codes == [
        "archive.parent_unknown",
        "archive.selected_version_unknown",
        "archive.step_version_unknown",
    ]
    assert {p.details["effect"] for p in archive.problems} == {"reference dangling"}


def test_parent_without_step_nodes_is_not_checked(arch):
    _rewrite(_run_dir(arch) / "versions" / "v2" / "meta.json", parent="failed-node")
    archive = open_archive(arch)
    (run,) = archive.runs()
    assert archive.problems == [] and run.version("v2").parent == "failed-node"


def test_parent_may_be_a_node_listed_in_steps(arch):
    _rewrite(
        _run_dir(arch) / "run.json",
        steps=[{"step": 1, "ok": False, "node": "f1"}, {"step": 2, "ok": True, "version": "v2"}],
    )
    _rewrite(_run_dir(arch) / "versions" / "v2" / "meta.json", parent="f1")
    archive = open_archive(arch)
    (run,) = archive.runs()
    assert archive.problems == []
    assert run.steps[0].node == "f1" and run.steps[1].version == "v2"
