"""Read a rendered report page and its SVG figures without a browser.

A report page shows a figure ``w`` in wide at ``width="W"`` CSS px (the ``<img>`` of
:class:`automd_analysis.report.views.FigureView`). The SVG that
:func:`automd_analysis.report.figures.save_figure` writes is ``72 w`` pt wide and draws every text
as glyph paths inside ``<g transform="translate(..) scale(s -s)">`` with ``s = size / 100`` (the
matplotlib text-to-path font scale), so the size of every text in points is ``100 s``. Shown at
``W`` CSS px (``0.75 W`` CSS pt), the figure is scaled by ``0.75 W / (72 w)``, and a text of
``size`` pt reads at ``size * 0.75 W / (72 w)`` pt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

#: 1 CSS px = 0.75 pt (CSS Values and Units, absolute lengths).
PT_PER_CSS_PX = 0.75
_SVG_WIDTH = re.compile(r'<svg[^>]*\swidth="([\d.]+)pt"')
#: A text drawn as glyphs: ``<g [style=...] transform="translate(..) [rotate(..)] scale(s -s)">``.
_GLYPH_GROUP = re.compile(r'<g\b[^>]*\btransform="[^"]*scale\(([\d.]+) -([\d.]+)\)"')
_COMMENT_BEFORE = re.compile(r"<!-- (.*?) -->\s*$")


@dataclass
class PageFigure:
    name: str
    width_px: int | None
    caption: str = ""


@dataclass
class PageTable:
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    collapsed: bool = False
    caption: str = ""


class ReportPage(HTMLParser):
    """The figures, embedded images and tables of one rendered report page."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.figures: list[PageFigure] = []
        self.images = 0  # every embedded raster image, inside a figure view or not
        self.tables: list[PageTable] = []
        self._details = 0
        self._figure: PageFigure | None = None
        self._figure_depth = 0
        self._in_caption = False
        self._table: PageTable | None = None
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._in_head = False
        self._last_caption = ""
        self._caption_buffer: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "details":
            self._details += 1
        if tag == "div" and "automd-figure" in classes:
            self._figure = PageFigure(name=(attrs.get("id") or "")[len("figure-") :], width_px=None)
            self._figure_depth = 1
        elif tag == "div" and self._figure is not None:
            self._figure_depth += 1
        if tag == "img" and (attrs.get("src") or "").startswith("data:image/"):
            self.images += 1
            if self._figure is not None:
                width = attrs.get("width")
                self._figure.width_px = int(width) if width and width.isdigit() else None
        if tag == "p" and "automd-caption" in classes:
            self._caption_buffer = []
        if tag == "table":
            self._table = PageTable(collapsed=self._details > 0, caption=self._last_caption)
        if self._table is not None:
            if tag == "thead":
                self._in_head = True
            elif tag == "tbody":
                self._in_head = False
            elif tag == "tr":
                self._row = []
            elif tag in ("td", "th"):
                self._cell = []

    def handle_endtag(self, tag):
        if tag == "details":
            self._details -= 1
        if tag == "p" and self._caption_buffer is not None:
            caption = " ".join("".join(self._caption_buffer).split())
            self._caption_buffer = None
            self._last_caption = caption
            if self._figure is not None:
                self._figure.caption = caption
        if tag == "div" and self._figure is not None:
            self._figure_depth -= 1
            if self._figure_depth == 0:
                self.figures.append(self._figure)
                self._figure = None
        if self._table is not None:
            if tag in ("td", "th") and self._cell is not None and self._row is not None:
                self._row.append(" ".join("".join(self._cell).split()))
                self._cell = None
            elif tag == "tr" and self._row is not None:
                if self._in_head or not self._table.header and not self._table.rows:
                    self._table.header = self._row
                else:
                    self._table.rows.append(self._row)
                self._row = None
            elif tag == "table":
                self.tables.append(self._table)
                self._table = None
                self._last_caption = ""

    def handle_data(self, data):
        if self._caption_buffer is not None:
            self._caption_buffer.append(data)
        if self._cell is not None:
            self._cell.append(data)


