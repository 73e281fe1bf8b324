"""Paper-style tables: mean +- SD strings, bold best values, daggers, CSV / LaTeX / HTML export.

The analyses (:mod:`automd_analysis.analysis`) return tidy numeric DataFrames; this module turns
them into what a reader sees and what a machine checks:

- :func:`export_table` writes ``<out_dir>/tables/<name>.csv`` (the numbers, lossless, stable column
  names), ``.tex`` and ``.html`` (formatted: ``mean +- SD``, best value per column or row in bold,
  ``§`` for two valid runs and ``‡`` for one, where the paper's Tables 12 and 13 write ``†`` and
  ``‡``: on the report's pages ``†`` marks a synthetic task). Same input =>
  byte-identical files: rows are sorted, floats are written with a fixed rule, nothing depends on
  time, and files are replaced atomically.

The report notebooks compute each table with an analysis function and publish it with
:meth:`automd_analysis.report.notebook.Report.table`, which renders it as its declaration
(:mod:`automd_analysis.analysis.catalog`) says and writes it like :func:`export_table`: that is the
one path to every exported table (``docs/tables.md``). Bootstrap intervals of the declared
columns are shown in brackets after their values (``0.350 ± 0.063 [0.278, 0.424]``) with a
sentence in the caption; the CSV holds them as numbers like every other column.

Every string that comes from an archive (agent, LLM, task, group names, reason codes) is escaped:
HTML with :func:`html.escape`, LaTeX with :func:`escape_latex`.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from automd_analysis._atomic import write_text_atomic
from automd_analysis.analysis import catalog
from automd_analysis.analysis.catalog.declaration import FEW_VALID_MARKS, Stat, Table, TableSpec
from automd_analysis.docstrings import EFRON_TIBSHIRANI_1993, fill_doc
from automd_analysis.precision import comparable, comparable_scalar
from automd_analysis.report._files import RAISES_NOT_A_STEM, check_stem, output_paths

__all__ = [
    "DAGGERS",
    "BEST_NOTE",
    "INTERVAL_NOTE",
    "NUMBER_CLASS",
    "best_mask",
    "csv_text",
    "dagger",
    "display_frame",
    "escape_latex",
    "export_table",
    "format_interval",
    "format_mean_sd",
    "format_number",
    "number_cell",
    "published",
    "render_html",
    "render_latex",
    "rendered",
    "to_styler",
    "write_rendered",
]

#: The ``df`` input of the functions that render an analysis table.
_ANALYSIS_TABLE = """
df : DataFrame
    The analysis table.
