"""Coverage of the 95 % percentile intervals on simulated test sets (a short version of
``bench/bench_bootstrap_coverage.py``, whose 1,000-set figures are in docs/statistics.md).

200 test sets per metric, 400 resamples each. A correct interval covers in 95 % of sets; with 200
sets the Monte Carlo standard error is 1.5 points, so the accepted band [90 %, 99 %] is about three
standard errors wide on each side: it fails for a real miscalibration of the interval (e.g.
resampling the wrong units, or percentiles of the wrong tail), not for chance.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ndtr

from automd_analysis.metrics import (
    auroc,
    bootstrap_weights,
    concordance_td,
    ece,
    percentile_interval,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_bootstrap_coverage import (
    binormal_sample,
    calibration_sample,
    survival_sample,
)

SETS, BOOT = 200, 400


def _coverage(truth, sample, replicates) -> float:
    hits = 0
    for k in range(SETS):
        data = sample(np.random.default_rng([11, k]))
        low, high = percentile_interval(replicates(data, k), alpha=0.05)
        hits += low <= truth <= high
    return hits / SETS


@pytest.mark.slow
def test_ctd_interval_coverage():
    _, _, _, grid = survival_sample(10_000, np.random.default_rng(1))
    truth = concordance_td(*survival_sample(200_000, np.random.default_rng(2), grid))
    cov = _coverage(
        truth,
        lambda rng: survival_sample(1_000, rng, grid),
        lambda d, k: concordance_td(*d, weights=bootstrap_weights(len(d[0]), BOOT, seed=k)),
    )
    assert 0.90 <= cov <= 0.99


@pytest.mark.slow
def test_auroc_interval_coverage():
    truth = float(ndtr(1 / math.sqrt(2)))
    cov = _coverage(
        truth,
        lambda rng: binormal_sample(2_000, rng),
        lambda d, k: auroc(*d, weights=bootstrap_weights(len(d[0]), BOOT, seed=k)),
    )
    assert 0.90 <= cov <= 0.99


@pytest.mark.slow
def test_ece_interval_coverage():
    truth = ece(*calibration_sample(5_000_000, np.random.default_rng(4)))
    cov = _coverage(
        truth,
        lambda rng: calibration_sample(5_000, rng),
        lambda d, k: ece(*d, weights=bootstrap_weights(len(d[0]), BOOT, seed=k)),
    )
    assert 0.90 <= cov <= 0.99


@pytest.mark.slow
def test_bias_corrected_ece_interval_covers_the_population_ece_where_the_bias_matters():
    # nearly calibrated predictions on 500 patients: the plug-in's bias is half the target and
    # its percentile interval covers about half the time (bench_ece_bias_correction.py)
    from bench_ece_bias_correction import population_binned_ece, sample

    from automd_analysis.stats.intervals import bias_corrected

    truth, hits, plug_in_hits = population_binned_ece(0.9), 0, 0
    for k in range(SETS):
        y, p = sample(500, 0.9, np.random.default_rng([11, 500, k]))
        dist = np.concatenate(
            [[ece(y, p)], ece(y, p, weights=bootstrap_weights(500, BOOT, seed=k))]
        )
        low, high = bias_corrected(dist)[1:]
        hits += low <= truth <= high
        low, high = percentile_interval(dist[1:])
        plug_in_hits += low <= truth <= high
    assert 0.90 <= hits / SETS <= 0.99
    assert plug_in_hits / SETS < 0.7  # the case is one where the correction is needed
