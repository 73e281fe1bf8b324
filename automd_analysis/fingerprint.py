"""Fingerprints of what computed a result: the package's own code and the Python environment.

An incremental step (a skipped re-scoring, a reused notebook) may keep an earlier result only if
nothing that produced it changed. Besides its data inputs, that is the code that ran:

- :func:`code_fingerprint` - the package version and the bytes of every source file of
  ``automd_analysis`` (``*.py`` and the report templates), so an edited checkout counts as new
  code even before its version number moves;
- :func:`environment_fingerprint` - the Python version and every installed distribution with its
  version (the ``*.dist-info`` entries on ``sys.path``): a new numpy or matplotlib may change
  numbers or figures.

Both are hex sha256 digests, computed once per process.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from pathlib import Path

from automd_analysis._version import __version__

__all__ = ["code_fingerprint", "environment_fingerprint"]

_PACKAGE = Path(__file__).resolve().parent
_SOURCE_SUFFIXES = (".py", ".j2", ".tpl", ".css", ".json")


@functools.cache
def code_fingerprint() -> str:
    """sha256 of the package version and of every source file (path and bytes), in path order."""
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(_PACKAGE.rglob("*")):
        if path.is_file() and path.suffix in _SOURCE_SUFFIXES and "__pycache__" not in path.parts:
            digest.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def environment_fingerprint() -> str:
    """sha256 of the Python version and the installed distributions (``name-version``)."""
    found: set[str] = set()
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as it:
                found.update(e.name for e in it if e.name.endswith((".dist-info", ".egg-info")))
        except OSError:
            continue
    text = "\n".join([sys.version, *sorted(found)])
    return hashlib.sha256(text.encode()).hexdigest()