"""

#: Marks for reduced numbers of valid runs (paper Tables 12 and 13; ``§`` where the paper writes
#: ``†``, which marks synthetic tasks on the report's pages).
DAGGERS: Mapping[int, str] = FEW_VALID_MARKS
MISSING = "\N{EN DASH}"
PLUS_MINUS = "\N{PLUS-MINUS SIGN}"
#: Sentence appended to the caption of a table that shows intervals.
INTERVAL_NOTE = (
    "Brackets: 95% two-stage bootstrap interval (the runs of each agent redrawn within each task, "
    "then the test patients of each drawn run; the tasks are held fixed)."
)
#: Sentence appended to the caption of a table with best marks (``<X>_best`` columns).
BEST_NOTE = (
    "Bold: the best value of the column (of the row) and every value not distinguishable from "
    "it: the 95% interval of its paired bootstrap difference from the best contains 0."
)


# --------------------------------------------------------------------------------------------------
# Cell formatting


def _is_missing(x) -> bool:
    return x is None or (isinstance(x, float | np.floating) and math.isnan(x)) or x is pd.NA


def format_number(x, decimals: int = 3) -> str:
    """Fixed-point text of a number; ``–`` for a missing value; never ``-0.000``."""
    if _is_missing(x):
        return MISSING
    value = round(comparable_scalar(x), decimals)
    if value == 0:
        value = 0.0
    return f"{value:.{decimals}f}"


def dagger(n_valid) -> str:
    """``§`` for two valid runs, ``‡`` for one, else ``""`` (paper Tables 12 and 13, where
    ``†`` stands for two; :data:`DAGGERS`)."""
    if _is_missing(n_valid):
        return ""
    return DAGGERS.get(int(n_valid), "")


def format_mean_sd(mean, sd=None, decimals: int = 3, n_valid=None) -> str:
    """``"0.517 ± 0.012"``; only the mean when ``sd`` is missing; ``–`` when the mean is missing.

    A dagger (:func:`dagger`) is appended when ``n_valid`` is 1 or 2.
    """
    if _is_missing(mean):
        return MISSING
    text = format_number(mean, decimals)
    if not _is_missing(sd):
        text += f" {PLUS_MINUS} {format_number(sd, decimals)}"
    return text + dagger(n_valid)


def best_mask(
    values: pd.DataFrame,
    directions: Mapping[str, str] | str,
    *,
    axis: str = "columns",
    exclude: Sequence[bool] | None = None,
    decimals: int | None = None,
) -> pd.DataFrame:
    """Where the best value of each column (or row) is.

    Parameters
    ----------
    values : DataFrame of numbers
    directions : mapping column -> ``"max"`` / ``"min"``, or one direction for every column
        Columns without a direction are never marked.
    axis : ``"columns"`` (best per column) or ``"rows"`` (best per row; ``directions`` must then be
        a single string)
    exclude : sequence of bool, optional
        Rows that never count as best (e.g. the simple baseline); with ``axis="rows"`` it applies
        to columns instead.
    decimals : int, optional
        Compare values rounded to the displayed precision, so that tied *displayed* values are
        all marked.

    Returns
    -------
    DataFrame of bool, same shape; ties are all ``True``; NaN is never best.
    """
    numeric = values.apply(pd.to_numeric, errors="coerce").astype(float)
    numeric = comparable(numeric)
    if decimals is not None:
        numeric = numeric.round(decimals)
    if axis == "rows":
        if not isinstance(directions, str):
            raise ValueError("axis='rows' needs a single direction string")
        transposed = best_mask(numeric.T, directions, exclude=exclude)
        return transposed.T
    if axis != "columns":
        raise ValueError(f"axis must be 'columns' or 'rows', got {axis!r}")
    skip = np.zeros(len(numeric), dtype=bool) if exclude is None else np.asarray(exclude, bool)
    mask = pd.DataFrame(False, index=values.index, columns=values.columns)
    for column in numeric.columns:
        direction = directions if isinstance(directions, str) else directions.get(column)
        if direction is None:
            continue
        if direction not in ("max", "min"):
            raise ValueError(f"direction must be 'max' or 'min', got {direction!r}")
        col = numeric[column].to_numpy()
        usable = ~skip & np.isfinite(col)
        if not usable.any():
            continue
        best = col[usable].max() if direction == "max" else col[usable].min()
        mask[column] = usable & (col == best)
    return mask


# --------------------------------------------------------------------------------------------------
# Display (the specs are part of each table's declaration, automd_analysis.analysis.catalog)


def _cell_text(row: pd.Series, stat: Stat, decimals: int) -> str:
    digits = stat.decimals if stat.decimals is not None else decimals
    mean = row[stat.mean]
    if stat.integer:
        return MISSING if _is_missing(mean) else str(int(mean))
    if stat.p_value:
        from automd_analysis.report.presentation import format_p_value

        return format_p_value(mean)
    if stat.percent:
        if _is_missing(mean):
            return MISSING
        sd = row[stat.sd] if stat.sd else None
        text = format_number(100 * float(mean), digits)
        if not _is_missing(sd):
            text += f" {PLUS_MINUS} {format_number(100 * float(sd), digits)}"
        return text + "%"
    sd = row[stat.sd] if stat.sd else None
    n = row[stat.n_valid] if stat.n_valid else None
    return format_mean_sd(mean, sd, digits, n)


def _wide_display(df: pd.DataFrame, spec: TableSpec) -> tuple[pd.DataFrame, pd.DataFrame]:
    text = pd.DataFrame(index=df.index)
    from automd_analysis.report.presentation import readable_header

    for label in spec.labels:
        text[spec.titles.get(label, readable_header(label))] = [_label_text(v) for v in df[label]]
    bold = pd.DataFrame(False, index=df.index, columns=text.columns)
    exclude = (
        df[spec.labels[0]].isin(spec.exclude_from_best).to_numpy()
        if spec.labels
        else np.zeros(len(df), bool)
    )
    for stat in spec.stats:
        text[stat.title] = [_cell_text(row, stat, spec.decimals) for _, row in df.iterrows()]
        marks = f"{stat.mean}_best"
        if stat.direction and marks in df:
            digits = stat.decimals if stat.decimals is not None else spec.decimals
            shown = df[[stat.mean]].astype(float) * (100.0 if stat.percent else 1.0)
            ties = best_mask(shown, {stat.mean: stat.direction}, exclude=exclude, decimals=digits)
            bold[stat.title] = _marked(df[marks]) | ties[stat.mean].to_numpy()
        else:
            bold[stat.title] = False
    return text, bold


def _label_text(value) -> str:
    """A label cell: ``–`` when missing, ``yes``/``no`` for a boolean, interval labels rounded."""
    from automd_analysis.report.presentation import format_interval_label

    if _is_missing(value):
        return MISSING
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    return format_interval_label(str(value))


def _marked(values) -> np.ndarray:
    """``<X>_best`` values as booleans (missing: not marked)."""
    return np.array([_is_marked(v) for v in values], dtype=bool)


def _is_marked(value) -> bool:
    return value is True or value is np.True_


def _pivot_display(df: pd.DataFrame, spec: TableSpec) -> tuple[pd.DataFrame, pd.DataFrame]:
    row_key, col_key = spec.pivot
    assert spec.cell is not None
    rows = list(dict.fromkeys(df[row_key]))
    cols = list(dict.fromkeys(df[col_key]))
    cols = sorted(cols, key=lambda c: (c in spec.exclude_from_best, str(c).lower(), str(c)))
    text = pd.DataFrame(MISSING, index=range(len(rows)), columns=cols, dtype=object)
    numbers = pd.DataFrame(np.nan, index=range(len(rows)), columns=cols)
    flags = pd.DataFrame(False, index=range(len(rows)), columns=cols)
    marks = f"{spec.cell.mean}_best"
    position = {r: i for i, r in enumerate(rows)}
    for _, record in df.iterrows():
        i = position[record[row_key]]
        cell = _cell_text(record, spec.cell, spec.decimals)
        if spec.extra is not None and not _is_missing(record[spec.extra]):
            cell += f" ({format_number(100 * float(record[spec.extra]), 0)}%)"
        text.loc[i, record[col_key]] = cell
        numbers.loc[i, record[col_key]] = record[spec.cell.mean]
        if marks in df:
            flags.loc[i, record[col_key]] = _is_marked(record[marks])
    bold = pd.DataFrame(False, index=text.index, columns=cols)
    if spec.direction and marks in df:
        exclude = [c in spec.exclude_from_best for c in cols]
        ties = best_mask(
            numbers, spec.direction, axis="rows", exclude=exclude, decimals=spec.decimals
        )
        bold = flags | ties
    from automd_analysis.report.presentation import readable_header

    title = spec.titles.get(row_key, readable_header(row_key))
    text.insert(0, title, [str(r) for r in rows])
    bold.insert(0, title, False)
    return text, bold


def _finite(value) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


@fill_doc(efron_tibshirani_1993=EFRON_TIBSHIRANI_1993)
def format_interval(low, high, decimals: int = 3, percent: bool = False) -> str:
    """``"[0.278, 0.424]"`` (``"[71%, 364%]"`` with ``percent``); ``""`` when a bound is missing.

    Parameters
    ----------
    low, high : float
    decimals : int, default 3
        Decimals of the bounds (ignored with ``percent``: whole percent, as percent cells).
    percent : bool, default False

    Returns
    -------
    str

    See Also
    --------
    format_number : the number format.

    References
    ----------
    {efron_tibshirani_1993}

    Examples
    --------
    >>> format_interval(0.27759, 0.42421)
    '[0.278, 0.424]'
    >>> format_interval(0.707, 3.638, percent=True)
    '[71%, 364%]'
    >>> format_interval(float("nan"), 0.5)
    ''
    """
    if not (_finite(low) and _finite(high)):
        return ""
    if percent:
        lo, hi = (format_number(100 * float(v), 0) for v in (low, high))
        return f"[{lo}%, {hi}%]"
    return f"[{format_number(low, decimals)}, {format_number(high, decimals)}]"


def _shown_intervals(
    df: pd.DataFrame, spec: TableSpec, intervals: Mapping[str, tuple[str, str]]
) -> dict[str, tuple[str, str]]:
    """Displayed value column -> its interval columns, for the columns with at least one interval."""
    if spec.pivot:
        wanted = [spec.extra] if spec.extra else []
        wanted += [spec.cell.mean] if spec.cell and spec.cell.interval else []
    else:
        wanted = [stat.mean for stat in spec.stats if stat.interval]
    out = {}
    for column in wanted:
        bounds = intervals.get(column)
        if bounds is None or not all(b in df.columns for b in bounds):
            continue
        low, high = (pd.to_numeric(df[b], errors="coerce") for b in bounds)
        if (low.notna() & high.notna()).any():
            out[column] = bounds
    return out


def _add_wide_intervals(text, df, spec, shown) -> None:
    for stat in spec.stats:
        if stat.mean not in shown or stat.title not in text.columns:
            continue
        low, high = shown[stat.mean]
        digits = stat.decimals if stat.decimals is not None else spec.decimals
        for i in range(len(df)):
            ci = format_interval(df.at[i, low], df.at[i, high], digits, stat.percent)
            if ci and text.at[i, stat.title] != MISSING:
                text.at[i, stat.title] = f"{text.at[i, stat.title]} {ci}"


def _add_pivot_intervals(text, df, spec, shown) -> None:
    row_key, col_key = spec.pivot
    rows = {str(r): i for i, r in enumerate(dict.fromkeys(df[row_key]))}
    for column, (low, high) in shown.items():
        extra = column == spec.extra
        for record in df.to_dict("records"):
            i, col = rows.get(str(record[row_key])), record[col_key]
            if i is None or col not in text.columns:
                continue
            ci = format_interval(record[low], record[high], spec.decimals, percent=extra)
            cell = str(text.at[i, col])
            if ci and extra and cell.endswith(")"):
                text.at[i, col] = f"{cell[:-1]} {ci})"
            elif ci and not extra and cell != MISSING:
                text.at[i, col] = f"{cell} {ci}"


@fill_doc(analysis_table=_ANALYSIS_TABLE)
def display_frame(
    df: pd.DataFrame,
    spec: TableSpec | None = None,
    intervals: Mapping[str, tuple[str, str]] | None = None,
    titles: Mapping[str, str] | None = None,
    readable: Sequence[str] | None = None,
    declared: Table | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The table as (unescaped) display strings and the matching bold mask.

    Without a spec every column is shown as
    :func:`automd_analysis.report.presentation.default_display` reads its declared kind (its name
    for a table without a declaration: ``mean ± SD`` pairs, integer counts, p-values,
    percentages; three decimals otherwise; intervals in brackets; headers from ``titles``, the
    declaration's), nothing bold. With a
    spec, each displayed value whose column has an interval (``intervals``: value column ->
    ``(low, high)`` columns, e.g. :attr:`Table.intervals
    <automd_analysis.analysis.catalog.declaration.Table.intervals>`) is followed by the interval in
    brackets (:func:`format_interval`; a pivot table's parenthesised extra value gets it inside the
    parentheses: ``0.286 (140% [71%, 364%])``); bold marks the best value, not the interval.

    Parameters
    ----------
    {analysis_table}
    spec : TableSpec, optional
    intervals : mapping, optional
    titles : mapping, optional
        Column -> header, for a table without a spec (:attr:`Table.titles
        <automd_analysis.analysis.catalog.declaration.Table.titles>`).
    readable : sequence of str, optional
        Columns whose names are read as headers without a title (a declaration's
        :attr:`~automd_analysis.analysis.catalog.declaration.Table.named`); default: all.
    declared : Table, optional
        The table's declaration: how each column of a table without a spec reads.

    Returns
    -------
    (DataFrame, DataFrame)

    See Also
    --------
    rendered : with the caption.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, ch. 13.

    Examples
    --------
    >>> spec = catalog.table("table7_llm").spec
    >>> frame = pd.DataFrame({"llm": ["x"], "penalized_mean": [0.5], "penalized_sd": [0.01],
    ...     "ece_mean": [0.1], "ece_mean_bc": [0.09], "valid_rate": [1.0], "tokens_m_mean": [2.0],
    ...     "penalized_mean_ci_low": [0.45], "penalized_mean_ci_high": [0.55],
    ...     "ece_mean_bc_ci_low": [0.08], "ece_mean_bc_ci_high": [0.12]})
    >>> text, _ = display_frame(frame, spec, catalog.table("table7_llm").intervals)
    >>> text.loc[0, ["Penalised score", "ECE", "ECE, bias-corrected"]].tolist()
    ['0.500 ± 0.010 [0.450, 0.550]', '0.100', '0.090 [0.080, 0.120]']
    """
    if spec is None:
        from automd_analysis.report.presentation import default_display

        return default_display(
            df, titles=titles, intervals=intervals, readable=readable, declared=declared
        )
    frame = df.reset_index(drop=True)
    display = _pivot_display if spec.pivot else _wide_display
    text, bold = display(frame, spec)
    text, bold = text.reset_index(drop=True), bold.reset_index(drop=True)
    shown = _shown_intervals(frame, spec, intervals or {})
    if shown:
        text = text.copy()
        (_add_pivot_intervals if spec.pivot else _add_wide_intervals)(text, frame, spec, shown)
    return text, bold


