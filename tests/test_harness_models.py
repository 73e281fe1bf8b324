"""The model zoo of the demo harness: hand-computed values, reference implementations, invariants."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from lifelines.utils import concordance_index
from sklearn.utils.class_weight import compute_sample_weight

from automd_analysis import metrics
from automd_demo.harness import models as M


def test_encode_tabular_uses_training_categories():
    train = pd.DataFrame({"a": [1.0, np.nan, 3.0], "c": ["x", "y", None]})
    test = pd.DataFrame({"a": [2.0], "c": ["z"]})
    x_train, x_test = M.encode_tabular(train, test, ["a", "c"])
    assert list(x_train.columns) == ["a", "c=x", "c=y"]
    assert x_train["c=x"].tolist() == [1.0, 0.0, 0.0]
    # an unseen test category gets all-zero indicators; missing stays missing in numbers
    assert x_test[["c=x", "c=y"]].to_numpy().tolist() == [[0.0, 0.0]]
    assert np.isnan(x_train.loc[1, "a"])


def test_missing_indicators_only_for_columns_missing_in_training():
    x_train = pd.DataFrame({"a": [1.0, np.nan], "b": [1.0, 2.0]})
    x_test = pd.DataFrame({"a": [np.nan, 1.0], "b": [np.nan, 2.0]})
    tr, te = M.add_missing_indicators(x_train, x_test)
    assert list(tr.columns) == ["a", "b", "a_missing"]
    assert te["a_missing"].tolist() == [1.0, 0.0]


def test_impute_and_standardize_use_training_statistics():
    x_train = pd.DataFrame({"a": [1.0, 3.0, np.nan, 5.0], "k": [2.0, 2.0, 2.0, 2.0]})
    x_test = pd.DataFrame({"a": [np.nan], "k": [7.0]})
    tr, te = M.impute_median(x_train, x_test)
    assert tr["a"].tolist() == [1.0, 3.0, 3.0, 5.0] and te["a"].tolist() == [3.0]
    tr, te = M.standardize(tr, te)
    assert tr["a"].mean() == pytest.approx(0.0)
    assert tr["a"].std(ddof=0) == pytest.approx(1.0)
    assert te["k"].tolist() == [5.0]  # constant column: centred, scale 1


def test_balanced_weights_match_scikit_learn():
    y = np.array([0, 0, 0, 1, 0, 1, 0])
    np.testing.assert_allclose(M.balanced_weights(y), compute_sample_weight("balanced", y))


def test_oversample_and_undersample_counts():
    x = pd.DataFrame({"v": np.arange(10.0)})
    y = np.array([1, 1, 0, 0, 0, 0, 0, 0, 0, 0])
    xo, yo = M.oversample_minority(x, y, seed=1)
    assert yo.sum() == 8 and (yo == 0).sum() == 8 and len(xo) == 16
    xu, yu = M.undersample_majority(x, y, seed=1, keep=0.0)
    assert yu.tolist() == [1, 1] and xu["v"].tolist() == [0.0, 1.0]


def test_rank_average_is_uniform_on_0_1_and_keeps_order():
    rng = np.random.default_rng(0)
    p1 = rng.beta(1, 8, 1000)  # low event probabilities
    r = M.rank_average([p1, p1])
    assert r.min() == pytest.approx(1 / 1000) and r.max() == 1.0
    # ranks of distinct values are exactly 1/n, ..., n/n: mean (n+1)/(2n), whatever p looked like
    assert r.mean() == pytest.approx(1001 / 2000)
    assert np.array_equal(np.argsort(r, kind="stable"), np.argsort(p1, kind="stable"))


def test_weighted_average_normalises_weights():
    out = M.weighted_average([np.array([0.0, 1.0]), np.array([1.0, 1.0])], [3, 1])
    np.testing.assert_allclose(out, [0.25, 1.0])


def test_prevalence_correction_hand_value_and_identity():
    # p = 0.5 trained at 50% events, true rate 20%: odds 1 * (0.25 / 1) -> p = 0.2
    assert M.prevalence_correction(np.array([0.5]), 0.2, 0.5)[0] == pytest.approx(0.2)
    p = np.array([0.1, 0.7])
    np.testing.assert_allclose(M.prevalence_correction(p, 0.3, 0.3), p)


def test_platt_and_isotonic_are_monotone_calibrators():
    rng = np.random.default_rng(1)
    p = rng.uniform(0, 1, 400)
    y = (rng.uniform(0, 1, 400) < p**2).astype(int)
    iso = M.fit_isotonic(p, y)
    assert np.all(np.diff(iso.predict(np.sort(p))) >= 0)
    platt = M.fit_platt(p, y)
    out = M.apply_platt(platt, np.sort(p))
    assert np.all(np.diff(out) >= 0) and out.min() > 0 and out.max() < 1


@settings(max_examples=40, deadline=None)
@given(
    y=st.lists(st.integers(0, 1), min_size=2, max_size=40),
    data=st.data(),
)
def test_min_se_ppv_matches_metrics(y, data):
    labels = data.draw(st.lists(st.integers(0, 1), min_size=len(y), max_size=len(y)))
    y, labels = np.array(y), np.array(labels)
    expected = metrics.min_se_ppv(y, labels) if (y.sum() or labels.sum()) else 0.0
    if np.isnan(expected):
        expected = 0.0
    assert M.min_se_ppv(y, labels) == pytest.approx(expected)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.floats(0, 1)), min_size=1, max_size=60))
@example([(0, 0.3), (1, 0.25)])  # 0.3 lies below the float edge 0.30000000000000004: one bin
@example([(1, 1.0), (0, 0.9), (0, 0.0)])
def test_agent_ece_matches_metrics_ece(pairs):
    y = np.array([a for a, _ in pairs])
    p = np.array([b for _, b in pairs])
    assert M.ece_equal_width(y, p) == pytest.approx(metrics.ece(y, p), abs=1e-12)


def _hourly_case(draw_counts, rng):
    ids, labels, alarms = [], [], []
    for k, (n, onset) in enumerate(draw_counts):
        for t in range(n):
            ids.append(f"p{k}")
            labels.append(int(onset is not None and t >= onset))
            alarms.append(int(rng.random() < 0.3))
    return np.array(ids), np.array(labels), np.array(alarms)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 30), st.one_of(st.none(), st.integers(0, 25))),
        min_size=1,
        max_size=12,
    ),
    st.integers(0, 10_000),
)
def test_agent_utility_matches_the_toolkit_metric(patients, seed):
    """The agents' own 2019 utility equals the toolkit's reference implementation."""
    ids, labels, alarms = _hourly_case(patients, np.random.default_rng(seed))
    ours = M.sepsis_utility_score(ids, labels, alarms)
    if labels.sum() == 0:
        assert np.isnan(ours)
        return
    assert ours == pytest.approx(metrics.sepsis_utility(ids, labels, alarms), abs=1e-9)


def test_agent_utility_test_vector_s19():
    """docs/reference_values.md, S19: utility 0.981905 for the two-patient example."""
    ids = np.array(["A"] * 30 + ["B"] * 20)
    labels = np.array([0] * 20 + [1] * 10 + [0] * 20)
    alarms = np.array([0] * 16 + [1] * 14 + [0] * 17 + [1] * 3)
    assert M.sepsis_utility_score(ids, labels, alarms) == pytest.approx(0.981905, abs=1e-6)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(1, 9), min_size=1, max_size=8),
    st.integers(1, 5),
    st.integers(0, 1000),
)
@example([1, 2], 5, 0)  # fewer rows in the whole file than the window
def test_rolling_features_match_pandas_groupby_rolling(lengths, window, seed):
    rng = np.random.default_rng(seed)
    ids = np.repeat([f"p{i}" for i in range(len(lengths))], lengths)
    vals = rng.normal(size=(len(ids), 2))
    vals[rng.random(vals.shape) < 0.3] = np.nan
    frame = pd.DataFrame({"pid": ids, "a": vals[:, 0], "b": vals[:, 1]})
    out = M.add_rolling_features(frame, "pid", ["a", "b"], window)
    g = frame.groupby("pid")[["a", "b"]]
    mean = g.rolling(window, min_periods=1).mean().reset_index(level=0, drop=True).sort_index()
    high = g.rolling(window, min_periods=1).max().reset_index(level=0, drop=True).sort_index()
    np.testing.assert_allclose(out[f"a_mean{window}h"], mean["a"], equal_nan=True)
    np.testing.assert_allclose(out[f"b_max{window}h"], high["b"], equal_nan=True)


def test_forward_fill_stays_within_patient_and_deltas_start_missing():
    frame = pd.DataFrame({"pid": ["a", "a", "b", "b"], "v": [1.0, np.nan, np.nan, 4.0]})
    filled = M.forward_fill(frame, "pid", ["v"])
    assert filled["v"].tolist()[:2] == [1.0, 1.0] and np.isnan(filled["v"].iloc[2])
    deltas = M.add_hourly_deltas(filled, "pid", ["v"])
    assert np.isnan(deltas["v_delta"].iloc[0]) and np.isnan(deltas["v_delta"].iloc[2])


def test_whole_stay_max_uses_future_hours_but_rolling_does_not():
    """The real-time rule: truncating a stay changes the stay maximum at earlier hours only for
    the whole-stay feature."""
    full = pd.DataFrame({"pid": ["a"] * 4, "v": [1.0, 2.0, 9.0, 3.0]})
    cut = full.iloc[:2]
    stay_full = M.add_whole_stay_max(full, "pid", ["v"])["v_stay_max"].iloc[:2].tolist()
    stay_cut = M.add_whole_stay_max(cut, "pid", ["v"])["v_stay_max"].tolist()
    assert stay_full == [9.0, 9.0] and stay_cut == [2.0, 2.0]
    roll_full = M.add_rolling_features(full, "pid", ["v"], 3)["v_max3h"].iloc[:2].tolist()
    roll_cut = M.add_rolling_features(cut, "pid", ["v"], 3)["v_max3h"].tolist()
    assert roll_full == roll_cut


def test_person_period_censoring_variants_by_hand():
    x = pd.DataFrame({"f": [0.0, 1.0]})
    cuts = np.array([0.0, 1.0, 2.0, 3.0, 10.0])
    durations = np.array([1.5, 2.5])  # patient 0 dies in interval 1; patient 1 censored in 2
    events = np.array([1, 0])
    rows, target = M.person_period(x, durations, events, cuts, "correct")
    assert rows["interval"].tolist() == [0, 1, 0, 1, 2]
    assert target.tolist() == [0, 1, 0, 0, 0]
    _, as_death = M.person_period(x, durations, events, cuts, "censored_as_death")
    assert as_death.tolist() == [0, 1, 0, 0, 1]  # the censored patient "dies" at censoring
    rows_s, as_surv = M.person_period(x, durations, events, cuts, "censored_as_survivor")
    # the censored patient is a known survivor of every later interval
    assert rows_s["interval"].tolist() == [0, 1, 0, 1, 2, 3]
    assert as_surv.tolist() == [0, 1, 0, 0, 0, 0]


def test_discrete_curves_are_survival_curves():
    rng = np.random.default_rng(3)
    x = pd.DataFrame({"f": rng.normal(size=200)})
    durations = rng.exponential(5, 200)
    events = (rng.random(200) < 0.7).astype(int)
    cuts = M.interval_cuts(durations, events, 6)
    pp_x, pp_y = M.person_period(x, durations, events, cuts, "correct")
    model = M.fit_logistic(pp_x, pp_y, {"C": 1.0}, 0)
    grid = np.linspace(0, durations.max(), 25)
    curves = M.discrete_curves(model, x, cuts, grid)
    assert curves.shape == (200, 25)
    assert np.all(np.diff(curves, axis=1) <= 0) and curves.min() >= 0 and curves.max() <= 1
    assert np.allclose(curves[:, 0], 1.0)


def test_survival_concordance_is_lifelines_on_curve_area():
    rng = np.random.default_rng(4)
    curves = np.sort(rng.uniform(size=(50, 6)), axis=1)[:, ::-1]
    t = rng.exponential(3, 50)
    e = (rng.random(50) < 0.6).astype(int)
    expected = concordance_index(t, curves.sum(axis=1), e)
    assert M.survival_concordance(t, e, curves) == pytest.approx(expected)


def test_writers_round_and_keep_headers():
    ids = pd.DataFrame({"pid": ["a", "b"]})
    curves = np.array([[1.0, 0.123456789], [1.0, 0.5]])
    table = M.survival_table(ids, curves, ["0.0", "4.060606060606062"])
    assert list(table.columns) == ["pid", "0.0", "4.060606060606062"]
    assert table["4.060606060606062"].tolist() == [0.1235, 0.5]
    prob = M.probability_table(ids, np.array([0.1234567, 1.2]), [0, 1], "P", "L")
    assert prob["P"].tolist() == [0.123457, 1.0] and prob["L"].tolist() == [0, 1]
