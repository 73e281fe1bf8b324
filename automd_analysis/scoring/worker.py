"""What a worker does: validate and score submission files of one task, and cache the results.

:func:`score_file` is the unit of metric work (validation -> metrics -> optional subgroup and
reliability rows). :func:`run_chunk` is what the engine ships to a local process or a Dask worker:
a list of files of **one task**, so the hidden labels are loaded once per worker and task (they are
kept in a small per-process cache) and never once per file. Nothing here raises for a bad
submission; an unexpected exception while scoring one file is returned as that file's error and is
not cached, so the next run retries it. Each file's result carries the CPU seconds its kinds of
work took (:mod:`~automd_analysis.scoring.profile`). What every file of a task shares is made once
per process: the labels, and the task's resample weights (:func:`task_weights`).
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections import OrderedDict
from pathlib import Path

from automd_analysis import __version__, submissions, tasks
from automd_analysis.errors import AutomdError
from automd_analysis.scoring.cache import ScoreCache
from automd_analysis.scoring.calibration_measures import (
    calibration_curve_rows,
    calibration_measures,
)
from automd_analysis.scoring.extra_metrics import extra_metric_results, load_metric
from automd_analysis.scoring.metrics_for import (
    DEFAULT_ECE_BINS,
    SubmissionEvaluation,
    calibration_rows,
    metric_inputs,
    metric_record,
)
from automd_analysis.scoring.profile import cpu_clock
from automd_analysis.scoring.replicates import (
    RunReplicates,
    run_replicates,
    task_resample_weights,
)
from automd_analysis.scoring.subgroup_scores import subgroup_scores

__all__ = [
    "ChunkJob",
    "label_loads",
    "limit_numba_threads_on_dask",
    "run_chunk",
    "score_file",
    "task_weights",
    "validation_entry",
]

#: Hidden labels kept per process: (manifest JSON, data root) -> (Task, TaskLabels).
_LABELS: OrderedDict[tuple[str, str], tuple] = OrderedDict()
_MAX_TASKS = 8
_LOADS = {"count": 0}
#: A Dask worker runs chunks on several threads of one process: one at a time in the label cache.
_LABELS_LOCK = threading.Lock()
#: Resample weights kept per process: (task id, units, replicates, seed) -> weights, at most
#: ``_MAX_WEIGHT_BYTES`` in all (the largest, SEER's 1,000 x 49,291, is 49 MB of uint8).
_WEIGHTS: OrderedDict[tuple[str, int, int, int], object] = OrderedDict()
_MAX_WEIGHT_BYTES = 256 << 20
_WEIGHTS_LOCK = threading.Lock()

#: One file of a chunk: (cache key, submission path, planned sha256 or None, compute details).
ChunkJob = tuple[str, str, str | None, bool]


class SubmissionChanged(Exception):
    """The file's bytes changed between planning and scoring; its result is not cached."""


def label_loads() -> int:
    """How many times this process loaded hidden labels from disk (for tests and benchmarks)."""
    return _LOADS["count"]


def _task_and_labels(manifest_json: str, data_root: str):
    cache_key = (manifest_json, data_root)
    with _LABELS_LOCK:  # another thread loading the same task: wait for it, do not load twice
        if cache_key in _LABELS:
            _LABELS.move_to_end(cache_key)
            return _LABELS[cache_key]
        task = tasks.Task(tasks.TaskManifest.model_validate_json(manifest_json), data_root)
        labels = tasks.load_labels(task)
        _LOADS["count"] += 1
        _LABELS[cache_key] = (task, labels)
        while len(_LABELS) > _MAX_TASKS:
            _LABELS.popitem(last=False)
        return task, labels


def task_weights(task_id: str, n_units: int, n_boot: int, seed: int):
    """:func:`~automd_analysis.scoring.replicates.task_resample_weights`, drawn once per process
    and kept (every file of a task is evaluated on the same resamples); the least recently used
    are dropped beyond ``_MAX_WEIGHT_BYTES``. Callers must not write to the array."""
    key = (task_id, int(n_units), int(n_boot), int(seed))
    with _WEIGHTS_LOCK:
        if key in _WEIGHTS:
            _WEIGHTS.move_to_end(key)
            return _WEIGHTS[key]
        weights = task_resample_weights(task_id, n_units, n_boot, seed)
        _WEIGHTS[key] = weights
        while len(_WEIGHTS) > 1 and sum(w.nbytes for w in _WEIGHTS.values()) > _MAX_WEIGHT_BYTES:
            _WEIGHTS.popitem(last=False)
        return weights


