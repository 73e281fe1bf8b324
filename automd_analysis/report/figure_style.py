"""Shared look of the interval and calibration figures: readable at the report's page width.

The HTML report shows a figure about 900 px wide. A figure at most :data:`MAX_WIDTH_IN` inches wide
(100 px per inch) is therefore never shrunk by more than 10 %, and with every text at least
:data:`MIN_FONT_PT` + 1 points it reads at 9 pt or more. Legends go outside the axes
(:func:`outside_legend`), below the panels, so they never cover data. Figures are built without
:mod:`matplotlib.pyplot` (no global state) and drawn deterministically; archive strings are plain
text (``text.parse_math`` off). Saving is :func:`automd_analysis.report.figures.save_figure`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import matplotlib
from matplotlib.figure import Figure

from automd_analysis.analysis.store import BASELINE_AGENT

__all__ = [
    "AGENT_PALETTE",
    "BASELINE_COLOR",
    "GREYS",
    "LINE_STYLES",
    "MARKERS",
    "MAX_WIDTH_IN",
    "MIN_FONT_PT",
    "RC",
    "agent_colors",
    "empty_figure",
    "new_figure",
    "outside_legend",
    "reference_line",
    "style",
]

#: Widest figure (inches): 1,000 px at 100 dpi, shown at ~900 px in the report.
MAX_WIDTH_IN = 10.0
#: Smallest font size (points) of any text these figures draw.
MIN_FONT_PT = 10.0
BASELINE_COLOR = "#7f7f7f"
#: Colour-blind-safe qualitative palette (Okabe-Ito without black and grey).
_PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442")
#: Every colour an agent can get (:func:`agent_colors`); series that are not agents never use one.
AGENT_PALETTE = _PALETTE
#: Greys, dark to light, of the series that are not agents (time quantiles, stages, practice
#: groups, dimensions): told apart by :data:`LINE_STYLES` or :data:`MARKERS` too, and named in the
#: legend; the k-th series takes ``GREYS[k % 4]``.
GREYS = ("#222222", "#555555", "#999999", "#c4c4c4")
#: Line styles of non-agent series drawn as lines, in order (the k-th series: ``LINE_STYLES[k]``);
#: plain dashes are left to reference lines (perfect calibration, 100 %, treat none).
LINE_STYLES = ("-", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)))
#: Markers of non-agent series drawn as points, in order.
MARKERS = ("o", "s", "^", "D", "v", "P")
#: The paper's agents, one colour each in every figure (other names: :func:`agent_colors`).
_AGENT_COLORS = {"aide": _PALETTE[0], "aiscientist": _PALETTE[1], "codex": _PALETTE[2],
                 "autoresearch": _PALETTE[3]}  # fmt: skip

#: rcParams of every figure of these modules.
RC = {
    "text.parse_math": False,
    "svg.hashsalt": "automd-analysis",
    "svg.fonttype": "path",
    "font.size": MIN_FONT_PT,
    "axes.titlesize": MIN_FONT_PT + 1,
    "axes.labelsize": MIN_FONT_PT,
    "xtick.labelsize": MIN_FONT_PT,
    "ytick.labelsize": MIN_FONT_PT,
    "legend.fontsize": MIN_FONT_PT,
    "legend.title_fontsize": MIN_FONT_PT,
    "figure.titlesize": MIN_FONT_PT + 2,
    # titles at the top of their axes, where automatic placement puts them when no x-axis is on
    # top (none is); automatic placement measures every y tick label of the axes at each draw
    "axes.titley": 1.0,
    "axes.grid": True,
    "grid.color": "#e5e5e5",
    "grid.linewidth": 0.8,
    "axes.edgecolor": "#555555",
    "axes.spines.top": False,
    "axes.spines.right": False,
}


@contextmanager
def style() -> Iterator[None]:
    """Context in which the figures of these modules are built (:data:`RC`).

    See Also
    --------
    new_figure

    References
    ----------
    .. [1] Matplotlib documentation, "Customizing Matplotlib with style sheets and rcParams".

    Examples
    --------
    >>> import matplotlib
    >>> with style():
    ...     matplotlib.rcParams["font.size"] >= MIN_FONT_PT
    True
    """
    with matplotlib.rc_context(RC):
        yield


def new_figure(width: float, height: float) -> Figure:
    """A constrained-layout figure of ``min(width, MAX_WIDTH_IN)`` x ``height`` inches.

    See Also
    --------
    style, empty_figure

    References
    ----------
    .. [1] Matplotlib documentation, "Constrained layout guide".

    Examples
    --------
    >>> new_figure(14.0, 3.0).get_size_inches().tolist()
    [10.0, 3.0]
    """
    return Figure(figsize=(min(float(width), MAX_WIDTH_IN), float(height)), layout="constrained")


def empty_figure(message: str, width: float = 5.0, height: float = 2.0) -> Figure:
    """A figure that only says why there is nothing to draw (the message centred, no axes).

    See Also
    --------
    new_figure

    References
    ----------
    .. [1] Matplotlib documentation, "Text in Matplotlib".

    Examples
    --------
    >>> empty_figure("no runs").axes[0].texts[0].get_text()
    'no runs'
    """
    fig = new_figure(width, height)
    ax = fig.subplots()
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_axis_off()
    return fig


def agent_colors(agents: Iterable[str]) -> dict[str, str]:
    """Agent -> colour, the same in every figure: the four paper agents have fixed colours of a
    colour-blind-safe palette (Okabe-Ito), any other name the palette colour its sha256 picks (the
    next free one if two names of one figure pick the same), the simple baseline grey
    (:data:`BASELINE_COLOR`); repeated names get one colour.

    See Also
    --------
    outside_legend

    References
    ----------
    .. [1] Okabe M, Ito K (2008). Color Universal Design: how to make figures and presentations
       that are friendly to colorblind people. https://jfly.uni-koeln.de/color/

    Examples
    --------
    >>> agent_colors(["codex", "baseline", "aide", "codex"])
    {'codex': '#009E73', 'baseline': '#7f7f7f', 'aide': '#0072B2'}
    >>> agent_colors(["codex"]) == {"codex": agent_colors(["aide", "codex"])["codex"]}
    True

    A name without a fixed colour never takes a paper agent's colour, whatever the order:

    >>> c = agent_colors(["ai_scientist", "autoresearch"])
    >>> c["ai_scientist"] != c["autoresearch"]
    True
    """
    names = list(dict.fromkeys(agents))
    fixed = {BASELINE_AGENT: BASELINE_COLOR, **_AGENT_COLORS}
    colors = {agent: fixed[agent] for agent in names if agent in fixed}  # reserved first
    for agent in names:
        if agent not in colors:
            start = int(hashlib.sha256(str(agent).encode()).hexdigest(), 16) % len(_PALETTE)
            taken = set(colors.values())
            free = [_PALETTE[(start + k) % len(_PALETTE)] for k in range(len(_PALETTE))]
            colors[agent] = next((c for c in free if c not in taken), free[0])
    return {agent: colors[agent] for agent in names}


def outside_legend(
    fig: Figure,
    handles: Sequence,
    labels: Sequence[str],
    *,
    ncols: int = 4,
    loc: str = "outside lower center",
):
    """One legend for the whole figure, below the panels (constrained layout makes room), so it
    never covers data; ``None`` when there is nothing to list. At most ``ncols`` columns, fewer
    when a row of the longest label would not fit the figure's width (about 0.085 in per
    character at 10 pt, plus 0.6 in for the marker and spacing). ``loc="outside upper center"``
    puts it above the panels (a figure whose x label is shared under all panels).

    See Also
    --------
    new_figure

    References
    ----------
    .. [1] Matplotlib documentation, "Legend guide" (figure legends, ``loc="outside ..."``).

    Examples
    --------
    >>> from matplotlib.lines import Line2D
    >>> fig = new_figure(4, 3)
    >>> _ = fig.subplots()
    >>> outside_legend(fig, [Line2D([], [])], ["a line"]).get_texts()[0].get_text()
    'a line'
    """
    if not handles:
        return None
    entry_in = 0.6 + 0.085 * max(len(str(label)) for label in labels)
    fits = int((fig.get_size_inches()[0] - 0.2) // entry_in)
    return fig.legend(
        handles,
        labels,
        loc=loc,
        ncols=max(1, min(ncols, len(handles), fits)),
        frameon=False,
    )


def reference_line(ax, x, y, name: str, *, linestyle: str = "--", color: str = "#999999", **kw):
    """A reference line that is not an agent's series (perfect calibration, treat none, 100 %):
    grey or black, never an agent colour, drawn under the data with ``gid`` ``reference:<name>``
    (a figure's legend names it).

    See Also
    --------
    agent_colors, GREYS

    References
    ----------
    .. [1] Matplotlib documentation, "Linestyles".

    Examples
    --------
    >>> fig = new_figure(4, 3)
    >>> line = reference_line(fig.subplots(), [0, 1], [0, 1], "diagonal")
    >>> line.get_gid(), line.get_linestyle(), line.get_color()
    ('reference:diagonal', '--', '#999999')
    """
    if color.lower() in {c.lower() for c in AGENT_PALETTE}:
        raise ValueError(f"reference line {name!r}: {color} is an agent colour")
    kw.setdefault("linewidth", 1.0)
    (line,) = ax.plot(
        x, y, linestyle=linestyle, color=color, zorder=1.5, gid=f"reference:{name}", **kw
    )
    return line
