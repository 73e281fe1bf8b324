"""Read-only, bounded access to an agent's output directory (SOURCE).

The directory is untrusted: it was written by an agent and a harness. Every path the importers
touch goes through :class:`SourceDir`, which

- accepts only ``/``-separated relative paths without ``..``, backslashes or NUL bytes;
- refuses symlinks on every component of a path it reads (so nothing can point outside SOURCE,
  not even a link that happens to stay inside);
- reads only regular files, each below a size cap (:class:`Limits`), in one bounded read;
- lists directories without following symlinks, with a cap on the number of entries;
- measures JSON before parsing it (nesting depth, number of values: :mod:`.json_bounds`) and
  turns every operating-system error (permissions, names too long) into a reason code.

It never imports, executes or unpickles anything. Messages name paths relative to SOURCE, so that
what an import records does not depend on where SOURCE lives.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from automd_analysis.docstrings import docs_reference, fill_doc
from automd_analysis.importers.json_bounds import json_shape
from automd_analysis.importers.problems import SourceError
from automd_analysis.importers.text import has_surrogates

__all__ = [
    "Limits",
    "SourceDir",
    "check_json_shape",
    "check_relative",
    "is_cut_short",
    "os_error",
    "parse_json",
    "unsafe_path",
]


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
    max_depth : int
        Nesting of JSON objects/arrays and YAML collections: 100.
    max_values : int
        Keys and values of one JSON document or one JSON line: 2 000 000.
    max_nodes : int
        Nodes or steps of one run: 10 000.
    max_lines : int
        Lines of one JSON Lines or TSV log: 1 000 000.
    run_log_bytes : int
        All logs parsed for one run together (e.g. several rollouts): 1 GiB.
    output_bytes : int
        Everything written into the archive for one run: 32 GiB.
    packed_bytes : int
        The members of a ``.zip``/``.tar`` SOURCE, uncompressed: 8 GiB.
    """

    log_bytes: int = 256 << 20
    yaml_bytes: int = 1 << 20
    text_bytes: int = 1 << 20
    code_bytes: int = 8 << 20
    prediction_bytes: int = 2 << 30
    copy_bytes: int = 256 << 20
    max_entries: int = 200_000
    max_depth: int = 100
    max_values: int = 2_000_000
    max_nodes: int = 10_000
    max_lines: int = 1_000_000
    run_log_bytes: int = 1 << 30
    output_bytes: int = 32 << 30
    packed_bytes: int = 8 << 30


_DRIVE = re.compile(r"^[A-Za-z]:")


@fill_doc(references=docs_reference("importing.md", "Untrusted sources"))
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

    {references}

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
    if not isinstance(rel, str) or not rel or "\x00" in rel or "\\" in rel or has_surrogates(rel):
        raise unsafe_path(
            f"{what} path {rel!r} is empty or contains a NUL byte, a backslash or text that is "
            "not valid Unicode",
            where,
            "use '/'-separated paths relative to SOURCE",
        )
    pure = PurePosixPath(rel)
    if pure.is_absolute() or _DRIVE.match(rel) or ".." in pure.parts:
        raise unsafe_path(
            f"{what} path {rel!r} is absolute or contains '..'",
            where,
            "paths must stay inside SOURCE",
        )
    return pure


