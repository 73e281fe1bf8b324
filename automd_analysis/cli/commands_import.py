"""``automd import FORMAT SOURCE --archive DEST ...``: bring a real agent run into an archive.

This module only parses arguments and prints; the work is
:func:`automd_analysis.app.importing.import_runs` (one run, or a study with ``--layout``;
docs/importing.md). Exit codes, one run: 0 imported (recorded problems are listed), 2 a fatal
reason code (malformed or unsafe source, existing run without ``--replace``...; nothing was
written). A study: 0 every run imported, 1 some failed, 2 none.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer

from automd_analysis.cli._apps import DataOpt, JsonOpt, ManifestsOpt, ProgressOpt, app
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
    lines += _run_lines(report["runs"])
    return "\n".join(lines)


def _run_lines(runs: list[dict], indent: str = "  ") -> list[str]:
    lines = []
    for r in runs:
        sel = r["selection"]
        tokens = (
            f"{r['tokens']['total']:,} total ({r['tokens_source']})" if r["tokens"] else "absent"
        )
        lines += [
            f"{indent}run {r['run_id']}{' (replaced)' if r['replaced'] else ''}"
            + (" - INCOMPLETE" if r.get("incomplete") else ""),
            f"{indent}  llm {r['llm']}, {r['search']} search, {_steps(r)}, "
            f"{len(r['versions'])} version(s); files bound: {r['files_bound']} ({r['binding']})",
            f"{indent}  selected {sel['selected_version'] or 'nothing'} by {sel['rule']}"
            + (
                f" (reported val {r['reported_val_score']:.6g})"
                if r["reported_val_score"] is not None
                else ""
            ),
            f"{indent}  tokens {tokens}",
        ]
        if r.get("process_task"):
            t = r["process_task"]
            way = "higher" if t["higher_is_better"] else "lower"
            lines.append(f"{indent}  process-only task: {t['metric']} ({way} is better), "
                         f"baseline {t['baseline']}; nothing to score")  # fmt: skip
        for p in r["problems"][:_MAX_LISTED]:
            lines.append(f"{indent}  - {p['code']}: {p['message']}")
        if len(r["problems"]) > _MAX_LISTED:
            lines.append(f"{indent}  ... {len(r['problems']) - _MAX_LISTED} more in journal.md")
    return lines


def _steps(run: dict) -> str:
    """The run's size in the unit ``run.json`` counts: its development steps."""
    steps, nodes = run.get("steps"), run["nodes"]
    if steps is None:
        return "no step list in run.json" + (f" ({nodes} snapshot(s))" if nodes else "")
    extra = nodes - steps
    return f"{steps} step(s) in run.json" + (
        f" (+{extra} seed-aggregation node{'s' if extra > 1 else ''}, not a step)" if extra else ""
    )


def format_study(study: dict) -> str:
    """The human summary of a study import (``StudyReport.to_dict()``)."""
    n = study["imported"] + study["failed"]
    lines = [
        f"automd import {study['format']} (layout {study['layout']!r}): {study['root']} -> "
        f"{study['archive']}",
        f"  {study['imported']} of {n} run(s) imported, {study['failed']} failed (nothing was "
        "written for a failed run)",
    ]
    for src in study["sources"]:
        if src["ok"]:
            lines.append(f"  ok      {src['source']}")
            lines += _run_lines(src["runs"], indent="    ")
        else:
            err = src["error"]
            lines.append(f"  FAILED  {src['source']}: [{err['code']}] {err['message']}")
            if err.get("fix"):
                lines.append(f"          fix: {err['fix']}")
    for skipped in study["skipped"]:
        lines.append(f"  skipped {skipped['source']}: {skipped['why']}")
    if not study["sources"]:
        lines.append("  no directory under ROOT matches the layout")
    return "\n".join(lines)


