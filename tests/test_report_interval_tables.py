"""Intervals in the rendered tables (the declared interval columns, automd_analysis.report.tables)
and through Report.table; the annotator caption."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import storebuilder
import yaml

from automd_analysis.analysis import catalog
from automd_analysis.app.notebook import open_report
from automd_analysis.report import notebook as nbk
from automd_analysis.report import tables as tb
from automd_analysis.report.views import annotator_caption

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
        frame["penalized_mean_ci_low"] = [0.53, 0.51, NAN]
        frame["penalized_mean_ci_high"] = [0.59, 0.56, NAN]
        frame["penalized_mean_best"] = [True, False, False]
        frame["nonpenalized_mean_ci_low"] = [0.5312, NAN, 0.47]
        frame["nonpenalized_mean_ci_high"] = [0.5988, NAN, 0.53]
        frame["nonpenalized_mean_best"] = [True, False, False]
        for rank in ("rank_penalized_mean", "rank_nonpenalized_mean"):  # shown without interval
            frame[f"{rank}_ci_low"] = frame[f"{rank}_ci_high"] = NAN
    return frame


TABLE2 = catalog.table("table2_primary_scores")
SPEC2 = TABLE2.spec


def test_wide_table_gets_brackets_after_the_declared_columns_only():
    frame = _table2()
    text, bold = tb.display_frame(frame, SPEC2, TABLE2.intervals)
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
    text, bold = tb.display_frame(frame, SPEC2, TABLE2.intervals)
    pd.testing.assert_frame_equal(text, tb.display_frame(frame, SPEC2)[0])
    empty_ci = _table2().assign(penalized_mean_ci_low=NAN, nonpenalized_mean_ci_low=NAN)
    text, _ = tb.display_frame(empty_ci, SPEC2, TABLE2.intervals)
    pd.testing.assert_frame_equal(text, tb.display_frame(empty_ci, SPEC2)[0])
    assert tb.rendered(empty_ci, SPEC2, "C.", TABLE2.intervals)[2] == f"C. {tb.BEST_NOTE}"
    assert (
        tb.rendered(_table2(), SPEC2, "C.", TABLE2.intervals)[2]
        == f"C. {tb.INTERVAL_NOTE} {tb.BEST_NOTE}"
    )
    assert tb.rendered(_table2(), SPEC2, "C.")[2] == f"C. {tb.BEST_NOTE}"  # no declared intervals
    assert tb.rendered(_table2(ci=False), SPEC2, "C.")[2] == "C."  # no marks: nothing bold


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
    table5 = catalog.table("table5_external")
    text, _ = tb.display_frame(frame, table5.spec, table5.intervals)
    row = text.set_index("task")
    assert row.loc["t_ext", "aide"] == "0.286 (140% [71%, 364%])"
    assert row.loc["t_ext", "baseline"] == "0.272 (152% [75%, 351%])"
    assert row.loc["u_ext", "aide"] == "0.500"  # no ratio, no interval


def test_format_interval():
    assert tb.format_interval(0.1, 0.2) == "[0.100, 0.200]"
    assert tb.format_interval(-0.00001, 0.2, 2) == "[0.00, 0.20]"
    assert tb.format_interval(0.5, 1.2345, percent=True) == "[50%, 123%]"
    assert tb.format_interval(None, 0.2) == tb.format_interval(0.1, math.inf) == ""
    assert tb.format_interval("x", 0.2) == ""


def test_export_writes_the_numbers_and_intervals_in_tex_html(tmp_path):
    frame = _table2()
    paths = tb.export_table(frame, "table2_primary_scores", tmp_path / "a")
    assert paths["csv"].read_text() == tb.csv_text(frame)
    html, tex = paths["html"].read_text(), paths["tex"].read_text()
    # the interval never breaks across lines: a no-break space inside its brackets
    assert "0.562\u00a0±\u00a00.010 [0.530,\u00a00.590]" in html and tb.INTERVAL_NOTE in html
    assert "[0.530, 0.590]" in tex and r"$\pm$" in tex
    again = tb.export_table(frame, "table2_primary_scores", tmp_path / "a")
    assert {k: p.read_bytes() for k, p in again.items()} == {
        k: p.read_bytes() for k, p in paths.items()
    }
    # an undeclared table with the same columns shows no brackets
    other = tb.export_table(frame, "x_table", tmp_path / "c")
    assert "[0.530, 0.590]" not in other["html"].read_text()
    assert other["csv"].read_bytes() == paths["csv"].read_bytes()
    with pytest.raises(ValueError):
        tb.export_table(frame, "../evil", tmp_path)


def test_archive_strings_in_interval_tables_are_escaped(tmp_path):
    frame = _table2().assign(agent=["<script>x</script>", "a&b", "baseline"])
    paths = tb.export_table(frame, "table2_primary_scores", tmp_path)
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
    return open_report(
        archive=_archive(tmp_path / "arch"), scores_dir=scores, output_dir=tmp_path / "out"
    )


def test_report_table_shows_intervals_and_the_view_is_the_file(report):
    view = report.table(_table2(), "table2_primary_scores")
    assert "[0.530,\u00a00.590]" in view.html and tb.INTERVAL_NOTE in view.html  # no break
    assert view.html == view.paths["html"].read_text()
    assert "[0.530,\u00a00.590]" in view._repr_html_()
    assert tb.INTERVAL_NOTE in view._repr_html_()
    assert "penalized_mean_ci_low" in repr(view)  # the numbers nbval compares include the bounds


def test_report_table_uses_the_declared_specs(report):
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
                "tasks_p_value": 0.6875,
                "tasks_p_holm": 0.6875,
            }
        ]
    )
    view = report.table(pairwise, "pairwise_comparisons")
    assert "Mean difference (A - B)" in view.html and "Agent A" in view.html
    assert "-0.025 [-0.075,\u00a00.147]" in view.html
    assert nbk.table_spec("power_table") is catalog.table("power_table").spec
    assert nbk.table_spec("table2_primary_scores") is SPEC2
    assert nbk.table_spec("table20_practices_wide") is None  # built from the frame
    assert nbk.table_spec("no_such_table") is None


def test_report_table_rejects_a_frame_that_is_not_the_declared_table(report):
    from automd_analysis.analysis.catalog.declaration import TableDeclarationError

    with pytest.raises(TableDeclarationError) as err:
        report.table(_table2().drop(columns="penalized_sd"), "table2_primary_scores")
    assert err.value.code == "table.columns" and "penalized_sd" in str(err.value)
    assert not (report.output_dir / "tables" / "table2_primary_scores.csv").exists()


def test_annotator_caption():
    prov = pd.DataFrame(
        {"annotator": ["automd annotate 0.1.0"], "annotations_source": ["generated"], "n_runs": [3]}
    )
    caption = annotator_caption("fig2a_ece_decomposition", prov)
    assert caption.startswith(catalog.table("fig2a_ece_decomposition").spec.caption)
    assert caption.endswith(
        "Codebook answers by automd annotate 0.1.0 (3 runs, generated outside the archive)."
    )
