"""The commands of the ``automd`` application, enumerated from Typer (plugins included)."""

from __future__ import annotations

import typer

from automd_analysis.cli import app


def command_paths(*, groups: bool = False) -> list[str]:
    """Every runnable command (hidden ones too) as ``"masking make"``; with ``groups``, the groups
    as well (``""`` is ``automd`` itself)."""

    def walk(group, prefix: tuple[str, ...]) -> list[str]:
        out = [" ".join(prefix)] if groups else []
        for name, cmd in group.commands.items():
            if hasattr(cmd, "commands"):
                out += walk(cmd, (*prefix, name))
            else:
                out.append(" ".join((*prefix, name)))
        return out

    return walk(typer.main.get_command(app), ())


def command_at(path: str):
    """The click command of ``path`` (``""``: the application's group)."""
    cmd = typer.main.get_command(app)
    for part in path.split():
        cmd = cmd.commands[part]
    return cmd
