"""Where everything of one analysis lives: archive, data, manifests, score store, annotations, report.

A :class:`Workspace` is resolved once (:func:`open_workspace`) and then handed around, so that every
entry point - the command line, ``automd regenerate`` (:mod:`automd_analysis.app.pipeline`), the
notebooks (:func:`automd_analysis.app.notebook.open_report`) and the tests - finds the same
folders by the same rules:

- a **relative path** is taken from the workspace's ``root``, the project directory (default: the
  repository checkout that holds ``data_manifests/`` and ``notebooks/``). The command line turns
  the paths you type into absolute ones first (relative to your working directory, as every shell
  command does); a notebook's parameters have no working directory to speak of and are
  root-relative;
- data: the given directory, else ``$AUTOMD_DATA``, else ``<root>/data``;
- manifests: the given directory, else ``$AUTOMD_MANIFESTS``, else ``<root>/data_manifests``;
- score store: the given directory, else ``<root>/scores/<archive name>-<key>`` (the name in
  ``archive.yaml``, read only for this default, and :func:`store_key`: 8 hex digits of the
  SHA-256 of the archive's resolved path), so that two archives with the same name never share
  a store, and one archive finds its store again on every run. A store of the old layout,
  ``<root>/scores/<archive name>`` (from before the key), is not used by default: it is named in
  :attr:`Workspace.legacy_scores`, for the commands to report and to take its caches from;
- report: the given directory, else ``<root>/reports``; a notebook run by hand writes to
  ``<root>/build/notebooks/<notebook>`` (:meth:`Workspace.hand_run_dir`);
- embedding cache: ``<score store>/embeddings``; annotations: only when given.

Nothing is created here, and only the score stores are looked at (whether the archive's own store
and an old-layout one exist); the stage that reads a folder reports a missing one with its own
error.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from automd_analysis.docstrings import docs_reference, fill_doc
from automd_analysis.tasks import REPO_ROOT, data_root, manifest_dir

__all__ = [
    "HAND_RUN_DIR",
    "Workspace",
    "default_store",
    "is_store",
    "open_workspace",
    "resolve_path",
    "store_key",
]

#: Where a notebook run by hand (no ``output_dir``) writes, relative to the root.
HAND_RUN_DIR = "build/notebooks"


def resolve_path(path: str | Path | None, root: str | Path | None = None) -> Path | None:
    """``None`` stays ``None``; ``~`` is expanded; an absolute path is kept; a relative one is taken
    from ``root`` (default :data:`~automd_analysis.tasks.REPO_ROOT`, the checkout).

    Examples
    --------
    >>> resolve_path("scores/demo", "/project")
    PosixPath('/project/scores/demo')
    >>> resolve_path("/tmp/x", "/project"), resolve_path(None)
    (PosixPath('/tmp/x'), None)
    """
    if path is None:
        return None
    p = Path(path).expanduser()
    return p if p.is_absolute() else Path(REPO_ROOT if root is None else root) / p


@fill_doc(references=docs_reference("score_store.md", "Where the store lives"))
def store_key(archive: str | Path) -> str:
    """The 8 hex digits that key an archive's default score store.

    Parameters
    ----------
    archive : str or Path
        The archive directory (it need not exist).

    Returns
    -------
    str
        ``sha256(str(Path(archive).resolve()))[:8]``: the same archive gives the same key on
        every run and from every working directory; another path (two archives of one name, a
        moved copy) gives another key.

    See Also
    --------
    default_store

    {references}

    Examples
    --------
    >>> store_key("/project/runs/demo") == store_key("/project/runs/../runs/demo")
    True
    >>> store_key("/project/runs/demo") != store_key("/elsewhere/runs/demo")
    True
    >>> len(store_key("/project/runs/demo"))
    8
    """
    path = str(Path(archive).expanduser().resolve())
    return hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:8]


def default_store(root: str | Path, archive: str | Path, name: str) -> Path:
    """``<root>/scores/<name>-<store_key(archive)>``: the default score store of an archive.

    Examples
    --------
    >>> p = default_store("/project", "/project/runs/demo", "demo")
    >>> p.parent, p.name == "demo-" + store_key("/project/runs/demo")
    (PosixPath('/project/scores'), True)
    """
    return Path(root) / "scores" / f"{name}-{store_key(archive)}"


def is_store(path: Path) -> bool:
    """Whether ``path`` holds a score store (its ``store.json`` or its score cache)."""
    return (path / "store.json").exists() or (path / "cache").is_dir()


@dataclass(frozen=True)
class Workspace:
    """The resolved folders of one analysis (build it with :func:`open_workspace`).

    Attributes
    ----------
    root : Path
        The project directory relative paths are taken from.
    archive : Path or None
        The runs archive.
    archive_name : str or None
        Its ``archive.yaml`` name, when it was needed (the default score store) or given.
    data, manifests : Path
        Data root and manifest directory.
    scores : Path or None
        The score store (``None`` without an archive and without an explicit store).
    annotations : Path or None
        Output directory of ``automd annotate``, when given.
    out : Path
        The report directory.
    legacy_scores : Path or None
        ``<root>/scores/<archive name>``, the default store of the layout before stores were
        keyed by the archive, when it holds a store and ``scores`` is the archive's default
        store and holds none yet (``automd score`` takes its caches and says so).
    """

    root: Path
    archive: Path | None
    archive_name: str | None
    data: Path
    manifests: Path
    scores: Path | None
    annotations: Path | None
    out: Path
    legacy_scores: Path | None = None

    def resolve(self, path: str | Path | None) -> Path | None:
        """A path given later (a notebook parameter, an option) by the workspace's rule."""
        return resolve_path(path, self.root)

    @property
    def embeddings(self) -> Path | None:
        """The default embedding cache: ``<scores>/embeddings``."""
        return None if self.scores is None else self.scores / "embeddings"

    def hand_run_dir(self, notebook: str) -> Path:
        """Where notebook ``notebook`` writes its tables and figures when run by hand."""
        return self.root / HAND_RUN_DIR / notebook


