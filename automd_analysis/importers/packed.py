"""A SOURCE given as a ``.zip`` or ``.tar`` (``.tar.gz``, ``.tgz``, ``.tar.bz2``, ``.tar.xz``)
file, unpacked safely into a private temporary directory for the length of one import.

Nothing in the archive file decides where anything goes. Every member is checked before a byte
of it is written, and the whole file is refused (``import.packed_unsafe``, "extract it first")
when one member

- has a name that is absolute, has a drive letter, ``..``, a backslash, a NUL byte, a component
  longer than 255 bytes or text that is not valid Unicode, or repeats (or clashes with) another
  member's name;
- is not a regular file or a folder (symlinks, hard links, devices, FIFOs) or is encrypted;
- is larger than a prediction file may be, or makes the members together larger than
  ``Limits.packed_bytes``, or their number larger than ``Limits.max_entries`` (sizes are counted
  while decompressing, so a member that lies about its size is caught too).

Files are created fresh (``O_EXCL | O_NOFOLLOW``, mode 0600) inside directories the unpacker made
itself, and keep the modification time the archive records (between 1970 and 2200), since the
importers use file times when a log has none. A file holding a single top-level folder is that
folder.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from automd_analysis.importers._source import Limits
from automd_analysis.importers.model import EARLIEST, LATEST
from automd_analysis.importers.problems import SourceError
from automd_analysis.importers.text import has_surrogates

__all__ = ["PACKED_SUFFIXES", "is_packed", "packed_name", "unpacked"]

#: File names read as packed sources.
PACKED_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
_DRIVE = re.compile(r"^[A-Za-z]:")
_FIX = (
    "extract it first (unzip / tar -xf), check what it holds, and pass the extracted directory "
    "as SOURCE"
)


def is_packed(path: Path) -> bool:
    """Whether ``path`` is a regular file named like a ``.zip``/``.tar`` archive."""
    return path.name.lower().endswith(PACKED_SUFFIXES) and path.is_file()


def packed_name(path: Path) -> str:
    """``path``'s name without its archive suffix (``rep0.tar.gz`` → ``rep0``)."""
    low = path.name.lower()
    for suffix in sorted(PACKED_SUFFIXES, key=len, reverse=True):
        if low.endswith(suffix):
            return path.name[: -len(suffix)] or path.name
    return path.name


def _refuse(path: Path, msg: str) -> SourceError:
    return SourceError(f"{path.name}: {msg}", path=path, code="import.packed_unsafe", fix=_FIX)


class _Unpacker:
    """Writes checked members below ``root``, keeping count of names, entries and bytes."""

    def __init__(self, source: Path, root: Path, limits: Limits):
        self.source, self.root, self.limits = source, root, limits
        self.files: set[str] = set()
        self.dirs: set[str] = set()
        self.entries = 0
        self.total = 0

    def check_name(self, name: str, *, is_dir: bool) -> str:
        if not isinstance(name, str) or has_surrogates(name) or "\x00" in name or "\\" in name:
            raise _refuse(self.source, f"member name {name!r} is not a plain path")
        rel = name[2:] if name.startswith("./") else name
        rel = rel.rstrip("/") if is_dir else rel
        pure = PurePosixPath(rel)
        if not rel or pure.is_absolute() or _DRIVE.match(rel) or ".." in pure.parts:
            raise _refuse(self.source, f"member {name!r} would land outside the directory")
        if any(len(p.encode()) > 255 for p in pure.parts) or len(rel.encode()) > 4096:
            raise _refuse(self.source, f"member name {name[:80]!r}... is too long")
        rel = "/".join(p for p in pure.parts if p != ".")
        parents = {"/".join(pure.parts[:i]) for i in range(1, len(pure.parts))}
        clash = (rel in self.files) or (not is_dir and rel in self.dirs) or (parents & self.files)
        if clash:
            raise _refuse(self.source, f"member {name!r} repeats or clashes with another member")
        self.entries += 1
        if self.entries > self.limits.max_entries:
            raise _refuse(self.source, f"it holds more than {self.limits.max_entries} members")
        self.dirs |= parents
        (self.dirs if is_dir else self.files).add(rel)
        return rel

    def mkdirs(self, rel: str) -> Path:
        path = self.root
        for part in PurePosixPath(rel).parts:
            path = path / part
            with contextlib.suppress(FileExistsError):
                os.mkdir(path, 0o700)
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                raise _refuse(self.source, f"{rel!r} clashes with a file")
        return path

    def write(self, rel: str, stream, declared: int, mtime: float | None) -> None:
        cap = self.limits.prediction_bytes
        if declared > cap or self.total + declared > self.limits.packed_bytes:
            raise _refuse(self.source, f"member {rel!r} is too large ({declared} bytes)")
        parent = self.mkdirs(str(PurePosixPath(rel).parent)) if "/" in rel else self.root
        target = parent / PurePosixPath(rel).name
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        written = 0
        with os.fdopen(fd, "wb") as out:
            while chunk := stream.read(1 << 20):
                written += len(chunk)
                self.total += len(chunk)
                if written > cap or self.total > self.limits.packed_bytes:
                    raise _refuse(self.source, f"member {rel!r} unpacks to more than its cap")
                out.write(chunk)
        if mtime is not None and EARLIEST.timestamp() <= mtime < LATEST.timestamp():
            os.utime(target, (mtime, mtime))


