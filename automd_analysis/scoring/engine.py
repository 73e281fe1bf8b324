"""Score a whole archive: plan, run the missing work in parallel, rebuild the score store.

1. **Plan** (:mod:`.plan`): read the archive, load and checksum-verify the manifests/data of the
   tasks it uses, hash every submission, derive cache keys. No metric work.
2. **Execute**: only jobs without a cache entry (or a selected file whose entry lacks subgroup and
   reliability rows) are scored. Jobs are grouped by task and cut into chunks, so each worker loads a
   task's hidden labels once; chunks run in-process (``jobs=1``), in a local process pool
   (``jobs>1``) or on a Dask distributed cluster (``scheduler=ADDRESS``; workers must see the same
   file system). Every result is written to the cache atomically as soon as it exists, so a killed
   run loses nothing already scored.
3. **Publish** (:mod:`.store`): the Parquet tables are rebuilt from the cache, deterministically.

Nothing in an archive can stop the whole run: unreadable runs, missing tasks, data that fails its
checksum and unexpected per-file errors are recorded in ``problems.parquet`` and the rest is scored.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from automd_analysis._atomic import check_writable_dir
from automd_analysis.archive import Archive, open_archive
from automd_analysis.archive.workspace import open_workspace, resolve_path
from automd_analysis.errors import DataError, Interrupted, ScoreStoreError
from automd_analysis.importers.problems import PROBLEM_CODES
from automd_analysis.scoring.cache import ScoreCache
from automd_analysis.scoring.code import CODE_SKIPPED, code_tables
from automd_analysis.scoring.extra_metrics import fingerprint, user_metrics
from automd_analysis.scoring.legacy_store import adopt_legacy_store
from automd_analysis.scoring.metrics_for import DEFAULT_ECE_BINS, SCORING_SETTINGS
from automd_analysis.scoring.plan import Job, Plan, make_plan
from automd_analysis.scoring.profile import ScoringProfile
from automd_analysis.scoring.publish import build_tables, run_key, task_rows, write_store
from automd_analysis.scoring.scorable import (
    IMPORT_EFFECT,
    NOT_SCORABLE_EFFECT,
    import_problem_codes,
    not_scorable_reason,
)
from automd_analysis.scoring.worker import ChunkJob, run_chunk

__all__ = [
    "DEFAULT_BOOTSTRAP",
    "VERSION_BOOTSTRAP",
    "ScoreSummary",
    "ScoringInterrupted",
    "checked_settings",
    "score_archive",
]

#: Bootstrap replicates per selected valid submission unless told otherwise.
DEFAULT_BOOTSTRAP = 1000
#: Replicates of a version's interval when versions get one (``version_bootstrap``): enough that
#: a percentile end's Monte Carlo standard error is about a tenth of the interval's half-width
#: (docs/statistics.md section 1, "Versions: intervals on request").
VERSION_BOOTSTRAP = 200

#: Temporaries older than this (seconds) are left-overs of a killed run and are deleted.
_STALE_TMP_SECONDS = 600


@dataclass
class ScoreSummary:
    """What :func:`score_archive` did.

    Attributes
    ----------
    out_dir : Path
        The score store directory.
    archive : str
        Archive name.
    n_runs, n_files : int
        Runs and files (rows of ``scores.parquet``) published.
    n_unique : int
        Distinct (content, task) pairs among the files.
    n_scored, n_cached : int
        Distinct contents scored in this call vs found in the cache (an unchanged re-run has
        ``n_scored == 0``).
    n_invalid, n_invalid_selected : int
        Invalid files, and invalid selected submissions.
    n_not_scorable : int
        Runs published without scores: the archive holds no prediction file for their task's
        test set (:mod:`automd_analysis.scoring.scorable`); never counted invalid.
    n_skipped_runs : int
        Runs left out (unreadable, missing task/data, selected file not scored).
    problems : list of dict
        The rows of ``problems.parquet``.
    data_errors : dict
        Task id -> error dict, for tasks whose manifest or data could not be used.
    n_errors : int
        Files whose scoring failed unexpectedly (not cached; retried next time).
    seconds : float
        Wall-clock time (not written to the store).
    timings : dict
        Wall-clock seconds of the phases ``plan`` (read archive, check task data, hash files),
        ``score`` (metric work) and ``publish`` (build and write the tables).
    cpu : dict
        CPU seconds of this process in the same phases (the workers' are in ``profile``).
    profile : ScoringProfile
        CPU seconds of the workers per task and kind of work, for the files scored in this call
        (:mod:`~automd_analysis.scoring.profile`; also written to
        ``<out_dir>/scoring_profile.json``, which is not part of the store).
    notes : list of str
        What the user should know about the store itself (a store of the old layout met and
        its caches taken: :mod:`~automd_analysis.scoring.legacy_store`).
    """

    out_dir: Path
    archive: str
    n_runs: int = 0
    n_files: int = 0
    n_unique: int = 0
    n_scored: int = 0
    n_cached: int = 0
    n_invalid: int = 0
    n_invalid_selected: int = 0
    n_not_scorable: int = 0
    n_skipped_runs: int = 0
    problems: list[dict] = field(default_factory=list)
    data_errors: dict[str, dict] = field(default_factory=dict)
    n_errors: int = 0
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    profile: ScoringProfile = field(default_factory=ScoringProfile)
    notes: list[str] = field(default_factory=list)


def _rel(path, root: Path) -> str | None:
    if path is None:
        return None
    p = Path(path)
    try:
        return str(p.relative_to(root))
    except ValueError:
        return str(p)


def _run_fields(run_id: str | None) -> dict:
    parts = run_id.split("/") if run_id else []
    if len(parts) == 4 and parts[3].startswith("rep") and parts[3][3:].isdigit():
        return {
            "run_id": run_id,
            "experiment": parts[0],
            "agent": parts[1],
            "task": parts[2],
            "rep": int(parts[3][3:]),
        }
    return {"run_id": run_id, "experiment": None, "agent": None, "task": None, "rep": None}


def _problem_row(err: dict, run_id, root: Path, effect: str, version=None) -> dict:
    return _run_fields(run_id) | {
        "version": version,
        "effect": effect,
        "code": err.get("code"),
        "message": err.get("message"),
        "path": _rel(err.get("path"), root),
        "location": err.get("location"),
        "fix": err.get("fix"),
    }


#: Fixed cost of one file, in bytes of CSV, when balancing chunks (opening, small-task metrics).
_FILE_OVERHEAD_BYTES = 256 << 10


def _chunks(plan: Plan, todo: list[Job], n_workers: int) -> list[tuple]:
    """Cut the jobs into chunks of one task each, balanced by file size; biggest chunks first.

    Each chunk holds about 1 / (4 x workers) of the total bytes (plus a fixed cost per file), so a
    task with huge files (SEER) is spread over every worker while tiny tasks stay in one chunk;
    running the largest chunks first keeps the workers busy until the end.
    """
    by_task: dict[str, list[Job]] = {}
    for job in sorted(todo, key=lambda j: (j.task_id, j.key)):
        by_task.setdefault(job.task_id, []).append(job)
    cost = {j.key: j.size + _FILE_OVERHEAD_BYTES for j in todo}
    target = sum(cost.values()) / (4 * max(1, n_workers))
    groups: list[tuple[float, str, list[Job]]] = []
    for tid, jobs in by_task.items():
        part, acc = [], 0
        for job in jobs:
            part.append(job)
            acc += cost[job.key]
            if acc >= target:
                groups.append((acc, tid, part))
                part, acc = [], 0
        if part:
            groups.append((acc, tid, part))
    groups.sort(key=lambda g: (-g[0], g[1], g[2][0].key))
    chunks = []
    for _, tid, part in groups:
        task = plan.tasks[tid]
        jobs: list[ChunkJob] = [(j.key, str(j.path.resolve()), j.sha256, j.details) for j in part]
        chunks.append((task.manifest.model_dump_json(), str(task.root.resolve()), jobs))
    return chunks


def _init_worker() -> None:  # pragma: no cover - runs in child processes
    import signal

    import numba

    numba.set_num_threads(1)  # one process per core already: no nested parallelism
    # Ctrl-C reaches the whole process group: the engine alone answers it (and stops the workers),
    # so no worker prints a traceback of its own
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class ScoringInterrupted(Interrupted):
    """Scoring was interrupted (Ctrl-C): the store is intact, finished files are cached.

    ``details`` holds ``kept`` (files scored in this call and kept in the cache), ``remaining``
    (files the next run will score) and ``store`` (the score store directory).
    """


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the worker processes now (a Ctrl-C must not wait for
    the running chunks; a cache entry is written atomically, so a killed worker loses only its
    unfinished file)."""
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.terminate()
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.join(timeout=10)


def _execute(
    make_chunks: Callable[[int], list[tuple]],
    cache_dir: str,
    jobs: int,
    scheduler: str | None,
    on_done: Callable[[list[dict]], None],
    bootstrap: tuple[int, ...] = (0, 0),
    extra: tuple[str, ...] = (),
    ece_bins: int = DEFAULT_ECE_BINS,
) -> None:
    """Run the chunks ``make_chunks(workers)`` cuts for the number of workers that will run them
    (``jobs`` local processes, or every thread of the Dask cluster at ``scheduler``)."""

    def failed(chunk, exc) -> list[dict]:
        err = {"code": "scoring.worker_failed", "message": f"{type(exc).__name__}: {exc}"}
        return [{"key": j[0], "status": "error", "error": err, "cpu": {}} for j in chunk[2]]

    if scheduler:
        from distributed import Client
        from distributed import as_completed as dask_completed

        with Client(scheduler, set_as_default=False) as client, client.as_current():
            threads = sum(client.nthreads().values())  # every thread gets chunks to run
            futures = {
                client.submit(
                    run_chunk, m, r, cache_dir, part, bootstrap, extra, ece_bins, pure=False
                ): (
                    m,
                    r,
                    part,
                )
                for m, r, part in make_chunks(max(1, threads))
            }
            for fut in dask_completed(list(futures)):
                try:
                    on_done(fut.result())
                except Exception as exc:
                    on_done(failed(futures[fut], exc))
        return
    chunks = make_chunks(jobs)
    if jobs <= 1 or len(chunks) <= 1:
        for m, r, part in chunks:
            on_done(run_chunk(m, r, cache_dir, part, bootstrap, extra, ece_bins))
        return
    ctx = get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker) as pool:
        try:
            futures = {
                pool.submit(run_chunk, m, r, cache_dir, part, bootstrap, extra, ece_bins): (
                    m,
                    r,
                    part,
                )
                for m, r, part in chunks
            }
            for fut in as_completed(futures):
                try:
                    on_done(fut.result())
                except Exception as exc:
                    on_done(failed(futures[fut], exc))
        except KeyboardInterrupt:
            _stop_pool(pool)
            raise


