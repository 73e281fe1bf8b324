"""Scoring engine: caching, resumption after failures, parallel backends, recorded problems."""

from __future__ import annotations

import json
import os
import shutil
from collections import OrderedDict
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.errors import ArchiveError, DataError, ScoreStoreError
from automd_analysis.scoring import engine, metrics_for, score_archive, worker
from automd_analysis.scoring.publish import TABLES

#: The module shares one scored store: keep its tests on one xdist worker.
#: Scores the fixture archive end to end: `make test-fast` skips this module.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("scoring_engine")]

SMALL = Path(__file__).resolve().parent / "fixtures" / "small"
DATA, MANIFESTS = SMALL / "data", SMALL / "manifests"
#: A subset of the fixture: every task, agent alpha and beta (rep 0, 1) and baseline (rep 0).
SUBSET = [
    f"main/{a}/{t}/rep{r}"
    for a in ("alpha", "beta")
    for t in ("fx_cls", "fx_icu", "fx_seq", "fx_surv", "fx_surv_ext")
    for r in (0, 1)
]
SUBSET += [f"main/baseline/{t}/rep0" for t in ("fx_cls", "fx_seq", "fx_surv")]


def _mini_archive(dest: Path) -> Path:
    dest.mkdir(parents=True)
    shutil.copy(SMALL / "archive" / "archive.yaml", dest / "archive.yaml")
    for run_id in SUBSET:
        shutil.copytree(SMALL / "archive" / run_id, dest / run_id)
    return dest


