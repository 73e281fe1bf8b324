"""Paper Table 3, Table 13, Figure 2a/2b, Table 20 and reliability data on hand-built stores."""

from __future__ import annotations

import math
import statistics

import pandas as pd
import pytest
import storebuilder as sb
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.analysis import calibration_practices as cal
from automd_analysis.analysis import catalog
from automd_analysis.analysis.calibration_measures import smoothed_curves
from automd_analysis.analysis.store import selected_runs
from automd_analysis.errors import ScoreStoreError

AR = {
    "averaged_ranks_as_probabilities": "yes",
    "class_imbalance_handling": "class_weight",  # also imbalance: averaged ranks take precedence
    "recalibration_after_imbalance": "no",
    "probability_calibration": "no",
}
IMB = {
    "averaged_ranks_as_probabilities": "no",
    "class_imbalance_handling": "smote",
    "recalibration_after_imbalance": "no",
    "probability_calibration": "no",
}
REC = dict(IMB, recalibration_after_imbalance="yes", probability_calibration="yes")
PLAIN = {
    "averaged_ranks_as_probabilities": "uncertain",
    "class_imbalance_handling": "none",
    "recalibration_after_imbalance": "na",
    "probability_calibration": "no",
}
SURV = dict(PLAIN, class_imbalance_handling="na", averaged_ranks_as_probabilities="no")


def _baseline(ece_by_task):
    return [
        sb.run("baseline", task, rep, ece=ece * (1 + 0.1 * (rep - 2)))
        for task, ece in ece_by_task.items()
        for rep in range(5)
    ]


def test_table3_averages_within_task_first_then_tasks():
    runs = [
        sb.run("A", "clf_a", 0, ece=0.10),
        sb.run("A", "clf_a", 1, ece=0.20),
        sb.run("A", "clf_a", 2, ece=0.30),
        sb.run("A", "clf_b", 0, ece=0.60),
        sb.run("A", "clf_b", 1, valid=False),
        sb.run("A", "surv_a", 0, ece=0.05),
        sb.run("A", "seq_a", 0, ece=0.01),
    ] + _baseline({"clf_a": 0.03, "clf_b": 0.02, "surv_a": 0.04, "seq_a": 0.01})
    table = cal.table3(sb.build_store(runs))
    assert table.columns.tolist() == catalog.table("table3_ece").named
    a = table.set_index("agent").loc["A"]
    assert a["classification"] == pytest.approx((0.2 + 0.6) / 2)  # pooled runs would give 0.3
    assert a["survival"] == pytest.approx(0.05)
    assert a["sequential"] == pytest.approx(0.01)
    assert a["all"] == pytest.approx((0.2 + 0.6 + 0.05 + 0.01) / 4)
    base = table.set_index("agent").loc["baseline"]
    assert base["classification"] == pytest.approx((0.03 + 0.02) / 2)
    assert list(table["agent"]) == ["A", "baseline"]


def test_table3_class_without_valid_runs_is_nan():
    table = cal.table3(sb.build_store([sb.run("A", "clf_a", 0, ece=0.1)]))
    assert math.isnan(table.loc[0, "survival"]) and math.isnan(table.loc[0, "sequential"])


def test_table13_counts_valid_runs_for_daggers():
    runs = [sb.run("A", "clf_a", k, ece=e) for k, e in enumerate([0.1, 0.2])]
    runs += [sb.run("A", "clf_a", 2, valid=False), sb.run("A", "clf_b", 0, ece=0.3)]
    table = cal.table13(sb.build_store(runs)).set_index(["task", "agent"])
    assert table.reset_index().columns.tolist() == catalog.table("table13_task_ece").named
    assert table.loc[("clf_a", "A"), "n_valid"] == 2
    assert table.loc[("clf_a", "A"), "sd"] == pytest.approx(statistics.stdev([0.1, 0.2]))
    assert table.loc[("clf_b", "A"), "n_valid"] == 1


