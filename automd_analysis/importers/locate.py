"""Where the log is when it is not in SOURCE: the directory one level above or below that holds it.

Each format's log has a mark (AIDE: ``journal.json``; AI-Scientist-v2: ``stage_*`` folders;
Codex: ``sessions/``; autoresearch: ``results.tsv`` or ``journal.md``; FML-bench:
``summary.json``; MLE-bench: ``metadata.json``). When an importer finds no log in SOURCE,
:func:`nearby_logs` looks for that mark in SOURCE's parent and in its sub-folders, so that the
error can name the directory to pass instead. Only directory listings are read (no file is opened
and no symlink followed), at most :data:`MAX_LOOKED_AT` sub-folders.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

__all__ = ["MARKS", "MAX_LOOKED_AT", "nearby_logs"]

#: Sub-folders of SOURCE looked into at most.
MAX_LOOKED_AT = 200
_STAGE = re.compile(r"^stage_\d+_.+_\d+_.+\Z", re.DOTALL)  # sub-stage names are free text


def _entries(path: Path) -> dict[str, str]:
    """``{name: "dir" | "file" | "other"}`` of ``path`` (symlinks are "other"), {} if unreadable."""
    out: dict[str, str] = {}
    try:
        with os.scandir(path) as it:
            for n, e in enumerate(it):
                if n >= 10_000:
                    break
                try:
                    mode = e.stat(follow_symlinks=False).st_mode
                except OSError:
                    continue
                out[e.name] = (
                    "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"
                )
    except OSError:
        return {}
    return out


def _has(name: str, kind: str) -> Callable[[dict[str, str]], bool]:
    return lambda entries: entries.get(name) == kind


def _stages(entries: dict[str, str]) -> bool:
    return any(kind == "dir" and _STAGE.match(name) for name, kind in entries.items())


def _autoresearch(entries: dict[str, str]) -> bool:
    return any(
        k == "file" and n.lower() in ("results.tsv", "journal.md") for n, k in entries.items()
    )


#: What marks the directory that holds each format's log.
MARKS: dict[str, tuple[str, Callable[[dict[str, str]], bool]]] = {
    "aide": ("journal.json", _has("journal.json", "file")),
    "aiscientist-v2": ("stage_* folders", _stages),
    "codex": ("sessions/", _has("sessions", "dir")),
    "autoresearch": ("results.tsv or journal.md", _autoresearch),
    "fmlbench": ("summary.json", _has("summary.json", "file")),
    "mlebench": ("metadata.json", _has("metadata.json", "file")),
}


def nearby_logs(fmt: str, source: Path, *, above: bool = True) -> tuple[str, list[Path]]:
    """The directories one level above or below ``source`` that hold ``fmt``'s log.

    Parameters
    ----------
    fmt : str
        A format name of :data:`MARKS`.
    source : Path
        The SOURCE that held no log.
    above : bool
        Also look at ``source``'s parent (not for a packed SOURCE: its parent is a temporary
        folder, not the user's).

    Returns
    -------
    mark : str
        What was looked for.
    found : list of Path
        The parent (if it holds the log), then the sub-folders that do, sorted.

    See Also
    --------
    automd_analysis.importers.api.import_source : adds them to ``import.journal_missing``.

    References
    ----------
    docs/importing.md, "Formats" (what SOURCE is for each format).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "0-exp").mkdir()
    >>> _ = (root / "0-exp" / "journal.json").write_text("{}")
    >>> mark, found = nearby_logs("aide", root)
    >>> mark, [p.name for p in found]
    ('journal.json', ['0-exp'])
    >>> [p.name for p in nearby_logs("aide", root / "0-exp" / "node_predictions")[1]]
    ['0-exp']
    """
    mark, holds = MARKS[fmt]
    source = Path(source)
    found: list[Path] = []
    parent = source.parent
    if above and parent != source and holds(_entries(parent)):
        found.append(parent)
    children = sorted(n for n, k in _entries(source).items() if k == "dir")[:MAX_LOOKED_AT]
    found += [source / n for n in children if holds(_entries(source / n))]
    return mark, found
