"""What a published table or figure is: its typed columns, their intervals, display and index line.

A :class:`Table` declares, in one place, everything that is published about a table: the CSV
columns in order with their types and how their values read on a page (:class:`Column`,
:class:`PerAgent`, :data:`KINDS`; a value column with its SD column, ``Column(..., sd_of=...)``),
which columns carry a bootstrap interval (``Column(..., interval=True)`` adds ``<stem>_ci_low`` / ``<stem>_ci_high``),
how the LaTeX/HTML rendering shows it (:class:`TableSpec`: ``mean ± SD`` cells, bold-best
direction, daggers, percentages, a pivot of a long table), its number in the source paper, the
report notebook that publishes it, the function that computes it (:attr:`Table.computed_by`:
start reading there) and its one line on the report index. The analysis functions
build their frames with :meth:`Table.frame`; the report checks every published frame against its
declaration, renders it from the declaration and lists it on the index from it. A :class:`Figure`
declares a figure the same way (paper number, notebook, drawing function, index line, caption).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from automd_analysis.analysis.store import BASELINE_AGENT
from automd_analysis.docstrings import COLE_2015, fill_doc
from automd_analysis.errors import AutomdError

__all__ = [
    "DTYPES",
    "EMPTY_NOTE",
    "FEW_VALID_MARKS",
    "FEW_VALID_NOTE",
    "KINDS",
    "Column",
    "Figure",
    "PerAgent",
    "Stat",
    "Table",
    "TableDeclarationError",
    "TableSpec",
    "per_agent_spec",
]

#: Column types: text, integer, float, boolean; any may be missing (None, NaN or NA) - an integer
#: or boolean column without missing values is stored as int64 / bool.
DTYPES = ("str", "int", "float", "bool")

#: How a column's values read on a report page (a table without a display spec shows them so;
#: ``tests/test_column_kinds.py`` checks a display spec against them). Every int and float column
#: of a declared table states its kind; a str column reads as ``"text"``, a bool one as ``"flag"``.
KINDS: Mapping[str, str] = {
    "text": "as it is; numbers inside interval labels rounded (every str column)",
    "flag": "yes / no (every bool column)",
    "count": "an integer; a mean of counts with one decimal",
    "number": "three decimals (one when the column reaches 100)",
    "share": "a proportion 0-1 shown as a whole percent",
    "fraction": "a small proportion 0-1 shown as a percent with two decimals",
    "percent": "already 0-100, shown as a whole percent",
    "p": "a p-value: three decimals, < 0.001 below 0.001",
}
_DTYPE_KINDS = {"str": "text", "bool": "flag"}


#: Marks after a cell computed from few valid runs: two or one (the paper's Tables 12 and 13 use
#: † and ‡; † marks a synthetic task everywhere on the report's pages, so two valid runs get §).
FEW_VALID_MARKS: Mapping[int, str] = {2: "\N{SECTION SIGN}", 1: "\N{DOUBLE DAGGER}"}
#: What a table with no rows says, unless its declaration says more (:attr:`Table.empty`).
EMPTY_NOTE = "No rows: nothing in this archive meets the table's conditions."
#: The caption sentence that explains :data:`FEW_VALID_MARKS`.
FEW_VALID_NOTE = f"{FEW_VALID_MARKS[2]} two valid runs; {FEW_VALID_MARKS[1]} one valid run."


class TableDeclarationError(AutomdError):
    """A computed table does not have the columns its declaration lists (a bug, not bad input)."""


@dataclass(frozen=True)
class Column:
    """One CSV column.

    Attributes
    ----------
    name : str
    dtype : {"str", "int", "float", "bool"}
    interval : bool
        The column has a 95 % bootstrap interval, in the columns :attr:`ci_columns`.
    ci : str, optional
        Stem of the interval columns; default: ``name`` itself (the interval of ``penalized_mean``
        is ``penalized_mean_ci_low``/``penalized_mean_ci_high``); ``""`` for the bare
        ``ci_low``/``ci_high`` of a table's one estimate (``diff_mean``, ``estimate``, ``value``).
    bias_corrected : bool
        The value is the bootstrap bias-corrected estimate and its interval the symmetric interval
        of :func:`~automd_analysis.stats.intervals.bias_corrected` (docs/statistics.md section 9),
        not the percentile interval; by convention such a column is named ``<X>_bc``.
    title : str, optional
        The column's header on a report page when the table has no display spec; default: the
        name as :func:`automd_analysis.report.presentation.readable_header` reads it.
    kind : str, optional
        How its values read on a page, one of :data:`KINDS`; required for an int or float column
        (a str column reads as ``"text"``, a bool one as ``"flag"``), and taken from the value
        column by an SD column (``sd_of``).
    sd_of : str, optional
        This column is the SD of the column ``sd_of`` (declared in the same table): a page shows
        the two as one ``mean ± SD`` column.
    """

    name: str
    dtype: str = "float"
    interval: bool = False
    ci: str | None = None
    bias_corrected: bool = False
    title: str | None = None
    kind: str | None = None
    sd_of: str | None = None

    def __post_init__(self):
        if self.dtype not in DTYPES:
            raise ValueError(f"column {self.name!r}: dtype must be one of {DTYPES}")
        allowed = (_DTYPE_KINDS[self.dtype],) if self.dtype in _DTYPE_KINDS else tuple(KINDS)
        if self.kind is not None and self.kind not in allowed:
            raise ValueError(f"column {self.name!r}: kind must be one of {allowed}")

    @property
    def reads(self) -> str | None:
        """Its kind (:data:`KINDS`): the declared one, else its dtype's (``None``: not declared;
        an SD column's is its value column's, :meth:`Table.kinds_in`)."""
        return self.kind or _DTYPE_KINDS.get(self.dtype)

    @staticmethod
    def texts(*names: str) -> tuple[Column, ...]:
        """Text columns (``str``), e.g. a table's keys: ``Column.texts("task", "agent")``."""
        return tuple(Column(name, "str") for name in names)

    @staticmethod
    def counts(*names: str) -> tuple[Column, ...]:
        """Integer columns of counts (``int``, kind ``"count"``): ``Column.counts("n_runs")``."""
        return tuple(Column(name, "int", kind="count") for name in names)

    @staticmethod
    def numbers(*names: str, interval: bool = False) -> tuple[Column, ...]:
        """Float columns read as plain numbers (kind ``"number"``), each with an interval if
        ``interval``."""
        return tuple(Column(name, interval=interval, kind="number") for name in names)

    @staticmethod
    def mean_sd(
        stem: str = "", kind: str = "number", *, interval: bool = False, title: str | None = None
    ) -> tuple[Column, Column]:
        """``<stem>_mean`` (of ``kind``, with an interval if ``interval``, page header ``title``) and
        its SD column ``<stem>_sd`` (without ``stem``: ``mean`` and ``sd``), shown as one column."""
        mean, sd = (f"{stem}_mean", f"{stem}_sd") if stem else ("mean", "sd")
        return Column(mean, interval=interval, title=title, kind=kind), Column(sd, sd_of=mean)

    @property
    def ci_columns(self) -> tuple[str, ...]:
        """``(low, high)`` interval column names, or ``()``."""
        if not self.interval:
            return ()
        stem = self.ci if self.ci is not None else self.name
        prefix = f"{stem}_" if stem else ""
        return (f"{prefix}ci_low", f"{prefix}ci_high")


