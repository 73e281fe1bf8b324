"""How tables read on a page (report.presentation) and what a page shows (report.views)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.report import presentation as pr
from automd_analysis.report import views as vw

# ------------------------------------------------------------------------------------------------
# p-values


@pytest.mark.parametrize(
    ("p", "text"),
    [
        (0.5, "0.500"),
        (0.001, "0.001"),
        (0.0009996, "< 0.001"),
        (0.00099, "< 0.001"),
        (2.5e-7, "< 0.001"),
        (0.0, "< 0.001"),
        (1.0, "1.000"),
        (float("nan"), "–"),
        (None, "–"),
    ],
)
def test_p_value_formats(p, text):
    assert pr.format_p_value(p) == text


@settings(max_examples=60)
@given(st.floats(min_value=1e-300, max_value=1.0))
def test_a_positive_p_value_never_reads_as_zero_and_keeps_its_size(p):
    text = pr.format_p_value(p)
    if p < 1e-3:
        assert text == "< 0.001"  # never "0.000", never an exponent that wraps in a cell
    else:
        assert float(text) > 0 and abs(float(text) - p) <= 0.0005 * (1 + 1e-9)


# ------------------------------------------------------------------------------------------------
# interval labels and column kinds


@pytest.mark.parametrize(
    ("label", "text"),
    [
        ("age T1 [18.146, 55.4003)", "age T1 [18.1, 55.4)"),
        ("bin (0.04567, 0.1]", "bin (0.046, 0.1]"),
        ("age T3 [70, 95]", "age T3 [70, 95]"),
        ("sex F", "sex F"),
        ("[0.5, 0.75)", "[0.5, 0.75)"),
    ],
)
def test_interval_labels_are_rounded_for_reading(label, text):
    assert pr.format_interval_label(label) == text


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("p_value", "p"),
        ("p_holm", "p"),
        ("n_runs", "count"),
        ("n_mean", "count"),
        ("runs", "count"),
        ("share_of_runs", "share"),
        ("valid_rate_mean", "share"),
        ("pct_mean", "percent"),
        ("fraction_all_rows", "fraction"),
        ("auroc_mean", "number"),
        ("ratio", "number"),
    ],
)
def test_column_kind_from_the_csv_name(name, kind):
    assert pr.column_kind(name) == kind


def test_default_display_reads_the_column_names():
    frame = pd.DataFrame(
        {
            "agent": ["a", "b"],
            "n_runs": [3, 12],
            "n_mean": [40.0, 12.5],
            "auroc_mean": [0.81234, 0.7],
            "auroc_sd": [0.0123, np.nan],
            "ece_mean": [0.05, 0.1],
            "share_of_runs": [0.25, 0.75],
            "p_holm": [1.36e-43, 0.2],
            "nonpenalized_mean": [0.5, 0.6],
            "ratio": [150.0, 2.0],
        }
    )
    text, bold = pr.default_display(frame)
    assert list(text.columns) == [
        "agent",
        "n runs",
        "n mean",
        "AUROC (mean ± SD)",
        "ECE (mean)",
        "share of runs",
        "Holm p",
        "non-penalised score (mean)",
        "ratio",
    ]  # a page never shows a raw CSV name
    assert text.iloc[0].tolist() == [
        "a", "3", "40", "0.812 ± 0.012", "0.050", "25%", "< 0.001", "0.500", "150.0"
    ]  # fmt: skip
    assert text.loc[1, "AUROC (mean ± SD)"] == "0.700"  # no SD: the mean alone
    assert text.loc[1, "n mean"] == "12.5"  # a mean count keeps one decimal
    assert not bold.to_numpy().any()
    assert frame["p_holm"].iloc[0] == 1.36e-43  # the frame (what the CSV holds) is untouched


def test_default_display_takes_declared_titles_and_shows_intervals_in_brackets():
    frame = pd.DataFrame(
        {"recalibrated": [False, True], "n_runs": [5, 0], "mean": [0.12345, np.nan],
         "sd": [0.01, np.nan], "mean_ci_low": [0.1, np.nan], "mean_ci_high": [0.15, np.nan],
         "share": [0.5, 0.25], "share_ci_low": [0.4, np.nan], "share_ci_high": [0.6, 0.3]}
    )  # fmt: skip
    text, _ = pr.default_display(
        frame,
        titles={"mean": "ECE (mean ± SD)", "recalibrated": "Recalibrated"},
        intervals={"mean": ("mean_ci_low", "mean_ci_high"),
                   "share": ("share_ci_low", "share_ci_high")},
    )  # fmt: skip
    assert list(text.columns) == ["Recalibrated", "n runs", "ECE (mean ± SD)", "share"]
    assert text.iloc[0].tolist() == ["no", "5", "0.123 ± 0.010 [0.100, 0.150]", "50% [40%, 60%]"]
    assert text.iloc[1].tolist() == ["yes", "0", "–", "25%"]  # no interval without both bounds


# ------------------------------------------------------------------------------------------------
# constant columns and long tables


def test_constant_columns_are_said_once_in_the_caption():
    text = pd.DataFrame(
        {"agent": ["a", "b", "c"], "Tasks": ["9"] * 3, "Score": ["1", "2", "3"], "n": ["5"] * 3}
    )
    bold = text.map(lambda _: False)
    folded, folded_bold, caption = pr.fold_constant_columns(text, bold, "Scores.")
    assert list(folded.columns) == ["agent", "Score"] and list(folded_bold.columns) == list(folded)
    assert caption == "Scores. Same in every row: Tasks 9; n 5."
    # two rows repeat everything by construction: kept
    assert pr.fold_constant_columns(text.iloc[:2], bold.iloc[:2], "x")[2] == "x"
    # the labels and one value column always stay
    only = pd.DataFrame({"agent": ["a", "a", "a"], "v": ["1", "1", "1"]})
    kept, _, caption = pr.fold_constant_columns(only, only.map(lambda _: False), "c")
    assert list(kept.columns) == ["agent", "v"] and caption == "c"


@settings(max_examples=40)
@given(
    st.lists(
        st.tuples(st.sampled_from("ab"), st.sampled_from("xy"), st.sampled_from("12")),
        min_size=3,
        max_size=8,
    )
)
def test_folding_keeps_every_varying_column_and_names_every_removed_one(rows):
    text = pd.DataFrame(rows, columns=["label", "u", "v"])
    folded, _, caption = pr.fold_constant_columns(text, text.map(lambda _: False), "")
    for column in ("u", "v"):
        if text[column].nunique() > 1:
            assert column in folded.columns
        elif column not in folded.columns:
            assert f"{column} {text[column].iloc[0]}" in caption
    assert folded["label"].tolist() == text["label"].tolist()


def test_long_tables_from_sixteen_rows():
    assert not pr.is_long(pr.LONG_TABLE_ROWS) and pr.is_long(pr.LONG_TABLE_ROWS + 1)


# ------------------------------------------------------------------------------------------------
# views


@pytest.mark.parametrize(("width_in", "px"), [(4.5, 450), (9.0, 900), (10.0, 900), (14.0, 900)])
def test_figures_are_shown_at_most_the_page_width(width_in, px):
    assert vw.display_width(width_in) == px


def test_captions_are_escaped_before_markdown_marks():
    html = vw.caption_html("*Figure 2.* `n` <script>x</script> & **bold**")
    assert html == (
        "<em>Figure 2.</em> <code>n</code> &lt;script&gt;x&lt;/script&gt; &amp; "
        "<strong>bold</strong>"
    )


def test_collapsed_views_are_plain_details():
    inner = vw.Note("**Hi** `x`")
    html = vw.Collapsed("3 figures <b>", (inner,))._repr_html_()
    assert html.startswith('<details class="automd-collapsed"><summary>3 figures &lt;b&gt;')
    assert "<strong>Hi</strong> <code>x</code>" in html and html.endswith("</details>")
    assert "<script" not in html and " open" not in html  # closed, no script


def test_coverage_note_names_the_skipped_cells():
    coverage = pd.DataFrame(
        {
            "task": ["t1", "t1", "t2"],
            "agent": ["a", "b", "a"],
            "n_runs": [3, 3, 1],
            "n_valid": [2, 3, 1],
            "n_skipped": [0, 2, 0],
        }
    )
    note = repr(vw.coverage_note(coverage))
    assert note == (
        "7 runs on 2 tasks by 2 agents: 6 valid, 1 invalid; 2 runs skipped by the scorer (t1 / b)."
    )
    assert repr(vw.coverage_note(coverage.assign(n_skipped=0))).endswith(
        "no run skipped by the scorer."
    )
    assert repr(vw.coverage_note(coverage.assign(n_incomplete=0))) == note
    flagged = repr(vw.coverage_note(coverage.assign(n_incomplete=[1, 0, 1])))
    assert flagged.startswith(note) and "2 incomplete runs" in flagged
    unscorable = repr(
        vw.coverage_note(coverage.assign(n_valid=[0, 3, 1], n_not_scorable=[3, 0, 0]))
    )
    assert unscorable.startswith(
        "7 runs on 2 tasks by 2 agents: 4 valid, 0 invalid, 3 not scorable"
    )


def test_llm_agent_note_escapes_archive_strings():
    runs = pd.DataFrame({"agent": ["<b>x</b>"], "llm": ["m`1"], "is_default": [False]})
    html = vw.llm_agent_note(runs)._repr_html_()
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert "also run with" in html
