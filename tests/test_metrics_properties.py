"""Hypothesis property tests of the metric invariants, plus eq. (1) normalisation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from automd_analysis.metrics import (
    UndefinedMetricWarning,
    auroc,
    calibration_bins,
    concordance_td,
    ece,
    normalized_score,
    sepsis_utility,
)

PROPS = settings(max_examples=60, deadline=None)


@st.composite
def survival_cases(draw):
    n = draw(st.integers(2, 30))
    g = draw(st.integers(1, 6))
    grid = np.array(sorted(draw(st.sets(st.integers(0, 12), min_size=g, max_size=g))), dtype=float)
    times = draw(
        arrays(np.float64, n, elements=st.sampled_from([0.0, 1.0, 2.5, 3.0, 5.0, 8.0, 13.0]))
    )
    events = draw(arrays(np.int8, n, elements=st.integers(0, 1)))
    surv = draw(
        arrays(np.float64, (n, g), elements=st.sampled_from([0.0, 0.2, 0.5, 0.5, 0.9, 1.0]))
    )
    return times, events, surv, grid


def _ctd(t, e, s, grid, method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return concordance_td(t, e, s, grid, method)


@PROPS
@given(survival_cases(), st.sampled_from(["adj_antolini", "antolini"]), st.randoms())
def test_ctd_invariant_to_patient_order_and_in_unit_interval(case, method, rnd):
    t, e, s, grid = case
    value = _ctd(t, e, s, grid, method)
    perm = np.array(rnd.sample(range(len(t)), len(t)))
    permuted = _ctd(t[perm], e[perm], s[perm], grid, method)
    if np.isnan(value):
        assert np.isnan(permuted)
    else:
        assert permuted == value
        assert 0.0 <= value <= 1.0


@PROPS
@given(st.lists(st.integers(0, 40), min_size=2, max_size=25, unique=True), st.data())
def test_ctd_of_reversed_predictions_without_ties(times, data):
    # With distinct times and distinct predictions, antolini's concordant + discordant pairs are all
    # comparable pairs, so C(S) + C(1 - S) = 1, and the adjusted index equals the plain one.
    t = np.array(times, dtype=float) / 3
    n = len(t)
    grid = np.array(sorted(data.draw(st.sets(st.integers(0, 14), min_size=1, max_size=5))), float)
    e = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    values = data.draw(st.permutations(range(n * len(grid))))
    s = np.array(values, dtype=float).reshape(n, len(grid)) / (n * len(grid))
    value = _ctd(t, e, s, grid, "antolini")
    assume(not np.isnan(value))
    assert value + _ctd(t, e, 1.0 - s, grid, "antolini") == pytest.approx(1.0, abs=1e-12)
    assert _ctd(t, e, s, grid, "adj_antolini") == value


@PROPS
@given(
    arrays(np.int8, st.integers(2, 60), elements=st.integers(0, 1)),
    st.data(),
)
def test_auroc_in_unit_interval_and_flips_with_the_scores(y, data):
    assume(0 < y.sum() < len(y))
    p = data.draw(arrays(np.float64, len(y), elements=st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0])))
    value = auroc(y, p)
    assert 0.0 <= value <= 1.0
    assert auroc(y, 1.0 - p) == pytest.approx(1.0 - value, abs=1e-12)
    assert auroc(1 - y, p) == pytest.approx(1.0 - value, abs=1e-12)


@PROPS
@given(
    st.lists(
        st.tuples(st.integers(0, 9), st.integers(1, 12), st.integers(0, 12)),
        min_size=1,
        max_size=10,
    )
)
def test_ece_of_perfectly_calibrated_bins_is_zero(spec):
    # In each bin put k positives among m observations, all predicted exactly k/m (inside the bin).
    y, p = [], []
    for bin_idx, m, k in spec:
        k = min(k, m)
        lo, hi = bin_idx / 10, (bin_idx + 1) / 10
        if not lo <= k / m < hi and not (bin_idx == 9 and k == m):
            continue
        y += [1] * k + [0] * (m - k)
        p += [k / m] * m
    assume(y)
    assert ece(y, p) == pytest.approx(0.0, abs=1e-12)
    bins = calibration_bins(y, p)
    keep = bins.n > 0
    assert np.allclose(bins.mean_pred[keep], bins.observed[keep])


@PROPS
@given(
    arrays(np.int8, st.integers(1, 80), elements=st.integers(0, 1)),
    st.data(),
    st.integers(1, 20),
)
def test_ece_in_unit_interval_and_bins_partition_the_data(y, data, n_bins):
    p = data.draw(arrays(np.float64, len(y), elements=st.floats(0.0, 1.0)))
    value = ece(y, p, n_bins)
    assert 0.0 <= value <= 1.0
    assert calibration_bins(y, p, n_bins).n.sum() == len(y)


@PROPS
@given(
    st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(-10, 10)),
    st.floats(-5, 0.99),
)
def test_normalized_score_is_clipped_and_nan_preserving(raw, m0):
    s = normalized_score(raw, m0)
    if np.isnan(raw):
        assert np.isnan(s)
    else:
        assert 0.0 <= s <= 1.0
        if m0 <= raw <= 1.0:
            assert s == pytest.approx((raw - m0) / (1 - m0))


@PROPS
@given(st.lists(st.integers(1, 30), min_size=1, max_size=6), st.data())
def test_utility_best_is_one_and_all_zero_is_zero(lengths, data):
    ids, labels, best = [], [], []
    for pid, length in enumerate(lengths):
        first = data.draw(st.one_of(st.none(), st.integers(0, length - 1)))
        lab = [0] * length if first is None else [0] * first + [1] * (length - first)
        onset = None if first is None else first + 6
        ids += [pid] * length
        labels += lab
        best += [int(onset is not None and onset - 12 <= t <= onset + 3) for t in range(length)]
    assume(any(labels))
    assert sepsis_utility(ids, labels, best) == 1.0
    assert sepsis_utility(ids, labels, [0] * len(labels)) == 0.0


def test_normalized_score_values():
    assert normalized_score(0.75, 0.5) == 0.5
    assert normalized_score(0.3, 0.5) == 0.0
    assert normalized_score(-0.4, 0.0) == 0.0
    assert normalized_score(1.2, 0.0) == 1.0
    out = normalized_score(np.array([0.5, 0.625, np.nan]), 0.5)
    assert out[:2].tolist() == [0.0, 0.25] and np.isnan(out[2])
    assert isinstance(normalized_score(0.6, 0.5), float)
    assert normalized_score([0.6, 0.7], [0.5, 0.0]).tolist() == pytest.approx([0.2, 0.7])


@pytest.mark.parametrize("m0", [1.0, 1.5, np.nan, [0.5, 1.0]])
def test_normalized_score_rejects_bad_null_score(m0):
    with pytest.raises(ValueError, match="null_score"):
        normalized_score(0.7, m0)
