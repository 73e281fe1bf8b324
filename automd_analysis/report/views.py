"""What a report page shows for a figure or a long table: an image at a fixed width with its
caption underneath, and collapsed sections in plain HTML ``<details>``.

Report pages are read offline and without scripts, about :data:`DISPLAY_WIDTH_PX` pixels wide.
A figure ``w`` inches wide is shown ``min(100 w, DISPLAY_WIDTH_PX)`` CSS pixels wide
(:func:`display_width`; 100 px per inch, so a 9 in figure is shown at its size and a 10 in one
shrunk by 10 %); with text of at least 10 pt (:mod:`automd_analysis.report.figure_style`) every
label then reads at 9 pt or more. The page embeds the PNG that
:func:`automd_analysis.report.figures.save_figure` wrote (150 dpi, sharp on high-density screens),
so the page and ``figures/<name>.png`` are the same image.

Captions are written by the notebooks (trusted) but may contain archive strings (task names in
figure names): every caption is HTML-escaped first, then three Markdown marks are turned into tags
(:func:`caption_html`).
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from automd_analysis.analysis import catalog
from automd_analysis.analysis.annotation_provenance import provenance_text
from automd_analysis.stats.resample import n_replicates

__all__ = [
    "DISPLAY_WIDTH_PX",
    "PX_PER_INCH",
    "Collapsed",
    "FigureView",
    "IntervalStatus",
    "Note",
    "annotator_caption",
    "caption_html",
    "collapsed_table_html",
    "coverage_note",
    "display_width",
    "extra_metrics_note",
    "interval_status",
    "llm_agent_note",
    "table_html",
    "undefined_scores_note",
]

#: Widest a figure is shown on a report page (CSS px).
DISPLAY_WIDTH_PX = 900
#: CSS pixels per inch of figure width on a report page.
PX_PER_INCH = 100

_CODE = re.compile(r"`([^`]+)`")
_STRONG = re.compile(r"\*\*([^*]+)\*\*")
_EM = re.compile(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])")


def display_width(width_in: float) -> int:
    """CSS pixels a figure ``width_in`` inches wide is shown at on a report page.

    ``min(round(PX_PER_INCH * width_in), DISPLAY_WIDTH_PX)``.

    Parameters
    ----------
    width_in : float
        Figure width in inches (``Figure.get_size_inches()[0]``).

    Returns
    -------
    int

    See Also
    --------
    FigureView

    References
    ----------
    .. [1] W3C (2022). CSS Values and Units Module Level 3, sec. 6.2 (absolute lengths: 1 in =
       96 px, 1 pt = 1/72 in).

    Examples
    --------
    >>> display_width(7.5), display_width(10.0)
    (750, 900)
    """
    return int(min(round(PX_PER_INCH * float(width_in)), DISPLAY_WIDTH_PX))


def caption_html(text: str) -> str:
    """Caption text as HTML: escaped, then `` `code` ``, ``**strong**`` and ``*emphasis*``.

    Parameters
    ----------
    text : str
        Caption in the Markdown subset above.

    Returns
    -------
    str
        Safe HTML.

    See Also
    --------
    FigureView

    References
    ----------
    .. [1] Gruber J (2004). Markdown syntax: emphasis and code spans.

    Examples
    --------
    >>> caption_html("*Figure 2a.* Runs (`n`) <b>")
    '<em>Figure 2a.</em> Runs (<code>n</code>) &lt;b&gt;'
    """
    out = html.escape(str(text), quote=False)
    out = _CODE.sub(r"<code>\1</code>", out)
    out = _STRONG.sub(r"<strong>\1</strong>", out)
    return _EM.sub(r"<em>\1</em>", out)


def _plain(text: str) -> str:
    """Caption text without its Markdown marks (code spans keep their content)."""
    text = _CODE.sub(r"\1", str(text))
    return _EM.sub(r"\1", _STRONG.sub(r"\1", text))


@dataclass(frozen=True)
class FigureView:
    """A published figure as a report page shows it: the saved PNG at :func:`display_width`
    with its caption underneath.

    Attributes
    ----------
    name : str
        Figure name (``figures/<name>.png`` / ``.svg``).
    caption : str
        Caption (Markdown marks as in :func:`caption_html`).
    png : bytes
        The saved PNG.
    width_in : float
        Figure width in inches.
    paths : dict
        Written files (``png``, ``svg``).
    figure : matplotlib Figure or None
        The drawn figure (for tests and further use; not displayed).
    """

    name: str
    caption: str
    png: bytes = field(repr=False)
    width_in: float
    paths: dict = field(default_factory=dict)
    figure: object = field(default=None, repr=False, compare=False)

    @property
    def width_px(self) -> int:
        """Displayed width in CSS pixels (:func:`display_width`)."""
        return display_width(self.width_in)

    def _repr_html_(self) -> str:
        data = base64.b64encode(self.png).decode("ascii")
        label = html.escape(self.name, quote=True)
        alt = html.escape(_plain(self.caption) or self.name, quote=True)
        caption = caption_html(self.caption) if self.caption else ""
        return (
            f'<div class="automd-figure" id="figure-{label}">'
            f'<img src="data:image/png;base64,{data}" width="{self.width_px}" alt="{alt}">'
            f'<p class="automd-caption"><span class="automd-figure-name">Figure '
            f"<code>{label}</code>.</span> {caption}</p></div>"
        )

    def __repr__(self) -> str:
        return f"Figure {self.name}: {_plain(self.caption)}"


@dataclass(frozen=True)
class Collapsed:
    """Several figures (or other HTML views) behind one ``<details>`` line, closed by default.

    Attributes
    ----------
    summary : str
        The always-visible line (escaped).
    items : sequence
        Objects with ``_repr_html_`` (e.g. :class:`FigureView`), shown when opened.
    """

    summary: str
    items: Sequence = ()

    def _repr_html_(self) -> str:
        inner = "".join(item._repr_html_() for item in self.items)
        return (
            f'<details class="automd-collapsed"><summary>{caption_html(self.summary)}</summary>'
            f"{inner}</details>"
        )

    def __repr__(self) -> str:
        lines = [self.summary, *(f"  {item!r}" for item in self.items)]
        return "\n".join(lines)


def _table_label(name: str) -> str:
    return f'<span class="automd-table-name">Table <code>{html.escape(name, quote=True)}</code>.</span>'


def table_html(table_html: str, caption: str, name: str) -> str:
    """A table on a report page: the caption as a paragraph above the table (the table's own
    ``<caption>`` would be as narrow as the table).

    Parameters
    ----------
    table_html : str
        The table rendered without its caption.
    caption : str
        The caption (escaped here).
    name : str
        The table's export name (its CSV is ``tables/<name>.csv``).

    Returns
    -------
    str

    See Also
    --------
    collapsed_table_html : the same for a long table.

    References
    ----------
    .. [1] WHATWG HTML Living Standard, "The table element".

    Examples
    --------
    >>> table_html("<table></table>", "Runs.", "overview_runs")[:60]
    '<div class="automd-table" id="table-overview_runs"><p class='
    """
    label = html.escape(name, quote=True)
    return (
        f'<div class="automd-table" id="table-{label}"><p class="automd-caption">'
        f"{_table_label(name)} {caption_html(caption)}</p>{table_html}</div>"
    )


def collapsed_table_html(table_html: str, caption: str, n_rows: int, name: str) -> str:
    """A long table on a report page: its caption and row count always visible, the table itself
    behind a closed ``<details>`` (plain HTML, no script).

    Parameters
    ----------
    table_html, caption, name
        As :func:`table_html`.
    n_rows : int
        The table's rows (shown in the summary).

    Returns
    -------
    str

    See Also
    --------
    automd_analysis.report.presentation.is_long : when a table is long.

    References
    ----------
    .. [1] WHATWG HTML Living Standard, "The details element".

    Examples
    --------
    >>> collapsed_table_html("<table></table>", "Runs.", 40, "run_coverage")[:59]
    '<details class="automd-long-table" id="table-run_coverage">'
    """
    label = html.escape(name, quote=True)
    return (
        f'<details class="automd-long-table" id="table-{label}"><summary>{_table_label(name)} '
        f'{caption_html(caption)} <span class="automd-rows">({int(n_rows)} rows; click to '
        f"show)</span></summary>{table_html}</details>"
    )


@dataclass(frozen=True)
class Note:
    """One paragraph of page text written from the data (Markdown marks as in
    :func:`caption_html`; archive strings are escaped)."""

    text: str

    def _repr_html_(self) -> str:
        return f'<p class="automd-note">{caption_html(self.text)}</p>'

    def __repr__(self) -> str:
        return _plain(self.text)


def _names(values) -> str:
    names = [f"`{str(v).replace('`', chr(39))}`" for v in values]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def llm_agent_note(runs) -> Note:
    """Which agent was run with which LLMs, from
    :func:`automd_analysis.analysis.llm.llm_runs` (``agent``, ``llm``, ``is_default``).

    Parameters
    ----------
    runs : DataFrame

    Returns
    -------
    Note
        One sentence naming each agent's default LLM and the others it ran with.

    See Also
    --------
    coverage_note

    References
    ----------
    .. [1] Auto-MD-bench, section 4.4 (one agent with several LLMs).

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"agent": ["codex"] * 3, "llm": ["gpt-5", "o3", "o3"],
    ...     "is_default": [True, False, False]})
    >>> llm_agent_note(runs)
    Agent compared across LLMs: codex (default LLM gpt-5; also run with o3).
    """
    if len(runs) == 0:
        return Note("No runs of the LLM experiment.")
    agents = sorted({str(a) for a in runs["agent"]})
    default = sorted({str(v) for v in runs.loc[runs["is_default"].astype(bool), "llm"]})
    others = sorted({str(v) for v in runs.loc[~runs["is_default"].astype(bool), "llm"]})
    parts = [f"default LLM {_names(default)}"] if default else []
    if others:
        parts.append(f"also run with {_names(others)}")
    return Note(f"**Agent compared across LLMs: {_names(agents)}** ({'; '.join(parts)}).")


def coverage_note(coverage) -> Note:
    """One line summarising :func:`automd_analysis.analysis.primary.coverage` (``task``,
    ``agent``, ``n_runs``, ``n_valid``, ``n_skipped``, optionally ``n_not_scorable`` and
    ``n_incomplete``): runs, valid and invalid runs, runs not scorable here and skipped runs over
    all tasks and agents, the (task, agent) cells with skipped runs, and the number of incomplete
    runs when there are any.

    Parameters
    ----------
    coverage : DataFrame

    Returns
    -------
    Note

    See Also
    --------
    llm_agent_note

    References
    ----------
    .. [1] Auto-MD-bench, Appendix E (invalid and missing runs).

    Examples
    --------
    >>> import pandas as pd
    >>> coverage = pd.DataFrame({"task": ["a", "a", "b"], "agent": ["x", "y", "x"],
    ...     "n_runs": [3, 3, 2], "n_valid": [3, 2, 2], "n_skipped": [0, 0, 1]})
    >>> coverage_note(coverage)
    8 runs on 2 tasks by 2 agents: 7 valid, 1 invalid; 1 run skipped by the scorer (b / x).
    >>> coverage_note(coverage.assign(n_valid=0, n_not_scorable=[3, 3, 2], n_skipped=0))
    8 runs on 2 tasks by 2 agents: 0 valid, 0 invalid, 8 not scorable here (the archive holds no prediction file for their task's test set: in no score table, never counted invalid); no run skipped by the scorer.
    """
    if len(coverage) == 0:
        return Note("No runs scored.")
    n_runs, n_valid = int(coverage["n_runs"].sum()), int(coverage["n_valid"].sum())
    n_unscorable = int(coverage["n_not_scorable"].sum()) if "n_not_scorable" in coverage else 0
    skipped = coverage.loc[coverage["n_skipped"] > 0]
    n_skipped = int(skipped["n_skipped"].sum())
    text = (
        f"{n_runs} runs on {coverage['task'].nunique()} tasks by "
        f"{coverage['agent'].nunique()} agents: {n_valid} valid, "
        f"{n_runs - n_valid - n_unscorable} invalid"
    )
    if n_unscorable:
        text += (
            f", **{n_unscorable} not scorable here** (the archive holds no prediction file for "
            "their task's test set: in no score table, never counted invalid)"
        )
    text += "; "
    if n_skipped:
        cells = [f"{t} / {a}" for t, a in zip(skipped["task"], skipped["agent"], strict=True)]
        shown = ", ".join(cells[:5]) + (f" and {len(cells) - 5} more" if len(cells) > 5 else "")
        run_word = "run" if n_skipped == 1 else "runs"
        text += f"**{n_skipped} {run_word} skipped by the scorer** ({shown})."
    else:
        text += "no run skipped by the scorer."
    n_incomplete = int(coverage["n_incomplete"].sum()) if "n_incomplete" in coverage else 0
    if n_incomplete:
        text += (
            f" **{n_incomplete} incomplete {'run' if n_incomplete == 1 else 'runs'}** (a part "
            "of the source was missing or the run stopped inside a stage; see journal.md)."
        )
    return Note(text)


def undefined_scores_note(undefined) -> Note | None:
    """Why some valid runs have no score, from
    :func:`automd_analysis.analysis.primary.undefined_scores` (``task``, ``n_runs``,
    ``reason``); ``None`` when every valid run has one.

    Examples
    --------
    >>> import pandas as pd
    >>> undefined_scores_note(pd.DataFrame({"task": ["t"], "n_runs": [4],
    ...     "reason": ["AUROC is undefined (y_true contains only one class); returning nan."]}))
    No score for 4 valid runs of task t: AUROC is undefined (y_true contains only one class); returning nan. They count 0 in the penalised scores and are not in the task means (n_valid).
    """
    if undefined is None or len(undefined) == 0:
        return None
    parts = [
        f"{int(n)} valid {'run' if int(n) == 1 else 'runs'} of task {_names([t])}: "
        f"{str(reason).rstrip('.')}."
        for t, n, reason in zip(
            undefined["task"], undefined["n_runs"], undefined["reason"], strict=True
        )
    ]
    return Note(
        "No score for "
        + " ".join(parts)
        + " They count 0 in the penalised scores and are not in the task means (n_valid)."
    )


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
    automd_analysis.stats.resample.n_replicates

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
    settings = (store.meta or {}).get("settings") or {}
    boot_seed = settings.get("bootstrap_seed")
    return IntervalStatus(
        n_replicates=n_replicates(store),
        bootstrap_seed=None if boot_seed is None else int(boot_seed),
        seed=int(seed),
    )


def annotator_caption(name: str, provenance) -> str:
    """The declared caption of table ``name`` followed by who produced its codebook answers.

    ``<caption> <provenance sentence>`` with the sentence of
    :func:`~automd_analysis.analysis.annotation_provenance.provenance_text`; tables without a
    declared caption get the sentence alone.

    Parameters
    ----------
    name : str
        Table name (e.g. ``fig2a_ece_decomposition``, ``table20_practices``).
    provenance : DataFrame
        :func:`~automd_analysis.analysis.annotation_provenance.annotation_provenance`.

    Returns
    -------
    str

    See Also
    --------
    automd_analysis.analysis.annotation_provenance.provenance_text

    References
    ----------
    .. [1] Auto-MD-bench, App. I.

    Examples
    --------
    >>> import pandas as pd
    >>> prov = pd.DataFrame({"annotator": ["automd annotate 0.1.0"],
    ...     "annotations_source": ["generated"], "n_runs": [12]})
    >>> annotator_caption("table20_practices", prov)
    'Codebook answers by automd annotate 0.1.0 (12 runs, generated outside the archive).'
    """
    declared = catalog.table(name)
    spec = declared.spec if declared is not None and not callable(declared.spec) else None
    base = spec.caption if spec is not None else ""
    return f"{base} {provenance_text(provenance)}".strip()


def extra_metrics_note(table) -> Note:
    """What :func:`automd_analysis.analysis.extra_metrics.extra_metrics_by_agent` holds: the user
    metrics and their direction, or that the store has none and how to add one.

    Parameters
    ----------
    table : DataFrame

    Returns
    -------
    Note
        The metrics of your own and their direction, or how to add one.

    See Also
    --------
    coverage_note

    References
    ----------
    .. [1] docs/extending.md (metrics of your own).

    Examples
    --------
    >>> import pandas as pd
    >>> extra_metrics_note(pd.DataFrame(columns=["metric", "higher_is_better"]))
    No metric of your own in this score store: add one with automd score --metric MODULE:ATTRIBUTE (docs/extending.md).
    >>> extra_metrics_note(pd.DataFrame({"metric": ["sens90"], "higher_is_better": [True]}))
    Metrics of your own: sens90 (higher is better).
    """
    if len(table) == 0:
        return Note(
            "No metric of your own in this score store: add one with "
            "`automd score --metric MODULE:ATTRIBUTE` (docs/extending.md)."
        )
    seen = table.drop_duplicates("metric")
    parts = [
        f"`{name}` ({'higher' if higher else 'lower'} is better)"
        for name, higher in zip(seen["metric"], seen["higher_is_better"], strict=True)
    ]
    return Note("Metrics of your own: " + ", ".join(parts) + ".")
