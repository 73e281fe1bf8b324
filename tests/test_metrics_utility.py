"""PhysioNet/CinC 2019 utility: test vector S19 (docs/reference_values.md), the per-hour table, an
independent per-row loop written from the official definition, undefined cases and input
validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from automd_analysis.metrics import (
    UndefinedMetricWarning,
    sepsis_utility,
    sepsis_utility_parts,
)

# --- independent per-row implementation (official definition, automd_analysis.metrics.utility) ----


def loop_hour_utility(delta, septic, predicted):
    """One patient-hour, from the official piecewise-linear definition."""
    if not septic:
        return -0.05 if predicted else 0.0
    if predicted:
        if delta <= -6:
            return max((delta + 12) / 6, -0.05)
        if delta <= 3:
            return (3 - delta) / 9
        return 0.0
    if -6 < delta <= 3:
        return -2 * (delta + 6) / 9
    return 0.0


def loop_utility(patient_ids, labels, predictions):
    """Per-row loop over every patient-hour; returns (normalised, U_obs, U_best, U_inaction)."""
    ids = list(patient_ids)
    rows_of: dict = {}
    for r, pid in enumerate(ids):
        rows_of.setdefault(pid, []).append(r)
    u_obs = u_best = u_none = 0.0
    any_septic = False
    for rows in rows_of.values():
        lab = [labels[r] for r in rows]
        septic = 1 in lab
        any_septic |= septic
        onset = lab.index(1) + 6 if septic else None
        for t, r in enumerate(rows):
            delta = t - onset if septic else 0
            u_obs += loop_hour_utility(delta, septic, predictions[r] == 1)
            best_pred = septic and -12 <= delta <= 3
            u_best += loop_hour_utility(delta, septic, best_pred)
            u_none += loop_hour_utility(delta, septic, False)
    norm = (u_obs - u_none) / (u_best - u_none) if any_septic else float("nan")
    return norm, u_obs, u_best, u_none


def random_cohort(rng, n_patients=None):
    n_patients = n_patients or int(rng.integers(1, 25))
    ids, labels, preds = [], [], []
    for p in range(n_patients):
        length = int(rng.integers(1, 60))
        lab = np.zeros(length, dtype=int)
        if rng.random() < 0.5:
            lab[int(rng.integers(0, length)) :] = 1
        pred = (rng.random(length) < rng.choice([0.0, 0.1, 0.5, 0.9])).astype(int)
        ids += [f"p{p:03d}"] * length
        labels += lab.tolist()
        preds += pred.tolist()
    return np.array(ids), np.array(labels), np.array(preds)


# --- test vectors ----------------------------------------------------------------------------


def s19():
    ids = ["A"] * 30 + ["B"] * 20
    labels = [0] * 20 + [1] * 10 + [0] * 20
    preds = [0] * 16 + [1] * 14 + [0] * 17 + [1] * 3
    return ids, labels, preds


def test_s19_end_to_end():
    parts = sepsis_utility_parts(*s19())
    assert parts.normalized == pytest.approx(0.981905, abs=5e-7)
    assert parts.normalized == pytest.approx((7.18333333333333 + 10) / (7.5 + 10), abs=1e-12)
    assert parts.observed == pytest.approx(7.3333333333 - 0.15, abs=1e-9)
    assert parts.best == 7.5
    assert parts.inaction == -10.0
    assert (parts.n_rows, parts.n_patients, parts.n_septic) == (50, 2, 1)
    assert parts.patient_ids.tolist() == ["A", "B"]
    assert parts.onset_row.tolist() == [26, -1]
    assert parts.patient_observed.tolist() == pytest.approx([7.3333333333, -0.15])
    assert sepsis_utility(*s19()) == parts.normalized


def test_docstring_example_patient_utility():
    parts = sepsis_utility_parts([1] * 6, [0, 0, 0, 0, 1, 1], [0, 0, 1, 1, 1, 1])
    assert parts.observed == pytest.approx(3.388889, abs=5e-7)


TP = {-14: -0.05, -12: 0.0, -11: 1 / 6, -6: 1.0, -5: 8 / 9, 0: 1 / 3, 3: 0.0, 4: 0.0}
FN = {-14: 0.0, -12: 0.0, -11: 0.0, -6: 0.0, -5: -2 / 9, 0: -4 / 3, 3: -2.0, 4: 0.0}


@pytest.mark.parametrize("delta", sorted(TP))
def test_per_hour_table_through_public_api(delta):
    # One septic patient with first label at row 14 (onset 20); rows 0..29 give delta -20..9.
    labels = [0] * 14 + [1] * 16
    ids = ["x"] * 30
    row = 20 + delta
    only_this_row = [int(r == row) for r in range(30)]
    parts = sepsis_utility_parts(ids, labels, only_this_row)
    assert parts.observed - parts.inaction == pytest.approx(TP[delta] - FN[delta], abs=1e-12)
    if delta > -6:
        # FN(delta) = U_inaction(rows 0..row) - U_inaction(rows 0..row-1); both prefixes still contain
        # the first label (row 14), so the onset is unchanged.
        upto = sepsis_utility_parts(ids[: row + 1], labels[: row + 1], [0] * (row + 1)).inaction
        before = sepsis_utility_parts(ids[:row], labels[:row], [0] * row).inaction
        assert upto - before == pytest.approx(FN[delta], abs=1e-12)


def test_inaction_is_the_sum_of_missed_hours():
    # -2(delta + 6)/9 summed over delta = -5..3 is -(2/9)(1 + ... + 9) = -10; other hours cost 0.
    parts = sepsis_utility_parts(["x"] * 30, [0] * 14 + [1] * 16, [0] * 30)
    assert parts.inaction == -10.0
    # best: sum over delta = -12..-6 of (delta + 12)/6 plus delta = -5..3 of (3 - delta)/9 = 21/6 + 36/9
    assert parts.best == 7.5


def test_best_window_is_clipped_at_the_first_row():
    # First label at row 0: onset 6, best window rows max(0, -6)..9.
    parts = sepsis_utility_parts(["a"] * 12, [1] * 12, [1] * 10 + [0] * 2)
    assert parts.normalized == 1.0


# --- against the independent loop -------------------------------------------------------------


def test_matches_per_row_loop_on_random_cohorts():
    rng = np.random.default_rng(2019)
    compared = 0
    for _ in range(200):
        ids, labels, preds = random_cohort(rng)
        norm, u_obs, u_best, u_none = loop_utility(ids, labels, preds)
        if np.isnan(norm):
            with pytest.warns(UndefinedMetricWarning):
                parts = sepsis_utility_parts(ids, labels, preds)
            assert np.isnan(parts.normalized)
            continue
        parts = sepsis_utility_parts(ids, labels, preds)
        assert parts.normalized == pytest.approx(norm, rel=1e-12, abs=1e-12)
        assert parts.observed == pytest.approx(u_obs, rel=1e-12, abs=1e-12)
        assert parts.best == pytest.approx(u_best, rel=1e-12, abs=1e-12)
        assert parts.inaction == pytest.approx(u_none, rel=1e-12, abs=1e-12)
        compared += 1
    assert compared > 150


def test_integer_ids_and_hours_accepted():
    rng = np.random.default_rng(5)
    ids, labels, preds = random_cohort(rng, n_patients=8)
    num_ids = np.unique(ids, return_inverse=True)[1] * 10 + 3
    hours = np.concatenate([np.arange(np.sum(ids == p)) + 1 for p in dict.fromkeys(ids)])
    with_hours = sepsis_utility(num_ids, labels, preds, hours=hours)
    assert with_hours == sepsis_utility(ids, labels, preds)


# --- properties ----------------------------------------------------------------------------


@st.composite
def cohorts(draw):
    n_patients = draw(st.integers(1, 8))
    ids, labels = [], []
    for p in range(n_patients):
        length = draw(st.integers(1, 40))
        onset = draw(st.one_of(st.none(), st.integers(0, length - 1)))
        labels += [0] * length if onset is None else [0] * onset + [1] * (length - onset)
        ids += [p] * length
    return np.array(ids), np.array(labels)


@settings(max_examples=60, deadline=None)
@given(cohorts())
def test_best_predictions_score_one_and_all_zero_score_zero(cohort):
    ids, labels = cohort
    assume(
        labels.any()
    )  # no septic patient is undefined: test_no_septic_patient_is_nan_with_warning
    parts = sepsis_utility_parts(ids, labels, np.zeros_like(labels))
    assert parts.normalized == 0.0
    best = np.zeros_like(labels)
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    for s, e in zip(starts, np.r_[starts[1:], len(ids)], strict=True):
        lab = labels[s:e]
        if lab.any():
            onset = int(np.argmax(lab)) + 6
            best[s + max(0, onset - 12) : s + min(onset + 3, e - s - 1) + 1] = 1
    assert sepsis_utility(ids, labels, best) == 1.0


# --- undefined and malformed -----------------------------------------------------------------


def test_no_septic_patient_is_nan_with_warning():
    with pytest.warns(UndefinedMetricWarning, match="no septic patient"):
        value = sepsis_utility(["a", "a", "b"], [0, 0, 0], [1, 0, 1])
    assert np.isnan(value)


def test_non_contiguous_patient_names_first_offending_row():
    with pytest.raises(ValueError, match=r"patient_ids\[4\] = 'a' starts a second run.*row 0"):
        sepsis_utility(["a", "a", "b", "b", "a"], [0] * 5, [0] * 5)


def test_hours_out_of_order_names_first_offending_row():
    with pytest.raises(ValueError, match=r"hours\[3\] = 1.0 does not follow hours\[2\] = 2.0"):
        sepsis_utility([1, 1, 1, 1, 2], [0] * 5, [0] * 5, hours=[0, 1, 2, 1, 0])
    with pytest.raises(ValueError, match=r"hours\[1\]"):
        sepsis_utility([1, 1], [0, 0], [0, 0], hours=[3, 3])


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((["a"] * 3, [0, 2, 0], [0, 0, 0]), r"labels\[1\] is 2"),
        ((["a"] * 3, [0, 0, 0], [0, 0.5, 0]), r"predicted_labels\[1\] is 0.5"),
        ((["a"] * 3, [0, 0], [0, 0, 0]), "same length"),
        (([1.0, np.nan, 1.0], [0, 0, 0], [0, 0, 0]), r"patient_ids\[1\] is nan"),
        (([], [], []), "empty"),
    ],
)
def test_malformed_input(args, match):
    with pytest.raises(ValueError, match=match):
        sepsis_utility(*args)


def test_hours_must_be_finite_and_aligned():
    with pytest.raises(ValueError, match=r"hours\[1\]"):
        sepsis_utility([1, 1], [0, 0], [0, 0], hours=[0, np.inf])
    with pytest.raises(ValueError, match="same length"):
        sepsis_utility([1, 1], [0, 0], [0, 0], hours=[0])
