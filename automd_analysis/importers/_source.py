"""Read-only, bounded access to an agent's output directory (SOURCE).

The directory is untrusted: it was written by an agent and a harness. Every path the importers
touch goes through :class:`SourceDir`, which

- accepts only ``/``-separated relative paths without ``..``, backslashes or NUL bytes;
- refuses symlinks on every component of a path it reads (so nothing can point outside SOURCE,
  not even a link that happens to stay inside);
- reads only regular files, each below a size cap (:class:`Limits`), in one bounded read;
- lists directories without following symlinks, with a cap on the number of entries.

It never imports, executes or unpickles anything. Messages name paths relative to SOURCE, so that
what an import records does not depend on where SOURCE lives.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from automd_analysis.importers.problems import SourceError

__all__ = ["Limits", "SourceDir", "check_relative"]


@dataclass(frozen=True)
class Limits:
    """Size caps (bytes) and listing caps of an import.

    Attributes
    ----------
    log_bytes : int
        Agent logs that are parsed (``journal.json``, rollouts, ``summary.json``, TSV): 256 MiB.
    yaml_bytes : int
        YAML configuration files: 1 MiB.
    text_bytes : int
        Small text files (``best_node_id.txt``, map files, ``--tokens``): 1 MiB.
    code_bytes : int
        One code file: 8 MiB.
    prediction_bytes : int
        One prediction file: 2 GiB.
    copy_bytes : int
        One raw log copied unparsed under ``logs/``: 256 MiB.
    max_entries : int
        Directory entries visited by one listing: 200 000.
    """

    log_bytes: int = 256 << 20
    yaml_bytes: int = 1 << 20
    text_bytes: int = 1 << 20
    code_bytes: int = 8 << 20
    prediction_bytes: int = 2 << 30
    copy_bytes: int = 256 << 20
    max_entries: int = 200_000


_DRIVE = re.compile(r"^[A-Za-z]:")


def check_relative(rel: str, *, what: str, where: str | None = None) -> PurePosixPath:
    """``rel`` as a relative POSIX path, or ``import.unsafe_path``.

    Parameters
    ----------
    rel : str
        A path taken from a log, a pattern or a map file (never trusted).
    what : str
        What the path is, for the message.
    where : str, optional
        Where ``rel`` came from (file name), for the message.

    Returns
    -------
    PurePosixPath

    Raises
    ------
    SourceError
        ``import.unsafe_path`` if ``rel`` is empty, absolute, has a drive letter, ``..``, a
        backslash or a NUL byte.

    See Also
    --------
    SourceDir.path : applies this check, then refuses symlinks on the way.

    References
    ----------
    docs/importing.md, "Untrusted sources".

    Examples
    --------
    >>> str(check_relative("node_predictions/ab12/submission.csv", what="prediction file"))
    'node_predictions/ab12/submission.csv'
    >>> try:
    ...     check_relative("../etc/passwd", what="prediction file")
    ... except SourceError as exc:
    ...     print(exc.code)
    import.unsafe_path
    """
    if not isinstance(rel, str) or not rel or "\x00" in rel or "\\" in rel:
        raise SourceError(
            f"{what} path {rel!r} is empty or contains a NUL byte or a backslash",
            path=where,
            code="import.unsafe_path",
            fix="use '/'-separated paths relative to SOURCE",
        )
    pure = PurePosixPath(rel)
    if pure.is_absolute() or _DRIVE.match(rel) or ".." in pure.parts:
        raise SourceError(
            f"{what} path {rel!r} is absolute or contains '..'",
            path=where,
            code="import.unsafe_path",
            fix="paths must stay inside SOURCE",
        )
    return pure


class SourceDir:
    """An agent's output directory, read safely (see the module docstring).

    Parameters
    ----------
    root : str or Path
        SOURCE. It must be a directory; the path the user gives is trusted (it may itself be a
        symlink), everything below it is not.
    limits : Limits, optional

    See Also
    --------
    check_relative

    References
    ----------
    docs/importing.md, "Untrusted sources".

    Examples
    --------
    >>> import os, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "journal.json").write_text('{"nodes": []}')
    >>> os.symlink("/etc/hostname", d / "config.yaml")
    >>> src = SourceDir(d)
    >>> src.read_json("journal.json")
    {'nodes': []}
    >>> try:
    ...     src.read_bytes("config.yaml", 1024)
    ... except SourceError as exc:
    ...     print(exc.code)
    import.unsafe_path
    """

    def __init__(self, root: str | Path, limits: Limits | None = None):
        given = Path(root)
        if not given.is_dir():
            raise SourceError(
                "source directory not found",
                path=given,
                code="import.source_missing",
                fix="pass the directory that holds the agent's log (docs/importing.md)",
            )
        self.root = given.resolve()
        self.name = given.resolve().name
        self.limits = limits or Limits()

    # -- paths ---------------------------------------------------------------------------------

    def path(self, rel: str | PurePosixPath, *, what: str = "file") -> Path:
        """The absolute path of ``rel`` after checking that no component is a symlink.

        Components that do not exist end the check (the path may not exist).

        Raises
        ------
        SourceError
            ``import.unsafe_path``.
        """
        pure = check_relative(str(rel), what=what)
        current = self.root
        for part in pure.parts:
            current = current / part
            try:
                st = os.lstat(current)
            except FileNotFoundError:
                return self.root.joinpath(*pure.parts)
            if stat.S_ISLNK(st.st_mode):
                raise SourceError(
                    f"{what} {str(pure)!r} is or passes through a symlink",
                    path=str(pure),
                    code="import.unsafe_path",
                    fix="replace symlinks in SOURCE by copies of the files they point to",
                )
        return current

    def exists(self, rel: str | PurePosixPath, *, what: str = "file") -> bool:
        """True if ``rel`` exists (a symlink on the way raises ``import.unsafe_path``)."""
        return os.path.lexists(self.path(rel, what=what))

    def is_dir(self, rel: str | PurePosixPath, *, what: str = "directory") -> bool:
        """True if ``rel`` is a directory (not a symlink)."""
        p = self.path(rel, what=what)
        try:
            return stat.S_ISDIR(os.lstat(p).st_mode)
        except FileNotFoundError:
            return False

    def file_size(self, rel: str | PurePosixPath, cap: int, *, what: str = "file") -> int:
        """Size of the regular file ``rel``; errors as :meth:`read_bytes` (without reading)."""
        p = self.path(rel, what=what)
        return self._regular(p, str(rel), cap, what).st_size

    def _regular(self, p: Path, rel: str, cap: int, what: str) -> os.stat_result:
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            raise SourceError(
                f"{what} {rel!r} not found",
                path=rel,
                code="import.source_missing",
                fix="check SOURCE and the format (docs/importing.md)",
            ) from None
        if not stat.S_ISREG(st.st_mode):
            raise SourceError(
                f"{what} {rel!r} is not a regular file",
                path=rel,
                code="import.not_a_file",
                fix="replace it by a regular file",
            )
        if st.st_size > cap:
            raise SourceError(
                f"{what} {rel!r} has {st.st_size} bytes, above the cap of {cap}",
                path=rel,
                code="import.too_large",
                fix="split or truncate the file; the caps are in docs/importing.md",
                details={"size": st.st_size, "limit": cap},
            )
        return st

    # -- reading -------------------------------------------------------------------------------

    def read_bytes(self, rel: str | PurePosixPath, cap: int, *, what: str = "file") -> bytes:
        """The bytes of the regular file ``rel``, at most ``cap``.

        Raises
        ------
        SourceError
            ``import.unsafe_path``, ``import.source_missing``, ``import.not_a_file`` or
            ``import.too_large``.
        """
        rel = str(rel)
        p = self.path(rel, what=what)
        self._regular(p, rel, cap, what)
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(cap + 1)
        if len(data) > cap:  # grew after the check
            raise SourceError(
                f"{what} {rel!r} is above the cap of {cap} bytes",
                path=rel,
                code="import.too_large",
                fix="split or truncate the file; the caps are in docs/importing.md",
            )
        return data

    def copy_to(self, rel: str | PurePosixPath, dest: Path, cap: int, *, what: str = "file"):
        """Stream the regular file ``rel`` to ``dest`` (at most ``cap`` bytes; errors as
        :meth:`read_bytes`)."""
        rel = str(rel)
        p = self.path(rel, what=what)
        self._regular(p, rel, cap, what)
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        copied = 0
        with os.fdopen(fd, "rb") as src, open(dest, "wb") as out:
            while chunk := src.read(1 << 20):
                copied += len(chunk)
                if copied > cap:
                    raise SourceError(
                        f"{what} {rel!r} is above the cap of {cap} bytes",
                        path=rel,
                        code="import.too_large",
                        fix="split or truncate the file; the caps are in docs/importing.md",
                    )
                out.write(chunk)

    def read_text(self, rel: str | PurePosixPath, cap: int, *, what: str = "file") -> str:
        """:meth:`read_bytes` decoded as UTF-8 (``import.malformed`` if it is not UTF-8)."""
        data = self.read_bytes(rel, cap, what=what)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SourceError(
                f"{what} {str(rel)!r} is not UTF-8 text: {exc}",
                path=str(rel),
                code="import.malformed",
                fix="the file must be UTF-8 text as the agent writes it",
            ) from None

    def read_json(self, rel: str | PurePosixPath, cap: int | None = None, *,
                  what: str = "JSON log") -> Any:  # fmt: skip
        """Parse the JSON file ``rel`` (``NaN``/``Infinity`` allowed: Python agents write them).

        Raises
        ------
        SourceError
            As :meth:`read_bytes`; ``import.malformed`` with the line and column when the text is
            not JSON.
        """
        text = self.read_text(rel, self.limits.log_bytes if cap is None else cap, what=what)
        return parse_json(text, str(rel), what)

    def listdir(self, rel: str | PurePosixPath = "", *, what: str = "directory"):
        """Sorted ``(name, kind)`` of a directory; kind is ``"dir"``, ``"file"``, ``"link"``
        or ``"other"`` (symlinks are reported, never followed)."""
        p = self.root if str(rel) in ("", ".") else self.path(rel, what=what)
        out = []
        with os.scandir(p) as it:
            for n, entry in enumerate(it):
                if n >= self.limits.max_entries:
                    raise SourceError(
                        f"{what} {str(rel)!r} has more than {self.limits.max_entries} entries",
                        path=str(rel),
                        code="import.too_large",
                        fix="point SOURCE at the run's own directory",
                    )
                if entry.is_symlink():
                    kind = "link"
                elif entry.is_dir(follow_symlinks=False):
                    kind = "dir"
                elif entry.is_file(follow_symlinks=False):
                    kind = "file"
                else:
                    kind = "other"
                out.append((entry.name, kind))
        return sorted(out)

    def walk_files(self, rel: str | PurePosixPath = "", *, what: str = "directory"):
        """Every regular file below ``rel`` as a relative POSIX path string, sorted.

        Returns
        -------
        files : list of str
        links : list of str
            Symlinks met on the way (not followed, not listed in ``files``).
        """
        files: list[str] = []
        links: list[str] = []
        stack = [str(rel).strip("/")]
        visited = 0
        while stack:
            d = stack.pop()
            for name, kind in self.listdir(d, what=what):
                visited += 1
                if visited > self.limits.max_entries:
                    raise SourceError(
                        f"{what} {str(rel)!r} has more than {self.limits.max_entries} entries",
                        path=str(rel),
                        code="import.too_large",
                        fix="point SOURCE at the run's own directory",
                    )
                child = f"{d}/{name}" if d else name
                if kind == "dir":
                    stack.append(child)
                elif kind == "file":
                    files.append(child)
                elif kind == "link":
                    links.append(child)
        return sorted(files), sorted(links)


def parse_json(text: str, rel: str, what: str) -> Any:
    """Parse JSON text, turning syntax errors into ``import.malformed`` with line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(
            f"{what} {rel!r} is not valid JSON: {exc.msg}",
            path=rel,
            location=f"line {exc.lineno}, column {exc.colno}",
            code="import.malformed",
            fix="the file must be complete JSON as the agent writes it (was the run killed "
            "while writing it?)",
        ) from None
