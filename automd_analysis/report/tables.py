"""Paper-style tables: mean +- SD strings, bold best values, daggers, CSV / LaTeX / HTML export.

The analyses (:mod:`automd_analysis.analysis`) return tidy numeric DataFrames; this module turns
them into what a reader sees and what a machine checks:

- :func:`export_table` writes ``<out_dir>/tables/<name>.csv`` (the numbers, lossless, stable column
  names), ``.tex`` and ``.html`` (formatted: ``mean +- SD``, best value per column or row in bold,
  ``†`` for two valid runs and ``‡`` for one, as in the paper's Tables 12 and 13). Same input =>
  byte-identical files: rows are sorted, floats are written with a fixed rule, nothing depends on
  time, and files are replaced atomically.

The report notebooks compute each table with an analysis function and publish it with
:meth:`automd_analysis.report.notebook.Report.table`, which calls :func:`export_table`: that is the
one path to every exported table (``docs/tables.md``).

Every string that comes from an archive (agent, LLM, task, group names, reason codes) is escaped:
HTML with :func:`html.escape`, LaTeX with :func:`escape_latex`.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from automd_analysis._atomic import write_text_atomic
from automd_analysis.analysis.store import BASELINE_AGENT
from automd_analysis.precision import comparable, comparable_scalar

__all__ = [
    "DAGGERS",
    "TABLE_SPECS",
    "Stat",
    "TableSpec",
    "best_mask",
    "csv_text",
    "dagger",
    "display_frame",
    "escape_latex",
    "export_table",
    "format_mean_sd",
    "format_number",
    "percentage_table_spec",
    "render_html",
    "render_latex",
    "rendered",
    "to_styler",
    "write_rendered",
]

#: Marks for reduced numbers of valid runs (paper Tables 12 and 13).
DAGGERS: Mapping[int, str] = {2: "\N{DAGGER}", 1: "\N{DOUBLE DAGGER}"}
MISSING = "\N{EN DASH}"
PLUS_MINUS = "\N{PLUS-MINUS SIGN}"


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
    """``†`` for two valid runs, ``‡`` for one, else ``""`` (paper Tables 12 and 13)."""
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
# Display specifications


@dataclass(frozen=True)
class Stat:
    """One displayed column of a wide table.

    ``mean`` (and optional ``sd``, ``n_valid``) name numeric columns of the analysis frame;
    ``direction`` (``"max"``/``"min"``/None) marks the best value in bold; ``percent`` multiplies by
    100 and appends ``%``; ``integer`` prints an integer; ``p_value`` prints a p-value
    (:func:`automd_analysis.report.presentation.format_p_value`: scientific below 0.001).
    """

    title: str
    mean: str
    sd: str | None = None
    n_valid: str | None = None
    direction: str | None = None
    decimals: int | None = None
    percent: bool = False
    integer: bool = False
    p_value: bool = False


@dataclass(frozen=True)
class TableSpec:
    """How a table is displayed.

    Either a *wide* table (``labels`` shown as they are, then one column per :class:`Stat`) or a
    *pivot* of a long per-task table (``pivot = (row, column)``, cells from ``cell``, best per row
    in ``direction``).
    """

    caption: str
    labels: tuple[str, ...] = ()
    stats: tuple[Stat, ...] = ()
    pivot: tuple[str, str] | None = None
    cell: Stat | None = None
    extra: str | None = None
    direction: str | None = None
    decimals: int = 3
    exclude_from_best: tuple[str, ...] = (BASELINE_AGENT,)
    titles: Mapping[str, str] = field(default_factory=dict)


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
    from automd_analysis.report.presentation import format_interval_label

    text = pd.DataFrame(index=df.index)
    for label in spec.labels:
        text[spec.titles.get(label, label)] = [
            MISSING if _is_missing(v) else format_interval_label(str(v)) for v in df[label]
        ]
    bold = pd.DataFrame(False, index=df.index, columns=text.columns)
    exclude = (
        df[spec.labels[0]].isin(spec.exclude_from_best).to_numpy()
        if spec.labels
        else np.zeros(len(df), bool)
    )
    for stat in spec.stats:
        text[stat.title] = [_cell_text(row, stat, spec.decimals) for _, row in df.iterrows()]
        if stat.direction:
            digits = stat.decimals if stat.decimals is not None else spec.decimals
            shown = df[[stat.mean]].astype(float) * (100.0 if stat.percent else 1.0)
            mask = best_mask(shown, {stat.mean: stat.direction}, exclude=exclude, decimals=digits)
            bold[stat.title] = mask[stat.mean].to_numpy()
        else:
            bold[stat.title] = False
    return text, bold


def _pivot_display(df: pd.DataFrame, spec: TableSpec) -> tuple[pd.DataFrame, pd.DataFrame]:
    row_key, col_key = spec.pivot
    assert spec.cell is not None
    rows = list(dict.fromkeys(df[row_key]))
    cols = list(dict.fromkeys(df[col_key]))
    cols = sorted(cols, key=lambda c: (c in spec.exclude_from_best, str(c).lower(), str(c)))
    text = pd.DataFrame(MISSING, index=range(len(rows)), columns=cols, dtype=object)
    numbers = pd.DataFrame(np.nan, index=range(len(rows)), columns=cols)
    position = {r: i for i, r in enumerate(rows)}
    for _, record in df.iterrows():
        i = position[record[row_key]]
        cell = _cell_text(record, spec.cell, spec.decimals)
        if spec.extra is not None and not _is_missing(record[spec.extra]):
            cell += f" ({format_number(100 * float(record[spec.extra]), 0)}%)"
        text.loc[i, record[col_key]] = cell
        numbers.loc[i, record[col_key]] = record[spec.cell.mean]
    bold = pd.DataFrame(False, index=text.index, columns=cols)
    if spec.direction:
        exclude = [c in spec.exclude_from_best for c in cols]
        bold = best_mask(
            numbers, spec.direction, axis="rows", exclude=exclude, decimals=spec.decimals
        )
    title = spec.titles.get(row_key, row_key)
    text.insert(0, title, [str(r) for r in rows])
    bold.insert(0, title, False)
    return text, bold


def display_frame(
    df: pd.DataFrame, spec: TableSpec | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The table as (unescaped) display strings and the matching bold mask.

    Without a spec every column is shown as
    :func:`automd_analysis.report.presentation.default_display` reads its name (``mean ± SD``
    pairs, integer counts, p-values, percentages; three decimals otherwise), nothing bold.
    """
    if spec is None:
        from automd_analysis.report.presentation import default_display

        return default_display(df)
    display = _pivot_display if spec.pivot else _wide_display
    text, bold = display(df.reset_index(drop=True), spec)
    return text.reset_index(drop=True), bold.reset_index(drop=True)


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
    MISSING: "--",
}
_LATEX_PATTERN = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIAL))


