"""Survival calibration beyond the KM-ECE: D-calibration (SurvivalEVAL's definition re-implemented
naively here, verified histograms), calibration at a horizon (lifelines KM, statsmodels PHReg),
pseudo-observations (lifelines leave-one-out) and the pseudo-value ICI."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifelines import KaplanMeierFitter
from scipy.stats import chisquare
from statsmodels.duration.hazard_regression import PHReg

from automd_analysis.metrics import (
    UndefinedMetricWarning,
    cox_calibration_slope,
    d_calibration,
    km_pseudo_observations,
    smoothed_survival_calibration_curve,
    survival_calibration_at,
    survival_ici_at,
)
from automd_analysis.metrics._loess import loess_fit


def _cohort(n, seed, *, scale=1.0, censor_rate=0.3, grid_points=41):
    """Exponential cohort with a model whose hazard is `scale` times the truth (1 = calibrated)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, n)
    rate = 0.1 * np.exp(0.8 * x)
    event_time = rng.exponential(1 / rate)
    censor_time = rng.exponential(1 / (censor_rate * 0.1), n)
    t = np.minimum(event_time, censor_time)
    e = (event_time <= censor_time).astype(np.int8)
    grid = np.linspace(0.0, 30.0, grid_points)
    surv = np.exp(-np.outer(scale * rate, grid))
    return t, e, surv, grid


def _undefined(fn, *args, **kwargs):
    with pytest.warns(UndefinedMetricWarning) as record:
        out = fn(*args, **kwargs)
    return out, " ".join(str(w.message) for w in record)


# --- D-calibration ------------------------------------------------------------------------------


def _survivaleval_style_hist(s_at_t, events, n_bins):
    """D-calibration histogram written from the SurvivalEVAL definition (bins from the top,
    [lo, hi) with the lower edge inclusive, S = 1 in the top bin), as a plain loop."""
    edges = np.linspace(1, 0, n_bins + 1)
    hist = np.zeros(n_bins)
    for s, ev in zip(s_at_t, events, strict=True):
        # lower edge inclusive: a value on an edge belongs to the bin below it; S = 1 to the top
        k = next((i for i in range(n_bins) if edges[i] > s >= edges[i + 1]), 0)
        if ev:
            hist[k] += 1
        elif s == 1:
            hist += 1 / n_bins
        elif s == 0:
            hist[-1] += 1
        else:
            hist[k] += (s - edges[k + 1]) / s
            hist[k + 1 :] += 1 / (n_bins * s)
    return hist[::-1]  # ours: bin 1 = lowest survival


def _one_column(s_at_t, t):
    """A one-point grid at time 0 so that S_i(T_i) is exactly the given value."""
    return np.asarray(s_at_t, dtype=float)[:, None], np.array([0.0]), np.asarray(t, dtype=float)


def test_d_calibration_reference_histograms():
    # SurvivalEVAL v0.8.0 histograms (top bin first), reversed to our order (lowest first)
    surv, grid, t = _one_column([1, 0.9, 0.85, 0.5, 0.1, 0], [1, 2, 3, 4, 5, 6])
    res = d_calibration(t, [1] * 6, surv, grid, n_bins=10)
    # 0.9 sits on an edge: SurvivalEVAL's descending edges hold 0.9 exactly (-> [0.9, 1]); ours
    # (linspace(0, 1, 11)) too, so both put it in the top bin
    assert res.histogram.tolist() == [1, 1, 0, 0, 0, 1, 0, 0, 1, 2]
    surv, grid, t = _one_column([0.5, 0.25], [1, 2])
    res = d_calibration(t, [0, 0], surv, grid, n_bins=4)
    np.testing.assert_allclose(res.histogram, [1.5, 0.5, 0, 0], atol=1e-15)


def test_d_calibration_statistic_is_scipy_chisquare():
    t, e, surv, grid = _cohort(3000, 1, scale=1.6)
    res = d_calibration(t, e, surv, grid, n_bins=10)
    ref = chisquare(res.histogram)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert res.divergence == pytest.approx(res.statistic / 3000)
    assert res.histogram.sum() == pytest.approx(3000)