@fill_doc(references=docs_reference("importing.md", "Untrusted sources"))
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

    {references}

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

    def __init__(self, root: str | Path, limits: Limits | None = None, *,
                 name: str | None = None):  # fmt: skip
        given = Path(root)
        try:
            is_dir = given.is_dir()
        except OSError as exc:
            raise os_error(exc, given, "SOURCE") from None
        if not is_dir:
            raise SourceError(
                "source directory not found" if not given.exists() else "SOURCE is not a directory",
                path=given,
                code="import.source_missing",
                fix="pass the directory that holds the agent's log (docs/importing.md)",
            )
        self.root = given.resolve()
        self.name = name or self.root.name
        self.limits = limits or Limits()

    # -- paths ---------------------------------------------------------------------------------

    def path(self, rel: str | PurePosixPath, *, what: str = "file") -> Path:
        """The absolute path of ``rel`` after checking that no component is a symlink.

        Components that do not exist end the check (the path may not exist).

        Raises
        ------
        SourceError
            ``import.unsafe_path``; ``import.unreadable`` when a folder on the way cannot be
            searched.
        """
        pure = check_relative(str(rel), what=what)
        current = self.root
        for part in pure.parts:
            current = current / part
            try:
                st = os.lstat(current)
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG):
                    return self.root.joinpath(*pure.parts)  # cannot exist
                raise os_error(exc, str(pure), what) from None
            if stat.S_ISLNK(st.st_mode):
                raise unsafe_path(
                    f"{what} {str(pure)!r} is or passes through a symlink",
                    str(pure),
                    "replace symlinks in SOURCE by copies of the files they point to",
                )
        return current

    def _lstat(self, rel: str, what: str) -> os.stat_result | None:
        try:
            return os.lstat(self.path(rel, what=what))
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG):
                return None
            raise os_error(exc, rel, what) from None

    def exists(self, rel: str | PurePosixPath, *, what: str = "file") -> bool:
        """True if ``rel`` exists (a symlink on the way raises ``import.unsafe_path``)."""
        return self._lstat(str(rel), what) is not None

    def is_dir(self, rel: str | PurePosixPath, *, what: str = "directory") -> bool:
        """True if ``rel`` is a directory (not a symlink)."""
        st = self._lstat(str(rel), what)
        return st is not None and stat.S_ISDIR(st.st_mode)

    def is_file(self, rel: str | PurePosixPath, *, what: str = "file") -> bool:
        """True if ``rel`` is a regular file (not a symlink)."""
        st = self._lstat(str(rel), what)
        return st is not None and stat.S_ISREG(st.st_mode)

    def mtime(self, rel: str | PurePosixPath, *, what: str = "file") -> float:
        """The modification time of ``rel`` (epoch seconds; no symlink followed)."""
        st = self._lstat(str(rel), what)
        if st is None:
            raise _missing(str(rel), what)
        return st.st_mtime

    def file_size(self, rel: str | PurePosixPath, cap: int, *, what: str = "file") -> int:
        """Size of the regular file ``rel``; errors as :meth:`read_bytes` (without reading)."""
        return self._regular(str(rel), cap, what).st_size

    def _regular(self, rel: str, cap: int, what: str) -> os.stat_result:
        st = self._lstat(rel, what)
        if st is None:
            raise _missing(rel, what)
        _check_regular(st, rel, cap, what)
        return st

    # -- reading -------------------------------------------------------------------------------

    def _open(self, rel: str, cap: int, what: str) -> int:
        """A read-only descriptor of the regular file ``rel`` (checked again after opening, so a
        file swapped for a FIFO or a link in between is refused, never waited on)."""
        self._regular(rel, cap, what)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(self.path(rel, what=what), flags)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise unsafe_path(
                    f"{what} {rel!r} became a symlink while it was read",
                    rel,
                    "do not change SOURCE during an import",
                ) from None
            raise os_error(exc, rel, what) from None
        try:
            _check_regular(os.fstat(fd), rel, cap, what)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read_bytes(self, rel: str | PurePosixPath, cap: int, *, what: str = "file") -> bytes:
        """The bytes of the regular file ``rel``, at most ``cap``.

        Raises
        ------
        SourceError
            ``import.unsafe_path``, ``import.source_missing``, ``import.not_a_file``,
            ``import.too_large`` or ``import.unreadable``.
        """
        rel = str(rel)
        fd = self._open(rel, cap, what)
        try:
            with os.fdopen(fd, "rb") as fh:
                data = fh.read(cap + 1)
        except OSError as exc:
            raise os_error(exc, rel, what) from None
        if len(data) > cap:  # grew after the check
            raise _too_large(rel, what, cap, len(data))
        return data

    def read_head(self, rel: str | PurePosixPath, n: int, cap: int, *, what: str = "file") -> bytes:
        """The first ``n`` bytes of the regular file ``rel`` (errors as :meth:`read_bytes`)."""
        rel = str(rel)
        fd = self._open(rel, cap, what)
        try:
            with os.fdopen(fd, "rb") as fh:
                return fh.read(n)
        except OSError as exc:
            raise os_error(exc, rel, what) from None

    def sha256(self, rel: str | PurePosixPath, cap: int, *, what: str = "file") -> str:
        """The SHA-256 of the regular file ``rel``, read in chunks (errors as :meth:`read_bytes`)."""
        rel = str(rel)
        digest = hashlib.sha256()
        fd = self._open(rel, cap, what)
        try:
            with os.fdopen(fd, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    digest.update(chunk)
        except OSError as exc:
            raise os_error(exc, rel, what) from None
        return digest.hexdigest()

    def copy_to(self, rel: str | PurePosixPath, dest: Path, cap: int, *, what: str = "file"):
        """Stream the regular file ``rel`` to ``dest`` (at most ``cap`` bytes; errors as
        :meth:`read_bytes`; a failure to write ``dest`` is ``OSError``)."""
        rel = str(rel)
        fd = self._open(rel, cap, what)
        dest.parent.mkdir(parents=True, exist_ok=True)
        copied = 0
        with os.fdopen(fd, "rb") as src, open(dest, "wb") as out:
            while True:
                try:
                    chunk = src.read(1 << 20)
                except OSError as exc:
                    raise os_error(exc, rel, what) from None
                if not chunk:
                    break
                copied += len(chunk)
                if copied > cap:
                    raise _too_large(rel, what, cap, copied)
                out.write(chunk)

    def read_text(self, rel: str | PurePosixPath, cap: int, *, what: str = "file") -> str:
        """:meth:`read_bytes` decoded as UTF-8 (``import.malformed`` if it is not UTF-8)."""
        return decode_utf8(self.read_bytes(rel, cap, what=what), str(rel), what)

    def read_json(self, rel: str | PurePosixPath, cap: int | None = None, *,
                  what: str = "JSON log") -> Any:  # fmt: skip
        """Parse the JSON file ``rel`` (``NaN``/``Infinity`` allowed: Python agents write them).

        The text is measured before it is parsed (:func:`check_json_shape`).

        Raises
        ------
        SourceError
            As :meth:`read_bytes`; ``import.too_large`` (nested deeper than ``max_depth`` or
            more than ``max_values`` values); ``import.malformed`` with the line and column when
            the text is not JSON.
        """
        data = self.read_bytes(rel, self.limits.log_bytes if cap is None else cap, what=what)
        return parse_json(data, str(rel), what, self.limits)

    def listdir(self, rel: str | PurePosixPath = "", *, what: str = "directory"):
        """Sorted ``(name, kind)`` of a directory; kind is ``"dir"``, ``"file"``, ``"link"``
        or ``"other"`` (symlinks are reported, never followed; a name that is not valid Unicode
        is ``"other"``)."""
        p = self.root if str(rel) in ("", ".") else self.path(rel, what=what)
        out = []
        try:
            with os.scandir(p) as it:
                for n, entry in enumerate(it):
                    if n >= self.limits.max_entries:
                        raise self._too_many_entries(rel, what)
                    if has_surrogates(entry.name):
                        kind = "other"
                    elif entry.is_symlink():
                        kind = "link"
                    elif entry.is_dir(follow_symlinks=False):
                        kind = "dir"
                    elif entry.is_file(follow_symlinks=False):
                        kind = "file"
                    else:
                        kind = "other"
                    out.append((entry.name, kind))
        except OSError as exc:
            raise os_error(exc, str(rel) or ".", what) from None
        return sorted(out)

    def _too_many_entries(self, rel, what: str) -> SourceError:
        return SourceError(
            f"{what} {str(rel) or '.'!r} has more than {self.limits.max_entries} entries",
            path=str(rel) or ".",
            code="import.too_large",
            fix="point SOURCE at the run's own directory",
        )

    def walk_files(self, rel: str | PurePosixPath = "", *, what: str = "directory",
                   skip_dirs: frozenset[str] = frozenset(), skip_hidden: bool = False):  # fmt: skip
        """Every regular file below ``rel`` as a relative POSIX path string, sorted.

        Parameters
        ----------
        rel : str
        what : str
        skip_dirs : frozenset of str
            Directory names not entered (anywhere below ``rel``).
        skip_hidden : bool
            Do not enter directories whose name starts with ``.``.

        Returns
        -------
        files : list of str
        others : list of (str, str)
            Entries met on the way that are not followed or read: ``(path, kind)`` with kind
            ``"link"`` (a symlink) or ``"other"`` (FIFO, device, socket, a name that is not
            valid Unicode).
        """
        files: list[str] = []
        others: list[tuple[str, str]] = []
        stack = [str(rel).strip("/")]
        visited = 0
        while stack:
            d = stack.pop()
            for name, kind in self.listdir(d, what=what):
                visited += 1
                if visited > self.limits.max_entries:
                    raise self._too_many_entries(rel, what)
                child = f"{d}/{name}" if d else name
                if kind == "dir":
                    if name not in skip_dirs and not (skip_hidden and name.startswith(".")):
                        stack.append(child)
                elif kind == "file":
                    files.append(child)
                else:
                    others.append((child, kind))
        return sorted(files), sorted(others)


def unsafe_path(message: str, path: str | None, fix: str) -> SourceError:
    """``import.unsafe_path`` for a path that is a symlink, leaves SOURCE or cannot be named."""
    return SourceError(message, path=path, code="import.unsafe_path", fix=fix)


def _missing(rel: str, what: str) -> SourceError:
    return SourceError(
        f"{what} {rel!r} not found",
        path=rel,
        code="import.source_missing",
        fix="check SOURCE and the format (docs/importing.md)",
    )


def _too_large(rel: str, what: str, cap: int, size: int) -> SourceError:
    return SourceError(
        f"{what} {rel!r} has {size} bytes, above the cap of {cap}",
        path=rel,
        code="import.too_large",
        fix="split or truncate the file; the caps are in docs/importing.md",
        details={"size": size, "limit": cap},
    )


def _check_regular(st: os.stat_result, rel: str, cap: int, what: str) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise SourceError(
            f"{what} {rel!r} is not a regular file"
            + (" (a FIFO)" if stat.S_ISFIFO(st.st_mode) else ""),
            path=rel,
            code="import.not_a_file",
            fix="replace it by a regular file",
        )
    if st.st_size > cap:
        raise _too_large(rel, what, cap, st.st_size)


def os_error(exc: OSError, rel: str | Path, what: str) -> SourceError:
    """An operating-system error met while reading SOURCE as ``import.unreadable`` (or
    ``import.unsafe_path`` for a name the system refuses)."""
    reason = exc.strerror or type(exc).__name__
    if exc.errno in (errno.ENAMETOOLONG, errno.ELOOP, errno.EILSEQ):
        return unsafe_path(
            f"{what} {str(rel)!r} cannot be opened: {reason}",
            str(rel),
            "rename the file or folder (names are limited to 255 bytes)",
        )
    return SourceError(
        f"{what} {str(rel)!r} cannot be read: {reason}",
        path=str(rel),
        code="import.unreadable",
        fix="make it readable by the user running automd import (chmod/chown), or copy the run "
        "somewhere readable",
    )


def decode_utf8(data: bytes, rel: str, what: str) -> str:
    """``data`` as UTF-8 text (``import.malformed`` naming the byte offset if it is not)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(
            f"{what} {rel!r} is not UTF-8 text: {exc.reason} at byte {exc.start}",
            path=rel,
            code="import.malformed",
            fix="the file must be UTF-8 text as the agent writes it",
        ) from None


def check_json_shape(data: bytes, rel: str, what: str, limits: Limits, *,
                     lines: bool = False) -> None:  # fmt: skip
    """Refuse a JSON (``lines``: JSON Lines) text nested deeper than ``limits.max_depth`` or with
    more than ``limits.max_values`` values (per line for JSON Lines, whose line count is capped by
    ``limits.max_lines``), before anything is parsed.

    Raises
    ------
    SourceError
        ``import.too_large``.
    """
    cap = None if lines else limits.max_values
    shape = json_shape(data, max_depth=limits.max_depth, max_values=cap)
    count = shape.line_values if lines else shape.values
    on_one_line = " on one line" if lines else ""
    for over, says, limit in (
        (shape.depth > limits.max_depth,
         f"nests objects/arrays more than {limits.max_depth} levels deep", limits.max_depth),
        (lines and shape.lines > limits.max_lines,
         f"has more than {limits.max_lines} lines", limits.max_lines),
        (count > limits.max_values,
         f"holds more than {limits.max_values} JSON values{on_one_line}", limits.max_values),
    ):  # fmt: skip
        if over:
            raise SourceError(
                f"{what} {rel!r} {says}",
                path=rel,
                code="import.too_large",
                fix="the limits are in docs/importing.md; a log this size is not a real agent run",
                details={"limit": limit},
            )


def is_cut_short(exc: json.JSONDecodeError) -> bool:
    """Whether a JSON syntax error is the text ending too early (a file cut short while it was
    written), not a wrong character inside it.

    >>> def err(text):
    ...     try:
    ...         json.loads(text)
    ...     except json.JSONDecodeError as exc:
    ...         return exc
    >>> is_cut_short(err('{"nodes": [{"code": "imp')), is_cut_short(err('{"a": 1,\\n'))
    (True, True)
    >>> is_cut_short(err('{"a": 1} x')), is_cut_short(err('{"a": tru}'))
    (False, False)
    """
    return exc.msg.startswith("Unterminated string") or exc.pos >= len(exc.doc.rstrip())


def parse_json(data: bytes | str, rel: str, what: str, limits: Limits | None = None, *,
               checked: bool = False) -> Any:  # fmt: skip
    """Parse JSON (after :func:`check_json_shape` unless ``checked``), turning syntax errors into
    ``import.malformed`` with line and column."""
    if not checked:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        check_json_shape(raw, rel, what, limits or Limits())
    text = decode_utf8(data, rel, what) if isinstance(data, bytes) else data
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if is_cut_short(exc):
            raise SourceError(
                f"{what} {rel!r} is cut short: its text ends ({len(exc.doc)} characters) before "
                f"the JSON is complete (the value at line {exc.lineno}, column {exc.colno} is "
                "unfinished)",
                path=rel,
                location=f"line {exc.lineno}, column {exc.colno}",
                code="import.malformed",
                fix="the file was still being written when the run stopped or was copied; copy "
                "it again from the finished run if there is one",
                details={"cut_short": True},
            ) from None
        raise SourceError(
            f"{what} {rel!r} is not valid JSON: {exc.msg}",
            path=rel,
            location=f"line {exc.lineno}, column {exc.colno}",
            code="import.malformed",
            fix="the file must be complete JSON as the agent writes it (was the run killed "
            "while writing it?)",
        ) from None
    except RecursionError:  # only without the shape check
        raise SourceError(
            f"{what} {rel!r} is nested too deeply to be read",
            path=rel,
            code="import.too_large",
            fix="the limits are in docs/importing.md",
        ) from None