def escape_latex(text: str) -> str:
    """Escape LaTeX special characters (and write ±, †, ‡, – as LaTeX)."""
    return _LATEX_PATTERN.sub(lambda m: _LATEX_SPECIAL[m.group(0)], str(text))


def _uuid(name: str) -> str:
    return "automd_" + re.sub(r"[^A-Za-z0-9_]", "_", name)


def to_styler(text: pd.DataFrame, bold: pd.DataFrame, *, target: str, name: str) -> Styler:
    """A pandas Styler of already-formatted cells, escaped for ``target`` (``html``/``latex``).

    Cells and headers are escaped here (archive strings are untrusted); bold cells get
    ``font-weight: bold`` (HTML) or ``\\textbf`` (LaTeX). The table id is derived from ``name``,
    so the HTML is reproducible.
    """
    escape = html.escape if target == "html" else escape_latex
    flags = bold.to_numpy(dtype=bool)
    rows = []
    for i, record in enumerate(text.to_numpy(dtype=object)):
        row = [escape(str(value)) for value in record]
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


def rendered(
    df: pd.DataFrame, spec: TableSpec | None = None, caption: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """What the LaTeX/HTML of a table show: display strings, bold mask and caption.

    :func:`display_frame`, then the columns that repeat one value on every row are folded into
    the caption (:func:`automd_analysis.report.presentation.fold_constant_columns`).

    Parameters
    ----------
    df : DataFrame
        The analysis table.
    spec : TableSpec, optional
    caption : str, optional
        Overrides the spec's caption.

    Returns
    -------
    (DataFrame, DataFrame, str)
    """
    from automd_analysis.report.presentation import fold_constant_columns

    caption = caption if caption is not None else (spec.caption if spec else "")
    text, bold = display_frame(df, spec)
    return fold_constant_columns(text, bold, caption)


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
    ValueError
        ``name`` is not a plain file stem.
    """
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*", name):
        raise ValueError(f"table name {name!r} must be a plain file stem")
    target = Path(out_dir) / "tables"
    paths = {
        "csv": target / f"{name}.csv",
        "tex": target / f"{name}.tex",
        "html": target / f"{name}.html",
    }
    write_text_atomic(paths["csv"], csv_text(df, sort_by))
    write_text_atomic(paths["tex"], render_latex(text, bold, name=name, caption=caption))
    write_text_atomic(paths["html"], render_html(text, bold, name=name, caption=caption))
    return paths


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

    Parameters
    ----------
    df : DataFrame
        The analysis table (numbers); written as-is to the CSV (see :func:`csv_text`).
    name : str
        File stem; when it is a key of :data:`TABLE_SPECS` and ``spec`` is not given, that display
        spec is used (``mean ± SD``, bold best, daggers).
    out_dir : str or Path
        Report directory; files go to its ``tables/`` subdirectory.
    spec : TableSpec, optional
        Display specification for LaTeX/HTML (see :func:`rendered`).
    caption : str, optional
        Overrides the spec's caption.
    sort_by : sequence of str, optional
        CSV sort keys (default: the identifier columns).

    Returns
    -------
    dict with keys ``csv``, ``tex``, ``html`` -> written paths.

    Raises
    ------
    ValueError
        ``name`` is not a plain file stem.
    """
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*", name):
        raise ValueError(f"table name {name!r} must be a plain file stem")
    spec = spec if spec is not None else TABLE_SPECS.get(name)
    text, bold, caption = rendered(df, spec, caption)
    return write_rendered(df, text, bold, name, out_dir, caption=caption, sort_by=sort_by)


# --------------------------------------------------------------------------------------------------
# The paper's tables


def percentage_table_spec(
    frame: pd.DataFrame, labels: Sequence[str], caption: str, decimals: int = 0
) -> TableSpec:
    """Display spec of a wide table whose other columns hold percentages (0-100) already.

    Used for tables whose value columns are not known in advance (one column per agent, e.g.
    ``table20_practices_wide``): every column not in ``labels`` is shown as a number with
    ``decimals`` decimals (the caption says they are percentages); the CSV keeps the exact values.

    Parameters
    ----------
    frame : DataFrame
        The wide table.
    labels : sequence of str
        Its label columns, shown as they are.
    caption : str
    decimals : int, default 0

    Returns
    -------
    TableSpec

    See Also
    --------
    export_table

    References
    ----------
    .. [1] Cole TJ (2015). Too many digits: the presentation of numerical data. Arch Dis Child
       100(7):608-609.

    Examples
    --------
    >>> wide = pd.DataFrame({"practice": ["ensembling"], "aide": [11.111], "codex": [50.0]})
    >>> spec = percentage_table_spec(wide, ("practice",), "% of eligible runs.")
    >>> [(s.title, s.decimals) for s in spec.stats]
    [('aide', 0), ('codex', 0)]
    """
    labels = tuple(labels)
    stats = tuple(Stat(str(c), str(c), decimals=decimals) for c in frame.columns if c not in labels)
    return TableSpec(caption=caption, labels=labels, stats=stats)


def _ms(title: str, prefix: str, direction: str | None, decimals: int | None = None) -> Stat:
    return Stat(title, f"{prefix}_mean", f"{prefix}_sd", direction=direction, decimals=decimals)


_PER_TASK_SCORE = Stat("score", "mean", "sd", "n_valid")

#: Display specifications of the exported tables (keyed by CSV file stem).
TABLE_SPECS: dict[str, TableSpec] = {
    "table2_primary_scores": TableSpec(
        caption="Primary task performance: mean ± SD over repetitions (ranks: over tasks). "
        "Penalised scores count invalid runs as 0. Bold: best agent per column.",
        labels=("agent",),
        stats=(
            _ms("Penalised score", "penalized", "max"),
            _ms("Non-penalised score", "nonpenalized", "max"),
            Stat(
                "Valid runs",
                "valid_rate_mean",
                "valid_rate_sd",
                direction="max",
                percent=True,
                decimals=0,
            ),
            _ms("Rank (penalised)", "rank_penalized", "min", 2),
            _ms("Rank (non-penalised)", "rank_nonpenalized", "min", 2),
        ),
    ),
    "table12_task_scores": TableSpec(
        caption="Normalised primary score by task over valid runs (mean ± SD). "
        "† two valid runs; ‡ one valid run. Bold: best agent per task.",
        pivot=("task", "agent"),
        cell=_PER_TASK_SCORE,
        direction="max",
    ),
    "table3_ece": TableSpec(
        caption="ECE by agent and task class (lower is better); runs averaged within task, "
        "tasks weighted equally. Bold: lowest agent value per column.",
        labels=("agent",),
        stats=tuple(
            Stat(c.capitalize() if c != "all" else "All tasks", c, direction="min")
            for c in ("survival", "classification", "sequential", "all")
        ),
    ),
    "table13_task_ece": TableSpec(
        caption="ECE by task over valid runs (mean ± SD). † two valid runs; ‡ one valid run. "
        "Bold: lowest agent value per task.",
        pivot=("task", "agent"),
        cell=_PER_TASK_SCORE,
        direction="min",
    ),
    "fig2a_ece_decomposition": TableSpec(
        caption="Contributions of practice groups to the ECE difference from the simple "
        "baselines (valid agent runs).",
        labels=("group",),
        stats=(
            Stat("Runs", "n_runs", integer=True),
            Stat("Share of runs", "share_of_runs", percent=True, decimals=0),
            Stat("Share of ECE difference", "share_of_difference", percent=True, decimals=0),
            Stat("Mean ECE", "mean_ece"),
        ),
    ),
    "table5_external": TableSpec(
        caption="Performance under population shift: mean normalised score on the external "
        "task; parentheses: ratio to the score without the shift. Bold: best agent per task.",
        pivot=("task", "agent"),
        cell=Stat("score", "score"),
        extra="ratio",
        direction="max",
    ),
    "table7_llm": TableSpec(
        caption="One agent with several LLMs: penalised score (mean ± SD over repetitions), "
        "ECE averaged across tasks, valid-run rate and tokens per run (millions).",
        labels=("llm",),
        stats=(
            _ms("Penalised score", "penalized", "max"),
            Stat("ECE", "ece_mean", direction="min"),
            Stat("Valid runs", "valid_rate", direction="max", percent=True, decimals=0),
            Stat("Tokens (M)", "tokens_m_mean", decimals=2),
        ),
        exclude_from_best=(),
    ),
    "table4_objectives": TableSpec(
        caption="Calibration under the evaluation objectives (mean ± SD over valid runs). "
        "Bold: best value across objectives.",
        labels=("objective",),
        stats=(
            Stat("Valid runs", "n_valid", integer=True),
            _ms("AUROC", "auroc", "max"),
            _ms("Brier", "brier", "min"),
            _ms("ECE", "ece", "min"),
        ),
        exclude_from_best=(),
    ),
    "table11_tokens": TableSpec(
        caption="Tokens per run (millions; mean ± SD over repetitions).",
        labels=("agent",),
        stats=(_ms("Tokens per run (M)", "tokens_m", None, 2),),
    ),
}
