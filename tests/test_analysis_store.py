"""Score-store loading (schema checks, structured errors) and the shared analysis helpers."""

from __future__ import annotations

import json
import math
import statistics

import numpy as np
import pandas as pd
import pytest
import storebuilder as sb
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.analysis.store import (
    ScoreStore,
    agent_order,
    annotation_table,
    load_store,
    mean_sd,
    run_answers,
    selected_runs,
    task_classes,
)
from automd_analysis.errors import AutomdError, ScoreStoreError
from automd_analysis.stats.rules import per_task_summary


def _runs():
    return [
        sb.run("A", "clf_a", 0, score=0.6, annotations={"model_families": ["linear", "gbdt"]}),
        sb.run("A", "clf_a", 1, valid=False, reason_code="ids.missing"),
        sb.run("A", "surv_a", 0, score=0.2, annotations={"subgroup_checks": "yes"}),
        sb.run("baseline", "clf_a", 0, score=0.5),
    ]


def test_load_store_round_trip(tmp_path):
    directory = sb.write_store(_runs(), tmp_path / "store")
    store = load_store(directory)
    assert store.path == directory
    assert store.meta["schema_version"] == 1
    assert len(store.scores) == 4 and len(store.runs) == 4
    assert store.scores["valid"].dtype == bool
    assert store.scores["reference"].dtype == bool
    assert store.scores["rep"].dtype == np.int64
    assert store.steps is None
    assert store.experiments == ["main"]


def test_missing_directory_is_a_structured_error(tmp_path):
    with pytest.raises(ScoreStoreError) as info:
        load_store(tmp_path / "nowhere")
    err = info.value
    assert isinstance(err, AutomdError)
    assert err.code == "store.missing"
    assert "automd score" in err.fix
    assert str(tmp_path / "nowhere") in str(err)


def test_missing_table_names_the_file_and_the_fix(tmp_path):
    directory = sb.write_store(_runs(), tmp_path / "store")
    (directory / "subgroups.parquet").unlink()
    with pytest.raises(ScoreStoreError) as info:
        load_store(directory)
    assert info.value.code == "store.missing_table"
    assert info.value.path == directory / "subgroups.parquet"
    assert "automd score" in str(info.value)


def test_missing_column_names_column_and_file(tmp_path):
    directory = sb.write_store(_runs(), tmp_path / "store")
    scores = pd.read_parquet(directory / "scores.parquet").drop(columns=["ece"])
    scores.to_parquet(directory / "scores.parquet")
    with pytest.raises(ScoreStoreError) as info:
        load_store(directory)
    assert info.value.code == "store.missing_column"
    assert "ece" in info.value.message
    assert info.value.details == {"missing": ["ece"]}
    assert str(info.value.path).endswith("scores.parquet")


def test_unreadable_table(tmp_path):
    directory = sb.write_store(_runs(), tmp_path / "store")
    (directory / "runs.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(ScoreStoreError) as info:
        load_store(directory)
    assert info.value.code == "store.unreadable"
    assert str(info.value.path).endswith("runs.parquet")


def test_schema_version_mismatch(tmp_path):
    directory = sb.write_store(_runs(), tmp_path / "store")
    (directory / "store.json").write_text(json.dumps({"schema_version": 2}))
    with pytest.raises(ScoreStoreError) as info:
        load_store(directory)
    assert info.value.code == "store.schema_version"
    assert info.value.location == "schema_version"


def test_optional_steps_table_is_loaded_and_checked(tmp_path):
    directory = sb.write_store(_runs(), tmp_path / "store")
    key = pd.read_parquet(directory / "runs.parquet")[list(sb.frames(_runs())["runs"].columns[:7])]
    steps = key.assign(step=1, ok=True)
    steps.to_parquet(directory / "steps.parquet")
    assert len(load_store(directory).steps) == 4
    steps.drop(columns="ok").to_parquet(directory / "steps.parquet")
    with pytest.raises(ScoreStoreError, match="steps.parquet lacks column"):
        load_store(directory)


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("valid", None, "booleans"),
        ("reference", "yes", "booleans"),
        ("rep", 1.5, "integers"),
        ("score", 1.5, r"\[0, 1\]"),
        ("ece", -0.1, r"\[0, 1\]"),
        ("score", "high", "numbers"),
    ],
)
def test_malformed_values_point_at_the_row(column, value, expected):
    frames = sb.frames(_runs())
    scores = frames["scores"].astype({column: object})
    scores.loc[2, column] = value
    frames["scores"] = scores
    with pytest.raises(ScoreStoreError, match=expected) as info:
        ScoreStore.from_frames(**frames)
    assert info.value.code == "store.malformed"
    assert info.value.location == f"row 2, column {column}"


