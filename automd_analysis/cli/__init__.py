"""``automd`` command line.

Each command lives in its own module and registers itself on :data:`app`; this module only wires
them together and turns expected errors (:class:`~automd_analysis.errors.AutomdError`) into a clear
message and exit code 2 instead of a traceback.
"""

from __future__ import annotations

import sys

from automd_analysis.cli import (  # noqa: F401  (each module registers its commands)
    commands_annotate,
    commands_demo_archive,
    commands_masking,
    commands_report,
    commands_score,
    commands_tasks,
)
from automd_analysis.cli._apps import app
from automd_analysis.errors import AutomdError

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``automd`` console script."""
    try:
        app(args=argv, standalone_mode=True)
    except AutomdError as exc:
        print(f"automd: error: {exc}", file=sys.stderr)
        sys.exit(2)
