"""Work a worker does once per task, not once per file: the resample weights and a sequential
task's patient arrays; the results do not depend on whether they were reused. And the scoring
profile: where the CPU time of a scoring went, per task and kind of work, written beside the
store and never into it."""

from __future__ import annotations

import gc
import json
import shutil
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from automd_analysis.errors import ScoreStoreError
from automd_analysis.scoring import engine, metrics_for, score_archive, worker
from automd_analysis.scoring.profile import (
    PROFILE_FILE,
    WORK_KINDS,
    ScoringProfile,
    cpu_clock,
    read_profile,
)
from automd_analysis.scoring.replicates import task_resample_weights
from automd_analysis.scoring.worker import run_chunk, score_file
from automd_analysis.tasks import TaskLabels, get_task, load_labels

SMALL = Path(__file__).resolve().parent / "fixtures" / "small"
DATA, MANIFESTS = SMALL / "data", SMALL / "manifests"


def _task(task_id: str):
    task = get_task(task_id, data=DATA, manifests=MANIFESTS)
    return task, load_labels(task)


def _submissions(task_id: str) -> list[Path]:
    return sorted((SMALL / "archive" / "main").glob(f"*/{task_id}/rep*/submission.csv"))


def _copy(labels: TaskLabels) -> TaskLabels:
    return TaskLabels(**{f: getattr(labels, f) for f in labels.__dataclass_fields__})


def test_resample_weights_are_drawn_once_per_task_and_equal_fresh_ones(monkeypatch):
    monkeypatch.setattr(worker, "_WEIGHTS", OrderedDict())
    first = worker.task_weights("fx_cls", 300, 70, 0)
    assert worker.task_weights("fx_cls", 300, 70, 0) is first
    assert np.array_equal(first, task_resample_weights("fx_cls", 300, 70, 0))
    assert not np.array_equal(worker.task_weights("fx_icu", 300, 70, 0), first)  # per task
    assert worker.task_weights("fx_cls", 300, 71, 0) is not first  # the count is in the key


def test_the_weight_cache_keeps_its_byte_budget(monkeypatch):
    monkeypatch.setattr(worker, "_WEIGHTS", OrderedDict())
    monkeypatch.setattr(worker, "_MAX_WEIGHT_BYTES", 3 * 100 * 1000)
    for k in range(6):
        assert worker.task_weights(f"t{k}", 1000, 100, 0).nbytes == 100 * 1000  # uint8
    assert list(worker._WEIGHTS) == [(f"t{k}", 1000, 100, 0) for k in (3, 4, 5)]


@pytest.mark.parametrize("task_id", ["fx_seq", "fx_surv", "fx_cls"])
def test_entries_do_not_depend_on_reused_work(task_id, monkeypatch):
    task, labels = _task(task_id)
    paths = _submissions(task_id)[:3]
    boot = (130, 0, 40)  # selected replicates and version intervals: two weight arrays

    def entries(fresh: bool) -> str:
        out = []
        for i, p in enumerate(paths):
            if fresh:
                worker._WEIGHTS.clear()
                metrics_for._SEQUENTIAL.clear()
            mine = _copy(labels) if fresh else labels
            out.append(score_file(task, p, mine, details=i != 1, bootstrap=boot))
        return json.dumps(out, sort_keys=True)

    monkeypatch.setattr(worker, "_WEIGHTS", OrderedDict())
    monkeypatch.setattr(metrics_for, "_SEQUENTIAL", {})
    warm, again, cold = entries(False), entries(False), entries(True)
    assert warm == again == cold
    assert all(json.loads(warm)[i]["valid"] for i in range(len(paths)))


def test_sequential_patient_counts_are_those_of_the_labels_and_forgotten_with_them():
    _, labels = _task("fx_seq")
    pid, hours, n_patients, n_septic = metrics_for._sequential_units(labels)
    ids = labels.ids.iloc[:, 0].to_numpy()
    assert n_patients == len(np.unique(ids))
    assert n_septic == len(np.unique(ids[np.asarray(labels.label) == 1]))
    assert np.array_equal(hours, labels.ids.iloc[:, 1].astype(np.int64).to_numpy())
    assert metrics_for._sequential_units(labels)[0] is pid  # computed once
    small = TaskLabels(ids=pd.DataFrame({"p": ["a", "a", "b", "c"], "h": ["1", "2", "1", "1"]}),
                       label=np.array([0, 1, 0, 1], dtype=np.int8))  # fmt: skip
    assert metrics_for._sequential_units(small)[2:] == (3, 2)
    key = id(small)
    del small
    gc.collect()
    assert key not in metrics_for._SEQUENTIAL


def test_cpu_clock_adds_up_and_measures_nothing_without_a_dict():
    work = {"validation": 1.0}
    with cpu_clock(work, "validation"):
        sum(i * i for i in range(200_000))
    assert work["validation"] > 1.0
    with cpu_clock(None, "validation"):  # no dict: nothing to add to, no error
        pass
    with pytest.raises(ZeroDivisionError), cpu_clock(work, "replicates"):
        1 / 0  # noqa: B018
    assert work["replicates"] >= 0  # counted even when the block raised