# --------------------------------------------------------------------------------------------------
# Rendering


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    PLUS_MINUS: r"$\pm$",
    "\N{DAGGER}": r"$^{\dagger}$",
    "\N{DOUBLE DAGGER}": r"$^{\ddagger}$",
    "\N{SECTION SIGN}": r"$^{\S}$",
    MISSING: "--",
}
_LATEX_PATTERN = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIAL))


def escape_latex(text: str) -> str:
    """Escape LaTeX special characters (and write ±, †, ‡, §, – as LaTeX)."""
    return _LATEX_PATTERN.sub(lambda m: _LATEX_SPECIAL[m.group(0)], str(text))


def _uuid(name: str) -> str:
    return "automd_" + re.sub(r"[^A-Za-z0-9_]", "_", name)


_INTERVAL = re.compile(r"\[[^\[\]]*,[^\[\]]*\]")
NO_BREAK_SPACE = "\N{NO-BREAK SPACE}"


def glue_interval(text: str) -> str:
    """``text`` with no-break spaces around ``±`` and from its first ``(`` or ``[`` on when it
    holds an interval (``[low, high]``), so a browser can break a cell only between a value
    (``mean ± SD``) and its bracketed interval, never inside either.

    Examples
    --------
    >>> glue_interval("0.74 (95% [77%, 111%])").replace(NO_BREAK_SPACE, "~")
    '0.74 (95%~[77%,~111%])'
    >>> glue_interval("0.56 ± 0.01 [0.53, 0.58]").replace(NO_BREAK_SPACE, "~")
    '0.56~±~0.01 [0.53,~0.58]'
    >>> glue_interval("gbdt, linear")
    'gbdt, linear'
    """
    text = text.replace(f" {PLUS_MINUS} ", f"{NO_BREAK_SPACE}{PLUS_MINUS}{NO_BREAK_SPACE}")
    match = _INTERVAL.search(text)
    if match is None:
        return text
    start = min((i for i in (text.find("("), match.start()) if i >= 0), default=match.start())
    return text[:start] + text[start:].replace(" ", NO_BREAK_SPACE)


