"""The masking step: the real-time-rule test (paper App. G) over a whole archive.

The test re-runs the code behind each eligible selected submission on a masked test file
(:mod:`automd_analysis.masking.procedure`). That means executing archived code, which this toolkit
never does unless the user asks for it: :func:`run_masking_step` refuses to start without
``allow_code_execution=True`` (``automd masking run ARCHIVE --allow-code-execution``), and it takes
the re-runner as a parameter - normally a
:class:`~automd_analysis.masking.sandbox.SandboxedRerun`, which runs an installed re-runner (the
demo harness registers ``demo``) in a limited child process. Nothing an archive says about itself
(``archive.yaml`` provenance, file names, configs) can switch the test on.

**Which runs** (paper section 4.2 and App. G): valid selected submissions of the main experiment
on sequential tasks, by tree-search agents (AIDE- and AI-Scientist-like, ``runs.search ==
"tree"``) unless ``agents`` names the agents to test. Validity comes from the score store, so the
archive must be scored first.

**Results** go to ``<score store>/masking.parquet`` in the format of
:mod:`automd_analysis.masking.results`; every row carries a ``cache_key`` (sha256 of the run record,
selected code and submission, task content, seed, threshold, re-runner and toolkit version), so an
unchanged archive is not re-run.
"""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from automd_analysis._version import __version__
from automd_analysis.docstrings import fill_doc
from automd_analysis.errors import AutomdError
from automd_analysis.masking.procedure import FLAG_THRESHOLD, MaskingError, run_masking_test
from automd_analysis.masking.results import (
    MASKING_COLUMNS,
    MASKING_FILE,
    MaskingResultsError,
    read_masking_results,
    write_masking_results,
)
from automd_analysis.schema import RUN_KEY

__all__ = [
    "MaskingStepSummary",
    "describe_counts",
    "describe_results",
    "eligible_runs",
    "mask_task_runs",
    "run_cache_key",
    "run_masking_step",
]


#: The ``experiment`` input of the masking step and of the command that runs it.
EXPERIMENT_TESTED = """
experiment : str
    Experiment whose runs are tested (the archive's main role).
"""


# --------------------------------------------------------------------------------------------------
# which runs
# --------------------------------------------------------------------------------------------------


