"""What a report notebook publishes with: table and figure export, and what Jupyter displays.

A notebook gets its :class:`Report` from :func:`automd_analysis.app.notebook.open_report`, which
resolves its parameters and loads the score store; this module only turns the notebook's tables
and figures into files and displays.

:meth:`Report.table` exports a table as its declaration says
(:mod:`automd_analysis.analysis.catalog`; CSV + LaTeX + HTML under ``output_dir/tables``) and
returns a :class:`TableView` to display: the paper-style HTML table for readers, and the numbers at :data:`PLAIN_DECIMALS` decimals as its plain
text - the representation nbval compares, so a changed number fails CI. A long table is shown
collapsed (:func:`automd_analysis.report.views.collapsed_table_html`). :meth:`Report.figure` saves a
figure and returns a :class:`~automd_analysis.report.views.FigureView`: the saved PNG at the page's
width with its caption underneath.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from automd_analysis.analysis import catalog
from automd_analysis.analysis.catalog.declaration import TableSpec
from automd_analysis.analysis.primary import run_overview
from automd_analysis.analysis.store import ScoreStore, task_units
from automd_analysis.errors import AutomdError
from automd_analysis.precision import comparable_scalar
from automd_analysis.report import figures as _figures
from automd_analysis.report import tables as _tables
from automd_analysis.report.disclosure import DisclosurePolicy
from automd_analysis.report.headlines import Findings
from automd_analysis.report.index_headlines import record_findings
from automd_analysis.report.presentation import is_long
from automd_analysis.report.provenance import (
    SYNTHETIC_FOOTNOTE,
    mark_synthetic_text,
    synthetic_tasks,
    task_label,
)
from automd_analysis.report.views import (
    Collapsed,
    FigureView,
    Note,
    collapsed_table_html,
    table_html,
)

__all__ = [
    "PLAIN_DECIMALS",
    "MaskingResults",
    "Report",
    "TableView",
    "table_spec",
]

#: Decimals of the plain-text representation of displayed tables (what nbval compares): fine
#: enough that any real change of a number shows, coarse enough to ignore floating-point noise.
PLAIN_DECIMALS = 6


def plain_text(frame: pd.DataFrame, decimals: int = PLAIN_DECIMALS) -> str:
    """Every row and column of ``frame`` as text, floats with ``decimals`` decimals.

    ``-0.000000`` is written as ``0.000000`` and NaN as ``NaN``, so the text depends only on the
    rounded values.
    """

    def fmt(value: float) -> str:
        if np.isnan(value):
            return "NaN"
        text = f"{round(comparable_scalar(value), decimals):.{decimals}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text

    if frame.empty:
        return f"(no rows) columns: {', '.join(map(str, frame.columns))}"
    return frame.to_string(index=False, float_format=fmt, max_rows=None, max_cols=None)


def without_caption(html_table: str, caption: str) -> str:
    """The HTML of :func:`automd_analysis.report.tables.render_html` without its caption: the
    same table rendered with ``caption=""`` (pandas' Styler writes the caption as one
    ``<caption>`` line after the ``<table>`` tag)."""
    if not caption:
        return html_table
    line = f"  <caption>{html.escape(caption)}</caption>\n"
    start = html_table.find("<table id=")
    end = html_table.find(">\n", start) + 2
    if start < 0 or not html_table.startswith(line, end):
        raise ValueError("the table has no caption line to remove")
    return html_table[:end] + html_table[end + len(line) :]


def table_spec(name: str) -> TableSpec | None:
    """The declared display spec of a table (:mod:`automd_analysis.analysis.catalog`), or ``None``
    (no declaration, or a spec built from the frame: see
    :meth:`~automd_analysis.analysis.catalog.declaration.Table.display`)."""
    declared = catalog.table(name)
    if declared is None or callable(declared.spec):
        return None
    return declared.spec


@dataclass(frozen=True)
class TableView:
    """A displayed table: paper-style HTML for readers, exact-enough numbers as plain text.

    Attributes
    ----------
    name : str
        Export name (file stem under ``tables/``).
    frame : DataFrame
        The analysis table (numbers), as written to the CSV.
    html : str
        The formatted table (``mean ± SD``, bold best, daggers), escaped, as in ``<name>.html``.
    paths : dict
        Written files (``csv``, ``tex``, ``html``).
    page_html : str
        What the report page shows: ``html``, or for a long table the caption with the table
        collapsed behind it (:func:`~automd_analysis.report.views.collapsed_table_html`).
    """

    name: str
    frame: pd.DataFrame
    html: str
    paths: Mapping[str, Path]
    page_html: str = ""

    def _repr_html_(self) -> str:
        return self.page_html or self.html

    def __repr__(self) -> str:
        return f"{self.name}\n{plain_text(self.frame)}"


@dataclass(frozen=True)
class MaskingResults:
    """Masking-test results as a notebook sees them: the table (``None`` when absent) and where
    they were looked for. Jupyter shows a one-paragraph note saying which."""

    frame: pd.DataFrame | None
    path: Path

    def _repr_markdown_(self) -> str:
        if self.frame is None:
            return (
                f"**No masking-test results** (no `{self.path.name}` next to the score store), so "
                "the real-time rule was not checked for this archive. The toolkit never executes "
                "archive code: it re-runs only archives built by `automd demo archive` "
                "(`automd masking run ARCHIVE`; `automd regenerate` does it for them). For any "
                "other archive, run the masking test where the agents' code may run and pass its "
                "results (CSV or Parquet with `run_id, status, flagged, fraction_all_rows, "
                "fraction_last_rows`) as the `masking_results` parameter."
            )
        n = len(self.frame)
        return f"Masking-test results: `{self.path.name}`, {n} run{'s' if n != 1 else ''}."

    def __repr__(self) -> str:
        return self._repr_markdown_()


class MarkedFindings(Findings):
    """Findings whose synthetic task names carry ``†``; Jupyter shows the footnote under them."""

    marked = False

    def _repr_markdown_(self) -> str:
        text = super()._repr_markdown_()
        return f"{text}\n\n{SYNTHETIC_FOOTNOTE}" if self and self.marked else text


@dataclass(frozen=True)
class SettingsCheck:
    """Requested vs stored scoring settings (:meth:`Report.check_settings`)."""

    wanted: dict
    stored: dict | None

    @property
    def differences(self) -> dict[str, tuple[object, object]]:
        """Setting -> (requested, stored) for every setting that differs or is not recorded."""
        stored = self.stored or {}
        return {k: (v, stored.get(k)) for k, v in self.wanted.items() if stored.get(k) != v}

    def __repr__(self) -> str:
        return self._repr_markdown_().replace("**", "").replace("`", "")

    def _repr_markdown_(self) -> str:
        if self.stored is None:
            return (
                "**Note:** the score store does not record the settings it was scored with "
                "(written by an older version); re-score the archive with `automd score`."
            )
        if not self.differences:
            return "Scoring settings: " + ", ".join(f"{k} = {v}" for k, v in self.wanted.items())
        parts = [
            f"`{k}` = {want} was requested, but the score store was computed with {have}"
            for k, (want, have) in self.differences.items()
        ]
        return (
            "**Note:** "
            + "; ".join(parts)
            + ". The numbers below are the stored ones; these settings are fixed when the "
            "archive is scored."
        )


@dataclass(frozen=True)
class Report:
    """A notebook's view of one scored archive: what it publishes and how.

    Create it with :func:`automd_analysis.app.notebook.open_report` (which resolves the folders
    and loads the store); the tests build one around an in-memory store.

    Attributes
    ----------
    archive : Path
        The runs archive.
    archive_name : str
        Its name (``archive.yaml`` ``name``).
    scores_dir, output_dir : Path
        The score store read, and the report directory written (``tables/``, ``figures/``).
    manifests_dir : Path or None
        Manifest directory (``None``: the default of :func:`automd_analysis.tasks.manifest_dir`).
    data_root : Path or None
        Data root (only recorded; notebooks read the score store, never the hidden labels).
    seed : int
        Seed for every random step of the notebook (jitter in figures).
    store : ScoreStore
        The loaded, checked score store.
    disclosure : DisclosurePolicy
        Small-cell suppression applied to every table and figure this report publishes
        (:mod:`automd_analysis.report.disclosure`).
    """

    archive: Path
    archive_name: str
    scores_dir: Path
    output_dir: Path
    manifests_dir: Path | None
    data_root: Path | None
    seed: int
    store: ScoreStore
    disclosure: DisclosurePolicy = DisclosurePolicy()

    def table(
        self,
        frame: pd.DataFrame,
        name: str,
        *,
        caption: str | None = None,
        spec: TableSpec | None = None,
    ) -> TableView:
        """Export ``frame`` as ``tables/<name>.{csv,tex,html}`` and return it for display.

        A table declared in :mod:`automd_analysis.analysis.catalog` is checked against its
        declaration (columns, order, types) and rendered with its display spec (``spec``
        overrides it): bootstrap intervals of its interval columns in brackets after their
        values with a caption note, the CSV unchanged (see
        :func:`~automd_analysis.report.tables.export_table`). Small counts of restricted tasks
        are suppressed first (:attr:`disclosure`); the returned view holds the published frame.
        Columns that repeat one value on every row are said once in the caption.
        """
        declared = catalog.table(name)
        frame, spec, intervals = _tables.published(frame, name, declared, spec)
        frame = self.disclosure.apply(frame, name)
        text, bold, caption = _tables.rendered(
            frame, spec, caption, intervals, declared, synthetic=self.synthetic
        )
        paths = _tables.write_rendered(frame, text, bold, name, self.output_dir, caption=caption)
        html = paths["html"].read_text(encoding="utf-8")  # rendered once, for the file
        bare = without_caption(html, caption)
        if is_long(len(text)):
            page = collapsed_table_html(bare, caption, len(text), name)
        else:
            page = table_html(bare, caption, name)
        return TableView(name=name, frame=frame, html=html, paths=paths, page_html=page)

    def figure(self, fig, name: str, caption: str | None = None) -> FigureView:
        """Save ``fig`` as ``figures/<name>.png`` and ``.svg`` and return it for display.

        Jupyter and the report page show the saved PNG at the page's width
        (:func:`automd_analysis.report.views.display_width`) with its caption underneath
        (Markdown `` `code` ``, ``*emphasis*`` and ``**strong**``): ``caption``, or the one its
        declaration in :mod:`automd_analysis.analysis.catalog` gives (``""`` for a figure the
        catalog does not know).
        """
        if caption is None:
            declared = catalog.figure(name)
            caption = declared.caption_for(name) if declared is not None else ""
        caption, marked = mark_synthetic_text(caption, self.synthetic)
        if marked:
            caption = f"{caption} {SYNTHETIC_FOOTNOTE}"
        paths = _figures.save_figure(fig, name, self.output_dir)
        width, _ = fig.get_size_inches()
        return FigureView(
            name=name,
            caption=caption,
            png=paths["png"].read_bytes(),
            width_in=float(width),
            paths=paths,
            figure=fig,
        )

    def findings(self, findings: Findings, table: str | None = None) -> Findings:
        """The headline findings as this report shows them: every synthetic task's name marked
        ``†`` (:func:`~automd_analysis.report.provenance.mark_synthetic_text`), with the
        footnote under the list when a name was marked; the numbers unchanged.

        With ``table``, the findings as computed (keys and unmarked sentences) are also written
        to ``findings/<table>.json``: the report index quotes them from there
        (:func:`~automd_analysis.report.index_headlines.index_headlines`), so each sentence is
        computed once, here.

        Parameters
        ----------
        findings : Findings
            From :mod:`automd_analysis.report.headlines`.
        table : str, optional
            The published table the findings summarise (their index entry links to it).

        Returns
        -------
        Findings
        """
        if table is not None:
            record_findings(findings, self.output_dir, table)
        out = MarkedFindings()
        for finding in findings:
            text, marked = mark_synthetic_text(finding.text, self.synthetic)
            out.append(replace(finding, text=text))
            out.marked = out.marked or marked
        return out

    @staticmethod
    def unless_no_baseline(what: str, compute, *args, **kwargs) -> tuple[object, Note | None]:
        """``(compute(*args, **kwargs), None)``, or ``(None, note)`` when ``compute`` needs the
        simple baseline's runs and the store has none for a task (error code
        ``store.no_baseline``): the note says that ``what`` is skipped and why. Other errors
        propagate.

        Examples
        --------
        >>> def decomposition():
        ...     raise AutomdError("no reference", code="store.no_baseline",
        ...                       details={"tasks": ["t1"]}, fix="add baseline runs")
        >>> value, note = Report.unless_no_baseline("Figure 2a", decomposition)
        >>> value is None, note
        (True, Figure 2a is skipped: the score store has no simple-baseline runs for t1, so its \
reference is undefined. To include it: add baseline runs.)
        >>> Report.unless_no_baseline("Figure 2a", lambda: 3)
        (3, None)
        """
        try:
            return compute(*args, **kwargs), None
        except AutomdError as error:
            if getattr(error, "code", None) != "store.no_baseline":
                raise
            tasks = (getattr(error, "details", None) or {}).get("tasks") or []
            where = f" for {', '.join(f'`{t}`' for t in tasks)}" if tasks else ""
            fix = getattr(error, "fix", "") or ""
            return None, Note(
                f"**{what} is skipped**: the score store has no simple-baseline runs{where}, "
                f"so its reference is undefined. To include it: {fix}."
            )

    @staticmethod
    def collapsed(summary: str, views) -> Collapsed:
        """Several figures behind one closed ``<details>`` line (``summary`` always visible)."""
        return Collapsed(summary=summary, items=tuple(views))

    def reliability_figures(self, reliability: pd.DataFrame) -> list[FigureView]:
        """One reliability-diagram figure per task, saved as ``figures/reliability_<task>`` and
        titled with the task id; tasks in sorted order.

        Parameters
        ----------
        reliability : DataFrame
            :func:`automd_analysis.analysis.calibration_practices.reliability_table` (a ``task`` column plus
            the :func:`~automd_analysis.analysis.calibration_practices.reliability_bins` columns), drawn
            with :func:`automd_analysis.report.figures.reliability_figure`.
        """
        out = []
        reliability = self.disclosure.apply(reliability, "reliability_bins")
        for task, bins in reliability.groupby("task", sort=True):
            fig = _figures.reliability_figure(bins.drop(columns="task").reset_index(drop=True))
            fig.suptitle(f"Reliability: {task_label(task, self.synthetic)}")
            out.append(self.figure(fig, f"reliability_{task}"))
        return out

    def check_settings(self, **wanted) -> SettingsCheck:
        """Compare scoring settings a notebook asks for with those the score store was built with.

        Numbers such as ECE are computed when the archive is scored; a notebook parameter cannot
        change them afterwards. The result (shown by Jupyter) says plainly when a requested value
        differs from the stored one - or when the store does not record its settings.

        Parameters
        ----------
        **wanted
            Setting name -> requested value (names of ``store.json`` ``settings``, e.g.
            ``ece_n_bins``).
        """
        stored = (self.store.meta or {}).get("settings")
        return SettingsCheck(dict(wanted), None if stored is None else dict(stored))

    def overview(self) -> TableView:
        """Runs and valid runs per experiment and agent (selected submissions,
        :func:`~automd_analysis.analysis.primary.run_overview`); exported as ``overview_runs``."""
        spec = table_spec("overview_runs")
        caption = f"Archive {self.archive_name}: {spec.caption}"
        return self.table(run_overview(self.store), "overview_runs", caption=caption)

    @property
    def synthetic(self) -> list[str]:
        """The synthetic tasks of the store (``store.tasks.synthetic``), marked on the pages."""
        return synthetic_tasks(self.store)

    def task_units(self) -> dict[str, str]:
        """Task id -> manifest ``sizes.unit`` for the tasks in the store (for the invalid-run
        categories), from the store's ``tasks`` table; empty for a store without one (tasks then
        default to patients)."""
        return task_units(self.store)
