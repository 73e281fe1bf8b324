"""``automd import FORMAT SOURCE --archive DEST ...``: bring a real agent run into an archive.

This module only parses arguments and prints; the work is :func:`automd_analysis.importers
.import_source` (docs/importing.md). Exit codes: 0 imported (recorded problems are listed), 2 a
fatal reason code (malformed or unsafe source, existing run without ``--replace``...; nothing was
written).
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer

from automd_analysis.cli._apps import DataOpt, ManifestsOpt, app
from automd_analysis.errors import AutomdError

_MAX_LISTED = 12


class SourceFormat(StrEnum):
    aide = "aide"
    aiscientist_v2 = "aiscientist-v2"
    codex = "codex"
    autoresearch = "autoresearch"
    fmlbench = "fmlbench"
    mlebench = "mlebench"


def format_report(report: dict) -> str:
    """The human summary of an import (``ImportReport.to_dict()``)."""
    lines = [f"automd import {report['format']}: {report['source']} -> {report['archive']}"]
    for r in report["runs"]:
        sel = r["selection"]
        tokens = (
            f"{r['tokens']['total']:,} total ({r['tokens_source']})" if r["tokens"] else "absent"
        )
        lines += [
            f"  run {r['run_id']}{' (replaced)' if r['replaced'] else ''}",
            f"    llm {r['llm']}, {r['search']} search, {r['nodes']} node(s)/step(s), "
            f"{len(r['versions'])} version(s); files bound: {r['files_bound']} ({r['binding']})",
            f"    selected {sel['selected_version'] or 'nothing'} by {sel['rule']}"
            + (
                f" (reported val {r['reported_val_score']:.6g})"
                if r["reported_val_score"] is not None
                else ""
            ),
            f"    tokens {tokens}",
        ]
        for p in r["problems"][:_MAX_LISTED]:
            lines.append(f"    - {p['code']}: {p['message']}")
        if len(r["problems"]) > _MAX_LISTED:
            lines.append(f"    ... {len(r['problems']) - _MAX_LISTED} more in journal.md")
    return "\n".join(lines)


@app.command("import")
def import_command(
    fmt: SourceFormat = typer.Argument(..., metavar="FORMAT", help="Format of the agent's log."),
    source: Path = typer.Argument(
        ..., help="Directory holding the agent's own log (docs/importing.md)."
    ),
    archive: Path = typer.Option(
        ..., "--archive", help="Archive directory DEST (archive.yaml is created when missing)."
    ),
    agent: str = typer.Option(..., "--agent", help="Agent name in the archive."),
    task: str | None = typer.Option(
        None, "--task", help="Task id (MLE-bench: keep only this competition's runs)."
    ),
    experiment: str = typer.Option("main", "--experiment", help="Experiment id."),
    rep: int = typer.Option(0, "--rep", min=0, help="Repetition index (MLE-bench: the first)."),
    llm: str | None = typer.Option(None, "--llm", help="LLM name (default: from the log)."),
    predictions: str | None = typer.Option(
        None,
        "--predictions",
        help="Pattern relative to SOURCE with {node_id}/{step} (e.g. "
        "node_predictions/{node_id}/submission.csv), or a JSON map file.",
    ),
    tokens: Path | None = typer.Option(
        None, "--tokens", help='JSON {"prompt": int, "completion": int, "total": int}.'
    ),
    budget_minutes: float = typer.Option(
        720.0, "--budget-minutes", min=0.001, help="Time budget of the run (paper: 720)."
    ),
    replace: bool = typer.Option(False, "--replace", help="Replace a run that already exists."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    data: Path | None = DataOpt,
    manifests: Path | None = ManifestsOpt,
    rollout: Path | None = typer.Option(
        None, "--rollout", help="Codex/autoresearch: a rollout-*.jsonl file instead of sessions/."
    ),
) -> None:
    """Import an agent's own output (AIDE, AI-Scientist-v2, Codex, autoresearch, FML-bench, MLE-bench) as archive run(s), selected by the paper's App. C rules.

    Exit code 2: a malformed or unsafe source, an unknown task, an existing run without --replace; nothing is written then.
    """
    from automd_analysis.importers import (
        ImportOptions,
        import_source,
        parse_predictions,
        read_tokens_file,
    )

    try:
        opts = ImportOptions(
            agent=agent,
            task=task,
            experiment=experiment,
            rep=rep,
            llm=llm,
            predictions=parse_predictions(predictions),
            tokens=None if tokens is None else read_tokens_file(tokens),
            budget_minutes=budget_minutes,
            rollout=rollout,
        )
        report = import_source(
            fmt.value,
            source,
            archive,
            opts,
            replace_existing=replace,
            manifests=manifests,
            data=data,
        ).to_dict()
    except AutomdError as exc:
        if as_json:
            typer.echo(json.dumps({"ok": False, "error": exc.to_dict()}, default=str))
        typer.echo(f"automd: error: [{exc.code}] {exc}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps(report, default=str))
    else:
        typer.echo(format_report(report))
