"""How a table reads on a report page: number formats, paired columns, repeated values, length.

The analyses return tidy tables whose column names are stable CSV names (``auroc_mean``,
``p_holm``, ``n_mean``). A table with a registered display spec is rendered as the spec says
(:mod:`automd_analysis.report.tables`); every other table is rendered by :func:`default_display`.
A declared table (:mod:`automd_analysis.analysis.catalog`) is read from its declaration: each
column's kind (``Column(..., kind=...)``, :data:`~automd_analysis.analysis.catalog.declaration.KINDS`),
its ``mean ± SD`` pairs (``Column(..., sd_of=...)``) and its interval columns; nothing about how a
value reads is taken from a declared column's name. Only a frame without a declaration (a table
of your own passed to ``report.table``) is read from its column names (:func:`column_kind`):

- ``<x>_mean`` with ``<x>_sd`` (and ``mean`` with ``sd``, or a value column ``<x>`` with
  ``<x>_sd``) become one ``mean ± SD`` column;
- counts (``n``, ``n_*``, ``*_n``, ``runs``, ``rep``...) print as integers, or with one decimal when
  they are means of counts;
- p-values (``p``, ``p_value``, ``p_holm``) print with three decimals, ``< 0.001`` below 0.001
  (:func:`format_p_value`);
- shares and rates in [0, 1] (``share*``, ``*_share``, ``*_rate``, ``fraction*``) print as percent;
  percentages (``*pct*``, ``percent``) get a ``%``.

For both:

- numbers inside interval labels (``age T1 [18.146, 55.4003)``) are rounded for reading
  (:func:`format_interval_label`);
- other numbers print with three decimals (one when the column reaches 100);
- a column's 95% interval (its declared ``<x>_ci_low``/``<x>_ci_high`` columns) follows its value
  in brackets, ``0.124 ± 0.020 [0.101, 0.150]``, as in tables with a spec;
- headers are the declared titles (``Column(..., title=...)``), else the CSV name as
  :func:`readable_header` reads it (``n_runs`` -> ``n runs``): no page shows a raw CSV name.

For every rendered table (spec or not), :func:`fold_constant_columns` removes the columns that
repeat one value on every row and says it once in the caption, and :func:`is_long` decides whether
a page shows the table collapsed (plain HTML ``<details>``, no script).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence

import numpy as np
import pandas as pd

from automd_analysis.analysis.catalog.declaration import Table, TableDeclarationError
from automd_analysis.docstrings import COLE_2015, fill_doc
from automd_analysis.precision import comparable_scalar
from automd_analysis.stats import wording

__all__ = [
    "LONG_TABLE_ROWS",
    "MIN_ROWS_TO_FOLD",
    "column_kind",
    "default_display",
    "fold_constant_columns",
    "format_interval_label",
    "format_p_value",
    "is_long",
    "readable_header",
]

#: A table with more body rows than this is shown collapsed on a report page.
LONG_TABLE_ROWS = 15
#: Constant columns are folded into the caption only from this many rows on (a one- or two-row
#: table repeats every value by construction).
MIN_ROWS_TO_FOLD = 3

_MISSING = "\N{EN DASH}"
_PLUS_MINUS = "\N{PLUS-MINUS SIGN}"
_P_COLUMNS = frozenset({"p", "p_value", "p_holm", "pvalue", "p_adjusted"})
_COUNT_NAMES = frozenset(
    {"n", "runs", "valid", "tasks", "rep", "reps", "pairs", "count", "group_size", "pair_index"}
)
_ACRONYMS = {
    "auroc": "AUROC",
    "auprc": "AUPRC",
    "ece": "ECE",
    "brier": "Brier",
    "ici": "ICI",
    "tokens_m": "tokens (M)",
    "penalized": "penalised score",
    "nonpenalized": "non-penalised score",
    "rho": "rho",
}
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_INTERVAL = re.compile(r"([\[(])\s*([^,\[\]()]+?)\s*,\s*([^,\[\]()]+?)\s*([\])])")


def _is_missing(value) -> bool:
    if value is None or value is pd.NA:
        return True
    try:
        return isinstance(value, float | np.floating) and math.isnan(value)
    except TypeError:
        return False


def _fixed(value: float, decimals: int) -> str:
    value = round(comparable_scalar(value), decimals)
    return f"{0.0 if value == 0 else value:.{decimals}f}"


def format_p_value(p) -> str:
    """A p-value for reading: :func:`automd_analysis.stats.wording.p_value` (three decimals,
    ``< 0.001`` below 0.001: the report's p-values are never 0, and an exponent would only suggest
    a precision the resampling does not have); a missing value ``–``.

    Parameters
    ----------
    p : float or None

    Returns
    -------
    str

    See Also
    --------
    default_display : applies it to the columns named ``p``, ``p_value``, ``p_holm``.

    References
    ----------
    .. [1] American Medical Association (2020). AMA Manual of Style, 11th ed., sec. 19.5 (report
       P values to three decimals; smaller values as P < .001).

    Examples
    --------
    >>> format_p_value(1.36e-43), format_p_value(0.0123), format_p_value(0.00099)
    ('< 0.001', '0.012', '< 0.001')
    >>> format_p_value(float("nan"))
    '–'
    """
    if _is_missing(p):
        return _MISSING
    return wording.p_value(float(p))


def _round_for_reading(token: str) -> str:
    value = float(token)
    if not math.isfinite(value) or value == int(value):
        return token if "e" not in token.lower() else f"{value:g}"
    magnitude = abs(value)
    decimals = 1 if magnitude >= 1 else max(1, 1 - int(math.floor(math.log10(magnitude))))
    text = f"{round(value, decimals):.{decimals}f}".rstrip("0").rstrip(".")
    return text


@fill_doc(cole_2015=COLE_2015)
def format_interval_label(text: str) -> str:
    """Round the numbers of interval labels such as ``age T1 [18.146, 55.4003)`` for reading.

    Inside every ``[a, b)``, ``(a, b]``, ``[a, b]`` ... each number that is not a whole number is
    rounded: one decimal from 1 on, two significant digits below 1 (``0.04567`` -> ``0.046``);
    trailing zeros are dropped. Text outside brackets, whole numbers and non-numbers are kept.

    Parameters
    ----------
    text : str
        A label with intervals, e.g. a covariate's bins.

    Returns
    -------
    str
        The label with the numbers inside its brackets rounded.

    See Also
    --------
    default_display

    References
    ----------
    {cole_2015}

    Examples
    --------
    >>> format_interval_label("age T1 [18.146, 55.4003)")
    'age T1 [18.1, 55.4)'
    >>> format_interval_label("bin (0.04567, 0.1]")
    'bin (0.046, 0.1]'
    >>> format_interval_label("age T3 [70, 95]")
    'age T3 [70, 95]'
    """

    def bracket(match: re.Match) -> str:
        parts = []
        for bound in (match.group(2), match.group(3)):
            parts.append(_NUMBER.sub(lambda m: _round_for_reading(m.group(0)), bound))
        return f"{match.group(1)}{parts[0]}, {parts[1]}{match.group(4)}"

    return _INTERVAL.sub(bracket, str(text))


def _base(name: str) -> str:
    for suffix in ("_mean", "_sd"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def column_kind(name: str) -> str:
    """How a column of numbers reads, guessed from its CSV name: only for a frame without a
    declaration (a declared table states each column's kind, ``Column(..., kind=...)``).

    Returns one of ``"p"`` (p-value), ``"count"``, ``"percent"`` (already 0-100), ``"share"``
    (0-1, shown as percent), ``"fraction"`` (0-1, small: percent with two decimals) or
    ``"number"``. A ``_mean``/``_sd`` suffix is ignored.

    Parameters
    ----------
    name : str
        A CSV column name.

    Returns
    -------
    str
        One of the kinds above.

    See Also
    --------
    default_display

    References
    ----------
    .. [1] Lang TA, Altman DG (2015). Basic statistical reporting for articles published in
       biomedical journals: the SAMPL guidelines. Int J Nurs Stud 52(1):5-9.

    Examples
    --------
    >>> [column_kind(c) for c in ("p_holm", "n_mean", "share_of_runs", "pct_mean", "auroc_mean")]
    ['p', 'count', 'share', 'percent', 'number']
    """
    base = _base(str(name).lower())
    if base in _P_COLUMNS:
        return "p"
    if (
        base in _COUNT_NAMES
        or base.startswith("n_")
        or base.endswith("_n")
        or base.startswith("count")
        or base.endswith("_count")
    ):
        return "count"
    if "pct" in base or base.startswith("percent") or base.endswith("_percent"):
        return "percent"
    if base.startswith("fraction") or "_fraction" in base:
        return "fraction"
    if base.startswith("share") or base.endswith("_share") or base.endswith("_rate"):
        return "share"
    return "number"


def _format(value, kind: str, decimals: int) -> str:
    if _is_missing(value):
        return _MISSING
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if not isinstance(value, int | float | np.integer | np.floating):
        return format_interval_label(str(value))
    if isinstance(value, int | np.integer) and kind not in ("share", "fraction"):
        return str(int(value)) + ("%" if kind == "percent" else "")
    value = float(value)
    if kind == "p":
        return format_p_value(value)
    if kind == "count":
        return str(int(round(value))) if value == round(value) else _fixed(value, 1)
    if kind == "percent":
        return _fixed(value, 0) + "%"
    if kind == "share":
        return _fixed(100 * value, 0) + "%"
    if kind == "fraction":
        return _fixed(100 * value, 2) + "%"
    return _fixed(value, decimals)


def _decimals(values: pd.Series) -> int:
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    finite = numbers[np.isfinite(numbers)]
    return 1 if finite.size and np.abs(finite).max() >= 100 else 3


def _pairs(columns: Sequence[str]) -> dict[str, str]:
    """Value column -> its SD column guessed from the names (``x_mean``/``x_sd``, ``mean``/``sd``,
    ``x``/``x_sd``): a frame without a declaration only."""
    present = set(columns)
    pairs = {}
    for column in columns:
        if column.endswith("_sd") or column == "sd":
            continue
        sd = "sd" if column == "mean" else f"{_base(column)}_sd"
        if sd in present and sd != column:
            pairs[column] = sd
    return pairs


def _spelled(title: str) -> str:
    """The report's spelling (British, as in the prose): CSV names say ``penalized``."""
    return title.replace("nonpenalized", "non-penalised").replace("penalized", "penalised")


#: Whole CSV names whose header is not their words (p-value columns read as the spec tables'
#: ``p`` and ``Holm p``).
_HEADERS = {"p_value": "p", "p_holm": "Holm p", "pvalue": "p", "p_adjusted": "adjusted p"}
#: Words of CSV names written as on the page.
_HEADER_WORDS = {"auroc": "AUROC", "auprc": "AUPRC", "ece": "ECE", "ici": "ICI", "id": "ID",
                 "llm": "LLM", "sd": "SD", "ci": "CI", "km": "KM", "pct": "%"}  # fmt: skip


def readable_header(name: str) -> str:
    """A CSV column name as a page header: words instead of ``_``, acronyms in capitals, the
    report's spelling (``penalised``).

    Parameters
    ----------
    name : str
        A CSV column name (``snake_case``).

    Returns
    -------
    str
        The header; a declared ``Column(title=...)`` wins over it.

    See Also
    --------
    column_kind : how the values under the header read.

    References
    ----------
    .. [1] Lang TA, Altman DG (2015). The SAMPL guidelines. Int J Nurs Stud 52(1):5-9.

    Examples
    --------
    >>> [readable_header(c) for c in ("n_runs", "run_id", "p_holm", "ece", "share_of_invalid")]
    ['n runs', 'run ID', 'Holm p', 'ECE', 'share of invalid']
    """
    name = str(name)
    if name in _HEADERS:
        return _HEADERS[name]
    words = [_HEADER_WORDS.get(w, w) for w in name.split("_") if w]
    return _spelled(" ".join(words) or name)


def _title(
    column: str,
    paired: bool,
    titles: Mapping[str, str] | None = None,
    readable: Collection[str] | None = None,
) -> str:
    if titles and column in titles:
        return titles[column]
    title = _paired_title(column, paired)
    if title == column and (readable is None or column in readable):
        title = readable_header(column)
    return _spelled(title)


def _paired_title(column: str, paired: bool) -> str:
    base = _base(column)
    if not paired:
        if column.endswith("_mean") and base in _ACRONYMS:  # a mean without its SD column
            return f"{_ACRONYMS[base]} (mean)"
        return column
    if column == "mean":
        return f"mean {_PLUS_MINUS} SD"
    if not column.endswith("_mean"):
        return column  # a value column with its own SD column (e.g. one column per agent)
    return f"{_ACRONYMS.get(base, readable_header(base))} (mean {_PLUS_MINUS} SD)"


def default_display(
    df: pd.DataFrame,
    *,
    titles: Mapping[str, str] | None = None,
    intervals: Mapping[str, tuple[str, str]] | None = None,
    readable: Collection[str] | None = None,
    declared: Table | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Display strings of a table without a display spec, and an all-false bold mask.

    With ``declared``, each column reads as its declaration says: its kind
    (:meth:`~automd_analysis.analysis.catalog.declaration.Table.kinds_in`: integer counts,
    p-values, percentages, three decimals...) and its ``mean ± SD`` pairs
    (:meth:`~automd_analysis.analysis.catalog.declaration.Table.sds_in`). Without one - a frame a
    user publishes without declaring it - the kinds and pairs are guessed from the column names
    (:func:`column_kind`; the module docstring's rules). Either way: rounded interval labels,
    intervals in brackets after their values, readable headers.

    Parameters
    ----------
    df : DataFrame
        An analysis table.
    titles : mapping, optional
        Column -> header (a table's declared titles); other columns by :func:`readable_header`.
    intervals : mapping, optional
        Value column -> its ``(low, high)`` interval columns (the declaration's): the bounds are
        shown in brackets after the value, in the value's format, and their columns are not
        shown.
    readable : collection of str, optional
        The columns whose names are headers to be read (:func:`readable_header`): a table's
        declared columns. Others - an agent's or a task's name as a column of a wide table - are
        shown as they are. Default: every column.
    declared : Table, optional
        The table's declaration: how each column reads. ``None``: guessed from the names.

    Returns
    -------
    (DataFrame, DataFrame)
        Display strings (columns in the table's order, an SD column merged into its value
        column, interval columns into theirs) and the bold mask (nothing bold).

    Raises
    ------
    TableDeclarationError
        ``declared`` gives a number column of ``df`` no kind.

    See Also
    --------
    automd_analysis.report.tables.display_frame : spec-driven rendering; calls this without one.

    References
    ----------
    .. [1] Lang TA, Altman DG (2015). The SAMPL guidelines. Int J Nurs Stud 52(1):5-9.

    Examples
    --------
    >>> frame = pd.DataFrame({"agent": ["a"], "auroc_mean": [0.81234], "auroc_sd": [0.0123],
    ...     "n_mean": [498.0], "p_holm": [1.36e-43]})
    >>> text, _ = default_display(frame)
    >>> text.iloc[0].to_dict()
    {'agent': 'a', 'AUROC (mean ± SD)': '0.812 ± 0.012', 'n mean': '498', 'Holm p': '< 0.001'}
    >>> gaps = pd.DataFrame({"n_runs": [3], "gap_mean": [0.12345], "gap_mean_ci_low": [0.1],
    ...     "gap_mean_ci_high": [0.15]})
    >>> default_display(gaps, titles={"gap_mean": "Gap"},
    ...     intervals={"gap_mean": ("gap_mean_ci_low", "gap_mean_ci_high")})[0].iloc[0].to_dict()
    {'n runs': '3', 'Gap': '0.123 [0.100, 0.150]'}
    >>> from automd_analysis.analysis.catalog.declaration import Column, Table
    >>> runs = Table("runs", "nb", "Runs.", (Column("agent", "str"),
    ...     Column("n_runs", kind="number")))
    >>> default_display(pd.DataFrame({"agent": ["a"], "n_runs": [3.0]}),
    ...     declared=runs)[0].iloc[0].to_dict()
    {'agent': 'a', 'n runs': '3.000'}
    """
    frame = df.reset_index(drop=True)
    present = set(map(str, frame.columns))
    shown = {
        value: bounds
        for value, bounds in (intervals or {}).items()
        if value in present and all(b in present for b in bounds)
    }
    bound_columns = {b for bounds in shown.values() for b in bounds}
    unbound = [c for c in map(str, frame.columns) if c not in bound_columns]
    if declared is None:
        pairs = _pairs(unbound)
        kinds = {c: column_kind(c) for c in map(str, frame.columns)}
    else:
        pairs = {
            v: sd for v, sd in declared.sds_in(frame).items() if v in unbound and sd in present
        }
        kinds = _declared_kinds(frame, declared)
    sds = set(pairs.values())
    text = pd.DataFrame(index=frame.index)
    for column in frame.columns:
        name = str(column)
        if name in sds or name in bound_columns:
            continue
        kind = kinds[name]
        decimals = _decimals(frame[column])
        values = [_format(v, kind, decimals) for v in frame[column]]
        if name in pairs:
            sd_kind = kinds[pairs[name]]
            sds_text = [_format(v, sd_kind, decimals) for v in frame[pairs[name]]]
            values = [
                v if sd == _MISSING or v == _MISSING else _merge_sd(v, sd)
                for v, sd in zip(values, sds_text, strict=True)
            ]
        if name in shown:
            low, high = (frame[b] for b in shown[name])
            values = [
                v if v == _MISSING or _is_missing(lo) or _is_missing(hi)
                else f"{v} [{_format(lo, kind, decimals)}, {_format(hi, kind, decimals)}]"
                for v, lo, hi in zip(values, low, high, strict=True)
            ]  # fmt: skip
        text[_title(name, name in pairs, titles, readable)] = values
    text = text.astype(object)
    return text, pd.DataFrame(False, index=text.index, columns=text.columns)


def _declared_kinds(frame: pd.DataFrame, declared: Table) -> dict[str, str]:
    """Column -> its declared kind, for every column of ``frame``."""
    kinds = declared.kinds_in(frame)
    missing = [str(c) for c in frame.columns if kinds.get(str(c)) is None]
    if missing:
        raise TableDeclarationError(
            f"table {declared.name!r} declares no kind for {', '.join(missing)}",
            location=f"table {declared.name}",
            fix="state how each number column reads: Column(..., kind=...) in "
            "automd_analysis/analysis/catalog",
            code="table.kind",
        )
    return {str(c): kinds[str(c)] for c in frame.columns}


def _merge_sd(value: str, sd: str) -> str:
    if value.endswith("%") and sd.endswith("%"):
        return f"{value[:-1]} {_PLUS_MINUS} {sd}"
    return f"{value} {_PLUS_MINUS} {sd}"


def fold_constant_columns(
    text: pd.DataFrame,
    bold: pd.DataFrame,
    caption: str = "",
    *,
    min_rows: int = MIN_ROWS_TO_FOLD,
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Remove the columns that show one value on every row and say it once in the caption.

    A column is folded when the table has at least ``min_rows`` rows and every displayed cell of
    the column is the same string; the caption gets ``"Same in every row: <title> <value>; ..."``.
    The first column (the row labels) is never folded, nor the last remaining one.

    Parameters
    ----------
    text, bold : DataFrame
        Display strings and bold mask (same shape).
    caption : str
    min_rows : int, default :data:`MIN_ROWS_TO_FOLD`

    Returns
    -------
    (DataFrame, DataFrame, str)
        The remaining columns and the caption with the note.

    See Also
    --------
    default_display

    References
    ----------
    .. [1] Tufte ER (2001). The Visual Display of Quantitative Information, 2nd ed., ch. 4
       (data-ink: erase redundant data-ink).

    Examples
    --------
    >>> text = pd.DataFrame({"agent": ["a", "b", "c"], "Tasks": ["9", "9", "9"],
    ...     "Score": ["0.5", "0.6", "0.7"]})
    >>> folded, _, caption = fold_constant_columns(text, text.map(lambda _: False), "Scores.")
    >>> list(folded.columns), caption
    (['agent', 'Score'], 'Scores. Same in every row: Tasks 9.')
    """
    if len(text) < min_rows or text.shape[1] < 2:
        return text, bold, caption
    folded = []
    keep = [text.columns[0]]
    for column in text.columns[1:]:
        values = text[column].astype(str)
        if values.nunique() == 1:
            folded.append((str(column), values.iloc[0]))
        else:
            keep.append(column)
    if not folded:
        return text, bold, caption
    if len(keep) == 1 and len(text.columns) > 1:
        # never leave only the labels: keep the first folded column
        keep.append(text.columns[1])
        folded = folded[1:]
    note = "Same in every row: " + "; ".join(f"{title} {value}" for title, value in folded) + "."
    caption = f"{caption} {note}".strip() if folded else caption
    return text[keep], bold[keep], caption


def is_long(n_rows: int) -> bool:
    """Whether a page shows a table of ``n_rows`` body rows collapsed (more than
    :data:`LONG_TABLE_ROWS`).

    See Also
    --------
    fold_constant_columns

    References
    ----------
    .. [1] WHATWG HTML Living Standard, "The details element".

    Examples
    --------
    >>> is_long(LONG_TABLE_ROWS), is_long(LONG_TABLE_ROWS + 1)
    (False, True)
    """
    return int(n_rows) > LONG_TABLE_ROWS
