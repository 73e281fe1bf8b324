"""The page and SVG reader behind the render test of ``test_regenerate.py`` sees what it checks."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from render_checks import displayed_pt, read_page, svg_font_sizes, svg_width_in

from automd_analysis.report.figures import save_figure
from automd_analysis.report.views import FigureView, collapsed_table_html, table_html


def test_svg_font_sizes_and_width_of_a_saved_figure(tmp_path):
    with sns.axes_style("whitegrid"):  # seaborn styles text with a fill colour attribute
        fig = Figure(figsize=(12.0, 3.0))
        ax = fig.subplots()
        ax.set_xlabel("tiny label", fontsize=7)
        ax.set_ylabel("rotated", fontsize=11)
        ax.set_title("title", fontsize=14)
    svg = save_figure(fig, "f", tmp_path)["svg"].read_text()
    assert svg_width_in(svg) == 12.0
    sizes = dict(svg_font_sizes(svg))
    assert round(sizes["tiny label"], 6) == 7 and round(sizes["rotated"], 6) == 11
    assert round(sizes["title"], 6) == 14
    assert all(text != "?" for text, _ in svg_font_sizes(svg))
    # 10 pt in a 10 in figure shown 900 px wide: 10 * 0.75 * 900 / 720 pt
    assert displayed_pt(10, 10.0, 900) == 9.375


def test_report_page_reads_figures_tables_and_collapsed_tables(tmp_path):
    fig = Figure(figsize=(5.0, 2.0))
    fig.subplots().plot([0, 1])
    paths = save_figure(fig, "fig_a", tmp_path)
    view = FigureView("fig_a", "A caption & more.", paths["png"].read_bytes(), 5.0, paths)
    table = "<table><thead><tr><th>a</th><th>p</th></tr></thead><tbody>{}</tbody></table>"
    rows = "".join(f"<tr><td>{i}</td><td>0.5</td></tr>" for i in range(3))
    page = (
        f"<html><body>{view._repr_html_()}"
        f"{table_html(table.format(rows), 'Short.', 'short')}"
        f"{collapsed_table_html(table.format(rows * 10), 'Long.', 30, 'long')}"
        '<img src="data:image/png;base64,AAAA"></body></html>'
    )
    path = tmp_path / "page.html"
    path.write_text(page)
    parsed = read_page(path)
    [figure] = parsed.figures
    assert (figure.name, figure.width_px) == ("fig_a", 500)
    assert figure.caption == "Figure fig_a. A caption & more."
    assert parsed.images == 2  # the bare image is counted: it is not a figure view
    short, long = parsed.tables
    assert (short.header, len(short.rows), short.collapsed) == (["a", "p"], 3, False)
    assert (len(long.rows), long.collapsed) == (30, True)
    assert pd.Series([r[1] for r in long.rows]).eq("0.5").all()