def svg_width_in(svg: str) -> float:
    """Width of a matplotlib SVG in inches (its ``width`` is in pt)."""
    match = _SVG_WIDTH.search(svg)
    assert match, "SVG without a width in pt"
    return float(match.group(1)) / 72.0


def svg_font_sizes(svg: str) -> list[tuple[str, float]]:
    """(text, size in pt) of every text matplotlib drew as glyph paths (the text is matplotlib's
    comment before the glyph group, ``"?"`` when there is none)."""
    out = []
    for match in _GLYPH_GROUP.finditer(svg):
        if match.group(1) != match.group(2):
            continue
        comment = _COMMENT_BEFORE.search(svg, max(0, match.start() - 400), match.start())
        out.append((comment.group(1) if comment else "?", 100 * float(match.group(1))))
    return out


def displayed_pt(size_pt: float, width_in: float, width_px: int) -> float:
    """Size in CSS pt at which a text of ``size_pt`` reads in a figure ``width_in`` wide shown at
    ``width_px`` CSS px."""
    return size_pt * PT_PER_CSS_PX * width_px / (72.0 * width_in)


def read_page(path: Path) -> ReportPage:
    return ReportPage(path.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------
# figures a reader decodes at once (colours, line styles, legends, synthetic marks) and tables
# that never wrap an interval: read from the saved SVG and the page HTML

#: gid prefixes of drawn series that are not agents (figure code names them so).
NON_AGENT_GIDS = ("reference:", "treat_all:", "treat_none:", "quantile:", "group:", "counts:")
#: gids naming one agent's series: ``<prefix><agent>`` (the agent is the last ``:`` field).
AGENT_GIDS = ("net_benefit:", "curve:", "reliability:")
_GROUP_OPEN = re.compile(r'<g id="([^"]+)">')
_STYLE = re.compile(r'style="([^"]*)"')
_LEGEND = re.compile(r'<g id="legend_\d+">')
_TEXT = re.compile(r"<!-- (.*?) -->")
_INTERVAL = re.compile(r"\[[^\[\]]*,[^\[\]]*\]")


def _props(style: str) -> dict[str, str]:
    pairs = (item.split(":", 1) for item in style.split(";") if ":" in item)
    return {k.strip(): v.strip().lower() for k, v in pairs}


def look(props: dict[str, str]) -> tuple[str, str, tuple[float, ...] | None]:
    """(stroke, fill, dash pattern relative to its first dash) of an SVG style: how a series
    looks whatever its line width (matplotlib scales dashes with the width)."""
    dash = props.get("stroke-dasharray")
    pattern = None
    if dash and dash != "none":
        numbers = [float(x) for x in re.split(r"[ ,]+", dash) if x]
        pattern = tuple(round(n / numbers[0], 1) for n in numbers)
    return props.get("stroke", "none"), props.get("fill", "none"), pattern


def _alike(a: tuple, b: tuple) -> bool:
    """Same colours and the same dash pattern (within 0.15 of each relative dash)."""
    if a[:2] != b[:2] or (a[2] is None) != (b[2] is None):
        return False
    if a[2] is None:
        return True
    return len(a[2]) == len(b[2]) and all(
        abs(x - y) <= 0.15 for x, y in zip(a[2], b[2], strict=True)
    )


def svg_series(svg: str) -> dict[str, dict[str, str]]:
    """gid -> style properties of the first styled element of the artist with that gid."""
    out = {}
    for match in _GROUP_OPEN.finditer(svg):
        style = _STYLE.search(svg, match.end())
        if style:
            out.setdefault(match.group(1), _props(style.group(1)))
    return out


def svg_legend_looks(svg: str) -> set[tuple]:
    """The looks of every handle in the figure's legends (from each legend to the next one or
    the end of the figure)."""
    looks = set()
    starts = [m.start() for m in _LEGEND.finditer(svg)]
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(svg)
        looks |= {look(_props(m.group(1))) for m in _STYLE.finditer(svg, start, end)}
    return looks


def svg_texts(svg: str) -> list[str]:
    """Every text matplotlib drew (its comment before the glyphs)."""
    return [m.group(1) for m in _TEXT.finditer(svg)]


def figure_encoding_problems(
    svg: str, agent_palette, synthetic=(), baseline: str = "baseline"
) -> list[str]:
    """What a reader could not decode at once in one saved figure:

    - a series that is not an agent (gid in :data:`NON_AGENT_GIDS`) drawn in an agent colour,
      or with a look (colour, fill, dash pattern) no legend handle has;
    - decision curves whose simple baseline, treat-none and treat-all look alike;
    - a synthetic task's name in a text without the ``†`` after it.
    """
    palette = {c.lower() for c in agent_palette}
    series = svg_series(svg)
    legend = svg_legend_looks(svg)
    problems = []
    for gid, props in series.items():
        if not gid.startswith(NON_AGENT_GIDS):
            continue
        used = {props.get("stroke"), props.get("fill")} & palette
        if used:
            problems.append(f"{gid} drawn in agent colour {sorted(used)}")
        if not any(_alike(look(props), handle) for handle in legend):
            problems.append(f"{gid} ({look(props)}) has no legend entry")
    for gid in series:
        if gid.startswith("treat_none:"):
            task = gid[len("treat_none:") :]
            looks = [
                look(series[g])
                for g in (f"net_benefit:{task}:{baseline}", gid, f"treat_all:{task}")
                if g in series
            ]
            if len(set(looks)) < len(looks):
                problems.append(f"{task}: baseline, treat none and treat all look alike {looks}")
    for text in svg_texts(svg):
        for task in synthetic:
            if re.search(rf"(?<![\w]){re.escape(task)}(?![\w\u2020])", text):
                problems.append(f"synthetic task {task} without \u2020 in {text!r}")
    return problems


def agent_series_colors(svg: str) -> dict[str, set[str]]:
    """Agent -> stroke colours of its series (gids in :data:`AGENT_GIDS`) in one figure."""
    out: dict[str, set[str]] = {}
    for gid, props in svg_series(svg).items():
        if gid.startswith(AGENT_GIDS) and props.get("stroke", "none") != "none":
            out.setdefault(gid.rsplit(":", 1)[1], set()).add(props["stroke"])
    return out


_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")


def last_declaration(page: str, selector: str, prop: str) -> str | None:
    """The value that the last rule listing exactly ``selector`` gives ``prop`` in the page's
    ``<style>`` blocks (among rules of one specificity the last one wins)."""
    value = None
    for sheet in re.findall(r"<style[^>]*>(.*?)</style>", page, flags=re.S | re.I):
        sheet = re.sub(r"/\*.*?\*/", "", sheet, flags=re.S)
        for selectors, body in _RULE.findall(sheet):
            if selector not in (" ".join(s.split()) for s in selectors.split(",")):
                continue
            found = re.search(rf"(?<![\w-]){re.escape(prop)}\s*:\s*([\w-]+)", body)
            if found:
                value = found.group(1)
    return value


def wrapping_interval_cells(page: str) -> list[str]:
    """Interval cells of a page's tables that may break inside the interval: a breakable space
    (not U+00A0) between the cell's first ``(``/``[`` of its ``[low, high]`` and the end, when
    neither the table (``#T_... td``) nor the page (``.jp-RenderedHTMLCommon td``) is
    ``white-space: nowrap``."""
    import html as html_lib

    page_wide = last_declaration(page, ".jp-RenderedHTMLCommon td", "white-space") == "nowrap"
    out = []
    for table_id, body in re.findall(r'<table id="([^"]+)">(.*?)</table>', page, flags=re.S):
        if page_wide or last_declaration(page, f"#{table_id} td", "white-space") == "nowrap":
            continue
        for raw in re.findall(r"<td[^>]*>(.*?)</td>", body, re.S):
            cell = html_lib.unescape(raw).strip()
            match = _INTERVAL.search(cell)
            if match is None:
                continue
            opening = [i for i in (cell.find("("), match.start()) if i >= 0]
            if re.search(r"[ \t\n\r]", cell[min(opening) :]):
                out.append(f"{table_id}: {cell!r}")
    return out
