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
