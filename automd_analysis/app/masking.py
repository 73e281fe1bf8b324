"""The masking test of the real-time rule (paper App. G) as the application runs it.

The one place the sandboxed re-runner and the archive-wide masking step are assembled:
``automd masking run`` and ``automd regenerate --masking`` both call :func:`run_masking`, and
``automd masking make|compare`` call :func:`make_masked_file` and :func:`compare_predictions`.
Archived code runs only here, only with the user's explicit consent (``automd masking run``
refuses without ``--allow-code-execution``, ``automd regenerate`` checks it before any work, and
the step itself refuses without it), in the sandbox of :mod:`automd_analysis.masking.sandbox`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from automd_analysis._atomic import check_writable_dir
from automd_analysis.analysis.store import load_store
from automd_analysis.archive import open_archive
from automd_analysis.archive.workspace import Workspace, open_workspace
from automd_analysis.docstrings import fill_doc
from automd_analysis.errors import AutomdError
from automd_analysis.masking import (
    FLAG_THRESHOLD,
    MaskingComparison,
    MaskingError,
    compare_alarms,
    make_masked_test,
    read_predictions_csv,
    write_csv_atomic,
)
from automd_analysis.masking.sandbox import SandboxedRerun, SandboxLimits
from automd_analysis.masking.step import EXPERIMENT_TESTED, MaskingStepSummary, run_masking_step
from automd_analysis.tasks import get_task

__all__ = [
    "MaskedFile",
    "MaskingRun",
    "check_threshold",
    "compare_predictions",
    "make_masked_file",
    "masking_workspace",
    "run_masking",
    "sandbox_limits",
]


@dataclass(frozen=True)
class MaskingRun:
    """What :func:`run_masking` did: the step's summary and how the re-runs were isolated."""

    summary: MaskingStepSummary
    isolation: str


@dataclass(frozen=True)
class MaskedFile:
    """The masked test-features file :func:`make_masked_file` wrote."""

    path: Path
    n_rows: int
    n_patients: int
    seed: int


def check_threshold(threshold: float) -> None:
    """Refuse a flag threshold outside [0, 1) (``usage``)."""
    if not 0 <= threshold < 1:
        raise AutomdError(
            f"--threshold must be in [0, 1), got {threshold}", code="usage", fix="e.g. 0.001"
        )


def sandbox_limits(
    cpu_seconds: int, memory_gb: float, wall_seconds: float, require_network_isolation: bool
) -> SandboxLimits:
    """The resource limits of one re-run, from the command line's units (GiB of memory)."""
    return SandboxLimits(
        cpu_seconds=cpu_seconds,
        memory_bytes=int(memory_gb * (1 << 30)),
        wall_seconds=wall_seconds,
        require_network_isolation=require_network_isolation,
    )


def masking_workspace(archive, *, data=None, manifests=None, scores=None) -> tuple[Workspace, dict]:
    """The folders of a masking run of ``archive`` and the archive's experiment roles.

    Raises
    ------
    ArchiveError
        The archive or its ``archive.yaml`` is missing or invalid.
    """
    meta = open_archive(archive).meta
    ws = open_workspace(
        archive, data=data, manifests=manifests, scores=scores, archive_name=meta.name
    )
    return ws, dict(meta.roles)


