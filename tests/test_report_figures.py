"""Figures: drawn from the analysis tables, deterministic PNG/SVG, safe with archive strings."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import storebuilder as sb
from figure_checks import assert_readable
from matplotlib.colors import to_hex, to_rgba_array
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from automd_analysis.analysis import calibration_practices as calibration
from automd_analysis.report import figures as fg
from automd_analysis.report.figure_style import AGENT_PALETTE, GREYS, agent_colors

TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def store():
    data = sb.complete_runs(seed=5, agents=("aide", "codex"))
    return sb.build_store(
        data["runs"], subgroups=data["subgroups"], calibration_bins=data["calibration_bins"]
    )


def test_figure2b_marks_group_means(store):
    effect = calibration.recalibration_effect(store)
    fig = fg.figure2b(effect, seed=1)
    ax = fig.axes[0]
    diamonds = [c for c in ax.collections if c.get_offsets().shape[0] == 1]
    means = sorted(float(c.get_offsets()[0][1]) for c in diamonds)
    expected = sorted(effect.groupby("recalibrated")["ece"].mean().to_numpy())
    np.testing.assert_allclose(means, expected)
    points = sum(c.get_offsets().shape[0] for c in ax.collections) - len(diamonds)
    assert points == len(effect)


def test_figure2a_bars_are_the_shares(store):
    decomposition = calibration.ece_decomposition(store)
    fig = fg.figure2a(decomposition)
    heights = sorted(round(p.get_height(), 9) for p in fig.axes[0].patches if p.get_width() > 0)
    expected = sorted(
        round(100 * v, 9)
        for v in np.concatenate(
            [decomposition["share_of_runs"], decomposition["share_of_difference"]]
        )
    )
    assert heights == expected


# ---------------------------------------------------------------------------------------------
# what is drawn: read back from matplotlib's artists


def _bars(ax) -> list[tuple[float, float, tuple]]:
    """(x centre, height, face colour) of every drawn bar; seaborn's legend proxies (zero
    width and height) and empty bars are left out."""
    return [
        (p.get_x() + p.get_width() / 2, p.get_height(), p.get_facecolor()[:3])
        for p in ax.patches
        if p.get_width() != 0 and p.get_height() != 0
    ]


def _legend(ax) -> dict[str, tuple]:
    """Legend label -> RGB colour of its handle (patch face colour or line colour); the legend
    is the figure's one legend below the panels."""
    [legend] = ax.figure.legends
    colors = {}
    for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True):
        if isinstance(handle, Patch):
            color = handle.get_facecolor()
        elif hasattr(handle, "get_color"):
            color = handle.get_color()
        else:  # a scatter's PathCollection
            color = handle.get_facecolor()[0]
        colors[text.get_text()] = tuple(to_rgba_array(color)[0][:3])
    return colors


def _tick_label(ax, x: float) -> str:
    """The x tick label of the category a bar centred at ``x`` belongs to."""
    ticks = np.asarray(ax.get_xticks(), float)
    return ax.get_xticklabels()[int(np.argmin(np.abs(ticks - x)))].get_text()


def _hue_bars(ax) -> set[tuple[str, str, float]]:
    """(x category, legend entry, rounded height) of every bar of a seaborn hue bar plot."""
    by_color = {color: label for label, color in _legend(ax).items()}
    return {(_tick_label(ax, x), by_color[color], round(h, 9)) for x, h, color in _bars(ax)}


def test_figure2a_draws_each_groups_two_shares_with_titles_and_legend():
    decomposition = pd.DataFrame(
        {
            "group": ["averaged_ranks", "other", "unannotated"],
            "n_runs": [3, 6, 1],
            "share_of_runs": [0.3, 0.6, 0.1],
            "share_of_difference": [0.9, -0.2, 0.3],
            "mean_ece": [0.21, 0.04, np.nan],
        }
    )
    fig = fg.figure2a(decomposition)
    assert_readable(fig)
    ax = fig.axes[0]
    titles = {
        "averaged_ranks": "Averaged ranks\nas probabilities\nn=3, mean ECE 0.210",
        "other": "Other runs\nn=6, mean ECE 0.040",
        "unannotated": "Not annotated\nn=1, mean ECE n/a",
    }
    assert [t.get_text() for t in ax.get_xticklabels()] == list(titles.values())
    assert set(_legend(ax)) == {"Share of runs", "Share of ECE difference"}
    assert _hue_bars(ax) == {
        (titles[g], "Share of runs", round(100 * r, 9))
        for g, r in zip(decomposition["group"], decomposition["share_of_runs"], strict=True)
    } | {
        (titles[g], "Share of ECE difference", round(100 * d, 9))
        for g, d in zip(decomposition["group"], decomposition["share_of_difference"], strict=True)
    }
    [zero] = ax.get_lines()  # the reference line at 0 (a negative share goes below it)
    assert set(zero.get_ydata()) == {0}