def _decomposition_runs():
    # baseline ECE: clf_a 0.02, seq_a 0.01, surv_a 0.04 (means over 5 reps)
    return [
        sb.run("A", "clf_a", 0, ece=0.32, annotations=AR),  # d = 0.30
        sb.run("A", "clf_a", 1, ece=0.12, annotations=IMB),  # d = 0.10
        sb.run("A", "seq_a", 0, ece=0.03, annotations=REC),  # d = 0.02
        sb.run("B", "surv_a", 0, ece=0.02, annotations=SURV),  # d = -0.02 (kept)
        sb.run("B", "clf_a", 0, ece=0.04, annotations=PLAIN),  # d = 0.02
        sb.run("B", "clf_a", 1, valid=False, annotations=AR),  # invalid: not in V
    ] + _baseline({"clf_a": 0.02, "seq_a": 0.01, "surv_a": 0.04})


def test_ece_decomposition_hand_computed_with_negative_difference():
    table = cal.ece_decomposition(sb.build_store(_decomposition_runs()))
    assert table.columns.tolist() == catalog.table("fig2a_ece_decomposition").named
    rows = table.set_index("group")
    total = 0.30 + 0.10 + 0.02 - 0.02 + 0.02
    assert list(table["group"]) == ["averaged_ranks", "imbalance_without_recalibration", "other"]
    assert rows.loc["averaged_ranks", "n_runs"] == 1
    assert rows.loc["averaged_ranks", "share_of_runs"] == pytest.approx(1 / 5)
    assert rows.loc["averaged_ranks", "share_of_difference"] == pytest.approx(0.30 / total)
    assert rows.loc["imbalance_without_recalibration", "share_of_difference"] == pytest.approx(
        0.10 / total
    )
    assert rows.loc["other", "share_of_difference"] == pytest.approx((0.02 - 0.02 + 0.02) / total)
    assert rows.loc["other", "mean_ece"] == pytest.approx((0.03 + 0.02 + 0.04) / 3)
    assert table["share_of_runs"].sum() == pytest.approx(1.0)
    assert table["share_of_difference"].sum() == pytest.approx(1.0)


def test_negative_total_difference_keeps_signs():
    runs = [
        sb.run("A", "clf_a", 0, ece=0.01, annotations=PLAIN),  # d = -0.04
        sb.run("A", "clf_a", 1, ece=0.07, annotations=AR),  # d = +0.02
    ] + _baseline({"clf_a": 0.05})
    rows = cal.ece_decomposition(sb.build_store(runs)).set_index("group")
    assert rows.loc["averaged_ranks", "share_of_difference"] == pytest.approx(0.02 / -0.02)
    assert rows.loc["other", "share_of_difference"] == pytest.approx(-0.04 / -0.02)
    assert rows.loc["imbalance_without_recalibration", "n_runs"] == 0
    assert math.isnan(rows.loc["imbalance_without_recalibration", "mean_ece"])


def test_ece_decomposition_without_baseline_raises_a_clear_error():
    runs = [sb.run("A", "clf_a", 0, ece=0.1, annotations=PLAIN)]
    with pytest.raises(ScoreStoreError) as info:
        cal.ece_decomposition(sb.build_store(runs))
    assert info.value.code == "store.no_baseline"
    assert "automd baselines" in info.value.fix
    runs += [sb.run("A", "clf_b", 0, ece=0.1)] + _baseline({"clf_a": 0.02})
    with pytest.raises(ScoreStoreError) as info:
        cal.ece_decomposition(sb.build_store(runs))
    assert info.value.details == {"tasks": ["clf_b"]}
    restricted = cal.ece_decomposition(sb.build_store(runs), tasks=["clf_a"])
    assert restricted["n_runs"].sum() == 1


def test_unannotated_runs_form_their_own_group():
    runs = [sb.run("A", "clf_a", 0, ece=0.1)] + _baseline({"clf_a": 0.02})
    table = cal.ece_decomposition(sb.build_store(runs))
    assert table.iloc[-1]["group"] == "unannotated"
    assert table.iloc[-1]["n_runs"] == 1


def test_practice_groups_precedence_and_uncertain():
    groups = cal.practice_groups(sb.build_store(_decomposition_runs())).set_index("run_id")
    assert groups.loc["main/A/clf_a/rep0", "group"] == "averaged_ranks"  # despite imbalance
    assert groups.loc["main/B/clf_a/rep0", "group"] == "other"  # "uncertain" is not "yes"
    assert "main/B/clf_a/rep1" not in groups.index  # invalid
    assert not groups.index.str.contains("baseline").any()


