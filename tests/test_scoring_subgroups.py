"""Subgroup assignment and scores (paper App. F): hand cases, properties, sklearn and pycox."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from references import require
from sklearn.metrics import roc_auc_score

from automd_analysis.scoring.subgroup_scores import MIN_AUROC, MIN_CTD, assign_groups, subgroup_rows
from automd_analysis.submissions import AlignedPredictions
from automd_analysis.tasks import TaskLabels


def test_tertiles_by_hand():
    groups, order = assign_groups([1, 2, 3, 4, 5, 6, 7, 8, 9], "tertiles", "age")
    # np.quantile([1..9], [1/3, 2/3]) = [3.6667, 6.3333]
    assert order == ["age T1 [1, 3.66667)", "age T2 [3.66667, 6.33333)", "age T3 [6.33333, 9]"]
    assert list(groups) == [order[0]] * 3 + [order[1]] * 3 + [order[2]] * 3


def test_tertiles_keep_ties_together_and_skip_missing():
    ages = [50.0] * 10 + [60.0, 61.0, np.nan]
    groups, order = assign_groups(ages, "tertiles", "age")
    assert order[0] == "age T1 [50, 50)"  # q1 = q2 = 50: the two lower thirds are empty
    assert list(groups[:12]) == [order[2]] * 12
    assert groups[12] is None


def test_categorical_and_missing_values():
    groups, order = assign_groups(["female", "male", "", None, "female", " "], "categorical", "sex")
    assert order == ["female", "male"]
    assert list(groups) == ["female", "male", None, None, "female", None]


def test_top4_other_ties_broken_by_name():
    values = ["A"] * 5 + ["B"] * 4 + ["D"] * 3 + ["C"] * 3 + ["E"] * 2 + ["F"] + [""]
    groups, order = assign_groups(values, "top4_other", "race")
    assert order == ["A", "B", "C", "D", "Other"]
    assert list(groups[-4:]) == ["Other", "Other", "Other", None]


def test_top4_pooled_group_never_shares_a_name_with_a_real_other_category():
    # a cohort whose race column has its own "other" level (SUPPORT does) among the four largest
    values = ["white"] * 5 + ["black"] * 4 + ["other"] * 3 + ["asian"] * 2 + ["hispanic", "x"]
    groups, order = assign_groups(values, "top4_other", "race")
    assert order == ["white", "black", "other", "asian", "Other (remaining)"]
    assert list(groups[-2:]) == ["Other (remaining)", "Other (remaining)"]
    assert sum(g == "other" for g in groups) == 3
    # a small "other" level is pooled with the rest under the usual name
    groups, order = assign_groups(
        ["a"] * 4 + ["b"] * 3 + ["c"] * 3 + ["d"] * 2 + ["other"], "top4_other", "r"
    )
    assert order == ["a", "b", "c", "d", "Other"] and groups[-1] == "Other"


def test_top4_without_remainder_has_no_other():
    groups, order = assign_groups(["x", "y", "y"], "top4_other", "race")
    assert order == ["y", "x"] and None not in groups


def test_unknown_rule_and_non_numeric_tertiles():
    with pytest.raises(ValueError, match="rule"):
        assign_groups([1, 2], "quartiles", "age")
    with pytest.raises(ValueError):
        assign_groups(["old", "young"], "tertiles", "age")


@settings(max_examples=80, deadline=None)
@given(
    ages=st.lists(
        st.one_of(st.integers(18, 99).map(float), st.just(float("nan"))), min_size=1, max_size=80
    )
)
def test_tertiles_partition_and_order(ages):
    x = np.array(ages)
    groups, order = assign_groups(x, "tertiles", "age")
    ok = np.isfinite(x)
    assert all((g is None) == (not f) for g, f in zip(groups, ok, strict=True))
    if not ok.any():
        assert order == []
        return
    rank = {label: i for i, label in enumerate(order)}
    idx = np.array([rank[g] for g in groups[ok]])
    xs = x[ok]
    # monotone: a larger age never falls into a lower tertile; equal ages share a group
    for a in range(len(xs)):
        for b in range(len(xs)):
            if xs[a] < xs[b]:
                assert idx[a] <= idx[b]
            if xs[a] == xs[b]:
                assert idx[a] == idx[b]
    q1, q2 = np.quantile(xs, [1 / 3, 2 / 3])
    assert np.all(xs[idx == 0] < q1) and np.all(xs[idx == 2] >= q2)
    assert np.all((xs[idx == 1] >= q1) & (xs[idx == 1] < q2))


@settings(max_examples=80, deadline=None)
@given(values=st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", ""]), max_size=60))
def test_top4_other_properties(values):
    groups, order = assign_groups(values, "top4_other", "race")
    recorded = [v for v in values if v]
    assert sum(g is not None for g in groups) == len(recorded)
    named = [g for g in order if g != "Other"]
    assert len(named) <= 4 and len(order) <= 5
    counts = pd.Series(recorded).value_counts() if recorded else pd.Series(dtype=int)
    for g in named:  # every named group is at least as large as any value folded into Other
        folded = [v for v in counts.index if v not in named]
        assert all(counts[g] >= counts[v] for v in folded)
    for v, g in zip(values, groups, strict=True):
        if v:
            assert g == (v if v in named else "Other")


def _classification(n_f=70, n_m=60, n_x=20, seed=0):
    rng = np.random.default_rng(seed)
    n = n_f + n_m + n_x
    y = (rng.random(n) < 0.3).astype(np.int8)
    y[n_f + n_m :] = 0  # the last group has a single class
    p = np.clip(0.3 * y + rng.random(n) * 0.7, 0, 1)
    sex = ["female"] * n_f + ["male"] * n_m + ["x"] * n_x
    age = rng.integers(20, 90, n).astype(float)
    sub = pd.DataFrame({"age": age, "sex": sex})
    labels = TaskLabels(ids=pd.DataFrame({"id": range(n)}), label=y, subgroups=sub)
    return labels, AlignedPredictions(probability=p), sex, y, p, age


def test_classification_subgroups_match_sklearn_and_rules():
    labels, preds, sex, y, p, age = _classification()
    rows = subgroup_rows("classification", {"sex": "categorical", "age": "tertiles"}, labels, preds)
    by = {(r["attribute"], r["group"]): r for r in rows}
    sex = np.array(sex)
    for g in ("female", "male"):
        r = by[("sex", g)]
        mask = sex == g
        assert r["eligible"] and r["reason"] is None and r["metric"] == "auroc"
        assert (r["n"], r["n_events"]) == (mask.sum(), y[mask].sum())
        assert r["score_raw"] == pytest.approx(roc_auc_score(y[mask], p[mask]), abs=1e-12)
    single = by[("sex", "x")]
    assert not single["eligible"] and math.isnan(single["score_raw"])
    assert single["reason"] == f"fewer than {MIN_AUROC} observations"
    age_rows = [r for r in rows if r["attribute"] == "age"]
    assert sum(r["n"] for r in age_rows) == len(age)
    for r in age_rows:
        assert r["eligible"] == (r["n"] >= MIN_AUROC and 0 < r["n_events"] < r["n"])
    assert [r["attribute"] for r in rows] == sorted(r["attribute"] for r in rows)
    assert [r["group_order"] for r in rows if r["attribute"] == "sex"] == [0, 1, 2]


def test_single_class_group_is_not_eligible():
    labels, preds, *_ = _classification(n_f=70, n_m=60, n_x=55)
    rows = subgroup_rows("classification", {"sex": "categorical"}, labels, preds)
    (x,) = [r for r in rows if r["group"] == "x"]
    assert x["n"] == 55 and not x["eligible"] and x["reason"] == "only one outcome class"


def test_sequential_tasks_have_no_subgroups():
    labels, preds, *_ = _classification()
    assert subgroup_rows("sequential", {"sex": "categorical"}, labels, preds) == []


def _survival(seed=1, n=260):
    rng = np.random.default_rng(seed)
    race = rng.choice(
        ["White", "Black", "Asian", "Hispanic", "Native", "Pacific"],
        n,
        p=[0.55, 0.15, 0.1, 0.1, 0.05, 0.05],
    )
    x = rng.normal(size=n)
    t = np.round(rng.exponential(10 * np.exp(-x)), 1) + 0.1
    c = rng.uniform(2, 40, n)
    e = (t <= c).astype(np.int8)
    t = np.minimum(t, np.round(c, 1))
    grid = np.array([0.0, 1.0, 2.0, 4.0, 8.0, 12.0, 20.0, 30.0, 40.0])
    s = np.round(
        np.exp(-0.1 * grid[None, :] * np.exp(x + rng.normal(scale=0.5, size=n))[:, None]), 3
    )
    sub = pd.DataFrame({"race": race})
    labels = TaskLabels(
        ids=pd.DataFrame({"id": range(n)}), duration=t, event=e, subgroups=sub, time_grid=grid
    )
    return labels, AlignedPredictions(surv=s, time_grid=grid), race


@pytest.mark.reference
def test_survival_subgroups_use_plain_antolini_like_pycox():
    pycox_eval = require("pycox.evaluation")
    labels, preds, race = _survival()
    rows = subgroup_rows("survival", {"race": "top4_other"}, labels, preds)
    assert [r["group"] for r in rows][-1] == "Other"
    eligible = [r for r in rows if r["eligible"]]
    assert eligible, "the fixture must have at least one group of >= 80"
    for r in rows:
        assert r["metric"] == "ctd_antolini"
        assert r["eligible"] == (r["n"] >= MIN_CTD)
    for r in eligible:
        mask = race == r["group"]
        ev = pycox_eval.EvalSurv(
            pd.DataFrame(preds.surv[mask].T, index=preds.time_grid),
            labels.duration[mask],
            labels.event[mask].astype(int),
        )
        assert r["score_raw"] == pytest.approx(ev.concordance_td("antolini"), abs=1e-12)
        adj = ev.concordance_td("adj_antolini")
        assert adj != pytest.approx(r["score_raw"], abs=1e-12)  # really the plain method


def test_survival_group_without_events_is_not_eligible():
    labels, preds, race = _survival(n=200)
    event = labels.event.copy()
    event[race == "White"] = 0
    labels = TaskLabels(
        ids=labels.ids,
        duration=labels.duration,
        event=event,
        subgroups=labels.subgroups,
        time_grid=labels.time_grid,
    )
    rows = subgroup_rows("survival", {"race": "top4_other"}, labels, preds)
    (white,) = [r for r in rows if r["group"] == "White"]
    assert white["n"] >= MIN_CTD and white["n_events"] == 0
    assert not white["eligible"] and white["reason"].startswith("undefined")


@pytest.mark.parametrize(("kind", "minimum"), [("classification", 50), ("survival", 80)])
def test_minimum_group_sizes_are_the_papers(kind, minimum):
    # App. F: 50 observations (and both classes) for AUROC, 80 for C^td - the numbers themselves,
    # not the module constants, so that changing a constant fails here
    n = minimum + (minimum - 1)  # one group of `minimum`, one of `minimum - 1`
    rng = np.random.default_rng(0)
    group = np.array(["big"] * minimum + ["small"] * (minimum - 1))
    sub = pd.DataFrame({"site": group})
    ids = pd.DataFrame({"id": range(n)})
    if kind == "classification":
        y = np.tile([0, 1], n)[:n]
        p = rng.uniform(size=n)
        labels = TaskLabels(ids=ids, label=y, subgroups=sub)
        preds = AlignedPredictions(probability=p)
    else:
        grid = np.array([0.0, 1.0, 2.0, 4.0])
        t = rng.uniform(0.5, 4.0, n)
        e = np.tile([1, 0], n)[:n].astype(np.int8)
        s = np.sort(rng.uniform(size=(n, grid.size)), axis=1)[:, ::-1]
        labels = TaskLabels(ids=ids, duration=t, event=e, subgroups=sub, time_grid=grid)
        preds = AlignedPredictions(surv=s, time_grid=grid)
    rows = {r["group"]: r for r in subgroup_rows(kind, {"site": "categorical"}, labels, preds)}
    assert rows["big"]["n"] == minimum and rows["big"]["eligible"]
    assert rows["small"]["n"] == minimum - 1 and not rows["small"]["eligible"]
    assert rows["small"]["reason"] == f"fewer than {minimum} observations"


def _explicit_resample_scores(kind, mask, labels, preds, indices):
    """Reference: each resample drawn as explicit positions, the group's copies scored."""
    out = []
    for row in indices:
        idx = row[mask[row]]
        if kind == "survival":
            from automd_analysis import metrics

            out.append(
                metrics.concordance_td(
                    labels.duration[idx],
                    labels.event[idx],
                    preds.surv[idx],
                    preds.time_grid,
                    method="antolini",
                )
            )
        else:
            out.append(roc_auc_score(labels.label[idx], preds.probability[idx]))
    return np.array(out)