def test_figure2a_legend_stays_clear_of_the_annotator_footnote():
    from figure_checks import drawn

    from automd_analysis.report.calibration_figures import add_footnote

    decomposition = pd.DataFrame(
        {"group": ["other"], "n_runs": [3], "share_of_runs": [1.0], "share_of_difference": [1.0],
         "mean_ece": [0.1]}
    )  # fmt: skip
    fig = add_footnote(fg.figure2a(decomposition), "Codebook answers by a human (3 runs).")
    assert_readable(fig)
    renderer = drawn(fig)
    [legend] = fig.legends
    footnote = fig._supxlabel.get_window_extent(renderer)
    assert not legend.get_window_extent(renderer).overlaps(footnote)


def test_figure2b_draws_every_run_at_its_group_position():
    effect = pd.DataFrame(
        {"recalibrated": [False, False, False, True, True], "ece": [0.3, 0.1, 0.2, 0.05, 0.07]}
    )
    ax = fg.figure2b(effect, seed=4).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "Without recalibration",
        "With recalibration",
    ]
    assert ax.get_ylabel() == "ECE"
    runs = [c for c in ax.collections if c.get_offsets().shape[0] > 1]
    for position, flag in enumerate((False, True)):
        [cloud] = [c for c in runs if abs(c.get_offsets()[:, 0].mean() - position) < 0.3]
        xy = np.asarray(cloud.get_offsets())
        assert np.all(np.abs(xy[:, 0] - position) <= 0.25)  # jitter stays inside the group
        expected = effect.loc[effect["recalibrated"] == flag, "ece"]
        np.testing.assert_allclose(sorted(xy[:, 1]), sorted(expected))
        [diamond] = [
            c
            for c in ax.collections
            if c.get_offsets().shape[0] == 1 and c.get_offsets()[0][0] == position
        ]
        np.testing.assert_allclose(diamond.get_offsets()[0][1], expected.mean())


def _bins() -> pd.DataFrame:
    """Two agents: ``a`` with two binary bins, ``b`` with a survival time quantile."""
    return pd.DataFrame(
        {
            "agent": ["a", "a", "a", "b", "b", "b"],
            "kind": ["binary", "binary", "binary", "survival", "survival", "survival"],
            "quantile": [np.nan, np.nan, np.nan, 0.5, 0.5, 0.5],
            "time": [np.nan, np.nan, np.nan, 30.0, 30.0, 30.0],
            "bin": [0, 1, 2, 0, 1, 2],
            "lo": [0.0, 0.5, 0.9, np.nan, np.nan, np.nan],
            "hi": [0.5, 0.9, 1.0, np.nan, np.nan, np.nan],
            "n": [40, 10, 0, 12, 12, 11],
            "n_runs": [2, 2, 0, 1, 1, 1],
            "mean_pred": [0.2, 0.7, np.nan, 0.1, 0.4, 0.8],
            "observed": [0.25, 0.6, np.nan, 0.15, 0.35, 0.7],
        }
    )