def _needs_work(entry: dict | None, job: Job) -> bool:
    if entry is None:
        return True
    return job.details and entry["valid"] and entry.get("details") is None


def _score_missing(
    plan: Plan,
    cache: ScoreCache,
    jobs,
    scheduler,
    progress,
    summary,
    bootstrap,
    extra=(),
    ece_bins: int = DEFAULT_ECE_BINS,
):
    """Score every job without a (complete) cache entry; return entries, file and task errors."""
    entries = {key: cache.get(key) for key in plan.jobs}
    todo = [job for key, job in plan.jobs.items() if _needs_work(entries[key], job)]
    summary.n_cached = len(plan.jobs) - len(todo)
    errors: dict[str, dict] = {}
    task_errors = {tid: exc.to_dict() for tid, exc in sorted(plan.task_errors.items())}
    if not todo:
        return entries, errors, task_errors
    from tqdm.auto import tqdm

    bar = tqdm(total=len(todo), unit="file", desc="scoring", disable=not progress)
    by_key = {j.key: j for j in todo}

    def on_done(results: list[dict]) -> None:
        for res in results:
            job = by_key[res["key"]]
            if res.get("cpu"):
                summary.profile.add(job.task_id, res["cpu"], selected=job.details)
            if res["status"] == "scored":
                summary.n_scored += 1
            elif res["status"] == "task_error":
                task_errors.setdefault(job.task_id, res["error"])
            else:
                errors[res["key"]] = res["error"]
        bar.update(len(results))

    try:
        _execute(
            lambda workers: _chunks(plan, todo, workers),
            str(cache.directory),
            jobs,
            scheduler,
            on_done,
            bootstrap,
            extra,
            ece_bins,
        )
    except KeyboardInterrupt:
        bar.close()
        raise _interrupted(cache, todo) from None
    finally:
        bar.close()
    for job in todo:  # a failed job may have left an older entry without details: not usable
        entries[job.key] = None if job.key in errors else cache.get(job.key)
    return entries, errors, dict(sorted(task_errors.items()))


