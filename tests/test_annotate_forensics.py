"""Prediction forensics: hand-computed values, reference implementations and invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from automd_analysis.annotate.forensics import (
    binary_share,
    identical_rows,
    ks_uniform,
    log_odds_gap,
    rank_lattice,
    submission_forensics,
)


def _written(p) -> np.ndarray:
    """As a submission file stores them: 6 decimals."""
    return np.round(np.asarray(p, dtype=float), 6)


def test_rank_lattice_hand_computed():
    share, d, m, chance = rank_lattice(_written(np.arange(1, 101) / 100))
    assert (share, d, m) == (1.0, 100, 1)
    assert chance == pytest.approx(2 * (0.5e-6 * 100 + 1e-9))
    share, d, m, _ = rank_lattice(_written(np.arange(0, 100) / 99))  # argsort(argsort) / (n-1)
    assert (share, d, m) == (1.0, 99, 1)
    assert math.isnan(rank_lattice([0.5])[0])


def test_ks_uniform_matches_scipy():
    rng = np.random.default_rng(3)
    for sample in (rng.random(200), rng.beta(2, 8, 500), np.full(20, 0.3)):
        assert ks_uniform(sample) == pytest.approx(stats.kstest(sample, "uniform").statistic)


def test_log_odds_gap_and_binary_share_hand_computed():
    assert log_odds_gap(0.2, 0.2) == pytest.approx(0.0)
    assert log_odds_gap(1 / 3, 0.2) == pytest.approx(math.log(0.5 / 0.25))
    assert binary_share([0.0, 0.004, 0.5, 1.0]) == (0.75, 0.25, 4)
    assert identical_rows([[1, 0.5], [1, 0.5]]) == (1.0, 1)


@settings(max_examples=40)
@given(
    n=st.integers(50, 5000),
    k=st.integers(1, 4),
    seed=st.integers(0, 10_000),
    method=st.sampled_from(["average", "ordinal"]),
)
def test_averaged_ranks_are_flagged_whatever_the_scores(n, k, seed, method):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=n)
    members = [base + rng.normal(scale=s, size=n) for s in rng.uniform(0.1, 2.0, k)]
    if method == "average":
        members = [np.round(x, 1) for x in members]  # ties -> half-integer ranks
    ranks = [stats.rankdata(x, method=method) / n for x in members]
    p = _written(np.mean(ranks, axis=0))
    out = submission_forensics("classification", probabilities=p, prevalence=0.1)
    assert out["ranks_as_probabilities"].value == "yes"
    assert out["ranks_as_probabilities"].statistics["lattice_share"] >= 0.95


@settings(max_examples=40)
@given(
    n=st.integers(50, 5000),
    prevalence=st.floats(0.02, 0.5),
    seed=st.integers(0, 10_000),
)
def test_calibrated_probabilities_are_not_ranks(n, prevalence, seed):
    rng = np.random.default_rng(seed)
    concentration = rng.uniform(2, 30)
    p = _written(rng.beta(prevalence * concentration, (1 - prevalence) * concentration, n))
    p = np.clip(p, 1e-6, 1 - 1e-6)
    out = submission_forensics("classification", probabilities=p, prevalence=prevalence)
    assert out["ranks_as_probabilities"].value == "no"


@settings(max_examples=30)
@given(st.floats(0.02, 0.3), st.floats(2.0, 8.0), st.integers(0, 1000))
def test_reweighting_without_recalibration_moves_the_mean_risk(prevalence, factor, seed):
    """Re-weighting the classes by ``factor`` multiplies the odds by about ``factor``."""
    rng = np.random.default_rng(seed)
    logit = rng.normal(math.log(prevalence / (1 - prevalence)), 1.0, 2000)
    calibrated = 1 / (1 + np.exp(-logit))
    shifted = 1 / (1 + np.exp(-(logit + math.log(factor))))
    far = submission_forensics("classification", probabilities=shifted, prevalence=prevalence)
    near = submission_forensics(
        "classification", probabilities=calibrated, prevalence=float(np.mean(calibrated))
    )
    assert near["mean_risk_far_from_prevalence"].value == "no"
    gap = far["mean_risk_far_from_prevalence"].statistics["log_odds_gap"]
    assert gap > 0
    assert far["mean_risk_far_from_prevalence"].value == ("yes" if gap >= math.log(2) else "no")


def test_constant_binary_and_low_risk_predictions():
    rng = np.random.default_rng(0)
    labels = (rng.random(500) < 0.2).astype(float)
    low_risk = rng.beta(0.3, 60, 500)  # almost all below 0.01, none near 1
    cases = {
        "constant": np.full(300, 0.12),
        "near_binary": labels,
        "no": low_risk,
    }
    for expected, p in cases.items():
        out = submission_forensics("sequential", probabilities=p, prevalence=0.2)
        assert out["constant_or_binary"].value == expected, expected


def test_identical_survival_rows():
    km = np.tile(np.linspace(1.0, 0.4, 10), (80, 1))
    varied = km * np.linspace(0.9, 1.0, 80)[:, None]
    assert submission_forensics("survival", curves=km)["identical_survival_rows"].value == "yes"
    out = submission_forensics("survival", curves=varied)
    assert out["identical_survival_rows"].value == "no"
    assert out["ranks_as_probabilities"].value == "na"
    assert out["identical_survival_rows"].statistics["distinct_rows"] == 80


def test_too_few_rows_or_no_prevalence_is_na():
    out = submission_forensics("classification", probabilities=np.linspace(0.1, 0.9, 10))
    assert out["ranks_as_probabilities"].value == "na"
    assert out["mean_risk_far_from_prevalence"].value == "na"
    assert out["identical_survival_rows"].value == "na"
