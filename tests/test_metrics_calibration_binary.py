"""Binary calibration beyond the 10-bin ECE: intercept/slope (statsmodels GLM), Spiegelhalter's z,
equal-mass ECE (sklearn calibration_curve), Brier decomposition, net benefit, ICI and the loess
smoother (statsmodels lowess, a naive weighted least-squares fit written here)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss
from statsmodels.nonparametric.smoothers_lowess import lowess

from automd_analysis.metrics import (
    UndefinedMetricWarning,
    brier,
    brier_decomposition,
    calibration_bins,
    calibration_bins_equal_mass,
    calibration_intercept_slope,
    ece,
    ece_equal_mass,
    ici,
    net_benefit,
    smoothed_calibration_curve,
    spiegelhalter_z,
)
from automd_analysis.metrics._loess import loess_fit


def _sample(n, seed, *, shrink=1.0, shift=0.0):
    rng = np.random.default_rng(seed)
    lp = rng.normal(-1.0, 1.2, n)
    p = 1.0 / (1.0 + np.exp(-lp))
    true = 1.0 / (1.0 + np.exp(-(shift + shrink * lp)))
    y = (rng.random(n) < true).astype(np.int8)
    return y, p


def _glm(y, exog, offset=None, groups=None):
    model = sm.GLM(y, exog, family=sm.families.Binomial(), offset=offset)
    if groups is None:
        return model.fit(tol=1e-12)
    return model.fit(tol=1e-12, cov_type="cluster", cov_kwds={"groups": groups})


# --- calibration intercept and slope ------------------------------------------------------------


@pytest.mark.parametrize(("shrink", "shift"), [(1.0, 0.0), (0.6, 0.3), (1.4, -0.5)])
def test_intercept_slope_match_statsmodels_glm(shrink, shift):
    y, p = _sample(4000, 1, shrink=shrink, shift=shift)
    lp = np.log(p / (1 - p))
    res = calibration_intercept_slope(y, p)
    offset = _glm(y, np.ones((len(y), 1)), offset=lp)
    slope = _glm(y, sm.add_constant(lp))
    assert res.intercept == pytest.approx(offset.params[0], abs=1e-8)
    assert res.intercept_se == pytest.approx(offset.bse[0], rel=1e-7)
    assert res.slope == pytest.approx(slope.params[1], abs=1e-8)
    assert res.slope_se == pytest.approx(slope.bse[1], rel=1e-7)
    lo, hi = slope.conf_int()[1]
    assert (res.slope_lo, res.slope_hi) == pytest.approx((lo, hi), abs=1e-7)
    assert res.se_method == "model" and res.n_clusters == len(y)


def test_intercept_slope_cluster_robust_match_statsmodels():
    y, p = _sample(3000, 2, shrink=0.8)
    groups = np.repeat([f"pt{i}" for i in range(300)], 10)  # ten hours per patient
    lp = np.log(p / (1 - p))
    res = calibration_intercept_slope(y, p, groups=groups, level=0.9)
    offset = _glm(y, np.ones((len(y), 1)), offset=lp, groups=np.repeat(np.arange(300), 10))
    slope = _glm(y, sm.add_constant(lp), groups=np.repeat(np.arange(300), 10))
    assert res.se_method == "cluster" and res.n_clusters == 300
    assert res.intercept_se == pytest.approx(offset.bse[0], rel=1e-7)
    assert res.slope_se == pytest.approx(slope.bse[1], rel=1e-7)
    lo, hi = slope.conf_int(alpha=0.1)[1]
    assert (res.slope_lo, res.slope_hi) == pytest.approx((lo, hi), abs=1e-7)


def test_recovers_the_simulated_miscalibration():
    y, p = _sample(200_000, 3, shrink=0.5, shift=0.4)
    res = calibration_intercept_slope(y, p)
    assert res.slope == pytest.approx(0.5, abs=0.02)
    assert res.slope_lo < 0.5 < res.slope_hi


def _undefined(fn, *args, **kwargs):
    with pytest.warns(UndefinedMetricWarning) as record:
        out = fn(*args, **kwargs)
    return out, " ".join(str(w.message) for w in record)


@pytest.mark.parametrize("extreme", [0.0, 1.0])
def test_probability_exactly_0_or_1_is_undefined_never_clipped(extreme):
    res, msg = _undefined(calibration_intercept_slope, [0, 1, 0, 1], [0.2, 0.7, extreme, 0.6])
    assert np.isnan(res.intercept) and np.isnan(res.slope) and np.isnan(res.slope_se)
    assert "y_prob[2]" in msg and "clipped" in msg


def test_one_class_is_undefined():
    res, msg = _undefined(calibration_intercept_slope, [1, 1, 1], [0.2, 0.5, 0.9])
    assert np.isnan(res.intercept) and np.isnan(res.slope)
    assert "one class" in msg


def test_constant_predictions_define_the_intercept_only():
    y = [0, 1, 1, 0, 1]
    res, msg = _undefined(calibration_intercept_slope, y, [0.4] * 5)
    # offset model with constant logit: a = logit(mean y) - logit(0.4)
    expected = np.log(0.6 / 0.4) - np.log(0.4 / 0.6)
    assert res.intercept == pytest.approx(expected, abs=1e-10)
    assert np.isnan(res.slope) and "slope" in msg


def test_perfect_separation_gives_nan_slope_without_solver_error():
    res, msg = _undefined(calibration_intercept_slope, [0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4])
    assert np.isnan(res.slope) and np.isfinite(res.intercept)
    assert "overlap" in msg


def test_bad_groups_and_level_raise():
    with pytest.raises(ValueError, match="groups"):
        calibration_intercept_slope([0, 1], [0.2, 0.8], groups=[1])
    with pytest.raises(ValueError, match="groups\\[1\\]"):
        calibration_intercept_slope([0, 1], [0.2, 0.8], groups=[1.0, np.nan])
    with pytest.raises(ValueError, match="level"):
        calibration_intercept_slope([0, 1], [0.2, 0.8], level=1.0)


@settings(max_examples=40)
@given(
    data=st.lists(st.tuples(st.integers(0, 1), st.floats(0.01, 0.99)), min_size=6, max_size=60),
    seed=st.integers(0, 2**32 - 1),
)
def test_intercept_slope_label_swap_and_permutation(data, seed):
    y = np.array([d[0] for d in data])
    p = np.array([d[1] for d in data])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        a = calibration_intercept_slope(y, p)
        b = calibration_intercept_slope(1 - y, 1 - p)
        perm = np.random.default_rng(seed).permutation(len(y))
        c = calibration_intercept_slope(y[perm], p[perm])
    # swapping the labelled class negates the logit: a -> -a, the slope is unchanged
    np.testing.assert_allclose(b.intercept, -a.intercept, atol=1e-7)
    np.testing.assert_allclose(b.slope, a.slope, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(c.intercept, a.intercept, atol=1e-8)
    np.testing.assert_allclose(c.slope, a.slope, rtol=1e-7, atol=1e-8)


# --- Spiegelhalter ------------------------------------------------------------------------------


def test_spiegelhalter_matches_the_formula():
    y, p = _sample(500, 4, shrink=0.7)
    res = spiegelhalter_z(y, p)
    num = sum((yi - pi) * (1 - 2 * pi) for yi, pi in zip(y, p, strict=True))
    den = sum((1 - 2 * pi) ** 2 * pi * (1 - pi) for pi in p) ** 0.5
    assert res.z == pytest.approx(num / den, rel=1e-12)
    assert res.p_value == pytest.approx(2 * norm.sf(abs(num / den)), rel=1e-12)


def test_spiegelhalter_null_and_p_half():
    res, msg = _undefined(spiegelhalter_z, [0, 1, 1], [0.5, 0.5, 0.5])
    assert np.isnan(res.z) and np.isnan(res.p_value) and "variance is 0" in msg
    # 0/1 predictions add no variance but their misses count
    res = spiegelhalter_z([1, 0, 1], [0.0, 0.2, 0.7])
    expected = ((1 - 0) * 1 + (0 - 0.2) * 0.6 + (1 - 0.7) * (-0.4)) / (
        0.36 * 0.16 + 0.16 * 0.21
    ) ** 0.5
    assert res.z == pytest.approx(expected, rel=1e-12)


@settings(max_examples=40)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 1000).map(lambda k: k / 1000)),
        min_size=1,
        max_size=40,
    )
)
def test_spiegelhalter_label_swap_invariant_and_p_in_unit_interval(data):
    y = np.array([d[0] for d in data])
    p = np.array([d[1] for d in data])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        a = spiegelhalter_z(y, p)
        b = spiegelhalter_z(1 - y, 1 - p)
    if np.isnan(a.z):
        assert np.isnan(b.z)
    else:
        assert b.z == pytest.approx(a.z, rel=1e-9, abs=1e-9)
        assert 0.0 <= a.p_value <= 1.0


# --- equal-mass ECE, any n_bins -----------------------------------------------------------------


@pytest.mark.parametrize("n_bins", [5, 10, 15])
def test_equal_mass_bins_match_sklearn_quantile_curve(n_bins):
    y, p = _sample(3000, 5)
    bins = calibration_bins_equal_mass(y, p, n_bins)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy="quantile")
    keep = bins.n > 0
    np.testing.assert_allclose(bins.observed[keep], prob_true, rtol=1e-12)
    np.testing.assert_allclose(bins.mean_pred[keep], prob_pred, rtol=1e-12)
    naive = sum(
        n / len(y) * abs(mp - ob)
        for n, mp, ob in zip(bins.n[keep], prob_pred, prob_true, strict=True)
    )
    assert ece_equal_mass(y, p, n_bins) == pytest.approx(naive, abs=1e-14)
    assert bins.n.sum() == len(y) and bins.n.max() - bins.n.min() <= 1  # no ties: equal mass


def test_equal_mass_keeps_tied_predictions_together():
    p = [0.2] * 6 + [0.7] * 2
    y = [0, 1, 0, 0, 0, 1, 1, 1]
    bins = calibration_bins_equal_mass(y, p, 4)
    assert sorted(bins.n.tolist()) == [0, 0, 2, 6]
    assert ece_equal_mass(y, p, 4) == pytest.approx(6 / 8 * abs(0.2 - 2 / 6) + 2 / 8 * 0.3)


def test_fifteen_bin_ece_is_the_naive_equal_width_ece():
    y, p = _sample(2000, 6)
    idx = np.minimum((p * 15).astype(int), 14)  # no p sits on an edge in this sample
    naive = sum(
        (idx == b).mean() * abs(p[idx == b].mean() - y[idx == b].mean())
        for b in range(15)
        if (idx == b).any()
    )
    assert ece(y, p, 15) == pytest.approx(naive, abs=1e-14)


# --- Brier decomposition ------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_brier_decomposition_against_a_direct_computation(strategy):
    y, p = _sample(1500, 7, shrink=1.3)
    d = brier_decomposition(y, p, 10, strategy=strategy)
    binning = calibration_bins_equal_mass if strategy == "quantile" else calibration_bins
    bins = binning(y, p, 10)
    keep = bins.n > 0
    n, mp, ob = bins.n[keep], bins.mean_pred[keep], bins.observed[keep]
    assert d.reliability == pytest.approx(np.sum(n * (mp - ob) ** 2) / len(y), rel=1e-10)
    assert d.resolution == pytest.approx(np.sum(n * (ob - y.mean()) ** 2) / len(y), rel=1e-10)
    assert d.uncertainty == pytest.approx(y.mean() * (1 - y.mean()), rel=1e-12)
    assert d.brier == pytest.approx(brier_score_loss(y, p), rel=1e-12)
    total = (
        d.reliability
        - d.resolution
        + d.uncertainty
        + d.within_bin_variance
        - d.within_bin_covariance
    )
    assert total == pytest.approx(d.brier, abs=1e-14)


def test_brier_decomposition_is_murphys_when_predictions_are_constant_per_bin():
    p = [0.05, 0.05, 0.35, 0.35, 0.35, 0.85]
    y = [0, 1, 0, 1, 1, 1]
    d = brier_decomposition(y, p)
    assert abs(d.within_bin_variance) < 1e-30 and abs(d.within_bin_covariance) < 1e-30
    assert d.reliability - d.resolution + d.uncertainty == pytest.approx(brier(y, p), abs=1e-15)


@settings(max_examples=50)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.floats(0.0, 1.0)), min_size=1, max_size=50),
    st.integers(1, 20),
    st.sampled_from(["uniform", "quantile"]),
)
def test_brier_identity_and_bounds(data, n_bins, strategy):
    y = np.array([d[0] for d in data])
    p = np.array([d[1] for d in data])
    d = brier_decomposition(y, p, n_bins, strategy=strategy)
    identity = (
        d.reliability
        - d.resolution
        + d.uncertainty
        + d.within_bin_variance
        - d.within_bin_covariance
    )
    assert identity == pytest.approx(d.brier, abs=1e-12)
    assert 0 <= d.reliability <= 1 and 0 <= d.resolution <= d.uncertainty + 1e-15
    assert 0 <= d.uncertainty <= 0.25


def test_brier_decomposition_rejects_bad_strategy():
    with pytest.raises(ValueError, match="strategy"):
        brier_decomposition([0, 1], [0.1, 0.9], strategy="kmeans")


# --- net benefit --------------------------------------------------------------------------------


def test_net_benefit_against_a_loop():
    y, p = _sample(800, 8)
    thresholds = [0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.9]
    dc = net_benefit(y, p, thresholds)
    prev = y.mean()
    for k, t in enumerate(thresholds):
        treat = p >= t
        tp = np.sum(treat & (y == 1)) / len(y)
        fp = np.sum(treat & (y == 0)) / len(y)
        assert dc.net_benefit[k] == pytest.approx(tp - fp * t / (1 - t), abs=1e-15)
        assert dc.treat_all[k] == pytest.approx(prev - (1 - prev) * t / (1 - t), abs=1e-15)
    assert dc.treat_none.tolist() == [0.0] * len(thresholds)
    assert dc.net_benefit[0] == pytest.approx(prev)  # t = 0: everyone treated


def test_net_benefit_of_a_perfect_model_is_the_prevalence():
    y = np.array([0, 1, 0, 1, 1, 0, 0, 0])
    dc = net_benefit(y, y * 0.98 + 0.01, [0.1, 0.3, 0.6])
    np.testing.assert_allclose(dc.net_benefit, y.mean())


@pytest.mark.parametrize("bad", [[1.0], [-0.1], [np.nan], []])
def test_net_benefit_rejects_bad_thresholds(bad):
    with pytest.raises(ValueError, match="thresholds"):
        net_benefit([0, 1], [0.2, 0.8], bad)


@settings(max_examples=40)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.floats(0.0, 1.0)), min_size=1, max_size=40),
    st.lists(st.floats(0.0, 0.99), min_size=1, max_size=5),
)
def test_net_benefit_never_exceeds_prevalence(data, thresholds):
    y = np.array([d[0] for d in data])
    p = np.array([d[1] for d in data])
    dc = net_benefit(y, p, thresholds)
    assert np.all(dc.net_benefit <= dc.prevalence + 1e-12)


# --- the loess smoother and ICI -----------------------------------------------------------------


def _naive_loess(x, y, x0, span=0.75, degree=2):
    """Local polynomial fit at x0 from the definition (weighted least squares with numpy)."""
    n = len(x)
    q = max(1, int(np.floor(span * n)))
    d = np.abs(x - x0)
    h = np.sort(d)[q - 1]
    w = np.where(d < h, (1 - (d / h) ** 3) ** 3, 0.0)
    design = np.column_stack([(x - x0) ** k for k in range(degree + 1)])
    sw = np.sqrt(w)
    coef = np.linalg.lstsq(design * sw[:, None], y * sw, rcond=None)[0]
    return coef[0]


def test_loess_matches_a_naive_local_quadratic_fit():
    y, p = _sample(300, 9, shrink=0.7)
    fit = loess_fit(p, y)
    assert fit.exact
    naive = np.array([_naive_loess(p, y.astype(float), x0) for x0 in p])
    np.testing.assert_allclose(fit.predict(p), naive, atol=1e-11)


def test_local_linear_variant_equals_statsmodels_lowess():
    # statsmodels lowess (it=0, delta=0) is the same estimator with degree 1: agreement to rounding
    y, p = _sample(700, 10)
    ours = loess_fit(p, y, degree=1).predict(p)
    ref = lowess(y.astype(float), p, frac=0.75, it=0, delta=0.0, return_sorted=False)
    np.testing.assert_allclose(ours, ref, atol=1e-12)


@pytest.mark.slow
def test_local_quadratic_vs_lowess_agreement_is_measured():
    # Local quadratic (ours, as Austin & Steyerberg) vs local linear (statsmodels lowess): the curves
    # differ by the quadratic term, most in the tails; the ICI differs far less. Numbers in docs.
    y, p = _sample(20_000, 11, shrink=0.7, shift=0.2)
    ours = ici(y, p)
    ref = lowess(y.astype(float), p, frac=0.75, it=0, delta=0.0, return_sorted=False)
    ref_ici = np.mean(np.abs(ref - p))
    assert abs(ours.ici - ref_ici) < 0.005
    curve_gap = np.max(np.abs(loess_fit(p, y).predict(p) - ref))
    assert curve_gap < 0.05


@pytest.mark.slow
def test_interpolated_surface_stays_close_to_the_direct_fit():
    for seed, (shrink, shift) in enumerate([(1.0, 0.0), (0.6, 0.3), (1.5, -0.4)]):
        y, p = _sample(8000, 20 + seed, shrink=shrink, shift=shift)
        direct = ici(y, p, max_direct=10**6)
        approx = ici(y, p)
        assert direct.exact and not approx.exact
        assert abs(direct.ici - approx.ici) < 1e-5
        assert abs(direct.e50 - approx.e50) < 1e-4
        assert abs(direct.e90 - approx.e90) < 1e-4
        assert abs(direct.emax - approx.emax) < 1e-3


def test_ici_summaries_from_the_definition():
    y, p = _sample(400, 12, shrink=0.6)
    res = ici(y, p)
    diff = np.abs(np.array([_naive_loess(p, y.astype(float), x0) for x0 in p]) - p)
    assert res.ici == pytest.approx(diff.mean(), abs=1e-11)
    assert res.e50 == pytest.approx(np.median(diff), abs=1e-11)
    assert res.e90 == pytest.approx(np.quantile(diff, 0.9), abs=1e-11)
    assert res.emax == pytest.approx(diff.max(), abs=1e-11)


def test_ici_edge_cases_are_defined():
    # constant predictions: the smoothed risk is the event rate
    assert ici([0, 1, 1, 0, 1], [0.3] * 5).ici == pytest.approx(abs(0.6 - 0.3))
    # one class: the smoothed risk is that class
    assert ici([0, 0, 0, 0], [0.1, 0.2, 0.3, 0.4]).ici == pytest.approx(0.25)
    # two distinct predictions: local degree falls back, no singular solve
    res = ici([0, 1, 0, 1, 1, 1], [0.2, 0.2, 0.2, 0.8, 0.8, 0.8])
    assert np.isfinite(res.ici)
    assert ici([1], [0.4]).ici == pytest.approx(0.6)


def test_ici_decreases_with_better_calibration():
    y_good, p_good = _sample(20_000, 13)
    y_bad, p_bad = _sample(20_000, 13, shrink=0.4, shift=0.5)
    assert ici(y_good, p_good).ici < 0.02 < ici(y_bad, p_bad).ici


@settings(max_examples=30)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.floats(0.0, 1.0)), min_size=1, max_size=40),
    st.integers(0, 2**32 - 1),
)
def test_ici_permutation_invariant_and_ordered(data, seed):
    y = np.array([d[0] for d in data])
    p = np.array([d[1] for d in data])
    perm = np.random.default_rng(seed).permutation(len(y))
    a, b = ici(y, p), ici(y[perm], p[perm])
    assert a.ici == pytest.approx(b.ici, abs=1e-9)
    assert 0 <= a.e50 <= a.e90 + 1e-12 <= a.emax + 2e-12


def test_smoothed_curve_and_its_pointwise_interval():
    y, p = _sample(250, 14, shrink=0.8)
    points = np.array([0.0, 0.1, 0.25, 0.5, 0.99])
    curve = smoothed_calibration_curve(y, p, points)
    inside = (points >= p.min()) & (points <= p.max())
    assert np.isnan(curve.observed[~inside]).all() and np.isnan(curve.se[~inside]).all()
    yf = y.astype(float)
    for k in np.flatnonzero(inside):
        x0 = points[k]
        # equivalent kernel: l(x0) = e1' (X'WX)^-1 X'W, from the definition
        n = len(p)
        d = np.abs(p - x0)
        h = np.sort(d)[int(np.floor(0.75 * n)) - 1]
        w = np.where(d < h, (1 - (d / h) ** 3) ** 3, 0.0)
        design = np.column_stack([np.ones(n), p - x0, (p - x0) ** 2])
        ell = (np.linalg.inv(design.T @ (w[:, None] * design)) @ (design.T * w))[0]
        fitted = ell @ yf
        assert curve.observed[k] == pytest.approx(fitted, abs=1e-11)
        c = min(max(fitted, 0.0), 1.0)
        assert curve.se[k] == pytest.approx(np.sqrt(c * (1 - c) * np.sum(ell**2)), rel=1e-9)
    z = norm.ppf(0.975)
    np.testing.assert_allclose(curve.hi - curve.observed, z * curve.se, rtol=1e-12)
    default = smoothed_calibration_curve(y, p)
    assert default.x.shape == (101,)


def test_curve_between_two_observations_with_a_one_point_window():
    # q = floor(0.75 * 2) = 1: at 0.25 nobody is strictly inside the window; the nearest observation
    # (0.2, y = 0) gives the value; at 0.375 it is 0.4 (y = 1)
    curve = smoothed_calibration_curve([0, 1], [0.2, 0.4], points=[0.2, 0.25, 0.375, 0.4])
    assert curve.observed.tolist() == [0.0, 0.0, 1.0, 1.0]
    # exactly halfway between 0.25 and 0.75 (both distances 0.25 exactly): their mean
    curve = smoothed_calibration_curve([0, 1], [0.25, 0.75], points=[0.5])
    assert curve.observed.tolist() == [0.5]
    curve = smoothed_calibration_curve([0, 1, 1], [0.25, 0.75, 0.75], points=[0.5], span=0.4)
    assert curve.observed.tolist() == [pytest.approx(2 / 3)]


@settings(max_examples=60)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 20).map(lambda k: k / 20)),
        min_size=1,
        max_size=30,
    ),
    st.floats(0.05, 1.0),
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=5),
)
def test_smoother_is_total_on_tied_and_tiny_inputs(data, span, points):
    y = np.array([d[0] for d in data])
    p = np.array([d[1] for d in data])
    curve = smoothed_calibration_curve(y, p, points, span=span)
    inside = (curve.x >= p.min()) & (curve.x <= p.max())
    assert np.isfinite(curve.observed[inside]).all() and np.isnan(curve.observed[~inside]).all()
    assert np.isfinite(curve.se[inside]).all()
    res = ici(y, p, span=span)
    assert np.isfinite([res.ici, res.e50, res.e90, res.emax]).all()


def test_large_inputs_warm_start_converges_to_the_statsmodels_fit():
    # >= 200,000 rows: Newton starts from the fit on every 16th row; same optimum
    y, p = _sample(240_000, 15, shrink=0.8, shift=0.2)
    lp = np.log(p / (1 - p))
    res = calibration_intercept_slope(y, p)
    offset = _glm(y, np.ones((len(y), 1)), offset=lp)
    slope = _glm(y, sm.add_constant(lp))
    assert res.intercept == pytest.approx(offset.params[0], abs=1e-8)
    assert res.slope == pytest.approx(slope.params[1], abs=1e-8)
    assert res.slope_se == pytest.approx(slope.bse[1], rel=1e-6)


def test_spiegelhalter_with_patients_as_clusters_keeps_its_level():
    """Hours of one patient share a frailty: the hour-level variance treats them as independent
    and rejects calibrated predictions far too often; the clustered variance does not."""
    from automd_analysis.metrics import spiegelhalter_z

    rng = np.random.default_rng(5)
    plain = clustered = 0
    sims = 250
    for _ in range(sims):
        patients = np.repeat(np.arange(60), 20)
        frailty = rng.normal(0, 1.2, 60)[patients]
        logit = -1.0 + rng.normal(0, 0.5, patients.size)
        y = (rng.random(patients.size) < 1 / (1 + np.exp(-(logit + frailty)))).astype(int)
        # the marginal probability given the hour's covariate (frailty averaged out)
        grid = rng.normal(0, 1.2, 200)
        p = (1 / (1 + np.exp(-(logit[:, None] + grid[None, :])))).mean(axis=1)
        plain += spiegelhalter_z(y, p).p_value < 0.05
        clustered += spiegelhalter_z(y, p, groups=patients).p_value < 0.05
    assert plain / sims > 0.15  # the unclustered test is anti-conservative here
    assert clustered / sims <= 0.08  # 5 % nominal; two binomial SD at 250 simulations: 7.8 %
