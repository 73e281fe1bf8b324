"""``automd masking make|compare|run`` (real-time-rule masking test, paper App. G).

Exit codes of ``compare``: 0 no violation, 1 violation flagged, 2 bad input (via the CLI's
:class:`~automd_analysis.errors.AutomdError` handler). ``run`` tests a whole archive
(:mod:`automd_analysis.masking.step`) and only with ``--allow-code-execution``, in the sandbox of
:mod:`automd_analysis.masking.sandbox`: 0 every eligible run tested, 1 some could not be re-run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from automd_analysis._atomic import check_writable_dir
from automd_analysis.cli._apps import DataOpt, ManifestsOpt, masking_app, note_legacy_store, typed
from automd_analysis.errors import AutomdError
from automd_analysis.masking import (
    FLAG_THRESHOLD,
    MaskingError,
    compare_alarms,
    make_masked_test,
    read_predictions_csv,
    write_csv_atomic,
)
from automd_analysis.tasks import get_task


@masking_app.command("make")
def make_command(
    task_id: str = typer.Argument(..., help="Sequential task id (manifest id)."),
    seed: int = typer.Option(
        ..., "--seed", help="Seed of the per-patient draws u ~ U(0.40, 0.90)."
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Output CSV (default: ./<task>_masked_seed<S>.csv)."
    ),
    file_key: str = typer.Option(
        "test_features", "--file-key", help="Manifest files key of the test features."
    ),
    data: Path | None = DataOpt,
    manifests: Path | None = ManifestsOpt,
) -> None:
    """Write the masked test-features file of a sequential task (one file per task, reused by runs).

    Each patient keeps its first min(n, max(4, floor(u n))) hourly rows in time order.
    """
    task = get_task(task_id, data=data, manifests=manifests)
    out = out if out is not None else Path(f"{task.id}_masked_seed{seed}.csv")
    if out.is_dir():
        raise MaskingError("--out is a directory, not a CSV file", path=out,
                           code="masking.out_unwritable", fix="pass a file path, e.g. masked.csv")  # fmt: skip
    check_writable_dir(out.parent, "the folder of --out", code="masking.out_unwritable")
    masked = make_masked_test(task, seed, file_key=file_key)
    source = task.path(file_key)
    if out.resolve() == source.resolve():
        raise MaskingError(
            "refusing to overwrite the task's own test features",
            path=out,
            code="masking.overwrite",
            fix="choose another --out path",
        )
    write_csv_atomic(masked, out)
    patient_column = task.manifest.submission.id_columns[0]
    n_patients = masked[patient_column].nunique()
    typer.echo(f"wrote {out} ({len(masked)} rows, {n_patients} patients, seed {seed})")


@masking_app.command("compare")
def compare_command(
    task_id: str = typer.Argument(..., help="Sequential task id (gives the id columns)."),
    full: Path = typer.Argument(..., help="Predictions of the re-run on the complete test file."),
    masked: Path = typer.Argument(..., help="Predictions of the re-run on the masked test file."),
    masked_test: Path | None = typer.Option(
        None, "--masked-test", help="The masked test file: predictions must cover exactly its rows."
    ),
    original: Path | None = typer.Option(
        None, "--original", help="The archived submission, to check the full re-run reproduces it."
    ),
    threshold: float = typer.Option(
        FLAG_THRESHOLD, "--threshold", help="Flag when a changed fraction exceeds this (0.001)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    manifests: Path | None = ManifestsOpt,
    data: Path | None = DataOpt,
) -> None:
    """Compare alarms at retained hours; exit 1 when a real-time-rule violation is flagged."""
    task = get_task(task_id, data=data, manifests=manifests)
    if task.manifest.kind.value != "sequential":
        raise MaskingError(
            f"task {task.id!r} is a {task.manifest.kind.value} task; the masking test applies to "
            "sequential tasks only",
            code="masking.not_sequential",
            fix="choose a sequential task",
        )
    patient_column, hour_column = task.manifest.submission.id_columns
    label_column = task.manifest.submission.label_column or "PredictedLabel"
    if not 0 <= threshold < 1:
        raise AutomdError(
            f"--threshold must be in [0, 1), got {threshold}", code="usage", fix="e.g. 0.001"
        )
    result = compare_alarms(
        read_predictions_csv(full, "full re-run predictions"),
        read_predictions_csv(masked, "masked re-run predictions"),
        patient_column=patient_column,
        hour_column=hour_column,
        label_column=label_column,
        retained=None if masked_test is None else read_predictions_csv(masked_test, "masked test"),
        original=None if original is None else read_predictions_csv(original, "submission"),
        threshold=threshold,
    )
    if as_json:
        typer.echo(json.dumps(result.to_dict(), sort_keys=True))
    else:
        typer.echo(result.summary())
    if result.violation:
        raise typer.Exit(code=1)


@masking_app.command("run")
def run_command(
    archive: Path = typer.Argument(..., help="Runs archive directory (holds archive.yaml)."),
    data: Path | None = DataOpt,
    manifests: Path | None = ManifestsOpt,
    scores: Path | None = typer.Option(
        None,
        "--scores",
        "--out",
        help="Score-store directory: read for validity, masking.parquet is written into it "
        "(default: <repo>/scores/<archive name>-<key of its path>).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the masked test files."),
    agents: list[str] | None = typer.Option(
        None,
        "--agents",
        help="Agents to test (repeatable or comma-separated; default: the tree-search agents).",
    ),
    experiment: str | None = typer.Option(
        None, "--experiment", help="Experiment to test (default: the archive's main role)."
    ),
    threshold: float = typer.Option(
        FLAG_THRESHOLD, "--threshold", help="Flag when a changed fraction exceeds this (0.001)."
    ),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, help="Tasks tested in parallel."),
    force: bool = typer.Option(False, "--force", help="Re-run runs whose result is cached."),
    allow_code_execution: bool = typer.Option(
        False,
        "--allow-code-execution",
        help="Consent to re-run archived code (required; it runs in a limited sandbox).",
    ),
    rerunner: str = typer.Option(
        "demo",
        "--rerunner",
        help="Installed re-runner (entry point of group automd.rerunners; default: demo).",
    ),
    cpu_seconds: int = typer.Option(900, "--cpu-seconds", min=1, help="CPU limit per re-run."),
    memory_gb: float = typer.Option(8.0, "--memory-gb", min=0.1, help="Memory limit per re-run."),
    wall_seconds: float = typer.Option(
        1800, "--wall-seconds", min=1, help="Wall-clock limit per re-run."
    ),
    require_no_network: bool = typer.Option(
        False,
        "--require-network-isolation",
        help="Refuse to run where no network namespace can be created.",
    ),
) -> None:
    """Run the masking test on every eligible run of ARCHIVE (paper App. G) -> masking.parquet.

    This re-runs archived code, so it needs --allow-code-execution. Each re-run is a separate
    process with CPU, memory, file-size and wall-clock limits, a scrubbed environment, no network
    where the machine allows it, and a temporary directory holding only the run's code and the
    task's public files (docs/security.md). Eligible: valid selected submissions of the main
    experiment on sequential tasks, by the tree-search agents (or --agents). Results are cached
    by content.

    Exit code 0: every eligible run was tested (flagged violations are results). 1: some runs
    could not be re-run (status error in masking.parquet). 2: bad input, or no consent.
    """
    from automd_analysis.analysis.store import load_store
    from automd_analysis.archive import open_archive
    from automd_analysis.archive.workspace import open_workspace
    from automd_analysis.masking.sandbox import SandboxedRerun, SandboxLimits
    from automd_analysis.masking.step import agents_option, run_masking_step

    if not 0 <= threshold < 1:
        raise AutomdError(
            f"--threshold must be in [0, 1), got {threshold}", code="usage", fix="e.g. 0.001"
        )
    if not allow_code_execution:
        raise MaskingError(
            "the masking test re-runs archived code, which never happens unless you ask for it",
            code="masking.code_execution_not_allowed",
            fix="add --allow-code-execution (a limited sandbox: docs/security.md)",
        )
    meta = open_archive(typed(archive)).meta
    ws = open_workspace(
        typed(archive),
        data=typed(data),
        manifests=typed(manifests),
        scores=typed(scores),
        archive_name=meta.name,
    )
    archive, data, manifests, scores_dir = ws.archive, ws.data, ws.manifests, ws.scores
    note_legacy_store(ws)
    check_writable_dir(scores_dir, "--scores", code="masking.out_unwritable")
    store = load_store(scores_dir)
    limits = SandboxLimits(
        cpu_seconds=cpu_seconds,
        memory_bytes=int(memory_gb * (1 << 30)),
        wall_seconds=wall_seconds,
        require_network_isolation=require_no_network,
    )
    rerun = SandboxedRerun(
        rerunner,
        data=None if data is None else str(data),
        manifests=None if manifests is None else str(manifests),
        limits=limits,
    )
    summary = run_masking_step(
        archive,
        store,
        scores_dir,
        rerun=rerun,
        allow_code_execution=True,
        seed=seed,
        experiment=experiment or meta.roles["main"],
        agents=agents_option(agents),
        threshold=threshold,
        data=data,
        manifests=manifests,
        jobs=jobs,
        force=force,
        progress=sys.stderr.isatty(),
    )
    typer.echo(
        f"{summary.describe()}; {summary.n_rerun} re-run now, {summary.n_cached} from cache "
        f"(isolation: {rerun.isolation}) -> {summary.path}"
    )
    if summary.n_errors:
        typer.echo(
            f"automd: {summary.n_errors} run(s) could not be tested; see the reason column of "
            f"{summary.path}",
            err=True,
        )
        raise typer.Exit(1)
