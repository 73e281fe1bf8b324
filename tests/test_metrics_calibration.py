"""Binary ECE / reliability bins / Brier, and the survival KM-ECE of App. F: verified vectors
(docs/reference_values.md: "Binary ECE", C1), an independent implementation written here, lifelines
KM as reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from references import require

from automd_analysis.metrics import (
    UndefinedMetricWarning,
    brier,
    calibration_bins,
    ece,
    survival_ece,
)

# --- binary ECE ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "y", "n_bins", "expected"),
    [
        # docs/reference_values.md, Binary ECE: netcal values (torchmetrics keeps p = 1.0 apart)
        ([1, 1, 0.95, 0.9, 0.2, 0.1], [1, 0, 1, 1, 0, 0], 10, 0.191667),
        ([1, 0.97, 0.96], [0, 1, 1], 15, 0.310000),
        ([0.25, 0.25, 0.55, 0.75, 0.75], [0, 0, 1, 1, 1], 2, 0.29),
        ([0.5, 0.5, 0.49, 0.51], [1, 0, 0, 1], 2, 0.245),
    ],
)
def test_ece_verified_vectors(p, y, n_bins, expected):
    assert ece(y, p, n_bins) == pytest.approx(expected, abs=5e-7)


def test_ece_hand_computation_with_edges():
    # p = 0.1 sits on an interior edge -> upper bin [0.1, 0.2); p = 1.0 -> last bin; 0.0 -> first bin
    p = [0.0, 0.1, 0.15, 1.0, 0.95]
    y = [0, 1, 0, 1, 0]
    bins = calibration_bins(y, p)
    assert bins.n.tolist() == [1, 2, 0, 0, 0, 0, 0, 0, 0, 2]
    assert bins.mean_pred[1] == pytest.approx(0.125)
    assert bins.observed[9] == 0.5
    assert np.isnan(bins.mean_pred[2]) and np.isnan(bins.observed[2])
    expected = (1 * 0.0 + 2 * abs(0.125 - 0.5) + 2 * abs(0.975 - 0.5)) / 5
    assert ece(y, p) == pytest.approx(expected, abs=1e-15)
    assert bins.ece == ece(y, p)


def test_calibration_bins_layout():
    bins = calibration_bins([0, 1], [0.3, 0.7], n_bins=4)
    assert bins.bin.tolist() == [1, 2, 3, 4]
    assert bins.lo.tolist() == [0.0, 0.25, 0.5, 0.75]
    assert bins.hi.tolist() == [0.25, 0.5, 0.75, 1.0]
    assert set(bins.as_dict()) == {"bin", "lo", "hi", "n", "mean_pred", "observed"}


def loop_ece(y, p, n_bins):
    """Straightforward per-bin loop with the same [lo, hi) / last-closed convention."""
    edges = np.linspace(0, 1, n_bins + 1)
    total = 0.0
    for b in range(n_bins):
        last = b == n_bins - 1
        members = [i for i in range(len(p)) if edges[b] <= p[i] and (p[i] < edges[b + 1] or last)]
        if members:
            total += (
                len(members)
                / len(p)
                * abs(np.mean([p[i] for i in members]) - np.mean([y[i] for i in members]))
            )
    return total


def test_ece_matches_loop_and_numpy_histogram():
    rng = np.random.default_rng(11)
    for _ in range(50):
        n = int(rng.integers(1, 200))
        p = rng.choice(np.r_[np.linspace(0, 1, 21), rng.random(5)], n)  # many values on edges
        y = (rng.random(n) < p).astype(int)
        n_bins = int(rng.integers(1, 16))
        assert ece(y, p, n_bins) == pytest.approx(loop_ece(y, p, n_bins), abs=1e-12)
        counts, _ = np.histogram(p, bins=np.linspace(0, 1, n_bins + 1))
        assert calibration_bins(y, p, n_bins).n.tolist() == counts.tolist()


def test_brier_hand_value_and_sklearn():
    assert brier([1, 0, 1], [0.9, 0.2, 0.4]) == pytest.approx((0.01 + 0.04 + 0.36) / 3)
    metrics = require("sklearn.metrics")
    rng = np.random.default_rng(1)
    p = rng.random(500)
    y = rng.integers(0, 2, 500)
    assert brier(y, p) == pytest.approx(metrics.brier_score_loss(y, p), abs=1e-15)


@pytest.mark.parametrize("fn", [ece, brier, calibration_bins])
@pytest.mark.parametrize(
    ("y", "p", "match"),
    [
        ([0, 1], [0.5, 1.5], r"y_prob must be probabilities in \[0, 1\]; y_prob\[1\] is 1.5"),
        ([0, 1], [0.5, np.nan], r"y_prob\[1\]"),
        ([0, 3], [0.5, 0.5], r"y_true\[1\] is 3"),
        ([0, 1, 1], [0.5, 0.5], "same length"),
        ([], [], "empty"),
    ],
)
def test_binary_calibration_malformed(fn, y, p, match):
    with pytest.raises(ValueError, match=match):
        fn(y, p)


@pytest.mark.parametrize("n_bins", [0, -1, 2.5, True])
def test_bad_n_bins(n_bins):
    with pytest.raises(ValueError, match="n_bins"):
        ece([0, 1], [0.1, 0.9], n_bins)


# --- survival ECE ------------------------------------------------------------------------------


def independent_survival_ece(
    t, e, surv, grid, quantiles=(0.25, 0.5, 0.75), n_groups=10, min_group=5
):
    """The documented rule step by step, with lifelines' KaplanMeierFitter for the within-group KM.

    Groups: sorted by prediction, cut where np.array_split cuts, each cut that splits equal
    predictions moved forward past them (written as a plain loop, independently of the package).
    """
    lifelines = require("lifelines")
    event_times = t[e == 1]
    errors = []
    for q in quantiles:
        tq = np.quantile(event_times, q)
        dist = [abs(g - tq) for g in grid]
        g = dist.index(min(dist))  # first minimiser: the earlier point on an exact tie
        pred = surv[:, g]
        order = sorted(range(len(pred)), key=lambda i: pred[i])  # Python's sort is stable
        nominal = np.array_split(np.array(order), n_groups)
        groups, start = [], 0
        for _ in nominal:
            end = max(start, sum(len(p) for p in nominal[: len(groups) + 1]))
            while 0 < end < len(order) and pred[order[end]] == pred[order[end - 1]]:
                end += 1  # never split a block of equal predictions
            groups.append(np.array(order[start:end], dtype=int))
            start = end
        kept = [idx for idx in groups if len(idx) >= min_group]
        total = sum(len(idx) for idx in kept)
        err = 0.0
        for idx in kept:
            kmf = lifelines.KaplanMeierFitter().fit(t[idx], e[idx])
            km = float(kmf.predict(grid[g]))
            err += len(idx) / total * abs(float(np.mean(pred[idx])) - km)
        errors.append(err)
    return float(np.mean(errors))


@pytest.mark.reference
def test_survival_ece_matches_independent_implementation_with_lifelines_km():
    rng = np.random.default_rng(42)
    for _ in range(12):
        n = int(rng.integers(50, 250))
        risk = rng.normal(size=n)
        t = np.round(rng.exponential(10 * np.exp(-risk)), int(rng.integers(0, 2)))
        e = (rng.random(n) < rng.uniform(0.2, 0.9)).astype(int)
        e[0] = 1
        grid = np.unique(np.r_[0.0, np.quantile(t, np.linspace(0, 1, int(rng.integers(5, 40))))])
        surv = np.exp(-np.outer(np.exp(risk), grid) / rng.uniform(5, 20))
        if rng.random() < 0.5:
            surv = np.round(surv, 1)  # tied predictions exercise the stable sort
        got = survival_ece(t, e, surv, grid)
        assert got.ece == pytest.approx(independent_survival_ece(t, e, surv, grid), abs=1e-12)


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(20, 160),
    decimals=st.integers(0, 2),
)
@settings(max_examples=40, deadline=None)
def test_survival_ece_does_not_depend_on_row_order(seed, n, decimals):
    """Ties in predicted survival are grouped together, so any permutation gives the same value."""
    rng = np.random.default_rng(seed)
    risk = rng.normal(size=n)
    t = np.round(rng.exponential(10 * np.exp(-risk)), 0)
    e = (rng.random(n) < 0.6).astype(int)
    e[0] = 1
    grid = np.unique(np.r_[0.0, np.quantile(t, np.linspace(0, 1, 12))])
    surv = np.round(np.exp(-np.outer(np.exp(risk), grid) / 10), decimals)  # many ties
    base = survival_ece(t, e, surv, grid, min_group=1)
    for _ in range(3):
        p = rng.permutation(n)
        again = survival_ece(t[p], e[p], surv[p], grid, min_group=1)
        assert again.ece == base.ece or (np.isnan(again.ece) and np.isnan(base.ece))
        assert np.array_equal(again.groups["n"], base.groups["n"])


def test_survival_ece_keeps_tied_predictions_in_one_group():
    # 20 patients, predictions 0.3 (x12) and 0.8 (x8): array_split would cut the 0.3 block
    t = np.arange(1.0, 21.0)
    e = np.ones(20, dtype=int)
    grid = np.array([0.0, 10.0])
    surv = np.column_stack([np.ones(20), np.r_[np.full(12, 0.3), np.full(8, 0.8)]])
    res = survival_ece(t, e, surv, grid, quantiles=(0.5,), n_groups=2, min_group=1)
    # the 0.3 block stays whole (12 patients), the second group holds the 8 others
    assert res.groups["n"].tolist() == [12, 8]
    assert res.groups["mean_pred"].tolist() == pytest.approx([0.3, 0.8], abs=1e-15)


def test_c1_matches_dcm_km_ece_with_four_groups():
    # docs/reference_values.md, C1: DCM KM-ECE with 4 quantile bins at t* = 3 is 0.321483; with 20
    # distinct predictions its bins are the 4 equal-size groups of survival_ece.
    t = np.array(
        [0.5, 1, 1.5, 2, 2.5, 3.5, 4, 5, 6, 7, 0.8, 1.2, 2.2, 2.8, 3.2, 4.5, 5.5, 6.5, 8, 9]
    )
    e = np.array([1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 1, 1, 0])
    pred_event = np.round(np.linspace(0.9, 0.05, 20), 4)
    grid = np.array([0.0, 3.0, 20.0])
    surv = np.column_stack([np.ones(20), 1 - pred_event, 1 - pred_event])
    res = survival_ece(t, e, surv, grid, quantiles=(0.5,), n_groups=4, min_group=1)
    assert res.per_time["time"].tolist() == [3.0]
    assert res.ece == pytest.approx(0.321483, abs=5e-7)
    assert res.groups["km"].tolist() == pytest.approx([0.0, 1.0, 0.266667, 1.0], abs=5e-7)
    assert res.groups["mean_pred"].tolist() == pytest.approx(
        [0.18946, 0.41316, 0.63684, 0.86054], abs=5e-6
    )


def test_survival_ece_hand_example_with_skipped_group_and_carry_forward():
    # 12 patients in 2 groups of 6; all three quantile times map to grid point 3.
    t = np.array([1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6], dtype=float)
    e = np.array([1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    grid = np.array([0.0, 3.0, 10.0])
    s_low, s_high = 0.2, 0.9
    surv = np.column_stack(
        [
            np.ones(12),
            np.r_[np.full(6, s_low), np.full(6, s_high)],
            np.r_[np.full(6, 0.1), np.full(6, 0.8)],
        ]
    )
    # event times 1..6: quantiles 2.25, 3.5, 4.75 -> nearest grid point 3 each time
    res = survival_ece(t, e, surv, grid, n_groups=2, min_group=6)
    assert res.per_time["time"].tolist() == [3.0, 3.0, 3.0]
    # low group = all events: KM(3) = 1/2; high group = all censored: KM = 1
    assert res.ece == pytest.approx(0.5 * abs(0.2 - 0.5) + 0.5 * abs(0.9 - 1.0))
    # 3 groups: the cuts (after 4 and 8) fall inside the two blocks of tied predictions and
    # move to their ends, giving groups of 6, 6 and 0; with min_group 7 all are skipped
    three = survival_ece(t, e, surv, grid, n_groups=3, min_group=5)
    assert three.groups["n"].tolist()[:3] == [6, 6, 0]
    assert three.ece == pytest.approx(res.ece)
    with pytest.warns(UndefinedMetricWarning, match="fewer than min_group"):
        assert np.isnan(survival_ece(t, e, surv, grid, n_groups=3, min_group=7).ece)


def test_survival_ece_km_carried_forward_and_one_before_first_time():
    # event times 1, 8, 9: the 25th percentile 4.5 is nearest grid point 5.
    t = np.array([1.0, 2.0, 8.0, 9.0])
    e = np.array([1, 0, 1, 1])
    grid = np.array([0.0, 5.0, 10.0])
    surv = np.array([[1, 0.3, 0.1], [1, 0.3, 0.1], [1, 0.8, 0.5], [1, 0.9, 0.5]])
    res = survival_ece(t, e, surv, grid, quantiles=(0.25,), n_groups=2, min_group=1)
    assert res.per_time["time"].tolist() == [5.0]
    # group 1 (T = 1, 2): KM 0.5 carried past its last time; group 2 (T = 8, 9): KM 1 before any time
    assert res.groups["km"].tolist() == [0.5, 1.0]
    assert res.ece == pytest.approx(0.5 * abs(0.3 - 0.5) + 0.5 * abs(0.85 - 1.0))


def test_survival_ece_nearest_grid_tie_takes_earlier_point():
    t = np.array([1.0, 3.0, 5.0, 7.0, 9.0])
    e = np.ones(5, dtype=int)
    grid = np.array([0.0, 4.0, 6.0])  # median event time 5 is equally near 4 and 6
    surv = np.tile([1.0, 0.5, 0.4], (5, 1))
    res = survival_ece(t, e, surv, grid, quantiles=(0.5,), n_groups=1, min_group=1)
    assert res.per_time["grid_index"].tolist() == [1]
    assert res.ece == pytest.approx(abs(0.5 - 0.6))  # KM at 4: 1 - 2/5


def test_survival_ece_detail_columns():
    rng = np.random.default_rng(0)
    n = 120
    t = rng.exponential(5, n)
    e = rng.integers(0, 2, n)
    grid = np.linspace(0, 15, 16)
    surv = np.exp(-np.outer(rng.uniform(0.05, 0.3, n), grid))
    res = survival_ece(t, e, surv, grid)
    assert set(res.groups) == {
        "quantile", "time", "group", "n", "mean_pred", "km", "abs_diff", "kept", "weight"
    }  # fmt: skip
    assert len(res.groups["group"]) == 30
    for q in (0.25, 0.5, 0.75):
        w = res.groups["weight"][res.groups["quantile"] == q]
        assert w.sum() == pytest.approx(1.0)
    assert float(res) == res.ece == pytest.approx(np.mean(res.per_time["ece"]))


def test_survival_ece_without_events_is_nan_with_warning():
    with pytest.warns(UndefinedMetricWarning, match="no event"):
        res = survival_ece([1.0, 2.0], [0, 0], np.full((2, 2), 0.5), [0.0, 1.0])
    assert np.isnan(res.ece)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"quantiles": (0.5, 1.5)}, "quantiles"),
        ({"n_groups": 0}, "n_groups"),
        ({"min_group": 1.5}, "min_group"),
        ({"surv": np.full((3, 2), 1.01)}, r"surv\[0, 0\]"),
        ({"time_grid": [0.0, 0.0]}, "strictly increasing"),
    ],
)
def test_survival_ece_malformed(kwargs, match):
    args = {
        "durations": [1.0, 2.0, 3.0],
        "events": [1, 0, 1],
        "surv": np.full((3, 2), 0.5),
        "time_grid": [0.0, 1.0],
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        survival_ece(**args)


def test_decimal_edges_follow_numpy_histogram():
    # 0.3, 0.6 and 0.7 are below their float64 linspace edges (0.30000000000000004, ...), so they
    # fall in the lower bin, exactly as numpy.histogram bins them (docs/decisions.md item 12).
    p = np.array([0.3, 0.6, 0.7, 0.2, 0.5])
    bins = calibration_bins(np.zeros(5, dtype=int), p, n_bins=10)
    counts, _ = np.histogram(p, bins=np.linspace(0, 1, 11))
    got = np.zeros(10, dtype=int)
    got[np.asarray(bins.bin) - 1] = np.asarray(bins.n)
    np.testing.assert_array_equal(got, counts)
    assert got[2] == 2 and got[3] == 0  # 0.2 and 0.3 share [0.2, 0.3)
