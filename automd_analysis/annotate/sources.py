"""Where the annotator's code comes from: a version's files in an archive, or loose files.

:func:`bind_code` finds the Python files of an archived version: the ``code_files`` its
``meta.json`` lists, else the files under ``code/<version>/``; a version the archive reader
skipped (e.g. because one of its files is a symbolic link leaving the run) still has its other,
safe files read. When none is found, the explanation says what was looked for and where.
:func:`read_version_files` reads them (bounded, inside the run); :func:`read_loose_file` reads a
script given on the command line (size-capped before anything is read); :func:`decode_code`
turns bytes into text by the file's declared encoding, with a reason when bytes are replaced.
"""

from __future__ import annotations

import io
import os
import tokenize
from dataclasses import dataclass
from pathlib import Path

from automd_analysis.archive import MAX_JSON_BYTES, MAX_TEXT_BYTES, Run
from automd_analysis.archive.safe import check_name, read_bounded, resolve_inside, walk_files
from automd_analysis.archive.schema import VersionJson, load_json_model
from automd_analysis.errors import ArchiveError, AutomdError

__all__ = [
    "MAX_CODE_BYTES",
    "MAX_CODE_FILES",
    "MAX_LOOSE_BYTES",
    "CodeBinding",
    "bind_code",
    "decode_code",
    "read_loose_file",
    "read_version_files",
]

#: Python files and bytes of code read per version (each file is also limited to 1 MiB).
MAX_CODE_FILES = 200
MAX_CODE_BYTES = 8 << 20
#: Largest loose file ``automd annotate code`` reads (the limit of an archived code file).
MAX_LOOSE_BYTES = MAX_TEXT_BYTES
_MAX_WALK_DEPTH = 8
_MAX_LISTED = 5


@dataclass(frozen=True)
class CodeBinding:
    """The Python files bound to a version (run-relative), and, when there are none, why."""

    files: tuple[str, ...]
    missing: str | None = None


def _python(paths) -> tuple[str, ...]:
    return tuple(sorted(p for p in paths if isinstance(p, str) and p.endswith(".py")))


def _listed(run: Run, version: str) -> tuple[tuple[str, ...] | None, list[str], str | None]:
    """``code_files`` of the version: from the reader, or from its meta.json when the reader
    skipped the version; ``(None, [], why)`` when even that cannot be read."""
    try:
        return _python(run.version(version).code_files), list(run.version(version).code_files), None
    except KeyError:
        pass
    meta = run.dir / "versions" / version / "meta.json"
    try:
        check_name(version, meta, "version")
        vj = load_json_model(
            meta, VersionJson, run.archive_root, MAX_JSON_BYTES, "archive.version_invalid"
        )
    except ArchiveError as exc:
        return None, [], f"versions/{version}/meta.json cannot be read ({exc.code}: {exc.message})"
    return _python(vj.code_files), list(vj.code_files), None


def _walk(run: Run, rel: str) -> list[str]:
    """Run-relative paths of the ``.py`` files under the run's directory ``rel`` (no symlinked
    directory is entered; at most :data:`MAX_CODE_FILES` files and 8 levels)."""
    return walk_files(run.dir, rel, max_files=MAX_CODE_FILES, suffix=".py",
                      max_depth=_MAX_WALK_DEPTH)  # fmt: skip


def bind_code(run: Run, version: str) -> CodeBinding:
    """The Python files of ``version``: listed in its meta.json, else under ``code/<version>/``.

    Examples
    --------
    >>> from automd_analysis.archive import open_archive
    >>> run = open_archive(Path(__file__).parents[2] / "tests/fixtures/small/archive").runs()[0]
    >>> bind_code(run, run.selected_version).files
    ('code/v01/train.py',)
    >>> print(bind_code(run, "nowhere").missing)  # doctest: +ELLIPSIS
    versions/nowhere/meta.json cannot be read (archive.file_missing: file not found)...
    """
    py, listed, unreadable = _listed(run, version)
    if py:
        return CodeBinding(py)
    found = _walk(run, f"code/{version}")
    if found:
        return CodeBinding(tuple(found))
    looked = [
        unreadable
        or (
            f"versions/{version}/meta.json code_files lists no Python file"
            + (f" (it lists {', '.join(listed[:_MAX_LISTED])})" if listed else "")
        ),
        f"code/{version}/ holds none"
        if (run.dir / "code" / version).is_dir()
        else f"there is no code/{version}/",
    ]
    others = _code_folders(run, version)
    if others:
        more = f" and {len(others) - _MAX_LISTED} more" if len(others) > _MAX_LISTED else ""
        looked.append(
            f"the run's code/ holds code of {len(others)} other version(s) or node(s) "
            f"({', '.join(others[:_MAX_LISTED])}{more}) that the archive does not bind to "
            f"version {version!r}"
        )
    return CodeBinding((), "; ".join(looked))