def test_d_calibration_matches_the_survivaleval_definition_off_the_edges():
    t, e, surv, grid = _cohort(400, 2, scale=0.7)
    res = d_calibration(t, e, surv, grid, n_bins=10, interpolation="step")
    idx = np.clip(np.searchsorted(grid, t, side="right") - 1, 0, len(grid) - 1)
    s_at_t = surv[np.arange(len(t)), idx]
    interior = (s_at_t > 0) & (s_at_t < 1)  # 0 and 1 are binned alike by both conventions
    on_edge = np.isclose(s_at_t * 10, np.round(s_at_t * 10), atol=1e-12, rtol=0)
    assert not np.any(on_edge & interior)
    np.testing.assert_allclose(res.histogram, _survivaleval_style_hist(s_at_t, e, 10), atol=1e-12)


@pytest.mark.slow
def test_d_calibration_separates_calibrated_from_miscalibrated():
    # a fine grid: read as steps, a coarse grid overstates survival at T_i by itself
    t, e, surv, grid = _cohort(4000, 3, grid_points=3001)
    calibrated = d_calibration(t, e, surv, grid)
    wrong = d_calibration(t, e, np.exp(-2.0 * -np.log(np.maximum(surv, 1e-300))), grid)
    assert calibrated.p_value > 0.01 > wrong.p_value
    assert calibrated.divergence < wrong.divergence


def test_d_calibration_edge_cases():
    # all censored: defined (each patient spread over the bins below its S)
    surv, grid, t = _one_column([1.0, 0.0, 0.6], [1, 2, 3])
    res = d_calibration(t, [0, 0, 0], surv, grid, n_bins=5)
    expected = np.full(5, 0.2)  # S = 1: uniform
    expected[0] += 1.0  # S = 0: all in the lowest bin
    expected[3] += (0.6 - 0.6) / 0.6  # S = 0.6 sits on the lower edge of bin 4: 0 there
    expected[:3] += 1 / (5 * 0.6)
    np.testing.assert_allclose(res.histogram, expected, atol=1e-12)
    assert res.n_events == 0 and np.isfinite(res.statistic)
    with pytest.raises(ValueError, match="n_bins"):
        d_calibration(t, [0, 0, 0], surv, grid, n_bins=1)


def test_d_calibration_reading_between_grid_times():
    grid = np.array([0.0, 10.0, 20.0])
    surv = np.array([[1.0, 0.75, 0.15], [1.0, 0.45, 0.05], [1.0, 0.9, 0.8]])
    t = [15.0, 25.0, 2.0]
    # step: T = 15 reads the value at 10; T = 25 carries the last value forward
    res = d_calibration(t, [1, 1, 1], surv, grid, n_bins=4, interpolation="step")
    assert res.histogram.tolist() == [1.0, 0.0, 0.0, 2.0]
    # linear: 0.75 + 0.5 (0.15 - 0.75) = 0.45; 0.05 (carried forward); 1 + 0.2 (0.9 - 1) = 0.98
    res = d_calibration(t, [1, 1, 1], surv, grid, n_bins=4)
    assert res.histogram.tolist() == [1.0, 1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="interpolation"):
        d_calibration(t, [1, 1, 1], surv, grid, interpolation="spline")


def test_step_reading_on_a_coarse_grid_biases_d_calibration():
    # a calibrated model on a 41-point grid: linear reading passes, step reading is detected
    t, e, surv, grid = _cohort(4000, 3)
    assert d_calibration(t, e, surv, grid).p_value > 0.01
    assert d_calibration(t, e, surv, grid, interpolation="step").p_value < 1e-6


@settings(max_examples=40)
@given(
    st.lists(
        st.tuples(st.floats(0.0, 1.0), st.integers(0, 1)),
        min_size=1,
        max_size=40,
    ),
    st.integers(2, 20),
)
def test_d_calibration_mass_and_bounds(data, n_bins):
    surv, grid, t = _one_column([d[0] for d in data], np.arange(len(data)))
    res = d_calibration(t, [d[1] for d in data], surv, grid, n_bins=n_bins)
    assert res.histogram.sum() == pytest.approx(len(data), rel=1e-12)
    assert np.all(res.histogram >= -1e-12)
    assert 0.0 <= res.p_value <= 1.0
    assert res.statistic <= len(data) * (n_bins - 1) + 1e-9  # all mass in one bin