@dataclass(frozen=True)
class PerAgent:
    """One column per agent of a wide table (``<agent>``, with ``sd`` also ``<agent>_sd``, with
    ``interval`` also ``<agent>_ci_low`` and ``<agent>_ci_high``).

    The agents are those of the computed frame: every column at this position that the table does
    not declare by name. ``kind`` (:data:`KINDS`) is how every agent's value (and SD) reads.
    """

    dtype: str = "float"
    sd: bool = False
    interval: bool = False
    kind: str | None = None

    @property
    def header(self) -> str:
        """How ``docs/tables.md`` writes the group."""
        parts = ["<agent>"] + (["<agent>_sd"] if self.sd else [])
        parts += ["<agent>_ci_low", "<agent>_ci_high"] if self.interval else []
        return ", ".join(parts) + ", …" if len(parts) > 1 else "<agent>…"

    def suffixes(self) -> tuple[str, ...]:
        """Suffixes of the columns that follow each agent's column."""
        return (("_sd",) if self.sd else ()) + (("_ci_low", "_ci_high") if self.interval else ())

    def is_agent(self, column: str) -> bool:
        """Whether ``column`` is an agent's value column (not one of its companions)."""
        return not any(str(column).endswith(s) for s in self.suffixes())


@dataclass(frozen=True)
class Stat:
    """One displayed column of a wide table.

    ``mean`` (and optional ``sd``, ``n_valid``) name numeric columns of the analysis frame;
    ``direction`` (``"max"``/``"min"``/None) marks the best value in bold; ``percent`` multiplies by
    100 and appends ``%``; ``integer`` prints an integer; ``p_value`` prints a p-value
    (three decimals, ``< 0.001`` below 0.001); ``interval`` shows the bootstrap interval of ``mean`` in brackets
    after the value when the column has one.
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
    interval: bool = True


@dataclass(frozen=True)
class TableSpec:
    """How a table is displayed.

    Either a *wide* table (``labels`` shown as they are, then one column per :class:`Stat`) or a
    *pivot* of a long per-task table (``pivot = (row, column)``, cells from ``cell``, the
    parenthesised ``extra`` value, best per row in ``direction``). ``interval_note`` replaces the
    caption's sentence on how the bracketed intervals were computed (default: the two-stage
    bootstrap of :data:`automd_analysis.report.tables.INTERVAL_NOTE`).
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
    interval_note: str | None = None

    def referenced(self) -> list[str]:
        """The frame columns the display reads."""
        names = list(self.labels) + ([*self.pivot] if self.pivot else [])
        for stat in (*self.stats, *([self.cell] if self.cell else [])):
            names += [c for c in (stat.mean, stat.sd, stat.n_valid) if c]
        return names + ([self.extra] if self.extra else [])