def test_null_run_key_is_rejected():
    frames = sb.frames(_runs())
    frames["runs"].loc[1, "agent"] = None
    with pytest.raises(ScoreStoreError, match="null agent"):
        ScoreStore.from_frames(**frames)


def test_duplicate_and_inconsistent_runs_are_rejected():
    frames = sb.frames(_runs())
    frames["scores"] = pd.concat([frames["scores"], frames["scores"].iloc[[0]]])
    with pytest.raises(ScoreStoreError) as info:
        ScoreStore.from_frames(**frames)
    assert info.value.code == "store.duplicate_rows"

    frames = sb.frames(_runs())
    frames["scores"] = frames["scores"].iloc[1:]
    with pytest.raises(ScoreStoreError) as info:
        ScoreStore.from_frames(**frames)
    assert info.value.code == "store.inconsistent"
    assert info.value.details["runs"] == ["main/A/clf_a/rep0"]


def test_run_status_is_checked_against_the_scores():
    """``runs.status``: a not-scorable run has no scores row, a scored run's status is its
    validity, and a store written without the column gets it from the selected rows."""
    frames = sb.frames([*_runs(), sb.run("A", "clf_a", 9, scorable=False)])
    store = ScoreStore.from_frames(**frames)
    assert store.runs.set_index("run_id")["status"].to_dict() == {
        "main/A/clf_a/rep0": "valid",
        "main/A/clf_a/rep1": "invalid",
        "main/A/clf_a/rep9": "not_scorable",
        "main/A/surv_a/rep0": "valid",
        "main/baseline/clf_a/rep0": "valid",
    }
    derived = ScoreStore.from_frames(**sb.frames(_runs()) | {
        "runs": sb.frames(_runs())["runs"].drop(columns="status")})  # fmt: skip
    assert derived.runs["status"].tolist() == ["valid", "invalid", "valid", "valid"]
    cases = {
        "a selected row for a run marked not scorable": ("main/A/clf_a/rep0", "not_scorable"),
        "a status that is not the validity": ("main/A/clf_a/rep1", "valid"),
    }
    for what, (run_id, status) in cases.items():
        bad = sb.frames(_runs())
        bad["runs"].loc[bad["runs"]["run_id"] == run_id, "status"] = status
        with pytest.raises(ScoreStoreError) as info:
            ScoreStore.from_frames(**bad)
        assert info.value.code == "store.inconsistent", what
        assert info.value.details["runs"] == [run_id], what
    bad = sb.frames(_runs())
    bad["runs"].loc[0, "status"] = "unscored"
    with pytest.raises(ScoreStoreError, match="status must hold valid / invalid / not_scorable"):
        ScoreStore.from_frames(**bad)


def test_selected_runs_penalises_invalid_and_ignores_versions():
    frames = sb.frames(_runs())
    version = frames["scores"].iloc[[0]].assign(version="v0001", is_selected=False, score=0.99)
    frames["scores"] = pd.concat([frames["scores"], version], ignore_index=True)
    store = ScoreStore.from_frames(**frames)
    runs = selected_runs(store)
    assert list(runs["run_id"]) == sorted(runs["run_id"])
    assert len(runs) == 4
    by_id = runs.set_index("run_id")
    assert by_id.loc["main/A/clf_a/rep0", "penalized"] == 0.6
    assert by_id.loc["main/A/clf_a/rep1", "penalized"] == 0.0
    assert math.isnan(by_id.loc["main/A/clf_a/rep1", "score"])
    assert len(selected_runs(store, include_reference=False)) == 3


