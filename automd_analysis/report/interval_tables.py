"""Bootstrap intervals in the rendered paper tables: ``0.350 ± 0.063 [0.278, 0.424]``.

Tables 2, 3, 5 and 7 carry interval columns (``<name>_ci_low`` / ``<name>_ci_high``,
:mod:`automd_analysis.analysis.intervals`). The CSV holds them as numbers like every other column;
this module adds them to the LaTeX/HTML rendering: after the displayed value of each column listed
in :data:`INTERVAL_DISPLAYS`, the interval in brackets (``[low, high]``, same decimals; a percent
column in percent), and a sentence saying what the brackets are at the end of the caption. A row
without an interval (missing bound) shows no brackets; a table without any interval (a store
scored without replicates) renders exactly as before, caption included.

:func:`display_frame` and :func:`export_table` are drop-in versions of the functions of the same
name in :mod:`automd_analysis.report.tables` (used by
:meth:`automd_analysis.report.notebook.Report.table`): for any other table they return exactly
what those return.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from automd_analysis.report import tables as _tables

__all__ = [
    "INTERVAL_DISPLAYS",
    "INTERVAL_NOTE",
    "IntervalColumn",
    "IntervalDisplay",
    "IntervalStatus",
    "caption_with_intervals",
    "display_frame",
    "export_table",
    "format_interval",
    "interval_status",
    "rendered",
]

#: Sentence appended to the caption of a table that shows intervals.
INTERVAL_NOTE = (
    "Brackets: 95% two-stage bootstrap interval (the runs of each agent redrawn within each task, "
    "then the test patients of each drawn run; the tasks are held fixed)."
)


@dataclass(frozen=True)
class IntervalColumn:
    """One displayed column that gets an interval.

    Attributes
    ----------
    title : str
        Displayed column title (a :class:`~automd_analysis.report.tables.Stat` title), or for a
        pivot table the name of the value column whose interval is shown (``"extra"``: the
        parenthesised extra value).
    low, high : str
        Interval columns of the frame.
    percent : bool
        Show the bounds x 100 with ``%`` (no decimals), like a percent cell.
    """

    title: str
    low: str
    high: str
    percent: bool = False


@dataclass(frozen=True)
class IntervalDisplay:
    """Which columns of a table show intervals (wide tables by title; pivot tables: the extra)."""

    columns: tuple[IntervalColumn, ...]


#: Tables whose rendering shows intervals (keyed by CSV file stem).
INTERVAL_DISPLAYS: dict[str, IntervalDisplay] = {
    "table2_primary_scores": IntervalDisplay(
        (
            IntervalColumn("Penalised score", "penalized_ci_low", "penalized_ci_high"),
            IntervalColumn("Non-penalised score", "nonpenalized_ci_low", "nonpenalized_ci_high"),
        )
    ),
    "table3_ece": IntervalDisplay(
        (
            IntervalColumn("Survival", "survival_ci_low", "survival_ci_high"),
            IntervalColumn("Classification", "classification_ci_low", "classification_ci_high"),
            IntervalColumn("Sequential", "sequential_ci_low", "sequential_ci_high"),
            IntervalColumn("All tasks", "all_ci_low", "all_ci_high"),
        )
    ),
    "table5_external": IntervalDisplay(
        (IntervalColumn("extra", "ratio_ci_low", "ratio_ci_high", percent=True),)
    ),
    "pairwise_comparisons": IntervalDisplay(
        (IntervalColumn("Mean difference (A - B)", "ci_low", "ci_high"),)
    ),
    "table7_llm": IntervalDisplay(
        (
            IntervalColumn("Penalised score", "penalized_ci_low", "penalized_ci_high"),
            IntervalColumn("ECE", "ece_ci_low", "ece_ci_high"),
        )
    ),
}


def _finite(value) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


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
    automd_analysis.report.tables.format_number : the number format.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, ch. 13 (percentile
       intervals). Chapman & Hall.

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
        lo, hi = (_tables.format_number(100 * float(v), 0) for v in (low, high))
        return f"[{lo}%, {hi}%]"
    return f"[{_tables.format_number(low, decimals)}, {_tables.format_number(high, decimals)}]"


def _applicable(frame: pd.DataFrame, name: str) -> list[IntervalColumn]:
    display = INTERVAL_DISPLAYS.get(name)
    if display is None:
        return []
    out = []
    for column in display.columns:
        if column.low in frame.columns and column.high in frame.columns:
            low = pd.to_numeric(frame[column.low], errors="coerce")
            high = pd.to_numeric(frame[column.high], errors="coerce")
            if (low.notna() & high.notna()).any():
                out.append(column)
    return out


def caption_with_intervals(frame: pd.DataFrame, name: str, caption: str) -> str:
    """``caption`` plus :data:`INTERVAL_NOTE` when the rendering of ``frame`` shows intervals.

    See Also
    --------
    display_frame : the rendering.

    References
    ----------
    .. [1] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 3.8.

    Examples
    --------
    >>> frame = pd.DataFrame({"llm": ["x"], "ece_mean": [0.1], "ece_ci_low": [0.08],
    ...     "ece_ci_high": [0.12]})
    >>> caption_with_intervals(frame, "table7_llm", "Table 7.").startswith("Table 7. Brackets")
    True
    >>> caption_with_intervals(frame.assign(ece_ci_low=float("nan")), "table7_llm", "Table 7.")
    'Table 7.'
    """
    if not _applicable(frame, name):
        return caption
    return f"{caption} {INTERVAL_NOTE}".strip()


def display_frame(
    frame: pd.DataFrame, spec: _tables.TableSpec | None, name: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The table as display strings and bold mask, with intervals after the listed columns.

    :func:`automd_analysis.report.tables.display_frame`, then for every column of
    :data:`INTERVAL_DISPLAYS` ``[name]`` present in ``frame``: cell text + ``" "`` +
    :func:`format_interval` of the row's bounds (wide tables: the column with that title, rows in
    frame order; pivot tables: the parenthesised extra value of the (row, column) cell, e.g.
    ``0.286 (140% [71%, 364%])``). Bold marks are those of the plain rendering (the best value,
    not the interval).

    Parameters
    ----------
    frame : DataFrame
        The analysis table with its interval columns.
    spec : TableSpec or None
    name : str
        Export name (selects the interval columns).

    Returns
    -------
    (DataFrame, DataFrame)
        Display strings and bold mask.

    See Also
    --------
    automd_analysis.report.tables.display_frame : the rendering without intervals.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, ch. 13.

    Examples
    --------
    >>> from automd_analysis.report.tables import TABLE_SPECS
    >>> frame = pd.DataFrame({"llm": ["x"], "penalized_mean": [0.5], "penalized_sd": [0.01],
    ...     "ece_mean": [0.1], "valid_rate": [1.0], "tokens_m_mean": [2.0],
    ...     "penalized_ci_low": [0.45], "penalized_ci_high": [0.55],
    ...     "ece_ci_low": [0.08], "ece_ci_high": [0.12]})
    >>> text, _ = display_frame(frame, TABLE_SPECS["table7_llm"], "table7_llm")
    >>> text.loc[0, ["Penalised score", "ECE"]].tolist()
    ['0.500 ± 0.010 [0.450, 0.550]', '0.100 [0.080, 0.120]']
    """
    text, bold = _tables.display_frame(frame, spec)
    columns = _applicable(frame, name) if spec is not None else []
    if not columns:
        return text, bold
    frame = frame.reset_index(drop=True)
    text = text.copy()
    decimals = spec.decimals
    if spec.pivot is None:
        for column in columns:
            if column.title not in text.columns:
                continue
            for i in range(len(frame)):
                ci = format_interval(
                    frame.at[i, column.low], frame.at[i, column.high], decimals, column.percent
                )
                if ci and text.at[i, column.title] != _tables.MISSING:
                    text.at[i, column.title] = f"{text.at[i, column.title]} {ci}"
        return text, bold
    row_key, col_key = spec.pivot
    rows = {str(r): i for i, r in enumerate(dict.fromkeys(frame[row_key]))}
    for column in columns:
        for record in frame.to_dict("records"):
            i, col = rows.get(str(record[row_key])), record[col_key]
            if i is None or col not in text.columns:
                continue
            ci = format_interval(record[column.low], record[column.high], decimals, column.percent)
            cell = str(text.at[i, col])
            if ci and column.title == "extra" and cell.endswith(")"):
                text.at[i, col] = f"{cell[:-1]} {ci})"
            elif ci and column.title != "extra" and cell != _tables.MISSING:
                text.at[i, col] = f"{cell} {ci}"
    return text, bold