# --- pseudo-observations ------------------------------------------------------------------------


def _lifelines_pseudo(t, e, h):
    def risk(tt, ee):
        return 1.0 - float(KaplanMeierFitter().fit(tt, ee).predict(h))

    n = len(t)
    full = risk(t, e)
    return np.array([n * full - (n - 1) * risk(np.delete(t, i), np.delete(e, i)) for i in range(n)])


@pytest.mark.slow
@settings(max_examples=25)
@given(
    st.lists(st.tuples(st.integers(1, 8), st.integers(0, 1)), min_size=2, max_size=25),
    st.sampled_from([0.5, 2.0, 3.5, 5.0, 8.0, 20.0]),
)
def test_pseudo_observations_match_lifelines_leave_one_out(data, h):
    t = np.array([d[0] for d in data], dtype=float)  # heavy ties
    e = np.array([d[1] for d in data])
    ours = km_pseudo_observations(t, e, h)
    np.testing.assert_allclose(ours, _lifelines_pseudo(t, e, h), atol=1e-9)


def test_pseudo_observations_without_censoring_are_indicators():
    t = np.array([1.0, 2, 2, 3, 5, 8])
    theta = km_pseudo_observations(t, np.ones(6, int), 2.5)
    np.testing.assert_allclose(theta, (t <= 2.5).astype(float), atol=1e-12)


# --- calibration at a horizon -------------------------------------------------------------------


def test_survival_calibration_at_against_lifelines_and_phreg():
    t, e, surv, grid = _cohort(1500, 4, scale=1.5)
    h = 10.0
    res = survival_calibration_at(t, e, surv, grid, h)
    km = KaplanMeierFitter().fit(t, e)
    g = np.searchsorted(grid, h, side="right") - 1
    pred = surv[:, g]
    assert res.grid_time == grid[g]
    assert res.observed_risk == pytest.approx(1 - float(km.predict(h)), abs=1e-12)
    assert res.predicted_risk == pytest.approx(np.mean(1 - pred), abs=1e-14)
    assert res.citl_difference == pytest.approx(res.observed_risk - res.predicted_risk)
    # groups: stable sort by predicted survival, array_split, lifelines KM within each group
    order = np.argsort(pred, kind="stable")
    weighted = 0.0
    for b, idx in enumerate(np.array_split(order, 10)):
        group_km = float(KaplanMeierFitter().fit(t[idx], e[idx]).predict(h))
        assert res.groups["km"][b] == pytest.approx(group_km, abs=1e-12)
        assert res.groups["mean_pred"][b] == pytest.approx(pred[idx].mean(), abs=1e-14)
        weighted += len(idx) * abs(pred[idx].mean() - group_km)
    assert res.ece == pytest.approx(weighted / len(t), abs=1e-12)
    # slope: Cox model (Breslow ties) of the follow-up truncated at h on log(-log S(h))
    x = np.log(-np.log(pred))
    ph = PHReg(
        np.minimum(t, h), x[:, None], status=((e == 1) & (t <= h)).astype(int), ties="breslow"
    )
    fit = ph.fit()
    assert res.slope == pytest.approx(fit.params[0], abs=1e-7)
    assert res.slope_se == pytest.approx(fit.bse[0], rel=1e-6)
    # a model with hazards 1.5x too high is too extreme at every risk: its hazard ratios are right
    # (slope ~ 1) but its risks are too high on average
    assert res.citl_difference < 0


def test_cox_slope_detects_too_extreme_predictions():
    t, e, surv, grid = _cohort(6000, 5)
    lp_exaggerated = np.exp(-np.outer(0.1 * np.exp(1.6 * _cohort_x(6000, 5)), grid))
    ok = survival_calibration_at(t, e, surv, grid, 10.0)
    bad = survival_calibration_at(t, e, lp_exaggerated, grid, 10.0)
    assert ok.slope == pytest.approx(1.0, abs=0.08)
    assert bad.slope == pytest.approx(0.5, abs=0.05)


