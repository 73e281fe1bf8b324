"""Run ``automd`` as an ordinary user, so that file permissions really apply.

The tests run as root here, and root reads every file whatever its mode. :func:`run_cli` starts a
child that imports the package (and what it needs) first, then drops to ``nobody`` (uid/gid
65534) before running the command (through ``main``, as the console script does); a module the
command imports later is still found and loaded with root's file access (the child's
``_ImportAsRoot``), since the venv may sit in a folder ``nobody`` cannot enter. As a non-root user
it simply runs the command. The files the child must read have to be readable by that user:
:func:`shared_dir` makes a directory everyone may enter.
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
import importlib.abc
import automd_analysis.cli, automd_analysis.importers, automd_analysis.tasks
import automd_analysis.archive, automd_analysis.importers.study, pandas, yaml, tqdm.auto
import typer.rich_utils
from automd_analysis.cli import main


class _AsRoot:
    # Python's own files and the venv may sit in folders nobody cannot enter (a clone in a mode-700
    # `mktemp -d`, /root/.pyenv): a module imported lazily after the privilege drop (typer loads
    # parts of click on first use) is found and loaded with root's file access, then access drops
    # back. Only imports get it: every file the command itself opens is opened as nobody. Imports
    # nest (pandas' Styler reads its templates while an outer import runs): access drops back only
    # when the outermost import ends.
    depth = 0

    def __enter__(self):
        if _AsRoot.depth == 0:
            os.seteuid(0)
            os.setegid(0)
        _AsRoot.depth += 1

    def __exit__(self, *exc):
        _AsRoot.depth -= 1
        if _AsRoot.depth == 0:
            os.setegid({uid})
            os.seteuid({uid})


class _Loader:
    def __init__(self, inner):
        self._inner = inner

    def create_module(self, spec):
        with _AsRoot():
            return self._inner.create_module(spec)

    def exec_module(self, module):
        with _AsRoot():
            self._inner.exec_module(module)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _ImportAsRoot(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        with _AsRoot():
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _Loader(spec.loader)
                    return spec
        return None


if os.geteuid() == 0:
    os.setgroups([])
    os.setresgid({uid}, {uid}, 0)  # the saved ids stay root, for _AsRoot
    os.setresuid({uid}, {uid}, 0)
    sys.meta_path.insert(0, _ImportAsRoot())
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
