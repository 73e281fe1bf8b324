"""``automd regenerate``: parse the options, run :func:`automd_analysis.app.pipeline.regenerate`,
print what it did. Stage progress goes to stderr; the summary to stdout."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import typer

from automd_analysis.app.run_notebooks import DEFAULT_CELL_TIMEOUT
from automd_analysis.app.scoring import VERSION_BOOTSTRAP
from automd_analysis.cli._apps import (
    ArchiveArg,
    DataOpt,
    EceBinsOpt,
    ManifestsOpt,
    app,
    note_legacy_store,
    typed,
)
from automd_analysis.errors import AutomdError


def _log(line: str) -> None:
    print(f"automd: {line}", file=sys.stderr, flush=True)


def parse_parameters(items: list[str] | None) -> dict[str, object]:
    """``NAME=VALUE`` items -> dict; VALUE is read as YAML (numbers, booleans, null, strings)."""
    import yaml

    out: dict[str, object] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier():
            raise AutomdError(
                f"bad notebook parameter {item!r}",
                location="--parameter",
                code="usage.parameter",
                fix="write NAME=VALUE, e.g. -p n_bins=15",
            )
        try:
            out[name.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            out[name.strip()] = value
    return out


@app.command("regenerate")
def regenerate_command(
    archive: Path = ArchiveArg,
    data: Path | None = DataOpt,
    manifests: Path | None = ManifestsOpt,
    out: Path | None = typer.Option(
        None, "--out", help="Report directory (default: <repo>/reports)."
    ),
    jobs: int = typer.Option(
        2, "--jobs", "-j", min=1, help="Parallel scoring processes/notebooks."
    ),
    scores: Path | None = typer.Option(
        None,
        "--scores",
        help="Score-store directory (default: <repo>/scores/<archive name>-<key of its path>).",
    ),
    notebooks: Path | None = typer.Option(
        None, "--notebooks", help="Notebook directory (default: the repository's notebooks/)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed passed to every notebook."),
    timeout: float = typer.Option(
        DEFAULT_CELL_TIMEOUT, "--timeout", help="Per-cell timeout in seconds."
    ),
    no_score: bool = typer.Option(
        False, "--no-score", help="Use the score store as it is (do not re-score the archive)."
    ),
    masking: bool = typer.Option(
        False,
        "--masking",
        help="Re-run the masking test of the real-time rule (runs archived code in a sandbox; "
        "needs --allow-code-execution).",
    ),
    allow_code_execution: bool = typer.Option(
        False,
        "--allow-code-execution",
        help="Consent to run archived code (only the masking test does; docs/security.md).",
    ),
    rerunner: str = typer.Option(
        "demo", "--rerunner", help="Installed re-runner of the masking test (default: demo)."
    ),
    masking_results: Path | None = typer.Option(
        None,
        "--masking-results",
        help="Masking-test results produced elsewhere (CSV/Parquet) for notebook 07.",
    ),
    embedding_backend: str = typer.Option(
        "auto", "--embedding-backend", help="Code embeddings of notebook 07: auto, minilm, hashing."
    ),
    embedding_cache: Path | None = typer.Option(
        None, "--embedding-cache", help="Embedding cache directory (default: SCORES/embeddings)."
    ),
    min_cell: int | None = typer.Option(
        None,
        "--min-cell",
        help="Suppress published patient/event counts below N (default: 11 for credentialed "
        "and DUA tasks only; an explicit N applies to every task; 0 disables).",
    ),
    bootstrap: int = typer.Option(
        1000, "--bootstrap", min=0, help="Bootstrap replicates per run for intervals (0: none)."
    ),
    version_bootstrap: int = typer.Option(
        0,
        "--version-bootstrap",
        min=0,
        help="Replicates of an interval for every archived version too (0: none; "
        f"e.g. {VERSION_BOOTSTRAP}; passed to `automd score`).",
    ),
    annotations: Path | None = typer.Option(
        None, "--annotations", help="Annotations written by `automd annotate --out DIR`."
    ),
    prefer_generated: bool = typer.Option(
        False, "--prefer-generated", help="Use --annotations even where the archive has its own."
    ),
    metric: list[str] = typer.Option(
        [],
        "--metric",
        metavar="MODULE:ATTR",
        help="A metric of your own, MODULE:ATTRIBUTE (repeatable; passed to `automd score`, "
        "see docs/extending.md).",
    ),
    ece_bins: int = EceBinsOpt,
    parameter: list[str] | None = typer.Option(
        None,
        "--parameter",
        "-p",
        metavar="NAME=VALUE",
        help="Extra notebook parameter (repeatable; `automd regenerate` sets archive, data, "
        "output and seed parameters itself).",
    ),
) -> None:
    """Score ARCHIVE, run every report notebook and render the HTML report (OUT/index.html).

    Archive code is never executed, except by the masking test of the real-time rule (paper
    App. G), which runs it in a limited sandbox and only with both --masking and
    --allow-code-execution. Otherwise masking results are read as data: the file of
    --masking-results, or SCORES/masking.parquet from `automd masking run`.
    """
    from automd_analysis.app.pipeline import RegenerateConfig, default_workspace, regenerate

    if no_score and scores is None:
        with contextlib.suppress(AutomdError):  # the pipeline reports a bad archive itself
            note_legacy_store(default_workspace(typed(archive)))
    config = RegenerateConfig(
        archive=typed(archive),
        out=typed(out),
        scores=typed(scores),
        data=typed(data),
        manifests=typed(manifests),
        jobs=jobs,
        notebooks=typed(notebooks),
        seed=seed,
        timeout=timeout,
        score=not no_score,
        progress=sys.stderr.isatty(),
        masking=masking,
        allow_code_execution=allow_code_execution,
        rerunner=rerunner,
        masking_results=typed(masking_results),
        embedding_backend=embedding_backend,
        embedding_cache=typed(embedding_cache),
        min_cell=min_cell,
        bootstrap=bootstrap,
        version_bootstrap=version_bootstrap,
        annotations=typed(annotations),
        prefer_generated=prefer_generated,
        metrics=tuple(metric),
        ece_bins=ece_bins,
        parameters=parse_parameters(parameter),
    )
    result = regenerate(config, log=_log)
    s = result.summary
    if result.scoring is not None:
        sc = result.scoring
        typer.echo(
            f"Scored {sc.n_runs} runs ({sc.n_files} files; {sc.n_scored} scored, {sc.n_cached} "
            f"from cache) into {result.scores_dir}"
            + (
                f"; {sc.n_skipped_runs} runs skipped (see problems.parquet)"
                if sc.n_skipped_runs
                else ""
            )
            + (
                f"; {sc.n_not_scorable} of them not scorable here (no predictions archived)"
                if sc.n_not_scorable
                else ""
            )
        )
        for note in sc.notes:
            typer.echo(f"Note: {note}")
    for note in result.notes:
        typer.echo(note[0].upper() + note[1:])
    for nb in result.notebooks:
        if nb.skipped is not None:
            typer.echo(f"Skipped {nb.source.name}: {nb.skipped}")
    unscorable = f", {s.n_not_scorable} not scorable here" if s.n_not_scorable else ""
    typer.echo(
        f"Report for archive {s.archive!r} (scorer {s.scorer_version}; {s.n_runs} runs, "
        f"{s.n_valid} valid{unscorable}): {sum(nb.ok for nb in result.notebooks)} notebooks -> "
        f"{result.index}"
    )