@fill_doc(cole_2015=COLE_2015)
def per_agent_spec(
    labels: Sequence[str], caption: str, *, decimals: int = 0, sd: bool = False
) -> Callable[[pd.DataFrame], TableSpec]:
    """Display of a wide table with one column per agent: the spec built from the frame.

    Every column not in ``labels`` (nor an ``<agent>_sd`` column with ``sd``) is shown as a number
    with ``decimals`` decimals (``mean ± SD`` with ``sd``); the caption says what the numbers are.

    Parameters
    ----------
    labels : sequence of str
        The label columns, shown as they are.
    caption : str
    decimals : int, default 0
    sd : bool, default False
        Each agent column ``a`` has its SD in ``a_sd``.

    Returns
    -------
    callable
        frame -> :class:`TableSpec`.

    References
    ----------
    {cole_2015}

    Examples
    --------
    >>> wide = pd.DataFrame({"practice": ["ensembling"], "aide": [11.111], "codex": [50.0]})
    >>> spec = per_agent_spec(("practice",), "% of eligible runs.")(wide)
    >>> [(s.title, s.decimals) for s in spec.stats]
    [('aide', 0), ('codex', 0)]
    """
    labels = tuple(labels)

    def build(frame: pd.DataFrame) -> TableSpec:
        agents = [
            c for c in frame.columns if c not in labels and not (sd and str(c).endswith("_sd"))
        ]
        stats = tuple(
            Stat(str(a), str(a), f"{a}_sd" if sd else None, decimals=decimals) for a in agents
        )
        return TableSpec(caption=caption, labels=labels, stats=stats)

    return build


def _dtype_ok(series: pd.Series, dtype: str) -> bool:
    kind = series.dtype.kind
    if dtype == "int":
        return kind in "iu" or _integral_or_missing(series)
    if dtype == "float":
        return kind in "fiu" or (kind == "O" and series.map(_is_number_or_missing).all())
    if dtype == "bool":
        return kind == "b" or (kind == "O" and series.map(_is_bool_or_missing).all())
    return kind in "OSUb" or isinstance(series.dtype, pd.StringDtype)


