"""Paper Table 14, full subgroup results and subgroup checks (App. F) on hand-built stores."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest
import storebuilder as sb

from automd_analysis.analysis import subgroups as sg

T1, T2, T3 = "age T1 [18, 50)", "age T2 [50, 70)", "age T3 [70, 99]"


def _age(agent, task, rep, scores, eligible=(True, True, True)):
    return [
        sb.subgroup(agent, task, rep, "age", group, score, eligible=ok)
        for group, score, ok in zip((T1, T2, T3), scores, eligible, strict=True)
    ]


def _store():
    runs = [sb.run("A", "clf_a", k) for k in range(3)] + [sb.run("A", "clf_a", 3, valid=False)]
    runs += [sb.run("A", "clf_b", 0), sb.run("B", "clf_a", 0), sb.run("A", "seq_a", 0)]
    runs += [sb.run("baseline", "clf_a", k) for k in range(2)]
    subs = (
        _age("A", "clf_a", 0, (0.80, 0.75, 0.70))  # lowest T3, gap 0.10
        + _age("A", "clf_a", 1, (0.80, 0.65, 0.70))  # lowest T2, gap 0.15
        + _age("A", "clf_a", 2, (0.80, 0.75, 0.10), eligible=(True, True, False))  # T2, 0.05
        + _age("A", "clf_a", 3, (0.1, 0.2, 0.3))  # invalid run: ignored
        + _age("A", "clf_b", 0, (0.70, 0.70, 0.60))  # lowest T3 on another task
        + _age("B", "clf_a", 0, (0.90, 0.90, 0.90))  # all tied: gap 0, lowest = T1 (alphabetical)
        # baseline: rep0 lowest T2, rep1 lowest T3; averaged: T1 .8, T2 .72, T3 .71 -> T3
        + _age("baseline", "clf_a", 0, (0.80, 0.64, 0.72))
        + _age("baseline", "clf_a", 1, (0.80, 0.80, 0.70))
        + [
            sb.subgroup("A", "clf_a", 0, "sex", "female", 0.7),
            sb.subgroup("A", "clf_a", 0, "sex", "male", 0.6, eligible=False),  # one eligible
        ]
    )
    return sb.build_store(runs, subgroups=subs)


def test_group_label_strips_intervals():
    assert sg.group_label(T3) == "age T3"
    assert sg.group_label("female") == "female"
    assert sg.group_label("Other (n<50)") == "Other"
    assert sg.group_label("[1, 2)") == "[1, 2)"


def test_run_gaps_use_only_eligible_groups_and_valid_runs():
    gaps = sg.run_gaps(_store())
    a = gaps.loc[(gaps["agent"] == "A") & (gaps["task"] == "clf_a")].set_index("rep")
    assert list(a.index) == [0, 1, 2]
    assert a["gap"].tolist() == pytest.approx([0.10, 0.15, 0.05])
    assert a["lowest_group"].tolist() == [T3, T2, T2]
    assert a.loc[2, "n_groups"] == 2
    assert not ((gaps["attribute"] == "sex") & (gaps["agent"] == "A")).any()  # one eligible group
    assert "seq_a" not in set(gaps["task"])
    tied = gaps.loc[gaps["agent"] == "B"].iloc[0]
    assert (tied["gap"], tied["lowest_group"]) == (0.0, T1)


def test_table14_per_task_with_baseline_averaged_over_reps():
    table = sg.table14(_store()).set_index(["task_group", "attribute", "agent"])
    a = table.loc[("clf_a", "age", "A")]
    assert a["n_runs"] == 3
    assert a["gap_mean"] == pytest.approx(0.10)
    assert a["gap_sd"] == pytest.approx(statistics.stdev([0.10, 0.15, 0.05]))
    assert a["lowest_group"] == "age T2" and a["lowest_share"] == pytest.approx(2 / 3)
    # baseline lowest from averaged scores is T3 (neither rep alone decides it)
    assert a["same_lowest_share"] == pytest.approx(1 / 3)
    assert a["n_compared"] == 3
    base = table.loc[("clf_a", "age", "baseline")]
    assert base["gap_mean"] == pytest.approx(0.80 - 0.71)
    assert base["lowest_group"] == "age T3"
    assert math.isnan(base["same_lowest_share"])
    other_task = table.loc[("clf_b", "age", "A")]
    assert math.isnan(other_task["same_lowest_share"]) and other_task["n_compared"] == 0


def test_table14_task_groups_and_pooled_agents():
    table = sg.table14(_store(), task_groups={"clf_a": "ICU", "clf_b": "ICU"}, by_agent=False)
    pooled = table.set_index(["task_group", "attribute", "agent"]).loc[
        ("ICU", "age", sg.ALL_AGENTS)
    ]
    assert pooled["n_runs"] == 5  # A: 3 on clf_a + 1 on clf_b; B: 1
    assert pooled["gap_mean"] == pytest.approx(statistics.mean([0.10, 0.15, 0.05, 0.10, 0.0]))
    assert pooled["lowest_group"] == "age T2"  # T2 twice, T3 twice: alphabetical tie-break
    assert pooled["n_compared"] == 4  # clf_b has no baseline


def test_subgroup_table_lists_every_group():
    table = sg.subgroup_table(_store()).set_index(["task", "attribute", "group", "agent"])
    row = table.loc[("clf_a", "age", T3, "A")]
    assert (row["n_runs"], row["n_eligible"]) == (3, 2)
    assert row["mean"] == pytest.approx(0.70)
    male = table.loc[("clf_a", "sex", "male", "A")]
    assert male["n_eligible"] == 0 and math.isnan(male["mean"])


def test_subgroup_checks_counts_annotations():
    runs = [
        sb.run("A", "clf_a", 0, annotations={"subgroup_checks": "yes"}),
        sb.run("A", "clf_a", 1, annotations={"subgroup_checks": "no"}),
        sb.run("A", "clf_a", 2, valid=False, annotations={"subgroup_checks": "yes"}),
        sb.run("B", "clf_a", 0),
        sb.run("baseline", "clf_a", 0),
    ]
    table = sg.subgroup_checks(sb.build_store(runs)).set_index("agent")
    assert table.loc["A"].tolist() == [2, 2, 1, 50.0]
    assert table.loc["B", "n_answered"] == 0 and math.isnan(table.loc["B", "percent"])
    assert table.loc[sg.ALL_AGENTS, "n_valid"] == 3
    assert "baseline" not in table.index


def test_store_without_subgroups_gives_empty_tables():
    store = sb.build_store([sb.run("A", "seq_a", 0)])
    assert sg.table14(store).empty
    assert sg.subgroup_table(store).empty
    assert sg.run_gaps(store).empty


def _replicated_store():
    """One run of A and two baseline repetitions on clf_a (groups T1, T2), with three test
    resamples each."""
    from automd_analysis.analysis.store import ScoreStore

    runs = [sb.run("A", "clf_a", 0)] + [sb.run("baseline", "clf_a", k) for k in range(2)]
    subs = [
        sb.subgroup("A", "clf_a", 0, "age", T1, 0.80),
        sb.subgroup("A", "clf_a", 0, "age", T2, 0.70),  # gap 0.10
        *[sb.subgroup("baseline", "clf_a", k, "age", T1, 0.80) for k in range(2)],
        *[sb.subgroup("baseline", "clf_a", k, "age", T2, 0.60) for k in range(2)],  # gap 0.20
    ]
    reps = [
        ("main/A/clf_a/rep0", T1, [0.80, 0.80, 0.90]),
        ("main/A/clf_a/rep0", T2, [0.60, 0.75, 0.75]),  # gaps 0.20, 0.05, 0.15
        *[(f"main/baseline/clf_a/rep{k}", T1, [0.8, 0.8, 0.8]) for k in range(2)],
        *[(f"main/baseline/clf_a/rep{k}", T2, [0.7, 0.6, 0.5]) for k in range(2)],  # .1 .2 .3
    ]
    table = pd.DataFrame(
        [(run_id, "age", group, values) for run_id, group, values in reps],
        columns=["run_id", "attribute", "group", "replicates"],
    )
    return ScoreStore.from_frames(**sb.frames(runs, subgroups=subs), subgroup_replicates=table)


def test_table14_gap_intervals_from_the_subgroup_replicates():
    table = sg.table14(_replicated_store()).set_index("agent")
    a = table.loc["A"]
    assert a["gap_mean"] == pytest.approx(0.10)
    # one run: its gaps on the three resamples, 0.05 / 0.15 / 0.20 -> quantiles 2.5 % and 97.5 %
    assert (a["gap_mean_ci_low"], a["gap_mean_ci_high"]) == pytest.approx(
        tuple(np.quantile([0.05, 0.15, 0.20], [0.025, 0.975]))
    )
    # the baseline: its repetitions agree, so each resample's averaged scores give 0.1, 0.2, 0.3
    base = table.loc["baseline"]
    assert base["gap_mean"] == pytest.approx(0.20)
    assert (base["gap_mean_ci_low"], base["gap_mean_ci_high"]) == pytest.approx(
        tuple(np.quantile([0.1, 0.2, 0.3], [0.025, 0.975]))
    )


def test_table14_without_subgroup_replicates_has_empty_intervals():
    table = sg.table14(_store())
    assert table[["gap_mean_ci_low", "gap_mean_ci_high"]].isna().all().all()
    assert table.columns.tolist()[-2:] == ["gap_mean_ci_low", "gap_mean_ci_high"]


def test_table14_gap_intervals_redraw_the_runs_of_each_cell():
    from automd_analysis.analysis.store import ScoreStore

    runs = [sb.run("A", "clf_a", k) for k in range(2)]
    subs = [
        sb.subgroup("A", "clf_a", 0, "age", T1, 0.80),
        sb.subgroup("A", "clf_a", 0, "age", T2, 0.70),  # gap 0.10
        sb.subgroup("A", "clf_a", 1, "age", T1, 0.80),
        sb.subgroup("A", "clf_a", 1, "age", T2, 0.50),  # gap 0.30
    ]
    # every resample reproduces the observed scores: only the redrawn runs vary
    table = pd.DataFrame(
        [(f"main/A/clf_a/rep{r['rep']}", "age", r["group"], [r["score_raw"]] * 400) for r in subs],
        columns=["run_id", "attribute", "group", "replicates"],
    )
    store = ScoreStore.from_frames(**sb.frames(runs, subgroups=subs), subgroup_replicates=table)
    a = sg.table14(store).set_index("agent").loc["A"]
    assert a["gap_mean"] == pytest.approx(0.20)
    # a plain redraw of the two runs gives means 0.10, 0.20, 0.30; the resampler widens the
    # residuals of two runs (t with one degree of freedom), within the gap's range [0, 1]
    assert 0.0 <= a["gap_mean_ci_low"] < 0.10 and 0.30 < a["gap_mean_ci_high"] <= 1.0
    with pytest.raises(ValueError, match="alpha"):
        sg.table14(store, alpha=0)