@app.command("import")
def import_command(
    fmt: SourceFormat = typer.Argument(..., metavar="FORMAT", help="Format of the agent's log."),
    # paths are plain strings: the importer checks them and answers with its reason codes
    source: str = typer.Argument(
        ...,
        help="Directory holding the agent's own log (docs/importing.md); fmlbench: also "
        "FML-bench's whole results/ tree (<agent>/<task>/<run>/).",
    ),
    archive: str = typer.Option(
        ..., "--archive", help="Archive directory DEST (archive.yaml is created when missing)."
    ),
    agent: str | None = typer.Option(
        None, "--agent", help="Agent name in the archive (required unless --layout has {agent})."
    ),
    task: str | None = typer.Option(
        None, "--task", help="Task id (MLE-bench: keep only this competition's runs)."
    ),
    experiment: str = typer.Option("main", "--experiment", help="Experiment id."),
    rep: int | None = typer.Option(
        None, "--rep", min=0, help="Repetition index, default 0 (MLE-bench: the first)."
    ),
    llm: str | None = typer.Option(None, "--llm", help="LLM name (default: from the log)."),
    predictions: str | None = typer.Option(
        None,
        "--predictions",
        help="Pattern relative to SOURCE with {node_id}/{step} (e.g. "
        "node_predictions/{node_id}/submission.csv), or a JSON map file.",
    ),
    tokens: str | None = typer.Option(
        None,
        "--tokens",
        help='JSON {"prompt": int, "completion": int, "total": int} (with --layout or an '
        "FML-bench results tree: a file name inside each run's SOURCE).",
    ),
    budget_minutes: float = typer.Option(
        720.0, "--budget-minutes", min=0.001, help="Time budget of the run (paper: 720)."
    ),
    replace: bool = typer.Option(False, "--replace", help="Replace a run that already exists."),
    as_json: bool = JsonOpt,
    data: Path | None = DataOpt,
    manifests: Path | None = ManifestsOpt,
    rollout: str | None = typer.Option(
        None, "--rollout", help="Codex/autoresearch: a rollout-*.jsonl file instead of sessions/."
    ),
    layout: str | None = typer.Option(
        None,
        "--layout",
        help="A study: SOURCE is ROOT and every directory below it matching this pattern "
        "(e.g. '{agent}/{task}/rep{rep}') is one run's SOURCE.",
    ),
    progress: bool = ProgressOpt,
) -> None:
    """Import an agent's own output (AIDE, AI-Scientist-v2, Codex, autoresearch, FML-bench, MLE-bench), a directory or a .zip/.tar of it, as archive run(s), selected by the paper's App. C rules; with --layout, every run of a study; fmlbench also takes FML-bench's whole results/ tree (agent, task, repetition from it).

    \b
    Forms:
      automd import FORMAT SOURCE --archive DEST --agent NAME [OPTIONS]
      automd import FORMAT ROOT --layout PATTERN --archive DEST [OPTIONS]

    Exit code 2: a malformed or unsafe source, an unknown task, an existing run without --replace; nothing is written then. With --layout: 0 all imported, 1 some failed, 2 none.
    """
    from automd_analysis.app import importing

    def run(on_run=None) -> dict:
        return importing.import_runs(
            fmt.value, source, archive, agent=agent, task=task, experiment=experiment, rep=rep,
            llm=llm, predictions=predictions, tokens=tokens, budget_minutes=budget_minutes,
            rollout=rollout, layout=layout, replace=replace, manifests=manifests, data=data,
            on_run=on_run,
        )  # fmt: skip

    try:
        if importing.is_study(fmt.value, source, layout):
            raise typer.Exit(_print_study(run, as_json, progress))
        report = run()
    except AutomdError as exc:
        _fail(exc, as_json)
    except (typer.Exit, KeyboardInterrupt):
        raise
    except Exception as exc:  # a bug of ours: a clear message, never a traceback
        _fail(importing.internal_error(exc), as_json)
    if as_json:
        typer.echo(json.dumps(report, default=str))
    else:
        typer.echo(format_report(report))


def _fail(exc: AutomdError, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps({"ok": False, "error": exc.to_dict()}, default=str))
    typer.echo(f"automd: error: [{exc.code}] {exc}", err=True)
    raise typer.Exit(2) from None


def _print_study(run, as_json: bool, progress: bool) -> int:
    """Run a study import (``run(on_run)``) behind a progress bar; print it; its exit code."""
    from tqdm.auto import tqdm

    bar = tqdm(total=0, unit="run", desc="automd import", disable=not progress or None,
               leave=False)  # fmt: skip

    def on_run(i: int, n: int, item) -> None:
        bar.total = n
        bar.update(1)
        bar.set_postfix_str(item.source.rel[-40:])

    try:
        study = run(on_run)
    finally:
        bar.close()
    if as_json:
        typer.echo(json.dumps(study, default=str))
    else:
        typer.echo(format_study(study))
    return 0 if study["ok"] else (1 if study["imported"] else 2)
