"""Figures of calibration beyond the 10-bin ECE (notebook 02).

- :func:`smoothed_calibration_figure` / :func:`smoothed_calibration_figures`: per task, one
  panel per agent: the loess-smoothed calibration curve averaged over the agent's valid runs,
  its pointwise 95 % interval band, and (binary tasks) the binned reliability points, averaged
  over the same runs, for comparison;
- :func:`decision_curve_figure`: net benefit against the threshold probability, one panel per
  task, one line per agent, with the treat-all and treat-none references;
- :func:`measure_rank_figure`: the agents' rank under each calibration measure (does the ranking
  depend on the measure?);
- :func:`add_footnote`: a line of text under a figure (e.g. who produced the annotations).

Inputs are the tables of :mod:`automd_analysis.analysis.calibration_measures` (and
:func:`~automd_analysis.analysis.calibration_practices.reliability_table` for the bins). Style:
:mod:`automd_analysis.report.figure_style`. Drawn elements carry a ``gid`` naming what they show
(``curve:<agent>``, ``band:<agent>``, ``net_benefit:<task>:<agent>``, ...).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from automd_analysis.analysis.calibration_measures import RANKING_MEASURES
from automd_analysis.analysis.store import BASELINE_AGENT, agent_order
from automd_analysis.docstrings import VAN_CALSTER_2019, VICKERS_ELKIN_2006, fill_doc
from automd_analysis.report.figure_style import (
    MIN_FONT_PT,
    agent_colors,
    empty_figure,
    new_figure,
    outside_legend,
    reference_line,
    style,
)
from automd_analysis.report.provenance import task_label

__all__ = [
    "add_footnote",
    "decision_curve_figure",
    "measure_rank_figure",
    "smoothed_calibration_figure",
    "smoothed_calibration_figures",
]

#: The ``columns`` input of the per-task panel figures.
_PANEL_COLUMNS = """
columns : int, default 3
    Panels per row.
