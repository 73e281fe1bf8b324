"""Paper Table 2, Table 12 and the invalid-submission breakdown on hand-built score stores."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest
import storebuilder as sb
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata

from automd_analysis.analysis import catalog, primary
from automd_analysis.analysis.store import load_store, skipped_runs
from automd_analysis.errors import ScoreStoreError
from automd_analysis.precision import comparable

NAN = math.nan


def _example_runs():
    """Agent A: one invalid surv_a run; B: all valid; baseline: five reps.

    Per-rep penalised means of A: (0.6+0.2)/2, (0.7+0)/2, (0.8+0.4)/2 = 0.4, 0.35, 0.6.
    """
    runs = []
    for rep, (clf, surv) in enumerate([(0.6, 0.2), (0.7, None), (0.8, 0.4)]):
        runs.append(sb.run("A", "clf_a", rep, score=clf))
        runs.append(sb.run("A", "surv_a", rep, score=surv or 0.0, valid=surv is not None))
        runs.append(sb.run("B", "clf_a", rep, score=0.7))
        runs.append(sb.run("B", "surv_a", rep, score=0.3))
    for rep in range(5):
        runs.append(sb.run("baseline", "clf_a", rep, score=0.6 + 0.01 * rep))
        runs.append(sb.run("baseline", "surv_a", rep, score=0.25))
    return runs


@pytest.fixture
def example():
    return sb.build_store(_example_runs())


def test_table2_columns_and_order(example):
    table = primary.table2(example)
    assert table.columns.tolist() == catalog.table("table2_primary_scores").named
    assert list(table["agent"]) == ["A", "B", "baseline"]


def test_table2_penalised_counts_invalid_as_zero(example):
    row = primary.table2(example).set_index("agent").loc["A"]
    assert row["penalized_mean"] == pytest.approx(statistics.mean([0.4, 0.35, 0.6]), abs=1e-15)
    assert row["penalized_sd"] == pytest.approx(statistics.stdev([0.4, 0.35, 0.6]), abs=1e-15)


def test_table2_nonpenalised_averages_valid_runs_within_task_then_tasks(example):
    row = primary.table2(example).set_index("agent").loc["A"]
    # clf_a: mean(0.6, 0.7, 0.8) = 0.7; surv_a: mean(0.2, 0.4) = 0.3 -> (0.7 + 0.3) / 2
    assert row["nonpenalized_mean"] == pytest.approx(0.5, abs=1e-15)


def test_table2_nonpenalised_sd_only_when_all_runs_valid(example):
    table = primary.table2(example).set_index("agent")
    assert math.isnan(table.loc["A", "nonpenalized_sd"])
    assert table.loc["B", "nonpenalized_sd"] == pytest.approx(0.0, abs=1e-15)
    # all valid: the non-penalised SD is the SD over reps of the per-rep task averages
    assert table.loc["B", "nonpenalized_sd"] == pytest.approx(table.loc["B", "penalized_sd"])


def test_table2_valid_rate(example):
    row = primary.table2(example).set_index("agent").loc["A"]
    assert row["valid_rate_mean"] == pytest.approx(statistics.mean([1, 0.5, 1]))
    assert row["valid_rate_sd"] == pytest.approx(statistics.stdev([1, 0.5, 1]))


def test_table2_baseline_averages_five_reps_and_is_never_ranked(example):
    row = primary.table2(example).set_index("agent").loc["baseline"]
    per_rep = [(0.6 + 0.01 * k + 0.25) / 2 for k in range(5)]
    assert row["penalized_mean"] == pytest.approx(statistics.mean(per_rep), abs=1e-15)
    assert row["penalized_sd"] == pytest.approx(statistics.stdev(per_rep), abs=1e-15)
    for column in ("rank_penalized_mean", "rank_penalized_sd", "rank_nonpenalized_mean"):
        assert math.isnan(row[column])


def test_ranks_ties_are_averaged_including_floating_point_ties(example):
    ranks = primary.rank_table(example).set_index(["task", "agent"])
    # clf_a: A mean 0.7 (from 0.6, 0.7, 0.8), B 0.7 -> tie under both conventions
    assert ranks.loc[("clf_a", "A"), "rank_penalized"] == 1.5
    assert ranks.loc[("clf_a", "B"), "rank_penalized"] == 1.5
    # surv_a penalised: A (0.2 + 0 + 0.4) / 3 = 0.2 < B 0.3
    assert ranks.loc[("surv_a", "B"), "rank_penalized"] == 1.0
    assert ranks.loc[("surv_a", "A"), "rank_penalized"] == 2.0
    # surv_a non-penalised: A (0.2 + 0.4) / 2 = 0.30000000000000004 vs B 0.3: a tie
    assert (0.2 + 0.4) / 2 != 0.3
    assert ranks.loc[("surv_a", "A"), "rank_nonpenalized"] == 1.5
    assert math.isnan(ranks.loc[("surv_a", "baseline"), "rank_penalized"])
    table = primary.table2(example).set_index("agent")
    assert table.loc["A", "rank_penalized_mean"] == 1.75
    assert table.loc["A", "rank_penalized_sd"] == pytest.approx(statistics.stdev([1.5, 2.0]))
    assert table.loc["A", "rank_nonpenalized_sd"] == 0.0


def test_task_without_valid_runs_gives_nan_not_a_crash():
    runs = [sb.run("A", "clf_a", k, score=0.6) for k in range(3)]
    runs += [sb.run("A", "surv_a", k, valid=False) for k in range(3)]
    runs += [sb.run("B", t, k, score=0.5) for t in ("clf_a", "surv_a") for k in range(3)]
    store = sb.build_store(runs)
    t12 = primary.table12(store).set_index(["task", "agent"])
    assert t12.loc[("surv_a", "A"), "n_valid"] == 0
    assert math.isnan(t12.loc[("surv_a", "A"), "mean"])
    assert math.isnan(t12.loc[("surv_a", "A"), "sd"])
    t2 = primary.table2(store).set_index("agent")
    assert t2.loc["A", "penalized_mean"] == pytest.approx(0.3)
    assert t2.loc["A", "nonpenalized_mean"] == pytest.approx(0.6)  # tasks with valid runs
    ranks = primary.rank_table(store).set_index(["task", "agent"])
    assert ranks.loc[("surv_a", "A"), "rank_penalized"] == 2.0
    assert math.isnan(ranks.loc[("surv_a", "A"), "rank_nonpenalized"])
    assert ranks.loc[("surv_a", "B"), "rank_nonpenalized"] == 1.0


def test_scores_equal_at_three_decimals_share_a_rank():
    runs = [sb.run("A", "clf_a", 0, score=0.7004), sb.run("B", "clf_a", 0, score=0.6996)]
    runs += [sb.run("C", "clf_a", 0, score=0.6994)]  # shows as 0.699: below both
    ranks = primary.rank_table(sb.build_store(runs)).set_index("agent")["rank_penalized"]
    assert ranks.to_dict() == {"A": 1.5, "B": 1.5, "C": 3.0}


def test_agent_missing_from_a_task_is_ranked_where_present():
    runs = [sb.run("A", "clf_a", k, score=0.6) for k in range(3)]
    runs += [sb.run("B", t, k, score=0.5) for t in ("clf_a", "surv_a") for k in range(3)]
    store = sb.build_store(runs)
    t2 = primary.table2(store).set_index("agent")
    assert t2.loc["A", "penalized_mean"] == pytest.approx(0.6)
    assert t2.loc["A", "rank_penalized_mean"] == 1.0
    assert t2.loc["B", "rank_penalized_mean"] == 1.5  # rank 2 on clf_a, 1 on surv_a


def test_table12_per_task_statistics(example):
    table = primary.table12(example)
    assert table.columns.tolist() == catalog.table("table12_task_scores").named
    row = table.set_index(["task", "agent"]).loc[("surv_a", "A")]
    assert row["n_valid"] == 2
    assert row["mean"] == pytest.approx(0.3)
    assert row["sd"] == pytest.approx(statistics.stdev([0.2, 0.4]))
    base = table.set_index(["task", "agent"]).loc[("clf_a", "baseline")]
    assert base["n_valid"] == 5
    assert base["mean"] == pytest.approx(statistics.mean([0.6 + 0.01 * k for k in range(5)]))


def test_invalid_breakdown_uses_the_paper_categories():
    runs = [
        sb.run("S", "surv_a", 0, valid=False, reason_code="columns.grid_missing"),
        sb.run("S", "surv_a", 1, valid=False, reason_code="columns.extra"),
        sb.run("S", "seq_a", 0, valid=False, reason_code="rows.missing"),
        sb.run("S", "clf_a", 0, valid=False, reason_code="ids.missing"),
        sb.run("S", "clf_b", 0, valid=False, reason_code="ids.extra"),
        sb.run("S", "clf_b", 1, score=0.4),
        sb.run("A", "clf_b", 0, score=0.4),
    ]
    table = primary.invalid_breakdown(sb.build_store(runs), units={"clf_a": "encounters"})
    counts = table.groupby("category")["n_invalid"].sum().to_dict()
    assert counts == {
        "malformed survival columns": 2,
        "incorrect patient-hour rows": 1,
        "incorrect encounter identifiers": 1,
        "incorrect patient identifiers": 1,
    }
    assert set(table["agent"]) == {"S"}
    assert (table["n_runs"] == 6).all()
    assert table["share_of_invalid"].sum() == pytest.approx(1.0)
    assert list(table["n_invalid"]) == sorted(table["n_invalid"], reverse=True)


def test_invalid_breakdown_empty_when_all_valid(example):
    store = sb.build_store([sb.run("A", "clf_a", 0)])
    table = primary.invalid_breakdown(store)
    assert table.empty
    assert list(table.columns)[:3] == ["agent", "category", "reason_code"]


def test_tables_from_disk_equal_tables_in_memory(tmp_path, example):
    directory = sb.write_store(_example_runs(), tmp_path / "store")
    from_disk = load_store(directory)
    assert primary.table2(from_disk).equals(primary.table2(example))
    assert primary.table12(from_disk).equals(primary.table12(example))


# --------------------------------------------------------------------------------------------
# properties

_score = st.floats(0, 1, allow_nan=False).map(lambda x: round(x, 3))


@st.composite
def balanced_runs(draw):
    n_agents = draw(st.integers(2, 4))
    n_tasks = draw(st.integers(1, 3))
    tasks = ["clf_a", "clf_b", "surv_a"][:n_tasks]
    runs = []
    for a in range(n_agents):
        for task in tasks:
            for rep in range(3):
                valid = draw(st.booleans()) if draw(st.integers(0, 3)) == 0 else True
                runs.append(sb.run(f"agent{a}", task, rep, score=draw(_score), valid=valid))
    return runs


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(balanced_runs())
def test_ranks_equal_scipy_rankdata(runs):
    store = sb.build_store(runs)
    means = primary.task_means(store)
    ranks = primary.rank_table(store)
    for task, group in means.groupby("task"):
        shown = np.round(comparable(group["penalized"].to_numpy()), 3)  # as displayed
        expected = rankdata(-shown, method="average")
        got = ranks.loc[ranks["task"] == task, "rank_penalized"].to_numpy()
        np.testing.assert_array_equal(got, expected)
        k = len(group)
        assert got.sum() == k * (k + 1) / 2


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(balanced_runs())
def test_penalised_never_exceeds_nonpenalised(runs):
    table = primary.table2(sb.build_store(runs))
    for _, row in table.iterrows():
        if not math.isnan(row["nonpenalized_mean"]):
            assert row["penalized_mean"] <= row["nonpenalized_mean"] + 1e-12
        if row["valid_rate_mean"] < 1:
            assert math.isnan(row["nonpenalized_sd"])


@pytest.mark.slow
@settings(max_examples=8, deadline=None)
@given(balanced_runs(), st.randoms(use_true_random=False))
def test_row_order_does_not_change_the_tables(runs, random):
    shuffled = list(runs)
    random.shuffle(shuffled)
    a, b = sb.build_store(runs), sb.build_store(shuffled)
    assert primary.table2(a).equals(primary.table2(b))
    assert primary.table12(a).equals(primary.table12(b))


def _problem(run_id, effect="run skipped", code="archive.run_invalid"):
    experiment, agent, task, rep = run_id.split("/")
    return {
        "run_id": run_id,
        "experiment": experiment,
        "agent": agent,
        "task": task,
        "rep": int(rep.removeprefix("rep")),
        "version": None,
        "effect": effect,
        "code": code,
        "message": "run.json is malformed",
        "location": None,
        "fix": None,
        "path": f"{run_id}/run.json",
    }


def test_coverage_reports_runs_the_scorer_skipped(tmp_path):
    runs = [sb.run("A", "clf_a", 0), sb.run("A", "clf_a", 1, valid=False, incomplete=True),
            sb.run("B", "clf_a", 0)]  # fmt: skip
    problems = pd.DataFrame(
        [
            _problem("main/B/clf_a/rep1"),
            _problem("main/C/surv_a/rep0"),
            _problem("objectives/A/clf_a/rep0"),
            _problem("main/A/clf_a/rep0", effect="version skipped", code="archive.unsafe_path"),
        ]
    )
    directory = sb.write_store(runs, tmp_path / "store")
    problems.to_parquet(directory / "problems.parquet")
    store = load_store(directory)
    assert len(store.problems) == 4
    assert list(skipped_runs(store, "main")["run_id"]) == [
        "main/B/clf_a/rep1",
        "main/C/surv_a/rep0",
    ]
    table = primary.coverage(store).set_index(["task", "agent"])
    assert list(table.columns) == ["n_runs", "n_valid", "n_not_scorable", "n_skipped",
                                   "n_incomplete"]  # fmt: skip
    assert table.loc[("clf_a", "A")].tolist() == [2, 1, 0, 0, 1]
    assert table.loc[("clf_a", "B")].tolist() == [1, 1, 0, 1, 0]
    assert table.loc[("surv_a", "C")].tolist() == [0, 0, 0, 1, 0]
    assert skipped_runs(sb.build_store(runs)).empty  # no problems table at all
    by_run = primary.coverage_by_run(store)
    assert by_run.to_dict("records") == [
        {"task": "clf_a", "agent": "A", "rep": 0, "status": "valid",
         "problems": "archive.unsafe_path"},
        {"task": "clf_a", "agent": "B", "rep": 1, "status": "skipped",
         "problems": "archive.run_invalid"},
        {"task": "surv_a", "agent": "C", "rep": 0, "status": "skipped",
         "problems": "archive.run_invalid"},
    ]  # fmt: skip


def _with_unscorable():
    """Agent A: clf_a rep 0 valid (0.6), rep 1 invalid, rep 2 not scorable; B: one valid run."""
    return sb.build_store(
        [
            sb.run("A", "clf_a", 0, score=0.6),
            sb.run("A", "clf_a", 1, valid=False),
            sb.run("A", "clf_a", 2, scorable=False),
            sb.run("B", "clf_a", 0, score=0.8),
        ]
    )


def test_a_run_not_scorable_is_neither_valid_nor_invalid_nor_penalised():
    store = _with_unscorable()
    runs = primary.selected_runs(store)
    assert list(runs["run_id"]) == ["main/A/clf_a/rep0", "main/A/clf_a/rep1", "main/B/clf_a/rep0"]
    assert runs["penalized"].tolist() == [0.6, 0.0, 0.8]  # the unscorable run is not a 0
    invalid = primary.invalid_breakdown(store)
    assert invalid[["agent", "n_invalid", "n_runs"]].values.tolist() == [["A", 1, 2]]
    overview = primary.run_overview(store).set_index("agent")
    assert overview.loc["A", ["runs", "valid", "not_scorable", "tasks"]].tolist() == [3, 1, 1, 1]
    coverage = primary.coverage(store).set_index("agent")
    assert coverage.loc["A", ["n_runs", "n_valid", "n_not_scorable"]].tolist() == [3, 1, 1]
    assert primary.coverage_by_run(store).to_dict("records") == [
        {"task": "clf_a", "agent": "A", "rep": 2, "status": "not_scorable", "problems": ""}
    ]
    table2 = primary.agent_summary(store).set_index("agent")
    assert table2.loc["A", "penalized_mean"] == pytest.approx(0.3)  # (0.6 + 0) / 2 runs
    assert table2.loc["A", "valid_rate_mean"] == pytest.approx(0.5)


def test_an_experiment_without_scored_runs_says_so():
    store = sb.build_store([sb.run("A", "clf_a", 0, scorable=False)])
    with pytest.raises(ScoreStoreError, match="not scorable here") as info:
        primary.selected_runs(store)
    assert info.value.code == "store.no_scored_runs" and len(str(info.value)) < 400
    assert primary.coverage(store)["n_not_scorable"].tolist() == [1]


def test_undefined_scores_are_listed_with_their_reason():
    runs = [sb.run("A", "clf_a", 0, score=NAN), sb.run("A", "clf_a", 1, score=0.7),
            sb.run("A", "surv_a", 0, score=NAN, valid=False)]  # fmt: skip
    store = sb.build_store(runs)
    undefined = primary.undefined_scores(store)
    assert undefined.to_dict("records") == [
        {"task": "clf_a", "n_runs": 1, "reason": "the metric is undefined"}
    ]
    assert primary.undefined_scores(sb.build_store(runs[1:])).empty
