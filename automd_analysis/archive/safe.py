"""Safe access to untrusted archive files: bounded reads, no path may leave the archive root.

Every archive-supplied path (directory entries, ``code_files``, annotation evidence) goes through
:func:`resolve_inside`; every file read goes through :func:`read_bounded`.
"""

from __future__ import annotations

import functools
import json
import os
import re
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from automd_analysis.errors import ArchiveError
from automd_analysis.schema import NAME_PATTERN

#: Names of experiments, agents, tasks and versions (docs/archive.md).
#: Repetition directories.
REP_PATTERN = re.compile(r"^rep(0|[1-9][0-9]{0,5})$")
#: Largest ``archive.yaml`` / ``run.json`` / ``meta.json`` / ``annotations.json`` accepted.
MAX_JSON_BYTES = 1 << 20
#: Largest file an annotation may cite as evidence (its lines are counted).
MAX_EVIDENCE_BYTES = 8 << 20
#: Default limit of :meth:`automd_analysis.archive.Run.read_text`.
MAX_TEXT_BYTES = 1 << 20
#: Largest integer any archive field may hold (2**53 - 1: exact in float64, JSON and int64).
MAX_INT = 2**53 - 1
#: Version ids the toolkit uses itself: the selected submission is the version ``selected`` in the
#: score store (``scores.version``, ``reasons.version``), so no archived version may be called so.
RESERVED_VERSION_NAMES = frozenset({"selected"})


@functools.lru_cache(maxsize=4096)
def _resolved_dir(path: str) -> Path:
    """A containing directory (archive root, run) with symlinks resolved, once per process: the
    paths checked against it are resolved afresh every time, so a directory moved later can
    only make more paths fall outside it."""
    return Path(path).resolve()


def _unsafe_path(message: str, path: Path, fix: str) -> ArchiveError:
    """``archive.unsafe_path`` for a path that leaves the run or the archive."""
    return ArchiveError(message, path=path, code="archive.unsafe_path", fix=fix)


def check_name(name: str, path: Path, what: str) -> None:
    """Raise ``archive.bad_name`` unless ``name`` matches :data:`NAME_PATTERN`."""
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise ArchiveError(
            f"{what} name {name!r} is not allowed",
            path=path,
            code="archive.bad_name",
            fix=f"names must match {NAME_PATTERN.pattern}",
        )


def resolve_inside(start: Path, rel: str, *, base: Path, what: str) -> Path:
    """Resolve the archive-supplied relative path ``rel`` against ``start``, staying in ``base``.

    Parameters
    ----------
    start : Path
        Directory ``rel`` is relative to.
    rel : str
        ``/``-separated relative path from the archive (never trusted).
    base : Path
        Directory the resolved path must lie in (symlinks resolved).
    what : str
        What the path is, for the message (``"evidence"``, ``"code_files"``...).

    Returns
    -------
    Path
        The resolved absolute path (it need not exist).

    Raises
    ------
    ArchiveError
        ``archive.unsafe_path`` if ``rel`` is empty, absolute (POSIX or drive letter), contains
        ``..``, a backslash or a NUL byte, or resolves (through symlinks) outside ``base``.
    """
    if not isinstance(rel, str) or not rel or "\x00" in rel or "\\" in rel:
        raise _unsafe_path(
            f"{what} path {rel!r} is empty or contains a NUL byte or backslash",
            start,
            "use '/'-separated paths relative to the run directory",
        )
    pure = PurePosixPath(rel)
    if pure.is_absolute() or re.match(r"^[A-Za-z]:", rel) or ".." in pure.parts:
        raise _unsafe_path(
            f"{what} path {rel!r} is absolute or contains '..'",
            start,
            "use paths relative to the run directory, without '..'",
        )
    target = (start / pure).resolve()
    if not target.is_relative_to(_resolved_dir(str(base))):
        raise _unsafe_path(
            f"{what} path {rel!r} resolves outside {base} (to {target})",
            start / pure,
            "archives may not link outside themselves; copy the file into the run",
        )
    return target