def export_table(
    frame: pd.DataFrame,
    name: str,
    out_dir: str | Path,
    *,
    spec: _tables.TableSpec | None = None,
    caption: str | None = None,
) -> dict[str, Path]:
    """Write ``<out_dir>/tables/<name>.csv``, ``.tex`` and ``.html``, intervals in the rendering.

    Exactly :func:`automd_analysis.report.tables.export_table` (same CSV, same files) except that
    the LaTeX/HTML cells come from :func:`display_frame` and the caption from
    :func:`caption_with_intervals`. Files are replaced atomically; same input, same bytes.

    Parameters
    ----------
    frame : DataFrame
    name : str
        Plain file stem.
    out_dir : str or Path
    spec : TableSpec, optional
        Display spec (default: :data:`automd_analysis.report.tables.TABLE_SPECS` ``[name]``).
    caption : str, optional
        Overrides the spec's caption (the interval note is still appended).

    Returns
    -------
    dict with keys ``csv``, ``tex``, ``html`` -> written paths.

    Raises
    ------
    ValueError
        ``name`` is not a plain file stem.

    See Also
    --------
    automd_analysis.report.tables.export_table

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, ch. 13.

    Examples
    --------
    >>> import tempfile
    >>> frame = pd.DataFrame({"llm": ["x"], "penalized_mean": [0.5], "penalized_sd": [0.01],
    ...     "ece_mean": [0.1], "valid_rate": [1.0], "tokens_m_mean": [2.0],
    ...     "penalized_ci_low": [0.45], "penalized_ci_high": [0.55],
    ...     "ece_ci_low": [0.08], "ece_ci_high": [0.12]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     paths = export_table(frame, "table7_llm", tmp)
    ...     "[0.450, 0.550]" in paths["html"].read_text()
    True
    """
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*", name):
        raise ValueError(f"table name {name!r} must be a plain file stem")
    spec = spec if spec is not None else _tables.TABLE_SPECS.get(name)
    text, bold, caption = rendered(frame, name, spec, caption)
    return _tables.write_rendered(frame, text, bold, name, out_dir, caption=caption)