def break_path(text: str) -> str:
    """An escaped HTML cell with a line-break opportunity (``<wbr>``) after each ``/`` of a long
    path-like word (a run id ``main/agent/task/rep0``: no spaces, two ``/`` or more), so a wide
    table of run ids can fit the page instead of being cut; other cells unchanged.

    Examples
    --------
    >>> break_path("main/codex/demo_sepsis/rep2")
    'main/<wbr>codex/<wbr>demo_sepsis/<wbr>rep2'
    >>> break_path("n/a")
    'n/a'
    """
    if " " in text or text.count("/") < 2:
        return text
    return text.replace("/", "/<wbr>")


#: A cell that is one number (a p-value ``9.0e-04``, ``-0.012``, ``12%``, ``0.50 ± 0.01``, with a
#: mark of few valid runs): its HTML cell never wraps (class :data:`NUMBER_CLASS`).
_NUMBER_CELL = re.compile(
    rf"^[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?%?(?: {PLUS_MINUS} \d+(?:\.\d+)?%?)?[§‡†]?$"
)
#: Class of the HTML cells that hold one number; the table's style keeps them on one line.
NUMBER_CLASS = "automd-number"


def number_cell(text: str) -> bool:
    """Whether a display cell is one number (kept on one line in HTML: a browser would break
    ``9.0e-04`` after its hyphen).

    Examples
    --------
    >>> [number_cell(t) for t in ("9.0e-04", "-0.012", "12%", "0.500 ± 0.010§", "0.5 [0.4, 0.6]")]
    [True, True, True, True, False]
    """
    return bool(_NUMBER_CELL.match(text))


