"""Table 6 (modelling methods) and Table 17 (censoring errors) on hand-built annotations."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from storebuilder import loose_store

from automd_analysis.analysis.methods import (
    TABLE6_CATEGORIES,
    table6,
    table17,
    table17_summary,
)
from automd_analysis.errors import ScoreStoreError


def _key(agent, task, rep):
    return {
        "run_id": f"main/{agent}/{task}/rep{rep}",
        "experiment": "main",
        "agent": agent,
        "llm": "l",
        "task": task,
        "rep": rep,
        "reference": agent == "baseline",
    }


KIND = {"t1": "survival", "t2": "classification", "t3": "classification"}


def _scores(runs):
    return pd.DataFrame(
        [
            {
                **_key(a, t, r),
                "version": "selected",
                "is_selected": True,
                "valid": v,
                "task_kind": KIND[t],
                "score": s,
            }  # fmt: skip
            for a, t, r, v, s in runs
        ]
    )


def _annotations(spec):
    rows = []
    for (agent, task, rep), fields in spec.items():
        for field, value in fields.items():
            weight = np.nan
            if isinstance(value, tuple):
                value, weight = value
            for v in value if isinstance(value, list) else [value]:
                rows.append({**_key(agent, task, rep), "field": field, "value": v,
                             "affected_weight": weight, "evidence": "code/x.py:1"})  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture
def data():
    scores = _scores(
        [
            ("A", "t1", 0, True, 0.6),
            ("A", "t2", 0, True, 0.5),
            ("A", "t1", 1, True, 0.2),
            ("A", "t2", 1, False, np.nan),  # invalid: excluded although annotated
            ("A", "t3", 1, True, 0.4),  # valid but not annotated
            ("B", "t1", 0, True, 0.7),
            ("B", "t1", 1, False, np.nan),
            ("baseline", "t1", 0, True, 0.3),
            ("baseline", "t1", 1, True, 0.5),
        ]
    )
    ann = _annotations(
        {
            ("A", "t1", 0): {
                "model_families": ["gbdt", "linear"],
                "ensembling": ["seed_fold_average"],
                "validation_design": ["kfold_cv"],
                "probability_calibration": "yes",
                "censoring_handling": ("censored_as_death", 0.5),
            },
            ("A", "t2", 0): {
                "model_families": ["gbdt"],
                "ensembling": ["single_model"],
                "validation_design": ["single_holdout"],
                "probability_calibration": "no",
            },
            ("A", "t1", 1): {
                "model_families": ["neural_net", "xgboost_custom"],
                "ensembling": ["model_blend", "stacking"],
                "validation_design": ["kfold_cv"],
                "probability_calibration": "uncertain",
                "censoring_handling": ("wrong_ipcw", 1.0),
            },
            ("A", "t2", 1): {"model_families": ["knn"], "probability_calibration": "yes"},
            ("B", "t1", 0): {
                "model_families": ["gbdt"],
                "probability_calibration": "yes",
                "censoring_handling": ("correct", np.nan),
            },
            ("B", "t1", 1): {"censoring_handling": ("censored_as_survivor", 1.0)},
        }
    )
    return ann, scores


def test_table6_hand_values(data):
    ann, scores = data
    t = table6(loose_store(scores, annotations=ann)).set_index(["field", "category", "agent"])
    gbdt = t.loc[("model_families", "gbdt", "A")]
    # rep0: 2 of 2 valid annotated runs; rep1: 0 of 1 (A/t3 unannotated, A/t2 rep1 invalid)
    assert gbdt["pct_mean"] == pytest.approx(50.0)
    assert gbdt["pct_sd"] == pytest.approx(np.std([100, 0], ddof=1))
    assert gbdt["pct_pooled"] == pytest.approx(200 / 3)
    assert (gbdt["n_runs_with"], gbdt["n_valid_runs"], gbdt["n_unannotated"]) == (2, 3, 1)
    assert gbdt["n_reps"] == 2
    assert t.loc[("model_families", "linear", "A"), "pct_mean"] == pytest.approx(25.0)
    assert t.loc[("model_families", "knn", "A"), "n_runs_with"] == 0  # only in an invalid run
    assert t.loc[("ensembling", "stacking", "A"), "pct_mean"] == pytest.approx(50.0)
    assert t.loc[("probability_calibration", "yes", "A"), "pct_mean"] == pytest.approx(25.0)
    b = t.loc[("model_families", "gbdt", "B")]
    assert b["pct_mean"] == 100.0 and b["n_reps"] == 1 and math.isnan(b["pct_sd"])
    # unknown values are kept as extra categories; every codebook category has a row
    assert t.loc[("model_families", "xgboost_custom", "A"), "n_runs_with"] == 1
    for field, cats in TABLE6_CATEGORIES.items():
        for cat in cats:
            assert (field, cat, "A") in t.index
    assert "baseline" not in set(t.index.get_level_values("agent"))


def test_table6_requires_columns(data):
    ann, scores = data
    with pytest.raises(ScoreStoreError) as err:
        table6(replace(loose_store(scores, annotations=ann), annotations=ann.drop(columns="value")))
    assert "value" in err.value.message


def test_table17_hand_values(data):
    ann, scores = data
    t = table17(loose_store(scores, annotations=ann))
    assert t["run_id"].tolist() == ["main/A/t1/rep0", "main/A/t1/rep1"]
    assert t["error"].tolist() == ["censored_as_death", "wrong_ipcw"]
    assert t["label"].tolist() == ["censored_as_death (0.50)", "wrong_ipcw (1.00)"]
    assert t["baseline_score"].tolist() == pytest.approx([0.4, 0.4])  # mean of 0.3 and 0.5
    assert t["exceeds_baseline"].tolist() == [True, False]


def test_table17_summary(data):
    ann, scores = data
    s = table17_summary(loose_store(scores, annotations=ann)).set_index("agent")
    assert s.loc["A", "n_valid_survival"] == 2 and s.loc["A", "n_with_error"] == 2
    assert s.loc["A", "censored_as_death"] == 1 and s.loc["A", "wrong_ipcw"] == 1
    assert s.loc["A", "n_exceeding_baseline"] == 1
    assert s.loc["B", "n_valid_survival"] == 1 and s.loc["B", "n_with_error"] == 0
    assert s.loc["B", "censored_as_survivor"] == 0  # only in B's invalid run
    assert s.loc["all", "n_valid_survival"] == 3 and s.loc["all", "n_with_error"] == 2


def test_table17_without_baseline_has_unknown_comparison(data):
    ann, scores = data
    t = table17(loose_store(scores[scores["agent"] != "baseline"], annotations=ann))
    assert t["exceeds_baseline"].isna().all() and t["baseline_score"].isna().all()