def test_recalibration_effect_selects_binary_imbalance_runs_without_ranks():
    runs = _decomposition_runs() + [
        sb.run("B", "surv_a", 1, ece=0.2, annotations=dict(IMB)),  # survival: excluded
    ]
    effect = cal.recalibration_effect(sb.build_store(runs))
    assert list(effect["run_id"]) == ["main/A/clf_a/rep1", "main/A/seq_a/rep0"]
    assert list(effect["recalibrated"]) == [False, True]
    summary = cal.recalibration_summary(sb.build_store(runs)).set_index("recalibrated")
    assert summary.loc[False, "mean"] == pytest.approx(0.12)
    assert summary.loc[True, "mean"] == pytest.approx(0.03)
    assert summary.loc[True, "n_runs"] == 1


def test_table20_eligibility_per_practice():
    runs = [
        sb.run(
            "A",
            "clf_a",
            0,
            annotations={**AR, "subgroup_checks": "yes", "missingness_features": "yes"},
        ),
        sb.run(
            "A",
            "clf_a",
            1,
            annotations={**REC, "subgroup_checks": "no", "missingness_features": "no"},
        ),
        sb.run(
            "A",
            "seq_a",
            0,
            annotations={**PLAIN, "subgroup_checks": "no", "missingness_features": "na"},
        ),
        sb.run("A", "surv_a", 0, annotations={**SURV, "censoring_handling": "censored_as_death"}),
        sb.run("A", "surv_a", 1, annotations={**SURV, "censoring_handling": "correct"}),
        sb.run("A", "surv_a_ext", 0, annotations={**SURV, "validation_under_shift": "yes"}),
        sb.run("A", "surv_b_later", 0, annotations={**SURV, "validation_under_shift": "yes"}),
        sb.run("A", "clf_b", 0, valid=False, annotations=AR),
    ]
    table = cal.table20(sb.build_store(runs)).set_index(["practice", "agent"])
    get = lambda p: table.loc[(p, "A")]  # noqa: E731
    assert get("averaged_ranks_as_probabilities")[["n_eligible", "n_positive"]].tolist() == [7, 1]
    assert get("class_imbalance_handling")[["n_eligible", "n_positive"]].tolist() == [3, 2]
    assert get("recalibration_after_imbalance")[["n_eligible", "n_positive"]].tolist() == [2, 1]
    assert get("censoring_error")[["n_eligible", "n_positive"]].tolist() == [2, 1]
    assert get("censoring_error")["n_missing"] == 2  # two survival runs lack the answer
    assert get("missingness_features")[["n_eligible", "n_positive"]].tolist() == [2, 1]
    assert get("subgroup_checks")[["n_eligible", "n_positive", "n_missing"]].tolist() == [3, 1, 4]
    # the period shift (surv_b_later) is not a cohort/hospital shift
    assert get("validation_under_shift")[["n_eligible", "n_positive"]].tolist() == [1, 1]
    assert get("probability_calibration")["percent"] == pytest.approx(100 / 7)
    with_tasks = cal.table20(sb.build_store(runs), ehr_tasks=["clf_a", "seq_a"])
    row = with_tasks.set_index(["practice", "agent"]).loc[("missingness_features", "A")]
    assert row[["n_eligible", "n_positive", "n_missing"]].tolist() == [2, 1, 1]  # "na": no answer
    wide = cal.table20_wide(table.reset_index())
    assert list(wide.columns) == ["practice", "A"]
    assert list(wide["practice"]) == [p.name for p in cal.PRACTICES]