def eligible_runs(
    store,
    *,
    experiment: str = "main",
    agents: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Runs the masking test applies to (paper App. G), from a loaded score store.

    A run is eligible when it belongs to ``experiment``, is not a simple-baseline run, is on a
    sequential task (``task_kind == "sequential"``) and its selected submission is valid; and its
    agent is in ``agents`` or, when ``agents`` is ``None``, it searched a tree
    (``runs.search == "tree"``: the AIDE- and AI-Scientist-like agents the paper tests).

    Returns
    -------
    DataFrame
        Run key + ``search``, ``selected_version``, ``submission_sha256``, sorted by ``run_id``.
    """
    runs, scores = store.runs, store.scores
    selected = scores[scores["is_selected"].astype(bool)].set_index("run_id")
    keep = (runs["experiment"] == experiment) & ~runs["reference"].astype(bool)
    keep &= runs["task_kind"].astype(str) == "sequential"
    keep &= runs["run_id"].map(selected["valid"]).fillna(False).astype(bool)
    if agents is None:
        keep &= runs["search"].astype(str) == "tree"
    else:
        keep &= runs["agent"].isin(list(agents))
    out = runs.loc[keep, [*RUN_KEY, "search", "selected_version"]].copy()
    out["submission_sha256"] = out["run_id"].map(selected["submission_sha256"])
    return out.sort_values("run_id", kind="mergesort").reset_index(drop=True)


# --------------------------------------------------------------------------------------------------
# cache key
# --------------------------------------------------------------------------------------------------


def _file_digest(path: Path, root: Path) -> str:
    from automd_analysis.archive.safe import read_bounded

    return hashlib.sha256(read_bounded(path, 64 << 20, root)).hexdigest()


def run_cache_key(
    run_dir: str | Path,
    selected_version: str | None,
    submission_sha256: str | None,
    task_hash: str | None,
    seed: int,
    threshold: float,
    *,
    rerunner: str = "",
) -> str:
    """sha256 of what a run's masking result depends on.

    ``run.json``, every file under ``code/<selected_version>/`` (relative path + content hash, in
    sorted order), the selected submission's hash, the task's content hash (manifest + pinned
    files: ``store.json`` ``tasks``), the seed, the threshold, the re-runner and how it is
    isolated, and the toolkit version. Files are
    read through the archive's bounded, inside-the-run reader.

    Raises
    ------
    ArchiveError
        A file is missing, too large or resolves outside the run directory.
    """
    run_dir = Path(run_dir)
    parts: list[object] = [
        "automd-masking-v1",
        __version__,
        _file_digest(run_dir / "run.json", run_dir),
        submission_sha256,
        task_hash,
        int(seed),
        repr(float(threshold)),
        rerunner,
    ]
    if selected_version:
        code_dir = run_dir / "code" / selected_version
        if code_dir.is_dir():
            for path in sorted(p for p in code_dir.rglob("*") if p.is_file()):
                rel = path.relative_to(run_dir).as_posix()
                parts.append([rel, _file_digest(path, run_dir)])
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------------------------------
# reading and writing results
# --------------------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------------------
# running the test
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MaskingStepSummary:
    """What :func:`run_masking_step` did.

    Attributes
    ----------
    path : Path
        The results file written.
    n_eligible : int
        Eligible runs (one result row each).
    n_rerun, n_cached : int
        Runs re-run now / results reused from the previous file (unchanged cache key).
    n_flagged, n_errors : int
        Rows flagged as violations / rows whose re-run or comparison failed.
    """

    path: Path
    n_eligible: int
    n_rerun: int
    n_cached: int
    n_flagged: int
    n_errors: int

    def describe(self) -> str:
        """One line for the command line and the report index (no timing, no cache counts)."""
        return describe_counts(self.n_eligible, self.n_flagged, self.n_errors)


def describe_counts(n_eligible: int, n_flagged: int, n_errors: int) -> str:
    """The one line that says what a masking test found (:meth:`MaskingStepSummary.describe`)."""
    return (
        f"masking test of the real-time rule (paper App. G): {n_eligible} eligible "
        f"run(s), {n_flagged} flagged, {n_errors} could not be tested"
    )


def describe_results(frame: pd.DataFrame) -> str:
    """The line of :meth:`MaskingStepSummary.describe` for results read back from a file
    (:func:`~automd_analysis.masking.results.read_masking_results`), with the isolation the
    re-runs recorded, so a report that reads earlier results says what they found.

    Examples
    --------
    >>> frame = pd.DataFrame({"status": ["violation", "no_change", "error"],
    ...     "flagged": [True, False, None], "isolation": ["process", "process", None]})
    >>> describe_results(frame)
    'masking test of the real-time rule (paper App. G): 3 eligible run(s), 1 flagged, 1 could not be tested; re-run isolation: process'
    """
    flagged = int(frame["flagged"].map(lambda v: v is True or v is np.True_).sum())
    errors = int((frame["status"] == "error").sum())
    line = describe_counts(len(frame), flagged, errors)
    isolation = sorted({str(v) for v in frame.get("isolation", pd.Series(dtype=object)).dropna()})
    return line + (f"; re-run isolation: {', '.join(isolation)}" if isolation else "")


def _result_row(run: Mapping, seed: int, threshold: float, raw: Mapping | None, error: str | None):
    row = {name: run.get(name) for name in (*RUN_KEY, "search")}
    row.update(seed=int(seed), threshold=float(threshold), cache_key=run.get("cache_key"),
               isolation=run.get("isolation"))  # fmt: skip
    if raw is None or raw.get("status") == "error":
        row.update(status="error", flagged=None, reason=error or (raw or {}).get("error"))
        return row
    row.update(
        status=raw["status"],
        flagged=bool(raw["violation"]),
        fraction_all_rows=raw["changed_fraction_rows"],
        fraction_last_rows=raw["changed_fraction_last"],
        n_retained_rows=raw["n_retained_rows"],
        n_changed_rows=raw["n_changed_rows"],
        n_patients=raw["n_patients"],
        n_changed_last=raw["n_changed_last"],
        reproduces_original=raw.get("reproduces_original"),
        n_changed_vs_original=raw.get("n_changed_vs_original"),
        reason=None,
    )
    return row


def _clean(value):
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def mask_task_runs(
    task_id: str,
    runs: Sequence[Mapping],
    archive: str | Path,
    *,
    seed: int,
    threshold: float = FLAG_THRESHOLD,
    data: str | Path | None = None,
    manifests: str | Path | None = None,
    rerun: Callable,
) -> list[dict]:
    """Masking-test the given runs of one task; one result row per run (never raises for a run).

    ``rerun(run_dir, test_features_csv, out_csv)`` re-fits a run's model on a test file (normally
    a :class:`~automd_analysis.masking.sandbox.SandboxedRerun`). A task whose manifest or data
    cannot be used gives ``status == "error"`` rows naming the problem.
    """
    archive = Path(archive)
    dirs = {str(archive / run["run_id"]): run for run in runs}
    try:
        with tempfile.TemporaryDirectory(prefix="automd-masking-") as work:
            table = run_masking_test(list(dirs), task_id, seed, work, rerun=rerun,
                                     threshold=threshold, data=data, manifests=manifests)  # fmt: skip
    except AutomdError as exc:
        return [_result_row(run, seed, threshold, None, str(exc)) for run in runs]
    rows = []
    for record in table.to_dict("records"):
        record = {k: _clean(v) for k, v in record.items()}
        rows.append(_result_row(dirs[record["run_dir"]], seed, threshold, record, None))
    return rows


def _previous(path: Path) -> dict[str, dict]:
    """Rows of an earlier results file by cache key (an unreadable file counts as absent)."""
    try:
        frame = read_masking_results(path, missing_ok=True)
    except MaskingResultsError:
        return {}
    if frame is None:
        return {}
    rows = {}
    for record in frame.to_dict("records"):
        key = _clean(record.get("cache_key"))
        if key:
            rows[key] = {k: _clean(v) for k, v in record.items() if k in MASKING_COLUMNS}
    return rows


def _check_allowed(allow_code_execution: bool) -> None:
    if allow_code_execution is not True:
        raise MaskingError(
            "the masking test re-runs archived code, which never happens unless you ask for it",
            code="masking.code_execution_not_allowed",
            fix="pass --allow-code-execution (it runs in a limited sandbox: docs/security.md), or "
            "supply results of a masking test run elsewhere with --masking-results",
        )


@fill_doc(experiment_tested=EXPERIMENT_TESTED)
def run_masking_step(
    archive: str | Path,
    store,
    scores_dir: str | Path,
    *,
    rerun: Callable,
    allow_code_execution: bool = False,
    seed: int = 0,
    experiment: str = "main",
    agents: Sequence[str] | None = None,
    threshold: float = FLAG_THRESHOLD,
    data: str | Path | None = None,
    manifests: str | Path | None = None,
    jobs: int = 1,
    force: bool = False,
    progress: bool = False,
) -> MaskingStepSummary:
    """Masking-test every eligible run of an archive and write ``<scores_dir>/masking.parquet``.

    This re-runs archived code, so it refuses to start unless ``allow_code_execution`` is
    ``True``; what an archive says about itself never enables it.

    Parameters
    ----------
    archive : path
        The runs archive (its runs are re-run with ``rerun``).
    store : ScoreStore
        The archive's loaded score store (validity, task kinds, search types, content hashes).
    scores_dir : path
        Where :data:`MASKING_FILE` is written (normally the score store's directory).
    rerun : callable
        ``rerun(run_dir, test_features_csv, out_csv)``: normally
        :class:`~automd_analysis.masking.sandbox.SandboxedRerun` (a limited child process per
        call). Its ``isolation`` attribute, when present, is recorded per row.
    allow_code_execution : bool
        Must be ``True``: the explicit consent to re-run archived code.
    seed : int
        Seed of the masked test file (one file per task, shared by its runs).
    {experiment_tested}
    agents : sequence of str, optional
        Agents to test; default: the tree-search agents (:func:`eligible_runs`).
    threshold : float
        Flagging threshold (paper: 0.1 %).
    data, manifests : path, optional
        Task data root and manifests (masked files are built from the task's test features).
    jobs : int
        Tasks tested concurrently (threads; each re-run is its own process).
    force : bool
        Re-run every run even when its cached result is current.
    progress : bool
        Show a progress bar over runs.

    Returns
    -------
    MaskingStepSummary

    Raises
    ------
    MaskingError
        ``masking.code_execution_not_allowed`` without consent; ``usage`` for ``jobs < 1``.
    """
    _check_allowed(allow_code_execution)
    if jobs < 1:
        raise AutomdError(f"--jobs must be at least 1, got {jobs}", code="usage", fix="--jobs 1")
    archive = Path(archive)
    path = Path(scores_dir) / MASKING_FILE
    isolation = getattr(rerun, "isolation", "in-process")
    identity = getattr(rerun, "rerunner", type(rerun).__name__)
    runs = eligible_runs(store, experiment=experiment, agents=agents)
    task_hashes = (store.meta or {}).get("tasks", {})
    previous = {} if force else _previous(path)
    rows, todo = [], {}
    for run in runs.to_dict("records"):
        run = {k: _clean(v) for k, v in run.items()}
        run["isolation"] = isolation
        try:
            run["cache_key"] = run_cache_key(archive / run["run_id"], run.get("selected_version"),
                                             run.get("submission_sha256"),
                                             task_hashes.get(run["task"]), seed, threshold,
                                             rerunner=f"{identity}|{isolation}")  # fmt: skip
        except AutomdError as exc:
            rows.append(_result_row(run, seed, threshold, None, str(exc)))
            continue
        cached = previous.get(run["cache_key"])
        if cached is not None and cached.get("run_id") == run["run_id"]:
            rows.append(cached)
            continue
        todo.setdefault(run["task"], []).append(run)
    n_cached = len(rows)
    rows.extend(_test_tasks(todo, archive, seed, threshold, data, manifests, rerun, jobs, progress))
    frame = pd.DataFrame(rows, columns=list(MASKING_COLUMNS))
    write_masking_results(frame, path)
    status = frame["status"].astype(str)
    return MaskingStepSummary(
        path=path,
        n_eligible=len(frame),
        n_rerun=len(frame) - n_cached,
        n_cached=n_cached,
        n_flagged=int((status == "violation").sum()),
        n_errors=int((status == "error").sum()),
    )


def _test_tasks(todo, archive, seed, threshold, data, manifests, rerun, jobs, progress) -> list:
    """Masking-test the runs of each task (``jobs`` tasks at a time), with a progress bar."""
    from concurrent.futures import ThreadPoolExecutor

    from tqdm.auto import tqdm

    def one(item):
        task, task_runs = item
        return mask_task_runs(task, task_runs, archive, seed=seed, threshold=threshold,
                              data=data, manifests=manifests, rerun=rerun)  # fmt: skip

    rows: list[dict] = []
    bar = tqdm(total=sum(map(len, todo.values())), desc="masking test", unit="run",
               disable=not progress)  # fmt: skip
    try:
        with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(todo)))) as pool:
            for result in pool.map(one, sorted(todo.items())):
                rows.extend(result)
                bar.update(len(result))
    finally:
        bar.close()
    return rows