def to_styler(text: pd.DataFrame, bold: pd.DataFrame, *, target: str, name: str) -> Styler:
    """A pandas Styler of already-formatted cells, escaped for ``target`` (``html``/``latex``).

    Cells and headers are escaped here (archive strings are untrusted); bold cells get
    ``font-weight: bold`` (HTML) or ``\\textbf`` (LaTeX). The table id is derived from ``name``,
    so the HTML is reproducible. In HTML an interval never breaks across lines: from the first
    bracket of a cell that holds one (``0.60 [0.55, 0.65]``, ``0.74 (95% [77%, 111%])``) its
    spaces are no-break spaces (:func:`glue_interval`), so a wide table may wrap a cell only
    between the estimate and its bracket; run ids may break after their ``/``
    (:func:`break_path`); a cell that holds one number (:func:`number_cell`) never wraps (class
    :data:`NUMBER_CLASS`, ``white-space: nowrap`` in the table's style).
    """
    escape = html.escape if target == "html" else escape_latex
    flags = bold.to_numpy(dtype=bool)
    rows = []
    for i, record in enumerate(text.to_numpy(dtype=object)):
        row = [escape(str(value)) for value in record]
        if target == "html":
            row = [break_path(glue_interval(v)) for v in row]
        if target == "latex":
            row = [f"\\textbf{{{v}}}" if flags[i, j] else v for j, v in enumerate(row)]
        rows.append(row)
    cells = pd.DataFrame(rows, columns=[escape(str(c)) for c in text.columns], dtype=object)
    styler = Styler(cells, uuid=_uuid(name), cell_ids=False)
    styler.hide(axis="index")
    if target == "html":
        css = np.where(bold.to_numpy(), "font-weight: bold", "")
        styler.apply(
            lambda _: pd.DataFrame(css, index=cells.index, columns=cells.columns), axis=None
        )
        numbers = text.astype(str).map(number_cell).to_numpy(dtype=bool)
        if numbers.any():
            classes = np.where(numbers, NUMBER_CLASS, "")
            styler.set_td_classes(pd.DataFrame(classes, index=cells.index, columns=cells.columns))
            styler.set_table_styles(
                [{"selector": f"td.{NUMBER_CLASS}", "props": "white-space: nowrap;"}]
            )
    return styler


