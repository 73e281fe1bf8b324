"""DEST, the archive an import writes into: one writer at a time, real folders only, and a run
that is always either the old one or the complete new one.

- **One writer.** :func:`locked_dest` takes an exclusive ``flock`` on DEST's own directory (no
  lock file is left behind) for the whole import, so two imports of the same run cannot both pass
  the "does it exist?" check: the second waits, then finds the run and stops with
  ``import.run_exists``. A failed import removes the runs it moved in, and a DEST it created when
  nothing else is in it; a writer that waited on a removed DEST notices (the locked directory is
  no longer DEST) and starts over.
- **Real folders.** Every folder on the way from DEST to the run (experiment, agent, task) is
  opened relative to its parent with ``O_NOFOLLOW | O_DIRECTORY``: a symlink or a file in its
  place is ``import.dest_unsafe``, and nothing is written through it.
- **Never without the run.** A new run is renamed into place; a replaced one is swapped with the
  staged run in one atomic ``renameat2(RENAME_EXCHANGE)`` (Linux), after which the old directory
  sits in the staging area and is deleted. Where the exchange is not available, the old run is
  moved aside and the new one moved in, with an intent record in the staging area: if the process
  dies between the two renames, the next import into DEST (under the lock) puts the old run back.
- **Clean after a kill.** Staging directories (``DEST/.import-*``, ignored by the reader) left by
  a killed import are recovered and removed by the next one.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import shutil
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from automd_analysis._atomic import make_temp_dir
from automd_analysis.importers.problems import SourceError

__all__ = ["STAGING_PREFIX", "Dest", "dest_error", "locked_dest"]

#: Staging directories inside DEST (hidden: the archive reader skips them).
STAGING_PREFIX = ".import-"
_INTENT = "intent.json"
_RENAME_EXCHANGE = 2
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)


def dest_error(exc: OSError, path: Path | str, doing: str) -> SourceError:
    """An operating-system error met while writing DEST as ``import.dest_unwritable``."""
    return SourceError(
        f"cannot {doing}: {exc.strerror or exc}",
        path=str(path),
        code="import.dest_unwritable",
        fix="make DEST writable by the user running automd import (permissions, a read-only or "
        "full file system), or import into another directory",
    )


def _unsafe(path: Path, what: str) -> SourceError:
    return SourceError(
        f"{path} is {what}; the import does not write through it",
        path=str(path),
        code="import.dest_unsafe",
        fix="every folder from DEST to the run must be a real folder inside DEST: replace the "
        "symlink by a folder, or import into another DEST",
    )


def _renameat2(src_fd: int, src: str, dst_fd: int, dst: str, flags: int) -> bool:
    """``renameat2``; ``False`` when the system or the file system does not offer ``flags``."""
    libc = ctypes.CDLL(None, use_errno=True)
    func = getattr(libc, "renameat2", None)
    if func is None:
        return False
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if func(src_fd, os.fsencode(src), dst_fd, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), dst)


class Dest:
    """A locked DEST (see the module docstring); use :func:`locked_dest`."""

    def __init__(self, path: Path, fd: int, created: bool):
        self.path = path
        self.fd = fd
        self.created = created
        self.added: list[tuple[str, ...]] = []  # runs this import moved in (not replaced ones)

    # -- folders ---------------------------------------------------------------------------

    def _open_dir(self, parent_fd: int, name: str, shown: Path, *, create: bool) -> int | None:
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except FileNotFoundError:
            if not create:
                return None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise _unsafe(shown, "a symlink or not a folder") from None
            raise dest_error(exc, shown, "open a folder of DEST") from None
        try:
            os.mkdir(name, dir_fd=parent_fd)
        except FileExistsError:
            pass
        except OSError as exc:
            raise dest_error(exc, shown, "create a folder in DEST") from None
        return self._open_dir(parent_fd, name, shown, create=False)

    def folder(self, parts: Sequence[str], *, create: bool) -> int | None:
        """A descriptor of ``DEST/<parts...>`` opened without following any symlink (created
        when ``create``; ``None`` when it does not exist). The caller closes it."""
        fd = os.dup(self.fd)
        shown = self.path
        for part in parts:
            shown = shown / part
            try:
                nxt = self._open_dir(fd, part, shown, create=create)
            finally:
                os.close(fd)
            if nxt is None:
                return None
            fd = nxt
        return fd

    def run_exists(self, parts: Sequence[str]) -> bool:
        """Whether ``DEST/<parts...>`` exists (a symlink on the way, or as the run itself, is
        ``import.dest_unsafe``)."""
        parent = self.folder(parts[:-1], create=False)
        if parent is None:
            return False
        try:
            st = os.lstat(parts[-1], dir_fd=parent)
        except FileNotFoundError:
            return False
        finally:
            os.close(parent)
        if not stat.S_ISDIR(st.st_mode):
            raise _unsafe(self.path.joinpath(*parts), "a symlink or not a folder")
        return True

    # -- staging and commit ----------------------------------------------------------------

    def stage(self) -> Path:
        """A new staging directory inside DEST."""
        try:
            return make_temp_dir(self.path, STAGING_PREFIX)
        except OSError as exc:
            raise dest_error(exc, self.path, "create a staging folder in DEST") from None

    def commit(self, staged: Path, parts: Sequence[str], staging: Path) -> bool:
        """Move the staged run directory into ``DEST/<parts...>``; return whether a run was
        replaced (the old one is then left in ``staging``, which the caller removes)."""
        parent = self.folder(parts[:-1], create=True)
        src = os.open(staged.parent, _DIR_FLAGS)
        name = parts[-1]
        try:
            try:
                st = os.lstat(name, dir_fd=parent)
            except FileNotFoundError:
                st = None
            if st is None:
                os.rename(staged.name, name, src_dir_fd=src, dst_dir_fd=parent)
                self.added.append(tuple(parts))
                return False
            if not stat.S_ISDIR(st.st_mode):
                raise _unsafe(self.path.joinpath(*parts), "a symlink or not a folder")
            if _renameat2(src, staged.name, parent, name, _RENAME_EXCHANGE):
                return True
            self._two_renames(src, staged.name, parent, parts, staging)
            return True
        except OSError as exc:
            raise dest_error(exc, self.path.joinpath(*parts), "move the run into DEST") from None
        finally:
            os.close(src)
            os.close(parent)

    def _two_renames(self, src: int, staged: str, parent: int, parts, staging: Path) -> None:
        old = f".old-{len(list(staging.glob('.old-*')))}"
        intent = staging / _INTENT
        records = json.loads(intent.read_text()) if intent.exists() else []
        records.append({"target": list(parts), "old": old})
        intent.write_text(json.dumps(records))
        staging_fd = os.open(staging, _DIR_FLAGS)
        try:
            os.rename(parts[-1], old, src_dir_fd=parent, dst_dir_fd=staging_fd)
            try:
                os.rename(staged, parts[-1], src_dir_fd=src, dst_dir_fd=parent)
            except BaseException:
                os.rename(old, parts[-1], src_dir_fd=staging_fd, dst_dir_fd=parent)
                raise
        finally:
            os.close(staging_fd)
        records[-1]["done"] = True
        intent.write_text(json.dumps(records))

    def undo(self) -> None:
        """After a failure: remove the runs this import moved in and, when it created DEST and
        nothing else is in it (another import may have written into it meanwhile), DEST."""
        for parts in reversed(self.added):
            shutil.rmtree(self.path.joinpath(*parts), ignore_errors=True)
            for depth in range(len(parts) - 1, 0, -1):
                with contextlib.suppress(OSError):
                    os.rmdir(self.path.joinpath(*parts[:depth]))
        if self.created:
            rest = [p for p in self.path.iterdir() if not p.name.startswith(STAGING_PREFIX)]
            if all(p.name == "archive.yaml" for p in rest):
                shutil.rmtree(self.path, ignore_errors=True)

    def recover(self) -> None:
        """Put back runs that a killed import had moved aside, then remove stale staging
        directories (the lock is held, so every staging directory present is stale)."""
        for entry in sorted(self.path.glob(f"{STAGING_PREFIX}*")):
            if entry.is_symlink() or not entry.is_dir():
                continue
            intent = entry / _INTENT
            with contextlib.suppress(OSError, ValueError):
                for rec in json.loads(intent.read_text()) if intent.is_file() else []:
                    self._restore(entry, rec)
            shutil.rmtree(entry, ignore_errors=True)

    def _restore(self, staging: Path, rec: dict) -> None:
        parts = [str(p) for p in rec.get("target", [])]
        old = staging / str(rec.get("old", ""))
        if rec.get("done") or not parts or not old.is_dir() or self.run_exists(parts):
            return
        parent = self.folder(parts[:-1], create=True)
        try:
            os.rename(old, parts[-1], dst_dir_fd=parent)
        finally:
            os.close(parent)


@contextlib.contextmanager
def locked_dest(dest: str | Path) -> Iterator[Dest]:
    """DEST created if needed, locked exclusively, recovered (see the module docstring).

    Raises
    ------
    SourceError
        ``import.archive_invalid`` (DEST is not a directory), ``import.dest_unwritable``.
    """
    dest = Path(dest)
    while True:
        if os.path.lexists(dest) and not dest.is_dir():
            raise SourceError(
                "DEST exists and is not a directory",
                path=dest,
                code="import.archive_invalid",
                fix="pass a directory (it is created when missing)",
            )
        created = False
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                dest.mkdir()
                created = True  # by this import: removed again if the import fails
            except FileExistsError:
                pass
            fd = os.open(dest, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as exc:
            raise dest_error(exc, dest, "create or open DEST") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            same = os.path.samestat(os.fstat(fd), os.stat(dest))
        except FileNotFoundError:
            same = False
        except OSError as exc:
            os.close(fd)
            raise dest_error(exc, dest, "lock DEST") from None
        if same:
            break
        os.close(fd)  # DEST was removed (or replaced) while we waited: start over
    handle = Dest(dest.resolve(), fd, created)
    ok = False
    try:
        handle.recover()
        yield handle
        ok = True
    finally:
        if not ok:
            with contextlib.suppress(OSError):
                handle.undo()
        os.close(fd)  # releases the lock
