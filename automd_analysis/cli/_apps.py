"""The Typer application objects; command modules register themselves on these."""

from __future__ import annotations

from pathlib import Path

import typer


def _wrap_without_hyphen_breaks() -> None:
    """Help text wraps at spaces only, so an option name such as ``--allow-code-execution`` is
    never split across two lines (click's wrapper breaks at hyphens too)."""
    import importlib

    for name in ("typer._click._textwrap", "click._textwrap"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        base = module.TextWrapper
        if getattr(base, "automd_no_hyphen_breaks", False):
            continue

        class SpacesOnly(base):
            automd_no_hyphen_breaks = True

            def __init__(self, *args, **kwargs):
                kwargs["break_on_hyphens"] = False
                super().__init__(*args, **kwargs)

        module.TextWrapper = SpacesOnly


_wrap_without_hyphen_breaks()

#: Plain help (click's layout): at 80 columns rich's option table cut long option names and
#: squeezed the descriptions into a narrow column. Every ``typer.Typer`` of ``automd`` uses it.
HELP_SETTINGS = {"rich_markup_mode": None, "context_settings": {"max_content_width": 100}}
#: A group of ``automd`` commands (``automd``, ``automd masking``, ``automd annotate``): that plain
#: help, which it also shows when called without a command.
GROUP_SETTINGS = {**HELP_SETTINGS, "no_args_is_help": True}

app = typer.Typer(
    name="automd",
    help="Re-score and analyse archived runs of autonomous ML agents on medical tasks.",
    add_completion=False,
    pretty_exceptions_enable=False,
    **GROUP_SETTINGS,
)


def _print_version(value: bool) -> None:
    if value:
        import platform

        from automd_analysis._version import __version__

        typer.echo(f"automd {__version__} (automd-analysis; Python {platform.python_version()})")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version of automd-analysis (and of Python) and exit.",
    ),
) -> None:
    """Re-score and analyse archived runs of autonomous ML agents on medical tasks."""


masking_app = typer.Typer(
    help="Real-time-rule masking test for sequential tasks (paper App. G).",
    **GROUP_SETTINGS,
)
app.add_typer(masking_app, name="masking")

# Shared option declarations, so every command spells them the same way.
ArchiveArg = typer.Argument(..., help="Runs archive directory (holds archive.yaml).")
DataOpt = typer.Option(None, "--data", help="Data root (default: $AUTOMD_DATA or <repo>/data).")
ManifestsOpt = typer.Option(
    None,
    "--manifests",
    help="Manifest directory (default: $AUTOMD_MANIFESTS or <repo>/data_manifests).",
)
# A command that reads no task data (or no manifest) still takes the option, so that every command
# takes --data and --manifests (README): it is accepted and not read.
DataOptUnread = typer.Option(
    None, "--data", help="Data root: not read by this command (accepted, as by every command)."
)
ManifestsOptUnread = typer.Option(
    None,
    "--manifests",
    help="Manifest directory: not read by this command (accepted, as by every command).",
)
JsonOpt = typer.Option(False, "--json", help="Print one JSON object.")
ProgressOpt = typer.Option(True, "--progress/--no-progress", help="Progress bar (stderr).")


def typed(path: Path | None) -> Path | None:
    """A path typed on the command line, made absolute against the working directory (as every
    shell command reads it); the defaults of the other folders come from the project root
    (:mod:`automd_analysis.archive.workspace`)."""
    return None if path is None else Path(path).expanduser().resolve()


def note_legacy_store(workspace) -> None:
    """Tell the user (stderr) when the archive's own score store holds nothing yet but a store of
    the old layout, named after the archive only, does (:mod:`automd_analysis.archive.workspace`)."""
    if workspace.legacy_scores is None:
        return
    typer.echo(
        f"note: this archive's score store is {workspace.scores}, which holds no store yet; "
        f"{workspace.legacy_scores} is a store of the old layout (named after the archive only, "
        "so it may belong to another archive of that name): run `automd score` (it takes that "
        f"store's caches), or pass --scores {workspace.legacy_scores} to use it as it is",
        err=True,
    )


#: ``automd score`` / ``automd regenerate``: the ECE's bins, fixed when the archive is scored.
EceBinsOpt = typer.Option(
    10,
    "--ece-bins",
    min=2,
    max=1000,
    help="Equal-width bins of the ECE of binary and hourly tasks (the paper's: 10); survival "
    "tasks keep their Kaplan-Meier groups. Notebook parameter n_bins reads the stored value.",
)