def test_reliability_figure_draws_each_agents_bins_counts_and_diagonal():
    bins = _bins()
    fig = fg.reliability_figure(bins)
    assert_readable(fig)
    panels = {ax.get_title().split("\n")[0]: ax for ax in fig.axes if ax.get_title()}
    assert set(panels) == {"a", "b"}
    for agent, ax in panels.items():
        mine = bins[(bins["agent"] == agent) & (bins["n"] > 0)]
        diagonal, curve = ax.get_lines()
        assert list(diagonal.get_xdata()) == [0, 1] and list(diagonal.get_ydata()) == [0, 1]
        np.testing.assert_allclose(curve.get_xdata(), mine["mean_pred"])
        np.testing.assert_allclose(curve.get_ydata(), mine["observed"])
        assert ax.get_xlim() == (0, 1) and ax.get_ylim() == (0, 1)
    a = panels["a"]
    counts = sorted((round(x, 9), round(h, 9)) for x, h, _ in _bars(a))
    # bars at the bin centres, the largest count (40) a quarter of the panel high; the empty
    # third bin has no bar
    assert counts == [(0.25, 0.25), (0.7, 0.0625)]
    assert a.get_title() == "a\n(max n = 40)"  # in the title: never over the bars
    assert not _bars(panels["b"])  # survival groups have no count bars
    assert panels["b"].get_title() == "b\n(n/group 12)"  # said once for all its quantiles
    # the binary curve in the agent's colour, the survival quantile in a grey of its own
    [a_curve] = [line for line in a.get_lines() if line.get_gid() == "reliability:a"]
    assert a_curve.get_color() == agent_colors(["a"])["a"]
    [b_curve] = [line for line in panels["b"].get_lines() if line.get_gid() == "quantile:0.5:b"]
    assert b_curve.get_color() in GREYS
    # one legend for the figure naming every kind of series drawn
    [legend] = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "perfect calibration",
        "bin count (bar height; max in title)",
        "at t = 0.5 quantile of times",
        "observed per bin (agent's colour)",
    ]


def test_reliability_figure_of_binary_bins_only_names_diagonal_bars_and_bins():
    bins = _bins().query("agent == 'a'")
    fig = fg.reliability_figure(bins)
    [legend] = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "perfect calibration",
        "bin count (bar height; max in title)",
        "observed per bin (agent's colour)",
    ]
    assert_readable(fig)


def test_reliability_figure_of_many_agents_is_at_most_ten_inches_wide():
    bins = pd.concat([_bins().assign(agent=lambda d, k=k: d["agent"] + str(k)) for k in range(4)])
    fig = fg.reliability_figure(bins)
    assert len([ax for ax in fig.axes if ax.get_title()]) == 8
    assert_readable(fig)


def test_figure4_draws_objective_means_runs_and_the_baseline():
    points = pd.DataFrame(
        {
            "objective": ["auroc", "auroc", "auroc", "brier", "brier"],
            "agent": ["x"] * 5,
            "run_id": [f"r{i}" for i in range(5)],
            "auroc": [0.7, 0.8, 0.9, 0.6, 0.65],
            "ece": [0.2, 0.1, 0.15, 0.05, 0.03],
            "group": [
                "averaged_ranks",
                "other",
                "other",
                "other",
                "imbalance_without_recalibration",
            ],
        }
    )
    baseline = pd.DataFrame({"task": ["clf_a"], "n_valid": [5], "auroc": [0.75], "ece": [0.04]})
    fig = fg.figure4(points, baseline, seed=3)
    for ax, metric in zip(fig.axes, ("auroc", "ece"), strict=True):
        assert [t.get_text() for t in ax.get_xticklabels()] == ["auroc", "brier"]
        *mean_lines, line = ax.get_lines()  # objective means (solid), then the baseline
        means = points.groupby("objective", sort=False)[metric].mean()
        assert [(float(np.mean(m.get_xdata())), m.get_ydata()[0]) for m in mean_lines] == [
            (0.0, pytest.approx(means.iloc[0])),
            (1.0, pytest.approx(means.iloc[1])),
        ]
        assert all(m.get_linestyle() == "-" for m in mean_lines)
        drawn = np.concatenate([c.get_offsets() for c in ax.collections])
        expected = points.assign(x=points["objective"].map({"auroc": 0, "brier": 1}))
        got = sorted((int(round(x)), round(y, 9)) for x, y in drawn)
        assert got == sorted(zip(expected["x"], expected[metric].round(9), strict=True))
        assert np.all(np.abs(drawn[:, 0] - np.round(drawn[:, 0])) <= 0.2)
        assert set(line.get_ydata()) == {baseline[metric].iloc[0]}
        assert line.get_linestyle() == "--"
    assert_readable(fig)
    [legend] = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == [
        "Objective mean",
        "Averaged ranks as probabilities",
        "Imbalance handling without recalibration",
        "Other runs",
        "Simple baseline (mean)",
    ]
    # practice groups are not agents: a grey and a marker each, never an agent colour
    groups = [c for c in fig.axes[0].collections if (c.get_gid() or "").startswith("group:")]
    assert len(groups) == 3
    assert len({tuple(to_rgba_array(c.get_facecolor())[0]) for c in groups}) == 3
    assert not {to_hex(c.get_facecolor()[0]).upper() for c in groups} & set(AGENT_PALETTE)


