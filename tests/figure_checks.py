"""Readability checks shared by the figure tests of the interval and calibration figures.

The report shows figures about 900 px wide: a figure at most 10 in wide (100 px per inch) is shrunk
by at most 10 %, so text of at least 10 pt reads at 9 pt or more. Legends must not cover data.
"""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

MAX_WIDTH_IN = 10.0
MIN_FONT_PT = 10.0


def drawn(fig):
    """Render ``fig`` (Agg) so that layout and text extents are final; returns the renderer."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def visible_texts(fig) -> list[Text]:
    out = []
    for text in fig.findobj(Text):
        axes = text.axes
        if not text.get_visible() or not text.get_text().strip():
            continue
        if axes is not None and not axes.get_visible():
            continue
        out.append(text)
    return out


def assert_readable(fig) -> None:
    """Width, font sizes, and legends (figure-level, outside every axes; no axes legends)."""
    width, _ = fig.get_size_inches()
    assert width <= MAX_WIDTH_IN + 1e-9, f"figure {width:.1f} in wide"
    renderer = drawn(fig)
    small = [(t.get_text(), t.get_fontsize()) for t in visible_texts(fig)]
    small = [s for s in small if s[1] < MIN_FONT_PT]
    assert not small, f"text below {MIN_FONT_PT} pt: {small[:5]}"
    boxes = [ax.get_window_extent(renderer) for ax in fig.axes if ax.get_visible()]
    for ax in fig.axes:
        assert ax.get_legend() is None, "legend inside an axes"
    page = fig.bbox
    for legend in fig.legends:
        box = legend.get_window_extent(renderer)
        for axes_box in boxes:
            assert not box.overlaps(axes_box), "a legend overlaps a panel"
        # the legend is inside the figure (a row of too many entries runs off its edge)
        assert box.x0 >= page.x0 - 1 and box.x1 <= page.x1 + 1, "a legend is cut off"
