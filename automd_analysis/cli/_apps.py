"""The Typer application objects; command modules register themselves on these."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(
    name="automd",
    help="Re-score and analyse archived runs of autonomous ML agents on medical tasks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
masking_app = typer.Typer(
    help="Real-time-rule masking test for sequential tasks (paper App. G).", no_args_is_help=True
)
app.add_typer(masking_app, name="masking")

# Shared option declarations, so every command spells them the same way.
DataOpt = typer.Option(None, "--data", help="Data root (default: $AUTOMD_DATA or <repo>/data).")
ManifestsOpt = typer.Option(
    None,
    "--manifests",
    help="Manifest directory (default: $AUTOMD_MANIFESTS or <repo>/data_manifests).",
)


def typed(path: Path | None) -> Path | None:
    """A path typed on the command line, made absolute against the working directory (as every
    shell command reads it); the defaults of the other folders come from the project root
    (:mod:`automd_analysis.archive.workspace`)."""
    return None if path is None else Path(path).expanduser().resolve()