def test_external_ratio_points_are_the_ratios_in_percent_around_100():
    table5 = pd.DataFrame(
        {
            "agent": ["a", "b", "a", "b"],
            "task": ["x_ext", "x_ext", "y_ext", "y_ext"],
            "internal_task": ["x", "x", "y", "y"],
            "score": [0.3, 0.4, 0.2, 0.1],
            "ratio": [0.97, 1.02, np.nan, 0.95],
        }
    )
    fig = fg.external_ratio_figure(table5)
    assert_readable(fig)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x_ext", "y_ext"]
    legend = _legend(ax)
    assert set(legend) == {"a", "b", "100%: no loss"}
    del legend["100%: no loss"]
    drawn = set()
    for collection in ax.collections:
        color = tuple(to_rgba_array(collection.get_facecolor())[0][:3])
        agent = {c: a for a, c in legend.items()}[color]
        for x, y in collection.get_offsets():
            drawn.add((_tick_label(ax, x), agent, round(float(y), 9)))
    # an undefined ratio draws no point
    assert drawn == {("x_ext", "a", 97.0), ("x_ext", "b", 102.0), ("y_ext", "b", 95.0)}
    [reference] = ax.get_lines()
    assert set(reference.get_ydata()) == {100}
    low, high = ax.get_ylim()
    assert 0 < low < 95 and high > 102  # not from 0: the differences are near 100 %


def test_external_ratio_legend_of_many_agents_fits_the_figure():
    agents = [f"agent_number_{i}" for i in range(6)]
    table5 = pd.DataFrame(
        {"agent": agents, "task": ["x_ext"] * 6, "internal_task": ["x"] * 6,
         "score": [0.5] * 6, "ratio": [0.9, 0.95, 1.0, 1.05, 0.97, 0.99]}
    )  # fmt: skip
    assert_readable(fg.external_ratio_figure(table5))  # legend inside the figure


def test_subgroup_gap_bars_are_the_mean_gaps():
    table14 = pd.DataFrame(
        {
            "task_group": ["icu", "icu", "icu", "cancer"],
            "attribute": ["age", "age", "sex", "age"],
            "agent": ["a", "b", "a", "a"],
            "gap_mean": [0.12, 0.08, np.nan, 0.3],
        }
    )
    fig = fg.subgroup_gap_figure(table14)
    assert_readable(fig)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["icu / age", "cancer / age"]  # horizontal rows: labels never overlap
    legend = _legend(ax)
    ticks = np.asarray(ax.get_yticks(), float)
    drawn = set()
    for collection in ax.collections:
        color = tuple(to_rgba_array(collection.get_facecolor())[0][:3])
        agent = {c: a for a, c in legend.items()}[color]
        for x, y in collection.get_offsets():
            row = labels[int(np.argmin(np.abs(ticks - y)))]
            drawn.add((row, agent, round(float(x), 9)))
    assert drawn == {("icu / age", "a", 0.12), ("icu / age", "b", 0.08), ("cancer / age", "a", 0.3)}
    assert fig.get_size_inches()[1] < 4  # two rows: a short figure


def test_empty_inputs_give_a_placeholder_figure():
    empty = pd.DataFrame(
        columns=["group", "n_runs", "share_of_runs", "share_of_difference", "mean_ece"]
    )
    for fig in (
        fg.figure2a(empty),
        fg.figure2b(pd.DataFrame(columns=["recalibrated", "ece"])),
        fg.reliability_figure(pd.DataFrame()),
        fg.external_ratio_figure(pd.DataFrame({"agent": [], "task": [], "ratio": []})),
    ):
        assert isinstance(fig, Figure)