def test_subgroup_replicates_score_each_group_on_the_runs_resamples():
    from automd_analysis.scoring.replicates import task_resample_indices, task_resample_weights
    from automd_analysis.scoring.subgroup_scores import subgroup_scores

    labels, preds, sex, *_ = _classification()
    rules = {"sex": "categorical"}
    n = len(labels.label)
    weights = task_resample_weights("t", n, 25)
    rows, reps = subgroup_scores("classification", rules, labels, preds, weights)
    assert rows == subgroup_rows("classification", rules, labels, preds)  # observed unchanged
    # only the eligible groups, in display order
    assert [(r["attribute"], r["group"]) for r in reps] == [
        (r["attribute"], r["group"]) for r in rows if r["eligible"]
    ]
    indices = task_resample_indices("t", n, 25)
    for r in reps:
        mask = np.asarray(sex) == r["group"]
        expected = _explicit_resample_scores("classification", mask, labels, preds, indices)
        np.testing.assert_allclose(r["replicates"], expected, rtol=0, atol=1e-12)
    assert subgroup_scores("classification", rules, labels, preds)[1] == []
    assert subgroup_scores("sequential", rules, labels, preds, weights) == ([], [])


def test_survival_subgroup_replicates_match_explicit_resamples():
    from automd_analysis.scoring.replicates import task_resample_indices, task_resample_weights
    from automd_analysis.scoring.subgroup_scores import subgroup_scores

    labels, preds, race = _survival()
    rules = {"race": "top4_other"}
    weights = task_resample_weights("s", len(race), 10)
    rows, reps = subgroup_scores("survival", rules, labels, preds, weights)
    assert rows == subgroup_rows("survival", rules, labels, preds)  # observed unchanged
    assert reps and len(reps) == sum(r["eligible"] for r in rows)
    indices = task_resample_indices("s", len(race), 10)
    for r in reps:
        expected = _explicit_resample_scores("survival", race == r["group"], labels, preds, indices)
        np.testing.assert_allclose(r["replicates"], expected, rtol=0, atol=1e-12)
