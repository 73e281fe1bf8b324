"""``automd score ARCHIVE``: score every run of an archive into the Parquet score store."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from automd_analysis.app.scoring import (
    DEFAULT_BOOTSTRAP,
    VERSION_BOOTSTRAP,
    ScoreSummary,
    score_archive,
)
from automd_analysis.cli._apps import ArchiveArg, DataOpt, EceBinsOpt, ManifestsOpt, app, typed
from automd_analysis.errors import AutomdError

_MAX_LISTED = 10


def _default_jobs() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def format_summary(s: ScoreSummary) -> str:
    """The human summary printed after scoring."""
    lines = [
        f"automd score: archive {s.archive!r} -> {s.out_dir}",
        f"  runs scored:   {s.n_runs}"
        + (f" ({s.n_skipped_runs} skipped)" if s.n_skipped_runs else ""),
        f"  files:         {s.n_files} ({s.n_unique} distinct contents: "
        f"{s.n_scored} scored now, {s.n_cached} from cache)",
        f"  invalid:       {s.n_invalid} files, {s.n_invalid_selected} selected submissions",
        *(
            [
                f"  not scorable:  {s.n_not_scorable} runs (no prediction file for the task's "
                "test set archived; not counted invalid)"
            ]
            if s.n_not_scorable
            else []
        ),
        f"  problems:      {len(s.problems)} (problems.parquet)",
        f"  time:          {s.seconds:.1f} s",
    ]
    lines += [f"  note: {n}" for n in s.notes]
    for p in s.problems[:_MAX_LISTED]:
        where = p["run_id"] or p["path"] or "archive"
        lines.append(f"    - {p['code']} [{p['effect']}] {where}: {p['message']}")
    if len(s.problems) > _MAX_LISTED:
        lines.append(f"    ... {len(s.problems) - _MAX_LISTED} more in problems.parquet")
    for tid, err in s.data_errors.items():
        lines.append(f"  task {tid!r} not scored: {err['code']}: {err['message']}")
        if err.get("fix"):
            lines.append(f"    fix: {err['fix']}")
    return "\n".join(lines)


@app.command("score")
def score(
    archive: Path = ArchiveArg,
    data: Path | None = DataOpt,
    manifests: Path | None = ManifestsOpt,
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Score store directory (default: <repo>/scores/<archive name>-<key of its path>).",
    ),
    jobs: int = typer.Option(
        _default_jobs(), "--jobs", "-j", min=1, help="Local worker processes."
    ),
    scheduler: str | None = typer.Option(
        None,
        "--scheduler",
        help="Dask distributed scheduler address (e.g. tcp://host:8786); workers must see the "
        "archive, data and --out directories.",
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar."),
    bootstrap: int = typer.Option(
        DEFAULT_BOOTSTRAP,
        "--bootstrap",
        min=0,
        help="Bootstrap replicates per selected submission for intervals (0 disables).",
    ),
    bootstrap_seed: int = typer.Option(0, "--bootstrap-seed", help="Seed of the resamples."),
    version_bootstrap: int = typer.Option(
        0,
        "--version-bootstrap",
        min=0,
        help="Replicates of a score and ECE interval for every archived version too (0: none; "
        f"e.g. {VERSION_BOOTSTRAP}; at most --bootstrap: the first of the same resamples).",
    ),
    annotations: Path | None = typer.Option(
        None,
        "--annotations",
        help="Annotations written by `automd annotate --out DIR` (the archive's own win).",
    ),
    prefer_generated: bool = typer.Option(
        False, "--prefer-generated", help="Use --annotations even where the archive has its own."
    ),
    metric: list[str] = typer.Option(
        [],
        "--metric",
        metavar="MODULE:ATTR",
        help="A metric of your own, MODULE:ATTRIBUTE naming an automd_analysis.metrics.Metric "
        "(repeatable; see docs/extending.md). Metrics of the entry-point group automd.metrics "
        "are always added.",
    ),
    ece_bins: int = EceBinsOpt,
) -> None:
    """Score every selected submission and archived version of ARCHIVE (cached, incremental).

    Invalid submissions are results, not errors: exit code 0 means everything that could be scored was scored.

    Exit code 2: the archive or data root is missing, or a task's manifest or data could not be used (its runs are listed in problems.parquet; everything else is still scored and written).

    Exit code 1: some files failed unexpectedly; they are retried by the next run.
    """
    summary = score_archive(
        typed(archive),
        out=typed(out),
        data=typed(data),
        manifests=typed(manifests),
        jobs=jobs,
        scheduler=scheduler,
        progress=progress,
        bootstrap=bootstrap,
        bootstrap_seed=bootstrap_seed,
        version_bootstrap=version_bootstrap,
        annotations=typed(annotations),
        prefer_generated=prefer_generated,
        extra_metrics=tuple(metric),
        ece_bins=ece_bins,
    )
    typer.echo(format_summary(summary))
    if summary.data_errors:
        first = next(iter(summary.data_errors.values()))
        raise AutomdError(
            f"{len(summary.data_errors)} task(s) could not be scored "
            f"({', '.join(summary.data_errors)}): {first['message']}",
            path=first.get("path"),
            code=first.get("code", "data.missing"),
            fix=first.get("fix"),
        )
    if summary.n_errors:
        typer.echo(
            f"automd: {summary.n_errors} file(s) failed unexpectedly; see problems.parquet. "
            "They are not cached and will be retried by the next run.",
            err=True,
        )
        raise typer.Exit(1)