def test_save_figure_is_byte_identical(tmp_path, store):
    effect = calibration.recalibration_effect(store)
    a = fg.save_figure(fg.figure2b(effect, seed=2), "fig2b", tmp_path / "a")
    b = fg.save_figure(fg.figure2b(effect, seed=2), "fig2b", tmp_path / "b")
    assert a["svg"] == tmp_path / "a" / "figures" / "fig2b.svg"
    for kind in ("png", "svg"):
        assert a[kind].read_bytes() == b[kind].read_bytes()
    svg = a["svg"].read_text()
    assert "<dc:date>" not in svg
    assert a["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list((tmp_path / "a" / "figures").glob(".*"))


@pytest.mark.slow
def test_svg_identical_across_processes(tmp_path):
    """A fresh interpreter (new default svg hash salt) writes the same bytes."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(TESTS)!r})
        import storebuilder as sb
        from automd_analysis.analysis import calibration_practices as calibration
        from automd_analysis.report import figures
        store = sb.build_store(**{{"runs": sb.complete_runs(seed=7)["runs"]}})
        fig = figures.figure2a(calibration.ece_decomposition(store))
        figures.save_figure(fig, "fig2a", sys.argv[1])
        """
    )
    for name in ("one", "two"):
        subprocess.run([sys.executable, "-c", script, str(tmp_path / name)], check=True)
    one = (tmp_path / "one" / "figures" / "fig2a.svg").read_bytes()
    assert one == (tmp_path / "two" / "figures" / "fig2a.svg").read_bytes()


def test_archive_strings_are_plain_text_in_figures(tmp_path):
    table5 = pd.DataFrame(
        {
            "agent": ["<script>alert(1)</script>", "a$b$c"],
            "task": ["x_ext", "x_ext"],
            "internal_task": ["x", "x"],
            "score": [0.3, 0.4],
            "ratio": [0.9, 1.1],
        }
    )
    paths = fg.save_figure(fg.external_ratio_figure(table5), "ratios", tmp_path)
    svg = paths["svg"].read_text()
    assert "<script>" not in svg  # glyphs are paths; nothing is executable


def test_save_figure_rejects_bad_names(tmp_path):
    fig = fg.figure2b(pd.DataFrame(columns=["recalibrated", "ece"]))
    for bad in ("../x", "a/b", ""):
        with pytest.raises(ValueError):
            fg.save_figure(fig, bad, tmp_path)


# ---------------------------------------------------------------------------------------------
# notebook 07: Figure 5, Figure 3, process-metric correlations


def _curves() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "agent": ["codex"] * 3 + ["a$b$"] * 3,
            "time_min": [0.0, 60.0, 120.0] * 2,
            "mean_score": [0.0, 0.25, 0.5, 0.1, 0.1, 0.4],
            "sd_score": [np.nan] * 6,
            "n_runs": [2] * 3 + [1] * 3,
        }
    )


def test_figure5_draws_each_agents_mean_curve_in_hours():
    fig = fg.figure5(_curves())
    assert_readable(fig)
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    assert set(lines) == {"codex (2 runs)", "a$b$ (1 run)"}  # names drawn as plain text
    codex = lines["codex (2 runs)"]
    np.testing.assert_allclose(codex.get_xdata(), [0.0, 1.0, 2.0])
    np.testing.assert_allclose(codex.get_ydata(), [0.0, 0.25, 0.5])
    assert codex.get_drawstyle() == "steps-post"


def _shares() -> pd.DataFrame:
    rows = []
    for agent, stage, n_pairs in (("aide", "early", 4), ("aide", "late", 2), ("codex", "early", 0)):
        for change in ("ensembling", "model_family", "calibration"):
            n_with = {"ensembling": 1, "model_family": 2, "calibration": 0}[change]
            n_with = min(n_with, n_pairs)
            rows.append((agent, stage, change, n_pairs, n_with,
                         n_with / n_pairs if n_pairs else np.nan, 1))  # fmt: skip
    columns = ["agent", "stage", "change", "n_pairs", "n_with_change", "share", "n_unannotated"]
    return pd.DataFrame(rows, columns=columns)


