"""A score store of the old layout, ``scores/<archive name>``, met by the first scoring of an archive
into its own store ``scores/<archive name>-<key>`` (:mod:`automd_analysis.archive.workspace`).

Archives with the same name shared the old store, so what it holds may belong to another archive.
:func:`adopt_legacy_store` takes only what cannot: the content-addressed caches (score entries
keyed by submission and task contents, code embeddings keyed by the text), linked (or copied)
into the new store so nothing is scored twice. Its tables and its other files (masking results)
stay where they are, and the notes it returns say so and how to use them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["CONTENT_CACHES", "adopt_legacy_store"]

#: Folders of a store whose entries are keyed by content alone (safe to share between archives).
CONTENT_CACHES = ("cache", "embeddings")
#: What a store writes itself besides its tables (not reported as left behind).
_STORE_PARTS = frozenset({*CONTENT_CACHES, "generations", "current", "store.json", ".lock"})


def _link_tree(src: Path, dest: Path) -> int:
    """Hard-link (or copy, across file systems) every regular file below ``src`` that ``dest``
    lacks; symlinks and temporaries (``.tmp-*``) are left out. Returns the number taken."""
    taken = 0
    if not src.is_dir() or src.is_symlink():
        return 0
    for folder, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if not (Path(folder) / d).is_symlink()]
        for name in files:
            source = Path(folder) / name
            if name.startswith(".tmp-") or source.is_symlink() or not source.is_file():
                continue
            target = dest / source.relative_to(src)
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, target)
            except OSError:
                shutil.copy2(source, target)
            taken += 1
    return taken


def adopt_legacy_store(legacy: Path, store: Path) -> list[str]:
    """Take the content-addressed caches of the old-layout store ``legacy`` into ``store``.

    Parameters
    ----------
    legacy : Path
        ``scores/<archive name>``, a store of the layout before stores were keyed by archive.
    store : Path
        The archive's own default store, ``scores/<archive name>-<key>``.

    Returns
    -------
    list of str
        Notes for the user: what was taken, what stays in ``legacy`` and how to use it.

    See Also
    --------
    automd_analysis.archive.workspace.open_workspace : finds ``legacy``.

    References
    ----------
    docs/score_store.md, section "Where the store lives".

    Examples
    --------
    >>> import tempfile
    >>> old, new = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp()) / "demo-1a2b3c4d"
    >>> _ = (old / "cache" / "ab").mkdir(parents=True)
    >>> _ = (old / "cache" / "ab" / "ab12.json").write_text("{}")
    >>> _ = (old / "masking.parquet").write_bytes(b"")
    >>> notes = adopt_legacy_store(old, new)
    >>> (new / "cache" / "ab" / "ab12.json").read_text()
    '{}'
    >>> "1 score-cache entries" in notes[0], "masking.parquet" in notes[1]
    (True, True)
    """
    counts = {name: _link_tree(legacy / name, store / name) for name in CONTENT_CACHES}
    notes = [
        f"{legacy} is a score store of the old layout (named after the archive only, so every "
        f"archive of that name shared it); this archive's store is {store}, which took "
        f"{counts['cache']} score-cache entries and {counts['embeddings']} embedding-cache files "
        "from it (they are keyed by content, never by archive)"
    ]
    left = sorted(
        p.name
        for p in legacy.iterdir()
        if p.name not in _STORE_PARTS and not p.is_symlink() and p.is_file()
    )
    notes.append(
        f"{legacy} keeps its tables"
        + (f" and {', '.join(left)}" if left else "")
        + ", which may belong to another archive of that name: pass --scores/--out "
        f"{legacy} to keep using that store"
        + (", or --masking-results with its masking.parquet" if "masking.parquet" in left else "")
        + f"; remove {legacy} when no archive needs it"
    )
    return notes
