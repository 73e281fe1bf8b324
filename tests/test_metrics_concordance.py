"""C^td: reference vectors (docs/reference_values.md: P1, P2, H), an independent O(n²)
implementation written from the definition, the real pycox (``@pytest.mark.reference``), undefined
cases and input validation."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from references import require

from automd_analysis.metrics import UndefinedMetricWarning, concordance_td


def brute_force_ctd(durations, events, surv, grid, method):
    """Σ conc / Σ comp over ordered pairs, written from the definition (the module docstring of
    ``automd_analysis.metrics.concordance``)."""
    t = np.asarray(durations, dtype=float)
    d = np.asarray(events, dtype=int)
    s = np.asarray(surv, dtype=float)
    k = np.clip(np.searchsorted(grid, t, side="right") - 1, 0, len(grid) - 1)
    conc, comp = Fraction(0), 0
    for i in range(len(t)):
        for j in range(len(t)):
            if i == j:
                continue
            si, sj = s[i, k[i]], s[j, k[i]]
            if method == "antolini":
                ok = (t[i] < t[j] and d[i]) or (t[i] == t[j] and d[i] and not d[j])
                comp += ok
                conc += Fraction(int(ok and si < sj))
                continue
            if t[i] < t[j] and d[i]:
                comp += 1
                conc += Fraction(int(si < sj)) + Fraction(int(si == sj), 2)
            elif t[i] == t[j] and (d[i] or d[j]):
                comp += 1
                if d[i] and d[j]:
                    conc += Fraction(1) if si == sj else Fraction(1, 2)
                elif d[i]:
                    conc += Fraction(int(si < sj)) + Fraction(int(si == sj), 2)
                else:
                    conc += Fraction(int(si > sj)) + Fraction(int(si == sj), 2)
    return None if comp == 0 else conc / comp


def random_case(rng, *, n_max=40, g_max=8):
    """Tied times and predictions, heavy censoring, durations before/after the grid."""
    n = int(rng.integers(1, n_max + 1))
    g = int(rng.integers(1, g_max + 1))
    grid = np.sort(rng.choice(np.arange(1, 15), g, replace=False)).astype(float)
    style = rng.integers(4)
    if style == 0:  # integer times, many ties, some before the first / after the last grid point
        t = rng.integers(0, 17, n).astype(float)
    elif style == 1:  # continuous times
        t = rng.uniform(0, 17, n)
    elif style == 2:  # a single tied time
        t = np.full(n, float(rng.integers(0, 17)))
    else:  # times on the grid points exactly
        t = rng.choice(grid, n).astype(float)
    p_event = rng.choice([0.05, 0.3, 0.7, 1.0])
    e = (rng.random(n) < p_event).astype(int)
    if rng.random() < 0.5:  # tied predictions
        s = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=(n, g))
    else:
        s = np.sort(rng.random((n, g)), axis=1)[:, ::-1]
    return t, e, s, grid


# --- hand vectors -------------------------------------------------------------------------------


def test_p1_differentiating_vector():
    # docs/reference_values.md, P1: grid [0,1,2,3], columns = patients
    surv = np.array(
        [
            [1, 1, 1, 1, 1],
            [0.8, 0.8, 0.6, 0.9, 0.7],
            [0.5, 0.6, 0.5, 0.7, 0.4],
            [0.2, 0.3, 0.5, 0.4, 0.1],
        ]
    ).T
    t, e, grid = [1, 1, 2, 2.5, 3], [1, 1, 0, 1, 1], [0, 1, 2, 3]
    assert concordance_td(t, e, surv, grid, "antolini") == 2 / 7
    assert concordance_td(t, e, surv, grid, "adj_antolini") == 4 / 9


def test_p2_tied_events_with_equal_predictions_score_one_counted_twice():
    surv = np.array([[1, 1, 1], [0.5, 0.5, 0.4], [0.2, 0.3, 0.1]]).T
    assert concordance_td([1, 1, 2], [1, 1, 1], surv, [0, 1, 2], "antolini") == 0.0
    assert concordance_td([1, 1, 2], [1, 1, 1], surv, [0, 1, 2], "adj_antolini") == 0.5


def test_p2_tied_event_and_censored():
    surv = np.array([[1, 1, 1], [0.5, 0.6, 0.7], [0.2, 0.3, 0.4]]).T
    assert concordance_td([1, 2, 2], [1, 0, 1], surv, [0, 1, 2], "antolini") == 2 / 3
    assert concordance_td([1, 2, 2], [1, 0, 1], surv, [0, 1, 2], "adj_antolini") == 0.5


def test_h_shared_vector():
    t = np.array([1, 2, 2, 3, 4, 4, 5, 6.0])
    e = [1, 1, 0, 1, 1, 1, 0, 1]
    risk = np.array([0.9, 0.8, 0.8, 0.5, 0.6, 0.6, 0.2, 0.1])
    grid = np.arange(7.0)
    surv = np.exp(-np.outer(risk, grid) / 3)
    assert concordance_td(t, e, surv, grid, "antolini") == pytest.approx(0.857143, abs=1e-6)
    assert concordance_td(t, e, surv, grid, "adj_antolini") == 0.875


def test_durations_outside_grid_use_first_and_last_column():
    # T=0.5 precedes the grid (reads column 0); T=9 follows it (reads the last column).
    grid = [1.0, 2.0]
    surv = np.array([[0.9, 0.1], [0.8, 0.7], [0.2, 0.9]])
    t, e = [0.5, 9.0, 10.0], [1, 1, 0]
    # anchor 0 (col 0): vs 1: 0.9 < 0.8? no; vs 2: 0.9 < 0.2? no -> 0 of 2
    # anchor 1 (col 1): vs 2: 0.7 < 0.9 -> 1 of 1
    assert concordance_td(t, e, surv, grid, "antolini") == 1 / 3
    assert concordance_td(t, e, surv, grid, "adj_antolini") == 1 / 3


# --- independent implementation -----------------------------------------------------------------


@pytest.mark.parametrize("method", ["adj_antolini", "antolini"])
def test_matches_brute_force_definition(method):
    rng = np.random.default_rng(20240601)
    checked = 0
    for _ in range(150):
        t, e, s, grid = random_case(rng, n_max=25)
        expected = brute_force_ctd(t, e, s, grid, method)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            got = concordance_td(t, e, s, grid, method)
        if expected is None:
            assert np.isnan(got)
        else:
            assert got == float(expected)  # the correctly rounded exact fraction
            checked += 1
    assert checked > 100


@pytest.mark.slow
@pytest.mark.parametrize("method", ["adj_antolini", "antolini"])
def test_threaded_kernels_match_brute_force(monkeypatch, method):
    # Large inputs use the prange kernels; force them on small cases to check them exactly.
    from automd_analysis.metrics import concordance

    monkeypatch.setattr(concordance, "_PARALLEL_MIN_WORK", 0)
    rng = np.random.default_rng(77)
    for _ in range(40):
        t, e, s, grid = random_case(rng, n_max=25)
        expected = brute_force_ctd(t, e, s, grid, method)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            got = concordance_td(t, e, s, grid, method)
        assert np.isnan(got) if expected is None else got == float(expected)


# --- the real pycox ---------------------------------------------------------------------------


def _pycox_ctd(t, e, s, grid, method):
    pd = require("pandas")
    eval_surv = require("pycox.evaluation").EvalSurv
    ev = eval_surv(pd.DataFrame(s.T, index=grid), np.asarray(t), np.asarray(e), steps="post")
    try:
        return ev.concordance_td(method)
    except ZeroDivisionError:
        return None


@pytest.mark.reference
@pytest.mark.parametrize("method", ["adj_antolini", "antolini"])
def test_matches_pycox_on_randomised_cases(method):
    rng = np.random.default_rng(7 if method == "antolini" else 8)
    max_diff, compared = 0.0, 0
    for _ in range(200):
        t, e, s, grid = random_case(rng)
        ref = _pycox_ctd(t, e, s, grid, method)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            got = concordance_td(t, e, s, grid, method)
        if ref is None:
            assert np.isnan(got)
            continue
        max_diff = max(max_diff, abs(got - ref))
        compared += 1
    assert compared >= 140
    assert max_diff <= 1e-12


@pytest.mark.reference
@pytest.mark.parametrize("method", ["adj_antolini", "antolini"])
def test_matches_pycox_on_realistic_size(method):
    # Many blocks, chunks and threads: n = 3000 on a 101-point quantile grid, months-like ties.
    from automd_analysis.metrics import survival_time_grid

    rng = np.random.default_rng(3)
    n = 3000
    risk = rng.normal(size=n)
    t = np.ceil(rng.exponential(40 * np.exp(-0.5 * risk)))
    e = (rng.random(n) < 0.35).astype(int)
    grid = survival_time_grid(t[: n // 2], e[: n // 2])
    surv = np.round(np.exp(-np.outer(np.exp(0.5 * risk), grid) / 50), 3)
    ref = _pycox_ctd(t, e, surv, grid, method)
    assert abs(concordance_td(t, e, surv, grid, method) - ref) <= 1e-12


# --- undefined and malformed input ------------------------------------------------------------


@pytest.mark.parametrize(
    ("t", "e"), [([1.0, 2.0, 3.0], [0, 0, 0]), ([5.0], [1]), ([2.0, 2.0], [0, 0])]
)
def test_no_comparable_pair_is_nan_with_warning(t, e):
    surv = np.full((len(t), 2), 0.5)
    with pytest.warns(UndefinedMetricWarning, match="no comparable pair"):
        assert np.isnan(concordance_td(t, e, surv, [0.0, 1.0]))


def test_events_may_be_bool_and_surv_float32():
    rng = np.random.default_rng(0)
    t, e, s, grid = random_case(rng, n_max=30)
    e[0] = 1
    a = concordance_td(t, e.astype(bool), s.astype(np.float32), grid)
    b = concordance_td(t, e, s.astype(np.float32).astype(np.float64), grid)
    assert a == b


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"surv": np.full((3, 3), 0.5)}, r"surv must have shape \(n_patients, n_grid\) = \(3, 2\)"),
        ({"durations": [1.0, 2.0]}, "same length"),
        ({"durations": [1.0, -2.0, 3.0]}, r"durations\[1\] is -2.0"),
        ({"durations": [1.0, np.nan, 3.0]}, r"durations must be finite; durations\[1\]"),
        ({"events": [1, 2, 0]}, r"events\[1\] is 2"),
        ({"events": [1.0, 0.5, 0.0]}, r"events\[1\]"),
        ({"time_grid": [1.0, 0.0]}, r"time_grid must be strictly increasing.*time_grid\[1\]"),
        ({"time_grid": [1.0, 1.0]}, r"time_grid\[1\]"),
        ({"surv": np.array([[0.5, 0.5], [0.5, np.nan], [0.5, 0.5]])}, r"surv\[1, 1\] is nan"),
        ({"surv": np.array([[0.5, 0.5], [0.5, 0.5], [1.2, 0.5]])}, r"surv\[2, 0\] is 1.2"),
        ({"surv": np.array([[0.5, 0.5], [0.5, 0.5], [0.5, -np.inf]])}, r"surv\[2, 1\]"),
        ({"method": "harrell"}, "method must be one of"),
    ],
)
def test_malformed_input_raises_with_location(kwargs, match):
    args = {
        "durations": [1.0, 2.0, 3.0],
        "events": [1, 0, 1],
        "surv": np.full((3, 2), 0.5),
        "time_grid": [0.0, 1.0],
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        concordance_td(**args)
