"""One kernel call for a metric and its bootstrap replicates (``metrics._replicated``): the observed
value, the replicates and the undefined-value messages are those of the two separate calls."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.metrics import (
    auroc,
    concordance_td,
    min_se_ppv,
    sepsis_utility,
    survival_ece,
    survival_ece_replicated,
    with_replicates,
)
from automd_analysis.metrics._replicated import observed_first, recorded


def _separate(fn, weights):
    """The observed call and the replicate call, each with its messages."""
    observed, observed_msgs = recorded(fn, None)
    replicates, replicate_msgs = recorded(fn, weights)
    return observed, replicates, [str(w) for w in observed_msgs], [str(w) for w in replicate_msgs]


def _assert_same(fn, weights):
    res = with_replicates(fn, weights)
    observed, replicates, observed_msgs, replicate_msgs = _separate(fn, weights)
    assert np.array_equal([res.observed], [observed], equal_nan=True)  # to the last bit
    assert np.array_equal(res.replicates, replicates, equal_nan=True)
    assert list(res.observed_warnings) == observed_msgs
    assert list(res.replicate_warnings) == replicate_msgs


def test_observed_first_prepends_a_row_of_ones_in_the_weights_dtype():
    w = np.array([[2, 0, 1], [0, 3, 0]], dtype=np.uint8)
    stacked = observed_first(w)
    assert stacked.dtype == np.uint8 and stacked.tolist() == [[1, 1, 1], [2, 0, 1], [0, 3, 0]]


@settings(max_examples=60)
@given(
    y=st.lists(st.integers(0, 1), min_size=4, max_size=30),
    seed=st.integers(0, 2**16),
    n_boot=st.integers(1, 70),  # across the 64-vector lane blocks of the kernels
)
def test_auroc_and_min_se_ppv_in_one_call_equal_the_separate_calls(y, seed, n_boot):
    rng = np.random.default_rng(seed)
    y = np.array(y)
    p = rng.integers(0, 5, len(y)) / 4  # ties
    label = (p > 0.4).astype(int)
    weights = rng.multinomial(len(y), np.full(len(y), 1 / len(y)), size=n_boot)
    _assert_same(lambda w: auroc(y, p, weights=w), weights)
    _assert_same(lambda w: min_se_ppv(y, label, weights=w), weights)


def test_undefined_observed_and_replicate_values_keep_their_own_messages():
    y, p = np.array([1, 1, 0, 0]), np.array([0.9, 0.2, 0.4, 0.1])
    weights = np.array([[2, 2, 0, 0], [1, 1, 1, 1], [0, 0, 3, 1]])  # 2 of 3 resamples one class
    res = with_replicates(lambda w: auroc(y, p, weights=w), weights)
    assert res.observed == 0.75 and res.observed_warnings == ()
    assert res.replicate_warnings == (
        "AUROC is undefined (y_true contains only one class) in 2 of 3 weight vectors; "
        "they are nan.",
    )
    ones = np.ones(4, dtype=int)
    _assert_same(lambda w: auroc(ones, p, weights=w), weights)  # undefined everywhere


def test_sepsis_utility_without_a_septic_patient_says_the_same_in_both_forms():
    ids, hours = np.repeat(["a", "b"], 3), np.tile([0, 1, 2], 2)
    labels, alarms = np.zeros(6, dtype=int), np.array([0, 1, 0, 0, 0, 1])
    _assert_same(
        lambda w: sepsis_utility(ids, labels, alarms, hours, weights=w), np.array([[2, 0], [1, 1]])
    )


def _survival(n=90, seed=3):
    rng = np.random.default_rng(seed)
    grid = np.linspace(0, 10, 12)
    t = rng.exponential(4, n).round(1)
    e = (rng.random(n) < 0.7).astype(int)
    rate = rng.uniform(0.05, 0.4, n)
    surv = np.exp(-np.outer(rate, grid))
    return t, e, surv, grid


def test_concordance_in_one_call_equals_the_separate_calls():
    t, e, surv, grid = _survival()
    weights = np.random.default_rng(1).multinomial(len(t), np.full(len(t), 1 / len(t)), size=70)
    for method in ("antolini", "adj_antolini"):
        _assert_same(lambda w, m=method: concordance_td(t, e, surv, grid, method=m, weights=w),
                     weights)  # fmt: skip


@pytest.mark.parametrize("n", [90, 30])  # 30 patients: every group under min_group, undefined
def test_survival_ece_replicated_equals_the_detailed_and_the_matrix_calls(n):
    t, e, surv, grid = _survival(n)
    weights = np.random.default_rng(2).multinomial(n, np.full(n, 1 / n), size=20)
    res = survival_ece_replicated(t, e, surv, grid, weights)
    single, single_msgs = recorded(survival_ece, t, e, surv, grid)
    matrix, matrix_msgs = recorded(survival_ece, t, e, surv, grid, weights=weights)
    assert np.array_equal([res.observed.ece], [single.ece], equal_nan=True)
    for key, values in single.groups.items():
        np.testing.assert_array_equal(res.observed.groups[key], values)
    assert np.array_equal(res.replicates, matrix, equal_nan=True)
    assert list(res.observed_warnings) == [str(w) for w in single_msgs]
    assert list(res.replicate_warnings) == [str(w) for w in matrix_msgs]
    assert (n == 30) == bool(res.observed_warnings)
    alone = survival_ece_replicated(t, e, surv, grid)
    assert alone.replicates is None and np.array_equal([alone.observed.ece], [single.ece],
                                                       equal_nan=True)  # fmt: skip
