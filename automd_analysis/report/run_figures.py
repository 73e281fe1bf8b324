"""The figure of a run's page: its development tree or sequence, and its calibration.

Panel (a) draws every version at its time (minutes from the run's start): the held-out primary
metric as filled markers in the agent's colour, the agent's own validation score as open black
markers (when it is on the same scale: AUROC and C^td tasks, or a run without scores), grey
lines from each version to its parent, invalid files and failed steps as black crosses on the
bottom edge, and the selected version ringed. Panel (b), for a run whose selected submission is
valid, draws its smoothed calibration curve with its pointwise 95 % band against the simple
baseline's curve on the same task (solid grey) and perfect calibration (dashed grey), both axes
0-1. Everything comes from the score store (``scores``, ``steps``, ``calibration_curves``).

The figure is written as SVG with text as paths (no fonts, no scripts) and no date, so the same
run gives the same bytes; archive strings drawn in it are plain text (``text.parse_math`` off).
"""

from __future__ import annotations

import io
import math

import matplotlib
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from automd_analysis.report import figure_style
from automd_analysis.report.run_versions import TreeNode

__all__ = ["run_figure"]

_FAILED = "#222222"


def _finite(value) -> bool:
    return value is not None and math.isfinite(value)


def _development(ax, nodes: list[TreeNode], color: str, show_val: bool, metric: str) -> list:
    """Panel (a); returns its legend entries."""
    xs = [n.x for n in nodes if _finite(n.x)]
    order = {n.id: i for i, n in enumerate(nodes)}
    use_steps = not xs
    x_of = {n.id: (float(order[n.id] + 1) if use_steps else n.x) for n in nodes}
    has_test = any(_finite(n.y_test) for n in nodes)
    y_of = {n.id: (n.y_test if has_test else n.y_val) for n in nodes}
    ys = [y for y in y_of.values() if _finite(y)]
    ys += [n.y_val for n in nodes if show_val and _finite(n.y_val)]
    low = min(ys) if ys else 0.0
    high = max(ys) if ys else 1.0
    pad = max((high - low) * 0.08, 0.01)
    floor = low - pad
    segments = []
    for n in nodes:
        if n.parent in x_of and _finite(x_of[n.id]) and _finite(x_of[n.parent]):
            y0 = y_of[n.parent] if _finite(y_of[n.parent]) else floor
            y1 = y_of[n.id] if _finite(y_of[n.id]) else floor
            segments.append([(x_of[n.parent], y0), (x_of[n.id], y1)])
    if segments:
        ax.add_collection(LineCollection(segments, colors="#b0b0b0", linewidths=1.0, zorder=1))
    entries = []
    ok = [n for n in nodes if _finite(y_of[n.id]) and _finite(x_of[n.id]) and not n.failed]
    if ok:
        ax.scatter([x_of[n.id] for n in ok], [y_of[n.id] for n in ok], s=26, color=color,
                   zorder=3)  # fmt: skip
        label = "held-out primary metric" if has_test else "reported validation score"
        entries.append((Line2D([], [], marker="o", linestyle="", color=color), label))
    if show_val and has_test:
        val = [n for n in nodes if _finite(n.y_val) and _finite(x_of[n.id])]
        if val:
            ax.scatter([x_of[n.id] for n in val], [n.y_val for n in val], s=26,
                       facecolors="none", edgecolors="#222222", linewidths=0.9, zorder=4)  # fmt: skip
            entries.append((Line2D([], [], marker="o", linestyle="", markerfacecolor="none",
                                   color="#222222"), "agent's validation score"))  # fmt: skip
    failed = [n for n in nodes if n.failed and _finite(x_of[n.id])]
    if failed:
        ax.scatter([x_of[n.id] for n in failed], [floor] * len(failed), marker="x", s=30,
                   color=_FAILED, linewidths=1.2, zorder=3, clip_on=False)  # fmt: skip
        entries.append((Line2D([], [], marker="x", linestyle="", color=_FAILED),
                        "invalid file / failed step"))  # fmt: skip
    chosen = [n for n in nodes if n.selected and _finite(x_of[n.id])]
    if chosen:
        n = chosen[0]
        y = y_of[n.id] if _finite(y_of[n.id]) else floor
        ax.scatter([x_of[n.id]], [y], s=150, facecolors="none", edgecolors="#222222",
                   linewidths=1.6, zorder=5)  # fmt: skip
        entries.append((Line2D([], [], marker="o", markersize=11, linestyle="",
                               markerfacecolor="none", color="#222222"), "selected"))  # fmt: skip
    if segments:
        entries.append((Line2D([], [], color="#b0b0b0"), "parent to child"))
    ax.set_ylim(floor - pad * 0.5, high + pad)
    if xs or use_steps:
        span = [v for v in x_of.values() if _finite(v)]
        ax.set_xlim(min(0.0, min(span)) if span else 0.0, (max(span) if span else 1.0) * 1.04 + 0.5)
    ax.set_xlabel("Development step" if use_steps else "Minutes from the run's start")
    ax.set_ylabel(metric if has_test else "Reported validation score")
    ax.set_title("(a) Development", loc="left")
    return entries