def check_inside_root(path: Path, root: Path) -> Path:
    """``path`` with symlinks resolved; raise ``archive.unsafe_path`` if it leaves ``root``."""
    resolved = path.resolve()
    if not resolved.is_relative_to(_resolved_dir(str(root))):
        raise _unsafe_path(
            f"{path.name!r} resolves outside the archive (to {resolved})",
            path,
            "archives may not link outside themselves; replace the symlink by a copy",
        )
    return resolved


def read_bounded(path: Path, max_bytes: int, root: Path) -> bytes:
    """Bytes of the regular file ``path`` inside ``root``, refusing files above ``max_bytes``.

    Raises
    ------
    ArchiveError
        ``archive.unsafe_path``, ``archive.file_missing``, ``archive.not_a_file`` (directory,
        FIFO, device...) or ``archive.too_large``.
    """
    resolved = check_inside_root(path, root)
    try:
        st = resolved.stat()
    except FileNotFoundError:
        raise ArchiveError(
            "file not found", path=path, code="archive.file_missing", fix="restore the file"
        ) from None
    if not stat.S_ISREG(st.st_mode):
        raise ArchiveError(
            "not a regular file", path=path, code="archive.not_a_file", fix="remove or replace it"
        )
    too_large = ArchiveError(
        f"file is larger than the limit of {max_bytes} bytes",
        path=path,
        code="archive.too_large",
        fix="archive files must stay below the size limits in docs/archive.md",
        details={"size": st.st_size, "limit": max_bytes},
    )
    if st.st_size > max_bytes:
        raise too_large
    with open(resolved, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:  # the file grew after stat
        raise too_large
    return data


def walk_files(run_dir: Path, rel: str, *, max_files: int, suffix: str = "",
               max_depth: int = 8) -> list[str]:  # fmt: skip
    """Run-relative paths of the entries that are not directories under the run's directory
    ``rel``, sorted: no symlinked directory is entered, at most ``max_files`` paths and
    ``max_depth`` levels, only names ending in ``suffix``; ``[]`` when ``rel`` is unsafe or
    absent. Nothing is opened: read each path with a bounded reader.

    Examples
    --------
    >>> import tempfile
    >>> run = Path(tempfile.mkdtemp())
    >>> for name in ("code/n1/a.py", "code/n1/sub/b.txt", "code/n2/c.py"):
    ...     (run / name).parent.mkdir(parents=True, exist_ok=True)
    ...     _ = (run / name).write_text("x")
    >>> walk_files(run, "code/n1", max_files=10), walk_files(run, "code/n1", max_files=9, suffix=".py")
    (['code/n1/a.py', 'code/n1/sub/b.txt'], ['code/n1/a.py'])
    >>> walk_files(run, "../etc", max_files=10)
    []
    """
    try:
        start = resolve_inside(run_dir, rel, base=run_dir, what="code directory")
    except ArchiveError:
        return []
    out: list[str] = []
    todo = [(start, PurePosixPath(rel), 0)]
    while todo and len(out) < max_files:
        folder, name, depth = todo.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and depth < max_depth:
                todo.append((Path(entry.path), name / entry.name, depth + 1))
            elif entry.name.endswith(suffix) and not entry.is_dir():
                out.append(str(name / entry.name))
    return sorted(out)[:max_files]


def exists_or_link(path: Path) -> bool:
    """True if ``path`` exists or is a (possibly dangling) symlink."""
    return path.exists() or path.is_symlink()


def json_loads_strict(data: bytes, path: Path, code: str) -> Any:
    """Parse JSON bytes (UTF-8); ``NaN``/``Infinity`` are rejected.

    Raises
    ------
    ArchiveError
        With ``code`` when the bytes are not UTF-8 JSON.
    """

    def _reject(const: str):
        raise ValueError(f"non-finite number {const} is not allowed")

    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ArchiveError(
            f"not valid JSON: {exc}", path=path, code=code, fix="fix the JSON syntax"
        ) from None
    except RecursionError:  # arrays/objects nested thousands of levels deep
        raise ArchiveError(
            "JSON nested too deeply to be read",
            path=path,
            code=code,
            fix="archive JSON files are flat records (docs/archive.md); rewrite the file",
        ) from None
