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


def _svg(fig, tmp_path, name="f") -> str:
    return save_figure(fig, name, tmp_path)["svg"].read_text()


def test_encoding_check_flags_agent_colours_missing_legends_and_unmarked_tasks(tmp_path):
    from matplotlib.lines import Line2D
    from render_checks import figure_encoding_problems

    from automd_analysis.report.figure_style import AGENT_PALETTE, new_figure, outside_legend

    fig = new_figure(5.0, 3.0)
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], color=AGENT_PALETTE[2], gid="quantile:0.5:a")  # codex's green
    ax.plot([0, 1], [1, 0], color="black", linestyle=":", gid="reference:diagonal")  # no entry
    ax.set_title("demo_sepsis, demo_sepsis_local\u2020")
    outside_legend(fig, [Line2D([], [], color=AGENT_PALETTE[2])], ["q=0.5"])
    problems = figure_encoding_problems(_svg(fig, tmp_path), AGENT_PALETTE, ["demo_sepsis"])
    assert any("quantile:0.5:a drawn in agent colour" in p for p in problems)
    assert any("reference:diagonal" in p and "no legend entry" in p for p in problems)
    assert not any("quantile:0.5:a" in p and "no legend" in p for p in problems)
    # demo_sepsis is unmarked once; demo_sepsis_local is another task (and is marked)
    assert [p for p in problems if "synthetic" in p] == [
        "synthetic task demo_sepsis without \u2020 in 'demo_sepsis, demo_sepsis_local\u2020'"
    ]


def test_encoding_check_flags_a_treat_none_line_that_looks_like_the_baseline(tmp_path):
    from matplotlib.lines import Line2D
    from render_checks import figure_encoding_problems

    from automd_analysis.report.figure_style import AGENT_PALETTE, BASELINE_COLOR, new_figure

    fig = new_figure(5.0, 3.0)
    ax = fig.subplots()
    ax.plot([0, 1], [0.2, 0.1], color=BASELINE_COLOR, gid="net_benefit:t:baseline")
    ax.plot([0, 1], [0, 0], color=BASELINE_COLOR, gid="treat_none:t")
    fig.legend([Line2D([], [], color=BASELINE_COLOR)], ["baseline / treat none"])
    [problem] = figure_encoding_problems(_svg(fig, tmp_path), AGENT_PALETTE)
    assert problem.startswith("t: baseline, treat none and treat all look alike")


def test_report_figures_decode_at_once(tmp_path):
    """Reliability (binary and survival), decision curves, Figure 4, the external ratios and
    the Table 5 forest plot: no agent colour off an agent, a legend entry for every other
    series, the synthetic mark on every task label."""
    from render_checks import agent_series_colors, figure_encoding_problems
    from test_report_calibration_figures import _decision
    from test_report_figures import _bins

    from automd_analysis.report import calibration_figures, figures, uncertainty_figures
    from automd_analysis.report.figure_style import AGENT_PALETTE, agent_colors

    table5 = pd.DataFrame(
        {"agent": ["codex", "aide"], "task": ["t_ext", "t_ext"], "ratio": [0.97, 1.02],
         "ratio_ci_low": [0.9, 0.95], "ratio_ci_high": [1.05, 1.1]}
    )  # fmt: skip
    points = pd.DataFrame(
        {"objective": ["a", "a", "b"], "auroc": [0.7, 0.72, 0.71], "ece": [0.1, 0.12, 0.08],
         "group": ["other", "averaged_ranks", "unannotated"]}
    )  # fmt: skip
    baseline = pd.DataFrame({"auroc": [0.7], "ece": [0.1]})
    tasks = ["t", "u"]  # the decision curves' tasks, both synthetic here
    drawn = {  # name: (figure, its synthetic task labels)
        "reliability": (figures.reliability_figure(_bins()), []),
        "decision": (
            calibration_figures.decision_curve_figure(_decision(), synthetic=tasks),
            tasks,
        ),
        "fig4": (figures.figure4(points, baseline), []),
        "ratios": (figures.external_ratio_figure(table5, synthetic=["t_ext"]), ["t_ext"]),
        "forest": (uncertainty_figures.table5_forest(table5, synthetic=["t_ext"]), ["t_ext"]),
    }
    for name, (fig, synthetic) in drawn.items():
        svg = _svg(fig, tmp_path, name)
        assert figure_encoding_problems(svg, AGENT_PALETTE, synthetic) == [], name
    unmarked = _svg(uncertainty_figures.table5_forest(table5), tmp_path, "unmarked")
    assert len(figure_encoding_problems(unmarked, AGENT_PALETTE, ["t_ext"])) == 2  # two rows
    decision = _svg(drawn["decision"][0], tmp_path, "decision")
    colors = agent_series_colors(decision)
    assert colors == {a: {agent_colors([a])[a].lower()} for a in ("aide", "baseline")}
    # the check sees what it checks: the decision curves have both references and the baseline
    assert all(f'id="{g}:t"' in decision for g in ("treat_none", "treat_all"))