@fill_doc(experiment_tested=EXPERIMENT_TESTED)
def run_masking(
    workspace: Workspace,
    *,
    allow_code_execution: bool,
    experiment: str,
    store=None,
    rerunner: str = "demo",
    limits: SandboxLimits | None = None,
    seed: int = 0,
    agents: Sequence[str] | None = None,
    threshold: float = FLAG_THRESHOLD,
    jobs: int = 1,
    force: bool = False,
    progress: bool = False,
    log: Callable[[str], None] | None = None,
) -> MaskingRun:
    """Re-run every eligible run of the workspace's archive in the sandbox and write
    ``<scores>/masking.parquet`` (:func:`~automd_analysis.masking.step.run_masking_step`).

    Parameters
    ----------
    workspace : Workspace
        The archive, data, manifests and score store.
    allow_code_execution : bool
        The user's explicit consent to re-run archived code; the step refuses to start without
        it (``masking.code_execution_not_allowed``).
    {experiment_tested}
    store : ScoreStore, optional
        The loaded score store; loaded from ``workspace.scores`` when not given (which must then
        be writable).
    rerunner : str
        Installed re-runner (``automd.rerunners`` entry point) or ``module:function``.
    limits : SandboxLimits, optional
        Resource limits of one re-run (default :class:`SandboxLimits`).
    seed, agents, threshold, jobs, force, progress
        As :func:`~automd_analysis.masking.step.run_masking_step`.
    log : callable, optional
        Told how the re-runs are isolated before they start.

    Returns
    -------
    MaskingRun

    Raises
    ------
    AutomdError
        An unusable score store, an unknown re-runner, a missing task, and the errors of
        :func:`~automd_analysis.masking.step.run_masking_step`.
    """
    if store is None:
        check_writable_dir(workspace.scores, "--scores", code="masking.out_unwritable")
        store = load_store(workspace.scores)
    data, manifests = workspace.data, workspace.manifests
    rerun = SandboxedRerun(
        rerunner,
        data=None if data is None else str(data),
        manifests=None if manifests is None else str(manifests),
        limits=limits if limits is not None else SandboxLimits(),
    )
    if log is not None:
        log(f"masking test: re-running eligible runs in the sandbox ({rerun.isolation})")
    summary = run_masking_step(
        workspace.archive,
        store,
        workspace.scores,
        rerun=rerun,
        allow_code_execution=allow_code_execution,
        seed=seed,
        experiment=experiment,
        agents=agents,
        threshold=threshold,
        data=data,
        manifests=manifests,
        jobs=jobs,
        force=force,
        progress=progress,
    )
    return MaskingRun(summary=summary, isolation=rerun.isolation)


def make_masked_file(
    task_id: str,
    seed: int,
    out: Path | None = None,
    *,
    file_key: str = "test_features",
    data=None,
    manifests=None,
) -> MaskedFile:
    """Write the masked test-features file of a sequential task (paper App. G).

    Each patient keeps its first min(n, max(4, floor(u n))) hourly rows in time order, u drawn
    per patient from ``seed`` (:func:`~automd_analysis.masking.make_masked_test`).

    Raises
    ------
    MaskingError
        ``out`` is a directory or the task's own test file; ``masking.out_unwritable``.
    """
    task = get_task(task_id, data=data, manifests=manifests)
    out = out if out is not None else Path(f"{task.id}_masked_seed{seed}.csv")
    if out.is_dir():
        raise MaskingError("--out is a directory, not a CSV file", path=out,
                           code="masking.out_unwritable", fix="pass a file path, e.g. masked.csv")  # fmt: skip
    check_writable_dir(out.parent, "the folder of --out", code="masking.out_unwritable")
    masked = make_masked_test(task, seed, file_key=file_key)
    if out.resolve() == task.path(file_key).resolve():
        raise MaskingError(
            "refusing to overwrite the task's own test features",
            path=out,
            code="masking.overwrite",
            fix="choose another --out path",
        )
    write_csv_atomic(masked, out)
    patient_column = task.manifest.submission.id_columns[0]
    return MaskedFile(out, len(masked), int(masked[patient_column].nunique()), int(seed))


def compare_predictions(
    task_id: str,
    full: Path,
    masked: Path,
    *,
    masked_test: Path | None = None,
    original: Path | None = None,
    threshold: float = FLAG_THRESHOLD,
    data=None,
    manifests=None,
) -> MaskingComparison:
    """Compare the alarms of a re-run on the complete and on the masked test file.

    Raises
    ------
    AutomdError
        The task is not sequential (``masking.not_sequential``), the threshold is outside
        [0, 1) (``usage``), or a predictions file is unusable.
    """
    task = get_task(task_id, data=data, manifests=manifests)
    if task.manifest.kind.value != "sequential":
        raise MaskingError(
            f"task {task.id!r} is a {task.manifest.kind.value} task; the masking test applies to "
            "sequential tasks only",
            code="masking.not_sequential",
            fix="choose a sequential task",
        )
    patient_column, hour_column = task.manifest.submission.id_columns
    check_threshold(threshold)
    return compare_alarms(
        read_predictions_csv(full, "full re-run predictions"),
        read_predictions_csv(masked, "masked re-run predictions"),
        patient_column=patient_column,
        hour_column=hour_column,
        label_column=task.manifest.submission.label_column or "PredictedLabel",
        retained=None if masked_test is None else read_predictions_csv(masked_test, "masked test"),
        original=None if original is None else read_predictions_csv(original, "submission"),
        threshold=threshold,
    )