def _import_problem_rows(run, root: Path) -> list[dict]:
    """One ``problems.parquet`` row per problem code ``automd import`` recorded for ``run``."""
    journal = run.dir / "journal.md"
    return [
        _problem_row(
            {
                "code": code,
                "message": PROBLEM_CODES[code],
                "path": journal,
                "fix": "see the run's journal.md and docs/importing.md (recorded problems)",
            },
            run.run_id,
            root,
            IMPORT_EFFECT,
        )
        for code in import_problem_codes(run.notes)
    ]


def _interrupted(cache: ScoreCache, todo: list[Job]) -> ScoringInterrupted:
    """The error of a Ctrl-C during scoring: what was kept, what remains; the store untouched
    (tables are published only after scoring, all at once)."""
    kept = sum(not _needs_work(cache.get(job.key), job) for job in todo)
    store = cache.directory.parent
    return ScoringInterrupted(
        f"interrupted: the score store is intact (its tables are those of the last complete run); "
        f"{kept} of the {len(todo)} files to score were scored and are kept in its cache",
        path=store,
        code="scoring.interrupted",
        fix=f"run the same command again: it scores only the remaining {len(todo) - kept}",
        details={"kept": kept, "remaining": len(todo) - kept, "store": str(store)},
    )


def _select_publishable(arch: Archive, runs, plan: Plan, entries, errors, task_errors, extra=()):
    """Runs to publish (usable task, and a scored selected file or nothing to score), their
    files, and the problem rows."""
    problems = [
        _problem_row(p.to_dict(), p.details.get("run_id"), arch.root, p.details.get("effect"))
        for p in [*arch.problems, *extra]
    ]
    for run in runs:
        problems += _import_problem_rows(run, arch.root)
    missing = {"code": "scoring.missing_entry", "message": "not scored"}
    selected_key = {f.run.run_id: f.key for f in plan.files if f.is_selected}
    published = []
    for run in runs:
        if run.task in task_errors:
            problems.append(
                _problem_row(task_errors[run.task], run.run_id, arch.root, "run skipped")
            )
            continue
        if run.run_id in plan.not_scorable:
            reason = plan.not_scorable[run.run_id]
            problems.append(_problem_row(reason, run.run_id, arch.root, NOT_SCORABLE_EFFECT))
            published.append(run)
            continue
        key = selected_key.get(run.run_id)  # None: a process-only run, nothing to score
        if key is not None and entries.get(key) is None:
            err = errors.get(key, missing)
            problems.append(_problem_row(err, run.run_id, arch.root, "run skipped", "selected"))
            continue
        published.append(run)
    keep = {r.run_id for r in published}
    files = [f for f in plan.files if f.run.run_id in keep]
    for f in files:
        if f.key is not None and entries.get(f.key) is None:
            err = errors.get(f.key, missing)
            problems.append(
                _problem_row(err, f.run.run_id, arch.root, "file skipped", f.version_id)
            )
    return published, files, problems


