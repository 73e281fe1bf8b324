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
from matplotlib.figure import Figure

from automd_analysis.analysis import calibration, objectives, shift, subgroups
from automd_analysis.report import figures as fg

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


def test_every_figure_draws(store):
    figs = [
        fg.figure4(objectives.figure4_data(store), objectives.objective_baseline(store)),
        fg.reliability_figure(calibration.reliability_bins(store, "clf_a")),
        fg.reliability_figure(calibration.reliability_bins(store, "surv_a")),
        fg.external_ratio_figure(shift.table5(store)),
        fg.subgroup_gap_figure(subgroups.table14(store)),
    ]
    assert all(isinstance(f, Figure) and f.axes for f in figs)
    n_agents = len(set(calibration.reliability_bins(store, "clf_a")["agent"]))
    assert len([a for a in figs[1].axes if a.get_title()]) == n_agents


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


def test_svg_identical_across_processes(tmp_path):
    """A fresh interpreter (new default svg hash salt) writes the same bytes."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(TESTS)!r})
        import storebuilder as sb
        from automd_analysis.analysis import calibration
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


def test_export_paper_figures_skips_what_is_missing(tmp_path):
    store = sb.build_store([sb.run("A", "clf_a", k, annotations={}) for k in range(2)])
    results = fg.export_paper_figures(store, tmp_path)
    assert results["fig4_objectives"].startswith("skipped:")
    assert results["fig2a_ece_decomposition"].startswith("skipped:")
    assert (tmp_path / "figures" / "external_ratios.svg").is_file()
