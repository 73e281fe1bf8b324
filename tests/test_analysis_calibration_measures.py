"""Calibration rankings across measures on hand-built stores with hand-computed expectations."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest
import storebuilder as sb
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau, spearmanr

from automd_analysis.analysis import calibration_measures as cm
from automd_analysis.analysis import catalog
from automd_analysis.analysis.store import selected_runs
from automd_analysis.errors import ScoreStoreError

NAN = math.nan


def _store(specs):
    """specs: (agent, task, rep, valid, measures dict). Returns (runs table, measures frame)."""
    runs = [sb.run(a, t, r, valid=v) for a, t, r, v, _ in specs]
    store = sb.build_store(runs)
    table = selected_runs(store)
    rows = []
    for (*_, values), spec in zip(specs, runs, strict=True):
        rows.append({"run_id": sb.run_id(spec), **values})
    return table, pd.DataFrame(rows)


def _m(**values):
    return values


SPECS = [
    # classification task clf_a: A well calibrated by ECE, worse by ICI than B
    ("A", "clf_a", 0, True, _m(ece_10=0.02, ici=0.06, cal_slope=0.9, cal_intercept=0.1)),
    ("A", "clf_a", 1, True, _m(ece_10=0.04, ici=0.08, cal_slope=0.7, cal_intercept=-0.3)),
    ("A", "clf_a", 2, False, _m(ece_10=0.90, ici=0.90, cal_slope=9.0, cal_intercept=9.0)),
    ("B", "clf_a", 0, True, _m(ece_10=0.05, ici=0.02, cal_slope=1.2, cal_intercept=0.2)),
    ("C", "clf_a", 0, True, _m(ece_10=0.10, ici=0.10, cal_slope=0.5, cal_intercept=0.5)),
    # classification task clf_b
    ("A", "clf_b", 0, True, _m(ece_10=0.06, ici=0.04, cal_slope=1.1, cal_intercept=0.0)),
    ("B", "clf_b", 0, True, _m(ece_10=0.07, ici=0.03, cal_slope=1.0, cal_intercept=-0.1)),
    ("C", "clf_b", 0, True, _m(ece_10=0.20, ici=0.15, cal_slope=NAN, cal_intercept=0.4)),
    # survival task: slope is the Cox slope, no intercept; D-calibration divergence
    ("A", "surv_a", 0, True, _m(ece_10=0.03, ici=0.02, cal_slope=1.3, dcal_divergence=0.01)),
    ("B", "surv_a", 0, True, _m(ece_10=0.08, ici=0.05, cal_slope=0.8, dcal_divergence=0.02)),
    ("C", "surv_a", 0, True, _m(ece_10=0.01, ici=0.01, cal_slope=1.0, dcal_divergence=0.03)),
    # the baseline: shown, never ranked
    ("baseline", "clf_a", 0, True, _m(ece_10=0.01, ici=0.01, cal_slope=1.0, cal_intercept=0.0)),
    ("baseline", "clf_a", 1, True, _m(ece_10=0.03, ici=0.01, cal_slope=1.0, cal_intercept=0.0)),
]


@pytest.fixture
def data():
    return _store(SPECS)


def test_agent_values_average_valid_runs_within_task_then_tasks(data):
    runs, measures = data
    table = cm.agent_measure_table(measures, runs, ["ece_10", "ici", "slope", "intercept"])
    assert table.columns.tolist() == catalog.table("calibration_by_measure").named
    v = table.set_index(["measure", "agent"])
    # A, ece_10: clf_a mean(0.02, 0.04) = 0.03 (invalid rep 2 ignored), clf_b 0.06, surv_a 0.03
    assert v.loc[("ece_10", "A"), "value"] == pytest.approx((0.03 + 0.06 + 0.03) / 3)
    assert v.loc[("ece_10", "A"), "n_tasks"] == 3
    # slope criterion |slope - 1|: A clf_a mean(0.1, 0.3) = 0.2, clf_b 0.1, surv_a 0.3
    assert v.loc[("slope", "A"), "value"] == pytest.approx((0.2 + 0.1 + 0.3) / 3)
    # C has no finite slope on clf_b: averaged over its two other tasks, and counted as undefined
    assert v.loc[("slope", "C"), "value"] == pytest.approx((0.5 + 0.0) / 2)
    assert v.loc[("slope", "C"), "n_tasks"] == 2
    assert (v.loc[("slope", "C"), "n_runs"], v.loc[("slope", "C"), "n_undefined"]) == (3, 1)
    assert (v.loc[("slope", "A"), "n_runs"], v.loc[("slope", "A"), "n_undefined"]) == (4, 0)
    assert v.loc[("intercept", "A"), "n_runs"] == 3  # binary tasks only
    # intercept |a|: binary tasks only. A: clf_a mean(0.1, 0.3) = 0.2, clf_b 0.0
    assert v.loc[("intercept", "A"), "value"] == pytest.approx(0.1)
    assert v.loc[("intercept", "A"), "n_tasks"] == 2
    # baseline: a value, never a rank
    assert v.loc[("ece_10", "baseline"), "value"] == pytest.approx(0.02)
    assert math.isnan(v.loc[("ece_10", "baseline"), "rank"])
    # ranks (1 = lowest): ece_10 A 0.04, B (0.05+0.07+0.08)/3 = 0.0667, C (0.1+0.2+0.01)/3 = 0.1033
    assert [v.loc[("ece_10", a), "rank"] for a in "ABC"] == [1.0, 2.0, 3.0]
    # ici: A (0.07+0.04+0.02)/3 = 0.0433, B (0.02+0.03+0.05)/3 = 0.0333, C 0.0867
    assert [v.loc[("ici", a), "rank"] for a in "ABC"] == [2.0, 1.0, 3.0]


def test_measures_only_use_their_task_kinds(data):
    runs, measures = data
    measures = measures.assign(ece_equal_mass_10=0.5)  # also on the survival rows: ignored there
    table = cm.agent_measure_table(measures, runs, ["ece_equal_mass", "d_calibration"])
    v = table.set_index(["measure", "agent"])
    assert v.loc[("ece_equal_mass", "A"), "n_tasks"] == 2
    assert v.loc[("d_calibration", "A"), "n_tasks"] == 1
    assert v.loc[("d_calibration", "A"), "value"] == pytest.approx(0.01)
    assert math.isnan(v.loc[("d_calibration", "baseline"), "value"])  # no survival baseline run


def test_ties_share_the_average_rank():
    specs = [
        ("A", "clf_a", 0, True, _m(ece_10=0.1)),
        ("B", "clf_a", 0, True, _m(ece_10=0.1 + 1e-15)),  # summation-order noise: a tie
        ("C", "clf_a", 0, True, _m(ece_10=0.3)),
    ]
    runs, measures = _store(specs)
    table = cm.agent_measure_table(measures, runs, ["ece_10"])
    assert table["rank"].tolist() == [1.5, 1.5, 3.0]


def test_correlations_between_measures_at_agent_and_task_level(data):
    runs, measures = data
    corr = cm.measure_correlations(measures, runs, ["ece_10", "ici"])
    assert corr.columns.tolist() == catalog.table("calibration_measure_correlations").named
    row = corr.iloc[0]
    ece = [0.04, (0.05 + 0.07 + 0.08) / 3, (0.1 + 0.2 + 0.01) / 3]
    ici = [(0.07 + 0.04 + 0.02) / 3, (0.02 + 0.03 + 0.05) / 3, (0.10 + 0.15 + 0.01) / 3]
    assert row["n"] == 3
    assert row["spearman"] == pytest.approx(spearmanr(ece, ici).statistic)
    assert row["kendall"] == pytest.approx(kendalltau(ece, ici).statistic)
    task = cm.measure_correlations(measures, runs, ["ece_10", "ici"], level="task").iloc[0]
    # 9 (task, agent) cells, baseline excluded
    cells_ece = [0.03, 0.05, 0.10, 0.06, 0.07, 0.20, 0.03, 0.08, 0.01]
    cells_ici = [0.07, 0.02, 0.10, 0.04, 0.03, 0.15, 0.02, 0.05, 0.01]
    assert task["n"] == 9
    assert task["spearman"] == pytest.approx(spearmanr(cells_ece, cells_ici).statistic)
    with pytest.raises(ValueError, match="level"):
        cm.measure_correlations(measures, runs, level="run")


def test_correlation_is_nan_with_too_few_agents():
    specs = [
        ("A", "clf_a", 0, True, _m(ece_10=0.1, ici=0.2)),
        ("B", "clf_a", 0, True, _m(ece_10=0.2, ici=0.1)),
    ]
    runs, measures = _store(specs)
    row = cm.measure_correlations(measures, runs, ["ece_10", "ici"]).iloc[0]
    assert row["n"] == 2 and math.isnan(row["spearman"]) and math.isnan(row["kendall"])
    assert row["reason"] == "2 pair(s) where both are defined; 3 needed"


@pytest.mark.parametrize("level", ["agent", "task"])
def test_a_measure_undefined_or_constant_on_every_run_gives_a_row_with_its_reason(level):
    """Constant predictions: every run has the same ECE and no logit-scale slope (issue 33)."""
    specs = [
        (agent, task, 0, True, _m(ece_10=0.1, ici=ici, cal_slope=NAN))
        for agent, ici in (("A", 0.1), ("B", 0.2), ("C", 0.3))
        for task in ("clf_a", "clf_b")
    ]
    runs, measures = _store(specs)
    corr = cm.measure_correlations(measures, runs, ["ece_10", "ici", "slope"], level=level)
    by_pair = corr.set_index(["measure_a", "measure_b"])
    constant = by_pair.loc[("ece_10", "ici")]
    assert constant["n"] == (3 if level == "agent" else 6) and math.isnan(constant["spearman"])
    assert constant["reason"] == "a measure takes one value on every pair"
    undefined = by_pair.loc[("ece_10", "slope")]
    assert undefined["n"] == 0 and math.isnan(undefined["kendall"])
    assert undefined["reason"] == "slope undefined on every run"
    assert len(corr) == 3  # one row per pair of measures, whatever is undefined


def test_flips_and_agreement(data):
    runs, measures = data
    table = cm.agent_measure_table(measures, runs, ["ece_10", "ici"])
    flips = cm.rank_flips(table)
    assert flips.columns.tolist() == catalog.table("calibration_rank_flips").named
    # ece_10: A < B < C ; ici: B < A < C -> only (A, B) flips
    assert flips[["agent_1", "agent_2", "better_under_a", "better_under_b"]].values.tolist() == [
        ["A", "B", "A", "B"]
    ]
    agreement = cm.ranking_agreement(table).set_index("measure")
    assert agreement.loc["ece_10", "n_flipped"] == 0 and agreement.loc["ece_10", "same_best"]
    assert agreement.loc["ici", "n_flipped"] == 1 and agreement.loc["ici", "n_pairs"] == 3
    assert agreement.loc["ici", "best_agent"] == "B" and not agreement.loc["ici", "same_best"]
    assert agreement.loc["ici", "spearman"] == pytest.approx(0.5)  # ranks (1,2,3) vs (2,1,3)
    with pytest.raises(ValueError, match="not in the agent table"):
        cm.ranking_agreement(table, "d_calibration")


def test_a_flip_needs_both_differences_separated_by_the_runs():
    # one task, three runs each. Under ece_10 A is below B on every run (separated); under ici
    # B's mean is below A's, but in one scenario the runs overlap (not separated), in the other
    # not. Only the separated reversal counts as a flip.
    def specs(ici_b):
        return [
            *[("A", "clf_a", r, True, _m(ece_10=0.01 + 0.001 * r, ici=0.05)) for r in range(3)],
            *[("B", "clf_a", r, True, _m(ece_10=0.10 + 0.001 * r, ici=v)) for r, v in ici_b],
        ]

    for ici_b, flips_expected in (
        (enumerate([0.01, 0.02, 0.03]), 1),  # B below A on every run and every redraw
        (enumerate([0.001, 0.002, 0.12]), 0),  # mean 0.041 < 0.05, but a redraw can invert it
    ):
        runs, measures = _store(specs(ici_b))
        table = cm.agent_measure_table(measures, runs, ["ece_10", "ici"])
        assert len(cm.rank_flips(table)) == 1  # as displayed, both scenarios reverse
        draws = cm.agent_value_draws(measures, runs, ["ece_10", "ici"], n_boot=2000)
        assert (
            draws[("ici", "A")][0]
            == table.set_index(["measure", "agent"]).loc[("ici", "A"), "value"]
        )
        assert len(cm.rank_flips(table, draws=draws)) == flips_expected
        agreement = cm.ranking_agreement(table, draws=draws).set_index("measure")
        assert agreement.loc["ici", "n_flipped"] == flips_expected


def test_flips_against_a_reference_only():
    specs = [
        ("A", "clf_a", 0, True, _m(ece_10=0.1, ici=0.3, cal_slope=1.0)),
        ("B", "clf_a", 0, True, _m(ece_10=0.2, ici=0.2, cal_slope=1.5)),
        ("C", "clf_a", 0, True, _m(ece_10=0.3, ici=0.1, cal_slope=1.2)),
    ]
    runs, measures = _store(specs)
    table = cm.agent_measure_table(measures, runs, ["ece_10", "ici", "slope"])
    every = cm.rank_flips(table)
    vs_ref = cm.rank_flips(table, reference_measure="ece_10")
    # ece vs ici: all 3 pairs reverse; ece vs slope (A 0, C 0.2, B 0.5): (B, C) flips; ici vs slope:
    # ici C < B < A, slope A < C < B: (A, B) and (A, C) flip
    assert len(vs_ref) == 4 and set(vs_ref["measure_a"]) == {"ece_10"}
    assert len(every) == 6


@settings(max_examples=30)
@given(st.lists(st.floats(0.0, 1.0), min_size=3, max_size=6), st.data())
def test_a_measure_never_flips_with_itself_or_a_monotone_transform(values, data):
    agents = [f"ag{i}" for i in range(len(values))]
    table = pd.DataFrame(
        {
            "measure": ["ece_10"] * len(values) + ["ici"] * len(values),
            "agent": agents * 2,
            "value": list(values) + [2 * v + 1 for v in values],
            "n_tasks": 1,
            "n_runs": 1,
            "n_undefined": 0,
            "rank": 1.0,
        }
    )
    table = table.iloc[data.draw(st.permutations(range(len(table))))]  # row order is irrelevant
    assert cm.rank_flips(table).empty
    agreement = cm.ranking_agreement(table).set_index("measure")
    assert (agreement["n_flipped"] == 0).all()


def test_slope_intercept_table(data):
    runs, measures = data
    table = cm.slope_intercept_table(measures, runs)
    assert table.columns.tolist() == catalog.table("calibration_slope_intercept").named
    a = table.set_index(["agent", "task_class"])
    # A classification: clf_a mean(0.9, 0.7) = 0.8, clf_b 1.1 -> mean 0.95, SD across tasks
    assert a.loc[("A", "classification"), "slope_mean"] == pytest.approx(0.95)
    assert a.loc[("A", "classification"), "slope_sd"] == pytest.approx(statistics.stdev([0.8, 1.1]))
    assert a.loc[("A", "classification"), "intercept_mean"] == pytest.approx((-0.1 + 0.0) / 2)
    assert a.loc[("A", "classification"), "n_runs"] == 3
    # survival: Cox slope, no intercept, one task (no SD)
    assert a.loc[("A", "survival"), "slope_mean"] == pytest.approx(1.3)
    assert math.isnan(a.loc[("A", "survival"), "slope_sd"])
    assert math.isnan(a.loc[("A", "survival"), "intercept_mean"])
    # C classification: clf_b slope is NaN -> one task
    assert a.loc[("C", "classification"), "n_tasks"] == 1
    assert list(table["agent"]).index("baseline") == len(table) - 1
    assert ("A", "sequential") not in a.index


def test_missing_columns_and_duplicates_are_structured_errors(data):
    runs, measures = data
    with pytest.raises(ScoreStoreError) as err:
        cm.agent_measure_table(measures.drop(columns="ici"), runs, ["ici"])
    assert err.value.code == "store.missing_column" and "ici" in str(err.value)
    with pytest.raises(ScoreStoreError) as err:
        cm.agent_measure_table(pd.concat([measures, measures.iloc[:1]]), runs, ["ece_10"])
    assert err.value.code == "store.duplicate_rows"
    with pytest.raises(ValueError, match="unknown measure"):
        cm.agent_measure_table(measures, runs, ["brier"])


def test_smoothed_curves_pool_valid_runs(data):
    runs, _ = data
    keys = zip(runs["agent"], runs["task"], runs["rep"], strict=True)
    ids = dict(zip(keys, runs["run_id"], strict=True))
    rows = []
    for (agent, rep), obs in {("A", 0): 0.1, ("A", 1): 0.3, ("A", 2): 0.9, ("B", 0): 0.2}.items():
        for x, scale in ((0.1, 1.0), (0.5, 2.0)):
            rows.append(
                {
                    "run_id": ids[(agent, "clf_a", rep)],
                    "kind": "binary",
                    "horizon": NAN,
                    "x": x,
                    "observed": obs * scale,
                    "se": 0.01,
                    "lo": obs * scale - 0.02,
                    "hi": obs * scale + 0.02,
                }
            )
    rows.append({**rows[-1], "x": 0.9, "observed": NAN, "lo": NAN, "hi": NAN})
    curves = cm.smoothed_curves(pd.DataFrame(rows), runs)
    assert curves.columns.tolist() == catalog.table("smoothed_calibration_curves").named
    a = curves.loc[(curves["agent"] == "A") & (curves["x"] == 0.5)].iloc[0]
    assert a["observed_mean"] == pytest.approx(0.4)  # (0.2 + 0.6) / 2; rep 2 is invalid
    assert a["observed_sd"] == pytest.approx(statistics.stdev([0.2, 0.6]))
    assert a["lo_mean"] == pytest.approx(0.38) and a["n_runs"] == 2
    assert 0.9 not in set(curves["x"])


def test_decision_curves_from_stored_net_benefit(data):
    runs, measures = data
    nb = {"net_benefit_p05": 0.1, "net_benefit_p20": 0.05}
    measures = measures.assign(prevalence=0.25, **nb)
    measures.loc[measures["ece_10"] == 0.04, "net_benefit_p05"] = 0.2  # A rep 1 on clf_a
    curves = cm.decision_curves(measures, runs, [0.05, 0.2])
    assert curves.columns.tolist() == catalog.table("decision_curves").named
    assert set(curves["task"]) == {"clf_a", "clf_b"}  # classification only by default
    row = curves.loc[
        (curves["task"] == "clf_a") & (curves["agent"] == "A") & (curves["threshold"] == 0.05)
    ].iloc[0]
    assert row["net_benefit_mean"] == pytest.approx(0.15) and row["n_runs"] == 2
    assert row["treat_all"] == pytest.approx(0.25 - 0.75 * 0.05 / 0.95)
    assert row["treat_none"] == 0.0
    with pytest.raises(ValueError, match="not stored"):
        cm.decision_curves(measures, runs, [0.33])


def test_run_criteria_long_format(data):
    runs, measures = data
    crit = cm.run_criteria(measures, runs, ["slope"])
    assert set(crit["measure"]) == {"slope"}
    # 12 valid runs, one NaN slope (C clf_b) -> 11 rows
    assert len(crit) == 11
    assert np.allclose(
        crit.set_index("run_id").loc[sb.run_id(sb.run("B", "clf_a", 0)), "value"], 0.2
    )


def test_values_equal_at_three_decimals_are_ties_not_flips():
    # 0.0514 and 0.0506 both show as 0.051 under ece_10: a tie there, so the reversed order under
    # ICI is no flip; under ICI they differ at 3 decimals (0.020 vs 0.030)
    from automd_analysis.analysis import calibration_measures as cm

    table = pd.DataFrame(
        {"measure": ["ece_10"] * 2 + ["ici"] * 2, "agent": ["A", "B"] * 2,
         "value": [0.0514, 0.0506, 0.030, 0.020], "n_tasks": 1, "n_runs": 1, "n_undefined": 0,
         "rank": [1.5, 1.5, 2.0, 1.0]}
    )  # fmt: skip
    assert cm.rank_flips(table).empty
    agreement = cm.ranking_agreement(table).set_index("measure")
    assert agreement.loc["ici", "n_flipped"] == 0
    assert pd.isna(agreement.loc["ece_10", "best_agent"])  # tied for best
    assert agreement.loc["ici", "best_agent"] == "B"
    assert cm._ranks(pd.Series([0.0514, 0.0506, 0.07])).tolist() == [1.5, 1.5, 3.0]
    # a difference visible at 3 decimals still flips
    table.loc[0, "value"] = 0.0494  # shows as 0.049: A better under ece_10, B under ICI
    assert len(cm.rank_flips(table)) == 1
