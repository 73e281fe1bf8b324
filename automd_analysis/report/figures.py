"""Paper figures from the analysis tables, drawn with seaborn/matplotlib and saved reproducibly.

Each ``figure*`` function takes the DataFrame an analysis function returns and gives back a
:class:`matplotlib.figure.Figure` (built without :mod:`matplotlib.pyplot`, so no global figure state
leaks between notebook cells; Jupyter displays it inline). :func:`save_figure` writes
``<out_dir>/figures/<name>.png`` and ``.svg``: Agg rendering, a fixed ``svg.hashsalt``, no
``Date`` metadata and atomic file replacement, so the same input gives identical files. The
report notebooks publish every figure with :meth:`automd_analysis.report.notebook.Report.figure`,
which calls :func:`save_figure`.

Deterministic drawing: seaborn's own jitter uses numpy's global random state and its bars default
to bootstrapped error bars, so point clouds are jittered here with a seeded generator and bars are
drawn with ``errorbar=None``. Archive-provided labels are drawn as plain text (``text.parse_math``
off), so names containing ``$`` cannot trigger mathtext.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from automd_analysis._atomic import write_bytes_atomic
from automd_analysis.docstrings import SYNTHETIC_TASKS, fill_doc
from automd_analysis.report import figure_style
from automd_analysis.report._files import RAISES_NOT_A_STEM, output_paths
from automd_analysis.report.provenance import task_label

__all__ = [
    "SVG_HASHSALT",
    "external_ratio_figure",
    "figure2a",
    "figure2b",
    "figure3",
    "figure4",
    "figure5",
    "process_correlation_figure",
    "reliability_figure",
    "save_figure",
    "subgroup_gap_figure",
]

#: Fixed salt for the ids matplotlib writes into SVG files (default: random per process).
SVG_HASHSALT = "automd-analysis"
_DPI = 150
_GROUP_TITLES = {
    "averaged_ranks": "Averaged ranks\nas probabilities",
    "imbalance_without_recalibration": "Imbalance handling\nwithout recalibration",
    "other": "Other runs",
    "unannotated": "Not annotated",
}
#: Practice groups are not agents: a grey and a marker each (figure_style.GREYS, MARKERS).
_GROUP_COLORS = dict(zip(_GROUP_TITLES, figure_style.GREYS, strict=True))
_GROUP_MARKERS = dict(zip(_GROUP_TITLES, figure_style.MARKERS, strict=False))
#: Hatches of bars of non-agent series, with a grey each: the k-th series has
#: ``GREYS[k % 4]`` and ``_HATCHES[k % 5]`` (20 distinct pairs), its hatch drawn in white.
_HATCHES = ("", "//", "..", "xx", "\\\\")
#: Count bars of the reliability diagrams, and the grey standing for "any agent's colour" in a legend.
_COUNT_COLOR = "#d4d4d4"
_COUNT_EDGE = "#555555"
_reference_line = figure_style.reference_line
_RC = {"text.parse_math": False, "svg.hashsalt": SVG_HASHSALT, "svg.fonttype": "path"}


@contextmanager
def _style() -> Iterator[None]:
    # seaborn's grid look, then the report's text sizes (figure_style.RC: >= 10 pt everywhere)
    with matplotlib.rc_context(_RC), sns.axes_style("whitegrid"), figure_style.style():
        yield


def _figure(width: float, height: float) -> Figure:
    """A constrained-layout figure at most ``figure_style.MAX_WIDTH_IN`` wide."""
    return figure_style.new_figure(width, height)


def _legend_below(fig: Figure, ax, *, ncols: int = 4) -> None:
    """Move ``ax``'s legend (e.g. seaborn's hue legend) below the panels, so it covers no data;
    one entry per label, at most ``ncols`` columns (fewer when they would not fit:
    :func:`~automd_analysis.report.figure_style.outside_legend`)."""
    handles, labels = ax.get_legend_handles_labels()
    first = dict(zip(labels, handles, strict=True))  # repeated labels (one per panel): one entry
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    figure_style.outside_legend(fig, list(first.values()), list(first), ncols=ncols)


def _jitter(n: int, seed: int, width: float = 0.25) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-width, width, size=n)


def _fmt(value: float) -> str:
    return "n/a" if not np.isfinite(value) else f"{value:.3f}"


def _empty(fig: Figure, message: str) -> Figure:
    ax = fig.subplots()
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()
    return fig


def figure2a(decomposition: pd.DataFrame) -> Figure:
    """Figure 2a: each practice group's share of runs and of the ECE difference from baselines.

    Parameters
    ----------
    decomposition : DataFrame
        :func:`automd_analysis.analysis.calibration_practices.ece_decomposition` (``group``, ``n_runs``,
        ``share_of_runs``, ``share_of_difference``, ``mean_ece``).
    """
    with _style():
        fig = _figure(8.0, 4.4)
        if decomposition.empty:
            return _empty(fig, "no valid runs")
        long = decomposition.melt(
            id_vars=["group"],
            value_vars=["share_of_runs", "share_of_difference"],
            var_name="measure",
            value_name="share",
        )
        long["share"] = 100 * long["share"].astype(float)
        titles = {
            row["group"]: f"{_GROUP_TITLES.get(row['group'], str(row['group']))}\n"
            f"n={int(row['n_runs'])}, mean ECE {_fmt(row['mean_ece'])}"
            for _, row in decomposition.iterrows()
        }
        long["group"] = long["group"].map(titles)
        long["measure"] = long["measure"].map(
            {"share_of_runs": "Share of runs", "share_of_difference": "Share of ECE difference"}
        )
        ax = fig.subplots()
        sns.barplot(
            data=long,
            x="group",
            y="share",
            hue="measure",
            errorbar=None,
            palette=[figure_style.GREYS[3], figure_style.GREYS[1]],  # not agents: greys
            ax=ax,
        )
        _bar_intervals(ax, decomposition, ("share_of_runs", "share_of_difference"))
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xlabel("")
        ax.set_ylabel("% of valid runs /\nof total ECE difference")
        # legend above the panel: the report adds a footnote (the annotator) below it
        handles, labels = ax.get_legend_handles_labels()
        ax.get_legend().remove()
        fig.legend(handles, labels, loc="outside upper center", ncols=2, frameon=False)
    return fig


def _bar_intervals(ax, frame: pd.DataFrame, measures) -> None:
    """A black line over each bar of ``measures`` (one bar container per measure, bars in row
    order) from its ``<measure>_ci_low/high`` columns, in percent; nothing without them."""
    for container, measure in zip(ax.containers, measures, strict=False):
        low, high = f"{measure}_ci_low", f"{measure}_ci_high"
        if low not in frame.columns or high not in frame.columns:
            continue
        for bar, lo, hi in zip(container, frame[low], frame[high], strict=False):
            if np.isfinite(lo) and np.isfinite(hi):
                x = bar.get_x() + bar.get_width() / 2
                ax.vlines(x, 100 * lo, 100 * hi, color="black", linewidth=1.0, zorder=3)


def figure2b(effect: pd.DataFrame, summary: pd.DataFrame | None = None, *, seed: int = 0) -> Figure:
    """Figure 2b: ECE of runs that handle class imbalance, with vs without recalibration.

    Open grey circles are runs (jittered sideways with ``seed``), black diamonds the group
    means, with the 95 % interval of each mean as a black line when ``summary`` gives it, named in
    a legend below the panel. The y axis spans the data.

    Parameters
    ----------
    effect : DataFrame
        :func:`automd_analysis.analysis.calibration_practices.recalibration_effect` (``recalibrated``,
        ``ece``).
    summary : DataFrame, optional
        :func:`automd_analysis.analysis.calibration_practices.recalibration_summary`
        (``recalibrated``, ``mean_ci_low``, ``mean_ci_high``).
    """
    with _style():
        fig = _figure(4.5, 3.8)
        if effect.empty:
            return _empty(fig, "no runs handle class imbalance")
        ax = fig.subplots()
        labels = ["Without recalibration", "With recalibration"]
        for position, flag in enumerate((False, True)):
            values = effect.loc[effect["recalibrated"] == flag, "ece"].to_numpy(float)
            x = position + _jitter(len(values), seed + position)
            ax.scatter(
                x,
                values,
                s=24,
                facecolors="none",
                edgecolors="#666666",
                linewidths=0.8,
                label="run",
                gid=f"runs:{position}",
            )
            if len(values):
                ax.scatter(
                    [position],
                    [values.mean()],
                    marker="D",
                    s=70,
                    color=figure_style.GREYS[0],
                    zorder=3,
                    label="group mean",
                    gid=f"mean:{position}",
                )
            if summary is not None and "mean_ci_low" in summary.columns:
                row = summary.loc[summary["recalibrated"] == flag]
                lo, hi = (
                    row[c].iloc[0] if len(row) else np.nan for c in ("mean_ci_low", "mean_ci_high")
                )
                if np.isfinite(lo) and np.isfinite(hi):
                    ax.vlines(
                        position,
                        lo,
                        hi,
                        color="black",
                        linewidth=1.2,
                        zorder=4,
                        label="95% interval of the mean",
                    )
        ax.set_xticks([0, 1], labels)
        ax.set_xlim(-0.6, 1.6)
        ax.set_ylabel("ECE")
        _legend_below(fig, ax, ncols=3)
    return fig


def reliability_figure(bins: pd.DataFrame, *, columns: int = 2) -> Figure:
    """Reliability diagrams: observed vs mean predicted per bin, one panel per agent.

    Both axes run from 0 to 1. Binary bins (equal-width, ``lo``-``hi``) are circles joined by a
    line in the agent's colour (:func:`~automd_analysis.report.figure_style.agent_colors`), one
    marker per non-empty bin, all of one size; light grey bars along the bottom show each bin's
    count ``n`` (bar height proportional to ``n``, the largest a quarter of the panel high; that
    largest count is given under the agent's name in the panel title). Survival groups are drawn
    per time quantile, each quantile its own grey, line style and marker
    (:data:`~automd_analysis.report.figure_style.GREYS`, ``LINE_STYLES``, ``MARKERS``; their counts
    are near-equal by construction; the median group size is in the title). The dashed grey
    diagonal is perfect calibration. Panels are ``columns`` per row, about 4.5 in wide each (at
    most :data:`automd_analysis.report.figure_style.MAX_WIDTH_IN` in all), and one legend below
    them names every drawn series (gids: ``reliability:<agent>``, ``quantile:<q>:<agent>``,
    ``counts:<agent>:<k>``, ``reference:diagonal:<agent>``).

    Parameters
    ----------
    bins : DataFrame
        :func:`automd_analysis.analysis.calibration_practices.reliability_bins` output.
    columns : int
        Panels per row.
    """
    with _style():
        if bins.empty:
            return _empty(_figure(4.0, 3.0), "no calibration bins")
        agents = list(dict.fromkeys(bins["agent"]))
        colors = figure_style.agent_colors(str(a) for a in agents)
        quantiles = sorted(set(bins["quantile"].dropna().astype(float)))
        ncols = max(1, min(columns, len(agents)))
        nrows = -(-len(agents) // ncols)
        fig = _figure(4.5 * ncols, 3.6 * nrows + 0.5)
        axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
        legend: dict[str, object] = {}
        for ax, agent in zip(axes, agents, strict=False):
            mine = bins.loc[bins["agent"] == agent]
            diagonal = _reference_line(ax, [0, 1], [0, 1], f"diagonal:{agent}", linestyle="--")
            legend.setdefault("perfect calibration", diagonal)
            binary = mine.loc[mine["quantile"].isna()]
            counts_note = ""
            group_sizes: set[int] = set()
            if len(binary):
                counts = binary["n"].to_numpy(float)
                top = counts.max() if counts.max() > 0 else 1.0
                centres = (binary["lo"].to_numpy(float) + binary["hi"].to_numpy(float)) / 2
                widths = binary["hi"].to_numpy(float) - binary["lo"].to_numpy(float)
                bars = ax.bar(
                    centres,
                    0.25 * counts / top,
                    width=0.9 * widths,
                    color=_COUNT_COLOR,
                )
                for k, bar in enumerate(bars):
                    bar.set_gid(f"counts:{agent}:{k}")
                counts_note = f"max n = {int(top)}"
                legend.setdefault("bin count (bar height; max in title)", bars)
            for quantile, part in mine.groupby(mine["quantile"].fillna(-1.0), sort=True):
                part = part.loc[part["n"] > 0]
                if quantile < 0:
                    label, gid = "observed per bin (agent's colour)", f"reliability:{agent}"
                    look = {"color": colors[str(agent)], "marker": "o", "linestyle": "-"}
                else:
                    label, gid = (
                        f"at t = {quantile:g} quantile of times",
                        f"quantile:{quantile:g}:{agent}",
                    )
                    k = quantiles.index(float(quantile))
                    look = {
                        "color": figure_style.GREYS[k % len(figure_style.GREYS)],
                        "marker": figure_style.MARKERS[k % len(figure_style.MARKERS)],
                        "linestyle": figure_style.LINE_STYLES[k % len(figure_style.LINE_STYLES)],
                    }
                if quantile >= 0 and len(part):
                    group_sizes.add(int(part["n"].median()))
                (line,) = ax.plot(
                    part["mean_pred"],
                    part["observed"],
                    markersize=4,
                    linewidth=1.2,
                    label=label,
                    gid=gid,
                    **look,
                )
                if quantile >= 0:
                    legend.setdefault(label, line)
            if group_sizes:  # one size per time quantile, near-equal: said once
                low, high = min(group_sizes), max(group_sizes)
                group = f"n/group {low}" if low == high else f"n/group {low}-{high}"
                counts_note = f"{counts_note}, {group}" if counts_note else group
            ax.set_title(f"{agent}\n({counts_note})" if counts_note else str(agent))
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
            ax.set_xlabel("Mean predicted")
            ax.set_ylabel("Observed")
        for ax in axes[len(agents) :]:
            ax.set_axis_off()
        if any(bins["quantile"].isna()):  # binary curves differ in colour only: one grey entry
            marker = {"marker": "o", "color": _COUNT_EDGE, "markersize": 4}
            legend.setdefault("observed per bin (agent's colour)", Line2D([], [], **marker))
        figure_style.outside_legend(fig, list(legend.values()), list(legend), ncols=2)
    return fig


def figure4(points: pd.DataFrame, baseline: pd.DataFrame | None = None, *, seed: int = 0) -> Figure:
    """Figure 4: AUROC and ECE of valid runs under each evaluation objective.

    Points are runs (jittered sideways with ``seed``), each calibration-practice group its own
    grey and marker (groups are not agents, so no agent colour), short thick black lines the
    objective means, dashed black lines the simple baseline; one legend below names them. The y
    axes span the data (AUROC of runs differ by hundredths around 0.7: an axis from 0 would hide
    them).

    Parameters
    ----------
    points : DataFrame
        :func:`automd_analysis.analysis.objectives.figure4_data`.
    baseline : DataFrame, optional
        :func:`automd_analysis.analysis.objectives.objective_baseline`.
    """
    with _style():
        fig = _figure(8.0, 4.2)
        if points.empty:
            return _empty(fig, "no valid runs")
        axes = fig.subplots(1, 2)
        order = list(dict.fromkeys(points["objective"]))
        for ax, metric, title in zip(axes, ("auroc", "ece"), ("AUROC", "ECE"), strict=True):
            means = points.groupby("objective", sort=False)[metric].mean().reindex(order)
            for i, mean in enumerate(means.to_numpy(float)):
                ax.plot(
                    [i - 0.3, i + 0.3],
                    [mean, mean],
                    color="#222222",
                    linewidth=2.5,
                    solid_capstyle="butt",
                    label="Objective mean" if i == 0 else "_nolegend_",
                    zorder=4,
                )
            for g_index, group in enumerate(_GROUP_COLORS):
                mine = points.loc[points["group"] == group]
                if mine.empty:
                    continue
                x = mine["objective"].map({o: i for i, o in enumerate(order)}).to_numpy(float)
                x = x + _jitter(len(mine), seed + g_index, 0.2)
                ax.scatter(
                    x,
                    mine[metric],
                    s=26,
                    color=_GROUP_COLORS[group],
                    marker=_GROUP_MARKERS[group],
                    edgecolors=figure_style.GREYS[0],
                    linewidths=0.5,
                    label=_GROUP_TITLES[group].replace("\n", " "),
                    zorder=3,
                    gid=f"group:{metric}:{group}",
                )
            if baseline is not None and len(baseline) and np.isfinite(baseline[metric].iloc[0]):
                ax.axhline(
                    float(baseline[metric].iloc[0]),
                    linestyle="--",
                    color="black",
                    label="Simple baseline (mean)",
                    gid=f"reference:baseline:{metric}",
                )
            ax.set_xticks(range(len(order)), [str(o) for o in order])
            ax.set_xlabel("Objective")
            ax.set_ylabel(title)
        handles = {}
        for ax in axes:  # one legend below both panels: groups, then the baseline
            for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
                handles.setdefault(label, handle)
        figure_style.outside_legend(fig, list(handles.values()), list(handles), ncols=2)
    return fig


@fill_doc(synthetic=SYNTHETIC_TASKS)
def external_ratio_figure(table5: pd.DataFrame, *, synthetic: Iterable[str] = ()) -> Figure:
    """Ratio of external to internal normalised score per task and agent (Table 5 ratios).

    One marker per (task, agent), side by side within a task, with its 95 % interval
    (``ratio_ci_low``/``ratio_ci_high``, when the table has them) as a vertical line in the agent's
    colour; the dashed line is 100 % (no loss on the external population). The axis spans the
    ratios, their intervals and 100 % with a margin (10 % of that span, at least 2 points), not 0:
    the differences of interest are a few percent around 100. Synthetic tasks' tick labels carry
    :data:`~automd_analysis.report.provenance.SYNTHETIC_MARK`.

    Parameters
    ----------
    table5 : DataFrame
        :func:`automd_analysis.analysis.shift.table5` (``agent``, ``task``, ``ratio``, optionally
        ``ratio_ci_low``, ``ratio_ci_high``).
    {synthetic}
    """
    with _style():
        data = table5.loc[np.isfinite(table5["ratio"].astype(float))].copy()
        tasks = list(dict.fromkeys(data["task"].astype(str)))
        fig = _figure(max(5.0, 1.1 * len(tasks) + 2.5), 4.2)
        if data.empty:
            return _empty(fig, "no external-validation pairs")
        synthetic = set(synthetic)
        data["ratio_pct"] = 100 * data["ratio"].astype(float)
        agents, colors = _agents_in_order(data)
        ax = fig.subplots()
        for agent, mine, x in _side_by_side(data, agents, "task", tasks, 0.7):
            ax.scatter(x, mine["ratio_pct"], s=40, color=colors[agent], label=agent, zorder=3)
            if {"ratio_ci_low", "ratio_ci_high"} <= set(mine.columns):
                lo = 100 * mine["ratio_ci_low"].to_numpy(float)
                hi = 100 * mine["ratio_ci_high"].to_numpy(float)
                keep = np.isfinite(lo) & np.isfinite(hi)
                ax.vlines(x[keep], lo[keep], hi[keep], color=colors[agent], linewidth=1.2)
        ax.axhline(
            100,
            color="black",
            linestyle="--",
            linewidth=0.8,
            label="100%: no loss",
            gid="reference:100",
            zorder=1.5,
        )
        shown = np.concatenate(
            [data["ratio_pct"].to_numpy(float)]
            + [
                100 * data[c].to_numpy(float)
                for c in ("ratio_ci_low", "ratio_ci_high")
                if c in data
            ]
        )
        shown = shown[np.isfinite(shown)]
        low, high = min(float(shown.min()), 100.0), max(float(shown.max()), 100.0)
        pad = max(2.0, 0.1 * (high - low))
        ax.set_ylim(low - pad, high + pad)
        ax.set_xticks(range(len(tasks)), [task_label(t, synthetic) for t in tasks])
        ax.set_xlim(-0.6, len(tasks) - 0.4)
        if len(tasks) > 4:
            ax.tick_params(axis="x", labelrotation=30)
        ax.set_xlabel("External task")
        ax.set_ylabel("External / internal score (%)")
        _legend_below(fig, ax, ncols=6)
    return fig


@fill_doc(synthetic=SYNTHETIC_TASKS)
def subgroup_gap_figure(table14: pd.DataFrame, *, synthetic: Iterable[str] = ()) -> Figure:
    """Mean gap between the highest- and lowest-scoring subgroup per task group and attribute.

    One row per ``task group / attribute`` (horizontal, so long labels stay readable), one marker
    per agent within a row (agents side by side) with its 95 % interval as a line in the agent's
    colour when the table has ``gap_mean_ci_low``/``gap_mean_ci_high``, named in one legend below the panel;
    about 0.4 in per row, so the figure stays compact with many agents. The x axis starts at 0.
    A task group that is a synthetic task's id carries
    :data:`~automd_analysis.report.provenance.SYNTHETIC_MARK`.

    Parameters
    ----------
    table14 : DataFrame
        :func:`automd_analysis.analysis.subgroups.table14`.
    {synthetic}
    """
    with _style():
        data = table14.loc[np.isfinite(table14["gap_mean"].astype(float))].copy()
        synthetic = set(synthetic)
        groups = data["task_group"].astype(str).map(lambda g: task_label(g, synthetic))
        data["where"] = groups + " / " + data["attribute"].astype(str)
        rows = list(dict.fromkeys(data["where"]))
        fig = _figure(8.0, 0.4 * max(len(rows), 3) + 1.6)
        if data.empty:
            return _empty(fig, "no subgroup gaps")
        agents, colors = _agents_in_order(data)
        ax = fig.subplots()
        for agent, mine, y in _side_by_side(data, agents, "where", rows, 0.6):
            ax.scatter(mine["gap_mean"].astype(float), y, s=36, color=colors[agent], label=agent)
            if {"gap_mean_ci_low", "gap_mean_ci_high"} <= set(mine.columns):
                lo, hi = (mine[c].to_numpy(float) for c in ("gap_mean_ci_low", "gap_mean_ci_high"))
                keep = np.isfinite(lo) & np.isfinite(hi)
                ax.hlines(y[keep], lo[keep], hi[keep], color=colors[agent], linewidth=1.2)
        ax.set_yticks(range(len(rows)), rows)
        ax.set_ylim(len(rows) - 0.5, -0.5)  # first row on top, as in the table
        ax.set_xlim(left=0)
        ax.set_xlabel("Highest - lowest subgroup score (mean over runs)")
        _legend_below(fig, ax, ncols=5)
    return fig


def _agents_in_order(data: pd.DataFrame) -> tuple[list[str], dict]:
    """``data``'s agents (its ``agent`` column made text) in order of appearance, and their colours."""
    data["agent"] = data["agent"].astype(str)
    agents = list(dict.fromkeys(data["agent"]))
    return agents, figure_style.agent_colors(agents)


def _side_by_side(data: pd.DataFrame, agents: list[str], column: str, slots: list, width: float):
    """Each agent's rows and their positions: the slot of ``column``, agents side by side in
    ``width``."""
    index = {slot: k for k, slot in enumerate(slots)}
    step = width / max(len(agents), 1)
    for i, agent in enumerate(agents):
        mine = data.loc[data["agent"] == agent]
        position = mine[column].astype(str).map(index).to_numpy(float)
        yield agent, mine, position + (i - (len(agents) - 1) / 2) * step


def _agents(values) -> list[str]:
    """Agents in display order: alphabetical, the simple baseline last."""
    names = sorted({str(v) for v in values})
    return [a for a in names if a != "baseline"] + [a for a in names if a == "baseline"]


def figure5(curves: pd.DataFrame) -> Figure:
    """Figure 5: mean normalised test score over development time, one step curve per agent.

    Each curve is the mean over an agent's runs of the score of the latest valid version at each
    time (zero before the first valid version, carried forward after the last one).

    Parameters
    ----------
    curves : DataFrame
        :func:`automd_analysis.analysis.development.figure5_curves` (``agent``, ``time_min``,
        ``mean_score``, ``n_runs``).
    """
    with _style():
        fig = _figure(7.0, 4.2)
        if curves.empty:
            return _empty(fig, "no development versions")
        ax = fig.subplots()
        agents = _agents(curves["agent"])
        colors = figure_style.agent_colors(agents)
        for agent in agents:
            mine = curves.loc[curves["agent"].astype(str) == agent].sort_values("time_min")
            runs = int(mine["n_runs"].iloc[0])
            ax.plot(
                mine["time_min"].to_numpy(float) / 60.0,
                mine["mean_score"].to_numpy(float),
                drawstyle="steps-post",
                linewidth=1.4,
                color=colors[agent],
                label=f"{agent} ({_runs_label(runs)})",
            )
        ax.set_xlabel("Development time (hours)")
        ax.set_ylabel("Mean normalised test score")
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        _legend_below(fig, ax, ncols=3)
    return fig


def _runs_label(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def figure3(shares: pd.DataFrame) -> Figure:
    """Figure 3: share of sampled version pairs with each change type, by agent and stage.

    One panel per agent, stacked (one column, at most
    :data:`automd_analysis.report.figure_style.MAX_WIDTH_IN` wide, so the figure stays legible
    at the page's width however many agents there are); bars are the early, middle and late
    pairs (light to dark grey: stages are not agents), named in one legend below the panels; the
    y axes run from 0 to 100 %; only change types that occur in at least one
    annotated sampled pair are drawn (every type stays in the exported table).

    Parameters
    ----------
    shares : DataFrame
        :func:`automd_analysis.analysis.development.figure3_shares` (``agent``, ``stage``,
        ``change``, ``n_pairs``, ``n_with_change``, ``share``).
    """
    from automd_analysis.analysis.development import CHANGE_TYPES, STAGES

    with _style():
        data = shares.loc[shares["n_pairs"].astype(float) > 0].copy()
        present = set(data.loc[data["n_with_change"].astype(float) > 0, "change"].astype(str))
        if data.empty or not present:
            return _empty(_figure(6.0, 3.2), "no annotated version pairs with a change")
        order = [c for c in CHANGE_TYPES if c in present] + sorted(present - set(CHANGE_TYPES))
        data = data.loc[data["change"].astype(str).isin(order)]
        data["share_pct"] = 100 * data["share"].astype(float)
        data["change"] = data["change"].astype(str)
        agents = _agents(data["agent"])
        longest = max(len(c) for c in order)
        fig = _figure(max(5.0, 0.7 * len(order) + 1.5), 2.6 * len(agents) + 0.09 * longest + 1.0)
        axes = np.atleast_1d(
            fig.subplots(len(agents), 1, sharex=True, sharey=True, squeeze=False)
        ).ravel()
        stages = [st for st in STAGES if st in set(data["stage"].astype(str))]
        for ax, agent in zip(axes, agents, strict=True):
            mine = data.loc[data["agent"].astype(str) == agent]
            sns.barplot(
                data=mine,
                x="change",
                y="share_pct",
                hue="stage",
                order=order,
                hue_order=stages,
                errorbar=None,
                palette=[figure_style.GREYS[k] for k in (3, 2, 0)][: len(stages)],
                ax=ax,
            )
            sizes = mine.groupby("stage", sort=False)["n_pairs"].first()
            ax.set_title(
                f"{agent} (pairs: "
                + ", ".join(f"{st} {int(sizes[st])}" for st in stages if st in sizes)
                + ")"
            )
            ax.set_xlabel("")
            ax.set_ylabel("% of sampled pairs")
            ax.set_ylim(0, 100)
            ax.tick_params(axis="x", labelrotation=45)
            for label in ax.get_xticklabels():
                label.set_horizontalalignment("right")
                label.set_rotation_mode("anchor")
        handles, labels = axes[0].get_legend_handles_labels()
        for ax in axes:
            if ax.get_legend() is not None:
                ax.get_legend().remove()
        figure_style.outside_legend(fig, handles, labels)
    return fig


def process_correlation_figure(correlations: pd.DataFrame) -> Figure:
    """Within-task Spearman correlation of each FML-bench process metric with the final score.

    Horizontal bars of rho (x axis -1 to 1) in the metric order of FML-bench Table 4, a grey
    and a white hatch per dimension (dimensions are not agents) named in the legend;
    each bar is labelled with its within-task permutation p-value and the tasks and runs behind
    it; the embedding backend behind the exploration metrics is named in the title.

    Parameters
    ----------
    correlations : DataFrame
        :func:`automd_analysis.analysis.process.spearman_table` (``dimension``, ``metric``,
        ``rho``, ``p``, ``n_tasks``, ``n_runs``, ``embedding_backend``).
    """
    with _style():
        fig = _figure(8.0, 0.42 * max(len(correlations), 4) + 1.6)
        rho = correlations["rho"].astype(float).to_numpy()
        if correlations.empty or not np.isfinite(rho).any():
            return _empty(fig, "no defined correlations (too few runs)")
        ax = fig.subplots()
        dimensions = list(dict.fromkeys(correlations["dimension"].astype(str)))
        greys = figure_style.GREYS
        palette = {d: greys[k % len(greys)] for k, d in enumerate(dimensions)}  # not agents
        hatches = {d: _HATCHES[k % len(_HATCHES)] for k, d in enumerate(dimensions)}
        positions = np.arange(len(correlations))[::-1]
        dims = correlations["dimension"].astype(str)
        bars = ax.barh(positions, np.nan_to_num(rho), color=[palette[d] for d in dims])
        for bar, dimension in zip(bars, dims, strict=True):
            bar.set_hatch(hatches[dimension])
            bar.set_hatchcolor("white")
            bar.set_edgecolor(greys[0])
            bar.set_linewidth(0.5)
        for y, value, p_value, n_tasks, n_runs in zip(
            positions,
            rho,
            correlations["p"].astype(float),
            correlations["n_tasks"],
            correlations["n_runs"],
            strict=True,
        ):
            text = (
                "n/a"
                if not np.isfinite(value)
                else f"p={p_value:.2g}, {int(n_tasks)} tasks, {int(n_runs)} runs"
            )
            ax.text(
                0.02 if not np.isfinite(value) or value < 0 else -0.02,
                y,
                text,
                va="center",
                ha="left" if not np.isfinite(value) or value < 0 else "right",
            )
        ax.set_yticks(positions, correlations["metric"].astype(str).tolist())
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_xlim(-1, 1)
        ax.set_xlabel("within-task Spearman rho with the final normalised score")
        backends = sorted(set(correlations["embedding_backend"].astype(str)))
        ax.set_title(f"Embeddings: {'; '.join(backends)}")
        handles = [
            Patch(
                facecolor=palette[d],
                hatch=hatches[d],
                hatchcolor="white",
                edgecolor=greys[0],
                label=d,
            )
            for d in dimensions
        ]
        figure_style.outside_legend(fig, handles, dimensions)
    return fig


@fill_doc(raises_not_a_stem=RAISES_NOT_A_STEM)
def save_figure(fig: Figure, name: str, out_dir: str | Path) -> dict[str, Path]:
    """Write ``<out_dir>/figures/<name>.png`` and ``.svg`` reproducibly.

    PNG: Agg at 150 dpi. SVG: glyphs as paths, ids salted with :data:`SVG_HASHSALT`, no ``Date``
    metadata, laid out as the PNG was (the layout is computed once). Files are written to a
    temporary name and renamed, so an interrupted save never leaves a truncated figure.

    Returns
    -------
    dict with keys ``png`` and ``svg`` -> written paths.

    Raises
    ------
    {raises_not_a_stem}
    """
    paths = output_paths(out_dir, "figures", "figure", name, ("png", "svg"))
    with matplotlib.rc_context(_RC):
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=_DPI, metadata={"Software": None})
        write_bytes_atomic(paths["png"], buffer.getvalue())
        buffer = io.BytesIO()
        with _layout_kept(fig):  # the PNG's layout: constrained layout is a third of a draw
            fig.savefig(buffer, format="svg", dpi=_DPI, metadata={"Date": None})
        write_bytes_atomic(paths["svg"], buffer.getvalue())
    return paths


@contextmanager
def _layout_kept(fig: Figure) -> Iterator[None]:
    """Draw ``fig`` with the axes positions of its last draw (its layout engine paused)."""
    engine = fig.get_layout_engine()
    fig.set_layout_engine("none")
    try:
        yield
    finally:
        fig.set_layout_engine(engine)