def test_score_file_reports_its_cpu_by_kind_of_work():
    task, labels = _task("fx_surv")
    path = _submissions("fx_surv")[0]
    version, selected = {}, {}
    score_file(task, path, labels, work=version)
    score_file(task, path, labels, details=True, bootstrap=(64, 0), work=selected)
    assert set(version) == {"validation", "point_metrics"}
    assert {"replicates", "subgroup_replicates", "calibration_measures"} <= set(selected)
    assert "subgroup_scores" not in selected  # with resamples, counted as their replicates
    assert set(selected) <= set(WORK_KINDS) and min(selected.values()) >= 0
    plain = {}
    score_file(task, path, labels, details=True, bootstrap=(0, 0), work=plain)
    assert "subgroup_scores" in plain and "replicates" not in plain


def test_run_chunk_returns_each_files_cpu(tmp_path):
    task, _ = _task("fx_cls")
    paths = _submissions("fx_cls")[:2]
    jobs = [(f"k{i}", str(p), None, i == 0) for i, p in enumerate(paths)]
    jobs.append(("gone", str(tmp_path / "missing.csv"), None, False))
    out = run_chunk(task.manifest.model_dump_json(), str(task.root), str(tmp_path / "cache"),
                    jobs, bootstrap=(32, 0))  # fmt: skip
    assert [r["status"] for r in out] == ["scored"] * 3  # an absent file is an invalid result
    assert [set(r["cpu"]) <= set(WORK_KINDS) for r in out] == [True] * 3
    assert "replicates" in out[0]["cpu"] and "replicates" not in out[1]["cpu"]
    assert out[2]["cpu"].keys() == {"validation", "cache_write"}  # invalid: no metrics
    assert out[0]["cpu"] is not out[1]["cpu"]


def test_profile_adds_files_and_seconds_per_task(tmp_path):
    p = ScoringProfile()
    p.add("a", {"validation": 1.0, "replicates": 2.0}, selected=True)
    p.add("a", {"validation": 0.5}, selected=False)
    p.add("b", {"point_metrics": 0.25}, selected=False)
    assert p.total() == 3.75
    p.write(tmp_path, phases_wall_s={"plan": 1.0})
    doc = read_profile(tmp_path)
    assert doc["cpu_seconds"] == {"a": {"replicates": 2.0, "validation": 1.5},
                                  "b": {"point_metrics": 0.25}}  # fmt: skip
    assert doc["files"] == {"a": {"scored": 2, "selected": 1}, "b": {"scored": 1, "selected": 0}}
    assert doc["phases_wall_s"] == {"plan": 1.0}
    assert read_profile(tmp_path / "absent") == {}


def test_an_unreadable_profile_is_a_store_error_naming_the_file(tmp_path):
    (tmp_path / PROFILE_FILE).write_text("{not json")
    with pytest.raises(ScoreStoreError) as info:
        read_profile(tmp_path)
    assert info.value.code == "store.profile_unreadable"
    assert Path(info.value.path) == tmp_path / PROFILE_FILE


def _three_runs(tmp_path: Path) -> Path:
    arch = tmp_path / "arch"
    arch.mkdir()
    shutil.copy(SMALL / "archive" / "archive.yaml", arch / "archive.yaml")
    for run in ("main/alpha/fx_surv/rep0", "main/alpha/fx_cls/rep0", "main/beta/fx_cls/rep0"):
        shutil.copytree(SMALL / "archive" / run, arch / run)
    return arch


@pytest.mark.slow
def test_scoring_writes_its_profile_beside_the_store(tmp_path):
    arch, out = _three_runs(tmp_path), tmp_path / "store"
    s = score_archive(arch, out=out, data=DATA, manifests=MANIFESTS, jobs=1, bootstrap=64)
    doc = read_profile(out)
    assert doc["scored"] == s.n_scored == s.n_unique and doc["cached"] == 0
    assert set(doc["cpu_seconds"]) == {"fx_surv", "fx_cls"} == set(s.profile.cpu)
    assert sum(f["scored"] for f in doc["files"].values()) == s.n_unique
    assert sum(f["selected"] for f in doc["files"].values()) == 3
    assert doc["cpu_seconds"]["fx_surv"]["replicates"] > 0
    assert set(doc["phases_wall_s"]) == set(doc["main_cpu_s"]) == {"plan", "score", "publish"}
    assert doc["jobs"] == 1 and doc["scheduler"] is False
    assert not (out / "current" / PROFILE_FILE).exists()  # not part of the published store
    s2 = score_archive(arch, out=out, data=DATA, manifests=MANIFESTS, jobs=1, bootstrap=64)
    doc2 = read_profile(out)
    assert s2.n_scored == 0 and doc2["scored"] == 0 and doc2["cpu_seconds"] == {}


@pytest.mark.slow
def test_a_profile_that_cannot_be_written_is_a_note_and_the_store_is_published(
    tmp_path, monkeypatch
):
    def refuse(*_args, **_kwargs):
        raise PermissionError("read-only")

    monkeypatch.setattr(engine.ScoringProfile, "write", refuse)
    arch, out = _three_runs(tmp_path), tmp_path / "store"
    s = score_archive(arch, out=out, data=DATA, manifests=MANIFESTS, jobs=1, bootstrap=16)
    assert s.n_runs == 3 and (out / "scores.parquet").is_file()
    assert any("scoring profile was not written" in n for n in s.notes)
    assert not (out / PROFILE_FILE).exists()
