"""Demo data: cohort sizes, event rates, split rules, reproducible bytes, sample submissions.

The demo data is built once per test session into the pytest cache (or ``$AUTOMD_TEST_DEMO_DATA``)
under a file lock, so both xdist workers share one build; later sessions only re-hash it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from automd_analysis.submissions import validate_submission
from automd_analysis.tasks import get_task, load_labels, read_time_grid
from automd_demo.cohorts import (
    flchain_cohort,
    rhc_cohort,
    rotterdam_cohort,
    support_cohort,
)
from automd_demo.recipes import period_split, sepsis_split
from automd_demo.sequential_synth import LABEL_LEAD, simulate_sepsis_cohort
from automd_demo.splits import _time_grid_local, kaplan_meier_at, time_grid
from automd_demo.task_files import build_demo_data, demo_manifests

#: Integration tests (CLI, end to end, demo cohorts): `make test-fast` skips them.
pytestmark = pytest.mark.slow


def _csv(root, task_id, key):
    task = get_task(task_id, data=root)
    return pd.read_csv(task.verified_path(key), dtype={"patient_id": str})


# --------------------------------------------------------------------------------------------
# Cohorts


def test_support_cohort_is_the_benchmark_size():
    c = support_cohort()
    assert c.source_rows == 9105
    assert len(c.frame) == 8873
    assert int(c.frame["event"].sum()) == 6036
    assert c.exclusions == {"incomplete numeric covariates": 232}
    assert len(c.features) == 14
    assert not c.frame[c.features].isna().any().any()
    assert "missing" in set(c.frame["race"])  # race's missing level is kept, not dropped
    assert c.frame["patient_id"].is_unique and c.frame["patient_id"].is_monotonic_increasing


def test_other_cohorts():
    r = rotterdam_cohort()
    assert len(r.frame) == 2982
    assert r.time_unit == "months"
    f = flchain_cohort()
    assert f.source_rows == 7874 and len(f.frame) == 7871
    assert (f.frame["duration"] > 0).all()
    assert "chapter" not in f.frame.columns  # cause of death would reveal the outcome
    h = rhc_cohort()
    assert len(h.frame) == 5735
    assert len(h.features) == 53
    assert set(h.frame["sex"]) == {"female", "male"}


def test_survset_warning_is_filtered():
    from automd_demo.cohorts import _load_survset_cached, load_survset

    _load_survset_cached.cache_clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = load_survset("rott2")
    assert len(df) == 2982


# --------------------------------------------------------------------------------------------
# Split rules and sizes


def test_support_split_sizes_and_outcomes(demo_root):
    train = _csv(demo_root, "demo_support", "train")
    labels = _csv(demo_root, "demo_support", "labels")
    assert (len(train), len(labels)) == (7098, 1775)
    assert set(train["patient_id"]).isdisjoint(labels["patient_id"])
    assert int(train["event"].sum() + labels["event"].sum()) == 6036
    test_features = _csv(demo_root, "demo_support", "test_features")
    assert list(test_features["patient_id"]) == list(labels["patient_id"])
    assert not {"duration", "event"} & set(test_features.columns)


def test_rotterdam_split_is_stratified_by_event(demo_root):
    train = _csv(demo_root, "demo_rotterdam", "train")
    labels = _csv(demo_root, "demo_rotterdam", "labels")
    assert (len(train), len(labels)) == (2385, 597)
    overall = (train["event"].sum() + labels["event"].sum()) / 2982
    # stratified: each side's event rate is within one patient of the overall rate
    assert abs(labels["event"].mean() - overall) <= 1 / len(labels)
    assert abs(train["event"].mean() - overall) <= 1 / len(train)


def test_flchain_period_rule(demo_root):
    cohort = flchain_cohort()
    parts = period_split(cohort, "sample_year", 1997, 0.5, 42)
    assert len(parts["early"]) == 4765
    assert len(parts["later_train"]) + len(parts["test"]) == 3106
    assert len(parts["test"]) == 1553
    assert (parts["early"]["sample_year"] <= 1996).all()
    assert (parts["test"]["sample_year"] >= 1997).all()

    internal = _csv(demo_root, "demo_flchain", "train")
    later = _csv(demo_root, "demo_flchain_later", "train")
    labels_i = _csv(demo_root, "demo_flchain", "labels")
    labels_l = _csv(demo_root, "demo_flchain_later", "labels")
    pd.testing.assert_frame_equal(labels_i, labels_l)  # shared test set
    assert set(labels_i["patient_id"]) == set(parts["test"]["patient_id"])
    assert len(internal) == 7871 - 1553
    assert set(later["patient_id"]) == set(parts["early"]["patient_id"])
    assert set(internal["patient_id"]).isdisjoint(labels_i["patient_id"])
    # both tasks share the grid of the early period's events
    grid_i = read_time_grid(get_task("demo_flchain", data=demo_root))[0]
    grid_l = read_time_grid(get_task("demo_flchain_later", data=demo_root))[0]
    np.testing.assert_array_equal(grid_i, grid_l)
    np.testing.assert_array_equal(grid_i, time_grid(later["duration"], later["event"]))


def test_support_death30_is_fully_observed(demo_root):
    train = _csv(demo_root, "demo_support_death30", "train")
    labels = _csv(demo_root, "demo_support_death30", "labels")
    assert (len(train), len(labels)) == (7098, 1775)
    c = support_cohort().frame.set_index("patient_id")
    # no SUPPORT patient is censored before day 344, so 30-day death is known for everyone
    assert not ((c["event"] == 0) & (c["duration"] < 344)).any()
    expected = ((c["event"] == 1) & (c["duration"] <= 30)).astype(int)
    assert (labels.set_index("patient_id")["death_30d"] == expected.loc[labels["patient_id"]]).all()
    rate = (train["death_30d"].sum() + labels["death_30d"].sum()) / 8873
    assert rate == pytest.approx(0.2718, abs=5e-4)
    assert abs(labels["death_30d"].mean() - rate) <= 1 / len(labels)  # stratified


def test_rhc_death30_excludes_early_censoring(demo_root):
    train = _csv(demo_root, "demo_rhc_death30", "train")
    labels = _csv(demo_root, "demo_rhc_death30", "labels")
    assert len(train) + len(labels) == 5735 - 8
    assert (len(train), len(labels)) == (4581, 1146)
    rate = (train["death_30d"].sum() + labels["death_30d"].sum()) / 5727
    assert rate == pytest.approx(0.3349, abs=5e-4)
    c = rhc_cohort().frame.set_index("patient_id")
    kept = pd.concat([train["patient_id"], labels["patient_id"]])
    dropped = c.index.difference(kept)
    assert len(dropped) == 8
    assert ((c.loc[dropped, "event"] == 0) & (c.loc[dropped, "duration"] < 30)).all()
    sample = _csv(demo_root, "demo_rhc_death30", "sample_submission")
    assert list(sample.columns) == ["patient_id", "PredictedProbability", "PredictedLabel"]
    assert (sample["PredictedLabel"] == 0).all()
    assert sample["PredictedProbability"].iloc[0] == pytest.approx(train["death_30d"].mean())


# --------------------------------------------------------------------------------------------
# Synthetic sepsis cohort


@pytest.fixture(scope="module")
def sepsis():
    return simulate_sepsis_cohort(seed=42)


def test_sepsis_cohort_shape(sepsis):
    p, h = sepsis.patients, sepsis.hourly
    assert len(p) == 2500
    assert (p["hospital"].value_counts() == 1250).all()
    assert 80_000 <= len(h) <= 100_000
    assert 30 <= p["n_hours"].mean() <= 40
    assert 0.05 <= p["ever_septic"].mean() <= 0.08
    rates = p.groupby("hospital")["ever_septic"].mean()
    assert rates["A"] > rates["B"]  # case mix differs


def test_sepsis_label_starts_six_hours_before_onset(sepsis):
    h, p = sepsis.hourly, sepsis.patients.set_index("patient_id")
    first_pos = h[h["SepsisLabel"] == 1].groupby("patient_id")["ICULOS"].min()
    septic = p.index[p["ever_septic"] == 1]
    assert set(first_pos.index) == set(septic)
    np.testing.assert_array_equal(
        first_pos.loc[septic].to_numpy(), p.loc[septic, "onset_hour"].to_numpy() - LABEL_LEAD
    )
    assert (first_pos >= 1).all()
    # once positive, positive until discharge; hours are 1..n consecutive
    last = h.groupby("patient_id").agg(n=("ICULOS", "size"), mx=("ICULOS", "max"))
    assert (last["n"] == last["mx"]).all()
    diffs = h.groupby("patient_id")["SepsisLabel"].diff().fillna(0)
    assert (diffs >= 0).all()


def test_sepsis_hospitals_really_differ(sepsis):
    h = sepsis.hourly
    observed = h.groupby("hospital")[["HR", "Temp", "WBC", "Lactate"]].agg(
        lambda s: s.notna().mean()
    )
    assert (observed.loc["A"] > observed.loc["B"]).all()  # B charts less often
    non_septic = h[h["SepsisLabel"] == 0]
    temp = non_septic.groupby("hospital")["Temp"].mean()
    assert temp["B"] - temp["A"] > 0.15  # calibration offset
    assert h["WBC"].isna().mean() > 0.8  # labs are sparse
    assert h["HR"].isna().mean() < 0.25  # vitals mostly hourly


def test_sepsis_simulation_is_deterministic(sepsis):
    again = simulate_sepsis_cohort(seed=42)
    pd.testing.assert_frame_equal(again.hourly, sepsis.hourly)
    other = simulate_sepsis_cohort(seed=7)
    assert not other.hourly["HR"].equals(sepsis.hourly["HR"])


def test_sepsis_task_split_rules(demo_root, sepsis):
    p = sepsis.patients.set_index("patient_id")
    sets = sepsis_split(sepsis.patients, 500, 42)
    test = sets["internal_test"]
    assert len(test) == 500 and len(sets["internal_train"]) == 2000
    # stratified by hospital x ever-septic
    strata = p.groupby(["hospital", "ever_septic"]).size()
    test_strata = p.loc[test].groupby(["hospital", "ever_septic"]).size()
    assert ((test_strata - strata * 0.2).abs() <= 1).all()
    assert (p.loc[sets["external_test"], "hospital"] == "B").all()
    assert set(sets["external_test"]) == set(t for t in test if p.loc[t, "hospital"] == "B")
    local = sets["local"]
    assert len(local) == 500
    assert (p.loc[local, "hospital"] == "B").all()
    assert set(local).isdisjoint(test)
    b_pool = p[(p["hospital"] == "B") & ~p.index.isin(test)]
    assert abs(p.loc[local, "ever_septic"].mean() - b_pool["ever_septic"].mean()) <= 1 / 500

    newhosp = _csv(demo_root, "demo_sepsis_newhosp", "train")
    local_train = _csv(demo_root, "demo_sepsis_local", "train")
    assert set(newhosp["patient_id"]) == set(p.index[p["hospital"] == "A"])
    assert set(local_train["patient_id"]) == set(newhosp["patient_id"]) | set(local)
    lab_n = _csv(demo_root, "demo_sepsis_newhosp", "labels")
    lab_l = _csv(demo_root, "demo_sepsis_local", "labels")
    pd.testing.assert_frame_equal(lab_n, lab_l)
    assert set(lab_n["patient_id"]) == set(sets["external_test"])
    internal = _csv(demo_root, "demo_sepsis", "labels")
    assert set(internal["patient_id"]) == set(test)
    feats = _csv(demo_root, "demo_sepsis", "test_features")
    assert "SepsisLabel" not in feats.columns
    assert list(feats[["patient_id", "ICULOS"]].itertuples(index=False)) == list(
        internal[["patient_id", "ICULOS"]].itertuples(index=False)
    )


# --------------------------------------------------------------------------------------------
# Files: grids, null submissions, labels, bytes


def test_time_grid_rule_matches_metrics_and_local(demo_root):
    train = _csv(demo_root, "demo_support", "train")
    grid = read_time_grid(get_task("demo_support", data=demo_root))[0]
    local = _time_grid_local(train["duration"], train["event"])
    np.testing.assert_array_equal(grid, local)
    events = np.sort(train.loc[train["event"] == 1, "duration"].to_numpy())
    assert grid[0] == 0.0 and grid[-1] == events[-1]
    assert np.all(np.diff(grid) > 0) and len(grid) <= 101
    from automd_analysis.metrics import survival_time_grid

    np.testing.assert_array_equal(survival_time_grid(train["duration"], train["event"]), local)


@pytest.mark.reference
def test_kaplan_meier_matches_lifelines():
    from lifelines import KaplanMeierFitter

    rng = np.random.default_rng(3)
    durations = rng.integers(1, 30, 200).astype(float)
    events = rng.integers(0, 2, 200)
    times = np.array([0.0, 0.5, 1.0, 7.0, 7.5, 15.0, 29.0, 40.0])
    kmf = KaplanMeierFitter().fit(durations, events)
    np.testing.assert_allclose(
        kaplan_meier_at(durations, events, times),
        kmf.survival_function_at_times(times).to_numpy(),
        rtol=0,
        atol=1e-12,
    )


def test_survival_null_submission_is_training_km(demo_root):
    train = _csv(demo_root, "demo_rotterdam", "train")
    task = get_task("demo_rotterdam", data=demo_root)
    grid, texts = read_time_grid(task)
    sample = pd.read_csv(task.verified_path("sample_submission"), dtype={"patient_id": str})
    assert list(sample.columns) == ["patient_id", *texts]
    np.testing.assert_allclose(
        sample.iloc[0, 1:].to_numpy(float),
        kaplan_meier_at(train["duration"], train["event"], grid),
        rtol=0,
        atol=1e-15,
    )


@pytest.mark.parametrize(
    "task_id",
    [
        "demo_support",
        "demo_rotterdam",
        "demo_flchain",
        "demo_flchain_later",
        "demo_support_death30",
        "demo_rhc_death30",
        "demo_sepsis",
        "demo_sepsis_newhosp",
        "demo_sepsis_local",
    ],
)
def test_each_demo_task_is_complete(demo_root, task_id):
    task = get_task(task_id, data=demo_root)
    m = task.manifest
    labels = load_labels(task)
    result = validate_submission(task, task.verified_path("sample_submission"))
    assert result.valid, result.to_dict()
    assert len(labels.ids) == (m.sizes.test_rows or m.sizes.test)
    train = pd.read_csv(task.verified_path("train"), dtype={"patient_id": str})
    assert train["patient_id"].nunique() == m.sizes.train + m.sizes.extra_train
    assert labels.ids["patient_id"].nunique() == m.sizes.test
    # hidden labels live apart from what the agent gets
    assert task.path("labels").parent.parent.name == "labels"
    assert task.path("train").parent.parent.name == "tasks"
    for key, spec in m.files.items():
        assert (spec.role == "hidden") == (key == "labels")
    description = task.verified_path("description").read_text()
    metric_words = {
        "ctd_adj_antolini": "C^td",
        "auroc": "ROC curve",
        "min_se_ppv": "min(Se, PPV)",
        "utility_2019": "2019 normalised utility",
    }
    for needle in (metric_words[m.metric.value], "sample_submission.csv", "validate.py"):
        assert needle in description
    assert ("Synthetic data" in description) == m.synthetic
    for name, spec in m.subgroups.items():
        assert name in labels.subgroups.columns
        assert labels.subgroups[name].notna().all(), spec
    if "sex" in m.subgroups:
        assert set(labels.subgroups["sex"]) <= {"female", "male"}


def test_rebuild_is_byte_identical(demo_root, tmp_path):
    tasks = ["demo_rotterdam", "demo_sepsis_newhosp"]
    built = build_demo_data(tmp_path, tasks=tasks)
    assert built and all(b.matches for b in built)
    for b in built:
        original = get_task(b.task, data=demo_root).path(b.key)
        assert b.path.read_bytes() == original.read_bytes()
    raw = built[0].path.read_bytes()
    assert b"\r\n" not in raw and not raw.startswith(b"\xef\xbb\xbf")


def test_every_demo_file_matches_its_pinned_sha(demo_root):
    from automd_analysis.tasks import file_statuses, task_status

    for task_id in demo_manifests():
        statuses = file_statuses(get_task(task_id, data=demo_root))
        assert task_status(statuses) == "present", [(s.key, s.state) for s in statuses]
