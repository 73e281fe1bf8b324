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
        if (tag == "p" and "automd-caption" in classes) or tag == "summary":
            self._caption_buffer = []  # a long table's caption is its <details>' summary
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
        if tag in ("p", "summary") and self._caption_buffer is not None:
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


#: A cell that is one number with a hyphen a browser may break after (``9.0e-04``).
_BREAKABLE_NUMBER = re.compile(r"^[-+]?\d+(?:\.\d+)?[eE]-\d+%?$")


def wrapping_number_cells(page: str) -> list[str]:
    """Number cells of a page's tables that a browser may break inside (a p-value ``9.0e-04``
    read as ``9.0e-`` / ``04``): a cell that is one number in scientific notation whose ``<td>``
    is not ``white-space: nowrap`` - by a class of the cell with a rule of its table
    (``#T_... td.<class>``), its table (``#T_... td``) or the page (``.jp-RenderedHTMLCommon
    td``)."""
    import html as html_lib

    page_wide = last_declaration(page, ".jp-RenderedHTMLCommon td", "white-space") == "nowrap"
    out = []
    for table_id, body in re.findall(r'<table id="([^"]+)">(.*?)</table>', page, flags=re.S):
        if page_wide or last_declaration(page, f"#{table_id} td", "white-space") == "nowrap":
            continue
        for attrs, raw in re.findall(r"<td([^>]*)>(.*?)</td>", body, re.S):
            cell = html_lib.unescape(raw).strip()
            if not _BREAKABLE_NUMBER.match(cell):
                continue
            classes = re.search(r'class="([^"]*)"', attrs)
            kept = any(
                last_declaration(page, f"#{table_id} td.{c}", "white-space") == "nowrap"
                for c in (classes.group(1).split() if classes else [])
            )
            if not kept:
                out.append(f"{table_id}: {cell!r}")
    return out


# ---------------------------------------------------------------------------------------------
# legible labels: no two texts of a saved figure overlap

_GLYPH_DEF = re.compile(r'<path id="([^"]+)" d="([^"]*)"([^>]*)/?>')
_GLYPH_GROUP_OPEN = re.compile(
    r'<g\b[^>]*\btransform="([^"]*scale\(([\d.]+) -([\d.]+)\)[^"]*)"[^>]*>'
)
_USE = re.compile(r"<use\b([^>]*)/?>")
_ATTR = re.compile(r'([\w:-]+)="([^"]*)"')
_FLOAT = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


Box = tuple[float, float, float, float]


def _intersection(a: Box, b: Box) -> tuple[float, float]:
    """Width and height (pt) of the intersection of two boxes (<= 0: none)."""
    return min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])


@dataclass
class TextBox:
    """A text of a saved figure: the box of each of its glyphs and of the whole text, in SVG
    points (y down). A rotated text's glyph boxes follow its slant, so neighbouring slanted tick
    labels do not count as overlapping where only their outer boxes do."""

    text: str
    glyphs: list[Box]

    @property
    def box(self) -> Box:
        return (
            min(g[0] for g in self.glyphs),
            min(g[1] for g in self.glyphs),
            max(g[2] for g in self.glyphs),
            max(g[3] for g in self.glyphs),
        )

    def overlap(self, other: TextBox) -> tuple[float, float]:
        """The largest glyph-to-glyph intersection with ``other`` (width, height in pt)."""
        width, height = _intersection(self.box, other.box)
        if width <= 0 or height <= 0:
            return width, height
        best = (0.0, 0.0)
        for a in self.glyphs:
            for b in other.glyphs:
                w, h = _intersection(a, b)
                if min(w, h) > min(best):
                    best = (w, h)
        return best


def _glyph_boxes(svg: str) -> dict[str, tuple[float, float, float, float]]:
    """Glyph id -> bounding box of its outline in the units its ``<use>`` places it in (from
    every control point; a glyph defined with ``transform="scale(..)"`` is scaled)."""
    out = {}
    for glyph, d, rest in _GLYPH_DEF.findall(svg):
        numbers = [float(v) for v in _FLOAT.findall(d)]
        xs, ys = numbers[0::2], numbers[1::2]
        if not (xs and ys):
            continue
        own = re.search(r'transform="([^"]*)"', rest)
        apply = _transform(own.group(1)) if own else (lambda x, y: (x, y))
        corners = [apply(x, y) for x in (min(xs), max(xs)) for y in (min(ys), max(ys))]
        out[glyph] = (
            min(c[0] for c in corners),
            min(c[1] for c in corners),
            max(c[0] for c in corners),
            max(c[1] for c in corners),
        )
    return out


def _transform(spec: str):
    """The point map of an SVG ``translate(..) [rotate(..)] scale(..)`` transform."""
    import math

    tx = ty = angle = 0.0
    sx = sy = 1.0
    for op, args in re.findall(r"(translate|rotate|scale)\(([^)]*)\)", spec):
        values = [float(v) for v in _FLOAT.findall(args)]
        if op == "translate":
            tx, ty = values[0], values[1] if len(values) > 1 else 0.0
        elif op == "rotate":
            angle = math.radians(values[0])
        else:
            sx, sy = values[0], values[1] if len(values) > 1 else values[0]
    cos, sin = math.cos(angle), math.sin(angle)

    def apply(x: float, y: float) -> tuple[float, float]:
        x, y = x * sx, y * sy
        return tx + x * cos - y * sin, ty + x * sin + y * cos

    return apply


def svg_text_boxes(svg: str) -> list[TextBox]:
    """Every text matplotlib drew as glyphs, with its bounding box in SVG points."""
    glyphs = _glyph_boxes(svg)
    boxes = []
    for match in _GLYPH_GROUP_OPEN.finditer(svg):
        if match.group(2) != match.group(3):
            continue
        end = svg.find("</g>", match.end())
        apply = _transform(match.group(1))
        placed: list[Box] = []
        for attrs in _USE.findall(svg, match.end(), end):
            a = dict(_ATTR.findall(attrs))
            box = glyphs.get(a.get("xlink:href", a.get("href", "")).lstrip("#"))
            if box is None:
                continue
            dx, dy = float(a.get("x", 0)), float(a.get("y", 0))
            own = _transform(a["transform"]) if "transform" in a else (lambda x, y: (x, y))
            corners = [
                apply(*own(gx + dx, gy + dy)) for gx in (box[0], box[2]) for gy in (box[1], box[3])
            ]
            xs, ys = [c[0] for c in corners], [c[1] for c in corners]
            placed.append((min(xs), min(ys), max(xs), max(ys)))
        if not placed:
            continue  # a blank
        comment = _COMMENT_BEFORE.search(svg, max(0, match.start() - 400), match.start())
        boxes.append(TextBox(comment.group(1) if comment else "?", placed))
    return boxes


def overlapping_texts(svg: str, tolerance_pt: float = 0.5) -> list[str]:
    """Pairs of texts of a saved figure that overlap by more than ``tolerance_pt`` in both
    directions (tick labels running into each other, axis labels of neighbouring panels written
    over one another): a reader cannot read either."""
    boxes = svg_text_boxes(svg)
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            width, height = a.overlap(b)
            if width > tolerance_pt and height > tolerance_pt:
                out.append(f"{a.text!r} overlaps {b.text!r} ({width:.1f} x {height:.1f} pt)")
    return out
