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

from automd_analysis.analysis import calibration_practices as calibration
from automd_analysis.analysis import objectives, shift, subgroups
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


def test_export_paper_figures_skips_what_is_missing(tmp_path):
    store = sb.build_store([sb.run("A", "clf_a", k, annotations={}) for k in range(2)])
    results = fg.export_paper_figures(store, tmp_path)
    assert results["fig4_objectives"].startswith("skipped:")
    assert results["fig2a_ece_decomposition"].startswith("skipped:")
    assert (tmp_path / "figures" / "external_ratios.svg").is_file()


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
    [ax] = fig.axes  # codex has no annotated pair: no panel
    assert "aide" in ax.get_title() and "early 4" in ax.get_title() and "late 2" in ax.get_title()
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["ensembling", "model_family"]  # calibration never occurs: not drawn
    heights = sorted(round(p.get_height(), 9) for p in ax.patches if p.get_width() > 0)
    drawn = shares[(shares["agent"] == "aide") & (shares["change"] != "calibration")]
    assert heights == sorted(round(100 * v, 9) for v in drawn["share"])


def _correlations() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "dimension": ["Exploration", "Efficiency", "Cost"],
            "metric": ["exploration_spread", "first_improvement_step", "wall_clock_h"],
            "rho": [0.5, np.nan, -0.25],
            "p": [0.01, np.nan, 0.3],
            "n": [30, 30, 29],
            "embedding_backend": ["hashing:test"] * 3,
        }
    )


def test_process_correlation_bars_are_the_rhos():
    fig = fg.process_correlation_figure(_correlations())
    ax = fig.axes[0]
    widths = [round(p.get_width(), 9) for p in ax.patches if p.get_height() > 0]
    assert sorted(widths) == [-0.25, 0.0, 0.5]  # an undefined rho is an empty bar, labelled n/a
    texts = [t.get_text() for t in ax.texts]
    assert "n/a" in texts and "p=0.01, n=30" in texts and "p=0.3, n=29" in texts
    assert "hashing:test" in ax.get_title()


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