def _store_bytes(out: Path) -> dict[str, bytes]:
    files = [f"{t}.parquet" for t in TABLES] + ["store.json"]
    return {f: (out / f).read_bytes() for f in files}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The mini archive scored once, in-process, from an empty cache."""
    base = tmp_path_factory.mktemp("engine")
    arch = _mini_archive(base / "arch")
    out = base / "ref"
    summary = score_archive(arch, out=out, data=DATA, manifests=MANIFESTS, jobs=1)
    return arch, out, summary


def _fresh_labels(monkeypatch):
    monkeypatch.setattr(worker, "_LABELS", OrderedDict())


def test_reference_run_counts(reference):
    arch, out, s = reference
    assert s.n_runs == len(SUBSET) and s.n_skipped_runs == 0 and s.problems == []
    assert s.n_scored == s.n_unique and s.n_cached == 0
    assert set(s.timings) == {"plan", "score", "publish"} and min(s.timings.values()) >= 0
    scores = pd.read_parquet(out / "scores.parquet")
    assert len(scores) == s.n_files
    assert s.n_unique < s.n_files  # selected submissions are copies of versions: scored once
    assert scores.is_selected.sum() == len(SUBSET)
    meta = json.loads((out / "store.json").read_text())
    assert meta["counts"]["runs"] == len(SUBSET) and "seconds" not in json.dumps(meta)


def test_selected_copy_shares_the_cache_key_of_its_version(reference):
    _, out, _ = reference
    scores = pd.read_parquet(out / "scores.parquet")
    sel = scores[scores.is_selected & scores.source_version.notna()]
    assert len(sel) > 0
    for _, row in sel.iterrows():
        src = scores[(scores.run_id == row.run_id) & (scores.version == row.source_version)].iloc[0]
        assert src.submission_sha256 == row.submission_sha256
        assert src.cache_key == row.cache_key
        assert src.raw == row.raw or (pd.isna(src.raw) and pd.isna(row.raw))


def test_unchanged_rerun_does_no_metric_work(reference, tmp_path, monkeypatch):
    arch, out, _ = reference
    rerun = tmp_path / "rerun"
    shutil.copytree(out, rerun)

    def forbidden(*args, **kwargs):
        raise AssertionError("metric work on an unchanged archive")

    monkeypatch.setattr(worker, "score_file", forbidden)
    monkeypatch.setattr(metrics_for, "metric_record", forbidden)
    monkeypatch.setattr(worker.tasks, "load_labels", forbidden)
    s = score_archive(arch, out=rerun, data=DATA, manifests=MANIFESTS, jobs=1)
    assert s.n_scored == 0 and s.n_cached == s.n_unique and s.n_errors == 0
    assert _store_bytes(rerun) == _store_bytes(out)


def test_labels_loaded_once_per_task(reference, tmp_path, monkeypatch):
    arch, _, s_ref = reference
    _fresh_labels(monkeypatch)
    before = worker.label_loads()
    monkeypatch.setattr(engine, "_chunks", _tiny_chunks(engine._chunks))
    s = score_archive(arch, out=tmp_path / "o", data=DATA, manifests=MANIFESTS, jobs=1)
    assert s.n_scored == s_ref.n_unique
    assert worker.label_loads() - before == 5  # five tasks, many chunks each


def test_threads_of_one_worker_load_a_task_once(monkeypatch):
    # a Dask worker runs chunks on several threads: the label cache is shared and locked
    import threading
    import time

    import yaml

    from automd_analysis.tasks import TaskManifest

    _fresh_labels(monkeypatch)
    real = worker.tasks.load_labels

    def slow_load(task):
        time.sleep(0.2)  # every thread arrives while the first one is still loading
        return real(task)

    monkeypatch.setattr(worker.tasks, "load_labels", slow_load)
    manifest = yaml.safe_load((MANIFESTS / "fx_cls.yaml").read_text())
    doc = TaskManifest.model_validate(manifest).model_dump_json()
    before = worker.label_loads()
    results, errors = [], []

    def load():
        try:
            results.append(worker._task_and_labels(doc, str(DATA)))
        except Exception as exc:  # pragma: no cover - the failure this test guards against
            errors.append(exc)

    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(results) == 4
    assert worker.label_loads() - before == 1
    assert all(r[1] is results[0][1] for r in results)  # one TaskLabels for every thread


def _tiny_chunks(original):
    def chunks(plan, todo, n_workers):
        return original(plan, todo, n_workers=len(todo))  # ~one file per chunk

    return chunks


class Killed(BaseException):
    """Stands in for SIGKILL: not an Exception, so nothing in the engine catches it."""


def test_interrupted_run_resumes_to_identical_store(reference, tmp_path, monkeypatch):
    arch, out, s_ref = reference
    _fresh_labels(monkeypatch)
    target = tmp_path / "resumed"
    real = worker.score_file
    calls = {"n": 0}

    def dies_after_seven(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 7:
            raise Killed
        return real(*args, **kwargs)

    monkeypatch.setattr(worker, "score_file", dies_after_seven)
    with pytest.raises(Killed):
        score_archive(arch, out=target, data=DATA, manifests=MANIFESTS, jobs=1)
    entries = [p for p in (target / "cache").glob("*/*.json") if not p.name.startswith(".")]
    assert len(entries) == 7  # everything scored before the kill was kept
    assert not (target / "scores.parquet").exists()
    monkeypatch.setattr(worker, "score_file", real)
    s = score_archive(arch, out=target, data=DATA, manifests=MANIFESTS, jobs=1)
    assert s.n_cached == 7 and s.n_scored == s_ref.n_unique - 7
    assert _store_bytes(target) == _store_bytes(out)


def test_internal_error_is_recorded_not_cached_and_retried(reference, tmp_path, monkeypatch):
    arch, out, _ = reference
    _fresh_labels(monkeypatch)
    target = tmp_path / "flaky"
    real = worker.metric_record

    def broken_for_sequential(kind, *args, **kwargs):
        if kind == "sequential":
            raise ValueError("simulated bug")
        return real(kind, *args, **kwargs)

    monkeypatch.setattr(worker, "metric_record", broken_for_sequential)
    s = score_archive(arch, out=target, data=DATA, manifests=MANIFESTS, jobs=1)
    assert s.n_errors > 0 and s.data_errors == {}
    problems = pd.read_parquet(target / "problems.parquet")
    assert set(problems.code) == {"scoring.internal_error"}
    assert problems.message.str.contains("simulated bug").all()
    assert set(problems.task) == {"fx_seq"}
    runs = pd.read_parquet(target / "runs.parquet")
    skipped = set(problems.loc[problems.effect == "run skipped", "run_id"])
    assert skipped and skipped.isdisjoint(runs.run_id)
    assert "fx_cls" in set(runs.task)
    monkeypatch.setattr(worker, "metric_record", real)
    s2 = score_archive(arch, out=target, data=DATA, manifests=MANIFESTS, jobs=1)
    assert s2.n_errors == 0 and s2.n_scored == s.n_errors
    assert _store_bytes(target) == _store_bytes(out)


def test_changed_submission_is_rescored_alone(reference, tmp_path):
    arch, out, s_ref = reference
    arch2 = tmp_path / "arch2"
    shutil.copytree(arch, arch2)
    target = tmp_path / "out2"
    shutil.copytree(out, target)
    sub = arch2 / "main" / "baseline" / "fx_cls" / "rep0" / "submission.csv"
    lines = sub.read_text().splitlines()
    head, first = lines[0], lines[1].split(",")
    first[1] = "0.9999" if first[1] != "0.9999" else "0.0001"
    sub.write_text("\n".join([head, ",".join(first), *lines[2:]]) + "\n")
    s = score_archive(arch2, out=target, data=DATA, manifests=MANIFESTS, jobs=1)
    assert s.n_scored == 1 and s.n_cached == s_ref.n_unique - 1 + (s.n_unique - s_ref.n_unique)
    new = pd.read_parquet(target / "scores.parquet").set_index(["run_id", "version"])
    old = pd.read_parquet(out / "scores.parquet").set_index(["run_id", "version"])
    changed = new.submission_sha256 != old.submission_sha256
    assert list(changed[changed].index) == [("main/baseline/fx_cls/rep0", "selected")]


@pytest.mark.slow
def test_process_pool_gives_identical_store(reference, tmp_path):
    arch, out, _ = reference
    s = score_archive(arch, out=tmp_path / "pool", data=DATA, manifests=MANIFESTS, jobs=2)
    assert s.n_errors == 0
    assert _store_bytes(tmp_path / "pool") == _store_bytes(out)


def _local_cluster(n_workers: int, threads: int, processes: bool):
    import distributed

    return distributed.LocalCluster(
        n_workers=n_workers, threads_per_worker=threads, processes=processes, dashboard_address=None
    )


def _score_on(cluster, arch, out):
    return score_archive(
        arch, out=out, data=DATA, manifests=MANIFESTS, scheduler=cluster.scheduler_address
    )


@pytest.mark.slow
def test_dask_local_cluster_gives_identical_store(reference, tmp_path):
    arch, out, _ = reference
    with _local_cluster(1, threads=2, processes=False) as cluster:
        s = _score_on(cluster, arch, tmp_path / "dask")
    assert s.n_errors == 0 and s.n_scored == s.n_unique
    assert _store_bytes(tmp_path / "dask") == _store_bytes(out)


@pytest.mark.slow
def test_dask_two_worker_processes_give_identical_store(reference, tmp_path, monkeypatch):
    # two worker processes, as on a real cluster: each loads its own labels, the chunks are cut
    # for the cluster's two threads and spread over both, and the store is the local one
    import distributed

    arch, out, _ = reference
    cut_for = []
    real_chunks = engine._chunks

    def recorded(plan, todo, n_workers):
        cut_for.append(n_workers)
        return real_chunks(plan, todo, n_workers)

    monkeypatch.setattr(engine, "_chunks", recorded)
    with (
        _local_cluster(2, threads=1, processes=True) as cluster,
        distributed.Client(cluster) as client,
    ):
        s = _score_on(cluster, arch, tmp_path / "dask2")
        loads = client.run(worker.label_loads)
    assert s.n_errors == 0 and s.n_scored == s.n_unique
    assert _store_bytes(tmp_path / "dask2") == _store_bytes(out)
    assert cut_for == [2]  # chunks sized for the cluster's threads, not for --jobs
    assert len(loads) == 2 and min(loads.values()) > 0, loads  # both workers scored chunks


def _numba_threads_of_a_dask_task():
    import numba

    return worker.limit_numba_threads_on_dask(), numba.get_num_threads()


@pytest.mark.slow
def test_dask_tasks_run_the_numba_kernels_on_one_thread():
    import distributed

    with (
        _local_cluster(1, threads=1, processes=False) as cluster,
        distributed.Client(cluster) as client,
    ):
        assert client.submit(_numba_threads_of_a_dask_task, pure=False).result() == (True, 1)
    assert worker.limit_numba_threads_on_dask() is False  # not a Dask task: nothing changed


def test_archive_problems_missing_task_and_bad_data_are_recorded(reference, tmp_path):
    arch, out, _ = reference
    arch2, manifests, data = tmp_path / "a", tmp_path / "m", tmp_path / "d"
    shutil.copytree(arch, arch2)
    shutil.copytree(MANIFESTS, manifests)
    shutil.copytree(DATA, data)
    (arch2 / "main" / "alpha" / "fx_cls" / "rep1" / "run.json").write_text("{broken")
    (manifests / "fx_seq.yaml").unlink()
    labels = data / "fx_icu" / "labels.csv"
    labels.write_bytes(labels.read_bytes() + b"\n")  # any change breaks the pinned sha256
    target = tmp_path / "o"
    s = score_archive(arch2, out=target, data=data, manifests=manifests, jobs=1)
    assert set(s.data_errors) == {"fx_seq", "fx_icu"}
    assert s.data_errors["fx_seq"]["code"] == "manifest.missing"
    assert s.data_errors["fx_icu"]["code"] == "checksum.mismatch"
    problems = pd.read_parquet(target / "problems.parquet")
    bad_run = problems[problems.code == "archive.run_invalid"]
    assert list(bad_run.run_id) == ["main/alpha/fx_cls/rep1"]
    assert list(bad_run.path) == ["main/alpha/fx_cls/rep1/run.json"]  # archive-relative
    assert set(problems.loc[problems.code == "manifest.missing", "task"]) == {"fx_seq"}
    assert set(problems.loc[problems.code == "checksum.mismatch", "task"]) == {"fx_icu"}
    runs = pd.read_parquet(target / "runs.parquet")
    assert set(runs.task) == {"fx_cls", "fx_surv", "fx_surv_ext"}
    assert "main/alpha/fx_cls/rep1" not in set(runs.run_id)
    # everything that could be scored is identical to the clean store
    ref = pd.read_parquet(out / "scores.parquet")
    got = pd.read_parquet(target / "scores.parquet")
    keep = ref.run_id.isin(runs.run_id)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), ref[keep].reset_index(drop=True))


def test_unsafe_submission_is_invalid_with_archive_code(reference, tmp_path):
    arch, _, _ = reference
    arch2 = tmp_path / "a"
    shutil.copytree(arch, arch2)
    secret = tmp_path / "secret.csv"
    secret.write_text("encounter_id,PredictedProbability\n")
    sub = arch2 / "main" / "alpha" / "fx_cls" / "rep0" / "submission.csv"
    sub.unlink()
    os.symlink(secret, sub)
    s = score_archive(arch2, out=tmp_path / "o", data=DATA, manifests=MANIFESTS, jobs=1)
    scores = pd.read_parquet(tmp_path / "o" / "scores.parquet")
    row = scores[(scores.run_id == "main/alpha/fx_cls/rep0") & scores.is_selected].iloc[0]
    assert not row.valid and row.reason_code == "archive.unsafe_path"
    assert row.cache_key is None and row.submission_sha256 is None
    problems = pd.read_parquet(tmp_path / "o" / "problems.parquet")
    assert list(problems.effect) == ["submission unreadable"]
    assert s.n_errors == 0


def test_missing_archive_data_root_and_out_inside_archive(reference, tmp_path):
    arch, _, _ = reference
    with pytest.raises(ArchiveError) as exc:
        score_archive(tmp_path / "nope", out=tmp_path / "o", data=DATA, manifests=MANIFESTS)
    assert exc.value.code == "archive.missing"
    with pytest.raises(DataError) as exc:
        score_archive(arch, out=tmp_path / "o", data=tmp_path / "nodata", manifests=MANIFESTS)
    assert exc.value.code == "data.missing"
    with pytest.raises(ScoreStoreError) as exc:
        score_archive(arch, out=arch / "scores", data=DATA, manifests=MANIFESTS)
    assert exc.value.code == "store.inside_archive"
    assert not (arch / "scores").exists()


class _FakeManifest:
    def __init__(self, tid):
        self.tid = tid

    def model_dump_json(self):
        return json.dumps({"id": self.tid})


class _FakeTask:
    def __init__(self, tid, root):
        self.manifest, self.root = _FakeManifest(tid), root


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(
        st.tuples(st.sampled_from(["big", "mid", "tiny"]), st.integers(0, 50_000_000)),
        min_size=1,
        max_size=60,
    ),
    workers=st.integers(1, 4),
)
def test_chunks_partition_jobs_by_task_biggest_first(sizes, workers):
    from automd_analysis.scoring.plan import Job, Plan

    root = Path("/data")
    tasks = {t: _FakeTask(t, root) for t in ("big", "mid", "tiny")}
    jobs = [
        Job(f"{i:064x}", tid, Path(f"/a/{i}.csv"), None, i % 3 == 0, size)
        for i, (tid, size) in enumerate(sizes)
    ]
    plan = Plan(tasks=tasks, task_errors={}, runs=[], skipped_runs=[], files=[])
    chunks = engine._chunks(plan, jobs, workers)
    seen = [j[0] for _, _, part in chunks for j in part]
    assert sorted(seen) == sorted(j.key for j in jobs)  # each job exactly once
    by_key = {j.key: j for j in jobs}
    costs = []
    for manifest_json, data_root, part in chunks:
        tids = {by_key[k].task_id for k, *_ in part}
        assert tids == {json.loads(manifest_json)["id"]} and data_root == str(root.resolve())
        assert all(details == by_key[k].details for k, _, _, details in part)
        costs.append(sum(by_key[k].size + engine._FILE_OVERHEAD_BYTES for k, *_ in part))
    assert costs == sorted(costs, reverse=True)
    target = sum(costs) / (4 * workers)
    for _, _, part in chunks:  # a chunk only exceeds the target by its last file
        last = by_key[part[-1][0]].size + engine._FILE_OVERHEAD_BYTES
        assert sum(by_key[k].size + engine._FILE_OVERHEAD_BYTES for k, *_ in part) - last < target