def test_selected_runs_unknown_experiment_lists_the_present_ones():
    store = sb.build_store(_runs())
    with pytest.raises(ScoreStoreError) as info:
        selected_runs(store, "objectives", role="objectives")
    assert info.value.code == "store.no_experiment"
    assert "main" in info.value.message
    assert "objectives_experiment" in info.value.fix


def test_mean_sd_matches_statistics():
    values = [0.1, 0.25, 0.7]
    mean, sd = mean_sd(values)
    assert mean == pytest.approx(statistics.mean(values), abs=1e-15)
    assert sd == pytest.approx(statistics.stdev(values), abs=1e-15)
    assert math.isnan(mean_sd([0.3])[1]) and mean_sd([0.3])[0] == 0.3
    assert all(math.isnan(v) for v in mean_sd([]))
    assert mean_sd([0.2, math.nan, 0.4]) == pytest.approx((0.3, statistics.stdev([0.2, 0.4])))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=12))
def test_mean_sd_is_the_sample_sd(values):
    mean, sd = mean_sd(values)
    assert mean == pytest.approx(np.mean(values), abs=1e-12)
    assert sd == pytest.approx(np.std(values, ddof=1), abs=1e-12)


def test_annotation_table_joins_list_fields_and_marks_missing():
    store = sb.build_store(_runs())
    table = annotation_table(store, ["main/A/clf_a/rep0", "main/A/surv_a/rep0", "main/x/y/rep0"])
    assert table.loc["main/A/clf_a/rep0", "model_families"] == "gbdt|linear"
    assert table.loc["main/A/surv_a/rep0", "subgroup_checks"] == "yes"
    assert table.loc["main/A/surv_a/rep0", "model_families"] is None
    assert table.loc["main/x/y/rep0"].isna().all()


def test_run_answers_follow_the_rows_they_are_asked_for():
    store = sb.build_store(_runs())
    ids = pd.Series(
        ["main/x/y/rep0", "main/A/surv_a/rep0", "main/A/clf_a/rep0", "main/A/surv_a/rep0"],
        index=[7, 3, 5, 1],
    )
    answers = run_answers(store, ids, ["not_a_field"])
    assert answers.index.tolist() == [7, 3, 5, 1]
    assert answers["subgroup_checks"].tolist() == [None, "yes", None, "yes"]
    assert answers.loc[5, "model_families"] == "gbdt|linear"
    assert answers["not_a_field"].tolist() == [None] * 4
    assert answers.loc[7].isna().all() and answers.loc[7, "model_families"] is None
    table = annotation_table(store, ids)
    assert answers.drop(columns="not_a_field").iloc[1].equals(table.loc["main/A/surv_a/rep0"]
                                                             .rename(3))  # fmt: skip
    empty = run_answers(store, ids.iloc[:0], ["subgroup_checks"])
    assert empty.empty and "subgroup_checks" in empty.columns


def test_task_classes_and_agent_order():
    store = sb.build_store(_runs())
    assert task_classes(store).to_dict() == {"clf_a": "classification", "surv_a": "survival"}
    assert agent_order(["baseline", "codex", "AIDE", "codex"]) == ["AIDE", "codex", "baseline"]


def test_per_task_summary_counts_only_finite_valid_values():
    runs = selected_runs(sb.build_store(_runs()))
    order = {a: i for i, a in enumerate(agent_order(runs["agent"]))}
    table = per_task_summary(runs, "score", order).set_index(["task", "agent"])
    assert table.loc[("clf_a", "A"), "n_valid"] == 1
    assert table.loc[("clf_a", "A"), "mean"] == 0.6
    assert math.isnan(table.loc[("clf_a", "A"), "sd"])
    assert list(table.index.get_level_values("agent")[:2]) == ["A", "baseline"]


def test_problems_table_is_optional_and_checked(tmp_path):
    directory = sb.write_store(_runs(), tmp_path / "store")
    assert load_store(directory).problems is None
    pd.DataFrame({"run_id": ["main/x/y/rep0"], "code": ["archive.run_invalid"]}).to_parquet(
        directory / "problems.parquet"
    )
    with pytest.raises(ScoreStoreError) as info:
        load_store(directory)
    assert info.value.code == "store.missing_column"
    assert str(info.value.path).endswith("problems.parquet")