def _code_folders(run: Run, version: str) -> list[str]:
    try:
        code = resolve_inside(run.dir, "code", base=run.dir, what="code directory")
        return sorted(
            e.name
            for e in os.scandir(code)
            if e.is_dir(follow_symlinks=False) and e.name != version
        )
    except (ArchiveError, OSError):
        return []


def decode_code(data: bytes) -> tuple[str, str | None]:
    """Source text by the file's declared encoding (PEP 263 cookie or UTF-8 BOM; default UTF-8),
    and a reason when it is not what the file claims (bytes replaced, unknown encoding).

    Examples
    --------
    >>> decode_code("x = 'é'\\n".encode())
    ("x = 'é'\\n", None)
    >>> decode_code(b"# -*- coding: latin-1 -*-\\nx = '\\xe9'\\n")[0].splitlines()[1]
    "x = 'é'"
    >>> decode_code(b"x = '\\xff'\\n")[1]
    'not valid utf-8: 1 undecodable byte(s) replaced by U+FFFD'
    """
    note = None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # an unknown declared encoding, or bad bytes in the first lines
        encoding = "utf-8"
        if "unknown encoding" in str(exc):
            note = f"{exc.msg}; read as UTF-8"
    try:
        return data.decode(encoding), note
    except UnicodeDecodeError:
        text = data.decode(encoding, errors="replace")
        bad = text.count("\ufffd") - data.decode(encoding, errors="ignore").count("\ufffd")
        why = f"not valid {encoding}: {bad} undecodable byte(s) replaced by U+FFFD"
        return text, why if note is None else f"{note}; {why}"


def read_version_files(
    run_dir: Path, root: Path, code_files, problems: list, problem
) -> list[tuple[str, str]]:
    """``(path, text)`` of a version's files that can be read safely: each inside the run
    (``archive.unsafe_path`` otherwise, naming it), at most 1 MiB, at most
    :data:`MAX_CODE_FILES` files and :data:`MAX_CODE_BYTES` in all (``annotate.too_much_code``);
    undecodable bytes are an ``annotate.encoding`` problem. ``problem(code, message, path)``
    makes a problem entry."""
    sources: list[tuple[str, str]] = []
    total = 0
    for rel in code_files:
        if len(sources) >= MAX_CODE_FILES or total > MAX_CODE_BYTES:
            problems.append(
                problem(
                    "annotate.too_much_code",
                    f"only the first {len(sources)} Python files ({total} bytes) of the version "
                    f"are read (limits: {MAX_CODE_FILES} files, {MAX_CODE_BYTES} bytes)",
                    rel,
                )
            )
            break
        try:
            path = resolve_inside(run_dir, rel, base=run_dir, what="code_files")
            data = read_bounded(path, MAX_TEXT_BYTES, root)
        except ArchiveError as exc:
            problems.append(problem(exc.code, exc.message, rel))
            continue
        except OSError as exc:  # e.g. no permission to read it
            why = exc.strerror or type(exc).__name__
            problems.append(problem("annotate.file_unreadable", f"cannot be read ({why})", rel))
            continue
        total += len(data)
        text, why = decode_code(data)
        if why is not None:
            problems.append(problem("annotate.encoding", why, rel))
        sources.append((rel, text))
    return sources


def read_loose_file(path: Path, limit: int = MAX_LOOSE_BYTES) -> tuple[str, str | None]:
    """Text of a script given on the command line (and a decoding reason), size-checked with one
    ``stat`` before anything is read (the archive's bounded reader, with the whole file system
    as its root: the user chose the path).

    Raises
    ------
    AutomdError
        ``annotate.file_missing``, ``annotate.not_a_file`` (a directory, FIFO or device),
        ``annotate.file_too_large`` or ``annotate.file_unreadable``.
    """
    try:
        return decode_code(read_bounded(Path(path).absolute(), limit, Path("/")))
    except ArchiveError as exc:
        code = _LOOSE_CODES.get(exc.code, "annotate.file_unreadable")
        fix = "pass Python files"
        if code == "annotate.file_too_large":
            fix = f"pass scripts below {limit} bytes (the limit for an archived code file)"
        raise AutomdError(exc.message, path=path, code=code, fix=fix, details=exc.details) from None
    except OSError as exc:
        raise AutomdError(
            f"cannot be read ({exc.strerror or type(exc).__name__})",
            path=path,
            code="annotate.file_unreadable",
            fix="check the file's permissions",
        ) from None


_LOOSE_CODES = {
    "archive.file_missing": "annotate.file_missing",
    "archive.not_a_file": "annotate.not_a_file",
    "archive.too_large": "annotate.file_too_large",
}
