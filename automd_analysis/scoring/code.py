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
read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from automd_analysis.archive import Run
from automd_analysis.errors import AutomdError
from automd_analysis.schema import CODE_SKIPPED

__all__ = ["CODE_SKIPPED", "MAX_CODE_FILE_BYTES", "code_tables", "version_code"]

#: Largest code file read (a larger one is skipped for its version and listed as a problem).
MAX_CODE_FILE_BYTES = 1 << 20


def version_code(run: Run, version, problems: list[dict]) -> tuple[str, int] | None:
    """The code text of one version and its number of files read (``None`` without code).

    Unreadable files append ``{run_id, version, file, error}`` to ``problems``.
    """
    parts = []
    for rel in sorted(version.code_files or ()):
        try:
            parts.append(run.read_text(rel, max_bytes=MAX_CODE_FILE_BYTES))
        except AutomdError as exc:
            problems.append(
                {"run_id": run.run_id, "version": str(version.version_id), "file": rel,
                 "error": exc}
            )  # fmt: skip
    if not parts:
        return None
    return "\n".join(parts), len(parts)


def code_tables(runs: Iterable[Run], key) -> tuple[list[dict], list[dict], list[dict]]:
    """Rows of ``code`` and ``code_texts`` for ``runs``, and the unreadable files.

    Parameters
    ----------
    runs : iterable of Run
        The published runs, in publication order.
    key : callable
        Run -> its run-key columns (``scoring.publish.run_key``).

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
            code = version_code(run, version, problems)
            if code is None:
                continue
            text, n_files = code
            sha = hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()
            texts.setdefault(sha, text)
            rows.append(
                key(run) | {"version": str(version.version_id), "n_files": n_files,
                            "code_sha256": sha}
            )  # fmt: skip
    text_rows = [{"code_sha256": sha, "text": texts[sha]} for sha in sorted(texts)]
    return rows, text_rows, problems
