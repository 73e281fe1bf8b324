"""Weights are multiplicities: every metric of the score store, called with integer ``weights``,
equals the metric on the rows repeated that many times (bit for bit for the exact counting metrics,
to 1e-12 for the others), a weight matrix gives the values of its rows, and all ones is no weight."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis import metrics
from automd_analysis.metrics import UndefinedMetricWarning

TOL = 1e-12


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return fn(*args, **kwargs)


def same(a, b, tol: float = 0.0) -> bool:
    """Equal floats (NaN equals NaN), within ``tol`` when given."""
    a, b = float(a), float(b)
    if np.isnan(a) or np.isnan(b):
        return np.isnan(a) and np.isnan(b)
    return a == b if tol == 0 else abs(a - b) <= tol


def weights_for(data, n: int, low: int = 0, high: int = 3) -> np.ndarray:
    w = np.array(data.draw(st.lists(st.integers(low, high), min_size=n, max_size=n)))
    if w.sum() == 0:
        w[data.draw(st.integers(0, n - 1))] = 1
    return w


def binary_data(data, n_max: int = 14):
    n = data.draw(st.integers(1, n_max))
    y = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    levels = st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.55, 0.9, 1.0])
    p = np.array(data.draw(st.lists(levels, min_size=n, max_size=n)))
    return y, p


def survival_data(data, n_max: int = 12, g_max: int = 4):
    n = data.draw(st.integers(1, n_max))
    g = data.draw(st.integers(1, g_max))
    t = np.array(data.draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), dtype=float)
    e = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    grid = np.arange(g, dtype=float) * 2.0
    levels = st.sampled_from([0.0, 0.25, 0.5, 1.0])
    s = np.array(data.draw(st.lists(levels, min_size=n * g, max_size=n * g))).reshape(n, g)
    return t, e, np.sort(s, axis=1)[:, ::-1].copy(), grid


# --- repeated rows ---------------------------------------------------------------------------


@settings(max_examples=80)
@given(data=st.data(), method=st.sampled_from(metrics.CONCORDANCE_METHODS))
def test_ctd_weights_are_repeated_rows_bit_for_bit(data, method):
    t, e, s, grid = survival_data(data)
    w = weights_for(data, len(t))
    r = np.repeat(np.arange(len(t)), w)
    got = quiet(metrics.concordance_td, t, e, s, grid, method, weights=w)
    assert same(got, quiet(metrics.concordance_td, t[r], e[r], s[r], grid, method))


@settings(max_examples=80)
@given(data=st.data())
def test_survival_ece_weights_are_repeated_rows(data):
    t, e, s, grid = survival_data(data, n_max=30)
    w = weights_for(data, len(t))
    r = np.repeat(np.arange(len(t)), w)
    kwargs = {"n_groups": data.draw(st.integers(1, 5)), "min_group": data.draw(st.integers(1, 3))}
    got = quiet(metrics.survival_ece, t, e, s, grid, weights=w, **kwargs)
    ref = quiet(metrics.survival_ece, t[r], e[r], s[r], grid, **kwargs)
    assert same(got.ece, ref.ece, TOL)
    np.testing.assert_allclose(got.per_time["ece"], ref.per_time["ece"], rtol=0, atol=TOL)
    for key in ("n", "kept"):
        np.testing.assert_array_equal(got.groups[key], ref.groups[key])
    for key in ("mean_pred", "km", "weight"):
        np.testing.assert_allclose(got.groups[key], ref.groups[key], rtol=0, atol=TOL)


@settings(max_examples=60)
@given(data=st.data())
def test_d_calibration_weights_are_repeated_rows(data):
    t, e, s, grid = survival_data(data)
    w = weights_for(data, len(t))
    r = np.repeat(np.arange(len(t)), w)
    got = metrics.d_calibration(t, e, s, grid, 4, weights=w)
    ref = metrics.d_calibration(t[r], e[r], s[r], grid, 4)
    np.testing.assert_allclose(got.histogram, ref.histogram, rtol=0, atol=TOL)
    assert (got.n, got.n_events) == (ref.n, ref.n_events)
    assert same(got.statistic, ref.statistic, TOL * max(1.0, abs(ref.statistic)))
    assert same(got.p_value, ref.p_value, TOL)


@settings(max_examples=100)
@given(data=st.data())
def test_binary_metrics_weights_are_repeated_rows(data):
    y, p = binary_data(data)
    label = (p >= 0.5).astype(int)
    w = weights_for(data, len(y))
    r = np.repeat(np.arange(len(y)), w)
    assert same(quiet(metrics.auroc, y, p, weights=w), quiet(metrics.auroc, y[r], p[r]))
    got = quiet(metrics.min_se_ppv, y, label, weights=w)
    assert same(got, quiet(metrics.min_se_ppv, y[r], label[r]))
    for n_bins in (1, 3, 10):
        assert same(metrics.ece(y, p, n_bins, weights=w), metrics.ece(y[r], p[r], n_bins), TOL)
    assert same(metrics.brier(y, p, weights=w), metrics.brier(y[r], p[r]), TOL)
    ref = metrics.net_benefit(y[r], p[r], [0.0, 0.3, 0.5])
    dc = metrics.net_benefit(y, p, [0.0, 0.3, 0.5], weights=w)
    np.testing.assert_array_equal(dc.net_benefit, ref.net_benefit)
    assert (dc.n, dc.prevalence) == (ref.n, ref.prevalence)
    got, ref = quiet(metrics.ici, y, p, weights=w), quiet(metrics.ici, y[r], p[r])
    assert (got.ici, got.e50, got.e90, got.emax) == (ref.ici, ref.e50, ref.e90, ref.emax)


@settings(max_examples=60)
@given(data=st.data())
def test_ece_cluster_weights_repeat_every_row_of_the_cluster(data):
    y, p = binary_data(data, n_max=20)
    cluster = np.array(
        data.draw(st.lists(st.sampled_from("abcd"), min_size=len(y), max_size=len(y)))
    )
    k = len(np.unique(cluster))
    w = weights_for(data, k)
    rows_w = metrics.cluster_row_weights(cluster, w)
    r = np.repeat(np.arange(len(y)), rows_w)
    got = metrics.ece(y, p, weights=w, cluster=cluster)
    assert same(got, metrics.ece(y[r], p[r]), TOL)
    assert same(got, metrics.ece(y, p, weights=rows_w), TOL)


@settings(max_examples=60)
@given(data=st.data())
def test_calibration_intercept_slope_weights_are_repeated_rows(data):
    n = data.draw(st.integers(2, 25))
    y = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    p = np.array(data.draw(st.lists(st.floats(0.02, 0.98), min_size=n, max_size=n)))
    groups = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    w = weights_for(data, n)
    r = np.repeat(np.arange(n), w)
    for g in (None, groups):
        got = quiet(metrics.calibration_intercept_slope, y, p, groups=g, weights=w)
        ref = quiet(
            metrics.calibration_intercept_slope, y[r], p[r], groups=None if g is None else g[r]
        )
        assert (got.n, got.n_clusters, got.se_method) == (ref.n, ref.n_clusters, ref.se_method)
        for name in ("intercept", "intercept_se", "slope", "slope_se"):
            a, b = getattr(got, name), getattr(ref, name)
            assert same(a, b, 1e-9 * max(1.0, abs(b))), name


def test_utility_weights_are_relabelled_copies_bit_for_bit():
    rng = np.random.default_rng(3)
    for _ in range(60):
        n_pat = int(rng.integers(1, 7))
        lengths = rng.integers(1, 30, n_pat)
        ids = np.repeat(np.arange(n_pat), lengths)
        labels = np.concatenate(
            [(np.arange(k) >= rng.integers(0, 2 * k)).astype(int) for k in lengths]
        )
        preds = (rng.random(len(ids)) < 0.3).astype(int)
        w = rng.integers(0, 4, n_pat)
        w[0] = max(w[0], 1)
        starts = np.r_[0, np.cumsum(lengths)]
        rows = np.concatenate(
            [np.arange(starts[k], starts[k + 1]) for k in np.repeat(np.arange(n_pat), w)]
        )
        copies = np.repeat(np.arange(int(w.sum())), lengths[np.repeat(np.arange(n_pat), w)])
        got = quiet(metrics.sepsis_utility, ids, labels, preds, weights=w)
        assert same(got, quiet(metrics.sepsis_utility, copies, labels[rows], preds[rows]))
        parts = quiet(metrics.sepsis_utility_parts, ids, labels, preds, weights=w)
        ref = quiet(metrics.sepsis_utility_parts, copies, labels[rows], preds[rows])
        assert (parts.n_rows, parts.n_patients, parts.n_septic) == (
            ref.n_rows,
            ref.n_patients,
            ref.n_septic,
        )
        assert (parts.observed, parts.best, parts.inaction) == (
            ref.observed,
            ref.best,
            ref.inaction,
        )


# --- a matrix of weight vectors, and all ones ------------------------------------------------


def _cases():
    rng = np.random.default_rng(8)
    n = 60
    t = rng.integers(0, 20, n).astype(float)
    e = (rng.random(n) < 0.6).astype(int)
    grid = np.linspace(0.0, 18.0, 7)
    s = np.sort(rng.choice([0.1, 0.4, 0.7, 1.0], (n, len(grid))), axis=1)[:, ::-1].copy()
    y = (rng.random(n) < 0.4).astype(int)
    p = np.round(rng.random(n), 1)
    label = (rng.random(n) < 0.3).astype(int)
    pid = np.repeat(np.arange(12), 5)
    hour_label = (np.tile(np.arange(5), 12) >= rng.integers(0, 8, 12).repeat(5)).astype(int)
    return {
        "ctd adj": (lambda **k: metrics.concordance_td(t, e, s, grid, **k), n, 0.0),
        "ctd": (lambda **k: metrics.concordance_td(t, e, s, grid, "antolini", **k), n, 0.0),
        "survival ece": (lambda **k: _ece_of(metrics.survival_ece(t, e, s, grid, **k)), n, 0.0),
        "auroc": (lambda **k: metrics.auroc(y, p, **k), n, 0.0),
        "min_se_ppv": (lambda **k: metrics.min_se_ppv(y, label, **k), n, 0.0),
        "ece": (lambda **k: metrics.ece(y, p, **k), n, 0.0),
        "ece cluster": (lambda **k: metrics.ece(y, p, cluster=pid, **k), 12, 0.0),
        "brier": (lambda **k: metrics.brier(y, p, **k), n, TOL),
        "utility": (lambda **k: metrics.sepsis_utility(pid, hour_label, label, **k), 12, 0.0),
    }


def _ece_of(result):
    return result if isinstance(result, np.ndarray) else result.ece


@pytest.mark.parametrize("name", list(_cases()))
def test_weight_matrix_rows_equal_single_vectors(name):
    fn, n, tol = _cases()[name]
    # more than one lane block of 64 (C^td then stores its searches), with zero weights
    w = metrics.bootstrap_weights(n, 150, seed=1)
    many = quiet(fn, weights=w)
    assert many.shape == (150,)
    for b in (0, 63, 64, 149):
        assert same(many[b], quiet(fn, weights=w[b]), tol), b
    assert np.array_equal(quiet(fn, weights=w[:3]), many[:3], equal_nan=True)


@pytest.mark.parametrize("name", list(_cases()))
def test_all_ones_is_no_weight(name):
    fn, n, tol = _cases()[name]
    assert same(quiet(fn, weights=np.ones(n, dtype=np.int64)), quiet(fn), tol)
    assert same(quiet(fn, weights=np.ones(n)), quiet(fn), tol)  # whole floats are accepted


def test_vector_only_measures_reject_a_matrix():
    y, p = [0, 1, 1, 0], [0.2, 0.7, 0.6, 0.4]
    with pytest.raises(ValueError, match="one vector"):
        metrics.calibration_intercept_slope(y, p, weights=[[1, 1, 1, 1]])
    with pytest.raises(ValueError, match="one vector"):
        metrics.calibration_bins(y, p, weights=np.ones((2, 4), dtype=int))


@pytest.mark.parametrize(
    ("weights", "match"),
    [
        ([1, 1], r"shape \(3,\)"),
        ([1, -2, 1], r"non-negative; weights\[1\] is -2"),
        ([1, np.nan, 1], r"whole numbers.*weights\[1\] is nan"),
        ([1, 1.5, 1], r"whole numbers.*weights\[1\] is 1.5"),
        ([0, 0, 0], "sums to 0"),
        ([[1, 1, 1], [0, 0, 0]], r"weights\[1\] sums to 0"),
        (["1", "1", "1"], "integers"),
        ([2**25, 2**25, 2**25], "above"),
    ],
)
def test_bad_weights_are_rejected_with_the_offending_entry(weights, match):
    with pytest.raises(ValueError, match=match):
        metrics.auroc([0, 1, 1], [0.1, 0.5, 0.7], weights=weights)