def _answer_text(value) -> str:
    """A codebook answer as one string (multi-valued answers joined by ``+``, as in the
    agreement tables)."""
    return "+".join(value) if isinstance(value, tuple) else str(value)


def _comparison_rows(runs, generated) -> list[dict]:
    """``annotation_comparison`` rows: per run that has both its own and generated annotations,
    and per field both answer, the two answers side by side (the input of the agreement tables)."""
    rows = []
    for run in runs:
        mine, theirs = run.annotations, generated.get(run.run_id)
        if mine is None or theirs is None:
            continue
        for name in sorted(set(mine.answers) & set(theirs.answers)):
            rows.append(
                run_key(run)
                | {
                    "field": name,
                    "reference_value": _answer_text(mine.answers[name].value),
                    "generated_value": _answer_text(theirs.answers[name].value),
                    "reference_annotator": mine.annotator,
                    "generated_annotator": theirs.annotator,
                }
            )
    return rows


def _with_annotations(runs, arch: Archive, directory, prefer_generated: bool):
    """Runs with generated annotations applied (``automd annotate`` output), their sources, the
    archive's answers next to the generated ones (rows of ``annotation_comparison``) and the
    problems of unusable generated files; the runs unchanged when no directory is given."""
    if directory is None:
        return runs, None, [], []
    from automd_analysis.archive.generated import apply_annotations, load_generated_annotations

    generated, problems = load_generated_annotations(arch, directory)
    comparison = _comparison_rows(runs, generated)
    runs, sources = apply_annotations(runs, generated, prefer_generated=prefer_generated)
    return runs, sources, comparison, problems


