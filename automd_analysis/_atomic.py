"""Atomic file writes: a temporary file in the target's directory, then ``os.replace``.

A reader (or a crash) sees either the previous file or the complete new one, never a partial
file; on any error the temporary file is removed. Temporary names start with ``.`` so that
directory scans that skip hidden entries (the archive reader) never pick them up.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from automd_analysis.errors import AutomdError

__all__ = [
    "atomic_path",
    "check_writable_dir",
    "make_temp_dir",
    "write_bytes_atomic",
    "write_text_atomic",
]

# mkstemp creates files with mode 0600; give written files the mode open() would (0666 & ~umask).
_UMASK = os.umask(0)
os.umask(_UMASK)
_FILE_MODE = 0o666 & ~_UMASK
_DIR_MODE = 0o777 & ~_UMASK


@contextlib.contextmanager
def atomic_path(path: str | Path, *, prefix: str | None = None) -> Iterator[str]:
    """Yield a temporary path next to ``path``; move it onto ``path`` when the block succeeds.

    The parent directory is created if needed. ``prefix`` defaults to ``.<name>.``; the
    temporary file keeps ``path``'s suffix (writers such as pyarrow look at it).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=prefix if prefix is not None else f".{path.name}.",
        suffix=path.suffix + ".tmp" if path.suffix else ".tmp",
        dir=path.parent,
    )
    os.close(fd)
    try:
        os.chmod(tmp, _FILE_MODE)
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def make_temp_dir(parent: str | Path, prefix: str) -> Path:
    """A new uniquely named directory in ``parent``, with the mode ``mkdir`` would give it.

    ``tempfile.mkdtemp`` creates directories 0700; a staging directory that is later renamed into
    place (a run, an archive) must end up with the same mode as every other directory the toolkit
    writes (0777 & ~umask).
    """
    path = Path(tempfile.mkdtemp(dir=parent, prefix=prefix))
    os.chmod(path, _DIR_MODE)
    return path


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (:func:`atomic_path`); return the path."""
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(data)
    return Path(path)


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` as UTF-8, line endings exactly as given, atomically; return the path."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def check_writable_dir(path: str | Path, option: str, *, code: str = "output.unwritable") -> Path:
    """Check, before any work and without writing anything, that directory ``path`` can be
    created or written; raise a one-line :class:`AutomdError` naming ``option`` otherwise.

    ``path`` must be a directory or not exist yet; its nearest existing ancestor must be a
    directory this process may write into (``os.access``, so a read-only mount counts too).
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise AutomdError(
            f"{option} is a file, not a directory",
            path=path,
            location=option,
            code=code,
            fix=f"pass a new or existing directory as {option}",
        )
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise AutomdError(
            f"{option} cannot be created: {existing} is a file, not a directory",
            path=path,
            location=option,
            code=code,
            fix=f"pass a directory path for {option} whose parents are directories",
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "cannot be written" if existing == path else f"cannot be created in {existing}"
        raise AutomdError(
            f"{option} {what} (permission denied or read-only)",
            path=path,
            location=option,
            code=code,
            fix=f"choose a directory you can write as {option}",
        )
    return path
