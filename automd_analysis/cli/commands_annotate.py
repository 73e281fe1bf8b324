"""``automd annotate``: codebook answers from the code itself (parse arguments, print results).

- ``automd annotate ARCHIVE --out DIR [--jobs N]``: one ``annotations.json`` per run under DIR
  (never into the archive);
- ``automd annotate code FILE... --json``: the answers for loose scripts, as one JSON object
  ``{file: [{field, value, line, evidence}]}``;
- ``automd annotate agreement ARCHIVE --generated DIR``: agreement of DIR with the archive's own
  annotations (Cohen's kappa, precision/recall per value, confusion).

Exit codes: 0 success, 1 some runs (or, for ``code``, some parts of the files) could not be
annotated (listed in ``problems.json``, or on stderr), 2 bad input.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
import typer
from typer.core import TyperGroup

from automd_analysis.app import annotating
from automd_analysis.app.annotating import AnnotateSummary
from automd_analysis.cli._apps import (
    GROUP_SETTINGS,
    ArchiveArg,
    DataOpt,
    DataOptUnread,
    JsonOpt,
    ManifestsOpt,
    ManifestsOptUnread,
    ProgressOpt,
    app,
)

_MAX_LISTED = 10
_SUBCOMMANDS = ("archive", "code", "agreement")


#: The main form, ``automd annotate ARCHIVE ...`` (short for ``automd annotate archive ...``).
_MAIN_FORM = "ARCHIVE --out DIR [--jobs N] [OPTIONS]"


class _ArchiveByDefault(TyperGroup):
    """``automd annotate ARCHIVE ...`` means ``automd annotate archive ARCHIVE ...``; the usage
    line shows that main form first, then the subcommands."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in _SUBCOMMANDS and args[0] not in ("--help", "-h"):
            args = ["archive", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, _MAIN_FORM)
        pieces = " ".join(self.collect_usage_pieces(ctx))
        formatter.write_usage(ctx.command_path, pieces, prefix="   or: ")


annotate_app = typer.Typer(
    cls=_ArchiveByDefault,
    help="Codebook answers from archived code (static analysis, never executed) + forensics. "
    f"`automd annotate {_MAIN_FORM}` annotates every run of ARCHIVE into DIR (the same as "
    "`automd annotate archive ...`); the commands below analyse loose scripts and measure "
    "agreement.",
    **GROUP_SETTINGS,
)
app.add_typer(annotate_app, name="annotate")


def _default_jobs() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def format_summary(s: AnnotateSummary) -> str:
    """The human summary printed after annotating an archive."""
    lines = [
        f"automd annotate: archive {s.archive!r} -> {s.out_dir}",
        f"  runs:      {s.n_runs} ({s.n_written} annotations.json written)",
        f"  versions:  {s.n_versions} analysed ({s.n_cached} from cache)",
        f"  problems:  {len(s.problems)} (problems.json)",
        f"  time:      {s.seconds:.1f} s",
    ]
    for p in s.problems[:_MAX_LISTED]:
        lines.append(f"    - {p['code']} {p['run_id']}: {p['message']}")
    if len(s.problems) > _MAX_LISTED:
        lines.append(f"    ... {len(s.problems) - _MAX_LISTED} more in problems.json")
    return "\n".join(lines)


@annotate_app.command("archive")
def annotate_archive_command(
    archive: Path = ArchiveArg,
    out: Path = typer.Option(..., "--out", help="Output directory (outside the archive)."),
    jobs: int = typer.Option(_default_jobs(), "--jobs", "-j", min=1, help="Worker processes."),
    data: Path | None = DataOpt,
    manifests: Path | None = ManifestsOpt,
    cache: bool = typer.Option(True, "--cache/--no-cache", help="Reuse cached code answers."),
    pairs: bool = typer.Option(
        True, "--pairs/--no-pairs", help="Annotate every version and the version pairs."
    ),
    progress: bool = ProgressOpt,
) -> None:
    """Annotate every run of ARCHIVE: one annotations.json per run under --out (the default
    command: `automd annotate ARCHIVE ...` is short for it).

    Exit code 1: some runs could not be (fully) annotated; they are listed in problems.json.
    """
    summary = annotating.annotate(
        archive,
        out,
        data=data,
        manifests=manifests,
        jobs=jobs,
        cache=cache,
        pairs=pairs,
        progress=progress,
    )
    typer.echo(format_summary(summary))
    if any(p["code"] != "annotate.task_unknown" for p in summary.problems):
        raise typer.Exit(1)


@annotate_app.command("code")
def annotate_code_command(
    files: list[Path] = typer.Argument(..., help="Python files (analysed together)."),
    as_json: bool = JsonOpt,
    task: str | None = typer.Option(
        None, "--task", help="Task id: fields that do not apply to it are 'na'."
    ),
    manifests: Path | None = ManifestsOpt,
    data: Path | None = DataOptUnread,
) -> None:
    """The codebook answers for loose scripts, each file run as the script.

    Prints {file: [{field, value, line, evidence}]} with --json. What could not be read is listed
    on stderr (exit code 1).
    """
    report, problems = annotating.annotate_files(files, task, manifests)
    if as_json:
        typer.echo(json.dumps(report, indent=1, sort_keys=True))
    else:
        for path, answers in report.items():
            typer.echo(_printable(path))
            for a in answers:
                value = ", ".join(a["value"]) if isinstance(a["value"], list) else a["value"]
                where = f"  (line {a['line']})" if a["line"] is not None else ""
                typer.echo(f"  {a['field']:<32} {value}{where}")
    for p in problems:
        typer.echo(f"warning {_printable(p)}", err=True)
    if problems:
        raise typer.Exit(1)


def _printable(text: str) -> str:
    """``text`` with lone surrogates (undecodable file names) and control characters escaped."""
    safe = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in safe)


@annotate_app.command("agreement")
def annotate_agreement_command(
    archive: Path = typer.Argument(..., help="Archive whose own annotations are the reference."),
    generated: Path = typer.Option(..., "--generated", help="Output of `automd annotate`."),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Also write agreement_fields.csv, agreement_values.csv and "
        "agreement_confusion.csv here.",
    ),
    include_reference: bool = typer.Option(
        True, "--include-reference/--agents-only", help="Include the simple-baseline runs."
    ),
    data: Path | None = DataOptUnread,
    manifests: Path | None = ManifestsOptUnread,
) -> None:
    """Agreement of generated annotations with the archive's own (kappa, precision/recall)."""
    fields, values, conf, info = annotating.annotation_agreement(
        archive, generated, out=out, include_reference=include_reference
    )
    typer.echo(
        f"reference: {', '.join(info['annotators']) or '-'}; runs compared: {info['n_runs']}"
    )
    typer.echo(fields.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    wrong = conf[conf["reference"] != conf["rated"]]
    if len(wrong):
        typer.echo("\ndisagreements (reference -> generated):")
        typer.echo(wrong.to_string(index=False))
