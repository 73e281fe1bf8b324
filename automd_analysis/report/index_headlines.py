"""The findings the report index leads with: a few "At a glance" sentences, each linking to its table.

The sentences are the notebooks' own (:mod:`automd_analysis.report.headlines`), computed again from
the tables the notebooks published (``OUT/tables/<name>.csv``), so the index says what the pages say
and reads nothing but the report. One sentence per source, in report order, each the first finding of
its function (the spread across agents, with its intervals) - plus the first significant or "cannot
separate" statement of the pairwise comparisons - and at most :data:`MAX_HEADLINES` in all. A source
whose tables are missing (a skipped or failed notebook) is left out.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from automd_analysis.report import headlines as h

__all__ = ["MAX_HEADLINES", "IndexHeadline", "index_headlines"]

MAX_HEADLINES = 6


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


def _read(tables: Path, name: str) -> pd.DataFrame | None:
    path = tables / f"{name}.csv"
    if not path.is_file():
        return None
    try:
        return pd.read_csv(path, keep_default_na=True)
    except (OSError, ValueError):
        return None


#: (table linked, tables read, the headline function on them): the first finding of each.
_SOURCES: tuple[tuple[str, tuple[str, ...], Callable[..., h.Findings]], ...] = (
    ("table2_primary_scores", ("table2_primary_scores", "table12_task_scores"),
     lambda t2, t12: h.primary_findings(t2, t12)),
    ("pairwise_comparisons", ("pairwise_comparisons",),
     lambda pw: h.comparison_findings(pw, "score")),
    ("table3_ece", ("table2_primary_scores", "table3_ece"),
     lambda t2, t3: h.calibration_findings(t2, t3)),
    ("table5_external", ("table5_external",), h.shift_findings),
    ("table14_subgroup_gaps", ("table14_subgroup_gaps",), h.subgroup_findings),
    ("table7_llm", ("table7_llm",), h.llm_findings),
)  # fmt: skip


def index_headlines(tables_dir: str | Path) -> list[IndexHeadline]:
    """The index's headline sentences from the published tables in ``tables_dir``.

    Parameters
    ----------
    tables_dir : path
        ``OUT/tables`` of a report.

    Returns
    -------
    list of IndexHeadline
        At most :data:`MAX_HEADLINES`, in report order; empty when no source table is there.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     index_headlines(d)
    []
    """
    tables = Path(tables_dir)
    out: list[IndexHeadline] = []
    for linked, names, compute in _SOURCES:
        frames = [_read(tables, name) for name in names]
        if any(f is None or f.empty for f in frames):
            continue
        try:
            found = compute(*frames)
        except (KeyError, ValueError, TypeError, IndexError):  # a table of an older layout
            continue
        if found:
            out.append(IndexHeadline(found[0].text, linked))
        if len(out) == MAX_HEADLINES:
            break
    return out
