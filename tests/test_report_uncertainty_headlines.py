"""Headlines with uncertainty: a difference is stated only when it is significant, otherwise the
sentence says the data cannot separate the agents and why; measure robustness; annotators."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.report import headlines as h

NAN = math.nan


def _pair(a, b, measure="score", diff=0.02, low=-0.01, high=0.05, p=0.3, holm=0.3, n=15, better=9):
    return {
        "agent_a": a,
        "agent_b": b,
        "measure": measure,
        "diff_mean": diff,
        "ci_low": low,
        "ci_high": high,
        "p_value": p,
        "p_holm": holm,
        "n_tasks": n,
        "tasks_a_better": better,
    }


def test_significant_difference_is_stated_in_the_right_direction():
    rows = pd.DataFrame(
        [
            _pair(
                "aide", "codex", diff=-0.04, low=-0.07, high=-0.01, p=0.001, holm=0.003, better=2
            ),
            _pair("aide", "codex", "ece", diff=-0.03, low=-0.05, high=-0.01, holm=0.01, better=12),
        ]
    )
    score = h.comparison_findings(rows, "score")
    assert [f.key for f in score] == ["diff_score_aide_codex"]
    assert score[0].text.startswith("codex scores higher than aide on the primary score")
    assert "better on 13 of 15 tasks" in score[0].text  # 15 - 2 tasks where aide was better
    assert score[0].values["p_holm"] == pytest.approx(0.003)
    ece = h.comparison_findings(rows, "ece")
    assert ece[0].text.startswith("aide is better calibrated than codex on calibration (ECE)")
    assert "better on 12 of 15 tasks" in ece[0].text


def test_one_non_significant_pair_with_enough_tasks_gives_no_task_count_excuse():
    found = h.comparison_findings(pd.DataFrame([_pair("a", "b", holm=0.2, n=15)]))
    [finding] = found
    assert finding.key == "no_separation_score"
    assert finding.text.startswith("The data cannot separate a and b on the primary score")
    assert "Holm-adjusted p = 0.200" in finding.text
    assert "no paired test" not in finding.text
    assert "higher than" not in finding.text


def test_several_pairs_with_few_tasks_say_the_test_cannot_reach_significance():
    rows = pd.DataFrame(
        [
            _pair("a", "b", diff=0.026, low=-0.075, high=0.147, holm=0.688, n=5),
            _pair("a", "baseline", diff=-0.048, low=-0.113, high=0.021, holm=0.625, n=5),
            _pair("b", "baseline", diff=-0.073, low=-0.178, high=0.014, holm=0.562, n=5),
        ]
    )
    [finding] = h.comparison_findings(rows)
    text = finding.text
    assert text.startswith(
        "The data cannot separate a and b, a and baseline or b and baseline on the primary score"
    )
    assert "a \N{MINUS SIGN} b +0.026, 95% CI -0.075 to 0.147" in text
    assert "b \N{MINUS SIGN} baseline -0.073, 95% CI -0.178 to 0.014" in text
    assert "every Holm-adjusted p-value is at least 0.05 (0.562 to 0.688)" in text
    assert "with 5 tasks no paired test across tasks can reach p < 0.05" in text
    assert "(at least 6 tasks are needed)" in text
    assert finding.values == {"n_pairs": 3, "p_holm_min": pytest.approx(0.562)}


def test_many_pairs_are_named_without_numbers_and_alpha_sets_the_task_count():
    agents = ["a", "b", "c", "d"]
    rows = pd.DataFrame(
        [_pair(x, y, holm=0.5, n=4) for i, x in enumerate(agents) for y in agents[i + 1 :]]
    )
    [finding] = h.comparison_findings(rows, alpha=0.1)
    assert "mean differences" not in finding.text and "c and d" in finding.text
    # smallest p with 4 tasks is 2/16 = 0.125 >= 0.1; 5 tasks (0.0625) would be enough
    assert "with 4 tasks no paired test across tasks can reach p < 0.1" in finding.text
    assert "(at least 5 tasks are needed)" in finding.text


def test_mixed_significant_and_not():
    rows = pd.DataFrame(
        [
            _pair("a", "b", diff=0.1, low=0.05, high=0.15, holm=0.001, better=14),
            _pair("a", "c", holm=0.04999),
            _pair("b", "c", holm=0.05),  # not below alpha
        ]
    )
    found = h.comparison_findings(rows)
    assert [f.key for f in found] == ["diff_score_a_b", "diff_score_a_c", "no_separation_score"]
    assert found[2].text.startswith("The data cannot separate b and c")


def test_no_rows_says_why():
    empty = pd.DataFrame(columns=["agent_a", "agent_b", "measure", "p_holm"])
    [no_reps] = h.comparison_findings(empty, has_replicates=False)
    assert no_reps.key == "no_comparisons_score"
    assert "no bootstrap replicates" in no_reps.text and "--bootstrap 1000" in no_reps.text
    [one_agent] = h.comparison_findings(empty, "ece")
    assert one_agent.text == "There is no pair of agents to compare on calibration (ECE)."


def test_pairs_without_common_tasks():
    rows = pd.DataFrame([_pair("a", "b", diff=NAN, low=NAN, high=NAN, p=NAN, holm=NAN, n=0)])
    [finding] = h.comparison_findings(rows)
    assert (
        finding.text == "The data cannot separate a and b on the primary score: they share no task."
    )


def test_archive_names_are_escaped():
    rows = pd.DataFrame([_pair("<b>x_y</b>", "z*", diff=0.1, holm=0.001)])
    [finding] = h.comparison_findings(rows)
    assert "<b>" not in finding.text and "&lt;b&gt;x\\_y&lt;/b&gt;" in finding.text
    assert "z\\*" in finding.text


_P = st.one_of(st.floats(0.0, 1.0), st.just(NAN))


@settings(max_examples=40)
@given(st.lists(st.tuples(_P, st.floats(-0.5, 0.5), st.integers(0, 20)), min_size=1, max_size=8))
def test_a_difference_is_stated_exactly_for_the_significant_pairs(specs):
    rows = pd.DataFrame(
        [
            _pair(f"a{i}", f"b{i}", diff=d, holm=p, n=n, better=n // 2)
            for i, (p, d, n) in enumerate(specs)
        ]
    )
    found = h.comparison_findings(rows)
    stated = {f.key for f in found if f.key.startswith("diff_")}
    significant = {f"diff_score_a{i}_b{i}" for i, (p, _, _) in enumerate(specs) if p < 0.05}
    assert stated == significant
    for f in found:
        if f.key.startswith("no_separation"):
            assert "higher than" not in f.text
            assert f.text.startswith("The data cannot separate")
    assert any(f.key == "no_separation_score" for f in found) == (len(significant) < len(specs))


def _table2(with_ci=True):
    frame = pd.DataFrame(
        {
            "agent": ["aide", "codex", "baseline"],
            "penalized_mean": [0.537, 0.562, 0.50],
            "nonpenalized_mean": [0.537, 0.562, 0.50],
            "valid_rate_mean": [1.0, 1.0, 1.0],
        }
    )
    if with_ci:
        frame["penalized_mean_ci_low"] = [0.51, 0.53, 0.47]
        frame["penalized_mean_ci_high"] = [0.56, 0.59, 0.53]
    return frame


def test_primary_findings_qualify_the_spread_with_its_intervals():
    t12 = pd.DataFrame(columns=["task", "agent", "mean"])
    pw = pd.DataFrame([_pair("aide", "codex", diff=-0.025, holm=0.7, n=3)])
    found = h.primary_findings(_table2(), t12, pw)
    assert [f.key for f in found][:2] == ["score_spread", "no_separation_score"]
    spread = found[0]
    assert spread.text == (
        "Penalised primary scores of the 2 agents range from 0.537 (aide; 95% CI 0.510 to "
        "0.560) to 0.562 (codex; 95% CI 0.530 to 0.590); the simple baseline scores 0.500 "
        "(95% CI 0.470 to 0.530)."
    )
    assert spread.values == pytest.approx(
        {"low": 0.537, "high": 0.562, "spread": 0.025, "baseline": 0.5}
    )
    assert h.primary_findings(_table2(), t12)[0] == spread  # the comparisons are optional
    assert "with 3 tasks no paired test" in found[1].text
    # without interval columns: the plain numbers, and the comparison explains the absence
    plain = h.primary_findings(_table2(False), t12, pw.iloc[:0], has_replicates=False)
    assert "95% CI" not in plain[0].text and "0.537 (aide) to 0.562 (codex)" in plain[0].text
    assert plain[1].key == "no_comparisons_score"


def test_calibration_findings_do_not_contrast_without_evidence():
    t3 = pd.DataFrame(
        {
            "agent": ["aide", "codex", "baseline"],
            "all": [0.05, 0.12, 0.04],
            "all_ci_low": [0.04, 0.10, 0.03],
            "all_ci_high": [0.06, 0.15, 0.05],
        }
    )
    pw = pd.DataFrame([_pair("aide", "codex", "ece", diff=-0.07, holm=0.001, better=14)])
    found = h.calibration_findings(_table2(), t3, pw)
    keys = [f.key for f in found]
    assert keys == ["ece_spread", "diff_ece_aide_codex"]
    text = found[0].text
    assert " but " not in text
    assert "0.050 (aide; 95% CI 0.040 to 0.060) to 0.120 (codex; 95% CI 0.100 to 0.150)" in text
    # a multiple of the baseline is not claimed; without baseline pairs nothing is said of it
    assert "x the simple baseline" not in text and "baseline" not in text
    assert found[1].text.startswith("aide is better calibrated than codex")


def test_calibration_findings_claim_only_what_the_paired_intervals_support():
    t3 = pd.DataFrame(
        {
            "agent": ["aide", "codex", "baseline"],
            "all": [0.05, 0.12, 0.04],
            "all_ci_low": [0.04, 0.10, 0.03],
            "all_ci_high": [0.06, 0.15, 0.05],
        }
    )
    pw = pd.DataFrame(
        [
            _pair("aide", "codex", "ece", diff=-0.07, holm=0.001, better=14),
            _pair("aide", "baseline", "ece", diff=0.01, holm=0.40, better=8),
            _pair("codex", "baseline", "ece", diff=0.08, holm=0.001, better=15),
            _pair("aide", "codex", "score", diff=0.01, holm=0.60, better=8),
        ]
    )
    text = h.calibration_findings(_table2(), t3, pw)[0].text
    # one of the two agents is separated from the baseline: said as a count, never as a range
    assert "the ECE of 1 of 2 agents differs from the simple baseline's 0.040" in text
    assert "x the simple baseline" not in text
    # the score gap comes with the paired interval of that very difference
    assert "their penalised scores differ by" in text and "95% CI" in text.split("differ by")[1]


def _agreement(flips, best):
    measures = ["ece_10", "ece_15", "ici", "slope"]
    return pd.DataFrame(
        {
            "measure": measures,
            "n_agents": 3,
            "spearman": NAN,
            "kendall": NAN,
            "n_pairs": 3,
            "n_flipped": flips,
            "best_agent": best,
            "same_best": [b == best[0] for b in best],
        }
    )


def test_measure_robustness_holds():
    [f] = h.measure_robustness_findings(_agreement([0, 0, 0, 0], ["a", "a", "a", "a"]))
    assert f.text == (
        "Against the 10-bin ECE, none of the other 3 measures (15-bin ECE, ICI and calibration "
        "slope) reverses the order of two agents that their runs separate (a reversal counts "
        "when the 95% interval of the difference excludes 0 under both measures): the "
        "calibration conclusions do not depend on the measure."
    )
    assert f.values == {"n_measures": 4, "n_changing": 0}
    # no separated reversal, but the point values name another best agent: said, not hidden
    [f] = h.measure_robustness_findings(_agreement([0, 0, 0, 0], ["a", "a", "b", "a"]))
    assert f.text.endswith(
        "By the point values alone, the best-calibrated agent is a under 10-bin ECE, 15-bin ECE "
        "and calibration slope and b under ICI."
    )


def test_measure_robustness_depends_and_names_the_measures():
    agreement = _agreement([0, 0, 1, 2], ["a", "a", "a", "b_c"])
    pw = pd.DataFrame(
        [
            _pair("a", "b_c", "ece", holm=0.6, n=5),
            _pair("a", "baseline", "ece", holm=0.001),  # baseline pairs do not count
        ]
    )
    [f] = h.measure_robustness_findings(agreement, pw)
    assert f.text.startswith("The calibration ranking depends on the measure: against the 10-bin")
    assert (
        "ICI reverses 1 of 3 agent pairs; calibration slope reverses 2 of 3 agent pairs" in f.text
    )
    assert "a under 10-bin ECE, 15-bin ECE and ICI and b\\_c under calibration slope" in f.text
    assert "None of the agents' ECE differences is significant" in f.text
    assert f.values == {"n_measures": 4, "n_changing": 2}
    significant = pw.assign(p_holm=[0.01, 0.5])
    [g] = h.measure_robustness_findings(agreement, significant)
    assert "None of the agents" not in g.text


def test_measure_robustness_with_a_tie_and_too_few_agents():
    agreement = _agreement([0, 1, 0, 0], ["a", None, "a", "a"])
    [f] = h.measure_robustness_findings(agreement)
    assert "a tie under 15-bin ECE" in f.text
    few = _agreement([0, 0, 0, 0], ["a"] * 4).assign(n_agents=1)
    [g] = h.measure_robustness_findings(few)
    assert g.text.startswith("Fewer than two agents have calibration measures")


def test_annotation_findings_escape_and_count():
    rows = pd.DataFrame(
        {
            "annotator": ["automd annotate 0.1.0", "<i>human_1</i>", None],
            "annotations_source": ["generated", "archive", "none"],
            "n_runs": [12, 186, 2],
        }
    )
    [f] = h.annotation_findings(rows)
    assert f.key == "annotator"
    assert "automd annotate 0.1.0 (12 runs, generated outside the archive)" in f.text
    assert "&lt;i&gt;human\\_1&lt;/i&gt; (186 runs)" in f.text and "<i>" not in f.text
    assert f.text.endswith("no answers for 2 runs.")
    assert f.values == {"automd annotate 0.1.0": 12, "<i>human_1</i>": 186, "(none)": 2}


@pytest.mark.parametrize(
    ("holms", "said"),
    [
        ((0.40, 0.30), "neither agent's ECE differs from the simple baseline's 0.040"),
        ((0.001, 0.002), "both agents' ECEs differ from the simple baseline's 0.040"),
        ((0.40, 0.30, 0.20, 0.50), "none of the 4 agents' ECEs differs from the simple baseline's"),
        ((0.001, 0.001, 0.01, 0.02), "all 4 agents' ECEs differ from the simple baseline's"),
        ((0.001, 0.30, 0.01), "the ECE of 2 of 3 agents differs from the simple baseline's"),
    ],
)
def test_the_baseline_sentence_reads_naturally_for_none_some_and_all(holms, said):
    pw = pd.DataFrame(
        [
            _pair(f"agent{i}", "baseline", "ece", diff=0.05, holm=holm, better=8)
            for i, holm in enumerate(holms)
        ]
    )
    text = h._baseline_separation(pw, 0.04, 0.05)
    assert said in text
    assert " 0 of " not in text