def test_figure3_bars_are_the_shares_of_present_change_types():
    shares = _shares()
    fig = fg.figure3(shares)
    assert_readable(fig)
    [ax] = fig.axes  # codex has no annotated pair: no panel
    assert "aide" in ax.get_title() and "early 4" in ax.get_title() and "late 2" in ax.get_title()
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["ensembling", "model_family"]  # calibration never occurs: not drawn
    heights = sorted(round(p.get_height(), 9) for p in ax.patches if p.get_width() > 0)
    drawn = shares[(shares["agent"] == "aide") & (shares["change"] != "calibration")]
    assert heights == sorted(round(100 * v, 9) for v in drawn["share"])
    assert list(_legend(ax)) == ["early", "late"]  # stages in STAGES order
    assert _hue_bars(ax) == {
        (c, st, round(100 * v, 9))
        for c, st, v in zip(drawn["change"], drawn["stage"], drawn["share"], strict=True)
    }


def _correlations() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "dimension": ["Exploration", "Efficiency", "Cost"],
            "metric": ["exploration_spread", "first_improvement_step", "wall_clock_h"],
            "rho": [0.5, np.nan, -0.25],
            "p": [0.01, np.nan, 0.3],
            "test": "within-task permutation of Spearman rho",
            "n_tasks": [3, 0, 3],
            "n_runs": [30, 0, 29],
            "embedding_backend": ["hashing:test"] * 3,
        }
    )


def test_process_correlation_bars_are_the_rhos():
    fig = fg.process_correlation_figure(_correlations())
    assert_readable(fig)
    ax = fig.axes[0]
    widths = [round(p.get_width(), 9) for p in ax.patches if p.get_height() > 0]
    assert sorted(widths) == [-0.25, 0.0, 0.5]  # an undefined rho is an empty bar, labelled n/a
    texts = [t.get_text() for t in ax.texts]
    assert "n/a" in texts and "p=0.01, 3 tasks, 30 runs" in texts
    assert "p=0.3, 3 tasks, 29 runs" in texts
    assert ax.get_xlabel() == "within-task Spearman rho with the final normalised score"
    assert "hashing:test" in ax.get_title()
    bars = sorted(ax.patches[:3], key=lambda p: -p.get_y())  # top to bottom: the table order
    assert [round(p.get_width(), 9) for p in bars] == [0.5, 0.0, -0.25]
    ticks = sorted(zip(ax.get_yticks(), ax.get_yticklabels(), strict=True), key=lambda t: -t[0])
    assert [label.get_text() for _, label in ticks] == [
        "exploration_spread",
        "first_improvement_step",
        "wall_clock_h",
    ]
    legend = _legend(ax)
    assert list(legend) == ["Exploration", "Efficiency", "Cost"]
    assert [p.get_facecolor()[:3] for p in bars] == [legend[d] for d in legend]
    [zero] = ax.get_lines()
    assert set(zero.get_xdata()) == {0}


@pytest.mark.slow
def test_notebook_07_figures_handle_empty_inputs_and_save_identically(tmp_path):
    empty_shares = _shares().iloc[0:0]
    for fig in (
        fg.figure5(_curves().iloc[0:0]),
        fg.figure3(empty_shares),
        fg.figure3(_shares().assign(n_with_change=0)),
        fg.process_correlation_figure(_correlations().assign(rho=np.nan)),
    ):
        assert isinstance(fig, Figure) and not fig.axes[0].axison
    for draw, name in (
        (lambda: fg.figure5(_curves()), "fig5"),
        (lambda: fg.figure3(_shares()), "fig3"),
        (lambda: fg.process_correlation_figure(_correlations()), "spearman"),
    ):
        a = fg.save_figure(draw(), name, tmp_path / "a")
        b = fg.save_figure(draw(), name, tmp_path / "b")
        for kind in ("png", "svg"):
            assert a[kind].read_bytes() == b[kind].read_bytes(), (name, kind)


