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

from automd_analysis.app import masking
from automd_analysis.cli._apps import (
    ArchiveArg,
    DataOpt,
    ManifestsOpt,
    masking_app,
    note_legacy_store,
    typed,
)
from automd_analysis.errors import MaskingError

FLAG_THRESHOLD = masking.FLAG_THRESHOLD
#: ``compare`` and ``run``: when a changed fraction is a violation.
ThresholdOpt = typer.Option(
    FLAG_THRESHOLD, "--threshold", help="Flag when a changed fraction exceeds this (0.001)."
)


def agents_option(values: list[str] | None) -> list[str] | None:
    """``--agents a --agents b`` or ``--agents a,b`` -> sorted unique names; empty -> ``None``."""
    names = sorted({v.strip() for item in values or () for v in str(item).split(",") if v.strip()})
    return names or None


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
    made = masking.make_masked_file(
        task_id, seed, out, file_key=file_key, data=data, manifests=manifests
    )
    typer.echo(
        f"wrote {made.path} ({made.n_rows} rows, {made.n_patients} patients, seed {made.seed})"
    )


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
    threshold: float = ThresholdOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    manifests: Path | None = ManifestsOpt,
    data: Path | None = DataOpt,
) -> None:
    """Compare alarms at retained hours; exit 1 when a real-time-rule violation is flagged."""
    result = masking.compare_predictions(
        task_id,
        full,
        masked,
        masked_test=masked_test,
        original=original,
        threshold=threshold,
        data=data,
        manifests=manifests,
    )
    if as_json:
        typer.echo(json.dumps(result.to_dict(), sort_keys=True))
    else:
        typer.echo(result.summary())
    if result.violation:
        raise typer.Exit(code=1)


@masking_app.command("run")
def run_command(
    archive: Path = ArchiveArg,
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
    threshold: float = ThresholdOpt,
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
    masking.check_threshold(threshold)
    if not allow_code_execution:
        raise MaskingError(
            "the masking test re-runs archived code, which never happens unless you ask for it",
            code="masking.code_execution_not_allowed",
            fix="add --allow-code-execution (a limited sandbox: docs/security.md)",
        )
    ws, roles = masking.masking_workspace(
        typed(archive), data=typed(data), manifests=typed(manifests), scores=typed(scores)
    )
    note_legacy_store(ws)
    run = masking.run_masking(
        ws,
        allow_code_execution=allow_code_execution,
        experiment=experiment or roles["main"],
        rerunner=rerunner,
        limits=masking.sandbox_limits(cpu_seconds, memory_gb, wall_seconds, require_no_network),
        seed=seed,
        agents=agents_option(agents),
        threshold=threshold,
        jobs=jobs,
        force=force,
        progress=sys.stderr.isatty(),
    )
    summary = run.summary
    typer.echo(
        f"{summary.describe()}; {summary.n_rerun} re-run now, {summary.n_cached} from cache "
        f"(isolation: {run.isolation}) -> {summary.path}"
    )
    if summary.n_errors:
        typer.echo(
            f"automd: {summary.n_errors} run(s) could not be tested; see the reason column of "
            f"{summary.path}",
            err=True,
        )
        raise typer.Exit(1)