def open_workspace(
    archive: str | Path | None = None,
    *,
    data: str | Path | None = None,
    manifests: str | Path | None = None,
    scores: str | Path | None = None,
    annotations: str | Path | None = None,
    out: str | Path | None = None,
    root: str | Path | None = None,
    archive_name: str | None = None,
) -> Workspace:
    """Resolve every folder of an analysis once, by the rules of the module docstring.

    Parameters
    ----------
    archive, data, manifests, scores, annotations, out : path, optional
        What the user gave (``None``: the default).
    root : path, optional
        The project directory (default: the repository checkout).
    archive_name : str, optional
        The archive's name, if already known (spares reading ``archive.yaml``).

    Returns
    -------
    Workspace

    Raises
    ------
    ArchiveError
        ``scores`` is not given and the archive's ``archive.yaml`` is missing or invalid (its
        name names the default store).

    Examples
    --------
    >>> ws = open_workspace("runs/demo", root="/project", archive_name="demo")
    >>> ws.archive, ws.out
    (PosixPath('/project/runs/demo'), PosixPath('/project/reports'))
    >>> ws.scores == Path("/project/scores") / f"demo-{store_key('/project/runs/demo')}"
    True
    >>> ws.embeddings == ws.scores / "embeddings"
    True
    """
    base = Path(root) if root is not None else REPO_ROOT
    archive_path = resolve_path(archive, base)
    store = resolve_path(scores, base)
    if store is None and archive_path is not None:
        if archive_name is None:
            from automd_analysis.archive.reader import open_archive

            archive_name = open_archive(archive_path).meta.name
        store = default_store(base, archive_path, archive_name)
    legacy = None
    if archive_path is not None and archive_name is not None and store is not None:
        old = base / "scores" / archive_name
        if store == default_store(base, archive_path, archive_name) and not is_store(store):
            legacy = old if is_store(old) else None
    return Workspace(
        root=base,
        archive=archive_path,
        archive_name=archive_name,
        data=resolve_path(data_root(resolve_path(data, base), base), base),
        manifests=resolve_path(manifest_dir(resolve_path(manifests, base), base), base),
        scores=store,
        annotations=resolve_path(annotations, base),
        out=resolve_path(out, base) or base / "reports",
        legacy_scores=legacy,
    )
