"""Survival building blocks: time grid (App. A.1), Kaplan-Meier (lifelines as reference, vector H),
IPCW Brier score / IBS (pycox as reference, vector H)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from references import require

from automd_analysis.metrics import (
    UndefinedMetricWarning,
    grid_index_post,
    integrated_brier_score,
    kaplan_meier,
    survival_brier_score,
    survival_time_grid,
)

H_T = np.array([1, 2, 2, 3, 4, 4, 5, 6.0])
H_E = np.array([1, 1, 0, 1, 1, 1, 0, 1])
H_RISK = np.array([0.9, 0.8, 0.8, 0.5, 0.6, 0.6, 0.2, 0.1])


# --- time grid ---------------------------------------------------------------------------------


def test_time_grid_hand_example():
    # event times 2, 4, 6, 8 (the censored 100 is ignored); 5 levels 0, .25, .5, .75, 1 ->
    # quantiles 2, 3.5, 5, 6.5, 8; plus 0
    grid = survival_time_grid([2, 4, 6, 8, 100], [1, 1, 1, 1, 0], n_levels=5)
    assert grid.tolist() == [0.0, 2.0, 3.5, 5.0, 6.5, 8.0]


def test_time_grid_default_has_at_most_101_unique_points():
    rng = np.random.default_rng(0)
    t = rng.integers(1, 60, 2000).astype(float)  # months: many ties collapse
    e = rng.integers(0, 2, 2000)
    grid = survival_time_grid(t, e)
    assert grid[0] == 0.0 and len(grid) <= 101
    assert np.all(np.diff(grid) > 0)
    expected = np.unique(np.r_[0.0, np.quantile(t[e == 1], np.linspace(0, 1, 100))])
    assert np.array_equal(grid, expected)


def test_time_grid_errors():
    with pytest.raises(ValueError, match="no event"):
        survival_time_grid([1, 2], [0, 0])
    with pytest.raises(ValueError, match="n_levels"):
        survival_time_grid([1, 2], [1, 1], n_levels=1)


def test_grid_index_post_is_last_grid_time_at_or_before_clipped():
    grid = np.array([1.0, 2.0, 4.0])
    assert grid_index_post(grid, np.array([0.0, 1.0, 1.5, 2.0, 3.9, 4.0, 9.0])).tolist() == [
        0, 0, 0, 1, 1, 2, 2
    ]  # fmt: skip


# --- Kaplan-Meier ----------------------------------------------------------------------------


def test_km_vector_h():
    km = kaplan_meier(H_T, H_E)
    assert km.times.tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert km.survival.tolist() == pytest.approx([1, 0.875, 0.75, 0.6, 0.3, 0.3, 0.0])
    assert km.n_at_risk.tolist() == [8, 8, 7, 5, 4, 2, 1]
    assert km.n_events.tolist() == [0, 1, 1, 1, 2, 0, 1]
    assert km.at(-1.0) == 1.0
    assert km.at([0.5, 2.5, 99.0]).tolist() == pytest.approx([1.0, 0.75, 0.0])


def test_km_events_at_time_zero_and_no_events():
    km = kaplan_meier([0, 0, 2, 3], [1, 0, 1, 0])
    assert km.times.tolist() == [0, 2, 3]
    assert km.survival.tolist() == pytest.approx([0.75, 0.375, 0.375])
    flat = kaplan_meier([0.5, 1.5], [0, 0])
    assert flat.survival.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.reference
def test_km_equals_lifelines_bit_for_bit():
    lifelines = require("lifelines")
    rng = np.random.default_rng(99)
    for _ in range(150):
        n = int(rng.integers(1, 80))
        t = rng.integers(0, 12, n) * rng.choice([1.0, 0.5, 2.5])
        e = rng.integers(0, 2, n)
        ours = kaplan_meier(t, e)
        ref = lifelines.KaplanMeierFitter().fit(t, e).survival_function_
        assert np.array_equal(ours.times, ref.index.to_numpy(dtype=float))
        assert np.array_equal(ours.survival, ref.to_numpy()[:, 0])


def test_km_malformed():
    with pytest.raises(ValueError, match=r"durations\[0\] is -1"):
        kaplan_meier([-1, 2], [1, 1])
    with pytest.raises(ValueError, match=r"events\[1\]"):
        kaplan_meier([1, 2], [1, 7])


# --- Brier score / IBS -------------------------------------------------------------------------


def h_curves():
    grid = np.arange(7.0)
    return grid, np.exp(-np.outer(H_RISK, grid) / 3)


def test_brier_vector_h_pycox_convention_and_n_normalisation():
    grid, surv = h_curves()
    bs = survival_brier_score(H_T, H_E, surv, grid, eval_times=[2, 3, 4])
    assert bs.tolist() == pytest.approx([0.129668, 0.168547, 0.136581], abs=5e-7)
    bs_n = survival_brier_score(H_T, H_E, surv, grid, eval_times=[2, 3, 4], normalize="n")
    assert bs_n.tolist() == pytest.approx([0.126967, 0.165036, 0.133735], abs=5e-7)


def test_ibs_vector_h_trapezoid_and_simpson():
    grid, surv = h_curves()
    kw = {"eval_times": [2, 3, 4]}
    assert integrated_brier_score(H_T, H_E, surv, grid, **kw) == pytest.approx(0.150836, abs=5e-7)
    simpson = integrated_brier_score(H_T, H_E, surv, grid, integration="simpson", **kw)
    assert simpson == pytest.approx(0.156740, abs=5e-7)


def test_brier_hand_computation_without_censoring():
    # no censoring -> every weight is 1, BS(t) = mean of S(t)^2 (dead) or (1 - S(t))^2 (alive)
    t = np.array([1.0, 2.0, 3.0])
    e = np.array([1, 1, 1])
    grid = np.array([0.0, 1.5, 2.5])
    surv = np.array([[1.0, 0.2, 0.1], [1.0, 0.7, 0.4], [1.0, 0.9, 0.8]])
    bs = survival_brier_score(t, e, surv, grid, eval_times=[1.5])
    assert bs.tolist() == pytest.approx([(0.2**2 + 0.3**2 + 0.1**2) / 3])


@pytest.mark.reference
def test_brier_equals_pycox_km_censoring():
    pd = require("pandas")
    eval_surv = require("pycox.evaluation").EvalSurv
    rng = np.random.default_rng(5)
    max_diff, compared = 0.0, 0
    for _ in range(150):
        n = int(rng.integers(2, 60))
        g = int(rng.integers(1, 8))
        grid = np.sort(rng.choice(np.arange(12), g, replace=False)).astype(float)
        t = rng.integers(0, 14, n).astype(float)
        e = rng.integers(0, 2, n)
        surv = rng.random((n, g))
        eval_times = np.sort(rng.choice(np.arange(15), 4, replace=False)).astype(float)
        ev = eval_surv(pd.DataFrame(surv.T, index=grid), t, e, censor_surv="km", steps="post")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = ev.brier_score(eval_times).to_numpy()
            got = survival_brier_score(t, e, surv, grid, eval_times)
        assert np.array_equal(np.isnan(ref), np.isnan(got))
        ok = ~np.isnan(ref)
        if ok.any():
            max_diff = max(max_diff, float(np.max(np.abs(ref[ok] - got[ok]))))
            compared += 1
    assert compared > 100
    assert max_diff <= 1e-12


def test_brier_undefined_time_warns():
    # everyone censored at 1: at t = 2 all weights are 0
    with pytest.warns(UndefinedMetricWarning):
        bs = survival_brier_score([1.0, 1.0], [0, 0], np.full((2, 2), 0.5), [0.0, 2.0])
    assert np.isnan(bs[1])
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(
            integrated_brier_score([1.0, 1.0], [0, 0], np.full((2, 2), 0.5), [0.0, 2.0])
        )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"normalize": "graf"}, "normalize"),
        ({"integration": "romberg"}, "integration"),
        ({"eval_times": [1.0]}, "two evaluation times"),
        ({"eval_times": [2.0, 1.0]}, r"eval_times\[1\]"),
    ],
)
def test_ibs_malformed(kwargs, match):
    grid, surv = h_curves()
    with pytest.raises(ValueError, match=match):
        integrated_brier_score(H_T, H_E, surv, grid, **kwargs)
