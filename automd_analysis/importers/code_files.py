"""Names of the code files an import writes under ``code/<version>/``, made safe and distinct.

Code comes with names chosen by the agent (FML-bench snapshots map *any* string to a file's
content; a working directory holds whatever the agent wrote). Each name becomes a relative path
in the archive: absolute paths and ``..`` keep their last component, characters outside
``[A-Za-z0-9_.-/]`` become ``_``, a leading dot becomes ``_``. A name is then left out, and
recorded (``import.code_file_skipped``), when a component is longer than 200 characters, when it
repeats a name already taken, or when it would need a taken file as a folder (``a.py`` and
``a.py/b.py``) or a taken folder as a file, or when the whole name is longer than 1024 bytes
(the path in the archive must stay below the system's limit; a name too long is the log's
fault, never DEST's); the first name in sorted order wins.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from automd_analysis.importers.problems import problem

__all__ = ["MAX_PART", "MAX_PATH", "safe_code_files", "safe_code_name"]

#: Longest path component written (file systems allow 255 bytes).
MAX_PART = 200
#: Longest relative path written below ``code/<version>/`` (the whole path, DEST included, must
#: stay below the system's 4096 bytes).
MAX_PATH = 1024
_CODE_NAME = re.compile(r"[^A-Za-z0-9_.\-/]")


def safe_code_name(name: str, fallback: str) -> str:
    """A relative file name for code taken from a log (absolute / ``..`` paths → basename).

    >>> safe_code_name("/home/agent/../algo.py", "code.py"), safe_code_name("src/.env", "x")
    ('algo.py', 'src/_env')
    """
    parts = [p for p in str(name).replace("\\", "/").split("/") if p not in ("", ".", "..")]
    if not parts or str(name).startswith("/") or ".." in str(name).split("/"):
        parts = parts[-1:] or [fallback]
    cleaned = "/".join(_CODE_NAME.sub("_", p) for p in parts)
    cleaned = "/".join(p if not p.startswith(".") else "_" + p[1:] for p in cleaned.split("/"))
    return cleaned or fallback


def safe_code_files(items: Iterable[tuple[str, str]], problems: list, where: str,
                    fallback: str = "code.py") -> tuple[tuple[str, str], ...]:  # fmt: skip
    """``(safe name, text)`` for every ``(name, text)`` that can be written (see the module
    docstring), sorted by name.

    Parameters
    ----------
    items : iterable of (str, str)
    problems : list
        Receives ``import.code_file_skipped`` for every name left out.
    where : str
        The log the names come from.
    fallback : str
        The name of a file whose name cleans to nothing.

    Returns
    -------
    tuple of (str, str)

    See Also
    --------
    safe_code_name

    References
    ----------
    POSIX ``NAME_MAX`` (255 bytes per path component).

    Examples
    --------
    >>> probs = []
    >>> safe_code_files([("a.py", "1"), ("a.py/b.py", "2"), ("x" * 300, "3")], probs, "snap.json")
    (('a.py', '1'),)
    >>> len(probs)
    2
    """
    taken_files: set[str] = set()
    taken_dirs: set[str] = set()
    out = []
    for raw, text in sorted(((safe_code_name(n, fallback), t) for n, t in items),
                            key=lambda item: item[0]):  # fmt: skip
        parts = raw.split("/")
        dirs = {"/".join(parts[:i]) for i in range(1, len(parts))}
        why = None
        if any(len(p.encode()) > MAX_PART for p in parts):
            why = f"has a path component longer than {MAX_PART} bytes"
        elif len(raw.encode()) > MAX_PATH:
            why = f"has a path longer than {MAX_PATH} bytes"
        elif raw in taken_files or raw in taken_dirs:
            why = "repeats a file or folder name already taken"
        elif dirs & taken_files:
            why = "needs a file already taken as a folder"
        if why:
            shown = raw if len(raw) <= 80 else raw[:77] + "..."
            problems.append(
                problem(
                    "import.code_file_skipped",
                    f"code file {shown!r} {why}; it is not archived as code (the raw log is)",
                    path=where,
                )
            )
            continue
        taken_files.add(raw)
        taken_dirs |= dirs
        out.append((raw, text))
    return tuple(out)
