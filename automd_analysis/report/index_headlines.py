"""The findings the report index leads with: a few "At a glance" sentences, each linking to its table.

The sentences are the notebooks' own (:mod:`automd_analysis.report.headlines`), computed once: a
notebook that shows findings through :meth:`Report.findings(..., table=NAME)
<automd_analysis.report.notebook.Report.findings>` records them (keys and sentences) in
``OUT/findings/NAME.json``, and the index quotes them from there, so it says what the pages say and
reads nothing but the report. One sentence per source, in report order, each the first finding of
its notebook's list (the spread across agents, with its intervals) - plus the first significant or
"cannot separate" statement of the primary-score comparisons - and at most :data:`MAX_HEADLINES` in
all. A source whose findings are missing (a skipped or failed notebook) is left out.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path

from automd_analysis._atomic import write_text_atomic
from automd_analysis.report.headlines import Findings

__all__ = ["FINDINGS_DIR", "MAX_HEADLINES", "IndexHeadline", "index_headlines", "record_findings"]

MAX_HEADLINES = 6
#: Where a report keeps the findings its notebooks recorded (``OUT/findings/<table>.json``).
FINDINGS_DIR = "findings"


@dataclass(frozen=True)
class IndexHeadline:
    """One sentence of the index (Markdown as the notebooks write it) and the table it summarises."""

    text: str
    table: str

    def html(self, page: str) -> str:
        """The sentence as HTML, followed by a link to its table on ``page`` (``html/<nb>.html``)."""
        return f'{_inline_markdown(self.text)} <a href="{page}#table-{self.table}">(table)</a>'


def _inline_markdown(text: str) -> str:
    """Escaped text with the notebooks' inline Markdown: `` `code` ``, ``**strong**``, ``*em*``, and
    ``\\_`` escapes."""
    out = html.escape(text.replace("\\_", "_").replace("\\*", "\x00"), quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"\*([^*]+)\*", r"<em>\1</em>", out)
    return out.replace("\x00", "*")


def record_findings(findings: Findings, out_dir: str | Path, table: str) -> Path:
    """Write ``findings`` (keys and sentences, as computed) to ``out_dir/findings/<table>.json``."""
    path = Path(out_dir) / FINDINGS_DIR / f"{table}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"key": f.key, "text": f.text} for f in findings]
    write_text_atomic(path, json.dumps(rows, ensure_ascii=False, indent=1) + "\n")
    return path


def _recorded(report: Path, table: str) -> list[dict]:
    """The findings recorded for ``table``; empty when missing or unreadable."""
    try:
        rows = json.loads((report / FINDINGS_DIR / f"{table}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(rows, list):
        return []
    return [r for r in rows if isinstance(r, dict) and isinstance(r.get("text"), str)]


def _comparison(key: str) -> bool:
    return key.startswith(("diff_score_", "no_separation_score", "no_comparisons_score"))


#: (table linked, findings recorded under, which of them): the first finding of each, or the
#: first primary-score comparison.
_SOURCES: tuple[tuple[str, str, bool], ...] = (
    ("table2_primary_scores", "table2_primary_scores", False),
    ("pairwise_comparisons", "table2_primary_scores", True),
    ("table3_ece", "table3_ece", False),
    ("table5_external", "table5_external", False),
    ("table14_subgroup_gaps", "table14_subgroup_gaps", False),
    ("table7_llm", "table7_llm", False),
)


def index_headlines(report_dir: str | Path) -> list[IndexHeadline]:
    """The index's headline sentences, as the notebooks of the report in ``report_dir`` recorded them.

    Parameters
    ----------
    report_dir : path
        A report folder (``OUT``); its notebooks recorded their findings in ``OUT/findings/``
        (:func:`record_findings`).

    Returns
    -------
    list of IndexHeadline
        At most :data:`MAX_HEADLINES`, in report order; empty when nothing was recorded.

    Examples
    --------
    >>> import tempfile
    >>> from automd_analysis.report.headlines import Finding
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = record_findings(Findings([Finding("llm_spread", "Sonnet leads.")]), d, "table7_llm")
    ...     [h.text for h in index_headlines(d)]
    ['Sonnet leads.']
    """
    report = Path(report_dir)
    out: list[IndexHeadline] = []
    for linked, recorded, comparison in _SOURCES:
        rows = [
            r for r in _recorded(report, recorded) if _comparison(str(r.get("key"))) == comparison
        ]
        if rows:
            out.append(IndexHeadline(rows[0]["text"], linked))
        if len(out) == MAX_HEADLINES:
            break
    return out
