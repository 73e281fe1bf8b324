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
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from automd_analysis.archive import Run
from automd_analysis.errors import AutomdError
from automd_analysis.schema import CODE_SKIPPED

__all__ = ["CODE_SKIPPED", "MAX_CODE_FILE_BYTES", "code_tables", "version_code", "version_files"]

#: Largest code file read (a larger one is skipped for its version and listed as a problem).
MAX_CODE_FILE_BYTES = 1 << 20


def version_files(run: Run, version, problems: list[dict]) -> list[tuple[str, str]]:
    """``(path, text)`` of each readable code file of one version, in sorted path order.

    Unreadable files append ``{run_id, version, file, error}`` to ``problems``.
    """
    files = []
    for rel in sorted(version.code_files or ()):
        try:
            files.append((rel, run.read_text(rel, max_bytes=MAX_CODE_FILE_BYTES)))
        except AutomdError as exc:
            problems.append(
                {"run_id": run.run_id, "version": str(version.version_id), "file": rel,
                 "error": exc}
            )  # fmt: skip
    return files


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
        for version in sorted(run.versions, key=lambda v: str(v.version_id)):
            files = version_files(run, version, problems)
            if not files:
                continue
            text = "\n".join(t for _, t in files)
            sha = hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()
            texts.setdefault(sha, text)
            head = key(run) | {"version": str(version.version_id)}
            rows.append(head | {"n_files": len(files), "code_sha256": sha})
            if layout is not None:
                layout.extend(head | place for place in _layout(files))
    text_rows = [{"code_sha256": sha, "text": texts[sha]} for sha in sorted(texts)]
    return rows, text_rows, problems