def render_html(text: pd.DataFrame, bold: pd.DataFrame, *, name: str, caption: str = "") -> str:
    """HTML fragment (``<style>`` + ``<table>``) with escaped cells, headers and caption."""
    styler = to_styler(text, bold, target="html", name=name)
    if caption:
        styler.set_caption(html.escape(caption))
    return styler.to_html()


def render_latex(text: pd.DataFrame, bold: pd.DataFrame, *, name: str, caption: str = "") -> str:
    """LaTeX ``table`` environment (booktabs rules) with escaped cells, headers and caption."""
    styler = to_styler(text, bold, target="latex", name=name)
    column_format = "l" * min(1, text.shape[1]) + "r" * max(0, text.shape[1] - 1)
    return styler.to_latex(
        column_format=column_format,
        hrules=True,
        caption=escape_latex(caption) if caption else None,
        label=f"tab:{re.sub(r'[^A-Za-z0-9_:-]', '-', name)}",
        position="htbp",
    )


def _csv_cell(value) -> str:
    if _is_missing(value):
        return ""
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return repr(comparable_scalar(value))
    return str(value)


def csv_text(df: pd.DataFrame, sort_by: Sequence[str] | None = None) -> str:
    """The CSV text of a table: header + rows, ``\\n`` line endings, sorted rows.

    Floats are written with :func:`repr` (shortest text that reads back to the same double), NaN
    and None as an empty field, booleans as ``true``/``false``. Rows are sorted (stable) by
    ``sort_by`` (default: the non-float columns, left to right), so the file does not depend on the
    input's row order.
    """
    frame = df.reset_index(drop=True)
    if sort_by is None:
        sort_by = [c for c in frame.columns if not pd.api.types.is_float_dtype(frame[c])]
    if sort_by and len(frame):
        frame = frame.sort_values(list(sort_by), kind="mergesort", na_position="last")
    rows = [",".join(_csv_field(str(c)) for c in frame.columns)]
    for record in frame.itertuples(index=False):
        rows.append(",".join(_csv_field(_csv_cell(v)) for v in record))
    return "\n".join(rows) + "\n"