def _assemble(arch, runs, plan: Plan, outcome, annotation_problems, sources, comparison):
    """The runs to publish and the rows of every store table: the scores and details from the
    cache, each version's code (read through the archive reader) and the task facts."""
    entries, errors, task_errors = outcome
    published, files, problems = _select_publishable(
        arch, runs, plan, entries, errors, task_errors, annotation_problems
    )
    layout: list[dict] = []
    code, texts, unreadable = code_tables(published, run_key, layout)
    problems += [
        _problem_row(u["error"].to_dict(), u["run_id"], arch.root, CODE_SKIPPED, u["version"])
        for u in unreadable
    ]
    declared = {t: k.manifest for t, k in plan.tasks.items()} | plan.process_tasks
    tables = build_tables(published, files, entries, declared, problems,
                          annotation_sources=sources, not_scorable=plan.not_scorable)  # fmt: skip
    kept = {run.run_id for run in published}
    tables["annotation_comparison"] = [r for r in comparison if r["run_id"] in kept]
    tables["code"], tables["code_texts"], tables["code_files"] = code, texts, layout
    used = {run.task for run in published}
    tables["tasks"] = task_rows({t: declared[t] for t in used}, _task_hashes(plan, used))
    return published, tables


def _task_hashes(plan: Plan, tasks) -> dict[str, str]:
    """Content hash of each task (manifest, or process-only declaration), by id."""
    known = {t: k.content_hash for t, k in plan.tasks.items()}
    known |= {t: p.content_hash for t, p in plan.process_tasks.items()}
    return {t: known[t] for t in tasks if t in known}


def checked_settings(
    bootstrap: int, bootstrap_seed: int, ece_bins: int, version_bootstrap: int = 0
) -> tuple[int, ...]:
    """``(n_boot, seed)`` of the bootstrap (``(0, 0)``: none), and ``version_bootstrap`` after
    them when versions get intervals, after checking the settings."""
    if isinstance(ece_bins, bool) or not isinstance(ece_bins, int) or not 2 <= ece_bins <= 1000:
        raise ScoreStoreError(
            f"--ece-bins must be a whole number from 2 to 1000, got {ece_bins!r}",
            location="--ece-bins",
            code="usage",
            fix="e.g. --ece-bins 15 (the paper's ECE uses 10)",
        )
    if bootstrap < 0 or bootstrap == 1:
        raise ScoreStoreError(
            f"--bootstrap must be 0 (off) or at least 2, got {bootstrap}",
            location="--bootstrap",
            code="usage",
            fix="e.g. --bootstrap 1000",
        )
    if (
        isinstance(version_bootstrap, bool)
        or not isinstance(version_bootstrap, int)
        or version_bootstrap < 0
        or version_bootstrap == 1
        or version_bootstrap > max(bootstrap, 0)
    ):
        raise ScoreStoreError(
            f"version replicates must be 0 (none) or between 2 and --bootstrap ({bootstrap}), "
            f"got {version_bootstrap!r}",
            location="--version-bootstrap",
            code="usage",
            fix=f"e.g. --version-bootstrap {min(VERSION_BOOTSTRAP, max(bootstrap, 2))} (the "
            "first replicates of the same resamples; at most --bootstrap)",
        )
    boot = (int(bootstrap), int(bootstrap_seed)) if bootstrap else (0, 0)
    return (*boot, int(version_bootstrap)) if version_bootstrap else boot