def _unzip(unpacker: _Unpacker, path: Path) -> None:
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            mode = info.external_attr >> 16
            if info.flag_bits & 0x1:
                raise _refuse(path, f"member {info.filename!r} is encrypted")
            if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise _refuse(path, f"member {info.filename!r} is not a regular file or folder")
            if info.is_dir():
                unpacker.mkdirs(unpacker.check_name(info.filename, is_dir=True))
                continue
            rel = unpacker.check_name(info.filename, is_dir=False)
            when = None
            with contextlib.suppress(ValueError, OverflowError):
                when = datetime(*info.date_time, tzinfo=UTC).timestamp()
            with zf.open(info) as stream:
                unpacker.write(rel, stream, info.file_size, when)


def _untar(unpacker: _Unpacker, path: Path) -> None:
    with tarfile.open(path, "r|*") as tf:
        for member in tf:
            if member.isdir():
                unpacker.mkdirs(unpacker.check_name(member.name, is_dir=True))
                continue
            if not member.isreg():
                raise _refuse(path, f"member {member.name!r} is not a regular file or folder "
                                    "(a link, device or FIFO)")  # fmt: skip
            rel = unpacker.check_name(member.name, is_dir=False)
            stream = tf.extractfile(member)
            unpacker.write(rel, stream, member.size, float(member.mtime))


@contextlib.contextmanager
def unpacked(path: str | Path, limits: Limits | None = None) -> Iterator[tuple[Path, str, str]]:
    """Unpack the archive file ``path`` safely; yield ``(directory to use as SOURCE, name,
    member)``.

    Parameters
    ----------
    path : str or Path
        A ``.zip`` or ``.tar[.gz|.bz2|.xz]`` file.
    limits : Limits, optional

    Yields
    ------
    directory : Path
        The unpacked tree (its single top-level folder when it has exactly one), removed when
        the block ends.
    name : str
        The name SOURCE goes by: that folder's name, else the file's name without its suffix.
    member : str
        That folder's path inside the file (``""``: the file's top level), for messages: the
        directory is gone when the block ends, so messages name the file and this member path.

    Raises
    ------
    SourceError
        ``import.packed_unsafe`` (see the module docstring) or when the file cannot be read.

    See Also
    --------
    automd_analysis.importers.api.import_source

    References
    ----------
    Python ``zipfile`` and ``tarfile`` documentation ("Extraction filters": the checks that
    ``tarfile``'s ``data`` filter makes, applied here to both formats).

    Examples
    --------
    >>> import io, tarfile, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with tarfile.open(d / "run.tar.gz", "w:gz") as tf:
    ...     data = b"{}"
    ...     info = tarfile.TarInfo("0-exp/journal.json"); info.size = len(data)
    ...     tf.addfile(info, io.BytesIO(data))
    >>> with unpacked(d / "run.tar.gz") as (src, name, member):
    ...     print(name, member, sorted(p.name for p in src.iterdir()))
    0-exp 0-exp ['journal.json']
    """
    path = Path(path)
    tmp = Path(tempfile.mkdtemp(prefix="automd-import-"))
    try:
        unpacker = _Unpacker(path, tmp, limits or Limits())
        try:
            if path.name.lower().endswith(".zip"):
                _unzip(unpacker, path)
            else:
                _untar(unpacker, path)
        except SourceError:
            raise
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, OSError,
                ValueError, NotImplementedError, RuntimeError) as exc:  # fmt: skip
            raise _refuse(path, f"it cannot be read ({type(exc).__name__}: {exc})") from None
        entries = list(tmp.iterdir())
        if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
            yield entries[0], entries[0].name, entries[0].name
        else:
            yield tmp, packed_name(path), ""
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
