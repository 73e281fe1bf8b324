"""Run ``automd`` as an ordinary user, so that file permissions really apply.

The tests run as root here, and root reads every file whatever its mode. :func:`run_cli` starts a
child that imports the package (and what it needs) first, then drops to ``nobody`` (uid/gid
65534) before running the command (through ``main``, as the console script does); as a non-root user it simply runs the command. The files the
child must read have to be readable by that user: :func:`shared_dir` makes a directory everyone
may enter.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOBODY = 65534

_CHILD = """
import argparse, os, sys, unittest  # the interpreter's own files may be unreadable as nobody
import automd_analysis.cli, automd_analysis.importers, automd_analysis.tasks
import automd_analysis.archive, automd_analysis.importers.study, pandas, yaml, tqdm.auto
import typer.rich_utils
try:  # typer >= 0.29 loads click's help option lazily; as nobody a private venv is unreadable
    import typer._click.decorators
except ImportError:
    pass
from automd_analysis.cli import main
if os.geteuid() == 0:
    os.setgroups([]); os.setgid({uid}); os.setuid({uid})
sys.argv = ["automd"] + sys.argv[1:]
main()
"""


def shared_dir() -> Path:
    """A new directory below the system temp dir that every user may enter and read."""
    path = Path(tempfile.mkdtemp(prefix="automd-perm-"))
    os.chmod(path, 0o755)
    return path


def readable(path: Path) -> None:
    """Make everything below ``path`` readable (and folders enterable) by every user."""
    for p in [path, *path.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """``automd ARGS`` as an ordinary user (``nobody`` when the tests run as root)."""
    return subprocess.run(
        [sys.executable, "-c", _CHILD.format(uid=NOBODY), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