def limit_numba_threads_on_dask() -> bool:
    """On a Dask worker thread, run this thread's parallel numba kernels on one thread.

    The local process pool sets one numba thread per process (one process per core); a Dask
    cluster likewise runs one chunk per worker thread, so a chunk's kernels get no threads of
    their own. numba's thread count belongs to the calling thread, so :func:`run_chunk` calls
    this at the start of every chunk. Nothing changes outside a Dask task.

    Returns
    -------
    bool
        Whether the caller is a Dask worker thread (and the limit was set).

    Examples
    --------
    >>> limit_numba_threads_on_dask()  # not inside a Dask task
    False
    """
    distributed = sys.modules.get("distributed")  # a Dask worker has imported it
    if distributed is None:
        return False
    try:
        distributed.get_worker()
    except ValueError:  # not inside a Dask task
        return False
    from automd_analysis.metrics import set_kernel_threads

    set_kernel_threads(1)
    return True


def validation_entry(task_id: str, result, sha256: str | None = None) -> dict:
    """The cache-entry skeleton of a validation result (no metrics yet).

    Parameters
    ----------
    task_id : str
    result : ValidationResult
    sha256 : str, optional
        Used when the result carries no digest (absent or unreadable file).
    """
    return {
        "task": task_id,
        "submission_sha256": result.sha256 if result.sha256 is not None else sha256,
        "scorer_version": __version__,
        "valid": bool(result.valid),
        "reasons": [r.to_dict() for r in result.reasons],
        "n_rows_read": int(result.n_rows),
        "metrics": None,
        "details": None,
    }


def _evaluation(task, labels, preds, details: bool, bootstrap, ece_bins: int, work=None):
    """The submission's kernels (:class:`SubmissionEvaluation`), so that every metric and its
    replicates are one call: with the task's resample weights when its details and replicates
    are asked for, else with the first ``n_version`` of them when every version gets an interval
    (the resamples are prefix-stable:
    :func:`~automd_analysis.scoring.replicates.task_resample_indices`)."""
    kind, (n_boot, seed, n_version) = task.manifest.kind.value, (*bootstrap, 0)[:3]
    n_weights = n_boot if details else n_version
    weights = None
    if n_boot > 0 and n_weights > 0:
        with cpu_clock(work, "resample_weights"):
            n_units = metric_inputs(kind, labels, preds).n_units
            weights = task_weights(task.id, n_units, n_weights, seed)
    with cpu_clock(work, "point_metrics"):
        evaluation = SubmissionEvaluation(kind, labels, preds, metric=task.manifest.metric.value,
                                          weights=weights, ece_bins=ece_bins)  # fmt: skip
    if weights is not None:  # the observed values come with the replicates, in one kernel call
        with cpu_clock(work, "replicates"):
            _ = evaluation.primary, evaluation.scored_ece  # kept by the evaluation
    return evaluation


def _details(task, labels, preds, bootstrap: tuple[int, int], extra, ece_bins: int,
             evaluation: SubmissionEvaluation, work=None) -> dict:  # fmt: skip
    """The detail rows of a selected valid submission (see :func:`score_file`)."""
    m = task.manifest
    kind = m.kind.value
    rules = {name: sg.rule for name, sg in m.subgroups.items()}
    n_boot, seed = bootstrap
    weights, out, replicates = evaluation.weights, {}, None
    if weights is not None:
        with cpu_clock(work, "replicates"):
            replicates = run_replicates(kind, m.metric.value, m.null_score, labels, preds,
                                        task_id=task.id, n_boot=n_boot, seed=seed,
                                        evaluation=evaluation).to_dict()  # fmt: skip
    with cpu_clock(work, "subgroup_scores" if weights is None else "subgroup_replicates"):
        out["subgroups"], out["subgroup_replicates"] = subgroup_scores(
            kind, rules, labels, preds, weights
        )
    with cpu_clock(work, "calibration_bins"):
        out["calibration_bins"] = calibration_rows(
            kind, labels, preds, ece_bins=ece_bins, evaluation=evaluation
        )
    with cpu_clock(work, "calibration_measures"):
        out["calibration_measures"] = calibration_measures(kind, labels, preds, evaluation)
    with cpu_clock(work, "calibration_curve"):
        out["calibration_curve"] = calibration_curve_rows(kind, labels, preds)
    out["bootstrap"] = replicates
    if extra:
        with cpu_clock(work, "extra_metrics"):
            out["extra_metrics"] = _extra_metrics(kind, labels, preds, extra, weights)
    return out