def _integral_or_missing(series: pd.Series) -> bool:
    values = pd.to_numeric(series, errors="coerce")
    if (values.isna() & series.notna()).any():
        return False
    present = values.dropna()
    return bool((present == np.floor(present)).all())


def _is_number_or_missing(value) -> bool:
    return value is None or isinstance(value, int | float | np.integer | np.floating)


def _is_bool_or_missing(value) -> bool:
    if value is None or value is pd.NA:
        return True
    if isinstance(value, float):
        return value != value  # NaN
    return isinstance(value, bool | np.bool_)


_EMPTY_DTYPES = {"str": object, "int": "int64", "float": "float64", "bool": bool}


@dataclass(frozen=True)
class Table:
    """A published table: ``<output_dir>/tables/<name>.{csv,tex,html}``.

    Attributes
    ----------
    name : str
        File stem.
    notebook : str
        The report notebook that publishes it (``"01_primary_scores"``).
    summary : str
        Its line on the report index: what it shows.
    columns : tuple of Column or PerAgent
        The CSV columns in order (interval columns are derived, see ``intervals_after``).
    paper : str
        Its number in the source paper (``"Table 2"``, ``"FML-bench Table 4"``), or ``""``.
    spec : TableSpec, callable or None
        The LaTeX/HTML display (a callable builds it from the frame, for wide tables with one
        column per agent); ``None``: every column by its name
        (:func:`automd_analysis.report.presentation.default_display`).
    intervals_after : bool
        Interval columns right after their column (default: after all other columns).
    caption : str
        The caption of a table without a display spec (a spec has its own); default:
        ``summary``. Every published table has a caption.
    empty : str
        The sentence a table with no rows shows after its caption (default: :data:`EMPTY_NOTE`):
        why there is nothing to list.
    interval_note : str, optional
        As :attr:`TableSpec.interval_note`, for a table without a display spec.
    computed_by : str
        The dotted name of the function that computes the table
        (``"automd_analysis.analysis.primary.agent_summary"``): where to start reading. A string,
        not the function, as the catalog sits below the analysis modules; one function may
        compute several tables (each field of its result).
    """

    name: str
    notebook: str
    summary: str
    columns: tuple[Column | PerAgent, ...]
    paper: str = ""
    spec: TableSpec | Callable[[pd.DataFrame], TableSpec] | None = None
    intervals_after: bool = False
    caption: str = ""
    empty: str = ""
    interval_note: str | None = None
    computed_by: str = ""

    @classmethod
    def percent_per_agent(
        cls,
        name: str,
        notebook: str,
        summary: str,
        labels: Sequence[str],
        caption: str,
        *,
        sd: bool = False,
        paper: str = "",
        computed_by: str = "",
    ) -> Table:
        """A wide table of percentages: the ``labels``, then one column per agent (with ``sd``
        also its SD), displayed by :func:`per_agent_spec` with ``caption``."""
        columns = (*Column.texts(*labels), PerAgent(sd=sd, kind="percent"))
        spec = per_agent_spec(labels, caption, sd=sd)
        return cls(
            name, notebook, summary, columns, paper=paper, spec=spec, computed_by=computed_by
        )

    def __post_init__(self):
        named = {c.name for c in self.columns if isinstance(c, Column)}
        for column in self.columns:
            if isinstance(column, Column) and column.sd_of not in (None, *named):
                raise ValueError(
                    f"table {self.name!r}: {column.name} is the SD of {column.sd_of!r}, "
                    "which the table does not declare"
                )

    @property
    def page_caption(self) -> str:
        """The caption of the table without a display spec: :attr:`caption`, else
        :attr:`summary`."""
        return self.caption or self.summary

    @property
    def empty_note(self) -> str:
        """The sentence shown when the table has no rows (:attr:`empty` or :data:`EMPTY_NOTE`)."""
        return self.empty or EMPTY_NOTE

    @property
    def titles(self) -> dict[str, str]:
        """Column -> its declared page header (:attr:`Column.title`), for the columns that have
        one."""
        return {c.name: c.title for c in self.columns if isinstance(c, Column) and c.title}

    # ---------------------------------------------------------------------------------- columns

    def _entries(self) -> list[Column | PerAgent]:
        """Columns in CSV order, interval columns included."""
        out: list[Column | PerAgent] = []
        trailing: list[Column] = []
        marked = self.best
        for column in self.columns:
            out.append(column)
            if isinstance(column, Column) and column.interval:
                cis = [Column(c) for c in column.ci_columns]
                if column.name in marked:
                    cis.append(Column(f"{column.name}_best", "bool"))
                (out if self.intervals_after else trailing).extend(cis)
        return out + trailing

    @property
    def named(self) -> list[str]:
        """The declared column names in CSV order (interval columns included)."""
        return [c.name for c in self._entries() if isinstance(c, Column)]

    @property
    def intervals(self) -> dict[str, tuple[str, str]]:
        """Column -> its ``(low, high)`` interval columns."""
        return {c.name: c.ci_columns for c in self.columns if isinstance(c, Column) and c.interval}

    @property
    def corrected(self) -> frozenset[str]:
        """The columns whose value and interval are bias-corrected (``Column.bias_corrected``)."""
        return frozenset(c.name for c in self.columns if isinstance(c, Column) and c.bias_corrected)

    @property
    def best(self) -> dict[str, str]:
        """Column -> ``"max"``/``"min"``: the columns whose best values are marked, each with a
        boolean ``<X>_best`` column (:func:`~automd_analysis.stats.intervals.best_marks`): the
        ``direction`` of the display's stats (of its pivot), which only columns with an interval
        may have."""
        spec = self.spec
        if spec is None or callable(spec):
            return {}
        if spec.pivot:
            return {spec.cell.mean: spec.direction} if spec.direction and spec.cell else {}
        return {s.mean: s.direction for s in spec.stats if s.direction}

    def best_marks(self, rows: Sequence[Mapping]) -> dict:
        """The ``corrected``, ``best``, ``groups`` and ``never_best`` arguments of
        :func:`~automd_analysis.stats.intervals.summarise` for ``rows`` of this table: the
        bias-corrected columns (:attr:`corrected`); the best is sought per pivot row (wide tables:
        among all rows), never among the display's ``exclude_from_best`` agents."""
        best = self.best
        if not best:
            return {"corrected": self.corrected}
        spec = self.spec
        if spec.pivot:
            group, label = spec.pivot
        else:
            group, label = None, spec.labels[0] if spec.labels else None
        return {
            "corrected": self.corrected,
            "best": best,
            "groups": None if group is None else [r[group] for r in rows],
            "never_best": [label is not None and r[label] in spec.exclude_from_best for r in rows],
        }

    def intervals_in(self, frame: pd.DataFrame) -> dict[str, tuple[str, str]]:
        """:attr:`intervals` plus those of the per-agent columns of ``frame``."""
        out = dict(self.intervals)
        named = set(self.named)
        for entry in self.columns:
            if isinstance(entry, PerAgent) and entry.interval:
                for column in frame.columns:
                    if str(column) not in named and entry.is_agent(column):
                        out[str(column)] = (f"{column}_ci_low", f"{column}_ci_high")
        return out

    def kinds_in(self, frame: pd.DataFrame) -> dict[str, str | None]:
        """Column of ``frame`` -> how its values read (:data:`KINDS`), from the declaration alone.

        An SD column reads as its value column, interval bounds as their value, ``<X>_best``
        marks as flags, per-agent columns (and their SD and bounds) as their :class:`PerAgent`;
        ``None`` for an int or float column declared without a kind.

        Examples
        --------
        >>> t = Table("t", "nb", "A table.", (*Column.texts("agent"), *Column.mean_sd("gap", "share"),
        ...     *Column.counts("n_runs")))
        >>> t.kinds_in(t.frame())
        {'agent': 'text', 'gap_mean': 'share', 'gap_sd': 'share', 'n_runs': 'count'}
        """
        declared = {c.name: c for c in self.columns if isinstance(c, Column)}
        named = set(self.named)
        others = [str(c) for c in frame.columns if str(c) not in named]
        best = self.best
        out: dict[str, str | None] = {}
        for entry in self.columns:
            if isinstance(entry, PerAgent):
                for agent in [c for c in others if entry.is_agent(c)]:
                    out[agent] = entry.kind
                    out.update({f"{agent}{suffix}": entry.kind for suffix in entry.suffixes()})
                others = []
                continue
            source = declared.get(entry.sd_of) if entry.kind is None and entry.sd_of else entry
            kind = source.reads if source is not None else None
            out[entry.name] = kind
            out.update(dict.fromkeys(entry.ci_columns, kind))
            if entry.name in best:
                out[f"{entry.name}_best"] = "flag"
        return out

    def sds_in(self, frame: pd.DataFrame) -> dict[str, str]:
        """Value column -> its SD column (``Column(..., sd_of=...)``; an agent's ``<agent>_sd``
        of ``PerAgent(sd=True)``), for the columns of ``frame``."""
        out = {
            c.sd_of: c.name for c in self.columns if isinstance(c, Column) and c.sd_of is not None
        }
        named = set(self.named)
        for entry in self.columns:
            if isinstance(entry, PerAgent) and entry.sd:
                for column in map(str, frame.columns):
                    if column not in named and entry.is_agent(column):
                        out[column] = f"{column}_sd"
        return out

    @property
    def header(self) -> str:
        """The CSV header as ``docs/tables.md`` writes it (``<agent>…`` for per-agent columns)."""
        return ", ".join(c.name if isinstance(c, Column) else c.header for c in self._entries())

    def _layout(self, present: Sequence[str]) -> list[tuple[str, str]]:
        """(name, dtype) of every column of a frame with columns ``present``, in CSV order."""
        named = set(self.named)
        others = [c for c in present if c not in named]
        layout: list[tuple[str, str]] = []
        for entry in self._entries():
            if isinstance(entry, Column):
                layout.append((entry.name, entry.dtype))
                continue
            for agent in [c for c in others if entry.is_agent(c)]:
                layout.append((agent, entry.dtype))
                layout.extend((f"{agent}{suffix}", entry.dtype) for suffix in entry.suffixes())
            others = []
        return layout

    def frame(self, data: pd.DataFrame | Iterable[Mapping] | None = None) -> pd.DataFrame:
        """``data`` as this table: the declared columns in order, typed.

        ``data`` is a DataFrame or records (dicts); ``None`` or no rows give the typed empty
        table. Integer columns and boolean columns without missing values are cast to their type;
        every column must be present and no other.

        Parameters
        ----------
        data : DataFrame, iterable of mappings or None

        Returns
        -------
        DataFrame

        Raises
        ------
        TableDeclarationError
            A declared column is missing, an undeclared one present, or a value does not fit
            the column's type.

        Examples
        --------
        >>> t = Table("t", "nb", "A table.", (Column("agent", "str"), Column("n", "int"),
        ...     Column("score", interval=True)))
        >>> t.frame([{"agent": "a", "score": 0.5, "n": 3.0, "score_ci_low": 0.4,
        ...     "score_ci_high": 0.6}]).dtypes.astype(str).tolist()
        ['object', 'int64', 'float64', 'float64', 'float64']
        >>> t.frame().columns.tolist()
        ['agent', 'n', 'score', 'score_ci_low', 'score_ci_high']
        """
        if data is None:
            frame = pd.DataFrame()
        elif isinstance(data, pd.DataFrame):
            frame = data
        else:
            records = list(data)
            frame = pd.DataFrame.from_records(records) if records else pd.DataFrame()
        if frame.empty and len(frame.columns) == 0:
            layout = self._layout([])
            return pd.DataFrame({n: pd.Series(dtype=_EMPTY_DTYPES[d]) for n, d in layout})
        present = [str(c) for c in frame.columns]
        layout = self._layout(present)
        names = [n for n, _ in layout]
        missing = [n for n in names if n not in present]
        extra = [c for c in present if c not in set(names)]
        if missing or extra:
            raise self._error(
                "columns "
                + "; ".join(
                    part
                    for part in (
                        f"missing {', '.join(missing)}" if missing else "",
                        f"not declared {', '.join(extra)}" if extra else "",
                    )
                    if part
                ),
            )
        out = frame[names] if present != names else frame
        if out.empty:
            return out.astype({n: _EMPTY_DTYPES[d] for n, d in layout})
        casts = {}
        for name, dtype in layout:
            series = out[name]
            if dtype == "int" and series.dtype.kind not in "iu":
                if not _integral_or_missing(series):
                    raise self._error(f"column {name} holds non-integer values")
                if series.notna().all():
                    casts[name] = "int64"  # a column with missing values stays as it is
            elif dtype == "bool" and series.dtype.kind != "b":
                if not series.map(_is_bool_or_missing).all():
                    raise self._error(f"column {name} holds non-boolean values")
                if series.map(lambda v: isinstance(v, bool | np.bool_)).all():
                    casts[name] = bool  # a column with missing values stays as it is
        return out.astype(casts) if casts else out

    def check(self, frame: pd.DataFrame) -> list[str]:
        """Problems of a computed frame against this declaration (empty: it conforms).

        Column names and order, and every column's values against its type.

        Examples
        --------
        >>> t = Table("t", "nb", "A table.", (Column("agent", "str"), Column("n", "int")))
        >>> t.check(pd.DataFrame({"agent": ["a"], "n": [0.5]}))
        ['column n: values do not fit int']
        """
        present = [str(c) for c in frame.columns]
        layout = self._layout(present)
        if [n for n, _ in layout] != present:
            return [f"columns {present} instead of {[n for n, _ in layout]}"]
        return [
            f"column {name}: values do not fit {dtype}"
            for name, dtype in layout
            if len(frame) and not _dtype_ok(frame[name], dtype)
        ]

    def _error(self, problem: str) -> TableDeclarationError:
        return TableDeclarationError(
            f"table {self.name!r} does not match its declaration: {problem}",
            location=f"table {self.name}",
            fix="make the analysis function and the table's declaration in "
            "automd_analysis/analysis/catalog agree",
            code="table.columns",
        )

    # ---------------------------------------------------------------------------------- display

    def display(self, frame: pd.DataFrame) -> TableSpec | None:
        """The display spec for ``frame`` (built from it when the spec is a callable)."""
        return self.spec(frame) if callable(self.spec) else self.spec