def _now() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _finish(summary: ScoreSummary, marks: list[tuple[float, float]], jobs, scheduler) -> None:
    """The phases' wall and CPU seconds into ``summary``, and its profile written beside the
    store (a profile that cannot be written is a note: the store is complete)."""
    phases = list(zip(("plan", "score", "publish"), marks, marks[1:], strict=False))
    summary.seconds = marks[-1][0] - marks[0][0]
    summary.timings = {name: end[0] - start[0] for name, start, end in phases}
    summary.cpu = {name: end[1] - start[1] for name, start, end in phases}
    try:
        summary.profile.write(
            summary.out_dir, phases_wall_s=summary.timings, main_cpu_s=summary.cpu,
            jobs=None if scheduler else int(jobs), scheduler=bool(scheduler),
            scored=summary.n_scored, cached=summary.n_cached,
        )  # fmt: skip
    except OSError as exc:
        summary.notes.append(f"the scoring profile was not written ({exc}); the store is complete")


def score_archive(
    archive: str | Path | Archive,
    out: str | Path | None = None,
    data: str | Path | None = None,
    manifests: str | Path | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: bool = False,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    bootstrap_seed: int = 0,
    annotations: str | Path | None = None,
    prefer_generated: bool = False,
    extra_metrics: Sequence[str] = (),
    ece_bins: int = DEFAULT_ECE_BINS,
    version_bootstrap: int = 0,
) -> ScoreSummary:
    """Score every run of an archive into a Parquet score store (``docs/score_store.md``).

    Parameters
    ----------
    archive : path or Archive
        The runs archive (``docs/archive.md``). Relative paths (here and below) are taken from
        the project root (:mod:`automd_analysis.archive.workspace`).
    out : path, optional
        Score store directory; default ``<root>/scores/<archive name>-<key>``, the key made
        from the archive's path (:mod:`automd_analysis.archive.workspace`; a relative path is
        taken from the project root). The cache lives in ``<out>/cache``. It may not lie inside
        the archive. A default store scored for the first time takes the caches of a store of
        the old layout, ``<root>/scores/<archive name>``, and says so (``notes``).
    data, manifests : path, optional
        Data root and manifest directory (defaults: ``AUTOMD_DATA`` / ``AUTOMD_MANIFESTS`` / the
        repository's ``data`` and ``data_manifests``).
    jobs : int, default 1
        Local worker processes (1 = in this process).
    scheduler : str, optional
        Address of a Dask distributed scheduler; when given, ``jobs`` is ignored.
    progress : bool, default False
        Show a tqdm progress bar (stderr).
    bootstrap : int, default 1000
        Bootstrap replicates per selected valid submission (percentile intervals on the score
        and ECE, and the replicates table the aggregate intervals are built from); 0 disables.
    bootstrap_seed : int, default 0
        Seed of the resamples (they depend only on the task, the test size and this seed, so the
        runs of a task share them: comparisons are paired).
    version_bootstrap : int, default 0
        Replicates of the score and ECE interval of every valid *version* (the ``score_ci_*`` and
        ``ece_bc*`` columns of its ``scores`` row): the first ``version_bootstrap`` of the same
        resamples, at most ``bootstrap`` (:data:`VERSION_BOOTSTRAP` is the number the run pages
        need); 0 (default): versions get no interval. Selected submissions always get
        ``bootstrap``.
    annotations : path, optional
        Output directory of ``automd annotate`` (generated codebook answers). A run's annotations
        in the archive win unless ``prefer_generated``; ``runs.parquet`` records which were used
        (``annotator``, ``annotations_source``).
    prefer_generated : bool, default False
        Use the generated annotations even where the archive has its own.
    extra_metrics : sequence of str, optional
        ``module:attribute`` of user metrics (``--metric``), added to those registered under the
        entry-point group ``automd.metrics``
        (:func:`~automd_analysis.scoring.extra_metrics.user_metrics`); each is computed with its
        bootstrap interval for every selected valid submission of a matching kind into
        ``extra_metrics.parquet``, and their fingerprints are part of every cache key.
    ece_bins : int, default 10
        Equal-width bins of the ECE of binary and hourly tasks (its value, replicates and the
        reliability rows; survival tasks keep their Kaplan-Meier groups). Recorded in
        ``store.json`` (``settings.ece_n_bins``); another value is another cache key.

    Returns
    -------
    ScoreSummary

    Raises
    ------
    ArchiveError
        The archive directory or its ``archive.yaml`` is missing or invalid.
    DataError
        The data root does not exist (``data.missing``).
    ScoreStoreError
        ``out`` lies inside the archive.
    AutomdError
        A user metric cannot be loaded (``metric.*``; nothing is scored).
    """
    marks = [_now()]
    users = user_metrics(extra_metrics)
    arch = archive if isinstance(archive, Archive) else open_archive(resolve_path(archive))
    ws = open_workspace(
        arch.root,
        scores=out,
        data=data,
        manifests=manifests,
        annotations=annotations,
        archive_name=arch.name,
    )
    out_dir = ws.scores
    if out_dir.resolve().is_relative_to(arch.root):
        raise ScoreStoreError(
            "the score store may not be written inside the archive",
            path=out_dir,
            code="store.inside_archive",
            fix="choose an --out directory outside the archive (archives are read-only)",
        )
    check_writable_dir(out_dir, "--out", code="store.unwritable")
    notes = [] if ws.legacy_scores is None else adopt_legacy_store(ws.legacy_scores, out_dir)
    runs = arch.runs()
    runs, sources, comparison, annotation_problems = _with_annotations(
        runs, arch, ws.annotations, prefer_generated
    )
    root = ws.data
    needs_data = [r for r in runs if r.task not in arch.meta.process_tasks
                  and not_scorable_reason(r) is None]  # fmt: skip
    if needs_data and not root.is_dir():
        raise DataError(
            "data root not found",
            path=root,
            code="data.missing",
            fix="pass --data DIR or set AUTOMD_DATA (demo tasks: run "
            f"`automd demo data --data {shlex.quote(str(root))}`)",
        )
    boot = checked_settings(bootstrap, bootstrap_seed, ece_bins, version_bootstrap)
    extra = [fingerprint(u) for u in users]
    plan = make_plan(
        runs,
        data=root,
        manifests=ws.manifests,
        hash_workers=max(1, jobs),
        bootstrap=boot,
        extra=extra or None,
        process_tasks=arch.meta.process_tasks,
        settings=None if ece_bins == DEFAULT_ECE_BINS else {"ece_n_bins": int(ece_bins)},
    )
    cache = ScoreCache(out_dir / "cache")
    cache.clean_temporaries(older_than=_STALE_TMP_SECONDS)
    summary = ScoreSummary(out_dir=out_dir, archive=arch.name, n_unique=len(plan.jobs), notes=notes)
    marks.append(_now())
    specs = tuple(u.spec for u in users)
    entries, errors, task_errors = _score_missing(
        plan, cache, jobs, scheduler, progress, summary, boot, specs, int(ece_bins)
    )
    marks.append(_now())
    published, tables = _assemble(
        arch, runs, plan, (entries, errors, task_errors), annotation_problems, sources, comparison
    )
    scores = tables["scores"]
    summary.n_runs = len(published)
    summary.n_files = len(scores)
    summary.n_invalid = sum(not r["valid"] for r in scores)
    summary.n_invalid_selected = sum(not r["valid"] for r in scores if r["is_selected"])
    summary.n_not_scorable = sum(r["run_id"] in plan.not_scorable for r in tables["runs"])
    summary.n_skipped_runs = len(runs) - len(published)
    summary.problems = tables["problems"]
    summary.data_errors = task_errors
    summary.n_errors = len(errors)
    meta = {
        **({"extra_metrics": extra} if extra else {}),
        "archive": arch.name,
        "settings": dict(SCORING_SETTINGS)
        | {"ece_n_bins": int(ece_bins), "bootstrap_n": boot[0], "bootstrap_seed": boot[1]}
        | ({"version_bootstrap_n": boot[2]} if len(boot) > 2 else {}),
        "annotations": {
            "generated": ws.annotations is not None,
            "prefer_generated": bool(prefer_generated) if ws.annotations is not None else False,
        },
        "tasks": _task_hashes(
            plan, sorted(set(plan.tasks) - set(task_errors) | set(plan.process_tasks))
        ),  # fmt: skip
        "counts": {
            "runs": summary.n_runs,
            "files": summary.n_files,
            "valid_files": summary.n_files - summary.n_invalid,
            "invalid_files": summary.n_invalid,
            "invalid_selected": summary.n_invalid_selected,
            "not_scorable": summary.n_not_scorable,
            "skipped_runs": summary.n_skipped_runs,
            "problems": len(tables["problems"]),
        },
    }
    write_store(out_dir, tables, meta)
    _finish(summary, [*marks, _now()], jobs, scheduler)
    return summary