def test_reliability_title_gives_the_range_of_survival_group_sizes_once():
    bins = _bins().query("agent == 'b'")
    later = bins.assign(quantile=0.75, time=60.0, n=[20, 21, 22])
    fig = fg.reliability_figure(pd.concat([bins, later], ignore_index=True))
    [panel] = [ax for ax in fig.axes if ax.get_title()]
    assert panel.get_title() == "b\n(n/group 12-21)"  # medians 12 and 21, said once
    [legend] = fig.legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts[-2:] == ["at t = 0.5 quantile of times", "at t = 0.75 quantile of times"]
    styles = [
        (line.get_color(), line.get_linestyle(), line.get_marker())
        for line in panel.get_lines()
        if (line.get_gid() or "").startswith("quantile:")
    ]
    assert len(set(styles)) == 2  # two quantiles: two greys, two line styles, two markers
    assert all(color in GREYS for color, _, _ in styles)
    assert_readable(fig)


def _interval_segments(ax) -> tuple[list[float], list[float]]:
    from matplotlib.collections import LineCollection

    out = []
    for c in ax.collections:
        if isinstance(c, LineCollection):
            out += [tuple(sorted((float(s[0][1]), float(s[1][1])))) for s in c.get_segments()]
    return sorted(round(lo, 9) for lo, _ in out), sorted(round(hi, 9) for _, hi in out)


def test_figure2a_draws_each_share_interval_over_its_bar(store):
    decomposition = calibration.ece_decomposition(store)
    ax = fg.figure2a(decomposition).axes[0]
    lows, highs = _interval_segments(ax)
    columns = ("share_of_runs", "share_of_difference")
    finite = [
        (100 * lo, 100 * hi)
        for c in columns
        for lo, hi in zip(decomposition[f"{c}_ci_low"], decomposition[f"{c}_ci_high"], strict=True)
        if np.isfinite(lo) and np.isfinite(hi)
    ]
    assert finite
    assert lows == sorted(round(lo, 9) for lo, _ in finite)
    assert highs == sorted(round(hi, 9) for _, hi in finite)
    bare = decomposition.drop(columns=[c for c in decomposition if c.endswith(("_low", "_high"))])
    assert _interval_segments(fg.figure2a(bare).axes[0]) == ([], [])


def test_figure2b_draws_the_interval_of_each_mean(store):
    effect = calibration.recalibration_effect(store)
    summary = calibration.recalibration_summary(store)
    lows, highs = _interval_segments(fg.figure2b(effect, summary, seed=1).axes[0])
    finite = summary.dropna(subset=["mean_ci_low", "mean_ci_high"])
    assert len(finite)
    assert lows == sorted(round(v, 9) for v in finite["mean_ci_low"])
    assert highs == sorted(round(v, 9) for v in finite["mean_ci_high"])


def test_external_ratio_figure_draws_each_interval_in_the_agents_colour():
    from matplotlib.collections import LineCollection

    table5 = pd.DataFrame(
        {
            "agent": ["a", "b", "a"],
            "task": ["x_ext", "x_ext", "y_ext"],
            "internal_task": ["x", "x", "y"],
            "score": [0.3, 0.4, 0.2],
            "ratio": [0.97, 1.02, 0.90],
            "ratio_ci_low": [0.80, 0.95, np.nan],
            "ratio_ci_high": [1.10, 1.30, np.nan],
        }
    )
    ax = fg.external_ratio_figure(table5).axes[0]
    legend = _legend(ax)
    lines = set()
    for collection in ax.collections:
        if not isinstance(collection, LineCollection):
            continue
        agent = {c: a for a, c in legend.items()}[tuple(collection.get_color()[0][:3])]
        for (x0, y0), (_, y1) in collection.get_segments():
            lines.add((_tick_label(ax, x0), agent, round(y0, 9), round(y1, 9)))
    # y_ext's missing interval draws nothing; the axis reaches the highest bound
    assert lines == {("x_ext", "a", 80.0, 110.0), ("x_ext", "b", 95.0, 130.0)}
    assert ax.get_ylim()[1] > 130


def test_external_ratio_figure_without_intervals_warns_of_nothing():
    import warnings

    table5 = pd.DataFrame(
        {"agent": ["a"], "task": ["x_ext"], "internal_task": ["x"], "score": [0.3], "ratio": [0.97],
         "ratio_ci_low": [np.nan], "ratio_ci_high": [np.nan]}
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = fg.external_ratio_figure(table5).axes[0]
    low, high = ax.get_ylim()
    assert low < 97 and high > 100