def _cohort_x(n, seed):
    return np.random.default_rng(seed).normal(0, 1, n)


def test_horizon_beyond_grid_or_follow_up_is_undefined():
    t, e, surv, grid = _cohort(200, 6)
    res, msg = _undefined(survival_calibration_at, t, e, surv, grid, grid[-1] + 1)
    assert np.isnan(res.observed_risk) and np.isnan(res.slope) and "grid" in msg
    short = np.minimum(t, 5.0)
    res, msg = _undefined(survival_calibration_at, short, e, surv, grid, 6.0)
    assert np.isnan(res.ece) and "follow-up" in msg
    res, msg = _undefined(survival_ici_at, short, e, surv, grid, 6.0)
    assert np.isnan(res.ici) and "follow-up" in msg
    with pytest.raises(ValueError, match="horizon"):
        survival_calibration_at(t, e, surv, grid, -1.0)


def test_slope_edge_cases_are_nan_with_a_warning():
    t = np.array([1.0, 2, 3, 4, 5, 6])
    e = np.array([1, 1, 0, 1, 1, 0])
    out, msg = _undefined(cox_calibration_slope, t, e, [0.5, 0.6, 0.0, 0.4, 0.3, 0.9], 10)
    assert np.isnan(out).all() and "clipped" in msg
    out, msg = _undefined(cox_calibration_slope, t, e, [0.5] * 6, 10)
    assert np.isnan(out).all() and "finite maximum" in msg
    out, msg = _undefined(cox_calibration_slope, t, np.zeros(6, int), [0.2, 0.4] * 3, 10)
    assert np.isnan(out).all() and "no event" in msg
    # every event has the highest risk (lowest survival) of its risk set: monotone likelihood
    out, msg = _undefined(cox_calibration_slope, t, e, [0.1, 0.2, 0.5, 0.3, 0.4, 0.9], 10)
    assert np.isnan(out).all()