def test_reliability_bins_average_the_runs_bins_as_the_curves_average_the_runs_curves():
    bins = [
        sb.calibration_bin("A", "clf_a", 0, 0, 10, 0.05, 0.0),
        sb.calibration_bin("A", "clf_a", 1, 0, 30, 0.09, 0.2),
        sb.calibration_bin("A", "clf_a", 0, 1, 0, math.nan, math.nan),
        sb.calibration_bin("A", "clf_a", 1, 1, 0, math.nan, math.nan),
        sb.calibration_bin("A", "clf_a", 2, 0, 99, 0.5, 0.5),  # invalid run: ignored
        sb.calibration_bin(
            "A", "surv_a", 0, 0, 3, 0.9, 0.8, kind="survival", quantile=0.5, time=10.0, kept=False
        ),
        sb.calibration_bin(
            "A", "surv_a", 0, 1, 20, 0.7, 0.6, kind="survival", quantile=0.5, time=10.0
        ),
    ]
    runs = [
        sb.run("A", "clf_a", 0),
        sb.run("A", "clf_a", 1),
        sb.run("A", "clf_a", 2, valid=False),
        sb.run("A", "surv_a", 0),
    ]
    store = sb.build_store(runs, calibration_bins=bins)
    clf = cal.reliability_bins(store, "clf_a")
    first = clf.iloc[0]
    assert first["n"] == 40 and first["n_runs"] == 2
    # each run's bin counts once, whatever its size (pooling would give 0.08 and 0.15)
    assert first["mean_pred"] == pytest.approx((0.05 + 0.09) / 2)
    assert first["observed"] == pytest.approx((0.0 + 0.2) / 2)
    assert clf.iloc[1]["n"] == 0 and clf.iloc[1]["n_runs"] == 0
    assert math.isnan(clf.iloc[1]["observed"]) and math.isnan(clf.iloc[1]["mean_pred"])
    surv = cal.reliability_bins(store, "surv_a")
    assert list(surv["bin"]) == [1]  # the group of 3 patients was not kept
    assert surv.iloc[0]["time"] == 10.0
    assert cal.reliability_bins(store, "seq_a").empty


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["clf_a", "clf_b", "seq_a"]),
            st.floats(0, 1).map(lambda x: round(x, 4)),
            st.sampled_from([AR, IMB, REC, PLAIN]),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_decomposition_shares_add_up(spec):
    runs = [sb.run("A", t, k, ece=e, annotations=a) for k, (t, e, a) in enumerate(spec)]
    runs += _baseline({"clf_a": 0.03, "clf_b": 0.05, "seq_a": 0.02})
    reference = {"clf_a": 0.03, "clf_b": 0.05, "seq_a": 0.02}
    table = cal.ece_decomposition(sb.build_store(runs))
    assert table["n_runs"].sum() == len(spec)
    assert table["share_of_runs"].sum() == pytest.approx(1.0)
    total = sum(e - reference[t] for t, e, _ in spec)
    if abs(total) > 1e-6:  # shares of a near-zero total amplify rounding
        assert table["share_of_difference"].sum() == pytest.approx(1.0, rel=1e-6)
        by_group = dict(zip(table["group"], table["share_of_difference"] * total, strict=True))
        ranks = sum(e - reference[t] for t, e, a in spec if a is AR)
        assert by_group["averaged_ranks"] == pytest.approx(ranks, abs=1e-9)


def test_reliability_table_covers_every_task_with_bins():
    bins = [sb.calibration_bin("A", task, 0, 0, 10, 0.05, 0.1) for task in ("clf_a", "seq_a")]
    store = sb.build_store(
        [sb.run("A", "clf_a", 0), sb.run("A", "seq_a", 0)], calibration_bins=bins
    )
    table = cal.reliability_table(store)
    assert list(table["task"]) == ["clf_a", "seq_a"]
    assert list(table.columns) == catalog.table("reliability_bins").named
    assert cal.reliability_table(sb.build_store([sb.run("A", "clf_a", 0)])).empty