def _calibration(ax, curve: list[dict], baseline: list[dict], color: str) -> list:
    """Panel (b); returns its legend entries."""
    entries = []
    figure_style.reference_line(ax, [0, 1], [0, 1], "perfect calibration")
    entries.append((Line2D([], [], color="#999999", linestyle="--"), "perfect calibration"))
    if baseline:
        ax.plot([r["x"] for r in baseline], [r["observed"] for r in baseline],
                color=figure_style.BASELINE_COLOR, linewidth=1.3, zorder=2)  # fmt: skip
        entries.append((Line2D([], [], color=figure_style.BASELINE_COLOR), "simple baseline"))
    xs = [r["x"] for r in curve]
    lo = [r["lo"] if _finite(r.get("lo")) else math.nan for r in curve]
    hi = [r["hi"] if _finite(r.get("hi")) else math.nan for r in curve]
    ax.fill_between(xs, lo, hi, color=color, alpha=0.18, linewidth=0, zorder=2)
    ax.plot(xs, [r["observed"] for r in curve], color=color, linewidth=1.6, zorder=3)
    entries.append((Line2D([], [], color=color, linewidth=1.6), "selected submission (95 % band)"))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    horizon = curve[0].get("horizon") if curve else None
    at = f" at t = {horizon:g}" if _finite(horizon) else ""
    ax.set_xlabel(f"Predicted risk{at}")
    ax.set_ylabel("Observed risk (smoothed)")
    ax.set_title("(b) Calibration", loc="left")
    return entries


def run_figure(
    nodes: list[TreeNode],
    *,
    agent: str,
    metric: str,
    show_val: bool,
    curve: list[dict] | None = None,
    baseline: list[dict] | None = None,
) -> bytes:
    """The SVG of a run page's figure.

    Parameters
    ----------
    nodes : list of TreeNode
        :func:`automd_analysis.report.run_versions.tree_nodes`.
    agent : str
        The run's agent (its colour, :func:`~automd_analysis.report.figure_style.agent_colors`).
    metric : str
        The task's primary metric (y axis of panel a).
    show_val : bool
        Draw the agent's validation scores next to the held-out metric (same scale).
    curve, baseline : list of dict, optional
        ``calibration_curves`` rows of the selected submission and of the simple baseline;
        panel (b) is drawn when ``curve`` has rows.

    Returns
    -------
    bytes
        An SVG document.

    Examples
    --------
    >>> svg = run_figure([TreeNode("v1", 5.0, 0.7, 0.72, False, None, True)], agent="aide",
    ...                  metric="auroc", show_val=True)
    >>> svg.startswith(b"<?xml") and b"<script" not in svg
    True
    """
    color = figure_style.agent_colors([agent])[agent]
    with figure_style.style():
        width = 10.0 if curve else 6.4
        fig = Figure(figsize=(width, 4.0))  # fixed margins: a layout engine would draw it twice
        axes = fig.subplots(1, 2 if curve else 1, width_ratios=[1.6, 1] if curve else None)
        axes = list(axes) if curve else [axes]
        fig.subplots_adjust(left=0.72 / width, right=1 - 0.25 / width, bottom=0.3, top=0.92,
                            wspace=0.22)  # fmt: skip
        for ax in axes:
            ax.locator_params(nbins=5)  # few ticks: each is three artists to draw
        entries = _development(axes[0], nodes, color, show_val, metric)
        if curve:
            entries += _calibration(axes[1], curve, baseline or [], color)
        seen: dict[str, object] = {}
        for handle, label in entries:
            seen.setdefault(label, handle)
        if seen:
            fig.legend(list(seen.values()), list(seen), loc="lower center", ncols=3,
                       frameon=False, bbox_to_anchor=(0.5, 0.0))  # fmt: skip
        buffer = io.BytesIO()
        with matplotlib.rc_context({"svg.fonttype": "none"}):  # text as text: 3 times faster
            fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()
