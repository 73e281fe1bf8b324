"""automd_analysis.report.calibration_figures: smoothed calibration curves, decision curves,
measure ranks and footnotes - the drawn data and readability."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from figure_checks import assert_readable, drawn
from matplotlib.figure import Figure

from automd_analysis.report import calibration_figures as cf

NAN = math.nan


def _curves():
    x = np.linspace(0, 1, 11)
    rows = []
    for agent, shift, runs in (("aide", 0.1, 3), ("baseline", 0.0, 5)):
        for xi in x:
            n = runs if 0.05 < xi < 0.95 else 1  # the ends are reached by one run only
            rows.append(
                {
                    "task": "t",
                    "agent": agent,
                    "kind": "binary",
                    "x": xi,
                    "observed_mean": min(1.0, xi * (1 - shift)),
                    "observed_sd": 0.01,
                    "lo_mean": max(0.0, xi - 0.1),
                    "hi_mean": min(1.0, xi + 0.1),
                    "n_runs": n,
                }
            )
    return pd.DataFrame(rows)


def _gid(ax, gid):
    return [artist for artist in (*ax.lines, *ax.collections) if artist.get_gid() == gid]


def test_smoothed_curve_band_and_bins_are_the_data():
    curves = _curves()
    bins = pd.DataFrame(
        {
            "task": "t",
            "agent": ["aide", "aide", "aide"],
            "quantile": [NAN, NAN, 0.5],  # the survival group is not drawn on a binary panel
            "mean_pred": [0.15, 0.55, 0.3],
            "observed": [0.12, 0.5, 0.9],
            "n": [40, 0, 30],  # an empty bin is not drawn
        }
    )
    fig = cf.smoothed_calibration_figure(curves[curves.task == "t"], bins)
    aide = fig.axes[0]
    assert aide.get_title() == "aide"
    [line] = _gid(aide, "curve:aide")
    kept = curves[(curves.agent == "aide") & (curves.n_runs >= 1.5)]  # >= half of 3 runs
    np.testing.assert_allclose(line.get_xdata(), kept["x"])
    np.testing.assert_allclose(line.get_ydata(), kept["observed_mean"])
    [band] = _gid(aide, "band:aide")
    vertices = band.get_paths()[0].vertices
    for x, lo, hi in kept[["x", "lo_mean", "hi_mean"]].itertuples(index=False):
        assert np.any(np.all(np.isclose(vertices, [x, lo]), axis=1))
        assert np.any(np.all(np.isclose(vertices, [x, hi]), axis=1))
    [points] = _gid(aide, "bins:aide")
    assert points.get_xdata().tolist() == [0.15] and points.get_ydata().tolist() == [0.12]
    assert not _gid(fig.axes[1], "bins:baseline")
    assert aide.get_xlabel() == "predicted probability"
    assert_readable(fig)


def test_min_run_share_keeps_every_point_at_zero():
    curves = _curves()
    fig = cf.smoothed_calibration_figure(curves, min_run_share=0.0)
    [line] = _gid(fig.axes[0], "curve:aide")
    assert len(line.get_xdata()) == 11


def test_survival_panels_are_labelled_as_risk_and_one_figure_per_task():
    curves = pd.concat([_curves(), _curves().assign(task="s", kind="survival")], ignore_index=True)
    figures = cf.smoothed_calibration_figures(curves)
    assert list(figures) == ["s", "t"]
    assert figures["s"].get_suptitle() == "Smoothed calibration: s"
    assert figures["s"].axes[0].get_xlabel() == "predicted risk 1 - S(h)"
    assert_readable(figures["s"])
    assert (
        "no smoothed" in cf.smoothed_calibration_figure(curves.iloc[:0]).axes[0].texts[0].get_text()
    )


def _decision():
    t = [0.05, 0.1, 0.2, 0.3]
    pi = 0.3
    rows = []
    for task in ("t", "u"):
        for agent, values in (
            ("aide", [0.27, 0.24, 0.15, 0.05]),
            ("baseline", [0.26, 0.23, 0.18, 0.1]),
        ):
            for th, nb in zip(t, values, strict=True):
                rows.append(
                    {
                        "task": task,
                        "agent": agent,
                        "threshold": th,
                        "net_benefit_mean": nb,
                        "net_benefit_sd": 0.01,
                        "n_runs": 3,
                        "treat_all": pi - (1 - pi) * th / (1 - th),
                        "treat_none": 0.0,
                    }
                )
    return pd.DataFrame(rows)


def test_decision_curves_are_the_data_with_both_references():
    curves = _decision()
    fig = cf.decision_curve_figure(curves)
    assert [ax.get_title() for ax in fig.axes] == ["t", "u"]
    ax = fig.axes[0]
    [aide] = _gid(ax, "net_benefit:t:aide")
    assert aide.get_xdata().tolist() == [0.05, 0.1, 0.2, 0.3]
    assert aide.get_ydata().tolist() == [0.27, 0.24, 0.15, 0.05]
    [treat_all] = _gid(ax, "treat_all:t")
    np.testing.assert_allclose(
        treat_all.get_ydata(),
        0.3 - 0.7 * np.array([0.05, 0.1, 0.2, 0.3]) / np.array([0.95, 0.9, 0.8, 0.7]),
    )
    [none] = _gid(ax, "treat_none:t")
    assert none.get_ydata().tolist() == [0.0] * 4
    low, high = ax.get_ylim()
    assert low < 0.0 and high > 0.27  # every agent curve and treat-none are in view
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["aide", "simple baseline", "treat all (dotted)", "treat none (dashed, 0)"]
    assert_readable(fig)
    empty = cf.decision_curve_figure(curves.iloc[:0])
    assert "no decision curves" in empty.axes[0].texts[0].get_text()


def test_measure_rank_grid_holds_the_ranks_without_the_baseline():
    table = pd.DataFrame(
        {
            "measure": ["ece_10"] * 3 + ["ici"] * 3 + ["d_calibration"] * 3,
            "agent": ["aide", "codex", "baseline"] * 3,
            "value": [0.1, 0.2, 0.05, 0.04, 0.03, 0.01, NAN, 0.2, 0.1],
            "rank": [1.0, 2.0, NAN, 2.0, 1.0, NAN, NAN, 1.0, NAN],
        }
    )
    fig = cf.measure_rank_figure(table)
    ax = fig.axes[0]
    grid = ax.images[0].get_array()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["aide", "codex"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["ECE 10 bins", "ICI", "D-calibration"]
    np.testing.assert_array_equal(grid.filled(np.nan), [[1.0, 2.0, NAN], [2.0, 1.0, 1.0]])
    texts = {t.get_gid(): t.get_text() for t in ax.texts}
    assert texts["rank:codex:d_calibration"] == "1\n0.200"
    assert "rank:aide:d_calibration" not in texts
    assert_readable(fig)
    assert "no ranked" in cf.measure_rank_figure(table.assign(rank=NAN)).axes[0].texts[0].get_text()


def test_footnote_is_laid_out_below_the_panels():
    fig = Figure(figsize=(6, 3), layout="constrained")
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("x")
    cf.add_footnote(fig, "Codebook answers by automd annotate 0.1.0 (12 runs).")
    renderer = drawn(fig)
    [label] = [t for t in fig.texts if t.get_text() == fig.get_supxlabel()]
    assert label.get_text() == "Codebook answers by automd annotate 0.1.0 (12 runs)."
    assert label.get_fontsize() >= 10
    assert not label.get_window_extent(renderer).overlaps(ax.get_tightbbox(renderer))
    cf.add_footnote(fig, "second")
    assert fig.get_supxlabel().endswith("(12 runs).\nsecond")


@pytest.mark.parametrize("text", ["$x$ annotator", "<b>html</b>"])
def test_footnote_is_plain_text(text):
    fig = cf.add_footnote(Figure(layout="constrained"), text)
    drawn(fig)
    assert fig.get_supxlabel() == text
