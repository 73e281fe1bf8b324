"""Plan the scoring of an archive: which files, which tasks, which cache keys.

Planning reads the archive and the manifests, checks each task's data once (checksums), hashes
every submission file and derives its cache key. It does no metric work. Files with identical
content for the same task share one key, so they are scored once (a selected submission is usually
a copy of one of its versions).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from automd_analysis import __version__
from automd_analysis.archive import Run, Version
from automd_analysis.errors import AutomdError, DataError, ManifestError
from automd_analysis.scoring.cache import cache_key, sha256_file
from automd_analysis.scoring.scorable import not_scorable_reason
from automd_analysis.scoring.worker import validation_entry
from automd_analysis.submissions import (
    Reason,
    ValidationResult,
    size_reason,
    validate_submission,
)
from automd_analysis.tasks import ProcessTask, Task, get_task, has_manifest

__all__ = ["FileRef", "Job", "Plan", "check_task_data", "make_plan"]

SELECTED = "selected"


@dataclass(frozen=True)
class FileRef:
    """One row of ``scores.parquet``: the selected submission or one version of a run.

    Files that cannot be scored from content - absent, or present but unsafe to open (a link
    leaving the archive) - carry their invalid verdict in ``inline`` (a cache-entry-shaped dict)
    and have no ``key``. Every other file has the ``sha256`` of its bytes and its cache ``key``.
    """

    run: Run
    version: Version | None
    path: Path
    sha256: str | None
    key: str | None
    inline: dict | None = None

    @property
    def version_id(self) -> str:
        return SELECTED if self.version is None else self.version.version_id

    @property
    def is_selected(self) -> bool:
        return self.version is None


@dataclass(frozen=True)
class Job:
    """One unique (content, task) to score; ``details`` when any of its files is a selected one."""

    key: str
    task_id: str
    path: Path
    sha256: str | None
    details: bool
    size: int = 0


@dataclass
class Plan:
    """Everything to score: runs with a usable task, their files, and the unique jobs.

    Runs of a process-only task (``process_tasks``: declared by the archive, without a manifest)
    are in ``runs`` with no file: there is nothing to score. ``not_scorable`` maps the runs that
    hold no prediction file for their task's test set
    (:func:`~automd_analysis.scoring.scorable.not_scorable_reason`) to why; they are in ``runs``
    but have no files, and their task needs only its manifest (its data is not checked).
    """

    tasks: dict[str, Task]
    task_errors: dict[str, AutomdError]
    runs: list[Run]
    skipped_runs: list[Run]
    files: list[FileRef]
    jobs: dict[str, Job] = field(default_factory=dict)
    process_tasks: dict[str, ProcessTask] = field(default_factory=dict)
    not_scorable: dict[str, dict] = field(default_factory=dict)


def _unsafe(task: Task, code: str) -> dict:
    reason = Reason(
        code,
        "the submission may not be opened: it is a link leaving the archive, or not a regular "
        "file (see problems.parquet)",
    )
    return validation_entry(task.id, ValidationResult(False, [reason], None, None))


def check_task_data(task: Task) -> str:
    """Verify the task's hidden labels, time grid and subgroup files; return the labels sha256.

    Raises
    ------
    DataError
        ``data.missing``, ``checksum.mismatch`` or ``checksum.unpinned`` (from
        :meth:`~automd_analysis.tasks.Task.verified_path`).
    """
    m = task.manifest
    keys = {m.labels.file, *(sg.file for sg in m.subgroups.values())}
    if m.submission.time_grid:
        keys.add(m.submission.time_grid)
    for key in sorted(keys):
        task.verified_path(key)
    return m.files[m.labels.file].sha256


def _load_tasks(
    task_ids, data, manifests, facts_only=()
) -> tuple[dict[str, Task], dict, dict[str, str]]:
    """Tasks by id, their errors and labels sha256; tasks in ``facts_only`` (used by unscorable
    runs only) need just their manifest."""
    found, errors, labels_sha = {}, {}, {}
    for tid in sorted(task_ids):
        try:
            task = get_task(tid, data=data, manifests=manifests)
            if tid not in facts_only:
                labels_sha[tid] = check_task_data(task)
            found[tid] = task
        except (ManifestError, DataError) as exc:
            errors[tid] = exc
    return found, errors, labels_sha


def _too_large(task: Task, path: Path) -> Reason | None:
    try:
        size = path.stat().st_size
    except OSError:
        return None  # validation reports the unreadable file
    return size_reason(task, size)


def _hash_all(paths: list[Path], workers: int) -> list[tuple[str, int]]:
    """(sha256, size) of each file, in order; hashed on ``workers`` threads (hashlib releases the
    GIL on large buffers, so this scales with cores)."""

    def one(path: Path) -> tuple[str, int]:
        return sha256_file(path), path.stat().st_size

    if workers <= 1 or len(paths) < 2:
        return [one(p) for p in paths]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, paths))


def make_plan(
    runs: list[Run],
    data=None,
    manifests=None,
    hash_workers: int = 1,
    bootstrap: tuple[int, ...] = (0, 0),
    extra: list[dict] | None = None,
    process_tasks: dict[str, ProcessTask] | None = None,
    settings: dict | None = None,
) -> Plan:
    """Plan the scoring of ``runs``.

    Parameters
    ----------
    runs : list of Run
        Readable runs of the archive (``Archive.runs()``).
    data, manifests : path, optional
        Data root and manifest directory (defaults: ``AUTOMD_DATA`` / ``AUTOMD_MANIFESTS``).
    hash_workers : int, default 1
        Threads hashing the submission files.
    bootstrap : (int, int) or (int, int, int)
        ``(n_boot, seed[, n_version])`` of the per-run bootstrap (part of every cache key).
    extra : list of dict, optional
        Fingerprints of the user metrics (part of every cache key).
    process_tasks : dict, optional
        The archive's process-only task declarations (``ArchiveMeta.process_tasks``); a task
        that also has a manifest is scored as its manifest says.
    settings : dict, optional
        Scoring settings that differ from their defaults (part of every cache key).

    Returns
    -------
    Plan
        Runs whose task manifest is missing/invalid or whose data fails its checksum are in
        ``skipped_runs`` (the error per task in ``task_errors``); runs of a process-only task
        are in ``runs`` with no file; runs that hold no prediction file for their task's test set
        are in ``not_scorable`` (their task's data is not needed); every other run contributes its
        selected submission and each version to ``files``, in archive order.
    """
    declared = dict(process_tasks or {})
    process_only = {t: declared[t] for t in {r.task for r in runs} & set(declared)
                    if not has_manifest(t, manifests)}  # fmt: skip
    unscorable = {r.run_id: reason for r in runs
                  if r.task not in process_only and (reason := not_scorable_reason(r))}  # fmt: skip
    medical = {r.task for r in runs} - set(process_only)
    scored_tasks = {r.task for r in runs if r.run_id not in unscorable} - set(process_only)
    tasks, errors, labels_sha = _load_tasks(medical, data, manifests, medical - scored_tasks)
    plan = Plan(tasks=tasks, task_errors=errors, runs=[], skipped_runs=[], files=[],
                process_tasks=process_only)  # fmt: skip
    pending: list[tuple[Run, Version | None, Path] | FileRef] = []
    for run in runs:
        if run.task in process_only:
            plan.runs.append(run)  # nothing to score
            continue
        if run.task not in tasks:
            plan.skipped_runs.append(run)
            continue
        plan.runs.append(run)
        if run.run_id in unscorable:
            plan.not_scorable[run.run_id] = unscorable[run.run_id]
            continue
        task = tasks[run.task]
        entries = [(None, run.submission_path, run.submission_issue, run.dir / "submission.csv")]
        entries += [
            (v, v.submission_path, v.submission_issue, v.dir / "submission.csv")
            for v in run.versions
        ]
        for version, path, issue, expected in entries:
            if issue is not None:
                pending.append(FileRef(run, version, expected, None, None, _unsafe(task, issue)))
                continue
            if path is None:
                result = validate_submission(task, expected)  # "file.missing", no labels needed
                if not result.valid:
                    entry = validation_entry(task.id, result)
                    pending.append(FileRef(run, version, expected, None, None, entry))
                    continue
            too_large = _too_large(task, expected)
            if too_large is not None:  # checked before hashing: a huge file costs one stat
                entry = validation_entry(task.id, ValidationResult(False, [too_large], None, None))
                pending.append(FileRef(run, version, expected, None, None, entry))
                continue
            pending.append((run, version, expected))  # (appeared since the archive was read)
    to_hash = [p[2] for p in pending if not isinstance(p, FileRef)]
    hashes = iter(_hash_all(to_hash, hash_workers))
    for item in pending:
        if isinstance(item, FileRef):
            plan.files.append(item)
            continue
        run, version, path = item
        sha, size = next(hashes)
        key = cache_key(
            sha,
            tasks[run.task].content_hash,
            labels_sha[run.task],
            __version__,
            bootstrap,
            extra,
            settings,
        )
        plan.files.append(FileRef(run, version, path, sha, key))
        job = plan.jobs.get(key)
        selected = version is None
        if job is None:
            plan.jobs[key] = Job(key, run.task, path, sha, selected, size)
        elif selected and not job.details:
            plan.jobs[key] = Job(key, job.task_id, job.path, job.sha256, True, job.size)
    return plan
