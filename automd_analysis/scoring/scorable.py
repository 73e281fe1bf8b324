"""Which runs can be scored here, and what their import recorded.

A run is **not scorable here** when the archive holds no prediction file for its task's test set:
no selected ``submission.csv`` and no version with one, and its ``run.json`` says it was written
by ``automd import`` from an agent's own log (``notes``), i.e. the source kept no prediction file
for this test set. It is not an agent failure: the run is published in ``runs.parquet`` with
``status = "not_scorable"``, has no ``scores`` rows, is never counted invalid and never
penalised. A run written by a harness (``automd demo archive``, a lab's own writer) that has no
file is the agent's failure and stays invalid (``file.missing``).

``automd import`` lists the codes of the problems it recorded in ``run.json`` ``notes``
(``... Problems: import.a, import.b (see journal.md).``, docs/importing.md);
:func:`import_problem_codes` reads them back so that the score store (``problems.parquet``,
``effect = "recorded at import"``) and the report's run coverage show them per run.
"""

from __future__ import annotations

import re

from automd_analysis.archive import Run
from automd_analysis.importers.problems import RECORDED

__all__ = [
    "IMPORT_EFFECT",
    "NOT_SCORABLE_CODE",
    "NOT_SCORABLE_EFFECT",
    "holds_predictions",
    "import_origin",
    "import_problem_codes",
    "not_scorable_reason",
]

#: ``problems.parquet`` ``effect`` of a run published without scores, and its code.
NOT_SCORABLE_EFFECT = "run not scorable"
NOT_SCORABLE_CODE = "scoring.no_predictions"
#: ``problems.parquet`` ``effect`` of a problem ``automd import`` recorded in ``run.json``.
IMPORT_EFFECT = "recorded at import"

_IMPORTED = re.compile(r"Imported by automd import [a-z0-9_-]+ ")
_ORIGIN = re.compile(
    r"\AImported by automd import ([a-z0-9_-]{1,40}) from '(.{0,300}?)' \(automd-analysis [^()]{1,40}\);"
)
_PROBLEMS = re.compile(r" Problems: ([a-z0-9_., ]+) \(see journal\.md\)\.\Z")


def import_problem_codes(notes: str | None) -> tuple[str, ...]:
    """The recorded problem codes ``automd import`` listed in ``run.json`` ``notes``, sorted.

    Only the closing ``Problems: <code>, <code> (see journal.md).`` sentence the importer writes
    is read, and only codes of its catalogue are kept, so free text elsewhere in ``notes`` can
    never add a code.

    Examples
    --------
    >>> import_problem_codes("Imported by automd import aide from 'x' (automd-analysis 1.0); "
    ...     "prediction files bound by none; no token counts. Problems: "
    ...     "import.tokens_absent, import.predictions_not_bound (see journal.md).")
    ('import.predictions_not_bound', 'import.tokens_absent')
    >>> import_problem_codes("hand-written notes"), import_problem_codes(None)
    ((), ())
    """
    if not notes:
        return ()
    found = _PROBLEMS.search(notes)
    if found is None:
        return ()
    return tuple(sorted({c for c in found.group(1).split(", ") if c in RECORDED}))


def import_origin(notes: str | None) -> tuple[str | None, str | None]:
    """The format and source name of a run written by ``automd import``, read from the first
    sentence of its ``run.json`` ``notes``; ``(None, None)`` for any other run.

    Display only: the archive wrote this text, so it is shown escaped and never acted on.

    Examples
    --------
    >>> import_origin("Imported by automd import aiscientist-v2 from 'logs/run 7' "
    ...     "(automd-analysis 0.1.0); prediction files bound by none; no token counts.")
    ('aiscientist-v2', 'logs/run 7')
    >>> import_origin("hand-written notes"), import_origin(None)
    ((None, None), (None, None))
    """
    found = _ORIGIN.match(notes or "")
    if found is None:
        return None, None
    return found.group(1), found.group(2)


def holds_predictions(run: Run) -> bool:
    """Whether the archive holds any prediction file of ``run`` (the selected one or a version's,
    including files present but unsafe to open)."""
    if run.submission_path is not None or run.submission_issue is not None:
        return True
    return any(
        v.submission_path is not None or v.submission_issue is not None for v in run.versions
    )


def not_scorable_reason(run: Run) -> dict | None:
    """Why ``run`` cannot be scored here (an error dict for ``problems.parquet``), or ``None``.

    ``None`` for every run that holds a prediction file, and for runs without one that an
    importer did not write (a harness run without a file is invalid, not unscorable).
    """
    if holds_predictions(run) or not _IMPORTED.match(run.notes or ""):
        return None
    return {
        "code": NOT_SCORABLE_CODE,
        "message": "the archive holds no prediction file for this task's test set (imported "
        "from the agent's log without one): not scored, not counted invalid",
        "fix": "to score it, import the run again with its prediction files (--predictions, "
        "docs/importing.md); its steps, times, tokens and code are reported as they are",
    }