def _extra_metrics(kind: str, labels, preds, extra, weights) -> dict:
    """The user metrics' rows and problems; they get a copy of the task's shared resamples."""
    users = [load_metric(spec) for spec in extra]
    mine = None if weights is None else weights.copy()
    rows, problems = extra_metric_results(
        users, metric_inputs(kind, labels, preds), mine, alpha=0.05
    )
    return {"rows": rows, "problems": problems}


def _version_interval(task, labels, preds, bootstrap: tuple[int, int, int], details,
                      evaluation: SubmissionEvaluation) -> dict:  # fmt: skip
    """The first ``n_version`` replicates of a submission's score and ECE: the selected
    submission's own replicates cut when it has them, else read from ``evaluation`` (made on the
    task's first ``n_version`` resample weights by :func:`_evaluation`)."""
    _, seed, n_version = bootstrap
    boot = (details or {}).get("bootstrap")
    if boot is not None:
        return RunReplicates.from_dict(boot).head(n_version).to_dict()
    m = task.manifest
    return run_replicates(m.kind.value, m.metric.value, m.null_score, labels, preds,
                          task_id=task.id, n_boot=n_version, seed=seed,
                          evaluation=evaluation).to_dict()  # fmt: skip


def score_file(
    task,
    path,
    labels=None,
    details: bool = False,
    sha256: str | None = None,
    bootstrap: tuple[int, ...] = (0, 0),
    extra: tuple[str, ...] = (),
    ece_bins: int = DEFAULT_ECE_BINS,
    work: dict[str, float] | None = None,
) -> dict:
    """Validate and score one submission file against ``task``.

    Parameters
    ----------
    task : Task
    path : str or Path
        The submission (it may be absent: that is an invalid result, not an error).
    labels : TaskLabels, optional
        Hidden labels of ``task`` (loaded if not given).
    details : bool, default False
        Also compute subgroup scores (paper App. F), reliability rows, the calibration measures
        and smoothed curve (:mod:`~automd_analysis.scoring.calibration_measures`) and the bootstrap
        replicates (:mod:`~automd_analysis.scoring.replicates`); the engine asks for them for
        selected submissions only.
    sha256 : str, optional
        The sha256 the caller planned with; if the file now has other bytes,
        :class:`SubmissionChanged` is raised so that no result is cached under a stale key.
    bootstrap : (int, int) or (int, int, int)
        ``(n_boot, seed)`` of the per-run bootstrap (``n_boot = 0``: none), and optionally
        ``n_version``: the replicates of the interval every valid file gets (``interval``), the
        first ``n_version`` of the same resamples (0: none).
    extra : tuple of str
        ``module:attribute`` of the user metrics to compute with the details
        (:mod:`~automd_analysis.scoring.extra_metrics`).
    ece_bins : int, default 10
        Equal-width bins of the ECE (and reliability rows) of binary and hourly tasks.
    work : dict, optional
        The CPU seconds of this process are added to it per kind of work
        (:data:`~automd_analysis.scoring.profile.WORK_KINDS`), for the scoring profile.

    Returns
    -------
    dict
        The cache entry: ``task``, ``submission_sha256``, ``scorer_version``, ``valid``,
        ``reasons`` (list of ``{code, message, examples}``), ``n_rows_read``, ``metrics``
        (:func:`~automd_analysis.scoring.metrics_for.metric_record`, ``None`` when invalid) and
        ``details`` (``{"subgroups", "subgroup_replicates", "calibration_bins",
        "calibration_measures", "calibration_curve", "bootstrap"}`` and, with user metrics,
        ``"extra_metrics"``; ``None`` when not requested or invalid) and, with ``n_version``, the
        ``interval`` of a valid file (:meth:`RunReplicates.to_dict` of its first ``n_version``
        replicates).

    Raises
    ------
    DataError
        The task's own data is missing or corrupt (from :func:`~automd_analysis.tasks.load_labels`).
    """
    if labels is None:
        labels = tasks.load_labels(task)
    with cpu_clock(work, "validation"):
        result = submissions.validate_submission(task, Path(path), labels)
    if sha256 is not None and result.sha256 is not None and result.sha256 != sha256:
        raise SubmissionChanged(f"{path} changed while it was being scored")
    entry = validation_entry(task.id, result, sha256)
    m = task.manifest
    if result.valid:
        kind = m.kind.value
        preds = result.predictions
        boot = (*bootstrap, 0)[:3]  # (n_boot, seed, n_version)
        evaluation = _evaluation(task, labels, preds, details, boot, int(ece_bins), work)
        with cpu_clock(work, "point_metrics"):
            entry["metrics"] = metric_record(kind, m.metric.value, m.null_score, labels, preds,
                                             ece_bins=ece_bins, evaluation=evaluation)  # fmt: skip
        if details:
            entry["details"] = _details(task, labels, preds, boot[:2], tuple(extra),
                                        int(ece_bins), evaluation, work)  # fmt: skip
        if boot[2]:
            with cpu_clock(work, "replicates"):
                entry["interval"] = _version_interval(task, labels, preds, boot,
                                                      entry["details"], evaluation)  # fmt: skip
    return entry


