"""Figures of the bootstrap intervals and the paired agent comparisons (notebooks 01, 02, 04, 06).

- :func:`forest_plot`: one row per agent (or LLM), the point estimate and its 95 % interval, one
  panel per quantity; the presets :func:`table2_forest`, :func:`table3_forest`,
  :func:`table5_forest` and :func:`table7_forest` draw Tables 2, 3, 5 and 7 with their interval
  columns.
- :func:`pairwise_matrix`: agents x agents, each cell the row agent's advantage over the column
  agent (mean per-task difference of
  :func:`~automd_analysis.analysis.uncertainty.pairwise_comparisons`, oriented so that positive
  always means "row better"), with its Holm-adjusted p-value; significant cells are marked.

Every function takes the analysis table and returns a :class:`matplotlib.figure.Figure`
(:mod:`automd_analysis.report.figure_style`: at most 10 in wide, text at least 10 pt, legends
below the panels). The drawn elements carry a ``gid`` naming what they show (``estimate:<row>``,
``interval:<row>``), so tests can check the data they draw.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from automd_analysis.analysis.store import BASELINE_AGENT, agent_order
from automd_analysis.docstrings import HOLM_1979, PAIRWISE_INPUTS, SYNTHETIC_TASKS, fill_doc
from automd_analysis.report.figure_style import (
    BASELINE_COLOR,
    GREYS,
    agent_colors,
    empty_figure,
    new_figure,
    outside_legend,
    style,
)
from automd_analysis.report.provenance import task_label

__all__ = [
    "forest_plot",
    "pairwise_matrix",
    "table2_forest",
    "table3_forest",
    "table5_forest",
    "table7_forest",
]

#: (panel title, estimate column, low column, high column)
Panel = tuple[str, str, str, str]


def _forest_sections(table: str) -> str:
    """The Returns, See Also and References sections of the forest-plot wrapper of ``table``."""
    return f"""
Returns
-------
Figure

See Also
--------
forest_plot