def test_the_bins_on_a_curve_are_averaged_over_the_runs_as_the_curve_is():
    """Each run's bin sits on its own curve (the run's observed rate at the bin's mean
    prediction); runs hold very different numbers of predictions in a bin. The averaged bins then
    sit on the averaged curve; count-weighted pooling of the bins would not."""
    per_run = {0: ((10, 0.0), (30, 0.3)), 1: ((40, 0.2), (5, 0.1))}  # rep -> ((n, observed), ...)
    bins, curve_rows = [], []
    for rep, cells in per_run.items():
        for b, (n, observed) in enumerate(cells):
            x = b / 10 + 0.05
            bins.append(sb.calibration_bin("A", "clf_a", rep, b, n, x, observed))
            curve_rows.append({"run_id": f"main/A/clf_a/rep{rep}", "kind": "binary",
                               "horizon": math.nan, "x": x, "observed": observed, "se": 0.05,
                               "lo": observed - 0.1, "hi": observed + 0.1})  # fmt: skip
    store = sb.build_store(
        [sb.run("A", "clf_a", 0), sb.run("A", "clf_a", 1)], calibration_bins=bins
    )
    runs = selected_runs(store, "main")
    curve = smoothed_curves(pd.DataFrame(curve_rows), runs).set_index("x")["observed_mean"]
    shown = cal.reliability_bins(store, "clf_a")
    for _, row in shown.loc[shown["n"] > 0].iterrows():
        assert row["observed"] == pytest.approx(curve.loc[row["mean_pred"]])
    pooled_first = (10 * 0.0 + 40 * 0.2) / 50
    assert shown.iloc[0]["observed"] != pytest.approx(pooled_first)


def test_ece_decomposition_intervals_redraw_the_runs_of_each_agent_and_task():
    # One cell of two runs: d = 0.30 (averaged ranks) and d = 0.02 (other); one baseline run.
    runs = [
        sb.run("A", "clf_a", 0, ece=0.32, annotations=AR),
        sb.run("A", "clf_a", 1, ece=0.04, annotations=PLAIN),
        sb.run("baseline", "clf_a", 0, ece=0.02),
    ]
    table = cal.ece_decomposition(sb.build_store(runs)).set_index("group")
    assert table.columns.tolist()[4:] == [
        "share_of_runs_ci_low",
        "share_of_runs_ci_high",
        "share_of_difference_ci_low",
        "share_of_difference_ci_high",
        "mean_ece_ci_low",
        "mean_ece_ci_high",
    ]
    ranks = table.loc["averaged_ranks"]
    # draws: both runs averaged ranks (p = 1/4, shares 1), one each (1/2), both other (1/4, 0)
    assert (ranks["share_of_runs_ci_low"], ranks["share_of_runs_ci_high"]) == (0.0, 1.0)
    assert (ranks["share_of_difference_ci_low"], ranks["share_of_difference_ci_high"]) == (0, 1)
    # the group's mean ECE is 0.32 whenever it has a drawn run (draws without one are skipped)
    assert (ranks["mean_ece_ci_low"], ranks["mean_ece_ci_high"]) == pytest.approx((0.32, 0.32))


def test_ece_decomposition_intervals_contain_their_estimates_and_are_seeded():
    store = sb.build_store(_decomposition_runs())
    table = cal.ece_decomposition(store, n_boot=400, seed=1)
    for column in ("share_of_runs", "share_of_difference", "mean_ece"):
        finite = table[column].notna()
        low, high = table[f"{column}_ci_low"], table[f"{column}_ci_high"]
        assert ((low <= table[column]) & (table[column] <= high))[finite].all(), column
    assert table.equals(cal.ece_decomposition(store, n_boot=400, seed=1))
    assert not table.equals(cal.ece_decomposition(store, n_boot=400, seed=2))
    # the point values do not depend on the draws
    assert table["share_of_difference"].equals(cal.ece_decomposition(store)["share_of_difference"])


def test_recalibration_summary_interval_of_each_mean():
    runs = [
        sb.run("A", "clf_a", 0, ece=0.10, annotations=IMB),
        sb.run("A", "clf_a", 1, ece=0.20, annotations=IMB),
        sb.run("A", "clf_a", 2, ece=0.03, annotations=REC),
    ]
    summary = cal.recalibration_summary(sb.build_store(runs)).set_index("recalibrated")
    assert (
        summary.reset_index().columns.tolist() == catalog.table("fig2b_recalibration_summary").named
    )
    # without recalibration: three slots drawn from {0.10, 0.20, REC}; the mean over the drawn
    # imbalance runs ranges from 0.10 to 0.20 (draws without one are skipped)
    low, high = summary.loc[False, ["mean_ci_low", "mean_ci_high"]]
    assert (low, high) == pytest.approx((0.10, 0.20))
    assert summary.loc[True, ["mean_ci_low", "mean_ci_high"]].tolist() == pytest.approx([0.03] * 2)