def test_all_censored_cohort_is_handled():
    t, _, surv, grid = _cohort(100, 7)
    e = np.zeros(100, int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        res = survival_calibration_at(t, e, surv, grid, 5.0)
        ici_res = survival_ici_at(t, e, surv, grid, 5.0)
    assert res.observed_risk == 0.0 and np.isnan(res.slope)
    assert any("no event" in str(w.message) for w in caught)
    # no event by h: every pseudo-observation is 0, so ICI is the mean predicted risk
    g = np.searchsorted(grid, 5.0, side="right") - 1
    assert ici_res.ici == pytest.approx(np.mean(1 - surv[:, g]), abs=1e-9)


# --- survival ICI -------------------------------------------------------------------------------


@pytest.mark.slow
def test_survival_ici_is_loess_of_lifelines_pseudo_values():
    t, e, surv, grid = _cohort(120, 8, scale=1.3)
    h = 7.5
    res = survival_ici_at(t, e, surv, grid, h)
    g = np.searchsorted(grid, h, side="right") - 1
    risk = 1 - surv[:, g]
    theta = _lifelines_pseudo(t, e, h)
    n = len(t)
    q = int(np.floor(0.75 * n))
    smoothed = []
    for x0 in risk:  # naive local quadratic from the definition
        d = np.abs(risk - x0)
        hh = np.sort(d)[q - 1]
        w = np.where(d < hh, (1 - (d / hh) ** 3) ** 3, 0.0)
        design = np.column_stack([np.ones(n), risk - x0, (risk - x0) ** 2])
        sw = np.sqrt(w)
        smoothed.append(np.linalg.lstsq(design * sw[:, None], theta * sw, rcond=None)[0][0])
    diff = np.abs(np.array(smoothed) - risk)
    assert res.ici == pytest.approx(diff.mean(), abs=1e-8)
    assert res.emax == pytest.approx(diff.max(), abs=1e-8)
    assert res.e90 == pytest.approx(np.quantile(diff, 0.9), abs=1e-8)


def test_survival_ici_small_for_calibrated_large_for_miscalibrated():
    t, e, surv, grid = _cohort(5000, 9)
    good = survival_ici_at(t, e, surv, grid, 10.0)
    bad = survival_ici_at(t, e, surv**2.0, grid, 10.0)
    assert good.ici < 0.02 < bad.ici


def test_loess_handles_general_outcomes_like_binary_ones():
    # the binary fast path (positives' x only) and the general path give the same smoother
    rng = np.random.default_rng(10)
    x = rng.random(500)
    y = (rng.random(500) < x).astype(np.int8)
    a = loess_fit(x, y).predict(x)
    b = loess_fit(x, y.astype(float)).predict(x)
    np.testing.assert_allclose(a, b, atol=1e-12)


@pytest.mark.slow
def test_smoothed_survival_curve_is_the_pseudo_value_loess():
    t, e, surv, grid = _cohort(150, 11, scale=1.4)
    h = 7.5
    g = np.searchsorted(grid, h, side="right") - 1
    risk = 1 - surv[:, g]
    theta = _lifelines_pseudo(t, e, h)
    points = np.array([0.0, np.quantile(risk, 0.3), np.median(risk), 0.999])
    curve = smoothed_survival_calibration_curve(t, e, surv, grid, h, points)
    n = len(t)
    q = int(np.floor(0.75 * n))
    for k, x0 in enumerate(points):
        if not risk.min() <= x0 <= risk.max():
            assert np.isnan(curve.observed[k])
            continue
        d = np.abs(risk - x0)
        hh = np.sort(d)[q - 1]
        w = np.where(d < hh, (1 - (d / hh) ** 3) ** 3, 0.0)
        design = np.column_stack([np.ones(n), risk - x0, (risk - x0) ** 2])
        sw = np.sqrt(w)
        fitted = np.linalg.lstsq(design * sw[:, None], theta * sw, rcond=None)[0][0]
        assert curve.observed[k] == pytest.approx(fitted, abs=1e-8)
    res, msg = _undefined(smoothed_survival_calibration_curve, t, e, surv, grid, 1e6)
    assert np.isnan(res.observed).all() and res.x.shape == (101,)


@settings(max_examples=25)
@given(
    st.lists(
        st.tuples(st.integers(1, 10), st.integers(0, 1), st.integers(1, 19)),
        min_size=8,
        max_size=40,
    ),
    st.sampled_from([2.0, 4.5, 7.0]),
    st.data(),
)
def test_horizon_measures_are_permutation_invariant_and_bounded(rows, h, data):
    t = np.array([r[0] for r in rows], dtype=float)
    e = np.array([r[1] for r in rows])
    s_h = np.array([r[2] / 20 for r in rows])
    grid = np.array([0.0, 1.0, 10.0])
    surv = np.column_stack([np.ones(len(t)), s_h, s_h * 0.5])  # S(h) = s_h for 1 <= h < 10
    perm = np.array(data.draw(st.permutations(range(len(t)))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        a = survival_calibration_at(t, e, surv, grid, h, n_groups=3, min_group=1)
        b = survival_calibration_at(t[perm], e[perm], surv[perm], grid, h, n_groups=3, min_group=1)
        ia = survival_ici_at(t, e, surv, grid, h)
        ib = survival_ici_at(t[perm], e[perm], surv[perm], grid, h)
    if h > t.max():  # beyond the follow-up: documented nan
        assert np.isnan([a.observed_risk, a.slope, ia.ici]).all()
        return
    assert a.observed_risk == pytest.approx(b.observed_risk, abs=1e-12)
    assert a.predicted_risk == pytest.approx(b.predicted_risk, abs=1e-12)
    assert -1.0 <= a.citl_difference <= 1.0
    assert (np.isnan(a.slope) and np.isnan(b.slope)) or a.slope == pytest.approx(b.slope, rel=1e-6)
    assert ia.ici == pytest.approx(ib.ici, abs=1e-9)
    assert ia.e50 <= ia.e90 + 1e-12 <= ia.emax + 2e-12