References
----------
.. [1] Auto-MD-bench, {table}.
"""


def _ci_panel(title: str, column: str) -> tuple[str, str, str, str]:
    """A forest panel of ``column`` with its ``_ci_low`` / ``_ci_high`` interval columns."""
    return (title, column, f"{column}_ci_low", f"{column}_ci_high")


def _float(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def forest_plot(
    frame: pd.DataFrame,
    panels: Sequence[Panel],
    *,
    label: str = "agent",
    color_by: str | None = None,
    xlabel: str = "",
    scale: float = 1.0,
    null_value: float | None = None,
    baseline_line: bool = True,
    agents: bool = True,
) -> Figure:
    """Forest plot: each row's estimate (dot) and 95 % interval (line), one panel per quantity.

    Rows are drawn top to bottom in the order of ``frame`` at y = 0, 1, ... (y axis inverted);
    a row without finite bounds gets the dot only, a row without an estimate nothing. Rows are
    coloured by agent (``color_by``); the simple baseline is grey and, with ``baseline_line``, its
    estimate is repeated as a dashed vertical line, so each agent can be read against it.
    ``null_value`` draws a dotted reference line (e.g. 100 % for a ratio).

    Parameters
    ----------
    frame : DataFrame
        One row per agent (or LLM) with the columns named in ``panels``.
    panels : sequence of (title, estimate, low, high)
        One panel per entry (panels whose estimates are all missing are left out).
    label : str, default "agent"
        Column with the row names.
    color_by : str, optional
        Column with the agent of each row (colour, baseline); default ``label``.
    xlabel : str
        x-axis label: of the panel, or once under all panels when there are several (the same
        label under each of several narrow panels runs into its neighbours).
    scale : float, default 1.0
        Multiplies every value (100 for percent).
    null_value : float, optional
        x position of the dotted reference line (already scaled).
    baseline_line : bool, default True
        Draw the baseline's estimate as a dashed line (one baseline row per panel).
    agents : bool, default True
        Whether the rows are agents; ``False`` (e.g. one agent's LLMs): every row is drawn dark
        grey, so no row takes an agent's colour.

    Returns
    -------
    Figure
        Lines with ``gid`` ``estimate:<row>`` (one point (estimate, y)) and ``interval:<row>``
        ((low, y), (high, y)) in each panel.

    See Also
    --------
    table2_forest, table3_forest, table5_forest, table7_forest : presets.

    References
    ----------
    .. [1] Lewis S, Clarke M (2001). Forest plots: trying to see the wood and the trees. BMJ
       322:1479-1480.

    Examples
    --------
    >>> frame = pd.DataFrame({"agent": ["a", "baseline"], "m": [0.5, 0.4], "lo": [0.45, 0.3],
    ...     "hi": [0.55, 0.5]})
    >>> fig = forest_plot(frame, [("Score", "m", "lo", "hi")])
    >>> [line.get_xdata().tolist() for line in fig.axes[0].lines if line.get_gid() == "interval:a"]
    [[0.45, 0.55]]
    """
    with style():
        used = [
            p
            for p in panels
            if p[1] in frame.columns and pd.to_numeric(frame[p[1]], errors="coerce").notna().any()
        ]
        if frame.empty or not used:
            return empty_figure("no estimates to draw")
        rows = frame.reset_index(drop=True)
        names = [str(v) for v in rows[label]]
        owners = [str(v) for v in rows[color_by or label]]
        colors = agent_colors(owners) if agents else dict.fromkeys(owners, GREYS[0])
        n = len(rows)
        fig = new_figure(2.2 + 2.6 * len(used), 1.4 + 0.42 * n)
        axes = fig.subplots(1, len(used), sharey=True, squeeze=False)[0]
        for ax, (title, est, low, high) in zip(axes, used, strict=True):
            for y, record in enumerate(rows.to_dict("records")):
                name, owner = names[y], owners[y]
                color = colors[owner]
                e = _float(record[est]) * scale
                lo = _float(record.get(low)) * scale
                hi = _float(record.get(high)) * scale
                if not math.isfinite(e):
                    continue
                if math.isfinite(lo) and math.isfinite(hi):
                    ax.plot([lo, hi], [y, y], color=color, linewidth=2.2, gid=f"interval:{name}")
                ax.plot([e], [y], "o", color=color, markersize=7, gid=f"estimate:{name}")
                if owner == BASELINE_AGENT and baseline_line:
                    ax.axvline(
                        e,
                        color=BASELINE_COLOR,
                        linestyle="--",
                        linewidth=1,
                        zorder=0,
                        gid=f"reference:baseline:{est}",
                    )
            if null_value is not None:
                ax.axvline(
                    null_value,
                    color="black",
                    linestyle=":",
                    linewidth=1,
                    zorder=0,
                    gid=f"reference:null:{est}",
                )
            ax.set_title(title)
            if len(used) == 1:
                ax.set_xlabel(xlabel)
            ax.grid(axis="y", visible=False)
        if len(used) > 1 and xlabel:  # one label under all panels: side by side they would collide
            fig.supxlabel(xlabel, fontsize=mpl.rcParams["axes.labelsize"])
        axes[0].set_yticks(range(n), names)
        axes[0].set_ylim(n - 0.5, -0.5)
        handles = [
            Line2D([], [], marker="o", linestyle="none", color="#333333"),
            Line2D([], [], color="#333333", linewidth=2.2),
        ]
        texts = ["estimate", "95% interval"]
        if BASELINE_AGENT in owners and baseline_line:
            handles.append(Line2D([], [], color=BASELINE_COLOR, linestyle="--", linewidth=1))
            texts.append("simple baseline")
        if null_value is not None:
            handles.append(Line2D([], [], color="black", linestyle=":", linewidth=1))
            texts.append("no change")
        shared_label = len(used) > 1 and bool(xlabel)
        outside_legend(
            fig,
            handles,
            texts,
            loc="outside upper center" if shared_label else "outside lower center",
        )
    return fig


@fill_doc(forest_sections=_forest_sections("Table 2"))
def table2_forest(table2: pd.DataFrame) -> Figure:
    """Forest plot of Table 2: penalised and non-penalised mean score with 95 % intervals.

    Parameters
    ----------
    table2 : DataFrame
        :func:`~automd_analysis.analysis.primary.agent_summary`.

    {forest_sections}

    Examples
    --------
    >>> t2 = pd.DataFrame({"agent": ["a"], "penalized_mean": [0.5], "penalized_mean_ci_low": [0.4],
    ...     "penalized_mean_ci_high": [0.6], "nonpenalized_mean": [0.55],
    ...     "nonpenalized_mean_ci_low": [0.45], "nonpenalized_mean_ci_high": [0.65]})
    >>> [ax.get_title() for ax in table2_forest(t2).axes]
    ['Penalised score', 'Non-penalised score']
    """
    return forest_plot(
        table2,
        [
            _ci_panel("Penalised score", "penalized_mean"),
            _ci_panel("Non-penalised score", "nonpenalized_mean"),
        ],
        xlabel="normalised score",
    )


@fill_doc(forest_sections=_forest_sections("Table 3"))
def table3_forest(table3: pd.DataFrame) -> Figure:
    """Forest plot of Table 3: bias-corrected ECE per task class and over all tasks with their
    95 % intervals (the dots are the ``<class>_bc`` values the intervals belong to).

    Parameters
    ----------
    table3 : DataFrame
        :func:`~automd_analysis.analysis.calibration_practices.ece_by_task_class`.

    {forest_sections}

    Examples
    --------
    >>> t3 = pd.DataFrame({"agent": ["a"], "survival_bc": [float("nan")], "all_bc": [0.1],
    ...     "all_bc_ci_low": [0.08], "all_bc_ci_high": [0.12]})
    >>> [ax.get_title() for ax in table3_forest(t3).axes]
    ['All tasks']
    """
    panels = [
        _ci_panel(title, f"{column}_bc")
        for title, column in (
            ("Survival", "survival"),
            ("Classification", "classification"),
            ("Sequential", "sequential"),
            ("All tasks", "all"),
        )
    ]
    return forest_plot(table3, panels, xlabel="Bias-corrected ECE (lower is better)")


@fill_doc(forest_sections=_forest_sections("Table 5"), synthetic=SYNTHETIC_TASKS)
def table5_forest(table5: pd.DataFrame, *, synthetic: Iterable[str] = ()) -> Figure:
    """Forest plot of Table 5: external / internal score ratio (%) per external task and agent.

    One row per (task, agent), labelled ``task: agent`` (a synthetic task with
    :data:`~automd_analysis.report.provenance.SYNTHETIC_MARK`); the dotted line marks 100 % (no
    loss under the shift).

    Parameters
    ----------
    table5 : DataFrame
        :func:`~automd_analysis.analysis.shift.external_ratios`.
    {synthetic}

    {forest_sections}

    Examples
    --------
    >>> t5 = pd.DataFrame({"agent": ["a"], "task": ["t_ext"], "ratio": [0.9],
    ...     "ratio_ci_low": [0.8], "ratio_ci_high": [1.0]})
    >>> fig = table5_forest(t5)
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['t_ext: a']
    """
    if table5.empty:
        return forest_plot(table5, [])
    synthetic = set(synthetic)
    tasks = table5["task"].astype(str).map(lambda t: task_label(t, synthetic))
    rows = table5.assign(_row=tasks + ": " + table5["agent"].astype(str))
    return forest_plot(
        rows,
        [_ci_panel("External / internal score", "ratio")],
        label="_row",
        color_by="agent",
        xlabel="ratio (%)",
        scale=100.0,
        null_value=100.0,
        baseline_line=False,
    )


@fill_doc(forest_sections=_forest_sections("Table 7"))
def table7_forest(table7: pd.DataFrame) -> Figure:
    """Forest plot of Table 7: penalised score and ECE per LLM with 95 % intervals.

    Rows are one agent's LLMs, not agents: all dark grey.

    Parameters
    ----------
    table7 : DataFrame
        :func:`~automd_analysis.analysis.llm.llm_summary`.

    {forest_sections}

    Examples
    --------
    >>> t7 = pd.DataFrame({"llm": ["x", "y"], "penalized_mean": [0.5, 0.4],
    ...     "ece_mean_bc": [0.1, 0.2],
    ...     "penalized_mean_ci_low": [0.4, 0.3], "penalized_mean_ci_high": [0.6, 0.5],
    ...     "ece_mean_bc_ci_low": [0.05, 0.1], "ece_mean_bc_ci_high": [0.15, 0.3]})
    >>> [ax.get_title() for ax in table7_forest(t7).axes]
    ['Penalised score', 'ECE, bias-corrected']
    """
    return forest_plot(
        table7,
        [
            _ci_panel("Penalised score", "penalized_mean"),
            _ci_panel("ECE, bias-corrected", "ece_mean_bc"),
        ],
        label="llm",
        agents=False,
    )


def _advantage(pairwise: pd.DataFrame, measure: str, agents: list[str]):
    """(advantage matrix, Holm p matrix): row agent's advantage over the column agent."""
    n = len(agents)
    index = {a: i for i, a in enumerate(agents)}
    adv = np.full((n, n), np.nan)
    p = np.full((n, n), np.nan)
    sign = -1.0 if measure == "ece" else 1.0  # lower ECE is better
    for row in pairwise.to_dict("records"):
        i, j = index[str(row["agent_a"])], index[str(row["agent_b"])]
        d = _float(row["diff_mean"]) * sign
        adv[i, j], adv[j, i] = d, -d
        p[i, j] = p[j, i] = _float(row["p_holm"])
    return adv, p


@fill_doc(pairwise_inputs=PAIRWISE_INPUTS, holm_1979=HOLM_1979)
def pairwise_matrix(
    pairwise: pd.DataFrame, measure: str = "score", *, alpha: float = 0.05
) -> Figure:
    """Pairwise comparison matrix: the row agent's advantage over the column agent.

    Cell (i, j) shows

    .. math:: \\Delta_{ij} = s \\cdot \\bar d(i, j), \\qquad \\bar d(i, j) = \\frac{1}{T}
              \\sum_t (A^{(i)}_t - A^{(j)}_t)

    with s = +1 for the primary score and s = -1 for ECE (lower is better), so a positive
    (blue) cell always means that the row agent is better; Δ_ji = -Δ_ij. The cell text is Δ and
    the Holm-adjusted p-value; a cell with p_holm < ``alpha`` is marked with ``*`` and a bold
    frame. The colour scale is symmetric around 0.

    Parameters
    ----------
    {pairwise_inputs}

    Returns
    -------
    Figure
        ``fig.axes[0].images[0].get_array()`` is the matrix Δ (NaN on the diagonal and for pairs
        without a comparison).

    See Also
    --------
    automd_analysis.analysis.uncertainty.pairwise_comparisons : the numbers.

    References
    ----------
    {holm_1979}

    Examples
    --------
    >>> pw = pd.DataFrame([{"agent_a": "a", "agent_b": "b", "measure": "ece", "diff_mean": -0.02,
    ...     "p_holm": 0.01}])
    >>> fig = pairwise_matrix(pw, "ece")
    >>> fig.axes[0].images[0].get_array().filled(0).round(3).tolist()
    [[0.0, 0.02], [-0.02, 0.0]]
    """
    mine = pairwise.loc[pairwise["measure"] == measure] if len(pairwise) else pairwise
    with style():
        if mine.empty:
            return empty_figure("no pairwise comparisons (the score store has no replicates)")
        agents = agent_order(set(mine["agent_a"].astype(str)) | set(mine["agent_b"].astype(str)))
        adv, p = _advantage(mine, measure, agents)
        n = len(agents)
        fig = new_figure(2.8 + 1.15 * n, 1.6 + 0.8 * n)
        ax = fig.subplots()
        finite = np.abs(adv[np.isfinite(adv)])
        vmax = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        image = ax.imshow(
            np.ma.masked_invalid(adv), cmap="RdBu", vmin=-vmax, vmax=vmax, aspect="auto"
        )
        for i in range(n):
            for j in range(n):
                if i == j or not np.isfinite(adv[i, j]):
                    continue
                significant = np.isfinite(p[i, j]) and p[i, j] < alpha
                p_text = "n/a" if not np.isfinite(p[i, j]) else f"{p[i, j]:.2f}"
                text = f"{adv[i, j]:+.3f}{'*' if significant else ''}\np = {p_text}"
                dark = abs(adv[i, j]) > 0.6 * vmax
                ax.text(
                    j,
                    i,
                    text,
                    ha="center",
                    va="center",
                    color="white" if dark else "black",
                    fontweight="bold" if significant else "normal",
                    gid=f"cell:{agents[i]}:{agents[j]}",
                )
                if significant:
                    ax.add_patch(
                        _frame(j, i, gid=f"significant:{agents[i]}:{agents[j]}"),
                    )
        ax.set_xticks(range(n), agents, rotation=30, ha="right")
        ax.set_yticks(range(n), agents)
        ax.set_xlabel("column agent")
        ax.set_ylabel("row agent")
        ax.grid(False)
        what = "score difference" if measure != "ece" else "ECE reduction"
        fig.colorbar(image, ax=ax, label=f"row better \N{RIGHTWARDS ARROW} ({what})")
        ax.set_title(
            "Primary score" if measure != "ece" else "Calibration (ECE)",
        )
    return fig


def _frame(x: float, y: float, gid: str):
    from matplotlib.patches import Rectangle

    return Rectangle(
        (x - 0.5, y - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=2.0, gid=gid
    )