def test_interval_cells_wrap_unless_their_table_or_the_page_says_nowrap():
    from render_checks import last_declaration, wrapping_interval_cells

    from automd_analysis.report.tables import render_html

    text = pd.DataFrame({"agent": ["a b"], "score": ["0.60 (98% [0.55, 0.65])"]})
    bold = text.astype(bool) & False
    ours = render_html(text, bold, name="t5")
    assert wrapping_interval_cells(f"<html>{ours}</html>") == []
    assert "<td" in ours and "a b" in ours  # other cells keep their breakable spaces
    bare = '<table id="T_x"><tbody><tr><td>a</td><td>0.60 [0.55, 0.65]</td></tr></tbody></table>'
    assert wrapping_interval_cells(bare) == ["T_x: '0.60 [0.55, 0.65]'"]
    lab = ".jp-RenderedHTMLCommon td,\n.jp-RenderedHTMLCommon th {\n  white-space: normal;\n}\n"
    ours_css = ".jp-RenderedHTMLCommon th, .jp-RenderedHTMLCommon td { white-space: nowrap; }\n"
    assert wrapping_interval_cells(f"<style>\n{lab}{ours_css}</style>{bare}") == []
    assert wrapping_interval_cells(f"<style>\n{ours_css}{lab}</style>{bare}") != []  # lab last
    css = "<style>.t, .u {\n  table-layout: fixed;\n}\n.t { table-layout: auto; }</style>"
    assert last_declaration(css, ".t", "table-layout") == "auto"
    assert last_declaration(css, ".u", "table-layout") == "fixed"


def test_overlapping_texts_finds_labels_written_over_each_other(tmp_path):
    from render_checks import overlapping_texts, svg_text_boxes

    fig = Figure(figsize=(4.0, 3.0))
    ax = fig.subplots()
    ax.set_xticks([0, 0.02], ["a long tick label", "another long one"])  # run into each other
    ax.text(0.5, 0.5, "alone", transform=ax.transAxes)
    problems = overlapping_texts(_svg(fig, tmp_path, "crowded"))
    assert problems and all(
        "'a long tick label' overlaps 'another long one'" in p for p in problems
    )

    fig = Figure(figsize=(4.0, 3.0))
    ax = fig.subplots()
    ax.set_xticks(range(6), [f"slanted_label_{i}" for i in range(6)], rotation=45, ha="right")
    svg = _svg(fig, tmp_path, "slanted")
    boxes = {b.text: b.box for b in svg_text_boxes(svg)}
    first, second = boxes["slanted_label_0"], boxes["slanted_label_1"]
    assert first[2] > second[0]  # their outer boxes overlap...
    assert overlapping_texts(svg) == []  # ...their letters do not


def test_forest_plots_with_several_panels_share_one_readable_x_label(tmp_path):
    """Table 3's forest plot had the same x label under each of four narrow panels, written over
    one another; now it is said once under all panels, with the legend above them."""
    from render_checks import overlapping_texts, svg_texts

    from automd_analysis.report.uncertainty_figures import table3_forest

    t3 = pd.DataFrame({"agent": ["aide", "aiscientist", "autoresearch", "codex", "baseline"]})
    for k, group in enumerate(("survival", "classification", "sequential", "all")):
        t3[f"{group}_bc"] = [0.02 + 0.01 * k + 0.003 * i for i in range(5)]
        t3[f"{group}_bc_ci_low"] = t3[f"{group}_bc"] - 0.01
        t3[f"{group}_bc_ci_high"] = t3[f"{group}_bc"] + 0.02
    svg = _svg(table3_forest(t3), tmp_path, "t3")
    assert overlapping_texts(svg) == []
    assert svg_texts(svg).count("Bias-corrected ECE (lower is better)") == 1


def test_number_cells_never_wrap():
    """A p-value ``9.0e-04`` read as ``9.0e-`` / ``04`` in a narrow column: every cell that is
    one number is kept on one line by its table's style."""
    from render_checks import wrapping_number_cells

    from automd_analysis.report.tables import render_html

    text = pd.DataFrame({"pair": ["a vs b", "a vs c"], "p": ["9.0e-04", "0.012"]})
    ours = render_html(text, text.astype(bool) & False, name="pw")
    assert wrapping_number_cells(f"<html>{ours}</html>") == []
    bare = '<table id="T_x"><tbody><tr><td class="data">9.0e-04</td></tr></tbody></table>'
    assert wrapping_number_cells(bare) == ["T_x: '9.0e-04'"]