def _csv_field(text: str) -> str:
    if any(ch in text for ch in ',"\n\r') or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text


@fill_doc(analysis_table=_ANALYSIS_TABLE)
def rendered(
    df: pd.DataFrame,
    spec: TableSpec | None = None,
    caption: str | None = None,
    intervals: Mapping[str, tuple[str, str]] | None = None,
    declared: Table | None = None,
    synthetic: Sequence[str] = (),
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """What the LaTeX/HTML of a table show: display strings, bold mask and caption.

    :func:`display_frame`; the caption (``caption``, else the spec's, else the declaration's
    :attr:`~automd_analysis.analysis.catalog.declaration.Table.page_caption`) gets
    :data:`INTERVAL_NOTE` when intervals are shown and, for a table without rows, the sentence
    saying so (:attr:`~automd_analysis.analysis.catalog.declaration.Table.empty_note`); then the
    columns that repeat one value on every row are folded into the caption
    (:func:`automd_analysis.report.presentation.fold_constant_columns`).

    Parameters
    ----------
    {analysis_table}
    spec : TableSpec, optional
    caption : str, optional
        Overrides the spec's caption (the interval note is still appended).
    intervals : mapping, optional
        As :func:`display_frame`.
    declared : Table, optional
        The table's declaration: caption, headers and interval note of a table without a spec,
        the sentence of an empty table.
    synthetic : sequence of str
        Synthetic task ids: marked in the cells and column labels (before repeated values are
        folded into the caption, so the caption keeps the mark), with the footnote
        (:func:`automd_analysis.report.provenance.mark_synthetic`).

    Returns
    -------
    (DataFrame, DataFrame, str)

    See Also
    --------
    export_table : writes them.

    References
    ----------
    .. [1] Tufte ER (2001). The Visual Display of Quantitative Information, 2nd ed., ch. 4.

    Examples
    --------
    >>> frame = pd.DataFrame({"agent": ["a", "b", "c"], "n_tasks": [9, 9, 9],
    ...     "score": [0.5, 0.6, 0.7]})
    >>> text, _, caption = rendered(frame, None, "Scores.")
    >>> list(text.columns), caption
    (['agent', 'score'], 'Scores. Same in every row: n_tasks 9.')
    """
    from automd_analysis.analysis.catalog.declaration import EMPTY_NOTE
    from automd_analysis.report.presentation import fold_constant_columns
    from automd_analysis.report.provenance import SYNTHETIC_FOOTNOTE, mark_synthetic

    if caption is None:
        caption = spec.caption if spec else (declared.page_caption if declared else "")
    frame = df.reset_index(drop=True)
    if spec is not None and _shown_intervals(frame, spec, intervals or {}):
        caption = f"{caption} {spec.interval_note or INTERVAL_NOTE}".strip()
    elif spec is None and _any_interval(frame, intervals or {}):
        note = declared.interval_note if declared is not None else None
        caption = f"{caption} {note or INTERVAL_NOTE}".strip()
    titles = declared.titles if declared is not None and spec is None else None
    readable = declared.named if declared is not None else ()  # undeclared: names as they are
    text, bold = display_frame(df, spec, intervals, titles, readable, declared)
    if bool(bold.to_numpy().any()):
        caption = f"{caption} {BEST_NOTE}".strip()
    if frame.empty:
        caption = f"{caption} {declared.empty_note if declared else EMPTY_NOTE}".strip()
    text, marked = mark_synthetic(text, synthetic)  # on the page only, not in the CSV
    if marked:
        bold = bold.set_axis(text.columns, axis=1)
        caption = f"{caption} {SYNTHETIC_FOOTNOTE}".strip()
    return fold_constant_columns(text, bold, caption)


def _any_interval(frame: pd.DataFrame, intervals: Mapping[str, tuple[str, str]]) -> bool:
    """Whether some row of ``frame`` has both bounds of one of its ``intervals``."""
    for value, bounds in intervals.items():
        if value in frame.columns and all(b in frame.columns for b in bounds):
            low, high = (pd.to_numeric(frame[b], errors="coerce") for b in bounds)
            if (low.notna() & high.notna()).any():
                return True
    return False


@fill_doc(raises_not_a_stem=RAISES_NOT_A_STEM)
def write_rendered(
    df: pd.DataFrame,
    text: pd.DataFrame,
    bold: pd.DataFrame,
    name: str,
    out_dir: str | Path,
    *,
    caption: str = "",
    sort_by: Sequence[str] | None = None,
) -> dict[str, Path]:
    """Write ``<out_dir>/tables/<name>.csv`` (from ``df``), ``.tex`` and ``.html`` (from ``text``,
    ``bold`` and ``caption``, e.g. :func:`rendered`), each replaced atomically.

    Raises
    ------
    {raises_not_a_stem}
    """
    paths = output_paths(out_dir, "tables", "table", name, ("csv", "tex", "html"))
    write_text_atomic(paths["csv"], csv_text(df, sort_by))
    write_text_atomic(paths["tex"], render_latex(text, bold, name=name, caption=caption))
    write_text_atomic(paths["html"], render_html(text, bold, name=name, caption=caption))
    return paths


@fill_doc(raises_not_a_stem=RAISES_NOT_A_STEM)
def export_table(
    df: pd.DataFrame,
    name: str,
    out_dir: str | Path,
    *,
    spec: TableSpec | None = None,
    caption: str | None = None,
    sort_by: Sequence[str] | None = None,
) -> dict[str, Path]:
    """Write ``<out_dir>/tables/<name>.csv``, ``.tex`` and ``.html``.

    A table the catalog declares (:mod:`automd_analysis.analysis.catalog`) is checked against its
    declaration (columns, order, types) and rendered with its display spec and intervals; any
    other name is rendered column by column
    (:func:`automd_analysis.report.presentation.default_display`).

    Parameters
    ----------
    df : DataFrame
        The analysis table (numbers); written as-is to the CSV (see :func:`csv_text`).
    name : str
        File stem.
    out_dir : str or Path
        Report directory; files go to its ``tables/`` subdirectory.
    spec : TableSpec, optional
        Overrides the declared display spec.
    caption : str, optional
        Overrides the spec's caption.
    sort_by : sequence of str, optional
        CSV sort keys (default: the identifier columns).

    Returns
    -------
    dict with keys ``csv``, ``tex``, ``html`` -> written paths.

    Raises
    ------
    {raises_not_a_stem}
    TableDeclarationError
        ``df`` does not have the declared columns.

    See Also
    --------
    automd_analysis.report.notebook.Report.table : the same from a notebook.

    References
    ----------
    .. [1] Auto-MD-bench paper, Tables 2-22.

    Examples
    --------
    >>> import tempfile
    >>> frame = pd.DataFrame({"llm": ["x"], "penalized_mean": [0.5], "penalized_sd": [0.01],
    ...     "ece_mean": [0.1], "ece_mean_bc": [0.09], "valid_rate": [1.0], "tokens_m_mean": [2.0],
    ...     "penalized_mean_ci_low": [0.45], "penalized_mean_ci_high": [0.55],
    ...     "penalized_mean_best": [True], "ece_mean_bc_ci_low": [0.08],
    ...     "ece_mean_bc_ci_high": [0.12], "ece_mean_bc_best": [True]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     paths = export_table(frame, "table7_llm", tmp)
    ...     "[0.450, 0.550]" in paths["html"].read_text().replace(NO_BREAK_SPACE, " ")
    True
    """
    declared = catalog.table(name)
    frame, spec, intervals = published(df, name, declared, spec)
    text, bold, caption = rendered(frame, spec, caption, intervals, declared)
    return write_rendered(frame, text, bold, name, out_dir, caption=caption, sort_by=sort_by)


def published(
    df: pd.DataFrame, name: str, declared: Table | None, spec: TableSpec | None = None
) -> tuple[pd.DataFrame, TableSpec | None, Mapping[str, tuple[str, str]]]:
    """The frame as published (checked against its declaration), its display spec and intervals."""
    check_stem(name, "table")
    if declared is None:
        return df, spec, {}
    frame = declared.frame(df)
    return (
        frame,
        spec if spec is not None else declared.display(frame),
        declared.intervals_in(frame),
    )
