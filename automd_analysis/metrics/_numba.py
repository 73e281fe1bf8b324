"""numba for the metric kernels, with its on-disk cache in a per-user directory.

``@numba.njit(cache=True)`` stores compiled kernels next to the source by default, i.e. inside the
installed package. A read-only install, a shared checkout or a container image must not be written
to, so - unless the user set ``NUMBA_CACHE_DIR`` - the cache goes to
``$XDG_CACHE_HOME/automd-analysis/numba`` (``~/.cache/...``), else to a per-user directory under the
system temporary directory. If neither can be written, caching is switched off (every process then
compiles its kernels once, about a second) and nothing fails.

Import numba from here (``from automd_analysis.metrics._numba import numba``) so the setting is in
place before any kernel is decorated.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["CACHE_DIR", "cached_njit", "numba"]


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probe-"):
            pass
    except OSError:
        return False
    return True


def _choose_cache_dir() -> str | None:
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return given
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    candidates = [
        base / "automd-analysis" / "numba",
        Path(tempfile.gettempdir()) / f"automd-analysis-numba-{os.getuid()}",
    ]
    for path in candidates:
        if _writable(path):
            return str(path)
    return None


CACHE_DIR = _choose_cache_dir()
if CACHE_DIR is not None:
    os.environ.setdefault("NUMBA_CACHE_DIR", CACHE_DIR)

import numba  # noqa: E402  (after NUMBA_CACHE_DIR is set)

if CACHE_DIR is not None:
    numba.config.CACHE_DIR = CACHE_DIR  # also when numba was imported before this module


def cached_njit(**options):
    """``numba.njit(cache=True, **options)`` when a cache directory is usable, else without cache."""
    return numba.njit(cache=CACHE_DIR is not None, **options)