def rendered(
    frame: pd.DataFrame,
    name: str,
    spec: _tables.TableSpec | None,
    caption: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Display strings, bold mask and caption of a table, intervals included.

    :func:`display_frame` and :func:`caption_with_intervals`, then the columns that repeat one
    value on every row folded into the caption
    (:func:`automd_analysis.report.presentation.fold_constant_columns`). This is what the
    exported LaTeX/HTML and the report page show.

    Parameters
    ----------
    frame : DataFrame
    name : str
        Export name (selects the interval columns).
    spec : TableSpec or None
    caption : str, optional
        Overrides the spec's caption (the interval note is still appended).

    Returns
    -------
    (DataFrame, DataFrame, str)

    See Also
    --------
    automd_analysis.report.tables.rendered : the same without intervals.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, ch. 13.

    Examples
    --------
    >>> frame = pd.DataFrame({"agent": ["a", "b", "c"], "n_tasks": [9, 9, 9],
    ...     "score": [0.5, 0.6, 0.7]})
    >>> text, _, caption = rendered(frame, "custom", None, "Scores.")
    >>> list(text.columns), caption
    (['agent', 'score'], 'Scores. Same in every row: n_tasks 9.')
    """
    from automd_analysis.report.presentation import fold_constant_columns

    base = caption if caption is not None else (spec.caption if spec else "")
    caption = caption_with_intervals(frame, name, base) if spec is not None else base
    text, bold = display_frame(frame, spec, name)
    return fold_constant_columns(text, bold, caption)


@dataclass(frozen=True)
class IntervalStatus:
    """What the intervals of a report rest on; Jupyter shows it as one paragraph.

    Attributes
    ----------
    n_replicates : int
        Bootstrap replicates per run in the score store (0: none, no intervals).
    bootstrap_seed : int or None
        Seed of the test-patient resamples (``store.json`` settings), if recorded.
    seed : int
        Seed of the repetition draws of the two-stage bootstrap (the notebook's ``seed``).
    """

    n_replicates: int
    bootstrap_seed: int | None
    seed: int

    def _repr_markdown_(self) -> str:
        if self.n_replicates == 0:
            return (
                "**No bootstrap intervals:** the score store has no bootstrap replicates (it was "
                "scored with `--bootstrap 0` or by an older version), so the tables below have "
                "empty interval columns and no pair of agents is compared. Re-score with "
                "`automd score ARCHIVE --bootstrap 1000` (or `automd regenerate`)."
            )
        seed = "" if self.bootstrap_seed is None else f" (resample seed {self.bootstrap_seed})"
        return (
            f"Intervals: 95% two-stage bootstrap with {self.n_replicates} iterations: the runs "
            f"of each agent and task redrawn (seed {self.seed}), then the test patients of each "
            f"drawn run, shared by every agent on the task{seed}."
        )

    def __repr__(self) -> str:
        return self._repr_markdown_().replace("**", "").replace("`", "")


def interval_status(store, seed: int = 0) -> IntervalStatus:
    """The :class:`IntervalStatus` of a score store.

    Parameters
    ----------
    store : ScoreStore
    seed : int, default 0
        The notebook's seed (repetition draws).

    Returns
    -------
    IntervalStatus

    See Also
    --------
    automd_analysis.analysis.intervals.n_replicates

    References
    ----------
    .. [1] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 3.8.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> status = interval_status(SimpleNamespace(replicates=None, meta={}), seed=3)
    >>> status.n_replicates, status.seed
    (0, 3)
    >>> repr(status).startswith("No bootstrap intervals")
    True
    """
    from automd_analysis.analysis.intervals import n_replicates

    settings = (store.meta or {}).get("settings") or {}
    boot_seed = settings.get("bootstrap_seed")
    return IntervalStatus(
        n_replicates=n_replicates(store),
        bootstrap_seed=None if boot_seed is None else int(boot_seed),
        seed=int(seed),
    )
