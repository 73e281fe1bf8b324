"""Intervals in the rendered tables (automd_analysis.report.interval_tables) and through
Report.table; display specs of the comparison and calibration-measure tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import storebuilder
import yaml

from automd_analysis.report import comparison_tables as ct
from automd_analysis.report import interval_tables as it
from automd_analysis.report import notebook as nbk
from automd_analysis.report import tables as tb

NAN = math.nan


def _table2(ci=True):
    frame = pd.DataFrame(
        {
            "agent": ["codex", "aide", "baseline"],
            "penalized_mean": [0.562, 0.537, 0.5],
            "penalized_sd": [0.01, 0.02, 0.005],
            "nonpenalized_mean": [0.562, 0.55, 0.5],
            "nonpenalized_sd": [NAN, NAN, 0.005],
            "valid_rate_mean": [1.0, 0.9, 1.0],
            "valid_rate_sd": [0.0, 0.1, 0.0],
            "rank_penalized_mean": [1.0, 2.0, NAN],
            "rank_penalized_sd": [0.0, 0.0, NAN],
            "rank_nonpenalized_mean": [1.0, 2.0, NAN],
            "rank_nonpenalized_sd": [0.0, 0.0, NAN],
        }
    )
    if ci:
        frame["penalized_ci_low"] = [0.53, 0.51, NAN]
        frame["penalized_ci_high"] = [0.59, 0.56, NAN]
        frame["nonpenalized_ci_low"] = [0.5312, NAN, 0.47]
        frame["nonpenalized_ci_high"] = [0.5988, NAN, 0.53]
    return frame


SPEC2 = tb.TABLE_SPECS["table2_primary_scores"]


def test_wide_table_gets_brackets_after_the_listed_columns_only():
    frame = _table2()
    text, bold = it.display_frame(frame, SPEC2, "table2_primary_scores")
    plain_text, plain_bold = tb.display_frame(frame, SPEC2)
    assert text.loc[0, "Penalised score"] == "0.562 ± 0.010 [0.530, 0.590]"
    assert text.loc[1, "Penalised score"] == "0.537 ± 0.020 [0.510, 0.560]"
    assert text.loc[2, "Penalised score"] == plain_text.loc[2, "Penalised score"]  # no interval
    assert text.loc[0, "Non-penalised score"] == "0.562 [0.531, 0.599]"
    assert text.loc[1, "Non-penalised score"] == plain_text.loc[1, "Non-penalised score"]
    others = [c for c in text.columns if c not in ("Penalised score", "Non-penalised score")]
    pd.testing.assert_frame_equal(text[others], plain_text[others])
    pd.testing.assert_frame_equal(bold, plain_bold)  # bold = best estimate, as before
    assert bold.loc[0, "Penalised score"]


def test_without_intervals_the_rendering_is_unchanged():
    frame = _table2(ci=False)
    text, bold = it.display_frame(frame, SPEC2, "table2_primary_scores")
    pd.testing.assert_frame_equal(text, tb.display_frame(frame, SPEC2)[0])
    empty_ci = _table2().assign(penalized_ci_low=NAN, nonpenalized_ci_low=NAN)
    text, _ = it.display_frame(empty_ci, SPEC2, "table2_primary_scores")
    pd.testing.assert_frame_equal(text, tb.display_frame(empty_ci, SPEC2)[0])
    assert it.caption_with_intervals(empty_ci, "table2_primary_scores", "C.") == "C."
    assert it.caption_with_intervals(_table2(), "table2_primary_scores", "C.") == (
        f"C. {it.INTERVAL_NOTE}"
    )
    assert it.caption_with_intervals(_table2(), "some_other_table", "C.") == "C."


def test_pivot_table_puts_the_ratio_interval_inside_the_parentheses():
    frame = pd.DataFrame(
        {
            "agent": ["aide", "baseline", "aide"],
            "task": ["t_ext", "t_ext", "u_ext"],
            "internal_task": ["t", "t", "u"],
            "score": [0.286, 0.272, 0.5],
            "ratio": [1.396, 1.518, NAN],
            "score_ci_low": [0.19, 0.17, 0.4],
            "score_ci_high": [0.41, 0.39, 0.6],
            "ratio_ci_low": [0.7073, 0.754, NAN],
            "ratio_ci_high": [3.638, 3.513, NAN],
        }
    )
    spec = tb.TABLE_SPECS["table5_external"]
    text, _ = it.display_frame(frame, spec, "table5_external")
    row = text.set_index("task")
    assert row.loc["t_ext", "aide"] == "0.286 (140% [71%, 364%])"
    assert row.loc["t_ext", "baseline"] == "0.272 (152% [75%, 351%])"
    assert row.loc["u_ext", "aide"] == "0.500"  # no ratio, no interval


def test_format_interval():
    assert it.format_interval(0.1, 0.2) == "[0.100, 0.200]"
    assert it.format_interval(-0.00001, 0.2, 2) == "[0.00, 0.20]"
    assert it.format_interval(0.5, 1.2345, percent=True) == "[50%, 123%]"
    assert it.format_interval(None, 0.2) == it.format_interval(0.1, math.inf) == ""
    assert it.format_interval("x", 0.2) == ""


def test_export_writes_the_same_csv_as_the_plain_export_and_intervals_in_tex_html(tmp_path):
    frame = _table2()
    paths = it.export_table(frame, "table2_primary_scores", tmp_path / "a")
    plain = tb.export_table(frame, "table2_primary_scores", tmp_path / "b")
    assert paths["csv"].read_bytes() == plain["csv"].read_bytes()
    html, tex = paths["html"].read_text(), paths["tex"].read_text()
    assert "0.562 ± 0.010 [0.530, 0.590]" in html and it.INTERVAL_NOTE in html
    assert "[0.530, 0.590]" in tex and r"$\pm$" in tex
    again = it.export_table(frame, "table2_primary_scores", tmp_path / "a")
    assert {k: p.read_bytes() for k, p in again.items()} == {
        k: p.read_bytes() for k, p in paths.items()
    }
    # a table without intervals is the plain export, byte for byte
    other = it.export_table(frame[["agent", "penalized_mean"]], "x_table", tmp_path / "c")
    ref = tb.export_table(frame[["agent", "penalized_mean"]], "x_table", tmp_path / "d")
    assert {k: p.read_bytes() for k, p in other.items()} == {
        k: p.read_bytes() for k, p in ref.items()
    }
    with pytest.raises(ValueError):
        it.export_table(frame, "../evil", tmp_path)


def test_archive_strings_in_interval_tables_are_escaped(tmp_path):
    frame = _table2().assign(agent=["<script>x</script>", "a&b", "baseline"])
    paths = it.export_table(frame, "table2_primary_scores", tmp_path)
    html = paths["html"].read_text()
    assert "<script>" not in html and "&lt;script&gt;" in html


def _archive(path):
    path.mkdir(parents=True, exist_ok=True)
    (path / "archive.yaml").write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "name": "tiny",
                "description": "test archive",
                "experiments": {"main": "main experiment"},
                "provenance": {},
            }
        )
    )
    return path


@pytest.fixture
def report(tmp_path):
    runs = [
        storebuilder.run("codex", "clf_a", 0, score=0.6),
        storebuilder.run("baseline", "clf_a", 0, score=0.5),
    ]
    scores = storebuilder.write_store(runs, tmp_path / "scores")
    return nbk.open_report(
        archive=_archive(tmp_path / "arch"), scores_dir=scores, output_dir=tmp_path / "out"
    )


def test_report_table_shows_intervals_and_the_view_is_the_file(report):
    view = report.table(_table2(), "table2_primary_scores")
    assert "[0.530, 0.590]" in view.html and it.INTERVAL_NOTE in view.html
    assert view.html == view.paths["html"].read_text()
    assert "[0.530, 0.590]" in view._repr_html_() and it.INTERVAL_NOTE in view._repr_html_()
    assert "penalized_ci_low" in repr(view)  # the numbers nbval compares include the bounds


def test_report_table_uses_the_comparison_specs(report):
    pairwise = pd.DataFrame(
        [
            {
                "agent_a": "aide",
                "agent_b": "codex",
                "measure": "score",
                "diff_mean": -0.0255,
                "ci_low": -0.075,
                "ci_high": 0.147,
                "p_value": 0.6875,
                "p_holm": 0.6875,
                "n_tasks": 5,
                "tasks_a_better": 1,
            }
        ]
    )
    view = report.table(pairwise, "pairwise_comparisons")
    assert "Mean difference (A - B)" in view.html and "Agent A" in view.html
    assert "-0.025 [-0.075, 0.147]" in view.html
    assert nbk.table_spec("power_table") is ct.TABLE_SPECS["power_table"]
    assert nbk.table_spec("table2_primary_scores") is SPEC2


@pytest.mark.parametrize("name", sorted(ct.TABLE_SPECS))
def test_every_comparison_spec_renders_its_documented_columns(name):
    """Each spec only reads columns the analysis returns (a typo would raise KeyError)."""
    from automd_analysis.analysis import calibration_measures as cm
    from automd_analysis.analysis import uncertainty
    from automd_analysis.analysis.annotation_provenance import PROVENANCE_COLUMNS

    columns = {
        "pairwise_comparisons": uncertainty.PAIRWISE_COLUMNS,
        "power_table": uncertainty.POWER_COLUMNS,
        "calibration_slope_intercept": cm.SLOPE_INTERCEPT_COLUMNS,
        "calibration_by_measure": cm.AGENT_MEASURE_COLUMNS,
        "calibration_measure_correlations": cm.CORRELATION_COLUMNS,
        "calibration_ranking_agreement": cm.AGREEMENT_COLUMNS,
        "annotation_provenance": PROVENANCE_COLUMNS,
    }[name]
    row = {c: (1.0 if c not in ("measure", "agent", "level") else "x") for c in columns}
    text, bold = tb.display_frame(pd.DataFrame([row]), ct.TABLE_SPECS[name])
    assert len(text) == 1 and text.shape == bold.shape


def test_annotator_caption():
    prov = pd.DataFrame(
        {"annotator": ["automd annotate 0.1.0"], "annotations_source": ["generated"], "n_runs": [3]}
    )
    caption = ct.annotator_caption("fig2a_ece_decomposition", prov)
    assert caption.startswith(tb.TABLE_SPECS["fig2a_ece_decomposition"].caption)
    assert caption.endswith(
        "Codebook answers by automd annotate 0.1.0 (3 runs, generated outside the archive)."
    )
