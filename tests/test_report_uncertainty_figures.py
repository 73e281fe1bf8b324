"""automd_analysis.report.uncertainty_figures: the drawn data (positions, intervals, matrix cells)
and readability (width, font sizes, legends outside the panels)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from figure_checks import assert_readable

from automd_analysis.report import uncertainty_figures as uf

NAN = math.nan


def _lines(ax, prefix):
    return {
        line.get_gid().split(":", 1)[1]: np.column_stack([line.get_xdata(), line.get_ydata()])
        for line in ax.lines
        if (line.get_gid() or "").startswith(prefix)
    }


@pytest.fixture
def table2():
    return pd.DataFrame(
        {
            "agent": ["aide", "codex", "scientist", "baseline"],
            "penalized_mean": [0.537, 0.562, 0.40, 0.5],
            "penalized_mean_ci_low": [0.51, 0.53, NAN, 0.47],
            "penalized_mean_ci_high": [0.56, 0.59, NAN, 0.53],
            "nonpenalized_mean": [0.537, 0.562, NAN, 0.5],
            "nonpenalized_mean_ci_low": [0.50, 0.52, NAN, 0.46],
            "nonpenalized_mean_ci_high": [0.57, 0.60, NAN, 0.54],
        }
    )


def test_forest_plot_draws_each_estimate_and_interval_at_its_row(table2):
    fig = uf.table2_forest(table2)
    left, right = fig.axes
    assert [left.get_title(), right.get_title()] == ["Penalised score", "Non-penalised score"]
    estimates, bars = _lines(left, "estimate:"), _lines(left, "interval:")
    assert estimates["aide"].tolist() == [[0.537, 0.0]]
    assert estimates["codex"].tolist() == [[0.562, 1.0]]
    assert estimates["scientist"].tolist() == [[0.40, 2.0]]
    assert estimates["baseline"].tolist() == [[0.5, 3.0]]
    assert bars["aide"].tolist() == [[0.51, 0.0], [0.56, 0.0]]
    assert "scientist" not in bars  # no interval: the dot only
    # right panel: scientist has no estimate at all
    assert set(_lines(right, "estimate:")) == {"aide", "codex", "baseline"}
    # first row at the top, labels = agents
    assert [t.get_text() for t in left.get_yticklabels()] == list(table2["agent"])
    assert left.get_ylim() == (3.5, -0.5)
    # the baseline's estimate as a dashed vertical line
    vertical = [ln for ln in left.lines if ln.get_linestyle() == "--"]
    assert [ln.get_xdata()[0] for ln in vertical] == [0.5]
    assert_readable(fig)


def test_forest_plot_leaves_out_empty_panels_and_handles_no_data():
    t3 = pd.DataFrame(
        {
            "agent": ["a", "b"],
            "survival_bc": [NAN, NAN],
            "classification_bc": [0.1, 0.2],
            "classification_bc_ci_low": [0.05, 0.1],
            "classification_bc_ci_high": [0.15, 0.3],
            "all_bc": [0.1, 0.2],
            "all_bc_ci_low": [0.05, 0.1],
            "all_bc_ci_high": [0.15, 0.3],
        }
    )
    fig = uf.table3_forest(t3)
    assert [ax.get_title() for ax in fig.axes] == ["Classification", "All tasks"]
    assert _lines(fig.axes[1], "interval:")["b"][:, 0].tolist() == [0.1, 0.3]
    assert_readable(fig)
    empty = uf.table3_forest(t3.iloc[:0])
    assert "no estimates" in empty.axes[0].texts[0].get_text()


def test_table5_forest_in_percent_coloured_by_agent():
    t5 = pd.DataFrame(
        {
            "agent": ["aide", "baseline", "aide"],
            "task": ["t_ext", "t_ext", "u_ext"],
            "ratio": [0.9, 1.1, 0.8],
            "ratio_ci_low": [0.7, 0.9, 0.6],
            "ratio_ci_high": [1.2, 1.3, 1.0],
        }
    )
    fig = uf.table5_forest(t5)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["t_ext: aide", "t_ext: baseline", "u_ext: aide"]
    bars = _lines(ax, "interval:")
    assert bars["t_ext: aide"][:, 0] == pytest.approx([70.0, 120.0])
    dots = {ln.get_gid(): ln.get_color() for ln in ax.lines if ln.get_gid()}
    assert dots["estimate:t_ext: aide"] == dots["estimate:u_ext: aide"]  # one colour per agent
    assert dots["estimate:t_ext: baseline"] != dots["estimate:t_ext: aide"]
    dotted = [ln.get_xdata()[0] for ln in ax.lines if ln.get_linestyle() == ":"]
    assert dotted == [100.0]
    assert not [ln for ln in ax.lines if ln.get_linestyle() == "--"]  # no baseline line
    assert_readable(fig)


def test_table7_forest():
    t7 = pd.DataFrame(
        {
            "llm": ["m1", "m2"],
            "penalized_mean": [0.5, 0.4],
            "penalized_mean_ci_low": [0.45, 0.35],
            "penalized_mean_ci_high": [0.55, 0.45],
            "ece_mean_bc": [0.1, 0.2],
            "ece_mean_bc_ci_low": [0.08, 0.15],
            "ece_mean_bc_ci_high": [0.12, 0.25],
        }
    )
    fig = uf.table7_forest(t7)
    assert _lines(fig.axes[1], "interval:")["m2"][:, 0].tolist() == [0.15, 0.25]
    assert_readable(fig)


def _pairwise():
    rows = [
        ("aide", "codex", "score", -0.03, 0.01),
        ("aide", "baseline", "score", 0.05, 0.2),
        ("codex", "baseline", "score", 0.08, 0.04),
        ("aide", "codex", "ece", -0.02, 0.5),
        ("aide", "baseline", "ece", 0.01, 0.5),
        ("codex", "baseline", "ece", 0.03, 0.003),
    ]
    return pd.DataFrame(rows, columns=["agent_a", "agent_b", "measure", "diff_mean", "p_holm"])


def test_pairwise_matrix_is_the_row_agents_advantage():
    fig = uf.pairwise_matrix(_pairwise(), "score")
    ax = fig.axes[0]
    matrix = ax.images[0].get_array()
    # agents in display order: aide, codex, baseline
    assert [t.get_text() for t in ax.get_yticklabels()] == ["aide", "codex", "baseline"]
    expected = np.array([[NAN, -0.03, 0.05], [0.03, NAN, 0.08], [-0.05, -0.08, NAN]])
    np.testing.assert_allclose(matrix.filled(np.nan), expected)
    assert matrix.mask.diagonal().all()
    cells = {t.get_gid(): t.get_text() for t in ax.texts}
    assert cells["cell:codex:aide"] == "+0.030*\np = 0.01"
    assert cells["cell:aide:baseline"] == "+0.050\np = 0.20"
    frames = sorted(p.get_gid() for p in ax.patches if (p.get_gid() or "").startswith("sig"))
    assert frames == [
        "significant:aide:codex",
        "significant:baseline:codex",
        "significant:codex:aide",
        "significant:codex:baseline",
    ]
    low, high = ax.images[0].get_clim()
    assert low == -high == pytest.approx(-0.08)
    assert_readable(fig)


def test_pairwise_matrix_for_ece_flips_the_sign():
    fig = uf.pairwise_matrix(_pairwise(), "ece")
    matrix = fig.axes[0].images[0].get_array().filled(np.nan)
    # aide - codex ECE = -0.02: aide better calibrated, so aide's row is +0.02
    assert matrix[0, 1] == pytest.approx(0.02) and matrix[1, 0] == pytest.approx(-0.02)
    assert matrix[1, 2] == pytest.approx(-0.03)  # codex has the higher ECE than baseline
    assert "ECE reduction" in fig.axes[1].get_ylabel()  # the colour bar
    assert_readable(fig)


def test_pairwise_matrix_alpha_and_empty():
    fig = uf.pairwise_matrix(_pairwise(), "score", alpha=0.005)
    assert not [p for p in fig.axes[0].patches if (p.get_gid() or "").startswith("sig")]
    empty = uf.pairwise_matrix(_pairwise().iloc[:0])
    assert "no pairwise comparisons" in empty.axes[0].texts[0].get_text()
    missing = uf.pairwise_matrix(_pairwise().assign(diff_mean=NAN, p_holm=NAN))
    assert not missing.axes[0].texts  # no cell text without a comparison


def test_archive_names_are_plain_text():
    rows = _pairwise().replace({"aide": "$x^2$"})
    fig = uf.pairwise_matrix(rows)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert "$x^2$" in labels
    assert_readable(fig)  # drawing with parse_math off: no mathtext error
