"""``automd`` command line.

Each command lives in its own module and registers itself on :data:`app`; this module only wires
them together and turns expected errors (:class:`~automd_analysis.errors.AutomdError`) into a clear
message and exit code 2 instead of a traceback; Ctrl-C exits 130 with a line saying what was kept
(:class:`~automd_analysis.errors.Interrupted`).

Other installed packages add commands through the entry-point group :data:`PLUGIN_GROUP`: each
entry point names a function ``register(app)``. The demo generator (``automd demo ...``,
``automd baselines``) plugs in this way, so this package never imports it.
"""

from __future__ import annotations

import sys

from automd_analysis.cli import (  # noqa: F401  (each module registers its commands)
    commands_annotate,
    commands_import,
    commands_masking,
    commands_report,
    commands_score,
    commands_tasks,
)
from automd_analysis.cli._apps import app
from automd_analysis.errors import AutomdError, Interrupted

__all__ = ["PLUGIN_GROUP", "app", "load_plugins", "main"]

#: Exit code of a command stopped by Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED = 130
#: Entry-point group of packages that add ``automd`` commands.
PLUGIN_GROUP = "automd.commands"
_LOADED: set[str] = set()


def load_plugins() -> list[str]:
    """Call every installed ``automd.commands`` entry point with :data:`app`; return their names.

    A plugin that fails to load is reported on stderr and left out; the core commands still work.
    """
    from importlib.metadata import entry_points

    loaded = []
    for ep in sorted(entry_points(group=PLUGIN_GROUP), key=lambda e: e.name):
        if ep.name in _LOADED:
            continue
        try:
            ep.load()(app)
        except Exception as exc:  # a broken plugin must not take the core commands down
            print(f"automd: warning: plugin {ep.name!r} not loaded: {exc}", file=sys.stderr)
            continue
        _LOADED.add(ep.name)
        loaded.append(ep.name)
    return loaded


def summaries_in_full(typer_app) -> None:
    """Give every command and group of ``typer_app`` its docstring's first paragraph, unwrapped, as
    the one-line summary of command listings (click cuts its own at the first ". ", which is
    mid-sentence after "paper App.", or at 45 characters)."""
    import inspect

    def first_paragraph(text) -> str | None:
        if not isinstance(text, str) or not text.strip():
            return None
        return " ".join(inspect.cleandoc(text).split("\n\n")[0].split())

    for info in typer_app.registered_commands:
        if info.short_help is None and info.callback is not None:
            info.short_help = first_paragraph(info.help or info.callback.__doc__)
    for group in typer_app.registered_groups:
        sub = group.typer_instance
        if sub is None:
            continue
        summary = first_paragraph(group.help) or first_paragraph(sub.info.help)
        if summary is not None:
            group.short_help = group.short_help or summary
            sub.info.short_help = sub.info.short_help or summary
        summaries_in_full(sub)


load_plugins()
summaries_in_full(app)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``automd`` console script."""
    from automd_analysis.app.run_notebooks import skip_iri_format_checks

    skip_iri_format_checks()
    try:
        app(args=argv, prog_name="automd", standalone_mode=True)
    except Interrupted as exc:  # Ctrl-C where a command can say what it kept
        print(f"automd: {exc}", file=sys.stderr)
        sys.exit(INTERRUPTED)
    except SystemExit as exc:
        if exc.code == INTERRUPTED:  # any other Ctrl-C (Typer exits 130 without a word)
            print("automd: interrupted (Ctrl-C)", file=sys.stderr)
        raise
    except AutomdError as exc:
        print(f"automd: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:  # a path the system refused that no check above caught: one line
        print(f"automd: error: {os_error_line(exc)}", file=sys.stderr)
        sys.exit(2)


def os_error_line(exc: OSError) -> str:
    """One line for an operating-system error: what failed, on which path, and a fix."""
    where = f" in {exc.filename}" if exc.filename else ""
    reason = exc.strerror or type(exc).__name__
    return (
        f"{reason.lower()}{where}. Fix: check that the path exists, is of the right kind "
        "(file or directory) and that you may read or write it"
    )