"""


_AXES = {
    "binary": ("predicted probability", "observed proportion"),
    "survival": ("predicted risk 1 - S(h)", "observed risk (Kaplan-Meier)"),
}
#: The decision curves' references: black, told apart from each other and from the (solid grey)
#: simple baseline by their line style.
_TREAT_ALL = {"color": "black", "linestyle": ":"}
_TREAT_NONE = {"color": "black", "linestyle": "--"}
_MEASURE_LABELS = {
    "ece_10": "ECE 10 bins",
    "ece_15": "ECE 15 bins",
    "ece_equal_mass": "ECE equal mass",
    "ici": "ICI",
    "slope": "|slope - 1|",
    "intercept": "|intercept|",
    "d_calibration": "D-calibration",
}


def _grid(n: int, columns: int, panel_w: float, panel_h: float, extra_h: float = 0.9):
    ncols = max(1, min(columns, n))
    nrows = -(-n // ncols)
    fig = new_figure(panel_w * ncols + 0.4, panel_h * nrows + extra_h)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


@fill_doc(panel_columns=_PANEL_COLUMNS)
def smoothed_calibration_figure(
    curves: pd.DataFrame,
    bins: pd.DataFrame | None = None,
    *,
    columns: int = 3,
    min_run_share: float = 0.5,
) -> Figure:
    """Smoothed calibration curves of one task: one panel per agent.

    In each panel: the agent's mean smoothed observed risk ``observed_mean`` against the predicted
    risk ``x`` (solid line), the band between ``lo_mean`` and ``hi_mean`` (the mean of the runs'
    pointwise 95 % interval bounds: how uncertain a typical single run's curve is), the diagonal
    (perfect calibration) and, for a binary task when ``bins`` is given, the reliability bins
    (``mean_pred``, ``observed``) as open circles. Curve and bins are both averages over the
    agent's valid runs of each run's own curve and bins
    (:func:`~automd_analysis.analysis.calibration_practices.reliability_bins`), so the circles
    sit on the curve of the same average run. Binary: outcome against predicted
    probability; survival: Kaplan-Meier risk against predicted risk 1 - S(h) at the horizon.
    Points where fewer than ``min_run_share`` of the agent's runs have a value (the ends of the
    prediction range, reached by few runs) are not drawn, so the mean does not jump where runs
    drop out.

    Parameters
    ----------
    curves : DataFrame
        :func:`~automd_analysis.analysis.calibration_measures.smoothed_curves` rows of one task
        (``agent, kind, x, observed_mean, lo_mean, hi_mean``).
    bins : DataFrame, optional
        Reliability bins of the same task
        (:func:`~automd_analysis.analysis.calibration_practices.reliability_table` rows; only the
        binary bins, ``quantile`` missing, are drawn).
    {panel_columns}
    min_run_share : float, default 0.5
        Smallest share of the agent's largest ``n_runs`` a point needs to be drawn.

    Returns
    -------
    Figure
        Per agent panel: line ``curve:<agent>`` (x, observed_mean), polygon ``band:<agent>``,
        line ``bins:<agent>`` (mean_pred, observed).

    See Also
    --------
    automd_analysis.metrics.smoothed_calibration_curve : the per-run smoother and its interval.
    automd_analysis.report.figures.reliability_figure : the binned diagrams.

    References
    ----------
    .. [1] Austin PC, Steyerberg EW (2014). Graphical assessment of internal and external
       calibration of logistic regression models by using loess smoothers. Statistics in
       Medicine 33:517-535.

    Examples
    --------
    >>> curves = pd.DataFrame({"agent": "a", "kind": "binary", "x": [0.1, 0.5, 0.9],
    ...     "observed_mean": [0.12, 0.45, 0.8], "lo_mean": [0.05, 0.4, 0.7],
    ...     "hi_mean": [0.2, 0.5, 0.9]})
    >>> fig = smoothed_calibration_figure(curves)
    >>> [line.get_ydata().tolist() for line in fig.axes[0].lines if line.get_gid() == "curve:a"]
    [[0.12, 0.45, 0.8]]
    """
    with style():
        if curves.empty:
            return empty_figure("no smoothed calibration curves")
        agents = list(dict.fromkeys(curves["agent"].astype(str)))
        colors = agent_colors(agents)
        fig, axes = _grid(len(agents), columns, 3.0, 2.9)
        binary_bins = None
        if bins is not None and len(bins):
            binary_bins = bins.loc[bins["quantile"].isna()] if "quantile" in bins else bins
        kinds = set()
        for ax, agent in zip(axes, agents, strict=True):
            mine = curves.loc[curves["agent"].astype(str) == agent].sort_values("x")
            if "n_runs" in mine.columns and len(mine):
                mine = mine.loc[mine["n_runs"] >= min_run_share * mine["n_runs"].max()]
            kind = str(mine["kind"].iloc[0])
            kinds.add(kind)
            x = mine["x"].to_numpy(float)
            reference_line(ax, [0, 1], [0, 1], f"diagonal:{agent}", linestyle="--")
            ax.fill_between(
                x,
                mine["lo_mean"].to_numpy(float),
                mine["hi_mean"].to_numpy(float),
                color=colors[agent],
                alpha=0.22,
                linewidth=0,
                gid=f"band:{agent}",
            )
            ax.plot(
                x,
                mine["observed_mean"].to_numpy(float),
                color=colors[agent],
                linewidth=2,
                gid=f"curve:{agent}",
            )
            if binary_bins is not None and kind == "binary":
                points = binary_bins.loc[
                    (binary_bins["agent"].astype(str) == agent) & (binary_bins["n"] > 0)
                ]
                if len(points):
                    ax.plot(
                        points["mean_pred"].to_numpy(float),
                        points["observed"].to_numpy(float),
                        "o",
                        markerfacecolor="none",
                        markeredgecolor="#333333",
                        markersize=5,
                        gid=f"bins:{agent}",
                    )
            xlabel, ylabel = _AXES.get(kind, ("predicted", "observed"))
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
            ax.set_aspect("equal")
            ax.set_title(agent)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
        handles = [
            Line2D([], [], color="#333333", linewidth=2),
            Patch(facecolor="#333333", alpha=0.22),
            Line2D([], [], color="#999999", linestyle="--"),
        ]
        labels = [
            "smoothed, mean over valid runs (agent's colour)",
            "pointwise 95% interval of a run",
            "perfect calibration",
        ]
        if binary_bins is not None and "binary" in kinds:
            handles.append(
                Line2D([], [], marker="o", linestyle="none", markerfacecolor="none", color="#333")
            )
            labels.append("10 bins (mean over runs)")
        outside_legend(fig, handles, labels, ncols=2)
    return fig


def smoothed_calibration_figures(
    curves: pd.DataFrame,
    bins: pd.DataFrame | None = None,
    *,
    columns: int = 3,
    min_run_share: float = 0.5,
    synthetic: Iterable[str] = (),
) -> dict[str, Figure]:
    """:func:`smoothed_calibration_figure` for every task, titled with the task id.

    Parameters
    ----------
    curves : DataFrame
        :func:`~automd_analysis.analysis.calibration_measures.smoothed_curves` (``task`` column).
    bins : DataFrame, optional
        Reliability bins of all tasks (``task`` column), as published (small cells withheld).
    columns, min_run_share
        As :func:`smoothed_calibration_figure`.
    synthetic : iterable of str
        Synthetic tasks: their titles carry
        :data:`~automd_analysis.report.provenance.SYNTHETIC_MARK`.

    Returns
    -------
    dict
        Task id -> figure, tasks sorted.

    See Also
    --------
    smoothed_calibration_figure

    References
    ----------
    .. [1] Austin PC, Steyerberg EW (2014). Statistics in Medicine 33:517-535.

    Examples
    --------
    >>> curves = pd.DataFrame({"task": ["t", "t", "u"], "agent": "a", "kind": "binary",
    ...     "x": [0.1, 0.9, 0.5], "observed_mean": [0.1, 0.9, 0.5], "lo_mean": 0.0,
    ...     "hi_mean": 1.0})
    >>> sorted(smoothed_calibration_figures(curves))
    ['t', 'u']
    """
    out, synthetic = {}, tuple(synthetic)
    for task, rows in curves.groupby("task", sort=True):
        task_bins = None
        if bins is not None and "task" in bins.columns:
            task_bins = bins.loc[bins["task"] == task]
        fig = smoothed_calibration_figure(
            rows.reset_index(drop=True), task_bins, columns=columns, min_run_share=min_run_share
        )
        fig.suptitle(f"Smoothed calibration: {task_label(str(task), synthetic)}")
        out[str(task)] = fig
    return out


@fill_doc(vickers_elkin_2006=VICKERS_ELKIN_2006, panel_columns=_PANEL_COLUMNS)
def decision_curve_figure(
    curves: pd.DataFrame, *, columns: int = 3, synthetic: Iterable[str] = ()
) -> Figure:
    """Decision curves: net benefit against the threshold probability, one panel per task.

    Net benefit at threshold t of treating the patients with p >= t is
    NB(t) = TP/n - FP/n x t / (1 - t); one solid line per agent (mean over its valid runs) in
    its colour (the simple baseline solid grey), treat-all (π - (1 - π) t / (1 - t), dotted black)
    and treat-none (0, dashed black), all named in the legend. The x axis runs from 0 to the
    largest threshold of the table; the y axis from 15 % of the drawn range below the lowest agent
    curve or 0 (treat-all falls steeply and is cut there) to 10 % above the highest curve.
    Synthetic tasks' panel titles carry
    :data:`~automd_analysis.report.provenance.SYNTHETIC_MARK`.

    Parameters
    ----------
    curves : DataFrame
        :func:`~automd_analysis.analysis.calibration_measures.decision_curves`.
    {panel_columns}
    synthetic : iterable of str
        Synthetic tasks (their titles are marked).

    Returns
    -------
    Figure
        Lines ``net_benefit:<task>:<agent>`` (threshold, net_benefit_mean),
        ``treat_all:<task>`` and ``treat_none:<task>``.

    See Also
    --------
    automd_analysis.metrics.net_benefit : the per-run curve.

    References
    ----------
    {vickers_elkin_2006}

    Examples
    --------
    >>> curves = pd.DataFrame({"task": "t", "agent": "a", "threshold": [0.1, 0.2],
    ...     "net_benefit_mean": [0.12, 0.08], "treat_all": [0.11, 0.0], "treat_none": 0.0})
    >>> fig = decision_curve_figure(curves)
    >>> [l.get_ydata().tolist() for l in fig.axes[0].lines if l.get_gid() == "net_benefit:t:a"]
    [[0.12, 0.08]]
    """
    with style():
        if curves.empty:
            return empty_figure("no decision curves (no valid classification runs)")
        tasks = sorted(set(curves["task"].astype(str)))
        synthetic = set(synthetic)
        agents = agent_order(curves["agent"].astype(str))
        colors = agent_colors(agents)
        fig, axes = _grid(len(tasks), columns, 3.1, 2.7)
        for ax, task in zip(axes, tasks, strict=True):
            mine = curves.loc[curves["task"].astype(str) == task]
            reference = mine.drop_duplicates("threshold").sort_values("threshold")
            t = reference["threshold"].to_numpy(float)
            ax.plot(
                t,
                reference["treat_all"].to_numpy(float),
                linestyle=_TREAT_ALL["linestyle"],
                color=_TREAT_ALL["color"],
                linewidth=1.2,
                gid=f"treat_all:{task}",
            )
            ax.plot(
                t,
                np.zeros_like(t),
                linestyle=_TREAT_NONE["linestyle"],
                color=_TREAT_NONE["color"],
                linewidth=1.2,
                gid=f"treat_none:{task}",
            )
            highs = [float(np.nanmax(reference["treat_all"].to_numpy(float)))]
            lows = [0.0]
            for agent in agents:
                rows = mine.loc[mine["agent"].astype(str) == agent].sort_values("threshold")
                if rows.empty:
                    continue
                y = rows["net_benefit_mean"].to_numpy(float)
                ax.plot(
                    rows["threshold"].to_numpy(float),
                    y,
                    color=colors[agent],
                    linewidth=1.8,
                    gid=f"net_benefit:{task}:{agent}",
                )
                if np.isfinite(y).any():
                    highs.append(float(np.nanmax(y)))
                    lows.append(float(np.nanmin(y)))
            top = max(h for h in highs if math.isfinite(h))
            bottom = min(lows)
            span = max(top - bottom, 1e-3)
            ax.set_ylim(bottom - 0.15 * span, top + 0.1 * span)
            ax.set_xlim(0, float(t.max()) if t.size else 1.0)
            ax.set_title(task_label(task, synthetic))
            ax.set_xlabel("threshold probability")
            ax.set_ylabel("net benefit")
        handles = [Line2D([], [], color=colors[a], linewidth=1.8) for a in agents]
        handles += [
            Line2D([], [], linewidth=1.2, **_TREAT_ALL),
            Line2D([], [], linewidth=1.2, **_TREAT_NONE),
        ]
        labels = ["simple baseline" if a == BASELINE_AGENT else a for a in agents] + [
            "treat all (dotted)",
            "treat none (dashed, 0)",
        ]
        outside_legend(fig, handles, labels, ncols=4)
    return fig


@fill_doc(van_calster_2019=VAN_CALSTER_2019)
def measure_rank_figure(agent_table: pd.DataFrame) -> Figure:
    """The agents' calibration rank under each measure (1 = best), as a grid.

    Rows: the ranked agents (the simple baseline is not ranked); columns: the measures of
    :data:`~automd_analysis.analysis.calibration_measures.RANKING_MEASURES` present; each cell
    shows the rank and the measure's value. Constant columns mean the ranking does not depend on
    the measure.

    Parameters
    ----------
    agent_table : DataFrame
        :func:`~automd_analysis.analysis.calibration_measures.agent_measure_table`.

    Returns
    -------
    Figure
        ``fig.axes[0].images[0].get_array()`` holds the ranks (agents x measures).

    See Also
    --------
    automd_analysis.analysis.calibration_measures.rank_flips : the reversed pairs.

    References
    ----------
    {van_calster_2019}

    Examples
    --------
    >>> table = pd.DataFrame({"measure": ["ece_10", "ece_10", "ici", "ici"],
    ...     "agent": ["a", "b", "a", "b"], "value": [0.1, 0.2, 0.05, 0.03],
    ...     "rank": [1.0, 2.0, 2.0, 1.0]})
    >>> measure_rank_figure(table).axes[0].images[0].get_array().tolist()
    [[1.0, 2.0], [2.0, 1.0]]
    """
    ranked = agent_table.loc[agent_table["rank"].notna()]
    with style():
        if ranked.empty:
            return empty_figure("no ranked agents")
        order = [m.name for m in RANKING_MEASURES if m.name in set(ranked["measure"])]
        order += sorted(set(ranked["measure"]) - set(order))
        agents = agent_order(ranked["agent"].astype(str))
        ranks = np.full((len(agents), len(order)), np.nan)
        values = np.full_like(ranks, np.nan)
        for r in ranked.to_dict("records"):
            i, j = agents.index(str(r["agent"])), order.index(r["measure"])
            ranks[i, j], values[i, j] = float(r["rank"]), float(r["value"])
        fig = new_figure(1.8 + 1.1 * len(order), 1.6 + 0.6 * len(agents))
        ax = fig.subplots()
        ax.imshow(
            np.ma.masked_invalid(ranks),
            cmap="viridis_r",
            vmin=1,
            vmax=max(len(agents), 2),
            aspect="auto",
        )
        for i in range(len(agents)):
            for j in range(len(order)):
                if np.isfinite(ranks[i, j]):
                    ax.text(
                        j,
                        i,
                        f"{ranks[i, j]:g}\n{values[i, j]:.3f}",
                        ha="center",
                        va="center",
                        # viridis_r: low ranks light (dark text), high ranks dark (white text)
                        color="black" if ranks[i, j] <= (len(agents) + 1) / 2 else "white",
                        fontsize=MIN_FONT_PT,
                        gid=f"rank:{agents[i]}:{order[j]}",
                    )
        ax.set_xticks(range(len(order)), [_MEASURE_LABELS.get(m, m) for m in order], rotation=30)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
        ax.set_yticks(range(len(agents)), agents)
        ax.grid(False)
        ax.set_title("Rank under each calibration measure (1 = best; value below)")
    return fig


def add_footnote(fig: Figure, text: str) -> Figure:
    """``fig`` with ``text`` as a footnote below its panels (the layout makes room for it).

    The footnote is the figure's ``supxlabel`` (left-aligned, grey), which constrained layout
    keeps clear of the axes; if the figure already has a ``supxlabel``, the text is appended to it
    on a new line.

    Parameters
    ----------
    fig : Figure
    text : str
        Plain text (drawn without mathtext).

    Returns
    -------
    Figure
        The same figure.

    See Also
    --------
    automd_analysis.analysis.annotation_provenance.provenance_text : the usual footnote.

    References
    ----------
    .. [1] Auto-MD-bench, App. I.

    Examples
    --------
    >>> fig = add_footnote(Figure(layout="constrained"), "Codebook answers by a human (3 runs).")
    >>> fig.get_supxlabel()
    'Codebook answers by a human (3 runs).'
    """
    existing = fig.get_supxlabel()
    with style():
        fig.supxlabel(
            f"{existing}\n{text}" if existing else text,
            x=0.01,
            ha="left",
            fontsize=MIN_FONT_PT,
            color="#444444",
        )
    return fig