@dataclass(frozen=True)
class Figure:
    """A published figure: ``<output_dir>/figures/<name>.{png,svg}``.

    Attributes
    ----------
    name : str
        File stem; ``<task>`` at the end stands for any task id (``reliability_<task>``).
    notebook, summary, paper
        As :class:`Table`.
    caption : str
        Shown under the figure (Markdown; ``{task}`` is the task id of a per-task figure).
    computed_by : str
        The dotted name of the function that draws the figure
        (``"automd_analysis.report.figures.figure2a"``), as :attr:`Table.computed_by`.
    """

    name: str
    notebook: str
    summary: str
    paper: str = ""
    caption: str = ""
    computed_by: str = ""

    def matches(self, name: str) -> bool:
        """Whether ``name`` is this figure (a task id in place of ``<task>``)."""
        if not self.name.endswith("<task>"):
            return name == self.name
        prefix = self.name[: -len("<task>")]
        rest = name[len(prefix) :]
        return name.startswith(prefix) and bool(rest) and _plain(rest)

    def caption_for(self, name: str) -> str:
        """The caption of figure ``name`` (the task id filled in)."""
        task = name[len(self.name) - len("<task>") :] if self.name.endswith("<task>") else ""
        return self.caption.replace("{task}", task)


def _plain(text: str) -> bool:
    return all(ch.isalnum() or ch in "_.-" for ch in text)
