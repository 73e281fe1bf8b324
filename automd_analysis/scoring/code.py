"""Each archived version's code text, published into the score store for the process analyses.

The FML-bench exploration metrics and the opportunity density (``analysis.process``) embed the
code of every version, so the scorer publishes it: ``code.parquet`` names, per version with code,
the sha256 of its text, and ``code_texts.parquet`` holds each distinct text once
(``docs/score_store.md``). The analyses then read the store alone, never the archive.

A version's text is its ``meta.json`` ``code_files`` read in sorted path order through the
archive's safe reader (:meth:`automd_analysis.archive.Run.read_text`: a regular file inside the
run, at most :data:`MAX_CODE_FILE_BYTES`, UTF-8 with undecodable bytes replaced) and joined with
``\\n``; nothing is executed. A file that cannot be read is left out of its version and listed in
``problems.parquet`` with ``effect == "code file skipped"``; the other files and runs are still
read. ``code_files.parquet`` says where each file's text lies in its version's text, so the run
pages can show and diff the files one by one.

A run without any archived version (imported from an agent's log without prediction files) still
carries its search-tree nodes' code: ``automd import`` writes each node's files under
``code/<node>/``, and ``run.json`` ``steps`` name the nodes. Such a run's code is published per
step node, under the node id in the ``version`` column: every file under ``code/<node>/`` (no
symbolic link followed, at most :data:`MAX_NODE_FILES` files, 8 levels) read through the same
reader and limits. Runs with archived versions publish their versions' code only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from automd_analysis.archive import Run
from automd_analysis.archive.safe import walk_files
from automd_analysis.errors import ArchiveError, AutomdError
from automd_analysis.schema import CODE_SKIPPED

__all__ = [
    "CODE_SKIPPED",
    "MAX_CODE_FILE_BYTES",
    "MAX_NODE_FILES",
    "code_tables",
    "node_code_files",
    "version_code",
    "version_files",
]

#: Largest code file read (a larger one is skipped for its version and listed as a problem).
MAX_CODE_FILE_BYTES = 1 << 20
#: Files read per step node of a run without archived versions (``code/<node>/``).
MAX_NODE_FILES = 200


def _check_listed_name(run: Run, rel: str) -> None:
    """Refuse a listed file name that is not printable UTF-8 (``archive.bad_name``)."""
    if not rel.isprintable() or rel != rel.encode("utf-8", "replace").decode("utf-8"):
        raise ArchiveError(
            f"code file name {rel!r} is not printable UTF-8",
            path=run.dir,
            code="archive.bad_name",
            fix="rename the file (letters, digits, '_', '-', '.', '/')",
        )


def _read_files(
    run: Run, name: str, paths, problems: list[dict], listed: bool = False
) -> list[tuple[str, str]]:
    """``(path, text)`` of each readable file of ``paths`` (run-relative; ``listed``: found in
    the run's folders, names checked), in sorted order; unreadable ones append ``{run_id,
    version, file, error}`` to ``problems``."""
    files = []
    for rel in sorted(paths):
        try:
            if listed:
                _check_listed_name(run, rel)
            files.append((rel, run.read_text(rel, max_bytes=MAX_CODE_FILE_BYTES)))
        except AutomdError as exc:
            problems.append({"run_id": run.run_id, "version": name, "file": rel, "error": exc})
    return files


def version_files(run: Run, version, problems: list[dict]) -> list[tuple[str, str]]:
    """``(path, text)`` of each readable code file of one version, in sorted path order.

    Unreadable files append ``{run_id, version, file, error}`` to ``problems``.
    """
    return _read_files(run, str(version.version_id), version.code_files or (), problems)


def node_code_files(run: Run) -> dict[str, list[str]]:
    """``{node id: run-relative paths under code/<node>/}`` of a run without archived versions.

    The nodes are those its ``run.json`` ``steps`` name (in step order; names already checked by
    the reader); empty for a run with versions or without steps. Files are listed, not opened.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> import pathlib, tempfile
    >>> run_dir = pathlib.Path(tempfile.mkdtemp())
    >>> (run_dir / "code" / "n1").mkdir(parents=True)
    >>> _ = (run_dir / "code" / "n1" / "runfile.py").write_text("print(1)")
    >>> steps = (NS(node="n1", version=None), NS(node="n2", version=None), NS(node=None, version=None))
    >>> node_code_files(NS(dir=run_dir, versions=(), steps=steps))
    {'n1': ['code/n1/runfile.py']}
    """
    if run.versions or not run.steps:
        return {}
    nodes = dict.fromkeys(s.node for s in run.steps if s.node is not None)
    found = {n: walk_files(run.dir, f"code/{n}", max_files=MAX_NODE_FILES) for n in nodes}
    return {node: paths for node, paths in found.items() if paths}


def _run_code(run: Run, problems: list[dict]):
    """``(name, files)`` of each version (or step node, for a run without versions) with
    readable code, in name order."""
    named = [(str(v.version_id), v.code_files or (), False) for v in run.versions]
    named += [(node, paths, True) for node, paths in node_code_files(run).items()]
    for name, paths, listed in sorted(named, key=lambda item: item[0]):
        files = _read_files(run, name, paths, problems, listed)
        if files:
            yield name, files


def version_code(run: Run, version, problems: list[dict]) -> tuple[str, int] | None:
    """The code text of one version and its number of files read (``None`` without code).

    Unreadable files append ``{run_id, version, file, error}`` to ``problems``.
    """
    files = version_files(run, version, problems)
    if not files:
        return None
    return "\n".join(text for _, text in files), len(files)


def _layout(files: list[tuple[str, str]]) -> list[dict]:
    """Where each file's text lies in the joined version text: ``file``, ``start``, ``length``
    (characters)."""
    rows, start = [], 0
    for rel, text in files:
        rows.append({"file": rel, "start": start, "length": len(text)})
        start += len(text) + 1  # the joining newline
    return rows


def code_tables(
    runs: Iterable[Run], key, layout: list[dict] | None = None
) -> tuple[list[dict], list[dict], list[dict]]:
    """Rows of ``code`` and ``code_texts`` for ``runs``, and the unreadable files.

    Parameters
    ----------
    runs : iterable of Run
        The published runs, in publication order.
    key : callable
        Run -> its run-key columns (``scoring.publish.run_key``).
    layout : list, optional
        When given, the rows of ``code_files`` (run key, ``version``, ``file``, ``start``,
        ``length``: the file's text is ``text[start:start + length]`` of its version's text) are
        appended to it, in run, version and path order.

    Returns
    -------
    (list, list, list)
        ``code`` rows (run key, ``version``, ``n_files``, ``code_sha256``) in run and version
        order, ``code_texts`` rows (``code_sha256``, ``text``) sorted by hash, and the unreadable
        files (see :func:`version_code`).
    """
    rows: list[dict] = []
    texts: dict[str, str] = {}
    problems: list[dict] = []
    for run in runs:
        for name, files in _run_code(run, problems):
            text = "\n".join(t for _, t in files)
            sha = hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()
            texts.setdefault(sha, text)
            head = key(run) | {"version": name}
            rows.append(head | {"n_files": len(files), "code_sha256": sha})
            if layout is not None:
                layout.extend(head | place for place in _layout(files))
    text_rows = [{"code_sha256": sha, "text": texts[sha]} for sha in sorted(texts)]
    return rows, text_rows, problems
