"""automd_analysis.report.headlines: hand-computed findings from small analysis tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.report import headlines as h

NAN = math.nan


def _table2(rows):
    cols = ["agent", "penalized_mean", "nonpenalized_mean", "valid_rate_mean"]
    return pd.DataFrame(rows, columns=cols)


def test_primary_spread_baseline_and_invalid_runs():
    t2 = _table2(
        [
            ("codex", 0.517, 0.517, 1.0),
            ("scientist", 0.355, 0.467, 0.7333333),
            ("aide", 0.474, 0.474, 1.0),
            ("baseline", 0.487, 0.487, 1.0),
        ]
    )
    t12 = pd.DataFrame(
        [
            ("t1", "codex", 0.6),
            ("t1", "aide", 0.4),
            ("t1", "scientist", NAN),
            ("t1", "baseline", 0.5),
            ("t2", "codex", 0.7),
            ("t2", "aide", 0.7),
            ("t2", "scientist", 0.9),
            ("t2", "baseline", 0.65),
        ],
        columns=["task", "agent", "mean"],
    )
    found = h.primary_findings(t2, t12).by_key()
    spread = found["score_spread"]
    assert spread.values == pytest.approx(
        {"low": 0.355, "high": 0.517, "spread": 0.162, "baseline": 0.487}
    )
    assert spread.text == (
        "Penalised primary scores of the 3 agents range from 0.355 (scientist) to 0.517 "
        "(codex); the simple baseline scores 0.487."
    )  # no interval columns: the values alone
    above = found["tasks_above_baseline"]
    # codex beats 0.5 and 0.65; aide only 0.7 > 0.65; scientist has one comparable task
    assert above.values == {"aide": 1, "codex": 2, "scientist": 1}
    assert "codex on 2 of 2" in above.text and "scientist on 1 of 1" in above.text
    invalid = found["invalid_scientist"]
    assert "73% of its runs" in invalid.text
    assert invalid.values["nonpenalized"] == pytest.approx(0.467)
    assert "invalid_codex" not in found


def test_primary_without_baseline_or_agents():
    t2 = _table2([("codex", 0.5, 0.5, 1.0)])
    t12 = pd.DataFrame([("t1", "codex", 0.5)], columns=["task", "agent", "mean"])
    found = h.primary_findings(t2, t12)
    assert [f.key for f in found] == ["score_spread"]
    # one agent: its score, not a "range from 0.500 (codex) to 0.500 (codex)" (issue 33)
    assert found[0].text == "The one agent's penalised primary score is 0.500 (codex)."
    assert h.primary_findings(_table2([]), t12.iloc[:0]) == []


def test_calibration_ratios_groups_and_recalibration():
    t2 = _table2([("a", 0.50, 0.5, 1), ("b", 0.52, 0.52, 1), ("baseline", 0.49, 0.49, 1)])
    t3 = pd.DataFrame({"agent": ["a", "b", "baseline"], "all": [0.086, 0.075, 0.025]})
    dec = pd.DataFrame(
        {
            "group": ["averaged_ranks", "imbalance_without_recalibration", "other"],
            "n_runs": [14, 9, 77],
            "share_of_runs": [0.14, 0.09, 0.77],
            "share_of_difference": [0.75, 0.18, 0.07],
        }
    )
    recal = pd.DataFrame({"recalibrated": [False, True], "n_runs": [6, 1], "mean": [0.16, 0.008]})
    found = h.calibration_findings(t2, t3, decomposition=dec, recalibration=recal).by_key()
    spread = found["ece_spread"]
    assert spread.values["score_spread"] == pytest.approx(0.02)
    # without paired comparisons no multiple of the baseline and no score gap is claimed
    assert spread.text.endswith("0.075 (b) to 0.086 (a).")
    assert "x the simple baseline" not in spread.text and "within" not in spread.text
    assert (
        "are 14% of the valid runs (14) and account for 75%" in found["group_averaged_ranks"].text
    )
    assert "group_other" not in found
    assert found["recalibration"].values == {"with": 0.008, "without": 0.16}
    assert (
        "0.008 with recalibration (1 run) and 0.160 without (6 runs)" in found["recalibration"].text
    )


def test_decomposition_and_recalibration_sentences_quote_their_intervals():
    t2 = _table2([("a", 0.50, 0.5, 1), ("b", 0.52, 0.52, 1)])
    t3 = pd.DataFrame({"agent": ["a", "b"], "all": [0.086, 0.075]})
    dec = pd.DataFrame(
        {
            "group": ["averaged_ranks"],
            "n_runs": [14],
            "share_of_runs": [0.14],
            "share_of_difference": [0.75],
            "share_of_runs_ci_low": [0.08],
            "share_of_runs_ci_high": [0.2],
            "share_of_difference_ci_low": [0.5],
            "share_of_difference_ci_high": [1.9],
        }
    )
    recal = pd.DataFrame(
        {
            "recalibrated": [False, True],
            "n_runs": [6, 1],
            "mean": [0.16, 0.008],
            "mean_ci_low": [0.12, 0.008],
            "mean_ci_high": [0.2, 0.008],
        }
    )
    found = h.calibration_findings(t2, t3, decomposition=dec, recalibration=recal).by_key()
    assert found["group_averaged_ranks"].text == (
        "Runs that submit averaged ranks as probabilities are 14% (95% CI 8% to 20%) of the valid "
        "runs (14) and account for 75% (95% CI 50% to 190%) of the total ECE difference from the "
        "simple baselines."
    )
    assert found["recalibration"].text.endswith(
        "mean ECE is 0.008 with recalibration (1 run; 95% CI 0.008 to 0.008) and 0.160 without "
        "(6 runs; 95% CI 0.120 to 0.200)."
    )


def test_calibration_without_baseline_has_no_ratio():
    t2 = _table2([("a", 0.5, 0.5, 1), ("b", 0.6, 0.6, 1)])
    t3 = pd.DataFrame({"agent": ["a", "b"], "all": [0.1, 0.2]})
    [finding] = h.calibration_findings(t2, t3)
    assert "ratio_low" not in finding.values
    assert finding.text.endswith("0.100 (a) to 0.200 (b).")


def test_objectives_and_ece_change():
    t4 = pd.DataFrame(
        {
            "objective": ["A", "B", "C"],
            "n_valid": [12, 11, 11],
            "auroc_mean": [0.683, 0.640, 0.676],
            "ece_mean": [0.172, 0.061, 0.016],
        }
    )
    found = h.objective_findings(t4).by_key()
    assert "Objective B (the Brier score): mean AUROC 0.640, mean ECE 0.061 over 11" in (
        found["objective_B"].text
    )
    assert found["ece_change"].values == {
        "ece_a": 0.172,
        "ece_c": 0.016,
        "auroc_a": 0.683,
        "auroc_c": 0.676,
    }
    assert "from 0.172 to 0.016" in found["ece_change"].text
    assert "ece_change" not in h.objective_findings(t4.iloc[:2]).by_key()


def test_shift_ratios_per_task():
    t5 = pd.DataFrame(
        {
            "agent": ["a", "b", "baseline", "a", "b"],
            "task": ["ext1", "ext1", "ext1", "ext2", "ext2"],
            "internal_task": ["int1", "int1", "int1", "int2", "int2"],
            "ratio": [0.85, 0.99, 0.97, 0.41, NAN],
        }
    )
    found = h.shift_findings(t5).by_key()
    assert found["ratio_ext1"].values == {"low": 0.85, "high": 0.99, "baseline": 0.97}
    assert "agents keep 85% (a) to 99% (b)" in found["ratio_ext1"].text
    assert "baseline keeps 97%" in found["ratio_ext1"].text
    assert found["ratio_ext2"].values["low"] == found["ratio_ext2"].values["high"] == 0.41
    assert found["ratio_ext2"].text.endswith("without the shift.")


def test_subgroup_gaps_same_lowest_and_checks():
    t14 = pd.DataFrame(
        {
            "task_group": ["icu", "icu", "icu", "icu"],
            "attribute": ["age", "age", "age", "sex"],
            "agent": ["a", "b", "baseline", "a"],
            "gap_mean": [0.065, 0.084, 0.07, 0.02],
            "same_lowest_share": [1.0, 0.5, NAN, NAN],
            "n_compared": [3, 1, 0, 0],
        }
    )
    checks = pd.DataFrame(
        {"agent": ["a", "(all agents)"], "n_checked": [6, 6], "n_answered": [100, 168]}
    )
    found = h.subgroup_findings(t14, checks).by_key()
    assert found["gap_age"].values == {
        "agent_low": 0.065,
        "agent_high": 0.084,
        "baseline_low": 0.07,
        "baseline_high": 0.07,
    }
    # weighted by runs compared: (3 * 1.0 + 1 * 0.5) / 4
    assert found["same_lowest_age"].values == {"share": pytest.approx(0.875), "n": 4}
    assert "in 88% of 4 runs by agents" in found["same_lowest_age"].text
    assert "0.065 to 0.084 (simple baseline: 0.070)." in found["gap_age"].text
    assert "same_lowest_sex" not in found
    assert found["checks"].text == (
        "Agents checked performance by subgroup in 6 of 168 annotated valid runs."
    )


def test_llm_spread_and_factor():
    t7 = pd.DataFrame(
        {
            "llm": ["qwen", "gpt", "gemini"],
            "penalized_mean": [0.517, 0.520, 0.518],
            "ece_mean": [0.086, 0.041, 0.029],
        }
    )
    [finding] = h.llm_findings(t7)
    assert finding.values["score_spread"] == pytest.approx(0.003)
    # Table 7 has no paired comparison of LLMs: ends and their own intervals, no gap or factor
    assert "mean ECE (plug-in) from 0.029 (gemini) to 0.086 (qwen)" in finding.text
    assert "factor" not in finding.text and "within" not in finding.text
    assert h.llm_findings(t7.iloc[:1]) == []
    corrected = t7.assign(
        ece_mean_bc=[0.080, 0.035, 0.020],
        ece_mean_bc_ci_low=[0.06, 0.02, 0.01],
        ece_mean_bc_ci_high=[0.10, 0.05, 0.03],
    )
    [finding] = h.llm_findings(corrected)
    assert (
        "bias-corrected mean ECE from 0.020 (gemini; 95% CI 0.010 to 0.030) to 0.080 "
        "(qwen; 95% CI 0.060 to 0.100)" in finding.text
    )


def test_archive_names_are_escaped():
    t7 = pd.DataFrame(
        {
            "llm": ["<script>x</script>", "a_b*c*"],
            "penalized_mean": [0.5, 0.6],
            "ece_mean": [0.1, 0.2],
        }
    )
    [finding] = h.llm_findings(t7)
    assert "<script>" not in finding.text and "&lt;script&gt;" in finding.text
    assert r"a\_b\*c\*" in finding.text


def test_findings_display():
    empty = h.Findings()
    assert "No headline findings" in empty._repr_markdown_()
    two = h.combine([h.Finding("a", "one")], [h.Finding("b", "two")])
    assert repr(two) == "- one\n- two"


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(min_value=0, max_value=1, allow_nan=False), min_size=2, max_size=6).filter(
        lambda xs: min(xs) > 0
    )
)
def test_llm_spread_is_max_minus_min(values):
    t7 = pd.DataFrame(
        {
            "llm": [f"m{i}" for i in range(len(values))],
            "penalized_mean": values,
            "ece_mean": values,
        }
    )
    [finding] = h.llm_findings(t7)
    assert finding.values["score_spread"] == pytest.approx(max(values) - min(values))


# ---------------------------------------------------------------------------------------------
# 07 methods and development


def _table6(rows):
    cols = ["field", "category", "agent", "pct_pooled", "n_valid_runs"]
    return pd.DataFrame(rows, columns=cols)


def _table17_summary(rows):
    cols = ["agent", "n_valid_survival", "n_with_error", "n_exceeding_baseline"]
    return pd.DataFrame(rows, columns=cols)


def _table18(rows):
    return pd.DataFrame(rows, columns=["agent", "selected_is_best_pct", "val_minus_test"])


def _development(**over):
    args = {
        "table6": _table6(
            [
                ("model_families", "gbdt", "aide", 60.0, 10),
                ("model_families", "linear", "aide", 60.0, 10),  # tie: the first category wins
                ("model_families", "cox", "codex", 75.0, 4),
                ("model_families", "gbdt", "codex", 50.0, 4),
                ("model_families", "gbdt", "nobody", 0.0, 0),  # no valid run: not reported
                ("ensembling", "stacking", "aide", 90.0, 10),  # another field: ignored
            ]
        ),
        "table17_summary": _table17_summary(
            [("aide", 4, 1, 1), ("codex", 3, 2, 0), ("all", 7, 3, 1)]
        ),
        "table18": _table18(
            [("aide", 22.0, 0.047), ("codex", 32.0, 0.006), ("baseline", 100.0, NAN)]
        ),
    }
    args.update(over)
    return h.development_findings(**args).by_key()


def test_development_methods_censoring_and_selection():
    found = _development()
    family = found["model_family"]
    assert family.text == (
        "Most used model family (share of valid annotated runs): aide gbdt (60%); codex cox (75%)."
    )
    assert family.values == {"aide": 60.0, "codex": 75.0}
    censoring = found["censoring"]
    assert censoring.text == (
        "3 of 7 valid survival runs mishandle censoring; 1 of them still score above the simple "
        "baseline."
    )
    selection = found["selection"]
    # the baseline row is not an agent
    assert "22% (aide) to 32% (codex) of runs" in selection.text
    assert "from +0.006 (codex) to +0.047 (aide)" in selection.text
    assert selection.values == pytest.approx(
        {"selected_best_low": 22.0, "selected_best_high": 32.0, "val_minus_test_low": 0.006,
         "val_minus_test_high": 0.047}
    )  # fmt: skip
    # without masking results the findings say so instead of inventing a number
    assert "masking" not in found and "No masking-test results" in found["masking_absent"].text


def test_development_pairs_masking_process_and_win_rate():
    table19 = pd.DataFrame(
        [("ensembling", 4, 0.01, 0.5), ("hyperparameter_tuning", 9, -0.002, 1 / 3),
         ("other", 9, 0.2, 1.0)],
        columns=["change", "n", "mean", "share_positive"],
    )  # fmt: skip
    masking = pd.DataFrame(
        [
            ("aide", "t1", 3, 3, 2, 0, 1, 0, 1),
            ("scientist", "t1", 4, 3, 0, 1, 2, 1, 0),
            ("aide", "(all)", 3, 3, 2, 0, 1, 0, 1),
            ("scientist", "(all)", 4, 3, 0, 1, 2, 1, 0),
            ("(all)", "(all)", 7, 6, 2, 1, 3, 1, 1),
        ],
        columns=["agent", "task", "n_runs", "n_tested", "n_flagged", "n_below_threshold",
                 "n_no_change", "n_errors", "n_not_reproduced"],
    )  # fmt: skip
    process = pd.DataFrame(
        [("Efficiency", "auc_over_steps", 0.3, 0.1, 3, 30, "hashing:x"),
         ("Cost", "wall_clock_h", -0.45, 0.012, 3, 28, "hashing:x"),
         ("Efficiency", "first_improvement_step", NAN, NAN, 0, 0, "hashing:x")],
        columns=["dimension", "metric", "rho", "p", "n_tasks", "n_runs", "embedding_backend"],
    )  # fmt: skip
    win = pd.DataFrame([("aide", 0.625), ("codex", 0.375)], columns=["agent", "win_rate"])
    found = _development(
        table19=table19, masking_summary=masking, process_table=process, win_rate=win
    )
    pair = found["pair_change"]  # 9 pairs twice: the first in display order
    assert pair.text == (
        "The most frequent change in annotated sampled version pairs is hyperparameter\\_tuning "
        "(9 pairs; mean score change -0.002, 33% of them improve the score)."
    )
    masked = found["masking"]
    assert masked.text == (
        "The masking test flagged 2 of 6 runs tested for using later hours (aide 2); 1 run could "
        "not be re-run; 1 run did not reproduce the archived alarms."
    )
    assert masked.values == {"n_tested": 6, "n_flagged": 2, "n_errors": 1, "n_not_reproduced": 1}
    assert "masking_absent" not in found
    corr = found["process_correlation"]  # largest |rho|, negative allowed; NaN rho ignored
    assert corr.text == (
        "Among the FML-bench process metrics, wall\\_clock\\_h (Cost) is most strongly correlated "
        "with the final score within tasks: Spearman rho -0.450 (runs compared within each of 3 "
        "tasks, 28 runs), within-task permutation p = 0.012 (code embeddings: hashing:x)."
    )
    assert corr.values == {"rho": -0.45, "p": 0.012, "n_tasks": 3, "n_runs": 28}
    assert found["win_rate"].values == {"low": 0.375, "high": 0.625}


def test_development_findings_escape_archive_strings_and_handle_empty_tables():
    evil = "<b>x</b>*"
    found = _development(
        table6=_table6([("model_families", "gbdt", evil, 100.0, 1)]),
        table17_summary=_table17_summary([("all", 0, 0, 0)]),
        table18=_table18([(evil, 50.0, NAN)]),
        table19=pd.DataFrame(columns=["change", "n", "mean", "share_positive"]),
        masking_summary=pd.DataFrame(columns=["agent", "task", "n_flagged"]),
        win_rate=pd.DataFrame([(evil, 0.5)], columns=["agent", "win_rate"]),
    )
    assert "<b>" not in found["model_family"].text and "&lt;b&gt;" in found["model_family"].text
    assert "\\*" in found["model_family"].text
    assert "censoring" not in found  # no valid survival run
    assert "reported validation" not in found["selection"].text  # no comparable gap
    assert "pair_change" not in found and "masking" not in found and "win_rate" not in found


def test_objective_sentences_name_the_task_and_give_intervals():
    t4 = pd.DataFrame(
        {
            "task": "demo_rhc",
            "objective": ["A", "C"],
            "n_valid": [12, 11],
            "auroc_mean": [0.683, 0.676],
            "auroc_mean_ci_low": [0.680, 0.670],
            "auroc_mean_ci_high": [0.686, 0.681],
            "ece_mean": [0.172, 0.016],
            "ece_mean_ci_low": [0.131, 0.012],
            "ece_mean_ci_high": [0.215, 0.021],
        }
    )
    found = h.objective_findings(t4).by_key()
    assert found["ece_change"].text == (
        "On task demo\\_rhc, adding ECE to the stated objective moves mean ECE from 0.172 "
        "(95% CI 0.131 to 0.215) to 0.016 (95% CI 0.012 to 0.021), while mean AUROC moves from "
        "0.683 (95% CI 0.680 to 0.686) to 0.676 (95% CI 0.670 to 0.681)."
    )
    assert found["objective_A"].text.startswith(
        "Objective A (the primary metric) on task demo\\_rhc: mean AUROC 0.683 (95% CI 0.680 to "
        "0.686), mean ECE 0.172 (95% CI 0.131 to 0.215) over 12 valid runs."
    )


def test_shift_sentences_quote_the_ratio_intervals():
    t5 = pd.DataFrame(
        {
            "agent": ["a", "b", "baseline"],
            "task": "ext1",
            "internal_task": "int1",
            "ratio": [0.85, 0.99, 0.97],
            "ratio_ci_low": [0.7, 0.9, 0.93],
            "ratio_ci_high": [1.0, 1.08, 1.01],
        }
    )
    assert h.shift_findings(t5)[0].text == (
        "ext1 (shifted from int1): agents keep 85% (a; 95% CI 70% to 100%) to 99% (b; 95% CI 90% "
        "to 108%) of their score without the shift; the simple baseline keeps 97% (95% CI 93% to "
        "101%)."
    )


def test_subgroup_gap_sentence_quotes_the_intervals():
    t14 = pd.DataFrame(
        {
            "task_group": "icu",
            "attribute": "age",
            "agent": ["a", "b", "baseline"],
            "gap_mean": [0.065, 0.084, 0.07],
            "gap_mean_ci_low": [0.04, 0.06, 0.05],
            "gap_mean_ci_high": [0.09, 0.11, 0.1],
            "same_lowest_share": [NAN, NAN, NAN],
            "n_compared": [0, 0, 0],
        }
    )
    assert h.subgroup_findings(t14)[0].text == (
        "By age: agents' mean subgroup gaps range from 0.065 (95% CI 0.040 to 0.090) to 0.084 "
        "(95% CI 0.060 to 0.110) (simple baseline: 0.070; 95% CI 0.050 to 0.100)."
    )