def run_chunk(
    manifest_json: str,
    data_root: str,
    cache_dir: str,
    jobs: list[ChunkJob],
    bootstrap: tuple[int, ...] = (0, 0),
    extra: tuple[str, ...] = (),
    ece_bins: int = DEFAULT_ECE_BINS,
) -> list[dict]:
    """Score a chunk of files of one task and write each result to the cache.

    Parameters
    ----------
    manifest_json : str
        The task manifest as JSON (``TaskManifest.model_dump_json()``), so workers need no
        manifest directory.
    data_root : str
        The data root the manifest's paths are relative to (must be visible to the worker).
    cache_dir : str
        The score cache directory (shared with the engine).
    jobs : list of (key, path, sha256, details)
    bootstrap : (int, int) or (int, int, int)
        ``(n_boot, seed[, n_version])`` for :func:`score_file`.
    extra : tuple of str
        User metrics for :func:`score_file`.
    ece_bins : int, default 10
        ECE bins for :func:`score_file`.

    Returns
    -------
    list of dict
        One ``{"key", "status", "error", "cpu"}`` per job; status ``"scored"``, ``"error"`` (this
        file; not cached) or ``"task_error"`` (the task's data could not be loaded); ``cpu`` the
        CPU seconds of the worker process per kind of work
        (:data:`~automd_analysis.scoring.profile.WORK_KINDS`) while it scored this file (loading
        the labels is counted with the chunk's first file).
    """
    limit_numba_threads_on_dask()
    cache = ScoreCache(cache_dir)
    work: dict[str, float] = {}
    try:
        with cpu_clock(work, "labels"):
            task, labels = _task_and_labels(manifest_json, data_root)
    except AutomdError as exc:
        err = exc.to_dict()
        return [{"key": j[0], "status": "task_error", "error": err, "cpu": {}} for j in jobs]
    out = []
    for key, path, sha, details in jobs:
        try:
            entry = score_file(
                task,
                path,
                labels,
                details=details,
                sha256=sha,
                bootstrap=tuple(bootstrap),
                extra=tuple(extra),
                ece_bins=ece_bins,
                work=work,
            )
            with cpu_clock(work, "cache_write"):
                cache.put(key, entry)
            out.append({"key": key, "status": "scored", "error": None, "cpu": work})
        except Exception as exc:  # one file's failure must not stop the others
            code = (
                "archive.file_changed"
                if isinstance(exc, SubmissionChanged)
                else "scoring.internal_error"
            )
            tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
            out.append(
                {
                    "key": key,
                    "status": "error",
                    "error": {"code": code, "message": tb, "path": path},
                    "cpu": work,
                }
            )
        work = {}
    return out
