"""``automd tasks`` and ``automd validate`` (tasks/submissions work).

Exit codes: ``validate`` 0 valid, 1 invalid, 2 usage or task-data error; ``tasks`` 0 (``--pin``:
2 when nothing could be pinned).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from automd_analysis.app import task_data
from automd_analysis.cli._apps import DataOpt, ManifestsOpt, app
from automd_analysis.errors import AutomdError


def _fail(exc: AutomdError) -> None:
    typer.echo(f"automd: error: {exc}", err=True)
    raise typer.Exit(2)


@app.command("validate")
def validate_command(
    task_id: str = typer.Argument(..., help="Task id (manifest name)."),
    file: Path = typer.Argument(..., help="Submission CSV to check."),
    data: Path | None = DataOpt,
    manifests: Path | None = ManifestsOpt,
    as_json: bool = typer.Option(
        False, "--json", help='Print {"valid": bool, "reasons": [{code, message, examples}]}.'
    ),
    root: Path | None = typer.Option(
        None, "--root", help="Refuse a file that resolves (via symlinks) outside this directory."
    ),
) -> None:
    """Check a submission against a task (paper App. E): exit 0 valid, 1 invalid, 2 error.

    A FILE that does not exist, or is a directory, is a usage error (exit 2), not an invalid
    submission.
    """
    try:
        task, result = task_data.validate_file(
            task_id, file, data=data, manifests=manifests, root=root
        )
    except AutomdError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps(result.to_dict()))
    elif result.valid:
        typer.echo(f"valid: {file} ({result.n_rows:,} rows, task {task.id})")
    else:
        typer.echo(f"INVALID: {file} (task {task.id})")
        for r in result.reasons:
            typer.echo(f"  [{r.code}] {r.message}")
            for ex in r.examples[:3]:
                typer.echo(f"      e.g. {json.dumps(ex)}")
    raise typer.Exit(0 if result.valid else 1)


@app.command("tasks")
def tasks_command(
    data: Path | None = DataOpt,
    manifests: Path | None = ManifestsOpt,
    pin: str | None = typer.Option(
        None, "--pin", help="Write the sha256 of TASK's prepared data files into its manifest."
    ),
    force: bool = typer.Option(False, "--force", help="With --pin: replace existing hashes."),
    verify: bool = typer.Option(
        True, "--verify/--no-verify", help="Hash every file (default) or only check presence."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the listing as JSON."),
) -> None:
    """List task manifests with their data status, kind, metric, validation and sizes.

    \b
    Forms:
      automd tasks [--json] [--no-verify]   list the tasks and their data status
      automd tasks --pin TASK [--force]     pin the sha256 of TASK's data files

    Status: present (all files there and matching their sha256), missing, checksum mismatch, or
    unpinned (files there, manifest has no sha256 yet: run --pin after checking the data).
    """
    try:
        if pin is not None:
            path, hashes = task_data.pin_task(pin, data=data, manifests=manifests, force=force)
            for key, sha in hashes.items():
                typer.echo(f"pinned {pin}.{key} = {sha}")
            typer.echo(f"wrote {path}")
            return
        root, rows = task_data.task_listing(data=data, manifests=manifests, verify=verify)
    except AutomdError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps({"data_root": str(root), "tasks": rows}, indent=2))
        return
    typer.echo(f"data root: {root}")
    header = f"{'task':<22} {'origin':<6} {'kind':<14} {'metric':<16} {'validation':<21} "
    header += f"{'train / test':>22}  status"
    typer.echo(header)
    for r in rows:
        train = f"{r['train']:,}" + (f"+{r['extra_train']:,}" if r["extra_train"] else "")
        sizes = f"{train} / {r['test']:,}"
        typer.echo(
            f"{r['id']:<22} {r['origin']:<6} {r['kind']:<14} {r['metric']:<16} "
            f"{r['validation']:<21} {sizes:>22}  {r['status']}"
        )
